"""Build OTLP requests for tests without an SDK: exact control over ids, attributes, encodings."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status


def kv(key: str, value: Any) -> KeyValue:
    v = AnyValue()
    if isinstance(value, bool):
        v.bool_value = value
    elif isinstance(value, int):
        v.int_value = value
    elif isinstance(value, float):
        v.double_value = value
    elif isinstance(value, list):
        for item in value:
            v.array_value.values.append(kv("_", item).value)
    else:
        v.string_value = str(value)
    return KeyValue(key=key, value=v)


def make_span(
    trace_id: bytes | None = None,
    span_id: bytes | None = None,
    parent: bytes = b"",
    name: str = "op",
    start: int | None = None,
    duration: int = 1_000_000,
    attributes: dict[str, Any] | None = None,
    error: bool = False,
) -> Span:
    # Recent timestamps: the schema's TTL drops parts older than the retention at once.
    start = time.time_ns() if start is None else start
    span = Span(
        trace_id=trace_id or os.urandom(16),
        span_id=span_id or os.urandom(8),
        parent_span_id=parent,
        name=name,
        kind=Span.SPAN_KIND_INTERNAL,
        start_time_unix_nano=start,
        end_time_unix_nano=start + duration,
        status=Status(code=Status.STATUS_CODE_ERROR if error else Status.STATUS_CODE_UNSET),
    )
    span.attributes.extend(kv(k, v) for k, v in (attributes or {}).items())
    return span


def make_request(
    spans: list[Span], service: str = "svc", resource: dict[str, Any] | None = None
) -> ExportTraceServiceRequest:
    rs = ResourceSpans()
    rs.resource.attributes.append(kv("service.name", service))
    rs.resource.attributes.extend(kv(k, v) for k, v in (resource or {}).items())
    ss = ScopeSpans()
    ss.scope.name = "tests"
    ss.spans.extend(spans)
    rs.scope_spans.append(ss)
    return ExportTraceServiceRequest(resource_spans=[rs])


def to_otlp_json(request: ExportTraceServiceRequest) -> bytes:
    """OTLP/JSON: like protobuf's JSON mapping but with hex ids, as the OTLP spec requires."""
    doc = json_format.MessageToDict(request)
    for rs in doc.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                for field in ("traceId", "spanId", "parentSpanId"):
                    if field in span:
                        import base64

                        span[field] = base64.b64decode(span[field]).hex()
    return json.dumps(doc).encode()

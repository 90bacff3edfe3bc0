"""Spans under construction and their OTLP protobuf encoding.

The importers build :class:`SpanRecord` values (plain data, explicit timestamps), then encode
a whole file at once with :func:`to_request`, so a broken record is found before anything is
sent.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

AttrValue = str | int | float | bool

SPAN_KIND_INTERNAL = Span.SPAN_KIND_INTERNAL
SPAN_KIND_CLIENT = Span.SPAN_KIND_CLIENT
STATUS_OK = Status.STATUS_CODE_OK
STATUS_ERROR = Status.STATUS_CODE_ERROR
STATUS_UNSET = Status.STATUS_CODE_UNSET
SCOPE_NAME = "planscope.importers"


@dataclass
class EventRecord:
    """A span event: name, time and attributes."""

    name: str
    time_ns: int
    attributes: dict[str, AttrValue] = field(default_factory=dict)


@dataclass
class SpanRecord:
    """One span to send, with explicit timestamps.

    >>> s = SpanRecord(trace_id=b"t" * 16, span_id=b"s" * 8, name="x", start_ns=1, end_ns=2)
    >>> s.set("a", None).set("b", 1).attributes
    {'b': 1}
    """

    trace_id: bytes
    span_id: bytes
    name: str
    start_ns: int
    end_ns: int
    parent_span_id: bytes = b""
    kind: int = SPAN_KIND_INTERNAL
    attributes: dict[str, AttrValue] = field(default_factory=dict)
    events: list[EventRecord] = field(default_factory=list)
    status_code: int = STATUS_UNSET
    status_message: str = ""

    def set(self, key: str, value: AttrValue | None) -> SpanRecord:
        """Set an attribute; ``None`` leaves it absent (absent means unknown)."""
        if value is not None:
            self.attributes[key] = value
        return self


def stable_id(*parts: str, size: int) -> bytes:
    """A deterministic, non-zero id of ``size`` bytes from text parts.

    >>> stable_id("a", "b", size=8).hex()
    'f04cdced9736a69d'
    """
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()[:size]
    return digest if any(digest) else b"\x01" * size


def json_text(value: Any) -> str:
    """Compact JSON as the conventions require (``separators=(",", ":")``, UTF-8)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=False)


def any_value(value: AttrValue) -> AnyValue:
    """An attribute value as an OTLP ``AnyValue`` (bool before int: bool is an int)."""
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    return AnyValue(string_value=str(value))


def _kvs(attrs: dict[str, AttrValue]) -> list[KeyValue]:
    return [KeyValue(key=k, value=any_value(v)) for k, v in attrs.items()]


def to_request(
    spans: list[SpanRecord], resource: dict[str, AttrValue]
) -> ExportTraceServiceRequest:
    """One OTLP request holding ``spans`` under one resource."""
    request = ExportTraceServiceRequest()
    rs = request.resource_spans.add()
    rs.resource.attributes.extend(_kvs(resource))
    ss = rs.scope_spans.add()
    ss.scope.name = SCOPE_NAME
    for s in spans:
        span = ss.spans.add()
        span.trace_id = s.trace_id
        span.span_id = s.span_id
        span.parent_span_id = s.parent_span_id
        span.name = s.name
        span.kind = s.kind
        span.start_time_unix_nano = s.start_ns
        span.end_time_unix_nano = max(s.end_ns, s.start_ns)
        span.attributes.extend(_kvs(s.attributes))
        for e in s.events:
            ev = span.events.add()
            ev.name = e.name
            ev.time_unix_nano = e.time_ns
            ev.attributes.extend(_kvs(e.attributes))
        span.status.code = s.status_code
        span.status.message = s.status_message
    return request

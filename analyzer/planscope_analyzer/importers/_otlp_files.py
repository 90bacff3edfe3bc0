"""Read OTLP JSON files (``ExportTraceServiceRequest`` JSON, one per file or one per line),
validate every span with the collector's own parser, and re-time them.

>>> reqs = parse_otlp_json(b'{"resourceSpans": []}', "empty.json")
>>> len(reqs)
1
"""

from __future__ import annotations

import json
import time
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from planscope_collector import JSON, BadPayload, parse_request

from . import _conventions as C
from ._errors import MalformedInput
from ._spans import any_value


def looks_like_otlp(doc: Any) -> bool:
    """Whether a decoded JSON value is an OTLP ExportTraceServiceRequest."""
    return isinstance(doc, dict) and ("resourceSpans" in doc or "resource_spans" in doc)


def split_documents(data: bytes, source: str) -> list[tuple[str | None, Any]]:
    """The JSON documents of a file: the whole file, or one per non-empty line (JSON lines).

    Returns ``(record label, document)`` pairs; the label is ``line N`` for JSON lines.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedInput(source, None, f"not UTF-8 text: {exc}") from None
    if not text.strip():
        raise MalformedInput(source, None, "the file is empty")
    try:
        return [(None, json.loads(text))]
    except ValueError as whole_error:
        docs: list[tuple[str | None, Any]] = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                docs.append((f"line {n}", json.loads(line)))
            except ValueError as exc:
                if n == 1:  # not JSON lines either: report the whole-file error
                    raise MalformedInput(source, None, f"not valid JSON: {whole_error}") from None
                raise MalformedInput(source, f"line {n}", f"not valid JSON: {exc}") from None
        return docs


def parse_otlp_json(data: bytes, source: str) -> list[ExportTraceServiceRequest]:
    """Every request of an OTLP JSON file, validated; ``MalformedInput`` names the record."""
    out = []
    for label, doc in split_documents(data, source):
        out.append(request_from_doc(doc, source, label))
    return out


def request_from_doc(doc: Any, source: str, label: str | None) -> ExportTraceServiceRequest:
    """One ExportTraceServiceRequest from its OTLP/JSON form, parsed and validated by the
    collector's own OTLP parser (the same checks as ``POST /v1/traces``)."""
    if not looks_like_otlp(doc):
        raise MalformedInput(
            source, label, "not an OTLP ExportTraceServiceRequest (no 'resourceSpans')"
        )
    try:
        return parse_request(json.dumps(doc).encode(), JSON)
    except BadPayload as exc:
        raise MalformedInput(source, label, str(exc)) from None


def _spans(request: ExportTraceServiceRequest) -> list[Any]:
    return [span for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]


def all_spans(requests: list[ExportTraceServiceRequest]) -> list[Any]:
    """Every span of a list of requests (protobuf messages, mutable in place)."""
    return [s for r in requests for s in _spans(r)]


def retime(requests: list[ExportTraceServiceRequest], *, end_ns: int | None = None) -> int:
    """Shift every timestamp so the latest span ends at ``end_ns`` (default: now).

    Relative order and durations are kept; each span gets its original start in
    ``planscope.import.original_start_unix_nano``. Returns the shift in nanoseconds.
    """
    spans = all_spans(requests)
    if not spans:
        return 0
    latest = max(max(s.start_time_unix_nano, s.end_time_unix_nano) for s in spans)
    shift = (end_ns if end_ns is not None else time.time_ns()) - latest
    for s in spans:
        if not any(kv.key == C.IMPORT_ORIGINAL_START for kv in s.attributes):
            s.attributes.append(
                KeyValue(key=C.IMPORT_ORIGINAL_START, value=any_value(int(s.start_time_unix_nano)))
            )
        s.start_time_unix_nano = max(1, s.start_time_unix_nano + shift)
        if s.end_time_unix_nano:
            s.end_time_unix_nano = max(s.start_time_unix_nano, s.end_time_unix_nano + shift)
        for e in s.events:
            if e.time_unix_nano:
                e.time_unix_nano = max(1, e.time_unix_nano + shift)
    return shift

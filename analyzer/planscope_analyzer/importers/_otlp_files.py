"""Read OTLP JSON files (``ExportTraceServiceRequest`` JSON, one per file or one per line),
validate every span, and re-time them.

>>> reqs = parse_otlp_json(b'{"resourceSpans": []}', "empty.json")
>>> len(reqs)
1
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue

from . import _conventions as C
from ._errors import MalformedInput
from ._spans import any_value

_ID_FIELDS = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")
_MAX_NANOS = (1 << 63) - 1


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
    """One ExportTraceServiceRequest from its OTLP/JSON form (hex ids), validated."""
    if not looks_like_otlp(doc):
        raise MalformedInput(
            source, label, "not an OTLP ExportTraceServiceRequest (no 'resourceSpans')"
        )
    doc = json.loads(json.dumps(doc))  # a private copy to rewrite ids in
    for path, span in _walk(doc, source, label):
        _ids_to_base64(span, source, _where(label, path))
    request = ExportTraceServiceRequest()
    try:
        json_format.ParseDict(doc, request, ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else "parse error"
        raise MalformedInput(source, label, f"not valid OTLP/JSON: {msg}") from None
    for path, span in _spans_with_paths(request):
        where = _where(label, path)
        if len(span.trace_id) != 16 or not any(span.trace_id):
            raise MalformedInput(source, where, "traceId must be 32 hex digits, not all zero")
        if len(span.span_id) != 8 or not any(span.span_id):
            raise MalformedInput(source, where, "spanId must be 16 hex digits, not all zero")
        if span.parent_span_id and len(span.parent_span_id) != 8:
            raise MalformedInput(source, where, "parentSpanId must be empty or 16 hex digits")
        if span.end_time_unix_nano and span.end_time_unix_nano < span.start_time_unix_nano:
            raise MalformedInput(source, where, "endTimeUnixNano is before startTimeUnixNano")
        if max(span.start_time_unix_nano, span.end_time_unix_nano) > _MAX_NANOS:
            raise MalformedInput(source, where, "timestamp beyond year 2262")
    return request


def _where(label: str | None, path: str) -> str:
    return f"{label}: {path}" if label else path


def _walk(doc: dict[str, Any], source: str, label: str | None) -> list[tuple[str, Any]]:
    out = []
    for ri, rs in enumerate(_list(doc, ("resourceSpans", "resource_spans"), source, label, "")):
        for si, ss in enumerate(
            _list(rs, ("scopeSpans", "scope_spans"), source, label, f"resourceSpans[{ri}]")
        ):
            where = f"resourceSpans[{ri}].scopeSpans[{si}]"
            for pi, span in enumerate(_list(ss, ("spans",), source, label, where)):
                if not isinstance(span, dict):
                    raise MalformedInput(
                        source, _where(label, f"{where}.spans[{pi}]"), "expected an object"
                    )
                out.append((f"{where}.spans[{pi}]", span))
                for li, link in enumerate(span.get("links") or []):
                    out.append((f"{where}.spans[{pi}].links[{li}]", link))
    return out


def _list(
    obj: Any, names: tuple[str, ...], source: str, label: str | None, where: str
) -> list[Any]:
    if not isinstance(obj, dict):
        raise MalformedInput(source, _where(label, where or "document"), "expected an object")
    for name in names:
        if name in obj:
            value = obj[name]
            if value is None:
                return []
            if not isinstance(value, list):
                raise MalformedInput(
                    source, _where(label, f"{where}.{name}".lstrip(".")), "expected an array"
                )
            return value
    return []


def _ids_to_base64(obj: Any, source: str, where: str) -> None:
    if not isinstance(obj, dict):
        raise MalformedInput(source, where, "expected an object")
    for field in _ID_FIELDS:
        value = obj.get(field)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            raise MalformedInput(source, where, f"{field} must be a hex string")
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raise MalformedInput(source, where, f"{field} {value[:40]!r} is not hex") from None
        obj[field] = base64.b64encode(raw).decode("ascii")


def _spans_with_paths(request: ExportTraceServiceRequest) -> list[tuple[str, Any]]:
    out = []
    for ri, rs in enumerate(request.resource_spans):
        for si, ss in enumerate(rs.scope_spans):
            for pi, span in enumerate(ss.spans):
                out.append((f"resourceSpans[{ri}].scopeSpans[{si}].spans[{pi}]", span))
    return out


def all_spans(requests: list[ExportTraceServiceRequest]) -> list[Any]:
    """Every span of a list of requests (protobuf messages, mutable in place)."""
    return [s for r in requests for _, s in _spans_with_paths(r)]


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

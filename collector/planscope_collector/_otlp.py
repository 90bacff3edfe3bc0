"""OTLP trace payloads: decode and validate a request, flatten its spans into columns.

Decoding and validation (:func:`parse_request`) happen in the request handler (HTTP and gRPC)
and in ``planscope import``, so that a malformed body is refused before anything is spooled or
sent. A protobuf request with scalar attribute values only (:func:`parse_scalar_request`) is
spooled as received and flattened by ClickHouse (``storage._protobuf``, the same values); any
other is flattened (:class:`SpanColumns`, :func:`spans_ipc`) in the request handler, once per
request, so the spool keeps the columns and no request is parsed twice. The columns are
those of ``TRACE_COLUMNS``, with the value conventions of the OpenTelemetry Collector's
clickhouseexporter (lowercase hex ids, ``SpanKind`` like ``Internal``, ``StatusCode`` like
``Error``, every attribute value a string), so the two writers produce identical tables; they
travel to the spool and the store as Arrow IPC streams (:meth:`SpanColumns.to_ipc`).
"""

from __future__ import annotations

import base64
import gzip
import json
import math
import re
import zlib
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pydantic_core
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.resource.v1 import resource_pb2
from opentelemetry.proto.trace.v1 import trace_pb2
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from planscope import semconv as A
from planscope.safejson import value_bound

from ._errors import BadPayload, PayloadTooLarge, UnsupportedMediaType
from .storage import ipc_stream

PROTOBUF = "application/x-protobuf"
JSON = "application/json"

_SPAN_KINDS = ("Unspecified", "Internal", "Server", "Client", "Producer", "Consumer")
_STATUS_CODES = ("Unset", "Ok", "Error")
DEFAULT_PROJECT = "default"
_MAX_NANOS = (1 << 63) - 1  # DateTime64(9) (and Arrow's timestamp[ns]) is a signed 64-bit count


@dataclass(frozen=True)
class ParseLimits:
    """What a request may hold beyond its byte size (``CollectorSettings`` sets them).

    ``max_json_values`` bounds the memory of decoding OTLP/JSON (30 MB of ``{}`` would be 15
    million dicts); ``max_resource_expansion_bytes`` bounds what a small request becomes once
    its resource attributes are stored on each of its spans (1 MiB x 2,100 spans = 2 GiB).
    Nesting beyond the JSON decoder's limit (about 200 levels) is refused as malformed.
    """

    max_json_values: int = 2_000_000
    max_resource_expansion_bytes: int = 64 << 20


def media_type(content_type: str | None) -> str:
    """The OTLP encoding named by a Content-Type header, or raise ``UnsupportedMediaType``.

    >>> media_type("application/json; charset=utf-8")
    'application/json'
    """
    base = (content_type or "").split(";", 1)[0].strip().lower()
    if base in (PROTOBUF, "application/protobuf"):
        return PROTOBUF
    if base == JSON:
        return JSON
    raise UnsupportedMediaType(
        f"unsupported content type {base or '(none)'!r}; use {PROTOBUF} or {JSON}"
    )


def decompress(body: bytes, encoding: str | None, max_bytes: int) -> bytes:
    """Undo Content-Encoding, refusing anything that inflates beyond ``max_bytes``.

    Every member of a multi-member gzip body is read (RFC 1952 allows several); anything after
    the last member that is not another member is refused, so a body is taken whole or not at all.

    >>> decompress(gzip_bytes(b"a") + gzip_bytes(b"b"), "gzip", 10)
    b'ab'
    """
    enc = (encoding or "identity").strip().lower()
    if enc in ("", "identity"):
        return body
    if enc != "gzip":
        raise UnsupportedMediaType(f"unsupported content encoding {enc!r}; use gzip or identity")
    out = bytearray()
    rest = body
    while True:
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            out += inflater.decompress(rest, max_bytes + 1 - len(out))
            if len(out) > max_bytes or inflater.unconsumed_tail:
                raise PayloadTooLarge(f"decompressed body exceeds {max_bytes} bytes")
            out += inflater.flush()
        except zlib.error as exc:
            raise BadPayload(f"body is not valid gzip: {exc}") from None
        if not inflater.eof:
            raise BadPayload("body is not valid gzip: truncated stream")
        if len(out) > max_bytes:
            raise PayloadTooLarge(f"decompressed body exceeds {max_bytes} bytes")
        rest = inflater.unused_data
        if not rest:
            return bytes(out)
        if not rest.startswith(b"\x1f\x8b"):
            raise BadPayload(f"body is not valid gzip: {len(rest)} bytes of garbage after the end")


def parse_request(
    body: bytes, kind: str, limits: ParseLimits | None = None
) -> ExportTraceServiceRequest:
    """Parse and validate an ExportTraceServiceRequest in either OTLP encoding.

    Raises ``BadPayload`` naming the first offending span (``PayloadTooLarge`` for what would
    not fit in memory or the store); the request is all or nothing.

    >>> parse_request(b"{}", JSON).resource_spans
    []
    """
    limits = limits or ParseLimits()
    request = ExportTraceServiceRequest()
    if kind == PROTOBUF:
        try:
            request.ParseFromString(body)
        except DecodeError as exc:
            raise BadPayload(f"body is not a valid OTLP protobuf: {exc}") from None
    else:
        if (bound := value_bound(body)) > limits.max_json_values:
            raise PayloadTooLarge(
                f"OTLP/JSON body holds up to {bound} values; at most {limits.max_json_values}"
            )
        try:
            # pydantic-core's decoder refuses deep nesting with a ValueError (json.loads would
            # raise RecursionError) and is faster.
            doc = pydantic_core.from_json(body)
        except ValueError as exc:
            raise BadPayload(f"body is not valid JSON: {exc}") from None
        if not isinstance(doc, dict):
            raise BadPayload("OTLP/JSON body must be an object with resourceSpans")
        _hex_ids_to_base64(doc)
        try:
            json_format.ParseDict(doc, request, ignore_unknown_fields=True)
        except Exception as exc:  # ParseError, RecursionError, TypeError: all the body's fault
            raise BadPayload(f"body is not valid OTLP/JSON: {_locate(doc, exc)}") from None
    _validate(request, limits)
    return request


def _scalar_request_class() -> Any:
    """``ExportTraceServiceRequest`` whose ``AnyValue`` knows only the scalar kinds (string,
    bool, int, double, bytes): parsed with it, an array, a kvlist (or a kind added to OTLP
    later) is an unknown field. Built from the installed OTLP descriptors, so every other field
    is the real one."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    for module in (common_pb2, resource_pb2, trace_pb2, trace_service_pb2):
        proto = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(proto)
        for message in proto.message_type:
            if module is common_pb2 and message.name == "AnyValue":
                scalars = [f for f in message.field if f.number in (1, 2, 3, 4, 7)]
                del message.field[:]
                message.field.extend(scalars)
        pool.Add(proto)
    name = ExportTraceServiceRequest.DESCRIPTOR.full_name
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))


_ScalarRequest = _scalar_request_class()
NS_PER_DAY = 86_400 * 10**9
MAX_DAYS_PER_INSERT = 50
"""Distinct UTC days of span starts that one ClickHouse-flattened insert may hold: the table is
partitioned by day (``toDate``, in the server's time zone) and an insert may touch at most 100
partitions; 50 UTC days cover at most 100 local dates."""


@dataclass(frozen=True)
class ScalarRequest:
    """A validated request that ClickHouse can flatten as received (:func:`parse_scalar_request`),
    with what the writer needs to know of it without decoding it again: the distinct (project,
    trace id) pairs, in order of first span, and the distinct days (UTC, since the epoch) its
    spans start on, as :class:`SpanColumns` would give them."""

    request: Any
    trace_keys: list[list[str]]
    days: list[int]


def parse_scalar_request(
    body: bytes, limits: ParseLimits | None = None, project: str | None = None
) -> ScalarRequest | None:
    """The validated request if ClickHouse can flatten ``body`` (OTLP protobuf) as it is, else
    None (then :func:`parse_request` parses it, or says why it is refused).

    As it is means: every attribute value a scalar, and no field this version does not know.
    The test is exact, not a guess: ``body`` parsed without the non-scalar kinds and without
    unknown fields must serialize back to ``body`` byte for byte (a parse is a function: had
    anything been dropped, the bytes would differ). Raises ``BadPayload`` for a request
    that parses but fails validation (the same checks and messages as :func:`parse_request`).
    ``project`` is the API key's project (as in :meth:`SpanColumns.add`).

    >>> parse_scalar_request(ExportTraceServiceRequest().SerializeToString()).trace_keys
    []
    """
    try:
        request = _ScalarRequest.FromString(body)
    except DecodeError:
        return None
    request.DiscardUnknownFields()
    if request.SerializeToString() != body:
        return None
    keys, days = _validate(request, limits or ParseLimits(), project)
    return ScalarRequest(request, keys, days)


_PARSE_PREFIX = re.compile(r"^(?:Failed to parse \w+ field: )+")


def _locate(doc: dict[str, Any], exc: BaseException) -> str:
    """``<path of the first span that fails>: <the innermost reason>`` for a ParseDict error."""
    reason = _PARSE_PREFIX.sub("", _first_line(str(exc) or type(exc).__name__))[:300]
    for ri, rs in enumerate(_list(doc, "resourceSpans", "resource_spans", where="body")):
        where = f"resourceSpans[{ri}]"
        if _parses(rs, ResourceSpans):
            continue
        for si, ss in enumerate(_list(rs, "scopeSpans", "scope_spans", where=where)):
            if _parses(ss, ScopeSpans):
                continue
            for pi, span in enumerate(_list(ss, "spans", where=f"{where}.scopeSpans[{si}]")):
                if not _parses(span, Span):
                    return f"{where}.scopeSpans[{si}].spans[{pi}]: {reason}"
            return f"{where}.scopeSpans[{si}]: {reason}"
        return f"{where}: {reason}"
    return reason


def _parses(obj: Any, message: Any) -> bool:
    try:
        json_format.ParseDict(obj, message(), ignore_unknown_fields=True)
    except Exception:
        return False
    return True


def span_count(request: ExportTraceServiceRequest) -> int:
    """Number of spans in a request."""
    return sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


# OTLP/JSON encodes ids as hex, protobuf's JSON mapping expects base64 for bytes fields.
_ID_FIELDS = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")


def _hex_ids_to_base64(doc: dict[str, Any]) -> None:
    for ri, rs in enumerate(_list(doc, "resourceSpans", "resource_spans", where="body")):
        for si, ss in enumerate(
            _list(rs, "scopeSpans", "scope_spans", where=f"resourceSpans[{ri}]")
        ):
            where = f"resourceSpans[{ri}].scopeSpans[{si}]"
            for pi, span in enumerate(_list(ss, "spans", where=where)):
                _convert_ids(span, f"{where}.spans[{pi}]")
                for li, link in enumerate(_list(span, "links", where=f"{where}.spans[{pi}]")):
                    _convert_ids(link, f"{where}.spans[{pi}].links[{li}]")


def _list(obj: Any, *names: str, where: str) -> list[Any]:
    if not isinstance(obj, dict):
        raise BadPayload(f"{where}: expected an object")
    for name in names:
        if name in obj:
            value = obj[name]
            if value is None:
                return []
            if not isinstance(value, list):
                raise BadPayload(f"{where}.{name}: expected an array")
            return value
    return []


def _convert_ids(obj: Any, where: str) -> None:
    if not isinstance(obj, dict):
        raise BadPayload(f"{where}: expected an object")
    for field in _ID_FIELDS:
        value = obj.get(field)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            raise BadPayload(f"{where}.{field}: expected a hex string")
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raise BadPayload(f"{where}.{field}: {value[:40]!r} is not hex") from None
        obj[field] = base64.b64encode(raw).decode("ascii")


def _validate(
    request: ExportTraceServiceRequest, limits: ParseLimits, project: str | None = None
) -> tuple[list[list[str]], list[int]]:
    """Raise for the first bad span; else the request's trace keys and days (see
    :class:`ScalarRequest`), gathered in the same walk over the spans."""
    zero16, zero8 = bytes(16), bytes(8)
    expansion = 0
    keys: dict[tuple[str, bytes], None] = {}
    days: set[int] = set()
    for ri, rs in enumerate(request.resource_spans):
        row_project = (
            project or attributes_map(rs.resource.attributes).get(A.PROJECT) or DEFAULT_PROJECT
        )
        spans = sum(len(ss.spans) for ss in rs.scope_spans)
        expansion += rs.resource.ByteSize() * spans
        if expansion > limits.max_resource_expansion_bytes:
            raise PayloadTooLarge(
                f"resourceSpans[{ri}]: its resource attributes ({rs.resource.ByteSize()} bytes) "
                f"are stored on each of its {spans} spans; the request would expand to more "
                f"than {limits.max_resource_expansion_bytes} bytes (send fewer spans per request "
                "or smaller resource attributes)"
            )
        for si, ss in enumerate(rs.scope_spans):
            for pi, span in enumerate(ss.spans):
                # The common case in one expression; the message is built only for a bad span.
                tid, sid, pid = span.trace_id, span.span_id, span.parent_span_id
                start, end = span.start_time_unix_nano, span.end_time_unix_nano
                if (
                    len(tid) != 16
                    or tid == zero16
                    or len(sid) != 8
                    or sid == zero8
                    or (pid and len(pid) != 8)
                    or (end and end < start)
                    or end > _MAX_NANOS
                    or start > _MAX_NANOS
                    or span.events
                    or span.links
                ) and (problem := _span_problem(span)):
                    raise BadPayload(f"resourceSpans[{ri}].scopeSpans[{si}].spans[{pi}]{problem}")
                keys[row_project, tid] = None
                days.add(start // NS_PER_DAY)
    return [[p, tid.hex()] for p, tid in keys], sorted(days)


def _span_problem(span: Span) -> str | None:
    """What is wrong with ``span`` (``: ...`` or ``.events[i]: ...``), or None."""
    if len(span.trace_id) != 16 or span.trace_id == bytes(16):
        return ": traceId must be 16 non-zero bytes"
    if len(span.span_id) != 8 or span.span_id == bytes(8):
        return ": spanId must be 8 non-zero bytes"
    if span.parent_span_id and len(span.parent_span_id) != 8:
        return ": parentSpanId must be empty or 8 bytes"
    if span.end_time_unix_nano and span.end_time_unix_nano < span.start_time_unix_nano:
        return ": endTimeUnixNano is before startTimeUnixNano"
    if span.end_time_unix_nano > _MAX_NANOS or span.start_time_unix_nano > _MAX_NANOS:
        return ": timestamp beyond DateTime64(9) (year 2262)"
    for ei, event in enumerate(span.events):
        if event.time_unix_nano > _MAX_NANOS:
            return f".events[{ei}]: timestamp beyond DateTime64(9)"
    for li, link in enumerate(span.links):
        if len(link.trace_id) != 16 or len(link.span_id) != 8:
            return f".links[{li}]: invalid traceId or spanId"
    return None


def any_value_str(value: AnyValue) -> str:
    """An attribute value as the clickhouseexporter stores it (pdata ``Value.AsString``).

    Scalars as text, doubles as Go's encoding/json writes them (shortest digits, ``e`` notation
    only below 1e-6 and from 1e21), bytes as base64, lists and maps as Go's ``json.Marshal``
    writes them (map keys sorted, ``<>&`` escaped, NaN making the whole value empty).

    >>> any_value_str(AnyValue(double_value=1e21)), any_value_str(AnyValue(double_value=2.0))
    ('1e+21', '2')
    """
    which = value.WhichOneof("value")
    if which == "string_value":
        return value.string_value
    if which == "int_value":
        return str(value.int_value)
    if which == "bool_value":
        return "true" if value.bool_value else "false"
    if which == "double_value":
        x = value.double_value
        if math.isnan(x) or math.isinf(x):
            go = "NaN" if math.isnan(x) else ("+Inf" if x > 0 else "-Inf")
            return "json: unsupported value: " + go
        return _float_str(x)
    if which == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    if which in ("array_value", "kvlist_value"):
        try:
            return _go_json(value)
        except ValueError:  # Go's json.Marshal fails on NaN/Inf and the exporter stores ""
            return ""
    # None, or a kind added to OTLP later (``string_value_strindex``, a profiles dictionary
    # index that means nothing in a trace): empty, as pdata's AsString has it.
    return ""


def _float_str(x: float) -> str:
    """Go's float64 formatting in encoding/json (ES6 number to string)."""
    text = repr(x)
    magnitude = abs(x)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        mantissa, _, exponent = text.partition("e")
        sign, digits = exponent[0], exponent[1:].lstrip("0")
        return f"{mantissa.removesuffix('.0')}e{sign}{digits.zfill(1 if sign == '-' else 2)}"
    fixed = format(Decimal(text), "f")
    return fixed.rstrip("0").rstrip(".") if "." in fixed else fixed


_GO_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def _go_json(value: AnyValue) -> str:
    which = value.WhichOneof("value")
    if which == "string_value":
        return json.dumps(value.string_value, ensure_ascii=False).translate(_GO_ESCAPES)
    if which == "double_value":
        x = value.double_value
        if math.isnan(x) or math.isinf(x):
            raise ValueError("unsupported float")
        return _float_str(x)
    if which == "array_value":
        return "[" + ",".join(_go_json(v) for v in value.array_value.values) + "]"
    if which == "kvlist_value":
        items = {kv.key: kv.value for kv in value.kvlist_value.values}
        return (
            "{"
            + ",".join(
                f"{_go_json(AnyValue(string_value=k))}:{_go_json(items[k])}" for k in sorted(items)
            )
            + "}"
        )
    if which == "bytes_value":
        return '"' + base64.b64encode(value.bytes_value).decode("ascii") + '"'
    if which in ("int_value", "bool_value"):
        return any_value_str(value)  # the same text inside JSON
    return "null"  # none, or a kind this version does not know


def attributes_map(attrs: Any) -> dict[str, str]:
    """A repeated KeyValue field as a ``{key: string}`` map."""
    out: dict[str, str] = {}
    kv: KeyValue
    for kv in attrs:
        # Most values are strings: test that inline instead of a call per value (the
        # writer's hottest loop, ~15 attributes per span).
        value = kv.value
        if value.WhichOneof("value") == "string_value":
            out[kv.key] = value.string_value
        else:
            out[kv.key] = any_value_str(value)
    return out


class SpanColumns:
    """``otel_traces`` columns for a batch of requests, built span by span, as one Arrow table.

    The one flattener: a repeated attribute key keeps its last value; values are kept column
    by column in flat lists (one append per value, no per-row list or per-span dict left behind
    for the cyclic GC to walk) and handed to the store as Arrow, which ClickHouse ingests
    natively (``ArrowStream``) without clickhouse-connect's Python encoder. ``project`` is the
    API key's project; without one, a resource's ``planscope.project`` attribute chooses, else
    ``default``.

    >>> cols = SpanColumns()
    >>> cols.add(ExportTraceServiceRequest(), None)
    0
    >>> len(cols), cols.to_arrow().num_rows
    (0, 0)
    """

    def __init__(self) -> None:
        self.timestamp: list[int] = []
        self.trace_id: list[str] = []
        self.span_id: list[str] = []
        self.parent_span_id: list[str] = []
        self.trace_state: list[str] = []
        self.span_name: list[str] = []
        self.span_kind: list[str] = []
        self.service: list[str] = []
        self.scope_name: list[str] = []
        self.scope_version: list[str] = []
        self.duration: list[int] = []
        self.status_code: list[str] = []
        self.status_message: list[str] = []
        self.project: list[str] = []
        # Maps as (offsets, keys, values); Nested columns as offsets + flat values.
        self.res_off: list[int] = [0]
        self.res_keys: list[str] = []
        self.res_values: list[str] = []
        self.attr_off: list[int] = [0]
        self.attr_keys: list[str] = []
        self.attr_values: list[str] = []
        self.ev_off: list[int] = [0]
        self.ev_time: list[int] = []
        self.ev_name: list[str] = []
        self.ev_attr_off: list[int] = [0]
        self.ev_attr_keys: list[str] = []
        self.ev_attr_values: list[str] = []
        self.ln_off: list[int] = [0]
        self.ln_trace_id: list[str] = []
        self.ln_span_id: list[str] = []
        self.ln_trace_state: list[str] = []
        self.ln_attr_off: list[int] = [0]
        self.ln_attr_keys: list[str] = []
        self.ln_attr_values: list[str] = []

    def __len__(self) -> int:
        return len(self.timestamp)

    def add(self, request: ExportTraceServiceRequest, project: str | None) -> int:
        """Append the spans of ``request``; return how many."""
        before = len(self.timestamp)
        ts_append, dur_append = self.timestamp.append, self.duration.append
        tid_append, sid_append = self.trace_id.append, self.span_id.append
        pid_append, tstate_append = self.parent_span_id.append, self.trace_state.append
        name_append, kind_append = self.span_name.append, self.span_kind.append
        code_append, msg_append = self.status_code.append, self.status_message.append
        attr_keys, attr_values, attr_off = self.attr_keys, self.attr_values, self.attr_off
        res_keys, res_values, res_off = self.res_keys, self.res_values, self.res_off
        ev_off, ln_off = self.ev_off, self.ln_off
        for rs in request.resource_spans:
            resource = attributes_map(rs.resource.attributes)
            rkeys, rvalues = list(resource), list(resource.values())
            service = resource.get(A.SERVICE_NAME, "")
            row_project = project or resource.get(A.PROJECT) or DEFAULT_PROJECT
            for ss in rs.scope_spans:
                spans = ss.spans
                n = len(spans)
                if not n:
                    continue
                self.service.extend([service] * n)
                self.project.extend([row_project] * n)
                self.scope_name.extend([ss.scope.name] * n)
                self.scope_version.extend([ss.scope.version] * n)
                for span in spans:
                    start = span.start_time_unix_nano
                    ts_append(start)
                    dur_append((span.end_time_unix_nano or start) - start)
                    tid_append(span.trace_id.hex())
                    sid_append(span.span_id.hex())
                    pid_append(span.parent_span_id.hex())
                    tstate_append(span.trace_state)
                    name_append(span.name)
                    kind = span.kind
                    kind_append(_SPAN_KINDS[kind] if 0 <= kind < 6 else "Unspecified")
                    status = span.status
                    code = status.code
                    code_append(_STATUS_CODES[code] if 0 <= code < 3 else "Unset")
                    msg_append(status.message)
                    res_keys += rkeys
                    res_values += rvalues
                    res_off.append(len(res_keys))
                    attrs = attributes_map(span.attributes)
                    attr_keys += attrs
                    attr_values += attrs.values()
                    attr_off.append(len(attr_keys))
                    if span.events:
                        self._add_events(span.events)
                    ev_off.append(len(self.ev_time))
                    if span.links:
                        self._add_links(span.links)
                    ln_off.append(len(self.ln_trace_id))
        return len(self.timestamp) - before

    def _add_events(self, events: Any) -> None:
        for e in events:
            self.ev_time.append(e.time_unix_nano)
            self.ev_name.append(e.name)
            attrs = attributes_map(e.attributes)
            self.ev_attr_keys += attrs
            self.ev_attr_values += attrs.values()
            self.ev_attr_off.append(len(self.ev_attr_keys))

    def _add_links(self, links: Any) -> None:
        for ln in links:
            self.ln_trace_id.append(ln.trace_id.hex())
            self.ln_span_id.append(ln.span_id.hex())
            self.ln_trace_state.append(ln.trace_state)
            attrs = attributes_map(ln.attributes)
            self.ln_attr_keys += attrs
            self.ln_attr_values += attrs.values()
            self.ln_attr_off.append(len(self.ln_attr_keys))

    def trace_keys(self) -> set[tuple[str, str]]:
        """The distinct (project, trace id) pairs."""
        return set(zip(self.project, self.trace_id, strict=True))

    def to_arrow(self) -> Any:
        """A ``pyarrow.Table`` with the columns of ``TRACE_COLUMNS``, in that order."""
        import pyarrow as pa

        text, ts = pa.string(), pa.timestamp("ns")

        def strings(values: list[str]) -> Any:
            return pa.array(values, text)

        def mapping(offsets: list[int], keys: list[str], values: list[str]) -> Any:
            return pa.MapArray.from_arrays(
                pa.array(offsets, pa.int32()), strings(keys), strings(values)
            )

        def nested(offsets: list[int], values: Any) -> Any:
            return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values)

        columns = {
            "Timestamp": pa.array(self.timestamp, ts),
            "TraceId": strings(self.trace_id),
            "SpanId": strings(self.span_id),
            "ParentSpanId": strings(self.parent_span_id),
            "TraceState": strings(self.trace_state),
            "SpanName": strings(self.span_name),
            "SpanKind": strings(self.span_kind),
            "ServiceName": strings(self.service),
            "ResourceAttributes": mapping(self.res_off, self.res_keys, self.res_values),
            "ScopeName": strings(self.scope_name),
            "ScopeVersion": strings(self.scope_version),
            "SpanAttributes": mapping(self.attr_off, self.attr_keys, self.attr_values),
            "Duration": pa.array(self.duration, pa.uint64()),
            "StatusCode": strings(self.status_code),
            "StatusMessage": strings(self.status_message),
            "Events.Timestamp": nested(self.ev_off, pa.array(self.ev_time, ts)),
            "Events.Name": nested(self.ev_off, strings(self.ev_name)),
            "Events.Attributes": nested(
                self.ev_off, mapping(self.ev_attr_off, self.ev_attr_keys, self.ev_attr_values)
            ),
            "Links.TraceId": nested(self.ln_off, strings(self.ln_trace_id)),
            "Links.SpanId": nested(self.ln_off, strings(self.ln_span_id)),
            "Links.TraceState": nested(self.ln_off, strings(self.ln_trace_state)),
            "Links.Attributes": nested(
                self.ln_off, mapping(self.ln_attr_off, self.ln_attr_keys, self.ln_attr_values)
            ),
            "Project": strings(self.project),
        }
        return pa.table(columns)

    def to_ipc(self) -> Any:
        """:meth:`to_arrow` as one Arrow IPC stream (a bytes-like ``pyarrow.Buffer``), what
        ``Store.insert_spans`` takes."""
        return ipc_stream(self.to_arrow())


def spans_ipc(request: ExportTraceServiceRequest, project: str | None) -> bytes:
    """The spans of a parsed, validated request as one Arrow IPC stream (what the spool keeps).

    ``project`` is the API key's project (``None``: the resource's ``planscope.project``, else
    ``default``), as :meth:`SpanColumns.add` applies it.

    >>> import pyarrow as pa
    >>> pa.ipc.open_stream(spans_ipc(ExportTraceServiceRequest(), None)).read_all().num_rows
    0
    """
    columns = SpanColumns()
    columns.add(request, project)
    return bytes(columns.to_ipc())


def gzip_bytes(data: bytes) -> bytes:
    """gzip ``data`` (used by tests and the load generator)."""
    return gzip.compress(data, compresslevel=1)

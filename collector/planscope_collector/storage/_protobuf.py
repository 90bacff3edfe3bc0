"""OTLP protobuf requests flattened by ClickHouse itself (``Protobuf`` input format).

The collector spools a request whose attribute values are all scalars (no ``array_value`` or
``kvlist_value``: Go's JSON rendering of those has no SQL counterpart at every depth) as the
protobuf bytes it received; the writer inserts a segment's such requests with one
``INSERT ... SELECT`` that reads them with :data:`SCHEMA` and renders every column exactly as
``_otlp.SpanColumns`` does (the clickhouseexporter's conventions): ids as lowercase hex, kinds
and status codes by name, doubles as Go's encoding/json writes them, bytes as base64, a
repeated attribute key keeping its last value at its first position, ``Project`` from the API
key's project (field 1000 of :data:`SCHEMA`'s ``Request``, appended by the writer), else the
resource's ``planscope.project``, else ``default``. ``tests/collector/test_protobuf_flatten.py``
compares the two paths cell by cell on adversarial values.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from ._schema import TRACE_COLUMNS

PROJECT_FIELD = 1000
"""Field number of the API key's project, appended to each request by the writer (a protobuf
message followed by more fields is the message with those fields: concatenation is merge)."""

SCHEMA = f"""
syntax = "proto3";
message AnyValue {{
  oneof value {{
    string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
    bytes bytes_value = 7;
  }}
}}
message KeyValue {{ string key = 1; AnyValue value = 2; }}
message Resource {{ repeated KeyValue attributes = 1; }}
message Scope {{ string name = 1; string version = 2; }}
message Status {{ string message = 2; int32 code = 3; }}
message Event {{ fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }}
message Link {{
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4;
}}
message Span {{
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4;
  string name = 5; int32 kind = 6; fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9; repeated Event events = 11;
  repeated Link links = 13; Status status = 15;
}}
message ScopeSpans {{ Scope scope = 1; repeated Span spans = 2; }}
message ResourceSpans {{ Resource resource = 1; repeated ScopeSpans scope_spans = 2; }}
message Request {{ repeated ResourceSpans resource_spans = 1; string project = {PROJECT_FIELD}; }}
"""
"""The OTLP trace messages as far as the flatten reads them (same field numbers and types)."""

_ANY = (
    "Tuple(value Enum8('none' = 0, 'string_value' = 1, 'bool_value' = 2, 'int_value' = 3, "
    "'double_value' = 4, 'bytes_value' = 7), string_value String, bool_value Bool, "
    "int_value Int64, double_value Float64, bytes_value String)"
)
_KVS = f"Array(Tuple(key String, value {_ANY}))"
STRUCTURE = (
    f"resource_spans Array(Tuple(resource Tuple(attributes {_KVS}), scope_spans Array(Tuple("
    "scope Tuple(name String, version String), spans Array(Tuple(trace_id String, "
    "span_id String, trace_state String, parent_span_id String, name String, kind Int32, "
    f"start_time_unix_nano UInt64, end_time_unix_nano UInt64, attributes {_KVS}, "
    f"events Array(Tuple(time_unix_nano UInt64, name String, attributes {_KVS})), "
    f"links Array(Tuple(trace_id String, span_id String, trace_state String, attributes {_KVS})), "
    "status Tuple(message String, code Int32))))))), project String"
)
""":data:`SCHEMA`'s ``Request`` as ClickHouse columns (repeated messages as arrays of tuples)."""


def _value(v: str) -> str:
    """``_otlp.any_value_str`` for a scalar ``AnyValue`` (the oneof's presence in ``value``)."""
    x = f"{v}.double_value"
    unsupported = "'json: unsupported value: "
    # toString(Float64) writes the shortest round-trip digits, switching to e-notation below
    # 1e-6 and from 1e21 as Go does; only the exponent's sign differs (1e21 -> 1e+21).
    double = (
        f"multiIf(isNaN({x}), {unsupported}NaN', isInfinite({x}), "
        f"if({x} > 0, {unsupported}+Inf', {unsupported}-Inf'), "
        f"replaceRegexpOne(toString({x}), 'e([0-9])', 'e+\\\\1'))"
    )
    return (
        f"multiIf({v}.value = 'string_value', {v}.string_value, "
        f"{v}.value = 'int_value', toString({v}.int_value), "
        f"{v}.value = 'bool_value', if({v}.bool_value, 'true', 'false'), "
        f"{v}.value = 'double_value', {double}, "
        f"{v}.value = 'bytes_value', base64Encode({v}.bytes_value), '')"
    )


def _attributes(kvs: str, name: str) -> str:
    """A repeated KeyValue as a Map, as ``_otlp.attributes_map`` builds it (a Python dict): a
    repeated key keeps its first position and its last value. ``name`` makes the aliases of
    this map's values unique in the query."""
    keys = f"{kvs}.key"
    values = f"arrayMap(v -> {_value('v')}, {kvs}.value) AS {name}_values"
    # A repeated key: the distinct keys in order of first appearance, each looked up in the
    # map reversed (a lookup takes the first match: the last value). The values are rendered
    # once, under an alias both branches use: rendering them again in the second branch cost
    # ~10 ms more analysis per insert (docs/benchmarks.md, "The writer, stage by stage").
    last = f"mapFromArrays(arrayReverse({keys}), arrayReverse({name}_values))[k]"
    dedup = (
        f"mapFromArrays(arrayDistinct({keys}) AS {name}_keys, arrayMap(k -> {last}, {name}_keys))"
    )
    # arrayUniq counts without building the distinct array: 0.08 against 0.34 µs per map of
    # 20 keys (docs/benchmarks.md, "One plan stream").
    return f"if(arrayUniq({keys}) = length({keys}), mapFromArrays({keys}, {values}), {dedup})"


def _named(code: str, names: tuple[str, ...]) -> str:
    listed = ", ".join(f"'{n}'" for n in names)
    return f"if({code} BETWEEN 0 AND {len(names) - 1}, [{listed}][{code} + 1], '{names[0]}')"


_COLUMNS = {
    "Timestamp": "fromUnixTimestamp64Nano(toInt64(sp.start_time_unix_nano))",
    "TraceId": "lower(hex(sp.trace_id))",
    "SpanId": "lower(hex(sp.span_id))",
    "ParentSpanId": "lower(hex(sp.parent_span_id))",
    "TraceState": "sp.trace_state",
    "SpanName": "sp.name",
    "SpanKind": _named(
        "sp.kind", ("Unspecified", "Internal", "Server", "Client", "Producer", "Consumer")
    ),
    "ServiceName": "ResourceAttributes['service.name']",
    "ResourceAttributes": _attributes("rs.resource.attributes", "resource"),
    "ScopeName": "ss.scope.name",
    "ScopeVersion": "ss.scope.version",
    "SpanAttributes": _attributes("sp.attributes", "span"),
    "Duration": "if(sp.end_time_unix_nano = 0, 0, sp.end_time_unix_nano - sp.start_time_unix_nano)",
    "StatusCode": _named("sp.status.code", ("Unset", "Ok", "Error")),
    "StatusMessage": "sp.status.message",
    "Events.Timestamp": (
        "arrayMap(e -> fromUnixTimestamp64Nano(toInt64(e.time_unix_nano)), sp.events)"
    ),
    "Events.Name": "arrayMap(e -> e.name, sp.events)",
    "Events.Attributes": f"arrayMap(e -> {_attributes('e.attributes', 'event')}, sp.events)",
    "Links.TraceId": "arrayMap(l -> lower(hex(l.trace_id)), sp.links)",
    "Links.SpanId": "arrayMap(l -> lower(hex(l.span_id)), sp.links)",
    "Links.TraceState": "arrayMap(l -> l.trace_state, sp.links)",
    "Links.Attributes": f"arrayMap(l -> {_attributes('l.attributes', 'link')}, sp.links)",
    "Project": "multiIf(project != '', project, ResourceAttributes['planscope.project'] != '', "
    "ResourceAttributes['planscope.project'], 'default')",
}
assert tuple(_COLUMNS) == TRACE_COLUMNS


def flatten_select(source: str) -> str:
    """``SELECT`` of :data:`TRACE_COLUMNS` (in order) from ``source``, a table function that
    reads length-delimited ``Request`` messages (``file(...)`` or ``input(...)``)."""
    columns = ",\n ".join(f"{sql} AS `{name}`" for name, sql in _COLUMNS.items())
    return (
        f"SELECT\n {columns}\nFROM {source}\n"
        "ARRAY JOIN resource_spans AS rs ARRAY JOIN rs.scope_spans AS ss "
        "ARRAY JOIN ss.spans AS sp"
    )


SOURCE_BLOCK_BYTES = 2 << 20
"""Bytes of decoded requests per block of the flatten's source
(``input_format_max_block_size_bytes``).

The flatten's intermediate columns (nested arrays, ``ARRAY JOIN``, attribute maps) held ~12
times a segment's request bytes at once when the source was one block; in blocks of this size
an insert's peak is ~110-155 MiB lower (docs/storage.md, "Memory"). ClickHouse squashes the
flattened blocks back into one insert block (``min_insert_block_size_bytes``, 256 MiB), so the
views still see, and the dedup token still names, one block per stream."""

SETTINGS = {
    "input_format_protobuf_oneof_presence": 1,
    "input_format_max_block_size_bytes": SOURCE_BLOCK_BYTES,
    # Both branches of the attribute maps' if() are lambdas over every attribute; evaluate the
    # repeated-key branch only for the maps that need it.
    "short_circuit_function_evaluation": "force_enable",
}
"""Settings of every such insert; where it finds :data:`SCHEMA` is :func:`schema_settings`."""


def schema_settings(directory: Path | None) -> dict[str, str]:
    """Settings naming :data:`SCHEMA`: in the query for a server (no file of ours there), else
    in a file in ``directory`` (chDB's data directory), written once. chDB would cache a
    schema given in the query under ``__cache__/`` in the process's working directory.

    >>> schema_settings(None)["format_schema_source"]
    'string'
    """
    if directory is None:
        return {
            "format_schema_source": "string",
            "format_schema": SCHEMA,
            "format_schema_message_name": "Request",
        }
    digest = hashlib.sha256(SCHEMA.encode()).hexdigest()[:16]
    path = directory / f"planscope_otlp_{digest}.proto"
    if not path.exists():
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        partial.write_text(SCHEMA)
        os.replace(partial, path)  # whole or absent, should two processes write it
    return {"format_schema": f"{path}:Request"}


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


_PROJECT_TAG = _varint(PROJECT_FIELD << 3 | 2)  # length-delimited


def request_parts(message: bytes | memoryview, project: str) -> list[bytes | memoryview]:
    """One request of an insert's stream: its length, the OTLP message, the project override.

    >>> b"".join(request_parts(b"", "p"))
    b'\\x04\\xc2>\\x01p'
    """
    extra = _PROJECT_TAG + _varint(len(project.encode())) + project.encode() if project else b""
    return [_varint(len(message) + len(extra)), message, extra]


def literal(text: str) -> str:
    """A ClickHouse string literal.

    >>> literal("it's")
    "'it\\\\'s'"
    """
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def settings_clause(settings: dict[str, Any]) -> str:
    """``k = v, ...`` for a ``SETTINGS`` clause (strings quoted)."""
    return ", ".join(
        f"{k} = {literal(v) if isinstance(v, str) else v}" for k, v in settings.items()
    )

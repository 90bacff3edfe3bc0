"""Requests with scalar values only are spooled as received and flattened by ClickHouse
(``storage._protobuf``, spool format 3); the stored values must be those of the Python
flattener (``SpanColumns``), byte for byte, in ``otel_traces`` and every derived table."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
from planscope_collector._errors import BadPayload
from planscope_collector._ingest import IngestLimits, RecentBatches, accept
from planscope_collector._otlp import NS_PER_DAY, PROTOBUF, parse_scalar_request, spans_ipc
from planscope_collector._spool import ARROW, SCALAR_OTLP, Segment, Spool
from planscope_collector._writer import Writer, flatten_segment, insert
from planscope_collector.storage import TABLES, TRACE_COLUMNS, Store
from planscope_collector.storage._protobuf import (
    SETTINGS,
    STRUCTURE,
    _varint,
    literal,
    schema_settings,
    settings_clause,
)

LIMITS = IngestLimits(
    max_decompressed_bytes=1 << 26, spool_max_bytes=1 << 30, retry_after_seconds=1
)


def _kv(key: str, **value: Any) -> KeyValue:
    return KeyValue(key=key, value=AnyValue(**value))


# Every scalar kind, at its edges; a repeated key; values that are absent or empty.
ODD_VALUES = [
    _kv("d.small", double_value=1e-7),
    _kv("d.big", double_value=1e21),
    _kv("d.below_big", double_value=9.999999999999999e20),
    _kv("d.negzero", double_value=-0.0),
    _kv("d.denormal", double_value=5e-324),
    _kv("d.max", double_value=1.7976931348623157e308),
    _kv("d.tenth", double_value=0.1),
    _kv("d.int", double_value=123456.0),
    _kv("d.limit", double_value=1e-6),
    _kv("d.nan", double_value=float("nan")),
    _kv("d.inf", double_value=float("inf")),
    _kv("d.neginf", double_value=-float("inf")),
    _kv("i.min", int_value=-(2**63)),
    _kv("i.max", int_value=2**63 - 1),
    _kv("i.zero", int_value=0),
    _kv("b.true", bool_value=True),
    _kv("b.false", bool_value=False),
    _kv("y.bytes", bytes_value=b"\x00\xff\x10"),
    _kv("y.empty", bytes_value=b""),
    _kv("s.empty", string_value=""),
    _kv("s.escapes", string_value='ü "q" <a&b> \\ \n\t \u2028 \U0001f600'),
    KeyValue(key="no.value"),
    KeyValue(key="empty.anyvalue", value=AnyValue()),
    _kv("", string_value="an empty key"),
    _kv("dup", string_value="first"),
    _kv("x", int_value=1),
    _kv("dup", int_value=2),
    _kv("dup", string_value="last"),
]


def odd_request(seed: int, *, nested: str | None = None) -> ExportTraceServiceRequest:
    """Two resources (one with repeated service.name and planscope.project, one bare), kinds
    and status codes in and out of range, an unended span, events and links with attributes."""
    request = ExportTraceServiceRequest()
    rs = request.resource_spans.add()
    rs.resource.attributes.extend(
        [
            _kv("service.name", string_value="svc-a"),
            _kv("service.name", string_value="svc-b"),
            _kv("planscope.project", string_value="resource-project"),
            _kv("r.double", double_value=2.5e-9),
        ]
    )
    rs.scope_spans.add()  # a scope without spans
    ss = rs.scope_spans.add()
    ss.scope.name, ss.scope.version = "scope", "1.0"
    start = time.time_ns() // 1000 * 1000 + 123_456_789  # recent: the tables have a TTL
    for i in range(6):
        span = ss.spans.add(
            trace_id=bytes([seed, 1]) * 8,
            span_id=bytes([seed, i + 1]) * 4,
            parent_span_id=bytes([seed, 1]) * 4 if i else b"",
            name=f"span {i} ü",
            kind=[0, 1, 5, 6, -1, 3][i],  # type: ignore[arg-type]
            trace_state="k=v" if i % 2 else "",
            start_time_unix_nano=start + i,
            end_time_unix_nano=0 if i == 2 else start + 1000 * i,
        )
        span.status.code = [0, 1, 2, 3, 0, 2][i]  # type: ignore[assignment]
        span.status.message = "boom" if i == 2 else ""
        span.attributes.extend(ODD_VALUES if i < 3 else ODD_VALUES[::-1])
        if i in (1, 3):
            event = span.events.add(time_unix_nano=start + 5, name="exception")
            event.attributes.extend(ODD_VALUES)
            span.events.add(name="bare")
            link = span.links.add(trace_id=b"\x09" * 16, span_id=b"\x08" * 8, trace_state="a=b")
            link.attributes.extend(ODD_VALUES[::-1])
            span.links.add(trace_id=b"\x07" * 16, span_id=b"\x06" * 8)
    bare = request.resource_spans.add().scope_spans.add()
    bare.spans.add(trace_id=bytes([seed, 2]) * 8, span_id=b"\x04" * 8, start_time_unix_nano=start)
    first = ss.spans[0]
    if nested == "array":
        values = [AnyValue(int_value=1), AnyValue(double_value=1e21)]
        first.attributes.append(_kv("nested", array_value=ArrayValue(values=values)))
    elif nested == "kvlist":
        pairs = KeyValueList(values=[_kv("b", string_value="<"), _kv("a", double_value=0.5)])
        first.attributes.append(_kv("nested", kvlist_value=pairs))
    return request


def _rows(store: Store) -> list[dict[str, str]]:
    columns = ", ".join(f"toString(`{c}`) AS `{c}`" for c in TRACE_COLUMNS)
    return store.query(f"SELECT {columns} FROM otel_traces ORDER BY TraceId, SpanId, SpanName")


def _derived(store: Store) -> dict[str, list[str]]:
    """Every derived table's rows, as text, in a stable order."""
    out = {}
    for table in TABLES:
        if table in ("otel_traces", "planscope_ingest_batches"):
            continue
        rows = store.query(f"SELECT toString(tuple(*)) AS row FROM {table} ORDER BY row")
        out[table] = [r["row"] for r in rows]
    return out


def _truncate(store: Store) -> None:
    for table in TABLES:
        store.command(f"TRUNCATE TABLE IF EXISTS {table}")


def _sealed(tmp_path: Path, bodies: list[tuple[bytes, str | None]]) -> tuple[Spool, Segment]:
    """The bodies accepted as the collector's handler does, in one sealed segment."""
    spool = Spool(tmp_path / f"spool-{time.monotonic_ns()}")
    for body, project in bodies:
        accept(spool, RecentBatches(60), LIMITS, body=body, content_type=PROTOBUF,
               content_encoding=None, project=project)  # fmt: skip
    (segment,) = spool.seal()
    return spool, segment


def _spool_and_store(tmp_path: Path, store: Store, bodies: list[tuple[bytes, str | None]]) -> str:
    spool, segment = _sealed(tmp_path, bodies)
    formats = {r.format for r in segment.records()}
    insert(store, flatten_segment(segment), spool.dedup_token(segment))
    (fmt,) = formats
    return fmt


def _python_store(
    store: Store, requests: list[tuple[ExportTraceServiceRequest, str | None]]
) -> None:
    for number, (request, project) in enumerate(requests):
        store.insert_spans(spans_ipc(request, project), dedup_token=f"python/{number}")


def test_clickhouse_flattens_scalar_values_exactly_as_python_does(
    tmp_path: Path, store: Store
) -> None:
    requests = [(odd_request(1), None), (odd_request(2), "key-project")]
    _python_store(store, requests)
    python_rows, python_derived = _rows(store), _derived(store)
    _truncate(store)
    bodies = [(r.SerializeToString(), p) for r, p in requests]
    assert _spool_and_store(tmp_path, store, bodies) == SCALAR_OTLP
    assert len(python_rows) == 14
    assert _rows(store) == python_rows
    assert _derived(store) == python_derived
    values = {r["SpanId"]: r for r in python_rows}
    attrs = values[(bytes([1, 1]) * 4).hex()]["SpanAttributes"]
    assert "'d.big':'1e+21'" in attrs and "'d.small':'1e-7'" in attrs  # Go's formatting
    assert "'dup':'last'" in attrs and attrs.index("'dup'") < attrs.index("'x'")


# Attribute lists by shape: strings only (the common case, whose decoded values the map keeps as
# they are), a string overriding another kind under a repeated key and the reverse, other kinds
# only, a value of no kind among strings, none at all.
ATTRIBUTE_SHAPES = [
    [_kv("a", string_value="x"), _kv("b", string_value=""), _kv("c", string_value="ü z")],
    [_kv("a", string_value="1"), _kv("b", string_value="2"), _kv("a", string_value="3")],
    [_kv("k", string_value="s"), _kv("n", int_value=7), _kv("k", int_value=-1)],
    [_kv("k", double_value=0.5), _kv("s", string_value="t"), _kv("k", string_value="won")],
    [
        _kv("i", int_value=3),
        _kv("d", double_value=1e21),
        _kv("b", bool_value=True),
        _kv("y", bytes_value=b"\xfe"),
    ],
    [_kv("s", string_value="a"), KeyValue(key="none"), _kv("t", string_value="b")],
    [_kv("b", bool_value=False), _kv("s", string_value="x" * 300), _kv("d", double_value=-0.0)],
    [],
]


def shapes_request(seed: int) -> ExportTraceServiceRequest:
    """One span per shape; each span's event and link carry the next shapes."""
    request = ExportTraceServiceRequest()
    rs = request.resource_spans.add()
    rs.resource.attributes.extend(ATTRIBUTE_SHAPES[seed % len(ATTRIBUTE_SHAPES)])
    spans = rs.scope_spans.add().spans
    start = time.time_ns() // 1000 * 1000
    n = len(ATTRIBUTE_SHAPES)
    for i, shape in enumerate(ATTRIBUTE_SHAPES):
        span = spans.add(trace_id=bytes([seed, 3]) * 8, span_id=bytes([seed, i + 1]) * 4,
                         name="s", start_time_unix_nano=start + i)  # fmt: skip
        span.attributes.extend(shape)
        span.events.add(name="e").attributes.extend(ATTRIBUTE_SHAPES[(i + 1) % n])
        link = span.links.add(trace_id=b"\x09" * 16, span_id=b"\x08" * 8)
        link.attributes.extend(ATTRIBUTE_SHAPES[(i + 2) % n])
    return request


def test_attribute_maps_of_every_shape_match_python(tmp_path: Path, store: Store) -> None:
    requests = [(shapes_request(seed), None) for seed in (11, 12, 13)]
    _python_store(store, requests)
    python_rows = _rows(store)
    _truncate(store)
    bodies = [(r.SerializeToString(), p) for r, p in requests]
    assert _spool_and_store(tmp_path, store, bodies) == SCALAR_OTLP
    assert len(python_rows) == 3 * len(ATTRIBUTE_SHAPES)
    assert _rows(store) == python_rows
    attrs = {r["SpanId"]: r["SpanAttributes"] for r in python_rows}
    assert attrs[(bytes([11, 3]) * 4).hex()] == "{'k':'-1','n':'7'}"
    assert attrs[(bytes([11, 4]) * 4).hex()] == "{'k':'won','s':'t'}"


@pytest.mark.parametrize("nested", ["array", "kvlist"])
def test_a_request_with_nested_values_is_flattened_by_python(
    tmp_path: Path, store: Store, nested: str
) -> None:
    body = odd_request(3, nested=nested).SerializeToString()
    assert parse_scalar_request(body) is None
    assert _spool_and_store(tmp_path, store, [(body, None)]) == ARROW
    (row,) = store.query(
        "SELECT SpanAttributes['nested'] AS v FROM otel_traces WHERE SpanId = {s:String}",
        {"s": (bytes([3, 1]) * 4).hex()},
    )
    assert row["v"] == ("[1,1e+21]" if nested == "array" else '{"a":0.5,"b":"\\u003c"}')


# --- which bytes ClickHouse may flatten: the wire-level corpus -------------------------------
# A request built field by field, so that each case below differs from the canonical one in
# exactly one way. Field numbers are OTLP's (trace.proto, common.proto, resource.proto).
def _len(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _int(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value % (1 << 64))


def _fixed64(number: int, value: int) -> bytes:
    return _varint(number << 3 | 1) + value.to_bytes(8, "little")


def _overlong(n: int) -> bytes:
    """``n`` as a varint one byte longer than needed (parsers accept it)."""
    v = _varint(n)
    return v[:-1] + bytes([v[-1] | 0x80, 0])


_UNKNOWN = _int(99, 1)  # field 99, varint 1: no OTLP message has it


def _wire_request(case: str = "") -> bytes:
    """The canonical encoding of a one-span request, or the same request changed by ``case``
    (``unknown@<message>`` puts field 99 last in that message, where re-serializing a parse
    that kept it would put it too)."""

    def tail(message: str) -> bytes:
        return _UNKNOWN if case == f"unknown@{message}" else b""

    def any_str(value: str) -> bytes:
        return _len(1, value.encode()) + tail("AnyValue")

    def kv(key: str, value: bytes) -> bytes:
        return _len(1, key.encode()) + _len(2, value) + tail("KeyValue")

    value = any_str("v")
    if case == "array_value":
        value = _len(5, _len(1, _int(3, 7)))
    elif case == "kvlist_value":
        value = _len(6, _len(1, kv("k", any_str("x"))))
    elif case == "two oneof members":
        value = _len(1, b"v") + _int(3, 7)
    elif case == "bool as 2":
        value = _int(2, 2)
    attributes = _len(9, kv("a", value)) + _len(9, kv("b", _int(3, 0)))  # int 0 written: oneof
    if case == "attributes interleaved":
        attributes = _len(9, kv("a", value)) + _len(11, _fixed64(1, 5)) + _len(9, kv("b", b""))
    event = _fixed64(1, 5) + _len(2, b"e") + _len(3, kv("ek", any_str("ev"))) + tail("Event")
    link = _len(1, bytes(range(1, 17))) + _len(2, bytes(range(2, 10)))
    link += _len(4, kv("lk", any_str("lv"))) + tail("Link")
    status = _len(2, b"boom") + _int(3, 2) + tail("Status")
    if case == "negative code, 5-byte varint":
        status = _len(2, b"boom") + _varint(3 << 3) + b"\xff\xff\xff\xff\x0f"
    span = _len(1, bytes(range(1, 17))) + _len(2, bytes(range(3, 11)))
    if case == "fields out of order":
        span = _len(2, bytes(range(3, 11))) + _len(1, bytes(range(1, 17)))
    span += _len(5, b"step")
    if case == "duplicate singular field":
        span += _len(5, b"first")
    if case == "default written":
        span += _int(6, 0)
    elif case == "overlong varint":
        span += _varint(6 << 3) + _overlong(1)
    elif case == "kind as packed":
        span += _len(6, b"\x01")
    else:
        span += _int(6, 1)
    span += _fixed64(7, 10**18) + _fixed64(8, 10**18 + 5) + attributes
    if case != "attributes interleaved":
        span += _len(11, event)
    span += _len(13, link) + _len(15, status)
    if case == "status twice":
        span += _len(15, _int(3, 1))
    span += tail("Span")
    scope = _len(1, b"lib") + _len(2, b"1.0") + tail("InstrumentationScope")
    scope_spans = _len(1, scope) + _len(2, span) + tail("ScopeSpans")
    resource = _len(1, kv("service.name", any_str("svc"))) + tail("Resource")
    resource_spans = _len(1, resource) + _len(2, scope_spans) + tail("ResourceSpans")
    if case == "overlong length":
        resource_spans = _len(1, resource) + _varint(2 << 3 | 2) + _overlong(len(scope_spans))
        resource_spans += scope_spans
    return _len(1, resource_spans) + tail("ExportTraceServiceRequest")


_MESSAGES = ["ExportTraceServiceRequest", "ResourceSpans", "Resource", "ScopeSpans"]
_MESSAGES += ["InstrumentationScope", "Span", "KeyValue", "AnyValue", "Event", "Link", "Status"]


def test_the_canonical_wire_request_is_flattened_by_clickhouse() -> None:
    body = _wire_request()
    assert ExportTraceServiceRequest.FromString(body).SerializeToString() == body  # canonical
    assert parse_scalar_request(body) is not None
    assert parse_scalar_request(b"") is not None  # no spans at all: canonical too


@pytest.mark.parametrize(
    "case",
    [f"unknown@{m}" for m in _MESSAGES]
    + ["array_value", "kvlist_value", "two oneof members", "bool as 2"]
    + ["fields out of order", "duplicate singular field", "default written", "overlong varint"]
    + ["overlong length", "kind as packed", "attributes interleaved", "status twice"]
    + ["negative code, 5-byte varint"],
)
def test_bytes_clickhouse_could_read_otherwise_go_the_python_way(case: str) -> None:
    """Anything a parse drops or normalizes (an unknown field at any depth, a nested value, a
    non-canonical encoding) takes the Python flattener: the bytes ClickHouse reads must be
    exactly the request Python validated."""
    body = _wire_request(case)
    assert body != _wire_request()
    ExportTraceServiceRequest.FromString(body)  # a valid OTLP request all the same
    assert parse_scalar_request(body) is None


def test_a_scalar_request_is_validated_as_any_other() -> None:
    request = odd_request(5)
    request.resource_spans[0].scope_spans[1].spans[3].span_id = b"\x00" * 8
    with pytest.raises(BadPayload, match=r"resourceSpans\[0\]\.scopeSpans\[1\]\.spans\[3\]"):
        parse_scalar_request(request.SerializeToString())


def test_a_scalar_segment_replayed_after_a_crash_is_not_stored_twice(
    tmp_path: Path, store: Store
) -> None:
    """The writer inserted a format-3 segment and died before deleting it: the replay sends
    the same streams with the same tokens, and nothing is duplicated anywhere."""
    spool = Spool(tmp_path / "spool")
    for seed in (6, 7):
        accept(spool, RecentBatches(60), LIMITS, body=odd_request(seed).SerializeToString(),
               content_type=PROTOBUF, content_encoding=None, project=None)  # fmt: skip
    (segment,) = spool.seal()
    insert(store, flatten_segment(segment), spool.dedup_token(segment))
    before = _derived(store)
    writer = Writer(spool, lambda: store, flush_interval=0.02)
    writer.store = store
    writer.start()
    try:
        deadline = time.monotonic() + 60
        while spool.pending_bytes and time.monotonic() < deadline:
            writer.flush_now()
            time.sleep(0.02)
    finally:
        writer.stop()
    assert spool.pending_bytes == 0
    assert store.query("SELECT count() AS n FROM otel_traces")[0]["n"] == 14
    assert _derived(store) == before


def test_requests_over_many_days_are_split_into_inserts_the_store_accepts(
    tmp_path: Path, store: Store
) -> None:
    """Each insert may touch at most 100 daily partitions: 40 requests of 3 days each are
    inserted in several streams; one request over 60 days is flattened by Python (the store
    splits Arrow blocks by day)."""
    bodies = []
    day0 = (time.time_ns() // NS_PER_DAY + 1) * NS_PER_DAY  # future days: never past the TTL
    for r in range(40):
        request = ExportTraceServiceRequest()
        spans = request.resource_spans.add().scope_spans.add().spans
        for d in range(3):
            start = day0 + (3 * r + d) * NS_PER_DAY
            trace_id, span_id = hashlib.md5(bytes([r])).digest(), bytes([r + 1, d + 1]) * 4
            spans.add(trace_id=trace_id, span_id=span_id, name="s", start_time_unix_nano=start)
        bodies.append((request.SerializeToString(), None))
    spool, segment = _sealed(tmp_path, bodies)
    flat = flatten_segment(segment)
    assert len(flat.scalar_streams) == 3  # 120 days, at most 50 per stream
    insert(store, flat, spool.dedup_token(segment))
    assert store.query("SELECT count() AS n FROM otel_traces")[0]["n"] == 120
    wide = ExportTraceServiceRequest()
    spans = wide.resource_spans.add().scope_spans.add().spans
    for d in range(60):
        start = day0 + d * NS_PER_DAY
        spans.add(trace_id=b"\x05" * 16, span_id=bytes([d + 1]) * 8, start_time_unix_nano=start)
    assert _spool_and_store(tmp_path, store, [(wide.SerializeToString(), None)]) == ARROW
    assert store.query("SELECT count() AS n FROM otel_traces")[0]["n"] == 180


def test_the_schema_lives_in_the_data_directory_not_the_working_one(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """chDB caches a schema given in the query under ``__cache__/`` in the working directory:
    the embedded store names a schema file in its own data directory instead."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    body = odd_request(9).SerializeToString()
    assert _spool_and_store(tmp_path, store, [(body, None)]) == SCALAR_OTLP
    assert _spool_and_store(tmp_path, store, [(odd_request(10).SerializeToString(), None)])
    assert list(cwd.iterdir()) == []
    assert len(_rows(store)) == 14


def test_a_segment_larger_than_a_source_block_is_still_one_insert_block(
    tmp_path: Path, store: Store
) -> None:
    """The flatten reads its source in blocks of ``SOURCE_BLOCK_BYTES`` (memory), and the
    insert squashes them back: one part per table, so the segment's dedup token still names one
    block (a segment an older version inserted whole is not stored again on replay)."""
    bodies = []
    start = time.time_ns() // 1000 * 1000
    for r in range(8):  # ~4 MiB of requests: several source blocks
        request = ExportTraceServiceRequest()
        spans = request.resource_spans.add().scope_spans.add().spans
        for i in range(250):
            span = spans.add(trace_id=bytes([r + 1, i % 5 + 1]) * 8, name="llm",
                             span_id=bytes([r, i % 256, 1, i // 256]) * 2,
                             start_time_unix_nano=start + i)  # fmt: skip
            span.attributes.append(_kv("gen_ai.prompt", string_value=f"{r} {i} " + "p" * 2000))
        bodies.append((request.SerializeToString(), None))
    spool, segment = _sealed(tmp_path, bodies)
    flat = flatten_segment(segment)
    (stream,) = flat.scalar_streams
    source = tmp_path / "stream.pb"
    source.write_bytes(b"".join(stream))
    settings = {**SETTINGS, **schema_settings(tmp_path)}
    blocks = store.query(
        f"SELECT uniqExact(blockNumber()) AS n FROM file({literal(str(source))}, 'Protobuf', "
        f"{literal(STRUCTURE)}) SETTINGS {settings_clause(settings)}"
    )
    assert blocks[0]["n"] > 1
    store.command("SYSTEM STOP MERGES")
    insert(store, flat, spool.dedup_token(segment))
    parts = store.query(
        "SELECT table, partition, count() AS n FROM system.parts "
        "WHERE active AND database = currentDatabase() AND table != 'schema_migrations' "
        "GROUP BY table, partition"
    )
    assert {p["table"] for p in parts} >= {"otel_traces", "planscope_trace_index"}
    assert {p["n"] for p in parts} == {1}
    assert store.query("SELECT count() AS n FROM otel_traces")[0]["n"] == 2000

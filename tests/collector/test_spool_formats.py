"""Spool record formats: the request handler spools flattened spans (Arrow, format 2); segments
an older version wrote (OTLP protobuf records, format 1) are still stored, with the same rows.
"""

from __future__ import annotations

import hashlib
import os
import struct
import time
import zlib
from pathlib import Path

import pyarrow as pa
import pytest
from planscope_collector._ingest import IngestLimits, RecentBatches, accept, batch_digest
from planscope_collector._otlp import PROTOBUF, SpanColumns, spans_ipc
from planscope_collector._spool import ARROW, SCALAR_OTLP, Record, Segment, Spool
from planscope_collector._writer import Writer, flatten_segment
from planscope_collector.storage import Store, StoreError, ipc_stream

from .test_span_columns import _rich_request


def _record(request_bytes: bytes, project: str = "") -> Record:
    return Record(project, hashlib.sha256(request_bytes).digest(), 4, request_bytes)


def _old_record_bytes(project: str, body: bytes) -> bytes:
    """A record exactly as the previous version wrote it (``PSR1``: OTLP protobuf), spelled
    out byte by byte here rather than through ``Record``, so the old format stays pinned."""
    p = project.encode()
    payload = struct.pack("<32sIH", hashlib.sha256(body).digest(), 4, len(p)) + p + body
    return struct.pack("<4sII", b"PSR1", len(payload), zlib.crc32(payload)) + payload


def _fill(spool: Spool, n: int, project: str = "") -> list[str]:
    """Append ``n`` rich requests (4 spans each, one trace each); return the trace ids."""
    trace_ids = []
    for _ in range(n):
        trace_id = os.urandom(16)
        spool.append(_record(_rich_request(trace_id).SerializeToString(), project))
        trace_ids.append(trace_id.hex())
    return trace_ids


def _drain(writer: Writer, spool: Spool, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while spool.pending_bytes and time.monotonic() < deadline:
        writer.flush_now()
        time.sleep(0.02)
    assert spool.pending_bytes == 0


def _accept(spool: Spool, body: bytes, project: str | None) -> None:
    limits = IngestLimits(
        max_decompressed_bytes=1 << 26, spool_max_bytes=1 << 30, retry_after_seconds=1
    )
    accept(spool, RecentBatches(60), limits, body=body, content_type=PROTOBUF,
           content_encoding=None, project=project)  # fmt: skip


def test_the_handler_spools_arrow_and_both_formats_give_the_same_insert(tmp_path: Path) -> None:
    """Format 2 (this version's handler) and format 1 (the old one) of the same requests: the
    same rows, batch rows and trace keys, so an upgrade changes no stored value."""
    requests = [_rich_request().SerializeToString() for _ in range(3)]
    new, old = Spool(tmp_path / "new"), Spool(tmp_path / "old")
    for i, body in enumerate(requests):
        project = "key-proj" if i else None
        _accept(new, body, project)
        old.append(Record(project or "", batch_digest(project, body), 4, body))
    (new_segment,), (old_segment,) = new.seal(), old.seal()
    assert {r.format for r in new_segment.records()} == {ARROW}
    assert {r.format for r in old_segment.records()} == {"otlp"}
    here, there = flatten_segment(new_segment), flatten_segment(old_segment)
    assert here.spans == there.spans == 3 * 4
    assert here.trace_keys == there.trace_keys
    assert [b[:2] + b[3:] for b in here.batches] == [b[:2] + b[3:] for b in there.batches]
    tables = [pa.ipc.open_stream(pa.py_buffer(f.ipc)).read_all() for f in (here, there)]
    assert tables[0].equals(tables[1])


def test_a_segment_written_by_the_previous_version_is_stored_after_the_upgrade(
    tmp_path: Path, store: Store
) -> None:
    """A spool left by the old version (its bytes written by hand, ``PSR1``) and new requests
    behind it: both are stored, once, with the values the old version would have stored."""
    spool_dir = tmp_path / "spool"
    spool_dir.mkdir()
    old_ids = [os.urandom(16) for _ in range(2)]
    (spool_dir / "000000000001.seg").write_bytes(
        b"".join(
            _old_record_bytes("old-proj", _rich_request(t).SerializeToString()) for t in old_ids
        )
    )
    spool = Spool(spool_dir)  # the new version opens it: the old segment is sealed, kept
    new_id = os.urandom(16)
    _accept(spool, _rich_request(new_id).SerializeToString(), "new-proj")
    writer = Writer(spool, lambda: store, flush_interval=0.02)
    writer.store = store
    writer.start()
    try:
        _drain(writer, spool)
    finally:
        writer.stop()
    rows = store.query(
        "SELECT Project, TraceId, count() AS n FROM otel_traces GROUP BY Project, TraceId"
    )
    expected = {("old-proj", t.hex()): 4 for t in old_ids} | {("new-proj", new_id.hex()): 4}
    assert {(r["Project"], r["TraceId"]): r["n"] for r in rows} == expected
    # the old record's values are those the old flattener gives (the repeated key's last value)
    (attrs,) = store.query(
        "SELECT SpanAttributes['i'] AS i, SpanAttributes['d'] AS d FROM otel_traces "
        "WHERE TraceId = {t:String} AND SpanName = 'run' AND Project = 'old-proj'",
        {"t": old_ids[0].hex()},
    )
    assert attrs == {"i": "last wins", "d": "1.5"}


def test_an_old_segment_replayed_after_a_crash_is_not_stored_twice(
    tmp_path: Path, store: Store
) -> None:
    """The old version inserted a format-1 segment and died before deleting it: this version
    replays it with the same token and the same block, and nothing is duplicated."""
    spool = Spool(tmp_path / "spool")
    _fill(spool, 2, project="p")
    (segment,) = spool.seal()
    token = spool.dedup_token(segment)
    columns = SpanColumns()
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    for record in segment.records():  # what the old writer sent: one block of the whole segment
        columns.add(ExportTraceServiceRequest.FromString(record.body), record.project)
    store.insert_spans(columns.to_ipc(), dedup_token=token)
    writer = Writer(spool, lambda: store, flush_interval=0.02)
    writer.store = store
    writer.start()
    try:
        _drain(writer, spool)
    finally:
        writer.stop()
    assert store.query("SELECT count() AS n FROM otel_traces")[0]["n"] == 8


def test_spans_ipc_applies_the_project_as_the_flattener_does() -> None:
    request = _rich_request()
    table = pa.ipc.open_stream(spans_ipc(request, "k")).read_all()
    columns = SpanColumns()
    columns.add(request, "k")
    assert table.equals(columns.to_arrow())


def test_insert_spans_checks_the_columns(store: Store) -> None:
    columns = SpanColumns()
    columns.add(_rich_request(), None)
    table = columns.to_arrow().drop_columns(["Duration"])
    with pytest.raises(StoreError, match="columns"):
        store.insert_spans(ipc_stream(table))
    with pytest.raises(StoreError, match="not an Arrow IPC stream"):
        store.insert_spans(b"garbage")


@pytest.mark.parametrize("format", ["otlp", ARROW, SCALAR_OTLP])
def test_a_record_that_cannot_be_read_is_quarantined_alone(
    tmp_path: Path, store: Store, format: str
) -> None:
    """One segment holds a good request of project a, a bad one, and a good one of project b:
    only the bad one is quarantined (issue #12, item 2: never another tenant's data with it),
    whichever format the bad record claims."""
    spool = Spool(tmp_path / "spool")
    trace_ids = _fill(spool, 1, project="a")
    garbage = b"\xff\xff not a protobuf nor arrow"
    spool.append(Record("", hashlib.sha256(garbage).digest(), 4, garbage, format))  # type: ignore[arg-type]
    trace_ids += _fill(spool, 1, project="b")
    (bad,) = spool.seal()
    writer = Writer(spool, lambda: store, flush_interval=0.02, max_backoff=0.05)
    writer.store = store
    writer.start()
    try:
        _drain(writer, spool)
    finally:
        writer.stop()
    assert writer.stats.requests_quarantined == 1
    (item,) = spool.quarantine.list()
    assert item.id == f"{bad.number:012d}-000001"
    expected = {"otlp": "DecodeError", ARROW: "ArrowInvalid", SCALAR_OTLP: "JSONDecodeError"}
    assert expected[format] in item.reason
    rows = store.query("SELECT Project, count() AS n FROM otel_traces GROUP BY Project")
    assert {r["Project"]: r["n"] for r in rows} == {"a": 4, "b": 4}


def test_flatten_segment_of_a_segment_without_spans(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    spool.append(_record(b""))  # an empty request: no spans, one ingest batch row
    (segment,) = spool.seal()
    flat = flatten_segment(Segment(segment.number, segment.path))
    assert flat.spans == 0 and len(flat.batches) == 1

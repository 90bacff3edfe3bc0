"""The writer's flatten worker process: same rows, no loss or duplicate when it dies, no orphan.

The writer hands sealed segment files to a child process, which returns each segment as Arrow
IPC bytes while the writer inserts the previous one.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from planscope_collector._flatten_worker import (
    FlattenFailed,
    FlattenWorker,
    WorkerDied,
    flatten_segment,
)
from planscope_collector._spool import Record, Segment, Spool
from planscope_collector._writer import Writer
from planscope_collector.storage import Store, StoreError, ipc_stream, open_store

from .test_span_columns import _rich_request


def _record(request_bytes: bytes, project: str = "") -> Record:
    return Record(project, hashlib.sha256(request_bytes).digest(), 4, request_bytes)


def _fill(spool: Spool, n: int, project: str = "") -> list[str]:
    """Append ``n`` rich requests (4 spans each, one trace each); return the trace ids."""
    trace_ids = []
    for _ in range(n):
        trace_id = os.urandom(16)
        spool.append(_record(_rich_request(trace_id).SerializeToString(), project))
        trace_ids.append(trace_id.hex())
    return trace_ids


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = open_store(f"chdb://{tmp_path / 'chdb'}")
    s.migrate()
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def worker() -> Iterator[FlattenWorker]:
    w = FlattenWorker()
    w.start()
    try:
        yield w
    finally:
        w.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by its parent) counts as gone
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(") ", 1)[1][0] != "Z"


def test_worker_returns_what_the_writer_would_build_itself(
    tmp_path: Path, worker: FlattenWorker
) -> None:
    spool = Spool(tmp_path / "spool")
    _fill(spool, 3, project="key-proj")
    _fill(spool, 2)
    (segment,) = spool.seal()
    here = flatten_segment(segment)
    worker.submit(segment)
    there = worker.result()
    assert there.spans == here.spans == 20
    assert there.trace_keys == here.trace_keys
    assert [b[:2] + b[3:] for b in there.batches] == [b[:2] + b[3:] for b in here.batches]
    tables = [pa.ipc.open_stream(pa.py_buffer(f.ipc)).read_all() for f in (here, there)]
    assert tables[0].equals(tables[1])


def test_a_bad_segment_is_the_segments_failure_and_the_worker_goes_on(
    tmp_path: Path, worker: FlattenWorker
) -> None:
    spool = Spool(tmp_path / "spool")
    spool.append(_record(b"\xff\xff not a protobuf"))
    (bad,) = spool.seal()
    worker.submit(bad)
    with pytest.raises(FlattenFailed, match="Error"):
        worker.result()
    _fill(spool, 1)
    good = spool.seal()[-1]
    worker.submit(good)
    assert worker.result().spans == 4


def test_a_killed_worker_is_reported_and_replaced(tmp_path: Path, worker: FlattenWorker) -> None:
    spool = Spool(tmp_path / "spool")
    _fill(spool, 1)
    (segment,) = spool.seal()
    assert worker.pid is not None
    os.kill(worker.pid, signal.SIGKILL)
    worker.submit(segment)  # may or may not notice yet
    with pytest.raises(WorkerDied):
        worker.result()
    worker.submit(segment)  # a new child
    assert worker.result().spans == 4


def test_insert_spans_checks_the_columns(store: Store) -> None:
    from planscope_collector._otlp import SpanColumns

    columns = SpanColumns()
    columns.add(_rich_request(), None)
    table = columns.to_arrow().drop_columns(["Duration"])
    with pytest.raises(StoreError, match="columns"):
        store.insert_spans(ipc_stream(table))
    with pytest.raises(StoreError, match="not an Arrow IPC stream"):
        store.insert_spans(b"garbage")


def _drain(writer: Writer, spool: Spool, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while spool.pending_bytes and time.monotonic() < deadline:
        writer.flush_now()
        time.sleep(0.02)
    assert spool.pending_bytes == 0


def test_writer_survives_worker_deaths_and_stores_everything_once(
    tmp_path: Path, store: Store
) -> None:
    spool = Spool(tmp_path / "spool", segment_max_bytes=1)  # a segment per request
    trace_ids = _fill(spool, 12)
    assert len(spool.seal()) > 3
    writer = Writer(spool, lambda: store, flush_interval=0.02)
    writer.store = store
    assert writer._worker is not None
    writer._worker.start()
    first = writer._worker.pid
    assert first is not None
    os.kill(first, signal.SIGKILL)  # dies before the first segment
    writer.start()
    try:
        _drain(writer, spool)
        trace_ids += _fill(spool, 4)
        _drain(writer, spool)
        second = writer._worker.pid if writer._worker is not None else None
    finally:
        writer.stop()
    assert second is not None and second != first
    assert not _alive(second)  # stop() ended the child
    rows = store.query("SELECT TraceId, count() AS n FROM otel_traces GROUP BY TraceId")
    assert {r["TraceId"]: r["n"] for r in rows} == dict.fromkeys(trace_ids, 4)
    assert writer.stats.spans_written == 4 * len(trace_ids)
    assert writer.stats.requests_quarantined == 0


def test_a_request_that_cannot_be_flattened_is_quarantined_alone(
    tmp_path: Path, store: Store
) -> None:
    """One segment holds a good request of project a, a bad one, and a good one of project b:
    only the bad one is quarantined (issue #12, item 2: never another tenant's data with it)."""
    spool = Spool(tmp_path / "spool")
    trace_ids = _fill(spool, 1, project="a")
    spool.append(_record(b"\xff\xff not a protobuf"))
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
    assert item.id == f"{bad.number:012d}-000001" and "DecodeError" in item.reason
    rows = store.query("SELECT Project, count() AS n FROM otel_traces GROUP BY Project")
    assert {r["Project"]: r["n"] for r in rows} == {"a": 4, "b": 4}


def test_the_worker_exits_when_the_collector_is_killed(tmp_path: Path) -> None:
    """SIGKILL of the parent: the child sees end-of-file on its input and exits (no orphan)."""
    code = (
        "import sys, time\n"
        "from planscope_collector._flatten_worker import FlattenWorker\n"
        "w = FlattenWorker(); w.start()\n"
        "print(w.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert _alive(child)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 30
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child)
    finally:
        if parent.poll() is None:
            parent.kill()


def test_flatten_segment_of_a_segment_without_spans(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    spool.append(_record(b""))  # an empty request: no spans, one ingest batch row
    (segment,) = spool.seal()
    flat = flatten_segment(Segment(segment.number, segment.path))
    assert flat.spans == 0 and len(flat.batches) == 1

"""Issue #12: nothing acknowledged is lost, and no request (or tenant) can stop another.

Each test reproduces one defect of the issue with real parts (chDB, the spool on disk, the
writer thread, ``planscope`` in a subprocess) and fails on the code before the fix.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from planscope_collector._errors import BadPayload
from planscope_collector._ingest import IngestLimits, RecentBatches, accept, batch_digest
from planscope_collector._otlp import PROTOBUF, decompress, gzip_bytes
from planscope_collector._spool import Record, Spool
from planscope_collector._writer import Writer
from planscope_collector.storage import Store
from planscope_collector.storage._errors import is_transient

from ._otlp_factory import make_request, make_span

DAY = 86_400 * 10**9


def _record(spans: int, project: str, day_step: int = 0) -> tuple[Record, bytes]:
    trace_id = os.urandom(16)
    now = time.time_ns()
    body = make_request(
        [make_span(trace_id, start=now + i * day_step * DAY) for i in range(spans)]
    ).SerializeToString()
    return Record(project, hashlib.sha256(body).digest(), spans, body), trace_id


def _run_writer(spool: Spool, store: Store, until: float = 60) -> Writer:
    writer = Writer(spool, lambda: store, flush_interval=0.02, max_backoff=0.05)
    writer.store = store
    writer.start()
    deadline = time.monotonic() + until
    while spool.pending_bytes and time.monotonic() < deadline:
        writer.flush_now()
        time.sleep(0.02)
    writer.stop()
    return writer


def _counts(store: Store) -> dict[str, int]:
    rows = store.query("SELECT Project, count() AS n FROM otel_traces GROUP BY Project")
    return {r["Project"]: r["n"] for r in rows}


def test_spans_on_150_days_are_stored_and_do_not_block_another_tenant(
    tmp_path: Path, store: Store
) -> None:
    """Item 1: 150 spans on 150 days (code 252) used to stop the writer for every tenant."""
    spool = Spool(tmp_path / "spool")
    poison, _ = _record(150, "a", day_step=1)  # future days: the retention TTL keeps them all
    spool.append(poison)
    spool.append(_record(40, "b")[0])
    writer = _run_writer(spool, store)
    assert spool.pending_bytes == 0
    assert _counts(store) == {"a": 150, "b": 40}
    assert writer.stats.requests_quarantined == 0


@pytest.mark.parametrize(
    ("message", "transient"),
    [
        ("Code: 210. DB::NetException: Connection refused (clickhouse:9000)", True),
        ("Code: 243. DB::Exception: Cannot reserve 1.00 MiB, not enough space", True),
        ("Code: 74. Cannot write to file: No space left on device", True),
        ("Code: 252. DB::Exception: Too many parts (3001) in all partitions in total", True),
        ("Code: 241. DB::Exception: Memory limit (total) exceeded", True),
        ("Code: 252. DB::Exception: Too many partitions for single INSERT block", False),
        ("Code: 407. DB::Exception: Decimal math overflow", False),
        ("Code: 53. DB::Exception: Type mismatch in IN or VALUES section", False),
    ],
)
def test_store_errors_are_classified(message: str, transient: bool) -> None:
    assert is_transient(RuntimeError(message)) is transient


def test_a_transient_store_error_never_quarantines(tmp_path: Path, store: Store) -> None:
    """The store refuses every insert (table detached: an operator's fault, not the data's)."""
    spool = Spool(tmp_path / "spool")
    spool.append(_record(5, "a")[0])
    store.command("DETACH TABLE otel_traces")
    writer = Writer(spool, lambda: store, flush_interval=0.02, max_backoff=0.05)
    writer.store = store
    writer.start()
    try:
        deadline = time.monotonic() + 30
        while writer.stats.store_available and time.monotonic() < deadline:
            writer.flush_now()
            time.sleep(0.05)
        time.sleep(0.3)  # several retries
        assert not writer.stats.store_available
        assert spool.quarantine.count() == 0 and spool.pending_bytes > 0
        store.command("ATTACH TABLE otel_traces")
        deadline = time.monotonic() + 30
        while spool.pending_bytes and time.monotonic() < deadline:
            writer.flush_now()
            time.sleep(0.05)
    finally:
        writer.stop()
    assert _counts(store) == {"a": 5}
    assert spool.quarantine.count() == 0


_FILL_DISK = """
import hashlib, os, resource, signal, sys
from pathlib import Path
from planscope_collector._spool import Record, Spool
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write beyond the limit is short, then EFBIG
spool = Spool(Path(sys.argv[1]), segment_max_bytes=1 << 30)
resource.setrlimit(resource.RLIMIT_FSIZE, (30_000, 30_000))
acked = []
for i in range(40):
    body = os.urandom(1500)
    try:
        spool.append(Record("p", hashlib.sha256(body).digest(), 1, body))
    except OSError:
        continue
    acked.append(body.hex())
print(" ".join(acked))
"""


def test_a_short_write_is_an_error_and_acknowledged_records_survive(tmp_path: Path) -> None:
    """Item 4: the disk fills mid-record; that record must not be acknowledged."""
    out = subprocess.run(
        [sys.executable, "-c", _FILL_DISK, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    acked = out.stdout.split()
    assert 5 < len(acked) < 40  # some fitted, the disk "filled" part-way
    stored = [r.body.hex() for s in Spool(tmp_path).seal() for r in s.records()]
    assert stored == acked


class _FailingOnce(Spool):
    """A spool whose first write waits for a signal and then fails, as a full disk would."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.writing = threading.Event()
        self.fail_now = threading.Event()
        self.failed = False

    def _write(self, data: bytes) -> None:
        if not self.failed:
            self.failed = True
            self.writing.set()
            self.fail_now.wait(10)
            raise OSError(28, "No space left on device")
        super()._write(data)


def test_a_duplicate_during_a_failing_write_is_stored_not_acknowledged_as_seen(
    tmp_path: Path,
) -> None:
    """Item 5: the digest used to be recorded before the append."""
    spool = _FailingOnce(tmp_path)
    recent = RecentBatches(3600)
    limits = IngestLimits(1 << 20, 1 << 30, 5)
    body = make_request([make_span()]).SerializeToString()
    results: dict[str, object] = {}

    def send(name: str) -> None:
        try:
            results[name] = accept(
                spool,
                recent,
                limits,
                body=body,
                content_type=PROTOBUF,
                content_encoding=None,
                project="a",
            )
        except OSError as exc:
            results[name] = exc

    first = threading.Thread(target=send, args=("first",))
    first.start()
    assert spool.writing.wait(10)
    second = threading.Thread(target=send, args=("second",))
    second.start()
    time.sleep(0.2)
    spool.fail_now.set()
    first.join(10)
    second.join(10)
    assert isinstance(results["first"], OSError)
    assert getattr(results["second"], "duplicate", None) is False
    # the request is spooled once (as its flattened spans), under its digest
    assert [r.digest for s in spool.seal() for r in s.records()] == [batch_digest("a", body)]


def test_multi_member_gzip_is_read_whole_and_trailing_garbage_refused() -> None:
    """Item 8: only the first member used to be read; garbage after the stream was accepted."""
    assert decompress(gzip_bytes(b"ab") + gzip_bytes(b"cd"), "gzip", 100) == b"abcd"
    with pytest.raises(BadPayload, match="garbage"):
        decompress(gzip_bytes(b"ab") + b"trailing", "gzip", 100)


def test_quarantine_is_listed_and_replayed_by_the_cli(data_dir: Path) -> None:
    """Quarantine survives restarts and ``planscope quarantine`` lists and replays it."""
    data = data_dir
    spool = Spool(data / "spool")
    good, trace_id = _record(3, "a")
    spool.quarantine.add("000000000007-000000", good, "Code: 407. was refused once")
    spool.quarantine.add(
        "000000000007-000001", Record("b", bytes(32), 1, b"\xff garbage"), "DecodeError"
    )
    spool.close()

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "planscope", "quarantine", *args, "--data-dir", str(data)],
            capture_output=True,
            text=True,
        )

    listed = cli("list")
    assert listed.returncode == 0, listed.stderr
    assert "000000000007-000000" in listed.stdout and "Code: 407" in listed.stdout
    assert "2 quarantined request(s)" in listed.stdout
    replayed = cli("replay")
    assert replayed.returncode == 1, replayed.stderr  # one is refused again
    assert "replayed 1 request(s), 3 spans; 1 refused again" in replayed.stdout
    (left,) = Spool(data / "spool").quarantine.list()
    assert left.id == "000000000007-000001" and "DecodeError" in left.reason
    code = (
        "from planscope_collector.storage import open_store;"
        f"s = open_store('chdb://{(data / 'store').resolve()}');"
        f"sql = \"SELECT count() AS n FROM otel_traces WHERE TraceId = '{trace_id.hex()}'\";"
        "print(s.query(sql)[0]['n'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "3"


def test_quarantine_shows_on_readyz_and_metrics_after_a_restart(data_dir: Path) -> None:
    """Item 3: after a restart ``segments_quarantined`` read 0 and nothing listed the files."""
    import httpx
    from planscope_collector import BackgroundServer, CollectorSettings

    data = data_dir
    spool = Spool(data / "spool")
    spool.quarantine.add("000000000003-000000", _record(2, "a")[0], "Code: 407. refused")
    spool.close()
    with BackgroundServer(CollectorSettings(data_dir=data, port=0)) as server:
        ready = httpx.get(f"{server.url}/readyz").json()
        assert ready["requests_quarantined"] == 1
        metrics = httpx.get(f"{server.url}/metrics").text
        assert "planscope_requests_quarantined 1" in metrics

"""The batch writer: moves sealed spool segments into ClickHouse, one insert per segment.

A segment becomes one ``otel_traces`` insert (thousands of rows, never SQL text) carrying the
dedup token ``<spool id>:<segment>``, then one ``planscope_ingest_batches`` insert with the same
token, and only then is the segment deleted. A crash anywhere in between replays the segment,
and ClickHouse drops the repeated blocks, in the raw table and in every materialized view.

The request handler spools a request with scalar values only as received (format 3), which
ClickHouse flattens (``Store.insert_otlp_spans``), and any other already flattened (an Arrow IPC
stream, format 2), so the writer only concatenates a segment's records into one Arrow block and
protobuf streams; a segment an older version spooled (OTLP protobuf records, format 1) is parsed
and flattened here, record by record, with the same flattener (see ``_spool``).

Transient store errors (down, timeouts, disk full, too many parts, memory: see
``storage._errors``) are retried with a capped exponential back-off while the spool keeps
accepting; they never quarantine anything. When a segment fails for any other reason (the store
refuses its rows, or a record cannot be read), its requests are stored one by one and only the
request that fails on its own is moved to ``quarantine/``: never another request's (or
another tenant's) data with it, and never blocking the segments behind it.
"""

from __future__ import annotations

import gc
import logging
import math
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ._otlp import DEFAULT_PROJECT, MAX_DAYS_PER_INSERT, SpanColumns
from ._spool import ARROW, SCALAR_OTLP, Quarantine, Record, Segment, Spool, read_scalar_body
from .storage import Store, StoreUnavailable, ipc_stream
from .storage._protobuf import request_parts

log = logging.getLogger("planscope.collector")


RELEASE_MEMORY_ABOVE_BYTES = 640 << 20
"""Resident size above which the writer purges the embedded engine's freed memory."""


def _resident_bytes() -> int:
    """This process's resident set size (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


@dataclass
class FlatSegment:
    """A segment ready to insert: its spans as Arrow IPC stream bytes and as protobuf streams
    for ClickHouse to flatten, plus bookkeeping."""

    ipc: Any  # bytes-like: an Arrow IPC stream of ``TRACE_COLUMNS``, one record batch, or b""
    batches: list[list[Any]]  # one ``planscope_ingest_batches`` row per request
    trace_keys: set[tuple[str, str]]  # distinct (project, trace id) pairs
    spans: int
    scalar_streams: list[list[bytes | memoryview]] = field(default_factory=list)
    """``Store.insert_otlp_spans`` streams, each in pieces (views of the segment's bytes)."""


def _otlp_table(record: Record) -> Any:
    """The spans of a format-1 (protobuf) record as an Arrow table, or None without spans.

    The cyclic GC is paused meanwhile: a request allocates thousands of short-lived protobuf
    wrappers and strings, and collections triggered by them (which find nothing: no cycles
    are created here) slowed this step by up to 1.8x.
    """
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    spans = SpanColumns()
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        request = ExportTraceServiceRequest.FromString(bytes(record.body))
        spans.add(request, record.project or None)
    finally:
        if gc_was_enabled:
            gc.enable()
    return spans.to_arrow() if len(spans) else None


def flatten_records(records: Iterable[Record]) -> FlatSegment:
    """Some records as one insert: one batch row per request; the spans of format-1 and -2
    records in one Arrow block, format-3 records in protobuf streams for ClickHouse to flatten
    (as many as keep each under ``MAX_DAYS_PER_INSERT`` days).

    A format-2 record's body is read without a copy; a format-1 record is parsed and flattened.
    The block is a single record batch whatever the records' formats: ClickHouse deduplicates
    an insert of several batches batch by batch, so a segment that an older version inserted
    (as one batch) before a crash would be stored again on replay.
    """
    import pyarrow as pa

    tables: list[Any] = []
    batches: list[list[Any]] = []
    trace_keys: set[tuple[str, str]] = set()
    streams: list[list[bytes | memoryview]] = []
    parts: list[bytes | memoryview] = []
    days: set[int] = set()
    scalar_spans = 0
    received_ms = time.time_ns() // 1_000_000  # ReceivedAt is DateTime64(3)
    for record in records:
        project = None
        if record.format == SCALAR_OTLP:
            keys, record_days, message = read_scalar_body(record.body)
            if parts and len(days.union(record_days)) > MAX_DAYS_PER_INSERT:
                streams.append(parts)
                parts, days = [], set()
            days.update(record_days)
            parts += request_parts(message, record.project)
            trace_keys.update((p, t) for p, t in keys)
            scalar_spans += record.span_count
            project = keys[0][0] if keys else None
        else:
            if record.format == ARROW:
                table = pa.ipc.open_stream(pa.py_buffer(record.body)).read_all()
            else:
                table = _otlp_table(record)
            if table is not None and table.num_rows:
                tables.append(table)
                project = table.column("Project")[0].as_py()
        project = project or record.project or DEFAULT_PROJECT
        batches.append([project, record.digest.hex(), received_ms, record.span_count])
    if parts:
        streams.append(parts)
    if not tables:
        return FlatSegment(b"", batches, trace_keys, scalar_spans, streams)
    table = pa.concat_tables(tables).combine_chunks()
    del tables, record  # views of the segment's bytes: let them go before the copy below
    trace_keys.update(
        zip(table.column("Project").to_pylist(), table.column("TraceId").to_pylist(), strict=True)
    )
    return FlatSegment(
        ipc_stream(table), batches, trace_keys, table.num_rows + scalar_spans, streams
    )


def flatten_segment(segment: Segment) -> FlatSegment:
    """A sealed segment as one insert (see :func:`flatten_records`)."""
    return flatten_records(segment.records())


@dataclass
class WriterStats:
    """Counters exposed on /readyz and used by tests and benchmarks."""

    spans_written: int = 0
    segments_written: int = 0
    requests_quarantined: int = 0
    """Quarantined by this process; the quarantine's own count survives restarts."""
    last_error: str | None = None
    last_flush_monotonic: float = 0.0
    store_available: bool = True


class Writer:
    """Background thread that drains the spool into the store.

    A segment is stored once it is full (sealed by the spool at its size) or once its oldest
    record is ``flush_interval`` seconds old, whichever comes first: each insert has a fixed
    cost (~0.15-0.2 s of CPU, the views' pipelines), so at a trickle of spans the interval, not
    the span rate, sets the CPU (docs/storage.md, "Sealing"). Sealing is not acknowledgement:
    a request's 200 was sent when its record was fsync'd in the spool.

    ``on_flush`` is called with the (project, trace id) pairs of each segment once it is stored
    (the analysis scheduler hooks in there).
    """

    def __init__(
        self,
        spool: Spool,
        connect: Callable[[], Store],
        *,
        flush_interval: float = 2.0,
        max_backoff: float = 10.0,
        on_flush: Callable[[set[tuple[str, str]]], None] | None = None,
    ) -> None:
        self.spool = spool
        self._connect = connect
        self.store: Store | None = None
        self.flush_interval = flush_interval
        self.max_backoff = max_backoff
        self.on_flush = on_flush
        self.stats = WriterStats()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._run, name="planscope-writer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, drain_timeout: float = 10.0) -> None:
        """Stop the thread after trying to store what is spooled (what is left stays spooled)."""
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=drain_timeout + self.max_backoff + 5)

    def flush_now(self) -> None:
        """Ask the thread to seal and store the active segment without waiting for its age."""
        self._wake.set()

    def drain(self, timeout: float = 30.0) -> bool:
        """Synchronously store everything spooled so far; True when the spool is empty."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.spool.pending_bytes == 0:
                return True
            self._wake.set()
            time.sleep(0.02)
        return self.spool.pending_bytes == 0

    def _run(self) -> None:
        backoff = self.flush_interval
        while True:
            stopping = self._stop.is_set()
            min_age = 0.0 if (stopping or self._wake.is_set()) else self.flush_interval
            self._wake.clear()
            try:
                segments = self.spool.seal(min_age_seconds=min_age)
                if segments and self.store is None:
                    self.store = self._connect()
                self._store_segments(segments, stopping)
                backoff = self.flush_interval
                self.stats.store_available = True
            except StoreUnavailable as exc:
                self.stats.store_available = False
                self.stats.last_error = str(exc)
                log.warning("store unavailable, retrying in %.1fs: %s", backoff, exc)
                if stopping:
                    return  # what is left stays spooled and is replayed on the next start
                self._wake.wait(backoff)
                backoff = min(backoff * 2, self.max_backoff)
                continue
            except Exception:  # never let the writer thread die
                log.exception("writer loop error")
            if stopping:
                return
            # Sleep until the active segment's oldest record is due (a full interval when
            # empty: a record appended meanwhile is at most that old at the next look).
            self._wake.wait(max(0.0, self.flush_interval - self.spool.oldest_age()))

    def _store_segments(self, segments: list[Segment], stopping: bool) -> None:
        """Store ``segments`` in order; when the list runs out, take on segments sealed
        meanwhile (by size: a backlog) without waiting."""
        queue = list(segments)
        i = 0
        while i < len(queue):
            segment = queue[i]
            try:
                flat: FlatSegment | BaseException = flatten_segment(segment)
            except Exception as exc:
                flat = exc
            self._store_segment(segment, flat)
            if i + 1 == len(queue) and not stopping:
                queue += [s for s in self.spool.seal(math.inf) if s.number > segment.number]
            i += 1

    def _store_segment(self, segment: Segment, flat: FlatSegment | BaseException) -> None:
        assert self.store is not None
        token = self.spool.dedup_token(segment)
        try:
            if isinstance(flat, BaseException):
                raise flat
            insert(self.store, flat, token)
        except StoreUnavailable:
            raise
        except Exception as exc:
            self.stats.last_error = f"{type(exc).__name__}: {exc}"
            log.warning("segment %s failed (%s); storing its requests one by one", segment, exc)
            flat = self._store_one_by_one(segment, token)
        self.spool.remove(segment)
        self._release_memory()
        self.stats.spans_written += flat.spans
        self.stats.segments_written += 1
        self.stats.last_flush_monotonic = time.monotonic()
        if self.on_flush is not None and flat.spans:
            try:
                self.on_flush(flat.trace_keys)
            except Exception:
                log.exception("on_flush hook failed")

    def _release_memory(self) -> None:
        """Give the embedded engine's freed memory back to the OS when the process is large.

        A ClickHouse server returns jemalloc's dirty pages itself (its memory worker); chDB in
        this process does not, and without this the collector's RSS rose past 1 GiB under
        sustained load (docs/storage.md, "Memory"). The purge costs 3-200 ms and runs only
        above the threshold.
        """
        assert self.store is not None
        if not self.store.embedded or _resident_bytes() < RELEASE_MEMORY_ABOVE_BYTES:
            return
        try:
            self.store.command("SYSTEM JEMALLOC PURGE")
        except Exception as exc:  # an engine built without jemalloc: nothing to give back
            log.debug("jemalloc purge unavailable: %s", exc)

    def _store_one_by_one(self, segment: Segment, token: str) -> FlatSegment:
        """Store each request of ``segment`` alone; quarantine the ones that fail on their own.

        Transient errors propagate (the segment is retried later; the requests stored so far
        are dropped as duplicates then, by their tokens).
        """
        assert self.store is not None
        done = FlatSegment(b"", [], set(), 0)
        for index, record in enumerate(segment.records()):
            try:
                flat = flatten_records([record])
                insert(self.store, flat, f"{token}/r{index}")
            except StoreUnavailable:
                raise
            except Exception as exc:
                reason = f"{type(exc).__name__}: {exc}"
                path = self.spool.quarantine.add(
                    f"{segment.number:012d}-{index:06d}", record, reason
                )
                self.stats.requests_quarantined += 1
                self.stats.last_error = reason
                log.error("request quarantined at %s: %s", path, reason)
                continue
            done.spans += flat.spans
            done.trace_keys |= flat.trace_keys
        return done


def insert(store: Store, flat: FlatSegment, token: str) -> None:
    """Insert flattened requests: spans first, then their ingest-batch rows, all deduplicated.

    The Arrow block keeps the segment's token (as older versions inserted it); each protobuf
    stream gets its own, derived from it, so a replay splits and tokens them the same way.
    """
    if len(flat.ipc):
        store.insert_spans(flat.ipc, dedup_token=token)
    for number, stream in enumerate(flat.scalar_streams):
        store.insert_otlp_spans(stream, dedup_token=f"{token}/o{number}")
    if flat.batches:
        store.insert_ingest_batches(flat.batches, dedup_token=token)


@dataclass(frozen=True)
class ReplayResult:
    """What ``replay_quarantined`` did."""

    stored: int
    spans: int
    refused: int


def replay_quarantined(
    quarantine: Quarantine, store: Store, ids: set[str] | None = None
) -> ReplayResult:
    """Insert quarantined requests again (all, or those in ``ids``); the stored ones are removed.

    A request the store refuses again stays, with the new reason; a transient error stops the
    replay (``StoreUnavailable``), leaving everything not yet stored in place.

    >>> replay_quarantined(Quarantine(spool_dir / "quarantine"), store)  # doctest: +SKIP
    ReplayResult(stored=1, spans=150, refused=0)
    """
    stored = spans = refused = 0
    for item in quarantine.list():
        if ids is not None and item.id not in ids:
            continue
        records = list(Segment(0, item.path).records())
        try:
            flat = flatten_records(records)
            digest = records[0].digest.hex() if records else ""
            insert(store, flat, f"quarantine:{item.id}:{digest}")
        except StoreUnavailable:
            raise
        except Exception as exc:
            refused += 1
            for record in records:
                quarantine.add(item.id, record, f"{type(exc).__name__}: {exc}")
            continue
        quarantine.remove(item)
        stored += 1
        spans += flat.spans
    return ReplayResult(stored, spans, refused)

"""The batch writer: moves sealed spool segments into ClickHouse, one insert per segment.

A segment becomes one ``otel_traces`` insert (thousands of rows, never SQL text) carrying the
dedup token ``<spool id>:<segment>``, then one ``planscope_ingest_batches`` insert with the same
token, and only then is the segment deleted. A crash anywhere in between replays the segment,
and ClickHouse drops the repeated blocks, in the raw table and in every materialized view.

Transient store errors (down, timeouts) are retried with a capped exponential back-off while
the spool keeps accepting; a segment the store refuses for other reasons three times is moved
to ``quarantine/`` and reported, so one bad batch cannot block everything behind it.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from ._otlp import DEFAULT_PROJECT, SpanColumns
from ._spool import Segment, Spool
from .storage import Store, StoreUnavailable

log = logging.getLogger("planscope.collector")

_MAX_FAILURES = 3


@dataclass
class WriterStats:
    """Counters exposed on /readyz and used by tests and benchmarks."""

    spans_written: int = 0
    segments_written: int = 0
    segments_quarantined: int = 0
    last_error: str | None = None
    last_flush_monotonic: float = 0.0
    store_available: bool = True
    failures: dict[int, int] = field(default_factory=dict)


class Writer:
    """Background thread that drains the spool into the store.

    ``on_flush`` is called with the (project, trace id) pairs of each segment once it is stored
    (the analysis scheduler hooks in there).
    """

    def __init__(
        self,
        spool: Spool,
        connect: Callable[[], Store],
        *,
        flush_interval: float = 0.5,
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
                for segment in segments:
                    self._store_segment(segment)
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
            self._wake.wait(self.flush_interval)

    def _store_segment(self, segment: Segment) -> None:
        assert self.store is not None
        try:
            spans, batches = self._columns(segment)
            token = self.spool.dedup_token(segment)
            if len(spans):
                self.store.insert_span_table(spans.to_arrow(), dedup_token=token)
            if batches:
                self.store.insert_ingest_batches(batches, dedup_token=token)
        except StoreUnavailable:
            raise
        except Exception as exc:
            count = self.stats.failures.get(segment.number, 0) + 1
            self.stats.failures[segment.number] = count
            self.stats.last_error = f"{type(exc).__name__}: {exc}"
            if count < _MAX_FAILURES:
                log.warning(
                    "segment %s failed (%d/%d): %s", segment.path, count, _MAX_FAILURES, exc
                )
                raise StoreUnavailable(str(exc)) from exc
            target = self.spool.quarantine(segment)
            self.stats.segments_quarantined += 1
            self.stats.failures.pop(segment.number, None)
            log.error("segment quarantined at %s after %d failures: %s", target, count, exc)
            return
        self.spool.remove(segment)
        self.stats.failures.pop(segment.number, None)
        self.stats.spans_written += len(spans)
        self.stats.segments_written += 1
        self.stats.last_flush_monotonic = time.monotonic()
        if self.on_flush is not None and len(spans):
            try:
                self.on_flush(spans.trace_keys())
            except Exception:
                log.exception("on_flush hook failed")

    @staticmethod
    def _columns(segment: Segment) -> tuple[SpanColumns, list[list[Any]]]:
        """The segment's spans as columns, and one ``planscope_ingest_batches`` row per request.

        The cyclic GC is paused meanwhile: building a segment allocates hundreds of thousands of
        short-lived protobuf wrappers and strings, and collections triggered by them (which find
        nothing: no cycles are created here) slowed this step by up to 1.8x.
        """
        spans = SpanColumns()
        batches: list[list[Any]] = []
        received_ms = time.time_ns() // 1_000_000  # ReceivedAt is DateTime64(3)
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            for record in segment.records():
                request = ExportTraceServiceRequest.FromString(record.body)
                start = len(spans)
                spans.add(request, record.project or None)
                project = spans.project[start] if len(spans) > start else None
                project = project or record.project or DEFAULT_PROJECT
                batches.append([project, record.digest.hex(), received_ms, record.span_count])
        finally:
            if gc_was_enabled:
                gc.enable()
        return spans, batches

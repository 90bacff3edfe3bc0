"""The analyzer inside the collector: incremental analysis after each stored batch, and routes.

The collector calls :func:`extension` (see ``planscope_collector.extensions``). ``on_flush``
records which traces got new spans; a background thread analyses a trace once it has been
quiet for ``quiet_seconds`` and its root span has arrived (or, without a root, after
``root_wait_seconds``; :class:`AnalyzerSettings`, read from ``PLANSCOPE_ANALYZER_*`` when the
extension starts). Every ``poll_seconds`` it also searches the store for traces
that changed without passing through this process (an OpenTelemetry Collector writing into
``otel_traces`` directly), as ``--role analyze`` does. Before each pass, LLM calls of models
not priced yet get their price (``planscope_collector.prices``). Only those traces are read, so
the cost follows the new data, not the size of the store. A trace that receives more spans later
is simply analysed again (findings are replaced, never duplicated).

Routes (project from the collector's ``project_of`` dependency):

- ``GET /api/findings?kind=&severity=&trace_id=&since=&until=&limit=&offset=``
- ``GET /api/traces/{trace_id}/findings``
- ``POST /api/analyze`` with ``{"trace_id": ..., "since": <unix ns>}`` (both optional; neither
  analyses the last :data:`DEFAULT_WINDOW_SECONDS`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import anyio
from fastapi import APIRouter, Body, Depends, Query
from planscope import PlanscopeError, api
from planscope.semconv import FINDING_KINDS
from planscope_collector import settings_problems
from planscope_collector.extensions import Leases, api_error, ingest_backlogged, project_of
from planscope_collector.prices import price_new_models
from pydantic import ValidationError

from ._engine import AnalysisResult, Analyzer
from ._findings import list_findings
from ._model import SEVERITIES
from ._settings import AnalyzerSettings

if TYPE_CHECKING:
    from planscope_collector import Collector

log = logging.getLogger("planscope.analyzer")

TICK_SECONDS = 0.25
DEFAULT_WINDOW_SECONDS = 24 * 3600
MAX_PENDING = 1_000_000
"""Pending traces kept in memory; beyond it the oldest are analysed first anyway."""
RESPONSE_FINDINGS = 1000
MAX_DEFER_SECONDS = 30.0
"""Analysis waits for an ingest backlog to clear at most this long before it runs anyway."""
POLL_LEASE_KEY = "analyzer-poll"
MAX_NANOS = (1 << 63) - 1
"""The last instant DateTime64(9) holds: larger times are refused (400), never sent to SQL."""


class AnalyzerService:
    """The collector extension (``router``, ``start``, ``stop``, ``on_flush``).

    >>> # service = extension(collector); service.on_flush({("default", "5b8e...")})
    """

    def __init__(self, collector: Collector, settings: AnalyzerSettings | None = None) -> None:
        self.collector = collector
        self.settings = settings or AnalyzerSettings()
        self._pending: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.analyzed_traces = 0
        self.last_error: str | None = None
        self.router: APIRouter | None = build_router(self)

    # -- Extension protocol ---------------------------------------------------------------------
    def start(self) -> None:
        self._stop.clear()
        polling = self.collector.settings.role == "analyze"
        target = self._poll_loop if polling else self._loop
        self._thread = threading.Thread(target=target, name="planscope-analyzer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def on_flush(self, trace_ids: set[tuple[str, str]]) -> None:
        now = time.monotonic()
        with self._lock:
            for key in trace_ids:
                self._pending[key] = now

    def enrich_trace(self, project: str, trace_id: str, detail: dict[str, Any]) -> None:
        """``GET /api/traces/{id}`` includes the trace's findings."""
        page = list_findings(self.collector.store, project, trace_id=trace_id, limit=1000)
        detail["findings"] = page["findings"]

    # -- work --------------------------------------------------------------------------------------
    def analyzer(self) -> Analyzer:
        return Analyzer(self.collector.store, settle_seconds=self.settings.quiet_seconds)

    def _analyse(
        self, project: str, trace_ids: list[str] | None, since_ns: int | None = None
    ) -> AnalysisResult:
        """Analyse these traces of a project (None: every trace started since ``since_ns``),
        the one way the service does: the models of new LLM calls are priced first, so the runs
        it analyses are listed with their costs at once, not at 0 until a later pass prices
        their model; then the collector is told (alert rules on findings)."""
        price_new_models(self.collector.store)
        analyzer = self.analyzer()
        if trace_ids is None:
            result = analyzer.analyze_window(project, since_ns or 0)
        else:
            result = analyzer.analyze(project, trace_ids, since_ns=since_ns)
        self.collector.analysis_done({project})
        return result

    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def _due(self) -> dict[str, dict[str, float]]:
        now = time.monotonic()
        due: dict[str, dict[str, float]] = {}
        with self._lock:
            for (project, trace_id), seen in self._pending.items():
                if now - seen >= self.settings.quiet_seconds or len(self._pending) > MAX_PENDING:
                    due.setdefault(project, {})[trace_id] = now - seen
        return due

    def _ingest_backlogged(self) -> bool:
        """True while the writer has more than a segment to store: ingest goes first.

        Analysis shares the store (one engine, one lock) and the CPU with the writer; under a
        burst, analysing as traces flush starves the writer. Deferred traces stay pending and
        are analysed when the backlog clears, or after :data:`MAX_DEFER_SECONDS` regardless.
        """
        return ingest_backlogged(self.collector)

    def _loop(self) -> None:
        deferred_since: float | None = None
        next_poll = time.monotonic() + self.settings.poll_seconds
        lookback = 86400.0  # the first search catches up on a day
        while not self._stop.wait(TICK_SECONDS):
            if self._ingest_backlogged():
                deferred_since = deferred_since or time.monotonic()
                if time.monotonic() - deferred_since < MAX_DEFER_SECONDS:
                    continue
            deferred_since = None
            try:
                self.run_due()
                if time.monotonic() >= next_poll:
                    # Spans this process did not write (an OpenTelemetry Collector's
                    # clickhouseexporter inserting into otel_traces, another replica) reach the
                    # typed tables through the span model's views; find and analyse them too.
                    next_poll = time.monotonic() + self.settings.poll_seconds
                    for project in self.analyzer().projects():
                        self.poll_project(project, lookback)
                    lookback = self.settings.lookback_seconds
            except Exception as exc:  # keep the thread alive; retry on the next tick
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.warning("analysis failed (will retry): %s", self.last_error)

    def run_due(self) -> AnalysisResult:
        """Analyse every pending trace that is complete (quiet, root arrived)."""
        total = AnalysisResult()
        for project, quiet in self._due().items():
            rooted = self._rooted(project, list(quiet))
            ready = [
                t for t, q in quiet.items() if t in rooted or q >= self.settings.root_wait_seconds
            ]
            if not ready:
                continue
            marks = {}
            with self._lock:
                for t in ready:
                    marks[t] = self._pending.get((project, t))
            result = self._analyse(project, ready)
            with self._lock:  # spans that arrived meanwhile keep the trace pending
                for t in ready:
                    if self._pending.get((project, t)) == marks[t]:
                        self._pending.pop((project, t), None)
            self.analyzed_traces += result.traces
            total.merge(result)
        return total

    # -- role "analyze": find work in the store instead of being told by the writer --------------
    def _poll_loop(self) -> None:
        leases: Leases | None = None
        held: dict[str, Any] = {}
        lookback = 86400.0  # the first search catches up on a day
        while not self._stop.wait(self.settings.poll_seconds if held or leases else 0.5):
            try:
                leases = leases or Leases(
                    self.collector.store, ttl=max(30.0, 6 * self.settings.poll_seconds)
                )
                for project in self.analyzer().projects():
                    lease = held.get(project)
                    lease = (
                        leases.renew(lease) if lease else leases.acquire(project, POLL_LEASE_KEY)
                    )
                    if lease is None:  # another analyzer replica holds this project
                        held.pop(project, None)
                        continue
                    held[project] = lease
                    self.poll_project(project, lookback)
                lookback = self.settings.lookback_seconds
            except Exception as exc:  # the store may be down; try again next tick
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.warning("analysis poll failed (will retry): %s", self.last_error)
        if leases is not None:
            for lease in held.values():
                try:
                    leases.release(lease)
                except Exception:
                    log.debug("releasing the analyzer lease failed", exc_info=True)

    def poll_project(self, project: str, lookback_seconds: float) -> AnalysisResult:
        """Analyse the project's traces that went quiet and changed since their last analysis."""
        now = time.time_ns()
        starts = self.analyzer().changed_traces(
            project,
            since_ns=now - int(lookback_seconds * 1e9),
            quiet_before_ns=now - int(self.settings.quiet_seconds * 1e9),
        )
        with self._lock:  # traces this process was told about are analysed by run_due
            ids = [t for t in starts if (project, t) not in self._pending]
        if not ids:
            return AnalysisResult()
        result = self._analyse(project, ids, min(starts[t] for t in ids))
        self.analyzed_traces += result.traces
        return result

    def _rooted(self, project: str, trace_ids: list[str]) -> set[str]:
        rows = self.collector.store.query(
            "SELECT TraceId AS t FROM planscope_trace_index WHERE Project = {p:String} "
            "AND TraceId IN {ids:Array(String)} GROUP BY TraceId HAVING max(RootSpanName) != ''",
            {"p": project, "ids": trace_ids},
        )
        return {str(r["t"]) for r in rows}

    def analyze_request(
        self, project: str, trace_id: str | None, since_ns: int | None
    ) -> AnalysisResult:
        if trace_id:
            return self._analyse(project, [trace_id])
        if since_ns is None:
            since_ns = time.time_ns() - DEFAULT_WINDOW_SECONDS * 10**9
        return self._analyse(project, None, since_ns)


def build_router(service: AnalyzerService) -> APIRouter:
    """The analyzer's HTTP routes."""
    router = APIRouter()
    run: Callable[..., Any] = anyio.to_thread.run_sync

    @router.get("/api/findings", response_model=api.FindingsPage)
    async def findings(
        proj: Annotated[str, Depends(project_of)],
        kind: Annotated[list[str] | None, Query(max_length=64)] = None,
        severity: Annotated[list[str] | None, Query(max_length=16)] = None,
        trace_id: Annotated[str | None, Query(max_length=32)] = None,
        since: Annotated[
            int | None, Query(ge=0, le=MAX_NANOS, description="trace start, unix ns")
        ] = None,
        until: Annotated[
            int | None, Query(ge=0, le=MAX_NANOS, description="trace start, unix ns")
        ] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    ) -> Any:
        for field, values, known in (
            ("kind", kind, FINDING_KINDS),
            ("severity", severity, SEVERITIES),
        ):
            unknown = sorted(set(values or ()) - set(known))
            if unknown:
                return api_error(
                    400,
                    f"unknown {field} {', '.join(map(repr, unknown))}; one of: {', '.join(known)}",
                    field=field,
                )
        store = service.collector.store
        return dict(
            await run(
                lambda: list_findings(
                    store,
                    proj,
                    kinds=kind,
                    severities=severity,
                    trace_id=trace_id,
                    since_ns=since,
                    until_ns=until,
                    limit=limit,
                    offset=offset,
                )
            )
        )

    @router.get("/api/traces/{trace_id}/findings", response_model=api.TraceFindings)
    async def trace_findings(trace_id: str, proj: Annotated[str, Depends(project_of)]) -> Any:
        tid = trace_id.lower()
        if not api.is_trace_id(tid):
            return api_error(400, "trace id must be 32 hex characters", field="trace_id")
        store = service.collector.store
        page = await run(lambda: list_findings(store, proj, trace_id=tid, limit=1000))
        return {"trace_id": tid, "findings": page["findings"]}

    @router.post("/api/analyze", response_model=api.AnalyzeResult)
    async def analyze(
        proj: Annotated[str, Depends(project_of)],
        body: Annotated[dict[str, Any] | None, Body()] = None,
    ) -> Any:
        body = body or {}
        trace_id = body.get("trace_id")
        since = body.get("since")
        if trace_id is not None and (
            not isinstance(trace_id, str) or not api.is_trace_id(trace_id.lower())
        ):
            return api_error(400, "trace_id must be 32 hex characters", field="trace_id")
        if since is not None and (
            not isinstance(since, int) or isinstance(since, bool) or not 0 <= since <= MAX_NANOS
        ):
            return api_error(
                400, f"since must be unix nanoseconds in 0..{MAX_NANOS}", field="since"
            )
        tid = trace_id.lower() if isinstance(trace_id, str) else None
        result = await run(lambda: service.analyze_request(proj, tid, since))
        return {
            "project": proj,
            "traces": result.traces,
            "spans": result.spans,
            "seconds": round(result.seconds, 4),
            "counts": result.counts(),
            "findings": [f.to_dict() for f in result.findings[:RESPONSE_FINDINGS]],
            "truncated": len(result.findings) > RESPONSE_FINDINGS,
        }

    return router


def extension(collector: Collector) -> AnalyzerService:
    """Factory the collector calls (``planscope_collector.extensions``); the settings are read
    from the environment now, when the collector starts."""
    try:
        settings = AnalyzerSettings()
    except ValidationError as exc:
        raise PlanscopeError(f"invalid analyzer settings: {settings_problems(exc)}") from None
    return AnalyzerService(collector, settings)

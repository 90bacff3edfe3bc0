"""Run the detectors over traces and store the findings idempotently."""

from __future__ import annotations

import gc
import json
import logging
import time
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from planscope import semconv as A
from planscope_collector.storage import StoreUnavailable

from . import _queries as Q
from ._bindings import BINDING_NAMES, BINDING_TYPES, binding_rows
from ._columns import BatchColumns, Screen
from ._load import (
    Queryable,
    fetch_columns,
    fill_traces,
    index_traces,
    index_window,
    ns_to_datetime,
)
from ._model import INSTRUMENTATION, Finding, TraceData
from ._settings import AnalyzerSettings
from .detectors import DETECTORS, Detector

log = logging.getLogger("planscope.analyzer")
_NOT_SCREENED: Mapping[str, set[str]] = {}
_Loaded = tuple[dict[str, TraceData], list[Finding], Mapping[str, set[str]], dict[str, str]]
"""A loaded batch: its traces, data-quality findings of traces that could not be loaded, what
the detectors' screens let through (see :func:`_fill_screened`; none when it was loaded trace
by trace), and the bindings to store (trace id → ``_bindings.encode``'s text)."""

ANALYZER_VERSION = "2"
"""Bumped when the set or semantics of detectors change (recorded in analysis_progress)."""
BATCH_TRACES = 2000
"""Traces loaded per round trip when they are named by id (an incremental pass, ``analyze``):
large enough to amortise query overhead, small enough that the id set stays cheap to match."""

WINDOW_BATCH_SPANS = 90_000
"""Spans per batch of a window pass (read by time range, no id set; a trace larger than this
is a batch of its own). Each batch pays the queries' fixed costs and re-reads the daily
partitions it shares with its neighbours, so fewer, larger batches cost less CPU; a batch's
memory follows its spans, not its traces (a batch and the next one, loading, are held): 8,000
traces were ~0.18M spans of our SDK's traces but ~0.36M of framework traces, whose raw spans,
prompts and answers are read too (peak RSS ~2.4 GiB against ~0.9). docs/benchmarks-log.md,
2026-12-03 and 2026-12-05."""

MAX_CHANGED = 20_000
"""Traces one incremental pass takes at most (the oldest first; the next pass takes the rest)."""

COLLECT_EVERY_BATCHES = 50
"""A long pass runs without automatic garbage collection (see ``_gc_paused``); the reference
cycles it leaves behind are collected this often, in the objects made since the pass began only
(:data:`_PASS_GENERATION`). Few are left: 330 objects by the tenth batch of a 1M-span framework
pass (``ast.literal_eval``'s nested functions, from the captured texts that are not JSON), where
there were 54,012 while the writes went through ``clickhouse_connect``'s insert (each insert's
context held its rows in a cycle: the rows of every batch written, freed only by a
collection). A collection costs what the live young objects cost to walk (the next batch,
loaded meanwhile: ~0.4 CPU s), whatever it frees, so it is rare (docs/benchmarks.md,
speed18)."""

_PASS_GENERATION = 1
"""With automatic collection paused, every object made since stays in the youngest generation
(and the survivors of a mid-pass collection in the next): collecting up to this one finds the
pass's cycles without walking the older generation (the modules', and whatever was made
before the pass: ~100,000 objects; 0.32-0.38 against 0.45 CPU s per collection, the same
objects freed)."""


@dataclass
class AnalysisResult:
    """What one analysis call did."""

    traces: int = 0
    spans: int = 0
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)
    """Seconds spent loading rows (``load``), running the detectors (``detect``) and writing
    findings and progress (``write``), summed over batches. In a multi-batch call the loads run
    in a thread alongside the other two, so the phases may add up to more than ``seconds``."""

    def merge(self, other: AnalysisResult) -> None:
        self.traces += other.traces
        self.spans += other.spans
        self.findings.extend(other.findings)
        self.seconds += other.seconds
        for phase, seconds in other.phases.items():
            self.phases[phase] = self.phases.get(phase, 0.0) + seconds

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.findings:
            out[f.kind] = out.get(f.kind, 0) + 1
        return dict(sorted(out.items()))


def detect(
    trace: TraceData,
    detectors: Sequence[Detector] = DETECTORS,
    screened: Mapping[str, Container[str]] = _NOT_SCREENED,
) -> list[Finding]:
    """Run every detector on one trace; a detector that raises becomes a data-quality finding.
    ``screened``: detector kind → the traces its screen let through (a detector is skipped on
    the others: they have no findings of its kind, which the trace's memo records for the
    rules that ask another detector, see ``detectors._base.memoised``).

    >>> detect(TraceData("p", "0" * 32))
    []
    """
    findings: list[Finding] = []
    todo = []
    for detector in detectors:
        passed = screened.get(detector.kind)
        if passed is not None and trace.trace_id not in passed:
            # the screen's verdict, where a rule asked about this detector looks first
            # (detectors._base.memoised: plan propagation's explanations)
            trace._memo[detector.kind] = []
        else:
            todo.append(detector)
    for detector in todo:
        try:
            findings.extend(detector.detect(trace))
        except Exception as exc:  # malformed data must never stop the analysis
            log.exception("detector %s failed on trace %s", detector.kind, trace.trace_id)
            findings.append(
                Finding(
                    kind=A.FINDING_DATA_QUALITY,
                    severity="low",
                    project=trace.project,
                    trace_id=trace.trace_id,
                    run_id=trace.run_id,
                    component=INSTRUMENTATION,
                    step_id="",
                    evidence=(),
                    explanation=f"Detector {detector.kind} could not analyse this trace: "
                    f"{type(exc).__name__}.",
                    detail={
                        "issue": "detector_error",
                        "detector": detector.kind,
                        "error": str(exc)[:200],
                    },
                    detector_version=f"{detector.kind}@{detector.version}",
                    identity=f"detector_error:{detector.kind}",
                )
            )
    return findings


def _screens(detectors: Sequence[Detector], columns: BatchColumns) -> dict[str, set[str]]:
    """Detector kind → the traces of the batch its screen lets through; a detector without a
    screen, or whose screen fails, is absent (it runs on every trace). Run where the batch was
    loaded (the loader thread of a window pass: Arrow's kernels release the GIL, and the
    batch's tables are freed before it is analysed)."""
    out: dict[str, set[str]] = {}
    for d in detectors:
        if isinstance(d, Screen):
            try:
                out[d.kind] = d.screen(columns)
            except Exception:  # a screen only saves time: the rule itself decides
                log.exception("screen of %s failed; its rule runs on every trace", d.kind)
    return out


def _fill_screened(
    store: Queryable,
    project: str,
    traces: dict[str, TraceData],
    detectors: Sequence[Detector],
    since_ns: int | None = None,
    *,
    by_time: bool = False,
    settled_before_ns: int | None = None,
) -> tuple[dict[str, set[str]], dict[str, str]]:
    """:func:`fill_traces` with the detectors' screens: only the traces some screen lets
    through (and those the loader may reshape) get their rows, when every detector has a screen
    that worked. Returns what each screen lets through, plus the traces the loader reshaped
    (their rules always run), and the bindings to store (``BatchColumns.bindings``)."""
    passed: dict[str, set[str]] = {}

    def only(columns: BatchColumns) -> set[str] | None:
        passed.update(_screens(detectors, columns))
        if len(passed) < len({d.kind for d in detectors}):
            return None  # a rule that runs on every trace needs every trace's rows
        return set().union(*passed.values())

    columns = fill_traces(
        store,
        project,
        traces,
        since_ns,
        by_time=by_time,
        only=only,
        settled_before_ns=settled_before_ns,
    )
    return {kind: ids | columns.reshaped for kind, ids in passed.items()}, columns.bindings


def _unloadable(project: str, trace_id: str, exc: BaseException) -> Finding:
    """The data-quality finding of a trace whose rows cannot be read or turned into a model."""
    return Finding(
        kind=A.FINDING_DATA_QUALITY,
        severity="low",
        project=project,
        trace_id=trace_id,
        run_id="",
        component=INSTRUMENTATION,
        step_id="",
        evidence=(),
        explanation=f"This trace could not be loaded for analysis ({type(exc).__name__}); "
        "the project's other traces were analysed.",
        detail={"issue": "unloadable_trace", "error": type(exc).__name__},
        detector_version="engine@1",
        identity="unloadable_trace",
    )


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a batch is built and analysed.

    A batch allocates a few hundred thousand small objects (row tuples, lists) and frees them
    by reference counting (they form no cycles); the collector's generation-2 passes over an
    ever larger heap took a fifth of a full analysis pass. Collection resumes afterwards (and
    stays off if someone else had turned it off).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _chunks(traces: Sequence[TraceData], limit: int, spans: bool) -> Iterator[list[TraceData]]:
    """``traces`` in order, cut into batches of at most ``limit`` traces, or spans when
    ``spans`` (a batch holds at least one trace)."""
    chunk: list[TraceData] = []
    size = 0
    for t in traces:
        weight = t.span_count if spans else 1
        if chunk and size + weight > limit:
            yield chunk
            chunk, size = [], 0
        chunk.append(t)
        size += weight
    if chunk:
        yield chunk


class Analyzer:
    """Loads traces from the store, runs the detectors, writes ``findings``.

    >>> # Analyzer(store).analyze("default", ["5b8e..."]).counts()
    >>> # {'runaway_loop': 1}
    """

    def __init__(
        self,
        store: Queryable,
        detectors: Sequence[Detector] = DETECTORS,
        batch_traces: int = BATCH_TRACES,
        window_batch_spans: int = WINDOW_BATCH_SPANS,
        settle_seconds: float = AnalyzerSettings.model_fields["quiet_seconds"].default,
    ) -> None:
        self.store = store
        self.detectors = tuple(detectors)
        self.batch_traces = batch_traces
        self.window_batch_spans = window_batch_spans
        self.settle_seconds = settle_seconds
        """A trace whose last span ended this long ago has settled: its binding is stored (a
        trace still growing would be bound again at once)."""

    def _settled_before(self, write: bool) -> int | None:
        """Traces that ended before this have settled: their bindings are stored (none when
        the pass writes nothing)."""
        return time.time_ns() - int(self.settle_seconds * 1e9) if write else None

    # -- entry points --------------------------------------------------------------------------
    def analyze(
        self,
        project: str,
        trace_ids: Iterable[str],
        *,
        since_ns: int | None = None,
        write: bool = True,
    ) -> AnalysisResult:
        """Analyse these traces (any number; loaded in batches) and store their findings.

        More traces than one batch are first ordered by start time, so that each batch reads
        only the few daily partitions its traces live in.
        """
        ids = sorted(set(trace_ids))
        if len(ids) <= self.batch_traces:
            return self._batch(project, ids, since_ns, write)
        with _gc_paused():  # the index's row-less traces too (see analyze_window)
            return self._analyze_in_batches(
                project, index_traces(self.store, project, ids, since_ns), write, self.batch_traces
            )

    def analyze_window(
        self,
        project: str,
        since_ns: int = 0,
        until_ns: int | None = None,
        *,
        write: bool = True,
    ) -> AnalysisResult:
        """Analyse every trace of ``project`` that started in ``[since_ns, until_ns)``."""
        until = until_ns if until_ns is not None else time.time_ns() + 86400 * 10**9
        # The index's row-less traces (tens of thousands of objects with a few empty containers
        # each) are built without cyclic collection too: with it, the collector's passes over
        # them cost several times building them (see _gc_paused).
        with _gc_paused():
            return self._analyze_in_batches(
                project,
                index_window(self.store, project, since_ns, until),
                write,
                self.window_batch_spans,
                by_time=True,
            )

    def changed_traces(
        self,
        project: str,
        since_ns: int,
        quiet_before_ns: int | None = None,
        limit: int = MAX_CHANGED,
    ) -> dict[str, int]:
        """Traces that got spans since ``since_ns`` and whose span count differs from their
        last analysis (or were never analysed), with no span ending after ``quiet_before_ns``
        (default: now); trace id → start (unix ns), oldest first, at most ``limit``.

        >>> # Analyzer(store).changed_traces("default", time.time_ns() - 3600 * 10**9)
        """
        c = fetch_columns(
            self.store,
            Q.CHANGED_TRACES,
            {
                "project": project,
                "since": ns_to_datetime(since_ns),
                "quiet_before": ns_to_datetime(
                    quiet_before_ns if quiet_before_ns is not None else time.time_ns()
                ),
                "limit": limit,
            },
        )
        return dict(zip(c.get("trace_id", ()), map(int, c.get("start_ns", ())), strict=True))

    def analyze_changed(
        self, project: str, since_ns: int, quiet_before_ns: int | None = None
    ) -> AnalysisResult:
        """Analyse what :meth:`changed_traces` finds: an incremental pass, whose cost follows
        the new data (the traces it touched), not the size of the store.

        >>> # Analyzer(store).analyze_changed("default", time.time_ns() - 3600 * 10**9).traces
        """
        starts = self.changed_traces(project, since_ns, quiet_before_ns)
        if not starts:
            return AnalysisResult()
        return self.analyze(project, starts, since_ns=min(starts.values()))

    def projects(self) -> list[str]:
        return sorted(str(r["project"]) for r in self.store.query(Q.PROJECTS))

    # -- internals ------------------------------------------------------------------------------
    def _analyze_in_batches(
        self,
        project: str,
        traces: dict[str, TraceData],
        write: bool,
        limit: int,
        *,
        by_time: bool = False,
    ) -> AnalysisResult:
        """Batches of traces that started close together (each reads a few partitions only),
        from row-less values the trace index gave (the dict is consumed: each batch's rows are
        freed once it is written), of at most ``limit`` traces (named by id: the id set each
        query matches) or, ``by_time``, ``limit`` spans (the memory a batch holds): ``traces``
        are every trace that started in a window, so each batch is read by its time range (see
        :func:`fill_traces`).

        While one batch is analysed and written, a loader thread reads the next one (the store
        runs the queries without holding the GIL, so they overlap the rules). Findings are
        returned in trace id order, as one call over id-sorted batches would.
        """
        started = time.perf_counter()
        # before any batch is written: a batch's writes touch only its own traces' findings
        live = _live_keys(self.store, project, traces) if write and traces else None
        ordered = sorted(traces.values(), key=lambda t: (t.start_ns, t.trace_id))
        traces.clear()
        chunks: list[dict[str, TraceData] | None] = [
            {t.trace_id: t for t in sorted(chunk, key=lambda t: t.trace_id)}
            for chunk in _chunks(ordered, limit, spans=by_time)
        ]
        del ordered
        total = AnalysisResult()

        def load(index: int) -> tuple[_Loaded, float]:
            began = time.perf_counter()
            chunk, chunks[index] = chunks[index], None
            assert chunk is not None
            return self._fill(project, chunk, write, by_time), time.perf_counter() - began

        # Batches are freed by reference counting as the pass goes (see _gc_paused).
        with (
            _gc_paused(),
            ThreadPoolExecutor(1, thread_name_prefix="planscope-analyzer-load") as pool,
        ):
            pending = pool.submit(load, 0) if chunks else None
            for index in range(len(chunks)):
                assert pending is not None
                (batch, bad, screened, bindings), load_s = pending.result()
                pending = pool.submit(load, index + 1) if index + 1 < len(chunks) else None
                total.merge(
                    self._analyse(project, batch, write, load_s, bad, screened, bindings, live)
                )
                del batch
                if index % COLLECT_EVERY_BATCHES == COLLECT_EVERY_BATCHES - 1:
                    gc.collect(_PASS_GENERATION)  # the pass's cycles, now and then
        total.findings.sort(key=lambda f: f.trace_id)
        total.seconds = time.perf_counter() - started
        return total

    def _fill(
        self, project: str, traces: dict[str, TraceData], write: bool, by_time: bool = False
    ) -> _Loaded:
        """:func:`fill_traces` for a batch of row-less traces; when that fails (other than the
        store being unavailable), the traces are loaded again one by one (see :meth:`_load`)."""
        try:
            screened, bindings = _fill_screened(
                self.store,
                project,
                traces,
                self.detectors,
                by_time=by_time,
                settled_before_ns=self._settled_before(write),
            )
            return traces, [], screened, bindings
        except StoreUnavailable:
            raise
        except Exception as exc:
            log.warning("loading %d traces failed (%s); loading them one by one", len(traces), exc)
        return self._one_by_one(
            [self._load(project, [t.trace_id], t.start_ns, write) for t in traces.values()]
        )

    def _batch(
        self, project: str, ids: Sequence[str], since_ns: int | None, write: bool
    ) -> AnalysisResult:
        started = time.perf_counter()
        # The batch's rows are freed (by reference counting) before collection resumes.
        with _gc_paused():
            traces, bad, screened, bindings = self._load(project, ids, since_ns, write)
            load_s = time.perf_counter() - started
            result = self._analyse(project, traces, write, load_s, bad, screened, bindings)
            del traces
        result.seconds = time.perf_counter() - started
        return result

    def _load(self, project: str, ids: Sequence[str], since_ns: int | None, write: bool) -> _Loaded:
        """Load a batch (as :func:`load_traces`); when that fails for a reason other than the
        store being unavailable, load its traces one by one, so one bad trace is skipped (with
        a data-quality finding and its progress recorded) instead of stopping the project's
        analysis."""
        try:
            found = index_traces(self.store, project, ids, since_ns)
            if not found:
                return found, [], _NOT_SCREENED, {}
            screened, bindings = _fill_screened(
                self.store,
                project,
                found,
                self.detectors,
                since_ns,
                settled_before_ns=self._settled_before(write),
            )
            return found, [], screened, bindings
        except StoreUnavailable:
            raise
        except Exception as exc:
            if len(ids) == 1:
                log.warning("trace %s/%s cannot be analysed: %s", project, ids[0], exc)
                start = since_ns if since_ns is not None else time.time_ns()
                placeholder = TraceData(project, ids[0], start_ns=start, end_ns=start)
                return {ids[0]: placeholder}, [_unloadable(project, ids[0], exc)], _NOT_SCREENED, {}
            log.warning("loading %d traces failed (%s); loading them one by one", len(ids), exc)
        return self._one_by_one([self._load(project, [i], since_ns, write) for i in ids])

    def _one_by_one(self, parts: list[_Loaded]) -> _Loaded:
        """Traces loaded one by one, as one batch: each detector runs on the traces its screen
        let through, and on every trace of a load where it had no screen (such a load built
        every row)."""
        traces: dict[str, TraceData] = {}
        bad: list[Finding] = []
        screened: dict[str, set[str]] = {d.kind: set() for d in self.detectors}
        bindings: dict[str, str] = {}
        for loaded, skipped, passed, bound in parts:
            traces.update(loaded)
            bad += skipped
            for kind, ids in screened.items():
                ids.update(passed.get(kind, loaded))
            bindings.update(bound)
        return traces, bad, screened, bindings

    def _analyse(
        self,
        project: str,
        traces: dict[str, TraceData],
        write: bool,
        load_s: float,
        unloadable: Sequence[Finding] = (),
        screened: Mapping[str, Container[str]] = _NOT_SCREENED,
        bindings: Mapping[str, str] | None = None,
        live: Mapping[str, list[_LiveKey]] | None = None,
    ) -> AnalysisResult:
        """Run the detectors over loaded traces and (with ``write``) store the findings and
        ``bindings`` (see :func:`_fill_screened`); a detector that has a screen runs only on the
        traces it let through (``screened``, from :func:`_fill_screened`). ``live``: as for
        :meth:`_write`."""
        started = time.perf_counter()
        findings: list[Finding] = list(unloadable)
        skip = {f.trace_id for f in unloadable}
        passed = [screened.get(d.kind) for d in self.detectors]
        if all(isinstance(ids, set) for ids in passed):  # every detector screened: no rule
            # runs on a trace no screen let through (most of a window batch's traces)
            skip |= traces.keys() - set().union(*(i for i in passed if isinstance(i, set)))
        for trace in traces.values():
            if trace.trace_id not in skip:
                findings.extend(detect(trace, self.detectors, screened))
        detected = time.perf_counter()
        if write and traces:
            self._write(project, traces, findings, bindings or {}, live)
        return AnalysisResult(
            traces=len(traces),
            spans=sum(t.span_count for t in traces.values()),
            findings=findings,
            phases={
                "load": load_s,
                "detect": detected - started,
                "write": time.perf_counter() - detected,
            },
        )

    def _write(
        self,
        project: str,
        traces: dict[str, TraceData],
        findings: list[Finding],
        bindings: Mapping[str, str],
        live: Mapping[str, list[_LiveKey]] | None = None,
    ) -> None:
        """Store ``findings`` of ``traces``, tombstones of the live findings they no longer
        include, the traces' progress and ``bindings``. ``live``: the live findings of a pass's
        traces, read once for all its batches (:func:`_live_keys`); None: read here."""
        now_dt = datetime.now(timezone.utc)
        if live is None:
            live = _live_keys(self.store, project, traces)
        fresh = {(f.trace_id, f.kind, f.key) for f in findings}
        stale = [  # tombstones: findings this analysis no longer produces
            {"trace_id": trace_id, "kind": kind, "key": key, "ts": ts}
            for trace_id in traces
            for kind, key, ts in live.get(trace_id, ())
            if (trace_id, kind, key) not in fresh
        ]
        per_trace: dict[str, int] = {}
        for f in findings:
            per_trace[f.trace_id] = per_trace.get(f.trace_id, 0) + 1
        now_us = (now_dt - _EPOCH) // timedelta(microseconds=1)
        rows = [_values(f, traces[f.trace_id].start_ns, now_us) for f in findings]
        rows += [_tombstone_values(project, r, now_us) for r in stale]
        if rows:
            self.store.insert_arrow("findings", _arrow(Q.FINDING_NAMES, Q.FINDING_TYPES, rows))
        progress = [
            (
                project,
                t.trace_id,
                t.start_ns,
                t.span_count,
                per_trace.get(t.trace_id, 0),
                ANALYZER_VERSION,
                now_us,
            )
            for t in traces.values()
        ]
        if bindings:
            rows = list(binding_rows(project, traces, bindings, now_us))
            table = _arrow(BINDING_NAMES, BINDING_TYPES, rows)
            self.store.insert_arrow("planscope_trace_bindings", table)
        progress_table = _arrow(Q.PROGRESS_NAMES, Q.PROGRESS_TYPES, progress)
        self.store.insert_arrow("analysis_progress", progress_table)


def _arrow(names: Sequence[str], types: Sequence[str], rows: Sequence[Sequence[Any]]) -> Any:
    """``rows`` (values in ``names`` order) as a ``pyarrow.Table`` whose columns have the Arrow
    types ``types`` names (``string``, ``list<string>``, ``timestamp[ns]`` from integers...),
    for ``Store.insert_arrow``.

    >>> _arrow(("a", "t"), ("string", "timestamp[us]"), [("x", 1)]).column("t").to_pylist()
    [datetime.datetime(1970, 1, 1, 0, 0, 0, 1)]
    """
    import pyarrow as pa

    columns = list(zip(*rows, strict=True)) if rows else [()] * len(names)
    return pa.table(
        [
            pa.array(values, type=pa.list_(pa.string()) if kind == "list<string>" else kind)
            for values, kind in zip(columns, types, strict=True)
        ],
        names=list(names),
    )


def _values(f: Finding, trace_start_ns: int, now_us: int) -> tuple[Any, ...]:
    """A ``findings`` row in :data:`_queries.FINDING_NAMES` order."""
    return (
        f.project,
        f.trace_id,
        f.run_id,
        f.kind,
        f.key,
        f.severity,
        f.component,
        f.step_id,
        list(f.evidence),
        f.explanation,
        f.wasted_tokens,
        f.wasted_cost_usd,
        f.wasted_ns,
        json.dumps(dict(f.detail), default=str),
        f.detector_version,
        int(trace_start_ns),
        now_us,
        0,
    )


def _tombstone_values(project: str, r: dict[str, Any], now_us: int) -> tuple[Any, ...]:
    """A tombstone (``IsDeleted`` 1: the finding is no longer produced) in
    :data:`_queries.FINDING_NAMES` order."""
    return (
        project,
        r["trace_id"],
        "",
        r["kind"],
        r["key"],
        "low",
        "",
        "",
        [],
        "",
        0,
        0.0,
        0,
        "{}",
        "",
        int(r["ts"]),
        now_us,
        1,
    )


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

_LiveKey = tuple[str, str, int]
"""A live finding of a trace: kind, key, the trace start it was stored with (unix ns)."""


def _live_keys(store: Queryable, project: str, ids: Iterable[str]) -> dict[str, list[_LiveKey]]:
    """The live (not tombstoned) findings of the traces ``ids``, by trace: one ``LIVE_KEYS``
    read (a ``FINAL`` read of the project's findings: a pass of many batches reads them once,
    not once per batch)."""
    c = fetch_columns(store, Q.LIVE_KEYS, {"project": project, "ids": ",".join(sorted(ids))})
    out: dict[str, list[_LiveKey]] = {}
    for trace_id, kind, key, ts in zip(
        c.get("trace_id", ()), c.get("kind", ()), c.get("key", ()), c.get("ts", ()), strict=True
    ):
        out.setdefault(trace_id, []).append((kind, key, ts))
    return out

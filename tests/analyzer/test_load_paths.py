"""Loading, batching and writing over every runner scenario and odd traces.

The analyzer reads a real store column by column (``Store.query_arrow``), writes findings and
progress with columnar inserts (``Store.insert_rows``) and cuts long id lists into batches of
traces that started close together; batching must not change what is found, and a re-analysis
tombstones the findings it no longer produces.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from planscope import semconv as A
from planscope_analyzer import Analyzer, detect, load_traces
from planscope_analyzer._columns import Screen
from planscope_analyzer._engine import _chunks
from planscope_analyzer._load import fill_traces, index_traces
from planscope_analyzer._model import TraceData
from planscope_analyzer.detectors import DETECTORS
from planscope_collector.storage import Store, StoreUnavailable, open_store
from planscope_runners import run_suite, run_task
from planscope_runners.cli import SCENARIOS
from planscope_runners.environments import get_task

from tests.analyzer.conftest import otlp_rows
from tests.conftest import Migrated
from tests.storage._spans import BASE_NS, make_span, new_span_id, new_trace_id, spans_ipc

pytestmark = pytest.mark.integration


def _third_party_and_malformed() -> list[list[Any]]:
    """A GenAI-only trace with a tool loop and orphan spans, and a malformed planscope trace."""
    t, root, loop = new_trace_id(), new_span_id(), new_span_id()
    rows = [
        make_span(trace_id=t, span_id=root, name="agent run"),
        make_span(trace_id=t, span_id=loop, parent=root, name="execute_step fetch"),
        make_span(trace_id=t, parent=new_span_id(), name="lost child"),
    ]
    for i in range(4):
        rows.append(
            make_span(
                trace_id=t,
                parent=loop,
                name="execute_tool http_get",
                start_ns=BASE_NS + (i + 1) * 10**6,
                status="Error",
                status_message=f"TimeoutError: after {30 + i}s",
                attrs={
                    A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
                    A.GEN_AI_TOOL_NAME: "http_get",
                    A.GEN_AI_TOOL_CALL_ARGUMENTS: '{"url":"https://x"}',
                    A.ERROR_TYPE: "Timeout",
                },
            )
        )
    m, run = new_trace_id(), new_span_id()
    rows += [
        make_span(
            trace_id=m,
            span_id=run,
            name="invoke_agent a",
            attrs={
                A.SPAN_KIND: A.KIND_RUN,
                A.RUN_ID: "r",
                A.RUN_BUDGET: "{bad",
                A.RUN_OUTCOME: "x",
            },
        ),
        make_span(
            trace_id=m,
            parent=run,
            name="plan a",
            attrs={
                A.SPAN_KIND: A.KIND_PLAN,
                A.PLAN_ID: "p",
                A.PLAN_VERSION: "1",
                A.PLAN_JSON: '{"steps": [',
                A.PLAN_STEP_COUNT: "2",
            },
        ),
        make_span(
            trace_id=m,
            parent=run,
            name="execute_step a",
            status="Error",
            status_message="ValueError: bad value 42 at 0x1f",
            attrs={A.SPAN_KIND: A.KIND_STEP, A.STEP_ID: "a", A.PLAN_ID: "q", A.ERROR_TYPE: "E"},
        ),
    ]
    return rows


@pytest.fixture(scope="module")
def suite(
    tmp_path_factory: pytest.TempPathFactory, migrated: Migrated
) -> Iterator[tuple[Store, list[str]]]:
    """Every runner scenario, a small labelled suite and hand-made odd traces in one store."""
    import planscope
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    planscope.configure(tracer_provider=provider)
    for scenario in SCENARIOS.values():
        task = get_task(scenario.task)
        run_task(scenario.variant, task.env, task, scenario.faults, seed=1)
    run_suite(40, fault_rate=0.5, seed=3)
    rows = otlp_rows(list(exporter.get_finished_spans())) + _third_party_and_malformed()
    provider.shutdown()
    s = open_store(migrated.store_dsn(tmp_path_factory.mktemp("load-paths") / "chdb"))
    s.migrate()
    s.insert_spans(spans_ipc(rows))
    ids = sorted({str(r[1]) for r in rows})
    yield s, ids
    s.close()


def _fields(t: TraceData) -> dict[str, Any]:
    return {f.name: getattr(t, f.name) for f in dataclasses.fields(t) if f.name != "_memo"}


def _findings(result: Any) -> list[dict[str, Any]]:
    return sorted((f.to_dict() for f in result.findings), key=lambda d: (d["trace_id"], d["key"]))


def test_every_trace_loads(suite: tuple[Store, list[str]]) -> None:
    store, ids = suite
    traces = load_traces(store, "default", ids)
    assert sorted(traces) == ids
    assert any(t.raw for t in traces.values())  # the third-party trace's skeleton was read
    assert any(t.scheduling for t in traces.values())
    assert any(t.attempts and t.plan_steps and t.runs for t in traces.values())
    for t in traces.values():  # the rules' order, whatever order the store returned them in
        for rows in (t.raw or [], t.scheduling):
            starts = [(r.start_ns, r.span_id) for r in rows]
            assert starts == sorted(starts), t.trace_id


def test_a_batch_read_by_time_has_the_rows_of_one_read_by_id(
    suite: tuple[Store, list[str]],
) -> None:
    """A window batch is read by its time range (no id list); the rows of other traces in that
    range (here: most of the store, all written within seconds) are dropped."""
    store, ids = suite
    by_id = load_traces(store, "default", ids)
    some = dict(list(index_traces(store, "default", ids).items())[::3])
    fill_traces(store, "default", some, by_time=True)
    assert len(some) < len(ids) and any(t.attempts for t in some.values())
    assert {i: _fields(t) for i, t in some.items()} == {i: _fields(by_id[i]) for i in some}


def test_batching_by_start_finds_the_same(suite: tuple[Store, list[str]]) -> None:
    store, ids = suite
    whole = Analyzer(store).analyze("default", ids, write=False)
    assert whole.traces == len(ids) and whole.findings
    small = Analyzer(store, batch_traces=7).analyze("default", ids, write=False)
    window = Analyzer(store, window_batch_spans=60).analyze_window("default", 0, write=False)
    for other in (small, window):
        assert other.traces == whole.traces and other.spans == whole.spans
        assert _findings(other) == _findings(whole)
    # Results come in trace id order, whatever the batches were.
    assert [f.trace_id for f in window.findings] == sorted(f.trace_id for f in window.findings)
    assert set(window.phases) == {"load", "detect", "write"}


def test_window_batches_are_cut_by_spans() -> None:
    """A window pass's batch holds at most its span budget (a larger trace alone), traces kept
    in order; an id-named batch counts traces."""
    sizes = [3, 50, 2, 2, 6, 60, 1, 9]
    traces = [TraceData("p", f"t{i}", span_count=n) for i, n in enumerate(sizes)]
    by_spans = [[t.span_count for t in c] for c in _chunks(traces, 10, spans=True)]
    assert by_spans == [[3], [50], [2, 2, 6], [60], [1, 9]]
    assert [len(c) for c in _chunks(traces, 3, spans=False)] == [3, 3, 2]
    assert [t for c in _chunks(traces, 10, spans=True) for t in c] == traces


def test_screens_hold_back_no_finding(suite: tuple[Store, list[str]]) -> None:
    """A detector's column-wise screen lets through every trace its rule has findings on (and
    clears others: it does something); the engine's findings are the rules' alone."""
    store, ids = suite
    traces = index_traces(store, "default", ids)
    columns = fill_traces(store, "default", traces)
    screened = [d for d in DETECTORS if isinstance(d, Screen)]
    assert {d.kind for d in screened} == {d.kind for d in DETECTORS}  # every rule is screened
    for d in screened:
        passed = d.screen(columns) | columns.reshaped
        found = {t.trace_id for t in traces.values() if d.detect(t)}
        assert found <= passed, d.kind
        assert set(traces) - passed, f"{d.kind} clears no trace"
    assert any(d.detect(t) for d in screened for t in traces.values())
    rules = sorted(f.to_dict()["key"] + t.trace_id for t in traces.values() for f in detect(t))
    engine = Analyzer(store).analyze("default", ids, write=False)
    assert sorted(f.to_dict()["key"] + f.trace_id for f in engine.findings) == rules


def _stored(store: Store) -> list[str]:
    """Every row ever written to findings and analysis_progress (tombstones included), except
    the time of writing, as sorted text."""
    columns = "* EXCEPT (AnalyzedAt, TraceStart), toUnixTimestamp64Nano(TraceStart) AS StartNs"
    findings = store.query(
        f"SELECT {columns} FROM findings WHERE Project = {{p:String}}", {"p": "default"}
    )
    progress = store.query(
        f"SELECT {columns} FROM analysis_progress WHERE Project = {{p:String}}", {"p": "default"}
    )
    return sorted(repr(sorted(r.items())) for r in findings + progress)


def test_reanalysis_tombstones_what_it_no_longer_finds(suite: tuple[Store, list[str]]) -> None:
    """Findings, tombstones (a re-analysis without one detector) and progress rows."""
    store, ids = suite
    fewer = [d for d in DETECTORS if d.kind != "runaway_loop"]
    assert _stored(store) == []
    Analyzer(store).analyze("default", ids)
    first = _stored(store)
    Analyzer(store, detectors=fewer).analyze("default", ids)
    stored = _stored(store)
    tombstones = [r for r in stored if "('IsDeleted', 1)" in r]
    assert tombstones and all("runaway_loop" in r for r in tombstones)
    assert sum("('SpanCount'," in r for r in first) == len(ids)  # one progress row per trace


def test_a_pass_in_batches_tombstones_every_batch(suite: tuple[Store, list[str]]) -> None:
    """A window pass of many batches reads the live findings once for all of them: each
    batch tombstones exactly the findings of its traces it no longer produces."""
    store, ids = suite
    first = Analyzer(store).analyze("default", ids).findings
    fewer = [d for d in DETECTORS if d.kind != "runaway_loop"]
    Analyzer(store, detectors=fewer, window_batch_spans=60).analyze_window("default", 0)
    rows = store.query(
        "SELECT TraceId AS t, FindingKey AS k FROM findings WHERE IsDeleted = 1 "
        "AND Project = {p:String}",
        {"p": "default"},
    )
    gone = {(f.trace_id, f.key) for f in first if f.kind == "runaway_loop"}
    assert gone and sorted((r["t"], r["k"]) for r in rows) == sorted(gone)


class _WritesFailAfter:
    """The real store, unavailable for inserts after ``ok`` of them (a disk that fills up
    mid-pass): the fault is injected, the rest is the real engine."""

    def __init__(self, store: Store, ok: int) -> None:
        self.store, self.ok, self.inserts = store, ok, 0

    def query(self, sql: str, parameters: Any = None) -> list[dict[str, Any]]:
        return self.store.query(sql, parameters)

    def query_arrow(self, sql: str, parameters: Any = None) -> Any:
        return self.store.query_arrow(sql, parameters)

    def insert_rows(self, table: str, rows: Any, names: Any) -> None:
        self._count()
        self.store.insert_rows(table, rows, names)

    def insert_arrow(self, table: str, data: Any) -> None:
        self._count()
        self.store.insert_arrow(table, data)

    def _count(self) -> None:
        self.inserts += 1
        if self.inserts > self.ok:
            raise StoreUnavailable("insert into analysis_progress failed: disk full")


def test_a_failed_write_stops_a_window_pass(suite: tuple[Store, list[str]]) -> None:
    """A store failure while a batch is written (the next one is being loaded meanwhile) stops
    the pass with that error, after the batches written before and none after."""
    store, _ = suite
    failing = _WritesFailAfter(store, ok=4)
    with pytest.raises(StoreUnavailable, match="disk full"):
        Analyzer(failing, window_batch_spans=60).analyze_window("default", 0)
    assert failing.inserts == 5  # no batch was written after the failed one

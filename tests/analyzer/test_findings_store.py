"""Findings in the store: idempotent re-analysis, tombstones, malformed and partial traces."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from planscope import semconv as A
from planscope_analyzer import Analyzer
from planscope_analyzer import _queries as Q
from planscope_analyzer._findings import list_findings
from planscope_analyzer.detectors import DETECTORS
from planscope_collector.storage import Store
from planscope_runners import run_task
from planscope_runners.environments import get_task

from tests.storage._spans import BASE_NS, make_span, new_span_id, new_trace_id, spans_ipc

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def _live(store: Store, trace_id: str) -> list[dict[str, Any]]:
    return list_findings(store, "default", trace_id=trace_id, limit=1000)["findings"]


def test_reanalysis_is_idempotent_and_tombstones_stale_findings(
    store: Store, store_spans: Callable[..., Any]
) -> None:
    task = get_task("ops-deploy-api")
    result = run_task("plan_and_act", "ops", task, ["loop_same_error"])
    store_spans()
    analyzer = Analyzer(store)
    first = analyzer.analyze("default", [result.trace_id])
    analyzer.analyze("default", [result.trace_id])
    rows = _live(store, result.trace_id)
    assert sorted(r["key"] for r in rows) == sorted(f.key for f in first.findings)
    assert {r["kind"] for r in rows} == {"runaway_loop"}
    assert rows[0]["detail"]["over_budget"] is True and rows[0]["evidence_span_ids"]
    # A re-analysis that no longer produces the finding (here: no loop detector) hides it.
    Analyzer(store, detectors=[d for d in DETECTORS if d.kind != "runaway_loop"]).analyze(
        "default", [result.trace_id]
    )
    assert _live(store, result.trace_id) == []
    analyzer.analyze("default", [result.trace_id])
    assert len(_live(store, result.trace_id)) == len(first.findings)
    progress = store.query(
        "SELECT count() AS n FROM analysis_progress FINAL WHERE TraceId = {t:String}",
        {"t": result.trace_id},
    )
    assert progress[0]["n"] == 1


def _trace(store: Store, spans: list[list[Any]]) -> None:
    store.insert_spans(spans_ipc(spans))


def test_malformed_and_partial_traces_yield_data_quality_findings(store: Store) -> None:
    t = new_trace_id()
    run, plan, step, lost = new_span_id(), new_span_id(), new_span_id(), new_span_id()
    _trace(
        store,
        [
            make_span(
                trace_id=t,
                span_id=run,
                name="invoke_agent a",
                attrs={
                    A.SPAN_KIND: A.KIND_RUN,
                    A.RUN_ID: "r1",
                    A.RUN_BUDGET: "{not json",
                    A.RUN_OUTCOME: "failure",
                },
            ),
            make_span(
                trace_id=t,
                span_id=plan,
                parent=run,
                name="plan a",
                attrs={
                    A.SPAN_KIND: A.KIND_PLAN,
                    A.PLAN_ID: "p",
                    A.PLAN_VERSION: "1",
                    A.PLAN_JSON: '{"steps": [{"id": "a"',
                    A.PLAN_STEP_COUNT: "2",
                },
            ),
            make_span(
                trace_id=t,
                span_id=step,
                parent=run,
                name="execute_step a",
                attrs={
                    A.SPAN_KIND: A.KIND_STEP,
                    A.STEP_ID: "a",
                    A.STEP_ATTEMPT: "x",
                    A.PLAN_ID: "q",
                    A.PLAN_VERSION: "7",
                    A.STEP_CONTEXT_KEYS: "[1,",
                },
            ),
            make_span(
                trace_id=t,
                parent=lost,
                name="execute_tool t",
                attrs={A.SPAN_KIND: A.KIND_TOOL, A.GEN_AI_TOOL_NAME: "t"},
            ),
        ],
    )
    findings = Analyzer(store).analyze("default", [t]).findings
    issues = {f.detail.get("issue") for f in findings if f.kind == "data_quality"}
    assert {"bad_plan_json", "missing_plan", "orphan_spans"} <= issues, findings
    assert not [f for f in findings if f.detail.get("issue") == "detector_error"]


def test_third_party_genai_trace_loop_from_tool_spans(store: Store) -> None:
    """No planscope attributes at all: repeated failing tool calls with identical arguments
    under one agent loop are still a runaway loop. No plan names a step, so the finding names
    none: it says which span repeated the work (docs/analyzers.md, "Runaway step naming")."""
    t = new_trace_id()
    root, loop = new_span_id(), new_span_id()
    spans = [
        make_span(trace_id=t, span_id=root, name="agent run"),
        make_span(trace_id=t, span_id=loop, parent=root, name="execute_step fetch"),
    ]
    for i in range(4):
        spans.append(
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
    spans.append(make_span(trace_id=t, parent=root, name="some other span"))
    _trace(store, spans)
    findings = Analyzer(store).analyze("default", [t]).findings
    loops = [f for f in findings if f.kind == "runaway_loop"]
    assert [(f.step_id, f.component) for f in loops] == [("", "http_get")]
    assert loops[0].detail["where"] and loops[0].detail["where"] in loops[0].explanation
    assert {f.kind for f in findings} == {"runaway_loop"}  # no run/plan → nothing else claimed


def test_analysis_reads_only_the_requested_traces(
    store: Store, store_spans: Callable[..., Any]
) -> None:
    task = get_task("ops-deploy-api")
    a = run_task("plan_and_act", "ops", task, ["loop_same_error"])
    b = run_task("plan_and_act", "ops", task, ["loop_same_error"], seed=2)
    store_spans()
    result = Analyzer(store).analyze("default", [a.trace_id])
    assert result.traces == 1 and {f.trace_id for f in result.findings} == {a.trace_id}
    assert _live(store, b.trace_id) == []
    window = Analyzer(store).analyze_window("default", 0)
    assert window.traces == 2


def test_changed_traces_follow_new_spans(store: Store) -> None:
    """An incremental pass takes new traces and traces that got late spans (also ones that
    started before the lookback), each once: after its analysis it is not changed any more."""
    hour = 3600 * 10**9
    now = BASE_NS + 10 * hour
    old, new = new_trace_id(), new_trace_id()
    root = new_span_id()
    store.insert_spans(
        spans_ipc(
            [
                make_span(trace_id=old, span_id=root, name="agent.run", start_ns=now - 3 * hour),
                make_span(trace_id=new, name="agent.run", start_ns=now - hour // 2),
            ]
        )
    )
    analyzer = Analyzer(store)
    since = now - hour  # the lookback: the old trace started before it
    assert analyzer.changed_traces("default", since, now) == {new: now - hour // 2}
    assert analyzer.analyze_changed("default", since, now).traces == 1
    assert analyzer.changed_traces("default", since, now) == {}
    late = make_span(trace_id=old, parent=root, name="late", start_ns=now - hour // 4)
    store.insert_spans(spans_ipc([late]))
    assert analyzer.changed_traces("default", since, now) == {old: now - 3 * hour}
    assert analyzer.analyze_changed("default", since, now).spans == 2
    assert analyzer.changed_traces("default", since, now) == {}


def test_sql_attribute_names_exist_in_the_conventions() -> None:
    """Literal attribute names in the analyzer's SQL must be defined in planscope.semconv."""
    known = {v for k, v in vars(A).items() if k.isupper() and isinstance(v, str)}
    texts = [
        Path(Q.__file__).read_text(),
        (ROOT / "collector/planscope_collector/migrations/0004_findings.sql").read_text(),
    ]
    names = {
        m for text in texts for m in re.findall(r"'((?:planscope|gen_ai|error)\.[a-z_.]+)'", text)
    }
    assert names <= known, names - known


def test_finding_json_roundtrip_shape(store: Store, store_spans: Callable[..., Any]) -> None:
    task = get_task("files-archive-contract")
    result = run_task("plan_and_act", "files", task, ["irreversible_after_failure"])
    store_spans()
    Analyzer(store).analyze("default", [result.trace_id])
    (row,) = [r for r in _live(store, result.trace_id) if r["kind"] == "irreversible_after_failure"]
    assert row["severity"] == "critical" and row["detail"]["failing_step"]
    json.dumps(row, default=str)

"""Pure view models (no Streamlit, no server): run view, status, DAG layout, diff, timeline, why,
findings, aggregates, escaping."""

from __future__ import annotations

from typing import Any

import pytest
from planscope_dashboard import (
    build_run_view,
    context_check,
    layout_dag,
    normalise_finding,
    plan_diff,
    step_status,
    timeline_rows,
    why_chain,
)
from planscope_dashboard._aggregate import bucket_ns, filter_traces
from planscope_dashboard._charts import dag_figure, timeline_figure
from planscope_dashboard._runview import attempts_until
from planscope_dashboard._safe import cap, html_text, md_escape, pretty
from planscope_dashboard._timeline import overlapping_lanes

MS = 1_000_000


class T:
    """Builds ``GET /api/traces/{id}`` JSON: spans with parsed attributes."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.n = 0

    def add(
        self,
        kind: str,
        start: float,
        dur: float,
        parent: str | None = None,
        error: str | None = None,
        name: str | None = None,
        **attrs: Any,
    ) -> str:
        self.n += 1
        sid = f"{self.n:016x}"
        attributes = {"planscope.span.kind": kind, **attrs}
        span = {
            "span_id": sid,
            "parent_span_id": parent or "",
            "name": name or kind,
            "start_ns": int(start * MS),
            "duration_ns": int(dur * MS),
            "end_ns": int((start + dur) * MS),
            "status_code": "Error" if error else "Unset",
            "status_message": error or "",
            "attributes": attributes,
            "events": [],
            "planscope_kind": kind,
        }
        if kind == "plan":
            span["plan"] = attributes.get("planscope.plan.json")
        self.spans.append(span)
        return sid

    def step(
        self, parent: str, step_id: str, attempt: int, start: float, status: str = "ok", **kw: Any
    ) -> str:
        dur = kw.pop("dur", 5)
        attrs = {
            "planscope.step.id": step_id,
            "planscope.step.attempt": attempt,
            "planscope.step.status": status,
            "planscope.plan.id": kw.pop("plan_id", "p"),
            "planscope.plan.version": kw.pop("version", 1),
            **kw,
        }
        return self.add(
            "step",
            start,
            dur,
            parent,
            error="ToolError: boom" if status == "error" else None,
            name=f"execute_step {step_id}",
            **attrs,
        )

    def trace(self) -> dict[str, Any]:
        return {"trace_id": "a" * 32, "spans": self.spans, "run": {"agent": "ag"}}


def plan_doc(steps: list[tuple[str, list[str]]], version: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "id": "p",
        "version": version,
        "steps": [
            {
                "id": sid,
                "description": f"do {sid}",
                "executor": f"w-{sid}",
                "tool": f"tool_{sid}",
                "depends_on": deps,
                "requires": [f"in_{sid}"],
                "produces": [f"out_{sid}"],
                "irreversible": False,
            }
            for sid, deps in steps
        ],
        **extra,
    }


@pytest.fixture
def diamond() -> dict[str, Any]:
    """a -> (b, c) -> d; b retried then ok; c failed; d never ran; x ran without a plan step."""
    t = T()
    run = t.add("run", 0, 100)
    plan = t.add(
        "plan",
        1,
        2,
        run,
        **{
            "planscope.plan.id": "p",
            "planscope.plan.version": 1,
            "planscope.plan.json": plan_doc(
                [("a", []), ("b", ["a"]), ("c", ["a"]), ("d", ["b", "c"])]
            ),
        },
    )
    t.add("llm", 1.5, 1, plan, **{"planscope.llm.role": "planner"})
    a = t.step(run, "a", 1, 5, **{"planscope.step.executor": "w1"})
    t.add("tool", 6, 1, a, **{"gen_ai.tool.name": "tool_a"})
    b1 = t.step(run, "b", 1, 20, "error", **{"planscope.step.executor": "w1"})
    t.add("tool", 21, 1, b1, error="ToolError: boom", **{"gen_ai.tool.name": "other_tool"})
    t.step(run, "b", 2, 30, **{"planscope.step.executor": "w1"})
    # c starts while b is still running (parallel executor) and before a finished? no: after a.
    t.step(run, "c", 1, 22, "error", **{"planscope.step.executor": "w2", "dur": 15})
    t.step(run, "c", 2, 40, "skipped", **{"planscope.step.executor": "w2"})
    t.step(run, "x", 1, 50, plan_id=None, version=None)
    t.add("tool", 60, 1, run, **{"gen_ai.tool.name": "stray"})
    return t.trace()


def test_step_status_rules(diamond: dict[str, Any]) -> None:
    view = build_run_view(diamond)
    assert step_status(view.attempts["a"]) == "ok"
    assert step_status(view.attempts["b"]) == "retried"
    assert step_status(view.attempts["c"]) == "failed"
    assert step_status(view.attempts.get("d", [])) == "not executed"
    only_skipped = [a for a in view.attempts["c"] if a.status == "skipped"]
    assert step_status(only_skipped) == "skipped"


def test_self_assessed_failure_counts_as_failed() -> None:
    t = T()
    run = t.add("run", 0, 10)
    t.step(run, "root", 1, 1, **{"planscope.step.self_assessment": "failure"})
    assert step_status(build_run_view(t.trace()).attempts["root"]) == "failed"


def test_dag_layout_by_dependency_depth(diamond: dict[str, Any]) -> None:
    view = build_run_view(diamond)
    layout = layout_dag(view, view.plans[0], highlight={"c"})
    nodes = {n.step_id: n for n in layout.nodes}
    assert {k: n.depth for k, n in nodes.items()} == {"a": 0, "b": 1, "c": 1, "d": 2}
    assert nodes["b"].y != nodes["c"].y
    assert {(e.source, e.target) for e in layout.edges} == {
        ("a", "b"),
        ("a", "c"),
        ("b", "d"),
        ("c", "d"),
    }
    assert nodes["b"].attempts == 2 and nodes["c"].highlighted and not nodes["a"].highlighted
    assert nodes["d"].status == "not executed"
    assert layout.depth == 3 and layout.width == 2


def test_dag_layout_survives_cycles_and_unknown_dependencies() -> None:
    t = T()
    run = t.add("run", 0, 10)
    t.add(
        "plan",
        0,
        1,
        run,
        **{"planscope.plan.json": plan_doc([("a", ["b"]), ("b", ["a"]), ("c", ["zzz"])])},
    )
    view = build_run_view(t.trace())
    nodes = {n.step_id: n for n in layout_dag(view, view.plans[0]).nodes}
    assert nodes["c"].depth == 0 and nodes["a"].depth == nodes["b"].depth == 1


def test_replans_are_versions_with_scope_edges_and_per_version_status() -> None:
    """ADaPT-style: v2 decomposes `root` into root.1, root.2; status steps through versions."""
    t = T()
    run = t.add("run", 0, 100)
    t.add(
        "plan",
        0,
        1,
        run,
        **{"planscope.plan.version": 1, "planscope.plan.json": plan_doc([("root", [])])},
    )
    t.step(run, "root", 1, 2, **{"planscope.step.self_assessment": "failure"})
    t.add(
        "plan",
        10,
        1,
        run,
        **{
            "planscope.plan.version": 2,
            "planscope.plan.scope": "root",
            "planscope.plan.replan_reason": "root: self-assessed failure",
            "planscope.plan.json": plan_doc(
                [("root", []), ("root.1", []), ("root.2", ["root.1"])], version=2
            ),
        },
    )
    t.step(run, "root.1", 1, 12, version=2)
    t.step(run, "root.2", 1, 14, version=2)
    view = build_run_view(t.trace())
    assert [p.key for p in view.plans] == ["p@v1", "p@v2"]
    v1, v2 = view.plans
    assert v2.replan_reason == "root: self-assessed failure"
    assert set(attempts_until(view, v1)) == {"root"}
    layout = layout_dag(view, v2)
    kinds = {(e.source, e.target): e.kind for e in layout.edges}
    assert kinds[("root", "root.1")] == "scope" and kinds[("root.1", "root.2")] == "depends_on"
    assert ("root", "root.2") not in kinds  # root.2 hangs off root.1 via its dependency only
    assert {n.step_id: n.depth for n in layout.nodes} == {"root": 0, "root.1": 1, "root.2": 2}
    statuses_v1 = {n.step_id: n.status for n in layout_dag(view, v1).nodes}
    assert statuses_v1 == {"root": "failed"}


def test_plan_diff_flags_skipped_extra_repeated_reordered(diamond: dict[str, Any]) -> None:
    view = build_run_view(diamond)
    rows = {r.step_id: r for r in plan_diff(view, view.plans[0])}
    assert rows["d"].notes == ("skipped: planned, never attempted",)
    assert rows["d"].executed_position is None
    assert "repeated: 2 attempts" in rows["b"].notes
    assert "tool other_tool, tool_b instead of tool_b" not in rows["b"].notes
    assert rows["x"].planned is False and rows["x"].notes == ("extra: no plan step (drift)",)
    stray = [r for r in rows.values() if r.step_id.startswith("(")]
    assert stray and "outside any step" in stray[0].notes[0]
    assert rows["a"].notes == ()


def test_plan_diff_reordered_and_dependency_violation() -> None:
    t = T()
    run = t.add("run", 0, 100)
    t.add("plan", 0, 1, run, **{"planscope.plan.json": plan_doc([("a", []), ("b", ["a"])])})
    t.step(run, "b", 1, 2, dur=3)
    t.step(run, "a", 1, 3, dur=5)
    view = build_run_view(t.trace())
    rows = {r.step_id: r for r in plan_diff(view, view.plans[0])}
    assert "reordered" in rows["b"].notes and "reordered" in rows["a"].notes
    assert "started before dependency a finished" in rows["b"].notes


def test_plan_diff_reports_a_different_tool() -> None:
    t = T()
    run = t.add("run", 0, 100)
    t.add("plan", 0, 1, run, **{"planscope.plan.json": plan_doc([("a", [])])})
    s = t.step(run, "a", 1, 2)
    t.add("tool", 3, 1, s, **{"gen_ai.tool.name": "rm_rf"})
    view = build_run_view(t.trace())
    (row,) = plan_diff(view, view.plans[0])
    assert row.notes == ("tool rm_rf instead of tool_a",)


def test_timeline_lanes_by_executor_and_parallel_overlap(diamond: dict[str, Any]) -> None:
    view = build_run_view(diamond)
    assert view.lanes[:2] == ["run", "planner"]
    rows = timeline_rows(view, highlight={view.attempts["c"][0].span_id})
    by_span = {r.span_id: r for r in rows}
    c1 = by_span[view.attempts["c"][0].span_id]
    assert c1.lane == "w2" and c1.highlighted and c1.group == "error"
    tool_in_b = by_span[view.attempts["b"][0].actions[0]]
    assert tool_in_b.lane == "w1" and tool_in_b.thickness < c1.thickness
    assert by_span[view.attempts["b"][1].span_id].group == "step (retried)"
    assert by_span[view.attempts["c"][1].span_id].group == "step (skipped)"
    assert ("w1", "w2") in overlapping_lanes(rows)
    planner_llm = next(r for r in rows if r.kind == "llm" and r.lane == "planner")
    assert planner_llm.step_id is None
    only_steps = timeline_rows(view, kinds={"step"})
    assert {r.kind for r in only_steps} == {"step"}


def test_why_chain_from_tool_to_planner(diamond: dict[str, Any]) -> None:
    view = build_run_view(diamond)
    tool = view.attempts["b"][0].actions[0]
    chain = why_chain(view, tool)
    assert [link.role for link in chain] == ["action", "step attempt", "plan step", "planner"]
    assert chain[1].span_id == view.attempts["b"][0].span_id
    assert chain[2].facts["id"] == "b" and chain[2].facts["depends_on"] == ["a"]
    assert chain[3].span_id == view.plans[0].span_id
    assert chain[3].facts["planner LLM calls"] == view.plans[0].planner_calls
    stray = view.unplanned_actions[0]
    assert "plan drift" in why_chain(view, stray)[-1].facts["finding"]
    drift = why_chain(view, view.attempts["x"][0].span_id)
    assert drift[-1].role == "plan step" and "plan drift" in drift[-1].facts["finding"]
    planner = why_chain(view, view.plans[0].planner_calls[0])
    assert planner[-1].role == "planner"


def test_why_chain_of_a_plan_less_run_claims_no_drift() -> None:
    """A ReAct-style run has no plan: its steps and tools are not drift from anything."""
    t = T()
    run = t.add("run", 0, 20)
    step = t.step(run, "iter-1", 1, 1, plan_id="", version=0)
    tool = t.add("tool", 2, 1, step, **{"gen_ai.tool.name": "search"})
    loose = t.add("tool", 10, 1, run, **{"gen_ai.tool.name": "search"})
    view = build_run_view(t.trace())
    for span in (step, tool, loose):
        last = why_chain(view, span)[-1]
        assert last.role == "plan step" and "finding" not in last.facts, (span, last)
        assert "no plan" in last.title
    assert all("drift" not in n for row in plan_diff(view, None) for n in row.notes)


def test_context_check_names_missing_keys() -> None:
    t = T()
    run = t.add("run", 0, 10)
    t.step(run, "a", 1, 1, **{"planscope.step.context.keys": ["in_a", "bonus"]})
    t.step(run, "b", 1, 2)
    view = build_run_view(t.trace())
    check = context_check({"requires": ["in_a", "secret"]}, view.attempts["a"][0])
    assert check.missing == ("secret",) and check.extra == ("bonus",)
    assert context_check({"requires": ["k"]}, view.attempts["b"][0]).given is None


def test_findings_normalisation_reads_the_api_fields() -> None:
    f = normalise_finding(
        {
            "kind": "runaway_loop",
            "severity": "high",
            "trace_id": "t",
            "step_id": "fetch",
            "evidence_span_ids": ["s1", "s2"],
            "explanation": "4 identical errors",
            "wasted_tokens": 1200,
            "wasted_ms": 250.0,
            "trace_start_ns": 1767225600 * 10**9,
            "key": "k1",
        }
    )
    assert f.evidence_span_ids == ("s1", "s2") and f.finding_id == "k1"
    assert f.wasted_tokens == 1200 and f.wasted_seconds == pytest.approx(0.25)
    assert f.time_ns == 1767225600 * 10**9
    g = normalise_finding({"kind": "x", "severity": "low", "trace_id": "t"})
    assert g.evidence_span_ids == () and g.wasted_seconds == 0.0 and g.time_ns is None


def test_aggregates_from_list_rows_and_views(diamond: dict[str, Any]) -> None:
    rows: list[dict[str, Any]] = [
        {"trace_id": "1", "run_id": "r1", "outcome": "success", "agent": "a"},
        {"trace_id": "2", "run_id": "r2", "outcome": "failure", "agent": "b"},
        {"trace_id": "3", "run_id": "", "start_ns": 0},
    ]
    assert [r["trace_id"] for r in filter_traces(rows, agent="b")] == ["2"]
    assert [r["trace_id"] for r in filter_traces(rows, outcome="(no run)")] == ["3"]
    assert bucket_ns(61 * 10**9) == 10**10


def test_escaping_helpers() -> None:
    assert "<" not in html_text("<script>alert(1)</script>")
    escaped = md_escape("[a](javascript:x) **b** :red[c]")
    assert "\\[" in escaped and "\\*\\*" in escaped and "\\:" in escaped
    assert cap("x" * 10, 4) == "xxxx… [6 more characters]"
    assert pretty('{"a": [1]}') == '{\n  "a": [\n    1\n  ]\n}'
    assert pretty("not json <b>") == "not json <b>"


def test_figures_escape_span_text() -> None:
    t = T()
    run = t.add("run", 0, 10)
    evil = "<a href='javascript:alert(1)'>x</a>"
    t.add("plan", 0, 1, run, **{"planscope.plan.json": plan_doc([(evil, [])])})
    s = t.step(run, evil, 1, 1, **{"planscope.step.executor": evil})
    t.add("tool", 2, 1, s, name=evil)
    view = build_run_view(t.trace())
    dag = dag_figure(layout_dag(view, view.plans[0])).to_json()
    timeline = timeline_figure(timeline_rows(view), view.lanes).to_json()
    for doc in (dag, timeline):
        assert "<a href" not in doc and "&lt;a href=" in doc


def test_empty_and_odd_traces_do_not_crash() -> None:
    view = build_run_view({"trace_id": "t", "spans": []})
    assert view.plans == [] and timeline_rows(view) == [] and why_chain(view, "x") == []
    odd = build_run_view(
        {
            "spans": [
                {"span_id": "1", "name": "foreign", "start_ns": 5, "end_ns": 9, "attributes": {}},
                {
                    "span_id": "2",
                    "parent_span_id": "1",
                    "name": "x",
                    "start_ns": 6,
                    "end_ns": 7,
                    "attributes": {},
                    "planscope_kind": "plan",
                    "status_code": "Error",
                },
            ]
        }
    )
    assert odd.plans[0].steps == [] and odd.spans["1"].kind == "other"
    assert plan_diff(odd, odd.plans[0]) == []


def test_a_plan_version_carries_who_approved_it_and_why() -> None:
    t = T()
    run = t.add("run", 0, 50)
    plan = t.add(
        "plan",
        1,
        5,
        run,
        **{"planscope.plan.json": plan_doc([("a", [])]), "planscope.plan.approval": "edited"},
    )
    t.spans[-1]["events"] = [
        {
            "name": "planscope.approval.granted",
            "attributes": {
                "planscope.approval.reviewer": "ana",
                "planscope.approval.reason": "clearer wording",
            },
        }
    ]
    (version,) = build_run_view(t.trace()).plans
    assert version.span_id == plan
    assert (version.approval, version.approval_note) == ("edited", "by ana: clearer wording")


def test_run_view_shows_a_plan_the_span_model_observed() -> None:
    """A framework's planner node (a step span) whose output was a plan: the API lists the plan
    in ``plans`` (inferred, with its steps) and the run view shows it as a plan version."""
    trace = {
        "trace_id": "t",
        "run": None,
        "spans": [
            {"span_id": "n1", "name": "planner", "start_ns": 5, "end_ns": 9,
             "planscope_kind": "step", "attributes": {}},
        ],
        "plans": [
            {"id": "", "version": 1, "span_id": "n1", "inferred": True,
             "steps": [{"id": "lookup", "description": "look"}, {"id": "refund"}]},
            {"id": "", "version": 2, "span_id": "missing", "inferred": True, "steps": []},
        ],
    }  # fmt: skip
    view = build_run_view(trace)
    assert [(p.span_id, [s["id"] for s in p.steps]) for p in view.plans] == [
        ("n1", ["lookup", "refund"])
    ]

"""Column-wise screens against their rules on hand-made batches: a screen lets through every
trace its rule reports (a necessary condition) and clears the near misses it was built to
clear. (Every screen against every rule over the runner suite: test_load_paths.)"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from planscope import semconv as A
from planscope_analyzer._columns import BatchColumns
from planscope_analyzer._model import Attempt, PlanStep, SchedulerSpan, TraceData
from planscope_analyzer.detectors.context_lost import ContextLost
from planscope_analyzer.detectors.implicit_dependency import ImplicitDependency


def _step(
    step_id: str,
    deps: tuple[str, ...],
    requires: tuple[str, ...] = (),
    produces: tuple[str, ...] = (),
) -> PlanStep:
    return PlanStep("plan", "p1", 1, 0, step_id, "", "", "", deps, requires, produces, False)


def _attempt(step_id: str, start: int) -> Attempt:
    return Attempt(
        f"s-{step_id}", "", "p1", 1, step_id, 1, "ok", "", "", "", (), 0, "", 0, "",
        start, start + 1,
    )  # fmt: skip


def _ran(steps: list[PlanStep]) -> list[Attempt]:
    return [_attempt(s.step_id, i) for i, s in enumerate(steps)]


def _table(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows)


def _steps_table(traces: list[TraceData]) -> pa.Table:
    return _table(
        [
            {"trace_id": t.trace_id, "plan_id": s.plan_id, "plan_version": s.plan_version,
             "step_id": s.step_id, "depends_on": list(s.depends_on),
             "requires": list(s.requires), "produces": list(s.produces)}
            for t in traces
            for s in t.plan_steps
        ]
    )  # fmt: skip


def test_implicit_dependency_screen_follows_transitive_dependencies() -> None:
    """c reads what a produces through b (an ancestor two hops up): no finding, cleared; d
    reads it with no path to a: reported, let through; an unexecuted reader: cleared."""
    chain = [_step("a", (), produces=("x",)), _step("b", ("a",)), _step("c", ("b",), ("x",))]
    loose = [_step("a", (), produces=("x",)), _step("d", (), ("x",))]
    idle = [*loose[:1], _step("d", (), ("x",)), _step("e", ())]
    traces = [
        TraceData("p", "chain", plan_steps=chain, attempts=_ran(chain)),
        TraceData("p", "loose", plan_steps=loose, attempts=_ran(loose)),
        TraceData("p", "idle", plan_steps=idle, attempts=_ran([idle[0], idle[2]])),
    ]
    ran = [{"trace_id": t.trace_id, "step_id": a.step_id} for t in traces for a in t.attempts]
    batch = BatchColumns(plan_steps=_steps_table(traces), attempts=_table(ran))
    rule = ImplicitDependency()
    found = {t.trace_id for t in traces if rule.detect(t)}
    assert found == {"loose"}
    assert rule.screen(batch) == found


def _switch(span: str, op: str, start: int, context: str, tokens: int) -> SchedulerSpan:
    return SchedulerSpan(
        span, "", A.SPAN_SCHEDULER_CONTEXT_SWITCH, start, 1, "s", "", "planner", "r1", op,
        context, tokens, "", 0, None,
    )  # fmt: skip


def test_context_lost_screen_compares_the_last_save_before_the_restore() -> None:
    """A request saved twice, then restored as last saved: no finding, cleared (an earlier save
    differs); restored as first saved: reported, let through."""
    saves = [_switch("s1", A.SWITCH_SAVE, 1, "h1", 10), _switch("s2", A.SWITCH_SAVE, 2, "h2", 20)]
    traces = [
        TraceData("p", "kept", scheduling=[*saves, _switch("r", A.SWITCH_RESTORE, 3, "h2", 20)]),
        TraceData("p", "lost", scheduling=[*saves, _switch("r", A.SWITCH_RESTORE, 3, "h1", 10)]),
    ]
    batch = BatchColumns(
        scheduling=_table(
            [{"trace_id": t.trace_id, **s._asdict()} for t in traces for s in t.scheduling]
        )
    )
    rule = ContextLost()
    found = {t.trace_id for t in traces if rule.detect(t)}
    assert found == {"lost"}
    assert rule.screen(batch) == found


def test_unmatched_is_the_same_whichever_side_is_larger() -> None:
    """A left row is matched only by a right row of its own trace with the same key values,
    whether the hash table is built on the left (smaller) or the right side."""
    from planscope_analyzer._columns import unmatched

    spans = _table(
        [{"trace_id": t, "span_id": s} for t in ("a", "b", "c") for s in ("s1", "s2", "s3")]
    )
    parents = _table(
        [
            {"trace_id": "a", "parent": "s1"},  # in its trace
            {"trace_id": "b", "parent": "s9"},  # in no trace
            {"trace_id": "d", "parent": "s2"},  # only in other traces
        ]
    )
    many = pa.concat_tables([parents] * 5)
    assert parents.num_rows < spans.num_rows < many.num_rows
    for left in (parents, many):
        assert unmatched(left, ["parent"], spans, ["span_id"]) == {"b", "d"}
        assert unmatched(spans, ["span_id"], left, ["parent"]) == {"a", "b", "c"}

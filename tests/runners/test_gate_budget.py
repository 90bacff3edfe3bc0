"""The approval gate, the retry budget, the script validator and replan constraints."""

from __future__ import annotations

from dataclasses import replace

import pytest
from planscope import Plan, RetryBudget
from planscope import semconv as A
from planscope_runners import Approved, Edited, Rejected, ToolError, make_env, run_task
from planscope_runners._errors import PlanFormatError
from planscope_runners._ir import StepIR, to_draft
from planscope_runners.variants.dag import check_irreversible, merge_scoped, write_conflicts
from planscope_runners.variants.scripts import validate_script

from .conftest import Spans, attr


def test_rejected_plan_executes_nothing(spans: Spans) -> None:
    seen: list[Plan] = []

    def reviewer(plan: Plan) -> Rejected:
        seen.append(plan)
        return Rejected("deploys need a change ticket", reviewer="alice")

    result = run_task("plan_and_act", "ops", "ops-deploy-api", approve=reviewer)
    assert result.outcome == "failure" and "change ticket" in (result.reason or "")
    assert len(seen) == 1 and any(s.irreversible for s in seen[0].steps)
    assert spans.steps() == [] and spans.of_kind(A.KIND_TOOL) == []
    plan = spans.of_kind(A.KIND_PLAN)[0]
    assert attr(plan, A.PLAN_APPROVAL) == "rejected"
    assert any(e.name == A.EVENT_APPROVAL_DENIED for e in plan.events)
    assert attr(spans.run(), A.RUN_OUTCOME) == "failure"


def test_approved_and_edited_plans(spans: Spans) -> None:
    result = run_task("dag", "files", "files-merge-3", approve=lambda p: Approved("bob"))
    assert result.success
    assert attr(spans.of_kind(A.KIND_PLAN)[0], A.PLAN_APPROVAL) == "approved"
    spans.clear()

    def drop_verify(plan: Plan) -> Edited:  # the reviewer removes the read-back step
        steps = [s for s in plan.steps if s.id != "verify"]
        steps = [
            replace(s, depends_on=tuple("copy" if d == "verify" else d for d in s.depends_on))
            for s in steps
        ]
        return Edited(replace(plan, steps=steps), reviewer="carol")

    result = run_task("plan_and_act", "files", "files-archive-notes", approve=drop_verify)
    assert result.success
    assert attr(spans.of_kind(A.KIND_PLAN)[0], A.PLAN_APPROVAL) == "edited"
    assert "verify" not in {attr(s, A.STEP_ID) for s in spans.steps()}


def test_the_budget_stops_a_loop(spans: Spans) -> None:
    budget = RetryBudget(max_attempts_per_step=2, max_replans=1)
    result = run_task("dag", "ops", "ops-audit-wide", ["loop_same_error"], budget=budget, seed=4)
    assert result.outcome == "failure"
    target = result.expected[0].step_id
    statuses = [attr(s, A.STEP_STATUS) for s in spans.steps(target)]
    assert statuses == ["error", "error", "skipped"]
    assert result.counters.tool_calls < 12


def test_script_validator_rejects_malformed_scripts() -> None:
    tools = make_env("files").tools()
    draft = to_draft(
        [
            StepIR(id="a", tool="read_file", args={"path": "x"}, produces=["x"]),
            StepIR(
                id="b", tool="write_file", args={"path": "y", "text": "{$nope}"}, depends_on=["a"]
            ),
            StepIR(id="c", tool="shred_file", args={"path": "x"}),
            StepIR(id="d", tool="delete_file", args={}),
        ]
    )
    problems = validate_script(draft, tools)
    assert any("{$nope}" in p for p in problems)
    assert any("unknown tool 'shred_file'" in p for p in problems)
    assert any("missing argument(s) ['path']" in p for p in problems)
    assert any("irreversible must be True" in p for p in problems)


class _BrokenPlanner:
    """A planner model that only ever answers an invalid script."""

    name, provider = "broken", "test"

    def complete(self, request):  # type: ignore[no-untyped-def]
        from planscope_runners import ChatResponse

        return ChatResponse('{"version": 1, "steps": [{"id": "a", "tool": "rm", "args": {}}]}')


def test_a_script_that_never_validates_runs_nothing(spans: Spans) -> None:
    result = run_task("scripts", "files", "files-merge-2", planner=_BrokenPlanner())
    assert result.outcome == "failure" and "no valid script" in (result.reason or "")
    assert spans.of_kind(A.KIND_TOOL) == [] and spans.steps() == []
    assert len(spans.of_kind(A.KIND_PLAN)) == 3  # first try + 2 repairs, all rejected


def test_a_scoped_replan_may_not_repeat_an_irreversible_action() -> None:
    draft = to_draft([StepIR(id="pay", irreversible=True, writes=["refund:o-1"])])
    with pytest.raises(PlanFormatError, match="irreversible"):
        check_irreversible(draft, ["issue_refund on refund:o-1 (step refund)"])
    check_irreversible(draft, ["issue_refund on refund:o-2 (step refund)"])


def test_merge_scoped_rewires_dependents_to_the_replacement() -> None:
    base = to_draft(
        [StepIR(id="a"), StepIR(id="b", depends_on=["a"]), StepIR(id="c", depends_on=["b"])]
    )
    repl = to_draft([StepIR(id="b1"), StepIR(id="b2", depends_on=["b1"])])
    merged = merge_scoped(base, "b", repl, [])
    assert [s.id for s in merged.plan.steps] == ["a", "b1", "b2", "c"]
    assert merged.plan.step("b1").depends_on == ("a",)
    assert merged.plan.step("c").depends_on == ("b2",)


def test_write_conflicts_only_between_unordered_writers() -> None:
    draft = to_draft(
        [
            StepIR(id="a", writes=["file:x"]),
            StepIR(id="b", writes=["file:x"], depends_on=["a"]),
            StepIR(id="c", writes=["file:x"]),
        ]
    )
    assert write_conflicts(draft) == [("a", "c", "file:x"), ("b", "c", "file:x")]


def test_tool_errors_carry_retryability() -> None:
    assert ToolError("x", retryable=True).retryable and not ToolError("y").retryable

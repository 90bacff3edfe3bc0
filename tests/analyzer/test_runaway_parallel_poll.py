"""A stalled poll in a parallel branch: a lab's assay step polls its job's status with the same
arguments, every call succeeding, then its executor gives up and the app ends the run, while a
sibling branch (started after it, beside it) ended long before. The attempt the run stopped at
is the one whose work ended last, not the one started last."""

from __future__ import annotations

from planscope import semconv as A
from planscope_analyzer._model import Attempt, Plan, PlanStep, ToolCall, TraceData
from planscope_analyzer.detectors.runaway_loop import RunawayLoop

STEPS = ("thaw_sample", "run_assay", "ship_report")


def _attempt(span_id: str, step: str, start: int, end: int) -> Attempt:
    return Attempt(span_id, "g", "", 0, step, 1, A.STATUS_OK, "", "", "", (), 0, "", 0, "",
                   start, end, inferred=True)  # fmt: skip


def _call(span_id: str, step: str, tool: str, start: int) -> ToolCall:
    return ToolCall(span_id, f"{step}-tools", step, 1, "", 0, tool, "", "", f"{tool}-args", "",
                    "Ok", start, 1)  # fmt: skip


def _lab() -> TraceData:
    plan = Plan("p", "g", "", 0, "", "", len(STEPS), True, 1, inferred=True)
    steps = [PlanStep("p", "", 0, i, s, "", "", "", (), (), (), False) for i, s in enumerate(STEPS)]
    # the assay's first node visit ends at once; its polls go on, long after the thaw ended
    attempts = [_attempt("a", "run_assay", 10, 11), _attempt("b", "thaw_sample", 12, 20)]
    calls = [_call("t", "thaw_sample", "freezer_log", 13)]
    calls += [_call(f"c{i}", "run_assay", "assay_status", 14 + 5 * i) for i in range(6)]
    return TraceData("p", "t", plans=[plan], plan_steps=steps, attempts=attempts, tools=calls)


def test_a_stalled_poll_in_the_branch_that_ended_last_is_found_at_its_step() -> None:
    (found,) = RunawayLoop().detect(_lab())
    assert (found.step_id, found.component, found.detail["attempts"]) == (
        "run_assay",
        "assay_status",
        6,
    )

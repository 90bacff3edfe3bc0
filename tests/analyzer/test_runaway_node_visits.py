"""A stalled poll split over a graph executor's node visits: a shipping agent's customs step runs
as one executor invocation whose first tool-node visit (filing the declaration) is bound to the
step, while every later visit (each one status read, the same question with the same answer)
is an attempt of the graph's own node, named after no plan step. The executor gives up and
the app ends the run there. The reads continue the step's attempt: a poll that made no
progress at that step. A poll that ends (its answer changes, the next step runs) stays
healthy, and a later plan step's visit under the same invocation is that step's own work."""

from __future__ import annotations

from planscope import semconv as A
from planscope_analyzer._model import Attempt, Plan, PlanStep, Run, ToolCall, TraceData
from planscope_analyzer.detectors.runaway_loop import RunawayLoop

STEPS = ("book_berth", "clear_customs", "load_cargo")


def _attempt(span_id: str, step: str, n: int, start: int) -> Attempt:
    # every node visit is a child of the executor's invocation span "inv"
    return Attempt(span_id, "inv", "", 0, step, n, A.STATUS_OK, "", "", "", (), 0, "", 0, "",
                   start, start + 1, inferred=True)  # fmt: skip


def _call(span_id: str, parent: str, step: str, n: int, tool: str, start: int) -> ToolCall:
    return ToolCall(span_id, parent, step, n, "", 0, tool, "", "", f"{tool}-args", "", "Ok",
                    start, 1, result="in review")  # fmt: skip


def _shipping(reads: int, then: str = "") -> TraceData:
    plan = Plan("p", "g", "", 0, "", "", len(STEPS), True, 1, inferred=True)
    steps = [PlanStep("p", "", 0, i, s, "", "", "", (), (), (), False) for i, s in enumerate(STEPS)]
    attempts = [_attempt("b", "book_berth", 1, 10), _attempt("c", "clear_customs", 1, 20)]
    calls = [_call("tb", "b", "book_berth", 1, "berth_desk", 10)]
    calls.append(_call("tc", "c", "clear_customs", 1, "file_declaration", 20))
    for i in range(1, reads + 1):  # one graph node visit per read, named after the node
        attempts.append(_attempt(f"n{i}", "tools", i, 20 + 10 * i))
        calls.append(_call(f"r{i}", f"n{i}", "tools", i, "declaration_status", 20 + 10 * i))
    if then:
        attempts.append(_attempt("l", then, 1, 1000))
        calls.append(_call("tl", "l", then, 1, "crane_booking", 1000))
    run = Run("root", "", "r", "", A.OUTCOME_FAILURE, "customs gave up", {}, 0, 2000, "Error", "")
    return TraceData(
        "p", "t", runs=[run], plans=[plan], plan_steps=steps, attempts=attempts, tools=calls
    )


def test_a_poll_over_node_visits_that_gave_up_is_found_at_its_step() -> None:
    (found,) = RunawayLoop().detect(_shipping(reads=8))
    assert (found.step_id, found.component, found.detail["attempts"]) == (
        "clear_customs",
        "declaration_status",
        8,
    )
    assert "c" in found.evidence


def test_node_visits_followed_by_the_next_plan_step_are_not_a_loop() -> None:
    # the reads ended (the run went on to the next step): no attempt gave up there
    assert RunawayLoop().detect(_shipping(reads=8, then="load_cargo")) == []

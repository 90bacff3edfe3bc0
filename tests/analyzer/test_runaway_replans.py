"""A step failing once per plan version, each failure answered by a replan, from real SDK spans
stored and analysed for real: when the replans changed the step's work (another carrier for the
shipment each time) and it failed again in every version, the step loops (``runaway_loop``);
when every replan re-issued it unchanged, the loop is the planner's (``unbounded_replan`` only).
Both are reported when both hold (the plan's structure never changed and the replans ran over
``max_replans``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import planscope
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from planscope import Plan, PlanStep, RetryBudget, RetryBudgetExceeded
from planscope import semconv as A
from planscope_analyzer import Analyzer
from planscope_collector.storage import Store

pytestmark = pytest.mark.integration

CARRIERS = ("rail", "road", "sea", "air")


class NeedsNewPlan(Exception):
    """The step cannot be done as planned: the app asks the planner for another version."""


@planscope.tool(effect="write", resource="wms:parcels")
def pack_order(order: str) -> dict[str, Any]:
    return {"order": order, "parcels": 3}


@planscope.tool(effect="write", resource="freight:bookings")
def book_freight(order: str, carrier: str) -> str:
    raise NeedsNewPlan(f"no {carrier} capacity for {order} this week")


def _steps(carrier: str) -> list[PlanStep]:
    return [
        PlanStep("pack", "pack the order", tool="pack_order", produces=["parcels"]),
        PlanStep(
            "ship",
            f"ship the parcels by {carrier}",
            tool="book_freight",
            depends_on=["pack"],
            requires=["parcels"],
        ),
    ]


@planscope.planner
def make_plan(objective: str, previous: Plan | None, carrier: str) -> Plan:
    if previous is None:
        return Plan(_steps(carrier), id="ship-ord-7", objective=objective)
    return previous.replan(_steps(carrier), reason="ship: no capacity")


@planscope.step(executor="dispatcher")
def execute(step: PlanStep, context: dict[str, Any]) -> None:
    planscope.record_context({k: context[k] for k in step.requires if k in context})
    if step.id == "pack":
        context["parcels"] = pack_order("ORD-7")
    else:
        book_freight(context["parcels"]["order"], step.description.rsplit(" by ", 1)[1])


@planscope.run("ship-agent", budget=RetryBudget(max_attempts_per_step=5, max_replans=3))
def ship_agent(objective: str, change_carrier: bool) -> None:
    plan: Plan | None = None
    for version in range(len(CARRIERS) + 2):
        carrier = CARRIERS[version % len(CARRIERS)] if change_carrier else "road"
        plan = make_plan(objective, plan, carrier)
        context: dict[str, Any] = {}
        try:
            for step in plan.topological_order():
                execute(step, context)
            return
        except NeedsNewPlan as e:
            planscope.record_replan_request(str(e), step_id="ship")


def _run(change_carrier: bool, exporter: InMemorySpanExporter) -> str:
    with contextlib.suppress(RetryBudgetExceeded):  # the run span holds it
        ship_agent("ship order ORD-7", change_carrier)
    (root,) = [s for s in exporter.get_finished_spans() if s.parent is None]
    assert root.context is not None
    return format(root.context.trace_id, "032x")


@pytest.mark.parametrize("change_carrier", [True, False], ids=["changed", "unchanged"])
def test_a_step_failing_once_per_replan(
    change_carrier: bool,
    store: Store,
    exporter: InMemorySpanExporter,
    store_spans: Callable[..., Any],
) -> None:
    trace_id = _run(change_carrier, exporter)
    store_spans()
    findings = Analyzer(store).analyze("default", [trace_id], write=False).findings
    kinds = {(f.kind, f.step_id) for f in findings}
    assert (A.FINDING_UNBOUNDED_REPLAN, "ship") in kinds
    loops = [f for f in findings if f.kind == A.FINDING_RUNAWAY_LOOP]
    if not change_carrier:  # the planner re-issued the same work: its loop, not the step's
        assert loops == []
        return
    (loop,) = loops
    assert (loop.step_id, loop.component) == ("ship", "book_freight")
    assert loop.detail["plan_versions"] == [1, 2, 3, 4]
    assert loop.detail["distinct_inputs"] == 4
    assert "failed 4 attempts in a row across 4 plan versions" in loop.explanation

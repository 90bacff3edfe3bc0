"""A step failing once per plan version, each failure answered by a replan, from real SDK spans
stored and analysed for real: when the replans changed the step's work (another route for the
payment each time) and it failed again in every version, the step loops (``runaway_loop``); when
every replan re-issued it unchanged, the loop is the planner's (``unbounded_replan`` only). Both
are reported when both hold (the plan's structure never changed and the replans ran over
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

ROUTES = ("bank transfer", "card", "postal order", "cheque")


class NeedsNewPlan(Exception):
    """The step cannot be done as planned: the app asks the planner for another version."""


@planscope.tool(effect="read", resource="erp:invoices")
def fetch_invoice(invoice: str) -> dict[str, Any]:
    return {"invoice": invoice, "total": 120}


@planscope.tool(effect="irreversible", resource="bank:payments")
def pay_invoice(invoice: str, route: str) -> str:
    raise NeedsNewPlan(f"the bank cannot pay {invoice} by {route} today")


def _steps(route: str) -> list[PlanStep]:
    return [
        PlanStep("fetch", "fetch the invoice", tool="fetch_invoice", produces=["invoice"]),
        PlanStep(
            "pay",
            f"pay the invoice by {route}",
            tool="pay_invoice",
            depends_on=["fetch"],
            requires=["invoice"],
            irreversible=True,
        ),
    ]


@planscope.planner
def make_plan(objective: str, previous: Plan | None, route: str) -> Plan:
    if previous is None:
        return Plan(_steps(route), id="pay-inv-7", objective=objective)
    return previous.replan(_steps(route), reason="pay: the bank cannot pay")


@planscope.step(executor="clerk")
def execute(step: PlanStep, context: dict[str, Any]) -> None:
    planscope.record_context({k: context[k] for k in step.requires if k in context})
    if step.id == "fetch":
        context["invoice"] = fetch_invoice("INV-7")
    else:
        pay_invoice(context["invoice"]["invoice"], step.description.rsplit(" by ", 1)[1])


@planscope.run("pay-agent", budget=RetryBudget(max_attempts_per_step=5, max_replans=3))
def pay_agent(objective: str, change_route: bool) -> None:
    plan: Plan | None = None
    for version in range(len(ROUTES) + 2):
        plan = make_plan(objective, plan, ROUTES[version % len(ROUTES)] if change_route else "card")
        context: dict[str, Any] = {}
        try:
            for step in plan.topological_order():
                execute(step, context)
            return
        except NeedsNewPlan as e:
            planscope.record_replan_request(str(e), step_id="pay")


def _run(change_route: bool, exporter: InMemorySpanExporter) -> str:
    with contextlib.suppress(RetryBudgetExceeded):  # the run span holds it
        pay_agent("pay invoice INV-7", change_route)
    (root,) = [s for s in exporter.get_finished_spans() if s.parent is None]
    assert root.context is not None
    return format(root.context.trace_id, "032x")


@pytest.mark.parametrize("change_route", [True, False], ids=["changed", "unchanged"])
def test_a_step_failing_once_per_replan(
    change_route: bool,
    store: Store,
    exporter: InMemorySpanExporter,
    store_spans: Callable[..., Any],
) -> None:
    trace_id = _run(change_route, exporter)
    store_spans()
    findings = Analyzer(store).analyze("default", [trace_id], write=False).findings
    kinds = {(f.kind, f.step_id) for f in findings}
    assert (A.FINDING_UNBOUNDED_REPLAN, "pay") in kinds
    loops = [f for f in findings if f.kind == A.FINDING_RUNAWAY_LOOP]
    if not change_route:  # the planner re-issued the same work: its loop, not the step's
        assert loops == []
        return
    (loop,) = loops
    assert (loop.step_id, loop.component) == ("pay", "pay_invoice")
    assert loop.detail["plan_versions"] == [1, 2, 3, 4]
    assert loop.detail["distinct_inputs"] == 4
    assert "failed 4 attempts in a row across 4 plan versions" in loop.explanation

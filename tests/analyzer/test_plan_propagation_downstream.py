"""Plan propagation through a value that changed form: a step fails for good on figures the
world computed from an earlier step's result (a purchase over the card limit, priced from a
quote the planner sized wrongly), and the failure names none of the values the planner wrote.
Plain OTel spans in the GenAI conventions (no planscope SDK), stored and loaded for real: a
root without an objective (the planner's prompt, with its notes, becomes it), a planner chat
answering the plan, one executor run per task."""

from __future__ import annotations

import json
from typing import Any

import pytest
from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.plan_propagation import PlanPropagation
from planscope_collector.storage import Store

from tests.storage._spans import BASE_NS, make_span, new_span_id, new_trace_id, spans_ipc

pytestmark = pytest.mark.integration

MS = 1_000_000
PROMPT = 'Buy LT-14 laptops for the new hires on account ACC-77.\nNotes: {"units": 120}'
PLAN = {
    "tasks": [
        {"id": "quote", "action": "get a price quote", "tool": "price_quote",
         "args": {"sku": "LT-14", "units": 120}},
        {"id": "reserve", "action": "reserve the stock", "tool": "stock_reserve",
         "args": {"sku": "LT-14"}},
        {"id": "pay", "action": "pay the order", "tool": "purchase",
         "args": {"quote": "<from quote>", "reservation": "<from reserve>",
                  "account": "ACC-77"}},
    ],
}  # fmt: skip
QUOTED = {"quote": "Q-31", "units": 120, "total": 144000}
CALLS = {
    "price_quote": ({"sku": "LT-14", "units": 120}, QUOTED),
    "stock_reserve": ({"sku": "LT-14"}, {"reservation": "R-9", "status": "HELD"}),
    "purchase": ({"quote": "Q-31", "reservation": "R-9", "account": "ACC-77"}, None),
}
"""Each tool's arguments and result (None: it failed)."""
OVER_LIMIT = "PaymentError: [EPERM] purchase 150000 over the card limit 50000"


def _order(store: Store, error: str = OVER_LIMIT, reserved: dict[str, Any] | None = None) -> str:
    """A failed order run; ``purchase`` fails with ``error``; ``reserved``: what the
    reservation returned instead of ``CALLS``'s."""
    t, root, planner = new_trace_id(), new_span_id(), new_span_id()
    agent = {A.GEN_AI_OPERATION_NAME: "invoke_agent"}
    chat = {
        A.GEN_AI_OPERATION_NAME: "chat",
        A.GEN_AI_INPUT_MESSAGES: json.dumps([{"role": "user", "content": PROMPT}]),
        A.GEN_AI_OUTPUT_MESSAGES: json.dumps([{"role": "assistant", "content": json.dumps(PLAN)}]),
    }
    spans: list[list[Any]] = [
        make_span(trace_id=t, span_id=root, name="order laptops", duration_ns=100 * MS,
                  status="Error", status_message=f"pay: refused: {error}"),
        make_span(trace_id=t, span_id=planner, parent=root, name="invoke_agent planner",
                  start_ns=BASE_NS + MS, duration_ns=5 * MS, attrs=agent),
        make_span(trace_id=t, parent=planner, name="chat gpt-4o", start_ns=BASE_NS + 2 * MS,
                  attrs=chat),
    ]  # fmt: skip
    for i, (tool, (args, result)) in enumerate(CALLS.items()):
        if tool == "stock_reserve" and reserved is not None:
            result = reserved
        run, start = new_span_id(), BASE_NS + (10 + 10 * i) * MS
        status, message = ("Error", error) if result is None else ("Unset", "")
        attrs = {
            A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
            A.GEN_AI_TOOL_NAME: tool,
            A.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps(args),
        }
        if result is not None:
            attrs[A.GEN_AI_TOOL_CALL_RESULT] = json.dumps(result)
        spans += [
            make_span(trace_id=t, span_id=run, parent=root, name="invoke_agent executor",
                      start_ns=start, duration_ns=8 * MS, attrs=agent, status=status,
                      status_message=message),
            make_span(trace_id=t, parent=run, name=f"execute_tool {tool}", start_ns=start + MS,
                      attrs=attrs, status=status, status_message=message),
        ]  # fmt: skip
    store.insert_spans(spans_ipc(spans))
    return t


def _findings(store: Store, t: str) -> list[Any]:
    return PlanPropagation().detect(load_traces(store, "default", [t])[t])


def test_figures_computed_downstream_are_blamed_where_the_planners_number_entered(
    store: Store,
) -> None:
    # the objective (the prompt) names 120 in its notes: only the lineage ties it to the
    # refusal, which names neither 120 nor anything the purchase was called with
    (finding,) = _findings(store, _order(store))
    assert finding.step_id == "quote"
    assert finding.detail["pattern"] == "figures_downstream"
    assert finding.detail["values"] == ["120"]
    assert finding.detail["figures"] == ["150000", "50000"]
    assert finding.detail["failing_step"] == "pay"
    assert "'reserve'" in finding.explanation and "'pay' failed" in finding.explanation


def test_figures_from_several_carried_results_blame_no_step(store: Store) -> None:
    # the reservation also returned figures: which result the limit judged is not known
    reserved = {"reservation": "R-9", "status": "HELD", "units_left": 4}
    assert _findings(store, _order(store, reserved=reserved)) == []


def test_a_refusal_naming_no_computed_figure_is_not_the_planners(store: Store) -> None:
    # the world refused the account the objective states: nothing came out of an earlier step
    closed = "PaymentError: [EPERM] account ACC-77 closed"
    assert _findings(store, _order(store, error=closed)) == []

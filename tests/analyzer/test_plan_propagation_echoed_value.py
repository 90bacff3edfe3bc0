"""A check after success whose verdict names a value a step's tool answered back: a clinical
lab ships cold-chain samples by courier; the planner wrote another pickup day than the order's,
every task succeeds (the courier's booking echoes the day it was asked for, the lab notice
repeats it), then the app's own check reads the pickup through a tool call of its own and fails
naming the booked day. Real OpenTelemetry SDK spans in the GenAI conventions (no planscope SDK),
stored in a real store and loaded: a root without an objective (the planner's prompt becomes
it), a planner chat answering the plan, an app span per task over its model and tool calls,
the check under the root over its own tool call.

The day the booking returned is the day it was handed: an echo, not a measurement the booking
made that a later task then judged. The value entered where the planner handed it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode, Tracer
from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.plan_propagation import PlanPropagation
from planscope_collector.storage import Store

from tests.analyzer.conftest import otlp_rows
from tests.storage._spans import spans_ipc

pytestmark = pytest.mark.integration

PROMPT = "Ship the cold-chain blood samples from the Leiden lab by courier on 2027-03-08."


def _tool(tracer: Tracer, tool: str, args: dict[str, Any], result: dict[str, Any]) -> None:
    """One tool call as the GenAI conventions record it, successful."""
    with tracer.start_as_current_span(f"execute_tool {tool}") as span:
        span.set_attributes(
            {
                A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
                A.GEN_AI_TOOL_NAME: tool,
                A.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps(args),
                A.GEN_AI_TOOL_CALL_RESULT: json.dumps(result),
            }
        )


def _shipment(store: Store, day: str) -> str:
    """The run (the planner wrote pickup ``day``; the order asks for 2027-03-08), its check
    failing on the booked day; the trace id."""
    provider, memory = TracerProvider(), InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("lab-dispatch")
    plan = {
        "tasks": [
            {"id": "find_courier", "action": "find a cold-chain courier", "tool": "courier_search",
             "args": {"city": "Leiden", "service": "cold chain"}},
            {"id": "book_pickup", "action": "book the pickup", "tool": "book_pickup",
             "args": {"courier": "<from find_courier>", "day": day}},
            {"id": "notify_lab", "action": "tell the lab", "tool": "send_notice",
             "args": {"pickup": "<from book_pickup>", "day": day}},
        ],
    }  # fmt: skip
    booked = {"pickup": "PU-77", "courier": "CX-12 (Delta Cold Freight)", "day": day}
    calls: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
        "courier_search": ({"city": "Leiden", "service": "cold chain"}, {"courier": "CX-12"}),
        "book_pickup": ({"courier": "CX-12", "day": day}, booked),
        "send_notice": ({"pickup": "PU-77", "day": day}, {"sent": 3}),
    }
    reason = f"PU-77 collects on {day}; the samples ship on 2027-03-08"
    with tracer.start_as_current_span("ship samples") as root:
        with (
            tracer.start_as_current_span("plan shipment"),
            tracer.start_as_current_span("chat gpt-4o") as chat,
        ):
            chat.set_attributes(
                {
                    A.GEN_AI_OPERATION_NAME: "chat",
                    A.GEN_AI_INPUT_MESSAGES: json.dumps([{"role": "user", "content": PROMPT}]),
                    A.GEN_AI_OUTPUT_MESSAGES: json.dumps(
                        [{"role": "assistant", "content": json.dumps(plan)}]
                    ),
                }
            )
        for task, (tool, (args, result)) in zip(plan["tasks"], calls.items(), strict=True):
            with tracer.start_as_current_span(f"task {task['id']}"):
                # the executor's model call, then the tool call it asked for
                with tracer.start_as_current_span("chat gpt-4o") as turn:
                    turn.set_attribute(A.GEN_AI_OPERATION_NAME, "chat")
                _tool(tracer, tool, args, result)
        # the app's check: its own read of the pickup succeeds, its verdict fails
        with tracer.start_as_current_span("check pickup", record_exception=False) as check:
            _tool(tracer, "pickup_status", {"pickup": "PU-77"}, booked)
            check.set_status(Status(StatusCode.ERROR, f"ShipmentFailed: {reason}"))
        root.set_status(Status(StatusCode.ERROR, reason))
    provider.shutdown()
    spans = memory.get_finished_spans()
    store.insert_spans(spans_ipc(otlp_rows(spans)))
    return format(spans[0].context.trace_id, "032x")


def test_a_day_the_booking_echoed_entered_where_the_planner_handed_it(store: Store) -> None:
    # the check names the day the booking returned; the booking was handed that very day by
    # the planner, so it is no measurement the notice then judged: blamed at book_pickup
    t = _shipment(store, "2027-03-18")
    trace = load_traces(store, "default", [t])[t]
    assert trace.run is not None and trace.run.outcome == A.OUTCOME_FAILURE
    assert [s.step_id for s in trace.plan_steps] == ["find_courier", "book_pickup", "notify_lab"]
    tasks = [a for a in trace.attempts if a.step_id in {s.step_id for s in trace.plan_steps}]
    assert len(tasks) == 3 and all(a.succeeded for a in tasks)
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["pattern"]) == ("book_pickup", "check_names_plan_value")
    assert finding.detail["values"] == ["2027-03-18"]


def test_a_check_naming_only_the_orders_day_is_the_worlds(store: Store) -> None:
    # the planner wrote the order's day: the check's verdict names nothing the plan introduced
    t = _shipment(store, "2027-03-08")
    assert PlanPropagation().detect(load_traces(store, "default", [t])[t]) == []

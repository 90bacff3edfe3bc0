"""A plan written as a markdown bullet outline: a school books a class trip to a museum. The
planner answers one top-level bullet a step (``- coach: book a coach for 31 pupils (after:
...)``), its sub-bullets the call and the arguments (``- call: book_coach``, ``- day: ...``),
``{coach}`` an earlier step's result; a re-plan lists the steps done as ``- coach [done]:
CB-7``. The app runs one span a step attempt over one model call that runs the tools itself
(function calling inside the call), as the GenAI conventions record them: real OpenTelemetry
SDK spans (no planscope SDK) stored in a real store and loaded.

The outline's items are the steps: not a word of the title or of a goal that the executor's
messages also carry (``Trip plan for class 4B``: ``for`` is in most of them), nor lost when the
objective names one (``tickets``); a sub-bullet naming the tool is the step's tool, the others
its arguments, the closing ``(after: ...)`` its dependencies."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode, Tracer
from planscope import semconv as A
from planscope_analyzer import TraceData, load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector.storage import Store

from tests.analyzer.conftest import otlp_rows
from tests.storage._spans import spans_ipc

pytestmark = pytest.mark.integration

OBJECTIVE = "Take class 4B to the science museum on 2027-05-12 (tickets for 31 pupils)."

PLAN = """Trip plan for class 4B, revision 1
- coach: book a coach for 31 pupils from Elm Street school on 2027-05-12
  - call: book_coach
  - school: Elm Street
  - day: 2027-05-12
  - seats: 31
- tickets: buy the museum tickets for 31 pupils (after: coach)
  - call: buy_tickets
  - museum: Science Museum
  - day: 2027-05-12
  - pupils: 31
- lunch: order packed lunches for the class (after: tickets)
  - call: order_lunch
  - caterer: Green Deli
  - meals: 33
- letter: send the parents the trip letter (after: coach, tickets, lunch)
  - call: send_letter
  - booking: {coach}
  - tickets: {tickets}"""

REPLAN = """Trip plan for class 4B, revision 2
- coach [done]: CB-7
- tickets [done]: TK-3
- lunch: order packed lunches from another caterer (after: tickets)
  - call: order_lunch
  - caterer: Oak Kitchen
  - meals: 33
- letter: send the parents the trip letter (after: coach, tickets, lunch)
  - call: send_letter
  - booking: {coach}
  - tickets: {tickets}"""


Call = tuple[str, dict[str, Any], Any]
"""A tool call: the tool, its arguments, its result (an exception: the call failed)."""


def _messages(role: str, text: str) -> str:
    """Messages in the GenAI conventions' parts format."""
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def _call(tracer: Tracer, asked: str, answer: str, calls: list[Call]) -> None:
    """One model call that runs the tools it asks for inside it (``calls``: tool, arguments,
    result; an exception a failed call)."""
    with tracer.start_as_current_span("generate_content model-x") as span:
        span.set_attributes(
            {
                A.GEN_AI_OPERATION_NAME: A.OP_GENERATE_CONTENT,
                A.GEN_AI_INPUT_MESSAGES: _messages("user", asked),
                A.GEN_AI_OUTPUT_MESSAGES: _messages("assistant", answer),
            }
        )
        for tool, args, result in calls:
            with tracer.start_as_current_span(f"execute_tool {tool}") as call:
                call.set_attributes(
                    {
                        A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
                        A.GEN_AI_TOOL_NAME: tool,
                        A.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps(args),
                    }
                )
                if isinstance(result, Exception):
                    call.set_status(Status(StatusCode.ERROR, str(result)))
                else:
                    call.set_attribute(A.GEN_AI_TOOL_CALL_RESULT, json.dumps(result))


def _step(tracer: Tracer, step: str, goal: str, calls: list[Call], done: str) -> None:
    """The app's span for one attempt of ``step``: the executor told the step and its call."""
    tool, args, _ = calls[0]
    asked = f"Step {step} (attempt 1): {goal}\nCall: {tool} {json.dumps(args)}"
    with tracer.start_as_current_span(f"step {step}") as span:
        span.set_attribute("trip.step", step)
        _call(tracer, asked, f"{'DONE' if done else 'STALLED'} | {done} |", calls)
        if not done:
            span.set_status(Status(StatusCode.ERROR, "stalled"))


def _trip(store: Store, *, stuck: bool = False) -> TraceData:
    """The trip's run, loaded: the plan, coach and tickets; with ``stuck`` the tickets' order
    stays pending poll after poll until the executor gives up; else lunch's caterer is closed,
    a re-plan moves it to another, and the trip ends well."""
    provider, memory = TracerProvider(), InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("trip-app")
    coach: Call = ("book_coach", {"school": "Elm Street", "day": "2027-05-12", "seats": 31}, "CB-7")
    order = {"museum": "Science Museum", "day": "2027-05-12", "pupils": 31}
    pending = {"order": "TK-3", "state": "pending"}
    polls: list[Call] = [("ticket_status", {"order": "TK-3"}, pending)] * (9 if stuck else 1)
    with tracer.start_as_current_span("class trip 4B") as root:
        with tracer.start_as_current_span("plan revision 1"):
            _call(tracer, OBJECTIVE, PLAN, [])
        _step(tracer, "coach", "book a coach for 31 pupils from Elm Street school", [coach], "CB-7")
        tickets: list[Call] = [("buy_tickets", order, pending), *polls]
        if stuck:
            _step(tracer, "tickets", "buy the museum tickets for 31 pupils", tickets, "")
            root.set_status(Status(StatusCode.ERROR, "the tickets never came"))
        else:
            tickets.append(("ticket_status", {"order": "TK-3"}, {"order": "TK-3", "state": "paid"}))
            _step(tracer, "tickets", "buy the museum tickets for 31 pupils", tickets, "TK-3")
            closed: Call = (
                "order_lunch",
                {"caterer": "Green Deli", "meals": 33},
                ValueError("closed"),
            )
            _step(tracer, "lunch", "order packed lunches for the class", [closed], "")
            with tracer.start_as_current_span("plan revision 2"):
                _call(tracer, f"{OBJECTIVE}\nGreen Deli is closed.", REPLAN, [])
            lunch: Call = ("order_lunch", {"caterer": "Oak Kitchen", "meals": 33}, "LU-9")
            _step(tracer, "lunch", "order packed lunches from another caterer", [lunch], "LU-9")
            letter: Call = ("send_letter", {"booking": "CB-7", "tickets": "TK-3"}, "sent")
            _step(tracer, "letter", "send the parents the trip letter", [letter], "sent")
    provider.shutdown()
    spans = memory.get_finished_spans()
    store.insert_spans(spans_ipc(otlp_rows(spans)))
    t = format(spans[0].context.trace_id, "032x")
    return load_traces(store, "default", [t])[t]


def test_an_outlines_items_are_the_steps_with_their_calls_and_dependencies(store: Store) -> None:
    trace = _trip(store)
    first, second = sorted(trace.plans, key=lambda p: p.version)
    steps = json.loads(first.json)
    assert [(s["id"], s["tool"]) for s in steps] == [
        ("coach", "book_coach"),
        ("tickets", "buy_tickets"),
        ("lunch", "order_lunch"),
        ("letter", "send_letter"),
    ]
    assert steps[0]["args"] == {"school": "Elm Street", "day": "2027-05-12", "seats": 31}
    assert steps[3]["depends_on"] == ["coach", "tickets", "lunch"]
    # the re-plan keeps the done steps' names: its later attempts bind to its steps
    assert [s["id"] for s in json.loads(second.json)] == ["coach", "tickets", "lunch", "letter"]
    steps_of = {s["id"] for s in steps}
    bound = [(a.step_id, a.plan_version, a.succeeded) for a in trace.attempts]
    assert [b for b in bound if b[0] in steps_of] == [
        ("coach", 1, True),
        ("tickets", 1, True),
        ("lunch", 1, False),
        ("lunch", 2, True),
        ("letter", 2, True),
    ]
    assert RunawayLoop().detect(trace) == []


def test_a_poll_stuck_in_a_step_the_objective_names_is_that_steps_loop(store: Store) -> None:
    trace = _trip(store, stuck=True)
    assert [s.step_id for s in trace.plan_steps] == ["coach", "tickets", "lunch", "letter"]
    (finding,) = RunawayLoop().detect(trace)
    assert (finding.step_id, finding.component) == ("tickets", "ticket_status")

"""A plan whose steps write their arguments as a URL query string (``k=v&k2=v2``, form
encoded: ``+`` a space, ``%26`` an ampersand): a community orchestra's rehearsal desk, plain
GenAI spans from the real OTel SDK, stored in the real chDB store and loaded for real. The
planner answers a CSV table with a header; one executor run per step makes its tool call;
then the app's own rota check, an agent run outside the plan that calls no tool, fails naming
the day the hall was booked for.

The query string's ``&`` separates arguments: read whole (``hall=ref:find_hall&day=...`` one
value), the day the planner wrote was no value of the plan, and the check's verdict on it was
tied to nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode
from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.plan_propagation import PlanPropagation
from planscope_collector.storage import Store

from tests.analyzer.conftest import otlp_rows
from tests.storage._spans import spans_ipc

pytestmark = pytest.mark.integration

PROMPT = "Book a rehearsal hall in Leeds for 60 players and their percussion for 2027-05-11."


def _plan(day: str) -> str:
    return (
        "n,step,tool,arguments,purpose\n"
        "1,find_hall,search_halls,city=Leeds&seats=60,Find a hall that seats the orchestra\n"
        f"2,book_hall,reserve_hall,hall=ref:find_hall&day={day},Book the hall for the day\n"
        f"3,hire_timpani,hire_instrument,supplier=Kettle+%26+Drum&day={day},Hire the timpani\n"
        "4,notify_players,send_notice,list=tutti&hall=ref:find_hall,Tell the players\n"
    )


def _rehearsal(store: Store, day: str, verdict: str) -> str:
    """A rehearsal booking whose four steps work (the planner wrote ``day``), then the rota
    check fails saying ``verdict``; the trace id."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("rehearsal-desk")
    agent = {A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT}
    # step -> (tool, arguments, result)
    calls: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
        "find_hall": ("search_halls", {"city": "Leeds", "seats": 60}, {"hall": "HALL-LDS-12"}),
        "book_hall": ("reserve_hall", {"hall": "HALL-LDS-12", "day": day}, {"booking": "BK-4417"}),
        "hire_timpani": ("hire_instrument", {"supplier": "Kettle & Drum", "day": day}, {"n": 4}),
        "notify_players": ("send_notice", {"list": "tutti", "hall": "HALL-LDS-12"}, {"sent": 60}),
    }
    with tracer.start_as_current_span("rehearsal desk") as root:
        with tracer.start_as_current_span("invoke_agent planner", attributes=agent):
            messages = [{"role": "user", "content": PROMPT}]
            answer = [{"role": "assistant", "content": _plan(day)}]
            with tracer.start_as_current_span(
                "chat gpt-4o",
                attributes={
                    A.GEN_AI_OPERATION_NAME: "chat",
                    A.GEN_AI_INPUT_MESSAGES: json.dumps(messages),
                    A.GEN_AI_OUTPUT_MESSAGES: json.dumps(answer),
                },
            ):
                pass
        for n, (step, (tool, args, result)) in enumerate(calls.items(), 1):
            with tracer.start_as_current_span("invoke_agent executor", attributes=agent):
                # the executor is told its step, as a planner-executor app tells it
                order = [{"role": "user", "content": f"Step {n}: {step}\nCall: {tool}"}]
                with tracer.start_as_current_span(
                    "chat gpt-4o",
                    attributes={
                        A.GEN_AI_OPERATION_NAME: "chat",
                        A.GEN_AI_INPUT_MESSAGES: json.dumps(order),
                    },
                ):
                    pass
                with tracer.start_as_current_span(
                    f"execute_tool {tool}",
                    attributes={
                        A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
                        A.GEN_AI_TOOL_NAME: tool,
                        A.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps(args),
                        A.GEN_AI_TOOL_CALL_RESULT: json.dumps(result),
                    },
                ):
                    pass
        with tracer.start_as_current_span(
            "invoke_agent rota_check", attributes=agent, record_exception=False
        ) as check:
            check.set_status(Status(StatusCode.ERROR, verdict))
        root.set_status(Status(StatusCode.ERROR, verdict))
        trace_id = format(root.get_span_context().trace_id, "032x")
    store.insert_spans(spans_ipc(otlp_rows(list(exporter.get_finished_spans()))))
    provider.shutdown()
    return trace_id


def _findings(store: Store, t: str, day: str) -> list[Any]:
    trace = load_traces(store, "default", [t])[t]
    assert trace.run is not None and trace.run.outcome == A.OUTCOME_FAILURE
    (plan,) = trace.plans
    steps = {s["id"]: s.get("args") for s in json.loads(plan.json)}
    # the query strings read pair by pair, form-decoded
    assert steps["book_hall"] == {"hall": "ref:find_hall", "day": day}
    assert steps["hire_timpani"] == {"supplier": "Kettle & Drum", "day": day}
    return PlanPropagation().detect(trace)


def test_a_checks_verdict_on_a_day_the_plans_query_string_wrote(store: Store) -> None:
    # the planner wrote another day than the prompt's; the rota check, which calls no tool,
    # names it: the plan's value, blamed where it entered
    verdict = "rota check: BK-4417 is for 2027-05-14, the rota rehearses on 2027-05-11"
    (finding,) = _findings(store, _rehearsal(store, "2027-05-14", verdict), "2027-05-14")
    assert finding.step_id == "book_hall"
    assert finding.detail["values"] == ["2027-05-14"]


def test_a_checks_verdict_on_the_asked_day_is_the_worlds(store: Store) -> None:
    # the day is the prompt's, as the planner wrote it: the check found the world changed
    verdict = "rota check: the hall closes for repairs on 2027-05-11"
    assert _findings(store, _rehearsal(store, "2027-05-11", verdict), "2027-05-11") == []

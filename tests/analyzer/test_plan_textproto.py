"""A plan written as a Protocol Buffers text-format message, as an app whose services speak
protobuf asks its planner for one: a touring theatre's load-in at a new venue, plain GenAI
spans from the real OTel SDK, stored in the real chDB store and loaded for real. The planner's
answer holds the message in a fenced ``textproto`` block (``#`` comments, a repeated ``task``
message per step, its arguments a map field written as repeated ``param { key: ... }``
entries with typed values, one task with a single entry, one ``<...>``-delimited); one
executor run per step attempt (the app names the step on it, ``tour.step``) makes its tool
call; the app's own check after the last step (an agent run no plan step names, no tool call)
fails on the day the plan gave.

Before the structure path read text-format messages (observed._textprotos), the message's
``name: value`` lines were read by the generic name scan: the plan held two steps, ``booking``
(a word of the prompt) and ``inspect``, with none of the tasks' arguments as written, and the
check's verdict on the planner's day was blamed at ``booking``, no step of the plan."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import Status, StatusCode, Tracer
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.plan_propagation import PlanPropagation
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

PROMPT = (
    "Load the touring set of 'The Lighthouse Keeper' into the Corn Exchange: hire the truck, "
    "book the venue's crew for the get-in on 2027-03-05 (the venue contract's day), rig the "
    "flying bars, then get the safety inspection."
)


def _message(day: str) -> str:
    message = f"""# proto-file: tour/v2/loadin.proto
# proto-message: tour.v2.LoadIn
production: "The Lighthouse Keeper"
venue: 'Corn Exchange'
task {{
  name: "truck"
  note: "a 7.5 t box truck from the depot"
  call: "hire_truck"
  param {{ key: "depot" value: "Northgate" }}
  param {{ key: "axles" int_value: 2 }}
}}
task {{
  name: "crew"
  note: "the venue's crew for the get-in"
  needs: "truck"
  call: "book_crew"
  param {{ key: "date" value: "{day}" }}
  param {{ key: "hands" int_value: 6 }}
  param {{ key: "truck" ref: "truck.truck_id" }}
}}
task <
  name: "rig"
  note: "rig the flying bars; " "weights checked twice"
  needs: ["truck", "crew"]
  call: "rig_bars"
  param {{ key: "load_kg" double_value: 412.5 }}
>
task {{
  name: "inspect"
  needs: "rig"
  call: "book_inspection"
  param {{ key: "rig" ref: "rig.rig_id" }}, param {{ key: "urgent" bool_value: true }};
}}
"""
    return f"The load-in, as the booking service reads it:\n\n```textproto\n{message}```\n"


CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "truck": ("hire_truck", {"depot": "Northgate", "axles": 2}),
    "crew": ("book_crew", {"hands": 6, "truck": "TR-31"}),
    "rig": ("rig_bars", {"load_kg": 412.5}),
    "inspect": ("book_inspection", {"rig": "RG-4", "urgent": True}),
}
"""Each step's tool call (the crew's also gets the plan's day)."""


def _loadin(store: Store, day: str, check_fails: bool) -> str:
    def play(tracer: Tracer, root: Any) -> None:
        genai.plan(tracer, "tour_planner", PROMPT, _message(day))
        for step, (tool, args) in CALLS.items():
            if step == "crew":
                args = {**args, "date": day}
            genai.attempt(tracer, "stage_manager", ("tour.step", step), f"Do {step}.", tool, args)
        # the app's own check after the last step: an agent run no plan step names, its model
        # asked to judge the crew booking against the venue contract (no tool call)
        with tracer.start_as_current_span(
            "invoke_agent contract_checker", attributes=genai.AGENT
        ) as check:
            genai.chat(tracer, "Does the crew booking match the Corn Exchange contract?")
            if check_fails:
                said = f"the crew is booked for {day}; the venue contract says 2027-03-05"
                check.set_status(Status(StatusCode.ERROR, said))
                root.set_status(Status(StatusCode.ERROR, said))

    return genai.played(store, "tour-desk", "load-in Corn Exchange", play)


def test_a_textproto_plans_repeated_messages_are_its_steps_with_tools_and_arguments(
    store: Store,
) -> None:
    t = _loadin(store, "2027-03-05", check_fails=False)
    trace = load_traces(store, "default", [t])[t]
    (plan,) = trace.plans
    steps = json.loads(plan.json)
    # on the branch's start: ['booking', 'inspect']
    assert [s["id"] for s in steps] == ["truck", "crew", "rig", "inspect"]
    assert [s["tool"] for s in steps] == ["hire_truck", "book_crew", "rig_bars",
                                          "book_inspection"]  # fmt: skip
    # the map's entries are the arguments, typed (an earlier step's output a reference)
    assert steps[1]["args"] == {"date": "2027-03-05", "hands": 6, "truck": "truck.truck_id"}
    assert steps[2]["args"] == {"load_kg": 412.5}  # a map of one entry is still a map
    assert steps[3]["args"] == {"rig": "rig.rig_id", "urgent": True}
    assert steps[2]["depends_on"] == ["truck", "crew"]
    assert not PlanPropagation().detect(trace)


def test_a_check_on_the_day_a_textproto_plan_gave_is_blamed_where_the_day_entered(
    store: Store,
) -> None:
    # the planner wrote 2027-03-12, the venue contract (the prompt) says 2027-03-05: every
    # step works, then the app's check fails naming the plan's day
    t = _loadin(store, "2027-03-12", check_fails=True)
    trace = load_traces(store, "default", [t])[t]
    (finding,) = PlanPropagation().detect(trace)  # on the branch's start: at 'booking'
    assert finding.step_id == "crew"
    assert finding.detail["values"] == ["2027-03-12"]

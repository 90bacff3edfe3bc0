"""A plan written as an iCalendar (RFC 5545) of VTODOs, as an app whose diary runs on CalDAV asks
its planner for one: a roofer's storm repair, plain GenAI spans from the real OTel SDK, stored in
the real chDB store and loaded for real. The planner's answer holds the calendar in a fenced
block (CRLF line ends, content lines folded at 75 octets, ``NAME;PARAM=value:value``, text
escapes, the tool as ``X-CALL``, arguments as ``X-WITH-<KEY>``); one executor run per step attempt
(the app names the step on it, ``roof.step``) makes its tool call; the app's own check after the
last step (an agent run no plan step names, no tool call) fails on the day the plan gave.

Before the structure path read content-line components (observed._components), the lines were
read as URI lines, one list per property (``UID:scaffold`` a URI of scheme ``UID``): the plan
held the step ids alone, no tool and no arguments, so the day the planner wrote was in no plan
and the check's verdict on it was traced to no step (no finding)."""

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
    "Repair the storm-damaged roof at 14 Quarry Lane: survey it, put up the scaffold on "
    "2027-04-12 (the street permit's day), order the slates, book the roofers."
)


def _fold(line: str) -> str:
    """A content line folded at 75 octets (RFC 5545 3.1), CRLF and one blank."""
    parts = [line[:75]] + [line[i : i + 74] for i in range(75, len(line), 74)]
    return "\r\n ".join(parts)


def _calendar(day: str) -> str:
    todos = [
        ("survey", "survey the roof", "book_survey", {"ADDRESS": "14 Quarry Lane"}, ""),
        ("scaffold", f"put up the scaffold on {day}", "hire_scaffold",
         {"ADDRESS": "14 Quarry Lane", "START": day, "LIFTS;VALUE=INTEGER": "3"}, "survey"),
        ("slates", "order the slates the survey counted", "order_slates",
         {"COUNT;VALUE=REF": "survey.slates", "KIND": "Welsh blue\\, 500 x 250"}, "scaffold"),
        ("roofers", "book the roofers for the scaffold's days", "book_roofers",
         {"SCAFFOLD;VALUE=REF": "scaffold.scaffold_id", "CREW": "2"}, "slates"),
    ]  # fmt: skip
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Slate & Sons//Jobs//EN"]
    for uid, summary, tool, args, after in todos:
        lines += [
            "BEGIN:VTODO",
            f"UID:{uid}",
            f"SUMMARY:{summary}",
            "DESCRIPTION:" + "Work the crew does on site as the job sheet says\\, no sooner "
            "than the permit and the weather allow.",
            f"X-CALL:{tool}",
            *(f"X-WITH-{k}:{v}" for k, v in args.items()),
            *([f"RELATED-TO;RELTYPE=DEPENDS-ON:{after}"] if after else []),
            "END:VTODO",
        ]
    lines.append("END:VCALENDAR")
    calendar = "\r\n".join(_fold(line) for line in lines)
    return f"The job, as a calendar for the diary:\n\n```ics\n{calendar}\n```"


CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "survey": ("book_survey", {"address": "14 Quarry Lane"}),
    "scaffold": ("hire_scaffold", {"address": "14 Quarry Lane", "lifts": 3}),
    "slates": ("order_slates", {"count": 140, "kind": "Welsh blue, 500 x 250"}),
    "roofers": ("book_roofers", {"scaffold": "SC-88", "crew": 2}),
}
"""Each step's tool call (the scaffold's also gets the plan's day)."""


def _job(store: Store, day: str, check_fails: bool) -> str:
    def play(tracer: Tracer, root: Any) -> None:
        genai.plan(tracer, "job_planner", PROMPT, _calendar(day))
        for step, (tool, args) in CALLS.items():
            if step == "scaffold":
                args = {**args, "start": day}
            genai.attempt(tracer, "roofer", ("roof.step", step), f"Do {step}.", tool, args)
        # the app's own check after the last step: an agent run no plan step names, its model
        # asked to judge what stands against the permit (no tool call)
        with tracer.start_as_current_span(
            "invoke_agent permit_checker", attributes=genai.AGENT
        ) as check:
            genai.chat(tracer, "Does what stands at 14 Quarry Lane match the street permit?")
            if check_fails:
                said = f"scaffold SC-88 stands from {day}; the street permit covers 2027-04-12"
                check.set_status(Status(StatusCode.ERROR, said))
                root.set_status(Status(StatusCode.ERROR, said))

    return genai.played(store, "roof-jobs", "storm repair 14 Quarry Lane", play)


def test_an_icalendar_plans_todos_are_its_steps_with_their_tools_and_arguments(
    store: Store,
) -> None:
    t = _job(store, "2027-04-12", check_fails=False)
    trace = load_traces(store, "default", [t])[t]
    (plan,) = trace.plans
    steps = json.loads(plan.json)
    assert [s["id"] for s in steps] == ["survey", "scaffold", "slates", "roofers"]
    # on the branch's start: [''] * 4 and no arguments (the lines read as URIs)
    assert [s["tool"] for s in steps] == ["book_survey", "hire_scaffold", "order_slates",
                                          "book_roofers"]  # fmt: skip
    # parameters dropped, a whole number a number, escapes undone, a folded line joined
    assert steps[1]["args"] == {"ADDRESS": "14 Quarry Lane", "START": "2027-04-12", "LIFTS": 3}
    assert steps[2]["args"]["KIND"] == "Welsh blue, 500 x 250"
    assert not PlanPropagation().detect(trace)


def test_a_check_on_the_day_an_icalendar_plan_gave_is_blamed_where_the_day_entered(
    store: Store,
) -> None:
    # the planner wrote 2027-04-19, the permit (the prompt) says 2027-04-12: every step works,
    # then the app's check fails naming the plan's day
    t = _job(store, "2027-04-19", check_fails=True)
    trace = load_traces(store, "default", [t])[t]
    (finding,) = PlanPropagation().detect(trace)  # on the branch's start: no finding
    assert finding.step_id == "scaffold"
    assert finding.detail["values"] == ["2027-04-19"]

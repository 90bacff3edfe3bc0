"""A plan written as a Mermaid gantt chart, as an app that draws its schedule with Mermaid asks
its planner for one: a touring theatre company's get-in at a venue, plain GenAI spans from the
real OTel SDK, stored in the real chDB store and loaded for real. The planner's answer holds the
chart in a fenced ```` ```mermaid ```` block (``section`` lines, one task a line ``Title :[tags,]
id, start, length``, a later one ``after <id>``, the tool and its JSON arguments on a ``%% call:``
comment under the task); one executor run per step attempt (the app names the step on it,
``tour.step``, and asks it the task's title) makes its tool call; the app's own check after the
last step (an agent run no plan step names, no tool call) fails on the day the plan gave.

Before the structure path read a gantt chart's tasks (observed._gantt_tasks), no reader read the
chart and the plan was read from the answer's words: the first word of each task's title that
the step's attempts carry (they are asked the title) came before the id, so the steps were named
``Hire``, ``Rig``, ... and a finding was blamed on a title's first word, not on the task."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import Status, StatusCode, Tracer
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.plan_propagation import PlanPropagation
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

PROMPT = (
    "Get 'The Lantern Keeper' into the Corn Exchange, Wells: the venue's loading slot is "
    "2027-03-15; hire the truck, rig the flying bars, focus the lights, then open the house."
)

TASKS: list[tuple[str, str, str, str, dict[str, Any]]] = [
    ("Hire the 7.5 t truck from Camden", "truck", "{day}, 1d", "hire_truck",
     {"depot": "Camden", "size": "7.5t", "day": "{day}"}),
    ("Rig the flying bars with the venue crew", "rig", "after truck, 1d", "book_riggers",
     {"venue": "Corn Exchange", "bars": 6, "truck": "@truck.booking"}),
    ("Focus the lights for act one", "focus", "after rig, 1d", "focus_lights",
     {"plot": "LK-act1", "rig": "@rig.crew_id"}),
    ("Open the house", "house", "after focus, 1d", "open_house",
     {"venue": "Corn Exchange", "seats": 212}),
]  # fmt: skip
"""Each task: its title, id, start and length, tool and arguments (``{day}``: the plan's day)."""


def _chart(day: str, done: frozenset[str] = frozenset()) -> str:
    lines = ["gantt", "    title The Lantern Keeper get-in", "    dateFormat YYYY-MM-DD"]
    for i, (title, task, when, tool, args) in enumerate(TASKS):
        if i in (0, 2):
            lines.append(f"    section {'Transport' if i == 0 else 'Stage'}")
        tags = "done, " if task in done else ""
        lines.append(f"    {title} :{tags}{task}, {when.format(day=day)}")
        call = json.dumps({k: v.format(day=day) if isinstance(v, str) else v
                           for k, v in args.items()})  # fmt: skip
        lines.append(f"    %% call: {tool} {call}")
    chart = "\n".join(lines)
    return f"The get-in, as a chart for the tour book:\n\n```mermaid\n{chart}\n```"


def _call(task: str, day: str) -> tuple[str, str, dict[str, Any]]:
    title, _, _, tool, args = next(t for t in TASKS if t[1] == task)
    given = {
        k: v.format(day=day) if isinstance(v, str) and "{" in v else v for k, v in args.items()
    }
    return title, tool, given


def _get_in(store: Store, day: str, check_fails: bool) -> str:
    def play(tracer: Tracer, root: Any) -> None:
        genai.plan(tracer, "tour_planner", PROMPT, _chart(day))
        for _, task, _, _, _ in TASKS:
            title, tool, args = _call(task, day)
            genai.attempt(tracer, "stage_hand", ("tour.step", task), f"{title} (attempt 1).",
                          tool, args)  # fmt: skip
        with tracer.start_as_current_span(
            "invoke_agent venue_checker", attributes=genai.AGENT
        ) as check:
            genai.chat(tracer, "Does the truck's day match the venue's loading slot?")
            if check_fails:
                said = f"truck booked for {day}; the venue's loading slot is 2027-03-15"
                check.set_status(Status(StatusCode.ERROR, said))
                root.set_status(Status(StatusCode.ERROR, said))

    return genai.played(store, "tour-desk", "get-in Corn Exchange", play)


def test_a_gantt_charts_tasks_are_steps_by_their_ids_with_tools_and_arguments(
    store: Store,
) -> None:
    t = _get_in(store, "2027-03-15", check_fails=False)
    trace = load_traces(store, "default", [t])[t]
    (plan,) = trace.plans
    steps = json.loads(plan.json)
    # on the branch's start: ['Hire', 'day', ..., 'Open'] (words of the titles and arguments)
    assert [s["id"] for s in steps] == ["truck", "rig", "focus", "house"]
    assert [s["tool"] for s in steps] == ["hire_truck", "book_riggers", "focus_lights",
                                          "open_house"]  # fmt: skip
    assert steps[0]["args"] == {"depot": "Camden", "size": "7.5t", "day": "2027-03-15"}
    assert steps[2]["depends_on"] == ["rig"]  # ``after rig``
    assert not PlanPropagation().detect(trace)


def test_a_check_on_the_day_a_gantt_plan_gave_is_blamed_on_the_tasks_id(store: Store) -> None:
    # the planner wrote 2027-03-22, the venue (the prompt) says 2027-03-15: every step works,
    # then the app's check fails naming the plan's day
    t = _get_in(store, "2027-03-22", check_fails=True)
    trace = load_traces(store, "default", [t])[t]
    (finding,) = PlanPropagation().detect(trace)
    assert finding.step_id == "truck"  # on the branch's start: 'Hire'
    assert finding.detail["values"] == ["2027-03-22"]


def test_a_loop_in_a_gantt_plans_step_is_blamed_on_the_tasks_id(store: Store) -> None:
    def play(tracer: Tracer, root: Any) -> None:
        genai.plan(tracer, "tour_planner", PROMPT, _chart("2027-03-15"))
        title, tool, args = _call("truck", "2027-03-15")
        genai.attempt(tracer, "stage_hand", ("tour.step", "truck"), f"{title} (attempt 1).",
                      tool, args)  # fmt: skip
        title, tool, args = _call("rig", "2027-03-15")
        for n in range(1, 7):
            said = f"CREW_BUSY: call {n} refused"
            genai.attempt(tracer, "stage_hand", ("tour.step", "rig"), f"{title} (attempt {n}).",
                          tool, {**args, "try": n}, error=said)  # fmt: skip
        root.set_status(Status(StatusCode.ERROR, "the riggers never came"))

    t = genai.played(store, "tour-desk", "get-in Corn Exchange", play)
    trace = load_traces(store, "default", [t])[t]
    findings = RunawayLoop().detect(trace)
    assert findings
    assert {f.step_id for f in findings} == {"rig"}  # on the branch's start: 'Rig'

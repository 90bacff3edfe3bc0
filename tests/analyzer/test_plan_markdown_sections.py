"""A plan written as markdown sections (a heading per step after its counter, ``## Task 2:
hold-date``, a sentence of purpose, the step's call as a fenced JSON object, ``"@<step>"`` an
earlier step's result) inside a structured answer's string field: an orchestra's tour date,
plain GenAI spans from the real OTel SDK, stored in the real chDB store and loaded for real.
Each executor run is handed its step's section only (no app names the step on it).

Before the markdown-sections reader no list of steps was read from such an answer: the
sections' objects are one a section, no list, so no plan was read, the loop was found at no
step and no wrong value was traced (docs/analyzers.md, sealed-63)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import Status, StatusCode, Tracer
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.plan_propagation import PlanPropagation
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector import observed
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

PROMPT = (
    "Objective: the Aurora Quartet's concert on 2027-05-14.\n"
    'Booking: {"ensemble": "Aurora Quartet", "city": "Lyon", "date": "2027-05-14"}'
)

SECTIONS = {
    "find-hall": ("Find a hall for a string quartet in {city}.", "hall_search", {"city": "{city}"}),
    "hold-date": (
        "Hold the hall for the concert night.",
        "hall_hold",
        {"hall": "@find-hall", "date": "2027-05-14"},
    ),
    "book-tuner": (
        "Book the piano tuner for the afternoon.",
        "tuner_book",
        {"hall": "@find-hall", "hold": "@hold-date"},
    ),
}


def _markdown(city: str, steps: list[str], first: int = 1) -> str:
    """The plan document: a title, then a section per step (``## Task <n>: <step>``)."""
    parts = ["# Tour plan, Aurora Quartet"]
    for n, step in enumerate(steps, first):
        purpose, call, args = SECTIONS[step]
        written = {k: v.format(city=city) for k, v in args.items()}
        body = json.dumps({"call": call, "with": written})
        parts.append(f"## Task {n}: {step}\n{purpose.format(city=city)}\n```json\n{body}\n```")
    return "\n\n".join(parts) + "\n"


def _answer(city: str, steps: list[str], first: int = 1) -> str:
    """The planner's structured answer: the document in a string field."""
    return json.dumps({"revision": first, "plan_document": _markdown(city, steps, first)})


def _attempt(tracer: Tracer, n: int, step: str, args: dict[str, Any], error: str = "") -> None:
    """One executor run handed only its step's section (results filled in)."""
    purpose, call, _ = SECTIONS[step]
    section = f"## Task {n}: {step}\n{purpose}\n```json\n{json.dumps(args)}\n```"
    asked = f"Tour plan, task {n}.\n\n{section}"
    genai.attempt(tracer, "stage_hand", None, asked, call, args, error)


def _tour(store: Store, play: Any) -> str:
    return genai.played(store, "tour-office", "tour date", play)


def test_a_loop_is_the_section_whose_call_repeats(store: Store) -> None:
    # the hall's booking desk fails five times with other errors; the app hands the same
    # section again each time and gives up
    errors = [f"desk line {n} busy" for n in (3, 1, 4, 2)] + ["desk closed for the night"]

    def play(tracer: Tracer, root: Any) -> None:
        genai.plan(tracer, "tour_planner", PROMPT, _answer("Lyon", list(SECTIONS)))
        _attempt(tracer, 1, "find-hall", {"city": "Lyon"})
        for error in errors:
            _attempt(tracer, 2, "hold-date", {"hall": "H-LYO-4", "date": "2027-05-14"}, error)
        root.set_status(Status(StatusCode.ERROR, errors[-1]))

    t = _tour(store, play)
    trace = load_traces(store, "default", [t])[t]
    (plan,) = trace.plans
    steps = json.loads(plan.json)
    assert [s["id"] for s in steps] == ["find-hall", "hold-date", "book-tuner"]
    assert [s["tool"] for s in steps] == ["hall_search", "hall_hold", ""]
    # the arguments as written, a reference to an earlier step's result kept
    assert steps[1]["args"] == {"hall": "@find-hall", "date": "2027-05-14"}
    assert {a.step_id for a in trace.attempts if a.status == "error"} == {"hold-date"}
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "hold-date"


def test_a_wrong_value_is_traced_to_the_section_that_wrote_it(store: Store) -> None:
    # the planner writes Lille for Lyon into the first section; the hall found there is
    # refused by the next step's call, naming the city it lies in
    refused = "hall H-LIL-7 is in Lille, the concert is in Lyon"

    def play(tracer: Tracer, root: Any) -> None:
        genai.plan(tracer, "tour_planner", PROMPT, _answer("Lille", list(SECTIONS)))
        _attempt(tracer, 1, "find-hall", {"city": "Lille"})
        _attempt(tracer, 2, "hold-date", {"hall": "H-LIL-7", "date": "2027-05-14"}, refused)
        root.set_status(Status(StatusCode.ERROR, f"hold-date refused: {refused}"))

    t = _tour(store, play)
    trace = load_traces(store, "default", [t])[t]
    assert [s.step_id for s in trace.plan_steps] == ["find-hall", "hold-date", "book-tuner"]
    (finding,) = PlanPropagation().detect(trace)
    assert finding.step_id == "find-hall"


def test_sections_that_state_no_call_each_are_no_plan() -> None:
    # a report with sections (no object in one, two in another) and a document whose step
    # headings have a heading of another level among them: no list of steps
    report = '# Report\n## Summary\nAll done.\n## Calls\n```json\n{"call": "a"}\n```\n'
    two = '## 1. a\n{"call": "x"}\n{"call": "y"}\n## 2. b\n{"call": "z"}\n'
    mixed = '## 1. a\n{"call": "x"}\n### note\nsee below\n## 2. b\n{"call": "z"}\n'
    assert [list(observed._sections(x)) for x in (report, two, mixed)] == [[], [], []]
    (items,) = observed._sections(_markdown("Lyon", list(SECTIONS)))
    assert [(i[""], i["call"]) for i in items] == [
        ("find-hall", "hall_search"),
        ("hold-date", "hall_hold"),
        ("book-tuner", "tuner_book"),
    ]
    assert items[0]["goal"] == "Find a hall for a string quartet in Lyon."

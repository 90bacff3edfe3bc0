"""A plan written as a BPMN 2.0 process (Camunda 8 / Zeebe service tasks joined by sequence
flows, a task's ``zeebe:taskDefinition type`` the job it runs, its ``zeebe:input`` mappings FEEL
literals or ``=task.field`` references; a re-plan's settled results as process-level
``zeebe:property`` lines): an aircraft hangar's line check on a regional turboprop, plain GenAI
spans from the real OTel SDK, stored in the real chDB store and loaded for real. The planner's
answer is a structured output whose one field holds the XML; one executor run per task attempt
(the app names the step on it, ``hangar.step``) is told its task, job type and call, and makes
the call.

No reader read BPMN: the structure path read the task elements' ids in the order written
(``borescope``, ``parts``, ``release``, ``bay``), not the order the flows run them (on the
branch's start both stored tests fail there), and a re-plan's property stayed a reference."""

from __future__ import annotations

import json
from html import escape
from itertools import pairwise
from typing import Any

import pytest
from opentelemetry.trace import Status, StatusCode, Tracer
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector import _bpmn
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

PROMPT = "Line check for ATR 72 tail OH-ATK before its 06:10 departure on 2027-04-14."

_HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
    'xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="defs" '
    'targetNamespace="http://bpmn.io/schema/bpmn">\n'
)


def _task(task_id: str, goal: str, job: str, inputs: dict[str, str]) -> str:
    mappings = "".join(
        f'<zeebe:input source="{escape(source)}" target="{target}" />'
        for target, source in inputs.items()
    )
    return (
        f'<bpmn:serviceTask id="{task_id}" name="{goal}"><bpmn:extensionElements>'
        f'<zeebe:taskDefinition type="{job}" /><zeebe:ioMapping>{mappings}</zeebe:ioMapping>'
        "</bpmn:extensionElements></bpmn:serviceTask>\n"
    )


def _process(tasks: list[str], order: list[str], properties: dict[str, str] | None = None) -> str:
    flows = ["start", *order, "end"]
    settled = ""
    if properties:
        settled = (
            "<bpmn:extensionElements><zeebe:properties>"
            + "".join(f'<zeebe:property name="{k}" value="{v}" />' for k, v in properties.items())
            + "</zeebe:properties></bpmn:extensionElements>\n"
        )
    return (
        _HEAD
        + '<bpmn:process id="line_check" isExecutable="true">\n'
        + settled
        + '<bpmn:startEvent id="start" />\n'
        + "".join(tasks)  # written in another order than they run: the flows order them
        + '<bpmn:endEvent id="end" />\n'
        + "".join(
            f'<bpmn:sequenceFlow id="f{i}" sourceRef="{a}" targetRef="{b}" />\n'
            for i, (a, b) in enumerate(pairwise(flows))
        )
        + "</bpmn:process>\n</bpmn:definitions>"
    )


PARTS = _task(
    "parts",
    "Step 1: reserve the brake wear pins",
    "reserve_parts",
    {"tail": '="OH-ATK"', "part": '="brake wear pin"', "count": "=4"},
)
BAY = _task(
    "bay",
    "Step 2: book a hangar bay",
    "book_bay",
    {"tail": '="OH-ATK"', "parts": "=parts.pick_id", "hours": "=2.5"},
)
BORESCOPE = _task(
    "borescope",
    "Step 3: borescope the left engine",
    "borescope_inspection",
    {"bay": "=bay.bay_id", "parts": "=parts.pick_id", "engine": '="left"'},
)
RELEASE = _task(
    "release",
    "Step 4: certify the aircraft for release",
    "certify_release",
    {"borescope": "=borescope.report_id", "bay": "=bay.bay_id", "day": '="2027-04-14"'},
)
PLAN = _process([BORESCOPE, PARTS, RELEASE, BAY], ["parts", "bay", "borescope", "release"])
REPLAN = _process(
    [BORESCOPE, RELEASE],
    ["borescope", "release"],
    {"parts.pick_id": "PK-5521", "bay.bay_id": "BAY-3"},
)


def _attempt(tracer: Tracer, step: str, job: str, args: dict[str, Any], error: str = "") -> None:
    """One executor run on ``step``: told its task, job type and call (the references filled
    in), one tool call, failing with ``error`` when given."""
    asked = f"Task: {step} ({job})\nCall: {job} {json.dumps(args)}"
    genai.attempt(tracer, "mechanic", ("hangar.step", step), asked, job, args, error)


def _hangar(store: Store, play: Any) -> str:
    return genai.played(store, "hangar", "line check OH-ATK", play)


def test_a_loop_at_a_bpmn_task_is_the_task_its_id_names(store: Store) -> None:
    # the borescope's probe fails five times with other errors, the app runs the task again
    errors = [f"probe image lost at stage {n}" for n in (2, 5, 3, 1)] + [
        "probe articulation failed"
    ]

    def play(tracer: Tracer, root: Any) -> None:
        genai.plan(tracer, "hangar_planner", PROMPT, json.dumps({"process": PLAN}))
        _attempt(tracer, "parts", "reserve_parts", {"tail": "OH-ATK", "part": "brake wear pin"})
        _attempt(tracer, "bay", "book_bay", {"tail": "OH-ATK", "parts": "PK-5521", "hours": 2.5})
        for i, error in enumerate(errors):
            args = {"bay": "BAY-3", "parts": "PK-5521", "engine": "left", "try": i}
            _attempt(tracer, "borescope", "borescope_inspection", args, error)
        root.set_status(Status(StatusCode.ERROR, errors[-1]))

    t = _hangar(store, play)
    trace = load_traces(store, "default", [t])[t]
    (plan,) = trace.plans
    steps = json.loads(plan.json)
    # the tasks in the order the flows take, not as written; the job types their tools
    assert [s["id"] for s in steps] == ["parts", "bay", "borescope", "release"]
    assert [s["tool"] for s in steps] == [
        "reserve_parts",
        "book_bay",
        "borescope_inspection",
        "certify_release",
    ]
    assert steps[1]["args"] == {"tail": "OH-ATK", "parts": "parts.pick_id", "hours": 2.5}
    assert [s["depends_on"] for s in steps] == [
        [],
        ["parts"],
        ["bay", "parts"],
        ["borescope", "bay"],
    ]
    assert steps[2]["description"] == "Step 3: borescope the left engine"
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "borescope"


def test_a_replans_process_properties_are_settled_results_not_steps(store: Store) -> None:
    # the borescope's probe is out; the re-plan states the done tasks' results as properties
    # and holds the two tasks left: the plan's next version, the properties no steps of it
    def play(tracer: Tracer, root: Any) -> None:
        genai.plan(tracer, "hangar_planner", PROMPT, json.dumps({"process": PLAN}))
        _attempt(tracer, "parts", "reserve_parts", {"tail": "OH-ATK"})
        _attempt(tracer, "bay", "book_bay", {"parts": "PK-5521"})
        args = {"bay": "BAY-3", "engine": "left"}
        _attempt(tracer, "borescope", "borescope_inspection", args, "probe out of calibration")
        genai.plan(tracer, "hangar_planner", PROMPT, json.dumps({"process": REPLAN}))
        _attempt(tracer, "borescope", "borescope_inspection", {"bay": "BAY-3", "probe": 2})
        _attempt(tracer, "release", "certify_release", {"borescope": "BR-77", "bay": "BAY-3"})

    t = _hangar(store, play)
    trace = load_traces(store, "default", [t])[t]
    versions = [
        [s.step_id for s in trace.plan_steps if s.plan_version == p.version] for p in trace.plans
    ]
    assert versions == [["parts", "bay", "borescope", "release"], ["borescope", "release"]]
    replanned = json.loads(trace.plans[1].json)
    # a reference to a settled property is its value; one to a task of this process stays
    assert replanned[0]["args"] == {"bay": "BAY-3", "parts": "PK-5521", "engine": "left"}
    assert replanned[1]["args"]["borescope"] == "borescope.report_id"
    assert [s["depends_on"] for s in replanned] == [[], ["borescope"]]
    assert not RunawayLoop().detect(trace)


def test_what_is_no_bpmn_process_is_not_read() -> None:
    # no process, a process with no task, two tasks with one id, broken XML
    assert _bpmn.steps("<definitions><collaboration id='c'/></definitions>") == []
    assert (
        _bpmn.steps("<definitions><process id='p'><startEvent id='s'/></process></definitions>")
        == []
    )
    twice = "<definitions><process id='p'><task id='a'/><task id='a'/></process></definitions>"
    assert _bpmn.steps(twice) == []
    assert _bpmn.steps(PLAN[:-40]) == []
    # Camunda 7: an external task's topic, input parameters (an expression, a literal), a
    # sub-process's tasks in its place, a call activity's called process
    camunda = (
        '<definitions xmlns:camunda="http://camunda.org/schema/1.0/bpmn"><process id="p">'
        '<startEvent id="s"/><serviceTask id="weigh" camunda:type="external" '
        'camunda:topic="weigh_load"><extensionElements><camunda:inputOutput>'
        '<camunda:inputParameter name="kg">120</camunda:inputParameter>'
        "</camunda:inputOutput></extensionElements></serviceTask>"
        '<subProcess id="sub"><startEvent id="s2"/><userTask id="sign">'
        "<extensionElements><camunda:inputOutput>"
        '<camunda:inputParameter name="load">${weigh.ticket}</camunda:inputParameter>'
        "</camunda:inputOutput></extensionElements></userTask>"
        '<sequenceFlow sourceRef="s2" targetRef="sign"/></subProcess>'
        '<callActivity id="bill" calledElement="billing_process"/>'
        '<sequenceFlow sourceRef="s" targetRef="weigh"/><sequenceFlow sourceRef="weigh" '
        'targetRef="sub"/><sequenceFlow sourceRef="sub" targetRef="bill"/></process></definitions>'
    )
    read = _bpmn.steps(camunda)
    assert [(s.name, s.tool, s.args, s.needs) for s in read] == [
        ("weigh", "weigh_load", {"kg": "120"}, ()),
        ("sign", "", {"load": "weigh.ticket"}, ("weigh",)),
        ("bill", "billing_process", {}, ()),
    ]

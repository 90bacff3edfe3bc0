"""A plan in a format no reader knows, read from structure, whose condition names a field of an
earlier step's result before the step it guards: a veterinary clinic's hip x-ray for an anxious
dog, plain GenAI spans from the real OTel SDK, stored in the real chDB store and loaded for
real. The planner answers a title line, then one ``Task: <name>`` block a step with a line of
prose; the sedation is guarded by ``If $weigh_dog.anxious:`` (the weighing's result says whether
the dog is anxious); one executor run per step attempt (the app names the step on it,
``clinic.task``) is handed its block.

Read from structure (the names later executor runs carry, in the order the answer writes
them), the condition's ``anxious`` (carried by the sedation's attempts: "the anxious dog") was
taken for a step before the sedation's own name, which, carried by the same attempts, became
that step's detail: the loop at the sedation was found at ``anxious``."""

from __future__ import annotations

import pytest
from opentelemetry.trace import Span, Status, StatusCode, Tracer
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

PROMPT = "Hip x-ray for Biscuit (patient VET-311), a nervous beagle, 14 kg last visit."

TASKS = {
    "weigh_dog": ("record_weight", "weigh the dog on the floor scale"),
    "sedate": ("dispense_sedative", "give the anxious dog a light sedative"),
    "xray_hips": ("queue_imaging", "take the hip radiographs"),
}

PLAN = (
    "Radiography of Biscuit in the imaging suite\n"
    "\nTask: weigh_dog\n  weigh the dog on the floor scale (call record_weight)\n"
    "\nIf $weigh_dog.anxious:\n"
    "\nTask: sedate\n  give the anxious dog a light sedative (call dispense_sedative)\n"
    "\nTask: xray_hips\n  take the hip radiographs (call queue_imaging)\n"
)


def _attempt(tracer: Tracer, task: str, tries: int, error: str = "") -> None:
    """One executor run on ``task``, handed its block; one tool call, failing with ``error``."""
    tool, prose = TASKS[task]
    asked = f"Task: {task} (try {tries})\n{prose}\nCall {tool}."
    genai.attempt(tracer, "vet_nurse", ("clinic.task", task), asked, tool, {"task": task}, error)


def _visit(store: Store) -> str:
    """The visit, the sedative refused on every try; the trace id."""

    def play(tracer: Tracer, root: Span) -> None:
        genai.plan(tracer, "clinic_planner", PROMPT, PLAN)
        _attempt(tracer, "weigh_dog", 1)
        for tries, error in enumerate(
            ("cabinet locked", "dose not signed off", "stock count mismatch", "refused"), 1
        ):
            _attempt(tracer, "sedate", tries, f"pharmacy: {error}")
        root.set_status(Status(StatusCode.ERROR, "no sedative for the x-ray"))

    return genai.played(store, "vet-clinic", "hip x-ray", play)


def test_a_field_of_an_earlier_steps_result_is_no_step_name(store: Store) -> None:
    t = _visit(store)
    trace = load_traces(store, "default", [t])[t]
    assert len(trace.plans) == 1
    assert [s.step_id for s in trace.plan_steps] == list(TASKS)
    failed = {a.step_id for a in trace.attempts if a.status == "error"}
    assert failed == {"sedate"}
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "sedate"

"""A plan written as a Nextflow DSL2 workflow (``name = PROCESS(key: value, ...)`` calls in a
``workflow { ... }`` block after ``// step n`` comments, ``name.out.field`` an earlier call's
output; a re-plan's settled outputs as ``params.x = '...'`` lines): a print shop's run of a
book, plain GenAI spans from the real OTel SDK, stored in the real chDB store and loaded for
real. The planner's answer is the script; one executor run per step attempt (the app names the
step on it, ``shop.step``) makes its tool calls.

No reader read Nextflow: the structure path read only the steps later attempts were handed
(``proof``, ``plates``: the calls never reached were lost), and a re-plan's ``params.x`` stayed a
reference, not the settled value the script gives it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import Status, StatusCode, Tracer
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector import _nextflow
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

PROMPT = "Print 400 copies of 'Tidewater' (240 pages, matte cover) for the launch on 2027-03-02."

PLAN = """#!/usr/bin/env nextflow
nextflow.enable.dsl = 2

include { PROOF_COVER; MAKE_PLATES; PRINT_RUN; DISPATCH } from './modules/printshop'

workflow {
    // step 1: proof the matte cover
    proof = PROOF_COVER(title: 'Tidewater', finish: 'matte')
    // step 2: make the plates from the approved proof
    plates = MAKE_PLATES(pdf: proof.out.pdf, colours: 4)
    // step 3: print and bind the copies
    books = PRINT_RUN(plates: plates.out.set_id, copies: 400, pages: 240)
    // step 4: send them to the bookshop for the launch
    parcel = DISPATCH(pallet: books.out.pallet, day: '2027-03-02')
}
"""

REPLAN = """params.proof_pdf = 'TW-COVER-7.pdf'
params.plates_set_id = 'PL-3317'

workflow {
    // step 3: print and bind the copies on press 2
    books = PRINT_RUN(plates: params.plates_set_id, copies: 400, pages: 240, press: 2)
    // step 4: send them to the bookshop for the launch
    parcel = DISPATCH(pallet: books.out.pallet, day: '2027-03-02')
}
"""


def _attempt(tracer: Tracer, step: str, tool: str, args: dict[str, Any], error: str = "") -> None:
    """One executor run on ``step``: one tool call, failing with ``error`` when given."""
    asked = f"Run {step} with {tool}."
    genai.attempt(tracer, "pressman", ("shop.step", step), asked, tool, args, error)


def _shop(store: Store, play: Any) -> str:
    return genai.played(store, "print-shop", "book run Tidewater", play)


def test_a_loop_at_a_nextflow_call_is_the_step_its_output_is_assigned_to(store: Store) -> None:
    # the plate-setter jams five times with other errors, the app runs the step again each time
    errors = [f"plate-setter jam at bay {n}" for n in (1, 3, 2, 4)] + ["plate-setter offline"]

    def play(tracer: Tracer, root: Any) -> None:
        genai.plan(tracer, "print_planner", PROMPT, PLAN)
        _attempt(tracer, "proof", "proof_cover", {"title": "Tidewater", "finish": "matte"})
        for i, error in enumerate(errors):
            _attempt(tracer, "plates", "make_plates", {"pdf": "TW-COVER-7.pdf", "try": i}, error)
        root.set_status(Status(StatusCode.ERROR, errors[-1]))

    t = _shop(store, play)
    trace = load_traces(store, "default", [t])[t]
    (plan,) = trace.plans
    steps = json.loads(plan.json)
    assert [s["id"] for s in steps] == ["proof", "plates", "books", "parcel"]
    # the tool called in the trace that a process names (the process as written else)
    assert [s["tool"] for s in steps] == ["proof_cover", "make_plates", "PRINT_RUN", "DISPATCH"]
    assert steps[1]["args"] == {"pdf": "proof.out.pdf", "colours": 4}
    assert [s["depends_on"] for s in steps] == [[], ["proof"], ["plates"], ["books"]]
    assert steps[0]["description"] == "step 1: proof the matte cover"
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "plates"


def test_a_replans_params_are_settled_outputs_not_steps(store: Store) -> None:
    # press 1 breaks down; the re-plan states the done steps' outputs as params and holds the
    # two calls left: the plan's next version, its params no steps of it
    def play(tracer: Tracer, root: Any) -> None:
        genai.plan(tracer, "print_planner", PROMPT, PLAN)
        _attempt(tracer, "proof", "proof_cover", {"title": "Tidewater"})
        _attempt(tracer, "plates", "make_plates", {"pdf": "TW-COVER-7.pdf"})
        _attempt(tracer, "books", "print_run", {"plates": "PL-3317"}, "press 1 roller cracked")
        genai.plan(tracer, "print_planner", PROMPT, REPLAN)
        _attempt(tracer, "books", "print_run", {"plates": "PL-3317", "press": 2})
        _attempt(tracer, "parcel", "dispatch", {"pallet": "P-88", "day": "2027-03-02"})

    t = _shop(store, play)
    trace = load_traces(store, "default", [t])[t]
    versions = [
        [s.step_id for s in trace.plan_steps if s.plan_version == p.version] for p in trace.plans
    ]
    assert versions == [["proof", "plates", "books", "parcel"], ["books", "parcel"]]
    replanned = json.loads(trace.plans[1].json)
    # a param's value is the literal the script gives it
    assert replanned[0]["args"]["plates"] == "PL-3317"
    assert [s["depends_on"] for s in replanned] == [[], ["books"]]
    assert not RunawayLoop().detect(trace)


def test_what_is_no_nextflow_workflow_is_not_read() -> None:
    # no workflow block, a block of channel operators only, a name assigned twice
    assert _nextflow.steps("proof = PROOF_COVER(title: 'x')") == []
    assert _nextflow.steps("workflow {\n    Channel.of(1, 2).view()\n}") == []
    assert _nextflow.steps("workflow {\n  a = F(x: 1)\n  a = G(y: 2)\n}") == []
    assert _nextflow.steps("workflow {\n  a = F(x: 1\n") == []  # never closed
    # a named workflow's main: section, bare calls named by their process, a call over lines
    read = _nextflow.steps(
        "workflow PRINT {\n  main:\n  PROOF(title: 'x')\n  PLATES(\n    pdf: PROOF.out.pdf\n  )\n}"
    )
    assert [(s.name, s.needs, s.args) for s in read] == [
        ("PROOF", (), {"title": "x"}),
        ("PLATES", ("PROOF",), {"pdf": "PROOF.out.pdf"}),
    ]

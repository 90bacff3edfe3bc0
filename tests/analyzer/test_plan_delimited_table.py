"""A plan written as a delimited table (CSV in a fenced block, TSV bare): a seed bank's export
of a seed lot and a touring theatre's get-in, plain GenAI spans from the real OTel SDK, stored
in the real chDB store and loaded for real. The planner's answer is the table, header first
(``id``, then the row's prose, its tool, its arguments as ``key=value`` pairs, an earlier row's
output as ``key=$<id>.<field>``); one executor run per step attempt is told its row.

No path read a delimited table as a table: the words the attempts carried were read instead,
and a row whose id is also an argument's key in two rows (``permit=...``) lost its id to the
first verb of its prose (``apply``), where its loop and its wrong value were blamed."""

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
from tests.analyzer._checked_plan import Call, checked_plan_run

pytestmark = pytest.mark.integration

PROMPT = "Export seed lot SB-114 (alpine buttercup) to the Auckland seed bank by air."

ROWS = [
    ("permit", "apply for the phytosanitary permit of lot SB-114", "apply_permit",
     "lot=SB-114;country=New Zealand"),
    ("crate", "pack lot SB-114 in a chilled crate", "pack_crate",
     "permit=$permit.number;celsius=4"),
    ("freight", "book the air freight to Auckland", "book_freight",
     '"note=keep cold; upright, dry";crate=$crate.crate_id;permit=$permit.number'),
    ("notify", "mail the partner the waybill", "send_mail",
     "to=curator@seeds.example;waybill=$freight.awb"),
]  # fmt: skip

PLAN = (
    "Export plan for lot SB-114:\n\n```csv\nid,after,action,tool,args\n"
    + "\n".join(
        f'{i},{ROWS[n - 1][0] if n else ""},{action},{tool},"{args.replace(chr(34), 2 * chr(34))}"'
        for n, (i, action, tool, args) in enumerate(ROWS)
    )
    + "\n```\n"
)


def _attempt(tracer: Tracer, n: int, error: str = "") -> None:
    """An executor run of the n-th row (the app names no step: the row it is told does)."""
    step, action, tool, _ = ROWS[n]
    asked = f"Row {step}: {action}. Call {tool}."
    genai.attempt(tracer, "clerk", None, asked, tool, {"lot": "SB-114", "try": n}, error)


def test_a_loop_at_a_csv_row_is_blamed_at_its_id_not_its_prose(store: Store) -> None:
    # the permit office's portal times out five times, the app runs the row again each time
    errors = [f"permit portal timed out after {s} s" for s in (30, 45, 60, 90)] + ["portal down"]

    def play(tracer: Tracer, root: Any) -> None:
        genai.plan(tracer, "export_planner", PROMPT, PLAN)
        for error in errors:
            _attempt(tracer, 0, error)
        root.set_status(Status(StatusCode.ERROR, errors[-1]))

    t = genai.played(store, "seed-bank", "export SB-114", play)
    trace = load_traces(store, "default", [t])[t]
    (plan,) = trace.plans
    steps = json.loads(plan.json)
    assert [s["id"] for s in steps] == ["permit", "crate", "freight", "notify"]
    assert steps[0]["tool"] == "apply_permit"  # the tool the trace called (the others: none)
    # the cell's pairs, a quoted one keeping its delimiters (RFC 4180, at both levels)
    assert steps[2]["args"]["note"] == "keep cold; upright, dry"
    assert steps[0]["args"] == {"lot": "SB-114", "country": "New Zealand"}
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "permit"


TOUR = (
    "step\ttool\targs\tgoal\n"
    "venue\tbook_venue\tcity=Leeds;night=2027-05-14\tbook the Grand for the night\n"
    "truck\thire_truck\tvenue=$venue.id;night=2027-05-14\thire a truck for the set\n"
    "crew\tcall_crew\tvenue=$venue.id;truck=$truck.id\tcall the local crew\n"
)
"""A touring theatre's get-in as a bare TSV table; the planner wrote another night than the
prompt's."""


def test_a_wrong_value_in_a_tsv_row_is_blamed_at_its_id(store: Store) -> None:
    calls: dict[str, Call] = {
        "venue": ("book_venue", {"city": "Leeds", "night": "2027-05-14"}, {"id": "GR-7"}),
        "truck": ("hire_truck", {"venue": "GR-7", "night": "2027-05-14"}, {"id": "TR-2"}),
        "crew": ("call_crew", {"venue": "GR-7", "truck": "TR-2"}, {"called": 6}),
    }
    goals = {"venue": "book the Grand", "truck": "hire a truck", "crew": "call the local crew"}
    t = checked_plan_run(
        store,
        app="tour desk",
        prompt="Get the show into the Grand, Leeds, for the night of 2027-05-11.",
        plan=TOUR,
        calls=calls,
        told=lambda n, step, tool, args: f"Row {step}: {goals[step]}\nCall: {tool}",
        check="get_in_check",
        verdict="get-in check: GR-7 is booked for 2027-05-14, the show opens 2027-05-11",
    )
    trace = load_traces(store, "default", [t])[t]
    (plan,) = trace.plans
    steps = {s["id"]: s.get("args") for s in json.loads(plan.json)}
    assert list(steps) == ["venue", "truck", "crew"]
    assert steps["venue"] == {"city": "Leeds", "night": "2027-05-14"}
    (finding,) = PlanPropagation().detect(trace)
    assert finding.step_id == "venue"
    assert finding.detail["values"] == ["2027-05-14"]

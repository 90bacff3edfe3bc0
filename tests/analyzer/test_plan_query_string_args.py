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
from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.plan_propagation import PlanPropagation
from planscope_collector.storage import Store

from tests.analyzer._checked_plan import Call, checked_plan_run

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
    calls: dict[str, Call] = {
        "find_hall": ("search_halls", {"city": "Leeds", "seats": 60}, {"hall": "HALL-LDS-12"}),
        "book_hall": ("reserve_hall", {"hall": "HALL-LDS-12", "day": day}, {"booking": "BK-4417"}),
        "hire_timpani": ("hire_instrument", {"supplier": "Kettle & Drum", "day": day}, {"n": 4}),
        "notify_players": ("send_notice", {"list": "tutti", "hall": "HALL-LDS-12"}, {"sent": 60}),
    }
    return checked_plan_run(
        store,
        app="rehearsal desk",
        prompt=PROMPT,
        plan=_plan(day),
        calls=calls,
        # the executor is told its step, as a planner-executor app tells it
        told=lambda n, step, tool, args: f"Step {n}: {step}\nCall: {tool}",
        check="rota_check",
        verdict=verdict,
    )


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

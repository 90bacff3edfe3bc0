"""A check after every step worked whose verdict names a value of several words the planner
wrote (an address: a name and a postcode) whole: a garden centre delivering a greenhouse
kit, plain GenAI spans from the real OTel SDK, stored in the real chDB store and loaded for
real. The planner answers a JSON plan; one executor run per step makes its tool call; then
the app's own delivery check, an agent run outside the plan that calls no tool, fails.

Such a value is named only whole (``named_whole``): its words alone are no value, and the
words of the verdict (``Orchard``, ``BS9``) match no argument the plan's steps were handed,
so the check's verdict on the planner's address was tied to nothing."""

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

WRONG = "Orchard Farm, BS9 5QT"
"""The address the planner wrote (the postcode's digits swapped)."""
RIGHT = "Orchard Farm, BS5 9QT"


def _delivery(store: Store, prompt: str, verdict: str) -> str:
    """A greenhouse delivery whose three steps work (the van booked to ``WRONG``), then the
    delivery check fails saying ``verdict``; the trace id."""
    calls: dict[str, Call] = {
        "find_kit": ("search_stock", {"item": "GH-12", "store": "Bristol"}, {"kit": "KIT-3301"}),
        "book_van": (
            "book_delivery",
            {"kit": "KIT-3301", "address": WRONG, "day": "2027-04-10"},
            {"delivery": "DLV-881", "address": WRONG},
        ),
        "notify_customer": ("send_notice", {"to": "customer", "delivery": "DLV-881"}, {"ok": 1}),
    }
    # the planner writes an earlier step's result as a reference to that step
    refs = {"KIT-3301": "$find_kit", "DLV-881": "$book_van"}
    plan = {
        "steps": [
            {"id": step, "tool": tool, "args": {k: refs.get(v, v) for k, v in args.items()}}
            for step, (tool, args, _) in calls.items()
        ]
    }
    return checked_plan_run(
        store,
        app="garden centre deliveries",
        prompt=prompt,
        plan=json.dumps(plan),
        calls=calls,
        told=lambda n, step, tool, args: f"Step {n}: {step}\nCall: {tool}",
        check="delivery_check",
        verdict=verdict,
    )


def _findings(store: Store, t: str) -> list[Any]:
    trace = load_traces(store, "default", [t])[t]
    assert trace.run is not None and trace.run.outcome == A.OUTCOME_FAILURE
    assert [s.step_id for s in trace.plan_steps] == ["find_kit", "book_van", "notify_customer"]
    return PlanPropagation().detect(trace)


def test_a_checks_verdict_naming_the_planners_address_whole(store: Store) -> None:
    # the prompt names the customer, not the address; the planner wrote a wrong postcode,
    # the van went there, and the check names that address whole: the plan's value
    prompt = "Deliver greenhouse kit GH-12 from the Bristol store to Orchard Farm on 2027-04-10."
    verdict = f"delivery check: DLV-881 drops at '{WRONG}', the order form says '{RIGHT}'"
    (finding,) = _findings(store, _delivery(store, prompt, verdict))
    assert finding.step_id == "book_van"
    assert finding.detail["values"] == [WRONG]


def test_an_address_the_prompt_states_whole_is_the_worlds(store: Store) -> None:
    # the prompt states the address whole, as the planner wrote it: the check's failure on it
    # is the world's (the lane flooded), not the plan's
    prompt = f"Deliver greenhouse kit GH-12 from the Bristol store to {WRONG} on 2027-04-10."
    verdict = f"delivery check: DLV-881 to '{WRONG}' cancelled, the lane is flooded"
    assert _findings(store, _delivery(store, prompt, verdict)) == []

"""A check that failed after another check passed: a museum lending a painting, plain GenAI
spans from the real OTel SDK, stored in the real chDB store and loaded for real. The planner
answers a JSON plan (find a fine-art courier, book the climate crate for the day, insure the
loan with that courier); one executor run per step makes its tool call; then the app's own
plain spans check the work in order: ``check crate date``, then ``watch loan INV-1907``.

When the crate check passed and the watch then failed naming the courier the search returned,
the work had been found good once it was done: the courier grounding its fleet afterwards is
the world's doing (on b591ed6 the watch's naming of the courier, a value a step returned and
later steps were handed, blamed ``find_courier``). When the first check fails, its verdict is
on the work as the plan left it, and the day the planner wrote is blamed where it entered."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.plan_propagation import PlanPropagation
from planscope_collector.storage import Store

from tests.analyzer._checked_plan import Call, checked_plan_run

pytestmark = pytest.mark.integration

PROMPT = "Lend painting INV-1907 to the Lyon museum; the crate must ship on 2027-06-14."


def _plan(day: str) -> str:
    return json.dumps(
        {
            "steps": [
                {"id": "find_courier", "tool": "search_couriers",
                 "args": {"city": "Lyon", "service": "fine art"}},
                {"id": "book_crate", "tool": "reserve_crate",
                 "args": {"courier": "<find_courier>", "day": day}},
                {"id": "insure", "tool": "insure_loan",
                 "args": {"courier": "<find_courier>", "painting": "INV-1907"}},
            ]
        }
    )  # fmt: skip


def _loan(store: Store, day: str, verdict: str, passed: Sequence[str]) -> str:
    """A loan whose three steps work (the planner wrote ``day``), then the app's checks:
    ``passed`` end well, then the last one fails saying ``verdict``; the trace id."""
    calls: dict[str, Call] = {
        "find_courier": ("search_couriers", {"city": "Lyon", "service": "fine art"},
                         {"couriers": [{"id": "FA-3318", "city": "Lyon"}]}),
        "book_crate": ("reserve_crate", {"courier": "FA-3318", "day": day},
                       {"crate": "CR-22", "day": day}),
        "insure": ("insure_loan", {"courier": "FA-3318", "painting": "INV-1907"},
                   {"policy": "POL-88"}),
    }  # fmt: skip
    return checked_plan_run(
        store,
        app="loan INV-1907",
        prompt=PROMPT,
        plan=_plan(day),
        calls=calls,
        told=lambda n, step, tool, args: f"Step {step}: call {tool} {json.dumps(args)}",
        check=passed[-1] if passed else "check crate date",
        verdict=verdict,
        plain=True,
        passed=passed[:-1],
    )


def _findings(store: Store, t: str) -> list[Any]:
    trace = load_traces(store, "default", [t])[t]
    assert trace.run is not None and trace.run.outcome == A.OUTCOME_FAILURE
    assert [s.step_id for s in trace.plan_steps] == ["find_courier", "book_crate", "insure"]
    assert trace.attempts and all(a.succeeded for a in trace.attempts)
    return PlanPropagation().detect(trace)


GROUNDED = "LoanFailed: FA-3318 grounded its fleet after a customs strike"


def test_a_watch_failing_after_a_passed_check_is_the_worlds(store: Store) -> None:
    # the crate check passed on the finished work, then the watch saw the courier grounded
    checks = ["check crate date", "watch loan INV-1907"]
    assert _findings(store, _loan(store, "2027-06-14", GROUNDED, checks)) == []


def test_the_same_failure_as_the_first_check_is_traced_to_the_plan(store: Store) -> None:
    # no check passed first: the failure names the courier a step returned and later steps
    # were handed, and is traced through the outputs as before
    (finding,) = _findings(store, _loan(store, "2027-06-14", GROUNDED, ["watch loan INV-1907"]))
    assert finding.step_id == "find_courier"


def test_a_first_check_failing_on_the_planners_day_blames_it(store: Store) -> None:
    # the planner wrote another day than the prompt's and the first check says so
    verdict = "LoanFailed: crate CR-22 ships on 2027-06-21, the loan opens on 2027-06-14"
    (finding,) = _findings(store, _loan(store, "2027-06-21", verdict, ["check crate date"]))
    assert finding.step_id == "book_crate"
    assert finding.detail["values"] == ["2027-06-21"]

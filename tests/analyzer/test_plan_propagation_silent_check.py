"""A check after success that fails saying nothing: every task of a team offsite's room booking
succeeds, then the app's own plain span checking the calendar fails with an error status and
no description (a level set to error, as Logfire's ``span.set_level("error")`` records it), and
the app ends the run with the reason its check found. Plain OTel spans in the GenAI conventions
(no planscope SDK), stored and loaded for real: a root without an objective (the planner's
prompt becomes it), a planner chat answering the plan, one executor run per task, the check
under the root.

A silent check leaves the run's outcome reason as the only account of its verdict: a reason
naming the day the planner wrote judged the plan's value; one naming only the day the user
asked for is the world's."""

from __future__ import annotations

from typing import Any

import pytest
from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.plan_propagation import PlanPropagation
from planscope_collector.storage import Store

from tests.analyzer._after_success import store_checked_run

pytestmark = pytest.mark.integration

PROMPT = "Book a meeting room for 14 people at the Harbour office for the offsite on 2027-05-11."


def _plan(day: str) -> dict[str, Any]:
    return {
        "tasks": [
            {"id": "find_room", "action": "find a free room", "tool": "room_search",
             "args": {"office": "Harbour", "seats": 14, "day": day}},
            {"id": "book", "action": "book the room", "tool": "book_room",
             "args": {"room": "<from find_room>", "day": day}},
            {"id": "invite", "action": "send the invitation", "tool": "send_invite",
             "args": {"booking": "<from book>"}},
        ],
    }  # fmt: skip


def _offsite(store: Store, reason: str, day: str = "2027-05-11") -> str:
    """A booking whose tasks all succeed (the planner wrote ``day``), then the app's calendar
    check fails with no description and the run ends saying ``reason``; the trace id."""
    calls = {
        "room_search": ({"office": "Harbour", "seats": 14, "day": day}, {"room": "HB-4C"}),
        "book_room": ({"room": "HB-4C", "day": day}, {"booking": "RB-318", "day": day}),
        "send_invite": ({"booking": "RB-318"}, {"sent": 14}),
    }
    # the check: an error status and nothing said
    return store_checked_run(
        store, root="plan offsite", reason=reason, prompt=PROMPT, plan=_plan(day), calls=calls,
        check="check calendar",
    )  # fmt: skip


def _findings(store: Store, t: str) -> list[Any]:
    trace = load_traces(store, "default", [t])[t]
    assert trace.run is not None and trace.run.outcome == A.OUTCOME_FAILURE
    assert [s.step_id for s in trace.plan_steps] == ["find_room", "book", "invite"]
    assert trace.attempts and all(a.succeeded for a in trace.attempts)
    assert [r.message for r in trace.raw if r.name == "check calendar"] == [""]
    return PlanPropagation().detect(trace)


def test_a_silent_check_whose_run_names_the_planners_day_judges_the_plan(store: Store) -> None:
    # the planner wrote another day than the user asked for; the check said nothing, the run's
    # reason names the day the room was booked for: the plan's value, found where it entered
    wrong = "OffsiteFailed: room HB-4C is booked for 2027-05-18, the offsite is 2027-05-11"
    (finding,) = _findings(store, _offsite(store, wrong, day="2027-05-18"))
    assert finding.step_id == "find_room"
    assert finding.detail["values"] == ["2027-05-18"]


def test_a_silent_check_whose_run_names_only_the_asked_day_is_the_worlds(store: Store) -> None:
    # the day is the objective's, handed to every task: the planner introduced nothing
    closed = "OffsiteFailed: the Harbour office closes for a power cut on 2027-05-11"
    assert _findings(store, _offsite(store, closed)) == []

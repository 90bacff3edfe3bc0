"""A check after success: every task of a clinic's scan booking succeeds, then the app's own
plain span watching the scan day fails. Plain OTel spans in the GenAI conventions (no planscope
SDK), stored and loaded for real: a root without an objective (the planner's prompt becomes
it), a planner chat answering the plan, one executor run per task, the last task's tool
answering in prose (as a framework's hand-off answers), then the watch under the root.

A watch naming the day the user asked for (which every task was handed), or sharing only a word
with a prose answer, saw the world fail; a watch naming a day the planner wrote instead judged
the plan's value."""

from __future__ import annotations

from typing import Any

import pytest
from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.plan_propagation import PlanPropagation
from planscope_collector.storage import Store

from tests.analyzer._after_success import store_checked_run

pytestmark = pytest.mark.integration

PROMPT = "Book an MRI scan for patient PT-5521 at the Northgate clinic on 2027-03-09."


def _plan(day: str) -> dict[str, Any]:
    return {
        "tasks": [
            {"id": "find_slot", "action": "find a free scanner slot", "tool": "slot_search",
             "args": {"clinic": "Northgate", "day": day}},
            {"id": "book", "action": "book the slot", "tool": "book_slot",
             "args": {"slot": "<from find_slot>", "patient": "PT-5521"}},
            {"id": "notify", "action": "write to the patient", "tool": "send_letter",
             "args": {"patient": "PT-5521", "booking": "<from book>"}},
        ],
    }  # fmt: skip


def _scan(store: Store, watch_says: str, day: str = "2027-03-09") -> str:
    """A booking whose tasks all succeed (the planner wrote ``day``), then the app's watch of
    the scan day fails saying ``watch_says``; the trace id."""
    calls = {
        "slot_search": ({"clinic": "Northgate", "day": day}, {"slot": "SL-44", "day": day}),
        "book_slot": ({"slot": "SL-44", "patient": "PT-5521"}, {"booking": "BK-9", "day": day}),
        # a framework's hand-off answers in prose: its words are no values
        "send_letter": (
            {"patient": "PT-5521", "booking": "BK-9"},
            "Letter queued: the patient will hear from the clinic",
        ),
    }
    return store_checked_run(
        store, root="book scan", reason=watch_says, prompt=PROMPT, plan=_plan(day), calls=calls,
        check="watch scan day", check_says=watch_says, check_ms=20,
    )  # fmt: skip


def _findings(store: Store, t: str) -> list[Any]:
    trace = load_traces(store, "default", [t])[t]
    assert trace.run is not None and trace.run.outcome == A.OUTCOME_FAILURE
    assert [s.step_id for s in trace.plan_steps] == ["find_slot", "book", "notify"]
    assert trace.attempts and all(a.succeeded for a in trace.attempts)
    return PlanPropagation().detect(trace)


def test_a_watch_naming_the_day_the_user_asked_for_is_the_worlds(store: Store) -> None:
    # the day is the objective's, handed to the search and returned by both calls: the planner
    # introduced nothing the watch names
    broke = "ScanLost: the Northgate scanner broke down on 2027-03-09"
    assert _findings(store, _scan(store, broke)) == []


def test_a_word_shared_with_a_prose_answer_ties_nothing(store: Store) -> None:
    # "the" is in the letter service's prose answer, not a value it returned
    assert _findings(store, _scan(store, "ScanLost: power cut to the scanner hall")) == []


def test_a_watch_naming_the_day_the_planner_wrote_judges_the_plan(store: Store) -> None:
    # the planner wrote another day than the user asked for; the watch finds the scan booked
    # for it: the plan's value, named by the verdict
    late = "ScanLost: the scan is booked for 2027-03-16, after the referral expires"
    (finding,) = _findings(store, _scan(store, late, day="2027-03-16"))
    assert finding.step_id == "find_slot"

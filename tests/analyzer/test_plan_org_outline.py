"""A plan written as an Org-mode outline (issue #13): a primary school's museum trip, plain
GenAI spans from the real OTel SDK, stored in the real chDB store and loaded for real. The
planner answers an outline as an Org user writes one (``#+TITLE``, a parent heading with
``:ORDERED: t``, ``TODO`` / ``NEXT`` headings with priorities, tags, a SCHEDULED line, a
``:PROPERTIES:`` drawer naming the step (``:CUSTOM_ID:``), its tool and its arguments, a
``[[#custom-id]]`` link to an earlier step's result); one executor run per step makes its tool
call; then the app's own trip check, an agent run outside the plan that calls no tool, fails
naming the day the coach was booked for.

Without an Org reader (on 38e14fe) the generic path read the outline's steps from the words
the executors are told (``coach``, ``operator``, ``find_coach``, ``book_workshop``) and blamed
the wrong day at ``operator``; with it, at ``book_coach``, where the planner wrote it."""

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

PROMPT = "Take class 6B (31 pupils, 4 adults) from Ripon to the science museum on 2027-05-12."


def _plan(day: str) -> str:
    return f"""\
#+TITLE: Class 6B museum trip
#+STARTUP: overview
* Trip [0/4]
  :PROPERTIES:
  :ORDERED:  t
  :END:
** NEXT [#A] Find a coach operator                                 :transport:
   :PROPERTIES:
   :CUSTOM_ID: find_coach
   :TOOL:      search_operators
   :town:      Ripon
   :seats:     35
   :END:
** TODO Book the coach                                             :transport:
   SCHEDULED: <2027-04-20 Tue>
   :PROPERTIES:
   :CUSTOM_ID: book_coach
   :TOOL:      reserve_coach
   :operator:  [[#find_coach]]
   :day:       {day}
   :END:
** TODO Book the museum's workshop
   :PROPERTIES:
   :CUSTOM_ID: book_workshop
   :TOOL:      book_session
   :museum:    science museum
   :day:       {day}
   :END:
** TODO Write to the parents                                           :office:
   :PROPERTIES:
   :CUSTOM_ID: notify_parents
   :TOOL:      send_letter
   :class:     6B
   :coach:     [[#book_coach]]
   :END:
"""


def _trip(store: Store, day: str, verdict: str) -> str:
    """A trip whose four steps work (the planner wrote ``day``), then the trip check fails
    saying ``verdict``; the trace id."""
    calls: dict[str, Call] = {
        "find_coach": ("search_operators", {"town": "Ripon", "seats": 35}, {"operator": "OP-7"}),
        "book_coach": ("reserve_coach", {"operator": "OP-7", "day": day}, {"booking": "CB-3310"}),
        "book_workshop": ("book_session", {"museum": "science museum", "day": day}, {"n": 31}),
        "notify_parents": ("send_letter", {"class": "6B", "coach": "CB-3310"}, {"sent": 31}),
    }
    return checked_plan_run(
        store,
        app="museum trip",
        prompt=PROMPT,
        plan=_plan(day),
        calls=calls,
        # the executor is told its step by the heading's custom id, and the call
        told=lambda n, step, tool, args: f"Task [[#{step}]]\nCall: {tool} {json.dumps(args)}",
        check="trip_check",
        verdict=verdict,
    )


def _findings(store: Store, t: str, day: str) -> list[Any]:
    trace = load_traces(store, "default", [t])[t]
    assert trace.run is not None and trace.run.outcome == A.OUTCOME_FAILURE
    (plan,) = trace.plans
    steps = {s["id"]: s for s in json.loads(plan.json)}
    # the steps named by their custom ids, with their tools, arguments and dependencies
    assert list(steps) == ["find_coach", "book_coach", "book_workshop", "notify_parents"]
    assert steps["book_coach"]["tool"] == "reserve_coach"
    assert steps["book_coach"]["args"] == {"operator": "[[find_coach]]", "day": day}
    assert steps["book_coach"]["depends_on"] == ["find_coach"]
    return PlanPropagation().detect(trace)


def test_a_checks_verdict_on_a_day_the_org_outline_wrote(store: Store) -> None:
    # the planner wrote another day than the prompt's; the trip check, which calls no tool,
    # names it: the plan's value, blamed where it entered
    verdict = "trip check: CB-3310 is for 2027-05-14, the museum expects 6B on 2027-05-12"
    (finding,) = _findings(store, _trip(store, "2027-05-14", verdict), "2027-05-14")
    assert finding.step_id == "book_coach"
    assert finding.detail["values"] == ["2027-05-14"]


def test_a_checks_verdict_on_the_asked_day_is_the_worlds(store: Store) -> None:
    # the day is the prompt's, as the planner wrote it: the check found the world changed
    verdict = "trip check: the museum closes for a burst pipe on 2027-05-12"
    assert _findings(store, _trip(store, "2027-05-12", verdict), "2027-05-12") == []

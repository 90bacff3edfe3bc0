"""A plan written as a Python list of calls (one call expression a step, keyword and positional
arguments, a bare name of an earlier call, or an attribute of it, standing for its result; a
re-plan lists the calls still to do, the done ones as comments): a public library's
interlibrary-loan desk, plain GenAI spans from the real OTel SDK, stored in the real chDB store
and loaded for real. The planner's answer is a fenced Python block; one executor run per step
attempt (the app names the step on it, ``desk.step``) makes its tool calls.

Read from structure (the names later executor runs carry), a plan whose first step is the only
one ever tried had no step to read: its runaway loop was found at no step."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import Status, StatusCode, Tracer
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector import _calllist
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

PROMPT = "Get 'The Odyssey' (ISBN 978-0-14-026886-7) to borrower B-2231 at the Harrow Road branch."

PLAN = """Here is the plan:

```python
[
    find_copy('978-0-14-026886-7', network="north"),
    request_loan(copy=find_copy, borrower="B-2231", weeks=3),
    ship_copy(loan=request_loan.id, branch="Harrow Road"),
]
```
"""

REPLAN = """```python
# done: find_copy -> CPY-NTH-5521
[
    request_loan(copy=find_copy, borrower="B-2231", weeks=2),
    ship_copy(loan=request_loan.id, branch="Harrow Road"),
]
```"""


def _plan(tracer: Tracer, answer: str) -> None:
    genai.plan(tracer, "loan_planner", PROMPT, answer)


def _attempt(tracer: Tracer, step: str, tool: str, args: dict[str, Any], error: str = "") -> None:
    """One executor run on ``step``: one tool call, failing with ``error`` when given."""
    asked = f"Do the step {step}: call {tool}."
    genai.attempt(tracer, "loan_clerk", ("desk.step", step), asked, tool, args, error)


def _desk(store: Store, play: Any) -> str:
    return genai.played(store, "loan-desk", "loan desk", play)


def test_a_loop_at_the_first_step_of_a_call_list_plan_is_that_steps(store: Store) -> None:
    # the catalogue search fails five times with other errors, the app runs it again each
    # time and gives up: no other step of the plan is ever tried
    errors = [f"catalogue node {n} busy, try later" for n in (3, 7, 2, 9)] + ["network closed"]

    def play(tracer: Tracer, root: Any) -> None:
        _plan(tracer, PLAN)
        for i, error in enumerate(errors):
            args = {"isbn": "978-0-14-026886-7", "network": "north", "page": i + 1}
            _attempt(tracer, "find_copy", "catalogue_search", args, error)
        root.set_status(Status(StatusCode.ERROR, errors[-1]))

    t = _desk(store, play)
    trace = load_traces(store, "default", [t])[t]
    (plan,) = trace.plans
    steps = json.loads(plan.json)
    assert [s["id"] for s in steps] == ["find_copy", "request_loan", "ship_copy"]
    # literals as values, references as written; positional arguments by position
    assert steps[0]["args"] == {"0": "978-0-14-026886-7", "network": "north"}
    assert steps[1]["args"] == {"copy": "find_copy", "borrower": "B-2231", "weeks": 3}
    assert [s["depends_on"] for s in steps] == [[], ["find_copy"], ["request_loan"]]
    assert {a.step_id for a in trace.attempts if a.status == "error"} == {"find_copy"}
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "find_copy"


def test_a_replan_of_the_calls_left_is_the_plans_next_version(store: Store) -> None:
    # the loan is refused for three weeks; the re-plan lists the two calls left (the done
    # search a comment, its result referred to by name) and they work: no loop
    def play(tracer: Tracer, root: Any) -> None:
        _plan(tracer, PLAN)
        _attempt(tracer, "find_copy", "catalogue_search", {"isbn": "978-0-14-026886-7"})
        loan = {"copy": "CPY-NTH-5521", "borrower": "B-2231", "weeks": 3}
        _attempt(tracer, "request_loan", "loan_request", loan, "three weeks not allowed")
        _plan(tracer, REPLAN)
        _attempt(tracer, "request_loan", "loan_request", {**loan, "weeks": 2})
        _attempt(tracer, "ship_copy", "courier_book", {"loan": "L-88", "branch": "Harrow Road"})

    t = _desk(store, play)
    trace = load_traces(store, "default", [t])[t]
    versions = [
        [s.step_id for s in trace.plan_steps if s.plan_version == p.version] for p in trace.plans
    ]
    assert versions == [["find_copy", "request_loan", "ship_copy"], ["request_loan", "ship_copy"]]
    replanned = json.loads(trace.plans[1].json)
    # a name of a done call is its result, no step of this version to depend on
    assert replanned[0]["args"] == {"copy": "find_copy", "borrower": "B-2231", "weeks": 2}
    assert [s["depends_on"] for s in replanned] == [[], ["request_loan"]]
    assert [a.step_id for a in trace.attempts if a.step_id in {"request_loan", "ship_copy"}] == [
        "request_loan",
        "request_loan",
        "ship_copy",
    ]
    assert RunawayLoop().detect(trace) == []


def test_a_list_of_calls_passing_nothing_on_is_no_plan() -> None:
    # calls with literal arguments only (no result flows from one to another) are not read as
    # a plan by this syntax
    assert _calllist.steps("[log('a', level=1), log_b(x=2)]") == []
    assert [c.name for c in _calllist.steps(PLAN)] == ["find_copy", "request_loan", "ship_copy"]

"""A plan written as a Handlebars template of function calls, as Semantic Kernel's
HandlebarsPlanner asks for it (a ``{{!-- Step n: ... --}}`` comment and a ``{{set "var"
(Plugin-function key=value)}}`` call per step, ``var.field`` or a ``(concat ...)`` an earlier
result, ``{{json var}}`` last; a re-plan opens with a ``{{!-- Done: ... --}}`` comment): a city
bike-share rebalancing a station, plain GenAI spans from the real OTel SDK, stored in the real
chDB store and loaded for real. One executor run per step attempt (the app names the step on
it, ``fleet.step``) makes its tool call.

No reader knew the template: no plan was read (neither by a format reader nor from
structure), so a loop at a step was found at no step."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.trace import Status, StatusCode, Tracer
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector import _handlebars
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

PROMPT = "Rebalance station S-114 (Harbour Square) before the 2027-05-03 morning peak."

PLAN = """```handlebars
{{!-- Rebalancing plan, revision 1 --}}
{{!-- Step 1: Count the bikes docked at S-114 --}}
{{set "dock_count" (Fleet-count_bikes station="S-114" include_broken=false)}}
{{!-- Step 2: Book a van at the depot for the morning --}}
{{set "van_slot" (Depot-book_van day="2027-05-03" seats=dock_count.surplus)}}
{{!-- Step 3: Move the surplus to S-201 --}}
{{set "transfer" (Fleet-move_bikes from=dock_count.station to="S-201" van=van_slot.van)}}
{{!-- Step 4: Tell the operators --}}
{{set "ops_notice" (Ops-post_notice text=(concat "moved " transfer.count " bikes") urgent=true)}}
{{json ops_notice}}
```"""

REPLAN = """{{!-- Rebalancing plan, revision 2 --}}
{{!-- Done: dock_count = {"station": "S-114", "surplus": 9} --}}
{{!-- Step 2: Book a van at the north depot for the morning --}}
{{set "van_slot" (Depot-book_van day="2027-05-03" seats=dock_count.surplus depot="north")}}
{{!-- Step 3: Move the surplus to S-201 --}}
{{set "transfer" (Fleet-move_bikes from=dock_count.station to="S-201" van=van_slot.van)}}
{{!-- Step 4: Tell the operators --}}
{{set "ops_notice" (Ops-post_notice text=(concat "moved " transfer.count " bikes") urgent=true)}}
{{json ops_notice}}"""


def _plan(tracer: Tracer, answer: str) -> None:
    genai.plan(tracer, "fleet_planner", PROMPT, answer)


def _attempt(tracer: Tracer, step: str, tool: str, args: dict[str, Any], error: str = "") -> None:
    """One executor run on ``step``: one tool call, failing with ``error`` when given."""
    asked = f"Do the step {step}: call {tool}."
    genai.attempt(tracer, "fleet_clerk", ("fleet.step", step), asked, tool, args, error)


def _rebalance(store: Store, play: Any) -> str:
    return genai.played(store, "bike-share", "rebalance S-114", play)


def test_a_loop_at_the_first_step_of_a_handlebars_plan_is_that_steps(store: Store) -> None:
    # the dock controller answers five other errors, the app runs the step again each time and
    # gives up: no other step of the plan is ever tried
    errors = [f"dock controller {n} rebooting" for n in (3, 7, 1, 4)] + ["station offline"]

    def play(tracer: Tracer, root: Any) -> None:
        _plan(tracer, PLAN)
        for i, error in enumerate(errors):
            args = {"station": "S-114", "include_broken": False, "try": i + 1}
            _attempt(tracer, "dock_count", "Fleet-count_bikes", args, error)
        root.set_status(Status(StatusCode.ERROR, errors[-1]))

    t = _rebalance(store, play)
    trace = load_traces(store, "default", [t])[t]
    (plan,) = trace.plans
    steps = json.loads(plan.json)
    assert [s["id"] for s in steps] == ["dock_count", "van_slot", "transfer", "ops_notice"]
    assert [s["tool"] for s in steps] == [
        "Fleet-count_bikes",
        "Depot-book_van",
        "Fleet-move_bikes",
        "Ops-post_notice",
    ]
    # literals as values, references and sub-expressions as written; the comment the goal
    assert steps[0]["args"] == {"station": "S-114", "include_broken": False}
    assert steps[0]["description"] == "Count the bikes docked at S-114"
    assert steps[3]["args"] == {"text": '(concat "moved " transfer.count " bikes")', "urgent": True}
    assert [s["depends_on"] for s in steps] == [
        [],
        ["dock_count"],
        ["dock_count", "van_slot"],
        ["transfer"],
    ]
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "dock_count"


def test_a_replan_of_the_steps_left_is_the_plans_next_version(store: Store) -> None:
    # the depot has no van; the re-plan states the done step in a comment and the steps left
    # (their results still referred to by variable): the three steps left work, no loop
    def play(tracer: Tracer, root: Any) -> None:
        _plan(tracer, PLAN)
        count = {"station": "S-114", "include_broken": False}
        _attempt(tracer, "dock_count", "Fleet-count_bikes", count)
        van = {"day": "2027-05-03", "seats": 9}
        _attempt(tracer, "van_slot", "Depot-book_van", van, "no van free at the city depot")
        _plan(tracer, REPLAN)
        _attempt(tracer, "van_slot", "Depot-book_van", {**van, "depot": "north"})
        _attempt(tracer, "transfer", "Fleet-move_bikes", {"from": "S-114", "van": "V-3"})
        _attempt(tracer, "ops_notice", "Ops-post_notice", {"text": "moved 9 bikes"})

    t = _rebalance(store, play)
    trace = load_traces(store, "default", [t])[t]
    versions = [
        [s.step_id for s in trace.plan_steps if s.plan_version == p.version] for p in trace.plans
    ]
    assert versions == [
        ["dock_count", "van_slot", "transfer", "ops_notice"],
        ["van_slot", "transfer", "ops_notice"],
    ]
    replanned = json.loads(trace.plans[1].json)
    # a done step is no step of this version to depend on
    assert [s["depends_on"] for s in replanned] == [[], ["van_slot"], ["transfer"]]
    assert RunawayLoop().detect(trace) == []


def test_template_helpers_blocks_and_literals_are_no_steps() -> None:
    template = """{{!-- a note that {{looks}} like a statement --}}
{{set "limit" 20}}
{{set "name" (concat "north " "depot")}}
{{#each stations}}
  {{set "seen" (Fleet-count_bikes station=this.id limit=limit)}}
{{/each}}
{{#if seen.surplus}}{{Ops-post_notice text="it is full" station=@root.name}}{{/if}}
{{json seen}}"""
    seen, notice = _handlebars.steps(template)
    # a variable set to a literal or by a template helper is no step; a bare call is, named
    # by its function
    assert (seen.name, seen.tool, seen.args, seen.needs) == (
        "seen",
        "Fleet-count_bikes",
        {"station": "this.id", "limit": "limit"},
        (),
    )
    assert (notice.name, notice.tool, notice.args["station"]) == (
        "Ops-post_notice",
        "Ops-post_notice",
        "@root.name",
    )
    # only printing values, or calls without a variable anywhere, states no plan
    assert _handlebars.steps("Dear {{name}}, your bike {{bike.id}} is ready.") == []
    assert _handlebars.steps("{{Ops-post_notice text='a'}}{{Ops-ping}}") == []
    assert _handlebars.steps('{"steps": [{"id": "a"}]}') == _handlebars.steps("plain") == []
    assert [s.name for s in _handlebars.steps(PLAN)] == [
        "dock_count",
        "van_slot",
        "transfer",
        "ops_notice",
    ]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="{}()\"'=!-#/@.[]~ \nsetP-fa1x", max_size=300))
def test_any_text_of_template_characters_is_read_without_raising(text: str) -> None:
    # the reader is offered every planner answer: whatever it holds, a list of steps (ids
    # distinct, dependencies among the earlier ones) or none
    steps = _handlebars.steps(text)
    names = [s.name for s in steps]
    assert len(set(names)) == len(names)
    assert all(set(s.needs) <= set(names[:i]) for i, s in enumerate(steps))

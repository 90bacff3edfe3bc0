"""A plan written as a GraphQL mutation (an aliased top-level field a step after a ``#`` comment,
``@export(as:)`` on a selection and a ``$variable`` for an earlier field's result; a re-plan's
settled results as variable defaults): a bicycle workshop's wheel rebuild, plain GenAI spans
from the real OTel SDK, stored in the real chDB store and loaded for real. The planner's answer
is a fenced GraphQL block; one executor run per step attempt (the app names the step on it,
``shop.step``) makes its tool calls.

No reader read GraphQL and the structure path found no plan in it (its field names are no
names the executor runs carry as steps): its runaway loop was found at no step."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import Status, StatusCode, Tracer
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector import _graphql
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

PROMPT = "Rebuild the rear wheel of job WB-310 (36 spokes, DT rim) for the courier's cargo bike."

PLAN = """The plan as a GraphQL mutation:

```graphql
mutation RebuildWheel {
  # order the rim and spokes from the wholesaler
  orderParts: wholesaleOrder(rim: "DT 545d", spokes: 36, length: 262) {
    orderId @export(as: "parts")
  }
  # lace and true the wheel
  lace: truingStand(parts: $parts, tension: 1200, pattern: CROSS_3) { wheelId @export(as: "wheel") }
  # tell the customer it is ready
  notify: sendSms(to: "+44 7700 900310", wheel: $wheel, text: \"\"\"Your wheel is ready\"\"\") {
    messageId
  }
}
```
"""

REPLAN = """mutation RebuildWheel($parts: ID = "PO-88213") {
  # lace and true the wheel on the second stand
  lace: truingStand(parts: $parts, tension: 1200, stand: 2) { wheelId @export(as: "wheel") }
  # tell the customer it is ready
  notify: sendSms(to: "+44 7700 900310", wheel: $wheel) { messageId }
}"""


def _plan(tracer: Tracer, answer: str) -> None:
    genai.plan(tracer, "workshop_planner", PROMPT, answer)


def _attempt(tracer: Tracer, step: str, tool: str, args: dict[str, Any], error: str = "") -> None:
    """One executor run on ``step``: one tool call, failing with ``error`` when given."""
    asked = f"Do {step} with {tool}."
    genai.attempt(tracer, "mechanic", ("shop.step", step), asked, tool, args, error)


def _shop(store: Store, play: Any) -> str:
    return genai.played(store, "bike-shop", "wheel rebuild", play)


def test_a_loop_at_the_first_field_of_a_graphql_plan_is_that_steps(store: Store) -> None:
    # the wholesaler's API fails five times with other errors, the app orders again each time
    # and gives up: no other step of the plan is ever tried
    errors = [f"wholesaler gateway 50{n}" for n in (2, 3, 4, 2)] + ["wholesaler offline"]

    def play(tracer: Tracer, root: Any) -> None:
        _plan(tracer, PLAN)
        for i, error in enumerate(errors):
            args = {"rim": "DT 545d", "spokes": 36, "length": 262, "try": i + 1}
            _attempt(tracer, "orderParts", "wholesale_order", args, error)
        root.set_status(Status(StatusCode.ERROR, errors[-1]))

    t = _shop(store, play)
    trace = load_traces(store, "default", [t])[t]
    (plan,) = trace.plans
    steps = json.loads(plan.json)
    assert [s["id"] for s in steps] == ["orderParts", "lace", "notify"]
    # the tool called in the trace that a field names (the field as written else)
    assert [s["tool"] for s in steps] == ["wholesale_order", "truingStand", "sendSms"]
    # literals as values (an enum value as its name), variables as written
    assert steps[0]["args"] == {"rim": "DT 545d", "spokes": 36, "length": 262}
    assert steps[1]["args"] == {"parts": "$parts", "tension": 1200, "pattern": "CROSS_3"}
    assert [s["depends_on"] for s in steps] == [[], ["orderParts"], ["lace"]]
    assert steps[0]["description"] == "order the rim and spokes from the wholesaler"
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "orderParts"


def test_a_replans_defaults_are_settled_results_not_steps(store: Store) -> None:
    # the first truing stand breaks; the re-plan states the parts order as a variable default
    # and holds the two fields left: the plan's next version, the order no step of it
    def play(tracer: Tracer, root: Any) -> None:
        _plan(tracer, PLAN)
        _attempt(tracer, "orderParts", "wholesale_order", {"rim": "DT 545d", "spokes": 36})
        lace = {"parts": "PO-88213", "tension": 1200}
        _attempt(tracer, "lace", "truing_stand", lace, "stand 1 hydraulics failed")
        _plan(tracer, REPLAN)
        _attempt(tracer, "lace", "truing_stand", {**lace, "stand": 2})
        _attempt(tracer, "notify", "send_sms", {"to": "+44 7700 900310", "wheel": "WH-1"})

    t = _shop(store, play)
    trace = load_traces(store, "default", [t])[t]
    versions = [
        [s.step_id for s in trace.plan_steps if s.plan_version == p.version] for p in trace.plans
    ]
    assert versions == [["orderParts", "lace", "notify"], ["lace", "notify"]]
    replanned = json.loads(trace.plans[1].json)
    assert [s["depends_on"] for s in replanned] == [[], ["lace"]]
    assert not RunawayLoop().detect(trace)


def test_what_is_no_graphql_plan_is_not_read() -> None:
    # a read-only query passes nothing on; JSON, prose and broken documents are no operation
    assert _graphql.steps("query { a: user(id: 1) { name } b: user(id: 2) { name } }") == []
    assert _graphql.steps('{"steps": [{"id": "a"}]}') == []
    assert _graphql.steps("First { do this } then that") == []
    assert _graphql.steps("mutation { a: f(x: 1) { id } a: g(y: 2) { id } }") == []  # same key
    assert _graphql.steps("mutation { a: f(x: ) }") == []
    # a query whose field uses an earlier one's export is a plan
    read = _graphql.steps('{ a: f { id @export(as: "i") } b: g(id: $i) { ok } }')
    assert [(s.name, s.needs) for s in read] == [("a", ()), ("b", ("a",))]


def test_an_agent_run_in_the_apps_attempt_span_is_that_steps_attempt(store: Store) -> None:
    # the app wraps each attempt in a plain span of its own naming the step in words; the
    # agent run inside is named after its class and its tool span names no tool (as MLflow's
    # smolagents autologging records them): the attempt is the wrapping span's step
    def play(tracer: Tracer, root: Any) -> None:
        _plan(tracer, PLAN)
        with tracer.start_as_current_span("step orderParts attempt 1"):
            genai.attempt(tracer, "Agent", None, "Run the call.", "Tool.__call__", {"n": 1})
        for i in range(1, 6):
            with tracer.start_as_current_span(f"step lace attempt {i}"):
                error = f"stand {i} out of true"
                genai.attempt(tracer, "Agent", None, "Run the call.", "Tool.__call__", {}, error)
        root.set_status(Status(StatusCode.ERROR, "stand 5 out of true"))

    t = _shop(store, play)
    trace = load_traces(store, "default", [t])[t]
    steps = {"orderParts", "lace", "notify"}
    # (the planner's own run is no attempt of a step)
    assert [a.step_id for a in trace.attempts if a.step_id in steps] == ["orderParts"] + [
        "lace"
    ] * 5
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "lace"


def test_a_plan_an_mlflow_autologged_smolagents_run_answered_is_read(store: Store) -> None:
    # MLflow's smolagents autologging records an agent run's answer as the answer's __dict__:
    # smolagents' AgentText keeps its text in `_value`, so the output is {"_value": <the plan>}
    # (and MLflow records no model call inside the run)
    def play(tracer: Tracer, root: Any) -> None:
        planner = {
            "mlflow.spanType": '"AGENT"',
            "mlflow.spanInputs": json.dumps({"task": PROMPT}),
            "mlflow.spanOutputs": json.dumps({"_value": PLAN}),
        }
        with tracer.start_as_current_span("ToolCallingAgent.run", attributes=planner):
            pass
        _attempt(tracer, "orderParts", "wholesale_order", {"rim": "DT 545d", "spokes": 36})
        for i in range(1, 6):
            _attempt(tracer, "lace", "truing_stand", {"stand": i}, f"stand {i} out of true")
        root.set_status(Status(StatusCode.ERROR, "stand 5 out of true"))

    t = _shop(store, play)
    trace = load_traces(store, "default", [t])[t]
    (plan,) = trace.plans
    assert [s["id"] for s in json.loads(plan.json)] == ["orderParts", "lace", "notify"]
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "lace"

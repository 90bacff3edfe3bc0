"""Plans: the JSON contract, validation, replans, and recording from planners."""

from __future__ import annotations

import json

import planscope
import pytest
from planscope import Plan, PlanStep, PlanValidationError
from planscope import semconv as A

from .conftest import Spans

CONTRACT_KEYS = ["id", "version", "scope", "objective", "replan_reason", "steps"]
STEP_KEYS = [
    "id", "description", "executor", "tool", "depends_on", "requires", "produces", "irreversible",
]  # fmt: skip


def sample() -> Plan:
    return Plan(
        [
            PlanStep("fetch", "get invoice", executor="w1", tool="http", produces=["invoice"]),
            PlanStep(
                "pay", "pay it", depends_on=["fetch"], requires=["invoice"], irreversible=True
            ),
        ],
        id="p-1",
        scope="billing",
        objective="pay invoice 42",
    )


def test_json_shape_is_exactly_the_contract() -> None:
    data = json.loads(sample().to_json())
    assert list(data) == CONTRACT_KEYS
    assert [list(s) for s in data["steps"]] == [STEP_KEYS, STEP_KEYS]
    assert data["steps"][1] == {
        "id": "pay",
        "description": "pay it",
        "executor": None,
        "tool": None,
        "depends_on": ["fetch"],
        "requires": ["invoice"],
        "produces": [],
        "irreversible": True,
    }
    assert data["version"] == 1 and data["replan_reason"] is None


def test_round_trips() -> None:
    plan = sample()
    assert Plan.from_json(plan.to_json()) == plan
    assert Plan.from_dict(plan.to_dict()) == plan
    assert PlanStep.from_dict(plan.steps[0].to_dict()) == plan.steps[0]


def test_from_dict_is_lenient_on_optional_keys() -> None:
    plan = Plan.from_dict({"steps": [{"id": "a"}, {"id": "b", "depends_on": ["a"]}], "note": 1})
    assert plan.version == 1 and len(plan.id) == 32
    assert plan.steps[1].depends_on == ("a",)


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ([PlanStep("a"), PlanStep("a")], "duplicate step ids ['a']"),
        ([PlanStep("a", depends_on=["zzz"])], "unknown step(s) ['zzz']"),
        ([PlanStep("a", depends_on=["a"])], "depends on itself"),
        (
            [
                PlanStep("a", depends_on=["c"]),
                PlanStep("b", depends_on=["a"]),
                PlanStep("c", depends_on=["b"]),
            ],
            "dependency cycle a -> c -> b -> a",
        ),
    ],
)
def test_validation_errors(steps: list[PlanStep], message: str) -> None:
    with pytest.raises(PlanValidationError) as info:
        Plan(steps, id="p")
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        '{"id": "p"}',
        '{"steps": [{"description": "no id"}]}',
        '{"steps": [{"id": "a", "depends_on": "b"}]}',
        '{"steps": [], "version": 0}',
    ],
)
def test_invalid_json_plans(text: str) -> None:
    with pytest.raises(PlanValidationError):
        Plan.from_json(text)


def test_topological_order_and_replan() -> None:
    plan = Plan(
        [PlanStep("c", depends_on=["a", "b"]), PlanStep("b", depends_on=["a"]), PlanStep("a")],
        id="p",
    )
    assert [s.id for s in plan.topological_order()] == ["a", "b", "c"]
    nxt = plan.replan([PlanStep("a"), PlanStep("d", depends_on=["a"])], reason="c failed")
    assert (nxt.id, nxt.version, nxt.replan_reason) == ("p", 2, "c failed")
    assert plan.step("b").depends_on == ("a",)


def test_planner_records_plan_and_versions_grow_on_replan(spans: Spans) -> None:
    @planscope.planner
    def plan_for(objective: str, attempt: int) -> Plan:
        steps = [PlanStep("fetch"), PlanStep("pay", depends_on=["fetch"])]
        if attempt == 0:
            return Plan(steps, id="plan-x", objective=objective)
        return Plan(steps[:1], id="plan-x", replan_reason="pay failed")  # version left at 1

    @planscope.step
    def execute(step: PlanStep) -> None: ...

    @planscope.run("billing")
    def agent() -> None:
        for attempt in range(3):
            plan_for("pay", attempt)
            current = planscope.current_plan()
            assert current is not None and current.version == attempt + 1
            execute(current.steps[0])

    agent()
    plans = [Spans.attrs(s) for s in spans.of_kind(A.KIND_PLAN)]
    assert [p[A.PLAN_VERSION] for p in plans] == [1, 2, 3]
    assert A.PLAN_PARENT_VERSION not in plans[0]
    assert [p.get(A.PLAN_PARENT_VERSION) for p in plans[1:]] == [1, 2]
    assert plans[1][A.PLAN_REPLAN_REASON] == "pay failed"
    assert [p[A.PLAN_STEP_COUNT] for p in plans] == [2, 1, 1]
    assert json.loads(plans[2][A.PLAN_JSON])["version"] == 3
    assert A.OUTPUT not in plans[0]  # the plan is in planscope.plan.json
    assert spans.of_kind(A.KIND_PLAN)[0].name == "plan billing"
    steps = [Spans.attrs(s) for s in spans.of_kind(A.KIND_STEP)]
    assert [(s[A.PLAN_ID], s[A.PLAN_VERSION]) for s in steps] == [("plan-x", v) for v in (1, 2, 3)]


def test_explicit_versions_are_kept(spans: Spans) -> None:
    first = Plan([PlanStep("a")], id="p")

    with planscope.start_run("agent"):
        for plan in (first, first.replan([PlanStep("b")]), first.with_version(5)):
            with planscope.start_plan() as p:
                p.set_plan(plan)
    versions = [Spans.attrs(s)[A.PLAN_VERSION] for s in spans.of_kind(A.KIND_PLAN)]
    assert versions == [1, 2, 5]


def test_list_and_dict_returns_are_plans_and_continue_the_current_id(spans: Spans) -> None:
    @planscope.planner
    def as_list() -> list[dict[str, str]]:
        return [{"id": "a"}, {"id": "b"}]

    @planscope.planner
    def as_dict() -> dict[str, object]:
        return {"steps": [{"id": "a"}], "replan_reason": "b not needed"}

    with planscope.start_run("agent"):
        as_list()
        first = planscope.current_plan()
        as_dict()
        second = planscope.current_plan()
    assert first is not None and second is not None
    assert second.id == first.id
    assert (first.version, second.version) == (1, 2)


def test_planner_inside_a_step_plans_that_steps_scope(spans: Spans) -> None:
    """ADaPT: a failing step is decomposed; its sub-plan is scoped to it and current only inside."""

    @planscope.planner
    def decompose(goal: str) -> Plan:
        return Plan([PlanStep(f"{goal}.1"), PlanStep(f"{goal}.2")], id="sub")

    @planscope.step
    def execute(step_id: str) -> None:
        if step_id == "big":
            sub = decompose(step_id)
            for s in sub.steps:
                execute(s.id)

    with planscope.start_run("agent"):
        with planscope.start_plan() as p:
            p.set_plan(Plan([PlanStep("big"), PlanStep("after")], id="top"))
        execute("big")
        execute("after")

    sub_plan = Spans.attrs(spans.of_kind(A.KIND_PLAN)[1])
    assert sub_plan[A.PLAN_SCOPE] == "big"
    assert json.loads(sub_plan[A.PLAN_JSON])["scope"] == "big"
    steps = {Spans.attrs(s)[A.STEP_ID]: Spans.attrs(s) for s in spans.of_kind(A.KIND_STEP)}
    assert steps["big.1"][A.PLAN_ID] == "sub"
    assert steps["big.1"][A.STEP_DEPTH] == 1
    assert steps["big"][A.PLAN_ID] == "top"
    assert steps["after"][A.PLAN_ID] == "top"


def test_llm_inside_planner_has_planner_role(spans: Spans) -> None:
    @planscope.llm("big-model")
    def think() -> str:
        return "plan"

    @planscope.planner
    def plan() -> Plan:
        think()
        return Plan([PlanStep("a")])

    plan()
    assert Spans.attrs(spans.one(A.KIND_LLM))[A.LLM_ROLE] == "planner"


def test_non_plan_return_is_just_output(spans: Spans) -> None:
    @planscope.planner
    def plan() -> str:
        return "no plan today"

    plan()
    attrs = Spans.attrs(spans.one(A.KIND_PLAN))
    assert A.PLAN_ID not in attrs
    assert json.loads(attrs[A.OUTPUT]) == "no plan today"


def test_approval_inside_and_after_the_planner(spans: Spans) -> None:
    @planscope.planner
    def plan() -> Plan:
        planscope.record_approval(True, edited=True, reviewer="alice")
        return Plan([PlanStep("a")], id="p")

    with planscope.start_run("agent"):
        plan()
        planscope.record_approval(False, reviewer="bob")
        planscope.record_replan_request("needs a cheaper supplier")

    plan_span = spans.one(A.KIND_PLAN)
    assert Spans.attrs(plan_span)[A.PLAN_APPROVAL] == A.APPROVAL_EDITED
    (granted,) = [e for e in plan_span.events if e.name == A.EVENT_APPROVAL_GRANTED]
    assert granted.attributes is not None
    assert granted.attributes[A.APPROVAL_REVIEWER] == "alice"
    run_span = spans.one(A.KIND_RUN)
    events = {e.name: dict(e.attributes or {}) for e in run_span.events}
    assert events[A.EVENT_APPROVAL_DENIED][A.PLAN_ID] == "p"
    assert events[A.EVENT_APPROVAL_DENIED][A.PLAN_APPROVAL] == A.APPROVAL_REJECTED
    assert events[A.EVENT_REPLAN_REQUESTED][A.PLAN_REPLAN_REASON] == "needs a cheaper supplier"
    assert events[A.EVENT_REPLAN_REQUESTED][A.PLAN_VERSION] == 1

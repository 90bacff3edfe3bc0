"""Retry budgets: the schema, and enforcement / observation at run time."""

from __future__ import annotations

import json
import pickle

import planscope
import pytest
from opentelemetry.trace import StatusCode
from planscope import ConfigurationError, Plan, PlanStep, RetryBudget, RetryBudgetExceeded
from planscope import semconv as A

from .conftest import Spans


def test_schema_round_trip_and_defaults() -> None:
    budget = RetryBudget(max_attempts_per_step=3, max_tokens=1000, enforce=False)
    assert budget.to_dict() == {
        "max_attempts_per_step": 3,
        "max_attempts_per_run": None,
        "max_replans": None,
        "max_tokens": 1000,
        "enforce": False,
    }
    assert RetryBudget.from_json(budget.to_json()) == budget
    assert RetryBudget.from_dict({}) == RetryBudget()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"max_attempts_per_step": -1}, "max_attempts_per_step must be >= 0"),
        ({"max_tokens": 1.5}, "max_tokens must be a non-negative integer"),
        ({"max_replans": True}, "max_replans must be a non-negative integer"),
        ({"enforce": "yes"}, "enforce must be a boolean"),
        ({"max_attempts": 3}, "unknown RetryBudget key(s) ['max_attempts']"),
    ],
)
def test_schema_rejects_bad_values(data: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        RetryBudget.from_dict(data)
    assert message in str(info.value)


def test_invalid_json_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="invalid"):
        RetryBudget.from_json("{")
    with pytest.raises(ConfigurationError, match="JSON object"):
        RetryBudget.from_json("[1]")


def test_exception_carries_the_limit_and_pickles() -> None:
    exc = RetryBudgetExceeded("max_attempts_per_step", 2, 3, step_id="fetch", run_id="r")
    clone = pickle.loads(pickle.dumps(exc))
    assert (clone.limit_name, clone.limit_value, clone.observed, clone.step_id, clone.run_id) == (
        "max_attempts_per_step", 2, 3, "fetch", "r",
    )  # fmt: skip
    assert "max_attempts_per_step=2" in str(exc) and "'fetch'" in str(exc)


def budget_events(span: object) -> list[dict[str, object]]:
    return [
        dict(e.attributes or {})
        for e in span.events  # type: ignore[attr-defined]
        if e.name == A.EVENT_RETRY_BUDGET_EXCEEDED
    ]


def test_enforced_step_budget_refuses_the_attempt_before_the_body(spans: Spans) -> None:
    ran: list[int] = []

    @planscope.step("fetch")
    def fetch() -> None:
        ran.append(1)
        raise TimeoutError

    @planscope.run(budget=RetryBudget(max_attempts_per_step=2))
    def agent() -> None:
        for _ in range(10):  # bounded: the budget must stop it at the third attempt
            try:
                fetch()
            except TimeoutError:
                continue

    with pytest.raises(RetryBudgetExceeded) as info:
        agent()
    assert len(ran) == 2
    assert (info.value.limit_name, info.value.limit_value, info.value.observed) == (
        "max_attempts_per_step", 2, 3,
    )  # fmt: skip
    assert info.value.step_id == "fetch"
    refused = spans.of_kind(A.KIND_STEP)[-1]
    attrs = Spans.attrs(refused)
    assert attrs[A.STEP_ATTEMPT] == 3
    assert attrs[A.STEP_STATUS] == A.STATUS_SKIPPED
    assert attrs[A.ERROR_TYPE] == "RetryBudgetExceeded"
    (event,) = budget_events(refused)
    assert event == {
        A.BUDGET_LIMIT_NAME: "max_attempts_per_step",
        A.BUDGET_LIMIT_VALUE: 2,
        A.BUDGET_OBSERVED: 3,
        A.BUDGET_ENFORCED: True,
        A.STEP_ID: "fetch",
        A.RUN_ID: info.value.run_id,
    }
    run = Spans.attrs(spans.one(A.KIND_RUN))
    assert run[A.RUN_OUTCOME_REASON] == "RetryBudgetExceeded"
    assert json.loads(run[A.RUN_BUDGET])["max_attempts_per_step"] == 2


def test_observe_only_budget_records_events_and_continues(spans: Spans, provider: object) -> None:
    planscope.configure(
        tracer_provider=provider,
        budget=RetryBudget(max_attempts_per_step=1, max_attempts_per_run=2, enforce=False),
    )

    @planscope.step
    def work(step_id: str) -> str:
        return step_id

    with planscope.start_run("agent"):
        assert [work("a"), work("a"), work("b")] == ["a", "a", "b"]

    steps = spans.of_kind(A.KIND_STEP)
    assert budget_events(steps[0]) == []
    assert [e[A.BUDGET_LIMIT_NAME] for e in budget_events(steps[1])] == ["max_attempts_per_step"]
    assert [e[A.BUDGET_LIMIT_NAME] for e in budget_events(steps[2])] == ["max_attempts_per_run"]
    assert all(e[A.BUDGET_ENFORCED] is False for s in steps for e in budget_events(s))
    assert [Spans.attrs(s)[A.STEP_STATUS] for s in steps] == ["ok", "ok", "ok"]


def test_run_budget_overrides_the_configured_default(spans: Spans, provider: object) -> None:
    planscope.configure(tracer_provider=provider, budget=RetryBudget(max_attempts_per_step=1))

    @planscope.step
    def work() -> None: ...

    with planscope.start_run("lenient", budget={"max_attempts_per_step": 5}):
        for _ in range(3):
            work()
    with planscope.start_run("strict"), pytest.raises(RetryBudgetExceeded):
        work()
        work()


def test_enforced_replan_budget(spans: Spans) -> None:
    @planscope.planner
    def plan(n: int) -> Plan:
        return Plan([PlanStep("a")], id="p", replan_reason=f"try {n}" if n else None)

    @planscope.step
    def a() -> None: ...

    with planscope.start_run("agent", budget=RetryBudget(max_replans=1)) as run:
        plan(0)
        plan(1)
        with pytest.raises(RetryBudgetExceeded) as info:
            plan(2)
        current = planscope.current_plan()
        a()  # the app carries on with the plan it has
        with pytest.raises(RetryBudgetExceeded):
            plan(3)
        assert run.plan is not None and run.plan.version == 2
    assert info.value.limit_name == "max_replans" and info.value.observed == 2
    # a refused replan is recorded with the next version, but never becomes current
    assert current is not None and current.version == 2
    versions = [
        (Spans.attrs(s)[A.PLAN_VERSION], Spans.attrs(s).get(A.PLAN_PARENT_VERSION))
        for s in spans.of_kind(A.KIND_PLAN)
    ]
    assert versions == [(1, None), (2, 1), (3, 2), (4, 3)]
    assert Spans.attrs(spans.one(A.KIND_STEP))[A.PLAN_VERSION] == 2
    refused = spans.of_kind(A.KIND_PLAN)[2]
    assert budget_events(refused)[0][A.BUDGET_LIMIT_NAME] == "max_replans"
    assert Spans.attrs(refused)[A.ERROR_TYPE] == "RetryBudgetExceeded"
    assert refused.status.status_code is StatusCode.ERROR


def test_step_attempts_count_across_replans_that_keep_the_step_id(spans: Spans) -> None:
    """A replan keeping a step's id does not reset its attempts (docs/sdk.md, Retry budgets)."""

    @planscope.planner
    def plan(n: int) -> Plan:
        return Plan([PlanStep("pay")], id="p", replan_reason=f"failed {n}" if n else None)

    @planscope.step
    def pay() -> None:
        raise TimeoutError

    with planscope.start_run("agent", budget=RetryBudget(max_attempts_per_step=2)):
        for n in range(2):  # one attempt under each of two plan versions
            plan(n)
            with pytest.raises(TimeoutError):
                pay()
        plan(2)
        with pytest.raises(RetryBudgetExceeded) as info:
            pay()  # the third attempt of "pay" in this run, though the first of plan v3
    assert info.value.limit_name == "max_attempts_per_step" and info.value.observed == 3
    attempts = [Spans.attrs(s)[A.STEP_ATTEMPT] for s in spans.of_kind(A.KIND_STEP)]
    assert attempts == [1, 2, 3]


def test_enforced_token_budget_from_record_usage_and_from_responses(spans: Spans) -> None:
    @planscope.llm("m")
    def chat(tokens: int) -> dict[str, object]:
        return {"usage": {"prompt_tokens": tokens, "completion_tokens": 0}}

    with planscope.start_run("agent", budget=RetryBudget(max_tokens=100)):
        chat(60)
        with pytest.raises(RetryBudgetExceeded) as info:
            chat(50)
        with planscope.start_llm("m"), pytest.raises(RetryBudgetExceeded):
            planscope.record_usage(input_tokens=1)
    assert info.value.limit_name == "max_tokens" and info.value.observed == 110
    llms = spans.of_kind(A.KIND_LLM)
    assert budget_events(llms[0]) == []
    assert budget_events(llms[1])[0][A.BUDGET_OBSERVED] == 110
    assert budget_events(llms[2])[0][A.BUDGET_OBSERVED] == 111


def test_budgets_work_without_an_sdk_provider() -> None:
    """Enforcement is state, not telemetry: it works on the no-op tracer too."""

    @planscope.step
    def work() -> None: ...

    with planscope.start_run("agent", budget=RetryBudget(max_attempts_per_step=1)):
        work()
        with pytest.raises(RetryBudgetExceeded):
            work()

"""Steps: attempt counting, step id resolution, propagation to tool/LLM spans, context records."""

from __future__ import annotations

import json
from typing import Any

import planscope
import pytest
from planscope import PlanStep, api
from planscope import semconv as A

from .conftest import Spans


@planscope.tool(effect="read", resource="db:invoices")
def lookup(key: str) -> str:
    return f"value-{key}"


@planscope.llm("gpt-4o-mini")
def ask(prompt: str) -> str:
    return "ok"


def test_attempts_count_per_run_and_step_id(spans: Spans) -> None:
    @planscope.step
    def execute(step: PlanStep) -> None:
        lookup(step.id)

    @planscope.run
    def agent() -> None:
        a, b = PlanStep("a"), PlanStep("b")
        for s in (a, b, a, a):
            execute(s)

    agent()
    agent()  # a second run starts counting again

    attempts = [
        (Spans.attrs(s)[A.STEP_ID], Spans.attrs(s)[A.STEP_ATTEMPT])
        for s in spans.of_kind(A.KIND_STEP)
    ]
    assert attempts == [("a", 1), ("b", 1), ("a", 2), ("a", 3)] * 2
    tool_attempts = [Spans.attrs(s)[A.STEP_ATTEMPT] for s in spans.of_kind(A.KIND_TOOL)]
    assert tool_attempts == [1, 1, 2, 3] * 2


def test_failed_attempts_count_and_carry_a_stable_fingerprint(spans: Spans) -> None:
    calls = iter(range(100))

    @planscope.step("fetch")
    def fetch() -> None:
        raise TimeoutError(f"upstream timed out after {next(calls) + 30}s (req 0x{id(calls):x})")

    with planscope.start_run("agent"):
        for _ in range(3):
            with pytest.raises(TimeoutError):
                fetch()

    steps = spans.of_kind(A.KIND_STEP)
    assert [Spans.attrs(s)[A.STEP_ATTEMPT] for s in steps] == [1, 2, 3]
    fingerprints = {Spans.attrs(s)[A.STEP_ERROR_FINGERPRINT] for s in steps}
    assert len(fingerprints) == 1  # numbers and addresses are normalised
    attrs = Spans.attrs(steps[0])
    assert attrs[A.STEP_STATUS] == A.STATUS_ERROR
    assert attrs[A.ERROR_TYPE] == "TimeoutError"


def test_different_errors_have_different_fingerprints(spans: Spans) -> None:
    @planscope.step
    def work(kind: str) -> None:
        raise (ValueError if kind == "v" else KeyError)("bad thing")

    for kind in ("v", "k"):
        with pytest.raises((ValueError, KeyError)):
            work(kind)
    fps = [Spans.attrs(s)[A.STEP_ERROR_FINGERPRINT] for s in spans.of_kind(A.KIND_STEP)]
    assert fps[0] != fps[1]


def test_step_id_resolution_order(spans: Spans) -> None:
    @planscope.step
    def by_plan_step(step: PlanStep) -> None: ...

    @planscope.step
    def by_step_id(step_id: str, payload: int) -> None: ...

    @planscope.step("fixed", executor="worker-1")
    def fixed(step: PlanStep) -> None: ...

    @planscope.step
    def by_name() -> None: ...

    with planscope.start_run("agent"):
        by_plan_step(PlanStep("from-plan-step", executor="worker-7"))
        by_step_id("from-arg", 1)
        fixed(PlanStep("ignored", executor="ignored"))
        by_name()

    steps = [Spans.attrs(s) for s in spans.of_kind(A.KIND_STEP)]
    assert [s[A.STEP_ID] for s in steps] == ["from-plan-step", "from-arg", "fixed", "by_name"]
    assert steps[0][A.STEP_EXECUTOR] == "worker-7"
    assert steps[2][A.STEP_EXECUTOR] == "worker-1"  # the decorator's wins over the PlanStep's
    assert spans.of_kind(A.KIND_STEP)[0].name == "execute_step from-plan-step"


def test_tool_and_llm_spans_are_stamped_with_their_step(spans: Spans) -> None:
    plan = planscope.Plan([PlanStep("s1")], id="plan-1")

    @planscope.planner
    def make_plan() -> planscope.Plan:
        return plan

    @planscope.step(executor="w1")
    def execute(step: PlanStep) -> None:
        lookup("k")
        ask("why?")

    with planscope.start_run("agent", run_id="run-9"):
        make_plan()
        execute(plan.steps[0])
        lookup("outside a step")

    tools = spans.of_kind(A.KIND_TOOL)
    inside, outside = Spans.attrs(tools[0]), Spans.attrs(tools[1])
    llm = Spans.attrs(spans.one(A.KIND_LLM))
    for attrs in (inside, llm):
        assert attrs[A.RUN_ID] == "run-9"
        assert attrs[A.STEP_ID] == "s1"
        assert attrs[A.STEP_ATTEMPT] == 1
        assert attrs[A.PLAN_ID] == "plan-1"
        assert attrs[A.PLAN_VERSION] == 1
    assert llm[A.LLM_ROLE] == "executor"
    assert inside[A.TOOL_RESOURCE] == "db:invoices"
    assert inside[A.TOOL_EFFECT] == A.EFFECT_READ
    assert outside[A.RUN_ID] == "run-9"
    assert A.STEP_ID not in outside
    step = Spans.attrs(spans.one(A.KIND_STEP))
    assert step[A.PLAN_ID] == "plan-1"
    assert step[A.STEP_DEPTH] == 0


def test_nested_steps_get_depth_and_their_own_attempts(spans: Spans) -> None:
    @planscope.step
    def leaf(step_id: str) -> None: ...

    @planscope.step("parent")
    def parent() -> None:
        leaf("child")
        leaf("child")

    with planscope.start_run("agent"):
        parent()
    by_id: dict[str, list[dict[str, Any]]] = {}
    for s in spans.of_kind(A.KIND_STEP):
        attrs = Spans.attrs(s)
        by_id.setdefault(attrs[A.STEP_ID], []).append(attrs)
    assert [a[A.STEP_ATTEMPT] for a in by_id["child"]] == [1, 2]
    assert {a[A.STEP_DEPTH] for a in by_id["child"]} == {1}
    assert by_id["parent"][0][A.STEP_DEPTH] == 0


def test_tool_args_hash_and_input_hash_are_stable(spans: Spans) -> None:
    @planscope.step
    def execute(step_id: str, data: dict[str, int]) -> None:
        lookup(str(sorted(data)))

    with planscope.start_run("agent"):
        execute("s", {"a": 1, "b": 2})
        execute("s", {"b": 2, "a": 1})
        execute("s", {"a": 1, "b": 3})
    hashes = [Spans.attrs(s)[A.STEP_INPUT_HASH] for s in spans.of_kind(A.KIND_STEP)]
    assert hashes[0] == hashes[1] != hashes[2]
    args = [Spans.attrs(s)[A.TOOL_ARGS_HASH] for s in spans.of_kind(A.KIND_TOOL)]
    assert args[0] == args[1] == args[2]
    assert len(hashes[0]) == 16


def test_record_context_and_self_assessment(spans: Spans) -> None:
    @planscope.step
    def execute(step_id: str) -> None:
        planscope.record_context({"invoice": "x" * 40, "customer": "acme"})
        planscope.record_context(["history"], tokens=100)
        planscope.record_self_assessment("failure")

    with planscope.start_run("agent"):
        execute("s1")
    attrs = Spans.attrs(spans.one(A.KIND_STEP))
    assert json.loads(attrs[A.STEP_CONTEXT_KEYS]) == ["customer", "history", "invoice"]
    assert attrs[A.STEP_CONTEXT_TOKENS] == 11 + 100  # ceil(44 / 4) + explicit count
    assert attrs[A.STEP_SELF_ASSESSMENT] == "failure"


def test_record_helpers_are_noops_outside_their_span(spans: Spans) -> None:
    planscope.record_context(["a"])
    planscope.record_self_assessment("success")
    planscope.record_usage(input_tokens=1)
    planscope.set_outcome("success")
    assert planscope.current_run() is None and planscope.current_step() is None
    assert spans.all() == []


def test_steps_outside_a_run_count_attempts_per_trace(spans: Spans) -> None:
    @planscope.step
    def work(step_id: str) -> None: ...

    tracer = planscope._config.tracer()
    with tracer.start_as_current_span("job"):
        work("a")
        work("a")
    work("a")  # a new trace: attempt 1 again
    attempts = [Spans.attrs(s)[A.STEP_ATTEMPT] for s in spans.of_kind(A.KIND_STEP)]
    assert attempts == [1, 2, 1]
    assert A.RUN_ID not in Spans.attrs(spans.of_kind(A.KIND_STEP)[0])


def test_run_outcome(spans: Spans) -> None:
    @planscope.run
    def ok() -> None:
        planscope.set_outcome("success", reason="checked")

    @planscope.run
    def silent() -> None: ...

    @planscope.run
    def broken() -> None:
        raise KeyError("x")

    @planscope.run
    def checked() -> None:
        planscope.record_outcome_check(False, name="balance", reason="off by 1")

    ok()
    silent()
    with pytest.raises(KeyError):
        broken()
    checked()
    runs = {s.name: Spans.attrs(s) for s in spans.of_kind(A.KIND_RUN)}
    assert runs["invoke_agent ok"][A.RUN_OUTCOME] == "success"
    assert runs["invoke_agent ok"][A.RUN_OUTCOME_REASON] == "checked"
    assert runs["invoke_agent silent"][A.RUN_OUTCOME] == "unknown"
    assert runs["invoke_agent broken"][A.RUN_OUTCOME] == "failure"
    assert runs["invoke_agent broken"][A.RUN_OUTCOME_REASON] == "KeyError"
    assert runs["invoke_agent checked"][A.RUN_OUTCOME] == "failure"
    check_span = spans.named("invoke_agent checked")
    (event,) = [e for e in check_span.events if e.name == A.EVENT_OUTCOME_CHECK]
    assert event.attributes is not None
    assert event.attributes[A.OUTCOME_CHECK_NAME] == "balance"
    assert len({r[A.RUN_ID] for r in runs.values()}) == 4


def test_run_objective_and_id_from_arguments(spans: Spans) -> None:
    @planscope.run("support", variant="adapt")
    def agent(objective: str, run_id: str) -> None:
        run = planscope.current_run()
        assert run is not None and run.run_id == run_id

    agent("refund order 7", "r-77")
    attrs = Spans.attrs(spans.one(A.KIND_RUN))
    assert attrs[A.RUN_OBJECTIVE] == "refund order 7"
    assert attrs[A.RUN_ID] == "r-77"
    assert attrs[A.RUN_VARIANT] == "adapt"


def test_the_run_handle_gives_the_trace_id(spans: Spans) -> None:
    @planscope.run("support")
    def agent() -> str | None:
        run = planscope.current_run()
        assert run is not None
        return run.trace_id

    trace_id = agent()
    assert trace_id == format(spans.one(A.KIND_RUN).context.trace_id, "032x")
    assert api.is_trace_id(trace_id)


def test_an_invalid_outcome_is_a_configuration_error(
    spans: Spans, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Raised to the caller even where SDK-internal errors are swallowed (outside tests).
    monkeypatch.setenv("PLANSCOPE_RAISE_INTERNAL_ERRORS", "false")
    with planscope.start_run("a"), pytest.raises(planscope.ConfigurationError, match="great"):
        planscope.set_outcome("great")
    with pytest.raises(planscope.ConfigurationError):
        planscope.set_outcome("great")  # outside a run too

"""Every variant completes every healthy task with the scripted model, traced end to end."""

from __future__ import annotations

import pytest
from planscope import semconv as A
from planscope_runners import TASKS, VARIANTS, ScriptedModel, run_task

from .conftest import Spans, attr


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_variant_completes_all_healthy_tasks(variant: str) -> None:
    failed = {}
    for task in TASKS.values():
        result = run_task(variant, task.env, task)
        if not result.success:
            failed[task.id] = result.reason
        assert result.expected == () and result.negatives == ()
    assert failed == {}


@pytest.mark.parametrize("variant", ["plan_and_act", "adapt", "scripts", "dag"])
def test_every_action_traces_back_to_a_plan_step(spans: Spans, variant: str) -> None:
    result = run_task(variant, "support", "support-refund-ana")
    assert result.success
    run = spans.run()
    assert attr(run, A.RUN_VARIANT) == variant
    assert attr(run, A.RUN_OUTCOME) == "success"
    assert any(e.name == A.EVENT_OUTCOME_CHECK for e in run.events)
    planned = {(p["version"], s["id"]) for p in spans.plans() for s in p["steps"]}
    for step in spans.steps():
        assert attr(step, A.PLAN_ID), step.name
        assert (attr(step, A.PLAN_VERSION), attr(step, A.STEP_ID)) in planned
        assert attr(step, A.STEP_CONTEXT_KEYS) is not None
    for tool in spans.of_kind(A.KIND_TOOL):
        assert attr(tool, A.STEP_ID) and attr(tool, A.TOOL_EFFECT) in A.TOOL_EFFECTS
        assert attr(tool, A.TOOL_RESOURCE)
    llms = spans.of_kind(A.KIND_LLM)
    assert llms and all(attr(s, A.GEN_AI_USAGE_INPUT_TOKENS) > 0 for s in llms)
    assert {attr(s, A.LLM_ROLE) for s in llms} >= {"planner"}
    refund = next(
        s for s in spans.of_kind(A.KIND_TOOL) if attr(s, A.GEN_AI_TOOL_NAME) == "issue_refund"
    )
    assert attr(refund, A.TOOL_EFFECT) == "irreversible"


def test_planner_and_executor_use_their_own_models(spans: Spans) -> None:
    run_task("plan_and_act", "ops", "ops-deploy-api")
    by_role = {
        (attr(s, A.LLM_ROLE), attr(s, A.GEN_AI_REQUEST_MODEL)) for s in spans.of_kind(A.KIND_LLM)
    }
    assert by_role == {("planner", "scripted-planner"), ("executor", "scripted-executor")}


def test_dag_runs_wide_nodes_in_parallel_as_children_of_the_run(spans: Spans) -> None:
    # Each executor call takes 0.2 s, so parallel reads overlap however loaded the machine is
    # (without latency the scheduler sometimes ran them one after the other: a flaky test).
    executor = ScriptedModel("scripted-executor", latency=0.2)
    result = run_task("dag", "files", "files-merge-6", max_workers=4, executor=executor)
    assert result.success
    run = spans.run()
    steps = spans.steps()
    assert len(steps) == 7
    for step in steps:  # OTel context propagated into the worker threads
        assert step.context.trace_id == run.context.trace_id
        assert step.parent is not None and step.parent.span_id == run.context.span_id
    reads = [s for s in steps if str(attr(s, A.STEP_ID)).startswith("read_")]
    overlapping = sum(
        1
        for a in reads
        for b in reads
        if a is not b and a.start_time < b.end_time and b.start_time < a.end_time  # type: ignore[operator]
    )
    assert overlapping > 0
    for tool in spans.of_kind(A.KIND_TOOL):  # tool spans stay inside their step
        assert tool.parent is not None
        assert tool.parent.span_id in {s.context.span_id for s in steps}


def test_react_records_iterations_as_steps_without_a_plan(spans: Spans) -> None:
    result = run_task("react", "ops", "ops-migrate-db-secret")
    assert result.success
    assert spans.plans() == []
    ids = [attr(s, A.STEP_ID) for s in spans.steps()]
    assert ids == [f"iter-{i}" for i in range(1, 6)]  # 4 actions + FINISH
    assert all(attr(s, A.STEP_EXECUTOR) == "react" for s in spans.steps())


def test_adapt_decomposes_only_what_its_executor_cannot_finish(spans: Spans) -> None:
    result = run_task("adapt", "ops", "ops-deploy-api")  # 5 actions: more than one attempt holds
    assert result.success
    root = spans.steps("root")[0]
    assert attr(root, A.STEP_SELF_ASSESSMENT) == "failure" and attr(root, A.STEP_DEPTH) == 0
    children = [s for s in spans.steps() if attr(s, A.STEP_ID) != "root"]
    assert children and all(attr(s, A.STEP_DEPTH) == 1 for s in children)
    assert all(attr(s, A.STEP_SELF_ASSESSMENT) == "success" for s in children)
    scopes = [attr(s, A.PLAN_SCOPE) for s in spans.of_kind(A.KIND_PLAN)]
    assert scopes == [None, "root"]


def test_adapt_does_not_decompose_a_task_its_executor_finishes(spans: Spans) -> None:
    result = run_task("adapt", "ops", "ops-release-api")  # 4 actions, one after another
    assert result.success and result.counters.plans == 1
    (root,) = spans.steps()
    assert attr(root, A.STEP_SELF_ASSESSMENT) == "success"
    tools = [
        t
        for t in spans.of_kind(A.KIND_TOOL)
        if t.parent and t.parent.span_id == root.context.span_id
    ]
    assert len(tools) == 4


def test_dag_spends_fewer_planner_tokens_on_a_scoped_replan_than_whole_plan_replanning() -> None:
    def planner_tokens(variant: str) -> int:
        healthy = run_task(variant, "ops", "ops-scale-fleet")
        faulty = run_task(variant, "ops", "ops-scale-fleet", ["needs_replan"], seed=2)
        assert faulty.success and faulty.counters.replans == 1
        c, h = faulty.counters, healthy.counters
        return (c.input_tokens + c.output_tokens) - (h.input_tokens + h.output_tokens)

    assert planner_tokens("dag") < planner_tokens("plan_and_act")

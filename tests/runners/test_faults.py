"""Each fault knob produces its labelled behaviour and the spans an analyzer needs to see it."""

from __future__ import annotations

import json

import pytest
from planscope import semconv as A
from planscope_runners import KNOBS, TASKS, make_env, resolve_faults, run_task
from planscope_runners._faults import applicable_knobs

from .conftest import Spans, attr


def _tools(env: str) -> dict[str, str]:
    return {s.id: s.tool for t in TASKS.values() if t.env == env for s in t.steps}


def test_loop_same_error_repeats_same_error_and_inputs_until_the_budget_stops_it(
    spans: Spans,
) -> None:
    result = run_task("plan_and_act", "ops", "ops-deploy-api", ["loop_same_error"], seed=1)
    assert result.outcome == "failure" and "retry budget exceeded" in (result.reason or "")
    (finding,) = result.expected
    assert finding.kind == "runaway_loop" and finding.step_id == result.faults[0].target
    attempts = spans.steps(finding.step_id)
    errors = [s for s in attempts if attr(s, A.STEP_STATUS) == "error"]
    assert len(errors) == 4  # max_attempts_per_step=4 ...
    assert attr(attempts[-1], A.STEP_STATUS) == "skipped"  # ... the 5th is refused
    assert len({attr(s, A.STEP_ERROR_FINGERPRINT) for s in errors}) == 1
    assert len({attr(s, A.STEP_INPUT_HASH) for s in errors}) == 1
    assert any(e.name == A.EVENT_RETRY_BUDGET_EXCEEDED for e in attempts[-1].events)
    tools = [t for t in spans.of_kind(A.KIND_TOOL) if attr(t, A.STEP_ID) == finding.step_id]
    assert len({attr(t, A.TOOL_ARGS_HASH) for t in tools}) == 1
    assert attr(spans.run(), A.RUN_OUTCOME) == "failure"


def test_loop_unchanged_inputs_varies_the_error_not_the_inputs(spans: Spans) -> None:
    result = run_task("dag", "files", "files-archive-invoice", ["loop_unchanged_inputs"], seed=1)
    (finding,) = result.expected
    assert finding.detail["signal"] == "same_inputs"
    errors = [s for s in spans.steps(finding.step_id) if attr(s, A.STEP_STATUS) == "error"]
    assert len(errors) == 4
    assert len({attr(s, A.STEP_ERROR_FINGERPRINT) for s in errors}) == 4
    assert len({attr(s, A.STEP_INPUT_HASH) for s in errors}) == 1


def test_react_loop_is_labelled_at_the_iteration_and_bounded_by_the_run_budget(
    spans: Spans,
) -> None:
    result = run_task("react", "ops", "ops-deploy-api", ["loop_same_error"], seed=1)
    assert result.outcome == "failure"
    (finding,) = result.expected
    assert finding.step_id.startswith("iter-")
    steps = spans.steps()
    assert len([s for s in steps if attr(s, A.STEP_STATUS) == "error"]) >= 20
    assert attr(steps[-1], A.STEP_STATUS) == "skipped"  # max_attempts_per_run=30 refused it
    assert attr(spans.steps(finding.step_id)[0], A.STEP_STATUS) == "error"


def test_flaky_tool_recovers_within_budget_and_is_a_negative_label(spans: Spans) -> None:
    result = run_task("plan_and_act", "support", "support-refund-ana", ["flaky_tool"], seed=1)
    assert result.success and result.expected == ()
    (negative,) = result.negatives
    assert negative.kind == "runaway_loop"
    attempts = spans.steps(negative.step_id)
    k = result.faults[0].params["failures"]
    assert [attr(s, A.STEP_STATUS) for s in attempts] == ["error"] * k + ["ok"]
    assert not any(e.name == A.EVENT_RETRY_BUDGET_EXCEEDED for s in attempts for e in s.events)


def test_a_planner_fault_adapt_never_reaches_is_inert_and_labels_nothing(spans: Spans) -> None:
    # ADaPT's executor finishes both halves of this 5-action task, so the planner never
    # writes the starved step: the run is healthy and its label says the fault was inert
    result = run_task("adapt", "ops", "ops-deploy-billing", ["context_starved"], seed=1)
    assert result.success and result.expected == () and result.inert == ("context_starved",)
    assert result.label()["inert_faults"] == ["context_starved"]
    assert result.faults[0].target not in {s["id"] for p in spans.plans() for s in p["steps"]}


@pytest.mark.parametrize("variant", ["plan_and_act", "dag"])
def test_context_starved_step_misses_a_required_key(spans: Spans, variant: str) -> None:
    result = run_task(variant, "ops", "ops-deploy-billing", ["context_starved"], seed=1)
    assert result.outcome == "failure"
    (finding,) = result.expected
    missing = finding.detail["missing_keys"][0]
    plan_step = next(s for p in spans.plans() for s in p["steps"] if s["id"] == finding.step_id)
    assert missing in plan_step["requires"]
    step = spans.steps(finding.step_id)[0]
    given = json.loads(attr(step, A.STEP_CONTEXT_KEYS))
    assert missing not in given and set(given) < set(plan_step["requires"])


def test_misread_objective_succeeds_step_by_step_and_fails_the_outcome(spans: Spans) -> None:
    result = run_task(
        "plan_and_act", "support", "support-refund-chloe", ["misread_objective"], seed=1
    )
    assert result.outcome == "failure"
    (finding,) = result.expected
    assert finding.kind == "plan_propagation" and finding.component == "planner"
    assert all(attr(s, A.STEP_STATUS) == "ok" for s in spans.steps())
    wrong = str(result.faults[0].params["wrong"])
    (plan,) = spans.plans()
    first = next(s for s in plan["steps"] if wrong in s["description"])
    assert first["id"] == finding.step_id
    check = next(e for e in spans.run().events if e.name == A.EVENT_OUTCOME_CHECK)
    assert (check.attributes or {})[A.RUN_OUTCOME] == "failure"


def test_adapt_same_goal_resplits_the_same_goal_to_max_depth(spans: Spans) -> None:
    result = run_task("adapt", "ops", "ops-deploy-search", ["adapt_same_goal"], max_depth=3)
    assert result.outcome == "failure"
    assert result.expected[0].step_id == "root"
    depths = [attr(s, A.STEP_DEPTH) for s in spans.steps()]
    assert depths == [0, 1, 2, 3]
    assert all(attr(s, A.STEP_SELF_ASSESSMENT) == "failure" for s in spans.steps())
    scopes = [attr(s, A.PLAN_SCOPE) for s in spans.of_kind(A.KIND_PLAN)]
    assert scopes == [None, "root", "root.1", "root.1.1"]


def test_implicit_dependency_reads_outside_depends_on(spans: Spans) -> None:
    result = run_task("plan_and_act", "files", "files-merge-3", ["implicit_dependency"], seed=1)
    assert result.success  # a structural weakness, not (yet) a failure
    (finding,) = result.expected
    (plan,) = spans.plans()
    step = next(s for s in plan["steps"] if s["id"] == finding.step_id)
    producer = next(s for s in plan["steps"] if s["id"] == finding.detail["producer"])
    assert (
        finding.detail["key"] in step["requires"] and finding.detail["key"] in producer["produces"]
    )
    assert producer["id"] not in step["depends_on"]


def test_write_conflict_parallel_writers_race_on_one_resource(spans: Spans) -> None:
    result = run_task("dag", "files", "files-changelog-1", ["write_conflict"], seed=1)
    assert result.outcome == "failure"  # a lost update
    (finding,) = result.expected
    writers = [
        t
        for t in spans.of_kind(A.KIND_TOOL)
        if attr(t, A.TOOL_RESOURCE) == finding.detail["resource"]
        and attr(t, A.TOOL_EFFECT) == "write"
    ]
    assert {attr(t, A.STEP_ID) for t in writers} == {finding.step_id, finding.detail["other"]}
    a, b = writers
    assert a.start_time < b.end_time and b.start_time < a.end_time  # type: ignore[operator]


def test_write_conflict_check_serialises_writers_when_on(spans: Spans) -> None:
    fault = resolve_faults(
        ["write_conflict"],
        TASKS["files-changelog-1"],
        "dag",
        seed=1,
        tools=make_env("files").tools(),
    )
    from planscope_runners import ScriptedModel

    planner = ScriptedModel("scripted-planner", faults=fault)  # the planner drops the edge
    result = run_task("dag", "files", "files-changelog-1", planner=planner)
    assert result.success
    plan_span = spans.of_kind(A.KIND_PLAN)[0]
    assert any(e.name.endswith("write_conflicts.serialised") for e in plan_span.events)


def test_irreversible_action_after_a_failure(spans: Spans) -> None:
    result = run_task(
        "plan_and_act", "files", "files-archive-contract", ["irreversible_after_failure"], seed=1
    )
    assert result.outcome == "failure"
    (finding,) = result.expected
    failed = [
        s for s in spans.steps(finding.detail["failing_step"]) if attr(s, A.STEP_STATUS) == "error"
    ]
    irreversible = [
        t for t in spans.of_kind(A.KIND_TOOL) if attr(t, A.TOOL_EFFECT) == "irreversible"
    ]
    assert failed and irreversible
    assert attr(irreversible[0], A.STEP_ID) == finding.step_id
    assert irreversible[0].start_time > failed[0].end_time  # type: ignore[operator]


def test_unbounded_replan_repeats_the_same_plan(spans: Spans) -> None:
    result = run_task("plan_and_act", "ops", "ops-audit-small", ["unbounded_replan"], seed=1)
    assert result.outcome == "failure"
    plans = spans.plans()
    assert len(plans) == 7  # 1 + HARD_REPLAN_CAP, no budget limit configured
    assert len({json.dumps(p["steps"]) for p in plans}) == 1
    assert [p["version"] for p in plans] == list(range(1, 8))


def test_needs_replan_scoped_in_dag_whole_in_plan_and_act(spans: Spans) -> None:
    result = run_task("dag", "ops", "ops-scale-fleet", ["needs_replan"], seed=2)
    assert result.success
    target = result.faults[0].target
    _, second = spans.of_kind(A.KIND_PLAN)
    assert attr(second, A.PLAN_SCOPE) == target and attr(second, A.PLAN_VERSION) == 2
    assert attr(second, A.PLAN_REPLAN_REASON)
    assert {n.step_id for n in result.negatives} == {target}


def test_malformed_script_is_rejected_before_anything_runs(spans: Spans) -> None:
    result = run_task("scripts", "support", "support-escalate-c3", ["malformed_script"])
    assert result.success
    first_plan, valid_plan = spans.of_kind(A.KIND_PLAN)
    assert attr(first_plan, A.ERROR_TYPE) == "PlanFormatError"
    assert attr(first_plan, A.PLAN_JSON) is None
    tools = spans.of_kind(A.KIND_TOOL)
    assert tools and min(t.start_time for t in tools) > valid_plan.start_time  # type: ignore[type-var]


@pytest.mark.parametrize("knob", sorted(KNOBS))
def test_every_knob_applies_somewhere_and_labels_consistently(knob: str) -> None:
    variant = KNOBS[knob].variants[0]
    task = next(
        t for t in TASKS.values() if knob in applicable_knobs(t, variant, make_env(t.env).tools())
    )
    result = run_task(variant, task.env, task, [knob], seed=5)
    assert result.faults[0].knob == knob
    label = result.label()
    assert label["faults"][0]["knob"] == knob
    assert label["expected_findings"] or label["negative_findings"] or label["blame"]
    if label["blame"] is not None:
        assert set(label["blame"]) == {"component", "step_id", "cause"}
        assert not label["healthy"]
    for finding in label["expected_findings"] + label["negative_findings"]:
        assert set(finding) == {"kind", "component", "step_id", "detail"}


class _Uninformed:
    """A planner that knows nothing of injected faults, as a real model would not: the scripted
    planner without fault hints, behind a wrapper (not a ScriptedModel), recording its prompts."""

    name, provider = "uninformed", "local"

    def __init__(self) -> None:
        from planscope_runners import ScriptedModel

        self.inner = ScriptedModel(faults=())
        self.told: list[str] = []

    def complete(self, request):  # type: ignore[no-untyped-def]
        self.told += [m.content for m in request.messages]
        return self.inner.complete(request)


def test_starved_hand_over_is_injected_by_the_runtime_for_any_planner(spans: Spans) -> None:
    result = run_task(
        "plan_and_act",
        "ops",
        "ops-deploy-billing",
        ["context_starved"],
        seed=1,
        planner=_Uninformed(),
    )
    (finding,) = result.expected
    assert finding.kind == "context_starved"
    missing = finding.detail["missing_keys"][0]
    for step in spans.steps(finding.step_id):
        assert missing not in json.loads(attr(step, A.STEP_CONTEXT_KEYS))


def test_misread_fact_is_in_what_the_planner_is_told_and_labelled_only_if_used(
    spans: Spans,
) -> None:
    planner = _Uninformed()
    result = run_task(
        "plan_and_act",
        "support",
        "support-refund-chloe",
        ["misread_objective"],
        seed=1,
        planner=planner,
    )
    wrong = str(result.faults[0].params["wrong"])
    assert any(wrong in text for text in planner.told)
    # this planner ignored what it was told: the wrong value reached no tool, so no label
    assert result.outcome == "success" and not result.expected
    assert result.inert == ("misread_objective",)

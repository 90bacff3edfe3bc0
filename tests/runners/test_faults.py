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
    (fault,) = resolve_faults(
        ["write_conflict"],
        TASKS["files-changelog-1"],
        "dag",
        seed=1,
        tools=make_env("files").tools(),
    )
    # a planner that leaves the edge out by itself (no fault injected: the check stays on)
    planner = _Careless(fault.target, str(fault.params["other"]))
    result = run_task("dag", "files", "files-changelog-1", planner=planner)
    assert planner.dropped and result.success
    plan_span = spans.of_kind(A.KIND_PLAN)[0]
    assert any(e.name.endswith("write_conflicts.serialised") for e in plan_span.events)


def test_a_dropped_dependency_is_injected_by_the_runtime_for_any_planner(spans: Spans) -> None:
    result = run_task(
        "plan_and_act",
        "files",
        "files-merge-3",
        ["implicit_dependency"],
        seed=1,
        planner=_Uninformed(),
    )
    (finding,) = result.expected
    assert finding.kind == "implicit_dependency" and finding.step_id == result.faults[0].target
    (plan,) = spans.plans()
    step = next(s for s in plan["steps"] if s["id"] == finding.step_id)
    assert result.faults[0].params["producer"] not in step["depends_on"]


def test_a_dropped_dependency_also_labels_the_readers_it_cut_off(spans: Spans) -> None:
    result = run_task("dag", "support", "support-notes-ben", ["implicit_dependency"], seed=500179)
    fault = result.faults[0]
    steps = [e.step_id for e in result.expected]
    assert steps[0] == fault.target and len(steps) == 2
    plan = spans.plans()[0]  # the first version (a scoped replan may follow a lost update)
    deps = {s["id"]: s["depends_on"] for s in plan["steps"]}
    reader = next(s for s in plan["steps"] if s["id"] == steps[1])
    assert fault.params["key"] in reader["requires"]
    reach, todo = set(), list(deps[reader["id"]])
    while todo:
        d = todo.pop()
        reach.add(d)
        todo += [x for x in deps[d] if x not in reach]
    assert fault.params["producer"] not in reach and fault.target in reach


def test_a_write_conflict_is_labelled_only_when_the_writers_raced(spans: Spans) -> None:
    # Any planner: the runtime drops the edge and makes the writers meet (they race for
    # certain); with one worker they cannot run in parallel: no race, no label.
    for workers, raced in ((4, True), (1, False)):
        spans.clear()
        result = run_task(
            "dag",
            "files",
            "files-changelog-1",
            ["write_conflict"],
            seed=1,
            planner=_Uninformed(),
            max_workers=workers,
        )
        fault = result.faults[0]
        for plan in spans.plans():
            step = next(s for s in plan["steps"] if s["id"] == fault.target)
            assert fault.params["other"] not in step["depends_on"]
        a, b = (spans.steps(sid)[0] for sid in (fault.target, fault.params["other"]))
        overlap = a.start_time < b.end_time and b.start_time < a.end_time  # type: ignore[operator]
        assert overlap is raced
        assert [(e.kind, e.step_id) for e in result.expected] == (
            [("write_conflict", fault.target)] if raced else []
        )
        assert result.outcome == ("failure" if raced else "success")  # a lost update
        assert result.inert == (() if raced else ("write_conflict",))


def test_plain_writers_of_a_write_conflict_are_in_flight_together(spans: Spans) -> None:
    # set_priority and update_ticket write the ticket without reading it: they meet after
    # writing, inside their calls, so the two tool calls overlap (nothing is lost: success).
    result = run_task("dag", "support", "support-escalate-c3", ["write_conflict"], seed=1)
    (finding,) = result.expected
    assert result.success and finding.kind == "write_conflict"
    writers = [
        t
        for t in spans.of_kind(A.KIND_TOOL)
        if attr(t, A.STEP_ID) in {finding.step_id, finding.detail["other"]}
    ]
    a, b = writers
    assert attr(a, A.TOOL_RESOURCE) == attr(b, A.TOOL_RESOURCE)
    assert a.start_time < b.end_time and b.start_time < a.end_time  # type: ignore[operator]


def test_a_dropped_edge_the_planner_never_wrote_labels_nothing(spans: Spans) -> None:
    (fault,) = resolve_faults(
        ["implicit_dependency"],
        TASKS["files-merge-3"],
        "plan_and_act",
        seed=1,
        tools=make_env("files").tools(),
    )
    # this planner already leaves the edge out and declares nothing: nothing for the fault
    # to drop, so its label would describe the planner, not the injection
    planner = _Careless(fault.target, str(fault.params["producer"]))
    result = run_task("plan_and_act", "files", "files-merge-3", [fault], planner=planner)
    assert planner.dropped and not result.expected
    assert result.inert == ("implicit_dependency",)


@pytest.mark.parametrize("knob", sorted(KNOBS))
def test_every_knob_applies_somewhere_and_labels_consistently(knob: str) -> None:
    variant = KNOBS[knob].variants[0]
    task = next(
        t for t in TASKS.values() if knob in applicable_knobs(t, variant, make_env(t.env).tools())
    )
    result = run_task(variant, task.env, task, [knob], seed=5)
    assert knob not in result.inert  # scheduler faults too: parallel executors queue together
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


class _Careless(_Uninformed):
    """The uninformed planner, writing every plan without one ``depends_on`` edge."""

    def __init__(self, step: str, dep: str) -> None:
        super().__init__()
        self.step, self.dep, self.dropped = step, dep, False

    def complete(self, request):  # type: ignore[no-untyped-def]
        from dataclasses import replace

        response = super().complete(request)
        try:
            plan = json.loads(response.content or "")
        except ValueError:
            return response
        steps = plan["steps"] if isinstance(plan, dict) else plan
        for step in steps if isinstance(steps, list) else ():
            if (
                isinstance(step, dict)
                and step.get("id") == self.step
                and self.dep in step.get("depends_on", ())
            ):
                step["depends_on"].remove(self.dep)
                self.dropped = True
        return replace(response, content=json.dumps(plan))

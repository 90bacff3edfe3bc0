"""Cross-span observed structure (``planscope_collector.observed.bind``): each rule, and the
cases where it must not bind (the shapes are those of tests/conformance/data)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from planscope_collector import observed
from planscope_collector.observed import (
    ObservedStep,
    ReadPlan,
    SpanNode,
    WorkflowPlan,
    bind,
    read_plans,
)

from ._long_trace import long_trace

PLAN = [
    ObservedStep("plan", "lookup", "lookup_order", 0),
    ObservedStep("plan", "refund", "issue_refund", 1),
]


def node(span_id: str, parent: str, kind: str, start: int, **kw: object) -> SpanNode:
    return SpanNode(span_id, parent, kind, str(kw.pop("name", span_id)), start_ns=start, **kw)  # type: ignore[arg-type]


def executor_trace(*, failing: bool) -> list[SpanNode]:
    """A root agent, a planner LLM call (the plan), two executor sub-agents with their tools."""
    refunds = [
        node(f"t{i}", "e2", "tool", 20 + i, tool="issue_refund", failed=failing) for i in range(3)
    ]
    return [
        node("root", "", "run", 0),
        node("plan", "root", "llm", 1),
        node("e1", "root", "step", 10, step_name="executor"),
        node("t", "e1", "tool", 11, tool="lookup_order"),
        node("e2", "root", "step", 19, step_name="executor"),
        *refunds,
    ]


def test_executor_attempts_bind_to_the_plan_step_whose_tool_they_call() -> None:
    b = bind(executor_trace(failing=True), PLAN)
    assert b.steps == {"e1": "lookup", "e2": "refund"}
    assert b.attempts == {"e1": 1, "e2": 1}
    assert (b.failed, b.planners, b.run_span_id) == (frozenset({"e2"}), frozenset(), None)
    assert {b.actions[f"t{i}"] for i in range(3)} == {"e2"}


def test_a_healthy_attempt_is_not_failed_and_no_plan_binds_nothing() -> None:
    assert bind(executor_trace(failing=False), PLAN).failed == frozenset()
    b = bind(executor_trace(failing=True), [])
    assert b.steps == {}
    assert b.attempts == {"e1": 1, "e2": 2}  # both keep the step name "executor"


def test_a_framework_tool_after_the_failed_plan_tool_does_not_make_the_attempt_succeed() -> None:
    # smolagents: the executor gives up through its final-answer tool, which succeeds
    spans = [*executor_trace(failing=True), node("f", "e2", "tool", 30, tool="final_answer")]
    assert bind(spans, PLAN).failed == frozenset({"e2"})
    healthy = [*executor_trace(failing=False), node("f", "e2", "tool", 30, tool="final_answer")]
    assert bind(healthy, PLAN).failed == frozenset()
    # without a plan naming tools, the last call decides
    assert bind(spans, []).failed == frozenset()


def test_a_step_named_like_a_plan_step_binds_by_name_before_tools() -> None:
    spans = [
        node("root", "", "run", 0),
        node("plan", "root", "llm", 1),
        node("s", "root", "step", 5, step_name="refund"),
        node("t", "s", "tool", 6, tool="lookup_order"),
    ]
    assert bind(spans, PLAN).steps == {"s": "refund"}


def test_tools_of_two_plan_steps_in_one_attempt_bind_nothing() -> None:
    spans = [
        node("root", "", "run", 0),
        node("plan", "root", "llm", 1),
        node("s", "root", "step", 5, step_name="worker"),
        node("a", "s", "tool", 6, tool="lookup_order"),
        node("b", "s", "tool", 7, tool="issue_refund"),
    ]
    assert bind(spans, PLAN).steps == {}


def test_the_planner_is_not_a_plan_step_and_tools_bind_through_unclassified_spans() -> None:
    spans = [
        node("root", "", "run", 0),
        node("p", "root", "step", 1, step_name="planner"),
        node("turn0", "p", "other", 2),
        node("plan", "turn0", "llm", 3),
        node("e", "root", "step", 10, step_name="executor"),
        node("turn", "e", "other", 11),
        node("t", "turn", "tool", 12, tool="issue_refund"),
    ]
    b = bind(spans, PLAN)
    assert (b.planners, b.steps, b.actions["t"]) == (frozenset({"p"}), {"e": "refund"}, "e")


def test_unclassified_spans_named_like_plan_steps_are_their_attempts() -> None:
    spans = [
        node("root", "", "run", 0),
        node("plan", "root", "llm", 1),
        node("c1", "root", "other", 5, name="lookup"),
        node("c2", "root", "other", 9, name="refund", failed=True),
        node("x", "c2", "other", 10, name="lookup"),  # inside a step: not another attempt
        node("unrelated", "root", "other", 12, name="format"),
    ]
    b = bind(spans, PLAN)
    assert b.promoted == frozenset({"c1", "c2"})
    assert (b.steps, b.failed) == ({"c1": "lookup", "c2": "refund"}, frozenset({"c2"}))


def test_a_root_over_agent_invocations_is_the_run_only_without_a_run() -> None:
    spans = [
        node("app", "", "other", 0),
        node("p", "app", "step", 1, step_name="planner"),
        node("plan", "p", "llm", 2),
    ]
    assert bind(spans, PLAN).run_span_id == "app"
    assert (
        bind([node("app", "", "other", 0), node("h", "app", "other", 1)], PLAN).run_span_id is None
    )
    declared = [node("app", "", "other", 0), node("r", "app", "run", 1), *spans[1:]]
    assert bind(declared, PLAN).run_span_id is None
    planscope_step = [node("app", "", "other", 0), node("s", "app", "step", 1, inferred=False)]
    assert bind(planscope_step, PLAN).run_span_id is None


def test_a_plan_span_over_another_plan_span_is_a_container() -> None:
    spans = [
        node("graph", "", "run", 0),
        node("planner", "graph", "step", 1, step_name="planner"),
        node("plan", "planner", "llm", 2),
        node("tools", "graph", "step", 5, step_name="tools"),
        node("t", "tools", "tool", 6, tool="issue_refund", failed=True),
    ]
    steps = [
        *PLAN,
        *(
            ObservedStep(p, s.step_id, s.tool, s.position)
            for p in ("graph", "planner")
            for s in PLAN
        ),
    ]
    b = bind(spans, steps)
    assert b.containers == frozenset({"graph", "planner"})
    assert (b.planners, b.steps, b.failed) == (
        frozenset({"planner"}),
        {"tools": "refund"},
        frozenset({"tools"}),
    )


def test_a_plan_span_over_another_through_unclassified_spans_is_a_container() -> None:
    """A planner node whose LLM call sits under a chain (LangChain's ``with_structured_output``
    sequence, under OpenInference: the tutorial's plan-and-execute) shows the LLM's plan; a
    replanner's LLM call beside it is a second plan, not contained."""
    spans = [
        node("graph", "", "other", 0),
        node("planner", "graph", "step", 1, step_name="planner"),
        node("chain", "planner", "other", 2),
        node("plan", "chain", "llm", 3),
        node("replan", "graph", "llm", 9),
    ]
    steps = [
        *(
            ObservedStep(p, s.step_id, s.tool, s.position)
            for p in ("planner", "plan")
            for s in PLAN
        ),
        ObservedStep("replan", "refund", "issue_refund", 0),
    ]
    b = bind(spans, steps)
    assert (b.containers, b.planners) == (frozenset({"planner"}), frozenset({"planner"}))


def test_a_replan_binds_later_attempts_to_the_newer_plan() -> None:
    replan = [ObservedStep("plan2", "retry-refund", "issue_refund", 0)]
    spans = [
        *executor_trace(failing=True),
        node("plan2", "root", "llm", 40),
        node("e3", "root", "step", 41, step_name="executor"),
        node("t9", "e3", "tool", 42, tool="issue_refund"),
    ]
    assert bind(spans, [*PLAN, *replan]).steps == {
        "e1": "lookup",
        "e2": "refund",
        "e3": "retry-refund",
    }


def workflow_trace(*, links: bool = False) -> list[SpanNode]:
    """A workflow root with three tasks (the second retried) and their tools."""
    return [
        node("wf", "", "run", 0, workflow=True),
        node("a", "wf", "step", 1, step_name="fetch"),
        node("ta", "a", "tool", 2, tool="http_get"),
        node("b1", "wf", "step", 3, step_name="parse", failed=True, links=("a",) if links else ()),
        node("b2", "wf", "step", 4, step_name="parse", links=("a",) if links else ()),
        node("c", "wf", "step", 5, step_name="report", links=("a", "b2") if links else ()),
    ]


def test_a_workflows_child_tasks_are_its_plan_in_start_order() -> None:
    b = bind(workflow_trace(), [])
    assert b.workflow_plan == WorkflowPlan("wf", ("fetch", "parse", "report"), {})
    assert b.attempts == {"a": 1, "b1": 1, "b2": 2, "c": 1}
    assert b.steps == {}  # the tasks are the plan's steps by their own names


def test_a_workflow_plan_is_a_dag_when_the_task_spans_link_to_their_inputs() -> None:
    plan = bind(workflow_trace(links=True), []).workflow_plan
    assert plan is not None
    assert plan.depends_on == {"parse": ("fetch",), "report": ("fetch", "parse")}


def test_no_workflow_plan_beside_a_plan_of_the_trace_or_without_a_workflow() -> None:
    spans = [*workflow_trace(), node("plan", "wf", "llm", 1)]
    assert bind(spans, PLAN).workflow_plan is None  # an observed plan wins
    declared = [*workflow_trace(), node("p", "wf", "plan", 1, inferred=False)]
    assert bind(declared, []).workflow_plan is None  # a declared plan wins
    agent = [node("wf", "", "run", 0), *workflow_trace()[1:]]
    assert bind(agent, []).workflow_plan is None  # an agent's sub-agents are no plan
    nested = [
        node("wf", "", "run", 0, workflow=True),
        node("x", "wf", "other", 1),
        node("a", "x", "step", 2, step_name="fetch"),
    ]
    assert bind(nested, []).workflow_plan is None  # only tasks right under the workflow


def shared_tool_trace(*, asked: tuple[str, str], last_failed: bool) -> list[SpanNode]:
    """A grouping root, a planner's plan, two executor attempts calling one tool that two
    plan steps share; each executor's LLM call was asked ``asked[i]``."""
    return [
        node("root", "", "other", 0, name="report"),
        node("plan", "root", "llm", 1),
        node("e1", "root", "step", 10, step_name="executor"),
        node("l1", "e1", "other", 11, request=asked[0]),
        node("t1", "e1", "tool", 12, tool="run_query"),
        node("e2", "root", "step", 20, step_name="executor"),
        node("l2", "e2", "other", 21, request=asked[1]),
        node("t2", "e2", "tool", 22, tool="run_query", failed=last_failed),
    ]


SHARED = [
    ObservedStep("plan", "pull_current", "run_query", 0),
    ObservedStep("plan", "pull_baseline", "run_query", 1),
]


def test_attempts_of_a_shared_tool_bind_by_the_step_their_prompt_names() -> None:
    asked = ("Step pull_current: this month", "Step pull_baseline: last year")
    b = bind(shared_tool_trace(asked=asked, last_failed=False), SHARED)
    assert b.steps == {"e1": "pull_current", "e2": "pull_baseline"}
    # two steps named, or a step id only inside a longer name, bind nothing
    both = ("pull_current then pull_baseline", "pull_baseline_v2")
    assert bind(shared_tool_trace(asked=both, last_failed=False), SHARED).steps == {}


def test_a_step_whose_last_attempt_failed_fails_an_inferred_run_unless_re_planned() -> None:
    asked = ("Step pull_current: x", "Step pull_baseline: y")
    spans = shared_tool_trace(asked=asked, last_failed=True)
    b = bind(spans, SHARED)
    assert (b.run_span_id, b.failed_for_good) == ("root", "e2")
    assert bind(shared_tool_trace(asked=asked, last_failed=False), SHARED).failed_for_good is None
    replan = [*spans, node("plan2", "root", "llm", 30)]
    steps = [*SHARED, ObservedStep("plan2", "pull_baseline", "run_query", 0)]
    assert bind(replan, steps).failed_for_good is None  # a re-plan after the failure takes over
    declared = [node("root", "", "run", 0, inferred=False), *spans[1:]]
    assert bind(declared, SHARED).failed_for_good is None  # a run that reports its own outcome


def test_a_run_that_failed_for_good_says_why_in_what_the_world_said() -> None:
    asked = ("Step pull_current: x", "Step pull_baseline: y")
    spans = shared_tool_trace(asked=asked, last_failed=True)
    said = [
        replace(s, message="HTTP 503 from warehouse") if s.span_id == "t2" else s for s in spans
    ]
    assert bind(said, SHARED).given_up_reason == "HTTP 503 from warehouse"
    own = [replace(s, message="gave up") if s.span_id == "e2" else s for s in spans]
    assert bind(own, SHARED).given_up_reason == "gave up"  # no call said why: the attempt's own
    assert bind(shared_tool_trace(asked=asked, last_failed=False), SHARED).given_up_reason == ""


def test_what_each_attempt_was_asked_is_kept_once_per_request() -> None:
    asked = ("Step pull_current: x", "Step pull_baseline: y")
    spans = shared_tool_trace(asked=asked, last_failed=False)
    # a second model turn of e1 repeats its request (the whole history is sent each turn)
    spans.append(node("l1b", "e1", "other", 13, request=asked[0]))
    b = bind(spans, SHARED)
    assert b.asked == {"e1": asked[0], "e2": asked[1]}


def test_a_step_span_that_only_wraps_attempts_is_no_attempt() -> None:
    # OpenLLMetry's LangGraph: a `workflow` span (a step below the root) over the node visits,
    # with no call of its own; its attempts keep their numbers and a failed step still fails
    # the run, whatever the wrapper's own status says
    wrapped = [
        replace(s, parent_span_id="w") if s.kind == "step" else s
        for s in executor_trace(failing=True)
    ]
    spans = [
        replace(wrapped[0], inferred=True),
        node("w", "root", "step", 5, step_name="LangGraph", failed=True),
        *wrapped[1:],
        node("turn", "w", "other", 25),  # unclassified spans between: still the wrapper's
        node("again", "turn", "step", 26, step_name="executor"),
        node("t9", "again", "tool", 27, tool="issue_refund", failed=True),
    ]
    b = bind(spans, PLAN)
    assert b.wrappers == frozenset({"w"})
    assert b.attempts == {"e1": 1, "e2": 1, "again": 2}
    assert b.steps == {"e1": "lookup", "e2": "refund", "again": "refund"}
    assert b.failed_for_good == "again"
    # a wrapper of a wrapper too; a step with a call of its own over another is an attempt
    outer = [node("o", "root", "step", 4, step_name="app"), *spans]
    outer = [replace(s, parent_span_id="o") if s.span_id == "w" else s for s in outer]
    assert bind(outer, PLAN).wrappers == frozenset({"o", "w"})
    working = [*outer, node("l", "w", "llm", 6)]
    assert bind(working, PLAN).wrappers == frozenset({"o"})
    assert bind(working, PLAN).attempts["w"] == 1


def test_a_graphs_node_visits_of_one_step_are_one_attempt_of_the_step_its_prompt_names() -> None:
    """LangGraph under OpenLLMetry: the executor node's LLM turn (asked "Step refund: ..."), the
    tool node (a plan tool, then a poll no plan names), the LLM's next turns, then the app's own
    node (no call): one attempt of ``refund``; a second executor visit after it is attempt 2."""
    ask = "Step refund: refund order 42"
    spans = [
        node("root", "", "run", 0),
        node("p", "root", "step", 1, step_name="planner"),
        node("plan", "p", "llm", 2),
        node("j", "root", "step", 20, step_name="judge"),
    ]
    for i, start in ((1, 10), (2, 14), (3, 18), (4, 21)):  # the executor node's LLM turns
        spans += [node(f"x{i}", "root", "step", start, step_name="executor")]
        spans += [node(f"l{i}", f"x{i}", "llm", start + 1, request=ask)]
    for i, tool in ((1, "issue_refund"), (2, "job_status")):  # the tool node between them
        spans += [node(f"n{i}", "root", "step", 8 + 4 * i, step_name="tools")]
        spans += [node(f"t{i}", f"n{i}", "tool", 9 + 4 * i, tool=tool)]
    b = bind(spans, [replace(s, plan_span_id="plan") for s in PLAN])
    assert b.steps == {"x1": "refund", "n1": "refund", "x2": "refund", "n2": "refund",
                       "x3": "refund", "x4": "refund"}  # fmt: skip
    assert b.attempts == {"p": 1, "x1": 1, "j": 1, "x4": 2}
    assert {"n1", "x2", "n2", "x3"} <= b.wrappers
    assert (b.actions["t1"], b.actions["t2"], b.actions["l3"]) == ("x1", "x1", "x1")
    assert b.asked["x1"] == "Step refund: refund order 42"


def planned_trace(answer: str, *, steps: tuple[str, ...] = ("lookup", "refund")) -> list[SpanNode]:
    """A grouping root, a planner agent whose LLM call answers ``answer`` (asked about order 7),
    and one executor run per step in ``steps``, each told "Step <step>: call <tool>"."""
    tools = {"lookup": "lookup_order", "refund": "issue_refund"}
    spans = [
        node("root", "", "other", 0),
        node("p", "root", "step", 1, step_name="planner"),
        node("pl", "p", "llm", 2, request="Refund order 7 for Ada", answer=answer),
    ]
    for i, step in enumerate(steps):
        e = f"e{i}"
        spans += [
            node(e, "root", "step", 10 + 10 * i, step_name="executor"),
            node(f"{e}l", e, "llm", 11 + 10 * i, request=f"Step {step}: call {tools[step]}"),
            node(f"{e}t", e, "tool", 12 + 10 * i, tool=tools[step]),
        ]
    return spans


def test_a_plan_in_any_list_syntax_is_read_from_the_names_later_executor_runs_carry() -> None:
    answers = (
        'Plan for order 7:\n1) lookup -> lookup_order {"order": 7}\n2) refund -> issue_refund {}',
        'Plan:\n\n1. **lookup**: Look it up\n   - args: `{"order": 7}`\n2. **refund**: Refund',
        '{"objective": "x", "tasks": [{"name": "lookup", "args": {"order": 7}},'
        ' {"name": "refund"}]}',
        "First lookup the order with lookup_order, then refund it.",
    )
    for text in answers:
        b = bind(planned_trace(text), [])
        (plan,) = b.read_plans
        assert [s.step_id for s in plan.steps] == ["lookup", "refund"], text
        assert b.steps == {"e0": "lookup", "e1": "refund"}, text
        assert b.planners == frozenset({"p"}), text
    assert json.loads(bind(planned_trace(answers[0]), []).read_plans[0].json)[0] == {
        "id": "lookup",
        "tool": "lookup_order",
        "args": {"order": 7},
    }


def test_a_header_less_pipe_table_is_a_plan_its_namespaced_tools_the_calls() -> None:
    # one line a step, "|" between the cells and no header: the cells told by what they hold
    # (an id, a name, "<worker>.<tool>", JSON arguments, a goal); the executors are told only
    # which tool to call, as a supervisor assigning work through handoffs tells them
    sheet = (
        "JOB SHEET v1\n"
        'task 1 | lookup | desk_clerk.lookup_order | {"order": 7} | Find the order.\n'
        'task 2 | refund | till_clerk.issue_refund | {"order": "[task 1]"} | Refund it.'
    )
    spans = [
        replace(s, request=s.request.replace("Step lookup: call", "Do: call").replace(
            "Step refund: call", "Do: call"))
        for s in planned_trace(sheet)
    ]  # fmt: skip
    b = bind(spans, [])
    (plan,) = b.read_plans
    assert [(s.step_id, s.tool) for s in plan.steps] == [
        ("lookup", "lookup_order"),
        ("refund", "issue_refund"),
    ]
    assert json.loads(plan.json)[0]["args"] == {"order": 7}
    assert b.steps == {"e0": "lookup", "e1": "refund"}


def test_a_sheet_of_namespaced_tools_is_a_plan_when_the_run_stopped_before_most_of_them() -> None:
    # a lab's work sheet, one "<desk>.<tool>" a row; the run stopped in its second step (the
    # assay bench never answered): the tools of the rows no executor reached were never called,
    # and the rows are still steps (a run that fails early is the one whose plan is needed)
    sheet = (
        "WORK SHEET v1\n"
        'job 1 | accession | front_desk.log_sample | {"sample": "S-88"} | Log the sample.\n'
        'job 2 | assay | bench.run_assay | {"sample": "[job 1]"} | Run the assay.\n'
        'job 3 | review | pathologist.sign_off | {"assay": "[job 2]"} | Sign it off.\n'
        'job 4 | report | office.send_report | {"assay": "[job 2]"} | Send the report.'
    )
    spans = [
        node("root", "", "other", 0),
        node("p", "root", "step", 1, step_name="planner"),
        node("pl", "p", "llm", 2, request="Test sample S-88", answer=sheet),
    ]
    for i, tool in enumerate(("log_sample", "run_assay")):
        e = f"e{i}"
        spans += [
            node(e, "root", "step", 10 + 10 * i, step_name="executor"),
            node(f"{e}l", e, "llm", 11 + 10 * i, request=f"Do: call {tool}"),
            node(f"{e}t", e, "tool", 12 + 10 * i, tool=tool),
        ]
    b = bind(spans, [])
    (plan,) = b.read_plans
    assert [(s.step_id, s.tool) for s in plan.steps] == [
        ("accession", "log_sample"),
        ("assay", "run_assay"),
        ("review", ""),  # a tool no call names: the plan says it, the trace does not
        ("report", ""),
    ]
    assert b.steps == {"e0": "accession", "e1": "assay"}


def test_steps_no_executor_reached_are_read_where_the_answer_lists_the_reached_ones() -> None:
    # the run stopped in its first step: the list's other items, listed the same way, are steps
    text = "1) lookup -> lookup_order {}\n2) refund -> issue_refund {}\n3) notify -> mail {}"
    (plan,) = bind(planned_trace(text, steps=("lookup",)), []).read_plans
    assert [s.step_id for s in plan.steps] == ["lookup", "refund", "notify"]
    # one name reached in prose: no list to read more from, and one step is no plan
    assert bind(planned_trace("Just lookup it.", steps=("lookup",)), []).read_plans == ()


def test_a_plan_in_formats_no_reader_was_written_for_is_read_with_its_arguments() -> None:
    # TOML, a bullet outline, LLMCompiler tasks after a thought naming the step: the steps are
    # the names later executor runs carry, the arguments the keys and values in each step's
    # part, in its own syntax (formats of the tuning half only: tests/corpus/README.md)
    answers = (
        '[[steps]]\nid = "lookup"\ntool = "lookup_order"\nargs = { order = 7 }\n\n'
        '[[steps]]\nid = "refund"\ntool = "issue_refund"\nargs = { amount = "12.50" }',
        "- lookup: find it\n  - tool: lookup_order\n  - args:\n    - order: 7\n"
        "- refund: pay back\n  - tool: issue_refund\n  - args:\n    - amount: 12.50",
        "Thought: lookup - find it\n1. lookup_order(order=7)\n"
        'Thought: refund - pay back\n2. issue_refund(amount="12.50", after=$1)\n3. join()',
    )
    for text in answers:
        (plan,) = bind(planned_trace(text), []).read_plans
        steps = json.loads(plan.json)
        assert [(s["id"], s["tool"]) for s in steps] == [
            ("lookup", "lookup_order"),
            ("refund", "issue_refund"),
        ], text
        assert steps[0]["args"]["order"] in (7, "7"), text
        assert steps[1]["args"]["amount"] == "12.50", text


def test_steps_keyed_by_their_names_are_a_plan() -> None:
    text = json.dumps(
        {
            "plan": {
                "lookup": {"call": {"name": "lookup_order", "arguments": {"order": 7}}},
                "refund": {"call": {"name": "issue_refund", "arguments": {}}},
            }
        }
    )
    (plan,) = bind(planned_trace(text), []).read_plans
    assert [s.step_id for s in plan.steps] == ["lookup", "refund"]


def test_plain_spans_that_make_the_calls_are_the_executor_turns_a_plan_is_read_for() -> None:
    # no span is a step: the executor's turn for each step is a framework's plain span named
    # after it; the run stopped in its first step, whose item names the tool it called
    answer = 'id = "lookup"\ntool = "lookup_order"\n\nid = "refund"\ntool = "issue_refund"'
    spans = [
        node("root", "", "other", 0),
        node("pl", "root", "llm", 1, request="Refund order 7", answer=answer),
        node("e", "root", "other", 10, name="lookup"),
        node("el", "e", "llm", 11, request="Step lookup: call lookup_order"),
        *(node(f"t{i}", "e", "tool", 12 + i, tool="lookup_order", failed=True) for i in range(3)),
    ]
    b = bind(spans, [])
    (plan,) = b.read_plans
    assert [s.step_id for s in plan.steps] == ["lookup", "refund"]
    assert b.steps == {"e": "lookup"}
    # a line shaped like a plan item that names no tool the trace called lists nothing more
    plain = answer.replace('tool = "lookup_order"', 'note = "first"')
    assert bind([replace(spans[1], answer=plain), *spans[2:]], []).read_plans == ()


def test_a_word_every_executor_message_starts_with_is_no_step() -> None:
    # every executor run is told "Plan <n> (<step>): ...": "Plan" comes first and every run
    # carries it; the steps are the names after it
    text = "Plan 1 (lookup): find the order\nPlan 2 (refund): pay it back"
    told = {"e0l": "Plan 1 (lookup): go", "e1l": "Plan 2 (refund): go"}
    spans = [replace(s, request=told.get(s.span_id, s.request)) for s in planned_trace(text)]
    (plan,) = bind(spans, []).read_plans
    assert [s.step_id for s in plan.steps] == ["lookup", "refund"]


def test_no_plan_is_read_without_two_steps_carried_apart() -> None:
    # the names the planner was asked about are the run's data, not steps
    assert bind(planned_trace("Refund order 7 for Ada."), []).read_plans == ()
    # a word every executor run carries names no step
    spans = planned_trace("Step by step: call the tools.")
    assert bind(spans, []).read_plans == ()
    # the executor runs of a ReAct agent whose answers carry nothing later
    react = [s for s in planned_trace("") if s.span_id != "pl"]
    assert bind(react, []).read_plans == ()
    # a plan the span model read wins
    assert bind(planned_trace("1) lookup\n2) refund"), PLAN).read_plans == ()


def test_a_list_on_one_line_goes_on_with_the_separator_of_the_steps_reached() -> None:
    text = '{"source": "orders", "stages": ["lookup", "refund", "notify", "close"]}'
    (plan,) = bind(planned_trace(text), []).read_plans
    assert [s.step_id for s in plan.steps] == ["lookup", "refund", "notify", "close"]


def planner_calling(calls: list[dict[str, object]], answer: str = "") -> list[SpanNode]:
    """:func:`planned_trace` whose planner agent states its plan through tool calls, one call
    with these arguments each (before its answer ``answer``, empty: none)."""
    spans = planned_trace(answer)
    made = [
        node(f"c{i}", "p", "tool", 3 + i, tool="note", answer=json.dumps(args))
        for i, args in enumerate(calls)
    ]
    return [*spans, *made]


def test_a_plan_is_read_from_the_arguments_of_the_planners_tool_calls() -> None:
    calls: list[dict[str, object]] = [
        {"name": "lookup", "why": "find it", "with": "lookup_order", "input": {"order": 7}},
        {"name": "refund", "why": "pay back", "with": "issue_refund", "input": {}},
    ]
    for answer in ("", "Added the steps."):  # with or without an answer text after the calls
        b = bind(planner_calling(calls, answer), [])
        (plan,) = b.read_plans
        assert plan.span_id == "p", answer
        assert [(s.step_id, s.tool) for s in plan.steps] == [
            ("lookup", "lookup_order"),
            ("refund", "issue_refund"),
        ], answer
        assert json.loads(plan.json)[0]["args"] == {"order": 7}, answer
        assert b.steps == {"e0": "lookup", "e1": "refund"}, answer
        assert b.planners == frozenset({"p"}), answer
    # the calls' order is the plan's order, whatever the executors did first
    (plan,) = bind(planner_calling(calls[::-1]), []).read_plans
    assert [s.step_id for s in plan.steps] == ["refund", "lookup"]


def test_a_planners_tool_calls_whose_arguments_no_executor_carries_give_no_plan() -> None:
    calls: list[dict[str, object]] = [{"name": "fetch", "n": 1}, {"name": "store", "n": 2}]
    assert bind(planner_calling(calls), []).read_plans == ()
    assert bind(planner_calling(calls, "Done."), []).read_plans == ()
    # an executor's own call naming the next step is one name: no plan
    spans = planned_trace("")
    spans += [node("x", "e0", "tool", 13, tool="lookup_order", answer='{"then": "refund"}')]
    assert bind(spans, []).read_plans == ()


def test_a_call_that_hands_out_the_planners_answer_is_its_answer_not_more_said() -> None:
    # a framework's final-answer tool: its argument is the answer text (JSON-escaped there)
    text = "1) lookup -> lookup_order {}\n2) refund -> issue_refund {}\n3) notify -> mail {}"
    spans = [
        replace(s, answer=text) if s.span_id == "p" else s
        for s in planned_trace("", steps=("lookup",))
    ]
    spans += [node("f", "p", "tool", 3, tool="final_answer", answer=json.dumps({"answer": text}))]
    (plan,) = bind(spans, []).read_plans
    assert [s.step_id for s in plan.steps] == ["lookup", "refund", "notify"]


class _Counted(SpanNode):
    """A span that counts how often the reader looks at it (a cost that no timer skews)."""

    reads = 0

    def __getattribute__(self, name: str) -> Any:
        _Counted.reads += 1
        return super().__getattribute__(name)


def _reads_to_read_plans(spans: list[SpanNode]) -> tuple[int, tuple[ReadPlan, ...]]:
    nodes = {s.span_id: _Counted(**vars(s)) for s in spans}
    steps = {s.span_id for s in spans if s.kind == "step"}
    enclosing = {s.span_id: s.parent_span_id for s in spans if s.parent_span_id in steps}
    _Counted.reads = 0
    plans = read_plans(nodes, enclosing.get)
    return _Counted.reads, plans


def test_reading_plans_costs_in_proportion_to_the_trace() -> None:
    # a long-running agent (thousands of attempts, no plan): ten times the attempts may cost
    # about ten times the reads, not a hundred (each answer against every later attempt)
    for shape in ("react", "bare", "crew"):
        small, _ = _reads_to_read_plans(long_trace(400, shape))
        large, plans = _reads_to_read_plans(long_trace(4000, shape))
        assert large < 20 * small, (shape, small, large)
        assert bool(plans) == (shape == "crew"), shape


def test_binding_a_trace_that_re_plans_often_costs_in_proportion_to_it() -> None:
    # a planner that re-plans after every step: each attempt binds to the latest plan before
    # it without looking at every plan
    reads = []
    for size in (400, 4000):
        nodes = [_Counted(**vars(s)) for s in long_trace(size, "crew")]
        _Counted.reads = 0
        assert len(bind(nodes, []).read_plans) > size // 4
        reads.append(_Counted.reads)
    assert reads[1] < 20 * reads[0], reads


def test_a_plan_is_read_alike_at_the_start_of_a_long_trace() -> None:
    text = "1) lookup -> lookup_order {}\n2) refund -> issue_refund {}"
    short = bind(planned_trace(text), [])
    tail = [
        replace(s, span_id=f"x{s.span_id}", parent_span_id=parent, start_ns=100 + s.start_ns)
        for s in long_trace(2000, "react")
        if s.span_id != "root"
        for parent in ["root" if s.parent_span_id == "root" else f"x{s.parent_span_id}"]
    ]
    long = bind(planned_trace(text) + tail, [])
    assert long.read_plans == short.read_plans
    assert {k: v for k, v in long.steps.items() if k in short.steps} == short.steps


def _checklist(done: int) -> str:
    """A DSPy planner's answer: a YAML checklist in a ChatAdapter field, ``done`` items ticked."""
    items = "".join(
        f"- id: {step}\n  tool: {tool}\n  with:\n    order: 7\n  done: {str(i < done).lower()}\n"
        for i, (step, tool) in enumerate((("pick", "wms"), ("ship", "courier")))
    )
    return f"[[ ## reasoning ## ]]\nTwo items.\n\n[[ ## checklist ## ]]\nitems:\n{items}"


def module_trace() -> list[SpanNode]:
    """DSPy modules under OpenInference below the app's own span: no run, step or plan span;
    the clerk's tool fails inside it (ReAct survives it and ends with its ``finish`` tool); the
    planner revises the checklist in place, the done item kept."""
    clerk = [
        node("c1", "app", "other", 10, name="Clerk.forward"),
        node("c1l", "c1", "llm", 11, request="[[ ## item ## ]]\nid: pick\ntool: wms"),
        node("c1t", "c1", "tool", 12, name="wms.__call__", tool="wms.__call__"),
        node("c2", "app", "other", 20, name="Clerk.forward"),
        node("c2l", "c2", "llm", 21, request="[[ ## item ## ]]\nid: ship\ntool: courier"),
        node("c2t", "c2", "tool", 22, tool="courier.__call__", failed=True, message="409"),
        node("c2f", "c2", "tool", 23, tool="finish.__call__"),
        node("c3", "app", "other", 40, name="Clerk.forward"),
        node("c3l", "c3", "llm", 41, request="[[ ## item ## ]]\nid: ship\ntool: courier"),
        node("c3t", "c3", "tool", 42, tool="courier.__call__"),
    ]
    return [
        node("app", "", "other", 0, name="ship order 7"),
        node("p1", "app", "other", 1, name="Planner.forward"),
        node("p1l", "p1", "llm", 2, answer=_checklist(0)),
        *clerk,
        node("p2", "app", "other", 30, name="Planner.forward"),
        node("p2l", "p2", "llm", 31, answer=_checklist(1)),
        node("check", "app", "other", 50, name="verify"),
    ]


def test_framework_calls_under_the_apps_span_are_attempts_of_a_yaml_plan() -> None:
    b = bind(module_trace(), [])
    assert b.run_span_id == "app"
    assert b.promoted == {"p1", "p2", "c1", "c2", "c3"}  # not the app's own check
    assert [[s.step_id for s in p.steps] for p in b.read_plans] == [["pick", "ship"]] * 2
    assert json.loads(b.read_plans[0].json)[0] == {
        "id": "pick",
        "tool": "wms",
        "args": {"order": 7},
    }
    assert b.steps == {"c1": "pick", "c2": "ship", "c3": "ship"}
    assert b.planners == {"p1", "p2"}
    # the tool failed inside the module (its span is OK), the framework's finish came after
    assert b.failed == {"c2"}
    assert (b.attempts["c2"], b.attempts["c3"]) == (1, 2)


def test_framework_calls_are_no_attempts_where_the_span_model_found_a_step() -> None:
    spans = [*module_trace(), node("s", "app", "step", 60, step_name="executor")]
    b = bind(spans, [])
    assert not b.promoted & {"c1", "c2", "c3"}
    assert not b.read_plans


def component_trace(table: str) -> list[SpanNode]:
    """A framework's components under the app's own span (no run, step, plan or tool span): a
    planner pipeline (a prompt builder, then an LLM call answering ``table``), then an agent
    run per row, each a prompt builder, an LLM turn, the component its model called (its span
    named after the component's ``run``), another LLM turn; the first ``WmsPick`` call fails."""
    spans = [
        node("app", "", "other", 0, name="ship order 7"),
        node("p", "app", "other", 1, name="Pipeline.run"),
        node("pb", "p", "other", 2, name="PromptBuilder.run"),
        node("pl", "p", "llm", 3, request="Ship order 7", answer=table),
    ]
    runs = [("pick", "wms_pick", "WmsPick"), ("pick", "wms_pick", "WmsPick")]
    runs.append(("ship", "courier_book", "CourierBook"))
    for i, (step, tool, component) in enumerate(runs):
        a, at = f"a{i}", 10 + 10 * i
        spans += [
            node(a, "app", "other", at, name="Agent.run"),
            node(f"{a}b", a, "other", at + 1, name="PromptBuilder.run"),
            node(f"{a}l", a, "llm", at + 2, duration_ns=1, request=f"Task {step}: use {tool}"),
            node(f"{a}t", a, "other", at + 4, name=f"{component}.run", failed=i == 0),
            node(f"{a}m", a, "llm", at + 5),
        ]
    return spans


def test_a_markdown_table_is_a_plan_and_component_spans_after_a_turn_are_tool_calls() -> None:
    # the header's words are the planner's own: the columns are found by what their cells hold
    table = (
        "Shipping plan:\n\n| n | task | why | using | params |\n|:-:|---|---|---|---|\n"
        "| 1 | pick | Pick the order | wms_pick | order=7; bin=A-3 |\n"
        "| 2 | ship | Ship what was picked | courier_book | parcel={{ pick }}, to=Leeds |"
    )
    b = bind(component_trace(table), [])
    assert b.calls == {"a0t": "WmsPick", "a1t": "WmsPick", "a2t": "CourierBook"}
    (plan,) = b.read_plans
    assert [(s.step_id, s.tool) for s in plan.steps] == [
        ("pick", "WmsPick"),
        ("ship", "CourierBook"),
    ]
    assert [s["args"] for s in json.loads(plan.json)] == [
        {"order": 7, "bin": "A-3"},
        {"parcel": "{{ pick }}", "to": "Leeds"},  # a reference to pick's result, kept whole
    ]
    assert b.steps == {"a0": "pick", "a1": "pick", "a2": "ship"}
    assert b.planners == {"p"}
    assert b.failed == {"a0"}  # its component call failed; the agent run itself did not
    assert (b.attempts["a0"], b.attempts["a1"]) == (1, 2)
    # without the rule line under its header it is no table: its names are read, and the
    # keys and values in each step's part (a template reference is no value)
    (plan,) = bind(component_trace(table.replace("|:-:|---|---|---|---|\n", "")), []).read_plans
    assert [s.get("args") for s in json.loads(plan.json)] == [
        {"order": 7, "bin": "A-3"},
        {"to": "Leeds"},
    ]


def test_component_spans_are_no_tool_calls_where_the_span_model_found_one() -> None:
    spans = [*component_trace("no plan"), node("x", "a2", "tool", 29, tool="courier_book")]
    assert bind(spans, []).calls == {}


def test_template_syntax_in_a_planners_answer_names_no_step() -> None:
    # Jinja control text around the list: "for" and "line" are carried by every executor run
    # (rendered into what they were asked), so read as names they would hide the steps
    answer = (
        "{% for line in order %}\n1) lookup -> lookup_order\n"
        "2) refund -> issue_refund {{ lookup }}\n{% endfor %}"
    )
    spans = [
        replace(s, request="Refund order 7")
        if s.span_id == "pl"
        else replace(s, request=f"{s.request} for line 1")
        if s.kind == "llm"
        else s
        for s in planned_trace(answer)
    ]
    (plan,) = bind(spans, []).read_plans
    assert [s.step_id for s in plan.steps] == ["lookup", "refund"]


def told_nothing(answer: str, calls: list[list[str]], failed: bool = False) -> list[SpanNode]:
    """A grouping root, a planner agent run answering ``answer``, and one executor agent run per
    entry of ``calls`` calling those tools; no LLM call records what it was asked (a framework
    that writes no message content)."""
    spans = [
        node("root", "", "other", 0),
        node("p", "root", "step", 1, step_name="planner", answer=answer, duration_ns=1),
    ]
    for i, tools in enumerate(calls):
        e = f"e{i}"
        spans += [
            node(e, "root", "step", 10 + 10 * i, step_name="executor"),
            node(f"{e}l", e, "llm", 11 + 10 * i),
        ]
        spans += [
            node(f"{e}t{j}", e, "tool", 12 + 10 * i + j, tool=tool, failed=failed)
            for j, tool in enumerate(tools)
        ]
    return spans


ITEMS = (
    'Order 7, revision 1.\n\nStep 1 — lookup: Find the order\nCall lookup_order with order="7"\n\n'
    'Step 2 — refund: Pay it back\nCall issue_refund with order="7", amount="<lookup>"'
)


def test_executors_told_nothing_carry_the_tools_they_called_by_their_bare_names() -> None:
    # the tools are called with a plugin's name before theirs; the items name them bare and
    # are labelled "Step N — label:": the labels are the step ids
    spans = told_nothing(ITEMS, [["Orders-lookup_order"], ["Orders-issue_refund", "Orders-poll"]])
    b = bind(spans, [])
    (plan,) = b.read_plans
    assert [(s.step_id, s.tool) for s in plan.steps] == [
        ("lookup", "Orders-lookup_order"),
        ("refund", "Orders-issue_refund"),
    ]
    assert b.steps == {"e0": "lookup", "e1": "refund"}
    # items with no label: the tools are the steps, and call themselves
    bare = "Call lookup_order with order=7\nCall issue_refund with order=7"
    b = bind(told_nothing(bare, [["lookup_order"], ["issue_refund"]]), [])
    (plan,) = b.read_plans
    assert [(s.step_id, s.tool) for s in plan.steps] == [
        ("lookup_order", "lookup_order"),
        ("issue_refund", "issue_refund"),
    ]
    assert b.steps == {"e0": "lookup_order", "e1": "issue_refund"}


def test_a_run_stuck_in_its_first_step_reads_the_other_labelled_items_too() -> None:
    spans = told_nothing(ITEMS, [["Orders-lookup_order"]] * 3, failed=True)
    b = bind(spans, [])
    (plan,) = b.read_plans
    assert [(s.step_id, s.tool) for s in plan.steps] == [
        ("lookup", "Orders-lookup_order"),
        ("refund", ""),  # never called: no tool of the trace it names
    ]
    assert b.steps == {"e0": "lookup", "e1": "lookup", "e2": "lookup"}
    assert b.failed == frozenset({"e0", "e1", "e2"})


def test_a_bare_name_matches_one_namespaced_tool_only() -> None:
    # two plugins with a function of that name: the item names neither
    spans = told_nothing(ITEMS, [["A-lookup_order", "B-lookup_order"], ["A-issue_refund"]])
    (plan,) = bind(spans, []).read_plans
    assert [s.tool for s in plan.steps] == ["", "A-issue_refund"]
    # other separators of a namespace: ".", ":", "__"
    for sep in (".", ":", "__"):
        calls = [[f"orders{sep}lookup_order"], [f"orders{sep}issue_refund"]]
        (plan,) = bind(told_nothing(ITEMS, calls), []).read_plans
        assert [s.tool for s in plan.steps] == [c[0] for c in calls], sep


REWOO = (
    "Plan 1 (lookup): Find order 7\n"
    '#E1 = lookup_order[order=7, region="eu"]\n'
    "Plan 2 (refund): Refund what was paid\n"
    '#E2 = issue_refund[payment=#E1, reason="damaged"]\n'
    "Plan 3 (notify): Tell the customer\n"
    "#E3 = issue_refund[payment=#E1, note=#E2]"
)
Turn = tuple[str, str, list[bool]]
"""What a worker is told, the tool it runs, whether each of its calls failed; a turn with no
tool is the planner answering what it is told."""


def rewoo_trace(turns: list[Turn]) -> list[SpanNode]:
    """A grouping root, then per turn a planner agent run (its LLM call answering the text) or
    a worker agent run that never fails (its LLM call told the text, its tool calls)."""
    spans = [node("root", "", "other", 0)]
    for i, (text, tool, calls) in enumerate(turns):
        at, s = 10 * i + 1, f"s{i}"
        if not tool:
            spans += [
                node(s, "root", "step", at, step_name="planner", answer=text),
                node(f"{s}l", s, "llm", at + 1, request="Refund order 7", answer=text),
            ]
            continue
        spans += [node(s, "root", "step", at, step_name="worker")]
        spans += [node(f"{s}l", s, "llm", at + 1, request=text)]
        spans += [
            node(f"{s}t{k}", s, "tool", at + 2 + k, tool=tool, failed=failed)
            for k, failed in enumerate(calls)
        ]
    return spans


def test_a_rewoo_plan_is_read_from_its_evidence_lines_and_bound_by_what_workers_are_told() -> None:
    b = bind(
        rewoo_trace(
            [
                (REWOO, "", []),
                ("Plan 1 (lookup): Find\nRun lookup_order[order=7]", "lookup_order", [False]),
                ("Plan 2 (refund): Refund\nRun issue_refund[payment=P-1]", "issue_refund", [True]),
                ("Plan 2 (refund): Refund\nRun issue_refund[payment=P-1]", "issue_refund",
                 [True, True, False]),
                ("Plan 3 (notify): Tell\nRun issue_refund[payment=P-1]", "issue_refund", [True]),
            ]
        ),
        [],
    )  # fmt: skip
    (plan,) = b.read_plans
    assert plan.span_id == "s0" and b.planners == frozenset({"s0"})
    assert [(s.step_id, s.tool) for s in plan.steps] == [
        ("lookup", "lookup_order"),
        ("refund", "issue_refund"),
        ("notify", "issue_refund"),
    ]
    assert json.loads(plan.json)[1]["args"] == {"payment": "#E1", "reason": "damaged"}
    # two steps share a tool: each attempt binds to the step its worker was told
    assert b.steps == {"s1": "lookup", "s2": "refund", "s3": "refund", "s4": "notify"}
    assert b.attempts == {"s0": 1, "s1": 1, "s2": 1, "s3": 2, "s4": 1}
    # the worker runs never fail: an attempt fails when its last tool call did
    assert b.failed == frozenset({"s2", "s4"})


def test_a_rewoo_re_plan_keeps_its_step_numbers_and_unlabelled_steps_are_numbered() -> None:
    first = "Plan: find it\n#E1 = lookup_order[7]\nPlan: refund it\n#E2 = issue_refund[#E1]"
    again = "Known: #E1 = P-1\nPlan: refund it with the new reason\n#E2 = issue_refund[#E1, late]"
    b = bind(
        rewoo_trace(
            [
                (first, "", []),
                ("#E1: find it", "lookup_order", [False]),
                ("#E2: refund it", "issue_refund", [True]),
                (again, "", []),
                ("#E2: refund it", "issue_refund", [False]),
            ]
        ),
        [],
    )
    assert [[s.step_id for s in p.steps] for p in b.read_plans] == [["E1", "E2"], ["E2"]]
    assert json.loads(b.read_plans[0].json)[0]["args"] == {"input": "7"}
    assert b.steps == {"s1": "E1", "s2": "E2", "s4": "E2"}
    assert b.attempts["s4"] == 2 and b.failed == frozenset({"s2"})


def test_one_evidence_line_is_no_plan_and_evidence_lines_need_a_planner() -> None:
    one = "Plan 1 (lookup): Find order 7\n#E1 = lookup_order[order=7]"
    turns: list[Turn] = [(one, "", []), ("Plan 1 (lookup): Find", "lookup_order", [False])]
    assert bind(rewoo_trace(turns), []).read_plans == ()
    # a worker told the evidence lines states no plan; a plan the span model read wins
    told: list[Turn] = [(REWOO, "lookup_order", [False]), (REWOO, "issue_refund", [False])]
    assert bind(rewoo_trace(told), []).read_plans == ()
    assert bind(rewoo_trace([(REWOO, "", []), *told]), PLAN).read_plans == ()


def test_an_llmcompiler_plan_is_read_when_its_numbered_calls_refer_to_earlier_results() -> None:
    plan = "Thought: look it up first.\n1. lookup_order(order=7)\n2. issue_refund(payment=$1)"
    turns: list[Turn] = [
        (plan, "", []),
        ("lookup_order 7", "lookup_order", [False]),
        ("issue_refund", "issue_refund", [True, True]),
    ]
    b = bind(rewoo_trace(turns), [])
    (read,) = b.read_plans
    assert [(s.step_id, s.tool) for s in read.steps] == [
        ("E1", "lookup_order"),
        ("E2", "issue_refund"),
    ]
    assert json.loads(read.json)[1]["args"] == {"payment": "$1"}
    assert (b.steps, b.failed) == ({"s1": "E1", "s2": "E2"}, frozenset({"s2"}))
    # numbered calls that refer to no earlier result are any numbered list: read from
    # structure (the names the workers carry), not as numbered evidence
    calls = "1. lookup_order(order=7)\n2. issue_refund(order=7)"
    (read,) = bind(rewoo_trace([(calls, "", []), *turns[1:]]), []).read_plans
    assert [s.step_id for s in read.steps] == ["lookup_order", "issue_refund"]


STANZAS = (
    "Order: 7\nRevision: 1\n\n"
    "Step: lookup\nTool: lookup_order\nGoal: find it\nWith-order: 7\n\n"
    "Step: refund\nTool: issue_refund\nGoal: pay back\nWith-amount: 12.50\n"
    "With-order: result-of:lookup"
)


def test_rfc_822_stanzas_are_a_plan_and_an_amendment_changes_only_the_steps_it_names() -> None:
    # a header stanza, then a stanza per step (a field family With-{arg} its arguments); asked
    # again, the planner answers only the changed fields of the step it amends
    spans = planned_trace(STANZAS)
    spans += [
        node("p2", "root", "step", 40, step_name="planner"),
        node(
            "pl2", "p2", "llm", 41, answer="Order: 7\nRevision: 2\n\nAmend: refund\nWith-amount: 9"
        ),
        node("e9", "root", "step", 50, step_name="executor"),
        node("e9l", "e9", "llm", 51, request="Step refund: call issue_refund"),
        node("e9t", "e9", "tool", 52, tool="issue_refund"),
    ]
    first, amended = bind(spans, []).read_plans
    steps = json.loads(first.json)
    assert [(s["id"], s["tool"]) for s in steps] == [
        ("lookup", "lookup_order"),
        ("refund", "issue_refund"),
    ]
    assert steps[1]["args"] == {"amount": "12.50", "order": "result-of:lookup"}
    revised = json.loads(amended.json)
    assert [(s["id"], s["tool"]) for s in revised] == [(s["id"], s["tool"]) for s in steps]
    assert revised[0]["args"] == {"order": 7}
    assert revised[1]["args"] == {"amount": 9, "order": "result-of:lookup"}


URI_PLAN = (
    "plan:7;v=1\n"
    "step:lookup/lookup_order?order=7#Find+the+order\n"
    "step:refund/issue_refund?payment=%40lookup&amount=12#Pay+it+back"
)
URI_REVISION = (
    "plan:7;v=2;revises=1;because=refund%3A+clash\n"
    "kept:lookup?value=PAY-7\n"
    "step:refund/issue_refund?payment=%40lookup&amount=9#Pay+it+back"
)


def uri_trace() -> list[SpanNode]:
    """A planner answers a URI plan; the executor, told a ``do:`` URI per attempt, looks the
    order up, fails the refund; the planner revises (the looked-up step kept with its result);
    the refund runs again."""
    spans = [node("root", "", "other", 0)]
    for i, (at, answer) in enumerate([(1, URI_PLAN), (40, URI_REVISION)]):
        spans += [
            node(f"p{i}", "root", "step", at, step_name="planner"),
            node(f"p{i}l", f"p{i}", "llm", at + 1, request="Berth order 7", answer=answer),
        ]
    tasks = [
        (10, "do:lookup/lookup_order?order=7", "lookup_order", False),
        (20, "do:refund/issue_refund?payment=PAY-7&amount=12", "issue_refund", True),
        (50, "do:refund/issue_refund?payment=PAY-7&amount=9", "issue_refund", False),
    ]
    for at, task, tool, failed in tasks:
        e = f"e{at}"
        spans += [
            node(e, "root", "step", at, step_name="executor"),
            node(f"{e}l", e, "llm", at + 1, request=task),
            node(f"{e}t", e, "tool", at + 2, tool=tool, failed=failed),
        ]
    return spans


def test_uri_lines_are_a_plan_and_a_revision_keeps_its_done_steps_out_of_it() -> None:
    # one step a line, scheme:id/tool?args#goal; a revision states the done steps' results as
    # kept: lines (no amendment of them) and the steps still to run
    b = bind(uri_trace(), [])
    first, revised = b.read_plans
    assert json.loads(first.json) == [
        {"id": "lookup", "tool": "lookup_order", "args": {"order": 7}},
        {"id": "refund", "tool": "issue_refund", "args": {"payment": "@lookup", "amount": 12}},
    ]
    assert json.loads(revised.json) == [
        {"id": "refund", "tool": "issue_refund", "args": {"payment": "@lookup", "amount": 9}}
    ]
    assert b.steps == {"e10": "lookup", "e20": "refund", "e50": "refund"}
    assert b.failed == frozenset({"e20"})


def test_one_stanza_is_no_first_plan() -> None:
    text = "Step: lookup\nTool: lookup_order\nWith-order: 7"
    assert bind(planned_trace(text, steps=("lookup",)), []).read_plans == ()


def test_an_xml_plan_is_read_with_its_arguments_when_only_its_first_step_ran() -> None:
    # the run loops on its first step: no later attempt carries the second step's name
    text = (
        '<plan order="7"><step id="lookup" tool="lookup_order"><arg name="order">7</arg></step>'
        '<step id="refund" tool="issue_refund"><arg name="after" from="lookup"/></step></plan>'
    )
    (plan,) = bind(planned_trace(text, steps=("lookup", "lookup")), []).read_plans
    steps = json.loads(plan.json)
    # a step's tool is one the trace called: the refund tool never was
    assert [(s["id"], s["tool"]) for s in steps] == [("lookup", "lookup_order"), ("refund", "")]
    assert steps[0]["args"] == {"order": 7}
    assert steps[1]["args"] == {"after": {"from": "lookup"}}


MAKEFILE = (
    "# order 7: refund plan\n"
    "lookup:  ## Find order 7\n"
    "\tlookup_order order=7 region=eu\n"
    "\n"
    "refund: lookup  ## Refund what was paid\n"
    '\tissue_refund payment=$(lookup) reason="damaged goods"\n'
)


def test_a_makefile_plan_is_read_from_its_rules_and_a_re_plan_from_what_is_left() -> None:
    again = "lookup := P-1\n\nrefund: lookup  ## Refund, later\n\tissue_refund payment=$(lookup)\n"
    b = bind(
        rewoo_trace(
            [
                (MAKEFILE, "", []),
                ("Run lookup:\n\tlookup_order order=7", "lookup_order", [False]),
                ("Run refund:\n\tissue_refund payment=P-1", "issue_refund", [True]),
                (again, "", []),
                ("Run refund:\n\tissue_refund payment=P-1", "issue_refund", [False]),
            ]
        ),
        [],
    )
    first, second = b.read_plans
    assert [(s.step_id, s.tool) for s in first.steps] == [
        ("lookup", "lookup_order"),
        ("refund", "issue_refund"),
    ]
    assert json.loads(first.json)[1] == {
        "id": "refund",
        "tool": "issue_refund",
        "args": {"payment": "$(lookup)", "reason": "damaged goods"},
        "depends_on": ["lookup"],
        "description": "Refund what was paid",
    }
    assert [s.step_id for s in second.steps] == ["refund"]
    assert b.steps == {"s1": "lookup", "s2": "refund", "s4": "refund"}
    assert b.attempts["s4"] == 2 and b.failed == frozenset({"s2"})


def test_name_and_text_lines_without_recipes_or_references_are_no_makefile() -> None:
    for text in (
        "lookup: find order 7\nrefund: pay it back\n",  # no recipe
        "lookup:\n\tlookup_order order=7\n\nrefund:\n\tissue_refund order=7\n",  # no dependency
    ):
        b = bind(rewoo_trace([(text, "", []), ("Run lookup", "lookup_order", [False])]), [])
        assert all("depends_on" not in json.loads(p.json)[0] for p in b.read_plans), text


PRESS_RUN = (
    "JOB SHEET 1 for the spring catalogue\n"
    'P1 proof @prepress -> make_proof file="cat-spring.pdf" pages=48 -> a proof to sign\n'
    "P2 plates @prepress -> burn_plates proof=^P1 colours=4 -> plates from the signed proof\n"
    'P3 print @press -> run_press plates=^P2 copies=5000 stock="matt 130" -> the run\n'
)
PRESS_REVISED = (
    "JOB SHEET 2 for the spring catalogue\n"
    "P1 proof -> done: PRF-7\n"
    "P2 plates @prepress -> burn_plates proof=^P1 colours=5 -> plates, a fifth colour\n"
    'P3 print @press -> run_press plates=^P2 copies=5000 stock="matt 130" -> the run\n'
)


def test_a_plan_of_step_lines_is_read_with_its_references_and_a_revision_from_what_is_left() -> (
    None
):
    # a step a line: an id, the step's name, then its call (a tool, key=value arguments; ^P1
    # the result of line P1); a revision's done line names no call. The workers are told the
    # whole sheet: the tools they call bind their turns (no new binding rule)
    b = bind(
        rewoo_trace(
            [
                (PRESS_RUN, "", []),
                (PRESS_RUN + "GO P1", "make_proof", [False]),
                (PRESS_RUN + "GO P2", "burn_plates", [True, True]),
                (PRESS_REVISED, "", []),
                (PRESS_REVISED + "GO P2", "burn_plates", [False]),
                (PRESS_REVISED + "GO P3", "run_press", [False]),
            ]
        ),
        [],
    )
    first, revised = b.read_plans
    assert json.loads(first.json) == [
        {
            "id": "proof",
            "tool": "make_proof",
            "args": {"file": "cat-spring.pdf", "pages": 48},
            "depends_on": [],
            "description": "",
        },
        {
            "id": "plates",
            "tool": "burn_plates",
            "args": {"proof": "^proof", "colours": 4},
            "depends_on": ["proof"],
            "description": "",
        },
        {
            "id": "print",
            "tool": "run_press",
            "args": {"plates": "^plates", "copies": 5000, "stock": "matt 130"},
            "depends_on": ["plates"],
            "description": "",
        },
    ]
    assert [s.step_id for s in revised.steps] == ["plates", "print"]
    assert b.steps == {"s1": "proof", "s2": "plates", "s4": "plates", "s5": "print"}
    assert b.attempts["s4"] == 2 and b.failed == frozenset({"s2"})


def test_id_lines_without_calls_references_or_one_prefix_are_no_plan() -> None:
    for text in (
        "P1 proof make_proof file=a.pdf\nP2 plates burn_plates colours=4\n",  # no reference
        "P1 proof make_proof file=a.pdf\nQ2 plates burn_plates proof=^P1\n",  # two prefixes
        "P1 proof is next\nP2 plates after ^P1\n",  # no call
        "P1 proof make_proof file=a.pdf\nP1 plates burn_plates proof=^P1\n",  # one id twice
    ):
        b = bind(rewoo_trace([(text, "", []), ("GO P1", "make_proof", [False])]), [])
        assert all("depends_on" not in json.loads(p.json)[0] for p in b.read_plans), text


SCRIPT = (
    "#!refunds 7 rev 1\n"
    "lookup = lookup_order --order 7 --region eu  # Find what was paid\n"
    "refund = issue_refund --payment $lookup --reason 'damaged # goods'  # Refund it\n"
)
REVISED = (
    "#!refunds 7 rev 2\n# rev 2 amends 1: refund declined\nexport lookup=P-1\n"
    "refund = issue_refund --payment ${lookup} --reason damaged --retry  # Refund it again\n"
)


def app_trace(turns: list[tuple[str, str, str]]) -> list[SpanNode]:
    """An app's own plain spans (no convention): its root, a planner span over an LLM call
    answering a script, step spans named ``app.step <id>`` over an LLM call told to run a
    command and a plain span per call of the tool (``app.tool <tool>``)."""
    spans = [node("root", "", "other", 0, name="app.order 7")]
    for i, (step, tool, text) in enumerate(turns):
        at, s = 10 * i + 1, f"s{i}"
        if not step:
            spans += [
                node(s, "root", "other", at, name="app.plan"),
                node(
                    f"{s}l", s, "llm", at + 1, request="Refund order 7", answer=text, duration_ns=1
                ),
            ]
            continue
        spans += [
            node(s, "root", "other", at, name=f"app.step {step}", failed=text == "fail"),
            node(f"{s}l", s, "llm", at + 1, request=f"run {tool} --order 7", duration_ns=1),
            node(f"{s}t", s, "other", at + 3, name=f"app.tool {tool}"),
        ]
    return spans


def test_a_shell_script_plan_is_read_from_its_commands_and_a_revision_from_what_is_left() -> None:
    b = bind(
        app_trace(
            [
                ("", "", SCRIPT),
                ("lookup", "lookup_order", "ok"),
                ("refund", "issue_refund", "fail"),
                ("", "", REVISED),
                ("refund", "issue_refund", "ok"),
            ]
        ),
        [],
    )
    first, second = b.read_plans
    assert [(s.step_id, s.tool) for s in first.steps] == [
        ("lookup", "lookup_order"),
        ("refund", "issue_refund"),
    ]
    assert json.loads(first.json)[1] == {
        "id": "refund",
        "tool": "issue_refund",
        "args": {"payment": "$lookup", "reason": "damaged # goods"},
        "depends_on": ["lookup"],
        "description": "Refund it",
    }
    # the revision states the done step's result (an export), not the step: no dependency
    assert json.loads(second.json) == [
        {
            "id": "refund",
            "tool": "issue_refund",
            "args": {"payment": "${lookup}", "reason": "damaged", "retry": True},
            "depends_on": [],
            "description": "Refund it again",
        }
    ]
    # the app's step spans name their step: the step is that id, not the tool it was told of
    assert b.steps == {"s1": "lookup", "s2": "refund", "s4": "refund"}
    assert (b.attempts["s4"], b.failed) == (2, frozenset({"s2"}))


def test_app_step_spans_name_the_steps_of_a_plan_read_from_structure() -> None:
    """Executors told a command by its tool, in spans the app names after their step: the plan
    read from structure has the steps' ids, not the tools; the app's prefix, in every span's
    name, names no step of a re-plan."""
    first = "Plan:\n- lookup: find what was paid\n- refund: pay it back\n"
    again = "Revised app plan:\n- refund: pay it back, once more\n"
    b = bind(
        app_trace(
            [
                ("", "", first),
                ("lookup", "lookup_order", "ok"),
                ("refund", "issue_refund", "fail"),
                ("", "", again),
                ("refund", "issue_refund", "ok"),
            ]
        ),
        [],
    )
    assert [[s.step_id for s in p.steps] for p in b.read_plans] == [
        ["lookup", "refund"],
        ["refund"],
    ]
    assert b.steps == {"s1": "lookup", "s2": "refund", "s4": "refund"}


def test_assignment_lines_with_no_reference_or_export_or_with_prose_are_no_script() -> None:
    for text in (
        "lookup = lookup_order --order 7\nrefund = issue_refund --order 7\n",  # no reference
        "Plan:\nlookup = lookup_order --order 7\nrefund = issue_refund --payment $lookup\n",
    ):
        b = bind(app_trace([("", "", text), ("lookup", "lookup_order", "ok")]), [])
        assert all("depends_on" not in json.loads(p.json)[0] for p in b.read_plans), text


SHEET = (
    "\\begin{plan}{7}{1}\n"
    "\\task{lookup}{lookup_order}{order=7, region=eu}{Find what was paid}\n"
    "\\task{refund}{issue_refund}{payment=\\ref{lookup}, reason=damaged}{Refund it}\n"
    "\\end{plan}\n"
)
RESHEET = (
    "\\begin{plan}{7}{2}\n\\revises{1}{refund declined}\n\\kept{lookup}{P-1}\n"
    "\\task{refund}{issue_refund}{payment=\\ref{lookup}, reason=damaged, retry=1}{Again}\n"
    "\\end{plan}\n"
)


def agent_trace(turns: list[tuple[str, str, str]]) -> list[SpanNode]:
    """An agent framework's own spans (Strands Agents' shape): the app's root, an inferred
    agent run per call (``invoke_agent <agent>``), its LLM call, the tool calls it made; a
    planner's run answers ``text``, an executor's calls ``tool`` (failing when ``text`` is
    ``fail``)."""
    spans = [node("root", "", "other", 0, name="app.order 7")]
    for i, (agent, tool, text) in enumerate(turns):
        at, s = 10 * i + 1, f"s{i}"
        planner = not tool
        spans += [
            node(
                s,
                "root",
                "step",
                at,
                name=f"invoke_agent {agent}",
                step_name=agent,
                answer=text if planner else "done",
            ),
            node(f"{s}l", s, "llm", at + 1, answer=text if planner else "", duration_ns=1),
        ]
        if not planner:
            spans.append(
                node(f"{s}t", s, "tool", at + 3, tool=tool, failed=text == "fail", answer="{}")
            )
    return spans


def test_a_latex_macro_plan_is_read_from_its_step_macros_and_a_revision_from_what_is_left() -> None:
    """The macro that recurs with an identifier and a ``key=value`` argument is a step, a
    one-argument macro naming a step an earlier result; a revision's other identifier-led macro
    (a done step) is no step; executor runs bind by the tool they call."""
    b = bind(
        agent_trace(
            [
                ("planner", "", SHEET),
                ("executor", "lookup_order", "ok"),
                ("executor", "issue_refund", "fail"),
                ("planner", "", RESHEET),
                ("executor", "issue_refund", "ok"),
            ]
        ),
        [],
    )
    first, second = b.read_plans
    assert (first.span_id, second.span_id) == ("s0", "s3")
    assert [(s.step_id, s.tool) for s in first.steps] == [
        ("lookup", "lookup_order"),
        ("refund", "issue_refund"),
    ]
    assert json.loads(first.json)[1] == {
        "id": "refund",
        "tool": "issue_refund",
        "args": {"payment": "\\ref{lookup}", "reason": "damaged"},
        "depends_on": ["lookup"],
        "description": "Refund it",
    }
    assert json.loads(second.json) == [
        {
            "id": "refund",
            "tool": "issue_refund",
            "args": {"payment": "\\ref{lookup}", "reason": "damaged", "retry": 1},
            "depends_on": [],
            "description": "Again",
        }
    ]
    assert b.steps == {"s1": "lookup", "s2": "refund", "s4": "refund"}
    assert (b.attempts["s4"], b.failed) == (2, frozenset({"s2"}))


def test_macros_with_no_reference_or_without_arguments_are_no_plan() -> None:
    for text in (
        "\\task{lookup}{lookup_order}{order=7}{Find}\n\\task{refund}{issue_refund}{order=7}{Pay}",
        "\\section{lookup}{Find what was paid}\n\\section{refund}{Refund \\ref{lookup}}",
        "\\outcome{ok}{P-1}{}",
    ):
        b = bind(agent_trace([("planner", "", text), ("executor", "lookup_order", "ok")]), [])
        assert all("depends_on" not in json.loads(p.json)[0] for p in b.read_plans), text


def test_what_a_span_said_in_genai_message_events_is_what_it_was_asked_and_answered() -> None:
    """Strands Agents records a call's messages as events (``gen_ai.user.message``,
    ``gen_ai.choice``, a tool span's ``gen_ai.tool.message``), read as attributes named after
    them; an attribute saying the same wins."""
    blocks = '[{"text": "Refund order 7"}]'
    assert observed.user_request({"gen_ai.user.message": blocks}) == "Refund order 7"
    assert observed.answer({"gen_ai.choice": "\\task{a}{t}{}{A}"}, "step", True) == (
        "\\task{a}{t}{}{A}"
    )
    assert observed.answer({"gen_ai.choice": blocks}, "llm", False) == "Refund order 7"
    assert observed.answer({"gen_ai.tool.message": '{"order": 7}'}, "tool", False) == (
        '{"order": 7}'
    )
    said = {"gen_ai.choice": "from the event", "gen_ai.output.messages": "[]", "output.value": "x"}
    assert observed.answer(said, "step", True) == "x"
    # a choice is no tool call's arguments, a tool message no run's answer
    assert observed.answer({"gen_ai.choice": blocks}, "tool", False) == ""
    assert observed.answer({"gen_ai.tool.message": "{}"}, "step", True) == ""


def test_an_app_attribute_copied_onto_an_agent_call_names_its_step() -> None:
    """Executor calls of one agent that share a tool and are told no step id bind by the step
    an app's attribute on their spans names (``app.step``, as Strands copies an agent's
    ``trace_attributes``); a value naming no step of the plan binds nothing."""
    plan = [ObservedStep("plan", "pick", "wms", 0), ObservedStep("plan", "ship", "wms", 1)]
    spans = [node("root", "", "run", 0), node("plan", "root", "llm", 1)]
    for i, step in enumerate(("pick", "ship", "pack")):
        at = 10 * (i + 1)
        spans += [
            node(f"e{i}", "root", "step", at, step_name="executor", app_step=step),
            node(f"t{i}", f"e{i}", "tool", at + 1, tool="wms"),
        ]
    b = bind(spans, plan)
    assert b.steps == {"e0": "pick", "e1": "ship"}
    assert observed.app_step({"shop.order": "7", "shop.step_id": "pick"}) == "pick"
    assert observed.app_step({"gen_ai.agent.name": "executor", "steps": "3"}) == ""


def test_a_logfire_log_is_an_event_of_its_span_and_an_error_log_fails_it() -> None:
    spans = [
        node("root", "", "other", 0, name="refund {order}"),
        node("plan", "root", "llm", 1, answer=MAKEFILE),
        node("e1", "root", "other", 10, name="run {step}"),
        node("c1", "e1", "llm", 11, request="Run lookup:\n\tlookup_order order=7", duration_ns=1),
        node("t1", "e1", "other", 13, name="lookup_order {order}"),
        node("w1", "e1", "other", 14, name="{tool} slow", log_level=13, message="lookup slow"),
        node("e2", "root", "other", 20, name="run {step}"),
        node("c2", "e2", "llm", 21, request="Run refund:\n\tissue_refund p=1", duration_ns=1),
        node("t2", "e2", "other", 23, name="issue_refund {payment}"),
        node("x2", "e2", "other", 24, name="gave up: {why}", log_level=17, message="gave up: 402"),
    ]
    b = bind(spans, [])
    # the template's fixed text names the tool; logs are no tool calls
    assert b.calls == {"t1": "lookup_order", "t2": "issue_refund"}
    assert b.steps == {"e1": "lookup", "e2": "refund"}
    assert b.failed == frozenset({"e2"})


# --- AutoGen's own OpenTelemetry: runtime message spans, agent turns, Magentic-One ledgers -----
def _delivered(content: Any, key: str = "response") -> dict[str, str]:
    """A runtime ``process`` span's attributes delivering one message (AutoGen's JSON)."""
    if key == "messages":
        message: dict[str, Any] = {"messages": [{"source": "user", "content": content}]}
    elif key == "response":
        message = {"response": {"chat_message": {"source": "lead", "content": content}}}
    else:
        message = {"message": {"source": "clerk", "content": content}}
    return {"messaging.operation": "process", "message": json.dumps(message)}


def _process(span_id: str, start: int, attributes: dict[str, str], parent: str = "app") -> SpanNode:
    return node(
        span_id,
        parent,
        "other",
        start,
        name=f"autogen process {span_id}",
        answer=observed.answer(attributes, "other", False),
    )


LEDGER = (
    "We are working to address the following user request:\n\nLend book 7 to reader 12\n\n"
    "Here is an initial fact sheet to consider:\n\n1. GIVEN OR VERIFIED FACTS\n- book: 7\n"
    "- reader: 12\n\n\nHere is the plan to follow as best as possible:\n\n"
    "- locate_book (catalog_clerk): Find the copy -- catalog(book=7, branch='north')\n"
    "- reserve_copy (desk_clerk): Hold it -- desk(copy=locate_book, reader=12)\n"
    "- send_notice (desk_clerk): Tell the reader -- desk(hold=reserve_copy, channel='mail')\n"
)


def _turn(
    span_id: str, start: int, tools: list[tuple[str, str, bool]], agent: str = "clerk"
) -> list[SpanNode]:
    """A turn: the runtime's process span that starts it, its invoke_agent span, its calls."""
    out = [
        _process(f"{span_id}-go", start, {"messaging.operation": "process", "message": "{}"}),
        node(span_id, f"{span_id}-go", "step", start + 1, step_name=agent,
             name=f"invoke_agent {agent}"),
    ]  # fmt: skip
    for i, (tool, _, failed) in enumerate(tools):
        out.append(node(f"{span_id}-t{i}", span_id, "tool", start + 2 + i, tool=tool,
                        failed=failed))  # fmt: skip
    calls = [{"id": f"c{i}", "name": t, "arguments": a} for i, (t, a, _) in enumerate(tools)]
    done = [
        {"call_id": f"c{i}", "name": t, "content": "failed" if f else "ok", "is_error": f}
        for i, (t, _, f) in enumerate(tools)
    ]
    out.append(_process(f"{span_id}-asked", start + 8, _delivered(calls, "message")))
    out.append(_process(f"{span_id}-done", start + 9, _delivered(done, "message")))
    return out


def magentic_one_trace() -> list[SpanNode]:
    """A Magentic-One team under AutoGen's own tracing: the task, the ledger broadcast to two
    agents, per step the orchestrator's instruction and one agent turn; the second step twice."""
    return [
        node("app", "", "other", 0, name="lend book 7"),
        _process("task", 1, _delivered("Lend book 7 to reader 12", "messages")),
        _process("ledger", 2, _delivered(LEDGER)),
        _process("ledger-2", 3, _delivered(LEDGER)),  # the same broadcast to the other agent
        _process("go-1", 10, _delivered("Please do locate_book: catalog(book=7)")),
        *_turn("w1", 11, [("catalog", '{"book": 7}', False)]),
        _process("go-2", 30, _delivered("Please do reserve_copy: desk(copy='C-1')")),
        *_turn("w2", 31, [("desk", '{"copy": "C-1"}', True)]),
        _process("go-3", 50, _delivered("Please do reserve_copy: desk(copy='C-1')")),
        *_turn("w3", 51, [("desk", '{"copy": "C-1"}', True), ("desk", '{"copy": "C-2"}', True)]),
    ]


def test_autogen_turns_are_the_teams_and_bind_to_the_ledgers_steps_by_their_instruction() -> None:
    b = bind(magentic_one_trace(), [])
    assert b.run_span_id == "app"  # the turns sit in runtime spans under the app's root
    (plan,) = b.read_plans
    assert plan.span_id == "ledger"  # a broadcast is one plan, the facts no steps
    assert [(s.step_id, s.tool) for s in plan.steps] == [
        ("locate_book", "catalog"),
        ("reserve_copy", "desk"),
        ("send_notice", "desk"),
    ]
    steps = json.loads(plan.json)
    assert steps[0]["args"] == {"book": 7, "branch": "north"}
    assert steps[1]["args"] == {"copy": "<from locate_book>", "reader": 12}
    assert (steps[2]["depends_on"], steps[1]["agent"]) == (["reserve_copy"], "desk_clerk")
    # two steps share the desk tool: what the orchestrator asked names the step
    assert b.steps == {"w1": "locate_book", "w2": "reserve_copy", "w3": "reserve_copy"}
    assert b.asked["w2"] == "Please do reserve_copy: desk(copy='C-1')"
    assert (b.attempts["w3"], b.failed) == (2, frozenset({"w2", "w3"}))
    # the calls' arguments and results only the agent's tool call events say
    assert b.call_io == {
        "w1-t0": ('{"book": 7}', "ok"),
        "w2-t0": ('{"copy": "C-1"}', "failed"),
        "w3-t0": ('{"copy": "C-1"}', "failed"),
        "w3-t1": ('{"copy": "C-2"}', "failed"),
    }


def test_a_magentic_one_re_plan_keeps_its_done_items_and_binds_the_turns_after_it() -> None:
    revision = LEDGER.replace(
        "- locate_book (catalog_clerk): Find the copy -- catalog(book=7, branch='north')",
        "- locate_book: done (C-1)",
    ).replace("reader=12)", "reader=12, shelf='south')")
    spans = [
        *magentic_one_trace(),
        _process("replan", 70, _delivered(revision)),
        _process("go-4", 80, _delivered("Please do reserve_copy: desk(copy='C-1', shelf='south')")),
        *_turn("w4", 81, [("desk", '{"copy": "C-1", "shelf": "south"}', False)]),
    ]
    b = bind(spans, [])
    _, second = b.read_plans
    assert second.span_id == "replan"
    assert [s.step_id for s in second.steps] == ["locate_book", "reserve_copy", "send_notice"]
    done, again, _ = json.loads(second.json)
    assert (done["result"], done["tool"]) == ("C-1", "")
    assert again["args"]["shelf"] == "south"
    assert (b.steps["w4"], b.attempts["w4"]) == ("reserve_copy", 3)


def test_facts_and_instructions_without_a_named_bullet_list_are_no_plan() -> None:
    prose = (
        "Here is the plan to follow as best as possible:\n\n"
        "- Ask the catalog clerk where the copy is\n- Then have the desk hold it\n"
    )
    by_agent = (  # Magentic-One's own plans lead each bullet with the agent that does it
        "Here is the plan to follow as best as possible:\n\n"
        "- catalog_clerk: find book 7 in the catalog\n- desk_clerk: hold the copy\n"
        "- catalog_clerk: mark book 7 as lent\n"
    )
    spans = [
        node("app", "", "other", 0, name="lend book 7"),
        _process("facts", 1, _delivered("Facts:\n- book: 7\n- reader: 12")),
        _process("ledger", 2, _delivered(prose)),
        _process("by-agent", 3, _delivered(by_agent)),
        _process("go-1", 10, _delivered("catalog_clerk, find book 7 for reader 12")),
        *_turn("w1", 11, [("catalog", '{"book": 7}', False)]),
    ]
    b = bind(spans, [])
    assert b.read_plans == ()
    assert (b.run_span_id, b.steps, b.asked["w1"]) == (
        "app",
        {},
        "catalog_clerk, find book 7 for reader 12",
    )


def test_what_an_autogen_process_span_delivered_is_its_answer_and_no_other_span_has_one() -> None:
    assert (
        observed.answer(_delivered("Please do locate_book"), "", False) == "Please do locate_book"
    )
    assert observed.answer(_delivered("Lend book 7", "messages"), "other", False) == "Lend book 7"
    calls = [{"id": "c0", "name": "catalog", "arguments": "{}"}]
    assert json.loads(observed.answer(_delivered(calls, "message"), "", False)) == calls
    published = {**_delivered("Please do locate_book"), "messaging.operation": "publish"}
    assert observed.answer(published, "", False) == ""
    assert observed.answer({"message": "Please do locate_book"}, "", False) == ""


def test_an_autogen_planner_agents_reply_is_its_answer_and_its_json_plan_is_read() -> None:
    """A team without Magentic-One: a planner agent replies a JSON plan (no LLM span records
    it), then each step is a task for an executor agent; the reply is the planner turn's
    answer, read as any agent run's."""
    plan = json.dumps(
        [
            {"id": "locate", "description": "Find the copy", "tool": "catalog"},
            {"id": "hold", "description": "Hold the copy", "tool": "desk"},
        ]
    )
    spans = [
        node("app", "", "other", 0, name="lend book 7"),
        _process("task", 1, _delivered("Lend book 7 to reader 12", "messages")),
        *_turn("plan", 2, [], agent="planner"),
        _process("reply", 20, _delivered(plan)),
        _process("go-1", 30, _delivered("Step locate: find the copy of book 7", "messages")),
        *_turn("w1", 31, [("catalog", '{"book": 7}', False)]),
        _process("go-2", 50, _delivered("Step hold: hold copy C-1 for reader 12", "messages")),
        *_turn("w2", 51, [("desk", '{"copy": "C-1"}', True)]),
    ]
    b = bind(spans, [])
    (read,) = b.read_plans
    assert read.span_id == "plan" and b.planners == frozenset({"plan"})
    assert [(s.step_id, s.tool) for s in read.steps] == [("locate", "catalog"), ("hold", "desk")]
    assert (b.steps, b.failed) == ({"w1": "locate", "w2": "hold"}, frozenset({"w2"}))


# -- plans no reader was written for: the format readers switched off (leave one reader out) --


def _without(reader: str, spans: list[SpanNode]) -> observed.Binding:
    """``bind`` with one format reader switched off (measurement only), then on again."""
    observed.switch_off_plan_readers([reader])
    try:
        return bind(spans, [])
    finally:
        observed.switch_off_plan_readers([])


def test_a_switched_off_reader_leaves_the_plan_to_the_generic_path() -> None:
    turns: list[Turn] = [
        (REWOO, "", []),
        ("Plan 1 (lookup): Find\nRun lookup_order[order=7]", "lookup_order", [False]),
        ("Plan 2 (refund): Refund\nRun issue_refund[payment=P-1]", "issue_refund", [True]),
    ]
    on = bind(rewoo_trace(turns), [])
    off = _without("evidence", rewoo_trace(turns))
    assert [s.step_id for s in on.read_plans[0].steps] == ["lookup", "refund", "notify"]
    assert [s.step_id for s in off.read_plans[0].steps] == ["lookup", "refund", "notify"]
    assert json.loads(off.read_plans[0].json)[0]["args"] == {"order": 7, "region": "eu"}
    assert off.steps == on.steps == {"s1": "lookup", "s2": "refund"}
    assert bind(rewoo_trace(turns), []).read_plans == on.read_plans  # on again
    try:
        observed.switch_off_plan_readers(["evidence", "json"])
    except ValueError as e:
        assert "no plan reader named json" in str(e)
    else:
        raise AssertionError("an unknown reader was switched off")


def test_a_heading_every_worker_is_told_is_no_step_when_the_run_stopped_in_its_first() -> None:
    # every worker is told "Plan 1 (lookup)": the heading and the step are carried alike; the
    # step is the name that lists the others the same way
    told = "Plan 1 (lookup): Find\nRun lookup_order[order=7]"
    b = _without("evidence", rewoo_trace([(REWOO, "", [])] + [(told, "lookup_order", [True])] * 4))
    (plan,) = b.read_plans
    assert [s.step_id for s in plan.steps] == ["lookup", "refund", "notify"]
    assert set(b.steps.values()) == {"lookup"} and len(b.steps) == 4


def test_the_planners_own_runs_do_not_keep_a_heading_from_being_one() -> None:
    # a loop across re-plans: the planner answers again between the workers' attempts; its
    # runs are not told the heading, yet it is still no step
    told = "Plan 2 (refund): Refund\nRun issue_refund[payment=P-1]"
    again = REWOO.split("\n", 2)[2]  # the steps left
    turns: list[Turn] = [
        (REWOO, "", []),
        ("Plan 1 (lookup): Find\nRun lookup_order[order=7]", "lookup_order", [False]),
        (told, "issue_refund", [True]),
        (again, "", []),
        (told, "issue_refund", [True]),
        (again, "", []),
        (told, "issue_refund", [True]),
    ]
    b = _without("evidence", rewoo_trace(turns))
    assert [s.step_id for s in b.read_plans[0].steps] == ["lookup", "refund", "notify"]
    assert [b.steps[f"s{i}"] for i in (1, 2, 4, 6)] == ["lookup", "refund", "refund", "refund"]


def test_names_that_start_their_lines_before_one_mark_list_the_steps_no_worker_reached() -> None:
    # a Makefile read with no Makefile reader, the run stuck in its first step: the other
    # targets start their lines before the same mark (``:``) as the one reached
    told = "Run lookup:\n\tlookup_order order=7"
    b = _without(
        "targets", rewoo_trace([(MAKEFILE, "", [])] + [(told, "lookup_order", [True])] * 4)
    )
    (plan,) = b.read_plans
    assert [(s.step_id, s.tool) for s in plan.steps] == [("lookup", "lookup_order"), ("refund", "")]
    assert set(b.steps.values()) == {"lookup"}
    # the same lines with nothing marking them are any sentences: no plan of one step
    prose = MAKEFILE.replace("lookup:", "lookup").replace("refund:", "refund")
    told = "Run lookup\n\tlookup_order order=7"
    b = _without("targets", rewoo_trace([(prose, "", [])] + [(told, "lookup_order", [True])] * 4))
    assert b.read_plans == ()


def test_arguments_under_a_prefixed_key_are_read_without_their_reader() -> None:
    # RFC 822 stanzas with no stanza reader: a field family (``With-order``) names its argument
    b = _without("stanzas", planned_trace(STANZAS))
    (plan,) = b.read_plans
    steps = json.loads(plan.json)
    assert [(s["id"], s["tool"]) for s in steps] == [
        ("lookup", "lookup_order"),
        ("refund", "issue_refund"),
    ]
    assert steps[0]["args"] == {"order": 7}
    assert steps[1]["args"] == {"amount": "12.50", "order": "result-of:lookup"}


def test_an_element_named_by_its_one_attribute_is_an_argument_without_its_reader() -> None:
    # an XML plan with no XML reader, one step per line: ``<arg name="k">v</arg>`` is k = v
    text = (
        '<plan order="7">\n<step id="lookup" tool="lookup_order">\n<arg name="order">7</arg>\n'
        '<arg name="region">eu</arg>\n</step>\n<step id="refund" tool="issue_refund">\n'
        '<arg name="reason">damaged goods</arg>\n</step>\n</plan>'
    )
    (plan,) = _without("elements", planned_trace(text)).read_plans
    steps = json.loads(plan.json)
    assert [(s["id"], s["tool"]) for s in steps] == [
        ("lookup", "lookup_order"),
        ("refund", "issue_refund"),
    ]
    assert steps[0]["args"] == {"order": 7, "region": "eu"}
    assert steps[1]["args"] == {"reason": "damaged goods"}


BIB_PLAN = """@plan{J-1,
  revision = {1},
}
@step{pick,
  tool = {Wms_pick},
  goal = {Pick the order},
  order = {7},
}
@step{ship,
  tool = {Courier_send},
  goal = {Ship it},
  parcel = pick,
  to = {Oslo},
}"""
BIB_REPLAN = """@plan{J-1,
  revision = {2},
  supersedes = {1},
  reason = {courier busy},
}
@done{pick,
  result = {PCK-1},
}
@step{ship,
  tool = {Courier_send},
  goal = {Ship it},
  parcel = pick,
  to = {Bergen},
}"""


def griptape_trace(plans: list[str], steps: list[tuple[str, list[bool]]]) -> list[SpanNode]:
    """An app's job span over a framework root (``main``) holding the app's plan spans (the
    plan text their answer) and step spans ``shop.step <id>`` (their ``.args``/``.result`` as
    ``io``), each over an agent turn of plain spans with a prompt-driver LLM call and tool
    calls named ``<Tool>.try_run()`` (``failed`` each)."""
    out = [node("job", "", "other", 0, name="shop.job"), node("main", "job", "other", 1)]
    t = 2
    for i, text in enumerate(plans):
        out += [
            node(f"p{i}", "main", "other", t, name="shop.plan", answer=text),
            node(f"pa{i}", f"p{i}", "other", t, name="Agent.run()"),
            node(f"pl{i}", f"pa{i}", "llm", t, name="OpenAiChatPromptDriver.run()"),
        ]
        t += 1
        for j, (step, calls) in enumerate(steps if i == 0 else steps[-1:]):
            sid = f"s{i}{j}"
            io = ('{"order": 7}', f"@result{{status = {{{'ok' if not calls[-1] else 'again'}}}}}")
            out += [
                node(sid, "main", "other", t, name=f"shop.step {step}", io=io),
                node(f"a{sid}", sid, "other", t, name="Agent.run()"),
                node(f"l{sid}", f"a{sid}", "llm", t, name="OpenAiChatPromptDriver.run()"),
            ]
            out += [
                node(f"t{sid}{k}", f"a{sid}", "tool", t + k, tool="Wms.try_run()", failed=f)
                for k, f in enumerate(calls)
            ]
            t += 10
    return out


def test_app_step_spans_under_a_framework_root_are_attempts_of_a_bibtex_plan_in_a_plan_span() -> (
    None
):
    """No span is a step the span model knows: the app's ``<prefix>.step <id>`` spans are the
    attempts (under the framework's own root span, their root the run), the BibTeX entries of
    the app's plan span its plan (a bare word an earlier step's result), a revision's
    done-marker no step; a step span's arguments and result are its first and last call's."""
    b = bind(
        griptape_trace([BIB_PLAN, BIB_REPLAN], [("pick", [False]), ("ship", [True, True])]), []
    )
    first, second = b.read_plans
    assert (first.span_id, second.span_id) == ("p0", "p1")
    assert json.loads(first.json) == [
        {
            "id": "pick",
            "tool": "Wms_pick",
            "args": {"order": 7},
            "depends_on": [],
            "description": "Pick the order",
        },
        {
            "id": "ship",
            "tool": "Courier_send",
            "args": {"parcel": "pick", "to": "Oslo"},
            "depends_on": ["pick"],
            "description": "Ship it",
        },
    ]
    assert [s.step_id for s in second.steps] == ["ship"]
    assert json.loads(second.json)[0]["args"] == {"parcel": "pick", "to": "Bergen"}
    assert b.run_span_id == "job"
    assert b.steps == {"s00": "pick", "s01": "ship", "s10": "ship"}
    assert b.failed == frozenset({"s01", "s10"})
    assert (b.attempts["s01"], b.attempts["s10"]) == (1, 2)
    assert b.actions["ts010"] == "s01"
    assert b.call_io["ts000"] == ('{"order": 7}', "@result{status = {ok}}")
    assert b.call_io["ts010"] == ('{"order": 7}', "")
    assert b.call_io["ts011"] == ("", "@result{status = {again}}")


def test_bibtex_entries_with_no_reference_or_of_one_field_are_no_plan() -> None:
    for text in (
        "@book{knuth84, title = {TeX}, year = {1984}}\n@book{lamport86, title = {LaTeX}}",
        "@step{pick, tool = {wms}, order = {7}}\n@step{ship, tool = {courier}, to = {Oslo}}",
        "@done{pick, result = {PCK-1}}\n@done{ship, result = pick}",
    ):
        b = bind(griptape_trace([text], [("pick", [False]), ("ship", [False])]), [])
        assert b.read_plans == (), text


def test_a_json_plan_in_an_app_plan_span_is_read_from_its_structure() -> None:
    """An app's plan span's text is offered to every reader: a JSON list of steps whose ids the
    app's step spans carry in their names (their calls record nothing they were asked) is a plan
    read from structure; without a plan span's name the same text is no plan."""
    text = json.dumps([{"id": "pick", "tool": "wms"}, {"id": "ship", "tool": "courier"}])
    nodes = griptape_trace([text], [("pick", [False]), ("ship", [True])])
    b = bind(nodes, [])
    ((plan),) = b.read_plans
    assert (plan.span_id, [s.step_id for s in plan.steps]) == ("p0", ["pick", "ship"])
    assert b.steps == {"s00": "pick", "s01": "ship"}
    unnamed = [replace(n, name="shop.job step") if n.span_id == "p0" else n for n in nodes]
    assert bind(unnamed, []).read_plans == ()


def test_plain_spans_that_carry_an_apps_step_id_are_its_attempts() -> None:
    """A plain span whose name says nothing of its step but whose app attribute
    ``<prefix>.step.id`` names it (:attr:`SpanNode.app_step`) is that step's attempt, as a span
    named ``<prefix>.step <id>`` is; without the attribute it is none."""
    nodes = griptape_trace([BIB_PLAN], [("pick", [False]), ("ship", [True])])
    said = [
        replace(n, name="shop.work", app_step=n.name.split()[-1])
        if n.name.startswith("shop.step ")
        else n
        for n in nodes
    ]
    b = bind(said, [])
    assert (b.run_span_id, b.steps, b.failed) == ("job", {"s00": "pick", "s01": "ship"}, {"s01"})
    unsaid = [replace(n, app_step="") for n in said]
    assert bind(unsaid, []).steps == {}


# --- traced functions (Burr's @trace() spans: planscope_collector._burr) -----------------------
def _function(
    span_id: str, parent: str, start: int, result: Any, *, name: str = "", **given: str
) -> SpanNode:
    """A traced function's span as the loader gives it: plain, its arguments and return."""
    io = (json.dumps(given), result if isinstance(result, str) else json.dumps(result))
    return node(span_id, parent, "other", start, name=name or span_id, io=io, duration_ns=1)


def _said(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _calling(tool: str, **arguments: str) -> dict[str, Any]:
    call = {"name": tool, "arguments": json.dumps(arguments)}
    return {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": call}]}


def _step(name: str, tool: str, **arguments: str) -> dict[str, Any]:
    """A structured-output plan step: arguments as name / value or name / from_step pairs."""
    pairs = [
        {"name": k, "value": "", "from_step": v[1:]}
        if v.startswith("@")
        else {"name": k, "value": v, "from_step": None}
        for k, v in arguments.items()
    ]
    return {"name": name, "description": f"{name} it", "tool": tool, "arguments": pairs}


OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "busy, later"}}


def function_trace(*, paid: Any, replan: bool = False) -> list[SpanNode]:
    """An app run of actions (a plan action, a step action per attempt), whose work is only
    traced functions: a planner's structured output, an executor's chat turns, the services."""
    plan = {"steps": [_step("pick", "wms", order="7"), _step("ship", "courier", parcel="@pick")]}
    spans = [
        node("run", "", "other", 0),
        node("act0", "run", "other", 1, name="plan"),
        _function("ask0", "act0", 2, plan, name="ask_planner", brief="Ship order 7"),
    ]
    turns = [("pick", "wms", {"id": "PCK-1"}), ("ship", "courier", paid), ("ship", "courier", paid)]
    for i, (step, tool, result) in enumerate(turns):
        a, t = f"act{i + 1}", 10 * (i + 1)
        spans += [
            node(a, "run", "other", t, name="execute_step"),
            _function(f"{a}m", a, t + 1, _calling(tool, order="7"), name="ask_executor", step=step),
            _function(f"{a}t", a, t + 3, result, name=tool, order="7"),
            _function(f"{a}d", a, t + 5, _said("done"), name="ask_executor", step=step),
        ]
    if replan:  # another action asks the same planner again: the steps still to do
        again = {
            "steps": [
                _step("ship", "courier", parcel="@pick", speed="express"),
                _step("notify", "mail", parcel="@ship"),
            ]
        }
        spans += [
            node("act9", "run", "other", 40, name="replan"),
            _function("ask9", "act9", 41, again, name="ask_planner", brief="Ship order 7"),
            node("act10", "run", "other", 50, name="execute_step"),
            _function("act10m", "act10", 51, _calling("courier"), name="ask_executor", step="ship"),
            _function("act10t", "act10", 53, {"id": "SHP-1"}, name="courier"),
        ]
    return spans


def test_traced_functions_are_model_calls_tool_calls_and_the_plan_they_stated() -> None:
    b = bind(function_trace(paid=OVERLOADED), [])
    assert b.run_span_id == "run"
    (plan,) = b.read_plans
    assert plan.span_id == "ask0"  # the planner function's structured output
    steps = json.loads(plan.json)
    assert [(s["id"], s["tool"], s.get("args"), s.get("depends_on")) for s in steps] == [
        ("pick", "wms", {"order": "7"}, None),
        ("ship", "courier", None, ["pick"]),  # its parcel is pick's result: a dependency
    ]
    assert b.calls == {"act1t": "wms", "act2t": "courier", "act3t": "courier"}
    assert b.steps == {"act1": "pick", "act2": "ship", "act3": "ship"}
    assert (b.attempts["act2"], b.attempts["act3"]) == (1, 2)
    # the services said OK and returned an error object: the calls and their attempts failed
    assert b.returned == {
        "act2t": ("overloaded_error", "busy, later"),
        "act3t": ("overloaded_error", "busy, later"),
    }
    assert b.failed == {"act2", "act3"}
    assert b.planners == {"act0"}


def test_a_planner_function_called_again_from_another_action_is_a_revision() -> None:
    b = bind(function_trace(paid={"id": "SHP-0"}, replan=True), [])
    _, again = b.read_plans
    assert [s.step_id for s in again.steps] == ["ship", "notify"]  # only the steps still to do
    # the step it takes a result from is one an earlier plan did
    ship, notify = json.loads(again.json)
    assert (ship["depends_on"], ship["args"], notify["depends_on"]) == (
        ["pick"],
        {"speed": "express"},
        ["ship"],
    )
    assert b.steps["act10"] == "ship" and b.failed == frozenset()


ENVELOPES = [
    (OVERLOADED, ("overloaded_error", "busy, later")),
    (
        {"isError": True, "content": [{"type": "text", "text": "no such file"}]},
        ("", "no such file"),
    ),
    ({"is_error": True, "content": "quota"}, ("", "quota")),
    ({"error": {"code": "E42", "message": "denied"}}, ("E42", "denied")),
    ({"error": "timed out", "status": 504}, ("504", "timed out")),
]
NOT_ERRORS = [
    {"rows": [1, 2], "errors": []},
    {"id": "PCK-1", "error": None},
    {"id": "PCK-1", "error": ""},
    {"id": "PCK-1", "error": "none", "message": "error budget at 3%"},
    {"message": "the error was fixed"},
    {"type": "error"},
    {"isError": False, "content": [{"type": "text", "text": "error: none"}]},
    {"error": {}},
    "error: connection reset",  # a log text, no envelope
]


def test_an_error_envelope_a_call_returned_fails_it_and_a_mention_does_not() -> None:
    for result, error in ENVELOPES:
        b = bind(function_trace(paid=result), [])
        assert b.returned.get("act2t") == error, result
        assert "act2" in b.failed, result
    for result in NOT_ERRORS:
        b = bind(function_trace(paid=result), [])
        assert b.returned == {} and b.failed == frozenset(), result


def test_a_call_that_raised_keeps_its_own_error() -> None:
    spans = [
        replace(s, failed=True, message="HTTP 500") if s.span_id == "act2t" else s
        for s in function_trace(paid=OVERLOADED)
    ]
    b = bind(spans, [])
    assert "act2t" not in b.returned and "act3t" in b.returned
    assert b.said["act2"] == "HTTP 500"


def test_planscopes_own_spans_are_never_read_as_returned_errors() -> None:
    # a typed tool span (planscope's SDK, any convention the span model reads) keeps its status
    spans = [
        replace(s, kind="tool", tool="courier") if s.span_id == "act2t" else s
        for s in function_trace(paid=OVERLOADED)
    ]
    assert "act2t" not in bind(spans, []).returned


def test_an_action_that_raised_beside_the_actions_that_called_is_an_attempt() -> None:
    spans = [
        *function_trace(paid={"id": "SHP-0"}),
        node("check", "run", "other", 60, name="verify", failed=True, message="wrong day"),
        node("idle", "run", "other", 70, name="wait"),  # did nothing and did not fail
    ]
    b = bind(spans, [])
    assert "check" in b.promoted and "check" in b.failed
    assert "idle" not in b.promoted


def test_step_io_reads_a_burr_function_spans_arguments_and_return() -> None:
    attributes = {
        "__burr_function": "services.<locals>.pay",
        "__burr_function_hash": "9f2",
        "order": "7",
        "return": json.dumps(OVERLOADED),
    }
    assert observed.step_io(attributes) == ('{"order": "7"}', json.dumps(OVERLOADED))


# --- tool calls said only by the conversation; LiteLLM's own OpenTelemetry ----------------------
def _genai_turn(history: list[dict[str, Any]]) -> dict[str, str]:
    """A model call's attributes in the GenAI parts format, LiteLLM's way: its request's history
    (OpenAI-shaped ``tool_calls`` and ``tool`` messages), an answer recording no call id."""
    return {
        "gen_ai.input.messages": json.dumps(history),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": []}]),
    }


def _asked(call_id: str, tool: str, **arguments: str) -> dict[str, Any]:
    function = {"name": tool, "arguments": json.dumps(arguments)}
    return {"role": "assistant", "tool_calls": [{"id": call_id, "function": function}]}


def _answered(call_id: str, result: Any) -> dict[str, Any]:
    text = json.dumps(result)
    return {"role": "tool", "tool_call_id": call_id, "parts": [{"type": "text", "content": text}]}


def conversation_trace() -> tuple[list[SpanNode], list[observed.ToolEvent]]:
    """An app's plain spans (a root, a plan span, one span per task attempt) over LLM calls
    only, each with LiteLLM's raw copy under it; two attempts of one task, each a conversation
    that numbers its call ids afresh; the tool calls said only by the later requests."""
    user = {"role": "user", "parts": [{"type": "text", "content": "Task: pick"}]}
    busy = [user, _asked("call_0", "wms", order="7"), _answered("call_0", {"error": "busy"})]
    picked = [user, _asked("call_0", "wms", order="7"), _answered("call_0", {"id": "PCK-1"})]
    shipped = [user, _asked("call_0", "courier"), _answered("call_0", {"id": "S"})]
    turns = {  # span -> (parent, start, history)
        "m1": ("a1", 11, [user]),
        "m2": ("a1", 13, busy),
        "m3": ("a2", 21, [user]),
        "m4": ("a2", 23, picked),
        "m5": ("a3", 31, [user]),
        "m6": ("a3", 33, shipped),
        "m7": ("a3", 35, [*shipped, {"role": "assistant", "content": "done"}, user]),
    }
    spans = [
        node("run", "", "other", 0, name="job"),
        node("p", "run", "other", 1, name="plan"),
        node("pl", "p", "llm", 2, name="litellm_request"),
        node("a1", "run", "other", 10, name="task pick"),
        node("a2", "run", "other", 20, name="task pick"),
        node("a3", "run", "other", 30, name="task ship"),
    ]
    events: list[observed.ToolEvent] = []
    for span_id, (parent, start, history) in turns.items():
        spans.append(node(span_id, parent, "llm", start, name="litellm_request"))
        events += observed.conversation_tool_events(
            span_id, parent, start, start + 1, _genai_turn(history)
        )
    llm = [s for s in spans if s.kind == "llm"]
    spans += [node(f"{s.span_id}r", s.span_id, "other", s.start_ns, name="raw_gen_ai_request")
              for s in llm]  # fmt: skip
    return spans, events


def test_tool_calls_said_only_by_the_conversation_are_calls_of_their_attempts() -> None:
    spans, events = conversation_trace()
    plan = [ObservedStep("pl", "pick", "wms", 0), ObservedStep("pl", "ship", "courier", 1)]
    b = bind(spans, plan, events=events)
    calls = sorted(b.event_calls, key=lambda c: c.start_ns)
    # each call once (a later request repeats the history), in its conversation (the call ids
    # of the attempts' conversations are the same), under the attempt it was made in
    assert [(b.actions[c.span_id], c.tool, c.result) for c in calls] == [
        ("a1", "wms", '{"error": "busy"}'),
        ("a2", "wms", '{"id": "PCK-1"}'),
        ("a3", "courier", '{"id": "S"}'),
    ]
    assert [c.failed for c in calls] == [True, False, False]  # an error envelope, by its shape
    assert calls[0].arguments == '{"order": "7"}'
    # the app's task spans are the attempts of the steps they name; the first failed
    assert b.steps == {"a1": "pick", "a2": "pick", "a3": "ship"}
    assert b.attempts["a2"] == 2 and b.failed == frozenset({"a1"})
    # LiteLLM's raw copy of a call is no work of its own (no component call, no attempt)
    assert not any(s.endswith("r") for s in [*b.calls, *b.actions, *b.promoted])


def test_a_conversation_says_its_calls_in_every_message_convention() -> None:
    def said(attributes: dict[str, str]) -> list[tuple[str, str, str, bool]]:
        events = observed.conversation_tool_events("m", "a", 10, 20, attributes)
        return [(c.tool, c.arguments, c.result, c.failed) for c in observed.event_calls(events)]

    result = '{"isError": true, "content": []}'
    want = [("lookup", '{"q": 1}', result, True)]
    call = {"type": "tool_call", "id": "c", "name": "lookup", "arguments": {"q": 1}}
    response = {"type": "tool_call_response", "id": "c", "response": result}
    genai_parts = [
        {"role": "assistant", "parts": [call]},
        {"role": "tool", "parts": [response]},
    ]
    assert said({"gen_ai.input.messages": json.dumps(genai_parts)}) == want
    oi = "llm.input_messages."
    openinference = {
        f"{oi}0.message.role": "assistant",
        f"{oi}0.message.tool_calls.0.tool_call.id": "c",
        f"{oi}0.message.tool_calls.0.tool_call.function.name": "lookup",
        f"{oi}0.message.tool_calls.0.tool_call.function.arguments": '{"q": 1}',
        f"{oi}1.message.role": "tool",
        f"{oi}1.message.tool_call_id": "c",
        f"{oi}1.message.content": result,
    }
    assert said(openinference) == want
    openllmetry = {
        "gen_ai.prompt.0.role": "assistant",
        "gen_ai.prompt.0.tool_calls.0.id": "c",
        "gen_ai.prompt.0.tool_calls.0.name": "lookup",
        "gen_ai.prompt.0.tool_calls.0.arguments": '{"q": 1}',
        "gen_ai.prompt.1.role": "tool",
        "gen_ai.prompt.1.tool_call_id": "c",
        "gen_ai.prompt.1.content": result,
    }
    assert said(openllmetry) == want
    # a call only the answer says (no later request): asked at the call's end, no outcome
    answered = {
        "gen_ai.completion.0.tool_calls.0.id": "c",
        "gen_ai.completion.0.tool_calls.0.name": "lookup",
    }
    assert said(answered) == [("lookup", "", "", False)]
    # a result that only mentions an error did not fail; a call with no id says nothing
    declined = [genai_parts[0], _answered("c", {"status": "declined", "message": "error"})]
    assert [c[3] for c in said({"gen_ai.input.messages": json.dumps(declined)})] == [False]
    assert said({"gen_ai.completion.0.function_call.name": "lookup"}) == []


def test_a_span_beside_the_model_calls_records_the_calls_the_conversation_says() -> None:
    spans, events = conversation_trace()
    # the app traces its tool functions under the attempts too: those spans are the calls
    traced = [
        node("f1", "a1", "other", 12, name="wms", failed=True),
        node("f2", "a2", "other", 22, name="wms"),
        node("f3", "a3", "other", 32, name="courier"),
    ]
    plan = [ObservedStep("pl", "pick", "wms", 0), ObservedStep("pl", "ship", "courier", 1)]
    b = bind([*spans, *traced], plan, events=events)
    assert b.event_calls == ()
    assert b.calls == {"f1": "wms", "f2": "wms", "f3": "courier"} and b.failed == {"a1"}


# --- a plan of sentences (LangGraph's Plan-and-Execute tutorial's shape: a planner answering
# ``{"steps": [str, ...]}``, a ReAct agent run per step told the whole plan and then its step, a
# re-planner answering the steps still to do with results written in)
REPAIR = (
    "Fetch the torn folio from the reading room.",
    "Press the folio found in the reading room flat.",
    "Bind the pressed folio into volume 12.",
)


def _told(plan: list[str]) -> str:
    """An executor's task: the whole plan, then its first step again."""
    listed = "\n".join(f"{i + 1}. {s}" for i, s in enumerate(plan))
    return f"Plan:\n{listed}\n\nNow carry out: {plan[0]}"


def _executor(i: int, start: int, plan: list[str], tool: str, failed: bool) -> list[SpanNode]:
    """One executor invocation: its graph, the model's turn, the tool node, the model's turn."""
    x, g = f"x{i}", f"g{i}"
    return [
        node(x, "graph", "step", start, step_name="agent", name="agent"),
        node(g, x, "other", start + 1, name="graph"),
        node(f"v{i}", g, "step", start + 2, step_name="agent", name="agent"),
        node(f"l{i}", f"v{i}", "llm", start + 3, request=_told(plan)),
        node(f"w{i}", g, "step", start + 4, step_name="tools", name="tools"),
        node(f"t{i}", f"w{i}", "tool", start + 5, tool=tool, failed=failed),
        node(f"u{i}", g, "step", start + 6, step_name="agent", name="agent"),
        node(f"m{i}", f"u{i}", "llm", start + 7, request=_told(plan)),
    ]


def _replanner(i: int, start: int, plan: list[str] | None) -> list[SpanNode]:
    """A re-planner's node visit and its model call (a plan span when it answered a plan)."""
    asked = "Plan so far:\n" + "\n".join(REPAIR) + f"\nDone: {REPAIR[0]} -> folio F-7"
    return [
        node(f"r{i}", "graph", "step", start, step_name="replan", name="replan"),
        node(f"rl{i}", f"r{i}", "llm", start + 1, request=asked),
    ]


def plan_and_execute() -> tuple[list[SpanNode], list[ObservedStep]]:
    """Plan; fetch (ok); re-plan (the folio's id written in); press (fails); re-plan (the same
    steps again); press (fails); the re-planner's final answer (no plan)."""
    again = [
        "Press folio F-7 flat.",
        "Bind the pressed folio into volume 12.",
    ]
    spans = [
        node("app", "", "other", 0, name="repair folio"),
        node("graph", "app", "other", 1, name="graph"),
        node("planner", "graph", "step", 2, step_name="planner", name="planner"),
        node("pl", "planner", "llm", 3, request="Repair the torn folio."),
        *_executor(1, 10, list(REPAIR), "fetch_folio", False),
        *_replanner(1, 20, again),
        *_executor(2, 30, again, "press_folio", True),
        *_replanner(2, 40, again),
        *_executor(3, 50, again, "press_folio", True),
        *_replanner(3, 60, None),
    ]
    steps = [
        *(ObservedStep("pl", s, "", i) for i, s in enumerate(REPAIR)),
        *(ObservedStep("rl1", s, "", i) for i, s in enumerate(again)),
        *(ObservedStep("rl2", s, "", i) for i, s in enumerate(again)),
    ]
    return spans, steps


def test_an_executor_told_the_whole_plan_then_its_step_is_an_attempt_of_that_step() -> None:
    spans, steps = plan_and_execute()
    b = bind(spans, steps)
    assert b.steps["v1"] == REPAIR[0]
    # the model's turns and the tool node of one invocation are one attempt
    assert {b.actions["t1"], b.actions["l1"], b.actions["m1"]} == {"v1"}
    # told a listing that names every step once and no step again: none of them
    told = [
        replace(n, request="Plan:\n" + "\n".join(REPAIR)) if n.kind == "llm" else n for n in spans
    ]
    assert "v1" not in bind(told, steps).steps


def test_a_replans_rewritten_step_is_the_step_as_first_written_and_its_attempts_one_loop() -> None:
    spans, steps = plan_and_execute()
    b = bind(spans, steps)
    assert b.lineage[("rl1", "Press folio F-7 flat.")] == REPAIR[1]
    assert b.lineage[("rl2", "Press folio F-7 flat.")] == REPAIR[1]
    assert ("rl1", REPAIR[2]) not in b.lineage  # the same text: its own id
    assert (b.steps["v2"], b.steps["v3"]) == (REPAIR[1], REPAIR[1])
    assert (b.attempts["v2"], b.attempts["v3"]) == (1, 2)
    assert {"v2", "v3"} <= b.failed
    assert b.actions["t3"] == "v3"


def test_a_replanners_final_answer_is_no_attempt_of_a_step_and_the_apps_root_is_the_run() -> None:
    b = bind(*plan_and_execute())
    assert "r3" not in b.steps  # asked the plan and its results, it answered no plan
    assert b.run_span_id == "app"  # the app's root over the framework's graph span


def test_step_lineage_ties_a_rewritten_sentence_to_its_step_and_keeps_new_steps_new() -> None:
    first = [ObservedStep("a", s, "", i) for i, s in enumerate(REPAIR)]
    later = [
        "Press the folio found in the reading room flat: the glue is dry now.",  # additions
        "Send the bound volume 12 back to the stacks.",  # new
        "Bind folio F-7 into volume 12.",  # a phrase replaced by a value
    ]
    out = observed.step_lineage([first, [ObservedStep("b", s, "", i) for i, s in enumerate(later)]])
    assert out == {("b", later[0]): REPAIR[1], ("b", later[2]): REPAIR[2]}
    # identifiers keep their ids; a plan of one version has no lineage
    ids = [ObservedStep("c", "press", "", 0)], [ObservedStep("d", "press_again", "", 0)]
    assert observed.step_lineage(ids) == {} == observed.step_lineage([first])


def bindery_workflow(*, replan: bool) -> list[SpanNode]:
    """A bindery's framework workflow under the app's root (a LlamaIndex-like ``Flow.run`` over
    ``@step`` spans, every span plain but the model and tool calls): the planner's structured
    output (a function call's arguments), one executor agent run per sub-task attempt, asked
    its sub-task and the results it depends on; with ``replan``, the sewing fails, a re-planner
    (another step) returns the one sub-task left, same name, and the sewing is tried again."""
    tasks = [
        {"name": "collate_folios", "input": "Collate the folios of volume 3.", "after": []},
        {
            "name": "sew_signatures",
            "input": "Sew volume 3 on 5 cords.",
            "after": ["collate_folios"],
        },
    ]
    spans = [
        node("app", "", "other", 0, name="rebind volume"),
        node("run", "app", "other", 1, name="Flow.run"),
        node("plan", "run", "other", 2, name="Flow.plan"),
        node("chat", "plan", "llm", 3, duration_ns=1, answer=json.dumps({"tasks": tasks})),
    ]

    def execute(i: int, task: dict[str, Any], failed: bool = False) -> list[SpanNode]:
        asked = f"Sub-task {task['name']}: {task['input']}"
        if task["after"]:
            asked += '\nResults of earlier sub-tasks:\n- collate_folios: {"quires": 12}'
        start = 10 * (i + 1)
        return [
            node(f"x{i}", "run", "other", start, name="Flow.execute"),
            node(f"a{i}", f"x{i}", "other", start + 1, name="Agent.run"),
            node(f"s{i}", f"a{i}", "other", start + 2, name="Agent.step"),
            node(f"l{i}", f"s{i}", "llm", start + 3, request=asked),
            node(f"c{i}", f"a{i}", "other", start + 4, name="Agent.call_tool"),
            node(f"t{i}", f"c{i}", "tool", start + 5, tool="bench", failed=failed),
            node(f"r{i}", "run", "other", start + 6, name="Flow.review"),
        ]

    spans += execute(0, tasks[0]) + execute(1, tasks[1], failed=replan)
    if replan:
        amended = [dict(tasks[1], input="Sew volume 3 on 4 cords.")]
        spans += [
            node("re", "run", "other", 30, name="Flow.replan"),
            node("rechat", "re", "llm", 31, duration_ns=1, answer=json.dumps({"tasks": amended})),
            *execute(3, amended[0]),
        ]
    return spans


def test_a_workflow_of_steps_under_one_framework_call_has_each_step_an_attempt() -> None:
    """A framework call that makes no model or tool call itself and runs two or more spans that
    do is a run of steps: each is an attempt, the structured plan's sub-tasks bind them, and
    the one told the results of a sub-task done is the other sub-task's."""
    b = bind(bindery_workflow(replan=False), [])
    (plan,) = b.read_plans
    assert [s.step_id for s in plan.steps] == ["collate_folios", "sew_signatures"]
    assert b.planners == {"plan"}
    assert b.steps == {"x0": "collate_folios", "x1": "sew_signatures"}
    assert b.run_span_id == "app"


def test_another_planners_list_that_keeps_the_step_names_is_a_re_plan() -> None:
    """A re-planner other than the planner returning the one sub-task left under its name is a
    re-plan of that step: its attempts after it are that step's, two in all."""
    b = bind(bindery_workflow(replan=True), [])
    assert [[s.step_id for s in p.steps] for p in b.read_plans] == [
        ["collate_folios", "sew_signatures"],
        ["sew_signatures"],
    ]
    assert b.planners == {"plan", "re"}
    assert b.steps == {"x0": "collate_folios", "x1": "sew_signatures", "x3": "sew_signatures"}
    assert (b.attempts["x1"], b.attempts["x3"], "x1" in b.failed) == (1, 2, True)


def test_a_task_runs_report_naming_its_task_is_no_re_plan() -> None:
    """A warehouse graph: a planner's list of three tasks, then a task-runner node per task
    (each running an inner agent node that is asked the task). The first runner's state update
    is a list of one report naming its task and giving it no tool, arguments or text: no
    re-plan (read as one, it left the later attempts a plan of that task alone)."""
    plan = [
        {"id": "pick", "tool": "wms", "with": {"order": 7}},
        {"id": "pack", "tool": "packer", "with": {"box": "M"}},
        {"id": "ship", "tool": "courier", "with": {}},
    ]
    report = {"reports": [{"task": "pick", "verdict": "DONE", "detail": "picked"}]}
    asks = {1: "Task pick: pick order 7", 2: "Task pack: box M (pick done)", 3: "Task ship"}
    spans = [
        SpanNode("p", "", "step", "planner", step_name="planner"),
        SpanNode("l", "p", "llm", "chat", answer=json.dumps({"items": plan})),
    ]
    for i, asked in asks.items():
        answer = json.dumps(report) if i == 1 else ""
        spans += [
            SpanNode(f"e{i}", "", "step", "run_task", step_name="run_task", start_ns=2 * i,
                     duration_ns=1, answer=answer),
            SpanNode(f"a{i}", f"e{i}", "step", "agent", step_name="agent", start_ns=2 * i),
            SpanNode(f"c{i}", f"a{i}", "llm", "chat", start_ns=2 * i, request=asked),
        ]  # fmt: skip
    enclosing = {"l": "p"} | {f"c{i}": f"a{i}" for i in asks} | {f"a{i}": f"e{i}" for i in asks}
    read = observed.structured_plans({n.span_id: n for n in spans}, enclosing.get)
    assert [[s.step_id for s in p.steps] for p in read] == [["pick", "pack", "ship"]]


def test_a_sub_task_whose_values_are_only_in_its_sentence_keeps_the_sentence() -> None:
    """A structured plan's sub-task that gives no arguments states its values only in its
    text (``input``): the plan read keeps that text as the step's description, so the values
    the planner wrote there (the cords, 5 then 4 after the re-plan) are in the plan."""
    b = bind(bindery_workflow(replan=True), [])
    first, again = (json.loads(p.json) for p in b.read_plans)
    assert [(s["id"], s.get("description")) for s in first] == [
        ("collate_folios", "Collate the folios of volume 3."),
        ("sew_signatures", "Sew volume 3 on 5 cords."),
    ]
    assert [s.get("description") for s in again] == ["Sew volume 3 on 4 cords."]


def test_an_openinference_model_call_answering_by_a_function_call_answers_its_arguments() -> None:
    """A structured-output call answered as a function call (no text) says the call's
    arguments, in call order, as GenAI output messages' tool calls are read."""
    key = "llm.output_messages.0.message.tool_calls.{}.tool_call.function.arguments"
    attributes = {
        "llm.output_messages.0.message.role": "assistant",
        key.format(1): '{"shelf": "B"}',
        key.format(0): '{"tasks": [{"name": "collate"}, {"name": "sew"}]}',
    }
    said = observed.answer(attributes, "llm", False)
    assert said.split("\n") == [
        '{"tasks": [{"name": "collate"}, {"name": "sew"}]}',
        '{"shelf": "B"}',
    ]
    assert (
        observed.answer({**attributes, "llm.output_messages.0.message.content": "ok"}, "llm", False)
        == "ok"
    )


def test_a_haystack_generators_replies_are_its_answer() -> None:
    """Haystack's own tracer records a chat generator's output (a pipeline component's, an Agent
    LLM step's) as ``{"replies": [ChatMessage...]}``: its answer is the replies' text parts, else
    the arguments of the tool calls it answered with; a component that is no LLM call says
    nothing."""
    reply = {"role": "assistant", "meta": {"model": "m"}, "name": None,
             "content": [{"text": "- shelve atlas\n- label maps"}]}  # fmt: skip
    output = json.dumps({"replies": [reply]})
    assert observed.answer({"haystack.component.output": output}, "llm", False) == (
        "- shelve atlas\n- label maps"
    )
    call = {"tool_call": {"tool_name": "shelve", "arguments": {"bay": 4}, "id": "c1"}}
    step = json.dumps({"replies": [{"role": "assistant", "content": [call]}]})
    assert observed.answer({"haystack.agent.step.llm.output": step}, "llm", False) == '{"bay": 4}'
    assert observed.answer({"haystack.component.output": output}, "other", False) == ""


def _handed(order: dict[str, Any]) -> str:
    """What a turn handed a work order was asked (``observed.user_request`` of its model call:
    the user's text, then the handoff's arguments the SDK's transfer message answered)."""
    messages = [
        {"role": "user", "content": "Send lot 9"},
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "h", "name": "to_team", "arguments": order}],
        },
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "h", "response": '{"assistant": "x"}'}],
        },
    ]
    return observed.user_request({"gen_ai.input.messages": json.dumps(messages)})


def test_an_agent_run_as_a_tool_beside_its_call_answers_the_plan_and_is_no_attempt() -> None:
    """The OpenAI Agents SDK's ``Agent.as_tool`` under OpenLLMetry: the planner agent's run is
    a sibling inside the tool call's time, its model calls answer nothing; the call's result is
    the plan, its caller the planner. Team turns handed a work order bind to the task it names
    (the tools they call name no step), and the planner's run for a re-plan, told the tasks
    done, is neither an attempt of them nor what makes their names shared."""
    plan = {"tasks": [{"task": "count", "team": "stock"}, {"task": "ship", "team": "courier"}]}

    def planner(i: int, start: int, tasks: list[dict[str, str]], told: str) -> list[SpanNode]:
        result = json.dumps({"tasks": tasks})
        return [
            node(f"d{i}", "wf", "step", start, step_name="front", duration_ns=30),
            node(f"c{i}", f"d{i}", "llm", start + 1, request="Send lot 9"),
            node(f"pt{i}", f"d{i}", "tool", start + 2, tool="plan_tool", duration_ns=20,
                 answer=json.dumps({"input": told}), io=("", result)),
            node(f"p{i}", "wf", "step", start + 3, step_name="planner", duration_ns=10),
            node(f"pc{i}", f"p{i}", "llm", start + 4, request=told),
        ]  # fmt: skip

    def team(i: int, start: int, name: str, task: str, tool: str, failed: bool) -> list[SpanNode]:
        return [
            node(f"e{i}", "wf", "step", start, step_name=name, duration_ns=5),
            node(f"ec{i}", f"e{i}", "llm", start + 1, request=_handed({"task": task})),
            node(f"et{i}", f"e{i}", "tool", start + 2, tool=tool, failed=failed),
        ]

    spans = [
        node("root", "", "other", 0),
        node("wf", "root", "step", 1, step_name="Agent Workflow", duration_ns=1000),
        *planner(1, 10, plan["tasks"], "Send lot 9"),
        *team(1, 100, "stock", "count", "count_doses", False),
        *team(2, 200, "courier", "ship", "book_courier", True),
        *planner(2, 300, plan["tasks"][1:], "Done: count\nProblem: ship"),
        *team(3, 400, "courier", "ship", "book_courier", True),
    ]
    b = bind(spans, [])
    assert [[s.step_id for s in r.steps] for r in b.read_plans] == [["count", "ship"], ["ship"]]
    assert {b.read_plans[0].span_id, b.read_plans[1].span_id} == {"pt1", "pt2"}
    assert (b.steps["e1"], b.steps["e2"], b.steps["e3"]) == ("count", "ship", "ship")
    assert {"p1", "p2", "d1", "d2"} <= b.planners and "p2" not in b.steps


THEATRE = [
    ("book_hall", "book the hall on a free evening from the council calendar", "reserve_room"),
    ("print_posters", "print the posters for the opening night", "send_print_job"),
    ("sell_tickets", "open the box office for the opening night", "open_sales"),
]


def _stage_plan(steps: list[tuple[str, str, str]], survey: str) -> str:
    """A planning answer as smolagents' planning prompts ask for one: a facts survey, then the
    plan section (numbered ``**slug**: goal`` lines) and ``<end_plan>``."""
    lines = [f"{n}. **{s}**: {goal} (`{tool}`)." for n, (s, goal, tool) in enumerate(steps, 1)]
    final = f"{len(steps) + 1}. Report to the director with `final_answer`."
    return f"{survey}\n\n## 2. Plan\n" + "\n".join([*lines, final]) + "\n<end_plan>"


def test_a_planning_step_is_read_from_its_plan_section_and_action_steps_are_no_re_plans() -> None:
    """A manager agent with its own planning steps (smolagents' ``planning_interval``, as
    OpenInference records it: the planning call under the agent run, each action step a
    ``Step n`` span whose code hands the step to a managed crew agent). The facts survey names
    words the crews are told (before: ``on`` read as the first step), but the plan is the plan
    section; an action
    step's code naming the step it hands over is no one-step re-plan; the update (after two
    steps, the step left) is the second plan."""
    survey = (
        "## 1. Facts survey\n### 1.1. Facts given in the task\n- the play opens on Friday\n"
        "### 1.2. Facts to look up\n- a free evening (the council calendar)\n"
        "### 1.3. Facts to derive\n- nothing"
    )
    update = (
        "## 1. Updated facts survey\n### 1.1. Facts given in the task\n- the play opens Friday\n"
        "### 1.2. Facts that we have learned\n- book_hall is done: HALL-22, Friday\n"
        "- print_posters is done: job PJ-9\n### 1.3. Facts still to look up\n- none\n"
        "### 1.4. Facts still to derive\n- none"
    )
    spans = [
        node("app", "", "other", 0),
        node("d", "app", "step", 1, step_name="director"),
        node("p1", "d", "llm", 2, request="Stage the play", answer=_stage_plan(THEATRE, survey)),
    ]
    for i, (slug, goal, tool) in enumerate(THEATRE, 1):
        brief = f"Step {i} of 3 — {slug}: {goal}.\nCall: {tool}(night='Friday')"
        code = f"Thought: Next is step {i}, {slug}.\nCode:\nreport = stagehand(task={brief!r})"
        at = 10 * i
        if i == 3:
            spans.append(node("p2", "d", "llm", at, answer=_stage_plan(THEATRE[2:], update)))
        spans += [
            node(f"s{i}", "d", "other", at + 1, name=f"Step {i}"),
            node(f"s{i}l", f"s{i}", "llm", at + 2, request="Stage the play", answer=code),
            node(f"c{i}", f"s{i}", "step", at + 3, step_name="stagehand"),
            node(f"c{i}l", f"c{i}", "llm", at + 4, request=brief),
            node(f"c{i}t", f"c{i}", "tool", at + 5, tool=tool),
        ]
    b = bind(spans, [])
    assert [[s.step_id for s in p.steps] for p in b.read_plans] == [
        [s for s, _, _ in THEATRE],
        ["sell_tickets"],
    ]
    assert [b.steps[f"c{i}"] for i in (1, 2, 3)] == [s for s, _, _ in THEATRE]


def test_work_orders_that_share_no_key_read_no_plan() -> None:
    """Executor runs each handed a JSON order naming a called tool, but under keys no two
    orders share (one says ``tool``, the other ``action``): no step id can be told, so no plan
    is read from the work orders, and binding does not fail."""
    orders = ['Do this:\n{"tool": "wms"}', 'Do this:\n{"action": "courier"}']
    spans = [node("p", "", "step", 0, step_name="planner", duration_ns=1)]
    for i, (order, tool) in enumerate(zip(orders, ["wms", "courier"], strict=True), 1):
        spans += [
            node(f"e{i}", "", "step", 1 + i, step_name="crew"),
            node(f"c{i}", f"e{i}", "llm", 1 + i, request=order),
            node(f"t{i}", f"e{i}", "tool", 1 + i, tool=tool),
        ]
    assert bind(spans, []).read_plans == ()


def test_a_tool_parameter_schema_in_an_executor_answer_is_no_replan() -> None:
    # a framework that names every agent run alike (the planner's too), each run answering its
    # state with its agent's tools' JSON Schemas (Pydantic AI under MLflow's autologging:
    # ``Agent.run_sync`` over ``Agent.run``), the app's span per attempt naming its step: the
    # truing tool's parameters, named like the steps before it, were read as a re-plan
    schema = {
        "type": "object",
        "properties": {"hub": {"type": "string"}, "lace": {"type": "string"}},
        "required": ["hub", "lace"],
    }
    plan = json.dumps({"steps": [{"id": s, "note": f"do the {s}"} for s in STEPS]})
    spans = [SpanNode("r", "", "other", "wheel build WB-88", start_ns=0)]

    def run(app: str, at: int, answer: str, tool: str = "", failed: bool = False) -> None:
        spans.extend(
            [
                SpanNode(app, "r", "other", app.replace("_", " "), start_ns=at),
                SpanNode(
                    f"{app}/s",
                    app,
                    "step",
                    "Agent.run_sync",
                    step_name="Agent.run_sync",
                    start_ns=at,
                    answer=answer,
                    inferred=True,
                    failed=failed,
                ),
                SpanNode(
                    f"{app}/a",
                    f"{app}/s",
                    "step",
                    "Agent.run",
                    step_name="Agent.run",
                    start_ns=at,
                    answer=answer,
                    inferred=True,
                    failed=failed,
                ),
                SpanNode(f"{app}/c", f"{app}/a", "llm", "chat", start_ns=at, answer="ok"),
            ]
        )
        if tool:
            spans.append(
                SpanNode(
                    f"{app}/t", f"{app}/a", "tool", tool, tool=tool, start_ns=at, failed=failed
                )
            )

    run("plan_revision_1", 1, plan)
    state = json.dumps({"output": "done", "_state": {"tools": [schema]}})
    for at, step in enumerate(STEPS[:3], 2):
        run(f"task_{step}_attempt_1", at, state, f"do_{step}")
    for n in range(1, 6):
        run(f"task_truing_attempt_{n}", 4 + n, state, "true_wheel", failed=True)
    binding = bind(spans, [])
    assert [[s.step_id for s in p.steps] for p in binding.read_plans] == [list(STEPS)]
    truing = [a for a, step in binding.steps.items() if step == "truing"]
    assert len(truing) == 5


STEPS = ("rim", "hub", "lace", "truing")

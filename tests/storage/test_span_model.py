"""The span model (migration 0011): spans of every convention in, typed rows out, on real chDB.

Shapes follow the conventions' specifications (GenAI semconv, OpenInference, OpenLLMetry) and
the spans real instrumentations emit (tests/conformance runs the packages themselves).
"""

from __future__ import annotations

import json
from typing import Any

import planscope.semconv as A
import pytest
from planscope_collector.prices import price_new_models
from planscope_collector.runmodel import run_metrics_sql
from planscope_collector.storage import Store

from ._spans import BASE_NS, make_span, new_span_id, new_trace_id, spans_ipc

MS = 1_000_000


def _rows(store: Store, table: str, trace_id: str, order: str = "Start") -> list[dict[str, Any]]:
    return store.query(
        f"SELECT * FROM {table} WHERE TraceId = {{t:String}} ORDER BY {order}", {"t": trace_id}
    )


def _metrics(store: Store, trace_id: str) -> dict[str, Any]:
    rows = store.query(
        run_metrics_sql("Project = 'default' AND TraceId = {t:String}"), {"t": trace_id}
    )
    assert len(rows) == 1
    return rows[0]


def test_pydantic_ai_shape_is_a_run_with_llm_and_tool_calls(store: Store) -> None:
    """A root ``invoke_agent planner`` with no planscope kind is a run (the issue's example)."""
    t, root, tools = new_trace_id(), new_span_id(), new_span_id()
    store.insert_spans(
        spans_ipc(
            [
                make_span(
                    trace_id=t,
                    span_id=root,
                    name="invoke_agent planner",
                    attrs={
                        A.GEN_AI_OPERATION_NAME: "invoke_agent",
                        A.GEN_AI_AGENT_NAME: "planner",
                        "gen_ai.usage.input_tokens": 30,
                    },
                    duration_ns=50 * MS,
                ),
                make_span(
                    trace_id=t,
                    parent=root,
                    name="chat gpt-4o-mini",
                    start_ns=BASE_NS + MS,
                    attrs={
                        A.GEN_AI_OPERATION_NAME: "chat",
                        A.GEN_AI_PROVIDER_NAME: "openai",
                        A.GEN_AI_REQUEST_MODEL: "gpt-4o-mini",
                        A.GEN_AI_USAGE_INPUT_TOKENS: 1000,
                        A.GEN_AI_USAGE_OUTPUT_TOKENS: 200,
                        A.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: 400,
                    },
                ),
                make_span(trace_id=t, span_id=tools, parent=root, name="running tools"),
                make_span(
                    trace_id=t,
                    parent=tools,
                    name="execute_tool get_weather",
                    start_ns=BASE_NS + 2 * MS,
                    status="Error",
                    attrs={
                        A.GEN_AI_OPERATION_NAME: "execute_tool",
                        A.GEN_AI_TOOL_NAME: "get_weather",
                        "tool_arguments": '{"city": "Paris"}',
                    },
                ),
            ]
        )
    )
    (run,) = _rows(store, "planscope_runs", t)
    assert (run["SpanId"], run["AgentName"], run["Inferred"], run["Source"]) == (
        root,
        "planner",
        1,
        "genai",
    )
    assert run["RunId"] == t and run["Outcome"] == A.OUTCOME_UNKNOWN
    (llm,) = _rows(store, "planscope_llm_calls", t)
    assert (llm["Provider"], llm["Model"], llm["InputTokens"], llm["OutputTokens"]) == (
        "openai",
        "gpt-4o-mini",
        1000,
        200,
    )
    assert (llm["CacheReadTokens"], llm["CostSource"]) == (400, "")
    (tool,) = _rows(store, "planscope_tool_calls", t)
    assert (tool["ToolName"], tool["Arguments"], tool["StatusCode"]) == (
        "get_weather",
        '{"city": "Paris"}',
        "Error",
    )
    assert _rows(store, "planscope_step_attempts", t) == []
    assert _rows(store, "planscope_plans", t) == []  # no plan is guessed

    # cost: unknown until priced, then tokens x the library's rates (cached input cheaper)
    assert _metrics(store, t)["CostUsd"] == 0
    assert price_new_models(store) == 1
    assert price_new_models(store) == 0  # once per model
    m = _metrics(store, t)
    assert (m["HasRun"], m["LlmCalls"], m["Tokens"], m["ToolCalls"], m["FailedToolCalls"]) == (
        1,
        1,
        1200,
        1,
        1,
    )
    # gpt-4o-mini: $0.15 / $0.60 per M, cache read $0.075 per M
    assert m["CostUsd"] == pytest.approx((600 * 0.15 + 400 * 0.075 + 200 * 0.6) / 1e6)


def test_openinference_agent_with_tool_retries_and_carried_cost(store: Store) -> None:
    t, root, agent = new_trace_id(), new_span_id(), new_span_id()
    spans = [
        make_span(
            trace_id=t,
            span_id=root,
            name="Agent workflow",
            attrs={A.OI_SPAN_KIND: "CHAIN", A.OI_INPUT_VALUE: "find the invoice"},
            status="Error",
        ),
        make_span(
            trace_id=t,
            span_id=agent,
            parent=root,
            name="billing",
            attrs={A.OI_SPAN_KIND: "AGENT", A.OI_AGENT_NAME: "billing"},
        ),
        make_span(
            trace_id=t,
            parent=agent,
            name="ChatCompletion",
            attrs={
                A.OI_SPAN_KIND: "LLM",
                A.OI_MODEL_NAME: "gpt-4o",
                A.OI_PROVIDER: "openai",
                A.OI_PROMPT_TOKENS: 50,
                A.OI_COMPLETION_TOKENS: 5,
                A.OI_COST_TOTAL: "0.5",
            },
        ),
    ]
    for i in range(5):
        spans.append(
            make_span(
                trace_id=t,
                parent=agent,
                name="lookup",
                start_ns=BASE_NS + (i + 1) * MS,
                status="Error",
                attrs={
                    A.OI_SPAN_KIND: "TOOL",
                    A.OI_TOOL_NAME: "lookup",
                    A.OI_INPUT_VALUE: '{"id": 7}',
                },
            )
        )
    store.insert_spans(spans_ipc(spans))
    (run,) = _rows(store, "planscope_runs", t)
    assert (run["Source"], run["Outcome"], run["Objective"]) == (
        "openinference",
        A.OUTCOME_FAILURE,
        "find the invoice",
    )
    (step,) = _rows(store, "planscope_step_attempts", t)
    assert (step["StepId"], step["Executor"], step["Status"], step["Inferred"]) == (
        "billing",
        "billing",
        A.STATUS_OK,
        1,
    )
    tools = _rows(store, "planscope_tool_calls", t)
    assert [x["ToolName"] for x in tools] == ["lookup"] * 5
    assert {x["ParentSpanId"] for x in tools} == {agent}
    m = _metrics(store, t)
    assert (m["StepAttempts"], m["Retries"], m["FailedToolCalls"], m["Tokens"]) == (1, 0, 5, 55)
    assert m["CostUsd"] == pytest.approx(0.5)  # the span's own cost wins


def test_langgraph_nodes_are_steps_and_a_planner_output_is_an_observed_plan(store: Store) -> None:
    t, root = new_trace_id(), new_span_id()
    plan_out = {"plan": ["look up the order", "refund it"]}

    def node(name: str, start: int, status: str = "Unset", output: Any = None) -> list[Any]:
        attrs: dict[str, Any] = {
            A.OI_SPAN_KIND: "CHAIN",
            A.OI_METADATA: json.dumps({"langgraph_node": name, "langgraph_step": start}),
        }
        if output is not None:
            attrs[A.OI_OUTPUT_VALUE] = json.dumps(output)
        return make_span(
            trace_id=t,
            parent=root,
            name=name,
            start_ns=BASE_NS + start * MS,
            status=status,
            attrs=attrs,
        )

    inner = make_span(
        trace_id=t,
        parent=root,
        name="RunnableSequence",
        attrs={A.OI_SPAN_KIND: "CHAIN", A.OI_METADATA: json.dumps({"langgraph_node": "planner"})},
    )
    store.insert_spans(
        spans_ipc(
            [
                make_span(
                    trace_id=t, span_id=root, name="LangGraph", attrs={A.OI_SPAN_KIND: "CHAIN"}
                ),
                node("planner", 1, output=plan_out),
                node("executor", 2, status="Error"),
                node("executor", 3, status="Error"),
                node("executor", 4),
                inner,
            ]
        )
    )
    steps = _rows(store, "planscope_step_attempts", t)
    assert [(s["StepId"], s["Status"]) for s in steps] == [
        ("planner", "ok"),
        ("executor", "error"),
        ("executor", "error"),
        ("executor", "ok"),
    ]
    (plan,) = _rows(store, "planscope_plans", t)
    assert (plan["StepCount"], plan["Inferred"], plan["PlanId"]) == (2, 1, "")
    plan_steps = _rows(store, "planscope_plan_steps", t, order="Position")
    assert [(s["StepId"], s["Description"], s["Inferred"]) for s in plan_steps] == [
        ("look up the order", "look up the order", 1),
        ("refund it", "refund it", 1),
    ]
    m = _metrics(store, t)
    assert (m["StepAttempts"], m["Retries"], m["FailedSteps"], m["PlanVersions"]) == (4, 2, 0, 1)
    assert (m["WorstStep"], m["WorstStepAttempts"], m["Replans"]) == ("executor", 3, 0)


def test_openllmetry_workflow_task_tool_and_llm(store: Store) -> None:
    t, root, task = new_trace_id(), new_span_id(), new_span_id()
    store.insert_spans(
        spans_ipc(
            [
                make_span(
                    trace_id=t,
                    span_id=root,
                    name="support.workflow",
                    attrs={A.TL_SPAN_KIND: "workflow", A.TL_ENTITY_NAME: "support"},
                ),
                make_span(
                    trace_id=t,
                    span_id=task,
                    parent=root,
                    name="triage.task",
                    attrs={A.TL_SPAN_KIND: "task", A.TL_ENTITY_NAME: "triage"},
                ),
                make_span(
                    trace_id=t,
                    parent=task,
                    name="openai.chat",
                    attrs={
                        A.TL_REQUEST_TYPE: "chat",
                        A.GEN_AI_SYSTEM: "OpenAI",
                        A.GEN_AI_REQUEST_MODEL: "gpt-4o-mini",
                        A.GEN_AI_USAGE_PROMPT_TOKENS: 10,
                        A.GEN_AI_USAGE_COMPLETION_TOKENS: 4,
                    },
                ),
                make_span(
                    trace_id=t,
                    parent=task,
                    name="search.tool",
                    attrs={A.TL_SPAN_KIND: "tool", A.TL_ENTITY_NAME: "search"},
                ),
            ]
        )
    )
    (run,) = _rows(store, "planscope_runs", t)
    assert (run["AgentName"], run["Source"]) == ("support", "traceloop")
    (step,) = _rows(store, "planscope_step_attempts", t)
    assert step["StepId"] == "triage"
    (llm,) = _rows(store, "planscope_llm_calls", t)
    assert (llm["Provider"], llm["InputTokens"], llm["OutputTokens"]) == ("openai", 10, 4)
    (tool,) = _rows(store, "planscope_tool_calls", t)
    assert tool["ToolName"] == "search"


def test_openllmetry_langgraph_node_visits_are_steps_and_inner_tasks_are_not(
    store: Store,
) -> None:
    """OpenLLMetry 0.5x writes a GenAI operation on its Traceloop spans (a task is
    ``execute_task``, not a GenAI operation): the Traceloop kind decides. A task inside a
    LangGraph node's visit that is not the node (an edge's routing function) is other; a span
    with an unknown operation and no other kind stays other, whatever else it carries."""
    t, root = new_trace_id(), new_span_id()
    node = "traceloop.association.properties.langgraph_node"

    def task(name: str, in_node: str, start: int) -> Any:
        return make_span(
            trace_id=t,
            parent=root,
            name=f"execute_task {name}",
            start_ns=BASE_NS + start * MS,
            attrs={
                A.GEN_AI_OPERATION_NAME: "execute_task",
                A.TL_SPAN_KIND: "task",
                A.TL_ENTITY_NAME: name,
                node: in_node,
            },
        )

    store.insert_spans(
        spans_ipc(
            [
                make_span(
                    trace_id=t,
                    span_id=root,
                    name="invoke_agent LangGraph",
                    attrs={A.GEN_AI_OPERATION_NAME: "invoke_agent", A.GEN_AI_AGENT_NAME: "g"},
                ),
                task("planner", "planner", 1),
                task("executor", "executor", 2),
                task("route", "executor", 3),
                make_span(
                    trace_id=t,
                    parent=root,
                    name="create_agent helper",
                    attrs={A.GEN_AI_OPERATION_NAME: "create_agent", A.GEN_AI_SYSTEM: "openai"},
                ),
            ]
        )
    )
    kinds = store.query(
        "SELECT SpanName, SpanModelKind FROM otel_traces WHERE TraceId = {t:String} "
        "ORDER BY Timestamp, SpanName",
        {"t": t},
    )
    assert {(k["SpanName"], k["SpanModelKind"]) for k in kinds} == {
        ("invoke_agent LangGraph", "run"),
        ("execute_task planner", "step"),
        ("execute_task executor", "step"),
        ("execute_task route", "other"),
        ("create_agent helper", "other"),
    }
    steps = _rows(store, "planscope_step_attempts", t)
    assert [s["StepId"] for s in steps] == ["planner", "executor"]


def test_planscope_kind_wins_and_garbage_never_fails_the_insert(store: Store) -> None:
    t = new_trace_id()
    store.insert_spans(
        spans_ipc(
            [
                make_span(
                    trace_id=t,
                    name="invoke_agent x",
                    attrs={
                        A.SPAN_KIND: A.KIND_RUN,
                        A.RUN_ID: "r1",
                        A.GEN_AI_OPERATION_NAME: "invoke_agent",
                        A.OI_SPAN_KIND: "LLM",
                    },
                ),
                make_span(
                    trace_id=t,
                    parent="ab",
                    name="x",
                    attrs={
                        A.GEN_AI_OPERATION_NAME: "plan",
                        A.OI_OUTPUT_VALUE: "[{oops",
                        A.GEN_AI_USAGE_INPUT_TOKENS: "NaN",
                        A.OI_METADATA: "{not json",
                    },
                ),
            ]
        )
    )
    (run,) = _rows(store, "planscope_runs", t)
    assert (run["RunId"], run["Inferred"], run["Source"]) == ("r1", 0, "planscope")
    (plan,) = _rows(store, "planscope_plans", t)  # an explicit plan operation, unreadable
    assert (plan["PlanJsonValid"], plan["StepCount"], plan["Inferred"]) == (0, 0, 1)

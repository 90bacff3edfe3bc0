"""The run model's fields for runs the mapping inferred, through the analyzer's loader and the
run metrics the query API serves, on the real chDB store."""

from __future__ import annotations

from typing import Any

from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_collector.runmodel import bind_traces, binding_parameters, run_metrics_sql
from planscope_collector.storage import Store

from tests.storage._spans import BASE_NS, make_span, new_span_id, new_trace_id, spans_ipc


def test_an_inferred_run_gives_its_status_message_as_outcome_reason(store: Store) -> None:
    """A framework's failed agent root says why in its status message; the run model (loader
    and run metrics alike) reads that as the outcome reason, planscope's own runs keep theirs."""
    foreign, own = new_trace_id(), new_trace_id()
    root, own_root = new_span_id(), new_span_id()
    rows = [
        make_span(
            trace_id=foreign,
            span_id=root,
            name="agent",
            attrs={A.OI_SPAN_KIND: "AGENT"},
            status="Error",
            status_message="restock check failed: 3 units short",
        ),
        make_span(
            trace_id=foreign,
            parent=root,
            name="lookup",
            attrs={A.OI_SPAN_KIND: "TOOL", "tool.name": "lookup"},
            start_ns=BASE_NS + 1_000,
        ),
        make_span(
            trace_id=own,
            span_id=own_root,
            name="invoke_agent planner",
            attrs={
                A.SPAN_KIND: "run",
                A.GEN_AI_OPERATION_NAME: "invoke_agent",
                A.RUN_OUTCOME: "failure",
                A.RUN_OUTCOME_REASON: "budget exhausted",
            },
            status="Error",
            status_message="RuntimeError: boom",
        ),
    ]
    store.insert_spans(spans_ipc(rows))
    traces = load_traces(store, "default", [foreign, own])
    assert [r.outcome_reason for r in traces[foreign].runs] == [
        "restock check failed: 3 units short"
    ]
    assert [r.outcome_reason for r in traces[own].runs] == ["budget exhausted"]
    metrics = store.query(
        run_metrics_sql("Project = 'default' AND TraceId IN {ids:Array(String)}"),
        {"ids": [foreign, own]},
    )
    assert {m["TraceId"]: m["OutcomeReason"] for m in metrics} == {
        foreign: "restock check failed: 3 units short",
        own: "budget exhausted",
    }


def test_a_step_span_that_only_wraps_attempts_is_no_attempt(store: Store) -> None:
    """GenAI agent spans under a framework's root: a sub-agent span whose work is all in the
    agent spans under it (no LLM or tool call of its own: OpenLLMetry's LangGraph ``workflow``
    span) is no attempt, in the loader and in the run metrics alike; an orchestrator that calls
    the model itself and a sub-agent is one, as is that sub-agent."""
    trace = new_trace_id()
    root, wrapper, lookup, orchestrator, refund = (new_span_id() for _ in range(5))

    def agent(span_id: str, parent: str, name: str, at: int) -> list[Any]:
        attrs = {A.GEN_AI_OPERATION_NAME: "invoke_agent", A.GEN_AI_AGENT_NAME: name}
        return make_span(trace_id=trace, span_id=span_id, parent=parent, name=name,
                         attrs=attrs, start_ns=BASE_NS + at)  # fmt: skip

    def call(parent: str, operation: str, at: int) -> list[Any]:
        attrs = {A.GEN_AI_OPERATION_NAME: operation, A.GEN_AI_TOOL_NAME: "lookup_order"}
        return make_span(trace_id=trace, parent=parent, name=operation, attrs=attrs,
                         start_ns=BASE_NS + at)  # fmt: skip

    rows = [
        agent(root, "", "graph", 0),
        agent(wrapper, root, "workflow", 1),
        agent(lookup, wrapper, "lookup", 2),
        call(lookup, "execute_tool", 3),
        agent(orchestrator, wrapper, "orchestrator", 4),
        call(orchestrator, "chat", 5),
        agent(refund, orchestrator, "refund", 6),
        call(refund, "execute_tool", 7),
    ]
    store.insert_spans(spans_ipc(rows))
    loaded = load_traces(store, "default", [trace])[trace]
    assert sorted(a.span_id for a in loaded.attempts) == sorted([lookup, orchestrator, refund])
    where = "Project = {project:String} AND TraceId IN {ids:Array(String)}"
    params = {"project": "default", "ids": [trace]}
    binding = binding_parameters(bind_traces(store.query, where, params))
    assert binding["wrappers"] == [wrapper]
    metrics = store.query(run_metrics_sql(where, binding=binding), params | binding)
    assert [m["StepAttempts"] for m in metrics] == [3]

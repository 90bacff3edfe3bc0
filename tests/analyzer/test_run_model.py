"""The run model's fields for runs the mapping inferred, through the analyzer's loader and the
run metrics the query API serves, on the real chDB store."""

from __future__ import annotations

from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_collector.runmodel import run_metrics_sql
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

"""A loop across re-plans whose plans carry no version, from real OTel SDK spans stored and
analysed for real: a LangGraph plan-and-execute graph as OpenInference's LangChain instrumentor
records it (no ``planscope.*`` attribute), whose plans the span model reads from the trace's
structure (each of them version 0). The re-planner answers between the failed attempts: the
finding counts the plans in start order as the versions it ran across, and does not say the
loop was never escalated to a re-plan."""

from __future__ import annotations

import json

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode
from planscope import semconv as A
from planscope_analyzer import Analyzer
from planscope_collector.storage import Store

from tests._langgraph_spans import Executor, execute, kind, llm, node
from tests.storage._spans import otlp_to_rows, spans_ipc

pytestmark = pytest.mark.integration

STEPS = [
    "Read the soil sensors of greenhouse bed 3.",
    "Open the drip valve of the bed read above.",
]
REWRITTEN = ["Open drip valve V-12 of bed 3."]


EXECUTOR = Executor(
    '{"valve": "V-12"}', "valve controller offline", "Valve still shut", "Bed 3 reads 12% moisture"
)


def _water_bed(store: Store) -> str:
    """Plan; read the sensors; then twice: re-plan (the valve's id written in), open the valve
    (fails), open it again (fails); the run fails."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("greenhouse-app")
    with (
        tracer.start_as_current_span("water bed 3") as root,
        tracer.start_as_current_span("LangGraph", attributes=kind("CHAIN")),
    ):
        with node(tracer, "planner"):
            llm(tracer, "Water greenhouse bed 3.", json.dumps({"steps": STEPS}))
        execute(tracer, EXECUTOR, STEPS, "read_sensors", failed=False)
        for _ in range(2):
            with node(tracer, "replan"):
                llm(tracer, "Plan so far: ...", json.dumps({"steps": REWRITTEN}))
            for _ in range(2):
                execute(tracer, EXECUTOR, REWRITTEN, "open_valve", failed=True)
        root.set_status(Status(StatusCode.ERROR, "bed 3 not watered"))
        trace_id = format(root.get_span_context().trace_id, "032x")
    spans = exporter.get_finished_spans()
    store.insert_spans(spans_ipc(otlp_to_rows(encode_spans(spans), "default")))
    return trace_id


def test_a_loop_across_unversioned_replans_counts_them_as_plan_versions(store: Store) -> None:
    trace_id = _water_bed(store)
    found = Analyzer(store).analyze("default", [trace_id], write=False).findings
    (loop,) = [f for f in found if f.kind == A.FINDING_RUNAWAY_LOOP]
    assert (loop.step_id, loop.detail["attempts"]) == (STEPS[1], 4)
    # the first plan, then two re-plans: the failures ran under the second and the third
    assert loop.detail["plan_versions"] == [2, 3]
    assert loop.detail["escalated_to_replan"] is False  # nothing re-planned after the last
    assert "across 2 plan versions" in loop.explanation
    assert "its last failure was not escalated to a replan" in loop.explanation

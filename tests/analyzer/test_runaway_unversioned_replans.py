"""A loop across re-plans whose plans carry no version, from real OTel SDK spans stored and
analysed for real: a LangGraph plan-and-execute graph as OpenInference's LangChain instrumentor
records it (no ``planscope.*`` attribute), whose plans the span model reads from the trace's
structure (each of them version 0). The re-planner answers between the failed attempts: the
finding counts the plans in start order as the versions it ran across, and does not say the
loop was never escalated to a re-plan."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode, Tracer
from planscope import semconv as A
from planscope_analyzer import Analyzer
from planscope_collector.storage import Store

from tests.storage._spans import otlp_to_rows, spans_ipc

pytestmark = pytest.mark.integration

STEPS = [
    "Read the soil sensors of greenhouse bed 3.",
    "Open the drip valve of the bed read above.",
]
REWRITTEN = ["Open drip valve V-12 of bed 3."]


def _kind(kind: str, **attrs: str) -> dict[str, str]:
    return {"openinference.span.kind": kind, **attrs}


@contextmanager
def _node(tracer: Tracer, name: str) -> Iterator[None]:
    """A LangGraph node visit as OpenInference records it."""
    metadata = json.dumps({"langgraph_node": name})
    with tracer.start_as_current_span(name, attributes=_kind("CHAIN", metadata=metadata)):
        yield


def _llm(tracer: Tracer, asked: str, answered: str) -> None:
    attrs = _kind(
        "LLM",
        **{
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": asked,
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": answered,
            "output.value": answered,
        },
    )
    with tracer.start_as_current_span("ChatOpenAI", attributes=attrs):
        pass


def _execute(tracer: Tracer, plan: list[str], tool: str, failed: bool) -> None:
    """The executor node: a ReAct graph told the whole plan, then its first step again."""
    listed = "\n".join(f"{i + 1}. {s}" for i, s in enumerate(plan))
    told = f"Plan:\n{listed}\n\nNow carry out: {plan[0]}"
    with (
        _node(tracer, "agent"),
        tracer.start_as_current_span("LangGraph", attributes=_kind("CHAIN")),
    ):
        with _node(tracer, "agent"):
            _llm(tracer, told, "")
        with _node(tracer, "tools"):
            attrs = _kind("TOOL", **{"tool.name": tool, "input.value": '{"valve": "V-12"}'})
            with tracer.start_as_current_span(tool, attributes=attrs) as call:
                if failed:
                    call.set_status(Status(StatusCode.ERROR, "valve controller offline"))
        with _node(tracer, "agent"):
            _llm(tracer, told, "Valve still shut" if failed else "Bed 3 reads 12% moisture")


def _water_bed(store: Store) -> str:
    """Plan; read the sensors; then twice: re-plan (the valve's id written in), open the valve
    (fails), open it again (fails); the run fails."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("greenhouse-app")
    with (
        tracer.start_as_current_span("water bed 3") as root,
        tracer.start_as_current_span("LangGraph", attributes=_kind("CHAIN")),
    ):
        with _node(tracer, "planner"):
            _llm(tracer, "Water greenhouse bed 3.", json.dumps({"steps": STEPS}))
        _execute(tracer, STEPS, "read_sensors", failed=False)
        for _ in range(2):
            with _node(tracer, "replan"):
                _llm(tracer, "Plan so far: ...", json.dumps({"steps": REWRITTEN}))
            for _ in range(2):
                _execute(tracer, REWRITTEN, "open_valve", failed=True)
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
    assert loop.detail["plan_versions"] == [1, 2]
    assert loop.detail["escalated_to_replan"] is False  # nothing re-planned after the last
    assert "across 2 plan versions" in loop.explanation
    assert "its last failure was not escalated to a replan" in loop.explanation

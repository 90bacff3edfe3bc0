"""Plans read from a trace's structure are numbered by the loader, from real OTel SDK spans
stored and loaded for real: a LangGraph plan-and-execute graph as OpenInference's LangChain
instrumentor records it (no ``planscope.*`` attribute), a bakery's oven agent that plans, then
re-plans twice. The span model gives every plan it reads version 0; the loader numbers them in
start order from 1, as the SDK and the API do (v1, v2, v3), and each attempt carries the version
of the plan it ran under, so every detector reads the same versions a user reads."""

from __future__ import annotations

import json

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode
from planscope import semconv as A
from planscope_analyzer import Analyzer, load_traces
from planscope_collector.storage import Store

from tests._langgraph_spans import Executor, execute, kind, llm, node
from tests.storage._spans import otlp_to_rows, spans_ipc

pytestmark = pytest.mark.integration

STEPS = ["Weigh the flour for batch 7.", "Bake batch 7 in oven 2."]
REPLANS = [["Bake batch 7 in oven 3."], ["Bake batch 7 in oven 4."]]
EXECUTOR = Executor('{"oven": 2}', "oven door jammed", "Oven did not start", "Flour weighed")


def _bake(store: Store) -> str:
    """Plan; weigh the flour; bake (fails); then twice: re-plan to another oven, bake (fails
    twice); the run fails."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bakery-app")
    with (
        tracer.start_as_current_span("bake batch 7") as root,
        tracer.start_as_current_span("LangGraph", attributes=kind("CHAIN")),
    ):
        with node(tracer, "planner"):
            llm(tracer, "Bake batch 7.", json.dumps({"steps": STEPS}))
        execute(tracer, EXECUTOR, STEPS, "weigh_flour", failed=False)
        execute(tracer, EXECUTOR, STEPS[1:], "start_oven", failed=True)
        for steps in REPLANS:
            with node(tracer, "replan"):
                llm(tracer, "Plan so far: ...", json.dumps({"steps": steps}))
            for _ in range(2):
                execute(tracer, EXECUTOR, steps, "start_oven", failed=True)
        root.set_status(Status(StatusCode.ERROR, "batch 7 not baked"))
        trace_id = format(root.get_span_context().trace_id, "032x")
    store.insert_spans(
        spans_ipc(otlp_to_rows(encode_spans(exporter.get_finished_spans()), "default"))
    )
    return trace_id


def test_plans_read_from_structure_are_numbered_by_start(store: Store) -> None:
    trace_id = _bake(store)
    t = load_traces(store, "default", [trace_id])[trace_id]
    plans = sorted(t.plans, key=lambda p: p.start_ns)
    assert [p.version for p in plans] == [1, 2, 3]
    of_plan = {p.span_id: p.version for p in plans}
    assert all(s.plan_version == of_plan[s.plan_span_id] for s in t.plan_steps)
    assert t.plan_versions() == [("", 1), ("", 2), ("", 3)]
    # each attempt ran under the last plan started before it
    failed = sorted((a for a in t.attempts if a.failed), key=lambda a: a.start_ns)
    assert [a.plan_version for a in failed] == [1, 2, 2, 3, 3]
    # the newest definition of a re-planned step is the last plan's
    assert t.latest_steps()[STEPS[1]].plan_version == 3


def test_detectors_read_the_loaders_versions(store: Store) -> None:
    trace_id = _bake(store)
    found = Analyzer(store).analyze("default", [trace_id], write=False).findings
    (loop,) = [f for f in found if f.kind == A.FINDING_RUNAWAY_LOOP]
    assert loop.step_id == STEPS[1]
    assert loop.detail["plan_versions"] == [1, 2, 3]
    assert loop.detail["plan_version"] == 3
    assert loop.detail["escalated_to_replan"] is False
    # each re-plan changed the oven: no unchanged re-plan for the planner's loop
    assert not [f for f in found if f.kind == A.FINDING_UNBOUNDED_REPLAN]

"""A plan of sentences through a real collector (docs/semantic-conventions.md, "Plans of
sentences"): a LangGraph plan-and-execute trace as OpenInference's LangChain instrumentor
records it (CHAIN node visits carrying ``metadata.langgraph_node``, ``LLM`` and ``TOOL`` spans),
under the app's own root span, sent through the real OTel SDK; the trace API's observed plans
name a re-plan's rewritten sentence by the step as first written, and its attempts are that
step's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode
from planscope_collector import BackgroundServer, CollectorSettings

from tests._langgraph_spans import Executor, execute, kind, llm, node
from tests.conftest import wait_for_trace

pytestmark = pytest.mark.integration

STEPS = [
    "Fetch the torn folio from the reading room.",
    "Press the folio found in the reading room flat.",
]
REWRITTEN = ["Press folio F-7 flat."]


@pytest.fixture
def server(data_dir: Path) -> Iterator[BackgroundServer]:
    settings = CollectorSettings(data_dir=data_dir, port=0, flush_interval=0.05)
    with BackgroundServer(settings) as s:
        yield s


EXECUTOR = Executor('{"folio": "F-7"}', "press -> busy: try again", "Hold over", "Done: folio F-7")


def plan_and_execute() -> tuple[str, int, bytes]:
    """Plan; fetch; re-plan (the folio's id written in); press (fails); re-plan (the same);
    press (fails); the re-planner's final answer."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("folio-app")
    with (
        tracer.start_as_current_span("repair folio") as root,
        tracer.start_as_current_span("LangGraph", attributes=kind("CHAIN")),
    ):
        with node(tracer, "planner"):
            llm(tracer, "Repair the torn folio.", json.dumps({"steps": STEPS}))
        execute(tracer, EXECUTOR, STEPS, "fetch_folio", failed=False)
        for _ in range(2):
            with node(tracer, "replan"):
                llm(tracer, "Plan so far: ...", json.dumps({"steps": REWRITTEN}))
            execute(tracer, EXECUTOR, REWRITTEN, "press_folio", failed=True)
        with node(tracer, "replan"):
            llm(tracer, "Plan so far:\n" + "\n".join(STEPS), '{"response": "gave up"}')
        root.set_status(Status(StatusCode.ERROR, "gave up"))
        trace_id = format(root.get_span_context().trace_id, "032x")
    spans = list(exporter.get_finished_spans())
    return trace_id, len(spans), encode_spans(spans).SerializeToString()


def test_the_trace_api_names_a_rewritten_sentence_by_the_step_as_first_written(
    server: BackgroundServer,
) -> None:
    trace_id, count, body = plan_and_execute()
    headers = {"content-type": "application/x-protobuf"}
    httpx.post(f"{server.url}/v1/traces", content=body, headers=headers).raise_for_status()
    wait_for_trace(server.url, trace_id, count)
    trace = httpx.get(f"{server.url}/api/traces/{trace_id}").json()
    plans = [[(s["id"], s["description"]) for s in p["steps"]] for p in trace["plans"]]
    assert plans == [
        [(s, s) for s in STEPS],
        [(STEPS[1], REWRITTEN[0])],
        [(STEPS[1], REWRITTEN[0])],
    ]
    attempts = [
        (s["model"]["step_id"], s["model"]["attempt"], s["model"]["status"])
        for s in trace["spans"]
        if s["planscope_kind"] == "step" and s["model"] and s["model"].get("attempt")
    ]
    # the executor's model turns and tool node of one invocation are one attempt; the press
    # across the two re-plans is one step tried twice; the re-planner's final answer no step's
    assert [a for a in attempts if a[0] in STEPS] == [
        (STEPS[0], 1, "ok"),
        (STEPS[1], 1, "error"),
        (STEPS[1], 2, "error"),
    ]
    assert [a[0] for a in attempts if a[0] not in STEPS] == ["planner", *["replan"] * 3]
    # the app's root over the graph is the run
    assert trace["run"]["inferred"] is True

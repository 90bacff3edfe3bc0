"""A framework's trace (agents with no application span over them, tools said only as GenAI
events: AutoGen's agent runtime, Semantic Kernel's model diagnostics) through a real OTel SDK
exporter into a real collector: the run model the analyzer's findings refer to is the one the
trace API shows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode
from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_collector import BackgroundServer, CollectorSettings
from planscope_collector.observed import NO_SPAN

from tests.conftest import poll
from tests.dashboard._synthetic import agent_runtime

pytestmark = pytest.mark.integration


@pytest.fixture
def server(data_dir: Path) -> Iterator[BackgroundServer]:
    with BackgroundServer(CollectorSettings(data_dir=data_dir, port=0)) as s:
        yield s


def test_agent_roots_and_event_tool_calls_are_the_trace_apis_run_model(
    server: BackgroundServer,
) -> None:
    trace_id, spans = agent_runtime(server.url)
    poll(f"{server.url}/api/traces/{trace_id}", lambda t: t["span_count"] == spans)
    r = httpx.post(f"{server.url}/api/analyze", json={"trace_id": trace_id})
    assert r.status_code == 200, r.text
    findings = httpx.get(f"{server.url}/api/traces/{trace_id}/findings").json()["findings"]
    trace = httpx.get(f"{server.url}/api/traces/{trace_id}").json()
    # the analyzer's run model of the same stored trace
    loaded = load_traces(server.app.state.collector.store, "default", [trace_id])[trace_id]
    assert [r.span_id for r in loaded.runs] == [NO_SPAN]
    assert trace["run"]["span_id"] == NO_SPAN and trace["run"]["inferred"]
    assert trace["run"]["run_id"] == loaded.runs[0].run_id
    assert trace["run"]["outcome"] == loaded.runs[0].outcome
    steps = {
        (s["span_id"], s["model"]["step_id"], s["model"]["attempt"], s["model"]["status"])
        for s in trace["spans"]
        if s["planscope_kind"] == "step"
    }
    assert steps == {(a.span_id, a.step_id, a.attempt, a.status) for a in loaded.attempts}
    tools = {
        (s["span_id"], s["parent_span_id"], s["model"]["tool"], s["model"]["step_id"])
        for s in trace["spans"]
        if s["planscope_kind"] == "tool"
    }
    assert tools == {(c.span_id, c.parent_span_id, c.tool, c.step_id) for c in loaded.tools}
    assert len(loaded.attempts) == 5 and len(loaded.tools) == 4
    # the run model's figures count them, in the trace's detail and in the list of traces
    (listed,) = httpx.get(f"{server.url}/api/traces").json()["traces"]
    for figures in (trace["metrics"], listed):
        assert figures["step_attempts"] == len(loaded.attempts)
        assert figures["tool_calls"] == len(loaded.tools)
    assert listed["outcome"] == loaded.runs[0].outcome
    # every span a finding names is one the trace API shows, as the kind the analyzer saw
    assert findings
    shown = {s["span_id"]: s["planscope_kind"] for s in trace["spans"]}
    named = {span_id for f in findings for span_id in f["evidence_span_ids"]}
    assert named <= shown.keys()
    assert {span_id for span_id in named if shown[span_id] == "step"} <= {
        a.span_id for a in loaded.attempts
    }


def test_one_agents_event_tool_calls_are_counted_in_the_list_as_in_the_detail(
    server: BackgroundServer,
) -> None:
    # one agent run the span model inferred, its one tool call said only as events (it failed):
    # no structure but the run for the list to bind by, still a call the detail shows
    trace_id, spans = agent_runtime(server.url, agents=["worker"])
    poll(f"{server.url}/api/traces/{trace_id}", lambda t: t["span_count"] == spans)
    trace = httpx.get(f"{server.url}/api/traces/{trace_id}").json()
    (listed,) = httpx.get(f"{server.url}/api/traces").json()["traces"]
    assert [s["model"]["tool"] for s in trace["spans"] if s["planscope_kind"] == "tool"] == [
        "health_check"
    ]
    assert (trace["metrics"]["tool_calls"], trace["metrics"]["failed_tool_calls"]) == (1, 1)
    assert listed["tool_calls"] == trace["metrics"]["tool_calls"]
    assert listed["outcome"] == trace["run"]["outcome"]
    loaded = load_traces(server.app.state.collector.store, "default", [trace_id])[trace_id]
    assert len(loaded.tools) == listed["tool_calls"]


PLAN = """@plan{J-1, revision = {1}}
@step{pick, tool = {wms_pick}, goal = {Pick the order}, order = {7}}
@step{ship, tool = {courier_ship}, goal = {Ship it}, parcel = pick}"""


def _app_steps_by_attribute(url: str) -> str:
    """An app's job span holding its plan span (the plan's text an attribute) and one plain span
    per step whose name says nothing of the step, ``shop.step.id`` naming it (as Griptape apps
    do), each over a chat call and a call of the same tool (the second step's fails), through a real
    OTLP/HTTP exporter. The trace id."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    tracer = provider.get_tracer("shop")
    with tracer.start_as_current_span("shop.job") as job:
        with tracer.start_as_current_span("shop.plan", attributes={"shop.plan.text": PLAN}):
            pass
        for step in ("pick", "ship"):  # one tool for both: only the attribute names the step
            with tracer.start_as_current_span("shop.work", attributes={"shop.step.id": step}):
                chat = {A.GEN_AI_OPERATION_NAME: "chat", A.GEN_AI_REQUEST_MODEL: "gpt-4o"}
                with tracer.start_as_current_span("chat gpt-4o", attributes=chat):
                    pass
                call = {A.GEN_AI_OPERATION_NAME: "execute_tool", A.GEN_AI_TOOL_NAME: "http"}
                with tracer.start_as_current_span("execute_tool http", attributes=call) as t:
                    if step == "ship":
                        t.set_status(Status(StatusCode.ERROR, "courier refused the parcel"))
    provider.shutdown()
    return f"{job.get_span_context().trace_id:032x}"


def test_plain_spans_naming_their_step_by_attribute_are_steps_in_the_trace_api_too(
    server: BackgroundServer,
) -> None:
    """The loader, the run model and the trace API read a span's own step attribute by one
    rule (``observed.recorded_work``): the app's ``shop.work`` spans are the attempts of its
    steps in the trace's detail as they are for the analyzer."""
    trace_id = _app_steps_by_attribute(server.url)
    trace = poll(f"{server.url}/api/traces/{trace_id}", lambda t: t["span_count"] == 8)
    loaded = load_traces(server.app.state.collector.store, "default", [trace_id])[trace_id]
    assert sorted(a.step_id for a in loaded.attempts) == ["pick", "ship"]
    steps = {
        (s["span_id"], s["model"]["step_id"])
        for s in trace["spans"]
        if s["planscope_kind"] == "step"
    }
    assert steps == {(a.span_id, a.step_id) for a in loaded.attempts}

"""Haystack's own OpenTelemetry tracer in the span model (migration 0052): its spans say what
they are only by their names (every span INTERNAL, no status ever), so an Agent's tool step is a
tool call with its name (``haystack.tool.name``), arguments and result, a call whose tool raised
(``haystack.tool.error`` true) failed, an LLM step and a pipeline's ``*Generator`` component are
LLM calls, and an Agent's run is the step attempt its input's ``step`` names. Spans shaped as
``opentelemetry-haystack`` 2.0's ``OpenTelemetryTracer`` writes them (a library's loan desk),
through the real OTel SDK's OTLP/HTTP exporter into a real collector."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from planscope_collector import BackgroundServer
from planscope_collector.storage import SPAN_STATUS_MESSAGE_SQL

from tests.conftest import wait_for_trace

_FAILED = (
    "{\"error\": \"Failed to invoke Tool `renew_loan` with parameters {'loan': 'L-7'}. "
    'Error: loan L-7 is on hold"}'
)


def _export(url: str) -> str:
    """A loan desk's trace: a pipeline whose generator answered, then an Agent's run for the
    ``renew`` step that called ``renew_loan`` twice (raised, then answered); its trace id."""
    provider = TracerProvider(resource=Resource.create({"service.name": "loans"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    tracer = provider.get_tracer("haystack")
    with tracer.start_as_current_span("loan desk") as root:
        with tracer.start_as_current_span("haystack.pipeline.run"):
            for name, kind in (("prompt", "ChatPromptBuilder"), ("llm", "OpenAIChatGenerator")):
                component = {
                    "haystack.component.name": name,
                    "haystack.component.type": kind,
                    "haystack.component.output": json.dumps({"replies": []}),
                }
                with tracer.start_as_current_span("haystack.component.run", attributes=component):
                    pass
        agent = {"haystack.agent.input": json.dumps({"messages": [], "step": "renew"})}
        with tracer.start_as_current_span("haystack.agent.run", attributes=agent):
            calls: list[dict[str, Any]] = [
                {"haystack.agent.step.tool.output": _FAILED, "haystack.tool.error": True},
                {"haystack.agent.step.tool.output": '{"due": "2026-12-20"}'},
            ]
            for i, outcome in enumerate(calls):
                with tracer.start_as_current_span(
                    "haystack.agent.step", attributes={"haystack.agent.step": i}
                ):
                    with tracer.start_as_current_span("haystack.agent.step.llm"):
                        pass
                    tool = {
                        "haystack.tool.name": "renew_loan",
                        "haystack.agent.step.tool.input": json.dumps({"loan": "L-7"}),
                        **outcome,
                    }
                    with tracer.start_as_current_span("haystack.agent.step.tool", attributes=tool):
                        pass
        trace_id = format(root.get_span_context().trace_id, "032x")
    assert provider.force_flush(10_000)
    provider.shutdown()
    return trace_id


def test_a_haystack_agent_run_has_its_step_tool_calls_and_llm_calls(
    collector: BackgroundServer,
) -> None:
    trace_id = _export(collector.url)
    wait_for_trace(collector.url, trace_id, 11)
    collector.app.state.collector.writer.drain()
    store = collector.app.state.collector.store
    calls = store.query(
        "SELECT ToolName AS tool, Arguments AS arguments, Result AS result, StatusCode AS status "
        "FROM planscope_tool_calls WHERE TraceId = {t:String} ORDER BY Start",
        {"t": trace_id},
    )
    assert [(r["tool"], json.loads(r["arguments"]), r["result"], r["status"]) for r in calls] == [
        ("renew_loan", {"loan": "L-7"}, _FAILED, "Error"),
        ("renew_loan", {"loan": "L-7"}, '{"due": "2026-12-20"}', "Unset"),
    ]
    attempts = store.query(
        "SELECT StepId FROM planscope_step_attempts WHERE TraceId = {t:String}", {"t": trace_id}
    )
    assert [r["StepId"] for r in attempts] == ["renew"]
    kinds = store.query(
        "SELECT SpanName AS name, SpanAttributes['haystack.component.name'] AS component, "
        "SpanModelKind AS kind FROM otel_traces WHERE TraceId = {t:String} "
        "AND SpanModelKind != 'other'",
        {"t": trace_id},
    )
    assert sorted((r["name"], r["component"], r["kind"]) for r in kinds) == [
        ("haystack.agent.run", "", "step"),
        ("haystack.agent.step.llm", "", "llm"),
        ("haystack.agent.step.llm", "", "llm"),
        ("haystack.agent.step.tool", "", "tool"),
        ("haystack.agent.step.tool", "", "tool"),
        ("haystack.component.run", "llm", "llm"),
    ]


def test_a_raising_haystack_tool_call_says_what_the_model_read(
    collector: BackgroundServer,
) -> None:
    """The tracer sets no status, so a raised call's error text is only its output's ``error``
    (migration 0058): the failed call's message, as a status description would be."""
    trace_id = _export(collector.url)
    wait_for_trace(collector.url, trace_id, 11)
    collector.app.state.collector.writer.drain()
    rows = collector.app.state.collector.store.query(
        f"SELECT {SPAN_STATUS_MESSAGE_SQL} AS message FROM otel_traces "
        "WHERE TraceId = {t:String} AND SpanName = 'haystack.agent.step.tool' ORDER BY Timestamp",
        {"t": trace_id},
    )
    assert [r["message"] for r in rows] == [json.loads(_FAILED)["error"], ""]

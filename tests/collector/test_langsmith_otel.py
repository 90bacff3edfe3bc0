"""LangSmith's OpenTelemetry export in the span model (migration 0050): a tool run's inputs (the
bare ``gen_ai.prompt``) are the call's arguments, its outputs (``gen_ai.completion``,
``{"output": <the ToolMessage as a plain object>}``) its result, and a run with an exception
event failed even when the exporter left its start's OK status; a run a LangGraph handoff passed
through (its ``ParentCommand``, a control-flow exception) did not fail. Spans shaped as
``langsmith[otel]`` 0.15 writes them (a job poller's calls), through the real OTel SDK's
OTLP/HTTP exporter into a real collector."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Status, StatusCode
from planscope import semconv as A
from planscope_collector import BackgroundServer

from tests.conftest import wait_for_trace


def _tool_run(name: str, arguments: dict[str, Any], content: str | None) -> dict[str, Any]:
    """The attributes LangSmith's exporter writes on a tool run's span (no output: it raised)."""
    attributes = {
        "langsmith.span.kind": "tool",
        A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
        A.GEN_AI_TOOL_NAME: name,
        A.GEN_AI_PROMPT: json.dumps(arguments),
        A.GEN_AI_COMPLETION: "{}",
    }
    if content is not None:
        message = {"content": content, "additional_kwargs": {}, "response_metadata": {},
                   "type": "tool", "name": name, "tool_call_id": "c1",
                   "status": "success"}  # fmt: skip
        attributes[A.GEN_AI_COMPLETION] = json.dumps({"output": message})
    return attributes


def _export(url: str) -> str:
    """A poller's trace: a poll answered, a cancel that raised with its status left OK (the
    exporter's start status), one that raised with ERROR, a span of another convention with an
    exception event and an OK status, and two failed chains (a handoff, a crash); its trace
    id."""
    provider = TracerProvider(resource=Resource.create({"service.name": "poller"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    tracer = provider.get_tracer("langsmith")
    with tracer.start_as_current_span(
        "poller", attributes={"langsmith.span.kind": "chain"}
    ) as root:
        with tracer.start_as_current_span(
            "poll", attributes=_tool_run("poll", {"job": "a"}, "pending")
        ):
            pass
        for status in (StatusCode.OK, StatusCode.ERROR):
            attributes = _tool_run("cancel", {"job": "a", "force": True}, None)
            with tracer.start_as_current_span(
                f"cancel {status.name}", attributes=attributes, record_exception=False,
                set_status_on_exception=False,
            ) as span:  # fmt: skip
                span.set_status(Status(status))
                span.record_exception(RuntimeError("job a is locked"))
        handled = {A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: "retry"}
        with tracer.start_as_current_span("retry", attributes=handled) as span:
            span.record_exception(RuntimeError("first try timed out"))
            span.set_status(Status(StatusCode.OK))
        # a chain a handoff passed through: LangSmith records LangGraph's ParentCommand as
        # Exception(<its repr>); a run that raised another exception stays failed
        for name, error in (
            ("handoff", "ParentCommand(Command(goto='packer'))"),
            ("crash", "boom"),
        ):
            chain = {"langsmith.span.kind": "chain", A.GEN_AI_OPERATION_NAME: "chain"}
            with tracer.start_as_current_span(
                name, attributes=chain, record_exception=False, set_status_on_exception=False
            ) as span:
                span.set_status(Status(StatusCode.ERROR))
                span.record_exception(Exception(error))
        trace_id = format(root.get_span_context().trace_id, "032x")
    assert provider.force_flush(10_000)
    provider.shutdown()
    return trace_id


def test_a_langsmith_tool_run_has_its_arguments_result_and_failure(
    collector: BackgroundServer,
) -> None:
    trace_id = _export(collector.url)
    wait_for_trace(collector.url, trace_id, 7)
    collector.app.state.collector.writer.drain()
    rows = collector.app.state.collector.store.query(
        "SELECT o.SpanName AS name, c.Arguments AS arguments, c.Result AS result, "
        "c.StatusCode AS status FROM planscope_tool_calls AS c "
        "INNER JOIN otel_traces AS o USING (TraceId, SpanId) WHERE TraceId = {t:String}",
        {"t": trace_id},
    )
    got = {
        r["name"]: (json.loads(r["arguments"] or "null"), r["result"], r["status"]) for r in rows
    }
    assert got == {
        "poll": ({"job": "a"}, "pending", "Unset"),
        "cancel OK": ({"job": "a", "force": True}, "{}", "Error"),
        "cancel ERROR": ({"job": "a", "force": True}, "{}", "Error"),
        # another convention's OK span keeps its status: an exception it recorded was handled
        "retry": (None, "", "Ok"),
    }
    statuses = collector.app.state.collector.store.query(
        "SELECT SpanName AS name, SpanModelStatusCode AS status FROM otel_traces "
        "WHERE TraceId = {t:String} AND SpanName IN ('handoff', 'crash')",
        {"t": trace_id},
    )
    assert {r["name"]: r["status"] for r in statuses} == {"handoff": "Unset", "crash": "Error"}

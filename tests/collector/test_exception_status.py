"""A trace whose spans only record exceptions (OpenTelemetry's ``exception`` event, status left
UNSET), posted through the real collector by the real OTel SDK exporter: the trace API and the
analyzer's loader read the same failed run, step, tool and LLM call, with the exception's type
and message (migration 0033: one mapping from spans to the run model)."""

from __future__ import annotations

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Span, Status, StatusCode
from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_collector import BackgroundServer

from tests.conftest import wait_for_trace


def _post(url: str) -> str:
    """The trace: an agent run, its sub-agent, a tool call and an LLM call that each record an
    exception and set no status, a tool that records one but says OK, and a tool span of
    planscope's own kind (the SDK sets its status itself) that records one."""
    provider = TracerProvider(resource=Resource.create({"service.name": "raiser"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    tracer = provider.get_tracer("test")

    def raised(span: Span, message: str) -> None:
        span.record_exception(TimeoutError(message))

    op = A.GEN_AI_OPERATION_NAME
    with tracer.start_as_current_span("agent", attributes={op: "invoke_agent"}) as run:
        with tracer.start_as_current_span("scout", attributes={op: "invoke_agent"}) as step:
            with tracer.start_as_current_span("wms", attributes={op: "execute_tool"}) as tool:
                raised(tool, "wms timed out")
            with tracer.start_as_current_span("chat", attributes={op: "chat"}) as llm:
                raised(llm, "model timed out")
            with tracer.start_as_current_span("retry", attributes={op: "execute_tool"}) as ok:
                raised(ok, "recovered")
                ok.set_status(Status(StatusCode.OK))
            with tracer.start_as_current_span("own", attributes={A.SPAN_KIND: A.KIND_TOOL}) as own:
                raised(own, "said by the sdk")
            raised(step, "scout gave up")
        raised(run, "agent gave up")
        trace_id = format(run.get_span_context().trace_id, "032x")
    assert provider.force_flush(10_000)
    provider.shutdown()
    return trace_id


def test_the_trace_api_and_the_analyzer_read_the_same_failures(
    collector: BackgroundServer,
) -> None:
    trace_id = _post(collector.url)
    detail = wait_for_trace(collector.url, trace_id, 6)
    spans = {s["name"]: s for s in detail["spans"]}
    assert {n: (s["status_code"], s["status_message"]) for n, s in spans.items()} == {
        "agent": ("Error", "agent gave up"),
        "scout": ("Error", "scout gave up"),
        "wms": ("Error", "wms timed out"),
        "chat": ("Error", "model timed out"),
        "retry": ("Ok", ""),
        "own": ("Unset", ""),
    }
    assert spans["scout"]["model"]["status"] == A.STATUS_ERROR
    run = detail["run"]
    assert (run["outcome"], run["outcome_reason"]) == ("failure", "agent gave up")
    metrics = detail["metrics"]
    assert (metrics["failed_steps"], metrics["failed_tool_calls"]) == (1, 1)

    collector.app.state.collector.writer.drain()
    t = load_traces(collector.app.state.collector.store, "default", [trace_id])[trace_id]
    (r,) = t.runs
    assert (r.outcome, r.outcome_reason, r.status_code) == ("failure", "agent gave up", "Error")
    (a,) = t.attempts
    assert (a.status, a.error_type, a.message) == ("error", "TimeoutError", "scout gave up")
    assert a.fingerprint  # a failed attempt's error has a fingerprint, as the SDK's do
    tools = {c.span_id: (c.status_code, c.error_type) for c in t.tools}
    assert tools == {
        spans["wms"]["span_id"]: ("Error", "TimeoutError"),
        spans["retry"]["span_id"]: ("Ok", ""),
        spans["own"]["span_id"]: ("Unset", ""),
    }

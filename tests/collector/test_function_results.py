"""OpenInference's autogen-agentchat shape, posted through the real collector by the real OTel
SDK exporter, in another domain (a greenhouse): an agent turn (AGENT span) whose tool spans
all end OK (the instrumentor sets OK over its own ERROR) while each next model call of the turn
is handed the tool's result as ``llm.input_messages.{i}.function.{j}`` with ``is_error`` true.
One mapping rule (``observed.bind``: ``Binding.returned``) fails those calls for every reader:
the live run model (``runmodel.bind_traces``, the trace API's page and its metrics) and the
analyzer's loader, whose runaway detector then finds the valve retried again and again (before:
every call OK, no loop)."""

from __future__ import annotations

import json

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Status, StatusCode
from planscope import semconv as A
from planscope_analyzer import Analyzer, load_traces
from planscope_collector import BackgroundServer
from planscope_collector.runmodel import (
    TRACE_WHERE,
    bind_traces,
    binding_parameters,
    run_metrics_sql,
)

from tests.conftest import wait_for_trace

KIND = "openinference.span.kind"
VALVE = "open_valve"
STUCK = ["valve 3 stuck at 10%", "valve 3 actuator timeout", "valve 3 pressure low", "valve 3 jam"]


def _post(url: str) -> str:
    """One greenhouse turn: a sensor read that works, then the valve called once per
    :data:`STUCK` answer, each result handed back as an error (the last one too: the agent
    gives up in its answer)."""
    provider = TracerProvider(resource=Resource.create({"service.name": "greenhouse"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    tracer = provider.get_tracer("openinference.instrumentation.autogen_agentchat")
    history: dict[str, str] = {
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Water bed 3.",
    }
    calls = [("read_sensor", "moist 12%", False)] + [(VALVE, s, True) for s in STUCK]

    def model_call() -> None:
        with tracer.start_as_current_span("ChatClient.create", attributes={KIND: "LLM", **history}):
            pass

    with tracer.start_as_current_span("greenhouse job", attributes={KIND: "CHAIN"}) as root:
        with tracer.start_as_current_span(
            "gardener.on_messages_stream",
            attributes={KIND: "AGENT", "input.value": "Water bed 3."},
        ):
            model_call()
            for n, (tool, content, failed) in enumerate(calls):
                with tracer.start_as_current_span(
                    f"gardener.{tool}",
                    attributes={KIND: "TOOL", "tool.name": tool, "input.value": "{}"},
                ) as span:
                    span.set_attribute("output.value", content)
                    span.set_status(Status(StatusCode.OK))
                at = 1 + 2 * n
                history[f"llm.input_messages.{at}.message.role"] = "assistant"
                history[f"llm.input_messages.{at}.message.tool_calls.0.tool_call.id"] = f"c{n}"
                history[f"llm.input_messages.{at}.message.tool_calls.0.tool_call.function.name"] = (
                    tool
                )
                history[f"llm.input_messages.{at + 1}.message.role"] = "function"
                result = {"name": tool, "content": content, "call_id": f"c{n}", "is_error": failed}
                history[f"llm.input_messages.{at + 1}.function.0"] = json.dumps(result)
                model_call()
        root.set_status(Status(StatusCode.ERROR, "bed 3 not watered"))
        trace_id = format(root.get_span_context().trace_id, "032x")
    assert provider.force_flush(10_000)
    provider.shutdown()
    return trace_id


def test_is_error_function_results_fail_tool_spans_that_ended_ok(
    collector: BackgroundServer,
) -> None:
    trace_id = _post(collector.url)
    page = wait_for_trace(collector.url, trace_id, 2 + 2 * (1 + len(STUCK)))
    store = collector.app.state.collector.store
    want = [("read_sensor", False)] + [(VALVE, True) for _ in STUCK]

    # the live path: the trace API's page and metrics, and the run model's own binding
    tools = [s for s in page["spans"] if s["planscope_kind"] == A.KIND_TOOL]
    assert [(s["model"]["tool"], s["model"]["status"] == A.STATUS_ERROR) for s in tools] == want
    assert page["metrics"]["failed_tool_calls"] == len(STUCK), page["metrics"]
    window = {"project": "default", "trace_id": trace_id, "since": 0, "until": 2**62}
    bound = bind_traces(store.query, TRACE_WHERE, window)
    binding = bound[trace_id][1]
    assert sorted(m for _, m in binding.returned.values()) == sorted(STUCK)
    params = binding_parameters(bound)
    metrics = store.query(run_metrics_sql(TRACE_WHERE, binding=params), {**window, **params})
    assert metrics[0]["FailedToolCalls"] == len(STUCK), metrics

    # the analyzer: the same calls failed, with the results' text, and the loop found
    t = load_traces(store, "default", [trace_id])[trace_id]
    assert [(c.tool, c.failed) for c in t.tools] == want, t.tools
    assert [c.message for c in t.tools if c.failed] == STUCK
    result = Analyzer(store, settle_seconds=0).analyze("default", [trace_id], write=False)
    loops = [f for f in result.findings if f.kind == A.FINDING_RUNAWAY_LOOP]
    assert loops and loops[0].detail["tool"] == VALVE, result.findings

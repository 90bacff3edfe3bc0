"""MLflow's Haystack autologging in the span model (migration 0058): MLflow's
``HaystackSpanProcessor`` keeps Haystack's tracer's span names and ``haystack.*`` tags but adds
its own ``mlflow.*`` attributes, every value JSON-encoded, and gives the Agent's spans the type
``null`` (MLflow's JSON for "no type"); it writes Haystack's tags as text, so a call whose tool
raised says ``haystack.tool.error`` ``True``. A ``null`` type is no type: the Agent's tool steps
are tool calls (the failed one failed), its LLM steps LLM calls, its run a step attempt. Spans
shaped as ``mlflow-tracing`` 3.x's processor exports them (a bakery's wholesale order), through
the real OTel SDK's OTLP/HTTP exporter into a real collector."""

from __future__ import annotations

import json

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from planscope_collector import BackgroundServer

from tests.conftest import wait_for_trace

_FAILED = (
    "{\"error\": \"Failed to invoke Tool `reserve_oven` with parameters {'oven': 'deck 2'}. "
    'Error: deck 2 is being descaled"}'
)
_NULL = {"mlflow.spanType": "null"}
"""What MLflow's processor writes on a Haystack Agent's spans: no type."""


def _export(url: str) -> str:
    """A bakery's trace: the app's MLflow root, a planner pipeline whose generator answered,
    then an Agent's run for the ``bake`` step that called ``reserve_oven`` twice (raised, then
    answered); its trace id."""
    provider = TracerProvider(resource=Resource.create({"service.name": "bakery"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    app = provider.get_tracer("mlflow.tracing.provider")
    haystack = provider.get_tracer("mlflow.haystack.autolog")
    with app.start_as_current_span(
        "wholesale order", attributes={"mlflow.spanType": '"AGENT"'}
    ) as root:
        with haystack.start_as_current_span(
            "haystack.pipeline.run", attributes={"mlflow.spanType": '"CHAIN"'}
        ):
            component = {
                "haystack.component.name": "llm",
                "haystack.component.type": "OpenAIChatGenerator",
                "haystack.component.output": json.dumps({"replies": []}),
                "mlflow.spanType": '"LLM"',
            }
            with haystack.start_as_current_span("haystack.component.run", attributes=component):
                pass
        agent = {"haystack.agent.input": json.dumps({"messages": [], "step": "bake"}), **_NULL}
        with haystack.start_as_current_span("haystack.agent.run", attributes=agent):
            for i, outcome in enumerate(
                [
                    {"haystack.agent.step.tool.output": _FAILED, "haystack.tool.error": "True"},
                    {"haystack.agent.step.tool.output": '{"oven": "deck 3"}'},
                ]
            ):
                with haystack.start_as_current_span(
                    "haystack.agent.step", attributes={"haystack.agent.step": str(i), **_NULL}
                ):
                    with haystack.start_as_current_span(
                        "haystack.agent.step.llm", attributes=_NULL
                    ):
                        pass
                    tool = {
                        "haystack.tool.name": "reserve_oven",
                        "haystack.agent.step.tool.input": json.dumps({"oven": "deck 2"}),
                        **_NULL,
                        **outcome,
                    }
                    with haystack.start_as_current_span(
                        "haystack.agent.step.tool", attributes=tool
                    ):
                        pass
        trace_id = format(root.get_span_context().trace_id, "032x")
    assert provider.force_flush(10_000)
    provider.shutdown()
    return trace_id


def test_an_mlflow_null_type_leaves_a_haystack_agents_spans_to_haystacks_names(
    collector: BackgroundServer,
) -> None:
    trace_id = _export(collector.url)
    wait_for_trace(collector.url, trace_id, 9)
    collector.app.state.collector.writer.drain()
    store = collector.app.state.collector.store
    calls = store.query(
        "SELECT ToolName AS tool, Result AS result, StatusCode AS status "
        "FROM planscope_tool_calls WHERE TraceId = {t:String} ORDER BY Start",
        {"t": trace_id},
    )
    assert [(r["tool"], r["result"], r["status"]) for r in calls] == [
        ("reserve_oven", _FAILED, "Error"),
        ("reserve_oven", '{"oven": "deck 3"}', "Unset"),
    ]
    kinds = store.query(
        "SELECT SpanName AS name, SpanModelKind AS kind FROM otel_traces "
        "WHERE TraceId = {t:String} AND SpanModelKind != 'other'",
        {"t": trace_id},
    )
    assert sorted((r["name"], r["kind"]) for r in kinds) == [
        ("haystack.agent.run", "step"),
        ("haystack.agent.step.llm", "llm"),
        ("haystack.agent.step.llm", "llm"),
        ("haystack.agent.step.tool", "tool"),
        ("haystack.agent.step.tool", "tool"),
        ("haystack.component.run", "llm"),
        ("wholesale order", "run"),
    ]

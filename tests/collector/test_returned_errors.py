"""Errors returned as values on typed tool spans of other conventions (migrations 0041, 0043): a
tool call whose span is OK or UNSET but whose recorded result is an error envelope failed, in
the trace API, in ``planscope_tool_calls`` and for the analyzer; a result that only mentions an
error does not. The SQL rule and :func:`planscope_collector._returned.returned_error` are
checked on one table of cases (:data:`CASES`) as the result of a tool span of each convention
(:data:`CONVENTIONS`: GenAI, OpenInference, OpenLLMetry, LangSmith, Langfuse, MLflow's dict
and string results), through the real OTel SDK exporter, a real collector on loopback and
chDB; then through real third-party instrumentation whose tool returns an MCP ``isError``
result until the agent gives up, a runaway loop: the OpenAI Agents SDK under OpenInference's
instrumentor (its model our fake OpenAI server), Langfuse's ``@observe`` and MLflow's
``@mlflow.trace``."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, trace
from openai import AsyncOpenAI
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Status, StatusCode
from planscope import semconv as A
from planscope_analyzer import Analyzer, load_traces
from planscope_collector import BackgroundServer
from planscope_collector._returned import returned_error

from tests.conformance.fake_openai import MAX_TOOL_ATTEMPTS, MODEL, ModelServer
from tests.conftest import wait_for_trace

_TOOL_MESSAGE = (
    '{"output": {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", '
    '"ToolMessage"], "kwargs": {"content": "%s", "type": "tool", "status": "%s"}}, "kwargs": {}}'
)
"""OpenLLMetry's envelope of a ToolMessage (its content, its status)."""
_PLAIN_MESSAGE = (
    '{"output": {"content": "%s", "type": "%s", "name": "cancel", "tool_call_id": "c1", '
    '"status": "%s"}}'
)
"""LangSmith's OpenTelemetry export's outputs of a tool run: a ToolMessage as a plain object (its
content, its type, its status)."""

CASES: list[tuple[str, bool]] = [
    # (a tool's recorded result, whether it is an error envelope)
    ('{"isError": true, "content": [{"type": "text", "text": "no such file"}]}', True),
    (
        '{"isError": true, "content": [{"type": "text", "text": "a"}, {"type": "image", '
        '"data": "eA=="}, "raw", {"text": 5}, {"type": "text", "text": "b"}]}',
        True,
    ),
    ('{"is_error": true, "content": "quota exceeded"}', True),
    ('{"isError": true, "content": [], "error": {"type": "rate_limit", "message": "slow"}}', True),
    ('{"isError": true}', True),
    ('{"isError": true, "error": {"code": 429}}', True),
    ('{"isError": true, "error": "text"}', True),
    ('{"isError": true, "message": "", "content": "", "error": "plain"}', True),
    ('{"isError": true, "content": [{"text": ""}], "error": "hidden"}', True),
    ('{"isError": true, "content": [{"type": "text", "text": "caf\\u00e9 \\"shut\\"\\n2"}]}', True),
    ('{"isError": true, "error": {"error": {"error": {"message": "three down"}}}}', True),
    ('{"\\u0069sError": true, "content": "a key spelled with an escape"}', True),
    ('{"e\\u0072ror": "down", "code": 1}', True),
    ('{"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}', True),
    ('{"type": "error", "error": {"type": "", "code": 529, "error": {"message": "deep"}}}', True),
    ('{"error": {"message": "x"}, "type": "error"}', True),
    ('{"type": "error", "error": "flat", "code": 7}', True),
    ('{"error": "quota exceeded", "code": 429}', True),
    ('{"error": {"code": "E42", "message": "bad id"}, "request_id": "r1"}', True),
    ('{"error": "down", "code": 0, "status": 503}', True),
    ('{"error": "down", "code": 0}', True),
    ('{"error": "down", "code": false, "status": 0}', True),
    ('{"error": "down", "status": true}', True),
    ('{"error": "down", "code": 4.5}', True),
    ('{"error": {"type": 1.5, "code": "x"}, "code": "E1"}', True),
    ('{"error": {"type": "", "code": 0}, "code": "E1"}', True),
    ('{"error": {"type": [], "code": true}}', True),
    ('{"error": {"error": {"error": {"message": "two down"}}}}', True),
    ('{"error": {"error": {"error": {"error": {"message": "too deep"}}}}}', True),
    ('{"error": {"content": [{"type": "text", "text": "in content"}]}, "status": 400}', True),
    # Google ADK's recommended error result (0048)
    ('{"status": "error", "error_code": "HELD", "error_message": "on loan until May"}', True),
    ('{"status": "error", "error_message": "no such branch"}', True),
    ('{"status": "error", "error_code": 404, "message": "gone"}', True),
    ('{"status": "error", "error_code": null}', True),
    # a result that only mentions an error
    ('{"rows": 3, "error": null}', False),
    ('{"errors": []}', False),
    ('{"error": null}', False),
    ('{"error": ""}', False),
    ('{"error": {}}', False),
    ('{"error": ["a"]}', False),
    ('{"error": true}', False),
    ('{"error": 1}', False),
    ('{"id": 7, "error": "none"}', False),
    ('{"error": "x", "result": 1}', False),
    ('{"message": "error: retry"}', False),
    ('{"status": "error", "message": "failed"}', False),
    ('{"status": "success", "error_code": "", "error_message": ""}', False),
    ('{"status": "pending", "error_message": "none yet"}', False),
    ('{"type": "error"}', False),
    ('{"type": "error", "error": null}', False),
    ('{"isError": false, "content": [{"type": "text", "text": "fine"}]}', False),
    ('{"isError": "true", "content": "x"}', False),
    ('{"isError": 1, "content": "x"}', False),
    (' {"isError": true}', False),
    ('[{"isError": true}]', False),
    ('{"isError": true', False),
    ("error: timeout", False),
    ("", False),
    # OpenLLMetry's LangChain envelope of a ToolMessage (0046): its status, or its content
    (_TOOL_MESSAGE % ("no such job", "error"), True),
    (_TOOL_MESSAGE % ('{\\"error\\": {\\"message\\": \\"deep\\"}, \\"id\\": 7}', "error"), True),
    (_TOOL_MESSAGE % ('{\\"error\\": \\"quota\\", \\"code\\": 429}', "success"), True),
    (_TOOL_MESSAGE % ('{\\"isError\\": true, \\"content\\": \\"x\\"}', "error"), True),
    (_TOOL_MESSAGE % ("pending", "success"), False),
    (_TOOL_MESSAGE.replace("ToolMessage", "AIMessage") % ("no", "error"), False),
    # LangSmith's plain ToolMessage (0050's result, 0051's status): the same rule
    (_PLAIN_MESSAGE % ("no such job", "tool", "error"), True),
    (_PLAIN_MESSAGE % ('{\\"error\\": \\"quota\\", \\"code\\": 429}', "tool", "error"), True),
    (_PLAIN_MESSAGE % ("pending", "tool", "success"), False),
    (_PLAIN_MESSAGE % ("no", "ai", "error"), False),
]
"""One table for both readers: :func:`returned_error` and the span model's SQL (migrations 0041,
0043, 0046, 0051) must say the same of each (envelope or not, type, message)."""


def _as_is(result: str) -> str:
    return result


CONVENTIONS: dict[str, tuple[dict[str, str], str, Callable[[str], str]]] = {
    # convention: (the attributes that make a span its tool call, its result attribute, how the
    # convention writes a result there)
    "genai": ({A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL}, "gen_ai.tool.call.result", _as_is),
    "openinference": ({"openinference.span.kind": "TOOL"}, "output.value", _as_is),
    "traceloop": ({"traceloop.span.kind": "tool"}, "traceloop.entity.output", _as_is),
    # LangSmith's OpenTelemetry export: a run's outputs in a bare gen_ai.completion (0050)
    "langsmith": (
        {A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, "langsmith.span.kind": "tool"},
        A.GEN_AI_COMPLETION,
        _as_is,
    ),
    "langfuse": ({A.LF_OBSERVATION_TYPE: "tool"}, "langfuse.observation.output", _as_is),
    # MLflow JSON-encodes a function's return value: a dict is the object, a string a JSON string
    "mlflow": ({"mlflow.spanType": '"TOOL"'}, "mlflow.spanOutputs", _as_is),
    "mlflow-string": ({"mlflow.spanType": '"TOOL"'}, "mlflow.spanOutputs", json.dumps),
}


def _tool(convention: str, result: str) -> dict[str, str]:
    """The attributes of ``convention``'s tool call span that returned ``result``."""
    attributes, key, written = CONVENTIONS[convention]
    return {**attributes, key: written(result)}


MCP_ERROR = json.dumps({"isError": True, "content": [{"type": "text", "text": "gateway down"}]})


def _exported(url: str, spans: Sequence[tuple[str, dict[str, Any], Status | None]]) -> str:
    """One trace through the real OTel SDK's OTLP/HTTP exporter: an agent run over these
    spans (name, attributes, status set or None); its trace id."""
    provider = TracerProvider(resource=Resource.create({"service.name": "returner"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    tracer = provider.get_tracer("test")
    op = A.GEN_AI_OPERATION_NAME
    with tracer.start_as_current_span("agent", attributes={op: "invoke_agent"}) as run:
        for name, attributes, status in spans:
            with tracer.start_as_current_span(name, attributes=attributes) as span:
                if status is not None:
                    span.set_status(status)
        trace_id = format(run.get_span_context().trace_id, "032x")
    assert provider.force_flush(10_000)
    provider.shutdown()
    return trace_id


def test_the_sql_rule_and_returned_error_agree_on_every_case(
    collector: BackgroundServer,
) -> None:
    """Each case as the result of a tool call of each convention: what the span model stored of
    it (0041's columns) is what ``returned_error`` says of it, and the table's label holds for
    both."""
    spans = [(f"{c} {i}", _tool(c, r), None) for c in CONVENTIONS for i, (r, _) in enumerate(CASES)]
    trace_id = _exported(collector.url, spans)
    wait_for_trace(collector.url, trace_id, len(spans) + 1)
    rows = collector.app.state.collector.store.query(
        "SELECT SpanName AS name, SpanModelReturned AS returned, SpanModelReturnedType AS type, "
        "SpanModelReturnedMessage AS message FROM otel_traces WHERE TraceId = {t:String} "
        "AND ParentSpanId != ''",
        {"t": trace_id},
    )
    stored = {r["name"]: (r["type"], r["message"]) if r["returned"] else None for r in rows}
    assert len(stored) == len(spans)
    for convention in CONVENTIONS:
        for i, (result, envelope) in enumerate(CASES):
            said = returned_error(result)
            assert (said is not None, stored[f"{convention} {i}"]) == (envelope, said), (
                convention,
                result,
            )


def test_a_tool_call_that_returned_an_error_failed_in_every_convention(
    collector: BackgroundServer,
) -> None:
    """An MCP ``isError`` result on an OK or UNSET tool span of each convention: Error in the
    trace API (with the envelope's message), in ``planscope_tool_calls`` and for the analyzer's
    loader; a mention stays as it was; an explicit ERROR (a status, a Langfuse level) keeps its
    own message; planscope's own tool span and a non-tool span of each convention are not read
    so."""
    ok = Status(StatusCode.OK)
    spans: list[tuple[str, dict[str, Any], Status | None]] = []
    for name in CONVENTIONS:
        spans += [
            (f"{name}-unset", _tool(name, MCP_ERROR), None),
            (f"{name}-ok", _tool(name, MCP_ERROR), ok),
            (f"{name}-mention", _tool(name, '{"errors": [], "error": null}'), ok),
        ]
    level = {"langfuse.observation.level": "ERROR", "langfuse.observation.status_message": "own"}
    not_tools = {
        "chain": {"openinference.span.kind": "CHAIN", "output.value": MCP_ERROR},
        "lf-span": {A.LF_OBSERVATION_TYPE: "span", "langfuse.observation.output": MCP_ERROR},
        "lf-generation": {
            A.LF_OBSERVATION_TYPE: "generation",
            "langfuse.observation.output": MCP_ERROR,
        },
        "ml-chain": {"mlflow.spanType": '"CHAIN"', "mlflow.spanOutputs": MCP_ERROR},
        "ml-llm": {"mlflow.spanType": '"LLM"', "mlflow.spanOutputs": json.dumps(MCP_ERROR)},
    }
    spans += [
        ("raised", _tool("genai", MCP_ERROR), Status(StatusCode.ERROR, "own message")),
        ("lf-level", {**_tool("langfuse", MCP_ERROR), **level}, None),
        ("own", {A.SPAN_KIND: A.KIND_TOOL, "gen_ai.tool.call.result": MCP_ERROR}, None),
        *((n, attributes, None) for n, attributes in not_tools.items()),
    ]  # fmt: skip
    trace_id = _exported(collector.url, spans)
    detail = wait_for_trace(collector.url, trace_id, len(spans) + 1)
    by_name = {s["name"]: s for s in detail["spans"]}
    failed = {n for c in CONVENTIONS for n in (f"{c}-unset", f"{c}-ok")}
    status = {n: (s["status_code"], s["status_message"]) for n, s in by_name.items()}
    assert status == {
        "agent": ("Unset", ""),
        **{n: ("Error", "gateway down") for n in failed},
        **{f"{c}-mention": ("Ok", "") for c in CONVENTIONS},
        "raised": ("Error", "own message"),
        "lf-level": ("Error", "own"),
        "own": ("Unset", ""),
        **{n: ("Unset", "") for n in not_tools},
    }
    assert detail["metrics"]["failed_tool_calls"] == len(failed) + 2

    store = collector.app.state.collector.store
    collector.app.state.collector.writer.drain()
    typed = store.query(
        "SELECT SpanId AS span, StatusCode AS status FROM planscope_tool_calls "
        "WHERE TraceId = {t:String}",
        {"t": trace_id},
    )
    names = {s["span_id"]: n for n, s in by_name.items()}
    assert {names[r["span"]]: r["status"] for r in typed} == {
        n: status[n][0] for n in names.values() if n != "agent" and n not in not_tools
    }
    t = load_traces(store, "default", [trace_id])[trace_id]
    loaded = {names[c.span_id]: c.status_code for c in t.tools}
    assert {n for n, s in loaded.items() if s == "Error"} == failed | {"raised", "lf-level"}


def _refund_agent(collector: BackgroundServer, result: str) -> str:
    """An executor on the OpenAI Agents SDK, traced by OpenInference's instrumentor into the
    collector: it calls ``issue_refund``, which answers ``result`` every time (the fake model
    calls it again after a result that looks failed, until it gives up); its trace id."""

    def issue_refund(order_id: str) -> dict[str, Any]:
        """Refund an order by its id."""
        return dict(json.loads(result))

    async def flow(base_url: str) -> None:
        model = OpenAIChatCompletionsModel(
            model=MODEL, openai_client=AsyncOpenAI(base_url=base_url, api_key="test")
        )
        executor = Agent(
            name="executor",
            instructions="You are the executor. Do the step you are given with your tools.",
            model=model,
            tools=[function_tool(issue_refund)],
        )
        with trace("refund-agent"):
            await Runner.run(
                executor, "Refund order 42 with issue_refund", max_turns=MAX_TOOL_ATTEMPTS + 3
            )

    provider = TracerProvider(resource=Resource.create({"service.name": "mcp-agent"}))
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{collector.url}/v1/traces"))
    )
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer() as server:
            asyncio.run(flow(server.base_url("agents")))
    finally:
        instrumentor.uninstrument()
    assert provider.force_flush(10_000)
    provider.shutdown()
    return _only_trace(collector, "mcp-agent")


def _only_trace(collector: BackgroundServer, service: str) -> str:
    """The id of the one trace ``service`` sent, once the writer has stored what it received."""
    collector.app.state.collector.writer.drain()
    rows = collector.app.state.collector.store.query(
        "SELECT DISTINCT TraceId AS t FROM otel_traces WHERE ServiceName = {s:String}",
        {"s": service},
    )
    (trace_id,) = [r["t"] for r in rows]
    return str(trace_id)


def _played(collector: BackgroundServer, module: str, call: str, service: str) -> Any:
    """The loaded trace ``service`` sent when ``module``'s ``call`` played in a child process
    (an instrumentor that patches a library for good stays out of the test process)."""
    from tests.conftest import wait_for_trace

    code = f"from {module} import {call}\n{call}({collector.url!r})\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    trace_id = _only_trace(collector, service)
    wait_for_trace(collector.url, trace_id, 1)
    store = collector.app.state.collector.store
    return load_traces(store, "default", [trace_id])[trace_id]


def test_an_mcp_tool_error_retried_by_an_openai_agent_is_a_runaway_loop(
    collector: BackgroundServer,
) -> None:
    """The OpenAI Agents SDK traced by OpenInference: its function tool returns MCP's
    ``isError`` result (the instrumentation says OK or nothing on every tool span), the model
    calls it again until it gives up. Every call failed in the trace API and in
    ``planscope_tool_calls``, and the analyzer finds the loop at that tool."""
    _every_call_failed(collector, _refund_agent(collector, MCP_ERROR), "openinference")


def test_an_agent_tool_whose_result_only_mentions_an_error_stays_ok(
    collector: BackgroundServer,
) -> None:
    """The same agent whose tool answers a result that only mentions an error (``"errors":
    []``, ``"error": null``; the fake model calls it again, as after a failure): every call
    stays as the instrumentation said, for the tool calls table and the analyzer."""
    trace_id = _refund_agent(collector, '{"refund": "r-1", "errors": [], "error": null}')
    store = collector.app.state.collector.store
    calls = store.query(
        "SELECT StatusCode AS status FROM planscope_tool_calls WHERE TraceId = {t:String}",
        {"t": trace_id},
    )
    assert calls and {c["status"] for c in calls} <= {"Ok", "Unset"}
    t = load_traces(store, "default", [trace_id])[trace_id]
    assert t.tools and not any(c.failed for c in t.tools)


def _sdk_agent(collector: BackgroundServer, source: str, result: str, as_string: bool) -> str:
    """An agent traced by ``source``'s real SDK into the collector whose tool returns ``result``
    (a dict, or with ``as_string`` its JSON text) and is called again while it looks failed
    (tests/collector/_returning_sdks.py, in a process of its own); its trace id."""
    command = [sys.executable, "-m", "tests.collector._returning_sdks", source, collector.url]
    command += [result, *(["--as-string"] if as_string else [])]
    subprocess.run(command, check=True, timeout=300)
    return _only_trace(collector, f"returning-{source}")


@pytest.mark.parametrize(
    ("source", "as_string"), [("langfuse", False), ("mlflow", False), ("mlflow", True)]
)
def test_a_langfuse_or_mlflow_tool_returning_an_error_retried_is_a_runaway_loop(
    collector: BackgroundServer, source: str, as_string: bool
) -> None:
    """Langfuse's ``@observe(as_type="tool")`` or MLflow's ``@mlflow.trace(span_type=TOOL)``
    on a tool that returns MCP's ``isError`` result (a dict, or for MLflow also its JSON text:
    a JSON string in ``mlflow.spanOutputs``), retried by its agent until it gives up: the SDK
    says UNSET or OK on every tool span, every call failed in ``planscope_tool_calls`` and the
    trace API, and the analyzer finds the loop at that tool."""
    _every_call_failed(collector, _sdk_agent(collector, source, MCP_ERROR, as_string), source)


@pytest.mark.parametrize("source", ["langfuse", "mlflow"])
def test_a_langfuse_or_mlflow_tool_whose_result_only_mentions_an_error_stays_ok(
    collector: BackgroundServer, source: str
) -> None:
    """The same agents whose tool answers a result that only mentions an error (the agent
    calls it again, as after a failure): every call stays as the SDK said."""
    trace_id = _sdk_agent(collector, source, '{"refund": "r-1", "errors": [], "error": null}', True)
    store = collector.app.state.collector.store
    calls = store.query(
        "SELECT StatusCode AS status FROM planscope_tool_calls WHERE TraceId = {t:String}",
        {"t": trace_id},
    )
    assert len(calls) == MAX_TOOL_ATTEMPTS and {c["status"] for c in calls} <= {"Ok", "Unset"}
    t = load_traces(store, "default", [trace_id])[trace_id]
    assert t.tools and not any(c.failed for c in t.tools)


def _every_call_failed(collector: BackgroundServer, trace_id: str, source: str) -> None:
    """Every ``issue_refund`` call of the trace, which its instrumentation said was OK or
    UNSET, failed with the envelope's message in ``planscope_tool_calls`` and the trace API,
    and the analyzer's runaway loop at that tool names them as its evidence."""
    store = collector.app.state.collector.store
    calls = store.query(
        "SELECT SpanId AS span, ToolName AS tool, StatusCode AS status, Source AS source "
        "FROM planscope_tool_calls WHERE TraceId = {t:String}",
        {"t": trace_id},
    )
    assert len(calls) == MAX_TOOL_ATTEMPTS
    assert {(c["tool"], c["status"], c["source"]) for c in calls} == {
        ("issue_refund", "Error", source)
    }
    raw = store.query(
        "SELECT DISTINCT StatusCode AS raw FROM otel_traces WHERE TraceId = {t:String} "
        "AND SpanModelKind = 'tool'",
        {"t": trace_id},
    )
    assert {r["raw"] for r in raw} <= {"Ok", "Unset"}  # the instrumentation said no error
    detail = wait_for_trace(collector.url, trace_id, MAX_TOOL_ATTEMPTS + 1)
    tools = [s for s in detail["spans"] if s["span_id"] in {c["span"] for c in calls}]
    assert {(s["status_code"], s["status_message"]) for s in tools} == {("Error", "gateway down")}

    result = Analyzer(store, settle_seconds=0).analyze("default", [trace_id], write=False)
    loops = [f for f in result.findings if f.kind == "runaway_loop"]
    assert loops and {f.component for f in loops} == {"issue_refund"}
    assert set(loops[0].evidence) & {c["span"] for c in calls}

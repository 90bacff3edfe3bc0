"""A tool call's result is what its tool returned (migration 0046): OpenLLMetry's LangChain
instrumentor records a tool's output inside its callback's envelope (``{"output": ...,
"kwargs": ...}``), a tool called with a tool call returning a serialised ``ToolMessage``; the
stored result is the message's content. The SQL (``SpanModelToolResult``, the tool calls
table's ``Result``) and :func:`planscope_collector._returned.tool_result` are checked on one
table of cases (:data:`RESULTS`); then a LangGraph ``ToolNode`` under the real instrumentor:
identical answers of a poll are identical results (the runaway detector's poll that never
ended), and a tool's handled ``ToolException`` (a ``ToolMessage`` whose status is ``error``)
is a failed call."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import ToolException, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.langchain import LangchainInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from planscope import semconv as A
from planscope_analyzer import Analyzer, load_traces
from planscope_collector import BackgroundServer
from planscope_collector._returned import tool_result

from tests.conftest import wait_for_trace

from .test_returned_errors import _exported, _only_trace


def _message(content: Any, status: str = "success", **fields: Any) -> str:
    """OpenLLMetry's envelope of a ToolMessage with this content, as the instrumentor writes it."""
    message = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", "ToolMessage"],
        "kwargs": {"content": content, "type": "tool", "name": "poll", "tool_call_id": "c1",
                   "status": status, **fields},
    }  # fmt: skip
    return json.dumps({"output": message, "kwargs": {"tags": [], "name": "poll"}})


def _llamaindex(raw: Any, is_error: bool = False) -> str:
    """A LlamaIndex ToolCallResult as OpenLLMetry records a call_tool step's output."""
    output = {
        "blocks": [{"block_type": "text", "text": str(raw)}],
        "tool_name": "poll",
        "raw_input": {"job": "a"},
        "raw_output": raw,
        "is_error": is_error,
    }
    return json.dumps({"tool_name": "poll", "tool_kwargs": {"job": "a"}, "tool_id": "c1",
                       "tool_output": output, "return_direct": False})  # fmt: skip


def _plain(content: Any, **fields: Any) -> str:
    """LangSmith's OpenTelemetry export's outputs of a tool run: the ToolMessage as a plain
    object (0050)."""
    message = {"content": content, "additional_kwargs": {}, "response_metadata": {},
               "type": "tool", "name": "poll", "tool_call_id": "c1", "status": "success",
               **fields}  # fmt: skip
    return json.dumps({"output": message}, separators=(",", ":"))


RESULTS: list[tuple[str, str]] = [
    # (a tool span's recorded result, what the tool returned)
    (_message("pending"), "pending"),
    (_message('{"job": "a", "n": 1}'), '{"job": "a", "n": 1}'),
    (_message('caf\u00e9 "x"\n2'), 'caf\u00e9 "x"\n2'),
    (_message([{"type": "text", "text": "a"}, "b"]), '[{"type":"text","text":"a"},"b"]'),
    (_message("no such job", "error"), "no such job"),
    (_message(""), ""),
    # a tool invoked without a tool call: its return value itself
    ('{"output": "pending", "kwargs": {"tags": [], "name": "poll"}}', "pending"),
    ('{"output": {"rows": [1, 2], "ok": true}, "kwargs": {}}', '{"rows":[1,2],"ok":true}'),
    ('{"output": 3, "kwargs": {}}', "3"),
    ('{"output": null, "kwargs": {}}', "null"),
    # a LangChain message of another kind is the output as it is
    (
        '{"output": {"lc": 1, "type": "constructor", "id": ["AIMessage"], "kwargs": {}}, '
        '"kwargs": {}}',
        '{"lc":1,"type":"constructor","id":["AIMessage"],"kwargs":{}}',
    ),
    # LlamaIndex's ToolCallResult (OpenLLMetry's call_tool step, 0049): its raw output
    (_llamaindex("pending"), "pending"),
    (_llamaindex({"rows": [1, 2]}), '{"rows":[1,2]}'),
    (_llamaindex("dome [hold] window 3", is_error=True), "dome [hold] window 3"),
    ('{"tool_name": "poll", "tool_output": "x"}', '{"tool_name": "poll", "tool_output": "x"}'),
    # LangSmith's tool run outputs (0050): the message's content
    (_plain("pending"), "pending"),
    (_plain([{"type": "text", "text": "a"}]), '[{"type":"text","text":"a"}]'),
    (_plain("no such job", status="error"), "no such job"),
    (
        '{"output": {"content": "x", "type": "ai", "tool_call_id": "c1"}}',
        '{"output": {"content": "x", "type": "ai", "tool_call_id": "c1"}}',
    ),
    (
        '{"output": {"type": "tool", "tool_call_id": "c1"}}',
        '{"output": {"type": "tool", "tool_call_id": "c1"}}',
    ),
    # not the envelope: unchanged
    ('{"output": "x"}', '{"output": "x"}'),
    ('{"output": "x", "kwargs": "y"}', '{"output": "x", "kwargs": "y"}'),
    ('{"output": "x", "kwargs": {}, "extra": 1}', '{"output": "x", "kwargs": {}, "extra": 1}'),
    ('{"outputs": {"a": 1}, "kwargs": {}}', '{"outputs": {"a": 1}, "kwargs": {}}'),
    ('{"kwargs": {}, "output": "x"}', '{"kwargs": {}, "output": "x"}'),
    ('{"output": "x", "kwargs": {}', '{"output": "x", "kwargs": {}'),
    ("pending", "pending"),
    ("", ""),
]
"""One table for both readers: :func:`tool_result` and the span model's SQL (0046, 0050)."""


def test_the_sql_and_tool_result_agree_on_every_case(collector: BackgroundServer) -> None:
    """Each case as the recorded result of an OpenLLMetry tool span (and a GenAI one, a LangSmith
    one): what the tool calls table stored and what ``tool_result`` says are the table's
    result."""
    conventions = {
        "traceloop": {"traceloop.span.kind": "tool", "traceloop.entity.output": "{}"},
        "genai": {A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_CALL_RESULT: "{}"},
        "langsmith": {A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_COMPLETION: "{}"},
    }
    spans = [
        (f"{c} {i}", {**kind, list(kind)[1]: recorded}, None)
        for c, kind in conventions.items()
        for i, (recorded, _) in enumerate(RESULTS)
    ]
    trace_id = _exported(collector.url, spans)
    wait_for_trace(collector.url, trace_id, len(spans) + 1)
    collector.app.state.collector.writer.drain()
    rows = collector.app.state.collector.store.query(
        "SELECT o.SpanName AS name, c.Result AS result FROM planscope_tool_calls AS c "
        "INNER JOIN otel_traces AS o USING (TraceId, SpanId) WHERE TraceId = {t:String}",
        {"t": trace_id},
    )
    stored = {r["name"]: r["result"] for r in rows}
    for c in conventions:
        for i, (recorded, result) in enumerate(RESULTS):
            assert (tool_result(recorded), stored[f"{c} {i}"]) == (result, result), recorded


@tool
def poll(job: str) -> str:
    """Poll a job."""
    return "pending"


@tool
def cancel(job: str) -> str:
    """Cancel a job."""
    raise ToolException(f"no such job {job}")


cancel.handle_tool_error = True


def play_polling_graph(url: str, polls: int) -> None:
    """A LangGraph graph traced by OpenLLMetry's LangChain instrumentor into the collector at
    ``url``: its ToolNode polls a job ``polls`` times (the same arguments, the same answer) and
    cancels it (the tool's ToolException handled: a ToolMessage with status error), then a node
    gives up (raises). Run in a child process (:func:`_polling_graph`): OpenLLMetry's
    instrumentor keeps its first tracer provider after ``uninstrument``, which would capture the
    corpus's OpenLLMetry plays later in the same process."""
    calls = [{"name": "poll", "args": {"job": "a"}, "id": f"p{i}"} for i in range(polls)]
    calls.append({"name": "cancel", "args": {"job": "a"}, "id": "c"})

    def give_up(state: MessagesState) -> dict[str, Any]:
        raise RuntimeError("job never finished")

    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode([poll, cancel]))
    graph.add_node("give_up", give_up)
    graph.add_edge(START, "tools")
    graph.add_edge("tools", "give_up")
    graph.add_edge("give_up", END)
    provider = TracerProvider(resource=Resource.create({"service.name": "poller"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    instrumentor = LangchainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with pytest.raises(RuntimeError, match="never finished"):
            graph.compile().invoke({"messages": [AIMessage(content="", tool_calls=calls)]})
    finally:
        instrumentor.uninstrument()
    assert provider.force_flush(10_000)
    provider.shutdown()


def _polling_graph(collector: BackgroundServer, polls: int) -> str:
    """:func:`play_polling_graph` in a child process; the trace id it stored."""
    code = (
        "from tests.collector.test_tool_results import play_polling_graph\n"
        f"play_polling_graph({collector.url!r}, {polls})\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return _only_trace(collector, "poller")


def test_a_langgraph_tool_result_is_its_content_and_a_handled_error_failed(
    collector: BackgroundServer,
) -> None:
    """Through the real instrumentor: each poll's stored result is the tool's answer (the
    same for every call, not the envelope with its tool_call_id), the cancel that LangChain
    handled failed with its message, in the tool calls table and for the analyzer; the run
    that gave up with its poll's answer never changing is a runaway loop."""
    trace_id = _polling_graph(collector, polls=5)
    store = collector.app.state.collector.store
    calls = store.query(
        "SELECT ToolName AS tool, Result AS result, StatusCode AS status FROM "
        "planscope_tool_calls WHERE TraceId = {t:String} ORDER BY Start, tool",
        {"t": trace_id},
    )
    assert sorted((c["tool"], c["result"], c["status"]) for c in calls) == sorted(
        [("poll", "pending", "Unset")] * 5 + [("cancel", "no such job a", "Error")]
    )
    detail = wait_for_trace(collector.url, trace_id, 1)
    failed = [s for s in detail["spans"] if s["name"] == "execute_tool cancel"]
    assert [(s["status_code"], s["status_message"]) for s in failed] == [("Error", "no such job a")]
    t = load_traces(store, "default", [trace_id])[trace_id]
    assert sorted((c.tool, c.result, c.failed) for c in t.tools) == sorted(
        [("poll", "pending", False)] * 5 + [("cancel", "no such job a", True)]
    )
    result = Analyzer(store, settle_seconds=0).analyze("default", [trace_id], write=False)
    loops = [f for f in result.findings if f.kind == A.FINDING_RUNAWAY_LOOP]
    assert [f.component for f in loops] == ["poll"], loops

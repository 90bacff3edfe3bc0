"""LlamaIndex's native OpenTelemetry integration in the span model (migration 0056): its spans
say what they are only by their names (``Class.method``) and LlamaIndex's instrumentation events,
so a tool's ``acall`` span is a tool call named by the ``ToolCall`` its workflow step was handed
(failed when the tool raised), a span holding an LLM's chat events is a model call whose answer
is its ``LLMChatEndEvent``'s blocks, and an agent's run is a step attempt. A bakery's app traced
by the real ``llama-index-observability-otel`` handlers (a ``FunctionAgent`` on LlamaIndex's
``MockFunctionCallingLLM``, a ``MockLLM`` planner; no network), through the real OTel SDK's
OTLP/HTTP exporter into a real collector."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import llama_index_instrumentation as instrument
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM, MockLLM
from llama_index.core.tools import FunctionTool
from llama_index.observability.otel.base import (
    OTelCompatibleEventHandler,
    OTelCompatibleSpanHandler,
)
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from planscope import semconv as A
from planscope_collector import BackgroundServer, observed

from tests.conftest import wait_for_trace

_dispatcher = instrument.get_dispatcher(__name__)


def reserve_oven(oven: str) -> str:
    """Reserve an oven for the morning bake."""
    raise ValueError(f"oven {oven} is cooling down")


class _Bakery:
    """A bakery's app: a planner's chat call, then a baker agent that tries the oven twice."""

    def __init__(self) -> None:
        self.turns = 0

    def _respond(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        # the baker calls the oven twice, then gives up
        self.turns += 1
        if self.turns <= 2:
            call = ToolCallBlock(
                tool_call_id=f"c{self.turns}", tool_name="reserve_oven", tool_kwargs={"oven": "B"}
            )
            return ChatMessage(role="assistant", blocks=[call])
        return ChatMessage(role="assistant", content="no oven today")

    @_dispatcher.span
    async def bake(self) -> str:
        await MockLLM().achat([ChatMessage(role="user", content="1. proof 2. bake")])
        llm = MockFunctionCallingLLM(response_generator=self._respond)
        agent = FunctionAgent(tools=[FunctionTool.from_defaults(reserve_oven)], llm=llm)
        return str(await agent.run("reserve oven B"))


def _export(url: str) -> tuple[str, int]:
    """Run the bakery under the integration's span and event handlers (the ones
    ``LlamaIndexOpenTelemetry.start_registering`` puts on LlamaIndex's root dispatcher, here
    with a tracer of the test's own provider, not the global one) and export its spans; its
    trace id and span count."""
    provider = TracerProvider(resource=Resource.create({"service.name": "bakery"}))
    ended = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(ended))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    spans = OTelCompatibleSpanHandler(tracer=provider.get_tracer(A.LLAMAINDEX_SCOPE))
    events = OTelCompatibleEventHandler(span_handler=spans)
    root = instrument.get_dispatcher()
    root.add_span_handler(spans)
    root.add_event_handler(events)
    try:
        asyncio.run(_Bakery().bake())
    finally:
        root.span_handlers = [h for h in root.span_handlers if h is not spans]
        root.event_handlers = [h for h in root.event_handlers if h is not events]
    assert provider.force_flush(10_000)
    provider.shutdown()
    done = ended.get_finished_spans()
    return format(done[0].context.trace_id, "032x"), len(done)


def test_llamaindex_native_spans_are_tool_calls_model_calls_and_an_agent_run(
    collector: BackgroundServer,
) -> None:
    trace_id, spans = _export(collector.url)
    wait_for_trace(collector.url, trace_id, spans)
    collector.app.state.collector.writer.drain()
    store = collector.app.state.collector.store
    calls = store.query(
        "SELECT ToolName AS tool, StatusCode AS status "
        "FROM planscope_tool_calls WHERE TraceId = {t:String} ORDER BY Start",
        {"t": trace_id},
    )
    assert [(r["tool"], r["status"]) for r in calls] == [("reserve_oven", "Error")] * 2
    kinds = store.query(
        "SELECT SpanName AS name, SpanModelKind AS kind FROM otel_traces "
        "WHERE TraceId = {t:String} AND SpanModelKind NOT IN ('other', 'tool')",
        {"t": trace_id},
    )
    found = sorted((r["name"], r["kind"]) for r in kinds)
    assert ("_Bakery.bake", "run") in found
    assert ("FunctionAgent.run", "step") in found
    assert ("MockLLM.achat", "llm") in found
    assert ("MockFunctionCallingLLM.astream_chat", "llm") in found
    # the planner's answer: its chat end event's text blocks (MockLLM echoes the conversation)
    (said,) = store.query(
        f"SELECT {observed.answer_sql()} AS said FROM otel_traces "
        "WHERE TraceId = {t:String} AND SpanName = 'MockLLM.achat'",
        {"t": trace_id},
    )
    assert observed.answer(said["said"], "llm", False) == "user: 1. proof 2. bake\nassistant: "


def test_a_llamaindex_chat_or_completion_end_event_is_the_answer() -> None:
    blocks = '[{"block_type": "text", "text": "* TODO proof Proof the dough"}]'
    assert observed.answer({"LLMChatEndEvent": blocks}, "llm", False) == (
        "* TODO proof Proof the dough"
    )
    assert observed.answer({"LLMCompletionEndEvent": "1. proof"}, "llm", False) == "1. proof"
    assert observed.answer({"LLMChatEndEvent": blocks}, "tool", False) == ""

"""A planner-executor run played as plain GenAI spans from the real OTel SDK into a real chDB
store: a planner agent's chat call answers the plan, one executor agent run per step attempt
(the app names the step on it) makes one tool call. The plan-format tests (Python call lists,
HCL, repeated keys) build their traces with it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Span, Status, StatusCode, Tracer
from planscope import semconv as A
from planscope_collector.storage import Store

from tests.analyzer.conftest import otlp_rows
from tests.storage._spans import spans_ipc

AGENT = {A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT}


def chat(tracer: Tracer, asked: str, answer: str = "") -> None:
    """A ``chat`` span asked ``asked`` (a user message) and answering ``answer`` if given."""
    attributes = {
        A.GEN_AI_OPERATION_NAME: "chat",
        A.GEN_AI_INPUT_MESSAGES: json.dumps([{"role": "user", "content": asked}]),
    }
    if answer:
        out = [{"role": "assistant", "content": answer}]
        attributes[A.GEN_AI_OUTPUT_MESSAGES] = json.dumps(out)
    with tracer.start_as_current_span("chat gpt-4o", attributes=attributes):
        pass


def plan(tracer: Tracer, agent: str, asked: str, answer: str) -> None:
    """The planner agent's run: one chat call answering the plan."""
    with tracer.start_as_current_span(f"invoke_agent {agent}", attributes=AGENT):
        chat(tracer, asked, answer)


def attempt(
    tracer: Tracer,
    agent: str,
    step: tuple[str, str] | None,
    asked: str,
    tool: str,
    args: dict[str, Any],
    error: str = "",
) -> None:
    """One executor run, its step named by the app (``step``: attribute, step; None: only what
    it was asked names it), asked ``asked``: one tool call with ``args``, the call and the run
    failing with ``error`` when given."""
    named = {step[0]: step[1]} if step is not None else {}
    with tracer.start_as_current_span(
        f"invoke_agent {agent}", attributes={**AGENT, **named}
    ) as run:
        chat(tracer, asked)
        with tracer.start_as_current_span(
            f"execute_tool {tool}",
            attributes={
                A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
                A.GEN_AI_TOOL_NAME: tool,
                A.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps(args),
            },
            record_exception=False,
        ) as call:
            if error:
                call.set_status(Status(StatusCode.ERROR, error))
        if error:
            run.set_status(Status(StatusCode.ERROR, error))


def played(store: Store, scope: str, root: str, play: Callable[[Tracer, Span], None]) -> str:
    """Run ``play(tracer, root_span)`` under a root span ``root`` (tracer scope ``scope``),
    store its spans; the trace id."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer(scope)
    with tracer.start_as_current_span(root) as span:
        play(tracer, span)
        trace_id = format(span.get_span_context().trace_id, "032x")
    store.insert_spans(spans_ipc(otlp_rows(list(exporter.get_finished_spans()))))
    provider.shutdown()
    return trace_id

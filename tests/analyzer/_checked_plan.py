"""A planner-executor run as plain GenAI spans from the real OTel SDK, stored in a real chDB
store: a planner's chat call answers ``plan``, one executor run per step is told its step and
makes its tool call, then the app's own check (an agent run outside the plan that calls no
tool; or, ``plain``, the app's plain span after its passed ones) fails saying ``verdict``. The
plan-format tests and the checks-after-success tests build their traces with it."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode
from planscope import semconv as A
from planscope_collector.storage import Store

from tests.analyzer.conftest import otlp_rows
from tests.storage._spans import spans_ipc

Call = tuple[str, dict[str, Any], dict[str, Any]]
"""A step's tool, its arguments and its result."""


def checked_plan_run(
    store: Store,
    *,
    app: str,
    prompt: str,
    plan: str,
    calls: Mapping[str, Call],
    told: Callable[[int, str, str, dict[str, Any]], str],
    check: str,
    verdict: str,
    plain: bool = False,
    passed: Sequence[str] = (),
) -> str:
    """Store the run (root span ``app``, tracer scope ``app``); ``told(n, step, tool, args)``
    is what the executor of the n-th step is asked; ``plain``: the checks are the app's plain
    spans under the root, ``passed`` ending well one after the other, then ``check``; the
    trace id."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer(app)
    agent = {A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT}
    with tracer.start_as_current_span(app) as root:
        with tracer.start_as_current_span("invoke_agent planner", attributes=agent):
            messages = [{"role": "user", "content": prompt}]
            answer = [{"role": "assistant", "content": plan}]
            with tracer.start_as_current_span(
                "chat gpt-4o",
                attributes={
                    A.GEN_AI_OPERATION_NAME: "chat",
                    A.GEN_AI_INPUT_MESSAGES: json.dumps(messages),
                    A.GEN_AI_OUTPUT_MESSAGES: json.dumps(answer),
                },
            ):
                pass
        for n, (step, (tool, args, result)) in enumerate(calls.items(), 1):
            with tracer.start_as_current_span("invoke_agent executor", attributes=agent):
                order = [{"role": "user", "content": told(n, step, tool, args)}]
                with tracer.start_as_current_span(
                    "chat gpt-4o",
                    attributes={
                        A.GEN_AI_OPERATION_NAME: "chat",
                        A.GEN_AI_INPUT_MESSAGES: json.dumps(order),
                    },
                ):
                    pass
                with tracer.start_as_current_span(
                    f"execute_tool {tool}",
                    attributes={
                        A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
                        A.GEN_AI_TOOL_NAME: tool,
                        A.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps(args),
                        A.GEN_AI_TOOL_CALL_RESULT: json.dumps(result),
                    },
                ):
                    pass
        for name in passed if plain else ():
            with tracer.start_as_current_span(name):
                pass
        with tracer.start_as_current_span(
            check if plain else f"invoke_agent {check}",
            attributes={} if plain else agent,
            record_exception=False,
        ) as span:
            span.set_status(Status(StatusCode.ERROR, verdict))
        root.set_status(Status(StatusCode.ERROR, verdict))
        trace_id = format(root.get_span_context().trace_id, "032x")
    store.insert_spans(spans_ipc(otlp_rows(list(exporter.get_finished_spans()))))
    provider.shutdown()
    return trace_id

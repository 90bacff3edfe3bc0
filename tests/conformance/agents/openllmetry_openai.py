"""OpenLLMetry's (Traceloop's) OpenAI instrumentor. The agent's own spans carry the Traceloop
conventions (``traceloop.span.kind`` workflow / task / tool, ``traceloop.entity.*``), named
and attributed as traceloop-sdk's decorators name them, with the constants of
opentelemetry-semantic-conventions-ai. traceloop-sdk itself is not installed: it pulls in
~100 packages (every Traceloop instrumentor) and pins an older OTel SDK.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from openai import OpenAI
from opentelemetry.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.semconv_ai import SpanAttributes, TraceloopSpanKindValues
from opentelemetry.trace import Status, StatusCode

from ._openai_loop import no_chat_span, plan_and_execute

WORKFLOW = "refund-agent"


class TraceloopSpans:
    chat = staticmethod(no_chat_span)

    def __init__(self, provider: TracerProvider) -> None:
        self.tracer = provider.get_tracer("traceloop.tracer")

    @contextmanager
    def _entity(self, kind: TraceloopSpanKindValues, name: str, inputs: Any) -> Iterator[Any]:
        with self.tracer.start_as_current_span(f"{name}.{kind.value}") as span:
            span.set_attribute(SpanAttributes.TRACELOOP_SPAN_KIND, kind.value)
            span.set_attribute(SpanAttributes.TRACELOOP_ENTITY_NAME, name)
            span.set_attribute(SpanAttributes.TRACELOOP_WORKFLOW_NAME, WORKFLOW)
            if kind is not TraceloopSpanKindValues.WORKFLOW:
                span.set_attribute(SpanAttributes.TRACELOOP_ENTITY_PATH, WORKFLOW)
            span.set_attribute(
                SpanAttributes.TRACELOOP_ENTITY_INPUT, json.dumps({"args": inputs, "kwargs": {}})
            )
            yield span

    def run(self, objective: str) -> Any:
        return self._entity(TraceloopSpanKindValues.WORKFLOW, WORKFLOW, [objective])

    def step(self, step: dict[str, str]) -> Any:
        return self._entity(TraceloopSpanKindValues.TASK, step["id"], [step])

    def tool(self, name: str, arguments: str) -> Any:
        return self._entity(TraceloopSpanKindValues.TOOL, name, [json.loads(arguments)])

    def failed(self, span: Any, reason: str) -> None:
        span.set_attribute(SpanAttributes.TRACELOOP_ENTITY_OUTPUT, json.dumps(reason))
        span.set_status(Status(StatusCode.ERROR, reason))


def run(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    client = OpenAI(base_url=base_url, api_key="test")
    for scenario in scenarios:
        with mark(scenario):
            plan_and_execute(client, TraceloopSpans(provider), scenario)

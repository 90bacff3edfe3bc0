"""OpenInference's OpenAI instrumentor; the agent's own spans through OpenInference's tracer
(AGENT for the run, CHAIN per step, TOOL per tool call), as OpenInference documents."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from openai import OpenAI
from openinference.instrumentation import OITracer, TraceConfig
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode

from ._openai_loop import no_chat_span, plan_and_execute


class OpenInferenceSpans:
    chat = staticmethod(no_chat_span)

    def __init__(self, provider: TracerProvider) -> None:
        self.tracer = OITracer(provider.get_tracer(__name__), config=TraceConfig())

    @contextmanager
    def run(self, objective: str) -> Iterator[Any]:
        with self.tracer.start_as_current_span(
            "refund-agent", openinference_span_kind="agent"
        ) as span:
            span.set_input(objective)
            yield span

    @contextmanager
    def step(self, step: dict[str, str]) -> Iterator[Any]:
        with self.tracer.start_as_current_span(step["id"], openinference_span_kind="chain") as span:
            span.set_input(json.dumps(step), mime_type="application/json")
            yield span

    @contextmanager
    def tool(self, name: str, arguments: str) -> Iterator[Any]:
        with self.tracer.start_as_current_span(name, openinference_span_kind="tool") as span:
            span.set_tool(name=name, parameters=arguments)
            span.set_input(arguments, mime_type="application/json")
            yield span

    def failed(self, span: Any, reason: str) -> None:
        span.set_output(reason)
        span.set_status(Status(StatusCode.ERROR, reason))


def run(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    client = OpenAI(base_url=base_url, api_key="test")
    for scenario in scenarios:
        with mark(scenario):
            plan_and_execute(client, OpenInferenceSpans(provider), scenario)

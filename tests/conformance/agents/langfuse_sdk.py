"""Langfuse's Python SDK (OpenTelemetry-based since v3): the agent's observations through
``start_as_current_observation(as_type=...)`` (``agent`` for the run and for each step,
``tool`` per tool call) and its LLM calls through the ``langfuse.openai`` drop-in wrapper's
``generation`` observations, as Langfuse documents; no ``gen_ai.*`` attribute anywhere.

The Langfuse client's tracer provider is the suite's (its exporter sends to planscope); the
client's own span processor exports nowhere (no Langfuse host is ever contacted)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from langfuse import Langfuse
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from ._openai_loop import no_chat_span, plan_and_execute


class _Nowhere(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


class LangfuseSpans:
    chat = staticmethod(no_chat_span)

    def __init__(self, langfuse: Langfuse) -> None:
        self.langfuse = langfuse

    @contextmanager
    def run(self, objective: str) -> Iterator[Any]:
        with self.langfuse.start_as_current_observation(
            as_type="agent", name="refund-agent", input=objective
        ) as span:
            yield span

    @contextmanager
    def step(self, step: dict[str, str]) -> Iterator[Any]:
        with self.langfuse.start_as_current_observation(
            as_type="agent", name=step["id"], input=json.dumps(step)
        ) as span:
            yield span

    @contextmanager
    def tool(self, name: str, arguments: str) -> Iterator[Any]:
        with self.langfuse.start_as_current_observation(
            as_type="tool", name=name, input=json.loads(arguments)
        ) as span:
            yield span

    def failed(self, span: Any, reason: str) -> None:
        span.update(output=reason, level="ERROR", status_message=reason)


def run(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    from langfuse.openai import OpenAI  # the drop-in wrapper: generations for chat completions

    langfuse = Langfuse(
        public_key="pk-lf-conformance",
        secret_key="sk-lf-conformance",
        base_url="http://127.0.0.1:9",
        tracer_provider=provider,
        span_exporter=_Nowhere(),
    )
    client = OpenAI(base_url=base_url, api_key="test")
    for scenario in scenarios:
        with mark(scenario):
            plan_and_execute(client, LangfuseSpans(langfuse), scenario)
    langfuse.flush()

"""The LangGraph planner-executor graph of :mod:`.openinference_langgraph`, traced instead by
OpenLLMetry's (Traceloop's) LangChain instrumentor: ``traceloop.span.kind`` workflow (the graph),
task (each node visit, each inner runnable), tool (each tool), and an LLM span per model call
(``llm.request.type``, ``gen_ai.usage.*``)."""

from __future__ import annotations

from typing import Any

from opentelemetry.instrumentation.langchain import LangchainInstrumentor
from opentelemetry.sdk.trace import TracerProvider

from ._common import OBJECTIVE
from .openinference_langgraph import build


def run(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    LangchainInstrumentor().instrument(tracer_provider=provider)
    for scenario in scenarios:
        with mark(scenario):
            build(base_url, scenario).invoke({"objective": OBJECTIVE}, {"recursion_limit": 50})

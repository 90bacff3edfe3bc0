"""The LangGraph planner-executor graph of :mod:`.openinference_langgraph`, traced instead by
OpenLLMetry's (Traceloop's) LangChain instrumentor: an ``invoke_agent`` span for the graph over
its ``workflow`` span, a ``task`` per node visit and per routing function (GenAI operation
``execute_task``), ``execute_tool`` per tool and a ``chat`` span per model call, with the GenAI
attributes (``gen_ai.usage.*``, ``gen_ai.input.messages`` / ``output.messages``)."""

from __future__ import annotations

from typing import Any

from opentelemetry.instrumentation.langchain import LangchainInstrumentor
from opentelemetry.sdk.trace import TracerProvider

from .openinference_langgraph import invoke


def run(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    LangchainInstrumentor().instrument(tracer_provider=provider)
    invoke(base_url, scenarios, mark)

"""Plain OTel SDK spans that follow the GenAI semantic conventions, written by hand with the
OTel API: ``invoke_agent`` for the run and for each executor step, ``chat`` for every LLM call
(usage from the response), ``execute_tool`` for every tool call (``error.type`` on failure).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from openai import OpenAI
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanKind, Status, StatusCode

from ..fake_openai import MODEL
from ._openai_loop import Record, plan_and_execute


def _messages(messages: list[dict[str, Any]]) -> str:
    """Chat messages in the conventions' ``gen_ai.input.messages`` shape (role + parts)."""
    out = []
    for m in messages:
        parts: list[dict[str, Any]] = []
        if m.get("content"):
            parts.append({"type": "text", "content": m["content"]})
        for call in m.get("tool_calls") or []:
            fn = call["function"]
            parts.append(
                {
                    "type": "tool_call",
                    "id": call["id"],
                    "name": fn["name"],
                    "arguments": json.loads(fn["arguments"]),
                }
            )
        if m.get("role") == "tool":
            parts = [
                {"type": "tool_call_response", "id": m["tool_call_id"], "response": m["content"]}
            ]
        out.append({"role": m["role"], "parts": parts})
    return json.dumps(out)


class GenAISpans:
    def __init__(self, provider: TracerProvider) -> None:
        self.tracer = provider.get_tracer("refund-agent")

    @contextmanager
    def _agent(self, name: str, prompt: str) -> Iterator[Any]:
        with self.tracer.start_as_current_span(f"invoke_agent {name}") as span:
            span.set_attribute("gen_ai.operation.name", "invoke_agent")
            span.set_attribute("gen_ai.provider.name", "openai")
            span.set_attribute("gen_ai.agent.name", name)
            span.set_attribute("gen_ai.request.model", MODEL)
            span.set_attribute(
                "gen_ai.input.messages",
                json.dumps([{"role": "user", "parts": [{"type": "text", "content": prompt}]}]),
            )
            yield span

    def run(self, objective: str) -> Any:
        return self._agent("refund-agent", objective)

    def step(self, step: dict[str, str]) -> Any:
        return self._agent("executor", f"Step {step['id']}: {step['description']}")

    @contextmanager
    def tool(self, name: str, arguments: str) -> Iterator[Any]:
        with self.tracer.start_as_current_span(f"execute_tool {name}") as span:
            span.set_attribute("gen_ai.operation.name", "execute_tool")
            span.set_attribute("gen_ai.tool.name", name)
            span.set_attribute("gen_ai.tool.type", "function")
            span.set_attribute("gen_ai.tool.call.arguments", arguments)
            try:
                yield span
            except Exception as exc:
                span.set_attribute("error.type", type(exc).__qualname__)
                raise

    @contextmanager
    def chat(self, messages: list[dict[str, Any]]) -> Iterator[Record]:
        with self.tracer.start_as_current_span(f"chat {MODEL}", kind=SpanKind.CLIENT) as span:
            span.set_attribute("gen_ai.operation.name", "chat")
            span.set_attribute("gen_ai.provider.name", "openai")
            span.set_attribute("gen_ai.request.model", MODEL)
            span.set_attribute("gen_ai.input.messages", _messages(messages))

            def record(response: Any) -> None:
                message = response.choices[0].message.model_dump(exclude_none=True)
                span.set_attribute("gen_ai.response.model", response.model)
                span.set_attribute("gen_ai.response.id", response.id)
                span.set_attribute(
                    "gen_ai.response.finish_reasons", [response.choices[0].finish_reason]
                )
                span.set_attribute("gen_ai.usage.input_tokens", response.usage.prompt_tokens)
                span.set_attribute("gen_ai.usage.output_tokens", response.usage.completion_tokens)
                span.set_attribute("gen_ai.output.messages", _messages([message]))

            yield record

    def failed(self, span: Any, reason: str) -> None:
        span.set_attribute("error.type", "step_failed")
        span.set_status(Status(StatusCode.ERROR, reason))


def run(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    client = OpenAI(base_url=base_url, api_key="test")
    for scenario in scenarios:
        with mark(scenario):
            plan_and_execute(client, GenAISpans(provider), scenario)

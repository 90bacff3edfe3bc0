"""A planner-executor written against the ``openai`` client, for the sources that instrument
the client (OpenInference, OpenLLMetry) or that the agent traces by hand (GenAI spans).

What differs per source is only how the agent's own spans are made: :class:`Spans`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

from openai import OpenAI

from ..fake_openai import MODEL
from ._common import (
    EXECUTOR_PROMPT,
    OBJECTIVE,
    PLANNER_PROMPT,
    TOOL_SCHEMAS,
    ToolFailure,
    parse_plan,
    step_prompt,
    tools_for,
)

Record = Callable[[Any], None]
"""Called with the chat completion once it arrived (hand-made LLM spans record its usage)."""


class Spans(Protocol):
    """The agent's own spans around the LLM calls the instrumentor (if any) records."""

    def run(self, objective: str) -> AbstractContextManager[Any]: ...
    def step(self, step: dict[str, str]) -> AbstractContextManager[Any]: ...
    def tool(self, name: str, arguments: str) -> AbstractContextManager[Any]: ...
    def chat(self, messages: list[dict[str, Any]]) -> AbstractContextManager[Record]: ...
    def failed(self, span: Any, reason: str) -> None: ...


@contextmanager
def no_chat_span(messages: list[dict[str, Any]]) -> Iterator[Record]:
    """For sources whose instrumentor records the LLM calls."""
    yield lambda _response: None


def plan_and_execute(
    client: OpenAI,
    spans: Spans,
    scenario: str,
    tools: dict[str, Callable[..., str]] | None = None,
) -> None:
    """Plan with one LLM call, then run each step's tool loop; a step that gives up fails.
    ``tools``: the scenario's tools as the source wraps them (default: as they are)."""
    tools = {**tools_for(scenario), **(tools or {})}
    with spans.run(OBJECTIVE) as run:
        planner = [
            {"role": "system", "content": PLANNER_PROMPT},
            {"role": "user", "content": OBJECTIVE},
        ]
        with spans.chat(planner) as record:
            response = client.chat.completions.create(model=MODEL, messages=planner)  # type: ignore[arg-type]
            record(response)
        plan = parse_plan(response.choices[0].message.content or "[]")
        failed = []
        for step in plan:
            with spans.step(step) as span:
                answer = _execute(client, spans, tools, step)
                if answer.startswith("giving up"):
                    spans.failed(span, answer)
                    failed.append(step["id"])
        if failed:
            spans.failed(run, f"steps failed: {', '.join(failed)}")


def _execute(
    client: OpenAI, spans: Spans, tools: dict[str, Callable[..., str]], step: dict[str, str]
) -> str:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": EXECUTOR_PROMPT},
        {"role": "user", "content": step_prompt(step)},
    ]
    while True:
        with spans.chat(messages) as record:
            response = client.chat.completions.create(
                model=MODEL,
                messages=messages,  # type: ignore[arg-type]
                tools=TOOL_SCHEMAS,  # type: ignore[arg-type]
            )
            record(response)
        message = response.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            name, arguments = call.function.name, call.function.arguments  # type: ignore[union-attr]
            try:
                with spans.tool(name, arguments):
                    result = tools[name](**json.loads(arguments))
            except ToolFailure as exc:
                result = str(exc)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})

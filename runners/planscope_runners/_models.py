"""Chat models the runtime talks to: the :class:`ChatModel` protocol and its wire-free values.

Two implementations ship: :class:`OpenAIChatModel` (any OpenAI-compatible chat-completions
server: OpenAI, vLLM, Ollama, LM Studio) and :class:`~planscope_runners.ScriptedModel` (offline,
deterministic). The runtime wraps every call in a planscope LLM span and records the usage the
model reports, so both look the same in a trace.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import httpx

from ._errors import ModelError


@dataclass(frozen=True)
class ToolCall:
    """A tool invocation requested by a model."""

    name: str
    arguments: Mapping[str, Any]
    id: str = ""
    produces: str | None = None
    """The context key this call's result fills when its step produces several: offline
    models name it (``""``: none); unnamed (None), a step's keys are filled in call order."""


@dataclass(frozen=True)
class Message:
    """One chat message (``role`` is system | user | assistant | tool)."""

    role: str
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


@dataclass(frozen=True)
class ToolSchema:
    """A tool offered to the model, as a JSON-schema function definition."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True)
class Usage:
    """Tokens consumed by one call."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class ChatRequest:
    """What the runtime asks a model.

    ``purpose`` names the runtime's intent (``plan``, ``replan``, ``decompose``, ``act``,
    ``assess``, ``react``); ``hints`` carry structured data for offline models (the task, the
    step, the context). HTTP models ignore both and read only the messages and tools.
    """

    messages: tuple[Message, ...]
    purpose: str = "chat"
    tools: tuple[ToolSchema, ...] = ()
    json_output: bool = False
    max_tokens: int | None = None
    hints: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChatResponse:
    """What a model answered, with its usage and (when priced) cost."""

    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    model: str = ""
    finish_reason: str = "stop"
    cost_usd: float | None = None


@runtime_checkable
class ChatModel(Protocol):
    """A chat model. Implement ``complete`` to plug any provider into the runtime.

    >>> class Echo:
    ...     name, provider = "echo", "local"
    ...     def complete(self, request: ChatRequest) -> ChatResponse:
    ...         return ChatResponse(content=request.messages[-1].content)
    >>> isinstance(Echo(), ChatModel)
    True
    """

    name: str
    """The model id (recorded as ``gen_ai.request.model``)."""
    provider: str
    """The provider (recorded as ``gen_ai.provider.name``)."""

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Answer one request; raise :class:`ModelError` on transport or protocol failures."""
        ...


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, usage: Usage) -> float:
        return (
            usage.input_tokens * self.input_per_mtok + usage.output_tokens * self.output_per_mtok
        ) / 1e6


# Public list prices at the time of writing, used only to put a number on traces.
PRICES: Mapping[str, Price] = {
    "gpt-4o": Price(2.5, 10.0),
    "gpt-4o-mini": Price(0.15, 0.6),
    "gpt-4.1": Price(2.0, 8.0),
    "gpt-4.1-mini": Price(0.4, 1.6),
    "scripted-planner": Price(2.5, 10.0),
    "scripted-executor": Price(0.15, 0.6),
}


def _message_to_wire(message: Message) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments))},
            }
            for call in message.tool_calls
        ]
    if message.tool_call_id is not None:
        wire["tool_call_id"] = message.tool_call_id
    return wire


def _parse_tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    calls: list[ToolCall] = []
    for item in raw or ():
        function = item.get("function") or {}
        name = function.get("name")
        if not isinstance(name, str):
            raise ModelError(f"tool call without a function name: {item!r}")
        arguments = function.get("arguments") or "{}"
        try:
            parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
        except json.JSONDecodeError as exc:
            raise ModelError(f"tool call {name!r} has invalid JSON arguments: {exc}") from None
        if not isinstance(parsed, dict):
            raise ModelError(f"tool call {name!r} arguments must be an object")
        calls.append(ToolCall(name=name, arguments=parsed, id=str(item.get("id") or "")))
    return tuple(calls)


class OpenAIChatModel:
    """An OpenAI-compatible chat-completions client over httpx (tool calling, JSON mode, usage).

    >>> model = OpenAIChatModel("gpt-4o-mini", base_url="http://localhost:11434/v1")
    >>> model.name
    'gpt-4o-mini'
    """

    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        price: Price | None = None,
        client: httpx.Client | None = None,
    ) -> None:
        self.name = model
        self.base_url = base_url.rstrip("/")
        self.max_retries = max_retries
        self.price = price if price is not None else PRICES.get(model)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = client or httpx.Client(timeout=timeout, headers=headers)

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def _body(self, request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.name,
            "messages": [_message_to_wire(m) for m in request.messages],
            "temperature": 0,
        }
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": dict(t.parameters),
                    },
                }
                for t in request.tools
            ]
        if request.json_output:
            body["response_format"] = {"type": "json_object"}
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        return body

    def complete(self, request: ChatRequest) -> ChatResponse:
        """POST ``{base_url}/chat/completions``; retries 429/5xx/transport errors with back-off."""
        url = f"{self.base_url}/chat/completions"
        body = self._body(request)
        last: str = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(min(0.25 * 2 ** (attempt - 1), 2.0))
            try:
                response = self._client.post(url, json=body)
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code == 429 or response.status_code >= 500:
                last = f"HTTP {response.status_code}: {response.text[:200]}"
                continue
            if response.status_code >= 400:
                raise ModelError(
                    f"{url} answered HTTP {response.status_code}: {response.text[:300]}"
                )
            return self._parse(response)
        raise ModelError(f"{url} failed after {self.max_retries + 1} attempts: {last}")

    def _parse(self, response: httpx.Response) -> ChatResponse:
        try:
            data = response.json()
            choice = data["choices"][0]
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ModelError(f"not a chat-completions response: {exc!r}") from None
        raw_usage = data.get("usage") or {}
        usage = Usage(
            int(raw_usage.get("prompt_tokens") or 0), int(raw_usage.get("completion_tokens") or 0)
        )
        return ChatResponse(
            content=message.get("content"),
            tool_calls=_parse_tool_calls(message.get("tool_calls")),
            usage=usage,
            model=str(data.get("model") or self.name),
            finish_reason=str(choice.get("finish_reason") or "stop"),
            cost_usd=self.price.cost(usage) if self.price else None,
        )


def render_messages(messages: Sequence[Message]) -> str:
    """The text a model reads, for token estimates."""
    parts = []
    for m in messages:
        parts.append(f"{m.role}: {m.content or ''}")
        for call in m.tool_calls:
            parts.append(f"call {call.name}({json.dumps(dict(call.arguments), default=str)})")
    return "\n".join(parts)

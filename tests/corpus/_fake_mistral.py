"""A small fake of Mistral's chat completions API for the corpus: ``POST /{client}/v1/chat/
completions`` on a loopback port, answering the assistant message a scripted model decides,
non-streaming only.

As :mod:`._fake_anthropic` serves the Messages API: uvicorn in a thread (:mod:`._loopback`),
every answer a pure function of the request. The script (``respond``) gets the request body and
returns the assistant's ``content`` and ``tool_calls``; the server writes the rest of the API's
JSON around them (``id``, ``object``, ``created``, ``model``, ``finish_reason`` —
``tool_calls`` when the model calls a function, else ``stop`` — and ``usage`` counted from the
characters).

>>> completion({"model": "m", "messages": []}, Answer("hi"))["choices"][0]["finish_reason"]
'stop'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from ._loopback import Loopback

MODEL = "mistral-medium-latest"


@dataclass(frozen=True)
class Answer:
    """The assistant's message: its text and the functions it calls (name, arguments)."""

    content: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


Script = Callable[[dict[str, Any]], Answer]
"""A request body -> the assistant's answer."""


def _tokens(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


def completion(body: dict[str, Any], answer: Answer) -> dict[str, Any]:
    """The API's ``chat.completion`` object holding ``answer`` for one request body."""
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    tool_calls = [
        {
            # Mistral's tool call ids are nine alphanumerics
            "id": hashlib.sha256(f"{digest}/{n}".encode()).hexdigest()[:9],
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        for n, (name, args) in enumerate(answer.calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": answer.content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    prompt, output = _tokens([body.get("messages"), body.get("tools")]), _tokens(message)
    return {
        "id": digest[:32],
        "object": "chat.completion",
        "created": 1_790_000_000,
        "model": str(body.get("model") or MODEL),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": output,
            "total_tokens": prompt + output,
        },
    }


def _error(status: int, text: str) -> JSONResponse:
    return JSONResponse(
        {"object": "error", "message": text, "type": "invalid_request_error"}, status
    )


def create_app(respond: Script) -> FastAPI:
    """The route ``POST /{client}/v1/chat/completions``: a 422 for a body the API would refuse,
    else the answer."""
    app = FastAPI()

    @app.post("/{client}/v1/chat/completions", response_model=None)
    async def chat(client: str, request: Request) -> Any:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "body is not JSON")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return _error(422, "messages: Field required")
        if body.get("stream"):
            return _error(422, "streaming is not served here")
        return JSONResponse(completion(body, respond(body)))

    return app


class MistralServer(Loopback):
    """The fake chat completions API under uvicorn in a thread on a free loopback port.

    >>> with MistralServer(lambda body: Answer("ok")) as server:
    ...     server.server_url("me").endswith("/me")
    True
    """

    def __init__(self, respond: Script) -> None:
        super().__init__(create_app(respond), "fake Mistral")

    def server_url(self, client: str) -> str:
        """The SDK's ``server_url`` for one client (it posts to ``{server_url}/v1/chat/...``)."""
        return f"{self.origin}/{client}"

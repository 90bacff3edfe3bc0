"""A small fake of Anthropic's Messages API for the corpus: ``POST /{client}/v1/messages`` on a
loopback port, answering the content blocks a scripted model decides, non-streaming only.

As :mod:`tests.conformance.fake_openai` serves the OpenAI API: uvicorn in a thread, every answer
a pure function of the request. The script (``respond``) gets the request body and returns the
assistant's ``content`` blocks; the server writes the rest of the Messages API's JSON around
them (``id``, ``type``, ``role``, ``model``, ``stop_reason`` — ``tool_use`` when a ``tool_use``
block is in the answer, else ``end_turn`` — and ``usage`` counted from the characters).

``overloaded`` picks requests to answer first with the API's ``529 overloaded_error`` (a
``retry-after-ms`` header, so the SDK's retry is immediate); the retry of the same body is
answered. What the client finally gets back is the same either way.

>>> message({"model": "m", "messages": []}, [{"type": "text", "text": "hi"}])["stop_reason"]
'end_turn'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from ._loopback import Loopback

MODEL = "claude-sonnet-4-5"
Blocks = list[dict[str, Any]]
Script = Callable[[dict[str, Any]], Blocks]
"""A request body -> the assistant's content blocks (``text`` and ``tool_use``)."""


def _tokens(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


def message(body: dict[str, Any], content: Blocks) -> dict[str, Any]:
    """The Messages API's answer holding ``content`` for one request body."""
    called = any(block.get("type") == "tool_use" for block in content)
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    return {
        "id": f"msg_{digest[:24]}",
        "type": "message",
        "role": "assistant",
        "model": str(body.get("model") or MODEL),
        "content": content,
        "stop_reason": "tool_use" if called else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": _tokens([body.get("system"), body.get("messages"), body.get("tools")]),
            "output_tokens": _tokens(content),
        },
    }


def _error(status: int, kind: str, text: str, **headers: str) -> JSONResponse:
    said = {"type": "error", "error": {"type": kind, "message": text}}
    return JSONResponse(said, status_code=status, headers=headers)


def create_app(respond: Script, overloaded: Callable[[dict[str, Any]], bool]) -> FastAPI:
    """The route ``POST /{client}/v1/messages``: a 400 ``invalid_request_error`` for a body
    the API would refuse, a 529 the first time ``overloaded`` picks a body, else the answer."""
    app = FastAPI()
    refused_once: set[str] = set()

    @app.post("/{client}/v1/messages", response_model=None)
    async def messages(client: str, request: Request) -> Any:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "invalid_request_error", "body is not JSON")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return _error(400, "invalid_request_error", "messages: Field required")
        if not isinstance(body.get("max_tokens"), int):
            return _error(400, "invalid_request_error", "max_tokens: Field required")
        if body.get("stream"):
            return _error(400, "invalid_request_error", "streaming is not served here")
        key = json.dumps(body, sort_keys=True)
        if overloaded(body) and key not in refused_once:
            refused_once.add(key)
            return _error(529, "overloaded_error", "Overloaded", **{"retry-after-ms": "1"})
        return JSONResponse(message(body, respond(body)))

    return app


def _never(body: dict[str, Any]) -> bool:
    return False


class AnthropicServer(Loopback):
    """The fake Messages API under uvicorn in a thread on a free loopback port.

    >>> with AnthropicServer(lambda body: [{"type": "text", "text": "ok"}]) as server:
    ...     server.base_url("me").endswith("/me")
    True
    """

    def __init__(
        self, respond: Script, overloaded: Callable[[dict[str, Any]], bool] = _never
    ) -> None:
        super().__init__(create_app(respond, overloaded), "fake Anthropic")

    def base_url(self, client: str) -> str:
        """The SDK's ``base_url`` for one client (it posts to ``{base_url}/v1/messages``)."""
        return f"{self.origin}/{client}"

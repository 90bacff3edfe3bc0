"""A small fake of Cohere's v2 Chat API for the corpus: ``POST /v2/chat`` on a loopback port,
answering the message a scripted model decides, non-streaming only.

As :mod:`tests.corpus._fake_ollama` serves Ollama's API: uvicorn in a thread (the corpus's
:class:`~tests.corpus._loopback.Loopback`), every answer a pure function of the request. The
script (``respond``) gets the request body (what ``cohere.ClientV2.chat`` sends: ``model``,
``messages``, ``tools``, ``stream`` false) and returns the assistant's ``message`` as Cohere's v2
API documents it: ``content`` (a list of ``{"type": "text", "text"}`` parts) or ``tool_plan``
and ``tool_calls`` (each ``{"id", "type": "function", "function": {"name", "arguments"}}`` with
the arguments a JSON string); the server writes the rest of the response around it (``id``,
``finish_reason`` ``TOOL_CALL`` or ``COMPLETE``, ``usage`` billed and token counts counted from
the characters).

>>> chat({"model": "m", "messages": []}, {"content": [{"type": "text", "text": "hi"}]})[
...     "finish_reason"]
'COMPLETE'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from ._loopback import Loopback

MODEL = "command-a-03-2025"
Script = Callable[[dict[str, Any]], dict[str, Any]]
"""A request body -> the assistant's message (``content``, or ``tool_plan`` and ``tool_calls``)."""


def _tokens(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


def chat(body: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    """Cohere's v2 chat response holding ``message`` for one request body (its ``id`` a digest
    of the request, so an answer is a function of the request alone)."""
    prompt = _tokens([body.get("messages"), body.get("tools")])
    answer = _tokens(message)
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    return {
        "id": f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}",
        "finish_reason": "TOOL_CALL" if message.get("tool_calls") else "COMPLETE",
        "message": {"role": "assistant"} | message,
        "usage": {
            "billed_units": {"input_tokens": prompt, "output_tokens": answer},
            "tokens": {"input_tokens": prompt + 180, "output_tokens": answer},
        },
    }


def _error(code: int, text: str) -> JSONResponse:
    # Cohere answers errors as {"message": "..."}; the client raises an ApiError subclass
    return JSONResponse({"message": text}, code)


def create_app(respond: Script) -> FastAPI:
    """The route ``POST /v2/chat``: a 400 for a body Cohere would refuse, else the answer."""
    app = FastAPI()

    @app.post("/v2/chat", response_model=None)
    async def chat_route(request: Request) -> Any:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "invalid request: body is not valid JSON")
        if not isinstance(body, dict) or not body.get("model"):
            return _error(400, "invalid request: model must be specified")
        if body.get("stream"):
            return _error(400, "the fake Cohere server answers non-streaming requests only")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return _error(400, "invalid request: messages must be a non-empty list")
        if any(not isinstance(m, dict) or "role" not in m for m in messages):
            return _error(400, "invalid request: every message needs a role")
        return JSONResponse(chat(body, respond(body)))

    return app


class CohereServer(Loopback):
    """The fake Cohere v2 API under uvicorn in a thread on a free loopback port.

    >>> with CohereServer(lambda body: {"content": []}) as server:
    ...     server.base_url.startswith("http://127.0.0.1:")
    True
    """

    def __init__(self, respond: Script) -> None:
        super().__init__(create_app(respond), "fake Cohere")

    @property
    def base_url(self) -> str:
        """The client's ``base_url`` (it posts to ``{base_url}/v2/chat``)."""
        return self.origin

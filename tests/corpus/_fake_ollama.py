"""A small fake of Ollama's REST API for the corpus: ``POST /api/chat`` on a loopback port,
answering the message a scripted model decides, non-streaming only.

As :mod:`tests.corpus._fake_gemini` serves the Gemini API: uvicorn in a thread (the corpus's
:class:`~tests.corpus._loopback.Loopback`), every answer a pure function of the request. The
script (``respond``) gets the request body (what the ``ollama`` client sends: ``model``,
``messages``, ``tools``, ``stream``, ``options``) and returns the assistant's ``message``
(``content`` and ``tool_calls``, each ``{"function": {"name", "arguments"}}`` with the
arguments as an object, as Ollama's API documents it); the server writes the rest of the
final chat response around it (``model``, ``created_at``, ``done`` true, ``done_reason``
``stop``, the durations in nanoseconds and ``prompt_eval_count`` / ``eval_count`` counted from
the characters).

>>> chat({"model": "m", "messages": []}, {"content": "hi"})["done_reason"]
'stop'
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from ._loopback import Loopback

MODEL = "llama3.1:8b"
Script = Callable[[dict[str, Any]], dict[str, Any]]
"""A request body -> the assistant's message (``content`` and ``tool_calls``)."""

CREATED_AT = "2027-06-01T09:00:00.000000Z"
"""Every answer's ``created_at``: fixed, so an answer is a function of the request alone."""


def _tokens(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


def chat(body: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    """Ollama's final (``done``) chat response holding ``message`` for one request body."""
    prompt = _tokens([body.get("messages"), body.get("tools")])
    answer = _tokens(message)
    return {
        "model": body.get("model") or MODEL,
        "created_at": CREATED_AT,
        "message": {"role": "assistant", "content": ""} | message,
        "done": True,
        "done_reason": "stop",
        "total_duration": (prompt + answer) * 1_000_000,
        "load_duration": 1_000_000,
        "prompt_eval_count": prompt,
        "prompt_eval_duration": prompt * 200_000,
        "eval_count": answer,
        "eval_duration": answer * 800_000,
    }


def _error(code: int, text: str) -> JSONResponse:
    # Ollama answers errors as {"error": "..."}; the client raises ResponseError with it
    return JSONResponse({"error": text}, code)


def create_app(respond: Script) -> FastAPI:
    """The route ``POST /api/chat``: a 400 for a body Ollama would refuse, else the answer."""
    app = FastAPI()

    @app.post("/api/chat", response_model=None)
    async def chat_route(request: Request) -> Any:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "invalid character in request body")
        if not isinstance(body, dict) or not body.get("model"):
            return _error(400, "model is required")
        if body.get("stream", True):
            return _error(400, "the fake Ollama server answers non-streaming requests only")
        messages = body.get("messages")
        if not isinstance(messages, list) or any(not isinstance(m, dict) for m in messages):
            return _error(400, "messages must be a list of objects")
        return JSONResponse(chat(body, respond(body)))

    return app


class OllamaServer(Loopback):
    """The fake Ollama API under uvicorn in a thread on a free loopback port.

    >>> with OllamaServer(lambda body: {"content": "ok"}) as server:
    ...     server.host.startswith("http://127.0.0.1:")
    True
    """

    def __init__(self, respond: Script) -> None:
        super().__init__(create_app(respond), "fake Ollama")

    @property
    def host(self) -> str:
        """The client's ``host`` (it posts to ``{host}/api/chat``)."""
        return self.origin

"""A small fake of the OpenAI Responses API for the corpus: ``POST /v1/responses`` on a loopback
port, answering the output items a scripted model decides, non-streaming only.

As :mod:`tests.corpus._fake_anthropic` and :mod:`tests.corpus._fake_gemini` serve their APIs:
uvicorn in a thread, every answer a pure function of the request. The script (``respond``) gets
the request body (what the ``openai`` SDK sends: ``model``, ``instructions``, ``input`` as a
string or a list of items, ``tools``, ``text``) and returns the output items, built with
:func:`message` and :func:`function_call`; the server writes the rest of a ``Response`` around
them (``id``, ``object``, ``created_at``, ``status`` ``completed``, ``usage`` counted from the
characters, the request's ``tools`` / ``text`` / ``instructions`` echoed as the API does).

The API's own 400s for a body it refuses: no ``model``, no ``input``, a
``function_call_output`` whose ``call_id`` no ``function_call`` of the input made, a
``function_call`` of the input with no output. ``limited`` picks requests to answer first
with a ``429`` (``retry-after-ms`` set, so the SDK waits that long and retries the same body).

>>> response({"model": "m", "input": "hi"}, [message("hello")])["output"][0]["content"][0]["text"]
'hello'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from ._loopback import Loopback

MODEL = "gpt-5-mini"
Item = dict[str, Any]
Script = Callable[[dict[str, Any]], list[Item]]
"""A request body -> the response's output items (``message`` and ``function_call``)."""


def message(text: str) -> Item:
    """An assistant ``message`` output item holding one ``output_text``."""
    return {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
    }


def function_call(name: str, arguments: dict[str, Any]) -> Item:
    """A ``function_call`` output item (its ``call_id`` is given by the server)."""
    return {
        "type": "function_call",
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


def _tokens(value: Any) -> int:
    return max(1, len(json.dumps(value, default=str)) // 4)


def response(body: dict[str, Any], items: list[Item]) -> dict[str, Any]:
    """The API's ``Response`` object holding ``items`` for one request body; ids are derived
    from the body, so the same request gets the same ids."""
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    output = []
    for n, item in enumerate(items):
        prefix = "msg" if item["type"] == "message" else "fc"
        out = {"id": f"{prefix}_{digest[:24]}{n:02d}", **item}
        if item["type"] == "function_call":
            out["call_id"] = f"call_{digest[24:44]}{n:02d}"
        output.append(out)
    asked = _tokens([body.get("instructions"), body.get("input"), body.get("tools")])
    said = _tokens(items)
    return {
        "id": f"resp_{digest[:40]}",
        "object": "response",
        "created_at": 1_796_000_000 + int(digest[:6], 16) % 86_400,
        "status": "completed",
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": f"{body['model']}-2025-08-07",
        "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": body.get("text") or {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": {
            "input_tokens": asked,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": said,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": asked + said,
        },
        "user": None,
        "metadata": body.get("metadata") or {},
    }


def _error(status: int, text: str, param: str | None, code: str | None) -> JSONResponse:
    kind = "rate_limit_error" if status == 429 else "invalid_request_error"
    error = {"message": text, "type": kind, "param": param, "code": code}
    headers = {"retry-after-ms": "20"} if status == 429 else None
    return JSONResponse({"error": error}, status, headers=headers)


def refusal(body: Any) -> tuple[str, str | None] | None:
    """Why the API would answer 400 to ``body`` (message, param), or None.

    >>> refusal({"model": "m", "input": [{"type": "function_call_output", "call_id": "c"}]})
    ('No tool call found for function call output with call_id c.', 'input')
    """
    if not isinstance(body, dict) or not body.get("model"):
        return "Missing required parameter: 'model'.", "model"
    items = body.get("input")
    if not items:
        return "Missing required parameter: 'input'.", "input"
    if isinstance(items, str):
        return None
    made = [i.get("call_id") for i in items if i.get("type") == "function_call"]
    answered = [i.get("call_id") for i in items if i.get("type") == "function_call_output"]
    for call_id in answered:
        if call_id not in made:
            return f"No tool call found for function call output with call_id {call_id}.", "input"
    for call_id in made:
        if call_id not in answered:
            return f"No tool output found for function call {call_id}.", "input"
    return None


def create_app(respond: Script, limited: Callable[[dict[str, Any]], bool]) -> FastAPI:
    """The route ``POST /v1/responses``: a 400 for a body the API would refuse, a 429 the first
    time ``limited`` picks a body, else the answer."""
    app = FastAPI()
    limited_once: set[str] = set()

    @app.post("/v1/responses", response_model=None)
    async def create(request: Request) -> Any:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "We could not parse the JSON body of your request.", None, None)
        refused = refusal(body)
        if refused:
            return _error(400, *refused, None)
        if body.get("stream"):
            return _error(400, "This fake answers non-streaming requests only.", "stream", None)
        key = json.dumps(body, sort_keys=True)
        if limited(body) and key not in limited_once:
            limited_once.add(key)
            return _error(429, "Rate limit reached for requests.", None, "rate_limit_exceeded")
        return JSONResponse(response(body, respond(body)))

    return app


def _never(body: dict[str, Any]) -> bool:
    return False


class ResponsesServer(Loopback):
    """The fake Responses API under uvicorn in a thread on a free loopback port.

    >>> with ResponsesServer(lambda body: [message("ok")]) as server:
    ...     server.base_url.startswith("http://127.0.0.1:")
    True
    """

    def __init__(self, respond: Script, limited: Callable[[dict[str, Any]], bool] = _never) -> None:
        super().__init__(create_app(respond, limited), "fake Responses API")

    @property
    def base_url(self) -> str:
        """The client's ``base_url`` (the SDK posts to ``{base_url}/responses``)."""
        return f"{self.origin}/v1"

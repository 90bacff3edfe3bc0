"""A small fake of the Gemini API for the corpus: ``POST /v1beta/models/{model}:generateContent``
on a loopback port, answering the parts a scripted model decides, and its streamed twin
``:streamGenerateContent?alt=sse`` (server-sent events, as ``generate_content_stream`` reads them).

As :mod:`tests.corpus._fake_anthropic` serves the Messages API: uvicorn in a thread, every
answer a pure function of the request. The script (``respond``) gets the request body (the
REST shape the ``google-genai`` SDK sends: ``contents``, ``systemInstruction``, ``tools``,
``generationConfig``) and returns the model turn's ``parts`` (``text`` and ``functionCall``);
the server writes the rest of a ``GenerateContentResponse`` around them (``candidates[0]``
with ``content``, ``finishReason`` ``STOP`` and ``index``, ``usageMetadata`` counted from the
characters, ``modelVersion``, ``responseId``).

``unavailable`` picks requests to answer first with the API's ``503 UNAVAILABLE`` (an
overloaded model); the retry of the same body is answered. The SDK retries it only when the
client's ``HttpOptions`` carry ``retry_options`` (it does not by default).

The streamed route answers the same parts as ``data:`` events: a turn's text split over two or
three chunks at word boundaries (function calls whole, in the last chunk, as the API streams
them), ``finishReason`` only on the last chunk, each chunk with the same ``responseId``.

>>> content({"contents": []}, [{"text": "hi"}])["candidates"][0]["finishReason"]
'STOP'
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

from ._loopback import Loopback

MODEL = "gemini-2.5-flash"
Parts = list[dict[str, Any]]
Script = Callable[[dict[str, Any]], Parts]
"""A request body -> the model turn's parts (``text`` and ``functionCall``)."""


# --- for the scripts: reading a request's chat, writing a call ------------------------------
# (shared by the agents that script this server: the chat is the API's, not the agent's)
def texts(parts: list[dict[str, Any]]) -> str:
    """The text of a content's parts, joined (a ``functionCall`` part adds nothing).

    >>> texts([{"text": "Job "}, {"functionCall": {"name": "f"}}, {"text": "card"}])
    'Job card'
    """
    return "".join(str(p.get("text", "")) for p in parts)


@dataclass
class Call:
    """A ``functionCall`` the chat holds, with its ``functionResponse``."""

    name: str
    args: dict[str, Any]
    response: dict[str, Any] = field(default_factory=dict)


def function_calls(contents: list[dict[str, Any]]) -> list[Call]:
    """The chat's calls in order, each paired with its response (by order and name).

    >>> answer = {"functionResponse": {"name": "poll", "response": {"ok": 1}}}
    >>> function_calls([{"parts": function_call("poll", {"job": "J1"})}, {"parts": [answer]}])
    [Call(name='poll', args={'job': 'J1'}, response={'ok': 1})]
    """
    out: list[Call] = []
    for c in contents:
        for p in c.get("parts") or []:
            if "functionCall" in p:
                out.append(
                    Call(p["functionCall"]["name"], dict(p["functionCall"].get("args") or {}))
                )
            elif "functionResponse" in p:
                name = p["functionResponse"]["name"]
                waiting = [x for x in out if not x.response and x.name == name]
                if waiting:
                    waiting[0].response = dict(p["functionResponse"].get("response") or {})
    return out


def function_call(name: str, args: dict[str, Any]) -> Parts:
    """A model turn that calls one function.

    >>> function_call("poll", {"job": "J1"})
    [{'functionCall': {'name': 'poll', 'args': {'job': 'J1'}}}]
    """
    return [{"functionCall": {"name": name, "args": args}}]


def _tokens(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


def content(body: dict[str, Any], parts: Parts, model: str = MODEL) -> dict[str, Any]:
    """The API's ``GenerateContentResponse`` holding ``parts`` for one request body."""
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    prompt = _tokens([body.get("systemInstruction"), body.get("contents"), body.get("tools")])
    answer = _tokens(parts)
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": prompt,
            "candidatesTokenCount": answer,
            "totalTokenCount": prompt + answer,
        },
        "modelVersion": model,
        "responseId": digest[:22],
    }


def chunks(body: dict[str, Any], parts: Parts, model: str = MODEL) -> list[dict[str, Any]]:
    """The streamed answer: ``parts`` as two or three ``GenerateContentResponse`` chunks.

    >>> out = chunks({"contents": []}, [{"text": "DONE all went to plan today"}])
    >>> ["".join(p["text"] for p in c["candidates"][0]["content"]["parts"]) for c in out]
    ['DONE all ', 'went to ', 'plan today']
    >>> [c["candidates"][0].get("finishReason") for c in out]
    [None, None, 'STOP']
    """
    whole = content(body, parts, model)
    text = "".join(str(p["text"]) for p in parts if "text" in p)
    calls = [p for p in parts if "text" not in p]
    words = re.findall(r"\S+\s*", text)
    cuts = [0, *sorted({len(words) * k // 3 for k in (1, 2)} - {0}), len(words)] if words else []
    pieces = ["".join(words[a:b]) for a, b in itertools.pairwise(cuts) if b > a]
    turns: list[Parts] = [[{"text": piece}] for piece in pieces] or [[]]
    turns[-1] = turns[-1] + calls
    out = []
    for n, turn in enumerate(turns, 1):
        chunk = json.loads(json.dumps(whole))
        candidate = chunk["candidates"][0]
        candidate["content"]["parts"] = turn
        if n < len(turns):
            del candidate["finishReason"]
        out.append(chunk)
    return out


def _error(code: int, status: str, text: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": text, "status": status}}, code)


def create_app(respond: Script, unavailable: Callable[[dict[str, Any]], bool]) -> FastAPI:
    """The routes ``POST /v1beta/models/{model}:generateContent`` and its streamed twin
    ``:streamGenerateContent``: a 400 ``INVALID_ARGUMENT`` for a body the API would refuse, a 503
    the first time ``unavailable`` picks a body, else the answer."""
    app = FastAPI()
    refused_once: set[str] = set()

    async def answer(request: Request) -> dict[str, Any] | JSONResponse:
        """The request body, or the error the API answers it with."""
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
        contents = body.get("contents") if isinstance(body, dict) else None
        if not isinstance(contents, list) or not contents:
            return _error(
                400,
                "INVALID_ARGUMENT",
                "* GenerateContentRequest.contents: contents is not specified",
            )
        if any(not isinstance(c, dict) or not c.get("parts") for c in contents):
            return _error(
                400,
                "INVALID_ARGUMENT",
                "* GenerateContentRequest.contents.parts: must not be empty",
            )
        key = json.dumps(body, sort_keys=True)
        if unavailable(body) and key not in refused_once:
            refused_once.add(key)
            return _error(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
        return dict(body)

    @app.post("/v1beta/models/{model}:generateContent", response_model=None)
    async def generate_content(model: str, request: Request) -> Any:
        body = await answer(request)
        if isinstance(body, JSONResponse):
            return body
        return JSONResponse(content(body, respond(body), model))

    @app.post("/v1beta/models/{model}:streamGenerateContent", response_model=None)
    async def stream_generate_content(model: str, request: Request) -> Any:
        body = await answer(request)
        if isinstance(body, JSONResponse):
            return body
        events = [f"data: {json.dumps(c)}\r\n\r\n" for c in chunks(body, respond(body), model)]
        return StreamingResponse(iter(events), media_type="text/event-stream")

    return app


def _never(body: dict[str, Any]) -> bool:
    return False


class GeminiServer(Loopback):
    """The fake Gemini API under uvicorn in a thread on a free loopback port.

    >>> with GeminiServer(lambda body: [{"text": "ok"}]) as server:
    ...     server.base_url.startswith("http://127.0.0.1:")
    True
    """

    def __init__(
        self, respond: Script, unavailable: Callable[[dict[str, Any]], bool] = _never
    ) -> None:
        super().__init__(create_app(respond, unavailable), "fake Gemini")

    @property
    def base_url(self) -> str:
        """The SDK's ``HttpOptions.base_url`` (it posts to ``{base_url}/v1beta/models/...``)."""
        return f"{self.origin}/"

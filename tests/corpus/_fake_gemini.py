"""A small fake of the Gemini API for the corpus: ``POST /v1beta/models/{model}:generateContent``
on a loopback port, answering the parts a scripted model decides, non-streaming only.

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

>>> content({"contents": []}, [{"text": "hi"}])["candidates"][0]["finishReason"]
'STOP'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from ._loopback import Loopback

MODEL = "gemini-2.5-flash"
Parts = list[dict[str, Any]]
Script = Callable[[dict[str, Any]], Parts]
"""A request body -> the model turn's parts (``text`` and ``functionCall``)."""


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


def _error(code: int, status: str, text: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": text, "status": status}}, code)


def create_app(respond: Script, unavailable: Callable[[dict[str, Any]], bool]) -> FastAPI:
    """The route ``POST /v1beta/models/{model}:generateContent``: a 400 ``INVALID_ARGUMENT``
    for a body the API would refuse, a 503 the first time ``unavailable`` picks a body, else
    the answer."""
    app = FastAPI()
    refused_once: set[str] = set()

    @app.post("/v1beta/models/{model}:generateContent", response_model=None)
    async def generate_content(model: str, request: Request) -> Any:
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
        return JSONResponse(content(body, respond(body), model))

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

"""A small fake of the Amazon Bedrock Runtime API for the corpus: ``POST
/model/{modelId}/converse`` on a loopback port, answering the content blocks a scripted model
decides, non-streaming only.

As :mod:`tests.corpus._fake_gemini` serves the Gemini API: every answer a pure function of the
request. The script (``respond``) gets the request body (the rest-json shape ``boto3`` sends:
``messages``, ``system``, ``toolConfig``, ``inferenceConfig``; the model id is in the path) and
returns the assistant message's ``content`` blocks (``text`` and ``toolUse`` with
``toolUseId``, ``name``, ``input``); the server writes the rest of a ``ConverseResponse``
around them as botocore's ``bedrock-runtime`` service model has it: ``output.message``,
``stopReason`` (``tool_use`` when a block asks for a tool, else ``end_turn``), ``usage``
counted from the characters, ``metrics.latencyMs``.

``throttled`` picks requests to answer first with the API's ``ThrottlingException`` (HTTP 429,
the error type in the ``x-amzn-ErrorType`` header as the service sends it); the retry of the
same body is answered, as boto3's retry handler (legacy and standard modes) retries it.

>>> converse({"messages": []}, [{"text": "hi"}])["stopReason"]
'end_turn'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from itertools import pairwise
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from ._loopback import Loopback

MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
REGION = "eu-west-2"
Blocks = list[dict[str, Any]]
Script = Callable[[dict[str, Any]], Blocks]
"""A request body -> the assistant message's content blocks (``text`` and ``toolUse``)."""


def _tokens(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


def tool_use(name: str, arguments: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """A ``toolUse`` block whose id is derived from the request (stable across runs).

    >>> tool_use("f", {}, {"messages": []})["toolUse"]["toolUseId"][:8]
    'tooluse_'
    """
    seen = json.dumps([body.get("messages"), name, arguments], sort_keys=True)
    digest = hashlib.sha256(seen.encode()).hexdigest()
    return {"toolUse": {"toolUseId": f"tooluse_{digest[:22]}", "name": name, "input": arguments}}


def converse(body: dict[str, Any], blocks: Blocks) -> dict[str, Any]:
    """The API's ``ConverseResponse`` holding ``blocks`` for one request body."""
    prompt = _tokens([body.get("system"), body.get("messages"), body.get("toolConfig")])
    answer = _tokens(blocks)
    return {
        "output": {"message": {"role": "assistant", "content": blocks}},
        "stopReason": "tool_use" if any("toolUse" in b for b in blocks) else "end_turn",
        "usage": {"inputTokens": prompt, "outputTokens": answer, "totalTokens": prompt + answer},
        "metrics": {"latencyMs": 40 + answer},
    }


def _error(status: int, kind: str, text: str) -> JSONResponse:
    return JSONResponse({"message": text}, status, headers={"x-amzn-ErrorType": f"{kind}:"})


def _refusal(body: Any) -> str | None:
    """Why the API would refuse this body with a ``ValidationException``, if it would."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list) or not messages:
        return "A conversation must start with a user message."
    if any(not isinstance(m, dict) or not m.get("content") for m in messages):
        return "The content field in the Message object is empty."
    roles = [m.get("role") for m in messages]
    if roles[0] != "user" or any(a == b for a, b in pairwise(roles)):
        return "A conversation must alternate between user and assistant roles."
    asked: set[str] = set()
    for m in messages:
        for block in m["content"]:
            if "toolUse" in block:
                asked.add(block["toolUse"]["toolUseId"])
            if "toolResult" in block and block["toolResult"]["toolUseId"] not in asked:
                return "The toolResult blocks must match the toolUse blocks of the previous turn."
    return None


def create_app(respond: Script, throttled: Callable[[dict[str, Any]], bool]) -> FastAPI:
    """The route ``POST /model/{modelId}/converse``: a 400 ``ValidationException`` for a body
    the API would refuse, a 429 ``ThrottlingException`` the first time ``throttled`` picks a
    body, else the answer."""
    app = FastAPI()
    refused_once: set[str] = set()

    @app.post("/model/{model_id}/converse", response_model=None)
    async def converse_route(model_id: str, request: Request) -> Any:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "ValidationException", "Malformed input request.")
        refusal = _refusal(body)
        if refusal:
            return _error(400, "ValidationException", refusal)
        key = json.dumps(body, sort_keys=True)
        if throttled(body) and key not in refused_once:
            refused_once.add(key)
            return _error(
                429, "ThrottlingException", "Too many requests, please wait before trying again."
            )
        return JSONResponse(converse(body, respond(body)))

    return app


def _never(body: dict[str, Any]) -> bool:
    return False


class BedrockServer(Loopback):
    """The fake Bedrock Runtime API under uvicorn in a thread on a free loopback port.

    >>> with BedrockServer(lambda body: [{"text": "ok"}]) as server:
    ...     server.endpoint_url.startswith("http://127.0.0.1:")
    True
    """

    def __init__(
        self, respond: Script, throttled: Callable[[dict[str, Any]], bool] = _never
    ) -> None:
        super().__init__(create_app(respond, throttled), "fake Bedrock")

    @property
    def endpoint_url(self) -> str:
        """boto3's ``endpoint_url`` (it posts to ``{endpoint_url}/model/{modelId}/converse``)."""
        return self.origin

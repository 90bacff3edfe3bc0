"""A deterministic OpenAI-compatible chat-completions server for the conformance suite.

Every answer is a pure function of the request, so the real clients (``openai``, LangChain,
pydantic-ai, the Agents SDK) see the same conversation on every run:

* a conversation whose first message names the *planner* gets the plan: a JSON list of steps,
  or, when the request asks for structured output (OpenAI's ``response_format`` JSON schema, or a
  forced ``tool_choice``: a typed output such as pydantic-ai's ``output_type`` or LangChain's
  ``with_structured_output``), the plan in the shape the schema asks for (an object holds it
  under its first array property), as text or as a call of the forced tool;
* an executor conversation (any other) gets a call of the tool its latest user message that
  names one names (a framework's own later turn, such as smolagents' "Now proceed and carry out
  this plan." after its planning step, names none);
* after a tool result that reports an error, the same tool is called again with the same
  arguments, until :data:`MAX_TOOL_ATTEMPTS` failed results are in the conversation: then the
  model gives up in plain text (the runaway loop the analyzers must find);
* after a successful tool result, the model answers in plain text;
* a framework that ends a run through a ``final_answer`` tool (smolagents) gets every
  plain-text answer as a call of that tool, when the request offers it.

Tool calls and results come as OpenAI messages (``tool_calls``, role ``tool``) or as text, the
way frameworks without native tool messages write them (smolagents: an assistant message
``Calling tools:\n[{...}]`` then a user message with the observation; a failed call only as a
user message ``Error:\n...`` naming the tool; consecutive messages of one role joined into one
text): both read the same.

Usage is counted deterministically from the characters of the request and the answer.

>>> answer({"model": "m", "messages": [{"role": "system", "content": "You are the planner."}]})[
...     "choices"][0]["message"]["content"].startswith("[")
True
"""

from __future__ import annotations

import ast
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse

MODEL = "gpt-4o-mini"
MAX_TOOL_ATTEMPTS = 5
"""Failed results of one tool in a conversation before the model stops calling it."""
PLAN: list[dict[str, str]] = [
    {"id": "lookup", "description": "Look up order 42 with lookup_order", "tool": "lookup_order"},
    {"id": "refund", "description": "Refund order 42 with issue_refund", "tool": "issue_refund"},
]
"""The planner's answer, for every objective."""
FAILURE = re.compile(r"error|fail|timeout|exception|retry", re.IGNORECASE)
ARGUMENTS = json.dumps({"order_id": "42"})
"""The arguments of a first call (every scenario's tools take the order id)."""
FINAL_ANSWER = "final_answer"
"""The tool some frameworks end a run with: offered, it carries every plain-text answer."""
TEXT_CALLS = "Calling tools:"
TEXT_ERROR = "Error:"
TEXT_FORMS = re.compile(r"\n+(?=(?:Calling tools:|Error:|Observation:)\n)")
"""Where a merged message's next text-form call or result starts."""


def _text(content: Any) -> str:
    """A message's content as text (a string, or a list of content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [
        str(t.get("function", {}).get("name", ""))
        for t in body.get("tools") or []
        if isinstance(t, dict)
    ]


def _text_tool_calls(message: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The tool calls a text-form message holds (``Calling tools:\n[{...}]``), else None."""
    text = _text(message.get("content")).strip()
    if message.get("role") not in ("assistant", "user") or not text.startswith(TEXT_CALLS):
        return None
    try:
        calls = ast.literal_eval(text.removeprefix(TEXT_CALLS).strip())
    except (ValueError, SyntaxError):
        return None
    out = []
    for call in calls if isinstance(calls, list) else []:
        function = dict(call.get("function") or {})
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            function["arguments"] = json.dumps(arguments)
        out.append({"id": call.get("id"), "type": "function", "function": function})
    return out


def _unmerged(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages a framework merged (consecutive messages of one role joined into one text) apart
    again, at each text-form tool call or result that starts a line.

    >>> [m["content"] for m in _unmerged([{"role": "user", "content": "do\\nError:\\nx"}])]
    ['do', 'Error:\\nx']
    """
    out = []
    for message in messages:
        pieces = TEXT_FORMS.split(_text(message.get("content")))
        out += [dict(message, content=p) for p in pieces] if len(pieces) > 1 else [message]
    return out


def _native(messages: list[dict[str, Any]], tools: list[str]) -> list[dict[str, Any]]:
    """The conversation with text-form tool calls and results as OpenAI tool messages.

    >>> _native([{"role": "assistant", "content": "Calling tools:\\n[{'id': 'c1', 'function':"
    ...     " {'name': 't', 'arguments': {}}}]"}, {"role": "user", "content": "Observation: 1"}],
    ...     ["t"])[1]
    {'role': 'tool', 'tool_call_id': 'c1', 'content': 'Observation: 1'}
    >>> _native([{"role": "user", "content": "Error:\\nError executing tool 't'"}], ["t"])[0][
    ...     "tool_calls"][0]["function"]["name"]
    't'
    """
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for i, message in enumerate(_unmerged(messages)):
        calls = _text_tool_calls(message)
        text = _text(message.get("content"))
        user = message.get("role") == "user"
        named = [t for t in tools if t and t in text]
        if calls is None and not pending and user and text.startswith(TEXT_ERROR) and named:
            # a call that failed before it was recorded: only its error names the tool
            pending = [_call(named[0], ARGUMENTS, i)["tool_calls"][0]]
            out.append({"role": "assistant", "content": None, "tool_calls": pending})
        if calls is not None:
            out.append({"role": "assistant", "content": None, "tool_calls": calls})
            pending = calls
        elif pending and user:
            out.append({"role": "tool", "tool_call_id": pending[0]["id"], "content": text})
            pending = []
        else:
            out.append(message)
            pending = []
    return out


def _executor_turn(messages: list[dict[str, Any]], tools: list[str]) -> dict[str, Any]:
    """The assistant message for an executor conversation (see the module docstring)."""
    message = _executor_answer(_native(messages, tools), tools)
    if FINAL_ANSWER in tools and not message.get("tool_calls"):
        return _call(FINAL_ANSWER, json.dumps({"answer": message["content"]}), len(messages))
    return message


def _executor_answer(messages: list[dict[str, Any]], tools: list[str]) -> dict[str, Any]:
    """The answer to an executor conversation in OpenAI's form: a tool call or plain text."""
    calls = {
        c.get("id"): c
        for m in messages
        if m.get("role") == "assistant"
        for c in m.get("tool_calls") or []
    }

    def called(result: dict[str, Any]) -> dict[str, Any]:
        return dict(calls.get(result.get("tool_call_id"), {}).get("function") or {})

    results = [m for m in messages if m.get("role") == "tool"]
    if results and messages[-1] is results[-1]:
        return _after(results[-1], messages, called)
    offered = [t for t in tools if t != FINAL_ANSWER]
    # the latest user message that names a tool: the step, also when a framework's own turn
    # came after it ("Now proceed and carry out this plan.")
    asked = [_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"]
    named = (t for prompt in asked for t in offered if t and t in prompt)
    name = next(named, offered[0] if offered else "")
    if not name:
        return {"role": "assistant", "content": "nothing to do"}
    # after such a turn, the tool's latest result still decides
    mine = [m for m in results if called(m).get("name") == name]
    if mine:
        return _after(mine[-1], messages, called)
    return _call(name, ARGUMENTS, len(messages))


def _after(
    result: dict[str, Any],
    messages: list[dict[str, Any]],
    called: Callable[[dict[str, Any]], dict[str, Any]],
) -> dict[str, Any]:
    """The answer after a tool's result (``called`` gives the function a result answers): done,
    the same call again, or giving up."""
    text = _text(result.get("content"))
    if not FAILURE.search(text):
        return {"role": "assistant", "content": f"done: {text}"}
    function = called(result)
    name = str(function.get("name", ""))
    failed = sum(
        1
        for m in messages
        if m.get("role") == "tool"
        and FAILURE.search(_text(m.get("content")))
        and called(m).get("name") == name
    )
    if failed >= MAX_TOOL_ATTEMPTS:
        return {"role": "assistant", "content": f"giving up: {name} failed {failed} times"}
    return _call(name, str(function.get("arguments", "{}")), len(messages))


def _call(name: str, arguments: str, turn: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{name}_{turn}",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
        ],
    }


def _shaped(schema: Any) -> Any:
    """The plan in the shape a JSON schema asks for: the list itself, or an object holding it
    under the schema's first array property.

    >>> _shaped({"type": "object", "properties": {"why": {"type": "string"},
    ...     "steps": {"type": "array"}}})["steps"][0]["id"]
    'lookup'
    """
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return PLAN
    key = next((k for k, v in properties.items() if dict(v).get("type") == "array"), None)
    return PLAN if key is None else {key: PLAN}


def _forced_tool(body: dict[str, Any]) -> dict[str, Any] | None:
    """The function a request forces the model to call (``tool_choice`` ``required`` with one
    tool offered, or naming a function), with its schema; else None."""
    choice, tools = body.get("tool_choice"), body.get("tools") or []
    functions = [dict(t.get("function") or {}) for t in tools if isinstance(t, dict)]
    if isinstance(choice, dict):
        name = dict(choice.get("function") or {}).get("name")
        return next((f for f in functions if f.get("name") == name), None)
    return functions[0] if choice == "required" and len(functions) == 1 else None


def _planner_turn(body: dict[str, Any]) -> dict[str, Any]:
    """The planner's answer: the plan, shaped as the request asks (see the module docstring)."""
    forced = _forced_tool(body)
    if forced is not None:
        plan = json.dumps(_shaped(forced.get("parameters")))
        return _call(str(forced.get("name")), plan, len(body.get("messages") or []))
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        schema = dict(response_format.get("json_schema") or {}).get("schema")
        return {"role": "assistant", "content": json.dumps(_shaped(schema))}
    return {"role": "assistant", "content": json.dumps(PLAN)}


def _planner(body: dict[str, Any]) -> bool:
    """Whether a request is the planner's: its first message names the planner."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    return bool(messages) and "planner" in _text(messages[0].get("content")).lower()


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The chat-completion response for one request body."""
    if _planner(body):
        return completion(body, _planner_turn(body))
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    return completion(body, _executor_turn(messages, _tool_names(body)))


def completion(body: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    """The chat-completion response carrying ``message`` for one request body (its usage
    counted from the characters of both).

    >>> completion({"messages": []}, {"role": "assistant", "content": "hi"})["usage"][
    ...     "completion_tokens"]
    9
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    reason = "tool_calls" if message.get("tool_calls") else "stop"
    prompt_tokens = _tokens(json.dumps(messages))
    completion_tokens = _tokens(json.dumps(message))
    return {
        "id": f"chatcmpl-{len(messages)}",
        "object": "chat.completion",
        "created": 1_760_000_000,
        "model": str(body.get("model") or MODEL),
        "system_fingerprint": "fp_conformance",
        "choices": [{"index": 0, "message": message, "finish_reason": reason, "logprobs": None}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _chunks(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The same answer as server-sent chunks (for clients that stream)."""
    message = response["choices"][0]["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [dict(c, index=i) for i, c in enumerate(message["tool_calls"])]
    base = {k: response[k] for k in ("id", "created", "model", "system_fingerprint")}
    return [
        dict(base, object="chat.completion.chunk", choices=[{"index": 0, "delta": delta}]),
        dict(
            base,
            object="chat.completion.chunk",
            choices=[
                {"index": 0, "delta": {}, "finish_reason": response["choices"][0]["finish_reason"]}
            ],
            usage=response["usage"],
        ),
    ]


@dataclass(frozen=True)
class Served:
    """One completion the server answered: for which client (the URL's first path segment),
    when, its usage, how many tool calls it asked for."""

    client: str
    time_ns: int
    input_tokens: int
    output_tokens: int
    tool_calls: int


Answer = Callable[[dict[str, Any]], dict[str, Any]]
"""A request body -> the chat-completion response (a pure function, like :func:`answer`)."""


def create_app(log: list[Served] | None = None, respond: Answer = answer) -> FastAPI:
    """The server's routes: ``POST /{client}/v1/chat/completions`` and ``GET
    /{client}/v1/models``, where ``client`` names who asks; every completion served is
    appended to ``log``. ``respond`` is the model (:func:`answer` unless another scripted
    model is given, as the corpus's agents do)."""
    app = FastAPI()
    served = log if log is not None else []

    @app.post("/{client}/v1/chat/completions", response_model=None)
    async def chat_completions(client: str, request: Request) -> Any:
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": {"message": "body is not JSON"}}, status_code=400)
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return JSONResponse({"error": {"message": "messages must be a list"}}, status_code=400)
        response = respond(body)
        served.append(
            Served(
                client,
                time.time_ns(),
                response["usage"]["prompt_tokens"],
                response["usage"]["completion_tokens"],
                # a planner's forced call is its structured answer, not a tool call
                0
                if _planner(body)
                else len(response["choices"][0]["message"].get("tool_calls") or []),
            )
        )
        if not body.get("stream"):
            return JSONResponse(response)
        lines = "".join(f"data: {json.dumps(c)}\n\n" for c in _chunks(response))
        return PlainTextResponse(lines + "data: [DONE]\n\n", media_type="text/event-stream")

    @app.get("/{client}/v1/models")
    async def models(client: str) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "test"}]}

    return app


@dataclass
class ModelServer:
    """The fake model server under uvicorn in a thread on a free loopback port.

    >>> with ModelServer() as server:
    ...     server.base_url("me").endswith("/me/v1")
    True
    """

    log: list[Served] = field(default_factory=list)
    respond: Answer = answer

    def __post_init__(self) -> None:
        config = uvicorn.Config(
            create_app(self.log, self.respond),
            host="127.0.0.1",
            port=0,
            log_level="warning",
            lifespan="off",
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="fake-openai", daemon=True)

    def base_url(self, client: str) -> str:
        """The OpenAI base URL for one client (its answers are logged under its name)."""
        port = self._server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/{client}/v1"

    def served(self, client: str, start_ns: int, end_ns: int) -> list[Served]:
        """What the server answered one client between two instants (one scenario)."""
        return [s for s in self.log if s.client == client and start_ns <= s.time_ns <= end_ns]

    def __enter__(self) -> ModelServer:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the fake model server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)

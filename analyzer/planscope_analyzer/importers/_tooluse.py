"""Read single-agent tool-use conversations (user / assistant / tool turns with tool calls, as
in τ-bench trajectories or any OpenAI-style chat log) into a :class:`Conversation`.

The format (docs/importers.md, "Single-agent tool-use conversations") is a JSON array of chat
messages, or an object holding it under ``messages``, ``traj`` or ``trajectory``, with optional
``task`` / ``question`` / ``instruction`` (or τ-bench's ``info.task.instruction``), ``task_id``
/ ``id``, ``trial``, ``reward`` and the evaluation labels ``mistake_agent`` / ``mistake_step``
/ ``mistake_reason`` (a step is an index into the message list). A file may hold several runs:
a JSON array of such objects (τ-bench's ``historical_trajectories/*.json``) is one
conversation per run. A message has a ``role`` (``system``, ``user``, ``assistant``, ``tool`` or
``function``), a ``content`` (a string, ``null`` or a list of ``{"type": "text", "text"}``
parts), and optionally ``name``, ``tool_calls`` (``[{"id", "function": {"name",
"arguments"}}]``) and ``tool_call_id``.

>>> [conv] = parse_tool_use(b'[{"role": "user", "content": "cancel order 7"},'
...     b'{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",'
...     b'"function": {"name": "cancel_order", "arguments": "{\\\\"order_id\\\\": 7}"}}]},'
...     b'{"role": "tool", "tool_call_id": "c1", "content": "Error: order 7 not found"}]', "t.json")
>>> [(t.speaker, t.kind) for t in conv.turns]
[('user', 'task'), ('assistant', 'reply'), ('cancel_order', 'tool')]
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ._conversation import Conversation, Labels, Turn, TurnKind
from ._errors import MalformedInput

FRAMEWORK_TOOL_USE = "tool-use"
_LIST_KEYS = ("messages", "traj", "trajectory")
_TASK_KEYS = ("task", "question", "instruction")
_ROLES = ("system", "user", "assistant", "tool", "function")


class Function(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    arguments: str | dict[str, Any] | None = None


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str | None = None
    function: Function


class ChatMessage(BaseModel):
    """One message of the conversation."""

    model_config = ConfigDict(extra="allow")
    role: Literal["system", "user", "assistant", "tool", "function"]
    content: str = ""
    name: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None

    @field_validator("content", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        if value is None:
            return ""
        if isinstance(value, list):  # content parts: keep the text ones
            return "\n".join(
                str(p.get("text", "")) for p in value if isinstance(p, dict) and "text" in p
            )
        return value


def _messages(doc: Any) -> Any:
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict):
        return next((doc[k] for k in _LIST_KEYS if isinstance(doc.get(k), list)), None)
    return None


def _runs(doc: Any) -> list[Any] | None:
    """The runs of a multi-run file: a non-empty list of objects that each hold messages."""
    ok = isinstance(doc, list) and bool(doc) and all(isinstance(d, dict) for d in doc)
    return doc if ok and all(isinstance(_messages(d), list) for d in doc) else None


def looks_like_tool_use(doc: Any) -> bool:
    """Whether a decoded document is a chat-message list (or an object holding one, or a list
    of such objects) whose first message has a chat ``role``; well-formedness is
    :func:`parse_tool_use`'s business."""
    runs = _runs(doc)
    msgs = _messages(runs[0] if runs else doc)
    return (
        isinstance(msgs, list)
        and bool(msgs)
        and isinstance(msgs[0], dict)
        and msgs[0].get("role") in _ROLES
    )


def _call_text(call: ToolCall) -> str:
    args = call.function.arguments
    text = args if isinstance(args, str) else json.dumps(args or {}, sort_keys=True)
    # A fenced block, so the span mapping files the tool's output under this step (as code).
    return f"```tool_call\n{call.function.name}({text})\n```"


def parse_tool_use(data: bytes, source: str) -> list[Conversation]:
    """Parse and validate a file of tool-use conversations, one per run (a single run is a
    one-item list); ``MalformedInput`` names the broken run and message."""
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedInput(source, None, f"not valid JSON: {exc}") from None
    runs = _runs(doc)
    if runs is None:
        return [_conversation(doc, source, "")]
    return [_conversation(run, f"{source}#{k}", f"[{k}].") for k, run in enumerate(runs)]


def _task(meta: dict[str, Any]) -> str | None:
    task = next((meta[k] for k in _TASK_KEYS if meta.get(k) is not None), None)
    if isinstance(task, str):
        return task
    info = meta.get("info")
    inner = info.get("task") if isinstance(info, dict) else task
    instruction = inner.get("instruction") if isinstance(inner, dict) else None
    return instruction if isinstance(instruction, str) else None


def _conversation(doc: Any, source: str, where: str) -> Conversation:
    raw = _messages(doc)
    if not isinstance(raw, list):
        raise MalformedInput(
            source, None, "expected a list of chat messages (or an object with 'messages')"
        )
    if not raw:
        raise MalformedInput(source, f"{where}messages", "is empty")
    msgs: list[ChatMessage] = []
    for i, m in enumerate(raw):
        try:
            msgs.append(ChatMessage.model_validate(m))
        except ValidationError as exc:
            err = exc.errors()[0]
            at = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"])
            raise MalformedInput(source, f"{where}messages[{i}]{at}", err["msg"]) from None
    meta = doc if isinstance(doc, dict) else {}
    call_names: dict[str, str] = {}
    turns: list[Turn] = []
    task_seen = False
    for i, m in enumerate(msgs):
        kind: TurnKind
        text = m.content
        if m.role == "system":
            speaker, kind = "system", "task"
        elif m.role == "user":
            speaker, kind = m.name or "user", "reply" if task_seen else "task"
            task_seen = True
        elif m.role == "assistant":
            speaker, kind = m.name or "assistant", "reply"
            for call in m.tool_calls or []:
                if call.id:
                    call_names[call.id] = call.function.name
                text = (text + "\n" + _call_text(call)).strip()
        else:
            speaker = m.name or call_names.get(m.tool_call_id or "", "") or "tool"
            kind = "tool"
        turns.append(Turn(i, speaker, m.role, kind, text))
    task = _task(meta)
    first_user = next((t.content for t in turns if t.role == "user"), "")
    agent = next((t.speaker for t in turns if t.role == "assistant"), "assistant")
    run_id = meta.get("task_id", meta.get("id"))
    if run_id is not None and meta.get("trial") is not None:
        run_id = f"{run_id}/{meta['trial']}"
    return Conversation(
        source=source,
        framework=FRAMEWORK_TOOL_USE,
        question=(task or first_user).strip(),
        source_id=None if run_id is None else str(run_id),
        turns=tuple(turns),
        planner=agent,
        tool_speakers=frozenset(t.speaker for t in turns if t.kind == "tool"),
        labels=_labels(meta, source),
    )


def _labels(meta: dict[str, Any], source: str) -> Labels | None:
    agent, step = meta.get("mistake_agent"), meta.get("mistake_step")
    if agent is None or step is None:
        return None
    try:
        index = int(str(step).strip())
    except ValueError:
        raise MalformedInput(source, "mistake_step", "is not an integer") from None
    return Labels(str(agent), index, str(meta.get("mistake_reason") or ""))

"""Read Who&When multi-agent failure logs (Magentic-One and AG2/CaptainAgent) into a
:class:`Conversation`.

>>> conv = parse_whowhen(b'{"question": "2+2?", "history": [{"role": "human", "content": "2+2?"}, '
...     b'{"role": "Orchestrator (-> Assistant)", "content": "add"}, '
...     b'{"role": "Assistant", "content": "5"}]}', "x.json")
>>> [(t.speaker, t.kind) for t in conv.turns]
[('human', 'task'), ('Orchestrator', 'dispatch'), ('Assistant', 'reply')]
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ._conversation import (
    FRAMEWORK_AG2,
    FRAMEWORK_MAGENTIC,
    MANAGER,
    Conversation,
    Labels,
    Ledger,
    Turn,
    TurnKind,
)
from ._errors import MalformedInput

_ROLE = re.compile(r"^\s*([^()]+?)\s*\((.*)\)\s*$")
_DISPATCH = re.compile(r"^->\s*(.+)$")
_PLAN_PREFIX = ("initial plan:", "new plan:")
_LEDGER_PREFIX = "updated ledger:"
_FINAL_ANSWER = re.compile(r"FINAL ANSWER:\s*(.+)")
_EXIT = re.compile(r"^\s*exitcode:\s*(-?\d+)", re.I)
_NO_CODE = "no code from the last"


class Message(BaseModel):
    """One ``history`` entry: Magentic-One logs have ``role`` only, AG2 logs ``name`` too."""

    model_config = ConfigDict(extra="allow")
    content: str
    role: str | None = None
    name: str | None = None

    @field_validator("content", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value


class WhoWhenLog(BaseModel):
    """A Who&When file. Label fields are optional (unlabeled logs of the same shape import too)."""

    model_config = ConfigDict(extra="allow")
    history: list[Message]
    question: str | None = None
    question_ID: str | None = None
    mistake_agent: str | None = None
    mistake_step: str | int | None = None
    mistake_reason: str | None = None
    system_prompt: dict[str, Any] | None = None


def looks_like_whowhen(doc: Any) -> bool:
    """Whether a decoded JSON document has the Who&When shape (an object with a ``history``
    list); whether its records are well-formed is :func:`parse_whowhen`'s business."""
    return isinstance(doc, dict) and isinstance(doc.get("history"), list)


def parse_whowhen(data: bytes, source: str) -> Conversation:
    """Parse and validate a whole Who&When file; ``MalformedInput`` names the broken record."""
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedInput(source, None, f"not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise MalformedInput(source, None, "expected a JSON object with a 'history' list")
    try:
        log = WhoWhenLog.model_validate(doc)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"])
        raise MalformedInput(source, where.lstrip(".") or None, err["msg"]) from None
    if not log.history:
        raise MalformedInput(source, "history", "is empty")
    for i, m in enumerate(log.history):
        if not (m.role or m.name):
            raise MalformedInput(source, f"history[{i}]", "has neither 'role' nor 'name'")
    magentic = any(_ROLE.match(m.role or "") for m in log.history)
    turns = _magentic_turns(log) if magentic else _ag2_turns(log)
    return Conversation(
        source=source,
        framework=FRAMEWORK_MAGENTIC if magentic else FRAMEWORK_AG2,
        question=(log.question or _question(turns)).strip(),
        source_id=log.question_ID,
        turns=tuple(turns),
        planner=_planner(turns) if magentic else MANAGER,
        tool_speakers=frozenset(t.speaker for t in turns if t.kind == "tool"),
        labels=_labels(log, source),
        final_answer=_final_answer(turns),
    )


def _labels(log: WhoWhenLog, source: str) -> Labels | None:
    if log.mistake_agent is None or log.mistake_step is None:
        return None
    try:
        step = int(str(log.mistake_step).strip())
    except ValueError:
        raise MalformedInput(source, "mistake_step", "is not an integer") from None
    return Labels(log.mistake_agent, step, log.mistake_reason or "")


def _question(turns: list[Turn]) -> str:
    return next((t.content for t in turns if t.kind == "task"), "")


def _planner(turns: list[Turn]) -> str:
    return next((t.speaker for t in turns if t.kind in ("plan", "ledger", "dispatch")), "planner")


def _final_answer(turns: list[Turn]) -> str | None:
    for t in reversed(turns):
        m = _FINAL_ANSWER.search(t.content)
        if m:
            return m.group(1).strip()
    return None


def is_final(role: str, text: str) -> bool:
    """Whether a history entry ends the run: a Magentic-One ``Orchestrator (termination …)``
    turn, or an AG2 turn that says only ``TERMINATE``. The stored trace is read back with the
    same rule (``attribution.conversation_from_trace``).

    >>> is_final("Orchestrator (termination condition)", "No agent selected.")
    True
    >>> is_final("Verification_Expert", "TERMINATE."), is_final("Verification_Expert", "Done")
    (True, False)
    """
    match = _ROLE.match(role)
    if match and match.group(2).strip().startswith("termination"):
        return True
    return text.strip().upper().rstrip(".!") == "TERMINATE"


def _magentic_turns(log: WhoWhenLog) -> list[Turn]:
    turns: list[Turn] = []
    for i, m in enumerate(log.history):
        role = (m.role or m.name or "").strip()
        match = _ROLE.match(role)
        text = m.content
        head = text.lstrip().lower()
        kind: TurnKind
        target = None
        ledger = None
        if match:
            speaker, mode = match.group(1), match.group(2).strip()
            dispatch = _DISPATCH.match(mode)
            if dispatch:
                kind, target = "dispatch", dispatch.group(1).strip()
            elif is_final(role, text):
                kind = "final"
            elif head.startswith(_PLAN_PREFIX):
                kind = "plan"
            elif head.startswith(_LEDGER_PREFIX):
                kind, ledger = "ledger", parse_ledger(text)
            else:
                kind = "thought"
        elif role.lower() in ("human", "user"):
            speaker, kind = "human", "task"
        else:
            speaker, kind = role, "reply"
        turns.append(Turn(i, speaker, role, kind, text, target, ledger))
    return turns


def _ag2_turns(log: WhoWhenLog) -> list[Turn]:
    names = [(m.name or m.role or "").strip() for m in log.history]
    tools = _tool_speakers(names, [m.content for m in log.history])
    turns: list[Turn] = []
    for i, (m, name) in enumerate(zip(log.history, names, strict=True)):
        text = m.content
        kind: TurnKind
        if i == 0 and ("plan for solving" in text.lower() or "from your manager" in text.lower()):
            kind = "plan"
        elif name in tools:
            kind = "tool"
        elif is_final(name, text):
            kind = "final"
        elif name.lower() in ("human", "user_proxy") and i == 0:
            kind = "task"
        else:
            kind = "reply"
        turns.append(Turn(i, name, m.role or name, kind, text))
    return turns


def _tool_speakers(names: list[str], contents: list[str]) -> set[str]:
    """Speakers whose every message is code-execution output (AG2's code executor)."""
    by: dict[str, list[str]] = {}
    for n, c in zip(names, contents, strict=True):
        by.setdefault(n, []).append(c)
    return {
        n
        for n, cs in by.items()
        if any(_EXIT.match(c) for c in cs)
        and all(_EXIT.match(c) or _NO_CODE in c.lower() for c in cs)
    } | {n for n, cs in by.items() if all(_NO_CODE in c.lower() for c in cs)}


def exit_code(text: str) -> int | None:
    """The exit code of a code-execution output, if the text is one.

    >>> exit_code("exitcode: 1 (execution failed)")
    1
    """
    m = _EXIT.match(text)
    return int(m.group(1)) if m else None


def parse_ledger(text: str) -> Ledger:
    """A progress ledger from ``Updated Ledger: {...}``; fields the LLM garbled are ``None``."""
    body = text[text.find("{") : text.rfind("}") + 1] if "{" in text else ""
    try:
        doc = json.loads(body) if body else {}
    except ValueError:
        doc = {}
    if not isinstance(doc, dict):
        doc = {}

    def answer(key: str) -> Any:
        v = doc.get(key)
        return v.get("answer") if isinstance(v, dict) else None

    def flag(key: str) -> bool | None:
        v = answer(key)
        return v if isinstance(v, bool) else None

    def text_of(key: str) -> str | None:
        v = answer(key)
        return v if isinstance(v, str) else None

    reasons = {
        k: str(v.get("reason", "")) for k, v in doc.items() if isinstance(v, dict) and "reason" in v
    }
    return Ledger(
        is_request_satisfied=flag("is_request_satisfied"),
        is_in_loop=flag("is_in_loop"),
        is_progress_being_made=flag("is_progress_being_made"),
        next_speaker=text_of("next_speaker"),
        instruction=text_of("instruction_or_question"),
        reasons=reasons,
    )

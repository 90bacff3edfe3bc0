"""AutoGen's own OpenTelemetry, read across spans (:func:`planscope_collector.observed.bind`
calls :func:`runtime_turns` and :func:`bullet_plan`; :func:`message_text` is what
``observed.answer`` reads of a runtime's ``process`` span).

AutoGen's agent runtime traces each message it moves as ``autogen {create|send|publish|process|
ack} {destination}`` spans; a ``process`` span delivers one message to one agent and carries the
message's JSON (``message``). autogen-core's GenAI spans (``invoke_agent {agent}`` for an
agent's turn, ``execute_tool {tool}`` for its calls) sit inside the ``process`` span that
started the turn. What the team said (the task, an orchestrator's instructions and ledgers, the
agents' reports) is only in those messages: there is no LLM span.

* a **turn** (an agent run the span model inferred) inside runtime spans belongs to the span
  above them (the application's root: the team's run);
* what a turn **was asked** is the last message the runtime delivered before it started (a
  Magentic-One orchestrator's instruction naming the step; in a round-robin chat the message
  the agent answers); what it **answered** is the first message delivered after it began (the
  runtime delivers the agent's reply before anyone speaks again): a planner agent's plan;
* the **tool calls** an agent reports (its tool call events: the calls it asked for, then
  their results, by call id) until its next turn are the arguments and results of its
  ``execute_tool`` spans, which record neither;
* a **bullet plan** (a Magentic-One task ledger: ``- <step> (<agent>): <goal> -- <tool>(<arg>=
  <value>, ...)``, one bullet a step) in a delivered message is a plan, each later ledger with
  bullets a re-plan (done-marked bullets keep their steps' ids).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from planscope import safejson
from planscope import semconv as A

__all__ = [
    "Bullet",
    "Delivery",
    "Turns",
    "bullet_plan",
    "message_text",
    "plan_objects",
    "runtime_turns",
]

_RUNTIME_SPAN = re.compile(r"^autogen (?:create|send|publish|process|ack)\b")
"""AutoGen's runtime names its message spans ``autogen {operation} {destination}``."""


def message_text(attributes: Mapping[str, str]) -> str:
    """The text of the message an AutoGen runtime's ``process`` span delivers (its ``message``
    JSON: a group chat's start, an agent's response, a message it published), texts of several
    messages one per line; a message of tool calls (or their results) as their JSON list; empty
    for any other span and for a message that says nothing.

    >>> message_text({"messaging.operation": "process", "message":
    ...     '{"response": {"chat_message": {"source": "lead", "content": "Please do fetch"}}}'})
    'Please do fetch'
    >>> message_text({"messaging.operation": "process", "message": '{"messages": ['
    ...     '{"source": "user", "content": "Ship order 7", "type": "TextMessage"}]}'})
    'Ship order 7'
    >>> message_text({"messaging.operation": "process", "message": '{"message": {"content": '
    ...     '[{"id": "c1", "name": "store", "arguments": "{}"}]}}'})
    '[{"id": "c1", "name": "store", "arguments": "{}"}]'
    >>> message_text({"messaging.operation": "publish", "message": '{"message": {"content": "x"}}'})
    ''
    """
    text = attributes.get(A.AUTOGEN_MESSAGE) or ""
    if attributes.get(A.AUTOGEN_MESSAGING_OPERATION) != "process" or not text.startswith("{"):
        return ""
    decoded = safejson.load_object(text)
    response, messages = decoded.get("response"), decoded.get("messages")
    said = [
        *(messages if isinstance(messages, list) else []),
        decoded.get("message"),
        response.get("chat_message") if isinstance(response, dict) else None,
    ]
    texts = []
    for m in said:
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list) and content and all(_is_call(c) for c in content):
            texts.append(json.dumps(content))  # tool calls it asked for, or their results
    return "\n".join(texts)


def _is_call(item: Any) -> bool:
    """A tool call an agent asked for (``id``, ``name``, ``arguments``) or its result
    (``call_id``, ``name``, ``content``, ``is_error``), as AutoGen's events list them."""
    return (
        isinstance(item, dict)
        and isinstance(item.get("name"), str)
        and (isinstance(item.get("arguments"), str) or "call_id" in item)
    )


def _calls(text: str) -> list[dict[str, Any]]:
    """The tool calls or results a message's text lists (:func:`message_text`); [] else."""
    if not text.startswith("[{"):
        return []
    try:
        decoded = safejson.loads(text)
    except ValueError:
        return []
    return decoded if isinstance(decoded, list) and all(_is_call(c) for c in decoded) else []


@dataclass(frozen=True)
class Delivery:
    """A message the runtime delivered (its first ``process`` span since the last turn began)
    and when."""

    span_id: str
    start_ns: int
    text: str


@dataclass(frozen=True)
class Turns:
    """What :func:`runtime_turns` read: the turns re-parented (span id → the span above the
    runtime's spans), what each was asked and answered, the distinct messages delivered in
    start order (but tool calls), and per turn the tool calls its agent reported until the next
    turn began (tool, arguments, result; in call order)."""

    parents: dict[str, str] = field(default_factory=dict)
    asked: dict[str, str] = field(default_factory=dict)
    answered: dict[str, str] = field(default_factory=dict)
    deliveries: tuple[Delivery, ...] = ()
    calls: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)


def runtime_turns(
    spans: Iterable[tuple[str, str, str, int, bool, str]],
) -> Turns:
    """The turns of an AutoGen trace (module docstring): ``spans`` as ``(span_id, parent,
    name, start_ns, is_turn, text)``, ``text`` a ``process`` span's :func:`message_text`; the
    tool calls an agent reports (AutoGen's tool call events) are matched with their results by
    call id. A trace with no runtime span gives an empty :class:`Turns`.

    >>> t = runtime_turns([
    ...     ("r", "", "contract 7", 0, False, ""),
    ...     ("p1", "r", "autogen process lead", 1, False, "Plan: fetch"),
    ...     ("p2", "r", "autogen process worker", 2, False, "Please do fetch"),
    ...     ("p3", "r", "autogen process worker", 3, False, "Please do fetch"),
    ...     ("p4", "r", "autogen process worker", 4, False, ""),
    ...     ("w", "p4", "invoke_agent worker", 5, True, ""),
    ...     ("p5", "r", "autogen process lead", 6, False,
    ...      '[{"id": "c1", "name": "store", "arguments": "[7]"}]'),
    ...     ("p6", "r", "autogen process lead", 7, False,
    ...      '[{"call_id": "c1", "name": "store", "content": "ok", "is_error": false}]'),
    ...     ("p7", "r", "autogen process lead", 8, False, "fetch finished"),
    ...     ("p8", "r", "autogen process worker", 9, False, "Please do send"),
    ... ])
    >>> t.parents, t.asked, t.answered, [d.span_id for d in t.deliveries]
    ({'w': 'r'}, {'w': 'Please do fetch'}, {'w': 'fetch finished'}, ['p1', 'p2', 'p7', 'p8'])
    >>> t.calls
    {'w': [('store', '[7]', 'ok')]}
    """
    rows = list(spans)
    runtime = {
        s[0]: s[1] for s in rows if s[2].startswith("autogen ") and _RUNTIME_SPAN.match(s[2])
    }
    if not runtime:
        return Turns()
    rows.sort(key=lambda s: (s[3], s[0]))
    parents: dict[str, str] = {}
    asked: dict[str, str] = {}
    answered: dict[str, str] = {}
    deliveries: list[Delivery] = []
    requested: dict[str, dict[str, tuple[str, str]]] = {}  # turn → call id → (tool, arguments)
    results: dict[str, dict[str, str]] = {}  # turn → call id → result
    turn = ""
    since_turn: set[str] = set()  # a broadcast reaches every agent: one delivery per text
    for span_id, parent, _, start_ns, is_turn, text in rows:
        if span_id in runtime and (calls := _calls(text)):
            for c in calls if turn else ():
                if "call_id" in c:
                    results.setdefault(turn, {})[str(c["call_id"])] = str(c.get("content", ""))
                else:
                    call = (c["name"], c["arguments"])
                    requested.setdefault(turn, {})[str(c.get("id", ""))] = call
        elif is_turn:
            turn = span_id
            above = parent
            for _ in range(len(runtime) + 1):
                if above not in runtime:
                    break
                above = runtime[above]
            if above != parent:
                parents[span_id] = above
            if deliveries:
                asked[span_id] = deliveries[-1].text
            since_turn = set()
        elif text and span_id in runtime and text not in since_turn:
            since_turn.add(text)
            deliveries.append(Delivery(span_id, start_ns, text))
            if turn and turn not in answered:  # the runtime delivers a turn's reply first
                answered[turn] = text
    made = {
        t: [(tool, args, results.get(t, {}).get(i, "")) for i, (tool, args) in ids.items()]
        for t, ids in requested.items()
    }
    return Turns(parents, asked, answered, tuple(deliveries), made)


_PLAN_HEADING = "Here is the plan to follow as best as possible:"
"""Magentic-One's task ledger states the plan after its fact sheet, under this heading."""
_BULLET = re.compile(
    r"^[ \t]*(?:[-*+\u2022]|\d+[.)])[ \t]+(?:\[[ xX]\][ \t]+)?"
    r"(?P<name>[A-Za-z_][\w.-]*)[ \t]*(?:\((?P<agent>[^()\n]*)\))?[ \t]*:[ \t]*(?P<rest>.*)$"
)
"""A bullet item led by a name: ``- <name> (<agent>): <rest>`` (the agent optional)."""
_CHECKED = re.compile(r"^[ \t]*(?:[-*+\u2022]|\d+[.)])[ \t]+\[[xX]\]")
_DONE = re.compile(r"^(?:done|completed?|finished)\b", re.IGNORECASE)
_CALL = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\(([^()]*)\)")
_SEPARATOR = " \t-\u2013\u2014>:;,."


@dataclass(frozen=True)
class Bullet:
    """One bullet item of a plan: its leading name, the agent in parentheses, its goal, the
    call it states (tool and arguments; a bare earlier item's name as an argument is that
    item's result: ``"<from name>"``), the earlier items it refers to, whether it is marked
    done (and what it said after the mark)."""

    name: str
    agent: str
    goal: str
    tool: str
    args: dict[str, Any]
    depends_on: tuple[str, ...]
    done: bool
    result: str = ""


def bullet_plan(text: str) -> list[Bullet]:
    """The items of the plan a text states as a bullet list (:class:`Bullet`), in order: its
    last run of consecutive bullet lines each led by a name and saying more than one word after
    it (``- reader: 12`` is a fact; a fact sheet's lists come before the plan), read after
    Magentic-One's plan heading when the text has it; [] when none.

    >>> items = bullet_plan("Facts:\\n- order: 7\\n\\nPlan:\\n- fetch (reader): Get it -- "
    ...     "store(key='k7', n=2)\\n- send (mailer): Mail it -- mail(body=fetch)\\n"
    ...     "- pick: done (ok)")
    >>> [(b.name, b.agent, b.tool, b.done) for b in items]
    [('fetch', 'reader', 'store', False), ('send', 'mailer', 'mail', False), ('pick', '', '', True)]
    >>> items[0].args, items[1].args, items[1].depends_on, items[2].result
    ({'key': 'k7', 'n': 2}, {'body': '<from fetch>'}, ('fetch',), 'ok')
    """
    _, heading, after = text.partition(_PLAN_HEADING)
    blocks: list[list[re.Match[str]]] = [[]]
    for line in (after if heading else text).splitlines():
        if (m := _BULLET.match(line)) and (m.group("agent") or len(m.group("rest").split()) > 1):
            blocks[-1].append(m)
        elif blocks[-1]:
            blocks.append([])
    out: list[Bullet] = []
    for m in next((b for b in reversed(blocks) if b), []):
        rest = m.group("rest").strip()
        done = bool(_DONE.match(rest) or _CHECKED.match(m.group(0)))
        earlier = {b.name for b in out}
        tool, args, span = "", {}, (len(rest), len(rest))
        for call in _CALL.finditer(rest):
            parsed = _arguments(call.group(2), earlier)
            if parsed is not None:  # the last call-shaped part whose arguments parse
                tool, args, span = call.group(1), parsed, call.span()
        goal = (rest[: span[0]] + rest[span[1] :]).strip(_SEPARATOR)
        refs = tuple(dict.fromkeys(v[6:-1] for v in args.values() if _is_reference(v)))
        out.append(
            Bullet(
                m.group("name"),
                (m.group("agent") or "").strip(),
                "" if done else goal,
                tool,
                args,
                refs,
                done,
                _DONE.sub("", rest).strip(_SEPARATOR + "()") if done else "",
            )
        )
    return out


def _is_reference(value: Any) -> bool:
    return isinstance(value, str) and value.startswith("<from ") and value.endswith(">")


def _arguments(text: str, earlier: set[str]) -> dict[str, Any] | None:
    """The keyword arguments of a call's argument text (literals as values, a bare name of an
    earlier item as that item's result, any other expression as its text); None when the text
    is not keyword arguments."""
    if not text.strip():
        return {}
    try:
        call = ast.parse(f"f({text})", mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call) or call.args:
        return None
    out: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:
            return None
        value = kw.value
        if isinstance(value, ast.Constant):
            out[kw.arg] = value.value
        elif isinstance(value, ast.Name) and value.id in earlier:
            out[kw.arg] = f"<from {value.id}>"
        else:
            out[kw.arg] = ast.unparse(value)
    return out


def plan_objects(items: list[Bullet]) -> list[dict[str, Any]]:
    """A bullet plan's step objects (``id``, ``tool``, ``args``, ``depends_on``,
    ``description``, ``agent``; a done item's ``result``), as the plan readers write them."""
    out = []
    for b in items:
        obj: dict[str, Any] = {"id": b.name, "tool": b.tool, "args": b.args}
        if b.depends_on:
            obj["depends_on"] = list(b.depends_on)
        if b.goal:
            obj["description"] = b.goal
        if b.agent:
            obj["agent"] = b.agent
        if b.done:
            obj["result"] = b.result
        out.append(obj)
    return out

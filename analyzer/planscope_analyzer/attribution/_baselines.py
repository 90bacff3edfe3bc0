"""Simple baselines every attribution method must beat, computed on the same logs.

Each takes a conversation and returns ``(agent, step)`` or ``None`` when the log has no agent
turn at all. They need no training.

>>> from planscope_analyzer.importers import parse_whowhen
>>> conv = parse_whowhen(b'{"history": [{"name": "A", "content": "plan"},'
...     b'{"name": "B", "content": "```py\\\\nx\\\\n```"}, {"name": "T", "content": "exitcode: 1"},'
...     b'{"name": "B", "content": "fixed"}, {"name": "A", "content": "TERMINATE"}]}', "x.json")
>>> {k: f(conv) for k, f in BASELINES.items()}  # doctest: +NORMALIZE_WHITESPACE
{'planner-first-turn': ('A', 0), 'most-active-first-turn': ('A', 0),
 'first-error-receiver': ('B', 1), 'last-before-final': ('B', 3)}
"""

from __future__ import annotations

from collections.abc import Callable

from ..importers._conversation import Conversation, Turn
from ._features import plan_owner, shows_error

Pick = tuple[str, int] | None


def _acting(conv: Conversation) -> list[Turn]:
    return [
        t
        for t in conv.turns
        if t.kind not in ("task", "tool") and t.speaker not in conv.tool_speakers
    ]


def planner_first_turn(conv: Conversation) -> Pick:
    """The agent that posted the plan (the orchestrator, or whoever set the approach), at its
    first turn."""
    owner = plan_owner(conv)
    first = next((t for t in _acting(conv) if t.speaker == owner), None)
    return (first.speaker, first.index) if first else None


def most_active_first_turn(conv: Conversation) -> Pick:
    """The agent with the most turns, at its first turn (ties: whoever spoke first)."""
    acting = _acting(conv)
    if not acting:
        return None
    counts: dict[str, int] = {}
    for t in acting:
        counts[t.speaker] = counts.get(t.speaker, 0) + 1
    top = max(counts, key=lambda s: counts[s])  # dicts keep first-appearance order
    first = next(t for t in acting if t.speaker == top)
    return first.speaker, first.index


def first_error_receiver(conv: Conversation) -> Pick:
    """The first agent an error came back to, at the turn that provoked it; the planner's
    first turn when no error shows in the log."""
    acting = {t.index for t in _acting(conv)}
    turns = conv.turns
    for k in range(1, len(turns)):
        prev, cur = turns[k - 1], turns[k]
        if prev.index in acting and cur.speaker != prev.speaker and shows_error(cur):
            return prev.speaker, prev.index
    return planner_first_turn(conv)


def last_before_final(conv: Conversation) -> Pick:
    """The last agent to act before the final answer, other than the one that gave it."""
    acting = _acting(conv)
    if not acting:
        return None
    final = acting[-1]
    before = next((t for t in reversed(acting[:-1]) if t.speaker != final.speaker), None)
    return (before.speaker, before.index) if before else (final.speaker, final.index)


BASELINES: dict[str, Callable[[Conversation], Pick]] = {
    "planner-first-turn": planner_first_turn,
    "most-active-first-turn": most_active_first_turn,
    "first-error-receiver": first_error_receiver,
    "last-before-final": last_before_final,
}
"""The baselines, by the name the evaluation prints."""

"""Structural repetition signals in a multi-agent log (no analyzer needed).

>>> from planscope_analyzer.importers import parse_whowhen
>>> conv = parse_whowhen(b'{"history": [{"name": "A", "content": "TERMINATE"}]}', "x.json")
>>> loop_signals(conv)
[]
"""

from __future__ import annotations

from collections import Counter

from planscope._capture import normalise_message

from ..importers._conversation import Conversation
from ..importers._whowhen import exit_code

REPEATED_DISPATCHES = 3
"""The same instruction to the same executor this many times is a loop (two is a retry)."""
REPEATED_FAILURES = 2
"""Failed code executions in one run (same error or not) that show a fix-and-retry cycle."""


def loop_signals(conv: Conversation) -> list[str]:
    """Reasons to believe the run repeated itself without progress (empty: none seen)."""
    out: list[str] = []
    in_loop = [t.index for t in conv.turns if t.ledger is not None and t.ledger.is_in_loop]
    if in_loop:
        out.append(f"the planner's ledger reported a loop at steps {in_loop[:5]}")
    dispatches = Counter(
        (t.target, normalise_message(t.content.lower())) for t in conv.turns if t.kind == "dispatch"
    )
    for (target, _), n in dispatches.items():
        if n >= REPEATED_DISPATCHES:
            out.append(f"the same instruction went to {target} {n} times")
    failures = [
        t.index for t in conv.turns if t.kind == "tool" and exit_code(t.content) not in (None, 0)
    ]
    if len(failures) >= REPEATED_FAILURES:
        out.append(f"code failed {len(failures)} times (steps {failures[:5]})")
    if conv.turns and not _terminated(conv):
        out.append("the run stopped without terminating: its turn budget ran out")
    return out


def _terminated(conv: Conversation) -> bool:
    """Whether the log ends with a termination (a final answer, TERMINATE, a final turn)."""
    if conv.final_answer is not None:
        return True
    last = conv.turns[-1]
    return last.kind == "final" or "TERMINATE" in last.content[-200:]

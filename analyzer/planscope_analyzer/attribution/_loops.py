"""Structural repetition signals in a multi-agent log (no analyzer needed).

>>> from planscope_analyzer.importers import parse_whowhen
>>> conv = parse_whowhen(b'{"history": [{"name": "A", "content": "TERMINATE"}]}', "x.json")
>>> loop_signals(conv)
[]
"""

from __future__ import annotations

from planscope.fingerprints import normalise_message

from ..importers._conversation import Conversation
from ..importers._whowhen import exit_code

REPEATED_DISPATCHES = 3
"""The same instruction to the same executor this many times is a loop (two is a retry)."""
SIMILAR_INSTRUCTIONS = 0.6
"""Word-set Jaccard similarity above which two instructions count as the same request
(re-worded retries such as "continue to scroll … to find X")."""
REPEATED_FAILURES = 2
"""Failed code executions in one run (same error or not) that show a fix-and-retry cycle."""


def loop_signals(conv: Conversation) -> list[str]:
    """Reasons to believe the run repeated itself without progress (empty: none seen)."""
    out: list[str] = []
    in_loop = [t.index for t in conv.turns if t.ledger is not None and t.ledger.is_in_loop]
    if in_loop:
        out.append(f"the planner's ledger reported a loop at steps {in_loop[:5]}")
    by_target: dict[str | None, list[set[str]]] = {}
    for t in conv.turns:
        if t.kind != "dispatch":
            continue
        words = set(normalise_message(t.content.lower()).split())
        earlier = by_target.setdefault(t.target, [])
        similar = sum(_jaccard(words, w) >= SIMILAR_INSTRUCTIONS for w in earlier)
        earlier.append(words)
        if similar + 1 == REPEATED_DISPATCHES:
            out.append(
                f"the same instruction (or nearly) went to {t.target} "
                f"{REPEATED_DISPATCHES} times, the last at step {t.index}"
            )
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


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0

"""Structural repetition signals in a multi-agent log (no analyzer needed).

>>> from planscope_analyzer.importers import parse_whowhen
>>> conv = parse_whowhen(b'{"history": [{"role": "human", "content": "q"}]}', "x.json")
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
"""Consecutive failed code executions with the same normalised error: a loop without progress."""


def loop_signals(conv: Conversation) -> list[str]:
    """Reasons to believe the run repeated itself without progress (empty: none seen)."""
    out: list[str] = []
    in_loop = [t.index for t in conv.turns if t.ledger is not None and t.ledger.is_in_loop]
    if in_loop:
        out.append(f"the planner's ledger reported a loop at steps {in_loop[:5]}")
    dispatches = Counter((t.target, normalise_message(t.content.lower()))
                         for t in conv.turns if t.kind == "dispatch")
    for (target, _), n in dispatches.items():
        if n >= REPEATED_DISPATCHES:
            out.append(f"the same instruction went to {target} {n} times")
    streak, last = 0, None
    for t in conv.turns:
        if t.kind != "tool":
            continue
        rc = exit_code(t.content)
        if rc not in (None, 0):
            err = normalise_message(t.content.strip().splitlines()[-1] if t.content.strip()
                                    else "")
            streak = streak + 1 if err == last else 1
            last = err
            if streak == REPEATED_FAILURES:
                out.append(f"code failed {streak} times in a row with the same error at step "
                           f"{t.index}")
        elif rc == 0:
            streak, last = 0, None
    return out

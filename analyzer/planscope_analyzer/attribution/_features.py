"""Candidate (agent, step) pairs of a conversation and the features that describe them.

Every feature is computable on any multi-agent (or single-agent tool-use) conversation: who
acted, in which role, where in the log, what came back to them, what they repeated, what facts
they introduced and whether the final answer rests on them. None names a framework, an agent or
a dataset value; docs/attribution.md justifies each one.

>>> from planscope_analyzer.importers import parse_whowhen
>>> conv = parse_whowhen(b'{"question": "Population of X?", "history": ['
...     b'{"name": "A", "role": "assistant", "content": "Plan: look it up"},'
...     b'{"name": "B", "role": "user", "content": "X has 12,345 people."},'
...     b'{"name": "A", "role": "user", "content": "TERMINATE"}]}', "x.json")
>>> cands = candidates(conv)
>>> [(c.agent, c.step) for c in cands]
[('A', 0), ('B', 1), ('A', 2)]
>>> cands[1].values["new_facts"] > 0
True
>>> [c.values["answer_source"] for c in candidates(parse_whowhen(b'{"question": "Who?", '
...     b'"history": [{"name": "A", "content": "Ask B"}, {"name": "B", "content": "Ada Lovelace"},'
...     b'{"name": "A", "content": "FINAL ANSWER: Ada Lovelace"}]}', "x.json"))]
[0.0, 1.0, 0.0]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..importers._conversation import Conversation, Turn
from ..importers._whowhen import exit_code

FEATURES: tuple[str, ...] = (
    "position",
    "first_action",
    "speaker_first_turn",
    "by_plan_owner",
    "speaker_share",
    "plan",
    "replan_decision",
    "revised_plan",
    "first_revision",
    "instruction",
    "self_assessment",
    "error_follows",
    "first_error_cause",
    "reports_error",
    "after_error",
    "repeated_later",
    "repetition_start",
    "repeats_earlier",
    "new_facts",
    "answer_origin",
    "answer_rests_on",
    "last_action",
    "hedge",
    "code",
    "judged_no_progress",
    "answer_source",
)
"""Feature names, in the order of the model's weight vector."""

PRIOR: dict[str, float] = {"first_error_cause": 3.0, "first_action": 1.0}
"""The ranker before it has seen a log: the first turn an error came back to (e^3 = 20 times as
likely as an ordinary turn), else the first action (e^1 = 2.7 times) — the
``first-error-receiver`` baseline, softened. Fitting shrinks the weights towards this, not
towards zero (uniform over turns, i.e. "whoever has most turns"): with few logs of a kind the
model stays near a rule that needs no training; with many, the logs decide. The two values
were the first guess, set before any fit with them (docs/attribution.md lists the others
tried afterwards)."""

SIMILAR = 0.6
"""Word-set Jaccard similarity at which two turns of one speaker count as the same action
(a re-worded retry). Fixed a priori, not tuned: two thirds of the words shared is a paraphrase."""
MIN_WORDS = 3
"""Distinctive words a turn needs before it can count as repeating another."""
FACTS_CAP = 5
"""New numbers at which ``new_facts`` saturates (the feature is ``min(count, 5) / 5``)."""

_WORD = re.compile(r"[a-z0-9]+")
_NUM = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.S)
_ERROR = re.compile(
    r"traceback \(most recent call last\)|\b\w*(?:error|exception)\b\s*:|"
    r"\b(?:error|errors|failed|failure)\b",
    re.I,
)
_HEDGE = re.compile(
    r"\b(assum\w*|hypothetical\w*|simulat\w*|placeholder\w*|dummy|mock\w*|for demonstration|"
    r"for illustration|let's say|sample data|example data|fictional|made-up|"
    r"I don't have access|cannot access|unable to access|typically|approximately|estimated?)\b",
    re.I,
)
"""Words by which an agent marks its own output as assumed, simulated or unverified (general
English hedges, not phrases of any dataset)."""
_TERMINATE = re.compile(r"\bTERMINATE\b")
_ACTING = ("plan", "ledger", "thought", "dispatch", "reply", "final")
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "this",
        "that",
        "with",
        "as",
        "at",
        "by",
        "from",
        "final",
        "answer",
        "terminate",
    ]
)


@dataclass(frozen=True)
class Candidate:
    """One (agent, step) pair that could be blamed, with its feature values."""

    agent: str
    step: int
    turn: Turn
    values: dict[str, float]

    def vector(self) -> list[float]:
        return [self.values[f] for f in FEATURES]


def plan_owner(conv: Conversation) -> str | None:
    """The agent that posted the plan: the speaker of the first plan turn, else the planner if it
    speaks in the log, else the first agent to act (whoever set the approach)."""
    speakers = {t.speaker for t in conv.turns}
    first_plan = next((t for t in conv.turns if t.kind == "plan"), None)
    if first_plan is not None:
        return first_plan.speaker
    if conv.planner in speakers:
        return conv.planner
    first = next((t for t in conv.turns if _acting(conv, t)), None)
    return first.speaker if first else None


def _acting(conv: Conversation, t: Turn) -> bool:
    return t.kind in _ACTING and t.speaker not in conv.tool_speakers


def shows_error(t: Turn) -> bool:
    """A turn that reports a failure: non-zero exit code, a traceback, an exception, an error."""
    rc = exit_code(t.content)
    if rc is not None:
        return rc != 0
    return bool(_ERROR.search(_CODE_BLOCK.sub(" ", t.content)[:2000]))


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _numbers(text: str) -> set[str]:
    out = set()
    for m in _NUM.findall(text):
        v = m.replace(",", "").rstrip(".")
        if len(v.replace(".", "")) >= 2:
            out.add(v)
    return out


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _distinctive_words(turns: list[Turn]) -> dict[int, set[str]]:
    """Each turn's words minus the template: words found in at least half of the turns of the
    same agent and kind (``Next speaker …``, a ledger's keys), which would make every such turn
    look like a repetition of the others. Turns left with fewer than 3 words are not compared."""
    words = {t.index: _words(t.content) for t in turns}
    counts: dict[str, int] = {}
    for ws in words.values():
        for w in ws:
            counts[w] = counts.get(w, 0) + 1
    template = {w for w, c in counts.items() if len(turns) >= 4 and c * 2 >= len(turns)}
    out = {i: ws - template for i, ws in words.items()}
    return {i: ws if len(ws) >= MIN_WORDS else set() for i, ws in out.items()}


def _answer_tokens(conv: Conversation, acting: list[Turn]) -> set[str]:
    """Content words of the final answer: the stated one, else the last substantive turn."""
    text = conv.final_answer
    if not text:
        for t in reversed(acting):
            body = _TERMINATE.sub(" ", t.content).strip()
            if len(body) > 1:
                text = body
                break
    tokens = {w for w in _words(text or "") if w not in _STOP and (len(w) >= 4 or w.isdigit())}
    return tokens - _words(conv.question)


def candidates(conv: Conversation) -> list[Candidate]:
    """Every turn in which a non-tool agent acted, as a candidate with its features."""
    turns = conv.turns
    acting = [t for t in turns if _acting(conv, t)]
    if not acting:
        return []
    # Positions in ``turns``: a stored trace may lack the task turns, so a turn's history
    # index is not always its position in the list.
    pos = {t.index: k for k, t in enumerate(turns)}
    n = max(turns[-1].index, 1)
    owner = plan_owner(conv)
    share: dict[str, int] = {}
    for t in acting:
        share[t.speaker] = share.get(t.speaker, 0) + 1
    plans = [t for t in turns if t.kind == "plan"]
    revised = {p.index for p in plans[1:]}
    decisions: set[int] = set()
    first_revision: set[int] = set()
    for k, p in enumerate(plans[1:]):  # the decision: the plan owner's last turn before it
        before = next(
            (
                t
                for t in reversed(turns[: pos[p.index]])
                if t.speaker == p.speaker and t.kind != "plan"
            ),
            None,
        )
        if before is not None:
            decisions.add(before.index)
        if k == 0:
            first_revision = {p.index} | ({before.index} if before is not None else set())
    by_role: dict[tuple[str, str], list[Turn]] = {}
    for t in acting:
        by_role.setdefault((t.speaker, t.kind), []).append(t)
    repeated_later: set[int] = set()
    repeats_earlier: set[int] = set()
    for ts in by_role.values():
        words = _distinctive_words(ts)
        for i, a in enumerate(ts):
            for b in ts[i + 1 :]:
                if _jaccard(words[a.index], words[b.index]) >= SIMILAR:
                    repeated_later.add(a.index)
                    repeats_earlier.add(b.index)
    error_follows = {
        t.index
        for t in acting
        if pos[t.index] + 1 < len(turns)
        and turns[pos[t.index] + 1].speaker != t.speaker
        and shows_error(turns[pos[t.index] + 1])
    }
    after_error: set[int] = set()
    for idx in sorted(error_follows):
        receiver = turns[pos[idx]].speaker
        nxt = next(
            (t for t in acting if pos[t.index] > pos[idx] + 1 and t.speaker == receiver), None
        )
        if nxt is not None:
            after_error.add(nxt.index)
    no_progress: set[int] = set()
    for t in acting:
        ledger = next((u for u in turns[pos[t.index] + 1 :] if u.ledger is not None), None)
        if ledger is not None and ledger.ledger is not None:
            lg = ledger.ledger
            if lg.is_in_loop or lg.is_progress_being_made is False:
                no_progress.add(t.index)
    answer = _answer_tokens(conv, acting)
    seen_words = _words(conv.question)
    seen_numbers = _numbers(conv.question)
    last_reply = next(
        (t for t in reversed(acting) if t.kind == "reply" and t.speaker != owner),
        None,
    )
    first_error = min(error_follows, default=None)
    first_repeat = min(repeated_later, default=None)
    seen_speakers: set[str] = set()
    out: list[Candidate] = []
    for t in turns:
        if not _acting(conv, t):
            seen_words |= _words(t.content)
            seen_numbers |= _numbers(t.content)
            continue
        prose = _CODE_BLOCK.sub(" ", t.content)
        new_numbers = _numbers(prose) - seen_numbers
        tw = _words(t.content)
        origin = len((answer & tw) - seen_words) / len(answer) if answer else 0.0
        values = {
            "position": t.index / n,
            "first_action": float(t is acting[0]),
            "speaker_first_turn": float(t.speaker not in seen_speakers),
            "by_plan_owner": float(t.speaker == owner),
            "speaker_share": share[t.speaker] / len(acting),
            "plan": float(t.kind == "plan" and t.index not in revised),
            "replan_decision": float(t.index in decisions),
            "revised_plan": float(t.index in revised),
            "first_revision": float(t.index in first_revision),
            "instruction": float(t.kind == "dispatch"),
            "self_assessment": float(t.kind in ("ledger", "thought")),
            "error_follows": float(t.index in error_follows),
            "first_error_cause": float(t.index == first_error),
            "reports_error": float(t.kind == "reply" and shows_error(t)),
            "after_error": float(t.index in after_error),
            "repeated_later": float(t.index in repeated_later),
            "repetition_start": float(t.index == first_repeat),
            "repeats_earlier": float(t.index in repeats_earlier),
            "new_facts": min(len(new_numbers), FACTS_CAP) / FACTS_CAP,
            "answer_origin": origin,
            "answer_rests_on": float(last_reply is not None and t.index == last_reply.index),
            "last_action": float(t is acting[-1]),
            "hedge": float(bool(_HEDGE.search(prose))),
            "code": float("```" in t.content),
            "judged_no_progress": float(t.index in no_progress),
            "answer_source": 0.0,  # set below, once every turn's answer_origin is known
        }
        out.append(Candidate(t.speaker, t.index, t, values))
        seen_speakers.add(t.speaker)
        seen_words |= tw
        seen_numbers |= _numbers(t.content)
    # The one turn the final answer rests on most (ties: the earliest): the share alone is
    # spread thin over many turns in a long log; the argmax names a single source.
    best = max((c.values["answer_origin"] for c in out), default=0.0)
    source = next((c for c in out if best and c.values["answer_origin"] == best), None)
    if source is not None:
        source.values["answer_source"] = 1.0
    return out

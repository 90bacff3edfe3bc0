"""Offline, deterministic failure attribution: which component, at which step, and why.

Given a failed run as a :class:`Conversation`, name the component responsible (the planner or an
executor) and the decisive step (a history index), with the evidence. The rules read structure
only — who spoke in which role, what code execution returned, what the planner's own ledgers
said, which facts appeared where — never names learned from labels. docs/attribution.md gives
the rationale of every rule.

>>> from planscope_analyzer.importers import parse_whowhen
>>> conv = parse_whowhen(b'{"question": "Population of X?", "history": ['
...     b'{"name": "A_Expert", "role": "assistant", "content": "plan for solving: look it up"},'
...     b'{"name": "B_Expert", "role": "user", "content": "X has 12,345 people and 67 towns."}]}',
...     "x.json")
>>> a = attribute(conv)
>>> (a.component, a.step, a.rule)
('B_Expert', 1, 'ungrounded-facts')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..importers._conversation import Conversation, Turn
from ..importers._whowhen import exit_code

RULES = (
    "failed-code",
    "hedged-claim",
    "ungrounded-facts",
    "plan-fallback",
    "planner-replan",
    "accepted-result",
    "planner-loop",
    "planner-fallback",
    "analyzer-finding",
)
MIN_NEW_NUMBERS = 2
"""New multi-digit numbers a turn must introduce, without running code, to count as an
ungrounded factual claim. One new number is often a restatement (a year, a count); two or more
are data that came from nowhere in the log."""
_NUM = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.S)
_HEDGE = re.compile(
    r"\b(assum\w*|hypothetical\w*|simulat\w*|placeholder\w*|dummy|mock\w*|for demonstration|"
    r"for illustration|let's say|sample data|example data|fictional|made-up|"
    r"I don't have access|cannot access|unable to access|typically|approximately|estimated?)\b",
    re.I,
)
"""Words by which an agent marks its own output as assumed, simulated or unverified."""


@dataclass(frozen=True)
class Evidence:
    """One fact supporting an attribution: the history index and what it shows."""

    step: int
    text: str


@dataclass(frozen=True)
class Attribution:
    """Who is to blame for a failed run, and when.

    ``component`` is a speaker of the log (``Orchestrator``, ``WebSurfer``, ``Excel_Expert``);
    ``step`` an index into the history; ``rule`` the rule that decided (see :data:`RULES`).
    """

    component: str
    step: int
    rule: str
    confidence: float
    explanation: str
    evidence: tuple[Evidence, ...] = ()
    findings_used: tuple[str, ...] = ()
    judge: dict[str, Any] | None = field(default=None, compare=False)

    def as_dict(self) -> dict[str, Any]:
        return {
            "component": self.component,
            "step": self.step,
            "rule": self.rule,
            "confidence": self.confidence,
            "explanation": self.explanation,
            "evidence": [{"step": e.step, "text": e.text} for e in self.evidence],
            "findings_used": list(self.findings_used),
            "judge": self.judge,
        }


@dataclass(frozen=True)
class FindingRef:
    """An analyzer finding mapped onto the log: its kind, severity, component and step."""

    kind: str
    severity: str
    component: str
    step: int | None
    explanation: str


def _numbers(text: str) -> set[str]:
    out = set()
    for m in _NUM.findall(text):
        v = m.replace(",", "").rstrip(".")
        if len(v.replace(".", "")) >= 2:
            out.add(v)
    return out


def _prose(text: str) -> str:
    return _CODE_BLOCK.sub(" ", text)


def _has_code(text: str) -> bool:
    return "```" in text


def _snippet(text: str, n: int = 160) -> str:
    one = " ".join(text.split())
    return one if len(one) <= n else one[: n - 1] + "…"


def is_planner_executor(conv: Conversation) -> bool:
    """Whether the planner speaks in the log (dispatches, ledgers): Magentic-One style."""
    return any(t.kind in ("dispatch", "ledger") for t in conv.turns)


def attribute(conv: Conversation, findings: list[FindingRef] | None = None) -> Attribution:
    """Attribute a failed run; ``findings`` (from the analyzers) refine the fallback cases."""
    result = _planner_executor(conv) if is_planner_executor(conv) else _group_chat(conv)
    if findings and result.rule in ("plan-fallback", "planner-fallback"):
        ranked = [f for f in findings if f.step is not None and f.severity in ("high", "medium")]
        if ranked:
            f = min(ranked, key=lambda x: x.step if x.step is not None else 1 << 30)
            return Attribution(
                f.component,
                f.step if f.step is not None else result.step,
                "analyzer-finding",
                0.5,
                f"analyzer {f.kind}: {f.explanation}",
                (*result.evidence, Evidence(f.step or 0, f"{f.kind}: {f.explanation}")),
                (f.kind,),
            )
    if findings:
        return Attribution(
            result.component,
            result.step,
            result.rule,
            result.confidence,
            result.explanation,
            result.evidence,
            tuple(sorted({f.kind for f in findings})),
        )
    return result


# -- group chats (AG2 / CaptainAgent): the plan arrives in turn 0, experts talk, code runs ------
def _group_chat(conv: Conversation) -> Attribution:
    turns = conv.turns
    seen = _numbers(conv.question)
    evidence: list[Evidence] = []
    for k, t in enumerate(turns):
        if t.kind == "reply":
            prose = _prose(t.content)
            nxt = turns[k + 1] if k + 1 < len(turns) else None
            rc = exit_code(nxt.content) if nxt is not None and nxt.kind == "tool" else None
            if _has_code(t.content) and rc not in (None, 0) and nxt is not None:
                return _blame(
                    t,
                    "failed-code",
                    0.6,
                    f"{t.speaker}'s code failed when executed (exit code {rc})",
                    [
                        Evidence(t.index, _snippet(t.content)),
                        Evidence(nxt.index, _snippet(nxt.content)),
                    ],
                )
            hedge = _HEDGE.search(prose)
            if hedge:
                return _blame(
                    t,
                    "hedged-claim",
                    0.5,
                    f"{t.speaker} proceeded on an assumed or unverified basis ({hedge.group(0)!r})",
                    [
                        Evidence(
                            t.index, _snippet(prose[max(0, hedge.start() - 80) : hedge.end() + 80])
                        )
                    ],
                )
            new = _numbers(prose) - seen
            if len(new) >= MIN_NEW_NUMBERS and not _has_code(t.content):
                return _blame(
                    t,
                    "ungrounded-facts",
                    0.5,
                    f"{t.speaker} introduced figures found nowhere earlier in the run "
                    f"and ran no code to obtain them: {', '.join(sorted(new)[:5])}",
                    [Evidence(t.index, _snippet(prose))],
                )
        seen |= _numbers(t.content)
    first = next((t for t in turns if t.kind in ("plan", "reply")), turns[0])
    evidence.append(Evidence(first.index, _snippet(first.content)))
    return _blame(
        first,
        "plan-fallback",
        0.3,
        f"no executor visibly erred; the approach set in the first turn by "
        f"{first.speaker} carried the failure",
        evidence,
    )


def _blame(
    t: Turn, rule: str, confidence: float, explanation: str, evidence: list[Evidence]
) -> Attribution:
    return Attribution(t.speaker, t.index, rule, confidence, explanation, tuple(evidence))


# -- planner-executor logs (Magentic-One): ledgers, dispatches, replans -------------------------
def _planner_executor(conv: Conversation) -> Attribution:
    turns = conv.turns
    planner = conv.planner
    plans = [t for t in turns if t.kind == "plan"]
    if len(plans) > 1:  # the planner gave up on a plan: blame the decision to replan
        replan = plans[1]
        decision = next(
            (
                t
                for t in reversed(turns[: replan.index])
                if t.kind in ("thought", "ledger") and t.speaker == planner
            ),
            replan,
        )
        stalls = [
            t
            for t in turns[: replan.index]
            if t.kind == "ledger"
            and t.ledger is not None
            and (t.ledger.is_in_loop or t.ledger.is_progress_being_made is False)
        ]
        ev = [Evidence(decision.index, _snippet(decision.content))]
        ev += [
            Evidence(
                t.index,
                _snippet(
                    t.ledger.reasons.get("is_progress_being_made", "") if t.ledger else t.content
                ),
            )
            for t in stalls[:3]
        ]
        return Attribution(
            planner,
            decision.index,
            "planner-replan",
            0.5,
            f"{planner} stalled and discarded its plan at step {decision.index} "
            f"after {len(stalls)} ledger(s) reporting a loop or no progress",
            tuple(ev),
        )
    satisfied = next(
        (
            t
            for t in turns
            if t.kind == "ledger" and t.ledger is not None and t.ledger.is_request_satisfied
        ),
        None,
    )
    if satisfied is not None:
        reply = next((t for t in reversed(turns[: satisfied.index]) if t.kind == "reply"), None)
        if reply is not None:
            return _blame(
                reply,
                "accepted-result",
                0.45,
                f"{planner} declared the request satisfied at step {satisfied.index} "
                f"on the strength of {reply.speaker}'s result at step {reply.index}, "
                "and the run's answer was wrong",
                [
                    Evidence(reply.index, _snippet(reply.content)),
                    Evidence(
                        satisfied.index,
                        _snippet(
                            satisfied.ledger.reasons.get("is_request_satisfied", "")
                            if satisfied.ledger
                            else ""
                        ),
                    ),
                ],
            )
        return Attribution(
            planner,
            satisfied.index,
            "accepted-result",
            0.4,
            f"{planner} declared the request satisfied without an executor result",
            (Evidence(satisfied.index, _snippet(satisfied.content)),),
        )
    loop = next(
        (
            t
            for t in turns
            if t.kind == "ledger"
            and t.ledger is not None
            and (t.ledger.is_in_loop or t.ledger.is_progress_being_made is False)
        ),
        None,
    )
    if loop is not None:
        return Attribution(
            planner,
            loop.index,
            "planner-loop",
            0.35,
            f"{planner} kept the same strategy after its own ledger reported a "
            f"loop or no progress at step {loop.index}",
            (Evidence(loop.index, _snippet(loop.content)),),
        )
    first = plans[0] if plans else next((t for t in turns if t.speaker == planner), turns[0])
    return Attribution(
        planner,
        first.index,
        "planner-fallback",
        0.25,
        f"no executor visibly erred; {planner}'s plan carried the failure",
        (Evidence(first.index, _snippet(first.content)),),
    )

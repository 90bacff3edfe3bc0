"""Attribute a failed run: rank its candidate (agent, step) pairs and name the top one.

The default method is the shipped ranker (``weights.json``, a conditional logit over the
features of :mod:`._features`, fitted on the development set); whether it or a baseline is the
default is recorded in that file by the cross-validated evaluation (docs/attribution.md).

>>> from planscope_analyzer.importers import parse_whowhen
>>> conv = parse_whowhen(b'{"question": "Population of X?", "history": ['
...     b'{"name": "A", "role": "assistant", "content": "Plan: look it up"},'
...     b'{"name": "B", "role": "user", "content": "Assuming X has 12,345 people and 67 towns."},'
...     b'{"name": "A", "role": "user", "content": "TERMINATE"}]}', "x.json")
>>> a = attribute(conv)
>>> a.component in conv.speakers() and 0 <= a.step < len(conv.turns)
True
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from ..importers._conversation import Conversation, Turn
from ._baselines import BASELINES
from ._features import FEATURES, Candidate, candidates
from ._model import Model, softmax

METHOD = "ranker"
"""The name of the learned method (the other choices are the baselines' names)."""

_DESCRIBE = {
    "first_action": "the first action of the run",
    "speaker_first_turn": "this agent's first turn",
    "by_plan_owner": "the agent that posted the plan",
    "plan": "the plan",
    "replan_decision": "the decision to discard the plan",
    "revised_plan": "a revised plan",
    "first_revision": "the first plan revision",
    "instruction": "an instruction to another agent",
    "self_assessment": "the planner's self-assessment",
    "error_follows": "an error came back right after it",
    "first_error_cause": "the first turn an error came back to",
    "reports_error": "it reports an error",
    "after_error": "the agent's next move after an error",
    "repeated_later": "the agent repeated it later",
    "repetition_start": "where repetition starts",
    "repeats_earlier": "it repeats an earlier turn",
    "new_facts": "it introduces figures stated nowhere before",
    "answer_origin": "the final answer's content first appears here",
    "answer_rests_on": "the last result the final answer rests on",
    "last_action": "the last action of the run",
    "hedge": "it marks its content as assumed or unverified",
    "code": "it contains code",
    "judged_no_progress": "the planner judged what followed as no progress",
    "answer_source": "the turn the final answer rests on most",
}


@dataclass(frozen=True)
class Evidence:
    """One fact supporting an attribution: the history index and what it shows."""

    step: int
    text: str


@dataclass(frozen=True)
class FindingRef:
    """An analyzer finding mapped onto the log: its kind, severity, the speaker who owns the
    step it points at, that step, and its explanation."""

    kind: str
    severity: str
    component: str
    step: int | None
    explanation: str


@dataclass(frozen=True)
class Attribution:
    """Who is to blame for a failed run, and when.

    ``component`` is always a speaker of the log; ``step`` an index into its history (for the
    ranker always a turn of ``component``); ``rule`` the method that decided
    (``ranker`` or a baseline's name); ``confidence`` the ranker's probability for that agent
    (``None`` for a baseline).
    """

    component: str
    step: int
    rule: str
    confidence: float | None
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
class Shipped:
    """The shipped model and the default method the evaluation chose for it."""

    model: Model
    default: str
    fitted_logs: frozenset[str] = frozenset()
    """Fingerprints of the logs the weights were fitted on (``_evaluate.fingerprint``)."""


@cache
def shipped() -> Shipped:
    """The ranker's weights and the default method, from the package's ``weights.json``."""
    text = resources.files(__package__).joinpath("weights.json").read_text()
    doc: dict[str, Any] = json.loads(text)
    model = Model(
        {str(k): float(v) for k, v in doc["weights"].items()},
        str(doc.get("fitted_on", "")),
        float(doc.get("l2", 1.0)),
        {str(k): float(v) for k, v in (doc.get("step_weights") or {}).items()},
        float(doc.get("step_l2", 1.0)),
    )
    return Shipped(model, str(doc.get("default", METHOD)), frozenset(doc.get("fitted_logs") or ()))


def snippet(text: str, n: int = 160) -> str:
    one = " ".join(text.split())
    return one if len(one) <= n else one[: n - 1] + "…"


def rank(conv: Conversation, model: Model) -> list[tuple[Candidate, float]]:
    """Candidates with their probabilities, most likely first (ties: earliest step first)."""
    cands = candidates(conv)
    if not cands:
        return []
    X = np.array([c.vector() for c in cands])
    p = softmax(model.scores(X, FEATURES))
    order = sorted(range(len(cands)), key=lambda i: (-p[i], cands[i].step))
    return [(cands[i], float(p[i])) for i in order]


def decide(
    ranked: list[tuple[Candidate, float]], model: Model
) -> tuple[str, float, Candidate, float]:
    """The blamed agent and the decisive step, in two stages. Stage 1: the agent with the
    largest total probability over its candidates (P(agent) = sum of p(c) over its turns;
    ties: whoever acted first). Stage 2: that agent's turn ranked first by the step weights
    (a softmax over its own turns only; ties: the earliest step), returned with that
    within-agent probability."""
    total: dict[str, float] = {}
    for c, p in sorted(ranked, key=lambda cp: cp[0].step):
        total[c.agent] = total.get(c.agent, 0.0) + p
    agent = max(total, key=lambda a: total[a])  # dicts keep first-appearance order
    own = sorted((c for c, _ in ranked if c.agent == agent), key=lambda c: c.step)
    p_own = softmax(model.step_scores(np.array([c.vector() for c in own]), FEATURES))
    best = max(range(len(own)), key=lambda i: (p_own[i], -i))
    return agent, total[agent], own[best], float(p_own[best])


def by_ranker(conv: Conversation, model: Model) -> Attribution:
    """The ranker's answer, explained by the features that raised the step's score most."""
    ranked = rank(conv, model)
    if not ranked:
        return _nobody(conv)
    agent, p_agent, top, p = decide(ranked, model)
    w = model.step_weights or model.weights
    lifts = sorted(((w.get(f, 0.0) * v, f) for f, v in top.values.items() if v), reverse=True)
    reasons = [_DESCRIBE[f] for lift, f in lifts if lift > 0 and f in _DESCRIBE][:4]
    evidence = [Evidence(top.step, snippet(top.turn.content))]
    runner = next(((c, q) for c, q in ranked if c.agent != agent), None)
    if runner is not None:
        evidence.append(
            Evidence(runner[0].step, f"runner-up agent: {runner[0].agent} (p={runner[1]:.2f})")
        )
    return Attribution(
        agent,
        top.step,
        METHOD,
        round(p_agent, 3),
        f"{agent} (p={p_agent:.2f} over its turns); decisive step {top.step} "
        f"(p={p:.2f} among its turns): " + ("; ".join(reasons) or "highest score"),
        tuple(evidence),
    )


def by_baseline(conv: Conversation, name: str) -> Attribution:
    """A baseline's answer as an attribution."""
    picked = BASELINES[name](conv)
    if picked is None:
        return _nobody(conv)
    turn = next(t for t in conv.turns if t.index == picked[1])
    return Attribution(
        picked[0],
        picked[1],
        name,
        None,
        f"baseline {name}: {picked[0]} at step {picked[1]}",
        (Evidence(turn.index, snippet(turn.content)),),
    )


def _nobody(conv: Conversation) -> Attribution:
    first: Turn = conv.turns[0]
    return Attribution(
        first.speaker, first.index, "no-candidate", None, "no agent acted in this log", ()
    )


def attribute(
    conv: Conversation,
    findings: list[FindingRef] | None = None,
    method: str | None = None,
    model: Model | None = None,
) -> Attribution:
    """Attribute a failed run with ``method`` (default: the shipped default).

    Analyzer ``findings`` are evidence for the speaker who owns the step they point at: they
    are attached to the answer (and listed in ``findings_used``), but do not move it — no
    labelled log with findings exists to weigh them against the other features.
    """
    chosen = method or shipped().default
    fn: Callable[[], Attribution] = (
        (lambda: by_ranker(conv, model or shipped().model))
        if chosen == METHOD
        else (lambda: by_baseline(conv, chosen))
    )
    result = fn()
    if not findings:
        return result
    ev = tuple(
        Evidence(f.step, f"analyzer {f.kind} ({f.severity}) on {f.component}: {f.explanation}")
        for f in findings
        if f.step is not None
    )
    return replace(
        result,
        evidence=result.evidence + ev,
        findings_used=tuple(sorted({f.kind for f in findings})),
    )


def owner_of(conv: Conversation, step: int) -> str | None:
    """The speaker who owns a step: its speaker, or for a tool's output the agent that acted
    just before it (the tool ran on that agent's behalf).

    >>> from planscope_analyzer.importers import parse_whowhen
    >>> conv = parse_whowhen(b'{"history": [{"name": "A", "content": "x"}]}', "x.json")
    >>> owner_of(conv, 0)
    'A'
    """
    upto = [t for t in conv.turns if t.index <= step]
    if not upto or upto[-1].index != step:
        return None
    for t in reversed(upto):
        if t.kind != "tool" and t.speaker not in conv.tool_speakers:
            return t.speaker
    return upto[-1].speaker

"""Cross-validated evaluation of the ranker next to the baselines, on labelled logs.

A *subset* is the folder a labelled file sits in. Protocols (every figure is on logs the model
was not fitted on):

* ``transfer A→B``: fit on every log of subset A, score every log of subset B;
* ``within S``: leave-one-out when S has at most :data:`LOO_MAX` logs, else
  :data:`K_FOLDS`-fold (fold = position in file order modulo k); each fold's model is fitted on
  every other log, of every subset.

The baselines need no fitting and are scored on exactly the same test logs. ``fit-on-dev`` rows
(the shipped model scored on the logs it was fitted on) are labelled as such and are *not*
accuracy figures.

>>> pct(1, 4)
'25.0%'
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from math import comb
from pathlib import Path

import numpy as np

from ..importers._conversation import Conversation
from ..importers._errors import ImportFailed
from ..importers._log import read_logs
from ._baselines import BASELINES
from ._features import FEATURES, PRIOR, Candidate, candidates
from ._method import METHOD, decide, rank
from ._model import Matrix, Model, fit_cv

LOO_MAX = 30
"""Subsets up to this size are cross-validated leave-one-out; larger ones k-fold."""
K_FOLDS = 10
TOLERANCES = (1, 3)
"""Step tolerances reported next to the exact step (±1, ±3 history entries)."""
FIT_ON_DEV = "fit-on-dev (NOT held out)"
HELD_OUT = "shipped model, not fitted on these"


@dataclass(frozen=True)
class Labelled:
    """A labelled log with its candidates; ``y`` is the labelled candidate's position (``None``
    when the label names a turn no agent acted in, e.g. a tool's output); ``agent`` the
    labelled agent as a speaker of the log (:func:`label_agent`)."""

    path: Path
    subset: str
    conv: Conversation
    cands: list[Candidate]
    X: Matrix
    y: int | None
    agent: str

    @property
    def step(self) -> int:
        assert self.conv.labels is not None
        return self.conv.labels.step


@dataclass(frozen=True)
class Score:
    """One method on one protocol's test logs."""

    protocol: str
    subset: str
    method: str
    n: int
    agent: int
    step: int
    near: tuple[int, ...]
    agent_hits: tuple[bool, ...] = field(default=(), compare=False, repr=False)
    """Per test log (in order): was the agent right? (for paired comparisons)"""
    step_hits: tuple[bool, ...] = field(default=(), compare=False, repr=False)

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "protocol": self.protocol,
            "subset": self.subset,
            "method": self.method,
            "n": self.n,
            "agent": pct(self.agent, self.n),
            "agent 95% CI": wilson(self.agent, self.n),
            "step": pct(self.step, self.n),
            "step 95% CI": wilson(self.step, self.n),
        }
        for tol, k in zip(TOLERANCES, self.near, strict=True):
            out[f"step±{tol}"] = pct(k, self.n)
        return out


def pct(n: int, d: int) -> str:
    return f"{100.0 * n / d:.1f}%" if d else "-"


def wilson(k: int, n: int, z: float = 1.96) -> str:
    """The 95% Wilson score interval of ``k`` hits in ``n`` logs, in percent: on 14 logs one
    log is 7 points, and the interval says how little a difference of one or two logs means.

    >>> wilson(8, 14)
    '33-79'
    """
    if not n:
        return "-"
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return f"{100 * max(0.0, centre - half):.0f}-{100 * min(1.0, centre + half):.0f}"


def labelled_files(paths: Iterable[Path]) -> list[Path]:
    """Files named directly, and ``*.json`` inside named folders (recursively), sorted."""
    out: list[Path] = []
    for p in paths:
        out.extend(sorted(p.rglob("*.json"), key=_sort_key) if p.is_dir() else [p])
    return out


def _sort_key(p: Path) -> tuple[str, int, str]:
    m = re.search(r"\d+", p.stem)
    return (str(p.parent), int(m.group(0)) if m else -1, p.name)


_ROLE_SUFFIX = re.compile(r"\s*\(.*\)\s*$")


def label_agent(conv: Conversation) -> str:
    """The labelled agent as a speaker of the log: the name as written if someone spoke under
    it, else the one speaker it names up to case, surrounding space and a role suffix
    (``websurfer``, ``Orchestrator (-> WebSurfer)``); else as written (every method misses it,
    and :func:`label_problems` says so).

    >>> from planscope_analyzer.importers import parse_whowhen
    >>> label_agent(parse_whowhen(b'{"history": [{"name": "WebSurfer", "content": "x"}],'
    ...     b'"mistake_agent": " websurfer (-> x)", "mistake_step": "0"}', "x"))
    'WebSurfer'
    """
    assert conv.labels is not None
    name = conv.labels.agent
    speakers = conv.speakers()
    if name in speakers:
        return name
    key = _ROLE_SUFFIX.sub("", name).strip().casefold()
    match = [s for s in speakers if s.strip().casefold() == key]
    return match[0] if len(match) == 1 else name


def label_problems(logs: Iterable[Labelled]) -> list[str]:
    """Labels no method can get right: an agent that is not a speaker of the log, a step that
    is not one of its history indices. They are scored (as misses), and reported."""
    out = []
    for g in logs:
        if g.agent not in g.conv.speakers():
            out.append(
                f"{g.conv.source}: the label's agent {g.agent!r} is not a speaker of the log"
            )
        if not any(t.index == g.step for t in g.conv.turns):
            out.append(f"{g.conv.source}: the label's step {g.step} is not in the history")
    return out


def load(paths: Iterable[Path]) -> list[Labelled]:
    """Read every labelled log; an unlabelled file is an error (this is an evaluation)."""
    out = []
    for p in labelled_files(paths):
        for conv in read_logs(p):
            if conv.labels is None:
                raise ImportFailed(
                    f"{conv.source}: no labels (mistake_agent, mistake_step) to evaluate against"
                )
            cands = candidates(conv)
            X = np.array([c.vector() for c in cands]).reshape(len(cands), len(FEATURES))
            agent = label_agent(conv)
            y = next(
                (i for i, c in enumerate(cands) if c.step == conv.labels.step and c.agent == agent),
                None,
            )
            out.append(Labelled(p, p.parent.name, conv, cands, X, y, agent))
    return out


def train(logs: Sequence[Labelled], fitted_on: str = "") -> Model:
    """Fit the ranker (shrunk towards :data:`PRIOR`, penalty by inner cross-validation on these
    logs only); every subset weighs the same in total, so a large corpus of one kind of log
    does not drown a small one of another kind."""
    usable = [g for g in logs if g.y is not None and len(g.cands) > 1]
    sizes: dict[str, int] = {}
    for g in usable:
        sizes[g.subset] = sizes.get(g.subset, 0) + 1
    weight = [len(usable) / (len(sizes) * sizes[g.subset]) for g in usable]
    agent = fit_cv(
        [g.X for g in usable],
        [g.y for g in usable if g.y is not None],
        FEATURES,
        weight,
        fitted_on,
        PRIOR,
    )
    # Stage 2: which of the labelled agent's own turns is the step, learned on those turns
    # only and shrunk towards the stage-1 weights (a log with one such turn says nothing).
    own = [(g, w, _own_rows(g)) for g, w in zip(usable, weight, strict=True)]
    own = [(g, w, rows) for g, w, rows in own if len(rows) > 1]
    if not own:
        return agent
    step = fit_cv(
        [g.X[rows] for g, _, rows in own],
        [rows.index(g.y) for g, _, rows in own if g.y is not None],
        FEATURES,
        [w for _, w, _ in own],
        fitted_on,
        agent.weights,
    )
    return replace(agent, step_weights=step.weights, step_l2=step.l2)


def _own_rows(g: Labelled) -> list[int]:
    """Rows of ``g.X`` spoken by the labelled agent."""
    return [i for i, c in enumerate(g.cands) if c.agent == g.agent]


def _ranker_pick(model: Model, g: Labelled) -> tuple[str, int] | None:
    ranked = rank(g.conv, model)
    if not ranked:
        return None
    agent, _, top, _ = decide(ranked, model)
    return agent, top.step


def _score(
    protocol: str, subset: str, method: str, picks: list[tuple[Labelled, tuple[str, int] | None]]
) -> Score:
    agent = tuple(p is not None and p[0] == g.agent for g, p in picks)
    step = tuple(p is not None and p[1] == g.step for g, p in picks)
    near = tuple(
        sum(p is not None and abs(p[1] - g.step) <= t for g, p in picks) for t in TOLERANCES
    )
    return Score(protocol, subset, method, len(picks), sum(agent), sum(step), near, agent, step)


def _folds(logs: list[Labelled]) -> list[list[Labelled]]:
    if len(logs) <= LOO_MAX:
        return [[g] for g in logs]
    return [logs[i::K_FOLDS] for i in range(K_FOLDS)]


def cross_validate(logs: list[Labelled], shipped: Model | None = None) -> list[Score]:
    """Every protocol, the ranker and each baseline side by side (see the module docstring)."""
    subsets = list(dict.fromkeys(g.subset for g in logs))
    by_subset = {s: [g for g in logs if g.subset == s] for s in subsets}
    protocols: list[tuple[str, str, list[tuple[Labelled, tuple[str, int] | None]]]] = []
    for s in subsets:
        picks = []
        for fold in _folds(by_subset[s]):
            held = {id(g) for g in fold}
            model = train([g for g in logs if id(g) not in held])
            picks += [(g, _ranker_pick(model, g)) for g in fold]
        kind = "leave-one-out" if len(by_subset[s]) <= LOO_MAX else f"{K_FOLDS}-fold"
        protocols.append((f"within ({kind})", s, picks))
    for a in subsets:
        model = train(by_subset[a])
        for b in subsets:
            if a != b:
                protocols.append(
                    (f"transfer from {a}", b, [(g, _ranker_pick(model, g)) for g in by_subset[b]])
                )
    if shipped is not None:
        for s in subsets:
            protocols.append((FIT_ON_DEV, s, [(g, _ranker_pick(shipped, g)) for g in by_subset[s]]))
    return _scores(protocols)


def fingerprint(conv: Conversation) -> str:
    """A short content hash of a log (its question and turns), by which the shipped weights
    record which logs they were fitted on.

    >>> from planscope_analyzer.importers import parse_whowhen
    >>> len(fingerprint(parse_whowhen(b'{"history": [{"name": "A", "content": "x"}]}', "x")))
    16
    """
    h = hashlib.sha256(conv.question.encode())
    for t in conv.turns:
        h.update(b"\0" + t.speaker.encode() + b"\0" + t.content.encode())
    return h.hexdigest()[:16]


def score_shipped(
    logs: list[Labelled], shipped: Model, fitted: frozenset[str] = frozenset()
) -> list[Score]:
    """The shipped model and the baselines on labelled logs, fitting nothing. Logs whose
    :func:`fingerprint` is in ``fitted`` (the shipped weights were fitted on them) are scored
    apart, under :data:`FIT_ON_DEV`; the rest is a held-out set: the figure that counts."""
    protocols = []
    for s in dict.fromkeys(g.subset for g in logs):
        for protocol in (HELD_OUT, FIT_ON_DEV):
            picks = [
                (g, _ranker_pick(shipped, g))
                for g in logs
                if g.subset == s and (fingerprint(g.conv) in fitted) == (protocol == FIT_ON_DEV)
            ]
            if picks:
                protocols.append((protocol, s, picks))
    return _scores(protocols)


def _scores(
    protocols: list[tuple[str, str, list[tuple[Labelled, tuple[str, int] | None]]]],
) -> list[Score]:
    out = []
    for protocol, subset, picks in protocols:
        out.append(_score(protocol, subset, METHOD, picks))
        if protocol == FIT_ON_DEV:
            continue
        for name, fn in BASELINES.items():
            out.append(_score(protocol, subset, name, [(g, fn(g.conv)) for g, _ in picks]))
    return out


def best_default(scores: list[Score]) -> str:
    """The ranker if, in every cross-validated protocol, it is at least as good as every
    baseline on agent and on exact step, and strictly better on one of them; otherwise the
    baseline with the best mean agent-level accuracy over the protocols."""
    groups: dict[tuple[str, str], dict[str, Score]] = {}
    for s in scores:
        if s.protocol != FIT_ON_DEV:
            groups.setdefault((s.protocol, s.subset), {})[s.method] = s
    wins = all(
        all(
            (m[METHOD].agent, m[METHOD].step) >= (b.agent, b.step)
            and m[METHOD].agent >= b.agent
            and m[METHOD].step >= b.step
            and (m[METHOD].agent > b.agent or m[METHOD].step > b.step)
            for name, b in m.items()
            if name != METHOD
        )
        for m in groups.values()
    )
    if wins:
        return METHOD
    return max(
        BASELINES,
        key=lambda name: sum(m[name].agent / m[name].n for m in groups.values() if m[name].n),
    )


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test (McNemar's exact test) of ``wins`` against ``losses`` on the
    logs where two methods disagree; ties carry no information.

    >>> round(sign_test(1, 0), 2), round(sign_test(9, 1), 3)
    (1.0, 0.021)
    """
    n = wins + losses
    if not n:
        return 1.0
    tail = sum(comb(n, k) for k in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


def paired(scores: list[Score]) -> list[dict[str, object]]:
    """The ranker against the best baseline of each cross-validated protocol, log by log: on
    how many logs only the ranker is right (``+``), only the baseline (``-``), and the sign
    test's p-value — a difference of one log out of 14 is not evidence."""
    groups: dict[tuple[str, str], dict[str, Score]] = {}
    for sc in scores:
        if sc.protocol != FIT_ON_DEV:
            groups.setdefault((sc.protocol, sc.subset), {})[sc.method] = sc
    out: list[dict[str, object]] = []
    for (protocol, subset), m in groups.items():
        ours = m.get(METHOD)
        if ours is None:
            continue
        row: dict[str, object] = {"protocol": protocol, "subset": subset}
        for measure in ("agent", "step"):
            base = max(
                (b for name, b in m.items() if name != METHOD),
                key=lambda b: (getattr(b, measure), -list(BASELINES).index(b.method)),
            )
            a, b = getattr(ours, f"{measure}_hits"), getattr(base, f"{measure}_hits")
            wins = sum(x and not y for x, y in zip(a, b, strict=True))
            losses = sum(y and not x for x, y in zip(a, b, strict=True))
            row[f"{measure}: best baseline"] = base.method
            row[f"{measure}: +/-"] = f"+{wins}/-{losses}"
            row[f"{measure}: p"] = f"{sign_test(wins, losses):.2f}"
        out.append(row)
    return out


def format_scores(scores: list[Score]) -> str:
    """The scores as an aligned table, one block per protocol and test subset."""
    return _table([s.as_dict() for s in scores], ("protocol", "subset"))


def format_paired(scores: list[Score]) -> str:
    """:func:`paired` as an aligned table."""
    return _table(paired(scores), ())


def _table(rows: list[dict[str, object]], block: tuple[str, ...]) -> str:
    cols = list(rows[0]) if rows else []
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    lines = ["  ".join(c.ljust(widths[c]) for c in cols)]
    last: tuple[object, ...] | None = None
    for r in rows:
        key = tuple(r[c] for c in block)
        if last is not None and key != last:
            lines.append("")
        last = key
        lines.append("  ".join(str(r[c]).ljust(widths[c]) for c in cols))
    return "\n".join(lines)

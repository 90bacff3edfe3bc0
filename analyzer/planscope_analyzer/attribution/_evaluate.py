"""Evaluate attribution on a labeled set (Who&When files): agent-level and step-level accuracy
(exact and ±1), per subset (the files' folder) and per half (even/odd file numbers), plus the
loop signals on runs whose labels describe repetition.

>>> pct(1, 4)
'25.0%'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..importers._conversation import Conversation
from ..importers._errors import ImportFailed
from ..importers._whowhen import parse_whowhen
from ._loops import loop_signals
from ._rules import Attribution, attribute

REPETITION = re.compile(
    r"\b(repeat\w*|loop\w*|again|multiple times|over and over|exhaust\w*|step limits?|"
    r"redundant\w*|same (?:step|action|search|query|code|mistake|error)s?)\b",
    re.I,
)
"""Label wording that describes a run repeating itself (used only to select traces for the loop
report, never by the attribution rules)."""


@dataclass(frozen=True)
class Row:
    """One evaluated file."""

    path: Path
    subset: str
    half: str
    label_agent: str
    label_step: int
    predicted: Attribution
    repetition_label: bool
    loop_signals: tuple[str, ...]
    analyzer_loop: bool | None = None

    @property
    def agent_ok(self) -> bool:
        return self.predicted.component == self.label_agent

    @property
    def step_ok(self) -> bool:
        return self.predicted.step == self.label_step

    @property
    def step_near(self) -> bool:
        return abs(self.predicted.step - self.label_step) <= 1


def pct(n: int, d: int) -> str:
    return f"{100.0 * n / d:.1f}%" if d else "-"


def labeled_files(paths: Iterable[Path]) -> list[Path]:
    """Files named directly, and ``*.json`` inside named folders (recursively), sorted."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out.extend(sorted(p.rglob("*.json"), key=_sort_key))
        else:
            out.append(p)
    return out


def _sort_key(p: Path) -> tuple[str, int, str]:
    return (str(p.parent), int(p.stem) if p.stem.isdigit() else -1, p.name)


def half_of(p: Path) -> str:
    """``even``/``odd`` by the number in the file name, ``-`` when there is none."""
    m = re.search(r"(\d+)", p.stem)
    return "-" if m is None else ("even" if int(m.group(1)) % 2 == 0 else "odd")


def evaluate(
    paths: Iterable[Path],
    attribute_fn: Callable[[Conversation, Path], Attribution] | None = None,
    analyzer_loop: Callable[[Conversation, Path], bool | None] | None = None,
) -> list[Row]:
    """Attribute every labeled file; unlabeled files are an error (this is an evaluation)."""
    rows = []
    for p in labeled_files(paths):
        try:
            data = p.read_bytes()
        except OSError as exc:
            raise ImportFailed(f"{p}: cannot read: {exc.strerror or exc}") from None
        conv = parse_whowhen(data, str(p))
        if conv.labels is None:
            raise ImportFailed(f"{p}: no labels (mistake_agent, mistake_step) to evaluate against")
        pred = attribute_fn(conv, p) if attribute_fn else attribute(conv)
        rows.append(
            Row(
                p,
                p.parent.name,
                half_of(p),
                conv.labels.agent,
                conv.labels.step,
                pred,
                bool(REPETITION.search(conv.labels.reason)),
                tuple(loop_signals(conv)),
                analyzer_loop(conv, p) if analyzer_loop else None,
            )
        )
    return rows


def table(rows: list[Row]) -> list[dict[str, object]]:
    """Accuracy per (subset, half), per subset, per half and overall."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        for key in ((r.subset, r.half), (r.subset, "all"), ("ALL", r.half), ("ALL", "all")):
            groups.setdefault(key, []).append(r)
    out = []
    for (subset, half), rs in sorted(groups.items(), key=lambda kv: (kv[0][0] == "ALL", kv[0])):
        rep = [r for r in rs if r.repetition_label]
        other = [r for r in rs if not r.repetition_label]
        out.append(
            {
                "subset": subset,
                "half": half,
                "n": len(rs),
                "agent": pct(sum(r.agent_ok for r in rs), len(rs)),
                "step": pct(sum(r.step_ok for r in rs), len(rs)),
                "step±1": pct(sum(r.step_near for r in rs), len(rs)),
                "repetition_labeled": len(rep),
                "loop_flagged": f"{sum(bool(r.loop_signals) for r in rep)}/{len(rep)}",
                "loop_flagged_other": f"{sum(bool(r.loop_signals) for r in other)}/{len(other)}",
                "analyzer_loop": (
                    f"{sum(bool(r.analyzer_loop) for r in rep)}/{len(rep)}"
                    if any(r.analyzer_loop is not None for r in rs)
                    else "-"
                ),
            }
        )
    return out


def format_table(rows: list[Row]) -> str:
    """The table as aligned text."""
    t = table(rows)
    cols = [
        "subset",
        "half",
        "n",
        "agent",
        "step",
        "step±1",
        "repetition_labeled",
        "loop_flagged",
        "loop_flagged_other",
        "analyzer_loop",
    ]
    widths = {c: max(len(c), *(len(str(r[c])) for r in t)) for c in cols}
    lines = ["  ".join(c.ljust(widths[c]) for c in cols)]
    lines += ["  ".join(str(r[c]).ljust(widths[c]) for c in cols) for r in t]
    rules: dict[str, list[int]] = {}
    for r in rows:
        s = rules.setdefault(r.predicted.rule, [0, 0, 0])
        s[0] += 1
        s[1] += r.agent_ok
        s[2] += r.step_ok
    lines.append("")
    lines.append(
        "by rule: "
        + "; ".join(
            f"{k}: n={v[0]} agent {pct(v[1], v[0])} step {pct(v[2], v[0])}"
            for k, v in sorted(rules.items())
        )
    )
    return "\n".join(lines)

"""Metamorphic robustness of the detectors: corpus traces changed in ways that keep each label
true by construction (the plan said in another format, another framework's span names, tool
names with a framework's suffix, steps named only in the executor's input, errors in other
words), scored like the untransformed corpus (``detector_corpus``'s collector, scoring and
baselines).

Each labelled run is played once (``detector_corpus.record``); for each transformation the
traces it changes are rewritten span by span (``tests.corpus.shapes``), exported into a fresh
collector, analysed and scored on those runs, next to the same runs untransformed.
tests/corpus/README.md ("Metamorphic shapes") lists the transformations and those held out
of tuning.

    .venv/bin/python benchmarks/detector_shapes.py [--only NAME ...] [--spent] [--json out]

``--spent`` scores the sealed splits already scored once (sealed .. sealed13) instead of dev and
held-out.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import print_table, write_json
from detector_corpus import (
    BASELINE_KIND,
    BASELINES,
    HEALTHY,
    Pair,
    Recorded,
    by_run,
    collect,
    record,
    score,
)
from opentelemetry.sdk.trace import ReadableSpan

from tests.corpus import KINDS, Label, read_labels
from tests.corpus.shapes import HELD_OUT, TRANSFORMS, transformed

SPENT = (
    "sealed",
    "sealed2",
    "sealed3",
    "sealed4",
    "sealed5",
    "sealed6",
    "sealed7",
    "sealed8",
    "sealed9",
    "sealed10",
    "sealed11",
    "sealed12",
    "sealed13",
)
"""The sealed splits already scored once; no later split is ever read here."""


def scored(
    labels: Sequence[Label], recorded: Recorded, spans: Sequence[ReadableSpan]
) -> dict[str, dict[str, list[Pair]]]:
    """Findings of the detectors and of the baselines per run, for these runs' spans."""
    with tempfile.TemporaryDirectory(prefix="ps-shapes-") as tmp:
        ids, findings, traces, _, _ = collect(labels, Path(tmp), (), (recorded[0], spans))
    out = {"detectors": by_run(ids, ((f.trace_id, (f.kind, f.step_id)) for f in findings))}
    for name, fn in BASELINES.items():
        out[name] = by_run(ids, ((tid, p) for tid, t in traces.items() for p in fn(t)))
    return out


def _pr(s: dict[str, Any]) -> str:
    p, r = s["s_precision"], s["s_recall"]
    return f"{'—' if p is None else f'{p:.2f}'} / {'—' if r is None else f'{r:.2f}'}"


def table(
    title: str,
    labels: Sequence[Label],
    plain: dict[str, dict[str, list[Pair]]],
    shaped: dict[str, dict[str, list[Pair]]],
) -> dict[str, Any]:
    """Step-level P / R per kind on the changed runs, untransformed and transformed, with the
    baselines' (transformed); healthy runs with a finding."""
    rows: list[list[Any]] = []
    out: dict[str, Any] = {}
    for kind in KINDS:
        if not any(lab.kind == kind for lab in labels):
            continue
        before = score(labels, plain["detectors"], kind)
        after = score(labels, shaped["detectors"], kind)
        base = [
            f"{name}: {_pr(score(labels, shaped[name], kind))}"
            for name, k in BASELINE_KIND.items()
            if k == kind
        ]
        rows.append([kind, before["labelled"], _pr(before), _pr(after), "; ".join(base)])
        out[kind] = {"untransformed": before, "transformed": after}
    healthy = [lab for lab in labels if lab.kind == HEALTHY]
    for label, found in (("untransformed", plain), ("transformed", shaped)):
        flagged = sum(bool(found["detectors"].get(lab.run)) for lab in healthy)
        out[f"healthy_flagged_{label}"] = flagged
    rows.append(
        [
            "healthy with a finding",
            len(healthy),
            out["healthy_flagged_untransformed"],
            out["healthy_flagged_transformed"],
            "",
        ]
    )
    print_table(
        title,
        ["kind", "labelled", "untransformed P / R", "transformed P / R", "baselines P / R"],
        rows,
    )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", action="append", choices=sorted(TRANSFORMS), help="repeatable")
    parser.add_argument("--spent", action="store_true", help="sealed .. sealed13 (already scored)")
    parser.add_argument("--agent", action="append", help="only this agent's runs (repeatable)")
    parser.add_argument("--misses", action="store_true", help="list misses on changed runs")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    splits = SPENT if args.spent else ("dev", "heldout")
    labels = [lab for lab in read_labels() if lab.split in splits]
    if args.agent:
        labels = [lab for lab in labels if lab.agent in args.agent]
    recorded = record(labels)
    plain = scored(labels, recorded, recorded[1])
    payload: dict[str, Any] = {"runs": len(labels)}
    for name in args.only or list(TRANSFORMS):
        changed, spans = transformed(recorded[1], name)
        part = [lab for lab in labels if recorded[0][lab.run] in changed]
        tag = "held out" if name in HELD_OUT else "tuning"
        if not part:
            print(f"\n{name} ({tag}): changes no run")
            continue
        shaped = scored(part, recorded, spans)
        payload[name] = {}
        groups = (
            [("spent", part)]
            if args.spent
            else [(s, [lab for lab in part if lab.split == s]) for s in splits]
        )
        for split, runs in groups:
            if runs:
                payload[name][split] = table(
                    f"{name} ({tag}), {split}: {len(runs)} runs changed", runs, plain, shaped
                )
        if args.misses:
            for lab in part:
                want = [(lab.kind, lab.step)] if lab.kind != HEALTHY else []
                got = shaped["detectors"].get(lab.run, [])
                if sorted(got) != sorted(plain["detectors"].get(lab.run, [])):
                    print(f"  {lab.run} {lab.scenario}: want {want} got {got}")
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())

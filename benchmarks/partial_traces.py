"""Partial and repeated traces of every corpus agent: does the analyzer fail on any of them?

A live collector analyses traces that are not whole: a pass can run while a trace's spans are
still arriving, an exporter drops spans when its queue is full, a root span ends last (or never,
when the process dies), a retrying exporter sends a batch twice. None of that may make a trace
unloadable or a detector raise. This plays a few runs of every corpus agent once
(``detector_corpus.record``), derives four variants of each trace under a new trace id, exports
them all into one real collector and analyses them:

- ``drop30``: a random 30 % of the spans gone (seeded);
- ``half``: only the spans that ended by the trace's middle instant (a pass mid-run);
- ``noroot``: every root span gone (its children orphans);
- ``dup``: every span sent twice.

It prints each ``unloadable_trace`` or ``detector_error`` finding (there should be none) and
exits 1 if there is one. Figures and command: docs/analyzers.md, "Partial traces".

    .venv/bin/python benchmarks/partial_traces.py [--per-agent 2] [--seed 7] [--agent NAME ...]
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from detector_corpus import collect, record

from tests.corpus import Label, read_labels
from tests.corpus.shapes import Span, as_dict, as_span

FAILURES = ("unloadable_trace", "detector_error")
"""The data-quality issues that say the analyzer could not read a trace or a rule raised."""

NEVER = ("sealed24",)
"""A held-back evaluation split: never played here."""


def variants(rng: random.Random) -> dict[str, Callable[[list[Span]], list[Span]]]:
    """The four ways a trace arrives not whole, by name."""

    def half(spans: list[Span]) -> list[Span]:
        ends = sorted(s["end"] for s in spans)
        return [s for s in spans if s["end"] <= ends[len(ends) // 2]]

    return {
        "drop30": lambda spans: [s for s in spans if rng.random() > 0.3],
        "half": half,
        "noroot": lambda spans: [s for s in spans if s["parent_id"]],
        "dup": lambda spans: spans + spans,
    }


def picked(labels: Sequence[Label], per_agent: int) -> list[Label]:
    """Up to ``per_agent`` runs of each agent, half failing and half healthy, first seeds first.

    >>> a = Label("a-1", "a", "x", 1, "loop", "runaway_loop", "s")
    >>> b = Label("a-2", "a", "x", 2, "ok", "healthy", "")
    >>> [lab.run for lab in picked([a, replace(a, run="a-3"), b], 2)]
    ['a-1', 'a-2']
    """
    seen: Counter[tuple[str, bool]] = Counter()
    out = []
    for lab in labels:
        key = (lab.agent, lab.kind == "healthy")
        if lab.split not in NEVER and seen[key] < per_agent / 2:
            seen[key] += 1
            out.append(lab)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-agent", type=int, default=2, help="runs of each agent (2)")
    parser.add_argument("--seed", type=int, default=7, help="the drop30 variant's seed (7)")
    parser.add_argument("--agent", action="append", help="only this agent's runs (repeatable)")
    args = parser.parse_args(argv)
    labels = picked(
        [lab for lab in read_labels() if not args.agent or lab.agent in args.agent], args.per_agent
    )
    print(f"{len(labels)} runs of {len({lab.agent for lab in labels})} agents", flush=True)
    started = time.perf_counter()
    ids, spans = record(labels)
    print(f"played {len(spans)} spans in {time.perf_counter() - started:.0f} s", flush=True)
    by_trace: dict[str, list[Span]] = defaultdict(list)
    for s in spans:
        d = as_dict(s)
        by_trace[format(d["trace_id"], "032x")].append(d)
    changes = variants(random.Random(args.seed))
    out_labels: list[Label] = []
    out_ids: dict[str, str] = {}
    out_spans = []
    for lab in labels:
        for name, change in changes.items():
            trace_id = hashlib.sha256(f"{ids[lab.run]}/{name}".encode()).hexdigest()[:32]
            run = f"{lab.run}~{name}"
            out_labels.append(replace(lab, run=run))
            out_ids[run] = trace_id
            kept = change(by_trace[ids[lab.run]])
            out_spans += [as_span(dict(s, trace_id=int(trace_id, 16))) for s in kept]
    print(f"{len(out_labels)} variant traces, {len(out_spans)} spans", flush=True)
    with tempfile.TemporaryDirectory(prefix="partial-") as tmp:
        _, findings, *_ = collect(out_labels, Path(tmp), recorded=(out_ids, out_spans))
    run_of = {trace_id: run for run, trace_id in out_ids.items()}
    failed = [f for f in findings if f.detail.get("issue") in FAILURES]
    for f in failed:
        print(f"FAILED {run_of.get(f.trace_id, f.trace_id)}: {f.detail} {f.explanation}")
    print(
        f"{len(out_labels)} variant traces analysed: {len(findings)} findings, "
        f"{len(failed)} unloadable traces or detector errors "
        f"({time.perf_counter() - started:.0f} s in all)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Score the scheduler detectors against simple baselines on a stored evaluation suite.

Run ``planscope evaluate`` first with ``--workdir`` (it keeps the store and the labels), then
this script on the same directory; the detectors and the baselines read the same traces:

    .venv/bin/python -m planscope evaluate --runs 120 --fault-rate 0.6 --seed 41 \\
        --variants scheduler --no-degrade --workdir /tmp/ps-sched
    .venv/bin/python benchmarks/scheduler_detectors.py /tmp/ps-sched

Baselines: ``longest_waiter`` flags, per scheduler, the requester with the longest total queue
wait when it is at least 1.5x the median of the others (no overtaking check);
``any_preemption`` flags every requester that was preempted (a context switch happened).
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path

from planscope import semconv as A
from planscope_analyzer import Analyzer, Detector, Finding, TraceData, score
from planscope_analyzer.detectors import ContextLost, SchedulerStarvation, make_finding
from planscope_collector.storage import open_store
from planscope_runners import load_labels


class LongestWaiter:
    """Baseline for starvation: the longest waiter, if well above the median (no overtakes)."""

    kind = "scheduler_starvation"
    version = 0

    def detect(self, trace: TraceData) -> list[Finding]:
        waits: dict[str, float] = defaultdict(float)
        for s in trace.scheduling:
            if s.name == A.SPAN_SCHEDULER_QUEUE:
                waits[s.requester] += s.duration_ns / 1e6
        if len(waits) < 2:
            return []
        worst = max(waits, key=lambda k: waits[k])
        peers = [w for k, w in waits.items() if k != worst and w > 1.0]
        if not peers or waits[worst] < 1.5 * statistics.median(peers):
            return []
        return [_finding(self, trace, worst)]


class AnyPreemption:
    """Baseline for lost context: every requester that was switched out."""

    kind = "context_lost"
    version = 0

    def detect(self, trace: TraceData) -> list[Finding]:
        switched = {
            s.requester
            for s in trace.scheduling
            if s.name == A.SPAN_SCHEDULER_CONTEXT_SWITCH and s.switch_op == A.SWITCH_RESTORE
        }
        return [_finding(self, trace, r) for r in sorted(switched)]


def _finding(detector: LongestWaiter | AnyPreemption, trace: TraceData, step: str) -> Finding:
    return make_finding(
        detector,
        trace,
        severity="medium",
        component="scheduler",
        step_id=step,
        evidence=[],
        explanation="baseline",
    )


def main(argv: list[str]) -> int:
    workdir = Path(argv[0])
    labels = load_labels(workdir / "labels.jsonl")
    ids = [str(label["trace_id"]) for label in labels]
    store = open_store(f"chdb://{(workdir / 'data' / 'store').resolve()}")
    methods: dict[str, tuple[Detector, ...]] = {
        "detectors": (SchedulerStarvation(), ContextLost()),
        "baselines": (LongestWaiter(), AnyPreemption()),
    }
    print("| method | failure mode | TP | FP | FN | precision | recall |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, detectors in methods.items():
        findings = Analyzer(store, detectors=detectors).analyze("default", ids).findings
        report = score(labels, findings)
        for kind in ("scheduler_starvation", "context_lost"):
            s = report.scores[kind]
            p, r = (("n/a" if v is None else f"{v:.3f}") for v in (s.precision, s.recall))
            print(f"| {name} | {kind} | {s.tp} | {s.fp} | {s.fn} | {p} | {r} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

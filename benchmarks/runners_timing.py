"""How often the runtime's parallel behaviours happen, repeated in one process (run it on a
loaded machine to see whether they depend on thread timing).

Per run: ``dag`` on ``files-changelog-1`` with ``write_conflict`` (was the update lost, was the
conflict labelled), ``scheduler`` on ``ops-audit-wide`` (did two requests wait in the queue at
once, was anything preempted), and both scheduler knobs on ``ops-audit-small`` (did they act).

    for i in 1 2 3 4; do (timeout 300 python3 -c 'while True: pass' &); done   # optional load
    .venv/bin/python benchmarks/runners_timing.py --runs 200
"""

from __future__ import annotations

import argparse
import collections
import os

import planscope
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from planscope import semconv as A
from planscope_runners import run_task

SCHEDULER_KNOBS = ("scheduler_starvation", "context_lost_on_switch")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    planscope.configure(tracer_provider=provider)
    counts: collections.Counter[str] = collections.Counter()
    for _ in range(args.runs):
        result = run_task("dag", "files", "files-changelog-1", ["write_conflict"], seed=1)
        counts["write_conflict: update lost"] += result.outcome == "failure"
        counts["write_conflict: labelled"] += bool(result.expected)
        exporter.clear()
        run_task("scheduler", "ops", "ops-audit-wide")
        queued = [s for s in exporter.get_finished_spans() if s.name == A.SPAN_SCHEDULER_QUEUE]
        attrs = [s.attributes or {} for s in queued]
        longest = max(int(str(a[A.SCHEDULER_QUEUE_LENGTH])) for a in attrs)
        counts["scheduler: queue held >= 2"] += longest >= 2
        counts["scheduler: preempted"] += any(a[A.SCHEDULER_REASON] == "preempted" for a in attrs)
        exporter.clear()
        for knob in SCHEDULER_KNOBS:
            result = run_task("scheduler", "ops", "ops-audit-small", [knob], seed=5)
            counts[f"{knob}: acted"] += knob not in result.inert
    print(f"runs: {args.runs}, load average: {os.getloadavg()[0]:.1f}")
    for name, n in sorted(counts.items()):
        print(f"{name}: {n}/{args.runs}")


if __name__ == "__main__":
    main()

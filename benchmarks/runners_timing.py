"""How often the runtime's parallel behaviours happen, repeated in one process (run it on a
loaded machine to see whether they depend on thread timing).

Per run: ``dag`` on ``files-changelog-1`` with ``write_conflict`` (was the update lost, was the
conflict labelled), ``scheduler`` on ``ops-audit-wide`` (did two requests wait in the queue at
once, was anything preempted), and both scheduler knobs on ``ops-audit-small`` (did they act).
The starvation runs' spans then go into one chDB store (as the collector stores them) and the
analyzer's ``scheduler_starvation`` detector reads them: how many labelled starvations it finds,
and how many of those also pass the wall-clock rule alone (wait ≥ 1.5x the peers' median, the
detector's only test before it read the scheduler's own overtake counts).

    for i in 1 2 3 4; do (timeout 300 python3 -c 'while True: pass' &); done   # optional load
    .venv/bin/python benchmarks/runners_timing.py --runs 200
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
from pathlib import Path

import planscope
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from planscope import semconv as A
from planscope_analyzer import Analyzer
from planscope_analyzer.detectors import SchedulerStarvation
from planscope_collector.storage import open_store
from planscope_runners import run_task

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.analyzer.conftest import otlp_rows  # as the collector stores them
from tests.storage._spans import spans_ipc

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
    starved_spans: list[ReadableSpan] = []
    labelled: set[tuple[str, str]] = set()
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
            exporter.clear()
            result = run_task("scheduler", "ops", "ops-audit-small", [knob], seed=5)
            counts[f"{knob}: acted"] += knob not in result.inert
            if knob == "scheduler_starvation":
                starved_spans.extend(exporter.get_finished_spans())
                labelled |= {(result.trace_id, e.step_id) for e in result.expected}
    with tempfile.TemporaryDirectory() as workdir:
        store = open_store(f"chdb://{workdir}/store")
        store.migrate()
        store.insert_spans(spans_ipc(otlp_rows(starved_spans)))
        detector = SchedulerStarvation()
        found = Analyzer(store, detectors=(detector,)).analyze_window("default", 0, write=False)
        store.close()
    hits = [f for f in found.findings if (f.trace_id, f.step_id) in labelled]
    counts["scheduler_starvation: detected"] = len(hits)
    counts["scheduler_starvation: detected, wait ratio >= 1.5"] = sum(
        f.detail["wait_ms"] >= 1.5 * f.detail["peer_median_ms"] for f in hits
    )
    counts["scheduler_starvation: flagged, not labelled"] = len(found.findings) - len(hits)
    print(f"runs: {args.runs}, load average: {os.getloadavg()[0]:.1f}")
    for name, n in sorted(counts.items()):
        print(f"{name}: {n}/{args.runs}")


if __name__ == "__main__":
    main()

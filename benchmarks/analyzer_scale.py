"""Analyzer scale: a full pass over ~1,000,000 spans on the embedded store, then an
incremental pass over the newest 1% of traces.

Spans come from the reference runtime (a labelled suite on an in-memory exporter, encoded as
OTLP and flattened by the collector's own code), replicated with fresh trace/span ids and
spread over ``--days`` daily partitions (like a store that has been ingesting for that long),
inserted through ``Store.insert_spans`` (as Arrow IPC, like the collector's writer) so every
materialized view fills the typed tables.

    .venv/bin/python benchmarks/analyzer_scale.py --spans 1000000 --days 100
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.storage._spans

from _common import machine_facts

from tests.storage._spans import otlp_to_rows, spans_ipc

DAY_NS = 86400 * 10**9
TYPED_TABLES = (
    "planscope_runs",
    "planscope_plans",
    "planscope_plan_steps",
    "planscope_step_attempts",
    "planscope_tool_calls",
    "planscope_llm_calls",
    "planscope_trace_index",
)


def seed_rows(runs: int, seed: int) -> list[list[Any]]:
    """OTLP-flattened rows of a labelled suite (30% faults), in ``TRACE_COLUMNS`` order."""
    import planscope
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from planscope_runners import run_suite

    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    planscope.configure(tracer_provider=provider)
    run_suite(runs, fault_rate=0.3, seed=seed)
    return otlp_to_rows(encode_spans(list(exporter.get_finished_spans())), "bench")


def _remap(value: str, copy: int, width: int) -> str:
    if not value:
        return ""
    return hashlib.blake2b(f"{copy}:{value}".encode(), digest_size=width // 2).hexdigest()


def replicate(rows: list[list[Any]], copy: int, shift_ns: int) -> list[list[Any]]:
    out = []
    for r in rows:
        row = list(r)
        row[0] = r[0] + shift_ns
        row[1] = _remap(r[1], copy, 32)
        row[2] = _remap(r[2], copy, 16)
        row[3] = _remap(r[3], copy, 16)
        row[15] = [t + shift_ns for t in r[15]]
        out.append(row)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--spans", type=int, default=1_000_000)
    p.add_argument("--days", type=int, default=100)
    p.add_argument("--seed-runs", type=int, default=400)
    p.add_argument("--workdir", type=Path)
    p.add_argument("--json", type=Path, help="also write the figures here")
    p.add_argument("--reuse", action="store_true", help="analyse the store in --workdir as is")
    p.add_argument("--repeat", type=int, default=1, help="full passes to run (median reported)")
    p.add_argument(
        "--findings-out",
        type=Path,
        help="write the full pass's findings here (JSON lines, sorted; to compare two builds)",
    )
    p.add_argument(
        "--no-optimize",
        action="store_true",
        help="skip OPTIMIZE ... FINAL (merging the parts, as a long-running store's)",
    )
    args = p.parse_args()

    from planscope_analyzer import Analyzer
    from planscope_collector.storage import open_store

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="ps-analyzer-bench-"))
    store = open_store(f"chdb://{workdir / 'store'}")
    if not args.reuse:
        store.migrate(ttl_days=max(365, args.days + 30))
    insert_s = 0.0
    if not args.reuse:
        started = time.perf_counter()
        base = seed_rows(args.seed_runs, 11)
        copies = max(1, round(args.spans / len(base)))
        print(
            f"seed suite: {args.seed_runs} runs, {len(base)} spans "
            f"({time.perf_counter() - started:.1f} s); {copies} copies over {args.days} days",
            flush=True,
        )
        now = time.time_ns() - 3600 * 10**9
        oldest = min(r[0] for r in base)
        started = time.perf_counter()
        for copy in range(copies):
            day = copy * args.days // copies
            shift = now - oldest - (args.days - 1 - day) * DAY_NS + copy * 10**9
            store.insert_spans(spans_ipc(replicate(base, copy, shift)))
        insert_s = time.perf_counter() - started
    if not args.no_optimize:
        started = time.perf_counter()
        for table in TYPED_TABLES:
            store.command(f"OPTIMIZE TABLE {table} FINAL")
        print(f"merged parts in {time.perf_counter() - started:.1f} s", flush=True)
    total = store.query(
        "SELECT count() AS n, uniqExact(TraceId) AS t FROM otel_traces WHERE Project = 'bench'"
    )[0]
    print(f"store: {total['n']} spans / {total['t']} traces (insert {insert_s:.1f} s)", flush=True)
    newest = [
        str(r["t"])
        for r in store.query(
            "SELECT TraceId AS t FROM planscope_trace_index WHERE Project = 'bench' "
            "GROUP BY TraceId ORDER BY min(Start) DESC LIMIT {n:UInt32}",
            {"n": max(1, int(total["t"]) // 100)},
        )
    ]
    analyzer = Analyzer(store)
    passes = []
    for _ in range(max(1, args.repeat)):
        started = time.perf_counter()
        full = analyzer.analyze_window("bench", 0)
        passes.append(time.perf_counter() - started)
        print(
            f"full pass: {full.traces} traces, {full.spans} spans in {passes[-1]:.1f} s "
            f"({full.spans / passes[-1]:,.0f} spans/s); "
            + ", ".join(f"{k} {v:.1f} s" for k, v in getattr(full, "phases", {}).items())
            + f"; findings {full.counts()}",
            flush=True,
        )
    full_s = statistics.median(passes)
    if args.findings_out:
        lines = sorted(json.dumps(f.to_dict(), sort_keys=True, default=str) for f in full.findings)
        args.findings_out.write_text("".join(line + "\n" for line in lines))

    started = time.perf_counter()
    inc = analyzer.analyze("bench", newest)
    inc_s = time.perf_counter() - started
    print(
        f"incremental: newest {inc.traces} traces ({inc.spans} spans, "
        f"{100 * inc.spans / max(1, full.spans):.2f}% of spans) in {inc_s:.2f} s = "
        f"{100 * inc_s / full_s:.2f}% of the full pass",
        flush=True,
    )
    started = time.perf_counter()
    analyzer.analyze("bench", newest)
    rerun_s = time.perf_counter() - started
    live = store.query(
        "SELECT count() AS n FROM findings FINAL WHERE Project = 'bench' AND IsDeleted = 0"
    )[0]["n"]
    store.close()
    figures = {
        "machine": machine_facts(),
        "spans": full.spans,
        "traces": full.traces,
        "days": args.days,
        "insert_s": round(insert_s, 2),
        "full_s": round(full_s, 2),
        "full_passes_s": [round(x, 2) for x in passes],
        "full_phases_s": {k: round(v, 2) for k, v in getattr(full, "phases", {}).items()},
        "full_spans_per_s": round(full.spans / full_s),
        "incremental_traces": inc.traces,
        "incremental_spans": inc.spans,
        "incremental_s": round(inc_s, 3),
        "incremental_share_of_full": round(inc_s / full_s, 4),
        "rerun_s": round(rerun_s, 3),
        "findings": full.counts(),
        "live_findings": live,
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

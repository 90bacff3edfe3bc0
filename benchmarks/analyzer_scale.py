"""Analyzer scale: a full pass over ~1,000,000 spans on the embedded store, then an
incremental pass over ~1% new spans.

Spans come from the reference runtime (a labelled suite on an in-memory exporter, encoded as
OTLP and flattened by the collector's own code), replicated with fresh trace/span ids and
spread over ``--days`` daily partitions (like a store that has been ingesting for that long),
inserted through ``Store.insert_spans`` (as Arrow IPC, like the collector's writer) so every
materialized view fills the typed tables.

Each full pass runs in its own process (chDB opens a data dir in one process at a time).
``--compare-with REV`` runs the analyzer of git revision ``REV`` (its ``analyzer/``,
``collector/`` and ``sdk/`` exported to a temp dir, first on ``PYTHONPATH``) on the same
store, alternating which build goes first in each round, and prints the ratio per round and
whether both wrote the same findings. Then
``--new-percent`` of new spans (whole copies of the suite, fresh ids, the newest timestamps)
are inserted and ``Analyzer.analyze_changed`` (what the collector's poll runs) analyses them:
its time against the full pass's is the incremental figure.

    .venv/bin/python benchmarks/analyzer_scale.py --spans 1000000 --days 100 --workdir /tmp/ab
    .venv/bin/python benchmarks/analyzer_scale.py --workdir /tmp/ab --reuse --no-optimize \
        --repeat 3 --compare-with main
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.storage._spans

from _common import REPO, machine_facts

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


def fill(store: Any, base: list[list[Any]], copies: range, days: int, total: int) -> float:
    """Insert copies ``copies`` of the suite's rows (``total`` copies spread over ``days`` daily
    partitions, copy ``c`` on day ``c * days // total``; copies beyond ``total`` on the newest
    day, later than every other); seconds taken."""
    now = time.time_ns() - 3600 * 10**9
    oldest = min(r[0] for r in base)
    started = time.perf_counter()
    for copy in copies:
        day = min(days - 1, copy * days // total)
        shift = now - oldest - (days - 1 - day) * DAY_NS + copy * 10**9
        store.insert_spans(spans_ipc(replicate(base, copy, shift)))
    return time.perf_counter() - started


def findings_digest(findings: list[Any], out: Path | None) -> str:
    """md5 of every finding (all fields, sorted); written as JSON lines to ``out`` if given."""
    lines = sorted(json.dumps(f.to_dict(), sort_keys=True, default=str) for f in findings)
    text = "".join(line + "\n" for line in lines)
    if out is not None:
        out.write_text(text)
    return hashlib.md5(text.encode()).hexdigest()


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process (chDB's threads included) and of its child
    processes that have exited (a pass that ran work in child processes is counted whole)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def one_pass(workdir: Path, findings_out: Path | None) -> dict[str, Any]:
    """One full pass (``analyze_window(project, 0)``, findings written) in this process."""
    from planscope_analyzer import Analyzer
    from planscope_collector.storage import open_store

    store = open_store(f"chdb://{workdir / 'store'}")
    try:
        cpu = _cpu_seconds()
        started = time.perf_counter()
        full = Analyzer(store).analyze_window("bench", 0)
        seconds = time.perf_counter() - started
        cpu = _cpu_seconds() - cpu
    finally:
        store.close()
    return {
        "seconds": seconds,
        "cpu_s": cpu,
        # peak resident memory of the pass's process (ru_maxrss is KiB on Linux), chDB's included
        "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        "load_average": os.getloadavg(),
        "traces": full.traces,
        "spans": full.spans,
        "phases": dict(getattr(full, "phases", {})),
        "counts": full.counts(),
        "digest": findings_digest(full.findings, findings_out),
    }


def run_pass(workdir: Path, source: Path | None, findings_out: Path | None) -> dict[str, Any]:
    """:func:`one_pass` in a child process, with the analyzer of ``source`` (an exported tree)
    first on the path when given."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            [*(str(source / d) for d in EXPORTED), *filter(None, [env.get("PYTHONPATH")])]
        )
    cmd = [sys.executable, __file__, "--workdir", str(workdir), "--one-pass"]
    if findings_out is not None:
        cmd += ["--findings-out", str(findings_out)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=REPO)
    if out.returncode != 0:
        raise RuntimeError(f"full pass failed ({source or 'this checkout'}):\n{out.stderr}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


EXPORTED = ("analyzer", "collector", "sdk")
"""The packages of the other revision put first on its pass's path (the store stays this
checkout's: migrated by it, read by both)."""


def export_source(rev: str) -> Path:
    """:data:`EXPORTED` of git revision ``rev`` in a temp dir (no worktree, no repo change)."""
    target = Path(tempfile.mkdtemp(prefix="planscope-bench-analyzer-"))
    archive = subprocess.run(
        ["git", "archive", rev, *EXPORTED], cwd=REPO, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def describe(label: str, r: dict[str, Any]) -> str:
    phases = ", ".join(f"{k} {v:.1f} s" for k, v in r["phases"].items())
    return (
        f"  {label}: {r['traces']} traces, {r['spans']} spans in {r['seconds']:.1f} s "
        f"({r['spans'] / r['seconds']:,.0f} spans/s), CPU {r['cpu_s']:.1f} s, "
        f"peak RSS {r.get('max_rss_mib', 0)} MiB; {phases}; "
        f"findings md5 {r['digest'][:12]}; load average {r['load_average'][0]:.1f}"
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--spans", type=int, default=1_000_000)
    p.add_argument("--days", type=int, default=100)
    p.add_argument("--seed-runs", type=int, default=400)
    p.add_argument("--workdir", type=Path)
    p.add_argument("--json", type=Path, help="also write the figures here")
    p.add_argument("--reuse", action="store_true", help="analyse the store in --workdir as is")
    p.add_argument("--repeat", type=int, default=1, help="full passes per build (median)")
    p.add_argument("--compare-with", metavar="REV", help="also time REV's analyzer, interleaved")
    p.add_argument(
        "--new-percent",
        type=float,
        default=1.0,
        help="new spans to add (share of the store, in whole suite copies) for the incremental "
        "pass; 0 skips it",
    )
    p.add_argument(
        "--findings-out",
        type=Path,
        help="write this checkout's full-pass findings here (JSON lines, sorted)",
    )
    p.add_argument(
        "--no-optimize",
        action="store_true",
        help="skip OPTIMIZE ... FINAL (merging the parts, as a long-running store's)",
    )
    p.add_argument("--one-pass", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one_pass:
        print(json.dumps(one_pass(args.workdir, args.findings_out)))
        return 0

    from planscope_analyzer import Analyzer
    from planscope_collector.storage import open_store

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="ps-analyzer-bench-"))
    store = open_store(f"chdb://{workdir / 'store'}")
    insert_s = 0.0
    base: list[list[Any]] | None = None
    copies_file = workdir / "copies.json"
    if not args.reuse:
        store.migrate(ttl_days=max(365, args.days + 30))
        started = time.perf_counter()
        base = seed_rows(args.seed_runs, 11)
        copies = max(1, round(args.spans / len(base)))
        print(
            f"seed suite: {args.seed_runs} runs, {len(base)} spans "
            f"({time.perf_counter() - started:.1f} s); {copies} copies over {args.days} days",
            flush=True,
        )
        insert_s = fill(store, base, range(copies), args.days, copies)
        copies_file.write_text(json.dumps({"total": copies, "next": copies, "days": args.days}))
    if not args.no_optimize:
        started = time.perf_counter()
        for table in TYPED_TABLES:
            store.command(f"OPTIMIZE TABLE {table} FINAL")
        print(f"merged parts in {time.perf_counter() - started:.1f} s", flush=True)
    total = store.query(
        "SELECT count() AS n, uniqExact(TraceId) AS t FROM otel_traces WHERE Project = 'bench'"
    )[0]
    print(f"store: {total['n']} spans / {total['t']} traces (insert {insert_s:.1f} s)", flush=True)
    store.close()

    baseline = export_source(args.compare_with) if args.compare_with else None
    mine: list[dict[str, Any]] = []
    theirs: list[dict[str, Any]] = []
    try:
        for r in range(max(1, args.repeat)):
            order = [None, baseline] if r % 2 == 0 else [baseline, None]
            for source in order if baseline is not None else [None]:
                out = args.findings_out if source is None else None
                result = run_pass(workdir, source, out)
                (mine if source is None else theirs).append(result)
                label = "this checkout" if source is None else args.compare_with
                print(f"round {r + 1}" + describe(label, result), flush=True)
    finally:
        if baseline is not None:
            shutil.rmtree(baseline, ignore_errors=True)
    full_s = statistics.median(x["seconds"] for x in mine)
    cpu_s = statistics.median(x["cpu_s"] for x in mine)
    spans = mine[-1]["spans"]
    print(
        f"\nfull pass, this checkout: median {full_s:.1f} s ({spans / full_s:,.0f} spans/s), "
        f"CPU {cpu_s:.1f} s"
    )
    comparison: dict[str, Any] | None = None
    if theirs:
        ratios = [b["seconds"] / a["seconds"] for a, b in zip(mine, theirs, strict=True)]
        cpu_ratios = [b["cpu_s"] / a["cpu_s"] for a, b in zip(mine, theirs, strict=True)]
        base_s = statistics.median(x["seconds"] for x in theirs)
        base_cpu = statistics.median(x["cpu_s"] for x in theirs)
        same = {x["digest"] for x in mine} == {x["digest"] for x in theirs}
        print(
            f"full pass, {args.compare_with}: median {base_s:.1f} s, CPU {base_cpu:.1f} s; "
            f"speed-up per round {[round(x, 2) for x in ratios]}, median "
            f"{statistics.median(ratios):.2f}x; CPU ratio per round "
            f"{[round(x, 2) for x in cpu_ratios]}; same findings: {'yes' if same else 'NO'}"
        )
        comparison = {
            "rev": args.compare_with,
            "passes_s": [round(x["seconds"], 2) for x in theirs],
            "median_s": round(base_s, 2),
            "cpu_s": [round(x["cpu_s"], 2) for x in theirs],
            "median_cpu_s": round(base_cpu, 2),
            "speedup_per_round": [round(x, 3) for x in ratios],
            "cpu_ratio_per_round": [round(x, 3) for x in cpu_ratios],
            "same_findings": same,
        }

    incremental: dict[str, Any] | None = None
    if args.new_percent > 0:
        state = json.loads(copies_file.read_text()) if copies_file.exists() else None
        if state is None:
            print("no copies.json in the workdir (an older store): incremental pass skipped")
        else:
            base = base or seed_rows(args.seed_runs, 11)
            n_new = max(1, round(state["total"] * args.new_percent / 100))
            store = open_store(f"chdb://{workdir / 'store'}")
            try:
                analyzer = Analyzer(store)
                since = time.time_ns()
                first = state["next"]
                fill(store, base, range(first, first + n_new), state["days"], state["total"])
                state["next"] = first + n_new
                copies_file.write_text(json.dumps(state))
                began = time.perf_counter()
                inc = analyzer.analyze_changed("bench", since - 7200 * 10**9)
                inc_s = time.perf_counter() - began
                began = time.perf_counter()
                again = analyzer.analyze_changed("bench", since - 7200 * 10**9)
                again_s = time.perf_counter() - began
            finally:
                store.close()
            print(
                f"incremental: {n_new} new copies, {inc.traces} traces / {inc.spans} spans "
                f"({100 * inc.spans / spans:.2f}% of the store) in {inc_s:.2f} s = "
                f"{100 * inc_s / full_s:.2f}% of the full pass; nothing new: {again.traces} "
                f"traces in {again_s:.2f} s"
            )
            incremental = {
                "traces": inc.traces,
                "spans": inc.spans,
                "seconds": round(inc_s, 3),
                "share_of_full": round(inc_s / full_s, 4),
                "phases_s": {k: round(v, 3) for k, v in inc.phases.items()},
                "unchanged_pass_s": round(again_s, 3),
            }
    figures = {
        "machine": machine_facts(),
        "load_average": os.getloadavg(),
        "spans": spans,
        "traces": mine[-1]["traces"],
        "insert_s": round(insert_s, 2),
        "full_s": round(full_s, 2),
        "full_passes_s": [round(x["seconds"], 2) for x in mine],
        "full_cpu_s": [round(x["cpu_s"], 2) for x in mine],
        "full_max_rss_mib": [x["max_rss_mib"] for x in mine],
        "full_load_average": [x["load_average"] for x in mine],
        "full_phases_s": {k: round(v, 2) for k, v in mine[-1]["phases"].items()},
        "full_spans_per_s": round(spans / full_s),
        "findings": mine[-1]["counts"],
        "findings_md5": mine[-1]["digest"],
        "baseline": comparison,
        "incremental": incremental,
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

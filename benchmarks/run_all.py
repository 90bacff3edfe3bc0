"""Run every benchmark in benchmarks/ in turn (``make bench``); ``--quick`` for a smoke run.

    .venv/bin/python benchmarks/run_all.py [--quick] [--json-dir DIR] [NAME ...]

Each benchmark runs as its own process (chDB allows one data dir per process, and the SDK
benchmark needs a process without a global TracerProvider). At full size the whole set takes
tens of minutes on two cores (two of them fill a 1M-span store); ``--quick`` passes each one the
small-size arguments below. Exits non-zero if any failed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUICK: dict[str, list[str]] = {
    "sdk_overhead": ["--quick"],
    "collector_ingest": ["--quick"],
    "storage_footprint": ["--quick"],
    "query_latency": ["--spans", "50000", "--days", "3", "--repeat", "5"],
    "analyzer_scale": ["--spans", "50000", "--days", "3"],
    "alert_freshness": ["--samples", "5", "--load", "500"],
    "variants_report": [],
    "exporter_indexes": ["--traces", "72", "--repeat", "1"],
    "scheduler_detectors": [],
    "dashboard_render": ["--repeat", "2"],
    "detector_corpus": ["--split", "heldout"],
    "host_attribution": ["11", "20"],
    "amplification_rss": [],
    "protobuf_flatten": ["--repeat", "1"],
    "view_cost": ["--traces", "128", "--repeat", "2"],
    "writer_cost": ["--repeat", "1", "--no-groups"],
    "runners_timing": ["--runs", "5"],
    "alert_binding_cpu": [],
    "trickle_cpu": ["--rates", "0", "10", "--seconds", "5", "--probes", "1"],
    "read_plans_scale": ["--sizes", "1000", "2000", "--repeat", "1"],
    "detector_shapes": ["--only", "plan_yaml", "--agent", "travel"],
    "partial_traces": ["--agent", "travel"],
    "insert_rusage": ["--rounds", "1", "--repeat", "1"],
    "binding_decode": ["--count", "300"],
    "rules_cost": ["--count", "300"],
    "mapping_scaling": ["--max-scale", "0.02", "--limit", "5"],
    "loader_cost": ["--count", "300"],
}
"""Every benchmark script (a test checks the list against the folder) and its smoke-run size."""
TABLES_ONLY = {
    "scheduler_detectors",
    "host_attribution",
    "protobuf_flatten",
    "runners_timing",
    "alert_binding_cpu",
    "read_plans_scale",
    "insert_rusage",
    "binding_decode",
    "rules_cost",
    "loader_cost",
}
"""Benchmarks that print tables and take no ``--json``."""
BENCHMARKS = tuple(QUICK)
SCHEDULER_SUITE = ["--fault-rate", "0.6", "--seed", "41", "--variants", "scheduler", "--no-degrade"]
"""``scheduler_detectors`` scores a stored ``planscope evaluate`` suite: this one, made first
(120 runs; 30 with ``--quick``), as in the script's docstring. ``alert_binding_cpu`` reads a
store that ``query_latency`` fills first, in the same way; ``binding_decode`` a framework store
that ``analyzer_scale`` fills and binds first, its rows against HEAD's decode (``rules_cost``:
the rules on such a store, against HEAD's; ``loader_cost``: the loader's parts, against HEAD's)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--json-dir", type=Path, help="write <name>.json for each benchmark here")
    parser.add_argument("only", nargs="*", help=f"run only these of {', '.join(BENCHMARKS)}")
    args = parser.parse_args()
    unknown = sorted(set(args.only) - set(BENCHMARKS))
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; choose from {list(BENCHMARKS)}")
    failed: list[str] = []
    for name in args.only or BENCHMARKS:
        cmd = [sys.executable, str(HERE / f"{name}.py")]
        if args.quick:
            cmd += QUICK[name]
        if name == "scheduler_detectors":
            workdir = tempfile.mkdtemp(prefix="ps-sched-")
            runs = "30" if args.quick else "120"
            setup = [sys.executable, "-m", "planscope", "evaluate", "--runs", runs]
            setup += [*SCHEDULER_SUITE, "--workdir", workdir]
            print(f"\n=== {name} (its suite): {' '.join(setup)}", flush=True)
            if subprocess.call(setup, cwd=HERE.parent, stdout=subprocess.DEVNULL) != 0:
                failed.append(name)
                continue
            cmd.append(workdir)
        if name == "alert_binding_cpu":
            workdir = tempfile.mkdtemp(prefix="ps-alerts-")
            spans = "50000" if args.quick else "300000"
            setup = [sys.executable, str(HERE / "query_latency.py"), "--spans", spans]
            setup += ["--days", "7", "--repeat", "1", "--workdir", workdir]
            print(f"\n=== {name} (its store): {' '.join(setup)}", flush=True)
            if subprocess.call(setup, cwd=HERE.parent, stdout=subprocess.DEVNULL) != 0:
                failed.append(name)
                continue
            cmd += ["--workdir", workdir]
        if name in ("binding_decode", "rules_cost", "loader_cost"):
            workdir = tempfile.mkdtemp(prefix="ps-bindings-")
            spans = "50000" if args.quick else "1000000"
            setup = [sys.executable, str(HERE / "analyzer_scale.py"), "--shape", "frameworks"]
            setup += ["--spans", spans, "--days", "3", "--new-percent", "0", "--workdir", workdir]
            print(f"\n=== {name} (its store): {' '.join(setup)}", flush=True)
            if subprocess.call(setup, cwd=HERE.parent, stdout=subprocess.DEVNULL) != 0:
                failed.append(name)
                continue
            cmd += ["--store", f"{workdir}/frameworks/store", "--compare-with", "HEAD"]
        if args.json_dir is not None and name not in TABLES_ONLY:
            args.json_dir.mkdir(parents=True, exist_ok=True)
            cmd += ["--json", str(args.json_dir / f"{name}.json")]
        print(f"\n=== {name}: {' '.join(cmd)}", flush=True)
        start = time.monotonic()
        code = subprocess.call(cmd, cwd=HERE.parent)
        print(f"=== {name}: exit {code} in {time.monotonic() - start:.1f} s", flush=True)
        if code != 0:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Run every benchmark in turn with its defaults (``make bench``); ``--quick`` for a smoke run.

    .venv/bin/python benchmarks/run_all.py [--quick] [--json-dir DIR]

Each benchmark runs as its own process (chDB allows one data dir per process, and the SDK
benchmark needs a process without a global TracerProvider). Exits non-zero if any failed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = ("sdk_overhead", "collector_ingest")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="pass --quick to every benchmark")
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
            cmd.append("--quick")
        if args.json_dir is not None:
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

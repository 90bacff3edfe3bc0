"""Reading plans from one long trace: ``observed.read_plans`` (the structural plan reader the
trace API and the analyzer's loader run on every trace with no plan of its own) on a single
trace of 1k to 50k step attempts, what a long-running agent with thousands of tool calls sends.

The traces are ``tests/collector/_long_trace.py``'s shapes: ``react`` and ``bare`` are
plan-less, ``crew`` has answers that name words other agents' later attempts carry (plans are
read from them: many re-plans). Each (shape, size) runs in a child process, CPU seconds of
``read_plans`` alone (the median of ``--repeat``), with the md5 of the plans it read.
``--compare-with REV`` also runs REV's reader (its ``collector/`` and ``sdk/`` exported to a temp
dir, first on ``PYTHONPATH``), alternating which goes first, and prints the ratio and whether
both read the same plans; a child past ``--timeout`` seconds is stopped and shown as ``>T``.

    .venv/bin/python benchmarks/read_plans_scale.py [--sizes 1000 2000 10000 50000]
        [--shapes react bare crew] [--repeat 3] [--compare-with main] [--timeout 300]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.collector._long_trace

from _common import REPO, machine_facts, print_table


def one(size: int, shape: str, repeat: int) -> dict[str, Any]:
    """Time ``read_plans`` on one trace in this process (the reader first on the path)."""
    from planscope_collector.observed import read_plans

    from tests.collector._long_trace import long_trace

    spans = long_trace(size, shape)
    nodes = {s.span_id: s for s in spans}
    steps = {s.span_id for s in spans if s.kind == "step"}
    enclosing = {s.span_id: s.parent_span_id for s in spans if s.parent_span_id in steps}
    seconds = []
    for _ in range(repeat):
        t0 = time.process_time()
        plans = read_plans(nodes, enclosing.get)
        seconds.append(time.process_time() - t0)
    digest = hashlib.md5(repr(plans).encode()).hexdigest()
    return {"seconds": statistics.median(seconds), "plans": len(plans), "md5": digest}


def child(size: int, shape: str, repeat: int, source: Path | None, timeout: float) -> Any:
    """:func:`one` in a child process (``source``'s reader first on the path); None: timed out."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            [str(source / "collector"), str(source / "sdk"), env.get("PYTHONPATH", "")]
        )
    cmd = [sys.executable, __file__, "--one", str(size), shape, "--repeat", str(repeat)]
    try:
        out = subprocess.run(
            cmd, env=env, cwd=REPO, capture_output=True, text=True, timeout=timeout, check=True
        )
    except subprocess.TimeoutExpired:
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 10000, 50000])
    p.add_argument("--shapes", nargs="+", default=["react", "bare", "crew"])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--compare-with", metavar="REV", help="also time REV's reader, interleaved")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per child process")
    p.add_argument("--one", nargs=2, metavar=("SIZE", "SHAPE"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:
        print(json.dumps(one(int(args.one[0]), args.one[1], args.repeat)))
        return 0
    other = None
    if args.compare_with:
        from analyzer_scale import export_source

        other = export_source(args.compare_with)
    print(json.dumps(machine_facts()))
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    rows = []
    for shape in args.shapes:
        for i, size in enumerate(args.sizes):
            builds: list[tuple[str, Path | None]] = [("this", None)]
            if other is not None:
                builds = [*builds, (args.compare_with, other)]
                builds = builds if i % 2 == 0 else builds[::-1]
            got = {name: child(size, shape, args.repeat, src, args.timeout) for name, src in builds}
            mine = got["this"]
            row: list[Any] = [shape, size, _seconds(mine, args.timeout)]
            row.append(mine["plans"] if mine else "?")
            if other is not None:
                theirs = got[args.compare_with]
                row.append(_seconds(theirs, args.timeout))
                ratio = theirs["seconds"] / mine["seconds"] if theirs and mine else None
                row.append(f"{ratio:.1f}x" if ratio else "?")
                row.append("yes" if theirs and mine and theirs["md5"] == mine["md5"] else "?")
            rows.append(row)
    headers = ["shape", "attempts", "this CPU s", "plans read"]
    if other is not None:
        headers += [f"{args.compare_with} CPU s", "ratio", "same plans"]
    print_table("read_plans on one long trace (median CPU s)", headers, rows)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


def _seconds(result: Any, timeout: float) -> str:
    return f"{result['seconds']:.3f}" if result else f">{timeout:.0f}"


if __name__ == "__main__":
    sys.exit(main())

"""CPU time of the loader's parts on a first pass (``planscope_analyzer._load.load_traces``
over the ``--count`` earliest traces of a store, in batches of 500, every trace bound: stored
bindings are ignored, nothing is written): each ``otel_traces`` / typed-table query and each
loader step, in CPU seconds of the process (chDB's threads included; a step's figure excludes
the queries and steps it calls). ``--compare-with REV`` also runs ``REV``'s analyzer and
collector (exported, first on the path), each build in its own process, one after the other on
the same store. Prints an md5 of every trace's encoded binding: the builds must agree when they
bind alike.

    .venv/bin/python benchmarks/loader_cost.py --store /tmp/fwspeed2-big/frameworks/store \
        --count 30000 --compare-with 3011a2e
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO
from analyzer_scale import EXPORTED, export_source

STEPS = (
    "_read_raw",
    "_apply_raw",
    "_tool_events",
    "_requests",
    "_answers",
    "_attempt_names",
    "_bind_observed",
    "_component_calls",
    "_load_prompts",
)
"""The loader's steps timed (those a build lacks are skipped)."""


def measure(store_dir: str, project: str, count: int) -> dict[str, Any]:
    """The loader's parts over the ``count`` earliest traces, in this process."""
    from planscope_analyzer import _bindings, _load
    from planscope_analyzer import _queries as Q
    from planscope_collector.storage import open_store

    spent: defaultdict[str, float] = defaultdict(float)
    inner: list[float] = []

    def timed(name: str, f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def run(*args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            inner.append(0.0)
            try:
                return f(*args, **kwargs)
            finally:
                took = time.process_time() - started
                spent[name] += took - inner.pop()
                if inner:
                    inner[-1] += took

        return run

    for step in STEPS:
        if hasattr(_load, step):
            setattr(_load, step, timed(step, getattr(_load, step)))
    _load.read_bindings = lambda *_: (set(), set())  # a first pass: every trace bound
    queries = {v: k for k, v in vars(Q).items() if isinstance(v, str) and k.startswith("LOAD_")}
    store = open_store(f"chdb://{store_dir}")
    query = store.query_arrow

    def named(sql: str, parameters: Any = None) -> Any:
        typed = sql.split("FROM", 1)[-1].split()[0]  # a typed read: LOAD_* with its filter
        return timed(queries.get(sql, typed), query)(sql, parameters)

    store.query_arrow = named  # type: ignore[method-assign]
    try:
        window = _load.index_window(store, project, 0, time.time_ns() + 86400 * 10**9)
        ids = sorted(window, key=lambda i: (window[i].start_ns, i))[:count]
        digest = hashlib.md5()
        started = time.process_time()
        for i in range(0, len(ids), 500):
            traces = _load.load_traces(store, project, ids[i : i + 500])
            for trace_id in sorted(traces):
                digest.update(repr((trace_id, _bindings.encode(traces[trace_id]))).encode())
        total = time.process_time() - started
    finally:
        store.close()
    return {
        "traces": len(ids),
        "cpu_s": round(total, 2),
        "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        "bindings_md5": digest.hexdigest()[:12],
        "parts": {k: round(v, 2) for k, v in sorted(spent.items(), key=lambda kv: -kv[1])},
    }


def run(args: argparse.Namespace, source: Path | None) -> dict[str, Any]:
    """:func:`measure` in a child process, ``source``'s packages first on its path."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join(str(source / d) for d in EXPORTED)
    cmd = [sys.executable, __file__, "--store", args.store, "--project", args.project]
    cmd += ["--count", str(args.count), "--one"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=REPO, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--store", required=True, help="an embedded store's directory (only read)")
    p.add_argument("--project", default="bench")
    p.add_argument("--count", type=int, default=3000, help="traces (the earliest)")
    p.add_argument("--compare-with", metavar="REV")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:
        print(json.dumps(measure(args.store, args.project, args.count)))
        return
    builds: list[tuple[str, Path | None]] = [("this checkout", None)]
    if args.compare_with:
        builds.append((args.compare_with, export_source(args.compare_with)))
    try:
        for label, source in builds:
            r = run(args, source)
            parts = ", ".join(f"{k} {v:.2f}" for k, v in r["parts"].items())
            print(
                f"{label}: {r['traces']} traces, loader CPU {r['cpu_s']:.1f} s, peak RSS "
                f"{r['max_rss_mib']} MiB, bindings md5 {r['bindings_md5']}; {parts}; "
                f"load average {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    finally:
        for _, source in builds:
            if source is not None:
                shutil.rmtree(source, ignore_errors=True)


if __name__ == "__main__":
    main()

"""CPU time of the rules alone on stored traces (``planscope_analyzer._engine.detect``, every
detector, what a stored pass's analysing thread does per trace): the same ``--count`` traces
(the earliest ``--count`` of the store's window), loaded once by each build's own loader (a
trace whose binding that build stored is decoded, not bound), then every detector run over
each of them by that build, in one process, cyclic GC paused (as in a pass), the builds
alternating, best of 5. ``--compare-with REV``'s analyzer is imported beside this checkout's
(as ``planscope_analyzer_base``; the collector and sdk are this checkout's). Prints each build's
findings count and an md5 of them: the builds must agree.

    .venv/bin/python benchmarks/rules_cost.py --store /tmp/fwspeed2-big/frameworks/store \
        --count 3000 --compare-with f52720e
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib
import io
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO

BASE = "planscope_analyzer_base"


def base_package(rev: str) -> ModuleType:
    """``rev``'s analyzer package, imported as :data:`BASE` (its relative imports resolve
    inside it)."""
    archive = subprocess.run(
        ["git", "archive", rev, "analyzer/planscope_analyzer"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    root = Path(tempfile.mkdtemp(prefix="planscope-bench-rules-"))
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(root, filter="data")
    (root / "analyzer" / "planscope_analyzer").rename(root / BASE)
    sys.path.insert(0, str(root))
    return importlib.import_module(BASE)


def loaded(package: str, store: Any, project: str, count: int) -> list[Any]:
    """The first ``count`` traces of the store's window, loaded by ``package``'s engine as a
    pass loads a batch (``write=False``: nothing stored)."""
    engine = importlib.import_module(f"{package}._engine")
    load = importlib.import_module(f"{package}._load")
    window = load.index_window(store, project, 0, time.time_ns() + 86400 * 10**9)
    ids = sorted(window, key=lambda i: (window[i].start_ns, i))[:count]
    traces, bad, _, _ = engine.Analyzer(store)._load(project, ids, None, False)
    assert not bad, bad
    return list(traces.values())


def detect_cpu(package: str, traces: list[Any]) -> tuple[float, list[Any]]:
    """CPU seconds of every detector of ``package`` over ``traces`` (no screen: a stored trace
    has none), and the findings."""
    detect = importlib.import_module(f"{package}._engine").detect
    for t in traces:
        t._memo.clear()
    findings: list[Any] = []
    started = time.process_time()
    for t in traces:
        findings.extend(detect(t))
    return time.process_time() - started, findings


def digest(findings: list[Any]) -> str:
    """md5 of every finding (all fields, sorted), as ``analyzer_scale.py`` prints it."""
    rows = sorted(json.dumps(f.to_dict(), sort_keys=True, default=str) for f in findings)
    return hashlib.md5("".join(r + "\n" for r in rows).encode()).hexdigest()[:12]


def main() -> None:
    from planscope_collector.storage import open_store

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--store", required=True, help="an embedded store's directory")
    p.add_argument("--project", default="bench")
    p.add_argument("--count", type=int, default=3000, help="traces (the earliest)")
    p.add_argument("--compare-with", required=True, metavar="REV")
    args = p.parse_args()
    base_package(args.compare_with)
    builds = {args.compare_with: BASE, "this checkout": "planscope_analyzer"}
    store = open_store(f"chdb://{args.store}")
    gc.disable()
    try:
        traces = {k: loaded(pkg, store, args.project, args.count) for k, pkg in builds.items()}
    finally:
        store.close()
    best = dict.fromkeys(builds, float("inf"))
    found: dict[str, list[Any]] = {}
    for _ in range(5):
        for label, pkg in builds.items():
            cpu, found[label] = detect_cpu(pkg, traces[label])
            best[label] = min(best[label], cpu)
            gc.collect()
    for label in builds:
        print(
            f"{label}: {len(traces[label])} traces, {len(found[label])} findings "
            f"(md5 {digest(found[label])}), detect best of 5 {best[label]:.3f} CPU s"
        )
    print(f"CPU ratio {best[args.compare_with] / max(best['this checkout'], 1e-9):.2f}x")


if __name__ == "__main__":
    main()

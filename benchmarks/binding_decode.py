"""CPU time of decoding stored bindings (``planscope_analyzer._bindings.decode``, what a stored
pass's loader does per trace): the same ``--count`` traces' rows of this checkout's
``BINDING_VERSION`` and of ``--compare-with REV``'s, each decoded by its own build's ``decode``
into row-less traces, in one process, cyclic GC paused (as in a pass), the builds alternating,
best of 5. Each build must have stored those traces' bindings, in ``--store`` or, for REV,
``--base-store`` (an ``analyzer_scale.py --compare-with REV --compare-workdir DIR`` run leaves
them so).

    .venv/bin/python benchmarks/binding_decode.py --store /tmp/fwspeed-big/frameworks/store \
        --base-store /tmp/fwspeed-big-base/frameworks/store --count 3000 --compare-with 8594919
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

from planscope_analyzer import _bindings
from planscope_analyzer._model import TraceData
from planscope_collector.storage import open_store

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO

ROWS = """
SELECT TraceId AS trace_id, argMax(Binding, BoundAt) AS binding
FROM planscope_trace_bindings
WHERE Project = {project:String} AND BindingVersion = {version:UInt32}
GROUP BY TraceId
"""


def base_module(rev: str) -> ModuleType:
    """``rev``'s ``_bindings`` module, imported beside this checkout's (its ``_model`` this
    checkout's: both must hold the same model)."""
    source = subprocess.run(
        ["git", "show", f"{rev}:analyzer/planscope_analyzer/_bindings.py"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp(prefix="planscope-bench-bindings-")) / "_bindings.py"
    path.write_bytes(source)
    spec = importlib.util.spec_from_file_location("planscope_analyzer._bindings_base", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stored(where: str, project: str, version: int) -> dict[str, str]:
    """Trace id → its newest stored binding of ``version`` in the store at ``where``."""
    store = open_store(f"chdb://{where}")
    try:
        rows = store.query_arrow(ROWS, {"project": project, "version": version}).to_pylist()
    finally:
        store.close()
    return {r["trace_id"]: r["binding"] for r in rows}


def decode_cpu(module: ModuleType, project: str, texts: dict[str, str]) -> float:
    """CPU seconds ``module.decode`` takes to fill a row-less trace from each of ``texts``."""
    traces = [(TraceData(project, trace_id), text) for trace_id, text in texts.items()]
    started = time.process_time()
    for t, text in traces:
        module.decode(t, text)
    return time.process_time() - started


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--store", required=True, help="an embedded store's directory")
    p.add_argument("--base-store", help="where REV's bindings are (default: --store)")
    p.add_argument("--project", default="bench")
    p.add_argument("--count", type=int, default=3000, help="traces (the first by id)")
    p.add_argument("--compare-with", required=True, metavar="REV")
    args = p.parse_args()
    base = base_module(args.compare_with)
    builds = {  # label -> (its decode's module, its binding version, its stored rows)
        args.compare_with: (base, base.BINDING_VERSION, args.base_store or args.store),
        "this checkout": (_bindings, _bindings.BINDING_VERSION, args.store),
    }
    rows = {k: stored(where, args.project, v) for k, (_, v, where) in builds.items()}
    both = sorted(set.intersection(*map(set, rows.values())))[: args.count]
    texts = {k: {i: r[i] for i in both} for k, r in rows.items()}
    best = dict.fromkeys(builds, float("inf"))
    gc.disable()
    for _ in range(5):
        for label, (module, _, _) in builds.items():
            best[label] = min(best[label], decode_cpu(module, args.project, texts[label]))
            gc.collect()
    for label, (_, version, _) in builds.items():
        size = sum(map(len, texts[label].values())) / max(1, len(both))
        print(
            f"{label} (binding version {version}): {len(both)} bindings, "
            f"{size:,.0f} characters each on average, decode best of 5 {best[label]:.3f} CPU s"
        )
    print(f"CPU ratio {best[args.compare_with] / max(best['this checkout'], 1e-9):.2f}x")


if __name__ == "__main__":
    main()

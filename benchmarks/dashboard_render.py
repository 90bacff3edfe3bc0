"""Run-detail render time of a 5,000-span run against a real collector (Streamlit AppTest).

Starts ``planscope serve`` on a free loopback port with a temporary embedded store, sends one
5,000-span run (60 plan steps, 4 parallel executors; the same builder the dashboard tests use)
and renders the run page ``--repeat`` times (fetch + views + figures), printing the median next
to a small (~500-span) run rendered the same way. The server is collector_ingest.py's.

    .venv/bin/python benchmarks/dashboard_render.py --repeat 5

The quality bar: the 5,000-span run detail renders in <= 2 s.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import machine_facts, median, print_table, write_json
from collector_ingest import _free_port, start_server, stop_server, wait_started

from tests.dashboard._synthetic import large_run, wait_stored

ROOT = Path(__file__).resolve().parents[1]
APP_FILE = ROOT / "dashboard" / "planscope_dashboard" / "app.py"
BAR_S = 2.0


def _render_s(trace_id: str) -> float:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP_FILE), default_timeout=120)
    at.query_params["page"] = "run"
    at.query_params["trace"] = trace_id
    started = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - started
    if at.exception:
        raise SystemExit(f"planscope: error: the run page raised {at.exception[0].value}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="renders per run (default: 5)")
    parser.add_argument("--spans", type=int, default=5000, help="size of the big run")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(Path(tmp) / "data", port, Path(tmp) / "server.log")
        try:
            wait_started(url, server)
            os.environ["PLANSCOPE_ENDPOINT"] = url
            runs = {"small run": large_run(30, executors=1), "big run": large_run(args.spans)}
            for run in runs.values():
                run.send(url)
            for run in runs.values():
                wait_stored(url, run.trace_id, len(run.spans))
            _render_s(runs["small run"].trace_id)  # imports warm
            rows, figures = [], {}
            for name, run in runs.items():
                times = [_render_s(run.trace_id) for _ in range(args.repeat)]
                figures[name] = {"spans": len(run.spans), "median_s": median(times)}
                rows.append([name, len(run.spans), median(times), max(times)])
        finally:
            stop_server(server)
    print_table(f"run detail render (bar {BAR_S} s)", ["run", "spans", "median s", "max s"], rows)
    write_json(args.json, {"machine": machine_facts(), "figures": figures})


if __name__ == "__main__":
    main()

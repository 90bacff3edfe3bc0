"""``planscope demo``: the whole platform on one machine, from nothing but this package.

1. starts a collector on the embedded chDB store (``.planscope/demo`` by default) and installs
   one example alert rule (a plan step over its retry budget of 3 attempts);
2. runs a mixed suite of the reference runtime (five variants, three environments, a share of
   runs with injected faults) and sends its traces through the collector over OTLP;
3. waits until every span is stored (and analyzed, when the analyzer is installed);
4. prints what was stored, serves the dashboard when it is installed and prints the links to
   open (the run page of a runaway loop, the alerts page);
5. keeps everything up until Ctrl-C (``--no-wait`` exits after the report).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
from planscope.cli import number, port
from planscope.environment_variables import PLANSCOPE_DASHBOARD_URL

from ._runner import SuiteResult, run_suite


def _port_or_free(port: int) -> int:
    """``port`` if it is free on loopback, else (or for 0) a free one."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_until(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def _progress(done: int, total: int, _run: Any) -> None:
    if not sys.stderr.isatty():  # a log file gets a line per 10%, not 300 carriage returns
        if done == total or done % max(1, total // 10) == 0:
            print(f"  runs {done}/{total}", file=sys.stderr, flush=True)
        return
    width = 30
    filled = width * done // total
    sys.stderr.write(f"\r  runs [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main(args: argparse.Namespace) -> int:
    """Entry point of ``planscope demo`` (see ``planscope demo --help``)."""
    # SIGTERM (a service manager, `timeout`) and SIGHUP (the terminal closed) stop the demo
    # like Ctrl-C does, so the dashboard in its own session is stopped too, not orphaned.
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGHUP, _interrupt)
    from planscope_collector import BackgroundServer, CollectorSettings

    data_dir: Path = args.data_dir
    port = _port_or_free(args.port)
    if args.port and port != args.port:  # port 0 asks for a free one: nothing to say
        print(f"port {args.port} is busy; the collector uses {port}", file=sys.stderr)
    dashboard_url = f"http://127.0.0.1:{_port_or_free(args.dashboard_port)}"
    # Alert links (log lines, webhooks) point at this demo's dashboard.
    os.environ.setdefault(PLANSCOPE_DASHBOARD_URL, dashboard_url)
    settings = CollectorSettings(data_dir=data_dir, port=port, flush_interval=0.2)
    labels = data_dir / "labels.jsonl"
    with BackgroundServer(settings) as server:
        print(f"collector  {server.url}   (embedded store in {data_dir.resolve()})")
        _install_example_rule(server.url)
        print(f"running {args.runs} runs of the reference runtime, 30% with injected faults:")
        started_ns = time.time_ns()
        suite = run_suite(
            args.runs,
            fault_rate=0.3,
            seed=args.seed,
            endpoint=server.url,
            labels_path=labels,
            service_name="planscope-demo",
            progress=_progress,
        )
        collector = server.app.state.collector
        _wait_until(lambda: collector.spool.pending_bytes == 0, 60)
        loop = _report(server.url, suite, labels, started_ns)
        if args.no_wait:  # a report only: no dashboard to look at
            return 0
        dashboard = _start_dashboard(server.url, dashboard_url)
        if dashboard is not None:
            _print_links(dashboard_url, loop)
        print("\nEverything keeps running; press Ctrl-C to stop.")
        try:
            while dashboard is None or dashboard.poll() is None:
                time.sleep(0.5)
        except KeyboardInterrupt:
            print("\nstopping")
        finally:
            _stop(dashboard)
    return 0


EXAMPLE_RULE = {
    "id": "demo-step-retry-budget",
    "name": "a plan step used more than 3 attempts",
    "kind": "retry_budget",
    "scope": "step",
    "window": "1h",
    "budget": {"max_attempts_per_step": 3},
}
"""The alert rule the demo installs, so the Alerts page has something to show."""


def _install_example_rule(url: str) -> None:
    from planscope.client import ClientError, ClientSettings, CollectorClient, Rejected

    with CollectorClient(ClientSettings(base_url=url, timeout=30)) as client:
        try:
            client.save_alert_rule(EXAMPLE_RULE, replace=False)
        except Rejected as exc:
            if exc.status != 409:  # 409: installed by an earlier demo on this data dir
                return
        except ClientError:
            return
    print(f"alert rule {EXAMPLE_RULE['id']}: {EXAMPLE_RULE['name']}")


def _report(
    url: str, suite: SuiteResult, labels: Path, since_ns: int
) -> tuple[str, str | None] | None:
    """Print the suite's figures; return a runaway loop's (trace id, step id) to look at."""
    runs = suite.runs
    failed = [r for r in runs if r.outcome != "success"]
    print(
        f"\n{len(runs)} runs: {len(runs) - len(failed)} succeeded, {len(failed)} failed; "
        f"ground-truth labels in {labels}"
    )
    print(f"\n{'variant':14} {'runs':>5} {'success':>8} {'tokens/run':>11} {'replans':>8}")
    for variant, row in suite.by_variant().items():
        print(
            f"{variant:14} {int(row['runs']):>5} {row['success_rate']:>8.0%} "
            f"{row['tokens']:>11.0f} {row['replans']:>8.2f}"
        )
    from planscope.client import ClientError, ClientSettings, CollectorClient

    client = CollectorClient(ClientSettings(base_url=url, timeout=30))
    with client:
        listing = client.list_traces(since_ns=since_ns, limit=1000).traces
        print(f"\n{len(listing)} traces queryable at {url}/api/traces")
        try:
            analysis = client.analyze(since_ns=since_ns, timeout=300)
            summary = ", ".join(f"{n} {k}" for k, n in sorted(analysis.counts.items())) or "none"
            print(f"analysis: {analysis.traces} traces; findings: {summary}")
        except ClientError:
            pass
        looping = next((r for r in runs if any(f.knob.startswith("loop") for f in r.faults)), None)
        if looping is None:
            return None
        step = next((f.target for f in looping.faults if f.knob.startswith("loop")), None)
        print(f"\na runaway loop: trace {looping.trace_id}")
        try:
            for f in client.trace_findings(looping.trace_id):
                print(f"  {f.kind} at step {f.step_id}: {f.explanation}")
        except ClientError:
            pass
    return looping.trace_id, step


def _print_links(dashboard_url: str, loop: tuple[str, str | None] | None) -> None:
    print("\nopen:")
    if loop is not None:
        query = {"page": "run", "trace": loop[0], **({"step": loop[1]} if loop[1] else {})}
        print(f"  the runaway loop   {dashboard_url}/?{urlencode(query)}")
    print(f"  overview           {dashboard_url}/")
    print(f"  alerts             {dashboard_url}/?page=alerts")


def _start_dashboard(collector_url: str, dashboard_url: str) -> subprocess.Popen[bytes] | None:
    if importlib.util.find_spec("streamlit") is None:  # `planscope dashboard` needs its extra
        print("(the dashboard is not installed: pip install 'planscope[dashboard]')")
        return None
    port = int(dashboard_url.rsplit(":", 1)[1])
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "planscope",
            "dashboard",
            "--collector",
            collector_url,
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    up = _wait_until(lambda: _answers(f"http://127.0.0.1:{port}/_stcore/health"), 60)
    print(f"dashboard  http://127.0.0.1:{port}" + ("" if up else "   (still starting)"))
    return proc


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code < 500
    except httpx.HTTPError:
        return False


def _stop(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


def register(sub: Any) -> None:
    """Add ``demo`` to the ``planscope`` command (``planscope.commands`` entry point)."""
    demo = sub.add_parser(
        "demo", help="collector + reference runtime suite with faults + analysis + dashboard"
    )
    demo.add_argument(
        "--data-dir",
        type=Path,
        default=Path(".planscope/demo"),
        help="spool and embedded store of the demo's collector",
    )
    demo.add_argument("--port", type=port, default=4318, help="collector port (busy: a free one)")
    demo.add_argument(
        "--dashboard-port", type=port, default=8501, help="dashboard port (busy: a free one)"
    )
    demo.add_argument("--runs", type=number(1), default=300, help="runs of the reference runtime")
    demo.add_argument("--seed", type=int, default=1, help="seed of the runs (same seed, same runs)")
    demo.add_argument("--no-wait", action="store_true", help="exit after the report")
    demo.set_defaults(func=main)

"""`planscope demo` end to end in subprocesses: collector, runtime, analysis, dashboard."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.conftest import Migrated


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def demo_command(tmp_path: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "planscope", "demo", "--runs", "25",
        "--data-dir", str(tmp_path / "demo"), "--port", str(free_port()), *extra,
    ]  # fmt: skip


def test_demo_report(tmp_path: Path) -> None:
    out = subprocess.run(
        demo_command(tmp_path, "--no-wait"), capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    match = re.search(r"(\d+) traces queryable", out.stdout)
    assert match is not None, out.stdout
    assert int(match.group(1)) == 25
    assert re.search(r"analysis: 25 traces; findings: .*runaway_loop", out.stdout), out.stdout
    labels = (tmp_path / "demo" / "labels.jsonl").read_text().splitlines()
    assert len(labels) == 25


def test_demo_serves_the_dashboard_and_stops_cleanly_on_sigterm(
    tmp_path: Path, migrated: Migrated
) -> None:
    # test_demo_report starts from an empty data dir (the first `make demo`); this one from a
    # migrated store, as every later `make demo` does
    migrated.data_dir(tmp_path / "demo")
    dashboard_port = free_port()
    proc = subprocess.Popen(
        demo_command(tmp_path, "--dashboard-port", str(dashboard_port)),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = []
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            lines.append(line)
            if "press Ctrl-C" in line or not line:
                break
        assert any(f"dashboard  http://127.0.0.1:{dashboard_port}" in x for x in lines), lines
        # The links open the dashboard's run page (not a JSON URL); the example rule is there.
        run_link = next(x for x in lines if "the runaway loop" in x).split()[-1]
        assert run_link.startswith(f"http://127.0.0.1:{dashboard_port}/?page=run&trace="), lines
        collector = next(x for x in lines if x.startswith("collector  ")).split()[1]
        rules = httpx.get(f"{collector}/api/alerts/rules", timeout=10).json()["rules"]
        assert [r["kind"] for r in rules] == ["retry_budget"]
        health = httpx.get(f"http://127.0.0.1:{dashboard_port}/_stcore/health", timeout=10)
        assert health.status_code == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        # the dashboard went down with the demo, not orphaned
        try:
            httpx.get(f"http://127.0.0.1:{dashboard_port}/_stcore/health", timeout=2)
            raise AssertionError("the dashboard is still serving after the demo stopped")
        except httpx.ConnectError:
            pass
    finally:
        if proc.poll() is None:
            proc.kill()

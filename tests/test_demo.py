"""`planscope demo` end to end in a subprocess: collector, reference runtime, report."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path


def test_demo_runs_the_suite_through_the_collector(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "planscope",
            "demo",
            "--no-wait",
            "--runs",
            "25",
            "--data-dir",
            str(tmp_path / "demo"),
            "--port",
            str(port),
            "--dashboard-port",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    match = re.search(r"(\d+) traces queryable", out.stdout)
    assert match is not None, out.stdout
    assert int(match.group(1)) == 25
    labels = (tmp_path / "demo" / "labels.jsonl").read_text().splitlines()
    assert len(labels) == 25

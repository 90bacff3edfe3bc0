"""Fixtures for the dashboard tests: one real collector per module, filled with real runs.

chDB opens one data directory per process at a time, so the collector is module-scoped and
stopped at the module's end (modules run one after another).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from planscope_collector import BackgroundServer, CollectorSettings

from tests.conftest import Migrated

from ._synthetic import hostile_run, wait_drained, wait_stored

APP_FILE = Path(__file__).parents[2] / "dashboard" / "planscope_dashboard" / "app.py"


@dataclass
class Filled:
    """A running collector with a suite's runs (and their labels) and a hostile run."""

    url: str
    labels: list[dict[str, Any]]
    hostile_trace: str

    def labelled(self, kind: str) -> dict[str, Any]:
        return next(
            label
            for label in self.labels
            if any(f["kind"] == kind for f in label["expected_findings"])
        )


def run_suite(url: str, labels: Path, runs: int = 12, seed: int = 5) -> list[dict[str, Any]]:
    """The reference runtime in a subprocess (its global TracerProvider stays out of pytest)."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "planscope",
            "suite",
            "--runs",
            str(runs),
            "--fault-rate",
            "0.5",
            "--seed",
            str(seed),
            "--collector",
            url,
            "--labels",
            str(labels),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in labels.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory, migrated: Migrated) -> Iterator[Filled]:
    tmp = tmp_path_factory.mktemp("dash")
    data = migrated.data_dir(tmp / "data")
    settings = CollectorSettings(data_dir=data, port=0, flush_interval=0.05)
    server = BackgroundServer(settings).start()
    try:
        labels = run_suite(server.url, tmp / "labels.jsonl")
        hostile = hostile_run()
        hostile.send(server.url)
        wait_drained(server.url)
        wait_stored(server.url, hostile.trace_id, len(hostile.spans))
        for label in labels:
            wait_stored(server.url, label["trace_id"], 1)
        yield Filled(server.url, labels, hostile.trace_id)
    finally:
        server.stop()

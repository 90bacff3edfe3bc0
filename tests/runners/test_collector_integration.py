"""A suite sent over OTLP to a real collector (uvicorn on loopback, embedded chDB store)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from planscope import semconv as A
from planscope_collector import BackgroundServer, CollectorSettings
from planscope_runners import load_labels

from tests.conftest import poll

pytestmark = pytest.mark.integration


def _wait_for(url: str, trace_id: str, kinds: set[str]) -> dict[str, Any]:
    return dict(
        poll(
            f"{url}/api/traces/{trace_id}",
            lambda t: kinds <= {s["planscope_kind"] for s in t["spans"]},
            what=f"trace {trace_id} with spans of kinds {sorted(kinds)}",
        )
    )


def test_suite_spans_reach_the_collector_and_its_tables(tmp_path: Path, data_dir: Path) -> None:
    labels_path = tmp_path / "labels.jsonl"
    settings = CollectorSettings(data_dir=data_dir, port=0, flush_interval=0.05)
    with BackgroundServer(settings) as server:
        # A subprocess: planscope.configure(endpoint=...) installs a global TracerProvider,
        # which must not leak into the other tests of this process.
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "planscope",
                "suite",
                "--runs",
                "6",
                "--fault-rate",
                "0.5",
                "--seed",
                "6",
                "--variants",
                "plan_and_act,dag",
                "--collector",
                server.url,
                "--labels",
                str(labels_path),
                "--quiet",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        labels = load_labels(labels_path)
        assert len(labels) == 6
        loop = next(
            label
            for label in labels
            if any(f["kind"] == "runaway_loop" for f in label["expected_findings"])
        )
        finding = next(f for f in loop["expected_findings"] if f["kind"] == "runaway_loop")
        trace = _wait_for(server.url, loop["trace_id"], {"run", "plan", "step", "tool", "llm"})
        assert trace["run"]["run_id"] == loop["run_id"]
        assert trace["run"]["outcome"] == "failure"
        assert trace["run"]["variant"] == loop["variant"]
        (plan,) = trace["plans"]
        assert finding["step_id"] in {s["id"] for s in plan["steps"]}
        store = server.app.state.collector.store
        attempts: list[dict[str, Any]] = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(attempts) < 5:
            attempts = store.query(
                "SELECT Attempt, Status, ErrorFingerprint, InputHash FROM planscope_step_attempts"
                " WHERE TraceId = {t:String} AND StepId = {s:String} ORDER BY Attempt",
                {"t": loop["trace_id"], "s": finding["step_id"]},
            )
            time.sleep(0.1)
        assert [a["Status"] for a in attempts] == ["error"] * 4 + ["skipped"]
        assert len({a["ErrorFingerprint"] for a in attempts[:4]}) == 1
        assert len({a["InputHash"] for a in attempts[:4]}) == 1
        steps = store.query(
            "SELECT StepId, Tool, Requires FROM planscope_plan_steps"
            " WHERE TraceId = {t:String} AND StepId = {s:String}",
            {"t": loop["trace_id"], "s": finding["step_id"]},
        )
        assert steps and steps[0]["Tool"] == finding["component"]
        healthy = next(label for label in labels if label["healthy"])
        assert _wait_for(server.url, healthy["trace_id"], {"run"})["run"]["outcome"] == "success"
        kinds = {s["planscope_kind"] for s in trace["spans"]}
        assert A.KIND_STEP in kinds

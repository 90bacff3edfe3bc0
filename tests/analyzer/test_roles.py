"""Scale-out roles through real collectors on one embedded store, one after the other: an
``ingest`` replica stores spans and analyses nothing; an ``analyze`` replica refuses spans and
finds the unanalysed traces in the store by itself (holding the analysis lease)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from planscope import environment_variables as ENV
from planscope_analyzer import service
from planscope_collector import BackgroundServer, CollectorSettings


def _settings(data_dir: Path, role: str) -> CollectorSettings:
    return CollectorSettings(data_dir=data_dir, port=0, flush_interval=0.05, role=role)


def test_ingest_then_analyze_replicas(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV.PLANSCOPE_ANALYZER_POLL_SECONDS, "0.2")
    labels = tmp_path / "labels.jsonl"
    with BackgroundServer(_settings(data_dir, "ingest")) as ingest:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "planscope",
                "suite",
                "--runs",
                "12",
                "--fault-rate",
                "0.5",
                "--seed",
                "3",
                "--collector",
                ingest.url,
                "--labels",
                str(labels),
                "--quiet",
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        collector = ingest.app.state.collector
        assert collector.writer.drain(30)
        time.sleep(0.5)  # longer than any analysis tick: nothing may have run
        assert httpx.get(f"{ingest.url}/api/findings").json()["findings"] == []
        traces = httpx.get(f"{ingest.url}/api/traces", params={"limit": 100}).json()["traces"]
        assert len(traces) == 12

    monkeypatch.setenv(ENV.PLANSCOPE_ANALYZER_QUIET_SECONDS, "0")
    with BackgroundServer(_settings(data_dir, "analyze")) as analyze:
        refused = httpx.post(
            f"{analyze.url}/v1/traces", content=b"", headers={"content-type": "application/json"}
        )
        assert refused.status_code == 503 and "role analyze" in refused.json()["error"]
        assert "retry-after" in refused.headers
        (analyzer,) = [
            e
            for e in analyze.app.state.collector.extensions
            if isinstance(e, service.AnalyzerService)
        ]
        deadline = time.monotonic() + 60
        while analyzer.analyzed_traces < 12:
            assert time.monotonic() < deadline, f"analysed {analyzer.analyzed_traces} of 12"
            time.sleep(0.2)
        findings = httpx.get(f"{analyze.url}/api/findings", params={"limit": 1000}).json()
        assert findings["findings"], "a suite with 50% faults yields findings"
        # nothing changed since: the next polls analyse nothing again
        before = analyzer.analyzed_traces
        time.sleep(1.0)
        assert analyzer.analyzed_traces == before

"""Fixtures for alert tests: a real HTTP receiver on loopback and real collectors (sequential).

chDB opens one data directory per process at a time, so collectors here are started one after
another and always stopped at teardown.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from planscope_collector import BackgroundServer, CollectorSettings

FAST_ENV = {
    "PLANSCOPE_ALERTS_INTERVAL": "0.1",
    "PLANSCOPE_ALERTS_MIN_GAP": "0.05",
    "PLANSCOPE_ALERTS_RETRY_BASE": "0.2",
    "PLANSCOPE_ALERTS_RETRY_MAX": "0.5",
    "PLANSCOPE_DASHBOARD_URL": "http://dash.test:8501",
    # The receivers run on loopback: allowed the way an operator allows an internal receiver.
    "PLANSCOPE_ALERTS_ALLOW_TARGETS": "127.0.0.1",
}


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    """A webhook receiver: records every POST and answers ``status``."""

    port: int
    messages: list[Received] = field(default_factory=list)
    status: int = 200
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                receiver.messages.append(Received(self.path, dict(self.headers), body))
                self.send_response(receiver.status)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def wait_for(self, count: int, timeout: float = 15.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.messages) >= count:
                return list(self.messages)
            time.sleep(0.02)
        raise AssertionError(f"receiver got {len(self.messages)} messages, wanted {count}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver(0).start()
    yield r
    r.stop()


@pytest.fixture
def alert_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in FAST_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("PLANSCOPE_ALERTS_FILE", raising=False)


@pytest.fixture
def make_collector(data_dir: Path, alert_env: None) -> Iterator[Callable[..., BackgroundServer]]:
    """Start a real collector on the embedded store (already migrated); strictly one at a time."""
    started: list[BackgroundServer] = []

    def factory(**overrides: Any) -> BackgroundServer:
        for s in started:
            s.stop()
        values: dict[str, Any] = {"data_dir": data_dir, "port": 0, "flush_interval": 0.05}
        values.update(overrides)
        server = BackgroundServer(CollectorSettings(**values)).start()
        started.append(server)
        alerts = next(e for e in server.app.state.collector.extensions if hasattr(e, "engine"))
        assert alerts.engine.wait_ready(30), "alert engine did not start"
        return server

    yield factory
    for server in started:
        server.stop()


_RUNS = """
import sys
import planscope
import planscope_runners as pr

handle = planscope.configure(sys.argv[1], service_name="alerts-test")
for seed, faults in enumerate(sys.argv[2:]):
    knobs = [f for f in faults.split(",") if f]
    pr.run_task("plan_and_act", "ops", "ops-deploy-api", knobs, seed=seed)
handle.shutdown()
"""


def run_agent(url: str, *runs: str) -> None:
    """Run the reference runtime in a subprocess (real SDK, real OTLP exporter) against ``url``.

    Each argument is one run's comma-separated fault knobs ('' for a healthy run); e.g.
    ``run_agent(url, "loop_same_error", "loop_same_error")`` is a loop storm of two runs, each
    retrying step 'health' until the SDK's budget refuses attempt 5.
    """
    proc = subprocess.run(
        [sys.executable, "-c", _RUNS, url, *runs], capture_output=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]


def api(url: str) -> httpx.Client:
    return httpx.Client(base_url=url + "/api/alerts", timeout=30)


def wait_until(check: Callable[[], Any], timeout: float = 15.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}")

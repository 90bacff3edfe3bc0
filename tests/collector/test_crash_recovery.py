"""Fault tests: a collector process killed with SIGKILL mid-load loses no acknowledged span and
duplicates none; a store that is down fills the spool and then answers 503 with Retry-After."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import poll

from ._otlp_factory import make_request, make_span

PB = {"content-type": "application/x-protobuf"}
SPANS_PER_BATCH = 20


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServeProcess:
    """``planscope serve`` as a real separate process."""

    def __init__(self, data_dir: Path, port: int, *extra: str) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "planscope",
                "serve",
                "--port",
                str(port),
                "--data-dir",
                str(data_dir),
                "--log-level",
                "warning",
                "--grpc-port",  # never compete for 4317 with another collector on this host
                "0",
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"serve exited: {self.proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise AssertionError("serve did not come up")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(60)


def batches(n: int) -> list[bytes]:
    out = []
    for _ in range(n):
        tid = os.urandom(16)
        root = make_span(tid, name="root")
        spans = [root] + [make_span(tid, parent=root.span_id) for _ in range(SPANS_PER_BATCH - 1)]
        out.append(make_request(spans).SerializeToString())
    return out


def send_until_acked(url: str, body: bytes, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            if (
                httpx.post(f"{url}/v1/traces", content=body, headers=PB, timeout=10).status_code
                == 200
            ):
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise AssertionError("batch never acknowledged")


def count_in_store(data_dir: Path) -> tuple[int, int]:
    """Open the embedded store in a fresh process (chDB: one data dir per process)."""
    code = (
        "import sys; from planscope_collector.storage import open_store;"
        f"s = open_store('chdb://{(data_dir / 'store').resolve()}');"
        "r = s.query('SELECT count() AS n, uniqExact(SpanId) AS u FROM otel_traces')[0];"
        "print(r['n'], r['u'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    n, u = out.stdout.split()
    return int(n), int(u)


@pytest.mark.slow
def test_sigkill_mid_load_loses_and_duplicates_nothing(data_dir: Path) -> None:
    port = free_port()
    data = data_dir
    bodies = batches(120)
    acked: set[int] = set()
    server = ServeProcess(data, port)

    def load() -> None:
        for i, body in enumerate(bodies):
            try:
                r = httpx.post(f"{server.url}/v1/traces", content=body, headers=PB, timeout=10)
                if r.status_code == 200:
                    acked.add(i)
            except httpx.HTTPError:
                pass  # the process died under us: not acknowledged

    loader = threading.Thread(target=load)
    loader.start()
    while len(acked) < 40:
        time.sleep(0.005)
    server.kill()  # in the middle of the load, with the writer likely mid-insert
    loader.join()
    assert 40 <= len(acked) < len(bodies)

    server = ServeProcess(data, port)  # replays the spool
    deadline = time.monotonic() + 120
    for i, body in enumerate(bodies):
        if i not in acked:
            send_until_acked(server.url, body, deadline)
    for i in sorted(acked)[:10]:  # a client re-delivering batches already acknowledged
        send_until_acked(server.url, bodies[i], deadline)
    poll(
        f"{server.url}/readyz",
        lambda r: r["spool_pending_bytes"] == 0,
        timeout=max(0.0, deadline - time.monotonic()),
        what="the spool draining",
    )
    server.stop()
    expected = len(bodies) * SPANS_PER_BATCH
    assert count_in_store(data) == (expected, expected)


@pytest.mark.slow
def test_store_down_fills_spool_then_503_with_retry_after(tmp_path: Path) -> None:
    dead = free_port()  # nothing listens here: a ClickHouse server that is down
    server = ServeProcess(
        tmp_path / "data",
        free_port(),
        "--clickhouse-url",
        f"http://127.0.0.1:{dead}",
        "--spool-max-bytes",
        "20000",
    )
    try:
        statuses = []
        for body in batches(40):
            r = httpx.post(f"{server.url}/v1/traces", content=body, headers=PB, timeout=10)
            statuses.append(r.status_code)
            if r.status_code == 503:
                assert int(r.headers["retry-after"]) > 0
                assert "spool" in r.json()["error"]
                break
        assert statuses[0] == 200 and statuses[-1] == 503
        ready = httpx.get(f"{server.url}/readyz")
        assert ready.status_code == 503 and ready.json()["store"] == "down"
    finally:
        server.stop()

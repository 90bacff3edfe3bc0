from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from planscope_collector import BackgroundServer, CollectorSettings


@pytest.fixture
def make_collector(data_dir: Path) -> Iterator[Callable[..., BackgroundServer]]:
    """Start a real uvicorn collector on the embedded store (already migrated, at the default
    retention); at most one at a time."""
    started: list[BackgroundServer] = []

    def factory(**overrides: Any) -> BackgroundServer:
        values: dict[str, Any] = {"data_dir": data_dir, "port": 0, "flush_interval": 0.05}
        values.update(overrides)
        server = BackgroundServer(CollectorSettings(**values)).start()
        started.append(server)
        return server

    yield factory
    for server in started:
        server.stop()


@pytest.fixture
def collector(make_collector: Callable[..., BackgroundServer]) -> BackgroundServer:
    return make_collector()


def wait_for_trace(
    base_url: str,
    trace_id: str,
    spans: int,
    headers: dict[str, str] | None = None,
    timeout: float = 20.0,
    project: str | None = None,
) -> dict[str, Any]:
    """Poll the query API until the trace has ``spans`` spans; fail on timeout."""
    deadline = time.monotonic() + timeout
    last: Any = None
    params = {"project": project} if project else None
    while time.monotonic() < deadline:
        r = httpx.get(f"{base_url}/api/traces/{trace_id}", headers=headers, params=params)
        if r.status_code == 200:
            last = r.json()
            if last["span_count"] >= spans:
                return dict(last)
        time.sleep(0.05)
    raise AssertionError(f"trace {trace_id} did not reach {spans} spans; last: {last}")

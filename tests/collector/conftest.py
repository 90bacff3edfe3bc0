from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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

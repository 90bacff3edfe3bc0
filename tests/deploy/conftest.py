"""Fixtures for the deployment tests: a migrated embedded store per test (chDB: one data dir per
process at a time, so every store is function-scoped and closed at teardown)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from planscope_collector.storage import Store, open_store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = open_store(f"chdb://{tmp_path / 'chdb'}")
    s.migrate()
    try:
        yield s
    finally:
        s.close()

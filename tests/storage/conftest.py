"""Fixtures for the storage tests: a migrated store on the real chDB engine.

chDB runs one engine per process and it can serve only one data directory at a time; a second
path can be opened only once every client of the first is closed. So each test gets its own
tmp_path store that is closed at teardown, and nothing holds the engine between tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from planscope_collector.storage import Store, open_store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A freshly migrated embedded store in its own data directory."""
    s = open_store(f"chdb://{tmp_path / 'chdb'}")
    s.migrate()
    try:
        yield s
    finally:
        s.close()

"""Fixtures shared by every test folder: real collectors on loopback ports, real chDB stores.

chDB opens one data directory per process at a time, so in-process collectors are strictly
sequential (function scope, closed at teardown); tests that need several live collectors, or a
crash, run ``planscope serve`` in a subprocess.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from planscope import _config, _internal, _state
from planscope_collector.storage import Store, open_store

os.environ.setdefault("PLANSCOPE_RAISE_INTERNAL_ERRORS", "1")


def pytest_configure(config: pytest.Config) -> None:
    """Subcommands and collector extensions are entry points: an install made before they were
    declared finds none, and every server test would fail obscurely; say what to do instead."""
    from importlib.metadata import entry_points

    if not entry_points(group="planscope.collector_extensions"):
        pytest.exit("planscope's entry points are not installed: run `make venv` (pip install -e)")


@pytest.fixture(autouse=True)
def _reset_sdk() -> Iterator[None]:
    """Every test starts and ends with the SDK unconfigured and no run or step state."""
    _config.reset()
    _state.reset()
    _internal.raise_override = None
    yield
    _config.reset()
    _state.reset()
    _internal.raise_override = None


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A freshly migrated embedded store in its own data directory, closed at teardown."""
    s = open_store(f"chdb://{tmp_path / 'chdb'}")
    s.migrate()
    try:
        yield s
    finally:
        s.close()

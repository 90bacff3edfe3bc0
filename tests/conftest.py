"""Fixtures shared by every test folder: real collectors on loopback ports, real chDB stores.

chDB opens one data directory per process at a time, so in-process collectors are strictly
sequential (function scope, closed at teardown); tests that need several live collectors, or a
crash, run ``planscope serve`` in a subprocess.

Applying every migration to a fresh store takes 9-20 s on 2 cores (docs/storage.md), so stores
and collector data dirs start as copies of one migrated once per session (:class:`Migrated`); the
tests of migrating itself (test_storage_migrations.py, the exporter and cluster tests, the first
`planscope demo`) start empty.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Migrated:
    """A collector data dir whose embedded store holds every migration of this checkout, made
    once per session by ``planscope migrate`` and copied for each test.

    The copy is of a closed store (the migrating process has exited), with chDB's relative
    symlinks kept, so each copy is an independent store; its ``migrate()`` finds nothing to do.
    Only for the default retention: ``--ttl-days`` is rendered into the tables at migration.

    >>> migrated.data_dir(tmp_path / "data")  # doctest: +SKIP
    PosixPath('.../data')
    >>> open_store(migrated.store_dsn(tmp_path / "chdb")).migrate()  # doctest: +SKIP
    []
    """

    path: Path

    def data_dir(self, dest: Path) -> Path:
        """``dest`` (which must not exist) as a data dir with the migrated store in it."""
        shutil.copytree(self.path, dest, symlinks=True)
        return dest

    def store_dsn(self, dest: Path) -> str:
        """The DSN of a copy of the migrated store at ``dest`` (which must not exist)."""
        shutil.copytree(self.path / "store", dest, symlinks=True)
        return f"chdb://{dest}"


@pytest.fixture(scope="session")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Migrated:
    """The session's migrated data dir, built in a subprocess: this process may have a store
    open already (chDB serves one data dir per process) when a test first asks for it."""
    path = tmp_path_factory.mktemp("migrated") / "data"
    # the defaults (embedded store, 30-day retention) whatever the caller's environment says
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANSCOPE_")}
    proc = subprocess.run(
        [sys.executable, "-m", "planscope", "migrate", "--data-dir", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return Migrated(path)


@pytest.fixture
def data_dir(tmp_path: Path, migrated: Migrated) -> Path:
    """``tmp_path / "data"``: a collector data dir whose store is already migrated."""
    return migrated.data_dir(tmp_path / "data")


@pytest.fixture
def store(tmp_path: Path, migrated: Migrated) -> Iterator[Store]:
    """A migrated embedded store of its own (a copy of the session's), closed at teardown."""
    s = open_store(migrated.store_dsn(tmp_path / "chdb"))
    s.migrate()
    try:
        yield s
    finally:
        s.close()

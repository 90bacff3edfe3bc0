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
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
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


REQUEST_TIMEOUT = 60.0
"""Seconds one request of :func:`poll` may take. httpx's default (5 s) is short on a loaded
2-core machine (a pass of the analyzer, chDB merges and other test processes at once): a poll
whose request timed out failed the test although the server was about to answer."""


def poll(
    url: str,
    until: Callable[[Any], object],
    *,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, Any] | None = None,
    timeout: float = 60.0,
    what: str = "",
) -> Any:
    """GET ``url`` until it answers 200 with a JSON body for which ``until`` holds, and return
    that body: the one way tests wait for a collector (each request may take
    :data:`REQUEST_TIMEOUT` s, the whole wait ``timeout`` s; a body that arrives in time is
    returned at once, so a generous bound costs nothing when the test passes)."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        r = httpx.get(url, headers=headers, params=params, timeout=REQUEST_TIMEOUT)
        if r.status_code == 200:
            last = r.json()
            if until(last):
                return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what or url}: not within {timeout:g} s; last: {last}")
        time.sleep(0.05)


def wait_for_trace(
    base_url: str,
    trace_id: str,
    spans: int,
    headers: Mapping[str, str] | None = None,
    timeout: float = 60.0,
    project: str | None = None,
) -> dict[str, Any]:
    """The trace from the query API once it has ``spans`` spans (:func:`poll`)."""
    return dict(
        poll(
            f"{base_url}/api/traces/{trace_id}",
            lambda t: t["span_count"] >= spans,
            headers=headers,
            params={"project": project} if project else None,
            timeout=timeout,
            what=f"trace {trace_id} reaching {spans} spans",
        )
    )


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

"""Fixtures for the importer tests: the shared Who&When dataset and one real collector per module.

The dataset lives at ``../shared/datasets/who_and_when`` relative to the repository root (CI
has it there too) or where ``PLANSCOPE_TEST_WHOWHEN`` points (a git worktree elsewhere); tests
that need it skip with the reason when it is absent.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from planscope_collector import BackgroundServer, CollectorSettings

from tests.conftest import Migrated

REPO = Path(__file__).resolve().parents[2]
DATASET = Path(
    os.environ.get("PLANSCOPE_TEST_WHOWHEN", REPO.parent / "shared" / "datasets" / "who_and_when")
)


@pytest.fixture(scope="session")
def dataset() -> Path:
    if not (DATASET / "hand_crafted_dev").is_dir():
        pytest.skip(f"Who&When dataset not found at {DATASET}")
    return DATASET


@pytest.fixture(scope="module")
def collector(
    tmp_path_factory: pytest.TempPathFactory, migrated: Migrated
) -> Iterator[BackgroundServer]:
    """A real uvicorn collector on the embedded chDB store, shared by one test module."""
    data = migrated.data_dir(tmp_path_factory.mktemp("collector") / "data")
    server = BackgroundServer(CollectorSettings(data_dir=data, port=0, flush_interval=0.05))
    server.start()
    yield server
    server.stop()


def trace_count(base: str) -> int:
    r = httpx.get(f"{base}/api/traces", params={"limit": 500})
    r.raise_for_status()
    return len(r.json()["traces"])

"""The README's "Instrument your own agent" snippet and the SDK guide's examples, run as a user
would (a fresh process) against a real collector: they must send a run that the API serves."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from planscope_collector import BackgroundServer, CollectorSettings

from tests.conftest import Migrated, poll

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def collector(
    tmp_path_factory: pytest.TempPathFactory, migrated: Migrated
) -> Iterator[BackgroundServer]:
    data = migrated.data_dir(tmp_path_factory.mktemp("readme") / "data")
    with BackgroundServer(CollectorSettings(data_dir=data, port=0, flush_interval=0.05)) as s:
        yield s


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def run_snippet(code: str, collector: BackgroundServer, tmp_path: Path) -> str:
    """Run ``code`` in a fresh interpreter with the collector's URL as the endpoint."""
    script = tmp_path / "agent.py"
    script.write_text(re.sub(r"http://(127\.0\.0\.1|localhost):4318", collector.url, code))
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def stored_run(collector: BackgroundServer, agent: str, spans: int) -> dict[str, object]:
    """The newest trace of ``agent`` once it has ``spans`` spans."""
    listed = poll(
        f"{collector.url}/api/traces",
        lambda b: b["traces"] and int(b["traces"][0].get("span_count") or 0) >= spans,
        params={"agent": agent},
        what=f"a run of {agent} with {spans} spans",
    )
    return dict(listed["traces"][0])


def test_readme_snippet_sends_a_run(collector: BackgroundServer, tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Instrument your own agent", 1)[1]
    out = run_snippet(python_blocks(section)[0], collector, tmp_path)
    assert "refunded customer-7" in out
    # run + plan + 2 step attempts + 2 tool calls
    row = stored_run(collector, "support-agent", 6)
    assert row.get("outcome") == "success", row


def test_sdk_guide_example_with_its_configure_snippet(
    collector: BackgroundServer, tmp_path: Path
) -> None:
    guide = (ROOT / "docs" / "sdk.md").read_text()
    section = guide.split("## 60-second example", 1)[1]
    example, configure = python_blocks(section)[:2]
    # As the guide says: configure once at start-up, run the agent, shut down at exit.
    start, _, end = configure.partition("...\n")
    out = run_snippet(
        example.replace("import planscope\n", "import planscope\n" + start, 1) + end,
        collector,
        tmp_path,
    )
    assert "paid 120.0" in out
    stored_run(collector, "invoice-agent", 9)

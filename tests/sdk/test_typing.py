"""The decorators keep the decorated function's type under ``mypy --strict``, bare or called."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

SDK_DIR = Path(__file__).resolve().parents[2] / "sdk"

SNIPPET = """
from collections.abc import Iterator
import planscope

@planscope.run("billing-agent", variant="v1")
def agent(objective: str) -> str:
    return objective

@planscope.planner
def make_plan(objective: str) -> planscope.Plan:
    return planscope.Plan([planscope.PlanStep("fetch")])

@planscope.step("fetch")
def fetch(invoice_id: str, amount: int = 1) -> dict[str, int]:
    return {"amount": amount}

@planscope.step
def bare(x: int) -> str:
    return str(x)

@planscope.step(executor="worker-1")
def items(n: int) -> Iterator[int]:
    yield from range(n)

@planscope.tool(effect="read")
async def search(q: str) -> list[str]:
    return [q]

@planscope.llm("gpt-4o-mini", provider="openai")
def chat(prompt: str, *, temperature: float = 0.0) -> str:
    return prompt

reveal_type(agent)
reveal_type(make_plan)
reveal_type(fetch)
reveal_type(bare)
reveal_type(items)
reveal_type(search)
reveal_type(chat)
total: dict[str, int] = fetch("inv-42", 2)
text: str = chat("hi", temperature=0.5) + bare(1) + agent("pay")
"""

EXPECTED = [
    "def (objective: str) -> str",
    "def (objective: str) -> planscope._plan.Plan",
    "def (invoice_id: str, amount: int =) -> dict[str, int]",
    "def (x: int) -> str",
    "def (n: int) -> typing.Iterator[int]",
    "def (q: str) -> typing.Coroutine[Any, Any, list[str]]",
    "def (prompt: str, *, temperature: float =) -> str",
]


def test_decorated_functions_keep_their_signature_under_mypy_strict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "user_code.py"
    source.write_text(textwrap.dedent(SNIPPET))
    monkeypatch.setenv("MYPYPATH", str(SDK_DIR))  # the editable install is not visible to mypy
    stdout, stderr, status = mypy_api.run(
        [
            "--strict",
            "--config-file=",  # not the repository's configuration
            "--cache-dir",
            str(tmp_path / "mypy_cache"),
            "--no-pretty",
            "--show-absolute-path",
            str(source),
        ]
    )
    errors = [line for line in stdout.splitlines() if ": error:" in line]
    assert errors == [], stdout + stderr
    revealed = re.findall(r'Revealed type is "(.*)"', stdout)
    assert revealed == EXPECTED, stdout
    assert status == 0, stdout + stderr

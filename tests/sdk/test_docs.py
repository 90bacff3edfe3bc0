"""The docs stay true: every attribute is documented, and the guide's example runs."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import planscope
from planscope import semconv as A

from .conftest import Spans

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_attribute_constant_is_documented() -> None:
    text = (DOCS / "semantic-conventions.md").read_text()
    for name in dir(A):
        value = getattr(A, name)
        if name.isupper() and isinstance(value, str):
            assert f"`{value}`" in text or value in text, f"{name}={value!r} is not documented"
            assert name in text, f"constant {name} missing from the index"


def test_the_60_second_example_runs_and_produces_the_documented_trace(spans: Spans) -> None:
    guide = (DOCS / "sdk.md").read_text()
    section = guide.split("## 60-second example", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code.group(1), "docs/sdk.md", "exec"), {"__name__": "example"})
    assert "paid 120.0" in out.getvalue()

    names = [s.name for s in spans.all()]
    assert names.count("chat gpt-4o-mini") == 3
    expected = {
        "invoke_agent invoice-agent",
        "plan invoice-agent",
        "execute_step fetch",
        "execute_step pay",
        "execute_tool fetch_invoice",
        "execute_tool pay",
    }
    assert expected <= set(names)
    run = Spans.attrs(spans.one(A.KIND_RUN))
    assert run[A.RUN_OUTCOME] == "success"
    pay = Spans.attrs(spans.named("execute_tool pay"))
    assert (pay[A.STEP_ID], pay[A.TOOL_EFFECT], pay[A.RUN_ID]) == (
        "pay",
        "irreversible",
        run[A.RUN_ID],
    )
    pay_step = Spans.attrs(spans.named("execute_step pay"))
    assert pay_step[A.STEP_CONTEXT_KEYS] == '["invoice"]'
    assert planscope.current_run() is None

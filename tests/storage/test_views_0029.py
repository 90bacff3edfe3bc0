"""The views migration 0029 re-creates without the columns no reader reads, against 0012's (the
0026 layout), on real chDB: the same spans into both layouts give the same value in every column
that 0029 keeps, in every typed table."""

from __future__ import annotations

import random
import re
from importlib import resources
from pathlib import Path
from typing import Any

import planscope.semconv as A

from ._spans import (
    BASE_NS,
    kept_rows,
    make_span,
    new_span_id,
    new_trace_id,
    planscope_trace,
    typed_rows_before_and_after,
)
from .test_plan_views_layouts import _spans as plan_spans

MIGRATIONS = Path(str(resources.files("planscope_collector") / "migrations"))
RECREATED = {"tool": "tool_calls", "llm": "llm_calls", "run": "runs"}
"""Kind -> the typed table whose view 0029 re-creates."""
VALUES = ["", "x", "12", "12.0", "-3", "1e3", "RETRIEVER", "reranker", "true", '["a", "b"]',
          '{"langgraph_node": "fetch"}', "[]", "ünï", "a" * 300]  # fmt: skip


def _keys(view: str) -> list[str]:
    """The attributes 0012's view of ``view`` looks up."""
    sql = (MIGRATIONS / "0012_span_model_columns.sql").read_text(encoding="utf-8")
    start = sql.index(f"VIEW IF NOT EXISTS {{db}}.planscope_{view}_mv")
    body = sql[start : sql.index(";", start)]
    return sorted(set(re.findall(r"SpanAttributes\['([^']+)'\]", body)))


def _spans() -> list[list[Any]]:
    """Spans of each kind whose view 0029 re-creates, declared and foreign, each with a random
    subset of the attributes its view reads (every one filled somewhere) among unrelated ones;
    and the plan views' and a planscope trace's spans, for the other tables."""
    rng = random.Random(27)
    conventions = {
        "tool": [{A.SPAN_KIND: "tool"}, {A.GEN_AI_OPERATION_NAME: "execute_tool"},
                 {"openinference.span.kind": "RETRIEVER"}],
        "llm": [{A.SPAN_KIND: "llm"}, {A.GEN_AI_OPERATION_NAME: "chat"},
                {"openinference.span.kind": "LLM"}],
        "run": [{A.SPAN_KIND: "run"}, {"openinference.span.kind": "AGENT"}],
    }  # fmt: skip
    rows: list[list[Any]] = []
    for kind, table in RECREATED.items():
        keys = _keys(table)
        for i in range(60):
            attrs = {f"unrelated.{j}": rng.choice(VALUES) for j in range(rng.randrange(0, 25))}
            chosen = [keys[i % len(keys)], *rng.sample(keys, rng.randrange(0, len(keys)))]
            attrs |= {k: rng.choice(VALUES[1:]) for k in chosen}
            attrs |= conventions[kind][i % len(conventions[kind])]
            t, root = new_trace_id(), new_span_id()
            parent = "" if kind == "run" else root
            if parent:
                rows.append(make_span(trace_id=t, span_id=root, attrs={A.SPAN_KIND: "run"}))
            rows.append(
                make_span(
                    trace_id=t,
                    parent=parent,
                    name=rng.choice(["fetch", "", "node"]),
                    start_ns=BASE_NS + i,
                    status=rng.choice(["Unset", "Ok", "Error", "STATUS_CODE_ERROR"]),
                    attrs=attrs,
                )
            )
    return rows + plan_spans() + planscope_trace(new_trace_id())


def test_the_same_spans_give_the_same_kept_columns_in_the_0026_and_0029_layouts(
    tmp_path: Path,
) -> None:
    rows = typed_rows_before_and_after(tmp_path, "0029", "0030", _spans())
    dropped = {t: set(r[0]) - set(rows["after"][t][0]) for t, r in rows["before"].items()}
    assert dropped["planscope_runs"] == {"AgentId", "ConversationId"}
    assert dropped["planscope_tool_calls"] == {"ToolCallId"}
    assert dropped["planscope_llm_calls"] == {"ResponseModel", "Role"}
    assert not any(
        dropped[t] for t in dropped if t.removeprefix("planscope_") not in RECREATED.values()
    )
    for table, after_rows in rows["after"].items():
        assert after_rows and kept_rows(rows["before"][table], after_rows), table
    for table in RECREATED.values():
        assert len(rows["after"][f"planscope_{table}"]) > 60, table

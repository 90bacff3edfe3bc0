"""Migration 0031 (the plan stream's costly SELECT only over candidate spans, declared plans by
their own view, 0030's markdown reader dropped) against 0029's one stream view over
``otel_traces``, on real chDB: the same spans into both layouts give the same rows in every
typed table, and a replayed insert changes none of them."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import planscope.semconv as A

from ._spans import kept_rows, spans_ipc, typed_rows_before_and_after
from .test_plan_views_layouts import TEXTS, shapes
from .test_plan_views_layouts import _genai_answer as genai_answer
from .test_plan_views_layouts import _spans as plan_spans

MARKDOWN = [
    "1. **fetch**: Fetch invoice 7\n   - tool: `get_invoice`\n"
    '   - args: `{"invoice": "INV-7"}`\n2. **pay**: Pay invoice 7\n',
    "- `fetch` - Fetch invoice 7\n- `pay` - Pay invoice 7",
    "1. __fetch__: Fetch invoice 7\n2. __pay__: Pay it",
    "1. Fetch invoice 7 with get_invoice\n2. Pay it\n<end_plan>",
    "1. **fetch**: Fetch invoice 7\n2. Then pay whatever it says",
]
"""Markdown step lists (0030 read the first three at ingest; neither 0029 nor 0031 does)."""
PIECES = ['{', '[', '`', '**', '__', '"steps"', '"plan"', "steps", "plan", "\\u0073",
          '{"steps": [{"description": "d"}]}', '["a", "b"]', "\ufeff", " ", "\n", "x"]  # fmt: skip
"""Fragments the candidates' check looks for, and others, for the random texts."""


def _shapes(text: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """0021's shapes, and the other texts the stream reads a run's output or an answer from."""
    return [
        *shapes(text),
        ({"openinference.span.kind": "AGENT", "final_result": text},
         {"openinference.span.kind": "LLM",
          "llm.output_messages.0.message.contents.0.message_content.text": text}),
        ({"openinference.span.kind": "AGENT", A.GEN_AI_OUTPUT_MESSAGES: genai_answer(text)},
         {A.GEN_AI_OPERATION_NAME: "chat", "planscope.output": text}),
        ({A.GEN_AI_OPERATION_NAME: "invoke_agent", "planscope.output": text},
         {A.SPAN_KIND: "llm", "llm.output_messages.0.message.content": text}),
    ]  # fmt: skip


def _spans() -> list[list[Any]]:
    """Every shape above with 0021's texts, markdown lists, and random texts built from the
    check's fragments."""
    rng = random.Random(31)
    random_texts = ["".join(rng.choices(PIECES, k=rng.randrange(1, 8))) for _ in range(40)]
    return plan_spans(TEXTS + MARKDOWN + random_texts, _shapes)


def test_the_same_spans_give_the_same_typed_rows_in_the_0029_and_0031_layouts(
    tmp_path: Path,
) -> None:
    rows = typed_rows_before_and_after(tmp_path, "0030", "0032", _spans())
    plans = rows["after"]["planscope_plans"]
    assert len({p["TraceId"] for p in plans if p["Inferred"]}) > 60, "too few observed plans"
    assert len({p["TraceId"] for p in plans if not p["Inferred"]}) > 20, "too few declared plans"
    assert any(s["StepId"] == "fetch" for s in rows["after"]["planscope_plan_steps"])
    for table, before_rows in rows["before"].items():
        assert kept_rows(before_rows, rows["after"][table]), table


def test_a_replayed_insert_with_both_kinds_of_plan_changes_no_table(tmp_path: Path) -> None:
    from planscope_collector.storage import TABLES, open_store

    body = spans_ipc(_spans())
    with open_store(f"chdb://{tmp_path}/db") as store:
        store.migrate()

        def counts() -> dict[str, int]:
            return {
                t: store.query("SELECT count() AS n FROM {t:Identifier}", {"t": t})[0]["n"]
                for t in TABLES
                if t.startswith("planscope_")
            }

        store.insert_spans(body, dedup_token="segment-31")
        before = counts()
        assert before["planscope_plans"] > 80 and before["planscope_plan_steps"], before
        store.insert_spans(body, dedup_token="segment-31")  # replay after a crash
        assert counts() == before

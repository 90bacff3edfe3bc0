"""The plan views of migration 0021 (fed from one stream) against those of 0016 (the layout
before, itself checked here against 0014's when it was written), on real chDB: the same spans
into both layouts give the same rows in every typed table."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
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

STEPS = [
    {"id": "fetch", "description": "Fetch invoice 7", "tool": "get_invoice"},
    {"step_id": 2, "task": "Pay invoice 7", "assignee": "payer", "depends_on": ["fetch"]},
]
TEXTS = [
    json.dumps({"steps": STEPS}),
    json.dumps({"plan": ["look up", "pay"]}),
    json.dumps(STEPS),
    "  \n\t" + json.dumps({"tasks": STEPS, "notes": ["a", "b"]}),
    "```json\n" + json.dumps({"steps": STEPS}) + "\n```",
    '{"\\u0073teps": [{"description": "escaped key"}]}',
    "\ufeff" + json.dumps({"steps": STEPS}),
    json.dumps({"result": [{"name": "GET /healthz", "status": 200}]}),
    json.dumps({"items": ["extract", "load", "report"]}),
    json.dumps(["a", "b"]),
    json.dumps({"steps": "not a list"}),
    '{"steps": [{"description": "truncated"',
    "Here is the plan: first fetch, then pay.",
    "[not json",
    "",
]


def _genai_answer(text: str) -> str:
    return json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": text}]}])


def shapes(text: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(root attributes, child attributes): the ways a span can show ``text`` as a plan."""
    return [
        ({A.GEN_AI_OPERATION_NAME: "invoke_agent", "output.value": text},
         {A.GEN_AI_OPERATION_NAME: "chat", A.GEN_AI_OUTPUT_MESSAGES: _genai_answer(text)}),
        ({"openinference.span.kind": "AGENT", "output.value": text},
         {"openinference.span.kind": "LLM", "llm.output_messages.0.message.content": text}),
        ({"traceloop.span.kind": "workflow", "traceloop.entity.output": text},
         {"llm.request.type": "chat", "gen_ai.completion.0.content": text}),
        ({"openinference.span.kind": "CHAIN"},
         {A.GEN_AI_OPERATION_NAME: "chat", A.GEN_AI_OUTPUT_MESSAGES: json.dumps(
             [{"role": "assistant", "content": text}])}),
        ({"openinference.span.kind": "CHAIN"},
         {"openinference.span.kind": "AGENT", "output.value": text}),
        ({A.GEN_AI_OPERATION_NAME: "invoke_agent"},
         {A.GEN_AI_OPERATION_NAME: "plan", "output.value": text}),
    ]  # fmt: skip


def _spans(
    texts: Sequence[str] = TEXTS,
    shapes_of: Callable[[str], list[tuple[dict[str, Any], dict[str, Any]]]] = shapes,
) -> list[list[Any]]:
    """Every way a span can show a plan (``shapes_of``), with answers that are and are not
    plans, declared plans of the same texts, and a planscope trace."""
    rows: list[list[Any]] = []
    for text in texts:
        for root_attrs, child_attrs in shapes_of(text):
            t, root = new_trace_id(), new_span_id()
            rows.append(make_span(trace_id=t, span_id=root, name="agent", attrs=root_attrs))
            rows.append(
                make_span(
                    trace_id=t, parent=root, name="child", start_ns=BASE_NS + 1, attrs=child_attrs
                )
            )
        # a declared plan whose JSON is the text (planscope's SDK shape)
        t, root = new_trace_id(), new_span_id()
        rows.append(make_span(trace_id=t, span_id=root, attrs={A.SPAN_KIND: "run"}))
        rows.append(
            make_span(trace_id=t, parent=root, attrs={A.SPAN_KIND: "plan", A.PLAN_JSON: text})
        )
    rows += planscope_trace(new_trace_id())
    return rows


def test_the_same_spans_give_the_same_typed_rows_in_the_0016_and_0021_layouts(
    tmp_path: Path,
) -> None:
    rows = typed_rows_before_and_after(tmp_path, "0021", "0022", _spans())
    plans = rows["after"]["planscope_plans"]
    assert len({p["TraceId"] for p in plans if p["Inferred"]}) > 20, "too few observed plans"
    assert any(s["Description"] == "escaped key" for s in rows["after"]["planscope_plan_steps"])
    for table, before_rows in rows["before"].items():
        assert kept_rows(before_rows, rows["after"][table]), table

"""A run whose planned tasks all succeed and whose app check fails after them, as plain OTel
spans in the GenAI conventions (no planscope SDK): a root without an objective (the planner's
prompt becomes it), a planner chat answering the plan, one executor run per tool call, then
the check under the root. Shared by the plan-propagation tests of checks after success."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from planscope import semconv as A
from planscope_collector.storage import Store

from tests.storage._spans import BASE_NS, make_span, new_span_id, new_trace_id, spans_ipc

MS = 1_000_000


def store_checked_run(
    store: Store,
    *,
    root: str,
    reason: str,
    prompt: str,
    plan: Mapping[str, Any],
    calls: Mapping[str, tuple[Any, Any]],
    check: str,
    check_says: str = "",
    check_ms: int = 5,
) -> str:
    """Store the run (``calls``: tool -> (arguments, result), a string result as said) ending
    ``reason``, its ``check`` span failed saying ``check_says``; the trace id."""
    t, root_id, planner = new_trace_id(), new_span_id(), new_span_id()
    agent = {A.GEN_AI_OPERATION_NAME: "invoke_agent"}
    chat = {
        A.GEN_AI_OPERATION_NAME: "chat",
        A.GEN_AI_INPUT_MESSAGES: json.dumps([{"role": "user", "content": prompt}]),
        A.GEN_AI_OUTPUT_MESSAGES: json.dumps([{"role": "assistant", "content": json.dumps(plan)}]),
    }
    spans: list[list[Any]] = [
        make_span(trace_id=t, span_id=root_id, name=root, duration_ns=100 * MS,
                  status="Error", status_message=reason),
        make_span(trace_id=t, span_id=planner, parent=root_id, name="invoke_agent planner",
                  start_ns=BASE_NS + MS, duration_ns=5 * MS, attrs=agent),
        make_span(trace_id=t, parent=planner, name="chat gpt-4o", start_ns=BASE_NS + 2 * MS,
                  attrs=chat),
    ]  # fmt: skip
    for i, (tool, (args, result)) in enumerate(calls.items()):
        run, start = new_span_id(), BASE_NS + (10 + 10 * i) * MS
        attrs = {
            A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
            A.GEN_AI_TOOL_NAME: tool,
            A.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps(args),
            A.GEN_AI_TOOL_CALL_RESULT: result if isinstance(result, str) else json.dumps(result),
        }
        spans += [
            make_span(trace_id=t, span_id=run, parent=root_id, name="invoke_agent executor",
                      start_ns=start, duration_ns=8 * MS, attrs=agent),
            make_span(trace_id=t, parent=run, name=f"execute_tool {tool}", start_ns=start + MS,
                      attrs=attrs),
        ]  # fmt: skip
    spans.append(
        make_span(trace_id=t, parent=root_id, name=check, start_ns=BASE_NS + 60 * MS,
                  duration_ns=check_ms * MS, status="Error", status_message=check_says)
    )  # fmt: skip
    store.insert_spans(spans_ipc(spans))
    return t

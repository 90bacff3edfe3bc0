"""A failed run under a foreign root declares no objective: the loader takes the planner's
prompt as its objective, so what the user asked for is not a suspect of plan propagation."""

from __future__ import annotations

import json
from typing import Any

import pytest
from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.plan_propagation import PlanPropagation
from planscope_collector.storage import Store

from tests.storage._spans import BASE_NS, make_span, new_span_id, new_trace_id, spans_ipc

pytestmark = pytest.mark.integration

MS = 1_000_000
PLAN = {
    "release": "api",
    "tasks": [
        {"id": "book", "action": "book a change window", "tool": "book_window",
         "args": {"service": "api"}},
        {"id": "deploy", "action": "roll out the image", "tool": "rollout",
         "args": {"service": "api", "version": "1.2.2"}},
    ],
}  # fmt: skip
ARGS = {"book_window": {"service": "api"}, "rollout": {"service": "api", "version": "1.2.2"}}


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def _release(store: Store, prompt: str) -> str:
    """A logfire-style root (no agent span, no objective) that fails its release check; a
    planner agent run whose chat answers ``PLAN`` to ``prompt``; one executor run per task."""
    t, root, planner = new_trace_id(), new_span_id(), new_span_id()
    agent = {A.GEN_AI_OPERATION_NAME: "invoke_agent"}
    spans: list[list[Any]] = [
        make_span(
            trace_id=t, span_id=root, name="release {service}", duration_ns=100 * MS,
            status="Error", status_message="ReleaseFailed: release check failed: api serves 1.2.2",
        ),
        make_span(trace_id=t, span_id=planner, parent=root, name="invoke_agent planner",
                  start_ns=BASE_NS + MS, duration_ns=5 * MS, attrs=agent),
        make_span(
            trace_id=t, parent=planner, name="chat gpt-4o", start_ns=BASE_NS + 2 * MS,
            attrs={
                A.GEN_AI_OPERATION_NAME: "chat",
                A.GEN_AI_INPUT_MESSAGES: _messages("user", prompt),
                A.GEN_AI_OUTPUT_MESSAGES: _messages("assistant", json.dumps(PLAN)),
            },
        ),
    ]  # fmt: skip
    for i, (tool, args) in enumerate(ARGS.items()):
        run, start = new_span_id(), BASE_NS + (10 + 10 * i) * MS
        spans += [
            make_span(trace_id=t, span_id=run, parent=root, name="invoke_agent executor",
                      start_ns=start, duration_ns=8 * MS, attrs=agent),
            make_span(
                trace_id=t, parent=run, name=f"execute_tool {tool}", start_ns=start + MS,
                attrs={
                    A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
                    A.GEN_AI_TOOL_NAME: tool,
                    A.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps(args),
                },
            ),
        ]  # fmt: skip
    store.insert_spans(spans_ipc(spans))
    return t


def test_the_planners_prompt_is_the_objective_of_a_run_without_one(store: Store) -> None:
    t = _release(store, "Release api 1.2.3")
    trace = load_traces(store, "default", [t])[t]
    assert trace.run is not None and trace.run.objective == "Release api 1.2.3"
    # the service the user named is not a suspect: the version the planner wrote is
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["values"]) == ("deploy", ["1.2.2"])


def test_a_prompt_subtracts_only_what_it_says(store: Store) -> None:
    # the prompt does not name the service: it stays a suspect, first carried by 'book'
    t = _release(store, "Ship the new build")
    trace = load_traces(store, "default", [t])[t]
    (finding,) = PlanPropagation().detect(trace)
    assert finding.step_id == "book" and "api" in finding.detail["values"]

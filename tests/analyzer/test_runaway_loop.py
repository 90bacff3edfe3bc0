"""Runaway loops of agents without a plan the analyzer can read, from real OTel SDK spans
(GenAI conventions only, no ``planscope.*`` attribute) stored and analysed for real: the finding
names no step (an executor's agent name is no plan step) but says where the work repeated, and a
poll that never ends is a loop while polling that ends and pagination are not."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Span, Status, StatusCode, Tracer
from planscope import semconv as A
from planscope_analyzer import Analyzer, Finding
from planscope_collector.storage import Store

from tests.storage._spans import otlp_to_rows, spans_ipc

pytestmark = pytest.mark.integration


class _Agent:
    """A hand-written agent on the plain OTel SDK: a root span, executor agent runs, tools."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer: Tracer = provider.get_tracer("hand-written-agent")

    def root(self, name: str) -> Any:
        return self.tracer.start_as_current_span(name, attributes={"app.kind": "job"})

    def executor(self) -> Any:
        return self.tracer.start_as_current_span(
            "invoke_agent worker",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "worker"},
        )

    def tool(self, name: str, args: dict[str, Any], result: str | None) -> None:
        with self.tracer.start_as_current_span(
            f"execute_tool {name}",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.arguments": json.dumps(args, sort_keys=True),
            },
        ) as span:
            if result is None:
                span.set_attribute("error.type", "TimeoutError")
                span.set_status(Status(StatusCode.ERROR, "upstream timed out"))
            else:
                span.set_attribute("gen_ai.tool.call.result", result)

    def store(self, store: Store) -> str:
        spans = self.exporter.get_finished_spans()
        store.insert_spans(spans_ipc(otlp_to_rows(encode_spans(spans), "default")))
        (root,) = [s for s in spans if s.parent is None]
        assert root.context is not None
        return format(root.context.trace_id, "032x")


def _loops(store: Store, trace_id: str) -> list[Finding]:
    found = Analyzer(store).analyze("default", [trace_id], write=False).findings
    return [f for f in found if f.kind == A.FINDING_RUNAWAY_LOOP]


def _failed(span: Span, why: str) -> None:
    span.set_status(Status(StatusCode.ERROR, why))


def test_a_loop_tied_to_no_plan_step_names_no_step(store: Store) -> None:
    agent = _Agent()
    with agent.root("refund order 7") as root:
        for attempt in range(4):  # the app re-runs the executor; the tool always times out
            with agent.executor():
                agent.tool("lookup_order", {"order": 7, "timeout_s": 10 + attempt}, None)
        _failed(root, "gave up")
    trace_id = agent.store(store)
    (f,) = _loops(store, trace_id)
    # the agent's name is where it ran, not a plan step: no step is claimed
    assert f.step_id == ""
    assert f.detail["where"] == "worker"
    assert (f.component, f.detail["tool"]) == ("lookup_order", "lookup_order")
    assert "failed 4 attempts in a row" in f.explanation
    assert "Its failing tool: 'lookup_order'" in f.explanation
    assert "'worker' (no plan step could be tied to it)" in f.explanation
    assert len(f.evidence) >= 4


_RUNNING = json.dumps({"job": "J-1", "status": "RUNNING"})


def _poll(answers: list[str], *, args: Callable[[int], dict[str, Any]], fails: bool) -> _Agent:
    """A job started, then its status asked once per answer; the run failed or not."""
    agent = _Agent()
    with agent.root("run job J-1") as root:
        with agent.executor():
            agent.tool("start_job", {"job": "J-1"}, json.dumps({"job": "J-1"}))
            for i, answer in enumerate(answers):
                agent.tool("job_status", args(i), answer)
        if fails:
            _failed(root, "job did not finish")
    return agent


_DONE = json.dumps({"job": "J-1", "status": "DONE"})
POLLS = {
    # case: (answers, the run failed, a loop)
    "never ends": ([_RUNNING] * 8, True, True),
    "ends": ([_RUNNING] * 7 + [_DONE], False, False),
    # the run failed for another reason after a poll that ended: no stalled poll
    "ends, run failed": ([_RUNNING] * 7 + [_DONE], True, False),
    "paginates": ([json.dumps({"page": n}) for n in range(8)], True, False),
    # nothing shows that the run did not get what it waited for
    "never changes, run succeeded": ([_RUNNING] * 8, False, False),
}


def test_polling_that_never_ends_is_a_loop_and_polling_that_ends_is_not(store: Store) -> None:
    traces = {}
    for case, (answers, fails, _) in POLLS.items():

        def args(i: int, case: str = case) -> dict[str, Any]:
            return {"job": "J-1", "page": i} if case == "paginates" else {"job": "J-1"}

        traces[case] = _poll(answers, args=args, fails=fails).store(store)
    for case, (_, _, loop) in POLLS.items():
        found = _loops(store, traces[case])
        if not loop:
            assert found == [], (case, found)
            continue
        (f,) = found
        assert (f.step_id, f.component, f.detail["where"]) == ("", "job_status", "worker")
        assert "same_output" in f.detail["signals"]
        assert "8 times in a row with the same arguments" in f.explanation
        assert "a poll that never ended" in f.explanation

"""Planscope traces built by hand as OTLP/JSON (exact ids and attributes, any size).

``large_run`` makes the 5,000-span trace of the render budget; ``hostile_run`` a small run whose
attributes try HTML/script and Markdown injection.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import Status, StatusCode
from planscope import semconv as A

from tests.conftest import poll, wait_for_trace

INJECTION = "<script>alert('xss')</script>"
MD_INJECTION = "[click me](javascript:alert(1)) **bold** <img src=x onerror=alert(2)>"


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, dict)):
        return {"stringValue": json.dumps(value, separators=(",", ":"))}
    return {"stringValue": str(value)}


def _attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _value(v)} for k, v in values.items() if v is not None]


@dataclass
class TraceBuilder:
    """Collects spans of one trace; ``send`` posts them as OTLP/JSON."""

    service: str = "synthetic-agent"
    trace_id: str = field(default_factory=lambda: os.urandom(16).hex())
    origin_ns: int = field(default_factory=lambda: time.time_ns() - 60 * 10**9)
    spans: list[dict[str, Any]] = field(default_factory=list)

    def span(
        self,
        name: str,
        start_ms: float,
        duration_ms: float,
        attributes: dict[str, Any],
        parent: str | None = None,
        error: str | None = None,
        events: tuple[tuple[str, dict[str, Any]], ...] = (),
    ) -> str:
        span_id = os.urandom(8).hex()
        start = self.origin_ns + int(start_ms * 1e6)
        span: dict[str, Any] = {
            "traceId": self.trace_id,
            "spanId": span_id,
            "name": name,
            "kind": 1,
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(start + int(duration_ms * 1e6)),
            "attributes": _attrs(attributes),
            "status": {"code": 2, "message": error} if error else {},
            "events": [
                {"timeUnixNano": str(start), "name": n, "attributes": _attrs(a)} for n, a in events
            ],
        }
        if parent:
            span["parentSpanId"] = parent
        self.spans.append(span)
        return span_id

    def body(self) -> bytes:
        return json.dumps(
            {
                "resourceSpans": [
                    {
                        "resource": {"attributes": _attrs({"service.name": self.service})},
                        "scopeSpans": [{"scope": {"name": "planscope"}, "spans": self.spans}],
                    }
                ]
            }
        ).encode()

    def send(self, base_url: str) -> str:
        for offset in range(0, len(self.spans), 2000):
            chunk = TraceBuilder(self.service, self.trace_id, self.origin_ns)
            chunk.spans = self.spans[offset : offset + 2000]
            body = chunk.body()
            r = httpx.post(
                f"{base_url}/v1/traces",
                content=body,
                headers={"Content-Type": "application/json"},
                timeout=60,
            )
            r.raise_for_status()
        return self.trace_id


def wait_stored(base_url: str, trace_id: str, spans: int, timeout: float = 60.0) -> None:
    """Until the spool is drained and the trace has ``spans`` spans."""
    wait_drained(base_url, timeout)
    wait_for_trace(base_url, trace_id, spans, timeout=timeout)


def wait_drained(url: str, timeout: float = 60.0) -> None:
    """Until the collector's spool is drained."""
    ready = f"{url}/readyz"
    poll(ready, lambda r: r.get("spool_pending_bytes") == 0, timeout=timeout, what="the spool")


def _run_attrs(run_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "planscope.span.kind": "run",
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "synthetic-agent",
        "planscope.run.id": run_id,
        "planscope.run.variant": "dag",
        **extra,
    }


def large_run(target_spans: int = 5000, executors: int = 4) -> TraceBuilder:
    """A DAG run of about ``target_spans`` spans: 60 layered steps, retries, parallel lanes."""
    b = TraceBuilder()
    run_id = b.trace_id
    steps_n = 60
    steps = [
        {
            "id": f"s{i:02d}",
            "description": f"step {i}",
            "executor": f"worker-{i % executors}",
            "tool": "tool_a" if i % 2 else "tool_b",
            "depends_on": [f"s{j:02d}" for j in (i - executors, i - executors - 1) if j >= 0],
            "requires": [f"k{i}"],
            "produces": [f"k{i + 1}"],
            "irreversible": i == steps_n - 1,
        }
        for i in range(steps_n)
    ]
    plan_doc = {
        "id": "plan-big",
        "version": 1,
        "scope": None,
        "objective": "big",
        "replan_reason": None,
        "steps": steps,
    }
    root = b.span(
        "invoke_agent synthetic-agent",
        0,
        10_000,
        _run_attrs(run_id, **{"planscope.run.outcome": "failure"}),
    )
    plan = b.span(
        "plan synthetic-agent",
        1,
        5,
        {
            "planscope.span.kind": "plan",
            "gen_ai.operation.name": "plan",
            "planscope.run.id": run_id,
            "planscope.plan.id": "plan-big",
            "planscope.plan.version": 1,
            "planscope.plan.json": plan_doc,
        },
        parent=root,
    )
    b.span(
        "chat planner",
        2,
        3,
        {
            "planscope.span.kind": "llm",
            "gen_ai.operation.name": "chat",
            "planscope.llm.role": "planner",
            "gen_ai.usage.input_tokens": 900,
            "gen_ai.usage.output_tokens": 300,
        },
        parent=plan,
    )
    per_attempt = 1 + 1 + 6  # step + llm + tools
    attempts_total = max(steps_n, -(-(target_spans - len(b.spans)) // per_attempt))
    clock = [10.0] * executors
    made = 0
    i = 0
    while made < attempts_total:
        step = steps[i % steps_n]
        lane = i % executors
        attempt = i // steps_n + 1
        start = clock[lane]
        failed = made + steps_n < attempts_total
        step_span = b.span(
            f"execute_step {step['id']}",
            start,
            8,
            {
                "planscope.span.kind": "step",
                "gen_ai.operation.name": "execute_step",
                "planscope.run.id": run_id,
                "planscope.step.id": step["id"],
                "planscope.step.attempt": attempt,
                "planscope.step.status": "error" if failed else "ok",
                "planscope.step.executor": step["executor"],
                "planscope.step.context.keys": step["requires"],
                "planscope.plan.id": "plan-big",
                "planscope.plan.version": 1,
                "planscope.input": {"attempt": attempt},
            },
            parent=root,
            error="ToolError: boom" if failed else None,
        )
        stamp = {
            "planscope.run.id": run_id,
            "planscope.step.id": step["id"],
            "planscope.step.attempt": attempt,
            "planscope.plan.id": "plan-big",
            "planscope.plan.version": 1,
        }
        b.span(
            "chat executor",
            start + 0.5,
            1,
            {
                "planscope.span.kind": "llm",
                "gen_ai.operation.name": "chat",
                "gen_ai.usage.input_tokens": 100,
                "gen_ai.usage.output_tokens": 20,
                **stamp,
            },
            parent=step_span,
        )
        for t in range(6):
            b.span(
                f"execute_tool {step['tool']}",
                start + 2 + t,
                0.8,
                {
                    "planscope.span.kind": "tool",
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": step["tool"],
                    **stamp,
                },
                parent=step_span,
            )
        clock[lane] = start + 9
        made += 1
        i += 1
    return b


def imported_run(steps_n: int = 40) -> TraceBuilder:
    """A 40-step run shaped like an imported multi-agent log: long step ids (agent, turn, tool),
    a mostly sequential plan with skip-layer dependencies and a fan-out, one failed step."""
    b = TraceBuilder()
    run_id = b.trace_id
    agents = ("Orchestrator", "WebSurfer", "FileSurfer", "Coder", "ComputerTerminal")
    ids = [
        f"turn-{i:02d}:{agents[i % 5]}.{'search_and_summarise' if i % 3 else 'plan'}"
        for i in range(steps_n)
    ]
    steps = [
        {
            "id": sid,
            "description": f"turn {i} of {agents[i % 5]}",
            "executor": agents[i % 5],
            "depends_on": [ids[j] for j in (i - 1, i - 3) if j >= 0 and (j == i - 1 or i % 4 == 0)],
        }
        for i, sid in enumerate(ids)
    ]
    plan_doc = {"id": "plan-imported", "version": 1, "objective": "imported", "steps": steps}
    root = b.span(
        "invoke_agent imported-agent",
        0,
        10_000,
        _run_attrs(run_id, **{"planscope.run.outcome": "failure"}),
    )
    b.span(
        "plan imported-agent",
        1,
        5,
        {
            "planscope.span.kind": "plan",
            "gen_ai.operation.name": "plan",
            "planscope.run.id": run_id,
            "planscope.plan.id": "plan-imported",
            "planscope.plan.version": 1,
            "planscope.plan.json": plan_doc,
        },
        parent=root,
    )
    for i, step in enumerate(steps):
        failed = i == steps_n // 2
        b.span(
            f"execute_step {step['id']}",
            10 + i * 10,
            8,
            {
                "planscope.span.kind": "step",
                "gen_ai.operation.name": "execute_step",
                "planscope.run.id": run_id,
                "planscope.step.id": step["id"],
                "planscope.step.attempt": 1,
                "planscope.step.status": "error" if failed else "ok",
                "planscope.step.executor": step["executor"],
                "planscope.plan.id": "plan-imported",
                "planscope.plan.version": 1,
            },
            parent=root,
            error="ToolError: page not found" if failed else None,
        )
    return b


def hostile_run() -> TraceBuilder:
    """A small planned run whose every free-text attribute is an injection attempt."""
    b = TraceBuilder(service="hostile-agent")
    run_id = b.trace_id
    step_id = f"step{INJECTION}"
    plan_doc = {
        "id": "plan-x",
        "version": 1,
        "scope": None,
        "objective": MD_INJECTION,
        "replan_reason": None,
        "steps": [
            {
                "id": step_id,
                "description": MD_INJECTION,
                "executor": INJECTION,
                "tool": "t",
                "depends_on": [],
                "requires": [INJECTION],
                "produces": [],
                "irreversible": False,
            }
        ],
    }
    root = b.span(
        "invoke_agent hostile",
        0,
        50,
        _run_attrs(
            run_id,
            **{
                "planscope.run.objective": MD_INJECTION,
                "planscope.run.outcome": "failure",
                "planscope.run.outcome_reason": INJECTION,
                "gen_ai.agent.name": MD_INJECTION,
            },
        ),
    )
    b.span(
        "plan hostile",
        1,
        2,
        {
            "planscope.span.kind": "plan",
            "gen_ai.operation.name": "plan",
            "planscope.run.id": run_id,
            "planscope.plan.id": "plan-x",
            "planscope.plan.version": 1,
            "planscope.plan.json": plan_doc,
        },
        parent=root,
    )
    step = b.span(
        f"execute_step {step_id}",
        5,
        10,
        {
            "planscope.span.kind": "step",
            "gen_ai.operation.name": "execute_step",
            "planscope.run.id": run_id,
            "planscope.step.id": step_id,
            "planscope.step.attempt": 1,
            "planscope.step.status": "error",
            "planscope.step.executor": INJECTION,
            "planscope.step.context.keys": [MD_INJECTION],
            "planscope.plan.id": "plan-x",
            "planscope.plan.version": 1,
            "planscope.input": {"q": INJECTION},
            "planscope.output": MD_INJECTION,
        },
        parent=root,
        error=f"ValueError: {INJECTION}",
    )
    b.span(
        f"execute_tool {INJECTION}",
        6,
        2,
        {
            "planscope.span.kind": "tool",
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": INJECTION,
            "gen_ai.tool.call.arguments": MD_INJECTION,
            "planscope.run.id": run_id,
            "planscope.step.id": step_id,
            "planscope.step.attempt": 1,
            "planscope.plan.id": "plan-x",
            "planscope.plan.version": 1,
        },
        parent=step,
    )
    return b


class _OneTrace(IdGenerator):
    """Every root span in one trace (an agent runtime's agents share their caller's trace)."""

    def __init__(self) -> None:
        self.trace_id = random.getrandbits(128)

    def generate_span_id(self) -> int:
        return random.getrandbits(64)

    def generate_trace_id(self) -> int:
        return self.trace_id


def agent_runtime(
    url: str, agents: Sequence[str] = ("planner", "worker", "worker", "worker", "worker")
) -> tuple[str, int]:
    """Agent runs in order (by default a planner, then a worker run four times); each worker's
    health check (a tool call the model asked for, said only as events on its chat span) times
    out; no span encloses the agents (AutoGen's agent runtime, Semantic Kernel's GenAI events),
    sent through a real OTLP/HTTP exporter. The trace id and its number of spans."""
    ids = _OneTrace()
    provider = TracerProvider(id_generator=ids)
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    tracer = provider.get_tracer("agent-runtime")
    for i, agent in enumerate(agents):
        attributes = {A.GEN_AI_OPERATION_NAME: "invoke_agent", A.GEN_AI_AGENT_NAME: agent}
        with tracer.start_as_current_span(f"invoke_agent {agent}", attributes=attributes) as run:
            chat: dict[str, str | int] = {
                A.GEN_AI_OPERATION_NAME: "chat",
                A.GEN_AI_REQUEST_MODEL: "gpt-4o",
                A.GEN_AI_USAGE_INPUT_TOKENS: 100,
                A.GEN_AI_USAGE_OUTPUT_TOKENS: 20,
            }
            with tracer.start_as_current_span("chat gpt-4o", attributes=chat) as llm:
                if agent == "worker":
                    call = {A.GEN_AI_TOOL_CALL_ID: f"call_{i}"}
                    asked = {A.GEN_AI_TOOL_NAME: "health_check"}
                    asked[A.GEN_AI_TOOL_CALL_ARGUMENTS] = '{"host": "web-04"}'
                    llm.add_event("gen_ai.choice", call | asked)
                    said = {"error.type": "TimeoutError", "exception.message": "timed out"}
                    llm.add_event("gen_ai.tool.message", call | said)
            if agent == "worker":
                run.set_status(Status(StatusCode.ERROR, "health check timed out"))
    provider.shutdown()
    return f"{ids.trace_id:032x}", 2 * len(agents)

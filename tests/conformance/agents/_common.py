"""What every conformance agent shares: the scenario, its tools, and the OTel SDK wiring.

Each agent is a small planner-executor: a planner LLM call returns the plan (a JSON list of
steps), then the executor works through the steps with tools. Two scenarios:

* ``healthy``: every tool succeeds;
* ``loop``: ``issue_refund`` fails every time; the model calls it again after each failure
  until it gives up (:data:`tests.conformance.fake_openai.MAX_TOOL_ATTEMPTS` attempts).

Spans go out through the real OTel SDK: an OTLP exporter (HTTP/protobuf or gRPC) to the
collector, and an in-memory exporter whose spans are written as OTLP/JSON (the suite's data).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import BaseModel

OBJECTIVE = "Refund order 42"
PLANNER_PROMPT = "You are the planner. Reply with a JSON list of steps: id, description, tool."
EXECUTOR_PROMPT = "You are the executor. Do the step you are given with your tools."
SCENARIOS = ("healthy", "loop")
FAILING_TOOL = "issue_refund"
FAILING_STEP = "refund"
EXPORT_TIMEOUT_S = 60
"""The exporters' patience: the SDK's 10 s default can drop a batch when a busy 2-core
machine's collector takes longer to fsync (a dropped batch would fail the suite)."""


class ToolFailure(RuntimeError):
    """What the failing tool raises in the ``loop`` scenario."""


def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    return json.dumps({"order_id": order_id, "amount": 30, "status": "delivered"})


def make_issue_refund(scenario: str) -> Callable[[str], str]:
    """``issue_refund`` for a scenario: it always fails in ``loop``."""

    def issue_refund(order_id: str) -> str:
        """Refund an order by its id."""
        if scenario == "loop":
            raise ToolFailure("error: payment gateway timeout")
        return f"refund issued for order {order_id}"

    return issue_refund


def tools_for(scenario: str) -> dict[str, Callable[[str], str]]:
    return {"lookup_order": lookup_order, "issue_refund": make_issue_refund(scenario)}


TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": doc,
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
    }
    for name, doc in (
        ("lookup_order", "Look up an order by its id."),
        ("issue_refund", "Refund an order by its id."),
    )
]
"""The tools as OpenAI function schemas (for agents that call the API directly)."""


def step_prompt(step: dict[str, str]) -> str:
    return f"Step {step['id']}: {step['description']}"


class Step(BaseModel):
    """A plan step, for agents whose planner answers a typed plan."""

    id: str
    description: str
    tool: str


class Plan(BaseModel):
    """A typed plan (a framework's structured output): its steps."""

    steps: list[Step]


def parse_plan(text: str) -> list[dict[str, str]]:
    steps = json.loads(text)
    assert isinstance(steps, list), text
    return [dict(s) for s in steps]


@dataclass
class Telemetry:
    """A TracerProvider exporting to the collector and to memory."""

    provider: TracerProvider
    memory: InMemorySpanExporter

    def finish(self, dump: Path | None) -> None:
        """Flush everything to the collector; write what was recorded as OTLP/JSON."""
        self.provider.force_flush()
        self.provider.shutdown()
        if dump is not None:
            dump.write_text(json.dumps(otlp_json(self.memory.get_finished_spans()), indent=1))


def telemetry(service: str) -> Telemetry:
    """The OTel SDK wired from the environment the suite sets (``CONFORMANCE_OTLP``)."""
    target = os.environ["CONFORMANCE_OTLP"]
    exporter: SpanExporter
    if target.startswith("grpc://"):
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
            OTLPSpanExporter as GrpcExporter,
        )

        exporter = GrpcExporter(
            endpoint=target.removeprefix("grpc://"), insecure=True, timeout=EXPORT_TIMEOUT_S
        )
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(endpoint=f"{target}/v1/traces", timeout=EXPORT_TIMEOUT_S)
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    batches = BatchSpanProcessor(
        exporter, schedule_delay_millis=200, export_timeout_millis=EXPORT_TIMEOUT_S * 1000
    )
    provider.add_span_processor(batches)
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return Telemetry(provider, memory)


def otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """Spans as an OTLP/JSON ``ExportTraceServiceRequest`` (hex ids, as the spec says)."""
    body = MessageToDict(encode_spans(spans))
    for resource in body.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = _hex(span[key])
                for link in span.get("links", []):
                    for key in ("traceId", "spanId"):
                        if key in link:
                            link[key] = _hex(link[key])
    return body


def _hex(b64: str) -> str:
    import base64

    return base64.b64decode(b64).hex()


def trace_id_of(spans: Sequence[ReadableSpan], root_name: str | None = None) -> str:
    roots = [s for s in spans if s.parent is None and (root_name is None or s.name == root_name)]
    assert roots, [s.name for s in spans]
    context = roots[-1].get_span_context()
    assert context is not None
    return format(context.trace_id, "032x")

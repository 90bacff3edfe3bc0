"""Agno traced by OpenLLMetry's Agno instrumentor (``opentelemetry-instrumentation-agno``),
posted through the real collector: one Agno ``Agent`` (``OpenAIChat`` on the conformance suite's
fake OpenAI server) holds theatre seats with two plain-function tools; the seat service raises
every time, with another row asked each time, until the model gives up. Agno catches a tool's
exception inside ``FunctionCall.execute`` and hands its text to the model, so the instrumentor's
``{tool}.tool`` span ends OK; only its ``traceloop.entity.output``, Agno's
``FunctionExecutionResult`` as text (``status='failure' result=None error='...'``), says the
call failed. The span model (migration 0055) reads such a call as failed, its message the
result's ``error``, and the analyzer sees the loop at the agent's run."""

from __future__ import annotations

import json
import logging
from typing import Any

from agno.agent import Agent
from agno.models.openai import OpenAIChat
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from planscope_analyzer import Analyzer, load_traces
from planscope_collector import BackgroundServer

from tests.conformance.fake_openai import MODEL, ModelServer, completion
from tests.conftest import wait_for_trace
from tests.corpus.orchard import unwrap_classes

ROWS = ("C", "D", "E", "F")


class SeatsTaken(RuntimeError):
    """The box office's refusal."""


def find_show(title: str) -> str:
    """The evening's performance of a show."""
    return json.dumps({"show": "SH-204", "title": title})


def hold_seats(show: str, row: str) -> str:
    """Hold two seats in a row of a performance."""
    # a quote in the text: Python's repr of it (in the result's text) takes double quotes
    raise SeatsTaken(f"row {row} of {show} is the critics' row tonight")


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model: find the show, then ask for seats in one row after another."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    answered = [m for m in messages if m.get("role") == "tool"]
    if not answered:
        name, arguments = "find_show", {"title": "The Tempest"}
    elif len(answered) <= len(ROWS):
        name, arguments = "hold_seats", {"show": "SH-204", "row": ROWS[len(answered) - 1]}
    else:
        return completion(body, {"role": "assistant", "content": "gave up: no seats held"})
    call: dict[str, Any] = {"id": f"call_{len(answered)}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(arguments)}
    return completion(body, {"role": "assistant", "content": None, "tool_calls": [call]})


def _play(url: str) -> str:
    """One booking under OpenLLMetry's Agno instrumentor, posted to ``url``; its trace id."""
    from opentelemetry.instrumentation.agno import AgnoInstrumentor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    instrumentor = AgnoInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    agno_log = logging.getLogger("agno")
    try:
        with ModelServer(respond=respond) as server:
            agno_log.disabled = True  # Agno logs each failing call's traceback
            agent = Agent(
                name="box_office",
                model=OpenAIChat(id=MODEL, base_url=server.base_url("theatre"), api_key="t"),
                tools=[find_show, hold_seats],
                instructions="Hold two seats for The Tempest tonight.",
                telemetry=False,
            )
            app = provider.get_tracer("theatre-app")
            with app.start_as_current_span("book seats The Tempest") as root:
                trace_id = format(root.get_span_context().trace_id, "032x")
                agent.run("Two seats for The Tempest, please")
    finally:
        instrumentor.uninstrument()
        unwrap_classes()  # 0.62.4's uninstrument leaves its class wrappers
        agno_log.disabled = False
        provider.shutdown()
    return trace_id


def test_an_agno_call_whose_result_says_failure_failed(collector: BackgroundServer) -> None:
    trace_id = _play(collector.url)
    # the app's root, the agent's run, a tool span per call
    wait_for_trace(collector.url, trace_id, 2 + 1 + len(ROWS))
    store = collector.app.state.collector.store
    t = load_traces(store, "default", [trace_id])[trace_id]
    calls = [(c.tool, c.failed) for c in sorted(t.tools, key=lambda c: c.start_ns)]
    assert calls == [("find_show", False)] + [("hold_seats", True)] * len(ROWS)
    failed = [c for c in t.tools if c.failed]
    assert {c.error_type for c in failed} == {"failure"}
    # the message is the result's error field, unquoted
    assert {c.message for c in failed} == {
        f"row {row} of SH-204 is the critics' row tonight" for row in ROWS
    }
    found = Analyzer(store).analyze("default", [trace_id], write=False).findings
    assert [(f.kind, f.detail["where"]) for f in found] == [("runaway_loop", "box_office")]

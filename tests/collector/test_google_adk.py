"""Google's Agent Development Kit traced by its own OpenTelemetry tracing (``google-adk``, the
``gcp.vertex.agent`` tracer), posted through the real collector: one ``LlmAgent`` renews a
library loan with two ``FunctionTool``s on ADK's ``LiteLlm`` wrapper; the renewal service
answers ADK's recommended error dict (``{"status": "error", "error_code", "error_message"}``)
every time, so the model calls it again and again. ADK writes ``invocation``, ``agent_run
[name]`` (no attribute at all), ``call_llm`` (the request and response as ADK JSON) and
``execute_tool {tool}`` spans, every one INTERNAL and none in error; the span model (migration
0048) reads the agent run as a step attempt named by its agent, the tool calls' arguments and
results, the error dicts as failed calls, and the analyzer sees the loop at that step.

The model is scripted on the conformance suite's fake OpenAI server. ADK takes its tracer from
the global provider at import; the test hands ADK's modules a tracer of its own provider instead
(``monkeypatch``: no global provider is set)."""

from __future__ import annotations

import asyncio
import json
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from planscope import semconv as A
from planscope_analyzer import Analyzer, load_traces
from planscope_collector import BackgroundServer

from tests.conformance.fake_openai import MODEL, ModelServer, completion
from tests.conftest import wait_for_trace

# litellm reads its price map from the network at import unless told to use its own copy; no
# Google client, no Vertex AI
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("GOOGLE_GENAI_USE_VERTEXAI", "0")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # google-cloud's notices while ADK imports
    from google.adk import runners, telemetry
    from google.adk.agents import LlmAgent, base_agent
    from google.adk.flows.llm_flows import base_llm_flow, functions
    from google.adk.models.lite_llm import LiteLlm
    from google.adk.runners import InMemoryRunner
    from google.adk.tools import FunctionTool
    from google.genai import types

DESK = "You renew library loans with the services. Renew the loan on card C-7."
TRIES = 4


def find_loan(card: str) -> dict[str, Any]:
    """The reader's current loan."""
    return {"status": "success", "loan": "LN-88", "card": card}


def extend_loan(loan: str) -> dict[str, Any]:
    """Extend a loan by two weeks."""
    return {"status": "error", "error_code": "HELD", "error_message": f"{loan} is reserved"}


@dataclass(frozen=True)
class _Desk:
    """One ADK desk: an ``LlmAgent`` with two tools, the first called once, the second again
    after each error it answers until ``TRIES`` calls, then the model gives up."""

    app: str
    user: str
    agent: str
    instruction: str
    tools: tuple[Callable[..., dict[str, Any]], Callable[..., dict[str, Any]]]
    first: dict[str, Any]  # the first tool's arguments
    retried: dict[str, Any]  # the second tool's arguments, each call
    gave_up: str
    ask: str
    root: str

    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        """The scripted model's answer to ``body``."""
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        answered = [m for m in messages if m.get("role") == "tool"]
        if not answered:
            tool, arguments = self.tools[0], self.first
        elif len(answered) <= TRIES:
            tool, arguments = self.tools[1], self.retried
        else:
            return completion(body, {"role": "assistant", "content": self.gave_up})
        call = {"id": f"call_{len(answered)}", "type": "function"}
        call["function"] = {"name": tool.__name__, "arguments": json.dumps(arguments)}
        return completion(body, {"role": "assistant", "content": None, "tool_calls": [call]})


LIBRARY = _Desk(
    app="library",
    user="reader",
    agent="renewal_desk",
    instruction=DESK,
    tools=(find_loan, extend_loan),
    first={"card": "C-7"},
    retried={"loan": "LN-88"},
    gave_up="gave up: LN-88 is reserved",
    ask="Renew my loan",
    root="renew loan C-7",
)


def _play(url: str, monkeypatch: pytest.MonkeyPatch, desk: _Desk, tracing: str = "adk") -> str:
    """One request to ``desk`` traced by ADK's own tracing or OpenInference's Google ADK
    instrumentor (``tracing``), its spans posted to the collector at ``url``; its trace id."""
    from openinference.instrumentation.google_adk import GoogleADKInstrumentor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    instrumentor = GoogleADKInstrumentor()
    if tracing == "adk":
        tracer = provider.get_tracer(A.ADK_SCOPE)
        for module in (telemetry, base_agent, base_llm_flow, functions, runners):
            monkeypatch.setattr(module, "tracer", tracer)
    else:
        instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer(respond=desk.respond) as server:
            model = LiteLlm(
                model=f"openai/{MODEL}", api_base=server.base_url(desk.app), api_key="t"
            )
            agent = LlmAgent(
                name=desk.agent,
                model=model,
                instruction=desk.instruction,
                tools=[FunctionTool(t) for t in desk.tools],
            )

            async def ask() -> None:
                runner = InMemoryRunner(agent=agent, app_name=desk.app)
                session = await runner.session_service.create_session(
                    app_name=desk.app, user_id=desk.user
                )
                said = types.Content(role="user", parts=[types.Part(text=desk.ask)])
                async for _ in runner.run_async(
                    user_id=desk.user, session_id=session.id, new_message=said
                ):
                    pass

            app = provider.get_tracer(f"{desk.app}-app")
            with app.start_as_current_span(desk.root) as root:
                trace_id = format(root.get_span_context().trace_id, "032x")
                asyncio.run(ask())
    finally:
        if tracing != "adk":
            instrumentor.uninstrument()
        provider.shutdown()
    return trace_id


def test_google_adk_run_is_mapped(
    collector: BackgroundServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace_id = _play(collector.url, monkeypatch, LIBRARY)
    # the app's root, invocation, the agent run, a model call per turn, a tool call per call
    wait_for_trace(collector.url, trace_id, 3 + (TRIES + 2) + (TRIES + 1))
    store = collector.app.state.collector.store
    t = load_traces(store, "default", [trace_id])[trace_id]
    # the agent run is the step attempt, named by its agent
    assert [(a.step_id, a.executor) for a in t.attempts] == [("renewal_desk", "renewal_desk")]
    assert t.attempts[0].failed
    calls = [(c.step_id, c.tool, json.loads(c.arguments), c.failed) for c in t.tools]
    assert calls[0] == ("renewal_desk", "find_loan", {"card": "C-7"}, False)
    assert calls[1:] == [("renewal_desk", "extend_loan", {"loan": "LN-88"}, True)] * TRIES
    assert {c.error_type for c in t.tools[1:]} == {"HELD"}
    assert json.loads(t.tools[0].result)["loan"] == "LN-88"
    # what each model call was asked: the agent's instruction and the user's message
    assert t.asked and all(DESK in said for said in t.asked.values())
    assert t.llm_spans == TRIES + 2
    found = Analyzer(store).analyze("default", [trace_id], write=False).findings
    # no plan: the loop is at the agent run's step, which no plan step names
    assert [(f.kind, f.detail["where"]) for f in found] == [("runaway_loop", "renewal_desk")]
    assert t.run is not None and t.run.outcome == A.OUTCOME_FAILURE


# --- ADK's status key alone, under either tracing (migration 0053) ------------------------------
CLINIC = "You book dental appointments with the services. Book a check-up for patient P-31."


def find_patient(patient: str) -> dict[str, Any]:
    """The patient's record."""
    return {"status": "success", "record": "DR-4", "patient": patient}


def book_chair(record: str) -> dict[str, Any]:
    """Book the next free chair for a check-up."""
    # ADK's status key says the outcome; no error_code / error_message beside it
    return {"status": "error", "chair": "none free", "detail": f"{record}: the clinic is full"}


CLINIC_DESK = _Desk(
    app="clinic",
    user="patient",
    agent="front_desk",
    instruction=CLINIC,
    tools=(find_patient, book_chair),
    first={"patient": "P-31"},
    retried={"record": "DR-4"},
    gave_up="gave up: no chair",
    ask="Book my check-up",
    root="book check-up P-31",
)


@pytest.mark.parametrize("tracing", ["adk", "openinference"])
def test_an_adk_result_whose_status_is_error_failed_under_either_tracing(
    collector: BackgroundServer, monkeypatch: pytest.MonkeyPatch, tracing: str
) -> None:
    trace_id = _play(collector.url, monkeypatch, CLINIC_DESK, tracing)
    # the app's root, invocation, the agent run, a model call per turn, a tool call per call
    wait_for_trace(collector.url, trace_id, 3 + (TRIES + 2) + (TRIES + 1))
    store = collector.app.state.collector.store
    t = load_traces(store, "default", [trace_id])[trace_id]
    calls = [(c.tool, c.failed) for c in sorted(t.tools, key=lambda c: c.start_ns)]
    assert calls == [("find_patient", False)] + [("book_chair", True)] * TRIES
    # the result is the tool's own dict under either tracing (not OpenInference's wrapper)
    assert {json.loads(c.result)["chair"] for c in t.tools if c.tool == "book_chair"} == {
        "none free"
    }
    found = Analyzer(store).analyze("default", [trace_id], write=False).findings
    # OpenInference's AGENT span is a step named by its span's name (not re-read here)
    where = "front_desk" if tracing == "adk" else "agent_run [front_desk]"
    assert [(f.kind, f.detail["where"]) for f in found] == [("runaway_loop", where)]

"""The OpenAI Agents SDK traced by Logfire (``logfire.instrument_openai_agents()``), posted
through the real collector: a planner agent answers a structured ``output_type`` plan, then a
worker agent runs each step with ``function_tool`` services, one of which always fails, so the
model calls it again and again. Logfire names every span by its message template and puts
``gen_ai.system`` on all of them; the span model (migration 0047) reads the agent runs as step
attempts, the ``Function`` spans as tool calls with their arguments, the plan from the
planner's model call ``output``, and the analyzer sees the loop at its step. In a second
renewal every step succeeds, then the app's own ``logfire.span`` watching the loan fails naming
the loan it watches: the world's doing, not the plan's (the check's inputs are its name's
arguments, Logfire's ``logfire.msg``).

The model is scripted on the conformance suite's fake OpenAI server; the SDK's own trace
provider is replaced for the test (no processor: nothing goes to OpenAI's platform) and put
back after; Logfire sends nothing to its service."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
from typing import Any

import logfire
from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
from agents.tracing import get_trace_provider, set_trace_provider
from agents.tracing.provider import DefaultTraceProvider
from openai import AsyncOpenAI
from opentelemetry import context as otel_context
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from planscope_analyzer import Analyzer, load_traces
from planscope_collector import BackgroundServer
from pydantic import BaseModel

from tests.conformance.fake_openai import MODEL, ModelServer, completion
from tests.conftest import wait_for_trace

PLANNER = "You plan a library loan renewal."
WORKER = "You do one step of a library loan renewal with your services."
TRIES = 4


class Argument(BaseModel):
    name: str
    value: str


class Step(BaseModel):
    step_id: str
    service: str
    arguments: list[Argument]


class RenewalPlan(BaseModel):
    steps: list[Step]


class Unavailable(RuntimeError):
    """The catalogue service's error."""


class RenewalFailed(RuntimeError):
    """A step gave up: the app fails the renewal."""


@function_tool
def find_loan(card: str) -> str:
    """The reader's current loan."""
    return json.dumps({"loan": "LN-88", "card": card})


@function_tool
def extend_loan(loan: str) -> str:
    """Extend a loan by two weeks."""
    raise Unavailable(f"catalogue locked for {loan}")


@function_tool(name_override="extend_loan")
def extend_loan_ok(loan: str) -> str:
    """Extend a loan by two weeks."""
    return json.dumps({"loan": loan, "due": "2026-06-30"})


def _arg(name: str, value: str) -> dict[str, str]:
    return {"name": name, "value": value}


def _respond(body: dict[str, Any], tries: int = TRIES) -> dict[str, Any]:
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = str(messages[0].get("content") or "") if messages else ""
    if system.startswith(PLANNER):
        plan = {
            "steps": [
                {"step_id": "locate", "service": "find_loan", "arguments": [_arg("card", "C-7")]},
                {
                    "step_id": "renew",
                    "service": "extend_loan",
                    "arguments": [_arg("loan", "LN-88")],
                },
            ]
        }
        return completion(body, {"role": "assistant", "content": json.dumps(plan)})
    user = next(str(m.get("content")) for m in messages if m.get("role") == "user")
    step = json.loads(user)
    tried = sum(m.get("role") == "tool" for m in messages)
    if tried < (tries if step["service"] == "extend_loan" else 1):
        call = {"id": f"call_{tried}", "type": "function"}
        arguments = json.dumps({a["name"]: a["value"] for a in step["arguments"]})
        call["function"] = {"name": step["service"], "arguments": arguments}
        return completion(body, {"role": "assistant", "content": None, "tool_calls": [call]})
    return completion(body, {"role": "assistant", "content": "gave up" if tried > 1 else "done"})


class _Relay(SpanProcessor):
    """Logfire's spans to the exporter's processor."""

    def __init__(self, target: SpanProcessor) -> None:
        self.target = target

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        self.target.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        self.target.on_end(span)


def _renew(url: str, *, recalled: bool = False) -> str:
    """One renewal, its spans posted to the collector at ``url``; its trace id. ``recalled``:
    the catalogue extends the loan, then the app's watch of the loan fails (the library
    recalled it)."""
    relay = SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces"))
    lf = logfire.configure(
        local=True,
        send_to_logfire=False,
        console=False,
        metrics=False,
        inspect_arguments=False,
        service_name="library-desk",
        additional_span_processors=[_Relay(relay)],
    )
    previous = get_trace_provider()
    set_trace_provider(DefaultTraceProvider())
    try:
        lf.instrument_openai_agents()
        respond = functools.partial(_respond, tries=1 if recalled else TRIES)
        with ModelServer(respond=respond) as server:
            client = AsyncOpenAI(base_url=server.base_url("library"), api_key="t", max_retries=0)
            model = OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
            planner = Agent(
                name="planner", instructions=PLANNER, model=model, output_type=RenewalPlan
            )
            worker = Agent(
                name="worker",
                instructions=WORKER,
                model=model,
                tools=[find_loan, extend_loan_ok if recalled else extend_loan],
            )

            async def renew() -> None:
                plan = (await Runner.run(planner, "Renew the loan on card C-7")).final_output
                for step in plan.steps:
                    done = await Runner.run(worker, step.model_dump_json(), max_turns=TRIES + 3)
                    if done.final_output != "done":
                        raise RenewalFailed(f"{step.step_id}: {done.final_output}")
                if recalled:
                    loan = plan.steps[-1].arguments[0].value
                    with lf.span("watch loan {loan}", loan=loan):
                        raise RenewalFailed(f"loan {loan} recalled by the branch: stock audit")

            with contextlib.suppress(RenewalFailed), lf.span("renew {card}", card="C-7") as root:
                trace_id = format(root.get_span_context().trace_id, "032x")
                asyncio.run(renew())
    finally:
        set_trace_provider(previous)
        relay.shutdown()
    return trace_id


def test_logfire_openai_agents_run_is_mapped(collector: BackgroundServer) -> None:
    trace_id = _renew(collector.url)
    wait_for_trace(collector.url, trace_id, 20)
    store = collector.app.state.collector.store
    t = load_traces(store, "default", [trace_id])[trace_id]
    calls = [(c.step_id, c.tool, c.arguments, c.failed) for c in t.tools]
    assert calls[0] == ("locate", "find_loan", '{"card": "C-7"}', False)
    assert calls[1:] == [("renew", "extend_loan", '{"loan": "LN-88"}', True)] * TRIES
    assert [s.step_id for s in t.plan_steps] == ["locate", "renew"]
    attempts = {a.step_id: a for a in t.attempts}
    assert attempts["renew"].failed and not attempts["locate"].failed
    # the SDK's default failure_error_function redacts the error: Logfire's `error` attribute
    # says what the SDK said (no exception event), and that is the failed attempt's message
    assert attempts["renew"].message
    assert t.run is not None and t.llm_spans == 1 + 2 + TRIES + 1
    found = Analyzer(store).analyze("default", [trace_id], write=False).findings
    assert [(f.kind, f.step_id) for f in found] == [("runaway_loop", "renew")]


def test_a_logfire_watch_naming_what_it_watches_is_the_worlds(
    collector: BackgroundServer,
) -> None:
    """Every step succeeded, then the app's ``watch loan {loan}`` span failed naming the loan
    the plan's steps carried: that value is the watch's own input (its filled-in name), so the
    failure is the world's, not a value the planner got wrong."""
    trace_id = _renew(collector.url, recalled=True)
    wait_for_trace(collector.url, trace_id, 20)
    store = collector.app.state.collector.store
    t = load_traces(store, "default", [trace_id])[trace_id]
    assert t.run is not None and t.run.outcome == "failure"
    assert all(not a.failed for a in t.attempts)
    watch = next(s for s in t.raw or () if s.name == "watch loan {loan}")
    assert (watch.status_code, watch.title) == ("Error", "watch loan LN-88")
    found = Analyzer(store).analyze("default", [trace_id], write=False).findings
    assert [(f.kind, f.step_id) for f in found] == []

"""A real Agno ``Team`` (coordinate mode) traced by OpenInference's Agno instrumentor, stored
in the real chDB store: a community radio station's outside broadcast, planned by the app's
planner call (plain GenAI spans), each step attempt one team run inside the app's own span
naming the step (``task van attempt 2``). The leader delegates with Agno's
``delegate_task_to_member`` to its ``porter`` member, whose run the instrumentor records
**beside** the delegation call, under the team run, and whose tools do the work; the team run
ends OK whatever its member reported.

The member's run was a step attempt of its own, named after the member: each app attempt
counted twice (the team run, OK: its own calls are the leader's, no work of the plan's; the
member's, failed), and the member's name offered as a step. A member's run that its team run
delegated to is that team run's work: the team run is the attempt, failed when the work did."""

from __future__ import annotations

import contextvars
import json
import logging
from typing import Any

import pytest
from agno.agent import Agent
from agno.models.openai import OpenAIChat
from agno.team import Team
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai
from tests.analyzer.conftest import otlp_rows
from tests.conformance.fake_openai import MODEL, ModelServer, completion
from tests.storage._spans import spans_ipc

pytestmark = pytest.mark.integration

PLAN = json.dumps(
    {
        "steps": [
            {"id": "van", "tool": "book_van", "args": {"mast": "12 m", "day": "2027-06-19"}},
            {"id": "listing", "tool": "post_listing", "args": {"slot": "sat-14:00", "van": "van"}},
        ]
    }
)
TRIES = 4


class VanBooked(RuntimeError):
    """The outside-broadcast van hire's refusal."""


def book_van(mast: str, day: str) -> str:
    """Hire the outside-broadcast van with a mast for a day."""
    raise VanBooked(f"no van with a {mast} mast free on {day}")


def post_listing(slot: str, van: str) -> str:
    """Post the broadcast in the station's listings."""
    return json.dumps({"listing": "L-51", "slot": slot})


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model: the leader delegates the task to the porter and answers its reply;
    the porter calls the van hire once and answers what came back."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    tools = {str((t.get("function") or {}).get("name")) for t in body.get("tools") or []}
    last = messages[-1]
    if last.get("role") == "tool":
        reply = _text(last.get("content"))
        return completion(body, {"role": "assistant", "content": f"failed: {reply}"})
    if "delegate_task_to_member" in tools:
        args = {"member_id": "porter", "task": task}
        return completion(body, _call("delegate_task_to_member", args, len(messages)))
    return completion(body, _call("book_van", {"mast": "12 m", "day": "2027-06-19"}, 1))


def _play(store: Store) -> str:
    """The station's outside broadcast: the plan, then the van step tried ``TRIES`` times;
    the trace id."""
    from openinference.instrumentation.agno import AgnoInstrumentor

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = AgnoInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    agno_log = logging.getLogger("agno")
    app = provider.get_tracer("radio-app")
    try:
        with ModelServer(respond=respond) as server:
            agno_log.disabled = True  # Agno logs each failing call's traceback
            model = OpenAIChat(id=MODEL, base_url=server.base_url("radio"), api_key="t")
            porter = Agent(
                name="porter", id="porter", model=model, tools=[book_van, post_listing],
                telemetry=False,
            )  # fmt: skip
            team = Team(name="station", members=[porter], model=model, telemetry=False)
            with app.start_as_current_span("outside broadcast Midsummer Fair") as root:
                trace_id = format(root.get_span_context().trace_id, "032x")
                genai.plan(app, "planner", "Plan the Midsummer Fair broadcast.", PLAN)
                for attempt in range(1, TRIES + 1):
                    with app.start_as_current_span(f"task van attempt {attempt}"):
                        # OpenInference's Agno wrapper leaves the team run's context attached
                        # after Team.run returns: the run goes in a copy of the context
                        contextvars.copy_context().run(team.run, "Hire the OB van (step van).")
                root.set_status(Status(StatusCode.ERROR, "no van"))
    finally:
        instrumentor.uninstrument()
        agno_log.disabled = False
    store.insert_spans(spans_ipc(otlp_rows(list(exporter.get_finished_spans()))))
    provider.shutdown()
    return trace_id


def test_a_team_members_run_is_its_team_runs_work(store: Store) -> None:
    t = _play(store)
    trace = load_traces(store, "default", [t])[t]
    assert [s.step_id for s in trace.plan_steps] == ["van", "listing"]
    # one attempt per app attempt (the team run), failed as its member's call did; the
    # member's name no step
    van = [a for a in trace.attempts if a.step_id == "van"]
    assert [a.status for a in van] == ["error"] * TRIES
    assert not [a for a in trace.attempts if a.step_id == "porter"]
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "van"

"""Executor runs that record nothing they were asked, inside the app's span per attempt, traced
by a framework that names every agent run alike: a bike shop's wheel build, plain GenAI spans
from the real OTel SDK, stored in the real chDB store and loaded for real. The planner and the
executors are runs of one agent name (``invoke_agent crew``); the app wraps each executor run
in ``task <id> attempt <n>``.

Found on a Pydantic AI app under MLflow's autologging (``Agent.run_sync`` over ``Agent.run``
for every agent, and each executor run's answer holding its state, with its tools' parameter
schemas): on main ``5c37605`` the truing step's loop was blamed at no step: the framework's
outer run span stood between the attempt and the app's span, and a tool's parameter schema in
an executor's answer was read as a re-plan of steps named like its parameters."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import Status, StatusCode, Tracer
from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

PLAN = json.dumps(
    {
        "steps": [
            {"id": "rim", "note": "pick a 32-hole rim"},
            {"id": "hub", "note": "fit the customer's dynamo hub"},
            {"id": "lace", "note": "lace it three-cross"},
            {"id": "truing", "note": "true it to 0.3 mm"},
        ]
    }
)
TRUING_PARAMETERS = {  # the truing tool's: named like the steps before it
    "type": "object",
    "properties": {
        "hub": {"type": "string", "description": "the hub laced in"},
        "lace": {"type": "string", "description": "the lacing pattern"},
        "tolerance": {"type": "number", "description": "mm"},
    },
    "required": ["hub", "lace"],
}


def _run(
    tracer: Tracer, answer: str = "", error: str = "", tool: str = "", state: str = ""
) -> None:
    """An agent run: its model call records no input, only its answer (if given); the run's
    own output (MLflow's, as its autologging records a run's return value) its ``state``."""
    attributes: dict[str, Any] = {A.GEN_AI_OPERATION_NAME: "chat"}
    if answer:
        attributes[A.GEN_AI_OUTPUT_MESSAGES] = json.dumps(
            [{"role": "assistant", "content": answer}]
        )
    own = {**genai.AGENT, A.MLFLOW_SPAN_OUTPUTS: state} if state else genai.AGENT
    with tracer.start_as_current_span("invoke_agent crew", attributes=own) as run:
        with tracer.start_as_current_span("chat", attributes=attributes):
            pass
        if tool:
            with tracer.start_as_current_span(
                f"execute_tool {tool}",
                attributes={A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: tool},
            ) as call:
                if error:
                    call.set_status(Status(StatusCode.ERROR, error))
        if error:
            run.set_status(Status(StatusCode.ERROR, error))


def _attempt(
    tracer: Tracer, step: str, n: int, tool: str, *, wrapped: bool, error: str = ""
) -> None:
    """The app's span for one attempt; in it the framework's run (``wrapped``: an outer run
    span that makes no call of its own around it); its answer states its tools' schemas."""
    state = json.dumps({"output": "done", "state": {"tools": [TRUING_PARAMETERS]}})
    with tracer.start_as_current_span(f"task {step} attempt {n}") as task:
        if wrapped:
            with tracer.start_as_current_span("invoke_agent crew", attributes=genai.AGENT):
                _run(tracer, "done", error, tool, state)
        else:
            _run(tracer, "done", error, tool, state)
        if error:
            task.set_status(Status(StatusCode.ERROR, error))


@pytest.mark.parametrize("wrapped", [True, False], ids=["framework-wrapped", "bare"])
def test_a_wrapped_run_is_the_step_its_app_span_names(store: Store, wrapped: bool) -> None:
    errors = [f"spoke tension off by {n} kgf" for n in (9, 4, 12, 7)] + ["truing stand jammed"]

    def play(tracer: Tracer, root: Any) -> None:
        with tracer.start_as_current_span("plan revision 1"):
            _run(tracer, PLAN)
        _attempt(tracer, "rim", 1, "pick_rim", wrapped=wrapped)
        _attempt(tracer, "hub", 1, "pick_hub", wrapped=wrapped)
        _attempt(tracer, "lace", 1, "lace_wheel", wrapped=wrapped)
        for n, error in enumerate(errors, 1):
            _attempt(tracer, "truing", n, "true_wheel", wrapped=wrapped, error=error)
        root.set_status(Status(StatusCode.ERROR, errors[-1]))

    t = genai.played(store, "bike-shop", "wheel build WB-88", play)
    trace = load_traces(store, "default", [t])[t]
    assert len(trace.plans) == 1  # the truing tool's parameter schema is no re-plan
    assert [s.step_id for s in trace.plan_steps] == ["rim", "hub", "lace", "truing"]
    assert [a.step_id for a in trace.attempts if a.status == "error"] == ["truing"] * 5
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "truing"

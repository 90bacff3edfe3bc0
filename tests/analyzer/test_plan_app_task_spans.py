"""A plan whose items name both a step and the tool it calls, read from structure: a cake
shop's wedding order, plain GenAI spans from the real OTel SDK, stored in the real chDB store
and loaded for real. The planner's answer is a CSV sheet (``id,tool,args,after`` rows) under a
line of the order's own data; the app runs one executor agent per step attempt inside its own
plain span ``task <id> attempt <n>``; no model call records what it was asked (an
instrumentation whose message format the mapping does not read).

On the branch's start the structure path took the tools as the steps (the attempts carried only
their own names and the tools they called): ``bake_sponge`` ... ``book_van``, the loop blamed at
``order_flowers``, never ``florist``. With the app span's words carried, the step named in the
order's line above the sheet (``florist``) would stand there, before the sheet, with no tool:
it stands at its row, beside the tool its attempts called."""

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

SHEET = """Order W-12 for the Hall: three tiers, the florist at 9, a van at noon.
id,tool,args,after
sponge,bake_sponge,tiers=3,
icing,pipe_icing,colour=ivory,sponge
florist,order_flowers,stems=40,icing
van,book_van,time=12:00,florist
"""


def _chat(tracer: Tracer, answer: str = "") -> None:
    """A model call that records no input messages (only its answer, if given)."""
    attributes: dict[str, Any] = {A.GEN_AI_OPERATION_NAME: "chat"}
    if answer:
        out = [{"role": "assistant", "content": answer}]
        attributes[A.GEN_AI_OUTPUT_MESSAGES] = json.dumps(out)
    with tracer.start_as_current_span("chat cake-model", attributes=attributes):
        pass


def _attempt(tracer: Tracer, step: str, n: int, tool: str, error: str = "") -> None:
    """The app's span for one attempt, an executor agent run in it: a model call, one tool
    call (failing with ``error`` when given)."""
    with tracer.start_as_current_span(f"task {step} attempt {n}") as task:
        with tracer.start_as_current_span("invoke_agent decorator", attributes=genai.AGENT):
            _chat(tracer)
            with tracer.start_as_current_span(
                f"execute_tool {tool}",
                attributes={
                    A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
                    A.GEN_AI_TOOL_NAME: tool,
                    A.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps({"try": n}),
                },
            ) as call:
                if error:
                    call.set_status(Status(StatusCode.ERROR, error))
        if error:
            task.set_status(Status(StatusCode.ERROR, error))


def test_a_step_is_the_name_its_attempts_app_span_carries_not_its_tool(store: Store) -> None:
    # the florist's line is busy four times, then closed: the app runs the task again each time
    errors = [f"line busy, call back in {n} min" for n in (5, 10, 3, 8)] + ["shop closed"]

    def play(tracer: Tracer, root: Any) -> None:
        with (
            tracer.start_as_current_span("plan revision 1"),
            tracer.start_as_current_span("invoke_agent planner", attributes=genai.AGENT),
        ):
            _chat(tracer, SHEET)
        _attempt(tracer, "sponge", 1, "bake_sponge")
        _attempt(tracer, "icing", 1, "pipe_icing")
        for n, error in enumerate(errors, 1):
            _attempt(tracer, "florist", n, "order_flowers", error)
        root.set_status(Status(StatusCode.ERROR, errors[-1]))

    t = genai.played(store, "cake-shop", "wedding order W-12", play)
    trace = load_traces(store, "default", [t])[t]
    (plan,) = trace.plans
    steps = json.loads(plan.json)
    assert [(s["id"], s["tool"]) for s in steps] == [
        ("sponge", "bake_sponge"),
        ("icing", "pipe_icing"),
        ("florist", "order_flowers"),
    ]
    assert [a.step_id for a in trace.attempts if a.step_id == "florist"] == ["florist"] * 5
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "florist"

"""A plan whose steps run inside a group no attempt is named for: a newsroom publishing a story,
plain GenAI spans from the real OTel SDK, stored in the real chDB store and loaded for real.
The planner answers an Amazon States Language state machine (``States`` keyed by name, a
``Parallel`` state whose ``Branches`` each hold a ``States`` of their own, ``"key.$":
"$.<State>.<field>"`` references); one executor run per state attempt is handed
its state. The fact check inside the parallel group fails five times in a row (the desk runs
the state again each time).

Before: the structured reader read the machine's top-level states only: the parallel state was
one step, the states its branches hold were none, so the fact check's attempts bound to no step
of the plan and the loop was found at no step."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import Span, Status, StatusCode, Tracer
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

PROMPT = "Publish the council budget story (slug BUDGET-27) on the front page by 18:00."
TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "FetchWire": ("wire_fetch", {"slug": "BUDGET-27"}),
    "FactCheck": ("fact_check", {"draft.$": "$.FetchWire.draft"}),
    "PickPhotos": ("photo_desk", {"topic": "council budget", "count": 3}),
    "Publish": ("cms_publish", {"draft.$": "$.FetchWire.draft", "photos.$": "$.PickPhotos.ids"}),
    "Syndicate": ("wire_syndicate", {"story.$": "$.Publish.url"}),
}
STEPS = ["FetchWire", "FactCheck", "PickPhotos", "Publish", "Syndicate"]


def _task(state: str, nxt: str | None) -> dict[str, Any]:
    """A task state calling its function with its payload, then ``nxt`` (None: the end)."""
    tool, payload = TOOLS[state]
    out: dict[str, Any] = {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke",
        "Parameters": {"FunctionName": tool, "Payload": payload},
        "ResultPath": f"$.{state}",
    }
    return {**out, "Next": nxt} if nxt else {**out, "End": True}


def _answer() -> str:
    """The plan: the wire copy, then the fact check and the photos at once, then publish and
    syndicate."""
    machine = {
        "Comment": "Front page story BUDGET-27",
        "StartAt": "FetchWire",
        "States": {
            "FetchWire": _task("FetchWire", "Prepare"),
            "Prepare": {
                "Type": "Parallel",
                "Branches": [
                    {"StartAt": s, "States": {s: _task(s, None)}}
                    for s in ("FactCheck", "PickPhotos")
                ],
                "Next": "Publish",
            },
            "Publish": _task("Publish", "Syndicate"),
            "Syndicate": _task("Syndicate", None),
        },
    }
    return json.dumps(machine, indent=2)


def _attempt(tracer: Tracer, state: str, attempt: int, error: str = "") -> None:
    """One executor run handed its state (references filled in)."""
    tool, payload = TOOLS[state]
    args = {k.removesuffix(".$"): f"ref-{v}" if k.endswith(".$") else v for k, v in payload.items()}
    asked = f"Task state {state} (attempt {attempt})\nFunction: {tool}\n{json.dumps(args)}"
    genai.attempt(tracer, "news_desk", None, asked, tool, args, error)


def _story(store: Store) -> str:
    """The story: the fact check fails five times; the trace id."""

    def play(tracer: Tracer, root: Span) -> None:
        genai.plan(tracer, "editor", PROMPT, _answer())
        _attempt(tracer, "FetchWire", 1)
        _attempt(tracer, "PickPhotos", 1)
        for n in range(1, 6):
            _attempt(tracer, "FactCheck", n, f"FactDesk.Busy: source desk unreachable ({n})")
        root.set_status(Status(StatusCode.ERROR, "story not published"))

    return genai.played(store, "newsroom-app", "front page story", play)


def test_steps_inside_a_parallel_group(store: Store) -> None:
    t = _story(store)
    trace = load_traces(store, "default", [t])[t]
    assert [s.step_id for s in trace.plan_steps] == STEPS
    checks = [a for a in trace.attempts if a.step_id == "FactCheck"]
    assert len(checks) == 5
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "FactCheck"

"""A loop seen at two levels, from real SDK spans stored and analysed for real: a coordinator
hands each attempt of a plan step to its worker through a tool of its own, and that tool fails
whenever the worker's attempt fails. The step's loop and the coordinator's failing calls are one
loop: one finding, at the step, with the calls that wrapped its attempts as evidence."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import planscope
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from planscope import Plan, PlanStep
from planscope import semconv as A
from planscope_analyzer import Analyzer
from planscope_collector.storage import Store

pytestmark = pytest.mark.integration


class SourceUnreachable(Exception):
    """The wire service does not answer."""


@planscope.tool(effect="read", resource="wire:stories")
def pull_wire(slug: str) -> str:
    raise SourceUnreachable(f"wire service timed out on {slug}")


@planscope.tool(effect="write", resource="cms:drafts")
def save_draft(slug: str) -> str:
    return f"draft {slug}"


@planscope.planner
def make_plan(objective: str) -> Plan:
    steps = [
        PlanStep("fetch", "pull the wire story", tool="pull_wire", produces=["story"]),
        PlanStep("draft", "save a draft", tool="save_draft", depends_on=["fetch"]),
    ]
    return Plan(steps, id="desk-41", objective=objective)


@planscope.step(executor="reporter")
def report(step: PlanStep, context: dict[str, Any]) -> None:
    if step.id == "fetch":
        context["story"] = pull_wire("harbour-strike")
    else:
        save_draft("harbour-strike")


@planscope.tool(effect="write", resource="desk:assignments")
def assign(step: PlanStep, context: dict[str, Any]) -> None:
    """The editor's delegation tool: it fails when the reporter's attempt fails."""
    report(step, context)


@planscope.run("news-desk")
def news_desk(objective: str) -> None:
    plan = make_plan(objective)
    context: dict[str, Any] = {}
    for step in plan.topological_order():
        for _ in range(4):  # the editor re-assigns a failed step
            with contextlib.suppress(SourceUnreachable):
                assign(step, context)
                break
        else:
            raise RuntimeError(f"gave up on {step.id}")


def test_a_delegation_tool_failing_with_each_attempt_is_the_steps_loop(
    store: Store, exporter: InMemorySpanExporter, store_spans: Callable[..., Any]
) -> None:
    with contextlib.suppress(RuntimeError):
        news_desk("cover the harbour strike")
    (root,) = [s for s in exporter.get_finished_spans() if s.parent is None]
    assert root.context is not None
    trace_id = format(root.context.trace_id, "032x")
    calls = {
        format(s.context.span_id, "016x")
        for s in exporter.get_finished_spans()
        if s.context and s.name.endswith("assign")
    }
    store_spans()
    found = Analyzer(store).analyze("default", [trace_id], write=False).findings
    loops = [f for f in found if f.kind == A.FINDING_RUNAWAY_LOOP]
    # one loop, one finding: at the step, not again at the coordinator with no step
    (loop,) = loops
    assert (loop.step_id, loop.component, loop.detail["attempts"]) == ("fetch", "pull_wire", 4)
    assert loop.detail["wrapped_by"]["tool"] == "assign"
    assert loop.detail["wrapped_by"]["calls"] == 4
    assert "inside a failed call of tool 'assign'" in loop.explanation
    assert len(calls) == 4 and calls <= set(loop.evidence)

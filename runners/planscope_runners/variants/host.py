"""A host agent with per-application agents, in the UFO2 style.

The host agent (the planner model) decomposes the request into sub-tasks and routes each to
the application agent whose tools can do it (``planscope_runners._apps``: a config store, a
service registry, a release manager, ...). Every routing is an ``agent.handoff`` span, a child
of the run that holds the receiving agent's step attempts, with the sender, the receiver, the
receiver's tool set and the tools the sub-task calls for. An application agent sees only its
own tools (a call outside them fails the attempt) and may propose several tool calls in one
model call (a multi-action step): they run in order, each tool span carries its position in the
batch, and a failure discards the rest of the batch (an event on the step span). When a
sub-task fails permanently the host re-plans the rest of the request once
(``BUDGET.max_replans``) and routes it again.

Two fault knobs act here: ``misroute`` (the host's routing table sends the target's sub-task
to an application agent without the tools for it, in every plan it writes: blame the host's
routing) and ``app_tool_failure`` (the application agent's tool refuses the target action for
good: blame that agent's execution).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace

import planscope
from planscope import PlanStep
from planscope import semconv as A

from .. import _prompts as prompts
from .._apps import Application, applications
from .._core import DEFAULT_BUDGET, Run, StepOutcome
from .._env import Tool
from .._ir import PlanDraft, parse_steps, to_draft

NAME = "host"
DESCRIPTION = "host agent routes sub-tasks to application agents (own tools, multi-action steps)"
HOST_AGENT = "host-agent"
BUDGET = replace(DEFAULT_BUDGET, max_replans=1)
EXECUTOR_TURNS = 8
"""Model calls an application agent may make on one sub-task (each may propose a batch)."""
MISROUTE = "misroute"
APP_TOOL_FAILURE = "app_tool_failure"


def run(r: Run) -> str | None:
    """Plan and route with the host agent, execute each sub-task with its application agent,
    re-plan the rest once when a sub-task fails.

    >>> # run_task("host", "ops", "ops-deploy-api")  # see planscope_runners.run_task
    """
    apps = applications(r.env.name, r.tools)
    by_agent = {a.agent: a for a in apps}
    tools = r.tools
    r.agent = HOST_AGENT

    def toolset(step: PlanStep) -> Mapping[str, Tool]:
        app = by_agent.get(step.executor or "")
        return {t: tools[t] for t in app.tools} if app is not None else {}

    r.executor_tools = toolset

    def plan(purpose: str, failure: str | None, completed: Sequence[str]) -> PlanDraft:
        def produce() -> PlanDraft:
            response = r.llm(
                "planner",
                purpose,
                prompts.host_messages(
                    r.task, apps, tools, r.task.facts, failure=failure, completed=completed
                ),
                json_output=True,
                hints=r.hints(apps=apps, failures=tuple(r.failures), completed=tuple(completed)),
            )
            return to_draft(parse_steps(response.content))

        return r.record_plan(produce, reason=failure)

    def handoff(step: PlanStep, draft: PlanDraft) -> StepOutcome:
        return _handoff(r, by_agent, step, draft)

    return r.execute_with_whole_replans(
        plan("host_plan", None, ()),
        replan=lambda failure, completed: plan("host_replan", failure, completed),
        run_step=handoff,
    )


def _handoff(
    r: Run, by_agent: Mapping[str, Application], step: PlanStep, draft: PlanDraft
) -> StepOutcome:
    """Hand one sub-task to its application agent inside an ``agent.handoff`` span."""
    app = by_agent.get(step.executor or "")
    needs = list(draft.tools.get(step.id, ()))
    attrs: dict[str, str | int] = {
        A.HANDOFF_FROM: HOST_AGENT,
        A.HANDOFF_TO: step.executor or "",
        A.HANDOFF_APP: app.name if app is not None else "",
        A.HANDOFF_TOOLS: json.dumps(list(app.tools) if app is not None else []),
        A.HANDOFF_NEEDS: json.dumps(needs),
        A.HANDOFF_SUBTASK: step.id,
        A.PLAN_ID: draft.plan.id,
        A.PLAN_VERSION: draft.plan.version,
    }
    covers = draft.covers.get(step.id, ())
    with planscope.start_span(A.SPAN_HANDOFF, attrs) as span:
        _note_misroute(r, step, covers, app)
        outcome = r.execute_step(step, draft, covers=covers)
        span.set_attribute(
            A.HANDOFF_STATUS, A.HANDOFF_COMPLETED if outcome.ok else A.HANDOFF_FAILED
        )
    return outcome


def _note_misroute(r: Run, step: PlanStep, covers: Sequence[str], app: Application | None) -> None:
    """Report the misroute fault as acted when the host handed its target to an agent
    without the target's tool (the label then blames the host's routing)."""
    fault = next((f for f in r.faults if f.knob == MISROUTE), None)
    if fault is None or fault.target not in covers:
        return
    tool = r.task.step(fault.target).tool
    if app is None or tool not in app.tools:
        r.injector.note(step.id, MISROUTE)

"""The prompts the runtime sends. Both model kinds read the same text (so token counts compare)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ._apps import Application
from ._env import Task, Tool
from ._models import Message

PLAN_FORMAT = (
    'Answer with JSON only: {"steps": [{"id": str, "description": str, "tool": str, '
    '"executor": str, "depends_on": [step ids], "requires": [context keys], "produces": '
    '[at most one key], "irreversible": bool, "inputs": {fact: value}, "writes": [resources]}]}. '
    "requires lists every fact and produced key the executor needs; inputs gives the values of "
    "the facts among them. Steps that write the same resource must not run in parallel."
)
SCRIPT_FORMAT = (
    'Answer with JSON only: {"version": 1, "steps": [{"id": str, "description": str, "tool": '
    'str, "args": {param: value}, "depends_on": [step ids], "requires": [keys], "produces": '
    '[at most one key], "irreversible": bool, "inputs": {}, "writes": [resources], "executor": '
    "str}]}. In args write literal values, or {$key} / {$key.field} for a value an earlier step "
    "produces. The engine rejects unknown tools, missing arguments and dangling references."
)
DECOMPOSE_FORMAT = (
    'Answer with JSON only: {"logic": "and" | "or", "steps": [{"id": str, "description": str, '
    '"tool": str, "depends_on": [ids], "requires": [keys], "produces": [keys], "inputs": {}}]}. '
    '"and": all sub-tasks must succeed, in order; "or": alternatives, the first success wins.'
)


def tool_catalog(tools: Mapping[str, Tool]) -> str:
    return "\n".join(
        f"- {t.name}({', '.join(f'{p}: {ty}' for p, ty in t.parameters.items())}): "
        f"{t.description} [effect: {t.effect}]"
        for t in tools.values()
    )


def planner_messages(
    task: Task,
    tools: Mapping[str, Tool],
    facts: Mapping[str, Any],
    *,
    script: bool = False,
    failure: str | None = None,
    completed: Sequence[str] = (),
    irreversible_done: Sequence[str] = (),
    scope: str | None = None,
) -> tuple[Message, ...]:
    """The planner's request: objective, known facts, tools, and for replans what happened."""
    system = (
        "You are the planner of a planner-executor agent. Break the objective into steps that "
        "executors carry out with the tools below, one tool call per step.\n"
        + (SCRIPT_FORMAT if script else PLAN_FORMAT)
    )
    lines = [
        f"Objective: {task.rendered_objective}",
        f"Known facts: {json.dumps(dict(facts), default=str)}",
        "Tools:",
        tool_catalog(tools),
    ]
    if failure:
        lines.append(f"The previous plan failed: {failure}")
    if completed:
        lines.append(f"Completed steps (keep their ids, do not redo): {', '.join(completed)}")
    if irreversible_done:
        lines.append(
            "Irreversible actions already taken (never repeat or undo them): "
            + ", ".join(irreversible_done)
        )
    if scope:
        lines.append(
            f"Replan only the sub-goal {scope!r}: return the steps that replace it; they must "
            "produce what it produced."
        )
    return (Message("system", system), Message("user", "\n".join(lines)))


HOST_FORMAT = (
    'Answer with JSON only: {"steps": [{"id": str, "description": str, "executor": '
    '"<application>-agent", "tools": [tools of that application], "depends_on": [sub-task ids], '
    '"requires": [context keys], "produces": [keys], "irreversible": bool, "inputs": {fact: '
    'value}, "writes": [resources]}]}. One sub-task per stretch of work inside one application; '
    "its agent may call several of its tools at once."
)


def host_messages(
    task: Task,
    apps: Sequence[Application],
    tools: Mapping[str, Tool],
    facts: Mapping[str, Any],
    *,
    failure: str | None = None,
    completed: Sequence[str] = (),
) -> tuple[Message, ...]:
    """The host agent's request: the objective, the facts and the application agents."""
    catalogue = "\n".join(
        f"{a.agent} (application {a.name}):\n"
        + tool_catalog({t: tools[t] for t in a.tools if t in tools})
        for a in apps
    )
    lines = [
        f"Request: {task.rendered_objective}",
        f"Known facts: {json.dumps(dict(facts), default=str)}",
        "Application agents and their tools:",
        catalogue,
    ]
    if failure:
        lines.append(f"The previous routing failed: {failure}")
    if completed:
        lines.append(f"Completed sub-tasks (keep their ids, do not redo): {', '.join(completed)}")
    system = (
        "You are the host agent. Decompose the request into sub-tasks and route each to the "
        "application agent whose tools can do it.\n" + HOST_FORMAT
    )
    return (Message("system", system), Message("user", "\n".join(lines)))


def executor_messages(
    step_id: str, description: str, tool: str | None, context: Mapping[str, Any]
) -> tuple[Message, ...]:
    """The executor's request: one step and only its scoped context."""
    return (
        Message(
            "system",
            "You are an executor. Carry out exactly the step below by calling a tool. Use only "
            "the values in the context; do not invent values.",
        ),
        Message(
            "user",
            f"Step {step_id}: {description}\nSuggested tool: {tool or 'any'}\n"
            f"Context: {json.dumps(dict(context), default=str)}",
        ),
    )


def assess_messages(description: str, outcomes: Sequence[str]) -> tuple[Message, ...]:
    """ADaPT's self-assessment request."""
    return (
        Message(
            "system",
            'Judge whether the sub-task was achieved. Answer JSON: {"success": bool, "reason": '
            "str}.",
        ),
        Message("user", f"Sub-task: {description}\nWhat happened:\n" + "\n".join(outcomes)),
    )


def decompose_messages(
    task: Task, tools: Mapping[str, Tool], node: str, description: str, failure: str, depth: int
) -> tuple[Message, ...]:
    """ADaPT's decomposition request for a failed sub-task."""
    return (
        Message(
            "system", "You are the planner. Decompose the failed sub-task.\n" + DECOMPOSE_FORMAT
        ),
        Message(
            "user",
            f"Objective: {task.rendered_objective}\nSub-task {node} (depth {depth}): "
            f"{description}\nWhy it failed: {failure}\nTools:\n{tool_catalog(tools)}",
        ),
    )


def react_messages(
    task: Task, facts: Mapping[str, Any], history: Sequence[Message]
) -> tuple[Message, ...]:
    """ReAct: the whole objective and the whole history, every iteration."""
    return (
        Message(
            "system",
            "You solve the objective step by step: think, call one tool, observe the result. "
            "When the objective is achieved, answer FINISH.",
        ),
        Message(
            "user",
            f"Objective: {task.rendered_objective}\nKnown facts: "
            f"{json.dumps(dict(facts), default=str)}",
        ),
        *history,
    )

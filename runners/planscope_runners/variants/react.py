"""ReAct, the baseline: one think-act-observe loop with the whole history in every prompt.

There is no plan; each iteration is a step span (``iter-N``, executor ``react``) holding the
model call and the tool call it chose. The run's ``max_attempts_per_run`` budget bounds the
number of iterations (a loop on a failing tool ends there).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import planscope
from planscope import RetryBudgetExceeded

from .._core import DEFAULT_BUDGET, Run
from .._errors import ToolError
from .._models import Message
from .._prompts import react_messages

NAME = "react"
DESCRIPTION = "baseline think-act-observe loop, full history as context, no plan"
BUDGET = replace(DEFAULT_BUDGET, max_attempts_per_run=30, max_replans=0)
EXECUTOR = "react"


def run(r: Run) -> str | None:
    """Loop until the model answers FINISH, the budget refuses an iteration or the cap."""
    messages: list[Message] = []
    history: list[dict[str, Any]] = []
    for i in range(1, r.options.max_iterations + 1):
        step_id = f"iter-{i}"
        prompt = react_messages(r.task, r.task.facts, messages)
        try:
            with planscope.start_step(step_id, executor=EXECUTOR, inputs={"iteration": i}) as span:
                r.count(step_attempts=1)
                span.record_context(
                    ["objective", "facts", "history"],
                    tokens=sum(len(m.content or "") for m in prompt) // 4,
                )
                response = r.llm(
                    "executor",
                    "react",
                    prompt,
                    tools=r.tools.values(),
                    hints=r.hints(history=tuple(history)),
                )
                if not response.tool_calls:
                    span.set_output(response.content)
                    return None
                call = response.tool_calls[0]
                messages.append(Message("assistant", response.content, (call,)))
                result = r.call_tool(step_id, call)
                span.set_output(result)
        except RetryBudgetExceeded as exc:
            return f"retry budget exceeded after {i - 1} iterations: {exc}"
        except ToolError as exc:
            history.append(
                {"tool": call.name, "args": dict(call.arguments), "ok": False, "result": str(exc)}
            )
            messages.append(Message("tool", f"error: {exc}", tool_call_id=call.id))
            continue
        history.append(
            {"tool": call.name, "args": dict(call.arguments), "ok": True, "result": result}
        )
        messages.append(Message("tool", json.dumps(result, default=str), tool_call_id=call.id))
    return f"no FINISH after {r.options.max_iterations} iterations"

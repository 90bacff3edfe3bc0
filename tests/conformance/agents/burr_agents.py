"""Burr (``apache-burr``) under Burr's own tracing: an ``OpenTelemetryBridge`` on a tracer of
the suite's provider, as each application's hook (a span per ``app.run()`` and per action, and
a span per ``@trace()``-decorated function called inside an action, its arguments and
``return`` as attributes; Burr sets OK on every function span).

A Burr state machine per scenario: a ``plan`` action asks the planner (the traced
``ask_planner``: the model's answer message, the plan a JSON list), then an ``execute_step``
action per plan step runs the executor's conversation (the traced ``ask_executor``: the
model's message) and the tools it asks for, each a traced function named after the tool. The
tools **return** their errors: the failing ``issue_refund`` gives back an Anthropic-shaped
error object (``{"type": "error", "error": {...}}``) and never raises, so its spans say OK; the
model calls it again until it gives up, then a ``give_up`` action raises (its span ERROR; the
run's root stays OK)."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from opentelemetry.sdk.trace import TracerProvider

from ..fake_openai import MODEL
from ._common import (
    EXECUTOR_PROMPT,
    OBJECTIVE,
    PLANNER_PROMPT,
    TOOL_SCHEMAS,
    ToolFailure,
    parse_plan,
    step_prompt,
    tools_for,
)


class GaveUp(RuntimeError):
    """The executor gave up on a step: the ``give_up`` action raises it."""


def run(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    from burr.core import ApplicationBuilder, State, action, when
    from burr.integrations.opentelemetry import OpenTelemetryBridge
    from burr.visibility import trace
    from openai import OpenAI

    client = OpenAI(base_url=base_url, api_key="test", max_retries=0)
    bridge = OpenTelemetryBridge(tracer=provider.get_tracer("burr.integrations.opentelemetry"))

    @trace(input_filterlist=["messages", "tools"])
    def ask_planner(objective: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        out = client.chat.completions.create(model=MODEL, messages=messages)  # type: ignore[arg-type]
        return out.choices[0].message.model_dump(exclude_none=True)

    @trace(input_filterlist=["messages", "tools"])
    def ask_executor(
        step: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> dict[str, Any]:
        out = client.chat.completions.create(model=MODEL, messages=messages, tools=tools)  # type: ignore[arg-type]
        return out.choices[0].message.model_dump(exclude_none=True)

    def tools(scenario: str) -> dict[str, Any]:
        fns = tools_for(scenario)

        def answer(name: str, order_id: str) -> dict[str, Any]:
            try:
                said = fns[name](order_id)
            except ToolFailure as e:  # the error as a value, as an HTTP API's client gives it
                return {"type": "error", "error": {"type": "api_error", "message": str(e)}}
            return json.loads(said) if said.startswith("{") else {"result": said}

        @trace()
        def lookup_order(order_id: str) -> dict[str, Any]:
            return answer("lookup_order", order_id)

        @trace()
        def issue_refund(order_id: str) -> dict[str, Any]:
            return answer("issue_refund", order_id)

        return {"lookup_order": lookup_order, "issue_refund": issue_refund}

    @action(reads=[], writes=["steps", "done"])
    def plan(state: State) -> State:
        messages = [
            {"role": "system", "content": PLANNER_PROMPT},
            {"role": "user", "content": OBJECTIVE},
        ]
        said = ask_planner(OBJECTIVE, messages)
        return state.update(steps=parse_plan(str(said["content"]).strip()), done=0)

    @action(reads=["steps", "done"], writes=["done", "route"])
    def execute_step(state: State, scenario: str) -> State:
        step = state["steps"][state["done"]]
        fns = tools(scenario)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": EXECUTOR_PROMPT},
            {"role": "user", "content": step_prompt(step)},
        ]
        while (msg := ask_executor(step["id"], messages, TOOL_SCHEMAS)).get("tool_calls"):
            messages.append(msg)
            for call in msg["tool_calls"]:
                fn = call["function"]
                result = fns[fn["name"]](**json.loads(fn["arguments"]))
                messages.append(
                    {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)}
                )
        if str(msg.get("content", "")).startswith("giving up"):
            return state.update(route="give_up")
        done = state["done"] + 1
        return state.update(done=done, route="next" if done < len(state["steps"]) else "end")

    @action(reads=[], writes=[])
    def finish(state: State) -> State:
        return state

    @action(reads=[], writes=[])
    def give_up(state: State) -> State:
        raise GaveUp("giving up: the executor could not do its step")

    for scenario in scenarios:
        app: Any = (
            ApplicationBuilder()
            .with_actions(
                plan=plan,
                execute_step=execute_step.bind(scenario=scenario),
                finish=finish,
                give_up=give_up,
            )
            .with_transitions(
                ("plan", "execute_step"),
                ("execute_step", "execute_step", when(route="next")),
                ("execute_step", "finish", when(route="end")),
                ("execute_step", "give_up", when(route="give_up")),
            )
            .with_state(route="")
            .with_entrypoint("plan")
            .with_hooks(bridge)
            .build()
        )
        with mark(scenario), contextlib.suppress(GaveUp):
            app.run(halt_after=["finish", "give_up"])

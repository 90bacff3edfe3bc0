"""Strands Agents (``strands-agents``, its ``OpenAIModel`` provider) under Strands' own tracing:
its tracer (scope ``strands.telemetry.tracer``) on the global tracer provider, which this
process gives the suite's; OpenTelemetry's threading instrumentation carries the context into
the thread each agent call runs in (as Strands' own telemetry setup turns it on).

The app's root span per scenario; a planner ``Agent`` answers the objective (its answer, the
plan, only in its spans' ``gen_ai.choice`` events), then each plan step is a call of an
executor ``Agent`` with the tools (``invoke_agent executor``, ``execute_event_loop_cycle``,
``chat``, ``execute_tool {tool}``, what was asked and answered and the tools' arguments in
events); a failed tool is Strands' ``Error: ...`` result, the model calls it again until it
gives up; the app fails its root span when a step gave up."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode

from ..fake_openai import MODEL
from ._common import (
    EXECUTOR_PROMPT,
    OBJECTIVE,
    PLANNER_PROMPT,
    parse_plan,
    step_prompt,
    tools_for,
)


def run(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    from opentelemetry import trace
    from opentelemetry.instrumentation.threading import ThreadingInstrumentor

    trace.set_tracer_provider(provider)  # Strands' tracer: the global provider
    ThreadingInstrumentor().instrument()
    from strands import Agent, tool
    from strands.models.openai import OpenAIModel

    model = OpenAIModel(
        client_args={"base_url": base_url, "api_key": "test", "max_retries": 0}, model_id=MODEL
    )
    tracer = provider.get_tracer("refund-agent")
    for scenario in scenarios:
        tools = [tool(f) for f in tools_for(scenario).values()]
        with mark(scenario), tracer.start_as_current_span("refund-agent") as root:
            planner = Agent(
                model=model, name="planner", system_prompt=PLANNER_PROMPT, callback_handler=None
            )
            for step in parse_plan(str(planner(OBJECTIVE)).strip()):
                executor = Agent(
                    model=model,
                    name="executor",
                    system_prompt=EXECUTOR_PROMPT,
                    tools=list(tools),
                    callback_handler=None,
                )
                answer = str(executor(step_prompt(step))).strip()
                if answer.startswith("giving up"):
                    root.set_status(Status(StatusCode.ERROR, answer))
                    break

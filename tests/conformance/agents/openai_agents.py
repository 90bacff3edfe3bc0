"""The OpenAI Agents SDK traced by OpenInference's openai-agents instrumentor: a planner agent,
then an executor agent run per step, in one SDK ``trace``. The model is the SDK's chat
completions model on our fake server. The instrumentor's ``exclusive_processor`` (its default)
replaces the SDK's own exporter to OpenAI, so nothing leaves the machine."""

from __future__ import annotations

import asyncio
from typing import Any

from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, trace
from openai import AsyncOpenAI
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.sdk.trace import TracerProvider

from ..fake_openai import MAX_TOOL_ATTEMPTS, MODEL
from ._common import (
    EXECUTOR_PROMPT,
    OBJECTIVE,
    PLANNER_PROMPT,
    lookup_order,
    make_issue_refund,
    parse_plan,
    step_prompt,
)


async def _flow(base_url: str, scenario: str) -> None:
    model = OpenAIChatCompletionsModel(
        model=MODEL, openai_client=AsyncOpenAI(base_url=base_url, api_key="test")
    )
    planner = Agent(name="planner", instructions=PLANNER_PROMPT, model=model)
    executor = Agent(
        name="executor",
        instructions=EXECUTOR_PROMPT,
        model=model,
        tools=[
            function_tool(lookup_order),
            function_tool(make_issue_refund(scenario), name_override="issue_refund"),
        ],
    )
    with trace("refund-agent"):
        plan = parse_plan((await Runner.run(planner, OBJECTIVE)).final_output)
        for step in plan:
            await Runner.run(executor, step_prompt(step), max_turns=MAX_TOOL_ATTEMPTS + 3)


def run(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    for scenario in scenarios:
        with mark(scenario):
            asyncio.run(_flow(base_url, scenario))

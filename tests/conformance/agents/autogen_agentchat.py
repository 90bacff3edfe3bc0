"""AutoGen AgentChat (``autogen-agentchat`` / ``autogen-ext[openai]``) under AutoGen's own
tracing: the ``SingleThreadedAgentRuntime(tracer_provider=...)``'s message spans (``autogen
process ...`` with the message's JSON) and autogen-core's GenAI spans (``invoke_agent {agent}``,
``execute_tool {tool}``) through the global tracer provider, which this process gives the
suite's provider. autogen-ext's model client records no span of its own.

The app's root span per scenario; on one runtime, a planner ``AssistantAgent`` answers the
objective (its reply, the plan, only in the runtime's messages), then each plan step is a task
for an executor ``AssistantAgent`` with the tools (a one-agent ``RoundRobinGroupChat`` per
task); a failed tool is AutoGen's ``Error: ...`` result, the model calls it again until it
gives up; the app fails its root span when a step gave up."""

from __future__ import annotations

import asyncio
from typing import Any
from warnings import catch_warnings, filterwarnings

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer

from ..fake_openai import MAX_TOOL_ATTEMPTS, MODEL
from ._common import (
    EXECUTOR_PROMPT,
    OBJECTIVE,
    PLANNER_PROMPT,
    parse_plan,
    step_prompt,
    tools_for,
)


async def _scenario(provider: TracerProvider, tracer: Tracer, base_url: str, scenario: str) -> None:
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.messages import TextMessage
    from autogen_agentchat.teams import RoundRobinGroupChat
    from autogen_core import SingleThreadedAgentRuntime
    from autogen_core.models import ModelInfo
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    info: ModelInfo = {"vision": False, "function_calling": True, "json_output": False,
            "family": "unknown", "structured_output": False}  # fmt: skip
    client = OpenAIChatCompletionClient(
        model=MODEL, base_url=base_url, api_key="test", model_info=info, max_retries=0
    )
    tools = tools_for(scenario)

    async def reply(agent: Any, task: str) -> str:
        team = RoundRobinGroupChat([agent], max_turns=1, runtime=runtime)
        final = (await team.run(task=task)).messages[-1]
        assert isinstance(final, TextMessage), final
        return final.content

    with tracer.start_as_current_span("refund-agent") as root:
        runtime = SingleThreadedAgentRuntime(tracer_provider=provider)
        runtime.start()
        try:
            planner = AssistantAgent("planner", client, system_message=PLANNER_PROMPT)
            for step in parse_plan(await reply(planner, OBJECTIVE)):
                executor = AssistantAgent(
                    "executor",
                    client,
                    tools=list(tools.values()),
                    system_message=EXECUTOR_PROMPT,
                    max_tool_iterations=MAX_TOOL_ATTEMPTS + 1,
                )
                answer = await reply(executor, step_prompt(step))
                if answer.startswith("giving up"):
                    root.set_status(Status(StatusCode.ERROR, answer))
                    break
        finally:
            await runtime.stop_when_idle()
            await client.close()


def run(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    from opentelemetry import trace

    trace.set_tracer_provider(provider)  # autogen-core's GenAI spans: the global provider
    tracer = provider.get_tracer("refund-agent")
    with catch_warnings():
        # the fake server's model name is not in autogen-ext's model map: a warning a call
        filterwarnings("ignore", "Resolved model mismatch", UserWarning)
        for scenario in scenarios:
            with mark(scenario):
                asyncio.run(_scenario(provider, tracer, base_url, scenario))

"""pydantic-ai's native OTel GenAI spans (``Agent.instrument_all(InstrumentationSettings(...))``): a
planner agent, then an executor agent run per step. The failing tool asks for a retry with
``ModelRetry`` (pydantic-ai's way), allowed up to five times. The two agents' runs sit under
one application span, as a pydantic-ai user groups them without logfire."""

from __future__ import annotations

import asyncio
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from ..fake_openai import MAX_TOOL_ATTEMPTS, MODEL
from ._common import (
    EXECUTOR_PROMPT,
    OBJECTIVE,
    PLANNER_PROMPT,
    ToolFailure,
    lookup_order,
    make_issue_refund,
    parse_plan,
    step_prompt,
)


async def _flow(provider: TracerProvider, base_url: str, scenario: str) -> None:
    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=base_url, api_key="test"))
    planner = Agent(model, name="planner", instructions=PLANNER_PROMPT)
    executor = Agent(model, name="executor", instructions=EXECUTOR_PROMPT)
    refund = make_issue_refund(scenario)

    @executor.tool_plain(name="lookup_order")
    def lookup(order_id: str) -> str:
        """Look up an order by its id."""
        return lookup_order(order_id)

    @executor.tool_plain(name="issue_refund", retries=MAX_TOOL_ATTEMPTS)
    def issue_refund(order_id: str) -> str:
        """Refund an order by its id."""
        try:
            return refund(order_id)
        except ToolFailure as exc:
            raise ModelRetry(str(exc)) from exc

    with provider.get_tracer("refund-app").start_as_current_span("refund-agent") as root:
        plan = parse_plan((await planner.run(OBJECTIVE)).output)
        failed = []
        for step in plan:
            answer = (await executor.run(step_prompt(step))).output
            if answer.startswith("giving up"):
                failed.append(step["id"])
        if failed:
            root.set_status(Status(StatusCode.ERROR, f"steps failed: {', '.join(failed)}"))


def run(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
    for scenario in scenarios:
        with mark(scenario):
            asyncio.run(_flow(provider, base_url, scenario))

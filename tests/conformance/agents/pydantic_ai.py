"""pydantic-ai's native OTel GenAI spans (``Agent.instrument_all(InstrumentationSettings(...))``): a
planner agent, then an executor agent run per step. The failing tool asks for a retry with
``ModelRetry`` (pydantic-ai's way), allowed up to five times. The two agents' runs sit under
one application span, as a pydantic-ai user groups them without logfire.

:func:`run_typed` is the same agent with a typed planner (``output_type=Plan``, pydantic-ai's
way to a structured answer): the model answers through the ``final_result`` output tool, so the
plan is in no answer text, only in the planner run's ``final_result``. It also opts in to the
newest data format (version 6: tool results in ``role='tool'`` messages) and to the standard
``gen_ai.usage.*`` names on agent-run spans (their usage is a sum of their calls')."""

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
    Plan,
    ToolFailure,
    lookup_order,
    make_issue_refund,
    parse_plan,
    step_prompt,
)


async def _flow(provider: TracerProvider, base_url: str, scenario: str, typed: bool) -> None:
    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=base_url, api_key="test"))
    output_type: type[Plan] | type[str] = Plan if typed else str
    planner = Agent(model, name="planner", instructions=PLANNER_PROMPT, output_type=output_type)
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
        output = (await planner.run(OBJECTIVE)).output
        plan = (
            [s.model_dump() for s in output.steps]
            if isinstance(output, Plan)
            else parse_plan(str(output))
        )
        failed = []
        for step in plan:
            answer = (await executor.run(step_prompt(step))).output
            if answer.startswith("giving up"):
                failed.append(step["id"])
        if failed:
            root.set_status(Status(StatusCode.ERROR, f"steps failed: {', '.join(failed)}"))


def run(
    provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any, typed: bool = False
) -> None:
    settings = (
        InstrumentationSettings(
            tracer_provider=provider, version=6, use_aggregated_usage_attribute_names=False
        )
        if typed
        else InstrumentationSettings(tracer_provider=provider)
    )
    Agent.instrument_all(settings)
    for scenario in scenarios:
        with mark(scenario):
            asyncio.run(_flow(provider, base_url, scenario, typed))


def run_typed(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    run(provider, base_url, scenarios, mark, typed=True)

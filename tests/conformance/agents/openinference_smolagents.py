"""smolagents traced by OpenInference's smolagents instrumentor: the planner is a call of the
smolagents model (``OpenAIServerModel.generate``), then a ``ToolCallingAgent`` run per step
(smolagents' ReAct loop: a CHAIN span per step of the loop, the model's calls, the tools and
the ``final_answer`` tool that ends the run). A failing tool's error goes back to the model as
an observation; the agent's run is capped at ``MAX_TOOL_ATTEMPTS + 3`` loop steps. The runs sit
under one application span, as a smolagents user groups them.

:func:`run_planning` is the same agent with smolagents' own planning turned on
(``planning_interval=1``): before each step of its loop the executor asks the model for a
free-text plan (a plain LLM call, no tools), which is no plan planscope reads."""

from __future__ import annotations

from typing import Any

from openinference.instrumentation.smolagents import SmolagentsInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from smolagents import ChatMessage, MessageRole, OpenAIServerModel, Tool, ToolCallingAgent

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


class OrderTool(Tool):  # type: ignore[misc]
    """One of the scenario's tools as a smolagents tool (``order_id`` in, text out)."""

    inputs = {"order_id": {"type": "string", "description": "The order's id."}}
    output_type = "string"

    def __init__(self, name: str, description: str, fn: Any) -> None:
        self.name, self.description, self._fn = name, description, fn
        super().__init__()

    def forward(self, order_id: str) -> str:
        return str(self._fn(order_id))


def _flow(provider: TracerProvider, base_url: str, scenario: str, planning: int | None) -> None:
    model = OpenAIServerModel(MODEL, api_base=base_url, api_key="test")
    tools = [
        OrderTool("lookup_order", "Look up an order by its id.", lookup_order),
        OrderTool("issue_refund", "Refund an order by its id.", make_issue_refund(scenario)),
    ]
    with provider.get_tracer("refund-app").start_as_current_span("refund-agent") as root:
        asked = [
            ChatMessage(role=role, content=[{"type": "text", "text": text}])
            for role, text in ((MessageRole.SYSTEM, PLANNER_PROMPT), (MessageRole.USER, OBJECTIVE))
        ]
        plan = parse_plan(str(model.generate(asked).content))
        failed = []
        for step in plan:
            executor = ToolCallingAgent(
                tools=tools,
                model=model,
                name="executor",
                instructions=EXECUTOR_PROMPT,
                max_steps=MAX_TOOL_ATTEMPTS + 3,
                planning_interval=planning,
                verbosity_level=-1,  # LogLevel.OFF: no console output
            )
            answer = str(executor.run(step_prompt(step)))
            if answer.startswith("giving up"):
                failed.append(step["id"])
        if failed:
            root.set_status(Status(StatusCode.ERROR, f"steps failed: {', '.join(failed)}"))


def run(
    provider: TracerProvider,
    base_url: str,
    scenarios: list[str],
    mark: Any,
    planning: int | None = None,
) -> None:
    SmolagentsInstrumentor().instrument(tracer_provider=provider)
    for scenario in scenarios:
        with mark(scenario):
            _flow(provider, base_url, scenario, planning)


def run_planning(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    run(provider, base_url, scenarios, mark, planning=1)

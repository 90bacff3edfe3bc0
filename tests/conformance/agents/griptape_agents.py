"""Griptape (``griptape``, its ``OpenAiChatPromptDriver``) under Griptape's own tracing: its
``OpenTelemetryObservabilityDriver`` builds a tracer provider of its own, whose one span
processor here relays to the suite's provider.

Griptape's spans (``main``, ``Agent.run()``, ``OpenAiChatPromptDriver.run()``,
``<Tool>.try_run()``, ...) carry only ``tags``, the status and ``exception`` events: no
prompt, answer, argument or token. What the work was is the app's own: its root span per
scenario, a ``refund-agent.plan`` span whose ``refund-agent.plan.text`` is the planner
``Agent``'s answer (the plan), then a ``refund-agent.step <id>`` span per plan step over an
executor ``Agent`` run with the tools (Griptape's tool ``lookup`` with activity ``order`` is
the model's ``lookup_order``); a failed tool is Griptape's error artifact, the model calls it
again until it gives up; the app fails its root span when a step gave up."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.trace import Status, StatusCode

from ..fake_openai import MODEL
from ._common import EXECUTOR_PROMPT, OBJECTIVE, PLANNER_PROMPT, parse_plan, step_prompt, tools_for


class _Relay(SpanProcessor):
    """Hands the spans of Griptape's own tracer provider to the suite's provider."""

    def __init__(self, target: TracerProvider):
        self.target = target._active_span_processor  # the SDK has no public getter

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        self.target.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        self.target.on_end(span)


def _tools(fns: dict[str, Callable[[str], str]]) -> list[Any]:
    """The scenario's tools as Griptape tools: ``lookup`` / ``order`` and ``issue`` / ``refund``
    (the model calls them ``lookup_order`` and ``issue_refund``)."""
    from griptape.artifacts import TextArtifact
    from griptape.tools import BaseTool
    from griptape.utils.decorators import activity
    from schema import Literal, Schema

    takes = {"schema": Schema({Literal("order_id", description="the order id"): str})}

    class Lookup(BaseTool):
        @activity(config={"description": "Look up an order by its id.", **takes})
        def order(self, order_id: str) -> TextArtifact:
            return TextArtifact(fns["lookup_order"](order_id))

    class Issue(BaseTool):
        @activity(config={"description": "Refund an order by its id.", **takes})
        def refund(self, order_id: str) -> TextArtifact:
            return TextArtifact(fns["issue_refund"](order_id))

    return [Lookup(name="lookup"), Issue(name="issue")]


def run(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    from griptape.drivers.observability.open_telemetry import OpenTelemetryObservabilityDriver
    from griptape.drivers.prompt.openai import OpenAiChatPromptDriver
    from griptape.observability import Observability
    from griptape.rules import Rule
    from griptape.structures import Agent
    from griptape.tokenizers import SimpleTokenizer

    driver = OpenAiChatPromptDriver(
        model=MODEL,
        base_url=base_url,
        api_key="test",
        tokenizer=SimpleTokenizer(
            characters_per_token=4, max_input_tokens=128000, max_output_tokens=4096
        ),
    )
    observability = OpenTelemetryObservabilityDriver(
        service_name="conformance-griptape-agents", span_processor=_Relay(provider)
    )
    tracer = provider.get_tracer("refund-agent")
    for scenario in scenarios:
        tools = _tools(tools_for(scenario))
        with (
            mark(scenario),
            tracer.start_as_current_span("refund-agent") as root,
            Observability(observability_driver=observability),
        ):
            with tracer.start_as_current_span("refund-agent.plan") as span:
                planner = Agent(prompt_driver=driver, rules=[Rule(PLANNER_PROMPT)])
                text = str(planner.run(OBJECTIVE).output.value).strip()
                span.set_attribute("refund-agent.plan.text", text)
            for step in parse_plan(text):
                with tracer.start_as_current_span(f"refund-agent.step {step['id']}") as span:
                    span.set_attribute("refund-agent.step.args", json.dumps({"order_id": "42"}))
                    executor = Agent(
                        prompt_driver=driver, tools=tools, rules=[Rule(EXECUTOR_PROMPT)]
                    )
                    answer = str(executor.run(step_prompt(step)).output.value).strip()
                    span.set_attribute("refund-agent.step.result", answer)
                if answer.startswith("giving up"):
                    root.set_status(Status(StatusCode.ERROR, answer))
                    break

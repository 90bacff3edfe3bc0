"""The Logfire SDK, as a Logfire user traces an agent: ``logfire.span`` with message templates
for the run (``refund {objective}``) and each step (``step {step_id}``), ``@logfire.instrument``
tool functions (template ``{tool} {order_id}``-style, the call's arguments as attributes listed
in ``logfire.json_schema``, ``record_return=True``; a failed call's span records the exception),
``logfire.instrument_openai`` for the model calls, and a ``logfire.error`` log (a zero-duration
span of type ``log``, level 17) inside the step or run that gave up. No ``planscope.*``
attribute anywhere.

Logfire builds its own tracer provider; its one additional span processor hands every span to
the suite's provider's processors (the provider has no public getter for them). Nothing is sent
to Logfire's service (``send_to_logfire=False``), nothing printed (``console=False``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

import logfire
from opentelemetry import context as otel_context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider

from ._common import tools_for
from ._openai_loop import no_chat_span, plan_and_execute


class _Relay(SpanProcessor):
    """Logfire's spans to another provider's span processors."""

    def __init__(self, target: SpanProcessor) -> None:
        self.target = target

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        self.target.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        self.target.on_end(span)


class LogfireSpans:
    chat = staticmethod(no_chat_span)

    def __init__(self, lf: logfire.Logfire) -> None:
        self.lf = lf

    @contextmanager
    def run(self, objective: str) -> Iterator[Any]:
        with self.lf.span("refund {objective}", objective=objective) as span:
            yield span

    @contextmanager
    def step(self, step: dict[str, str]) -> Iterator[Any]:
        with self.lf.span("step {step_id}", step_id=step["id"], task=step.get("task", "")) as span:
            yield span

    def tool(self, name: str, arguments: str) -> AbstractContextManager[Any]:
        return nullcontext()  # the instrumented tool function's own span

    def failed(self, span: Any, reason: str) -> None:
        # called inside the span that gave up: a Logfire user says so in an error log there
        self.lf.error("gave up: {reason}", reason=reason)


def run(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    from openai import OpenAI

    lf = logfire.configure(
        local=True,
        send_to_logfire=False,
        console=False,
        metrics=False,
        inspect_arguments=False,
        service_name="conformance-logfire-sdk",
        additional_span_processors=[_Relay(provider._active_span_processor)],
    )
    client = OpenAI(base_url=base_url, api_key="test")
    lf.instrument_openai(client)
    for scenario in scenarios:
        tools = tools_for(scenario)
        instrumented = {
            name: lf.instrument(f"{name} {{order_id}}", record_return=True)(tool)
            for name, tool in tools.items()
        }
        with mark(scenario):
            plan_and_execute(client, LogfireSpans(lf), scenario, instrumented)
    lf.force_flush()

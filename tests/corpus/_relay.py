"""The process's global tracer provider for frameworks that trace only through it (Semantic
Kernel's diagnostics, Microsoft Agent Framework's instrumentation, AutoGen's and Strands'
tracers, Google ADK's ``gcp.vertex.agent`` tracer, LangSmith's OpenTelemetry export, the OpenAI
instrumentor Traceloop.init turns on): a relay
that passes their spans to the provider of the play under way. And a local Logfire instance per
service whose spans go to the play's provider (``local_logfire``).

A process sets its global provider once; the corpus plays each batch on its own provider, so a
process that plays such an agent gives the global provider to the relay for good.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import logfire
from opentelemetry import context as otel_context
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.util.types import Attributes

RELAYED = (
    "semantic_kernel",
    "agent_framework",
    "autogen-core",
    "strands",
    "gcp.vertex.agent",
    "langsmith",
    # OpenLLMetry's OpenAI instrumentor as Traceloop.init turns it on (no tracer provider given:
    # the global one); harvest gives it a provider, so only the shoot play's spans come this way
    "opentelemetry.instrumentation.openai.v1",
    # LlamaIndex's native OpenTelemetry integration (the ferrier agent): its tracer is the
    # global provider's
    "llamaindex.opentelemetry",
)
"""Instrumentation scopes passed on; every other (the fake model server's own FastAPI spans)
is no part of the agents' traces."""


class _Relay(otel_trace.TracerProvider):
    target: otel_trace.TracerProvider = otel_trace.NoOpTracerProvider()

    def get_tracer(
        self,
        instrumenting_module_name: str,
        instrumenting_library_version: str | None = None,
        schema_url: str | None = None,
        attributes: Attributes | None = None,
    ) -> otel_trace.Tracer:
        if not instrumenting_module_name.startswith(RELAYED):
            return otel_trace.NoOpTracer()
        return _RelayTracer(instrumenting_module_name)


class _RelayTracer(otel_trace.Tracer):
    def __init__(self, name: str):
        self.name = name

    def start_span(self, *args: Any, **kwargs: Any) -> otel_trace.Span:
        return _Relay.target.get_tracer(self.name).start_span(*args, **kwargs)

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Any:
        return _Relay.target.get_tracer(self.name).start_as_current_span(*args, **kwargs)


@contextmanager
def global_provider(provider: otel_trace.TracerProvider) -> Iterator[None]:
    """Relay the framework's spans to ``provider`` for the block (their spans are dropped
    outside one); refuses when another global provider is already set.

    >>> from opentelemetry.sdk.trace import TracerProvider
    >>> with global_provider(TracerProvider()):  # doctest: +SKIP
    ...     type(otel_trace.get_tracer("agent_framework")).__name__
    '_RelayTracer'
    """
    current = otel_trace.get_tracer_provider()
    if isinstance(current, otel_trace.ProxyTracerProvider):  # none set yet
        otel_trace.set_tracer_provider(_Relay())
    elif not isinstance(current, _Relay):
        raise RuntimeError(
            f"the process's global tracer provider is already {current!r}: the framework's "
            "spans would go there, not to the play's provider (play it in its own process)"
        )
    _Relay.target = provider
    try:
        yield
    finally:
        _Relay.target = otel_trace.NoOpTracerProvider()


class _ToPlay(SpanProcessor):
    """Logfire's additional span processor: hands its spans to the play's provider's span
    processors while a play is under way; to nothing outside one."""

    def __init__(self) -> None:
        self.target: SpanProcessor | None = None

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        if self.target:
            self.target.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        if self.target:
            self.target.on_end(span)


_LOGFIRE: dict[str, tuple[logfire.Logfire, _ToPlay]] = {}


@contextmanager
def local_logfire(service_name: str, provider: TracerProvider) -> Iterator[logfire.Logfire]:
    """``service_name``'s Logfire instance (made once per process: local, nothing sent to
    Logfire's service, no console output, its one extra processor a relay), its spans handed to
    ``provider``'s processors for the block.

    >>> from opentelemetry.sdk.trace import TracerProvider
    >>> with local_logfire("corpus-doctest", TracerProvider()) as lf:  # doctest: +SKIP
    ...     lf.info("hello")
    """
    if service_name not in _LOGFIRE:
        relay = _ToPlay()
        instance = logfire.configure(
            local=True,
            send_to_logfire=False,
            console=False,
            metrics=False,
            inspect_arguments=False,
            service_name=service_name,
            environment="corpus",
            additional_span_processors=[relay],
        )
        _LOGFIRE[service_name] = (instance, relay)
    instance, relay = _LOGFIRE[service_name]
    # The SDK provider has no public getter for its processors; Logfire builds its own
    # provider, so the relay needs the play's processors themselves.
    relay.target = provider._active_span_processor
    try:
        yield instance
    finally:
        relay.target = None

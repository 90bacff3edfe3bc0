"""MLflow Tracing (the ``mlflow-tracing`` SDK): the agent's spans through
``mlflow.start_span(span_type=...)`` (``AGENT`` for the run and for each step, ``TOOL`` per tool
call, ``set_inputs`` / ``set_outputs``; a failed tool raises inside its span, so MLflow records
the exception event and the ``ERROR`` status) and its LLM calls as ``mlflow.openai.autolog()``
traces them (``CHAT_MODEL`` spans); no ``gen_ai.*`` attribute anywhere, every attribute value
JSON-encoded as MLflow writes them.

MLflow exports through OTLP as its docs tell a user to (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``):
its own tracer provider holds MLflow's OTLP span processor (to a loopback sink: no MLflow
server, no tracking store) and, after it, a relay that hands each span, as MLflow exported it,
to the suite's provider, whose exporter sends it to planscope."""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider

from ._openai_loop import no_chat_span, plan_and_execute


class _Sink(BaseHTTPRequestHandler):
    """The OTLP endpoint MLflow exports to: accepts every request and drops it."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Relay(SpanProcessor):
    """Hands each span MLflow's provider ended to the suite's provider's processors."""

    def __init__(self, target: TracerProvider) -> None:
        # the SDK has no public way to give a finished span to a provider's processors
        self.processor = target._active_span_processor

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        self.processor.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        self.processor.on_end(span)


class MlflowSpans:
    chat = staticmethod(no_chat_span)

    @contextmanager
    def run(self, objective: str) -> Iterator[Any]:
        import mlflow
        from mlflow.entities import SpanType

        with mlflow.start_span(name="refund-agent", span_type=SpanType.AGENT) as span:
            span.set_inputs({"objective": objective})
            yield span

    @contextmanager
    def step(self, step: dict[str, str]) -> Iterator[Any]:
        import mlflow
        from mlflow.entities import SpanType

        with mlflow.start_span(name=step["id"], span_type=SpanType.AGENT) as span:
            span.set_inputs(step)
            yield span

    @contextmanager
    def tool(self, name: str, arguments: str) -> Iterator[Any]:
        import mlflow
        from mlflow.entities import SpanType

        with mlflow.start_span(name=name, span_type=SpanType.TOOL) as span:
            span.set_inputs(json.loads(arguments))
            yield span

    def failed(self, span: Any, reason: str) -> None:
        span.set_outputs(reason)
        span.set_status("ERROR")


def run(provider: TracerProvider, base_url: str, scenarios: list[str], mark: Any) -> None:
    import os

    import mlflow
    import mlflow.openai
    from openai import OpenAI

    sink = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = (
        f"http://127.0.0.1:{sink.server_port}/v1/traces"
    )
    os.environ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] = "http/protobuf"
    os.environ["OTEL_SERVICE_NAME"] = "conformance-mlflow-tracing"  # MLflow's provider's resource
    # a tracking URI of its own (never written: OTLP is the only destination)
    tracking = tempfile.mkdtemp(prefix="conformance-mlflow-")
    atexit.register(shutil.rmtree, tracking, ignore_errors=True)  # empty: nothing else removes it
    mlflow.set_tracking_uri(Path(tracking).as_uri())
    mlflow.tracing.get_bridged_tracer_provider().add_span_processor(_Relay(provider))
    mlflow.openai.autolog(silent=True)
    client = OpenAI(base_url=base_url, api_key="test")
    for scenario in scenarios:
        with mark(scenario):
            plan_and_execute(client, MlflowSpans(), scenario)
    sink.shutdown()

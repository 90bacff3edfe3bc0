"""An agent that retries a tool returning an error envelope, traced by a real SDK into a
collector: ``python -m tests.collector._returning_sdks SOURCE URL RESULT``. SOURCE is
``langfuse`` (``@observe(as_type="tool")``; the Langfuse client's span processor on an
OTLP/HTTP exporter to the collector) or ``mlflow`` (``@mlflow.trace(span_type=SpanType.TOOL)``;
MLflow exporting through OTLP to the collector, as its docs tell a user to). The tool returns
RESULT (JSON) as a dict, or with ``--as-string`` as the JSON text; the agent calls it again
while it looks failed, at most ``MAX_TOOL_ATTEMPTS`` times. Its spans' service name is
``returning-SOURCE``.

A process per run keeps each SDK's global state (tracer providers, MLflow's tracking URI) out of
pytest, as the conformance suite does."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conformance.fake_openai import MAX_TOOL_ATTEMPTS


def _retrying(issue_refund: Callable[[str], Any]) -> None:
    """Call the tool until its answer carries no error field, at most MAX_TOOL_ATTEMPTS times."""
    for _ in range(MAX_TOOL_ATTEMPTS):
        answer = issue_refund("42")
        if "error" not in str(answer).lower():
            return


def _langfuse(url: str, tool: Callable[[str], Any]) -> None:
    from langfuse import Langfuse, observe
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    provider = TracerProvider(resource=Resource.create({"service.name": "returning-langfuse"}))
    langfuse = Langfuse(
        public_key="pk-lf-test",
        secret_key="sk-lf-test",
        base_url="http://127.0.0.1:9",  # never contacted: its span processor exports to url
        tracer_provider=provider,
        span_exporter=OTLPSpanExporter(endpoint=f"{url}/v1/traces"),
    )
    issue_refund = observe(name="issue_refund", as_type="tool")(tool)

    observe(name="refund-agent", as_type="agent")(_retrying)(issue_refund)
    langfuse.flush()


def _mlflow(url: str, tool: Callable[[str], Any]) -> None:
    os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = f"{url}/v1/traces"
    os.environ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] = "http/protobuf"
    os.environ["OTEL_SERVICE_NAME"] = "returning-mlflow"
    import mlflow
    from mlflow.entities import SpanType

    with tempfile.TemporaryDirectory(prefix="returning-mlflow-") as tracking:
        mlflow.set_tracking_uri(Path(tracking).as_uri())  # never written: OTLP only
        issue_refund = mlflow.trace(name="issue_refund", span_type=SpanType.TOOL)(tool)

        mlflow.trace(name="refund-agent", span_type=SpanType.AGENT)(_retrying)(issue_refund)
    # MLflow's tracer provider exports its batch when the process exits


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.collector._returning_sdks")
    parser.add_argument("source", choices=("langfuse", "mlflow"))
    parser.add_argument("url")
    parser.add_argument("result")
    parser.add_argument("--as-string", action="store_true")
    args = parser.parse_args()

    def issue_refund(order_id: str) -> Any:
        return args.result if args.as_string else dict(json.loads(args.result))

    run = _langfuse if args.source == "langfuse" else _mlflow
    run(args.url, issue_refund)


if __name__ == "__main__":
    main()

"""Analyzer fixtures: the real chDB store, traces from the real runtime and SDK.

Traces are produced by the reference runtime (``planscope_runners.run_task``) or the SDK onto an
in-memory exporter, encoded as OTLP protobuf, flattened by the collector's own flattener and
inserted through ``Store.insert_spans`` (so every materialized view fills the typed tables).
One store per test (chDB serves one data directory per process at a time); closed at teardown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import planscope
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from planscope_collector.storage import Store

from tests.storage._spans import otlp_to_rows, spans_ipc


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    provider = TracerProvider()
    exp = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exp))
    planscope.configure(tracer_provider=provider)
    yield exp
    provider.shutdown()


def otlp_rows(
    spans: Sequence[ReadableSpan], project: str = "default", strip: Sequence[str] = ()
) -> list[list[Any]]:
    """``otel_traces`` rows for SDK spans, as the collector would store them."""
    rows = otlp_to_rows(encode_spans(spans), project)
    for row in rows:
        for key in strip:
            row[11].pop(key, None)
    return rows


@pytest.fixture
def store_spans(store: Store, exporter: InMemorySpanExporter) -> Callable[..., list[list[Any]]]:
    """Insert the exporter's finished spans into the store (then clear the exporter)."""

    def insert(project: str = "default", strip: Sequence[str] = ()) -> list[list[Any]]:
        rows = otlp_rows(list(exporter.get_finished_spans()), project, strip)
        store.insert_spans(spans_ipc(rows))
        exporter.clear()
        return rows

    return insert

"""Runner test fixtures: planscope configured onto an in-memory exporter (as tests/sdk does)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import planscope
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from planscope import semconv as A


class Spans:
    """The finished spans of one test, with lookups by planscope kind and step id."""

    def __init__(self, exporter: InMemorySpanExporter) -> None:
        self.exporter = exporter

    def all(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def clear(self) -> None:
        self.exporter.clear()

    def of_kind(self, kind: str) -> list[ReadableSpan]:
        return sorted(
            (s for s in self.all() if (s.attributes or {}).get(A.SPAN_KIND) == kind),
            key=lambda s: s.start_time or 0,
        )

    def run(self) -> ReadableSpan:
        runs = self.of_kind(A.KIND_RUN)
        assert len(runs) == 1, [s.name for s in runs]
        return runs[0]

    def steps(self, step_id: str | None = None) -> list[ReadableSpan]:
        return [
            s for s in self.of_kind(A.KIND_STEP) if step_id is None or attr(s, A.STEP_ID) == step_id
        ]

    def plans(self) -> list[dict[str, Any]]:
        return [
            json.loads(str(attr(s, A.PLAN_JSON)))
            for s in self.of_kind(A.KIND_PLAN)
            if attr(s, A.PLAN_JSON) is not None
        ]


def attr(span: ReadableSpan, key: str) -> Any:
    return (span.attributes or {}).get(key)


@pytest.fixture
def spans() -> Iterator[Spans]:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    planscope.configure(tracer_provider=provider)
    yield Spans(exporter)
    provider.shutdown()

"""SDK test fixtures: a fresh OTel SDK TracerProvider with an in-memory exporter per test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import planscope
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from planscope import semconv as A


class Spans:
    """The finished spans of one test, with small lookup helpers."""

    def __init__(self, exporter: InMemorySpanExporter) -> None:
        self.exporter = exporter

    def all(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def of_kind(self, kind: str) -> list[ReadableSpan]:
        return [s for s in self.all() if s.attributes and s.attributes.get(A.SPAN_KIND) == kind]

    def named(self, name: str) -> ReadableSpan:
        matches = [s for s in self.all() if s.name == name]
        assert len(matches) == 1, f"expected one span {name!r}, got {[s.name for s in self.all()]}"
        return matches[0]

    def one(self, kind: str) -> ReadableSpan:
        matches = self.of_kind(kind)
        assert len(matches) == 1, f"expected one {kind} span, got {[s.name for s in self.all()]}"
        return matches[0]

    @staticmethod
    def attrs(span: ReadableSpan) -> dict[str, Any]:
        return dict(span.attributes or {})


@pytest.fixture
def provider() -> Iterator[TracerProvider]:
    tp = TracerProvider()
    yield tp
    tp.shutdown()


@pytest.fixture
def spans(provider: TracerProvider) -> Spans:
    """Configure planscope onto a fresh provider; returns the captured spans."""
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    planscope.configure(tracer_provider=provider)
    return Spans(exporter)

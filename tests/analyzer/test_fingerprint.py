"""One error fingerprint, end to end: the analyzer derives, from a stored span that lacks the
SDK's ``planscope.step.error_fingerprint`` (another SDK, an older one, an importer), exactly
the fingerprint the SDK would have written."""

from __future__ import annotations

import planscope
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_collector.storage import Store

from tests.analyzer.conftest import otlp_rows
from tests.sdk.test_fingerprints import MESSAGES
from tests.storage._spans import spans_ipc


def test_derived_fingerprint_equals_the_sdks(store: Store, exporter: InMemorySpanExporter) -> None:
    for message in MESSAGES:

        @planscope.step("fetch")
        def fetch(text: str = message) -> None:
            raise ValueError(text)

        with planscope.start_run("agent"), pytest.raises(ValueError):
            fetch()
    spans = list(exporter.get_finished_spans())
    written = {
        format(s.context.span_id, "016x"): s.attributes[A.STEP_ERROR_FINGERPRINT]
        for s in spans
        if s.attributes and A.STEP_ERROR_FINGERPRINT in s.attributes
    }
    assert len(set(written.values())) == len(MESSAGES)  # four different errors
    store.insert_spans(spans_ipc(otlp_rows(spans, strip=[A.STEP_ERROR_FINGERPRINT])))
    trace_ids = sorted({format(s.context.trace_id, "032x") for s in spans})
    traces = load_traces(store, "default", trace_ids)
    derived = {a.span_id: a.fingerprint for t in traces.values() for a in t.attempts}
    assert derived == written

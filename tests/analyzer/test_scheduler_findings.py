"""Findings on spans outside the typed tables (a central scheduler's queue waits and context
switches), on a fixed labelled corpus from the real runtime's scheduler variant.

The analyzer reads these spans from ``otel_traces``; what it finds must be what the labels say
(at step level) and must not depend on how the store holds the rows: the same corpus, inserted
in another order and in other parts, gives the same findings, evidence order and wasted time
included.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from planscope_analyzer import Analyzer
from planscope_collector.storage import Store
from planscope_runners import run_suite

from tests.analyzer.conftest import otlp_rows
from tests.storage._spans import spans_ipc

pytestmark = pytest.mark.integration

KINDS = ("scheduler_starvation", "context_lost")


@pytest.fixture
def corpus(store: Store) -> Iterator[tuple[Store, list[dict[str, Any]]]]:
    """Ten scheduler runs, each with one fault (seed 3), in two projects of one store: ``a`` in
    one insert in export order, ``b`` shuffled over five inserts (five parts)."""
    import planscope
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    planscope.configure(tracer_provider=provider)
    suite = run_suite(10, fault_rate=1, seed=3, variants=["scheduler"])
    spans = list(exporter.get_finished_spans())
    provider.shutdown()
    store.insert_spans(spans_ipc(otlp_rows(spans, "a")))
    shuffled = otlp_rows(spans, "b")
    random.Random(5).shuffle(shuffled)
    for i in range(5):
        store.insert_spans(spans_ipc(shuffled[i::5]))
    yield store, [r.label() for r in suite.runs]


def _findings(store: Store, project: str) -> list[dict[str, Any]]:
    found = Analyzer(store).analyze_window(project, 0, write=False).findings
    # wasted_ns unrounded: a sum of waits taken in another order differs in the last digits.
    return sorted(
        (
            {**{k: v for k, v in f.to_dict().items() if k != "project"}, "wasted_ns": f.wasted_ns}
            for f in found
        ),
        key=lambda d: (d["trace_id"], d["kind"], d["key"]),
    )


def test_scheduler_faults_are_found_where_labelled(
    corpus: tuple[Store, list[dict[str, Any]]],
) -> None:
    store, labels = corpus
    found = _findings(store, "a")
    expected = {
        (label["trace_id"], e["kind"], e["step_id"])
        for label in labels
        for e in label["expected_findings"]
        if e["kind"] in KINDS
    }
    assert {k for _, k, _ in expected} == set(KINDS), labels
    flagged = {(f["trace_id"], f["kind"], f["step_id"]) for f in found if f["kind"] in KINDS}
    assert flagged == expected  # each labelled fault at its step, nothing on the others
    starved = [f for f in found if f["kind"] == "scheduler_starvation"]
    assert all(f["evidence_span_ids"] and f["wasted_ns"] > 0 for f in starved)


def test_findings_do_not_depend_on_how_the_rows_are_stored(
    corpus: tuple[Store, list[dict[str, Any]]],
) -> None:
    store, _ = corpus
    in_order = _findings(store, "a")
    assert any(f["kind"] == "scheduler_starvation" for f in in_order)
    assert _findings(store, "b") == in_order

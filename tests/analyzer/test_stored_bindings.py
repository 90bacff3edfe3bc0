"""Stored bindings (migration 0035, ``planscope_analyzer._bindings``) on a real chDB store.

Framework traces of the corpus (a spent split) are played through their real instrumentation,
flattened by the collector's code and inserted; the analyzer binds them, stores the bindings of
the settled traces it reshaped, and later passes read them instead of binding again. What a
stored binding gives must be what a fresh bind gives; a new span, another binding version and
another project's row must all lead to a fresh bind.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from planscope_analyzer import Analyzer, load_traces
from planscope_analyzer._bindings import BINDING_NAMES, BINDING_VERSION, encode
from planscope_analyzer._model import Finding, TraceData
from planscope_collector.storage import Store

from tests.corpus import play, read_labels
from tests.storage._spans import make_span, new_span_id, otlp_to_rows, spans_ipc

pytestmark = pytest.mark.integration

AGENTS = ("restock", "release", "etl", "refund", "claims", "grants")
"""Agents of the corpus on plain OTel by hand, OpenInference, pydantic-ai and Logfire (whose logs
the loader folds into their spans): their runs, attempts and tool calls are all inferred."""


@pytest.fixture(scope="module")
def played() -> Iterator[list[ReadableSpan]]:
    """The spans of one faulty run of each of :data:`AGENTS` from spent splits (sealed-11; the
    Logfire agent's sealed-14)."""
    spent = ("sealed11", "sealed14")
    labels = [lab for lab in read_labels() if lab.split in spent and lab.kind != "healthy"]
    chosen = [next(lab for lab in labels if lab.agent == agent) for agent in AGENTS]
    provider, exporter = TracerProvider(), InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    play(chosen, provider)
    provider.shutdown()
    yield list(exporter.get_finished_spans())


def _insert(store: Store, spans: list[ReadableSpan], project: str) -> list[str]:
    rows = otlp_to_rows(encode_spans(spans), project)
    store.insert_spans(spans_ipc(rows))
    return sorted({r[1] for r in rows})


def _findings(findings: list[Finding]) -> list[dict[str, Any]]:
    return sorted((f.to_dict() for f in findings), key=lambda d: (d["trace_id"], d["key"]))


def _stored(store: Store, project: str) -> dict[str, int]:
    """Trace id → span count of the project's stored bindings (the newest row)."""
    rows = store.query(
        "SELECT TraceId AS t, SpanCount AS n FROM planscope_trace_bindings FINAL "
        "WHERE Project = {p:String}",
        {"p": project},
    )
    return {r["t"]: int(r["n"]) for r in rows}


def _fresh(t: TraceData) -> dict[str, Any]:
    return {k: v for k, v in dataclasses.asdict(t).items() if k != "_memo"}


def _typed(value: Any) -> Any:
    """``value`` with the type of every part beside it (``1 == 1.0 == True`` compare equal;
    a detector may still tell them apart)."""
    if isinstance(value, list | tuple):
        return type(value).__name__, [_typed(v) for v in value]
    if isinstance(value, dict):
        return "dict", sorted((k, _typed(v)) for k, v in value.items())
    if isinstance(value, frozenset):
        return "frozenset", sorted(value)
    return type(value).__name__, value


def test_a_stored_binding_gives_what_a_fresh_bind_gives(
    store: Store, played: list[ReadableSpan]
) -> None:
    ids = _insert(store, played, "default")
    fresh = load_traces(store, "default", ids)  # nothing stored yet: bound here
    first = Analyzer(store, settle_seconds=0).analyze_window("default", 0)
    stored = _stored(store, "default")
    assert set(stored) == set(ids)  # every framework trace was reshaped, and is stored
    assert stored == {i: fresh[i].span_count for i in ids}
    again = load_traces(store, "default", ids)
    assert {i: _fresh(t) for i, t in again.items()} == {i: _fresh(t) for i, t in fresh.items()}
    # decoded into the model's types, not only equal values (a float cost, a tuple of keys)
    assert _typed(list(map(_fresh, again.values()))) == _typed(list(map(_fresh, fresh.values())))
    assert any(t.raw and t.tools and t.llm_by_parent for t in again.values())
    second = Analyzer(store, settle_seconds=0).analyze_window("default", 0)
    assert first.findings and _findings(second.findings) == _findings(first.findings)
    by_id = Analyzer(store, settle_seconds=0).analyze("default", ids, write=False)
    assert _findings(by_id.findings) == _findings(first.findings)
    # the second pass read the stored rows: one whose model differs is what a load gives
    target = ids[0]
    changed = dataclasses.replace(fresh[target], tools=[], _memo={})
    _write_binding(store, "default", changed, encode(changed) or "", BINDING_VERSION)
    assert load_traces(store, "default", [target])[target].tools == []


def _write_binding(
    store: Store, project: str, t: TraceData, text: str, version: int, age_s: int = -1
) -> None:
    """A binding row for ``t``, written ``age_s`` seconds ago (-1: newer than any row the
    analyzer wrote)."""
    bound_at = time.time_ns() // 1000 - age_s * 10**6
    row = (project, t.trace_id, t.start_ns, t.end_ns, t.span_count, version, text, bound_at)
    store.insert_rows("planscope_trace_bindings", [row], BINDING_NAMES)


def test_a_trace_that_gets_a_span_after_it_was_bound_is_bound_again(
    store: Store, played: list[ReadableSpan]
) -> None:
    ids = _insert(store, played, "default")
    Analyzer(store, settle_seconds=0).analyze_window("default", 0)
    target = ids[0]
    before = load_traces(store, "default", [target])[target]
    root = next(s for s in played if s.parent is None and f"{s.context.trace_id:032x}" == target)
    late = new_span_id()
    store.insert_spans(
        spans_ipc(
            [
                make_span(
                    trace_id=target,
                    span_id=late,
                    parent=f"{root.context.span_id:016x}",
                    name="late work",
                    start_ns=before.end_ns - 1000,
                    duration_ns=6000,
                )
            ]
        )
    )
    after = load_traces(store, "default", [target])[target]
    assert after.span_count == before.span_count + 1
    assert late in {s.span_id for s in after.raw or ()}  # bound again, with the new span
    Analyzer(store, settle_seconds=0).analyze("default", [target])
    assert _stored(store, "default")[target] == before.span_count + 1


@pytest.mark.parametrize(
    ("version", "text"),
    [(BINDING_VERSION - 1, "not a binding"), (BINDING_VERSION, '[[["a"]], 1]')],
    ids=["older_version", "unreadable"],
)
def test_a_binding_of_an_older_version_or_unreadable_is_ignored_and_replaced(
    store: Store, played: list[ReadableSpan], version: int, text: str
) -> None:
    ids = _insert(store, played, "default")
    fresh = Analyzer(store).analyze("default", ids, write=False).findings
    index = load_traces(store, "default", ids)
    for t in index.values():  # rows that match each trace, unreadable if they were read
        _write_binding(store, "default", t, text, version, age_s=3600)
    assert all(t.runs for t in load_traces(store, "default", ids).values())
    result = Analyzer(store, settle_seconds=0).analyze("default", ids)
    assert _findings(result.findings) == _findings(fresh)
    versions = store.query(
        "SELECT DISTINCT BindingVersion AS v FROM planscope_trace_bindings FINAL "
        "WHERE Project = 'default'"
    )
    assert [int(r["v"]) for r in versions] == [BINDING_VERSION]


def test_a_binding_of_an_older_version_is_not_read_though_it_would_decode(
    store: Store, played: list[ReadableSpan]
) -> None:
    ids = _insert(store, played, "default")
    fresh = load_traces(store, "default", ids)
    for t in fresh.values():  # an older build's row that matches the trace: a run-less model
        empty = TraceData("default", t.trace_id, t.start_ns, t.end_ns, t.span_count)
        _write_binding(store, "default", t, encode(empty) or "", BINDING_VERSION - 1)
    again = load_traces(store, "default", ids)
    assert all(t.runs for t in again.values())
    assert {i: _fresh(t) for i, t in again.items()} == {i: _fresh(t) for i, t in fresh.items()}


def test_a_newer_builds_binding_is_neither_read_nor_replaced(
    store: Store, played: list[ReadableSpan]
) -> None:
    """A rolling upgrade: a newer analyzer build shares the store. This build binds the traces
    in memory (it cannot read the newer format) and leaves the newer rows alone, so the two
    builds do not replace each other's rows on every pass."""
    ids = _insert(store, played, "default")
    fresh = Analyzer(store).analyze("default", ids, write=False).findings
    for t in load_traces(store, "default", ids).values():
        _write_binding(store, "default", t, "a newer format", BINDING_VERSION + 1, age_s=3600)
    for _ in range(2):
        result = Analyzer(store, settle_seconds=0).analyze("default", ids)
        assert _findings(result.findings) == _findings(fresh)
    versions = store.query(
        "SELECT BindingVersion AS v, count() AS n FROM planscope_trace_bindings FINAL "
        "WHERE Project = 'default' GROUP BY v"
    )
    assert {int(r["v"]): int(r["n"]) for r in versions} == {BINDING_VERSION + 1: len(ids)}


def test_two_projects_bindings_never_mix(store: Store, played: list[ReadableSpan]) -> None:
    ids = _insert(store, played, "a")
    assert _insert(store, played, "b") == ids  # the same trace ids in both projects
    fresh = Analyzer(store).analyze("b", ids, write=False).findings
    # project a's rows match b's traces (span count, end) but hold another model
    for t in load_traces(store, "a", ids).values():
        empty = TraceData("a", t.trace_id, t.start_ns, t.end_ns, t.span_count)
        _write_binding(store, "a", t, encode(empty) or "", BINDING_VERSION)
    assert all(t.runs for t in load_traces(store, "b", ids).values())
    result = Analyzer(store, settle_seconds=0).analyze("b", ids)
    assert fresh and _findings(result.findings) == _findings(fresh)
    assert set(_stored(store, "b")) == set(ids)
    assert all(not t.runs for t in load_traces(store, "a", ids).values())
    assert all(t.runs for t in load_traces(store, "b", ids).values())

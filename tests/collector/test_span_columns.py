"""The writer's one path: SpanColumns -> Arrow IPC -> Store.insert_spans, which keeps the
dedup-token guarantee in otel_traces and every derived table and checks the columns."""

from __future__ import annotations

import os
import time

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from planscope_collector._errors import BadPayload
from planscope_collector._otlp import PROTOBUF, SpanColumns, parse_request
from planscope_collector.storage import TABLES, Store

from ._otlp_factory import kv, make_request, make_span

SPAN_TABLES = [t for t in TABLES if t != "planscope_ingest_batches"]


def _rich_request(trace_id: bytes | None = None) -> ExportTraceServiceRequest:
    """Every column filled: events, links, non-string and repeated attributes, two resources."""
    trace_id = trace_id or os.urandom(16)
    now = time.time_ns()
    run = make_span(
        trace_id,
        name="run",
        start=now,
        attributes={
            "planscope.span.kind": "run",
            "planscope.run.id": "r1",
            "i": 7,
            "b": False,
            "d": 1.5,
            "l": ["a", 2],
        },
    )
    run.attributes.append(kv("i", "last wins"))  # a repeated key: the last value wins
    run.trace_state = "k=v"
    run.kind = Span.SPAN_KIND_SERVER
    step = make_span(
        trace_id,
        parent=run.span_id,
        name="step",
        start=now + 10,
        attributes={"planscope.span.kind": "step", "planscope.step.id": "s1"},
        error=True,
    )
    step.status.message = "boom"
    event = step.events.add()
    event.time_unix_nano = now + 20
    event.name = "exception"
    event.attributes.extend([kv("exception.type", "ValueError"), kv("n", 3)])
    step.events.add(time_unix_nano=now + 30, name="retry")
    link = step.links.add(trace_id=os.urandom(16), span_id=os.urandom(8), trace_state="a=b")
    link.attributes.append(kv("why", "follows"))
    unended = make_span(trace_id, parent=run.span_id, name="open", start=now + 40)
    unended.end_time_unix_nano = 0
    request = make_request([run, step, unended], service="agent")
    other = ResourceSpans()
    other.resource.attributes.extend(
        [kv("service.name", "tool-svc"), kv("planscope.project", "p9")]
    )
    scope = ScopeSpans()
    scope.scope.name, scope.scope.version = "other", "2.0"
    scope.spans.append(make_span(trace_id, parent=step.span_id, name="tool", start=now + 50))
    other.scope_spans.append(scope)
    other.scope_spans.append(ScopeSpans())  # empty scope: no rows
    request.resource_spans.append(other)
    return request


def test_timestamps_beyond_datetime64_are_refused_at_ingest() -> None:
    span = make_span(start=(1 << 63) - 10, duration=100)
    with pytest.raises(BadPayload, match="beyond DateTime64"):
        parse_request(make_request([span]).SerializeToString(), PROTOBUF)
    span = make_span()
    span.events.add(time_unix_nano=1 << 63, name="late")
    with pytest.raises(BadPayload, match=r"events\[0\]"):
        parse_request(make_request([span]).SerializeToString(), PROTOBUF)


def _counts(store: Store) -> dict[str, int]:
    return {t: int(store.query(f"SELECT count() AS n FROM {t}")[0]["n"]) for t in SPAN_TABLES}


def test_arrow_insert_with_the_same_token_changes_no_table(store: Store) -> None:
    columns = SpanColumns()
    for _ in range(3):
        columns.add(_rich_request(), None)
    body = columns.to_ipc()
    store.insert_spans(body, dedup_token="spool:7")
    before = _counts(store)
    assert before["otel_traces"] == 12
    assert all(before[t] for t in ("planscope_runs", "planscope_trace_index")), before
    store.insert_spans(body, dedup_token="spool:7")  # replay after a crash
    assert _counts(store) == before
    store.insert_spans(body, dedup_token="spool:8")
    assert _counts(store)["otel_traces"] == 24

"""Issue #12, item 6: one span never stops a project's analysis or a trace's detail page.

``endTimeUnixNano = 2^63-1`` made the batch's query fail with DECIMAL_OVERFLOW, and a run budget
nested 100,000 deep made ``parse_json_object`` ("never raises") raise RecursionError: later runs
of that project got no findings, ``POST /api/analyze`` answered 503 with the store's text, and
``GET /api/traces/{id}`` was a 500.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from planscope import semconv as A
from planscope_analyzer import Analyzer
from planscope_analyzer._model import parse_json_object
from planscope_collector import BackgroundServer, CollectorSettings
from planscope_collector.storage import Store, StoreRejected
from planscope_runners import run_task
from planscope_runners.environments import get_task

from tests.collector._otlp_factory import make_request, make_span
from tests.conftest import wait_for_trace

PB = {"Content-Type": "application/x-protobuf"}
DEEP = "[" * 100_000 + "]" * 100_000


def _poison_request(trace_id: bytes) -> bytes:
    now = time.time_ns()
    run = make_span(
        trace_id=trace_id,
        name="run",
        start=now,
        attributes={A.SPAN_KIND: A.KIND_RUN, A.RUN_ID: "poison", A.RUN_BUDGET: DEEP},
    )
    run.end_time_unix_nano = (1 << 63) - 1
    plan = make_span(
        trace_id=trace_id,
        parent=run.span_id,
        name="plan",
        start=now,
        attributes={A.SPAN_KIND: A.KIND_PLAN, A.PLAN_JSON: '{"steps":' + DEEP + "}"},
    )
    return make_request([run, plan]).SerializeToString()


def test_parse_json_object_never_raises() -> None:
    assert parse_json_object(DEEP) == {}
    assert parse_json_object('{"a":' * 5000 + "1" + "}" * 5000) == {}
    assert parse_json_object('{"max_attempts_per_step": 3}') == {"max_attempts_per_step": 3}


@pytest.fixture
def server(data_dir: Path) -> Iterator[BackgroundServer]:
    settings = CollectorSettings(data_dir=data_dir, port=0, flush_interval=0.05)
    with BackgroundServer(settings) as s:
        yield s


def test_a_poison_trace_does_not_stop_analysis_or_its_detail_page(
    server: BackgroundServer, exporter: InMemorySpanExporter
) -> None:
    poison = os.urandom(16)
    r = httpx.post(f"{server.url}/v1/traces", content=_poison_request(poison), headers=PB)
    assert r.status_code == 200, r.text
    loop = run_task("plan_and_act", "ops", get_task("ops-deploy-api"), ["loop_same_error"])
    body = encode_spans(list(exporter.get_finished_spans())).SerializeToString()
    assert httpx.post(f"{server.url}/v1/traces", content=body, headers=PB).status_code == 200
    detail = wait_for_trace(server.url, poison.hex(), 2)
    wait_for_trace(server.url, loop.trace_id, 1)
    assert detail["span_count"] == 2, detail
    errors = [e for s in detail["spans"] for e in s.get("attribute_errors", [])]
    assert (
        f"{A.RUN_BUDGET}: not valid JSON" in errors and f"{A.PLAN_JSON}: not valid JSON" in errors
    )

    r = httpx.post(f"{server.url}/api/analyze", json={"since": 0})
    assert r.status_code == 200, r.text
    result = r.json()
    assert result["counts"].get("runaway_loop", 0) >= 1
    assert any(f["trace_id"] == loop.trace_id for f in result["findings"])
    # The findings of the poison trace itself (if any) are readable too.
    assert httpx.get(f"{server.url}/api/traces/{poison.hex()}/findings").status_code == 200


class _RefusesOneTrace:
    """The real store, refusing every read of span data that names one trace (as a store
    refuses a value it cannot compute): the fault is injected, the rest is the real engine."""

    def __init__(self, store: Store, trace_id: str) -> None:
        self.store = store
        self.trace_id = trace_id

    def _check(self, sql: str, parameters: Any) -> None:
        if self.trace_id in str(parameters) and "findings" not in sql:
            raise StoreRejected(
                f"Code: 407. DB::Exception: Decimal math overflow ({self.trace_id})"
            )

    def query(self, sql: str, parameters: Any = None) -> list[dict[str, Any]]:
        self._check(sql, parameters)
        return self.store.query(sql, parameters)

    def query_arrow(self, sql: str, parameters: Any = None) -> Any:
        self._check(sql, parameters)
        return self.store.query_arrow(sql, parameters)

    def command(self, sql: str, parameters: Any = None) -> None:
        self.store.command(sql, parameters)

    def insert_rows(self, table: str, rows: Any, names: Any) -> None:
        self.store.insert_rows(table, rows, names)

    def insert_arrow(self, table: str, data: Any) -> None:
        self.store.insert_arrow(table, data)


def test_a_trace_that_cannot_be_loaded_is_skipped_with_a_data_quality_finding(
    store: Store, store_spans: Callable[..., Any]
) -> None:
    loop = run_task("plan_and_act", "ops", get_task("ops-deploy-api"), ["loop_same_error"])
    bad = run_task("plan_and_act", "ops", get_task("ops-deploy-api"), ["loop_same_error"])
    store_spans()
    result = Analyzer(_RefusesOneTrace(store, bad.trace_id)).analyze(
        "default", [loop.trace_id, bad.trace_id]
    )
    assert result.traces == 2
    by_trace = {(f.trace_id, f.kind) for f in result.findings}
    assert (loop.trace_id, "runaway_loop") in by_trace
    (skipped,) = [f for f in result.findings if f.trace_id == bad.trace_id]
    assert skipped.kind == "data_quality" and skipped.detail["issue"] == "unloadable_trace"
    assert "Decimal" not in skipped.explanation  # the store's text stays in the log

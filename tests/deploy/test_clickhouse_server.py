"""The ClickHouse-server path, exercised whenever PLANSCOPE_TEST_CLICKHOUSE_URL points at one.

    PLANSCOPE_TEST_CLICKHOUSE_URL=http://default:@localhost:8123 pytest tests/deploy -k server

Each run migrates into a fresh database (``planscope_test_<random>``) and drops it afterwards.
With PLANSCOPE_TEST_CLICKHOUSE_CLUSTER=NAME as well, migrations run ``ON CLUSTER NAME``.
Without the URL every test here skips, with that reason in the report (``pytest -rs``).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import pytest
from planscope_collector.extensions import Leases
from planscope_collector.storage import TRACE_COLUMNS, Store, open_store

from tests.storage._spans import new_trace_id, planscope_trace, spans_ipc

URL = os.environ.get("PLANSCOPE_TEST_CLICKHOUSE_URL")
CLUSTER = os.environ.get("PLANSCOPE_TEST_CLICKHOUSE_CLUSTER") or None

pytestmark = pytest.mark.skipif(
    not URL, reason="PLANSCOPE_TEST_CLICKHOUSE_URL is not set: no ClickHouse server to test against"
)


@pytest.fixture(scope="module")
def server_store() -> Iterator[Store]:
    assert URL is not None
    database = f"planscope_test_{secrets.token_hex(4)}"
    store = open_store(URL, database=database)
    try:
        store.migrate(cluster=CLUSTER, ttl_days=30)
        yield store
    finally:
        on_cluster = f" ON CLUSTER `{CLUSTER}`" if CLUSTER else ""
        store.command(f"DROP DATABASE IF EXISTS `{database}`{on_cluster} SYNC")
        store.close()


def test_server_migrations_are_recorded_and_idempotent(server_store: Store) -> None:
    applied = server_store.applied_migrations()
    assert "0001_otel_traces" in applied and "0009_analysis_leases" in applied
    assert server_store.migrate(cluster=CLUSTER) == []
    assert server_store.ping()


def test_server_round_trip_through_store(server_store: Store) -> None:
    trace_id = new_trace_id()
    rows = planscope_trace(trace_id, project="server-test")
    server_store.insert_spans(spans_ipc(rows), dedup_token=f"server-test:{trace_id}")
    server_store.insert_spans(
        spans_ipc(rows), dedup_token=f"server-test:{trace_id}"
    )  # a replay: no-op
    spans = server_store.query(
        "SELECT SpanId FROM otel_traces WHERE Project = {p:String} AND TraceId = {t:String}",
        {"p": "server-test", "t": trace_id},
    )
    assert len(spans) == len(rows)
    for table in ("planscope_runs", "planscope_plans", "planscope_step_attempts"):
        got = server_store.query(
            f"SELECT count() AS n FROM {table} WHERE TraceId = {{t:String}}", {"t": trace_id}
        )
        assert got[0]["n"] > 0, table
    summary = server_store.query(
        "SELECT sum(SpanCount) AS spans FROM planscope_trace_index "
        "WHERE Project = {p:String} AND TraceId = {t:String}",
        {"p": "server-test", "t": trace_id},
    )
    assert summary[0]["spans"] == len(rows)


def test_server_lease_has_one_holder(server_store: Store) -> None:
    a, b = Leases(server_store, "replica-a"), Leases(server_store, "replica-b")
    lease = a.acquire("server-test", "bucket:1")
    assert lease is not None
    assert b.acquire("server-test", "bucket:1") is None
    a.release(lease)
    assert b.acquire("server-test", "bucket:1") is not None


def test_server_flattens_scalar_requests_as_python_does(server_store: Store) -> None:
    """The Protobuf path on a server: the data travels in the request body, read by
    ``input()``; the rows must be those the Python flattener writes into another database."""
    from planscope_collector._otlp import spans_ipc as request_ipc
    from planscope_collector.storage._protobuf import request_parts

    from tests.collector.test_protobuf_flatten import odd_request

    assert URL is not None
    requests = [(odd_request(11), ""), (odd_request(12), "key-project")]
    python = open_store(URL, database=f"planscope_test_{secrets.token_hex(4)}")
    try:
        python.migrate(ttl_days=30)
        for number, (request, project) in enumerate(requests):
            python.insert_spans(request_ipc(request, project or None), dedup_token=f"py/{number}")
        stream = b"".join(b"".join(request_parts(r.SerializeToString(), p)) for r, p in requests)
        server_store.insert_otlp_spans(stream, dedup_token="server-test:protobuf")
        server_store.insert_otlp_spans(stream, dedup_token="server-test:protobuf")  # a replay
        ids = sorted(
            {bytes([s, 1]).hex() * 8 for s in (11, 12)}
            | {bytes([s, 2]).hex() * 8 for s in (11, 12)}
        )
        columns = ", ".join(f"toString(`{c}`) AS `{c}`" for c in TRACE_COLUMNS)
        sql = (
            f"SELECT {columns} FROM otel_traces WHERE TraceId IN {{ids:Array(String)}} "
            "ORDER BY TraceId, SpanId, SpanName"
        )
        expected = python.query(sql, {"ids": ids})
        assert len(expected) == 14
        assert server_store.query(sql, {"ids": ids}) == expected
    finally:
        python.command(f"DROP DATABASE IF EXISTS `{python.database}` SYNC")
        python.close()

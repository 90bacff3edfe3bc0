"""The OTel Collector path: ``planscope migrate`` on a table the clickhouseexporter created, then
rows inserted the way the exporter inserts them (its column list, its value conventions, old and
new kind/status strings) are read by planscope's query API and analyzer loads."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from planscope_collector import BackgroundServer, CollectorSettings
from planscope_collector.storage import (
    EXPORTER_TRACE_COLUMNS,
    MigrationError,
    open_store,
    split_statements,
)

EXPORTER_DDL = Path(__file__).parent / "data" / "clickhouseexporter_otel_traces.sql"


def exporter_row(
    trace_id: str, span_id: str, parent: str, name: str, kind: str, status: str
) -> list[object]:
    """One row in the exporter's INSERT column order (no Project: the exporter has none)."""
    return [
        datetime.fromtimestamp(time.time(), UTC),
        trace_id,
        span_id,
        parent,
        "",
        name,
        kind,
        "exporter-svc",
        {"service.name": "exporter-svc"},
        "scope",
        "1.0",
        {"planscope.span.kind": "step", "planscope.step.id": "s1"} if "step" in name else {},
        1_000_000,
        status,
        "boom" if "ERROR" in status.upper() else "",
        [],
        [],
        [],
        [],
        [],
        [],
        [],
    ]


def test_migrate_adopts_an_exporter_table_and_its_rows_are_read(tmp_path: Path) -> None:
    dsn = f"chdb://{tmp_path / 'chdb'}"
    store = open_store(dsn)
    try:
        ddl = EXPORTER_DDL.read_text().replace("{database}", store.database)
        for statement in split_statements(ddl):
            store.command(statement)
    finally:
        store.close()

    migrate = subprocess.run(
        [sys.executable, "-m", "planscope", "migrate", "--clickhouse-url", dsn],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert migrate.returncode == 0, migrate.stderr
    assert "0001_otel_traces" in migrate.stdout and "0010_exporter_compat" in migrate.stdout

    settings = CollectorSettings(data_dir=tmp_path / "data", port=0, clickhouse_url=dsn)
    with BackgroundServer(settings) as server:
        store = server.app.state.collector.store
        assert store.migrate() == []  # idempotent on the adopted table too
        columns = {
            r["name"]: r["default_expression"]
            for r in store.query(
                "SELECT name, default_expression FROM system.columns WHERE table = 'otel_traces'"
            )
        }
        assert columns["Project"] == "'default'"
        indexes = {
            r["name"]
            for r in store.query(
                "SELECT name FROM system.data_skipping_indices WHERE table = 'otel_traces'"
            )
        }
        assert {"idx_trace_id", "idx_span_attr_key", "idx_span_attr_value"} <= indexes

        # The exporter keeps writing with its own column list: pre-v0.108 strings in one trace,
        # current ones in the other.
        old, new = os.urandom(16).hex(), os.urandom(16).hex()
        root_old, root_new = os.urandom(8).hex(), os.urandom(8).hex()
        rows = [
            exporter_row(old, root_old, "", "old-root", "SPAN_KIND_SERVER", "STATUS_CODE_UNSET"),
            exporter_row(
                old,
                os.urandom(8).hex(),
                root_old,
                "old-step",
                "SPAN_KIND_INTERNAL",
                "STATUS_CODE_ERROR",
            ),
            exporter_row(new, root_new, "", "new-root", "Server", "Unset"),
            exporter_row(new, os.urandom(8).hex(), root_new, "new-step", "Internal", "Error"),
        ]
        store.insert_rows("otel_traces", rows, EXPORTER_TRACE_COLUMNS)

        for trace_id in (old, new):
            detail = httpx.get(f"{server.url}/api/traces/{trace_id}").json()
            assert detail["span_count"] == 2
            seen = {
                s["name"].split("-")[1]: (s["span_kind"], s["status_code"], s["service"])
                for s in detail["spans"]
            }
            assert seen == {
                "root": ("Server", "Unset", "exporter-svc"),
                "step": ("Internal", "Error", "exporter-svc"),
            }
        listed = httpx.get(f"{server.url}/api/traces", params={"status": "error"}).json()
        assert {t["trace_id"] for t in listed["traces"]} == {old, new}
        steps = store.query("SELECT Status FROM planscope_step_attempts")
        assert [r["Status"] for r in steps] == ["error", "error"]


def test_the_exporters_json_schema_is_refused_with_a_reason(tmp_path: Path) -> None:
    store = open_store(f"chdb://{tmp_path / 'chdb'}")
    try:
        # exporter/clickhouseexporter/internal/sqltemplates/traces_json_table.sql (json: true),
        # the columns that matter here.
        store.command(
            "CREATE TABLE otel_traces (Timestamp DateTime64(9), TraceId String, "
            "SpanAttributes JSON) ENGINE = MergeTree ORDER BY Timestamp"
        )
        with pytest.raises(MigrationError, match="JSON schema"):
            store.migrate()
        assert store.query("SELECT count() AS n FROM otel_traces")[0]["n"] == 0
    finally:
        store.close()

"""Column lists of the tables the collector writes, in insert order."""

from __future__ import annotations

from typing import Final

#: The OpenTelemetry Collector clickhouseexporter's INSERT column list for ``otel_traces``.
EXPORTER_TRACE_COLUMNS: Final[tuple[str, ...]] = (
    "Timestamp",
    "TraceId",
    "SpanId",
    "ParentSpanId",
    "TraceState",
    "SpanName",
    "SpanKind",
    "ServiceName",
    "ResourceAttributes",
    "ScopeName",
    "ScopeVersion",
    "SpanAttributes",
    "Duration",
    "StatusCode",
    "StatusMessage",
    "Events.Timestamp",
    "Events.Name",
    "Events.Attributes",
    "Links.TraceId",
    "Links.SpanId",
    "Links.TraceState",
    "Links.Attributes",
)

#: What :meth:`Store.insert_spans` expects in every row: the exporter's columns, then ``Project``.
TRACE_COLUMNS: Final[tuple[str, ...]] = (*EXPORTER_TRACE_COLUMNS, "Project")

#: What :meth:`Store.insert_ingest_batches` expects in every row.
INGEST_BATCH_COLUMNS: Final[tuple[str, ...]] = ("Project", "BatchHash", "ReceivedAt", "SpanCount")

TRACES_TABLE: Final = "otel_traces"
INGEST_BATCHES_TABLE: Final = "planscope_ingest_batches"
MIGRATIONS_TABLE: Final = "schema_migrations"

#: Every table the migrations create (materialized views excluded), for tests and tooling.
TABLES: Final[tuple[str, ...]] = (
    "otel_traces",
    "otel_traces_trace_id_ts",
    "planscope_runs",
    "planscope_plans",
    "planscope_plan_steps",
    "planscope_step_attempts",
    "planscope_tool_calls",
    "planscope_llm_calls",
    "planscope_trace_index",
    "planscope_ingest_batches",
)

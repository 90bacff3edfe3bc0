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

#: Every table the migrations create that keeps rows (materialized views and the Null streams
#: planscope_plan_stream and planscope_plan_candidates excluded), for tests and tooling.
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


SPAN_STATUS_CODE_SQL: Final = "toString(SpanModelStatusCode)"
"""Over ``otel_traces``: a span's status as the span model means it (``Ok``, ``Error`` or
``Unset``; the exporter's old ``STATUS_CODE_*`` spelling read as what it means, and a span of
another convention that only recorded an exception ``Error``: migration 0033, and a tool call of
another convention that returned an error envelope: 0041, 0043), as its typed rows say it."""

SPAN_STATUS_MESSAGE_SQL: Final = (
    "multiIf(StatusMessage != '', StatusMessage, SpanModelExceptionMessage != '', "
    "SpanModelExceptionMessage, SpanModelReturnedMessage != '', SpanModelReturnedMessage, "
    "SpanModelLevelMessage != '', SpanModelLevelMessage, SpanModelErrorMessage)"
)
"""Over ``otel_traces``: a span's status message, or the exception's message where a span of
another convention only recorded an exception (migration 0033), or the error envelope's message
a tool call of another convention returned (0041, 0043), or a Langfuse observation's status message
(migration 0034), as its typed rows say it; else, for a failed span whose status has no
description (Logfire's openai-agents function spans), its last exception's message or Logfire's
``error`` attribute's text (0047)."""


def span_kind_sql(column: str = "SpanKind") -> str:
    """SQL for ``SpanKind`` as planscope means it: the clickhouseexporter before v0.108 wrote
    ``SPAN_KIND_INTERNAL`` where it (and planscope) now write ``Internal``.

    >>> span_kind_sql()
    "if(startsWith(SpanKind, 'SPAN_KIND_'), initcap(lower(substring(SpanKind, 11))), SpanKind)"
    """
    return (
        f"if(startsWith({column}, 'SPAN_KIND_'), initcap(lower(substring({column}, 11))), {column})"
    )


def status_code_sql(column: str = "StatusCode") -> str:
    """SQL for ``StatusCode`` as planscope means it (``STATUS_CODE_ERROR`` counts as ``Error``).

    >>> status_code_sql("s")
    "if(startsWith(s, 'STATUS_CODE_'), initcap(lower(substring(s, 13))), s)"
    """
    return _strip_prefix_sql(column, "STATUS_CODE_")


def _strip_prefix_sql(column: str, prefix: str) -> str:
    start = len(prefix) + 1  # SQL substring() counts from 1
    return (
        f"if(startsWith({column}, '{prefix}'), "
        f"initcap(lower(substring({column}, {start}))), {column})"
    )

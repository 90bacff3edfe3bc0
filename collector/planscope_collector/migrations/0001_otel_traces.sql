-- Raw spans: column-for-column the OpenTelemetry Collector contrib clickhouseexporter table
-- (exporter/clickhouseexporter/internal/sqltemplates/traces_table.sql), plus `Project` as the LAST
-- column with a default, so the exporter's own INSERT column list (which has no Project) still works
-- and its rows land in project 'default'.
--
-- ORDER BY starts with Project (every planscope query is scoped to one project), then the exporter's
-- (ServiceName, SpanName, time): this table serves "spans of service X / operation Y in a time
-- range" and raw attribute search. Per-trace reads use the trace-id -> time lookup below to prune
-- partitions and the TraceId bloom filter to skip granules; per-trace *analysis* reads the typed
-- tables of 0002, which are ordered by (Project, TraceId, time).
CREATE DATABASE IF NOT EXISTS {db} {on_cluster};

CREATE TABLE IF NOT EXISTS {db}.otel_traces {on_cluster} (
    Timestamp DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    SpanId String CODEC(ZSTD(1)),
    ParentSpanId String CODEC(ZSTD(1)),
    TraceState String CODEC(ZSTD(1)),
    SpanName LowCardinality(String) CODEC(ZSTD(1)),
    SpanKind LowCardinality(String) CODEC(ZSTD(1)),
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    ResourceAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    ScopeName String CODEC(ZSTD(1)),
    ScopeVersion String CODEC(ZSTD(1)),
    SpanAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    Duration UInt64 CODEC(T64, ZSTD(1)),
    StatusCode LowCardinality(String) CODEC(ZSTD(1)),
    StatusMessage String CODEC(ZSTD(1)),
    Events Nested (
        Timestamp DateTime64(9),
        Name LowCardinality(String),
        Attributes Map(LowCardinality(String), String)
    ) CODEC(ZSTD(1)),
    Links Nested (
        TraceId String,
        SpanId String,
        TraceState String,
        Attributes Map(LowCardinality(String), String)
    ) CODEC(ZSTD(1)),
    Project LowCardinality(String) DEFAULT 'default' CODEC(ZSTD(1)),
    -- The exporter also puts bloom filters on mapKeys/mapValues of both attribute maps. They are
    -- not part of the column contract and are left out: they cost ~7-10 % of the collector's CPU
    -- per span at insert (docs/benchmarks.md), and planscope reads attributes from the typed
    -- tables of 0002. Raw attribute search still works (scan within Project/ServiceName/time);
    -- a deployment that needs it can ALTER TABLE ... ADD INDEX + MATERIALIZE INDEX.
    INDEX idx_trace_id TraceId TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_duration Duration TYPE minmax GRANULARITY 1
) ENGINE = {engine:MergeTree}
PARTITION BY toDate(Timestamp)
ORDER BY (Project, ServiceName, SpanName, toDateTime(Timestamp))
TTL toDateTime(Timestamp) + toIntervalDay({ttl_days})
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1,
    non_replicated_deduplication_window = 10000;

-- Trace id -> time range lookup (the exporter's otel_traces_trace_id_ts + MV, plus Project).
-- ORDER BY (TraceId, Project): trace ids are random, so a project prefix buys no locality, while
-- TraceId first keeps the exporter-style lookup `WHERE TraceId = ?` (Grafana plugin, ClickStack)
-- as fast as planscope's `WHERE TraceId = ? AND Project = ?`.
CREATE TABLE IF NOT EXISTS {db}.otel_traces_trace_id_ts {on_cluster} (
    TraceId String CODEC(ZSTD(1)),
    Start SimpleAggregateFunction(min, DateTime) CODEC(ZSTD(1)),
    End SimpleAggregateFunction(max, DateTime) CODEC(ZSTD(1)),
    Project LowCardinality(String) DEFAULT 'default' CODEC(ZSTD(1))
) ENGINE = {engine:AggregatingMergeTree}
PARTITION BY toStartOfWeek(Start)
ORDER BY (TraceId, Project)
TTL Start + toIntervalDay({ttl_days})
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1,
    non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.otel_traces_trace_id_ts_mv {on_cluster}
TO {db}.otel_traces_trace_id_ts
AS SELECT
    TraceId,
    min(toDateTime(Timestamp)) AS Start,
    max(toDateTime(Timestamp)) AS End,
    Project
FROM {db}.otel_traces
WHERE TraceId != ''
GROUP BY Project, TraceId;

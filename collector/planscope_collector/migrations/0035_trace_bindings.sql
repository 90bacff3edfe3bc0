-- The analyzer's bound model of a settled trace (issue #13, "a full pass over 1M spans <= 10 s";
-- docs/storage.md, "Trace bindings"). A trace of another convention (a framework's spans) has
-- its runs, attempts, tool calls and plans inferred at read time from its raw spans, what its LLM
-- calls were asked and answered (planscope_collector.observed.bind, through the analyzer's
-- loader): ~6x the CPU per span of planscope's own traces, on every full pass. The analyzer
-- writes here, by one write path (planscope_analyzer._bindings), the result of binding a trace
-- whose model the loader reshaped and that had settled; a later pass reads it instead of binding
-- the trace again while the trace index still gives the trace the span count and end it had
-- (a new span re-binds it, the new row replaces the old).
--
-- The key columns are typed; Binding holds the bound rows (runs, plans, plan steps, attempts,
-- tool calls, LLM usage, raw span skeletons, scheduler spans, requests, folded spans) as JSON,
-- the values the detectors read, decoded by the analyzer alone. BindingVersion is the analyzer's
-- BINDING_VERSION: a row of another version is not read (and is replaced when the trace is bound
-- again). One row per (Project, TraceId); ReplacingMergeTree keeps the newest BoundAt, the reader
-- also picks the row whose SpanCount and TraceEnd match the index. Partitioned by month of the
-- trace's start, like findings: a trace's rows always land in one partition.
CREATE TABLE IF NOT EXISTS {db}.planscope_trace_bindings {on_cluster} (
    Project LowCardinality(String) CODEC(ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    TraceStart DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    TraceEnd DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    SpanCount UInt64 CODEC(T64, ZSTD(1)),
    BindingVersion UInt32 CODEC(T64, ZSTD(1)),
    Binding String CODEC(ZSTD(3)),
    BoundAt DateTime64(6) CODEC(Delta(8), ZSTD(1)),
    INDEX idx_trace_start TraceStart TYPE minmax GRANULARITY 1
) ENGINE = {engine:ReplacingMergeTree(BoundAt)}
PARTITION BY toYYYYMM(TraceStart)
ORDER BY (Project, TraceId)
TTL toDateTime(TraceStart) + toIntervalDay({ttl_days})
SETTINGS non_replicated_deduplication_window = 10000;

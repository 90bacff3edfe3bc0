-- Findings of the analyzer (planscope_analyzer) and its per-trace progress.
--
-- findings: one row per (project, trace, kind, finding key). The key is a stable hash of what
-- identifies the finding within its trace (kind, plan step, component, distinguishing detail),
-- so re-analysing a trace writes rows with the same sorting key and ReplacingMergeTree keeps
-- the newest (AnalyzedAt). A finding that a re-analysis no longer produces is written again
-- with IsDeleted = 1 (a tombstone). Read with FINAL (or argMax(..., AnalyzedAt)) and
-- IsDeleted = 0. Partitioned by month of the trace's start: a trace's rows always land in the
-- same partition, so replacement (which works within a partition) is exact.
CREATE TABLE IF NOT EXISTS {db}.findings {on_cluster} (
    Project LowCardinality(String) CODEC(ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    RunId String CODEC(ZSTD(1)),
    Kind LowCardinality(String) CODEC(ZSTD(1)),
    FindingKey String CODEC(ZSTD(1)),
    Severity LowCardinality(String) CODEC(ZSTD(1)),
    Component String CODEC(ZSTD(1)),
    StepId String CODEC(ZSTD(1)),
    EvidenceSpanIds Array(String) CODEC(ZSTD(1)),
    Explanation String CODEC(ZSTD(3)),
    WastedTokens UInt64 CODEC(T64, ZSTD(1)),
    WastedCostUsd Float64 CODEC(ZSTD(1)),
    WastedNs UInt64 CODEC(T64, ZSTD(1)),
    Detail String CODEC(ZSTD(3)),
    DetectorVersion LowCardinality(String) CODEC(ZSTD(1)),
    TraceStart DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    AnalyzedAt DateTime64(6) CODEC(Delta(8), ZSTD(1)),
    IsDeleted UInt8,
    INDEX idx_kind Kind TYPE set(64) GRANULARITY 4,
    INDEX idx_trace_start TraceStart TYPE minmax GRANULARITY 1
) ENGINE = {engine:ReplacingMergeTree(AnalyzedAt, IsDeleted)}
PARTITION BY toYYYYMM(TraceStart)
ORDER BY (Project, TraceId, Kind, FindingKey)
TTL toDateTime(TraceStart) + toIntervalDay({ttl_days})
SETTINGS non_replicated_deduplication_window = 10000;

-- analysis_progress: when each trace was last analysed and how many spans it had then; an
-- incremental pass skips traces whose span count has not changed since.
CREATE TABLE IF NOT EXISTS {db}.analysis_progress {on_cluster} (
    Project LowCardinality(String) CODEC(ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    TraceStart DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    SpanCount UInt64 CODEC(T64, ZSTD(1)),
    FindingCount UInt32 CODEC(T64, ZSTD(1)),
    AnalyzerVersion LowCardinality(String) CODEC(ZSTD(1)),
    AnalyzedAt DateTime64(6) CODEC(Delta(8), ZSTD(1))
) ENGINE = {engine:ReplacingMergeTree(AnalyzedAt)}
PARTITION BY toYYYYMM(TraceStart)
ORDER BY (Project, TraceId)
TTL toDateTime(TraceStart) + toIntervalDay({ttl_days})
SETTINGS non_replicated_deduplication_window = 10000;

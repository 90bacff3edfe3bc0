-- Alert rules and alert events (planscope_analyzer.alerts; docs/alerts.md).
--
-- alert_rules: every version of every rule is a row, so edits are history. ORDER BY includes
-- Version, so ReplacingMergeTree only collapses a re-inserted copy of the same version (a retried
-- write), never older versions. The current rule is the row with the highest Version; a delete is
-- a new version with Deleted = 1. Read: argMax(..., Version) GROUP BY RuleId.
-- Spec is the validated rule as JSON (the pydantic model in alerts/_rules.py); Source says who
-- wrote the version: api, cli or file (the rules file owns the rules it declares).
CREATE TABLE IF NOT EXISTS {db}.alert_rules {on_cluster} (
    Project LowCardinality(String) CODEC(ZSTD(1)),
    RuleId String CODEC(ZSTD(1)),
    Version UInt64 CODEC(T64, ZSTD(1)),
    Kind LowCardinality(String) CODEC(ZSTD(1)),
    Name String CODEC(ZSTD(1)),
    Spec String CODEC(ZSTD(3)),
    Source LowCardinality(String) CODEC(ZSTD(1)),
    Deleted UInt8,
    UpdatedAt DateTime64(3) CODEC(Delta(8), ZSTD(1))
) ENGINE = {engine:ReplacingMergeTree(UpdatedAt)}
ORDER BY (Project, RuleId, Version)
SETTINGS non_replicated_deduplication_window = 10000;

-- alert_events: one row per state change of a rule (firing / resolved), with its evidence and
-- its delivery. Delivery progress re-inserts the same event (same key) with a newer UpdatedAt, so
-- read with FINAL (or argMax(..., UpdatedAt)). DeliveryState: pending (not yet delivered to every
-- channel; retried, also after a restart), delivered, suppressed (cooldown), failed (gave up).
-- Deliveries is JSON: per channel {channel, state, attempts, last_error, delivered_at}.
CREATE TABLE IF NOT EXISTS {db}.alert_events {on_cluster} (
    Project LowCardinality(String) CODEC(ZSTD(1)),
    RuleId String CODEC(ZSTD(1)),
    RuleVersion UInt64 CODEC(T64, ZSTD(1)),
    EventId String CODEC(ZSTD(1)),
    State LowCardinality(String) CODEC(ZSTD(1)),
    At DateTime64(3) CODEC(Delta(8), ZSTD(1)),
    Value Float64 CODEC(ZSTD(1)),
    Threshold Float64 CODEC(ZSTD(1)),
    Summary String CODEC(ZSTD(3)),
    Evidence String CODEC(ZSTD(3)),
    Link String CODEC(ZSTD(1)),
    DeliveryState LowCardinality(String) CODEC(ZSTD(1)),
    Attempts UInt32 CODEC(T64, ZSTD(1)),
    LastError String CODEC(ZSTD(3)),
    NextAttemptAt DateTime64(3) CODEC(Delta(8), ZSTD(1)),
    Deliveries String CODEC(ZSTD(3)),
    UpdatedAt DateTime64(3) CODEC(Delta(8), ZSTD(1)),
    INDEX idx_delivery DeliveryState TYPE set(8) GRANULARITY 1
) ENGINE = {engine:ReplacingMergeTree(UpdatedAt)}
PARTITION BY toYYYYMM(At)
ORDER BY (Project, RuleId, At, EventId)
TTL toDateTime(At) + toIntervalDay({ttl_days})
SETTINGS non_replicated_deduplication_window = 10000;

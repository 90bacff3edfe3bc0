-- Content hashes of accepted ingest requests, so the collector can drop a client's re-delivery of a
-- batch it already accepted (OTLP exporters retry on timeouts even when the first try succeeded).
-- The collector loads recent hashes at start (Store.known_batch_hashes) and checks new requests in
-- memory; the hash covers the project, so one project's batch never masks another's.
-- 7-day TTL: longer than any client retry window; a fixed value, not the span retention.
CREATE TABLE IF NOT EXISTS {db}.planscope_ingest_batches {on_cluster} (
    Project LowCardinality(String) CODEC(ZSTD(1)),
    BatchHash String CODEC(ZSTD(1)),
    ReceivedAt DateTime64(3) CODEC(Delta(8), ZSTD(1)),
    SpanCount UInt32 CODEC(T64, ZSTD(1))
) ENGINE = {engine:MergeTree}
PARTITION BY toDate(ReceivedAt)
ORDER BY (ReceivedAt, BatchHash)
TTL toDateTime(ReceivedAt) + toIntervalDay(7)
SETTINGS ttl_only_drop_parts = 1, non_replicated_deduplication_window = 10000;

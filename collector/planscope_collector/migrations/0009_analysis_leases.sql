-- Analysis leases: which collector replica analyses which unit of work (see
-- planscope_collector/_lease.py and docs/deploy.md, "Analysis runs once").
--
-- A lease is a sequence of generations per (Project, LeaseKey). A claim of generation G is
-- inserted with insert_deduplication_token 'lease:<digest of project+key>:G', so only the first
-- claim of G is ever stored (the dedup log on one node, Keeper block ids on a replicated table:
-- both are atomic). Every contender then reads back and agrees on the winner: the row of the
-- highest generation with the earliest ClaimedAt, then the smallest Holder (the tie-break for a
-- straggler claim beyond the dedup window). The holder renews (Revision + 1, new ExpiresAt),
-- releases (ExpiresAt = now) or completes (Done = 1) by inserting more rows under its own
-- (Generation, Holder): ReplacingMergeTree(Revision) keeps the newest of them; read with FINAL.
--
-- All times come from the server clock at insert (DEFAULT now64), never from replicas' clocks.
-- No partitions: the dedup block id includes the partition, so every claim of one key must land
-- in the same one; the table stays small (one row per holder per generation, TTL below).
-- Sharded by (Project, LeaseKey) in a cluster: all generations of a key meet on one shard.
CREATE TABLE IF NOT EXISTS {db}.planscope_analysis_leases {on_cluster} (
    Project LowCardinality(String) CODEC(ZSTD(1)),
    LeaseKey String CODEC(ZSTD(1)),
    Generation UInt64,
    Holder String CODEC(ZSTD(1)),
    Revision UInt32,
    TtlMs UInt32,
    Done UInt8 DEFAULT 0,
    ClaimedAt DateTime64(6) DEFAULT now64(6) CODEC(Delta(8), ZSTD(1)),
    UpdatedAt DateTime64(6) DEFAULT now64(6) CODEC(Delta(8), ZSTD(1)),
    ExpiresAt DateTime64(6) DEFAULT UpdatedAt + toIntervalMillisecond(TtlMs)
        CODEC(Delta(8), ZSTD(1))
) ENGINE = {engine:ReplacingMergeTree(Revision)}
ORDER BY (Project, LeaseKey, Generation, Holder)
TTL toDateTime(UpdatedAt) + toIntervalDay({ttl_days}) + toIntervalDay(1)
SETTINGS non_replicated_deduplication_window = 10000;

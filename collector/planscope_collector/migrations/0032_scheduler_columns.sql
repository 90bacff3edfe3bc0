-- The scheduler attributes the analyzer reads, one column each (issue #13).
--
-- The analyzer's LOAD_RAW read the ten planscope.scheduler.* attributes of a batch's scheduler
-- spans as lookups into 0022's SchedulerAttributes map: reading the map column and looking
-- each key up in every selected row. As columns the read costs 10-20% less (a full pass over
-- 1M spans; docs/benchmarks-log.md, 2026-12-04 "under 10 CPU s"), and inserts no measurably
-- more. They are MATERIALIZED columns now, computed
-- once per span at insert from that map (empty on every span but a scheduler.queue or
-- scheduler.context_switch span, so the lookups are cheap and the columns take almost no
-- room). Types are those LOAD_RAW returned: strings ('' when unset), the token counts as
-- Int64 (0 when unset or not a number), the overtake count as Nullable(Int64) (NULL when
-- unset: "the scheduler did not say" is not "nobody overtook").
--
-- Existing stores: rows stored before this migration read the columns from their expressions
-- (the map, as before) until a merge writes them; the values are the same either way. SELECT *
-- returns none of them, so the exporter's readers see the table they expect.

ALTER TABLE {db}.otel_traces {on_cluster}
    ADD COLUMN IF NOT EXISTS SchedulerId String MATERIALIZED
        SchedulerAttributes['planscope.scheduler.id'] CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS SchedulerPolicy String MATERIALIZED
        SchedulerAttributes['planscope.scheduler.policy'] CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS SchedulerRequester String MATERIALIZED
        SchedulerAttributes['planscope.scheduler.requester'] CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS SchedulerRequestId String MATERIALIZED
        SchedulerAttributes['planscope.scheduler.request_id'] CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS SchedulerSwitchOp String MATERIALIZED
        SchedulerAttributes['planscope.scheduler.switch.op'] CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS SchedulerContextHash String MATERIALIZED
        SchedulerAttributes['planscope.scheduler.context.hash'] CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS SchedulerContextTokens Int64 MATERIALIZED
        toInt64OrZero(SchedulerAttributes['planscope.scheduler.context.tokens']) CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS SchedulerSavedHash String MATERIALIZED
        SchedulerAttributes['planscope.scheduler.context.saved_hash'] CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS SchedulerSavedTokens Int64 MATERIALIZED
        toInt64OrZero(SchedulerAttributes['planscope.scheduler.context.saved_tokens'])
        CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS SchedulerOvertaken Nullable(Int64) MATERIALIZED
        toInt64OrNull(SchedulerAttributes['planscope.scheduler.overtaken']) CODEC(ZSTD(1));

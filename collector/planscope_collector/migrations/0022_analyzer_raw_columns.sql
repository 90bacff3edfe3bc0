-- What the analyzer reads from otel_traces, as columns: the attribute map is not decompressed.
--
-- The analyzer reads raw spans for two things the typed tables lack (planscope_analyzer's
-- LOAD_RAW): a central scheduler's queue waits and context switches (their planscope.scheduler.*
-- attributes), and whether a step attempt recorded an explicitly empty context
-- (planscope.step.context.keys = '[]', which the typed table's ContextKeys cannot tell from no
-- record at all). Looking those up in SpanAttributes decompressed every span's whole map in the
-- batch's time range: ~4.6 of the ~11 SQL CPU seconds of a full pass over 1M spans
-- (docs/benchmarks-log.md, 2026-12-03). Both are MATERIALIZED columns now, computed once per span at insert:
--
--   * SpanModelContextEmpty: 1 on a step span whose context keys are exactly '[]';
--   * SchedulerAttributes: the planscope.scheduler.* attributes of scheduler.queue and
--     scheduler.context_switch spans, an empty map on every other span (so it takes almost no
--     room and reads for almost nothing).
--
-- Both are evaluated short-circuit (if/AND): other spans cost a comparison each at insert.
-- Rows stored before this migration read the columns from their expressions (the map is then
-- decompressed as before) until a merge writes them; values are the same either way. SELECT *
-- returns neither, so the exporter's readers see the table they expect.

ALTER TABLE {db}.otel_traces {on_cluster}
    ADD COLUMN IF NOT EXISTS SpanModelContextEmpty UInt8 MATERIALIZED
        SpanModelKind = 'step' AND SpanAttributes['planscope.step.context.keys'] = '[]'
        CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS SchedulerAttributes Map(LowCardinality(String), String) MATERIALIZED
        if(SpanName IN ('scheduler.queue', 'scheduler.context_switch'),
           mapFilter((k, v) -> startsWith(k, 'planscope.scheduler.'), SpanAttributes),
           map())
        CODEC(ZSTD(1));

-- What a table shared with the OpenTelemetry Collector's clickhouseexporter needs.
--
-- 1. The skip indexes of the OpenTelemetry Collector contrib clickhouseexporter's otel_traces
-- (exporter/clickhouseexporter/internal/sqltemplates/traces_table.sql): bloom filters on the keys
-- and values of both attribute maps. ClickStack, the Grafana ClickHouse plugin and hand-written
-- queries filter on `SpanAttributes['k'] = 'v'` / `mapContains(...)`; with these indexes such a
-- filter skips granules instead of scanning every row of the time range, exactly as on a table
-- the exporter created. 0001 left them out for insert cost (docs/benchmarks.md has the measured
-- price); interoperability with those tools is worth it. ADD INDEX IF NOT EXISTS: a table the
-- exporter created (adopted by `planscope migrate`) already has them under the same names.
-- Parts written before this migration are indexed as they merge; run
-- ALTER TABLE otel_traces MATERIALIZE INDEX <name> to index old parts at once.
ALTER TABLE {db}.otel_traces {on_cluster}
    ADD INDEX IF NOT EXISTS idx_res_attr_key mapKeys(ResourceAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    ADD INDEX IF NOT EXISTS idx_res_attr_value mapValues(ResourceAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    ADD INDEX IF NOT EXISTS idx_span_attr_key mapKeys(SpanAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    ADD INDEX IF NOT EXISTS idx_span_attr_value mapValues(SpanAttributes) TYPE bloom_filter(0.01) GRANULARITY 1;

-- 2. The exporter before v0.108 wrote SpanKind/StatusCode as `SPAN_KIND_INTERNAL`/`STATUS_CODE_ERROR`
-- (pdata's enum names) where it and planscope now write `Internal`/`Error`; such rows are still in
-- long-retention tables, and an old exporter may still be writing. The two views that interpret
-- StatusCode (rather than copy it) count `STATUS_CODE_ERROR` as `Error` and `STATUS_CODE_OK` as
-- `Ok`; readers of the copied column normalise it with `storage.status_code_sql()` /
-- `span_kind_sql()`. Same queries as 0002 otherwise; a later migration that replaces these views
-- must keep accepting both spellings.
ALTER TABLE {db}.planscope_step_attempts_mv {on_cluster} MODIFY QUERY
SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    SpanAttributes['planscope.run.id'] AS RunId,
    SpanAttributes['planscope.plan.id'] AS PlanId,
    toUInt32OrZero(SpanAttributes['planscope.plan.version']) AS PlanVersion,
    SpanAttributes['planscope.step.id'] AS StepId,
    toUInt32OrZero(SpanAttributes['planscope.step.attempt']) AS Attempt,
    if(SpanAttributes['planscope.step.status'] != '', SpanAttributes['planscope.step.status'],
       multiIf(StatusCode IN ('Error', 'STATUS_CODE_ERROR'), 'error',
               StatusCode IN ('Ok', 'STATUS_CODE_OK'), 'ok', '')) AS Status,
    SpanAttributes['error.type'] AS ErrorType,
    SpanAttributes['planscope.step.error_fingerprint'] AS ErrorFingerprint,
    SpanAttributes['planscope.step.executor'] AS Executor,
    JSONExtract(SpanAttributes['planscope.step.context.keys'], 'Array(String)') AS ContextKeys,
    toUInt64OrZero(SpanAttributes['planscope.step.context.tokens']) AS ContextTokens,
    SpanAttributes['planscope.step.self_assessment'] AS SelfAssessment,
    toUInt32OrZero(SpanAttributes['planscope.step.depth']) AS Depth,
    SpanAttributes['planscope.step.input_hash'] AS InputHash,
    ServiceName,
    Timestamp AS Start,
    addNanoseconds(Timestamp, Duration) AS End,
    Duration,
    StatusCode,
    StatusMessage
FROM {db}.otel_traces
WHERE SpanAttributes['planscope.span.kind'] = 'step';

ALTER TABLE {db}.planscope_trace_index_mv {on_cluster} MODIFY QUERY
SELECT
    Project,
    TraceId,
    min(Ts) AS Start,
    max(EndTs) AS End,
    toUInt64(count()) AS SpanCount,
    toUInt64(countIf(IsError)) AS ErrorCount,
    any(Svc) AS ServiceName,
    groupUniqArray(Svc) AS Services,
    maxIf(Svc, IsRoot) AS RootServiceName,
    maxIf(Name, IsRoot) AS RootSpanName,
    maxIf(Attrs['planscope.run.id'], Kind = 'run') AS RunId,
    maxIf(Attrs['gen_ai.agent.name'], Kind = 'run') AS AgentName,
    maxIf(Attrs['planscope.run.outcome'], Kind = 'run') AS Outcome,
    maxIf(Attrs['planscope.run.variant'], Kind = 'run') AS Variant,
    sumIf(toUInt64OrZero(Attrs['gen_ai.usage.input_tokens']), IsLlm) AS InputTokens,
    sumIf(toUInt64OrZero(Attrs['gen_ai.usage.output_tokens']), IsLlm) AS OutputTokens,
    sumIf(toFloat64OrZero(Attrs['planscope.llm.cost_usd']), IsLlm) AS CostUsd
FROM (
    SELECT
        Project,
        TraceId,
        Timestamp AS Ts,
        addNanoseconds(Timestamp, Duration) AS EndTs,
        StatusCode IN ('Error', 'STATUS_CODE_ERROR') AS IsError,
        toString(ServiceName) AS Svc,
        toString(SpanName) AS Name,
        ParentSpanId = '' AS IsRoot,
        SpanAttributes AS Attrs,
        SpanAttributes['planscope.span.kind'] AS Kind,
        Kind = 'llm' OR (Kind = '' AND SpanAttributes['gen_ai.operation.name'] = 'chat') AS IsLlm
    FROM {db}.otel_traces
    WHERE TraceId != ''
)
GROUP BY Project, TraceId;

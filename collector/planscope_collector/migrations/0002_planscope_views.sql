-- Typed tables for analysis, filled by materialized views FROM otel_traces at insert time.
-- Analyzer SQL reads these instead of Map lookups over raw spans.
--
-- Rules every view follows:
--   * a missing attribute yields the column default ('' / 0 / []), never an insert failure:
--     Map lookups return '' for absent keys, numbers go through to*OrZero / JSONExtract, and the
--     JSON functions return defaults on malformed input. A failing view would fail the INSERT into
--     otel_traces itself, so nothing here may throw on user data.
--   * ordering (Project, TraceId, time): the analyzers read one trace (or a batch of traces) at a
--     time; within a trace rows are few, so the key after TraceId only sorts them.
--   * daily partitions + TTL with ttl_only_drop_parts, like otel_traces, so old data leaves as whole
--     parts on the same schedule.
--   * non_replicated_deduplication_window: the writer's insert_deduplication_token plus
--     deduplicate_blocks_in_dependent_materialized_views=1 make a replayed spool segment a no-op
--     in these tables too.
-- Attribute names are the literal values of sdk/planscope/semconv.py (a test checks them).

-- runs (planscope.span.kind = 'run', gen_ai.operation.name = 'invoke_agent') --------------------
CREATE TABLE IF NOT EXISTS {db}.planscope_runs {on_cluster} (
    Project LowCardinality(String) CODEC(ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    SpanId String CODEC(ZSTD(1)),
    ParentSpanId String CODEC(ZSTD(1)),
    RunId String CODEC(ZSTD(1)),
    AgentName LowCardinality(String) CODEC(ZSTD(1)),
    AgentId String CODEC(ZSTD(1)),
    ConversationId String CODEC(ZSTD(1)),
    Objective String CODEC(ZSTD(3)),
    Variant LowCardinality(String) CODEC(ZSTD(1)),
    Outcome LowCardinality(String) CODEC(ZSTD(1)),
    OutcomeReason String CODEC(ZSTD(3)),
    Budget String CODEC(ZSTD(3)),
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    Start DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    End DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    Duration UInt64 CODEC(T64, ZSTD(1)),
    StatusCode LowCardinality(String) CODEC(ZSTD(1)),
    StatusMessage String CODEC(ZSTD(3)),
    ErrorType LowCardinality(String) CODEC(ZSTD(1))
) ENGINE = {engine:MergeTree}
PARTITION BY toDate(Start)
ORDER BY (Project, TraceId, Start)
TTL toDateTime(Start) + toIntervalDay({ttl_days})
SETTINGS ttl_only_drop_parts = 1, non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_runs_mv {on_cluster}
TO {db}.planscope_runs
AS SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    SpanAttributes['planscope.run.id'] AS RunId,
    SpanAttributes['gen_ai.agent.name'] AS AgentName,
    SpanAttributes['gen_ai.agent.id'] AS AgentId,
    SpanAttributes['gen_ai.conversation.id'] AS ConversationId,
    SpanAttributes['planscope.run.objective'] AS Objective,
    SpanAttributes['planscope.run.variant'] AS Variant,
    if(SpanAttributes['planscope.run.outcome'] = '', 'unknown',
       SpanAttributes['planscope.run.outcome']) AS Outcome,
    SpanAttributes['planscope.run.outcome_reason'] AS OutcomeReason,
    SpanAttributes['planscope.run.budget'] AS Budget,
    ServiceName,
    Timestamp AS Start,
    addNanoseconds(Timestamp, Duration) AS End,
    Duration,
    StatusCode,
    StatusMessage,
    SpanAttributes['error.type'] AS ErrorType
FROM {db}.otel_traces
WHERE SpanAttributes['planscope.span.kind'] = 'run';

-- plans (kind = 'plan'); PlanJson is kept verbatim, PlanJsonValid flags garbage ----------------
CREATE TABLE IF NOT EXISTS {db}.planscope_plans {on_cluster} (
    Project LowCardinality(String) CODEC(ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    SpanId String CODEC(ZSTD(1)),
    ParentSpanId String CODEC(ZSTD(1)),
    RunId String CODEC(ZSTD(1)),
    PlanId String CODEC(ZSTD(1)),
    Version UInt32 CODEC(T64, ZSTD(1)),
    ParentVersion Nullable(UInt32),
    Scope String CODEC(ZSTD(1)),
    Objective String CODEC(ZSTD(3)),
    ReplanReason String CODEC(ZSTD(3)),
    Approval LowCardinality(String) CODEC(ZSTD(1)),
    StepCount UInt32 CODEC(T64, ZSTD(1)),
    PlanJson String CODEC(ZSTD(3)),
    PlanJsonValid UInt8,
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    Start DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    Duration UInt64 CODEC(T64, ZSTD(1)),
    StatusCode LowCardinality(String) CODEC(ZSTD(1))
) ENGINE = {engine:MergeTree}
PARTITION BY toDate(Start)
ORDER BY (Project, TraceId, Start, PlanId, Version)
TTL toDateTime(Start) + toIntervalDay({ttl_days})
SETTINGS ttl_only_drop_parts = 1, non_replicated_deduplication_window = 10000;

-- Attributes win over the same field inside the plan JSON; the JSON is the fallback.
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_plans_mv {on_cluster}
TO {db}.planscope_plans
AS WITH
    SpanAttributes['planscope.plan.json'] AS Plan,
    JSONExtractArrayRaw(Plan, 'steps') AS Steps
SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    SpanAttributes['planscope.run.id'] AS RunId,
    if(SpanAttributes['planscope.plan.id'] != '', SpanAttributes['planscope.plan.id'],
       JSONExtract(Plan, 'id', 'String')) AS PlanId,
    if(SpanAttributes['planscope.plan.version'] != '',
       toUInt32OrZero(SpanAttributes['planscope.plan.version']),
       JSONExtract(Plan, 'version', 'UInt32')) AS Version,
    toUInt32OrNull(SpanAttributes['planscope.plan.parent_version']) AS ParentVersion,
    if(SpanAttributes['planscope.plan.scope'] != '', SpanAttributes['planscope.plan.scope'],
       JSONExtract(Plan, 'scope', 'String')) AS Scope,
    JSONExtract(Plan, 'objective', 'String') AS Objective,
    if(SpanAttributes['planscope.plan.replan_reason'] != '',
       SpanAttributes['planscope.plan.replan_reason'],
       JSONExtract(Plan, 'replan_reason', 'String')) AS ReplanReason,
    SpanAttributes['planscope.plan.approval'] AS Approval,
    if(SpanAttributes['planscope.plan.step_count'] != '',
       toUInt32OrZero(SpanAttributes['planscope.plan.step_count']),
       toUInt32(length(Steps))) AS StepCount,
    Plan AS PlanJson,
    toUInt8(isValidJSON(Plan)) AS PlanJsonValid,
    ServiceName,
    Timestamp AS Start,
    Duration,
    StatusCode
FROM {db}.otel_traces
WHERE SpanAttributes['planscope.span.kind'] = 'plan';

-- plan steps: one row per element of the plan JSON's "steps" array (none for garbage JSON) -----
CREATE TABLE IF NOT EXISTS {db}.planscope_plan_steps {on_cluster} (
    Project LowCardinality(String) CODEC(ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    PlanSpanId String CODEC(ZSTD(1)),
    RunId String CODEC(ZSTD(1)),
    PlanId String CODEC(ZSTD(1)),
    PlanVersion UInt32 CODEC(T64, ZSTD(1)),
    Scope String CODEC(ZSTD(1)),
    Position UInt32 CODEC(T64, ZSTD(1)),
    StepId String CODEC(ZSTD(1)),
    Description String CODEC(ZSTD(3)),
    Executor LowCardinality(String) CODEC(ZSTD(1)),
    Tool LowCardinality(String) CODEC(ZSTD(1)),
    DependsOn Array(String) CODEC(ZSTD(1)),
    Requires Array(String) CODEC(ZSTD(1)),
    Produces Array(String) CODEC(ZSTD(1)),
    Irreversible UInt8,
    Start DateTime64(9) CODEC(Delta(8), ZSTD(1))
) ENGINE = {engine:MergeTree}
PARTITION BY toDate(Start)
ORDER BY (Project, TraceId, PlanId, PlanVersion, Position)
TTL toDateTime(Start) + toIntervalDay({ttl_days})
SETTINGS ttl_only_drop_parts = 1, non_replicated_deduplication_window = 10000;

-- Position is 0-based, as in the JSON array. Scalars inside step objects are converted to strings
-- by JSONExtract(..., 'String') / 'Array(String)', so numeric ids still join with step spans.
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_plan_steps_mv {on_cluster}
TO {db}.planscope_plan_steps
AS WITH
    SpanAttributes['planscope.plan.json'] AS Plan
SELECT
    Project,
    TraceId,
    SpanId AS PlanSpanId,
    SpanAttributes['planscope.run.id'] AS RunId,
    if(SpanAttributes['planscope.plan.id'] != '', SpanAttributes['planscope.plan.id'],
       JSONExtract(Plan, 'id', 'String')) AS PlanId,
    if(SpanAttributes['planscope.plan.version'] != '',
       toUInt32OrZero(SpanAttributes['planscope.plan.version']),
       JSONExtract(Plan, 'version', 'UInt32')) AS PlanVersion,
    if(SpanAttributes['planscope.plan.scope'] != '', SpanAttributes['planscope.plan.scope'],
       JSONExtract(Plan, 'scope', 'String')) AS Scope,
    toUInt32(StepIndex - 1) AS Position,
    JSONExtract(StepJson, 'id', 'String') AS StepId,
    JSONExtract(StepJson, 'description', 'String') AS Description,
    JSONExtract(StepJson, 'executor', 'String') AS Executor,
    JSONExtract(StepJson, 'tool', 'String') AS Tool,
    JSONExtract(StepJson, 'depends_on', 'Array(String)') AS DependsOn,
    JSONExtract(StepJson, 'requires', 'Array(String)') AS Requires,
    JSONExtract(StepJson, 'produces', 'Array(String)') AS Produces,
    toUInt8(JSONExtract(StepJson, 'irreversible', 'Bool')) AS Irreversible,
    Timestamp AS Start
FROM {db}.otel_traces
ARRAY JOIN
    JSONExtractArrayRaw(Plan, 'steps') AS StepJson,
    arrayEnumerate(JSONExtractArrayRaw(Plan, 'steps')) AS StepIndex
WHERE SpanAttributes['planscope.span.kind'] = 'plan';

-- step attempts (kind = 'step'; one span per attempt) ---------------------------------------------
CREATE TABLE IF NOT EXISTS {db}.planscope_step_attempts {on_cluster} (
    Project LowCardinality(String) CODEC(ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    SpanId String CODEC(ZSTD(1)),
    ParentSpanId String CODEC(ZSTD(1)),
    RunId String CODEC(ZSTD(1)),
    PlanId String CODEC(ZSTD(1)),
    PlanVersion UInt32 CODEC(T64, ZSTD(1)),
    StepId String CODEC(ZSTD(1)),
    Attempt UInt32 CODEC(T64, ZSTD(1)),
    Status LowCardinality(String) CODEC(ZSTD(1)),
    ErrorType LowCardinality(String) CODEC(ZSTD(1)),
    ErrorFingerprint String CODEC(ZSTD(1)),
    Executor LowCardinality(String) CODEC(ZSTD(1)),
    ContextKeys Array(String) CODEC(ZSTD(1)),
    ContextTokens UInt64 CODEC(T64, ZSTD(1)),
    SelfAssessment LowCardinality(String) CODEC(ZSTD(1)),
    Depth UInt32 CODEC(T64, ZSTD(1)),
    InputHash String CODEC(ZSTD(1)),
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    Start DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    End DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    Duration UInt64 CODEC(T64, ZSTD(1)),
    StatusCode LowCardinality(String) CODEC(ZSTD(1)),
    StatusMessage String CODEC(ZSTD(3))
) ENGINE = {engine:MergeTree}
PARTITION BY toDate(Start)
ORDER BY (Project, TraceId, Start, StepId, Attempt)
TTL toDateTime(Start) + toIntervalDay({ttl_days})
SETTINGS ttl_only_drop_parts = 1, non_replicated_deduplication_window = 10000;

-- Status falls back to the span status when the attribute is missing (Error -> error, Ok -> ok).
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_step_attempts_mv {on_cluster}
TO {db}.planscope_step_attempts
AS SELECT
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
       multiIf(StatusCode = 'Error', 'error', StatusCode = 'Ok', 'ok', '')) AS Status,
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

-- tool calls (kind = 'tool', or any GenAI execute_tool span without a planscope kind) -------------
CREATE TABLE IF NOT EXISTS {db}.planscope_tool_calls {on_cluster} (
    Project LowCardinality(String) CODEC(ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    SpanId String CODEC(ZSTD(1)),
    ParentSpanId String CODEC(ZSTD(1)),
    RunId String CODEC(ZSTD(1)),
    PlanId String CODEC(ZSTD(1)),
    PlanVersion UInt32 CODEC(T64, ZSTD(1)),
    StepId String CODEC(ZSTD(1)),
    Attempt UInt32 CODEC(T64, ZSTD(1)),
    ToolName LowCardinality(String) CODEC(ZSTD(1)),
    ToolCallId String CODEC(ZSTD(1)),
    Resource String CODEC(ZSTD(1)),
    Effect LowCardinality(String) CODEC(ZSTD(1)),
    ArgsHash String CODEC(ZSTD(1)),
    Arguments String CODEC(ZSTD(3)),
    Result String CODEC(ZSTD(3)),
    ErrorType LowCardinality(String) CODEC(ZSTD(1)),
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    Start DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    Duration UInt64 CODEC(T64, ZSTD(1)),
    StatusCode LowCardinality(String) CODEC(ZSTD(1))
) ENGINE = {engine:MergeTree}
PARTITION BY toDate(Start)
ORDER BY (Project, TraceId, Start)
TTL toDateTime(Start) + toIntervalDay({ttl_days})
SETTINGS ttl_only_drop_parts = 1, non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_tool_calls_mv {on_cluster}
TO {db}.planscope_tool_calls
AS SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    SpanAttributes['planscope.run.id'] AS RunId,
    SpanAttributes['planscope.plan.id'] AS PlanId,
    toUInt32OrZero(SpanAttributes['planscope.plan.version']) AS PlanVersion,
    SpanAttributes['planscope.step.id'] AS StepId,
    toUInt32OrZero(SpanAttributes['planscope.step.attempt']) AS Attempt,
    SpanAttributes['gen_ai.tool.name'] AS ToolName,
    SpanAttributes['gen_ai.tool.call.id'] AS ToolCallId,
    SpanAttributes['planscope.tool.resource'] AS Resource,
    SpanAttributes['planscope.tool.effect'] AS Effect,
    SpanAttributes['planscope.tool.args_hash'] AS ArgsHash,
    SpanAttributes['gen_ai.tool.call.arguments'] AS Arguments,
    SpanAttributes['gen_ai.tool.call.result'] AS Result,
    SpanAttributes['error.type'] AS ErrorType,
    ServiceName,
    Timestamp AS Start,
    Duration,
    StatusCode
FROM {db}.otel_traces
WHERE SpanAttributes['planscope.span.kind'] = 'tool'
   OR (SpanAttributes['planscope.span.kind'] = ''
       AND SpanAttributes['gen_ai.operation.name'] = 'execute_tool');

-- LLM calls (kind = 'llm', or any GenAI chat span without a planscope kind) -----------------------
CREATE TABLE IF NOT EXISTS {db}.planscope_llm_calls {on_cluster} (
    Project LowCardinality(String) CODEC(ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    SpanId String CODEC(ZSTD(1)),
    ParentSpanId String CODEC(ZSTD(1)),
    RunId String CODEC(ZSTD(1)),
    PlanId String CODEC(ZSTD(1)),
    StepId String CODEC(ZSTD(1)),
    Attempt UInt32 CODEC(T64, ZSTD(1)),
    Provider LowCardinality(String) CODEC(ZSTD(1)),
    Model LowCardinality(String) CODEC(ZSTD(1)),
    ResponseModel LowCardinality(String) CODEC(ZSTD(1)),
    Role LowCardinality(String) CODEC(ZSTD(1)),
    InputTokens UInt64 CODEC(T64, ZSTD(1)),
    OutputTokens UInt64 CODEC(T64, ZSTD(1)),
    CostUsd Float64 CODEC(ZSTD(1)),
    ErrorType LowCardinality(String) CODEC(ZSTD(1)),
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    Start DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    Duration UInt64 CODEC(T64, ZSTD(1)),
    StatusCode LowCardinality(String) CODEC(ZSTD(1))
) ENGINE = {engine:MergeTree}
PARTITION BY toDate(Start)
ORDER BY (Project, TraceId, Start)
TTL toDateTime(Start) + toIntervalDay({ttl_days})
SETTINGS ttl_only_drop_parts = 1, non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_llm_calls_mv {on_cluster}
TO {db}.planscope_llm_calls
AS SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    SpanAttributes['planscope.run.id'] AS RunId,
    SpanAttributes['planscope.plan.id'] AS PlanId,
    SpanAttributes['planscope.step.id'] AS StepId,
    toUInt32OrZero(SpanAttributes['planscope.step.attempt']) AS Attempt,
    SpanAttributes['gen_ai.provider.name'] AS Provider,
    if(SpanAttributes['gen_ai.request.model'] != '', SpanAttributes['gen_ai.request.model'],
       SpanAttributes['gen_ai.response.model']) AS Model,
    SpanAttributes['gen_ai.response.model'] AS ResponseModel,
    SpanAttributes['planscope.llm.role'] AS Role,
    toUInt64OrZero(SpanAttributes['gen_ai.usage.input_tokens']) AS InputTokens,
    toUInt64OrZero(SpanAttributes['gen_ai.usage.output_tokens']) AS OutputTokens,
    toFloat64OrZero(SpanAttributes['planscope.llm.cost_usd']) AS CostUsd,
    SpanAttributes['error.type'] AS ErrorType,
    ServiceName,
    Timestamp AS Start,
    Duration,
    StatusCode
FROM {db}.otel_traces
WHERE SpanAttributes['planscope.span.kind'] = 'llm'
   OR (SpanAttributes['planscope.span.kind'] = ''
       AND SpanAttributes['gen_ai.operation.name'] = 'chat');

-- trace summary for GET /api/traces -------------------------------------------------------------
-- One partial row per (insert block, trace); background merges combine them eventually, so ALWAYS
-- read it with GROUP BY Project, TraceId and the column's own function (min/max/sum/any,
-- groupUniqArrayArray). String columns that only some spans fill (root span, run attributes) are
-- max() over '' for the other spans, so max() picks the filled value.
CREATE TABLE IF NOT EXISTS {db}.planscope_trace_index {on_cluster} (
    Project LowCardinality(String) CODEC(ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    Start SimpleAggregateFunction(min, DateTime64(9)) CODEC(Delta(8), ZSTD(1)),
    End SimpleAggregateFunction(max, DateTime64(9)) CODEC(Delta(8), ZSTD(1)),
    SpanCount SimpleAggregateFunction(sum, UInt64) CODEC(T64, ZSTD(1)),
    ErrorCount SimpleAggregateFunction(sum, UInt64) CODEC(T64, ZSTD(1)),
    ServiceName SimpleAggregateFunction(any, String) CODEC(ZSTD(1)),
    Services SimpleAggregateFunction(groupUniqArrayArray, Array(String)) CODEC(ZSTD(1)),
    RootServiceName SimpleAggregateFunction(max, String) CODEC(ZSTD(1)),
    RootSpanName SimpleAggregateFunction(max, String) CODEC(ZSTD(1)),
    RunId SimpleAggregateFunction(max, String) CODEC(ZSTD(1)),
    AgentName SimpleAggregateFunction(max, String) CODEC(ZSTD(1)),
    Outcome SimpleAggregateFunction(max, String) CODEC(ZSTD(1)),
    Variant SimpleAggregateFunction(max, String) CODEC(ZSTD(1)),
    InputTokens SimpleAggregateFunction(sum, UInt64) CODEC(T64, ZSTD(1)),
    OutputTokens SimpleAggregateFunction(sum, UInt64) CODEC(T64, ZSTD(1)),
    CostUsd SimpleAggregateFunction(sum, Float64) CODEC(ZSTD(1)),
    INDEX idx_start Start TYPE minmax GRANULARITY 1,
    INDEX idx_services Services TYPE bloom_filter(0.01) GRANULARITY 1
) ENGINE = {engine:AggregatingMergeTree}
PARTITION BY toDate(Start)
ORDER BY (Project, TraceId)
TTL toDateTime(Start) + toIntervalDay({ttl_days})
SETTINGS ttl_only_drop_parts = 1, non_replicated_deduplication_window = 10000;

-- The inner SELECT renames inputs so no output alias (ServiceName, ...) shadows a column that
-- another aggregate reads.
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_trace_index_mv {on_cluster}
TO {db}.planscope_trace_index
AS SELECT
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
        StatusCode = 'Error' AS IsError,
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

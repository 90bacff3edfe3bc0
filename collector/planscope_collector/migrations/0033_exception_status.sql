-- A span of another convention that only records the exception failed (docs/storage.md, "The
-- exception-only error"): one mapping for the trace API and the analyzer, which until now
-- patched its own copies of the typed rows (analyzer _load._exceptions, removed).
--
-- OpenTelemetry records an `exception` span event when an exception escapes the span's work;
-- some instrumentations record it and leave the status UNSET. Such a span, when planscope's SDK
-- did not write it (the SDK sets the status itself: SpanModelSource 'planscope') and its status
-- is UNSET (an explicit OK stays OK), counts as failed, with its last exception's type and
-- message:
--
--   * SpanModelRaised (MATERIALIZED, computed once per span at insert: has() on the event
--     names) says the rule applies; SpanModelExceptionType / SpanModelExceptionMessage hold the
--     last exception's type and message on those spans, '' on every other span (no room);
--   * SpanModelStatusCode (ALIAS) says 'Error' for them, so every reader of it (the typed
--     tables' views, the trace index, the trace API's spans, the analyzer's raw spans) agrees;
--     SpanModelOutcome says 'failure' for such a run;
--   * the runs, step attempts and tool calls views take the exception's type and message where
--     the span carries no error.type / status message of its own.
--
-- Rows stored before: otel_traces reads the three new columns from their expressions (as for
-- any column added with ALTER), so SpanModelStatusCode answers the rule for them too. Their typed
-- rows were written with the old status: each is written again with the new values (INSERT ...
-- SELECT from the typed table, joined to the spans the rule applies to), then the old copy,
-- the one whose StatusCode is not 'Error', is deleted (a mutation the migration waits for on
-- every replica; its subquery reads otel_traces, hence allow_nondeterministic_mutations for
-- replicated tables; GLOBAL so that a distributed store reads each side once; the cluster
-- path is rendered by the tests, not run against a cluster). The trace index's stored
-- partial rows are not rewritten (its error count and run outcome of those traces stay as
-- stored). Migrations run before the collector accepts spans, so no insert falls between
-- DROP and CREATE.

ALTER TABLE {db}.otel_traces {on_cluster}
    ADD COLUMN IF NOT EXISTS SpanModelRaised UInt8 MATERIALIZED toUInt8(
        SpanModelSource != 'planscope'
        AND StatusCode NOT IN ('Error', 'STATUS_CODE_ERROR', 'Ok', 'STATUS_CODE_OK')
        AND has(Events.Name, 'exception')) CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS SpanModelExceptionType String MATERIALIZED if(SpanModelRaised = 1,
        Events.Attributes[arrayLastIndex(n -> n = 'exception', Events.Name)]['exception.type'],
        '') CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS SpanModelExceptionMessage String MATERIALIZED if(SpanModelRaised = 1,
        Events.Attributes[arrayLastIndex(n -> n = 'exception', Events.Name)]['exception.message'],
        '') CODEC(ZSTD(1));

ALTER TABLE {db}.otel_traces {on_cluster}
    MODIFY COLUMN SpanModelStatusCode LowCardinality(String) ALIAS multiIf(
        StatusCode IN ('Error', 'STATUS_CODE_ERROR'), 'Error',
        StatusCode IN ('Ok', 'STATUS_CODE_OK'), 'Ok',
        SpanModelRaised = 1, 'Error',
        'Unset'),
    MODIFY COLUMN SpanModelOutcome LowCardinality(String) MATERIALIZED
        if(SpanModelKind = 'run',
           multiIf(SpanAttributes['planscope.run.outcome'] != '',
                   SpanAttributes['planscope.run.outcome'],
                   SpanModelSource != 'planscope' AND SpanModelStatusCode = 'Error', 'failure',
                   'unknown'),
           '') CODEC(ZSTD(1));

DROP VIEW IF EXISTS {db}.planscope_runs_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_step_attempts_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_tool_calls_mv {on_cluster};

-- runs (0029): the exception's type and message where the span has none
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_runs_mv {on_cluster}
TO {db}.planscope_runs
AS SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    SpanModelRunId AS RunId,
    SpanModelAgentName AS AgentName,
    multiIf(SpanAttributes['planscope.run.objective'] != '',
            SpanAttributes['planscope.run.objective'],
            SpanModelInferred = 1,
            leftUTF8(multiIf(SpanAttributes['input.value'] != '', SpanAttributes['input.value'],
                             SpanAttributes['traceloop.entity.input']), 4000),
            '') AS Objective,
    SpanAttributes['planscope.run.variant'] AS Variant,
    SpanModelOutcome AS Outcome,
    SpanAttributes['planscope.run.outcome_reason'] AS OutcomeReason,
    SpanAttributes['planscope.run.budget'] AS Budget,
    ServiceName,
    Timestamp AS Start,
    addNanoseconds(Timestamp, Duration) AS End,
    Duration,
    SpanModelStatusCode AS StatusCode,
    if(StatusMessage != '', StatusMessage, SpanModelExceptionMessage) AS StatusMessage,
    if(SpanAttributes['error.type'] != '', SpanAttributes['error.type'], SpanModelExceptionType)
        AS ErrorType,
    SpanModelSource AS Source,
    SpanModelInferred AS Inferred
FROM {db}.otel_traces
WHERE SpanModelKind = 'run';

-- step attempts (0012, 5.): likewise
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
    -- the step a foreign step span stands for: a LangGraph node, a Traceloop task, an agent
    if(SpanModelInferred = 1,
       multiIf(JSONExtractString(SpanAttributes['metadata'], 'langgraph_node') != '',
               JSONExtractString(SpanAttributes['metadata'], 'langgraph_node'),
               SpanAttributes['traceloop.entity.name'] != '', SpanAttributes['traceloop.entity.name'],
               SpanAttributes['gen_ai.agent.name'] != '', SpanAttributes['gen_ai.agent.name'],
               toString(SpanName)),
       SpanAttributes['planscope.step.id']) AS StepId,
    toUInt32OrZero(SpanAttributes['planscope.step.attempt']) AS Attempt,
    multiIf(SpanAttributes['planscope.step.status'] != '', SpanAttributes['planscope.step.status'],
            SpanModelStatusCode = 'Error', 'error',
            SpanModelStatusCode = 'Ok' OR SpanModelInferred = 1, 'ok',
            '') AS Status,
    if(SpanAttributes['error.type'] != '', SpanAttributes['error.type'], SpanModelExceptionType)
        AS ErrorType,
    SpanAttributes['planscope.step.error_fingerprint'] AS ErrorFingerprint,
    if(SpanModelInferred = 1, SpanModelAgentName,
       SpanAttributes['planscope.step.executor']) AS Executor,
    JSONExtract(SpanAttributes['planscope.step.context.keys'], 'Array(String)') AS ContextKeys,
    toUInt64OrZero(SpanAttributes['planscope.step.context.tokens']) AS ContextTokens,
    SpanAttributes['planscope.step.self_assessment'] AS SelfAssessment,
    toUInt32OrZero(SpanAttributes['planscope.step.depth']) AS Depth,
    SpanAttributes['planscope.step.input_hash'] AS InputHash,
    ServiceName,
    Timestamp AS Start,
    addNanoseconds(Timestamp, Duration) AS End,
    Duration,
    SpanModelStatusCode AS StatusCode,
    if(StatusMessage != '', StatusMessage, SpanModelExceptionMessage) AS StatusMessage,
    SpanModelSource AS Source,
    SpanModelInferred AS Inferred
FROM {db}.otel_traces
WHERE SpanModelKind = 'step';

-- tool calls (0029): the exception's type where the span has none
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
    multiIf(SpanAttributes['gen_ai.tool.name'] != '', SpanAttributes['gen_ai.tool.name'],
            SpanAttributes['tool.name'] != '', SpanAttributes['tool.name'],
            SpanAttributes['traceloop.entity.name'] != '', SpanAttributes['traceloop.entity.name'],
            toString(SpanName)) AS ToolName,
    SpanAttributes['planscope.tool.resource'] AS Resource,
    multiIf(SpanAttributes['planscope.tool.effect'] != '', SpanAttributes['planscope.tool.effect'],
            upper(SpanAttributes['openinference.span.kind']) IN ('RETRIEVER', 'RERANKER'), 'read',
            '') AS Effect,
    SpanAttributes['planscope.tool.args_hash'] AS ArgsHash,
    multiIf(SpanAttributes['gen_ai.tool.call.arguments'] != '',
            SpanAttributes['gen_ai.tool.call.arguments'],
            SpanAttributes['input.value'] != '', SpanAttributes['input.value'],
            SpanAttributes['traceloop.entity.input'] != '', SpanAttributes['traceloop.entity.input'],
            SpanAttributes['tool_arguments']) AS Arguments,
    multiIf(SpanAttributes['gen_ai.tool.call.result'] != '',
            SpanAttributes['gen_ai.tool.call.result'],
            SpanAttributes['output.value'] != '', SpanAttributes['output.value'],
            SpanAttributes['traceloop.entity.output'] != '',
            SpanAttributes['traceloop.entity.output'],
            SpanAttributes['tool_response']) AS Result,
    if(SpanAttributes['error.type'] != '', SpanAttributes['error.type'], SpanModelExceptionType)
        AS ErrorType,
    ServiceName,
    Timestamp AS Start,
    Duration,
    SpanModelStatusCode AS StatusCode,
    SpanModelSource AS Source
FROM {db}.otel_traces
WHERE SpanModelKind = 'tool';


-- stored typed rows: each written again with the new values, then the old copy deleted ------------
INSERT INTO {db}.planscope_runs
SELECT r.* REPLACE (
    'Error' AS StatusCode,
    if(StatusMessage != '', StatusMessage, e.Message) AS StatusMessage,
    if(ErrorType != '', ErrorType, e.Type) AS ErrorType,
    if(Outcome = 'unknown', 'failure', Outcome) AS Outcome)
FROM {db}.planscope_runs AS r
GLOBAL INNER JOIN (SELECT Project, TraceId, SpanId, SpanModelExceptionType AS Type,
                   SpanModelExceptionMessage AS Message
            FROM {db}.otel_traces WHERE SpanModelRaised = 1 AND SpanModelKind = 'run') AS e
    USING (Project, TraceId, SpanId)
WHERE r.StatusCode != 'Error';

INSERT INTO {db}.planscope_step_attempts
SELECT a.* REPLACE (
    'Error' AS StatusCode,
    if(Status IN ('ok', ''), 'error', Status) AS Status,
    if(StatusMessage != '', StatusMessage, e.Message) AS StatusMessage,
    if(ErrorType != '', ErrorType, e.Type) AS ErrorType)
FROM {db}.planscope_step_attempts AS a
GLOBAL INNER JOIN (SELECT Project, TraceId, SpanId, SpanModelExceptionType AS Type,
                   SpanModelExceptionMessage AS Message
            FROM {db}.otel_traces WHERE SpanModelRaised = 1 AND SpanModelKind = 'step') AS e
    USING (Project, TraceId, SpanId)
WHERE a.StatusCode != 'Error';

INSERT INTO {db}.planscope_tool_calls
SELECT c.* REPLACE ('Error' AS StatusCode, if(ErrorType != '', ErrorType, e.Type) AS ErrorType)
FROM {db}.planscope_tool_calls AS c
GLOBAL INNER JOIN (SELECT Project, TraceId, SpanId, SpanModelExceptionType AS Type
            FROM {db}.otel_traces WHERE SpanModelRaised = 1 AND SpanModelKind = 'tool') AS e
    USING (Project, TraceId, SpanId)
WHERE c.StatusCode != 'Error';

INSERT INTO {db}.planscope_llm_calls
SELECT l.* REPLACE ('Error' AS StatusCode)
FROM {db}.planscope_llm_calls AS l
WHERE (Project, TraceId, SpanId) GLOBAL IN (
    SELECT Project, TraceId, SpanId FROM {db}.otel_traces
    WHERE SpanModelRaised = 1 AND SpanModelKind = 'llm')
  AND l.StatusCode != 'Error';

ALTER TABLE {db}.planscope_runs {on_cluster} DELETE WHERE StatusCode != 'Error'
    AND (Project, TraceId, SpanId) IN (SELECT Project, TraceId, SpanId FROM {db}.otel_traces
                                       WHERE SpanModelRaised = 1 AND SpanModelKind = 'run')
    SETTINGS mutations_sync = 2, allow_nondeterministic_mutations = 1;
ALTER TABLE {db}.planscope_step_attempts {on_cluster} DELETE WHERE StatusCode != 'Error'
    AND (Project, TraceId, SpanId) IN (SELECT Project, TraceId, SpanId FROM {db}.otel_traces
                                       WHERE SpanModelRaised = 1 AND SpanModelKind = 'step')
    SETTINGS mutations_sync = 2, allow_nondeterministic_mutations = 1;
ALTER TABLE {db}.planscope_tool_calls {on_cluster} DELETE WHERE StatusCode != 'Error'
    AND (Project, TraceId, SpanId) IN (SELECT Project, TraceId, SpanId FROM {db}.otel_traces
                                       WHERE SpanModelRaised = 1 AND SpanModelKind = 'tool')
    SETTINGS mutations_sync = 2, allow_nondeterministic_mutations = 1;
ALTER TABLE {db}.planscope_llm_calls {on_cluster} DELETE WHERE StatusCode != 'Error'
    AND (Project, TraceId, SpanId) IN (SELECT Project, TraceId, SpanId FROM {db}.otel_traces
                                       WHERE SpanModelRaised = 1 AND SpanModelKind = 'llm')
    SETTINGS mutations_sync = 2, allow_nondeterministic_mutations = 1;

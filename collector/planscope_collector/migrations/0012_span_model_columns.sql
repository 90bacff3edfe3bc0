-- The span model as columns of otel_traces, and the typed tables' views reading otel_traces.
--
-- 0011 classified every span in one view and streamed it, with its whole attribute map, through
-- the Null table planscope_span_model into the per-kind views (two levels of views, a copy of
-- every span's attributes per insert). The mapping stays exactly as 0011 has it (its header
-- lists the rules; every typed table gets the same values); only where it is computed moves:
--
--   * the span-level fields the typed tables share are MATERIALIZED columns of otel_traces,
--     computed once per span at insert, whoever inserts: planscope's writer, `planscope import`
--     (through the collector), an OpenTelemetry Collector's clickhouseexporter writing straight
--     into the table (its column list does not name them). SpanModelKind and SpanModelSource
--     are small LowCardinality columns; the run fields are '' on every span but runs (and the
--     agent name on steps), so they take almost no room;
--   * two cheap ALIAS columns (SpanModelInferred, SpanModelStatusCode) are derived from them.
--     An ALIAS column is computed for every row a view reads, before its WHERE, so only
--     comparisons of short columns may be ALIAS, never attribute lookups;
--   * each typed table's view reads otel_traces and filters on SpanModelKind: a view costs a
--     comparison per span plus its own fields for its own rows. Fields that only one table
--     needs (a step's name, an observed plan's text) stay in that table's view.
--
-- Each expression is analysed again on every insert (a fixed cost per insert, docs/benchmarks.md
-- "Views"), so the source does not refer to the kind; only the run fields do, being '' otherwise.
-- Rows stored before this migration read the new columns from their expressions, as ClickHouse
-- does for any column added with ALTER; their typed rows were written by 0011's views and stay.
-- SELECT * returns neither MATERIALIZED nor ALIAS columns, so the exporter's readers (Grafana,
-- ClickStack) see the table they expect. Migrations run before the collector accepts spans, so
-- no insert falls between the DROPs and the CREATEs below.

DROP VIEW IF EXISTS {db}.planscope_span_model_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_runs_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_plans_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_plan_steps_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_step_attempts_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_tool_calls_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_llm_calls_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_trace_index_mv {on_cluster};
DROP TABLE IF EXISTS {db}.planscope_span_model {on_cluster};

-- 1. the span model's fields. Kind: the first rule that applies wins (0011's header). A LangGraph
-- node is a CHAIN span whose metadata.langgraph_node is its own (non-empty) name.
ALTER TABLE {db}.otel_traces {on_cluster}
    ADD COLUMN IF NOT EXISTS SpanModelKind LowCardinality(String) MATERIALIZED multiIf(
        SpanAttributes['planscope.span.kind'] != '', SpanAttributes['planscope.span.kind'],
        SpanAttributes['gen_ai.operation.name'] IN ('invoke_agent', 'invoke_workflow'),
            if(ParentSpanId = '', 'run', 'step'),
        SpanAttributes['gen_ai.operation.name'] = 'plan', 'plan',
        SpanAttributes['gen_ai.operation.name'] = 'execute_tool', 'tool',
        SpanAttributes['gen_ai.operation.name']
            IN ('chat', 'generate_content', 'text_completion', 'embeddings'), 'llm',
        SpanAttributes['gen_ai.operation.name'] != '', 'other',
        upper(SpanAttributes['openinference.span.kind']) = 'AGENT',
            if(ParentSpanId = '', 'run', 'step'),
        upper(SpanAttributes['openinference.span.kind']) = 'CHAIN',
            multiIf(ParentSpanId = '', 'run',
                    SpanName != ''
                    AND JSONExtractString(SpanAttributes['metadata'], 'langgraph_node') = SpanName,
                    'step', 'other'),
        upper(SpanAttributes['openinference.span.kind']) IN ('TOOL', 'RETRIEVER', 'RERANKER'),
            'tool',
        upper(SpanAttributes['openinference.span.kind']) IN ('LLM', 'EMBEDDING'), 'llm',
        SpanAttributes['openinference.span.kind'] != '', 'other',
        lower(SpanAttributes['traceloop.span.kind']) IN ('workflow', 'agent'),
            if(ParentSpanId = '', 'run', 'step'),
        lower(SpanAttributes['traceloop.span.kind']) = 'task', 'step',
        lower(SpanAttributes['traceloop.span.kind']) = 'tool', 'tool',
        SpanAttributes['traceloop.span.kind'] != '', 'other',
        SpanAttributes['llm.request.type'] != '' OR SpanAttributes['gen_ai.system'] != '', 'llm',
        SpanAttributes['gen_ai.tool.name'] != '', 'tool',
        ParentSpanId = '' AND SpanAttributes['agent_name'] != '', 'run',
        'other') CODEC(ZSTD(1)),
    -- the convention the span's kind was read from
    ADD COLUMN IF NOT EXISTS SpanModelSource LowCardinality(String) MATERIALIZED multiIf(
        SpanAttributes['planscope.span.kind'] != '', 'planscope',
        SpanAttributes['gen_ai.operation.name'] != '', 'genai',
        SpanAttributes['openinference.span.kind'] != '', 'openinference',
        SpanAttributes['traceloop.span.kind'] != '' OR SpanAttributes['llm.request.type'] != '',
            'traceloop',
        SpanAttributes['gen_ai.system'] != '' OR SpanAttributes['gen_ai.tool.name'] != '', 'genai',
        -- what is left for the kind: rule 5's root "agent run" span (0011: Kind != 'other')
        ParentSpanId = '' AND SpanAttributes['agent_name'] != '', 'framework',
        '') CODEC(ZSTD(1)),
    -- run fields (the runs table and the trace index read them; the AgentName of a step too);
    -- '' on other spans, so they take no room. A span of another source than planscope's is
    -- inferred structure.
    ADD COLUMN IF NOT EXISTS SpanModelRunId String MATERIALIZED if(SpanModelKind = 'run',
        multiIf(SpanAttributes['planscope.run.id'] != '', SpanAttributes['planscope.run.id'],
                SpanModelSource != 'planscope', TraceId,
                ''),
        '') CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS SpanModelOutcome LowCardinality(String) MATERIALIZED
        if(SpanModelKind = 'run',
           multiIf(SpanAttributes['planscope.run.outcome'] != '',
                   SpanAttributes['planscope.run.outcome'],
                   SpanModelSource != 'planscope' AND StatusCode IN ('Error', 'STATUS_CODE_ERROR'),
                   'failure',
                   'unknown'),
           '') CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS SpanModelAgentName String MATERIALIZED
        if(SpanModelKind IN ('run', 'step'),
           multiIf(SpanAttributes['gen_ai.agent.name'] != '', SpanAttributes['gen_ai.agent.name'],
                   SpanAttributes['agent.name'] != '', SpanAttributes['agent.name'],
                   SpanAttributes['agent_name'] != '', SpanAttributes['agent_name'],
                   SpanModelSource = 'planscope', '',
                   SpanAttributes['traceloop.entity.name'] != '',
                   SpanAttributes['traceloop.entity.name'],
                   JSONExtractString(SpanAttributes['metadata'], 'langgraph_node') != '',
                   JSONExtractString(SpanAttributes['metadata'], 'langgraph_node'),
                   SpanModelKind = 'step', toString(SpanName),
                   ''),
           '') CODEC(ZSTD(1)),
    -- ALIAS columns are computed for every row a view reads, before its WHERE: only cheap ones
    ADD COLUMN IF NOT EXISTS SpanModelInferred UInt8 ALIAS
        toUInt8(SpanModelKind IN ('run', 'plan', 'step') AND SpanModelSource != 'planscope'),
    -- the exporter's pre-v0.108 STATUS_CODE_* spelling counts as what it means (0010)
    ADD COLUMN IF NOT EXISTS SpanModelStatusCode LowCardinality(String) ALIAS multiIf(
        StatusCode IN ('Error', 'STATUS_CODE_ERROR'), 'Error',
        StatusCode IN ('Ok', 'STATUS_CODE_OK'), 'Ok',
        'Unset');

-- 2. runs ------------------------------------------------------------------------------------------
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_runs_mv {on_cluster}
TO {db}.planscope_runs
AS SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    SpanModelRunId AS RunId,
    SpanModelAgentName AS AgentName,
    SpanAttributes['gen_ai.agent.id'] AS AgentId,
    SpanAttributes['gen_ai.conversation.id'] AS ConversationId,
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
    StatusMessage,
    SpanAttributes['error.type'] AS ErrorType,
    SpanModelSource AS Source,
    SpanModelInferred AS Inferred
FROM {db}.otel_traces
WHERE SpanModelKind = 'run';

-- 3. plans: planscope's plan JSON, or a plan observed in an inferred span's output (0011, 3.)
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_plans_mv {on_cluster}
TO {db}.planscope_plans
AS WITH
    -- an inferred span's output (0011's Output), else planscope's plan JSON
    if(SpanModelInferred = 1,
       multiIf(SpanAttributes['output.value'] != '', SpanAttributes['output.value'],
               SpanAttributes['traceloop.entity.output'] != '',
               SpanAttributes['traceloop.entity.output'],
               SpanAttributes['gen_ai.output.messages'] != '',
               JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                 'parts', 1, 'content'),
               SpanAttributes['planscope.output']),
       SpanAttributes['planscope.plan.json']) AS Plan,
    multiIf(SpanModelInferred = 0, JSONExtractArrayRaw(Plan, 'steps'),
            SpanModelKind = 'plan' AND JSONType(Plan) = 'Array', JSONExtractArrayRaw(Plan),
            JSONType(Plan, 'steps') = 'Array', JSONExtractArrayRaw(Plan, 'steps'),
            JSONExtractArrayRaw(Plan, 'plan')) AS Steps
SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    SpanAttributes['planscope.run.id'] AS RunId,
    if(SpanAttributes['planscope.plan.id'] != '', SpanAttributes['planscope.plan.id'],
       if(SpanModelInferred = 1, '', JSONExtract(Plan, 'id', 'String'))) AS PlanId,
    if(SpanAttributes['planscope.plan.version'] != '',
       toUInt32OrZero(SpanAttributes['planscope.plan.version']),
       if(SpanModelInferred = 1, 0, JSONExtract(Plan, 'version', 'UInt32'))) AS Version,
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
    SpanModelStatusCode AS StatusCode,
    SpanModelSource AS Source,
    SpanModelInferred AS Inferred
FROM {db}.otel_traces
WHERE SpanModelKind = 'plan'
   OR (SpanModelKind IN ('run', 'step') AND SpanModelInferred = 1 AND Plan != ''
       AND (JSONType(Plan, 'steps') = 'Array' OR JSONType(Plan, 'plan') = 'Array')
       AND length(Steps) > 0);

-- 4. plan steps: one row per element of the plan's steps (none for garbage JSON; 0011, 4.) ------
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_plan_steps_mv {on_cluster}
TO {db}.planscope_plan_steps
AS WITH
    -- an inferred span's output (0011's Output), else planscope's plan JSON
    if(SpanModelInferred = 1,
       multiIf(SpanAttributes['output.value'] != '', SpanAttributes['output.value'],
               SpanAttributes['traceloop.entity.output'] != '',
               SpanAttributes['traceloop.entity.output'],
               SpanAttributes['gen_ai.output.messages'] != '',
               JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                 'parts', 1, 'content'),
               SpanAttributes['planscope.output']),
       SpanAttributes['planscope.plan.json']) AS Plan,
    multiIf(SpanModelInferred = 0, JSONExtractArrayRaw(Plan, 'steps'),
            SpanModelKind = 'plan' AND JSONType(Plan) = 'Array', JSONExtractArrayRaw(Plan),
            JSONType(Plan, 'steps') = 'Array', JSONExtractArrayRaw(Plan, 'steps'),
            JSONExtractArrayRaw(Plan, 'plan')) AS Steps,
    JSONType(StepJson) = 'String' AS IsText
SELECT
    Project,
    TraceId,
    SpanId AS PlanSpanId,
    SpanAttributes['planscope.run.id'] AS RunId,
    if(SpanAttributes['planscope.plan.id'] != '', SpanAttributes['planscope.plan.id'],
       if(SpanModelInferred = 1, '', JSONExtract(Plan, 'id', 'String'))) AS PlanId,
    if(SpanAttributes['planscope.plan.version'] != '',
       toUInt32OrZero(SpanAttributes['planscope.plan.version']),
       if(SpanModelInferred = 1, 0, JSONExtract(Plan, 'version', 'UInt32'))) AS PlanVersion,
    if(SpanAttributes['planscope.plan.scope'] != '', SpanAttributes['planscope.plan.scope'],
       JSONExtract(Plan, 'scope', 'String')) AS Scope,
    toUInt32(StepIndex - 1) AS Position,
    multiIf(SpanModelInferred = 0, JSONExtract(StepJson, 'id', 'String'),
            IsText, toString(StepIndex),
            JSONExtract(StepJson, 'id', 'String') != '', JSONExtract(StepJson, 'id', 'String'),
            JSONExtract(StepJson, 'step_id', 'String') != '',
            JSONExtract(StepJson, 'step_id', 'String'),
            JSONExtract(StepJson, 'name', 'String') != '', JSONExtract(StepJson, 'name', 'String'),
            toString(StepIndex)) AS StepId,
    multiIf(SpanModelInferred = 0, JSONExtract(StepJson, 'description', 'String'),
            IsText, JSONExtractString(StepJson),
            JSONExtract(StepJson, 'description', 'String') != '',
            JSONExtract(StepJson, 'description', 'String'),
            JSONExtract(StepJson, 'task', 'String') != '', JSONExtract(StepJson, 'task', 'String'),
            JSONExtract(StepJson, 'title', 'String')) AS Description,
    multiIf(SpanModelInferred = 0, JSONExtract(StepJson, 'executor', 'String'),
            JSONExtract(StepJson, 'executor', 'String') != '',
            JSONExtract(StepJson, 'executor', 'String'),
            JSONExtract(StepJson, 'assignee', 'String') != '',
            JSONExtract(StepJson, 'assignee', 'String'),
            JSONExtract(StepJson, 'agent', 'String')) AS Executor,
    JSONExtract(StepJson, 'tool', 'String') AS Tool,
    JSONExtract(StepJson, 'depends_on', 'Array(String)') AS DependsOn,
    JSONExtract(StepJson, 'requires', 'Array(String)') AS Requires,
    JSONExtract(StepJson, 'produces', 'Array(String)') AS Produces,
    toUInt8(JSONExtract(StepJson, 'irreversible', 'Bool')) AS Irreversible,
    Timestamp AS Start,
    SpanModelInferred AS Inferred
FROM {db}.otel_traces
ARRAY JOIN
    Steps AS StepJson,
    arrayEnumerate(Steps) AS StepIndex
WHERE SpanModelKind = 'plan'
   OR (SpanModelKind IN ('run', 'step') AND SpanModelInferred = 1 AND Plan != ''
       AND (JSONType(Plan, 'steps') = 'Array' OR JSONType(Plan, 'plan') = 'Array'));

-- 5. step attempts (0011, 5.: a foreign step has attempt 0 and its span status, Unset = ok) ------
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
    SpanAttributes['error.type'] AS ErrorType,
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
    StatusMessage,
    SpanModelSource AS Source,
    SpanModelInferred AS Inferred
FROM {db}.otel_traces
WHERE SpanModelKind = 'step';

-- 6. tool calls -----------------------------------------------------------------------------------
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
    if(SpanAttributes['gen_ai.tool.call.id'] != '', SpanAttributes['gen_ai.tool.call.id'],
       SpanAttributes['tool_call.id']) AS ToolCallId,
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
    SpanAttributes['error.type'] AS ErrorType,
    ServiceName,
    Timestamp AS Start,
    Duration,
    SpanModelStatusCode AS StatusCode,
    SpanModelSource AS Source
FROM {db}.otel_traces
WHERE SpanModelKind = 'tool';

-- 7. LLM calls: usage and a cost the span carries itself (0011, 7.; planscope_llm_costs prices
-- the others). Numbers may arrive as "12" or "12.0".
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_llm_calls_mv {on_cluster}
TO {db}.planscope_llm_calls
AS WITH
    multiIf(SpanAttributes['planscope.llm.cost_usd'] != '', SpanAttributes['planscope.llm.cost_usd'],
            SpanAttributes['llm.cost.total'] != '', SpanAttributes['llm.cost.total'],
            SpanAttributes['operation.cost'] != '', SpanAttributes['operation.cost'],
            SpanAttributes['gen_ai.usage.cost']) AS CarriedCost
SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    SpanAttributes['planscope.run.id'] AS RunId,
    SpanAttributes['planscope.plan.id'] AS PlanId,
    SpanAttributes['planscope.step.id'] AS StepId,
    toUInt32OrZero(SpanAttributes['planscope.step.attempt']) AS Attempt,
    lower(multiIf(SpanAttributes['gen_ai.provider.name'] != '', SpanAttributes['gen_ai.provider.name'],
                  SpanAttributes['gen_ai.system'] != '', SpanAttributes['gen_ai.system'],
                  SpanAttributes['llm.provider'] != '', SpanAttributes['llm.provider'],
                  SpanAttributes['llm.system'])) AS Provider,
    multiIf(SpanAttributes['gen_ai.request.model'] != '', SpanAttributes['gen_ai.request.model'],
            SpanAttributes['llm.model_name'] != '', SpanAttributes['llm.model_name'],
            SpanAttributes['gen_ai.response.model']) AS Model,
    if(SpanAttributes['gen_ai.response.model'] != '', SpanAttributes['gen_ai.response.model'],
       SpanAttributes['llm.model_name']) AS ResponseModel,
    SpanAttributes['planscope.llm.role'] AS Role,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.input_tokens'] != '', SpanAttributes['gen_ai.usage.input_tokens'],
        SpanAttributes['llm.token_count.prompt'] != '', SpanAttributes['llm.token_count.prompt'],
        SpanAttributes['gen_ai.usage.prompt_tokens'])))) AS InputTokens,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.output_tokens'] != '',
        SpanAttributes['gen_ai.usage.output_tokens'],
        SpanAttributes['llm.token_count.completion'] != '',
        SpanAttributes['llm.token_count.completion'],
        SpanAttributes['gen_ai.usage.completion_tokens'])))) AS OutputTokens,
    greatest(0., toFloat64OrZero(CarriedCost)) AS CostUsd,
    SpanAttributes['error.type'] AS ErrorType,
    ServiceName,
    Timestamp AS Start,
    Duration,
    SpanModelStatusCode AS StatusCode,
    SpanModelSource AS Source,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.cache_read.input_tokens'] != '',
        SpanAttributes['gen_ai.usage.cache_read.input_tokens'],
        SpanAttributes['llm.token_count.prompt_details.cache_read'] != '',
        SpanAttributes['llm.token_count.prompt_details.cache_read'],
        SpanAttributes['gen_ai.usage.cache_read_input_tokens'])))) AS CacheReadTokens,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.cache_creation.input_tokens'] != '',
        SpanAttributes['gen_ai.usage.cache_creation.input_tokens'],
        SpanAttributes['llm.token_count.prompt_details.cache_write'] != '',
        SpanAttributes['llm.token_count.prompt_details.cache_write'],
        SpanAttributes['gen_ai.usage.cache_creation_input_tokens'])))) AS CacheWriteTokens,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.reasoning.output_tokens'] != '',
        SpanAttributes['gen_ai.usage.reasoning.output_tokens'],
        SpanAttributes['llm.token_count.completion_details.reasoning'] != '',
        SpanAttributes['llm.token_count.completion_details.reasoning'],
        SpanAttributes['gen_ai.usage.reasoning_tokens'])))) AS ReasoningTokens,
    if(CarriedCost != '', 'span', '') AS CostSource
FROM {db}.otel_traces
WHERE SpanModelKind = 'llm';

-- 8. trace summary for GET /api/traces (0002's semantics: partial rows, read with GROUP BY). The
-- inner SELECT renames inputs so no output alias shadows a column another aggregate reads.
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
    maxIf(Run, IsRun) AS RunId,
    maxIf(Agent, IsRun) AS AgentName,
    maxIf(Out, IsRun) AS Outcome,
    maxIf(Var, IsRun) AS Variant
FROM (
    SELECT
        Project,
        TraceId,
        Timestamp AS Ts,
        addNanoseconds(Timestamp, Duration) AS EndTs,
        SpanModelStatusCode = 'Error' AS IsError,
        toString(ServiceName) AS Svc,
        toString(SpanName) AS Name,
        ParentSpanId = '' AS IsRoot,
        SpanModelKind = 'run' AS IsRun,
        SpanModelRunId AS Run,
        SpanModelAgentName AS Agent,
        SpanModelOutcome AS Out,
        if(SpanModelKind = 'run', SpanAttributes['planscope.run.variant'], '') AS Var
    FROM {db}.otel_traces
    WHERE TraceId != ''
)
GROUP BY Project, TraceId;

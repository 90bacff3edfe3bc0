-- The span model: ONE mapping from any instrumentation's spans to planscope's run / plan / step
-- attempt / tool call / LLM call, applied at insert time (docs/semantic-conventions.md, "Spans
-- planscope did not shape", documents it rule by rule; docs/storage.md says why it is SQL).
--
--   otel_traces --planscope_span_model_mv--> planscope_span_model (Null: classified spans, not
--   stored) --one view per kind--> planscope_runs / _plans / _plan_steps / _step_attempts /
--   _tool_calls / _llm_calls / _trace_index
--
-- Every INSERT into otel_traces goes through it, whoever writes: planscope's writer, `planscope
-- import` (which sends spans through the collector), or an OpenTelemetry Collector's
-- clickhouseexporter writing straight into the table.
--
-- A span's kind is decided ONCE, in planscope_span_model_mv, from its own attributes, in this
-- order (the first that applies wins):
--   1. planscope.span.kind (planscope's SDK and runtimes);
--   2. gen_ai.operation.name (OpenTelemetry GenAI conventions: pydantic-ai, OpenLLMetry >= 0.40,
--      plain SDK spans): invoke_agent / invoke_workflow -> run at the trace root, else a step;
--      plan -> plan; execute_tool -> tool; chat / generate_content / text_completion /
--      embeddings -> llm; anything else (create_agent, ...) -> other;
--   3. openinference.span.kind: AGENT -> run at the root, else step; CHAIN -> run at the root, a
--      step when it is a LangGraph node (metadata.langgraph_node equals the span's name), else
--      other; TOOL / RETRIEVER / RERANKER -> tool; LLM / EMBEDDING -> llm; others -> other;
--   4. traceloop.span.kind (OpenLLMetry): workflow / agent -> run at the root, else step; task ->
--      step; tool -> tool; llm.request.type or the deprecated gen_ai.system -> llm;
--   5. framework shapes: a span with gen_ai.tool.name and no operation (pydantic-ai's older
--      "running tool") -> tool; the root "agent run" span with agent_name (older pydantic-ai)
--      -> run.
-- Runs, plans and steps found by rules 2-5 are marked Inferred = 1: they are structure this
-- mapping read off another convention, and the analyzers never report findings about the
-- structure itself (bad plan JSON, plan drift, context starvation) for them. A plan is read only
-- from what a span shows: an explicit plan operation, or a step/run whose output is a JSON object
-- with a "steps" or "plan" array. Never from a span's name.
--
-- Rules every view follows (as in 0002): a missing attribute yields the column default, never an
-- insert failure (Map lookups give '', numbers go through *OrZero, JSON functions return defaults
-- on malformed input), because a failing view would fail the INSERT into otel_traces itself.
-- StatusCode is normalised here once: the exporter's pre-v0.108 STATUS_CODE_* spelling counts as
-- what it means (see 0010).

-- 1. the classified span stream (Null engine: rows pass through to the views below, nothing is
--    kept). Columns are computed once per span; per-kind fields are computed by the per-kind
--    views, only for the rows of their kind.
CREATE TABLE IF NOT EXISTS {db}.planscope_span_model {on_cluster} (
    Project LowCardinality(String),
    TraceId String,
    SpanId String,
    ParentSpanId String,
    SpanName String,
    ServiceName String,
    Start DateTime64(9),
    Duration UInt64,
    StatusCode LowCardinality(String),
    StatusMessage String,
    Attrs Map(LowCardinality(String), String),
    Kind LowCardinality(String),
    Source LowCardinality(String),
    Inferred UInt8,
    RunId String,
    AgentName String,
    Outcome String,
    Variant String,
    StepName String,
    Output String
) ENGINE = Null;

-- The 0002/0010 views read otel_traces directly; they are replaced by views over the stream.
-- (Migrations run before the collector accepts spans, so no insert falls between DROP and CREATE.)
DROP VIEW IF EXISTS {db}.planscope_runs_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_plans_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_plan_steps_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_step_attempts_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_tool_calls_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_llm_calls_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_trace_index_mv {on_cluster};

ALTER TABLE {db}.planscope_trace_index {on_cluster}
    DROP COLUMN IF EXISTS InputTokens,
    DROP COLUMN IF EXISTS OutputTokens,
    DROP COLUMN IF EXISTS CostUsd;

-- Where each row came from and whether its structure was inferred.
ALTER TABLE {db}.planscope_runs {on_cluster}
    ADD COLUMN IF NOT EXISTS Source LowCardinality(String) CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS Inferred UInt8;
ALTER TABLE {db}.planscope_plans {on_cluster}
    ADD COLUMN IF NOT EXISTS Source LowCardinality(String) CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS Inferred UInt8;
ALTER TABLE {db}.planscope_plan_steps {on_cluster}
    ADD COLUMN IF NOT EXISTS Inferred UInt8;
ALTER TABLE {db}.planscope_step_attempts {on_cluster}
    ADD COLUMN IF NOT EXISTS Source LowCardinality(String) CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS Inferred UInt8;
ALTER TABLE {db}.planscope_tool_calls {on_cluster}
    ADD COLUMN IF NOT EXISTS Source LowCardinality(String) CODEC(ZSTD(1));
ALTER TABLE {db}.planscope_llm_calls {on_cluster}
    ADD COLUMN IF NOT EXISTS Source LowCardinality(String) CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS CacheReadTokens UInt64 CODEC(T64, ZSTD(1)),
    ADD COLUMN IF NOT EXISTS CacheWriteTokens UInt64 CODEC(T64, ZSTD(1)),
    ADD COLUMN IF NOT EXISTS ReasoningTokens UInt64 CODEC(T64, ZSTD(1)),
    ADD COLUMN IF NOT EXISTS CostSource LowCardinality(String) CODEC(ZSTD(1));

CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_span_model_mv {on_cluster}
TO {db}.planscope_span_model
AS WITH
    SpanAttributes['planscope.span.kind'] AS PsKind,
    SpanAttributes['gen_ai.operation.name'] AS Op,
    upper(SpanAttributes['openinference.span.kind']) AS OiKind,
    lower(SpanAttributes['traceloop.span.kind']) AS TlKind,
    ParentSpanId = '' AS IsRoot,
    JSONExtractString(SpanAttributes['metadata'], 'langgraph_node') AS GraphNode,
    multiIf(
        PsKind != '', PsKind,
        Op IN ('invoke_agent', 'invoke_workflow'), if(IsRoot, 'run', 'step'),
        Op = 'plan', 'plan',
        Op = 'execute_tool', 'tool',
        Op IN ('chat', 'generate_content', 'text_completion', 'embeddings'), 'llm',
        Op != '', 'other',
        OiKind = 'AGENT', if(IsRoot, 'run', 'step'),
        OiKind = 'CHAIN',
            multiIf(IsRoot, 'run', GraphNode != '' AND GraphNode = SpanName, 'step', 'other'),
        OiKind IN ('TOOL', 'RETRIEVER', 'RERANKER'), 'tool',
        OiKind IN ('LLM', 'EMBEDDING'), 'llm',
        OiKind != '', 'other',
        TlKind IN ('workflow', 'agent'), if(IsRoot, 'run', 'step'),
        TlKind = 'task', 'step',
        TlKind = 'tool', 'tool',
        TlKind != '', 'other',
        SpanAttributes['llm.request.type'] != '' OR SpanAttributes['gen_ai.system'] != '', 'llm',
        SpanAttributes['gen_ai.tool.name'] != '', 'tool',
        IsRoot AND SpanAttributes['agent_name'] != '', 'run',
        'other') AS K,
    PsKind = '' AND K IN ('run', 'plan', 'step') AS IsInferred
SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    toString(SpanName) AS SpanName,
    toString(ServiceName) AS ServiceName,
    Timestamp AS Start,
    Duration,
    multiIf(StatusCode IN ('Error', 'STATUS_CODE_ERROR'), 'Error',
            StatusCode IN ('Ok', 'STATUS_CODE_OK'), 'Ok', 'Unset') AS StatusCode,
    StatusMessage,
    SpanAttributes AS Attrs,
    K AS Kind,
    multiIf(PsKind != '', 'planscope', Op != '', 'genai', OiKind != '', 'openinference',
            TlKind != '' OR SpanAttributes['llm.request.type'] != '', 'traceloop',
            SpanAttributes['gen_ai.system'] != '' OR SpanAttributes['gen_ai.tool.name'] != '',
            'genai', K != 'other', 'framework', '') AS Source,
    toUInt8(IsInferred) AS Inferred,
    -- run-level fields (the runs table and the trace index both read them)
    if(K = 'run',
       multiIf(SpanAttributes['planscope.run.id'] != '', SpanAttributes['planscope.run.id'],
               IsInferred, TraceId, ''),
       '') AS RunId,
    if(K IN ('run', 'step'),
       multiIf(SpanAttributes['gen_ai.agent.name'] != '', SpanAttributes['gen_ai.agent.name'],
               SpanAttributes['agent.name'] != '', SpanAttributes['agent.name'],
               SpanAttributes['agent_name'] != '', SpanAttributes['agent_name'],
               IsInferred AND SpanAttributes['traceloop.entity.name'] != '',
               SpanAttributes['traceloop.entity.name'],
               IsInferred AND GraphNode != '', GraphNode,
               IsInferred AND K = 'step', toString(SpanName),
               ''),
       '') AS AgentName,
    if(K = 'run',
       multiIf(SpanAttributes['planscope.run.outcome'] != '', SpanAttributes['planscope.run.outcome'],
               IsInferred AND StatusCode IN ('Error', 'STATUS_CODE_ERROR'), 'failure',
               'unknown'),
       '') AS Outcome,
    if(K = 'run', SpanAttributes['planscope.run.variant'], '') AS Variant,
    -- the step a foreign step span stands for: a LangGraph node, a Traceloop task, an agent
    if(K = 'step' AND IsInferred,
       multiIf(GraphNode != '', GraphNode,
               SpanAttributes['traceloop.entity.name'] != '',
               SpanAttributes['traceloop.entity.name'],
               SpanAttributes['gen_ai.agent.name'] != '', SpanAttributes['gen_ai.agent.name'],
               toString(SpanName)),
       '') AS StepName,
    -- what a run/plan/step span showed as its output (an observed plan is read from it)
    if(IsInferred,
       multiIf(SpanAttributes['output.value'] != '', SpanAttributes['output.value'],
               SpanAttributes['traceloop.entity.output'] != '',
               SpanAttributes['traceloop.entity.output'],
               SpanAttributes['gen_ai.output.messages'] != '',
               JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                 'parts', 1, 'content'),
               SpanAttributes['planscope.output']),
       '') AS Output
FROM {db}.otel_traces;

-- 2. runs ------------------------------------------------------------------------------------------
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_runs_mv {on_cluster}
TO {db}.planscope_runs
AS SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    RunId,
    AgentName,
    Attrs['gen_ai.agent.id'] AS AgentId,
    Attrs['gen_ai.conversation.id'] AS ConversationId,
    multiIf(Attrs['planscope.run.objective'] != '', Attrs['planscope.run.objective'],
            Inferred, leftUTF8(multiIf(Attrs['input.value'] != '', Attrs['input.value'],
                                       Attrs['traceloop.entity.input']), 4000),
            '') AS Objective,
    Variant,
    Outcome,
    Attrs['planscope.run.outcome_reason'] AS OutcomeReason,
    Attrs['planscope.run.budget'] AS Budget,
    ServiceName,
    Start,
    addNanoseconds(Start, Duration) AS End,
    Duration,
    StatusCode,
    StatusMessage,
    Attrs['error.type'] AS ErrorType,
    Source,
    Inferred
FROM {db}.planscope_span_model
WHERE Kind = 'run';

-- 3. plans: planscope's plan JSON, or a plan observed in a span's output -----------------------
-- An observed plan is a JSON array (for an explicit plan operation), or an object with a
-- "steps" or "plan" array (for any run/step/plan span). Its PlanId is '' (one implicit plan per
-- trace, so a second observed plan is a replan) and its version 0 (the run model orders them).
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_plans_mv {on_cluster}
TO {db}.planscope_plans
AS WITH
    if(Inferred, Output, Attrs['planscope.plan.json']) AS Plan,
    multiIf(NOT Inferred, JSONExtractArrayRaw(Plan, 'steps'),
            Kind = 'plan' AND JSONType(Plan) = 'Array', JSONExtractArrayRaw(Plan),
            JSONType(Plan, 'steps') = 'Array', JSONExtractArrayRaw(Plan, 'steps'),
            JSONExtractArrayRaw(Plan, 'plan')) AS Steps
SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    Attrs['planscope.run.id'] AS RunId,
    if(Attrs['planscope.plan.id'] != '', Attrs['planscope.plan.id'],
       if(Inferred, '', JSONExtract(Plan, 'id', 'String'))) AS PlanId,
    if(Attrs['planscope.plan.version'] != '',
       toUInt32OrZero(Attrs['planscope.plan.version']),
       if(Inferred, 0, JSONExtract(Plan, 'version', 'UInt32'))) AS Version,
    toUInt32OrNull(Attrs['planscope.plan.parent_version']) AS ParentVersion,
    if(Attrs['planscope.plan.scope'] != '', Attrs['planscope.plan.scope'],
       JSONExtract(Plan, 'scope', 'String')) AS Scope,
    JSONExtract(Plan, 'objective', 'String') AS Objective,
    if(Attrs['planscope.plan.replan_reason'] != '', Attrs['planscope.plan.replan_reason'],
       JSONExtract(Plan, 'replan_reason', 'String')) AS ReplanReason,
    Attrs['planscope.plan.approval'] AS Approval,
    if(Attrs['planscope.plan.step_count'] != '',
       toUInt32OrZero(Attrs['planscope.plan.step_count']),
       toUInt32(length(Steps))) AS StepCount,
    Plan AS PlanJson,
    toUInt8(isValidJSON(Plan)) AS PlanJsonValid,
    ServiceName,
    Start,
    Duration,
    StatusCode,
    Source,
    Inferred
FROM {db}.planscope_span_model
WHERE Kind = 'plan'
   OR (Inferred AND Kind IN ('run', 'step') AND Output != ''
       AND (JSONType(Output, 'steps') = 'Array' OR JSONType(Output, 'plan') = 'Array')
       AND length(Steps) > 0);

-- 4. plan steps: one row per element of the plan's steps (none for garbage JSON) -----------------
-- An observed step may be a string (its description; id = its 1-based position) or an object
-- (id / step_id / name; description / task / title; executor / assignee / agent; tool).
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_plan_steps_mv {on_cluster}
TO {db}.planscope_plan_steps
AS WITH
    if(Inferred, Output, Attrs['planscope.plan.json']) AS Plan,
    multiIf(NOT Inferred, JSONExtractArrayRaw(Plan, 'steps'),
            Kind = 'plan' AND JSONType(Plan) = 'Array', JSONExtractArrayRaw(Plan),
            JSONType(Plan, 'steps') = 'Array', JSONExtractArrayRaw(Plan, 'steps'),
            JSONExtractArrayRaw(Plan, 'plan')) AS Steps,
    JSONType(StepJson) = 'String' AS IsText
SELECT
    Project,
    TraceId,
    SpanId AS PlanSpanId,
    Attrs['planscope.run.id'] AS RunId,
    if(Attrs['planscope.plan.id'] != '', Attrs['planscope.plan.id'],
       if(Inferred, '', JSONExtract(Plan, 'id', 'String'))) AS PlanId,
    if(Attrs['planscope.plan.version'] != '',
       toUInt32OrZero(Attrs['planscope.plan.version']),
       if(Inferred, 0, JSONExtract(Plan, 'version', 'UInt32'))) AS PlanVersion,
    if(Attrs['planscope.plan.scope'] != '', Attrs['planscope.plan.scope'],
       JSONExtract(Plan, 'scope', 'String')) AS Scope,
    toUInt32(StepIndex - 1) AS Position,
    multiIf(NOT Inferred, JSONExtract(StepJson, 'id', 'String'),
            IsText, toString(StepIndex),
            JSONExtract(StepJson, 'id', 'String') != '', JSONExtract(StepJson, 'id', 'String'),
            JSONExtract(StepJson, 'step_id', 'String') != '',
            JSONExtract(StepJson, 'step_id', 'String'),
            JSONExtract(StepJson, 'name', 'String') != '', JSONExtract(StepJson, 'name', 'String'),
            toString(StepIndex)) AS StepId,
    multiIf(NOT Inferred, JSONExtract(StepJson, 'description', 'String'),
            IsText, JSONExtractString(StepJson),
            JSONExtract(StepJson, 'description', 'String') != '',
            JSONExtract(StepJson, 'description', 'String'),
            JSONExtract(StepJson, 'task', 'String') != '', JSONExtract(StepJson, 'task', 'String'),
            JSONExtract(StepJson, 'title', 'String')) AS Description,
    multiIf(NOT Inferred, JSONExtract(StepJson, 'executor', 'String'),
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
    Start,
    Inferred
FROM {db}.planscope_span_model
ARRAY JOIN
    Steps AS StepJson,
    arrayEnumerate(Steps) AS StepIndex
WHERE Kind = 'plan'
   OR (Inferred AND Kind IN ('run', 'step') AND Output != ''
       AND (JSONType(Output, 'steps') = 'Array' OR JSONType(Output, 'plan') = 'Array'));

-- 5. step attempts: planscope step spans (one per attempt), or foreign executor-level spans
-- (a sub-agent, a LangGraph node, a Traceloop task). A foreign step has no attempt number
-- (0): its attempts are its spans in start order. Its status is its span status (Unset = ok).
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_step_attempts_mv {on_cluster}
TO {db}.planscope_step_attempts
AS SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    Attrs['planscope.run.id'] AS RunId,
    Attrs['planscope.plan.id'] AS PlanId,
    toUInt32OrZero(Attrs['planscope.plan.version']) AS PlanVersion,
    if(Inferred, StepName, Attrs['planscope.step.id']) AS StepId,
    toUInt32OrZero(Attrs['planscope.step.attempt']) AS Attempt,
    multiIf(Attrs['planscope.step.status'] != '', Attrs['planscope.step.status'],
            StatusCode = 'Error', 'error',
            StatusCode = 'Ok' OR Inferred, 'ok', '') AS Status,
    Attrs['error.type'] AS ErrorType,
    Attrs['planscope.step.error_fingerprint'] AS ErrorFingerprint,
    if(Inferred, AgentName, Attrs['planscope.step.executor']) AS Executor,
    JSONExtract(Attrs['planscope.step.context.keys'], 'Array(String)') AS ContextKeys,
    toUInt64OrZero(Attrs['planscope.step.context.tokens']) AS ContextTokens,
    Attrs['planscope.step.self_assessment'] AS SelfAssessment,
    toUInt32OrZero(Attrs['planscope.step.depth']) AS Depth,
    Attrs['planscope.step.input_hash'] AS InputHash,
    ServiceName,
    Start,
    addNanoseconds(Start, Duration) AS End,
    Duration,
    StatusCode,
    StatusMessage,
    Source,
    Inferred
FROM {db}.planscope_span_model
WHERE Kind = 'step';

-- 6. tool calls -----------------------------------------------------------------------------------
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_tool_calls_mv {on_cluster}
TO {db}.planscope_tool_calls
AS SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    Attrs['planscope.run.id'] AS RunId,
    Attrs['planscope.plan.id'] AS PlanId,
    toUInt32OrZero(Attrs['planscope.plan.version']) AS PlanVersion,
    Attrs['planscope.step.id'] AS StepId,
    toUInt32OrZero(Attrs['planscope.step.attempt']) AS Attempt,
    multiIf(Attrs['gen_ai.tool.name'] != '', Attrs['gen_ai.tool.name'],
            Attrs['tool.name'] != '', Attrs['tool.name'],
            Attrs['traceloop.entity.name'] != '', Attrs['traceloop.entity.name'],
            SpanName) AS ToolName,
    if(Attrs['gen_ai.tool.call.id'] != '', Attrs['gen_ai.tool.call.id'],
       Attrs['tool_call.id']) AS ToolCallId,
    Attrs['planscope.tool.resource'] AS Resource,
    multiIf(Attrs['planscope.tool.effect'] != '', Attrs['planscope.tool.effect'],
            upper(Attrs['openinference.span.kind']) IN ('RETRIEVER', 'RERANKER'), 'read',
            '') AS Effect,
    Attrs['planscope.tool.args_hash'] AS ArgsHash,
    multiIf(Attrs['gen_ai.tool.call.arguments'] != '', Attrs['gen_ai.tool.call.arguments'],
            Attrs['input.value'] != '', Attrs['input.value'],
            Attrs['traceloop.entity.input'] != '', Attrs['traceloop.entity.input'],
            Attrs['tool_arguments']) AS Arguments,
    multiIf(Attrs['gen_ai.tool.call.result'] != '', Attrs['gen_ai.tool.call.result'],
            Attrs['output.value'] != '', Attrs['output.value'],
            Attrs['traceloop.entity.output'] != '', Attrs['traceloop.entity.output'],
            Attrs['tool_response']) AS Result,
    Attrs['error.type'] AS ErrorType,
    ServiceName,
    Start,
    Duration,
    StatusCode,
    Source
FROM {db}.planscope_span_model
WHERE Kind = 'tool';

-- 7. LLM calls: usage and a cost the span carries itself (else the run model prices it from
-- planscope_model_prices, below). Numbers may arrive as "12" or "12.0".
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_llm_calls_mv {on_cluster}
TO {db}.planscope_llm_calls
AS WITH
    multiIf(Attrs['planscope.llm.cost_usd'] != '', Attrs['planscope.llm.cost_usd'],
            Attrs['llm.cost.total'] != '', Attrs['llm.cost.total'],
            Attrs['operation.cost'] != '', Attrs['operation.cost'],
            Attrs['gen_ai.usage.cost']) AS CarriedCost
SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    Attrs['planscope.run.id'] AS RunId,
    Attrs['planscope.plan.id'] AS PlanId,
    Attrs['planscope.step.id'] AS StepId,
    toUInt32OrZero(Attrs['planscope.step.attempt']) AS Attempt,
    lower(multiIf(Attrs['gen_ai.provider.name'] != '', Attrs['gen_ai.provider.name'],
                  Attrs['gen_ai.system'] != '', Attrs['gen_ai.system'],
                  Attrs['llm.provider'] != '', Attrs['llm.provider'],
                  Attrs['llm.system'])) AS Provider,
    multiIf(Attrs['gen_ai.request.model'] != '', Attrs['gen_ai.request.model'],
            Attrs['llm.model_name'] != '', Attrs['llm.model_name'],
            Attrs['gen_ai.response.model']) AS Model,
    if(Attrs['gen_ai.response.model'] != '', Attrs['gen_ai.response.model'],
       Attrs['llm.model_name']) AS ResponseModel,
    Attrs['planscope.llm.role'] AS Role,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        Attrs['gen_ai.usage.input_tokens'] != '', Attrs['gen_ai.usage.input_tokens'],
        Attrs['llm.token_count.prompt'] != '', Attrs['llm.token_count.prompt'],
        Attrs['gen_ai.usage.prompt_tokens'])))) AS InputTokens,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        Attrs['gen_ai.usage.output_tokens'] != '', Attrs['gen_ai.usage.output_tokens'],
        Attrs['llm.token_count.completion'] != '', Attrs['llm.token_count.completion'],
        Attrs['gen_ai.usage.completion_tokens'])))) AS OutputTokens,
    greatest(0., toFloat64OrZero(CarriedCost)) AS CostUsd,
    Attrs['error.type'] AS ErrorType,
    ServiceName,
    Start,
    Duration,
    StatusCode,
    Source,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        Attrs['gen_ai.usage.cache_read.input_tokens'] != '',
        Attrs['gen_ai.usage.cache_read.input_tokens'],
        Attrs['llm.token_count.prompt_details.cache_read'] != '',
        Attrs['llm.token_count.prompt_details.cache_read'],
        Attrs['gen_ai.usage.cache_read_input_tokens'])))) AS CacheReadTokens,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        Attrs['gen_ai.usage.cache_creation.input_tokens'] != '',
        Attrs['gen_ai.usage.cache_creation.input_tokens'],
        Attrs['llm.token_count.prompt_details.cache_write'] != '',
        Attrs['llm.token_count.prompt_details.cache_write'],
        Attrs['gen_ai.usage.cache_creation_input_tokens'])))) AS CacheWriteTokens,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        Attrs['gen_ai.usage.reasoning.output_tokens'] != '',
        Attrs['gen_ai.usage.reasoning.output_tokens'],
        Attrs['llm.token_count.completion_details.reasoning'] != '',
        Attrs['llm.token_count.completion_details.reasoning'],
        Attrs['gen_ai.usage.reasoning_tokens'])))) AS ReasoningTokens,
    if(CarriedCost != '', 'span', '') AS CostSource
FROM {db}.planscope_span_model
WHERE Kind = 'llm';

-- 8. trace summary for GET /api/traces (semantics as in 0002: partial rows, read with GROUP BY).
-- Tokens and cost are no longer summed here (the columns are dropped): they are the run model's
-- (planscope_llm_costs, planscope_collector.runmodel), so a price learnt later counts too.
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
        Start AS Ts,
        addNanoseconds(Start, Duration) AS EndTs,
        StatusCode = 'Error' AS IsError,
        ServiceName AS Svc,
        SpanName AS Name,
        ParentSpanId = '' AS IsRoot,
        Kind = 'run' AS IsRun,
        RunId AS Run,
        AgentName AS Agent,
        Outcome AS Out,
        Variant AS Var
    FROM {db}.planscope_span_model
    WHERE TraceId != ''
)
GROUP BY Project, TraceId;

-- 9. prices of models, for LLM calls whose span carries no cost (filled by the collector from
-- the genai-prices library: planscope_collector.spanmodel.price_new_models). USD per million
-- tokens; Known = 0 records a model the library does not know (so it is not looked up again).
CREATE TABLE IF NOT EXISTS {db}.planscope_model_prices {on_cluster} (
    Provider LowCardinality(String),
    Model String,
    Known UInt8,
    InputPerMTok Float64,
    OutputPerMTok Float64,
    CacheReadPerMTok Float64,
    CacheWritePerMTok Float64,
    PricedBy String,
    UpdatedAt DateTime64(3)
) ENGINE = {engine:ReplacingMergeTree(UpdatedAt)}
ORDER BY (Provider, Model)
SETTINGS non_replicated_deduplication_window = 10000;

-- 10. LLM calls with their cost: the span's own, else tokens x the model's price. Cached input
-- tokens are part of InputTokens (GenAI conventions) and priced at the cache rates.
CREATE VIEW IF NOT EXISTS {db}.planscope_llm_costs {on_cluster}
AS SELECT
    l.*,
    multiIf(l.CostSource != '', l.CostUsd,
            p.Known = 1,
            (greatest(0, toInt64(l.InputTokens) - toInt64(l.CacheReadTokens)
                         - toInt64(l.CacheWriteTokens)) * p.InputPerMTok
             + l.CacheReadTokens * p.CacheReadPerMTok
             + l.CacheWriteTokens * p.CacheWritePerMTok
             + l.OutputTokens * p.OutputPerMTok) / 1e6,
            l.CostUsd) AS EffectiveCostUsd,
    multiIf(l.CostSource != '', l.CostSource, p.Known = 1, 'price_table', '') AS CostFrom
FROM {db}.planscope_llm_calls AS l
LEFT JOIN (
    SELECT Provider, Model, argMax(Known, UpdatedAt) AS Known,
           argMax(InputPerMTok, UpdatedAt) AS InputPerMTok,
           argMax(OutputPerMTok, UpdatedAt) AS OutputPerMTok,
           argMax(CacheReadPerMTok, UpdatedAt) AS CacheReadPerMTok,
           argMax(CacheWritePerMTok, UpdatedAt) AS CacheWritePerMTok
    FROM {db}.planscope_model_prices
    GROUP BY Provider, Model
) AS p ON p.Provider = l.Provider AND p.Model = l.Model;

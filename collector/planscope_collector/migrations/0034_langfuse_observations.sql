-- Langfuse's OpenTelemetry convention in the span model (issue #13): the spans the Langfuse SDKs
-- write (Python v3+, JS v4+: OpenTelemetry spans of scope `langfuse-sdk`) carry no `gen_ai.*`
-- name, only Langfuse's own `langfuse.observation.*` attributes (docs/semantic-conventions.md,
-- "Spans planscope did not shape"). The mapping, read where 0023 and 0033 read the others':
--
--   * kind, from `langfuse.observation.type`: `agent` a run at the root, else a step (as an
--     OpenInference AGENT); `chain` and `span` a run at the root, else `other` (as a CHAIN);
--     `tool` and `retriever` a tool call; `generation` and `embedding` an LLM call; `guardrail`,
--     `evaluator`, `event` and the rest `other`. The source is `langfuse`;
--   * level: an `ERROR` observation whose OpenTelemetry status is UNSET is an error (the SDK sets
--     the status itself since v3, older ones and other exporters may not); a `WARNING` one
--     leaves the span status alone but fails a step attempt (an attempt the agent itself marked
--     as not done). SpanModelLevel (MATERIALIZED) holds the level on Langfuse spans at WARNING
--     or ERROR, '' on every other span; SpanModelLevelMessage the observation's status message
--     on those spans, read where the span has neither a status message nor an exception's;
--   * `langfuse.observation.input` / `.output` are read where the other conventions' input and
--     output are: a run's objective, a tool call's arguments (the `@observe` decorator's
--     `{"args": [], "kwargs": {...}}` call record as its keyword arguments) and result;
--     an LLM call's model is `langfuse.observation.model.name`, its tokens and cost
--     `langfuse.observation.usage_details` (Langfuse's `input` / `output`, or the provider's
--     `prompt_tokens` / `completion_tokens` as the SDK passed them) and `.cost_details.total`.
--
-- Rows already stored keep their kind and typed rows (a MATERIALIZED column is computed at
-- insert; as 0023, no rewrite): Langfuse spans stored before this migration stay `other`.
-- Migrations run before the collector accepts spans, so no insert falls between DROP and CREATE.

ALTER TABLE {db}.otel_traces {on_cluster}
    MODIFY COLUMN SpanModelKind LowCardinality(String) MATERIALIZED multiIf(
        SpanAttributes['planscope.span.kind'] != '', SpanAttributes['planscope.span.kind'],
        SpanAttributes['gen_ai.operation.name'] IN ('invoke_agent', 'invoke_workflow'),
            if(ParentSpanId = '', 'run', 'step'),
        SpanAttributes['gen_ai.operation.name'] = 'plan', 'plan',
        SpanAttributes['gen_ai.operation.name'] = 'execute_tool', 'tool',
        SpanAttributes['gen_ai.operation.name']
            IN ('chat', 'generate_content', 'text_completion', 'embeddings'), 'llm',
        SpanAttributes['gen_ai.operation.name'] != ''
            AND SpanAttributes['openinference.span.kind'] = ''
            AND SpanAttributes['traceloop.span.kind'] = ''
            AND SpanAttributes['langfuse.observation.type'] = '', 'other',
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
        lower(SpanAttributes['traceloop.span.kind']) = 'task',
            if(SpanAttributes['traceloop.association.properties.langgraph_node']
                   NOT IN ('', SpanAttributes['traceloop.entity.name']),
               'other', 'step'),
        lower(SpanAttributes['traceloop.span.kind']) = 'tool', 'tool',
        SpanAttributes['traceloop.span.kind'] != '', 'other',
        lower(SpanAttributes['langfuse.observation.type']) = 'agent',
            if(ParentSpanId = '', 'run', 'step'),
        lower(SpanAttributes['langfuse.observation.type']) IN ('chain', 'span'),
            if(ParentSpanId = '', 'run', 'other'),
        lower(SpanAttributes['langfuse.observation.type']) IN ('tool', 'retriever'), 'tool',
        lower(SpanAttributes['langfuse.observation.type']) IN ('generation', 'embedding'), 'llm',
        SpanAttributes['langfuse.observation.type'] != '', 'other',
        SpanAttributes['llm.request.type'] != '' OR SpanAttributes['gen_ai.system'] != '', 'llm',
        SpanAttributes['gen_ai.tool.name'] != '', 'tool',
        ParentSpanId = '' AND SpanAttributes['agent_name'] != '', 'run',
        'other') CODEC(ZSTD(1)),
    MODIFY COLUMN SpanModelSource LowCardinality(String) MATERIALIZED multiIf(
        SpanAttributes['planscope.span.kind'] != '', 'planscope',
        SpanAttributes['gen_ai.operation.name'] != '', 'genai',
        SpanAttributes['openinference.span.kind'] != '', 'openinference',
        SpanAttributes['traceloop.span.kind'] != '' OR SpanAttributes['llm.request.type'] != '',
            'traceloop',
        SpanAttributes['langfuse.observation.type'] != '', 'langfuse',
        SpanAttributes['gen_ai.system'] != '' OR SpanAttributes['gen_ai.tool.name'] != '', 'genai',
        ParentSpanId = '' AND SpanAttributes['agent_name'] != '', 'framework',
        '') CODEC(ZSTD(1));

ALTER TABLE {db}.otel_traces {on_cluster}
    ADD COLUMN IF NOT EXISTS SpanModelLevel LowCardinality(String) MATERIALIZED
        if(SpanModelSource = 'langfuse'
           AND upper(SpanAttributes['langfuse.observation.level']) IN ('ERROR', 'WARNING'),
           upper(SpanAttributes['langfuse.observation.level']), '') CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS SpanModelLevelMessage String MATERIALIZED if(SpanModelLevel != '',
        SpanAttributes['langfuse.observation.status_message'], '') CODEC(ZSTD(1));

ALTER TABLE {db}.otel_traces {on_cluster}
    MODIFY COLUMN SpanModelStatusCode LowCardinality(String) ALIAS multiIf(
        StatusCode IN ('Error', 'STATUS_CODE_ERROR'), 'Error',
        StatusCode IN ('Ok', 'STATUS_CODE_OK'), 'Ok',
        SpanModelRaised = 1 OR SpanModelLevel = 'ERROR', 'Error',
        'Unset');

DROP VIEW IF EXISTS {db}.planscope_runs_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_step_attempts_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_tool_calls_mv {on_cluster};

-- runs (0033): Langfuse's input as the objective, its status message
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
                             SpanAttributes['traceloop.entity.input'] != '',
                             SpanAttributes['traceloop.entity.input'],
                             SpanAttributes['langfuse.observation.input']), 4000),
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
    multiIf(StatusMessage != '', StatusMessage, SpanModelExceptionMessage != '',
            SpanModelExceptionMessage, SpanModelLevelMessage) AS StatusMessage,
    if(SpanAttributes['error.type'] != '', SpanAttributes['error.type'], SpanModelExceptionType)
        AS ErrorType,
    SpanModelSource AS Source,
    SpanModelInferred AS Inferred
FROM {db}.otel_traces
WHERE SpanModelKind = 'run';

-- step attempts (0033): a WARNING observation failed its attempt
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
            SpanModelStatusCode = 'Error' OR SpanModelLevel = 'WARNING', 'error',
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
    multiIf(StatusMessage != '', StatusMessage, SpanModelExceptionMessage != '',
            SpanModelExceptionMessage, SpanModelLevelMessage) AS StatusMessage,
    SpanModelSource AS Source,
    SpanModelInferred AS Inferred
FROM {db}.otel_traces
WHERE SpanModelKind = 'step';

-- tool calls (0033): Langfuse's input and output as arguments and result
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_tool_calls_mv {on_cluster}
TO {db}.planscope_tool_calls
AS WITH SpanAttributes['langfuse.observation.input'] AS LangfuseInput
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
            SpanAttributes['tool_arguments'] != '', SpanAttributes['tool_arguments'],
            -- Langfuse's @observe records a function's call as {"args": [...], "kwargs": {...}}
            JSONLength(LangfuseInput) = 2 AND JSONLength(LangfuseInput, 'args') = 0
            AND JSONHas(LangfuseInput, 'kwargs'), JSONExtractRaw(LangfuseInput, 'kwargs'),
            LangfuseInput) AS Arguments,
    multiIf(SpanAttributes['gen_ai.tool.call.result'] != '',
            SpanAttributes['gen_ai.tool.call.result'],
            SpanAttributes['output.value'] != '', SpanAttributes['output.value'],
            SpanAttributes['traceloop.entity.output'] != '',
            SpanAttributes['traceloop.entity.output'],
            SpanAttributes['tool_response'] != '', SpanAttributes['tool_response'],
            SpanAttributes['langfuse.observation.output']) AS Result,
    if(SpanAttributes['error.type'] != '', SpanAttributes['error.type'], SpanModelExceptionType)
        AS ErrorType,
    ServiceName,
    Timestamp AS Start,
    Duration,
    SpanModelStatusCode AS StatusCode,
    SpanModelSource AS Source
FROM {db}.otel_traces
WHERE SpanModelKind = 'tool';

-- LLM calls (0029): Langfuse's model, usage and cost
DROP VIEW IF EXISTS {db}.planscope_llm_calls_mv {on_cluster};
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_llm_calls_mv {on_cluster}
TO {db}.planscope_llm_calls
AS WITH
    SpanAttributes['langfuse.observation.usage_details'] AS LangfuseUsage,
    multiIf(SpanAttributes['planscope.llm.cost_usd'] != '', SpanAttributes['planscope.llm.cost_usd'],
            SpanAttributes['llm.cost.total'] != '', SpanAttributes['llm.cost.total'],
            SpanAttributes['operation.cost'] != '', SpanAttributes['operation.cost'],
            SpanAttributes['gen_ai.usage.cost'] != '', SpanAttributes['gen_ai.usage.cost'],
            JSONExtractRaw(SpanAttributes['langfuse.observation.cost_details'], 'total'))
        AS CarriedCost
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
            SpanAttributes['gen_ai.response.model'] != '', SpanAttributes['gen_ai.response.model'],
            SpanAttributes['langfuse.observation.model.name']) AS Model,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.input_tokens'] != '', SpanAttributes['gen_ai.usage.input_tokens'],
        SpanAttributes['llm.token_count.prompt'] != '', SpanAttributes['llm.token_count.prompt'],
        SpanAttributes['gen_ai.usage.prompt_tokens'] != '', SpanAttributes['gen_ai.usage.prompt_tokens'],
        -- Langfuse's usage details: its own keys, or the provider's usage as the SDK passed it
        JSONHas(LangfuseUsage, 'input'), JSONExtractRaw(LangfuseUsage, 'input'),
        JSONHas(LangfuseUsage, 'prompt_tokens'), JSONExtractRaw(LangfuseUsage, 'prompt_tokens'),
        JSONExtractRaw(LangfuseUsage, 'input_tokens'))))) AS InputTokens,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.output_tokens'] != '',
        SpanAttributes['gen_ai.usage.output_tokens'],
        SpanAttributes['llm.token_count.completion'] != '',
        SpanAttributes['llm.token_count.completion'],
        SpanAttributes['gen_ai.usage.completion_tokens'] != '',
        SpanAttributes['gen_ai.usage.completion_tokens'],
        JSONHas(LangfuseUsage, 'output'), JSONExtractRaw(LangfuseUsage, 'output'),
        JSONHas(LangfuseUsage, 'completion_tokens'),
        JSONExtractRaw(LangfuseUsage, 'completion_tokens'),
        JSONExtractRaw(LangfuseUsage, 'output_tokens'))))) AS OutputTokens,
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

-- MLflow Tracing's convention in the span model (issue #13): the spans MLflow Tracing writes
-- (`mlflow` / `mlflow-tracing` 3.x exported through OTLP, scope `mlflow.tracing.provider`, every
-- span INTERNAL) carry no `gen_ai.*` name, only MLflow's own `mlflow.*` attributes
-- (mlflow.tracing.constant.SpanAttributeKey), and MLflow writes **every attribute value
-- JSON-encoded** (mlflow.tracing.utils.dump_span_attribute_value): the span type is '"AGENT"',
-- a string output '"{\"value\": ...}"', a dict input its JSON object. The mapping
-- (docs/semantic-conventions.md, "Spans planscope did not shape"), read where 0034 reads
-- Langfuse's:
--
--   * kind, from `mlflow.spanType` (mlflow.entities.SpanType) decoded: `AGENT` a run at the root,
--     else a step (as an OpenInference AGENT); `CHAIN`, `WORKFLOW` and `TASK` a run at the root,
--     else `other`; `TOOL`, `RETRIEVER` and `RERANKER` a tool call (a retriever's a read);
--     `CHAT_MODEL`, `LLM` and `EMBEDDING` an LLM call; `GUARDRAIL`, `PARSER`, `MEMORY`,
--     `EVALUATOR`, `UNKNOWN` and the rest `other`. The source is `mlflow`;
--   * status: MLflow sets the OpenTelemetry status itself (ERROR with the exception's text) and
--     records an `exception` event: read as they already are (0033);
--   * `mlflow.spanInputs` / `mlflow.spanOutputs` are read where the other conventions' input and
--     output are: a run's objective, a tool call's arguments (the function's arguments by name)
--     and result (decoded: a function that returned a string has a JSON string as output);
--     an LLM call's model is `mlflow.llm.model`, its provider `mlflow.llm.provider`, its tokens
--     `mlflow.chat.tokenUsage` (`input_tokens`, `output_tokens`, `cache_read_input_tokens`,
--     `cache_creation_input_tokens`) and its cost `mlflow.llm.cost`'s `total_cost` (USD).
--
-- Rows already stored keep their kind and typed rows (a MATERIALIZED column is computed at
-- insert; as 0023, no rewrite): MLflow spans stored before this migration stay `other`.
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
            AND SpanAttributes['langfuse.observation.type'] = ''
            AND SpanAttributes['mlflow.spanType'] = '', 'other',
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
        -- MLflow writes every attribute value JSON-encoded: its span type is '"AGENT"'
        JSONExtractString(SpanAttributes['mlflow.spanType']) = 'AGENT',
            if(ParentSpanId = '', 'run', 'step'),
        JSONExtractString(SpanAttributes['mlflow.spanType']) IN ('CHAIN', 'WORKFLOW', 'TASK'),
            if(ParentSpanId = '', 'run', 'other'),
        JSONExtractString(SpanAttributes['mlflow.spanType']) IN ('TOOL', 'RETRIEVER', 'RERANKER'),
            'tool',
        JSONExtractString(SpanAttributes['mlflow.spanType']) IN ('CHAT_MODEL', 'LLM', 'EMBEDDING'),
            'llm',
        SpanAttributes['mlflow.spanType'] != '', 'other',
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
        SpanAttributes['mlflow.spanType'] != '', 'mlflow',
        SpanAttributes['gen_ai.system'] != '' OR SpanAttributes['gen_ai.tool.name'] != '', 'genai',
        ParentSpanId = '' AND SpanAttributes['agent_name'] != '', 'framework',
        '') CODEC(ZSTD(1));

DROP VIEW IF EXISTS {db}.planscope_runs_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_step_attempts_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_tool_calls_mv {on_cluster};

-- runs (0034): MLflow's span inputs as the objective
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
                             SpanAttributes['langfuse.observation.input'] != '',
                             SpanAttributes['langfuse.observation.input'],
                             SpanAttributes['mlflow.spanInputs']), 4000),
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

-- step attempts (0034, unchanged: MLflow sets a failed span's status itself)
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

-- tool calls (0034): MLflow's span inputs and (decoded) outputs as arguments and result
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_tool_calls_mv {on_cluster}
TO {db}.planscope_tool_calls
AS WITH SpanAttributes['langfuse.observation.input'] AS LangfuseInput,
    SpanAttributes['mlflow.spanOutputs'] AS MlflowOutputs
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
            JSONExtractString(SpanAttributes['mlflow.spanType']) IN ('RETRIEVER', 'RERANKER'),
            'read',
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
            LangfuseInput != '', LangfuseInput,
            SpanAttributes['mlflow.spanInputs']) AS Arguments,
    multiIf(SpanAttributes['gen_ai.tool.call.result'] != '',
            SpanAttributes['gen_ai.tool.call.result'],
            SpanAttributes['output.value'] != '', SpanAttributes['output.value'],
            SpanAttributes['traceloop.entity.output'] != '',
            SpanAttributes['traceloop.entity.output'],
            SpanAttributes['tool_response'] != '', SpanAttributes['tool_response'],
            SpanAttributes['langfuse.observation.output'] != '',
            SpanAttributes['langfuse.observation.output'],
            -- a function's return value JSON-encoded: a string result is a JSON string
            startsWith(MlflowOutputs, '"'), JSONExtractString(MlflowOutputs),
            MlflowOutputs) AS Result,
    if(SpanAttributes['error.type'] != '', SpanAttributes['error.type'], SpanModelExceptionType)
        AS ErrorType,
    ServiceName,
    Timestamp AS Start,
    Duration,
    SpanModelStatusCode AS StatusCode,
    SpanModelSource AS Source
FROM {db}.otel_traces
WHERE SpanModelKind = 'tool';

-- LLM calls (0034): MLflow's model, provider, token usage and cost
DROP VIEW IF EXISTS {db}.planscope_llm_calls_mv {on_cluster};
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_llm_calls_mv {on_cluster}
TO {db}.planscope_llm_calls
AS WITH
    SpanAttributes['langfuse.observation.usage_details'] AS LangfuseUsage,
    SpanAttributes['mlflow.chat.tokenUsage'] AS MlflowUsage,
    multiIf(SpanAttributes['planscope.llm.cost_usd'] != '', SpanAttributes['planscope.llm.cost_usd'],
            SpanAttributes['llm.cost.total'] != '', SpanAttributes['llm.cost.total'],
            SpanAttributes['operation.cost'] != '', SpanAttributes['operation.cost'],
            SpanAttributes['gen_ai.usage.cost'] != '', SpanAttributes['gen_ai.usage.cost'],
            SpanAttributes['langfuse.observation.cost_details'] != '',
            JSONExtractRaw(SpanAttributes['langfuse.observation.cost_details'], 'total'),
            JSONExtractRaw(SpanAttributes['mlflow.llm.cost'], 'total_cost'))
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
                  SpanAttributes['llm.system'] != '', SpanAttributes['llm.system'],
                  JSONExtractString(SpanAttributes['mlflow.llm.provider']))) AS Provider,
    multiIf(SpanAttributes['gen_ai.request.model'] != '', SpanAttributes['gen_ai.request.model'],
            SpanAttributes['llm.model_name'] != '', SpanAttributes['llm.model_name'],
            SpanAttributes['gen_ai.response.model'] != '', SpanAttributes['gen_ai.response.model'],
            SpanAttributes['langfuse.observation.model.name'] != '',
            SpanAttributes['langfuse.observation.model.name'],
            JSONExtractString(SpanAttributes['mlflow.llm.model'])) AS Model,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.input_tokens'] != '', SpanAttributes['gen_ai.usage.input_tokens'],
        SpanAttributes['llm.token_count.prompt'] != '', SpanAttributes['llm.token_count.prompt'],
        SpanAttributes['gen_ai.usage.prompt_tokens'] != '', SpanAttributes['gen_ai.usage.prompt_tokens'],
        -- Langfuse's usage details: its own keys, or the provider's usage as the SDK passed it
        JSONHas(LangfuseUsage, 'input'), JSONExtractRaw(LangfuseUsage, 'input'),
        JSONHas(LangfuseUsage, 'prompt_tokens'), JSONExtractRaw(LangfuseUsage, 'prompt_tokens'),
        JSONHas(LangfuseUsage, 'input_tokens'), JSONExtractRaw(LangfuseUsage, 'input_tokens'),
        JSONExtractRaw(MlflowUsage, 'input_tokens'))))) AS InputTokens,
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
        JSONHas(LangfuseUsage, 'output_tokens'), JSONExtractRaw(LangfuseUsage, 'output_tokens'),
        JSONExtractRaw(MlflowUsage, 'output_tokens'))))) AS OutputTokens,
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
        SpanAttributes['gen_ai.usage.cache_read_input_tokens'] != '',
        SpanAttributes['gen_ai.usage.cache_read_input_tokens'],
        JSONExtractRaw(MlflowUsage, 'cache_read_input_tokens'))))) AS CacheReadTokens,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.cache_creation.input_tokens'] != '',
        SpanAttributes['gen_ai.usage.cache_creation.input_tokens'],
        SpanAttributes['llm.token_count.prompt_details.cache_write'] != '',
        SpanAttributes['llm.token_count.prompt_details.cache_write'],
        SpanAttributes['gen_ai.usage.cache_creation_input_tokens'] != '',
        SpanAttributes['gen_ai.usage.cache_creation_input_tokens'],
        JSONExtractRaw(MlflowUsage, 'cache_creation_input_tokens'))))) AS CacheWriteTokens,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.reasoning.output_tokens'] != '',
        SpanAttributes['gen_ai.usage.reasoning.output_tokens'],
        SpanAttributes['llm.token_count.completion_details.reasoning'] != '',
        SpanAttributes['llm.token_count.completion_details.reasoning'],
        SpanAttributes['gen_ai.usage.reasoning_tokens'])))) AS ReasoningTokens,
    if(CarriedCost != '', 'span', '') AS CostSource
FROM {db}.otel_traces
WHERE SpanModelKind = 'llm';

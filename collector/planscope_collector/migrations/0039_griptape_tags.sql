-- Griptape's own tracing in the span model: the spans Griptape's OpenTelemetryObservabilityDriver
-- writes (`main`, `Agent.run()`, `Agent.try_run()`, `OpenAiChatPromptDriver.run()`,
-- `{Tool}.try_run()`, ...) carry no `gen_ai.*` name and no input or output, only the `tags`
-- Griptape's `@observable` methods pass (an OTLP string array, stored as a JSON list), the
-- status and `exception` events. The mapping (docs/semantic-conventions.md, "Spans planscope
-- did not shape"):
--
--   * a span tagged `Tool.run()` (a tool's `try_run`) is a tool call of the tool its span names
--     (`{Tool}.try_run()`: `{Tool}`); its status and exception events say whether it failed
--     (read as they already are, 0033);
--   * a span tagged `PromptDriver.run()` (a prompt driver's `run`) is an LLM call (no model or
--     tokens: Griptape records none);
--   * the source is `griptape`; every other Griptape span (`main`, `Agent.run()`) stays `other`
--     (binding finds the work above them: observed.bind).
--
-- Rows already stored keep their kind and typed rows (a MATERIALIZED column is computed at
-- insert; as 0023, no rewrite): Griptape spans stored before this migration stay `other`.
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
        -- Griptape's OpenTelemetryObservabilityDriver: no gen_ai.* name, only the `tags` its
        -- observable methods carry (a JSON list)
        has(JSONExtract(SpanAttributes['tags'], 'Array(String)'), 'Tool.run()'), 'tool',
        has(JSONExtract(SpanAttributes['tags'], 'Array(String)'), 'PromptDriver.run()'), 'llm',
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
        hasAny(JSONExtract(SpanAttributes['tags'], 'Array(String)'),
               ['Tool.run()', 'PromptDriver.run()']), 'griptape',
        ParentSpanId = '' AND SpanAttributes['agent_name'] != '', 'framework',
        '') CODEC(ZSTD(1));

DROP VIEW IF EXISTS {db}.planscope_tool_calls_mv {on_cluster};

-- tool calls (0038): a Griptape tool span's name without its method
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
            -- Griptape names a tool call's span after its tool's method: `{Tool}.try_run()`
            SpanModelSource = 'griptape',
            replaceRegexpOne(toString(SpanName), '[.](try_)?run[(][)]$', ''),
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

-- Google ADK under its own OpenTelemetry tracing (google-adk 1.x, google/adk/telemetry.py; its
-- tracer's scope `gcp.vertex.agent`, every span INTERNAL, none ever in error): `invocation`
-- (Runner.run_async), `agent_run [name]` per agent run (no attribute at all), `call_llm` per
-- model turn (gen_ai.system, the request and the LlmResponse as ADK JSON in
-- `gcp.vertex.agent.llm_request` / `llm_response`) and `execute_tool {tool}` per tool call
-- (GenAI execute_tool, gen_ai.tool.name, its arguments and what it returned as JSON in
-- `gcp.vertex.agent.tool_call_args` / `tool_response`). The span model saw the model and tool
-- calls but no agent run (an unattributed span is `other`), no tool call's arguments or result,
-- and no failure: ADK tools return their errors as `{"status": "error", "error_code": ...,
-- "error_message": ...}` (ADK's documented pattern), a raising tool ending the whole run. The
-- mapping (docs/semantic-conventions.md, "Spans planscope did not shape"):
--
--   * a span of the scope `gcp.vertex.agent` with no gen_ai.system named `agent_run [name]` ->
--     run at the root, else step; its agent is `name` (SpanModelAgentName), the step it names
--     when binding ties it to no plan step (the step attempts view); the source is `adk`.
--     Later releases name the span `invoke_agent {name}` with GenAI attributes: read as GenAI;
--   * a tool call's arguments are also `gcp.vertex.agent.tool_call_args` (the tool calls view)
--     and its result `gcp.vertex.agent.tool_response` (SpanModelToolOutput);
--   * a result that is an object whose `status` is the string `error` with an `error_code` or
--     `error_message` beside it (ADK's recommended error dict) is an error returned as a value
--     (SpanModelReturnedError, 0041's rule with one more shape): its type the first of its
--     `error_code`, `code`, `status`; its message its `error_message`, else its `message`, else
--     the text (planscope_collector._returned reads it so in Python). `{"status": "error"}`
--     alone (a job's state) is still no envelope.
--
-- What a `call_llm` was asked and answered is read at bind time (observed.user_request,
-- observed.answer: no column). Rows already stored keep their kind and typed rows (a
-- MATERIALIZED column is computed at insert; as 0023, 0039 and 0047, no rewrite); the analyzer's
-- BINDING_VERSION is 17 (a binding reads the typed rows). Migrations run before the collector
-- accepts spans, so no insert falls between DROP and CREATE.

-- the span model: a Google ADK 1.x agent run (`agent_run [name]`) is a run or step, its agent
-- named by its span
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
        -- Logfire's openai-agents integration: every span carries gen_ai.system, the span's name
        -- is the message template of its SDK span type (an agent run, a function tool call, a
        -- model call); the SDK's trace, task, turn, handoff, guardrail spans group others
        ScopeName = 'logfire.openai_agents',
            multiIf(SpanName = 'Agent run: {name!r}', if(ParentSpanId = '', 'run', 'step'),
                    SpanName = 'Function: {name}', 'tool',
                    SpanAttributes['gen_ai.request.model'] != '', 'llm',
                    ParentSpanId = '', 'run',
                    'other'),
        -- Google ADK 1.x's own tracing (scope `gcp.vertex.agent`): an agent's run is a span named
        -- `agent_run [name]` with no attribute at all (later releases write GenAI `invoke_agent`
        -- spans, read above); its model and tool calls carry gen_ai.* attributes (read below)
        ScopeName = 'gcp.vertex.agent' AND SpanAttributes['gen_ai.system'] = ''
            AND match(SpanName, '^agent_run \\[.+\\]$'), if(ParentSpanId = '', 'run', 'step'),
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
        ScopeName = 'logfire.openai_agents', 'logfire',
        ScopeName = 'gcp.vertex.agent' AND SpanAttributes['gen_ai.system'] = '', 'adk',
        SpanAttributes['gen_ai.system'] != '' OR SpanAttributes['gen_ai.tool.name'] != '', 'genai',
        hasAny(JSONExtract(SpanAttributes['tags'], 'Array(String)'),
               ['Tool.run()', 'PromptDriver.run()']), 'griptape',
        ParentSpanId = '' AND SpanAttributes['agent_name'] != '', 'framework',
        '') CODEC(ZSTD(1)),
    MODIFY COLUMN SpanModelAgentName String MATERIALIZED
        if(SpanModelKind IN ('run', 'step'),
           multiIf(SpanAttributes['gen_ai.agent.name'] != '', SpanAttributes['gen_ai.agent.name'],
                   SpanAttributes['agent.name'] != '', SpanAttributes['agent.name'],
                   SpanAttributes['agent_name'] != '', SpanAttributes['agent_name'],
                   SpanModelSource = 'planscope', '',
                   -- Logfire's openai-agents `Agent run: {name!r}`: the agent's name in `name`
                   SpanModelSource = 'logfire', SpanAttributes['name'],
                   -- Google ADK's `agent_run [name]`: the agent's name in its span's name
                   SpanModelSource = 'adk', extract(SpanName, '^agent_run \\[(.+)\\]$'),
                   SpanAttributes['traceloop.entity.name'] != '',
                   SpanAttributes['traceloop.entity.name'],
                   JSONExtractString(SpanAttributes['metadata'], 'langgraph_node') != '',
                   JSONExtractString(SpanAttributes['metadata'], 'langgraph_node'),
                   SpanModelKind = 'step', toString(SpanName),
                   ''),
           '') CODEC(ZSTD(1));

-- a tool call's result as recorded (0047's SpanModelToolOutput): also Google ADK's
-- `gcp.vertex.agent.tool_response`
ALTER TABLE {db}.otel_traces {on_cluster}
    MODIFY COLUMN SpanModelToolOutput String ALIAS multiIf(
        SpanAttributes['gen_ai.tool.call.result'] != '', SpanAttributes['gen_ai.tool.call.result'],
        SpanAttributes['output.value'] != '', SpanAttributes['output.value'],
        SpanAttributes['traceloop.entity.output'] != '', SpanAttributes['traceloop.entity.output'],
        SpanAttributes['tool_response'] != '', SpanAttributes['tool_response'],
        -- Google ADK's `execute_tool {tool}`: what the tool returned (an object: ADK wraps any
        -- other value as {"result": ...})
        SpanAttributes['gcp.vertex.agent.tool_response'] != '',
        SpanAttributes['gcp.vertex.agent.tool_response'],
        -- Logfire's openai-agents `Function: {name}`: its result in `output`
        SpanModelSource = 'logfire', SpanAttributes['output'],
        SpanAttributes['langfuse.observation.output'] != '',
        SpanAttributes['langfuse.observation.output'],
        -- a function's return value JSON-encoded: a string result is a JSON string
        startsWith(SpanAttributes['mlflow.spanOutputs'], '"'),
        JSONExtractString(SpanAttributes['mlflow.spanOutputs']),
        SpanAttributes['mlflow.spanOutputs']);

-- errors returned as values (0046's rule): also {"status": "error", ...}
ALTER TABLE {db}.otel_traces {on_cluster}
    MODIFY COLUMN SpanModelReturnedError Array(String) MATERIALIZED if(
        -- a tool call by its own convention's kind (not SpanModelKind: a MATERIALIZED column
        -- named here has its whole expression analysed again on every insert) that did not raise
        SpanAttributes['planscope.span.kind'] = ''
        AND StatusCode NOT IN ('Error', 'STATUS_CODE_ERROR')
        AND (SpanAttributes['gen_ai.operation.name'] = 'execute_tool'
             OR upper(SpanAttributes['openinference.span.kind']) = 'TOOL'
             OR lower(SpanAttributes['traceloop.span.kind']) = 'tool'
             -- Langfuse's: an observation at level ERROR keeps its own message, as a status
             OR lower(SpanAttributes['langfuse.observation.type']) = 'tool'
                AND upper(SpanAttributes['langfuse.observation.level']) != 'ERROR'
             -- MLflow writes every attribute value JSON-encoded
             OR SpanAttributes['mlflow.spanType'] = '"TOOL"'),
        -- r: the result as recorded, u: what the tool returned
        arrayMap((r, u) -> if(
            -- the rule: a result that can be an envelope (it is an object naming an error key, or
            -- it spells a key with an escape), then one of the three shapes
            startsWith(u, '{')
            AND (multiSearchAny(u, ['"isError"', '"is_error"', '"error"'])
                 OR position(u, '\\u') > 0)
            AND (JSONExtractRaw(u, 'isError') = 'true' OR JSONExtractRaw(u, 'is_error') = 'true'
                 OR (JSONExtractString(u, 'type') = 'error' AND JSONType(u, 'error') = 'Object')
                 -- Google ADK's recommended error result: {"status": "error", "error_code": ...,
                 -- "error_message": ...}
                 OR (JSONExtractString(u, 'status') = 'error'
                     AND (JSONHas(u, 'error_code') OR JSONHas(u, 'error_message')))
                 OR ((JSONType(u, 'error') = 'Object' AND JSONLength(u, 'error') > 0
                      OR JSONType(u, 'error') = 'String' AND JSONExtractString(u, 'error') != '')
                     AND hasAll(['error', 'code', 'status', 'status_code', 'message', 'details',
                                 'request_id', 'type'], JSONExtractKeys(u)))),
            [
                -- the type: the first of the error object's `type` and `code`, then the
                -- envelope's `error_code`, `code` and `status`, that is a non-empty string or
                -- an integer
                arrayFirst(x -> x != '', arrayMap((j, k) -> multiIf(
                        JSONType(j, k) = 'String', JSONExtractString(j, k),
                        JSONType(j, k) IN ('Int64', 'UInt64'), JSONExtractRaw(j, k),
                        ''),
                    [JSONExtractRaw(u, 'error'), JSONExtractRaw(u, 'error'), u, u, u],
                    ['type', 'code', 'error_code', 'code', 'status']))
            ],
            -- LangChain's failed call: a ToolMessage (unwrapped above) whose status is error
            if(r != u AND JSONExtractString(r, 'output', 'kwargs', 'status') = 'error'
               AND JSONExtractString(r, 'output', 'id', -1) = 'ToolMessage'
               AND JSONExtractString(r, 'output', 'type') = 'constructor'
               AND JSONType(r, 'output', 'id') = 'Array'
               AND JSONType(r, 'output', 'kwargs') = 'Object', [''], [])),
            [SpanModelToolOutput], [SpanModelToolResult])[1],
        []) CODEC(ZSTD(1)),
    -- the message (read, not stored: no view needs it at insert): of the envelope (MCP's), or of
    -- its `error` object, or that string; a failed ToolMessage's content that is none of those
    MODIFY COLUMN SpanModelReturnedMessage String ALIAS if(SpanModelReturned = 1,
        arrayMap(r -> if(startsWith(r, '{'), arrayMap(own -> multiIf(
                    JSONExtractRaw(r, 'isError') = 'true' OR JSONExtractRaw(r, 'is_error') = 'true',
                    ifNull(arrayFirst(m -> m IS NOT NULL, arraySlice(own, 1, 3)), ''),
                    JSONType(r, 'error') = 'Object',
                    ifNull(arrayFirst(m -> m IS NOT NULL, arraySlice(own, 2, 3)), ''),
                    JSONType(r, 'error') = 'String', JSONExtractString(r, 'error'),
                    -- ADK's {"status": "error", ...}: its `error_message`, else what it says
                    JSONExtractString(r, 'status') = 'error'
                    AND (JSONHas(r, 'error_code') OR JSONHas(r, 'error_message')),
                    if(JSONExtractString(r, 'error_message') != '',
                       JSONExtractString(r, 'error_message'),
                       if(ifNull(own[1], '') != '', ifNull(own[1], ''), r)),
                    r),
                -- what each level says of its own: NULL when it says nothing but an error object
                [arrayMap(j -> multiIf(
                        JSONType(j, 'message') = 'String' AND JSONExtractString(j, 'message') != '',
                        JSONExtractString(j, 'message'),
                        notEmpty(arrayFilter(b -> JSONType(b, 'text') = 'String',
                                             JSONExtractArrayRaw(j, 'content'))),
                        arrayStringConcat(arrayMap(b -> JSONExtractString(b, 'text'),
                            arrayFilter(b -> JSONType(b, 'text') = 'String',
                                        JSONExtractArrayRaw(j, 'content'))), '\n'),
                        JSONType(j, 'content') = 'String' AND JSONExtractString(j, 'content') != '',
                        JSONExtractString(j, 'content'),
                        JSONType(j, 'error') = 'Object', NULL,
                        if(JSONType(j, 'error') = 'String', JSONExtractString(j, 'error'), '')),
                    [r, JSONExtractRaw(r, 'error'), JSONExtractRaw(r, 'error', 'error'),
                     JSONExtractRaw(r, 'error', 'error', 'error')])])[1], r),
            [SpanModelToolResult])[1],
        '');

DROP VIEW IF EXISTS {db}.planscope_step_attempts_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_tool_calls_mv {on_cluster};

-- step attempts (0047): a Logfire openai-agents or Google ADK agent run is the step its agent
-- names
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
               SpanModelSource IN ('logfire', 'adk'), SpanModelAgentName,
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

-- tool calls (0047): a Google ADK tool call's arguments (its result: SpanModelToolOutput)
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
            -- Logfire's openai-agents `Function: {name}`: the tool in `name`
            SpanModelSource = 'logfire', SpanAttributes['name'],
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
            SpanModelSource = 'logfire', SpanAttributes['input'],
            SpanAttributes['gcp.vertex.agent.tool_call_args'] != '',
            SpanAttributes['gcp.vertex.agent.tool_call_args'],
            -- Langfuse's @observe records a function's call as {"args": [...], "kwargs": {...}}
            JSONLength(LangfuseInput) = 2 AND JSONLength(LangfuseInput, 'args') = 0
            AND JSONHas(LangfuseInput, 'kwargs'), JSONExtractRaw(LangfuseInput, 'kwargs'),
            LangfuseInput != '', LangfuseInput,
            SpanAttributes['mlflow.spanInputs']) AS Arguments,
    SpanModelToolResult AS Result,
    multiIf(SpanAttributes['error.type'] != '', SpanAttributes['error.type'],
            SpanModelExceptionType != '', SpanModelExceptionType,
            SpanModelReturnedType) AS ErrorType,
    ServiceName,
    Timestamp AS Start,
    Duration,
    SpanModelStatusCode AS StatusCode,
    SpanModelSource AS Source
FROM {db}.otel_traces
WHERE SpanModelKind = 'tool';

-- OpenLLMetry's LlamaIndex instrumentor in the span model (docs/analyzers.md, "A LlamaIndex
-- AgentWorkflow under OpenLLMetry (tuned on sealed-29)"; opentelemetry-instrumentation-llamaindex
-- 0.4x, llama-index-core 0.12+): every workflow step is a span `AgentWorkflow.task`
-- (`traceloop.span.kind` task), all right under the `workflow` span; the step that calls a tool
-- (`call_tool`) records the call, `tool.name` and `tool.arguments`, and as its output
-- (`traceloop.entity.output`) the workflow's ToolCallResult, `{"tool_name", "tool_kwargs",
-- "tool_id", "tool_output": {"blocks", "tool_name", "raw_input", "raw_output", "is_error"},
-- "return_direct"}`. A tool that raises is handed back to the model as that output with
-- `is_error` true, the span not in error (and the raising tool's own `FunctionTool.task` span
-- is never ended, never exported). It was a step like every other task: no tool call was seen.
--
--   * SpanModelKind: a `task` span with `tool.name` is a tool call (before the task rule);
--   * the tool calls view: its arguments also from `tool.arguments`;
--   * SpanModelToolResult: a ToolCallResult's tool output's `raw_output` (a string as it is,
--     any other value as its JSON text) is what the tool returned;
--     planscope_collector._returned.tool_result reads it so in Python;
--   * SpanModelReturnedError: such a call (by its convention's attributes) whose tool output
--     says `is_error` true failed, with no type; its message (SpanModelReturnedMessage,
--     unchanged) the raw output's text.
--
-- Each column and view re-defined here is Google ADK's (the migration before) with one more
-- branch. Rows already stored keep their kind and typed rows (a MATERIALIZED column is computed at
-- insert; as 0023, 0039 and 0047, no rewrite); the analyzer's BINDING_VERSION is 17 (a binding
-- reads the typed rows and the bind-time rules of observed.py changed with it). Migrations run
-- before the collector accepts spans, so no insert falls between DROP and CREATE.

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
        -- OpenLLMetry's LlamaIndex instrumentor: a workflow step that calls a tool (an
        -- AgentWorkflow's `call_tool`) records the call (`tool.name`, `tool.arguments`)
        lower(SpanAttributes['traceloop.span.kind']) = 'task' AND SpanAttributes['tool.name'] != '',
            'tool',
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
        'other') CODEC(ZSTD(1));

ALTER TABLE {db}.otel_traces {on_cluster}
    MODIFY COLUMN SpanModelToolResult String ALIAS arrayMap(r -> multiIf(
            -- OpenLLMetry's LangChain envelope: {"output": ..., "kwargs": {...}}
            startsWith(r, '{"output":') AND JSONLength(r) = 2 AND JSONType(r, 'kwargs') = 'Object',
            if(JSONExtractString(r, 'output', 'type') = 'constructor'
               AND JSONType(r, 'output', 'id') = 'Array'
               AND JSONExtractString(r, 'output', 'id', -1) = 'ToolMessage'
               AND JSONType(r, 'output', 'kwargs') = 'Object',
               -- a ToolMessage: its content
               if(JSONType(r, 'output', 'kwargs', 'content') = 'String',
                  JSONExtractString(r, 'output', 'kwargs', 'content'),
                  JSONExtractRaw(r, 'output', 'kwargs', 'content')),
               if(JSONType(r, 'output') = 'String', JSONExtractString(r, 'output'),
                  JSONExtractRaw(r, 'output'))),
            -- OpenLLMetry's LlamaIndex `call_tool` step: the workflow's ToolCallResult
            -- {"tool_name", "tool_kwargs", "tool_id", "tool_output": {..., "raw_output",
            -- "is_error"}, "return_direct"}: the tool's raw output
            startsWith(r, '{"tool_name":') AND JSONType(r, 'tool_output') = 'Object'
            AND JSONHas(r, 'tool_kwargs') AND JSONHas(r, 'tool_id'),
            if(JSONType(r, 'tool_output', 'raw_output') = 'String',
               JSONExtractString(r, 'tool_output', 'raw_output'),
               JSONExtractRaw(r, 'tool_output', 'raw_output')),
            r),
        [SpanModelToolOutput])[1];

ALTER TABLE {db}.otel_traces {on_cluster}
    MODIFY COLUMN SpanModelReturnedError Array(String) MATERIALIZED if(
        -- a tool call by its own convention's kind (not SpanModelKind: a MATERIALIZED column
        -- named here has its whole expression analysed again on every insert) that did not raise
        SpanAttributes['planscope.span.kind'] = ''
        AND StatusCode NOT IN ('Error', 'STATUS_CODE_ERROR')
        AND (SpanAttributes['gen_ai.operation.name'] = 'execute_tool'
             OR upper(SpanAttributes['openinference.span.kind']) = 'TOOL'
             OR lower(SpanAttributes['traceloop.span.kind']) = 'tool'
             -- OpenLLMetry's LlamaIndex `call_tool` step (SpanModelKind's rule)
             OR lower(SpanAttributes['traceloop.span.kind']) = 'task'
                AND SpanAttributes['tool.name'] != ''
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
            multiIf(
                -- LangChain's failed call: a ToolMessage (unwrapped above) whose status is error
                r != u AND JSONExtractString(r, 'output', 'kwargs', 'status') = 'error'
                AND JSONExtractString(r, 'output', 'id', -1) = 'ToolMessage'
                AND JSONExtractString(r, 'output', 'type') = 'constructor'
                AND JSONType(r, 'output', 'id') = 'Array'
                AND JSONType(r, 'output', 'kwargs') = 'Object', [''],
                -- LlamaIndex's failed call: a ToolCallResult (unwrapped above) whose tool output
                -- is an error (the tool raised; the workflow handed its text back to the model)
                r != u AND startsWith(r, '{"tool_name":')
                AND JSONExtractRaw(r, 'tool_output', 'is_error') = 'true', [''],
                [])),
            [SpanModelToolOutput], [SpanModelToolResult])[1],
        []) CODEC(ZSTD(1));


DROP VIEW IF EXISTS {db}.planscope_tool_calls_mv {on_cluster};

-- tool calls (0048's): OpenLLMetry's LlamaIndex `call_tool` step's arguments in `tool.arguments`
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
            SpanAttributes['tool.arguments'] != '', SpanAttributes['tool.arguments'],
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

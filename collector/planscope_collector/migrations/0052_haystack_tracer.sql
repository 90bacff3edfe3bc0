-- Haystack's own OpenTelemetry tracer in the span model (docs/analyzers.md, "Haystack's own
-- OpenTelemetry tracer read on sealed-48 (tuned on it)"; `opentelemetry-haystack` 2.0's
-- `OpenTelemetryTracer`, Haystack 2.x/3.x, content tracing on): every span INTERNAL, no status
-- ever, its kind only in its name: `haystack.pipeline.run` over `haystack.component.run` spans
-- (`haystack.component.name` / `.type` / `.input` / `.output` JSON), an Agent's
-- `haystack.agent.run` (`haystack.agent.input`, `.output`) over `haystack.agent.step` spans,
-- each a `haystack.agent.step.llm` and, when the model called tools, `haystack.agent.step.tool`
-- spans (`haystack.tool.name`, `haystack.agent.step.tool.input` the arguments as JSON, `.output`
-- the result; a call that raised: `haystack.tool.error` true and the output
-- `{"error": "Failed to invoke Tool ..."}`). Nothing of it was read: no call, no attempt.
--
--   * SpanModelKind: a tool step span (or any span with `haystack.tool.name`) is a tool call, an
--     LLM step span or a `*Generator` component's run an LLM call, an Agent's run a step attempt
--     (a run at the root), a pipeline's run at the root a run;
--   * SpanModelToolOutput: also `haystack.agent.step.tool.output`;
--   * SpanModelStatusCode: a span with `haystack.tool.error` true failed (the tracer sets no
--     status on any span);
--   * the tool calls view: the tool's name from `haystack.tool.name`, its arguments from
--     `haystack.agent.step.tool.input`;
--   * the step attempts view: an Agent's run is the step its input's `step` names (the caller's
--     template variables; a key as an application's `.step` attribute), else its span's name.
--
-- Each column and view re-defined here is the latest one's (0049's kind, 0050's output, status
-- and tool calls view, 0048's step attempts view) with one more branch. Rows already stored keep
-- their kind and typed rows (a MATERIALIZED column is computed at insert; as 0049, no rewrite);
-- the analyzer's BINDING_VERSION is 31. Migrations run before the collector accepts spans, so no
-- insert falls between DROP and CREATE.

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
        -- Haystack's own tracer (opentelemetry-haystack's OpenTelemetryTracer): span names and
        -- `haystack.*` tags are its convention, every span INTERNAL with no status
        SpanName = 'haystack.agent.step.tool' OR SpanAttributes['haystack.tool.name'] != '', 'tool',
        SpanName = 'haystack.agent.step.llm', 'llm',
        -- a pipeline's chat or text generator component (Haystack names every one `*Generator`)
        SpanName = 'haystack.component.run'
            AND match(SpanAttributes['haystack.component.type'], 'Generator$'), 'llm',
        SpanName = 'haystack.agent.run', if(ParentSpanId = '', 'run', 'step'),
        SpanName = 'haystack.pipeline.run' AND ParentSpanId = '', 'run',
        SpanAttributes['llm.request.type'] != '' OR SpanAttributes['gen_ai.system'] != '', 'llm',
        SpanAttributes['gen_ai.tool.name'] != '', 'tool',
        ParentSpanId = '' AND SpanAttributes['agent_name'] != '', 'run',
        'other') CODEC(ZSTD(1));

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
        -- Haystack's own tracer: a tool call's result (or `{"error": "Failed to invoke Tool ..."}`)
        SpanAttributes['haystack.agent.step.tool.output'] != '',
        SpanAttributes['haystack.agent.step.tool.output'],
        -- LangSmith's OpenTelemetry export: a run's outputs as JSON in a bare (not indexed)
        -- `gen_ai.completion`
        SpanAttributes['gen_ai.completion'] != '', SpanAttributes['gen_ai.completion'],
        -- a function's return value JSON-encoded: a string result is a JSON string
        startsWith(SpanAttributes['mlflow.spanOutputs'], '"'),
        JSONExtractString(SpanAttributes['mlflow.spanOutputs']),
        SpanAttributes['mlflow.spanOutputs']);

ALTER TABLE {db}.otel_traces {on_cluster}
    MODIFY COLUMN SpanModelStatusCode LowCardinality(String) ALIAS multiIf(
        -- LangGraph's control flow, no failure: a handoff to a parent graph raises
        -- `ParentCommand`, an interrupt `GraphInterrupt` / `NodeInterrupt` (its `GraphBubbleUp`
        -- exceptions), and every run it passes through records it; by its type, else (LangSmith
        -- records `Exception(<the error's repr>)`) by the type its message starts with
        has(Events.Name, 'exception')
        AND (match(Events.Attributes[arrayLastIndex(n -> n = 'exception', Events.Name)]
                       ['exception.type'], '(^|[.])(ParentCommand|GraphInterrupt|NodeInterrupt)$')
             OR Events.Attributes[arrayLastIndex(n -> n = 'exception', Events.Name)]
                    ['exception.type'] = 'Exception'
                AND match(Events.Attributes[arrayLastIndex(n -> n = 'exception', Events.Name)]
                              ['exception.message'],
                          '^(ParentCommand|GraphInterrupt|NodeInterrupt)[(]')),
        'Unset',
        StatusCode IN ('Error', 'STATUS_CODE_ERROR'), 'Error',
        -- Haystack's own tracer sets no status: a failed tool call is only its `haystack.tool.error`
        SpanAttributes['haystack.tool.error'] = 'true', 'Error',
        SpanModelReturned = 1, 'Error',
        -- a LangSmith span that raised, whatever its status (SpanModelRaised's rule)
        SpanModelRaised = 1 AND SpanAttributes['langsmith.span.kind'] != '', 'Error',
        StatusCode IN ('Ok', 'STATUS_CODE_OK'), 'Ok',
        SpanModelRaised = 1 OR SpanModelLevel = 'ERROR', 'Error',
        'Unset');

DROP VIEW IF EXISTS {db}.planscope_step_attempts_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_tool_calls_mv {on_cluster};

-- step attempts (0048's): a Haystack Agent's run is the step its input names, if it names one
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
               -- a Haystack Agent's run: the `step` its caller's input (the prompt's template
               -- variables) names, as an application's `.step` attribute would
               JSONType(SpanAttributes['haystack.agent.input'], 'step') = 'String'
               AND JSONExtractString(SpanAttributes['haystack.agent.input'], 'step') != '',
               JSONExtractString(SpanAttributes['haystack.agent.input'], 'step'),
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

-- tool calls (0050's): Haystack's tool name and arguments
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
            SpanAttributes['haystack.tool.name'] != '', SpanAttributes['haystack.tool.name'],
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
            SpanAttributes['haystack.agent.step.tool.input'] != '',
            SpanAttributes['haystack.agent.step.tool.input'],
            SpanModelSource = 'logfire', SpanAttributes['input'],
            SpanAttributes['gcp.vertex.agent.tool_call_args'] != '',
            SpanAttributes['gcp.vertex.agent.tool_call_args'],
            -- Langfuse's @observe records a function's call as {"args": [...], "kwargs": {...}}
            JSONLength(LangfuseInput) = 2 AND JSONLength(LangfuseInput, 'args') = 0
            AND JSONHas(LangfuseInput, 'kwargs'), JSONExtractRaw(LangfuseInput, 'kwargs'),
            LangfuseInput != '', LangfuseInput,
            -- LangSmith's OpenTelemetry export: a run's inputs as JSON in a bare `gen_ai.prompt`
            SpanAttributes['gen_ai.prompt'] != '', SpanAttributes['gen_ai.prompt'],
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

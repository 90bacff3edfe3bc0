-- LlamaIndex's native OpenTelemetry integration in the span model (docs/analyzers.md,
-- "LlamaIndex's native OpenTelemetry integration read on sealed-55 (tuned on it)";
-- `llama-index-observability-otel` 0.7.0's `LlamaIndexOpenTelemetry`, scope
-- `llamaindex.opentelemetry.tracer`): one INTERNAL span per LlamaIndex instrumentation span,
-- named `Class.method` (the span id's part before its UUID), status OK when the method returns
-- and ERROR with the exception (an `exception` event) when it raises; no attribute of its own
-- besides the caller's `instrument_tags` (a workflow's: `llamaindex.run_id`,
-- `llamaindex.step.input_event`, `llamaindex.step.input_summary`), the instrumentation events as
-- span events (`LLMChatStartEvent` / `LLMChatEndEvent` with the messages flattened into their
-- attributes, `step.output`, `workflow.output`). Nothing of it was read: no call, no attempt.
--
--   * SpanModelKind: a tool's `call` / `acall` span (LlamaIndex's BaseTool interface) is a tool
--     call; a span holding an LLM's chat or completion events a model call; an agent's or a
--     workflow's run a step attempt (a run at the root); any other root span a run;
--   * the tool calls view: the tool's name from the `ToolCall` its workflow step was handed.
--
-- Each column and view re-defined here is the latest one's (0052's kind and tool calls view)
-- with one more branch. Rows already stored keep their kind (a MATERIALIZED column is computed
-- at insert); the analyzer's BINDING_VERSION is 35. Migrations run before the collector accepts
-- spans, so no insert falls between DROP and CREATE.

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
        -- LlamaIndex's native OpenTelemetry integration (llama-index-observability-otel): one
        -- span per LlamaIndex instrumentation span, named `Class.method`, with no attribute of
        -- its own (only the app's instrument_tags) and the instrumentation events as span events
        ScopeName = 'llamaindex.opentelemetry.tracer',
            multiIf(
                -- a tool's call: LlamaIndex's BaseTool `call` / `acall` (`FunctionTool.acall`),
                -- or whatever a workflow's step handed a `ToolCall` event calls
                match(SpanName, '^[A-Za-z_][A-Za-z0-9_]*Tool[.]a?call$')
                OR (SpanAttributes['llamaindex.step.input_event'] = 'ToolCall'
                    AND match(SpanName, '[.]a?call$')), 'tool',
                -- a model call: the span its LLM's chat / completion events were dispatched in
                hasAny(Events.Name, ['LLMChatStartEvent', 'LLMChatEndEvent',
                                     'LLMCompletionStartEvent', 'LLMCompletionEndEvent']), 'llm',
                -- an agent's (a workflow's) run: `<Agent>.run`, `AgentWorkflow.run`, or a
                -- workflow run that ended (its `workflow.output` event)
                match(SpanName, 'Agent(Workflow)?[.]run$') OR has(Events.Name, 'workflow.output'),
                    if(ParentSpanId = '', 'run', 'step'),
                ParentSpanId = '', 'run',
                'other'),
        SpanAttributes['llm.request.type'] != '' OR SpanAttributes['gen_ai.system'] != '', 'llm',
        SpanAttributes['gen_ai.tool.name'] != '', 'tool',
        ParentSpanId = '' AND SpanAttributes['agent_name'] != '', 'run',
        'other') CODEC(ZSTD(1));

DROP VIEW IF EXISTS {db}.planscope_tool_calls_mv {on_cluster};

-- tool calls (0052's): LlamaIndex's tool name
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
            -- LlamaIndex's native integration: the tool a workflow step's `ToolCall` names (its
            -- summary, `ToolCall(tool_name=<quoted name>, tool_kwargs=..., ...)`), else the class
            ScopeName = 'llamaindex.opentelemetry.tracer',
            if(match(SpanAttributes['llamaindex.step.input_summary'],
                     '^ToolCall[(]tool_name=\'[^\']+\''),
               extract(SpanAttributes['llamaindex.step.input_summary'],
                       '^ToolCall[(]tool_name=\'([^\']+)\''),
               replaceRegexpOne(toString(SpanName), '[.]a?call$', '')),
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

-- MLflow's Haystack autologging in the span model (docs/analyzers.md, "MLflow's null span type,
-- a Haystack tool's error text and a pipeline's parsed output (tuned on sealed-71)"). MLflow's
-- `HaystackSpanProcessor` (mlflow-tracing 3.x, `mlflow.haystack.autolog()`) keeps Haystack's
-- OpenTelemetry tracer's spans and tags (`haystack.agent.step.tool`, `haystack.tool.name`, ...)
-- and adds its own `mlflow.*` attributes, every value JSON-encoded: the Agent's spans
-- (`haystack.agent.run` / `.step` / `.step.llm` / `.step.tool`) get `mlflow.spanType` `null`,
-- MLflow's JSON for "no type". Every span with an MLflow type that is not one of its known
-- kinds was `other`, so a `null` one hid Haystack's convention: no tool call, no model call of
-- the Agent, no failure. And the processor writes Haystack's tags as text (`str(value)`): a
-- failed call's `haystack.tool.error` is `True`, not the boolean `true`.
--
--   * SpanModelKind: an MLflow `null` type is no type (the conventions below decide), as an
--     absent one;
--   * SpanModelStatusCode: `haystack.tool.error` true in any case fails the call;
--   * SpanModelErrorMessage: such a call's message is its output's `error` text (Haystack's
--     own tracer too: it sets no status, so a failed call said nothing, and no value its error
--     names was traced to the step that brought it in).
--
-- Each column re-defined here is the latest one's (0057's kind, 0052's status, 0047's error
-- message) with the one change. Rows already stored keep their kind (a MATERIALIZED column is computed at insert);
-- the analyzer's BINDING_VERSION is 46. Migrations run before the collector accepts spans.

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
            AND SpanAttributes['mlflow.spanType'] IN ('', 'null'), 'other',
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
        -- MLflow's `null` type (its Haystack autologging on the Agent's spans) says nothing: the
        -- span's other conventions below decide what it is
        SpanAttributes['mlflow.spanType'] NOT IN ('', 'null'), 'other',
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
        -- the Vercel AI SDK's telemetry (`ai` 3.x-6.x, experimental_telemetry): every span
        -- says its operation in `ai.operationId`; a provider call (`ai.<fn>.doGenerate`,
        -- `.doStream`, `.doEmbed`) is a model call, `ai.toolCall` a tool call, and a call's
        -- outer span (`ai.generateText`, `ai.streamText`, `ai.generateObject`, ...) a run at
        -- the root; elsewhere it is left to binding (an invocation under the app's span, or
        -- inside the app's step span the step's work: the call ends OK when its model gives up)
        SpanAttributes['ai.operationId'] != '',
            multiIf(SpanAttributes['ai.operationId'] = 'ai.toolCall', 'tool',
                    match(SpanAttributes['ai.operationId'], '^ai[.][A-Za-z]+[.]do(Generate|Stream|Embed)$'),
                    'llm',
                    ParentSpanId = '', 'run',
                    'other'),
        SpanAttributes['llm.request.type'] != '' OR SpanAttributes['gen_ai.system'] != '', 'llm',
        SpanAttributes['gen_ai.tool.name'] != '', 'tool',
        ParentSpanId = '' AND SpanAttributes['agent_name'] != '', 'run',
        'other') CODEC(ZSTD(1));

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
        -- Haystack's own tracer sets no status: a failed tool call is only its `haystack.tool.error`,
        -- a boolean, or its text as a bridge writes it (MLflow's Haystack autologging: `True`)
        lower(SpanAttributes['haystack.tool.error']) = 'true', 'Error',
        SpanModelReturned = 1, 'Error',
        -- a LangSmith span that raised, whatever its status (SpanModelRaised's rule)
        SpanModelRaised = 1 AND SpanAttributes['langsmith.span.kind'] != '', 'Error',
        StatusCode IN ('Ok', 'STATUS_CODE_OK'), 'Ok',
        SpanModelRaised = 1 OR SpanModelLevel = 'ERROR', 'Error',
        'Unset');

-- a failed span whose status has no description (0047's): also a Haystack tool call that
-- raised (`haystack.tool.error` true, in any case; the tracer sets no status): the `error`
-- text of its output (`{"error": "Failed to invoke Tool ... Error: ..."}`), what the model read
ALTER TABLE {db}.otel_traces {on_cluster}
    MODIFY COLUMN SpanModelErrorMessage String MATERIALIZED multiIf(
        lower(SpanAttributes['haystack.tool.error']) = 'true' AND StatusMessage = ''
        AND JSONExtractString(SpanAttributes['haystack.agent.step.tool.output'], 'error') != '',
        JSONExtractString(SpanAttributes['haystack.agent.step.tool.output'], 'error'),
        StatusCode NOT IN ('Error', 'STATUS_CODE_ERROR') OR StatusMessage != '', '',
        has(Events.Name, 'exception'),
        Events.Attributes[arrayLastIndex(n -> n = 'exception', Events.Name)]['exception.message'],
        SpanModelSource = 'logfire',
        if(JSONExtractString(SpanAttributes['error'], 'data', 'error') != '',
           JSONExtractString(SpanAttributes['error'], 'data', 'error'),
           JSONExtractString(SpanAttributes['error'], 'message')),
        '') CODEC(ZSTD(1));

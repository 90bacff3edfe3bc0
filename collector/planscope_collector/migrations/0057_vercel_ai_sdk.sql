-- The Vercel AI SDK's telemetry in the span model (docs/semantic-conventions.md, "The Vercel AI
-- SDK"): `ai` (npm) 3.x-6.x with `experimental_telemetry: { isEnabled: true }` writes its spans
-- through the app's @opentelemetry/api tracer provider (tracer `ai`), each naming its operation
-- in `ai.operationId` (the span's name too): `ai.generateText` / `ai.streamText` /
-- `ai.generateObject` / `ai.streamObject` (a call: `ai.prompt`, `ai.response.text`, summed
-- `ai.usage.*`), under it one provider call per model step `ai.<fn>.doGenerate` / `.doStream`
-- (`ai.prompt.messages`, `ai.response.text`, `ai.response.toolCalls`, `gen_ai.system`,
-- `gen_ai.request.model`, `gen_ai.usage.input_tokens` / `output_tokens`), and `ai.toolCall`
-- per tool executed (`ai.toolCall.name`, `.id`, `.args`, `.result`; a tool that throws: ERROR
-- with the error's message and an `exception` event). Before this only the provider calls were
-- read (by `gen_ai.system`); the tool calls were plain spans, their name the span's, and no
-- answer was read, so no plan.
--
--   * SpanModelKind: `ai.toolCall` a tool call, a provider call a model call, a call's outer
--     span a run at the root (else other: binding decides, as for any plain span);
--   * SpanModelSource `vercel_ai`;
--   * the tool calls view: name `ai.toolCall.name`, arguments `ai.toolCall.args`, result
--     `ai.toolCall.result` (SpanModelToolOutput);
--   * the plan candidates and stream: a provider call's answer, `ai.response.text`.
--
-- Each column and view re-defined here is the latest one's (0056's kind and tool calls view,
-- 0048's source, 0053's tool output, 0036's plan candidates, 0045's plan stream) with one more branch. Rows already
-- stored keep their kind (a MATERIALIZED column is computed at insert); the analyzer's
-- BINDING_VERSION is 45. Migrations run before the collector accepts spans, so no insert falls
-- between DROP and CREATE.

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
        -- the Vercel AI SDK (its provider calls also carry gen_ai.system)
        SpanAttributes['ai.operationId'] != '', 'vercel_ai',
        SpanAttributes['gen_ai.system'] != '' OR SpanAttributes['gen_ai.tool.name'] != '', 'genai',
        hasAny(JSONExtract(SpanAttributes['tags'], 'Array(String)'),
               ['Tool.run()', 'PromptDriver.run()']), 'griptape',
        ParentSpanId = '' AND SpanAttributes['agent_name'] != '', 'framework',
        '') CODEC(ZSTD(1));

ALTER TABLE {db}.otel_traces {on_cluster}
    MODIFY COLUMN SpanModelToolOutput String ALIAS multiIf(
        SpanAttributes['gen_ai.tool.call.result'] != '', SpanAttributes['gen_ai.tool.call.result'],
        -- the Vercel AI SDK's `ai.toolCall`: what the tool returned, JSON-encoded (a string
        -- result is a JSON string: its text)
        startsWith(SpanAttributes['ai.toolCall.result'], '"'),
        JSONExtractString(SpanAttributes['ai.toolCall.result']),
        SpanAttributes['ai.toolCall.result'] != '', SpanAttributes['ai.toolCall.result'],
        -- Google ADK's `execute_tool {tool}`: what the tool returned (an object: ADK wraps any
        -- other value as {"result": ...}), as ADK records it under its own tracing or
        -- OpenInference's (whose `output.value` wraps it in ADK's function response, `{"id",
        -- "name", "response"}`): one result, one rule
        SpanAttributes['gcp.vertex.agent.tool_response'] != '',
        SpanAttributes['gcp.vertex.agent.tool_response'],
        SpanAttributes['output.value'] != '', SpanAttributes['output.value'],
        SpanAttributes['traceloop.entity.output'] != '', SpanAttributes['traceloop.entity.output'],
        SpanAttributes['tool_response'] != '', SpanAttributes['tool_response'],
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

DROP VIEW IF EXISTS {db}.planscope_tool_calls_mv {on_cluster};

-- tool calls (0056's): the Vercel AI SDK's tool name and arguments
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
            SpanAttributes['ai.toolCall.name'] != '', SpanAttributes['ai.toolCall.name'],
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
            SpanAttributes['ai.toolCall.args'] != '', SpanAttributes['ai.toolCall.args'],
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

DROP VIEW IF EXISTS {db}.planscope_plan_candidates_mv {on_cluster};

-- the plan candidates (0036's): also the Vercel AI SDK's provider call's answer
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_plan_candidates_mv {on_cluster}
TO {db}.planscope_plan_candidates
AS WITH SpanAttributes['langfuse.observation.output'] AS LangfuseOutput,
    if(JSONHas(LangfuseOutput, 'role'), JSONExtractString(LangfuseOutput, 'content'),
       LangfuseOutput) AS LangfuseAnswer,
    JSONExtractString(SpanAttributes['mlflow.spanOutputs'], 'choices', 1, 'message',
                      'content') AS MlflowAnswer
SELECT
    Project, TraceId, SpanId, ParentSpanId, SpanAttributes, ServiceName, Timestamp, Duration,
    SpanModelKind, SpanModelInferred, SpanModelStatusCode, SpanModelSource
FROM {db}.otel_traces
WHERE SpanModelSource != 'planscope'
  AND (SpanModelKind = 'plan'
       -- an inferred run or step: its output text, as the stream reads it, and its pre-check
       OR (SpanModelKind IN ('run', 'step')
           AND match(multiIf(SpanAttributes['output.value'] != '', SpanAttributes['output.value'],
                             SpanAttributes['traceloop.entity.output'] != '',
                             SpanAttributes['traceloop.entity.output'],
                             SpanAttributes['final_result'] != '', SpanAttributes['final_result'],
                             SpanAttributes['gen_ai.output.messages'] != '',
                             JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                               'parts', 1, 'content'),
                             SpanAttributes['langfuse.observation.output'] != '',
                             SpanAttributes['langfuse.observation.output'],
                             SpanAttributes['planscope.output']) AS OutputText,
                     '^\\x{FEFF}?[ \\t\\n\\r]*\\{')
           AND multiSearchAny(OutputText, ['"steps"', '"plan"', '\\u']))
       -- a foreign LLM call: any of the texts the stream reads its answer from holds a
       -- character that a JSON answer needs
       OR (SpanModelKind = 'llm'
           AND (multiSearchAny(SpanAttributes['llm.output_messages.0.message.content'],
                               ['{', '['])
                OR multiSearchAny(
                       SpanAttributes['llm.output_messages.0.message.contents.0.message_content.text'],
                       ['{', '['])
                OR multiSearchAny(SpanAttributes['gen_ai.completion.0.content'],
                                  ['{', '['])
                OR multiSearchAny(
                       concat(JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                                'content'),
                              JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                                'parts', 1, 'content')),
                       ['{', '['])
                -- Langfuse: the answer message's content, else the output itself
                OR multiSearchAny(LangfuseAnswer, ['{', '['])
                -- MLflow: the completion's first choice's message's content
                OR multiSearchAny(MlflowAnswer, ['{', '['])
                -- the Vercel AI SDK's provider call: its answer's text
                OR multiSearchAny(SpanAttributes['ai.response.text'], ['{', '[']))));

DROP VIEW IF EXISTS {db}.planscope_plan_stream_mv {on_cluster};

-- the observed plans (0045's): also the Vercel AI SDK's provider call's answer
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_plan_stream_mv {on_cluster}
TO {db}.planscope_plan_stream
AS SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    SpanAttributes['planscope.run.id'] AS RunId,
    if(SpanAttributes['planscope.plan.id'] != '', SpanAttributes['planscope.plan.id'],
       PlanIdJson) AS PlanId,
    if(SpanAttributes['planscope.plan.version'] != '',
       toUInt32OrZero(SpanAttributes['planscope.plan.version']), VersionJson) AS Version,
    toUInt32OrNull(SpanAttributes['planscope.plan.parent_version']) AS ParentVersion,
    if(SpanAttributes['planscope.plan.scope'] != '', SpanAttributes['planscope.plan.scope'],
       ScopeJson) AS Scope,
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
    toUInt8(Observed) AS Inferred,
    Steps
FROM (
    -- 2. the plan's steps (0014's rules) and its plan-level fields, once per span
    WITH
        -- the answer's top-level arrays (an object answer of a foreign LLM call only)
        if(FromLlm AND JSONType(Plan) = 'Object',
           arrayFilter(l -> JSONType(l) = 'Array',
                       arrayMap(kv -> kv.2, JSONExtractKeysAndValuesRaw(Plan))),
           []) AS Lists,
        -- each list's rank: 2 = step objects (an object with a non-empty work field), 1 = step
        -- names, 0 = neither; then its length; the first of the best (indexOf) is the plan
        arrayMap(l -> multiIf(
            JSONLength(l) > 0
                AND arrayAll(s -> JSONType(s) = 'Object'
                    AND arrayExists(k -> JSONExtractString(s, k) != '',
                                    ['description', 'task', 'title', 'action', 'step', 'tool',
                                     'instruction', 'goal', 'command']),
                    JSONExtractArrayRaw(l)), 2,
            JSONLength(l) >= 2
                AND arrayAll(s -> JSONType(s) = 'String' AND JSONExtractString(s) != '',
                             JSONExtractArrayRaw(l)), 1,
            0) * 1000000 + JSONLength(l), Lists) AS ListRanks,
        arrayMax(arrayPushBack(ListRanks, 0)) AS BestRank,
        if(BestRank >= 1000000, Lists[indexOf(ListRanks, BestRank)], '') AS BestList
    SELECT
        *,
        multiIf(NOT Observed, JSONExtractArrayRaw(Plan, 'steps'),
                (SpanModelKind = 'plan' OR FromLlm) AND JSONType(Plan) = 'Array',
                JSONExtractArrayRaw(Plan),
                JSONType(Plan, 'steps') = 'Array', JSONExtractArrayRaw(Plan, 'steps'),
                JSONType(Plan, 'plan') = 'Array', JSONExtractArrayRaw(Plan, 'plan'),
                JSONExtractArrayRaw(BestList)) AS Steps,
        JSONType(Plan, 'steps') = 'Array' OR JSONType(Plan, 'plan') = 'Array' AS HasStepsKey,
        -- an LLM's answer is a plan when it is an object with a steps/plan array or another
        -- list that reads as steps, or an array whose every element is a step object
        HasStepsKey OR BestList != ''
            OR (JSONType(Plan) = 'Array'
                AND arrayAll(s -> JSONType(s) = 'Object'
                    AND arrayExists(k -> JSONExtractString(s, k) != '',
                                    ['description', 'task', 'title', 'action', 'step', 'tool',
                                     'instruction', 'goal', 'command']),
                    Steps)) AS StepLike,
        if(Observed, '', JSONExtract(Plan, 'id', 'String')) AS PlanIdJson,
        if(Observed, 0, JSONExtract(Plan, 'version', 'UInt32')) AS VersionJson,
        JSONExtract(Plan, 'scope', 'String') AS ScopeJson
    FROM (
        -- 1. the spans that may show a plan, their plan text, and the pre-check on it
        SELECT
            Project, TraceId, SpanId, ParentSpanId, SpanAttributes, ServiceName, Timestamp,
            Duration, SpanModelKind, SpanModelInferred, SpanModelStatusCode, SpanModelSource,
            -- a foreign LLM call's answer is read as a plan (planscope's own LLM spans are
            -- not: their plans are declared), like an inferred span's output
            SpanModelKind = 'llm' AND SpanAttributes['planscope.span.kind'] = '' AS FromLlm,
            FromLlm OR SpanModelInferred = 1 AS Observed,
            multiIf(FromLlm,
                    -- its answer text; a fenced ```json block stands for its content
                    replaceRegexpOne(trimBoth(multiIf(
                        SpanAttributes['llm.output_messages.0.message.content'] != '',
                        SpanAttributes['llm.output_messages.0.message.content'],
                        SpanAttributes['llm.output_messages.0.message.contents.0.message_content.text'] != '',
                        SpanAttributes['llm.output_messages.0.message.contents.0.message_content.text'],
                        SpanAttributes['gen_ai.output.messages'] != '',
                        -- the parts format; a message whose content is the text itself
                        -- (older GenAI instrumentations) stands for its text
                        if(JSONType(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                    'content') = 'String',
                           JSONExtractString(
                               JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                               'content'),
                           JSONExtractString(
                               JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                               'parts', 1, 'content')),
                        -- the Vercel AI SDK's provider call: its answer's text
                        SpanAttributes['ai.response.text'] != '',
                        SpanAttributes['ai.response.text'],
                        SpanAttributes['gen_ai.completion.0.content'] != '',
                        SpanAttributes['gen_ai.completion.0.content'],
                        -- Langfuse: the answer message's content, else the output itself
                        SpanAttributes['langfuse.observation.output'] != '',
                        if(JSONHas(SpanAttributes['langfuse.observation.output'], 'role'),
                           JSONExtractString(SpanAttributes['langfuse.observation.output'],
                                             'content'),
                           SpanAttributes['langfuse.observation.output']),
                        -- MLflow: the completion's first choice's message's content
                        JSONExtractString(SpanAttributes['mlflow.spanOutputs'], 'choices', 1,
                                          'message', 'content'))),
                        '^```[A-Za-z]*\\s*([\\s\\S]*?)\\s*```$', '\\1'),
                    SpanModelInferred = 1,
                    multiIf(SpanAttributes['output.value'] != '', SpanAttributes['output.value'],
                            SpanAttributes['traceloop.entity.output'] != '',
                            -- OpenLLMetry's LangChain task: {"outputs": ..., "kwargs": ...}
                            if(JSONLength(SpanAttributes['traceloop.entity.output']) = 2
                               AND JSONType(SpanAttributes['traceloop.entity.output'],
                                            'outputs') = 'Object'
                               AND JSONHas(SpanAttributes['traceloop.entity.output'], 'kwargs'),
                               JSONExtractRaw(SpanAttributes['traceloop.entity.output'],
                                              'outputs'),
                               SpanAttributes['traceloop.entity.output']),
                            -- pydantic-ai's agent run: its typed output (0028)
                            SpanAttributes['final_result'] != '',
                            SpanAttributes['final_result'],
                            SpanAttributes['gen_ai.output.messages'] != '',
                            JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                              'parts', 1, 'content'),
                            SpanAttributes['langfuse.observation.output'] != '',
                            SpanAttributes['langfuse.observation.output'],
                            SpanAttributes['planscope.output']),
                    SpanAttributes['planscope.plan.json']) AS Plan
        FROM {db}.planscope_plan_candidates
        WHERE SpanModelKind = 'plan'
           OR (SpanModelKind IN ('run', 'step') AND SpanModelInferred = 1
               AND match(Plan, '^\\x{FEFF}?[ \\t\\n\\r]*\\{')
               AND (position(Plan, '"steps"') > 0 OR position(Plan, '"plan"') > 0
                    OR position(Plan, '\\u') > 0))
           OR (FromLlm AND match(Plan, '^\\x{FEFF}?[ \\t\\n\\r]*[\\[{]'))
    )
)
WHERE SpanModelKind = 'plan'
   OR (SpanModelKind IN ('run', 'step') AND SpanModelInferred = 1 AND HasStepsKey
       AND length(Steps) > 0)
   OR (FromLlm AND length(Steps) > 0 AND StepLike);

-- LangSmith's OpenTelemetry export in the span model (docs/analyzers.md, "LangSmith's
-- OpenTelemetry export read ... on sealed-46 (tuned on it)"; `langsmith[otel]` 0.15): every run
-- is one span with `langsmith.span.kind` (chain / llm / tool) and `gen_ai.operation.name`
-- (`execute_tool` for a tool: a tool call already), the run's inputs and outputs as JSON in the
-- bare `gen_ai.prompt` / `gen_ai.completion` (older OpenLLMetry writes them indexed,
-- `gen_ai.prompt.{i}.*`: never the bare key). A tool run's inputs are its arguments, its outputs
-- `{"output": <ToolMessage as a plain object>}`; a run that raised has an exception event, its
-- status OK or ERROR depending on export batching (the exporter sets OK at the run's start).
--
--   * SpanModelToolOutput: also a bare `gen_ai.completion`;
--   * SpanModelToolResult: `{"output": {...}}` alone, whose object is a ToolMessage (type
--     `tool`, with `tool_call_id` and `content`): that content (a string as it is, any other
--     value as its JSON text); planscope_collector._returned.tool_result reads it so in Python;
--   * SpanModelRaised, SpanModelStatusCode: a LangSmith span (`langsmith.span.kind` set) with an
--     exception event raised and failed, whatever its status (its exception's type and message
--     read as for any span that raised);
--   * SpanModelStatusCode: a span whose last exception is LangGraph's control flow
--     (`ParentCommand`, `GraphInterrupt`, `NodeInterrupt`: a handoff, an interrupt) is no
--     failure (Unset), whatever the convention;
--   * the tool calls view: the arguments also from a bare `gen_ai.prompt`.
--
-- Each column and view re-defined here is the latest one's (0033's raised, 0041's status, 0048's
-- output, 0049's result and view) with one more branch (two for the status). Rows already
-- stored keep their typed rows (as 0049, no rewrite); the analyzer's BINDING_VERSION is 29.
-- Migrations run before the collector accepts spans, so no insert falls between DROP and CREATE.

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
        -- LangSmith's OpenTelemetry export: a run's outputs as JSON in a bare (not indexed)
        -- `gen_ai.completion`
        SpanAttributes['gen_ai.completion'] != '', SpanAttributes['gen_ai.completion'],
        -- a function's return value JSON-encoded: a string result is a JSON string
        startsWith(SpanAttributes['mlflow.spanOutputs'], '"'),
        JSONExtractString(SpanAttributes['mlflow.spanOutputs']),
        SpanAttributes['mlflow.spanOutputs']);

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
            -- LangSmith's OpenTelemetry export: a tool run's outputs {"output": ...}, a ToolMessage
            -- as a plain object ({"content", "type": "tool", "tool_call_id", "status", ...})
            startsWith(r, '{"output":') AND JSONLength(r) = 1 AND JSONType(r, 'output') = 'Object'
            AND JSONExtractString(r, 'output', 'type') = 'tool'
            AND JSONHas(r, 'output', 'tool_call_id') AND JSONHas(r, 'output', 'content'),
            if(JSONType(r, 'output', 'content') = 'String',
               JSONExtractString(r, 'output', 'content'),
               JSONExtractRaw(r, 'output', 'content')),
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

-- a span raised (0033's rule): also a LangSmith span whose status is OK with an exception event
ALTER TABLE {db}.otel_traces {on_cluster}
    MODIFY COLUMN SpanModelRaised UInt8 MATERIALIZED toUInt8(
        SpanModelSource != 'planscope'
        AND (StatusCode NOT IN ('Error', 'STATUS_CODE_ERROR', 'Ok', 'STATUS_CODE_OK')
             -- LangSmith's OpenTelemetry export sets a span OK when it writes the run's start
             -- and ERROR at its end, and the SDK keeps the first: the exception event is the end
             OR StatusCode IN ('Ok', 'STATUS_CODE_OK')
                AND SpanAttributes['langsmith.span.kind'] != '')
        AND has(Events.Name, 'exception')) CODEC(ZSTD(1));

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
        SpanModelReturned = 1, 'Error',
        -- a LangSmith span that raised, whatever its status (SpanModelRaised's rule)
        SpanModelRaised = 1 AND SpanAttributes['langsmith.span.kind'] != '', 'Error',
        StatusCode IN ('Ok', 'STATUS_CODE_OK'), 'Ok',
        SpanModelRaised = 1 OR SpanModelLevel = 'ERROR', 'Error',
        'Unset');

DROP VIEW IF EXISTS {db}.planscope_tool_calls_mv {on_cluster};

-- tool calls (0049's): LangSmith's arguments in a bare `gen_ai.prompt`
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

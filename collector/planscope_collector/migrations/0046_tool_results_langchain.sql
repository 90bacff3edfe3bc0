-- A tool call's result is what its tool returned (docs/storage.md, "Tool results: OpenLLMetry's
-- LangChain envelope (0046)"). OpenLLMetry's LangChain instrumentor records a tool span's
-- output (`traceloop.entity.output`, and the same text in `gen_ai.tool.call.result`) as its
-- callback's envelope, `{"output": <what the tool returned>, "kwargs": {...}}`, and a tool
-- LangChain calls with a tool call (a LangGraph ToolNode's, an agent's) returns a serialised
-- ToolMessage: `{"lc": 1, "type": "constructor", "id": [..., "ToolMessage"], "kwargs":
-- {"content": ..., "tool_call_id": ..., "name": ..., "status": ...}}`. The tool calls table held
-- that whole envelope as the call's result: two identical answers of a poll differed by their
-- tool_call_id (the runaway detector's "poll that never ended" could not fire under this
-- instrumentation) and the analyzer read the envelope, not the answer.
--
--   * SpanModelToolOutput (ALIAS): a tool call's result as recorded, the first set of its
--     conventions' attributes (the tool calls view's order, 0034/0038/0041; MLflow's JSON
--     string read decoded);
--   * SpanModelToolResult (ALIAS): what the tool returned: inside OpenLLMetry's LangChain
--     envelope (a text that starts `{"output":`, two keys, `kwargs` an object) a ToolMessage's
--     content, else the output itself (a string as it is, any other value as its JSON text);
--     any other result unchanged. planscope_collector._returned.tool_result reads it so in
--     Python (tests/collector/test_tool_results.py, RESULTS: the cases both are checked on);
--   * the tool calls view's Result is SpanModelToolResult, and the analyzer's component calls
--     read it (planscope_analyzer._queries);
--   * SpanModelReturnedError (0041's rule, 0043's conventions) reads the envelopes in
--     SpanModelToolResult, and a ToolMessage whose `status` is `error` (LangChain's own failed
--     call: a ToolException the tool handled) failed too, with no type, when its content is no
--     envelope; SpanModelReturnedMessage then reads the content (its `error` when it is an
--     object naming one). The insert discipline is 0041's: the result named once per column (a
--     one-element arrayMap), no MATERIALIZED column named, JSON parsed only for a text with the
--     envelope's prefix or an error key (docs/benchmarks.md, its 0046 paragraph).
--
-- Rows stored before: SpanModelReturnedError is computed again (MATERIALIZE COLUMN, waited
-- for); the tool call rows of OpenLLMetry tool spans (traceloop.span.kind `tool`) are written
-- again from otel_traces with the new result, status and type, and the old copies deleted
-- (0033's way). The trace index's stored partial rows are not rewritten. Stored bindings hold
-- the tool calls' results and status: the analyzer's BINDING_VERSION is 14. Migrations run
-- before the collector accepts spans, so no insert falls between DROP and CREATE.

ALTER TABLE {db}.otel_traces {on_cluster}
    ADD COLUMN IF NOT EXISTS SpanModelToolOutput String ALIAS multiIf(
        SpanAttributes['gen_ai.tool.call.result'] != '', SpanAttributes['gen_ai.tool.call.result'],
        SpanAttributes['output.value'] != '', SpanAttributes['output.value'],
        SpanAttributes['traceloop.entity.output'] != '', SpanAttributes['traceloop.entity.output'],
        SpanAttributes['tool_response'] != '', SpanAttributes['tool_response'],
        SpanAttributes['langfuse.observation.output'] != '',
        SpanAttributes['langfuse.observation.output'],
        -- a function's return value JSON-encoded: a string result is a JSON string
        startsWith(SpanAttributes['mlflow.spanOutputs'], '"'),
        JSONExtractString(SpanAttributes['mlflow.spanOutputs']),
        SpanAttributes['mlflow.spanOutputs']),
    ADD COLUMN IF NOT EXISTS SpanModelToolResult String ALIAS arrayMap(r -> if(
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
                 OR ((JSONType(u, 'error') = 'Object' AND JSONLength(u, 'error') > 0
                      OR JSONType(u, 'error') = 'String' AND JSONExtractString(u, 'error') != '')
                     AND hasAll(['error', 'code', 'status', 'status_code', 'message', 'details',
                                 'request_id', 'type'], JSONExtractKeys(u)))),
            [
                -- the type: the first of the error object's `type` and `code`, then the
                -- envelope's `code` and `status`, that is a non-empty string or an integer
                arrayFirst(x -> x != '', arrayMap((j, k) -> multiIf(
                        JSONType(j, k) = 'String', JSONExtractString(j, k),
                        JSONType(j, k) IN ('Int64', 'UInt64'), JSONExtractRaw(j, k),
                        ''),
                    [JSONExtractRaw(u, 'error'), JSONExtractRaw(u, 'error'), u, u],
                    ['type', 'code', 'code', 'status']))
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

-- stored spans: the column computed again by the new rule
ALTER TABLE {db}.otel_traces {on_cluster} MATERIALIZE COLUMN SpanModelReturnedError
    SETTINGS mutations_sync = 2;

DROP VIEW IF EXISTS {db}.planscope_tool_calls_mv {on_cluster};

-- tool calls (0041's): the result is what the tool returned
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


-- stored tool call rows of OpenLLMetry tool spans that hold the envelope as their result: each
-- written again from its span (the new result, status and type; the rest as the row had it),
-- then the old copy (its result the envelope) deleted (0041's way)
INSERT INTO {db}.planscope_tool_calls
SELECT c.* REPLACE (e.Result AS Result, if(e.Returned = 1, 'Error', StatusCode) AS StatusCode,
                    if(ErrorType = '' AND e.Returned = 1, e.Type, ErrorType) AS ErrorType)
FROM {db}.planscope_tool_calls AS c
GLOBAL INNER JOIN (SELECT Project, TraceId, SpanId, SpanModelToolOutput AS Output,
                          SpanModelToolResult AS Result, SpanModelReturned AS Returned,
                          SpanModelReturnedType AS Type
            FROM {db}.otel_traces WHERE lower(SpanAttributes['traceloop.span.kind']) = 'tool'
            AND SpanModelKind = 'tool' AND startsWith(SpanModelToolOutput, '{"output":')) AS e
    USING (Project, TraceId, SpanId)
WHERE c.Result = e.Output AND e.Result != e.Output;

ALTER TABLE {db}.planscope_tool_calls {on_cluster} DELETE WHERE (Project, TraceId, SpanId, Result) IN (
        SELECT Project, TraceId, SpanId, SpanModelToolOutput FROM {db}.otel_traces
        WHERE lower(SpanAttributes['traceloop.span.kind']) = 'tool' AND SpanModelKind = 'tool'
        AND startsWith(SpanModelToolOutput, '{"output":')
        AND SpanModelToolResult != SpanModelToolOutput)
    SETTINGS mutations_sync = 2, allow_nondeterministic_mutations = 1;

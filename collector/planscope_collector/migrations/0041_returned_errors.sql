-- A tool call of another convention that returned an error envelope failed (docs/storage.md,
-- "Errors returned as values by typed tool spans (0041)"): one mapping for the trace API, the
-- typed tables and the analyzer, as 0033's exception-only error.
--
-- A tool that fails without raising returns its error as its result: an MCP server answers
-- `CallToolResult` with `isError: true`, which is how MCP tools fail. The instrumentation then
-- records the call as OK (or UNSET), and a loop retrying such a tool went unseen. A span that
-- its own convention calls a tool call (OpenInference `openinference.span.kind` TOOL, GenAI
-- `gen_ai.operation.name` execute_tool, OpenLLMetry `traceloop.span.kind` tool; not planscope's
-- SDK, which sets its status itself), whose status is not ERROR and whose recorded result
-- (`gen_ai.tool.call.result`, else `output.value`, else `traceloop.entity.output`) is an error
-- envelope failed, with the envelope's type and message. The envelopes are the shapes
-- planscope_collector._returned.returned_error tells (its module docstring), read here in SQL:
--
--   * MCP's `{"isError": true, ...}` (or `is_error`, Anthropic's tool_result): message from
--     the envelope;
--   * Anthropic's API error `{"type": "error", "error": {...}}`: message of `error`;
--   * a bare `{"error": ...}` (a non-empty object or string) beside nothing but an error's own
--     fields: message of `error`, or `error` itself.
--
-- The type, of every shape: the first of the error object's `type` and `code`, then the
-- envelope's `code` and `status`, that is a non-empty string or an integer.
--
-- A message is the first of `message`, the `text` of the `content` blocks, a `content` string,
-- then (when `error` is an object) the same of `error` (at most two objects down), else an
-- `error` string. (JSONExtractString gives a value that is no string as its JSON text: each
-- string read is checked with JSONType first.) The Python function and this SQL are tested on
-- one table of cases (tests/collector/test_returned_errors.py, CASES).
--
--   * SpanModelReturnedError (MATERIALIZED Array(String), once per span at insert): the
--     envelope's [type] on those spans, [] on every other one (no room). What an insert pays is
--     mostly the analysis of this expression (docs/benchmarks.md, "Errors returned as values
--     (0041)"): it names the result once (bound by a one-element arrayMap), names no other
--     MATERIALIZED column (a column named here has its whole expression analysed again), and
--     parses only a result that starts with `{` and names an error key (or spells a key with
--     an escape);
--   * SpanModelReturned and SpanModelReturnedType (ALIAS) read it; SpanModelReturnedMessage
--     (ALIAS) reads the envelope's message on those spans when a query asks (the trace API's
--     spans, the analyzer's raw spans: storage.SPAN_STATUS_MESSAGE_SQL), not at insert;
--   * SpanModelStatusCode (ALIAS) says 'Error' for them, also over an explicit OK, so every
--     reader agrees (the typed tables' views, the trace index, the trace API's spans, the
--     analyzer); SpanModelOutcome (a run's) reads 0034's status rule itself (below);
--   * the tool calls view takes the envelope's type where the span carries no error.type and
--     no exception (0039's view otherwise).
--
-- Rows stored before: otel_traces computes the new columns from their expressions when read,
-- so SpanModelStatusCode answers the rule for old spans too; their typed tool call rows are
-- written again with the new status and type and the old copies deleted (as 0033). The trace
-- index's stored partial rows are not rewritten. Stored bindings are not read again: the
-- analyzer's BINDING_VERSION is 9 (they hold the tool calls' old status). Migrations run before
-- the collector accepts spans, so no insert falls between DROP and CREATE.

ALTER TABLE {db}.otel_traces {on_cluster}
    ADD COLUMN IF NOT EXISTS SpanModelReturnedError Array(String) MATERIALIZED if(
        -- a tool call by its own convention's kind (not SpanModelKind: a MATERIALIZED column
        -- named here has its whole expression analysed again on every insert) that did not raise
        SpanAttributes['planscope.span.kind'] = ''
        AND StatusCode NOT IN ('Error', 'STATUS_CODE_ERROR')
        AND (SpanAttributes['gen_ai.operation.name'] = 'execute_tool'
             OR upper(SpanAttributes['openinference.span.kind']) = 'TOOL'
             OR lower(SpanAttributes['traceloop.span.kind']) = 'tool'),
        arrayMap(r -> if(
            -- the rule: a result that can be an envelope (it is an object naming an error key, or
            -- it spells a key with an escape), then one of the three shapes
            startsWith(r, '{')
            AND (multiSearchAny(r, ['"isError"', '"is_error"', '"error"'])
                 OR position(r, '\\u') > 0)
            AND (JSONExtractRaw(r, 'isError') = 'true' OR JSONExtractRaw(r, 'is_error') = 'true'
                 OR (JSONExtractString(r, 'type') = 'error' AND JSONType(r, 'error') = 'Object')
                 OR ((JSONType(r, 'error') = 'Object' AND JSONLength(r, 'error') > 0
                      OR JSONType(r, 'error') = 'String' AND JSONExtractString(r, 'error') != '')
                     AND hasAll(['error', 'code', 'status', 'status_code', 'message', 'details',
                                 'request_id', 'type'], JSONExtractKeys(r)))),
            [
                -- the type: the first of the error object's `type` and `code`, then the
                -- envelope's `code` and `status`, that is a non-empty string or an integer
                arrayFirst(x -> x != '', arrayMap((j, k) -> multiIf(
                        JSONType(j, k) = 'String', JSONExtractString(j, k),
                        JSONType(j, k) IN ('Int64', 'UInt64'), JSONExtractRaw(j, k),
                        ''),
                    [JSONExtractRaw(r, 'error'), JSONExtractRaw(r, 'error'), r, r],
                    ['type', 'code', 'code', 'status']))
            ],
            []),
        -- its recorded result
        [multiIf(SpanAttributes['gen_ai.tool.call.result'] != '',
                 SpanAttributes['gen_ai.tool.call.result'],
                 SpanAttributes['output.value'] != '', SpanAttributes['output.value'],
                 SpanAttributes['traceloop.entity.output'])])[1],
        []) CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS SpanModelReturned UInt8 ALIAS notEmpty(SpanModelReturnedError),
    ADD COLUMN IF NOT EXISTS SpanModelReturnedType String ALIAS SpanModelReturnedError[1],
    -- the message (read, not stored: no view needs it at insert): of the envelope (MCP's), or of
    -- its `error` object, or that string
    ADD COLUMN IF NOT EXISTS SpanModelReturnedMessage String ALIAS if(SpanModelReturned = 1,
        arrayMap(r -> arrayMap(own -> multiIf(
                    JSONExtractRaw(r, 'isError') = 'true' OR JSONExtractRaw(r, 'is_error') = 'true',
                    ifNull(arrayFirst(m -> m IS NOT NULL, arraySlice(own, 1, 3)), ''),
                    JSONType(r, 'error') = 'Object',
                    ifNull(arrayFirst(m -> m IS NOT NULL, arraySlice(own, 2, 3)), ''),
                    if(JSONType(r, 'error') = 'String', JSONExtractString(r, 'error'), '')),
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
                     JSONExtractRaw(r, 'error', 'error', 'error')])])[1],
            [multiIf(SpanAttributes['gen_ai.tool.call.result'] != '',
                     SpanAttributes['gen_ai.tool.call.result'],
                     SpanAttributes['output.value'] != '', SpanAttributes['output.value'],
                     SpanAttributes['traceloop.entity.output'])])[1],
        '');

-- A run's outcome (0033's) read the status through SpanModelStatusCode; it now reads 0034's
-- status rule itself: a run is no tool call, and through the ALIAS the insert would analyse the
-- whole envelope expression again for this column.
ALTER TABLE {db}.otel_traces {on_cluster}
    MODIFY COLUMN SpanModelStatusCode LowCardinality(String) ALIAS multiIf(
        StatusCode IN ('Error', 'STATUS_CODE_ERROR'), 'Error',
        SpanModelReturned = 1, 'Error',
        StatusCode IN ('Ok', 'STATUS_CODE_OK'), 'Ok',
        SpanModelRaised = 1 OR SpanModelLevel = 'ERROR', 'Error',
        'Unset'),
    MODIFY COLUMN SpanModelOutcome LowCardinality(String) MATERIALIZED
        if(SpanModelKind = 'run',
           multiIf(SpanAttributes['planscope.run.outcome'] != '',
                   SpanAttributes['planscope.run.outcome'],
                   SpanModelSource != 'planscope'
                   AND (StatusCode IN ('Error', 'STATUS_CODE_ERROR')
                        OR StatusCode NOT IN ('Ok', 'STATUS_CODE_OK')
                           AND (SpanModelRaised = 1 OR SpanModelLevel = 'ERROR')), 'failure',
                   'unknown'),
           '') CODEC(ZSTD(1));

DROP VIEW IF EXISTS {db}.planscope_tool_calls_mv {on_cluster};

-- tool calls (0039): the envelope's type where the span carries no error.type and no exception
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


-- stored tool call rows: each written again with the new status and type, then the old copy
-- deleted (0033's way: GLOBAL for a distributed store, the mutation waited for)
INSERT INTO {db}.planscope_tool_calls
SELECT c.* REPLACE ('Error' AS StatusCode, if(ErrorType != '', ErrorType, e.Type) AS ErrorType)
FROM {db}.planscope_tool_calls AS c
GLOBAL INNER JOIN (SELECT Project, TraceId, SpanId, SpanModelReturnedType AS Type
            FROM {db}.otel_traces WHERE SpanModelKind = 'tool' AND SpanModelReturned = 1) AS e
    USING (Project, TraceId, SpanId)
WHERE c.StatusCode != 'Error';

ALTER TABLE {db}.planscope_tool_calls {on_cluster} DELETE WHERE StatusCode != 'Error'
    AND (Project, TraceId, SpanId) IN (SELECT Project, TraceId, SpanId FROM {db}.otel_traces
                                       WHERE SpanModelKind = 'tool' AND SpanModelReturned = 1)
    SETTINGS mutations_sync = 2, allow_nondeterministic_mutations = 1;

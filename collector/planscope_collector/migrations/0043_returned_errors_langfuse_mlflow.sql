-- Errors returned as values by Langfuse and MLflow tool spans (docs/storage.md, "Errors
-- returned as values by typed tool spans (0041)", its 0043 paragraph): 0041's rule (the same
-- envelopes, type and message; planscope_collector._returned.returned_error) also on
--
--   * a Langfuse tool observation (`langfuse.observation.type` `tool`, e.g. `@observe(as_type=
--     "tool")`) whose level is not ERROR (an observation the SDK or the app marked ERROR keeps
--     its own message, as an ERROR status does), its result `langfuse.observation.output` (the
--     SDK writes a dict as its JSON, a string as it is);
--   * an MLflow Tracing TOOL span (`mlflow.spanType` '"TOOL"': MLflow JSON-encodes every
--     attribute value), its result `mlflow.spanOutputs`, the function's return value
--     JSON-encoded: a dict is the object itself, a string a JSON string, read decoded when it
--     holds an object (a tool that returns `json.dumps({"isError": true, ...})`);
--
-- read after the other conventions' results, in the tool calls view's order. Both are tool
-- calls by their convention's own kind (0034, 0038); Griptape records no result. The insert
-- discipline is 0041's (its header): the result named once, no other MATERIALIZED column
-- named, JSON parsed only for a result that starts with `{` and names an error key; the
-- MLflow string is decoded only when it starts with `"{`.
--
-- Rows stored before: SpanModelReturnedError is stored in every part written since 0041, so it
-- is computed again (MATERIALIZE COLUMN, waited for); then, as 0041, the tool call rows of
-- Langfuse and MLflow spans the rule now fails are written again with Error and the envelope's
-- type and the old copies deleted. The trace index's stored partial rows are not rewritten.
-- Stored bindings are not read again: the analyzer's BINDING_VERSION is 11. The tool calls
-- view (0041's) reads SpanModelReturnedType and SpanModelStatusCode already: unchanged.

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
                 SpanAttributes['traceloop.entity.output'] != '',
                 SpanAttributes['traceloop.entity.output'],
                 SpanAttributes['langfuse.observation.output'] != '',
                 SpanAttributes['langfuse.observation.output'],
                 -- MLflow's is the return value JSON-encoded: a string's a JSON string, which
                 -- is read (decoded) when it holds an object
                 startsWith(SpanAttributes['mlflow.spanOutputs'], '"{'),
                 JSONExtractString(SpanAttributes['mlflow.spanOutputs']),
                 SpanAttributes['mlflow.spanOutputs'])])[1],
        []) CODEC(ZSTD(1)),
    -- the message (read, not stored: no view needs it at insert): of the envelope (MCP's), or of
    -- its `error` object, or that string
    MODIFY COLUMN SpanModelReturnedMessage String ALIAS if(SpanModelReturned = 1,
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
                     SpanAttributes['traceloop.entity.output'] != '',
                     SpanAttributes['traceloop.entity.output'],
                     SpanAttributes['langfuse.observation.output'] != '',
                     SpanAttributes['langfuse.observation.output'],
                     startsWith(SpanAttributes['mlflow.spanOutputs'], '"{'),
                     JSONExtractString(SpanAttributes['mlflow.spanOutputs']),
                     SpanAttributes['mlflow.spanOutputs'])])[1],
        '');

-- stored spans: the column computed again by the new rule (parts written since 0041 hold it)
ALTER TABLE {db}.otel_traces {on_cluster} MATERIALIZE COLUMN SpanModelReturnedError
    SETTINGS mutations_sync = 2;

-- stored tool call rows of those spans: each written again with the new status and type, then
-- the old copy deleted (0041's way)
INSERT INTO {db}.planscope_tool_calls
SELECT c.* REPLACE ('Error' AS StatusCode, if(ErrorType != '', ErrorType, e.Type) AS ErrorType)
FROM {db}.planscope_tool_calls AS c
GLOBAL INNER JOIN (SELECT Project, TraceId, SpanId, SpanModelReturnedType AS Type
            FROM {db}.otel_traces WHERE SpanModelSource IN ('langfuse', 'mlflow')
            AND SpanModelKind = 'tool' AND SpanModelReturned = 1) AS e
    USING (Project, TraceId, SpanId)
WHERE c.Source IN ('langfuse', 'mlflow') AND c.StatusCode != 'Error';

ALTER TABLE {db}.planscope_tool_calls {on_cluster} DELETE WHERE Source IN ('langfuse', 'mlflow')
    AND StatusCode != 'Error'
    AND (Project, TraceId, SpanId) IN (SELECT Project, TraceId, SpanId FROM {db}.otel_traces
                                       WHERE SpanModelSource IN ('langfuse', 'mlflow')
                                       AND SpanModelKind = 'tool' AND SpanModelReturned = 1)
    SETTINGS mutations_sync = 2, allow_nondeterministic_mutations = 1;

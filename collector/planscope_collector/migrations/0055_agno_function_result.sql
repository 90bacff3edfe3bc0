-- Agno's failed tool calls under OpenLLMetry's Agno instrumentor (docs/analyzers.md, "Agno's
-- tool results under OpenLLMetry's Agno instrumentor (tuned on sealed-54)"): Agno catches a
-- tool's exception inside `FunctionCall.execute` and hands its text to the model, so the
-- instrumentor's `{tool}.tool` span (`traceloop.span.kind` tool) ends OK; its
-- `traceloop.entity.output` is `str()` of Agno's `FunctionExecutionResult`, a pydantic model
-- whose text starts with its `status` field (`status='success' result=...` or
-- `status='failure' result=None error="..."`). Agno documents that status as the call's outcome.
--
--   * SpanModelReturnedError: a tool span's result whose text starts `status='failure' ` with an
--     `error` that is not None failed (type `failure`, the status), an error returned as a value;
--   * SpanModelReturnedMessage: its message is that `error` field, unquoted.
--
-- Each column re-defined here is the latest one's (0053's) with that one change. Rows already
-- stored keep their typed rows (a MATERIALIZED column is computed at insert, no rewrite); the
-- analyzer's BINDING_VERSION is 34.

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
                 -- "error_message": ...}; a result ADK recorded (its tool_response) whose
                 -- `status` is `error` is one whatever is beside it (ADK's documented status key)
                 OR (JSONExtractString(u, 'status') = 'error'
                     AND (JSONHas(u, 'error_code') OR JSONHas(u, 'error_message')
                          OR SpanAttributes['gcp.vertex.agent.tool_response'] != ''))
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
                -- LangChain's failed call: a ToolMessage (unwrapped above) whose status is
                -- error, in OpenLLMetry's serialisation (a constructor's kwargs) or as
                -- LangSmith's plain object (0050's `{"output": {...}}` alone)
                r != u
                AND (JSONExtractString(r, 'output', 'kwargs', 'status') = 'error'
                     AND JSONExtractString(r, 'output', 'id', -1) = 'ToolMessage'
                     AND JSONExtractString(r, 'output', 'type') = 'constructor'
                     AND JSONType(r, 'output', 'id') = 'Array'
                     AND JSONType(r, 'output', 'kwargs') = 'Object'
                     OR JSONLength(r) = 1 AND JSONExtractString(r, 'output', 'type') = 'tool'
                        AND JSONExtractString(r, 'output', 'status') = 'error'), [''],
                -- LlamaIndex's failed call: a ToolCallResult (unwrapped above) whose tool output
                -- is an error (the tool raised; the workflow handed its text back to the model)
                r != u AND startsWith(r, '{"tool_name":')
                AND JSONExtractRaw(r, 'tool_output', 'is_error') = 'true', [''],
                -- Agno's failed call: its FunctionExecutionResult as text (pydantic's str, as
                -- OpenLLMetry's Agno instrumentor records it) whose status is failure, with
                -- an error beside it; the type is that status
                startsWith(u, 'status=\'failure\' ') AND match(u, ' error=[\'"]'), ['failure'],
                [])),
            [SpanModelToolOutput], [SpanModelToolResult])[1],
        []) CODEC(ZSTD(1));

ALTER TABLE {db}.otel_traces {on_cluster}
    -- the message (read, not stored: no view needs it at insert): of the envelope (MCP's), or of
    -- its `error` object, or that string; a failed ToolMessage's content that is none of those
    MODIFY COLUMN SpanModelReturnedMessage String ALIAS if(SpanModelReturned = 1,
        arrayMap(r -> multiIf(
            -- Agno's FunctionExecutionResult as text: its `error` field (a Python string's
            -- repr, in single quotes or, when it holds one, double quotes), unquoted
            startsWith(r, 'status=\'failure\' '),
            arrayMap(q -> replaceAll(replaceAll(substring(q, 2, length(q) - 2),
                                                '\\\'', '\''), '\\\\', '\\'),
                [extract(r, ' error=(\'(?:[^\'\\\\]|\\\\.)*\'|"(?:[^"\\\\]|\\\\.)*")')])[1],
            startsWith(r, '{'), arrayMap(own -> multiIf(
                    JSONExtractRaw(r, 'isError') = 'true' OR JSONExtractRaw(r, 'is_error') = 'true',
                    ifNull(arrayFirst(m -> m IS NOT NULL, arraySlice(own, 1, 3)), ''),
                    JSONType(r, 'error') = 'Object',
                    ifNull(arrayFirst(m -> m IS NOT NULL, arraySlice(own, 2, 3)), ''),
                    JSONType(r, 'error') = 'String', JSONExtractString(r, 'error'),
                    -- ADK's {"status": "error", ...}: its `error_message`, else what it says
                    JSONExtractString(r, 'status') = 'error'
                    AND (JSONHas(r, 'error_code') OR JSONHas(r, 'error_message')
                         OR SpanAttributes['gcp.vertex.agent.tool_response'] != ''),
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

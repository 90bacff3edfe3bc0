-- A LangChain ToolMessage whose `status` is `error` is a failed tool call in LangSmith's
-- OpenTelemetry export too (docs/analyzers.md, "... on sealed-46 (tuned on it, second round)";
-- `langsmith[otel]` 0.15): a tool run's outputs are `{"output": <the ToolMessage as a plain
-- object: content, type `tool`, tool_call_id, status, ...>}` (0050 reads its content as the
-- result). 0046's rule read the status of OpenLLMetry's serialisation only (`{"output": {"lc":
-- 1, "type": "constructor", "id": [..., "ToolMessage"], "kwargs": {..., "status"}}, "kwargs":
-- {...}}`): in LangSmith's, a tool run that returned an error ToolMessage (a tool or a
-- middleware that returns its error as a message) was a successful call.
--
--   * SpanModelReturnedError: the one LangChain branch reads a ToolMessage's status in either
--     serialisation; its message (SpanModelReturnedMessage, unchanged) the content.
--     planscope_collector._returned.returned_error reads it so in Python.
--
-- The column is 0049's with that branch widened. Rows already stored keep their typed rows (a
-- MATERIALIZED column is computed at insert; as 0049 and 0050, no rewrite); the analyzer's
-- BINDING_VERSION is 30. Migrations run before the collector accepts spans.

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
                [])),
            [SpanModelToolOutput], [SpanModelToolResult])[1],
        []) CODEC(ZSTD(1));

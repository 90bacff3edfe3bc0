-- Google ADK's tool results under OpenInference's Google ADK instrumentor read as under ADK's own
-- tracing (docs/analyzers.md, "ADK's error dicts under OpenInference ... on sealed-49 (tuned on
-- it)"): openinference-instrumentation-google-adk 0.1.x sends ADK's `execute_tool {tool}` spans
-- through its own tracer (OpenInference TOOL spans) and ADK still writes its
-- `gcp.vertex.agent.tool_response` on them; OpenInference's `output.value` holds the same result
-- wrapped in ADK's function response (`{"id", "name", "response": {...}}`), which no
-- error-envelope shape matched. ADK documents a tool result's `status` key as the call's outcome
-- (`"success"`, `"error"`, `"pending"`), so an ADK result saying `"status": "error"` failed even
-- with no `error_code` / `error_message` beside it; outside ADK, `{"status": "error"}` alone (a
-- job's state) is still no envelope.
--
--   * SpanModelToolOutput: ADK's `gcp.vertex.agent.tool_response` first (before OpenInference's
--     `output.value`): the bare result under either tracing;
--   * SpanModelReturnedError / SpanModelReturnedMessage: a result on a span that carries ADK's
--     tool_response whose `status` is `error` is an error returned as a value (type: its
--     `error_code`, else `code`, else `status`; message: its `error_message`, else `message`,
--     else the text), whatever is beside it.
--
-- Each column re-defined here is the latest one's (0052's output, 0051's returned error, 0048's
-- message) with that one change. Rows already stored keep their typed rows (a MATERIALIZED
-- column is computed at insert, no rewrite); the analyzer's BINDING_VERSION is 32.

ALTER TABLE {db}.otel_traces {on_cluster}
    MODIFY COLUMN SpanModelToolOutput String ALIAS multiIf(
        SpanAttributes['gen_ai.tool.call.result'] != '', SpanAttributes['gen_ai.tool.call.result'],
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
                [])),
            [SpanModelToolOutput], [SpanModelToolResult])[1],
        []) CODEC(ZSTD(1));

ALTER TABLE {db}.otel_traces {on_cluster}
    -- the message (read, not stored: no view needs it at insert): of the envelope (MCP's), or of
    -- its `error` object, or that string; a failed ToolMessage's content that is none of those
    MODIFY COLUMN SpanModelReturnedMessage String ALIAS if(SpanModelReturned = 1,
        arrayMap(r -> if(startsWith(r, '{'), arrayMap(own -> multiIf(
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

-- The span model's kind for two more frameworks' shapes (issue #11; the conformance suite's
-- openllmetry_langgraph and openinference_smolagents sources). 0012's rules, with two changes:
--
--   * a `gen_ai.operation.name` the GenAI conventions do not define no longer decides the kind
--     when the span also carries an OpenInference or Traceloop kind: that kind does. OpenLLMetry
--     (0.5x) writes `execute_task` on every Traceloop `task` span, which 0012 made `other`, so a
--     LangGraph graph traced by OpenLLMetry's LangChain instrumentor had no steps;
--   * a Traceloop `task` whose LangGraph node (`traceloop.association.properties.langgraph_node`)
--     is not its own name is a runnable inside that node's visit (an edge's routing function, a
--     chain inside the node): `other`, as 0012 already reads OpenInference's CHAIN spans.
--
-- Rows already stored keep their kind and typed rows (a MATERIALIZED column is computed at
-- insert). Each attribute lookup costs a fixed ~0.2 ms per insert to analyse (docs/storage.md):
-- the change adds three.
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
            AND SpanAttributes['traceloop.span.kind'] = '', 'other',
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
        lower(SpanAttributes['traceloop.span.kind']) = 'task',
            if(SpanAttributes['traceloop.association.properties.langgraph_node']
                   NOT IN ('', SpanAttributes['traceloop.entity.name']),
               'other', 'step'),
        lower(SpanAttributes['traceloop.span.kind']) = 'tool', 'tool',
        SpanAttributes['traceloop.span.kind'] != '', 'other',
        SpanAttributes['llm.request.type'] != '' OR SpanAttributes['gen_ai.system'] != '', 'llm',
        SpanAttributes['gen_ai.tool.name'] != '', 'tool',
        ParentSpanId = '' AND SpanAttributes['agent_name'] != '', 'run',
        'other') CODEC(ZSTD(1));

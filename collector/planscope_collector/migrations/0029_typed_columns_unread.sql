-- The typed columns no reader reads, dropped with the lookups that filled them (issue #16, "fewer,
-- cheaper writes per insert"; the inventory of tables, columns, readers and costs is in
-- docs/storage.md, "Who reads each table, and what it costs at insert"; figures in
-- docs/benchmarks.md, "Inventory of the views (0027)").
--
-- No reader (the analyzer, the collector's API and run model, the dashboard through the API, the
-- planscope_llm_costs view) reads planscope_runs.AgentId and ConversationId,
-- planscope_tool_calls.ToolCallId, or planscope_llm_calls.ResponseModel and Role. Their views
-- are re-created without them; every other column keeps its 0012 expression
-- (tests/storage/test_views_0027.py inserts the same spans into the 0026 and 0027 layouts and
-- compares every kept column of every typed table). The attributes stay in otel_traces'
-- SpanAttributes, so a reader that needs one later can read it there. Rows already stored lose
-- the columns with the ALTER (a mutation). (Migrations run before the collector accepts spans,
-- so no insert falls between DROP and CREATE.)

DROP VIEW IF EXISTS {db}.planscope_runs_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_tool_calls_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_llm_calls_mv {on_cluster};

ALTER TABLE {db}.planscope_runs {on_cluster}
    DROP COLUMN IF EXISTS AgentId,
    DROP COLUMN IF EXISTS ConversationId;
ALTER TABLE {db}.planscope_tool_calls {on_cluster} DROP COLUMN IF EXISTS ToolCallId;
ALTER TABLE {db}.planscope_llm_calls {on_cluster}
    DROP COLUMN IF EXISTS ResponseModel,
    DROP COLUMN IF EXISTS Role;

-- runs (0012, 2.) ----------------------------------------------------------------------------------
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_runs_mv {on_cluster}
TO {db}.planscope_runs
AS SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    SpanModelRunId AS RunId,
    SpanModelAgentName AS AgentName,
    multiIf(SpanAttributes['planscope.run.objective'] != '',
            SpanAttributes['planscope.run.objective'],
            SpanModelInferred = 1,
            leftUTF8(multiIf(SpanAttributes['input.value'] != '', SpanAttributes['input.value'],
                             SpanAttributes['traceloop.entity.input']), 4000),
            '') AS Objective,
    SpanAttributes['planscope.run.variant'] AS Variant,
    SpanModelOutcome AS Outcome,
    SpanAttributes['planscope.run.outcome_reason'] AS OutcomeReason,
    SpanAttributes['planscope.run.budget'] AS Budget,
    ServiceName,
    Timestamp AS Start,
    addNanoseconds(Timestamp, Duration) AS End,
    Duration,
    SpanModelStatusCode AS StatusCode,
    StatusMessage,
    SpanAttributes['error.type'] AS ErrorType,
    SpanModelSource AS Source,
    SpanModelInferred AS Inferred
FROM {db}.otel_traces
WHERE SpanModelKind = 'run';

-- tool calls (0012, 6.) ----------------------------------------------------------------------------
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_tool_calls_mv {on_cluster}
TO {db}.planscope_tool_calls
AS SELECT
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
            toString(SpanName)) AS ToolName,
    SpanAttributes['planscope.tool.resource'] AS Resource,
    multiIf(SpanAttributes['planscope.tool.effect'] != '', SpanAttributes['planscope.tool.effect'],
            upper(SpanAttributes['openinference.span.kind']) IN ('RETRIEVER', 'RERANKER'), 'read',
            '') AS Effect,
    SpanAttributes['planscope.tool.args_hash'] AS ArgsHash,
    multiIf(SpanAttributes['gen_ai.tool.call.arguments'] != '',
            SpanAttributes['gen_ai.tool.call.arguments'],
            SpanAttributes['input.value'] != '', SpanAttributes['input.value'],
            SpanAttributes['traceloop.entity.input'] != '', SpanAttributes['traceloop.entity.input'],
            SpanAttributes['tool_arguments']) AS Arguments,
    multiIf(SpanAttributes['gen_ai.tool.call.result'] != '',
            SpanAttributes['gen_ai.tool.call.result'],
            SpanAttributes['output.value'] != '', SpanAttributes['output.value'],
            SpanAttributes['traceloop.entity.output'] != '',
            SpanAttributes['traceloop.entity.output'],
            SpanAttributes['tool_response']) AS Result,
    SpanAttributes['error.type'] AS ErrorType,
    ServiceName,
    Timestamp AS Start,
    Duration,
    SpanModelStatusCode AS StatusCode,
    SpanModelSource AS Source
FROM {db}.otel_traces
WHERE SpanModelKind = 'tool';

-- LLM calls (0012, 7.) -----------------------------------------------------------------------------
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_llm_calls_mv {on_cluster}
TO {db}.planscope_llm_calls
AS WITH
    multiIf(SpanAttributes['planscope.llm.cost_usd'] != '', SpanAttributes['planscope.llm.cost_usd'],
            SpanAttributes['llm.cost.total'] != '', SpanAttributes['llm.cost.total'],
            SpanAttributes['operation.cost'] != '', SpanAttributes['operation.cost'],
            SpanAttributes['gen_ai.usage.cost']) AS CarriedCost
SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    SpanAttributes['planscope.run.id'] AS RunId,
    SpanAttributes['planscope.plan.id'] AS PlanId,
    SpanAttributes['planscope.step.id'] AS StepId,
    toUInt32OrZero(SpanAttributes['planscope.step.attempt']) AS Attempt,
    lower(multiIf(SpanAttributes['gen_ai.provider.name'] != '', SpanAttributes['gen_ai.provider.name'],
                  SpanAttributes['gen_ai.system'] != '', SpanAttributes['gen_ai.system'],
                  SpanAttributes['llm.provider'] != '', SpanAttributes['llm.provider'],
                  SpanAttributes['llm.system'])) AS Provider,
    multiIf(SpanAttributes['gen_ai.request.model'] != '', SpanAttributes['gen_ai.request.model'],
            SpanAttributes['llm.model_name'] != '', SpanAttributes['llm.model_name'],
            SpanAttributes['gen_ai.response.model']) AS Model,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.input_tokens'] != '', SpanAttributes['gen_ai.usage.input_tokens'],
        SpanAttributes['llm.token_count.prompt'] != '', SpanAttributes['llm.token_count.prompt'],
        SpanAttributes['gen_ai.usage.prompt_tokens'])))) AS InputTokens,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.output_tokens'] != '',
        SpanAttributes['gen_ai.usage.output_tokens'],
        SpanAttributes['llm.token_count.completion'] != '',
        SpanAttributes['llm.token_count.completion'],
        SpanAttributes['gen_ai.usage.completion_tokens'])))) AS OutputTokens,
    greatest(0., toFloat64OrZero(CarriedCost)) AS CostUsd,
    SpanAttributes['error.type'] AS ErrorType,
    ServiceName,
    Timestamp AS Start,
    Duration,
    SpanModelStatusCode AS StatusCode,
    SpanModelSource AS Source,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.cache_read.input_tokens'] != '',
        SpanAttributes['gen_ai.usage.cache_read.input_tokens'],
        SpanAttributes['llm.token_count.prompt_details.cache_read'] != '',
        SpanAttributes['llm.token_count.prompt_details.cache_read'],
        SpanAttributes['gen_ai.usage.cache_read_input_tokens'])))) AS CacheReadTokens,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.cache_creation.input_tokens'] != '',
        SpanAttributes['gen_ai.usage.cache_creation.input_tokens'],
        SpanAttributes['llm.token_count.prompt_details.cache_write'] != '',
        SpanAttributes['llm.token_count.prompt_details.cache_write'],
        SpanAttributes['gen_ai.usage.cache_creation_input_tokens'])))) AS CacheWriteTokens,
    toUInt64(greatest(0, toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.reasoning.output_tokens'] != '',
        SpanAttributes['gen_ai.usage.reasoning.output_tokens'],
        SpanAttributes['llm.token_count.completion_details.reasoning'] != '',
        SpanAttributes['llm.token_count.completion_details.reasoning'],
        SpanAttributes['gen_ai.usage.reasoning_tokens'])))) AS ReasoningTokens,
    if(CarriedCost != '', 'span', '') AS CostSource
FROM {db}.otel_traces
WHERE SpanModelKind = 'llm';

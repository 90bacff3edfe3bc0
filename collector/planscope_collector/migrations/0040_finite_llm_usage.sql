-- A number that is no finite number in an LLM call's usage or cost (`gen_ai.usage.input_tokens`
-- "NaN", "Infinity", "1e400": toFloat64OrZero reads them as nan / inf) failed the insert of its
-- whole request ("Unexpected inf or nan to integer conversion" in toUInt64, pushing to this
-- view): the collector quarantined the request, every other span in it with it, and a cost of
-- nan or inf was stored as it is (a trace's cost no JSON can say). Found by fuzzing the mapping
-- (tests/analyzer/test_fuzz_mapping.py). The view is 0038's with each number read through
-- ifNotFinite(..., 0): a value that is no finite number counts as none, as text does.
--
-- Rows already stored keep their values (a view reads each insert once; no rewrite).
-- Migrations run before the collector accepts spans, so no insert falls between DROP and CREATE.

DROP VIEW IF EXISTS {db}.planscope_llm_calls_mv {on_cluster};
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_llm_calls_mv {on_cluster}
TO {db}.planscope_llm_calls
AS WITH
    SpanAttributes['langfuse.observation.usage_details'] AS LangfuseUsage,
    SpanAttributes['mlflow.chat.tokenUsage'] AS MlflowUsage,
    multiIf(SpanAttributes['planscope.llm.cost_usd'] != '', SpanAttributes['planscope.llm.cost_usd'],
            SpanAttributes['llm.cost.total'] != '', SpanAttributes['llm.cost.total'],
            SpanAttributes['operation.cost'] != '', SpanAttributes['operation.cost'],
            SpanAttributes['gen_ai.usage.cost'] != '', SpanAttributes['gen_ai.usage.cost'],
            SpanAttributes['langfuse.observation.cost_details'] != '',
            JSONExtractRaw(SpanAttributes['langfuse.observation.cost_details'], 'total'),
            JSONExtractRaw(SpanAttributes['mlflow.llm.cost'], 'total_cost'))
        AS CarriedCost
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
                  SpanAttributes['llm.system'] != '', SpanAttributes['llm.system'],
                  JSONExtractString(SpanAttributes['mlflow.llm.provider']))) AS Provider,
    multiIf(SpanAttributes['gen_ai.request.model'] != '', SpanAttributes['gen_ai.request.model'],
            SpanAttributes['llm.model_name'] != '', SpanAttributes['llm.model_name'],
            SpanAttributes['gen_ai.response.model'] != '', SpanAttributes['gen_ai.response.model'],
            SpanAttributes['langfuse.observation.model.name'] != '',
            SpanAttributes['langfuse.observation.model.name'],
            JSONExtractString(SpanAttributes['mlflow.llm.model'])) AS Model,
    toUInt64(greatest(0, ifNotFinite(toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.input_tokens'] != '', SpanAttributes['gen_ai.usage.input_tokens'],
        SpanAttributes['llm.token_count.prompt'] != '', SpanAttributes['llm.token_count.prompt'],
        SpanAttributes['gen_ai.usage.prompt_tokens'] != '', SpanAttributes['gen_ai.usage.prompt_tokens'],
        -- Langfuse's usage details: its own keys, or the provider's usage as the SDK passed it
        JSONHas(LangfuseUsage, 'input'), JSONExtractRaw(LangfuseUsage, 'input'),
        JSONHas(LangfuseUsage, 'prompt_tokens'), JSONExtractRaw(LangfuseUsage, 'prompt_tokens'),
        JSONHas(LangfuseUsage, 'input_tokens'), JSONExtractRaw(LangfuseUsage, 'input_tokens'),
        JSONExtractRaw(MlflowUsage, 'input_tokens'))), 0))) AS InputTokens,
    toUInt64(greatest(0, ifNotFinite(toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.output_tokens'] != '',
        SpanAttributes['gen_ai.usage.output_tokens'],
        SpanAttributes['llm.token_count.completion'] != '',
        SpanAttributes['llm.token_count.completion'],
        SpanAttributes['gen_ai.usage.completion_tokens'] != '',
        SpanAttributes['gen_ai.usage.completion_tokens'],
        JSONHas(LangfuseUsage, 'output'), JSONExtractRaw(LangfuseUsage, 'output'),
        JSONHas(LangfuseUsage, 'completion_tokens'),
        JSONExtractRaw(LangfuseUsage, 'completion_tokens'),
        JSONHas(LangfuseUsage, 'output_tokens'), JSONExtractRaw(LangfuseUsage, 'output_tokens'),
        JSONExtractRaw(MlflowUsage, 'output_tokens'))), 0))) AS OutputTokens,
    greatest(0., ifNotFinite(toFloat64OrZero(CarriedCost), 0.)) AS CostUsd,
    SpanAttributes['error.type'] AS ErrorType,
    ServiceName,
    Timestamp AS Start,
    Duration,
    SpanModelStatusCode AS StatusCode,
    SpanModelSource AS Source,
    toUInt64(greatest(0, ifNotFinite(toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.cache_read.input_tokens'] != '',
        SpanAttributes['gen_ai.usage.cache_read.input_tokens'],
        SpanAttributes['llm.token_count.prompt_details.cache_read'] != '',
        SpanAttributes['llm.token_count.prompt_details.cache_read'],
        SpanAttributes['gen_ai.usage.cache_read_input_tokens'] != '',
        SpanAttributes['gen_ai.usage.cache_read_input_tokens'],
        JSONExtractRaw(MlflowUsage, 'cache_read_input_tokens'))), 0))) AS CacheReadTokens,
    toUInt64(greatest(0, ifNotFinite(toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.cache_creation.input_tokens'] != '',
        SpanAttributes['gen_ai.usage.cache_creation.input_tokens'],
        SpanAttributes['llm.token_count.prompt_details.cache_write'] != '',
        SpanAttributes['llm.token_count.prompt_details.cache_write'],
        SpanAttributes['gen_ai.usage.cache_creation_input_tokens'] != '',
        SpanAttributes['gen_ai.usage.cache_creation_input_tokens'],
        JSONExtractRaw(MlflowUsage, 'cache_creation_input_tokens'))), 0))) AS CacheWriteTokens,
    toUInt64(greatest(0, ifNotFinite(toFloat64OrZero(multiIf(
        SpanAttributes['gen_ai.usage.reasoning.output_tokens'] != '',
        SpanAttributes['gen_ai.usage.reasoning.output_tokens'],
        SpanAttributes['llm.token_count.completion_details.reasoning'] != '',
        SpanAttributes['llm.token_count.completion_details.reasoning'],
        SpanAttributes['gen_ai.usage.reasoning_tokens'])), 0))) AS ReasoningTokens,
    if(CarriedCost != '', 'span', '') AS CostSource
FROM {db}.otel_traces
WHERE SpanModelKind = 'llm';

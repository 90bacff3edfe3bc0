-- The plan stream reads a Langfuse planner's plan at ingest (issue #13; Langfuse's convention in
-- the span model is 0034's): `langfuse.observation.output` is read where the stream reads the
-- other conventions' outputs, so a Langfuse trace gets the plan rows (planscope_plans,
-- planscope_plan_steps) a GenAI, OpenInference or OpenLLMetry trace of the same planner gets.
--
-- Before this migration a Langfuse planner's plan was read only when the trace was read
-- (planscope_collector.observed: structured_plans / read_plans), with its step ids and tools
-- but none of the plan's other fields (descriptions), and no plan row was stored: the trace
-- detail, the dashboard's plan view and the analyzer showed a plan the plan tables did not
-- hold. The stream now reads, as 0031 reads the others:
--
--   * a foreign LLM call's answer: after OpenInference's, GenAI's and OpenLLMetry's, a Langfuse
--     generation's output, which the Python SDK's OpenAI integration records as the answer
--     message (`{"role": "assistant", "content": "..."}`: its string content is the answer; a
--     message without one, e.g. tool calls only, has no answer text the stream reads, as a
--     GenAI message of tool-call parts has none) and other integrations as the text itself
--     (observed._langfuse_answer is the read-time reader of the same output);
--   * an inferred run's or step's output (a Langfuse `agent` observation): after the others'
--     outputs, `langfuse.observation.output`.
--
-- The candidates check reads the same texts (a foreign LLM answer holding '{' or '[', an
-- inferred output starting with '{' and holding "steps", "plan" or a \u escape), so a Langfuse
-- span whose output cannot be a JSON plan costs the check only. Everything else is 0031's.
-- Rows already stored are not re-read (as 0031): Langfuse traces stored before this migration
-- keep their plans read at read time. Migrations run before the collector accepts spans, so no
-- insert falls between DROP and CREATE.
--
-- MLflow Tracing (its convention in the span model is 0038's; this migration runs before it, but
-- a view reads the kind column as each insert computes it): an MLflow chat span's
-- `mlflow.spanOutputs`, which `mlflow.openai.autolog()` records as the provider's completion
-- (JSON: the answer is its first choice's message's `content`; observed._mlflow_output is the
-- read-time reader of the same output), is read after Langfuse's, in the stream and in the
-- candidates check.

DROP VIEW IF EXISTS {db}.planscope_plan_candidates_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_plan_stream_mv {on_cluster};

-- observed spans whose text may be a plan (a superset of what the stream keeps of them): 0031's,
-- with Langfuse's and MLflow's outputs
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_plan_candidates_mv {on_cluster}
TO {db}.planscope_plan_candidates
AS WITH SpanAttributes['langfuse.observation.output'] AS LangfuseOutput,
    if(JSONHas(LangfuseOutput, 'role'), JSONExtractString(LangfuseOutput, 'content'),
       LangfuseOutput) AS LangfuseAnswer,
    JSONExtractString(SpanAttributes['mlflow.spanOutputs'], 'choices', 1, 'message',
                      'content') AS MlflowAnswer
SELECT
    Project, TraceId, SpanId, ParentSpanId, SpanAttributes, ServiceName, Timestamp, Duration,
    SpanModelKind, SpanModelInferred, SpanModelStatusCode, SpanModelSource
FROM {db}.otel_traces
WHERE SpanModelSource != 'planscope'
  AND (SpanModelKind = 'plan'
       -- an inferred run or step: its output text, as the stream reads it, and its pre-check
       OR (SpanModelKind IN ('run', 'step')
           AND match(multiIf(SpanAttributes['output.value'] != '', SpanAttributes['output.value'],
                             SpanAttributes['traceloop.entity.output'] != '',
                             SpanAttributes['traceloop.entity.output'],
                             SpanAttributes['final_result'] != '', SpanAttributes['final_result'],
                             SpanAttributes['gen_ai.output.messages'] != '',
                             JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                               'parts', 1, 'content'),
                             SpanAttributes['langfuse.observation.output'] != '',
                             SpanAttributes['langfuse.observation.output'],
                             SpanAttributes['planscope.output']) AS OutputText,
                     '^\\x{FEFF}?[ \\t\\n\\r]*\\{')
           AND multiSearchAny(OutputText, ['"steps"', '"plan"', '\\u']))
       -- a foreign LLM call: any of the texts the stream reads its answer from holds a
       -- character that a JSON answer needs
       OR (SpanModelKind = 'llm'
           AND (multiSearchAny(SpanAttributes['llm.output_messages.0.message.content'],
                               ['{', '['])
                OR multiSearchAny(
                       SpanAttributes['llm.output_messages.0.message.contents.0.message_content.text'],
                       ['{', '['])
                OR multiSearchAny(SpanAttributes['gen_ai.completion.0.content'],
                                  ['{', '['])
                OR multiSearchAny(
                       concat(JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                                'content'),
                              JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                                'parts', 1, 'content')),
                       ['{', '['])
                -- Langfuse: the answer message's content, else the output itself
                OR multiSearchAny(LangfuseAnswer, ['{', '['])
                -- MLflow: the completion's first choice's message's content
                OR multiSearchAny(MlflowAnswer, ['{', '[']))));

-- the observed plans: 0031's stream view, with Langfuse's and MLflow's outputs
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_plan_stream_mv {on_cluster}
TO {db}.planscope_plan_stream
AS SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    SpanAttributes['planscope.run.id'] AS RunId,
    if(SpanAttributes['planscope.plan.id'] != '', SpanAttributes['planscope.plan.id'],
       PlanIdJson) AS PlanId,
    if(SpanAttributes['planscope.plan.version'] != '',
       toUInt32OrZero(SpanAttributes['planscope.plan.version']), VersionJson) AS Version,
    toUInt32OrNull(SpanAttributes['planscope.plan.parent_version']) AS ParentVersion,
    if(SpanAttributes['planscope.plan.scope'] != '', SpanAttributes['planscope.plan.scope'],
       ScopeJson) AS Scope,
    JSONExtract(Plan, 'objective', 'String') AS Objective,
    if(SpanAttributes['planscope.plan.replan_reason'] != '',
       SpanAttributes['planscope.plan.replan_reason'],
       JSONExtract(Plan, 'replan_reason', 'String')) AS ReplanReason,
    SpanAttributes['planscope.plan.approval'] AS Approval,
    if(SpanAttributes['planscope.plan.step_count'] != '',
       toUInt32OrZero(SpanAttributes['planscope.plan.step_count']),
       toUInt32(length(Steps))) AS StepCount,
    Plan AS PlanJson,
    toUInt8(isValidJSON(Plan)) AS PlanJsonValid,
    ServiceName,
    Timestamp AS Start,
    Duration,
    SpanModelStatusCode AS StatusCode,
    SpanModelSource AS Source,
    toUInt8(Observed) AS Inferred,
    Steps
FROM (
    -- 2. the plan's steps (0014's rules) and its plan-level fields, once per span
    WITH
        -- the answer's top-level arrays (an object answer of a foreign LLM call only)
        if(FromLlm AND JSONType(Plan) = 'Object',
           arrayFilter(l -> JSONType(l) = 'Array',
                       arrayMap(kv -> kv.2, JSONExtractKeysAndValuesRaw(Plan))),
           []) AS Lists,
        -- each list's rank: 2 = step objects (an object with a non-empty work field), 1 = step
        -- names, 0 = neither; then its length; the first of the best (indexOf) is the plan
        arrayMap(l -> multiIf(
            JSONLength(l) > 0
                AND arrayAll(s -> JSONType(s) = 'Object'
                    AND arrayExists(k -> JSONExtractString(s, k) != '',
                                    ['description', 'task', 'title', 'action', 'step', 'tool',
                                     'instruction', 'goal', 'command']),
                    JSONExtractArrayRaw(l)), 2,
            JSONLength(l) >= 2
                AND arrayAll(s -> JSONType(s) = 'String' AND JSONExtractString(s) != '',
                             JSONExtractArrayRaw(l)), 1,
            0) * 1000000 + JSONLength(l), Lists) AS ListRanks,
        arrayMax(arrayPushBack(ListRanks, 0)) AS BestRank,
        if(BestRank >= 1000000, Lists[indexOf(ListRanks, BestRank)], '') AS BestList
    SELECT
        *,
        multiIf(NOT Observed, JSONExtractArrayRaw(Plan, 'steps'),
                (SpanModelKind = 'plan' OR FromLlm) AND JSONType(Plan) = 'Array',
                JSONExtractArrayRaw(Plan),
                JSONType(Plan, 'steps') = 'Array', JSONExtractArrayRaw(Plan, 'steps'),
                JSONType(Plan, 'plan') = 'Array', JSONExtractArrayRaw(Plan, 'plan'),
                JSONExtractArrayRaw(BestList)) AS Steps,
        JSONType(Plan, 'steps') = 'Array' OR JSONType(Plan, 'plan') = 'Array' AS HasStepsKey,
        -- an LLM's answer is a plan when it is an object with a steps/plan array or another
        -- list that reads as steps, or an array whose every element is a step object
        HasStepsKey OR BestList != ''
            OR (JSONType(Plan) = 'Array'
                AND arrayAll(s -> JSONType(s) = 'Object'
                    AND arrayExists(k -> JSONExtractString(s, k) != '',
                                    ['description', 'task', 'title', 'action', 'step', 'tool',
                                     'instruction', 'goal', 'command']),
                    Steps)) AS StepLike,
        if(Observed, '', JSONExtract(Plan, 'id', 'String')) AS PlanIdJson,
        if(Observed, 0, JSONExtract(Plan, 'version', 'UInt32')) AS VersionJson,
        JSONExtract(Plan, 'scope', 'String') AS ScopeJson
    FROM (
        -- 1. the spans that may show a plan, their plan text, and the pre-check on it
        SELECT
            Project, TraceId, SpanId, ParentSpanId, SpanAttributes, ServiceName, Timestamp,
            Duration, SpanModelKind, SpanModelInferred, SpanModelStatusCode, SpanModelSource,
            -- a foreign LLM call's answer is read as a plan (planscope's own LLM spans are
            -- not: their plans are declared), like an inferred span's output
            SpanModelKind = 'llm' AND SpanAttributes['planscope.span.kind'] = '' AS FromLlm,
            FromLlm OR SpanModelInferred = 1 AS Observed,
            multiIf(FromLlm,
                    -- its answer text; a fenced ```json block stands for its content
                    replaceRegexpOne(trimBoth(multiIf(
                        SpanAttributes['llm.output_messages.0.message.content'] != '',
                        SpanAttributes['llm.output_messages.0.message.content'],
                        SpanAttributes['llm.output_messages.0.message.contents.0.message_content.text'] != '',
                        SpanAttributes['llm.output_messages.0.message.contents.0.message_content.text'],
                        SpanAttributes['gen_ai.output.messages'] != '',
                        -- the parts format; a message whose content is the text itself
                        -- (older GenAI instrumentations) stands for its text
                        if(JSONType(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                    'content') = 'String',
                           JSONExtractString(
                               JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                               'content'),
                           JSONExtractString(
                               JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                               'parts', 1, 'content')),
                        SpanAttributes['gen_ai.completion.0.content'] != '',
                        SpanAttributes['gen_ai.completion.0.content'],
                        -- Langfuse: the answer message's content, else the output itself
                        SpanAttributes['langfuse.observation.output'] != '',
                        if(JSONHas(SpanAttributes['langfuse.observation.output'], 'role'),
                           JSONExtractString(SpanAttributes['langfuse.observation.output'],
                                             'content'),
                           SpanAttributes['langfuse.observation.output']),
                        -- MLflow: the completion's first choice's message's content
                        JSONExtractString(SpanAttributes['mlflow.spanOutputs'], 'choices', 1,
                                          'message', 'content'))),
                        '^```[A-Za-z]*\\s*([\\s\\S]*?)\\s*```$', '\\1'),
                    SpanModelInferred = 1,
                    multiIf(SpanAttributes['output.value'] != '', SpanAttributes['output.value'],
                            SpanAttributes['traceloop.entity.output'] != '',
                            SpanAttributes['traceloop.entity.output'],
                            -- pydantic-ai's agent run: its typed output (0028)
                            SpanAttributes['final_result'] != '',
                            SpanAttributes['final_result'],
                            SpanAttributes['gen_ai.output.messages'] != '',
                            JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                              'parts', 1, 'content'),
                            SpanAttributes['langfuse.observation.output'] != '',
                            SpanAttributes['langfuse.observation.output'],
                            SpanAttributes['planscope.output']),
                    SpanAttributes['planscope.plan.json']) AS Plan
        FROM {db}.planscope_plan_candidates
        WHERE SpanModelKind = 'plan'
           OR (SpanModelKind IN ('run', 'step') AND SpanModelInferred = 1
               AND match(Plan, '^\\x{FEFF}?[ \\t\\n\\r]*\\{')
               AND (position(Plan, '"steps"') > 0 OR position(Plan, '"plan"') > 0
                    OR position(Plan, '\\u') > 0))
           OR (FromLlm AND match(Plan, '^\\x{FEFF}?[ \\t\\n\\r]*[\\[{]'))
    )
)
WHERE SpanModelKind = 'plan'
   OR (SpanModelKind IN ('run', 'step') AND SpanModelInferred = 1 AND HasStepsKey
       AND length(Steps) > 0)
   OR (FromLlm AND length(Steps) > 0 AND StepLike);

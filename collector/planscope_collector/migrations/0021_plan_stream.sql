-- The plan views of 0016 fed from one stream, so an insert analyses the plan expression once
-- (issue #16, "fewer, cheaper writes per insert"; docs/storage.md, "The span model"; figures in
-- docs/benchmarks.md, "One plan stream").
--
-- Every view's SELECT is analysed again on every insert, a fixed cost paid whatever the
-- insert's size. 0016's plans and plan-steps views each carried the whole plan expression
-- (the plan text of every convention, the pre-check, the answer's lists and their ranks, the
-- steps, the plan-level fields): the two costliest analyses of an insert, made twice. Now
--
--   otel_traces --planscope_plan_stream_mv--> planscope_plan_stream (Null: nothing is kept)
--       planscope_plan_stream --planscope_plans_mv-------> planscope_plans       (one row per plan)
--       planscope_plan_stream --planscope_plan_steps_mv--> planscope_plan_steps  (ARRAY JOIN Steps)
--
-- The stream's view is 0016's stages 1 and 2 with the plans view's columns and the steps; its
-- WHERE is the union of 0016's two conditions, which differ only in the plans view's
-- length(Steps) > 0, and a plan without steps gives no step rows either, so both tables get
-- 0016's rows (tests/storage/test_plan_views_layouts.py compares them). The nine "work field"
-- checks of a step object are one arrayExists over the field names instead of nine ORs (the
-- same value, written once; no cheaper to analyse). An insert of 28 spans costs 1.23-1.26x
-- less CPU than with 0016, one of the writer's 18,144 spans 1.12-1.14x less. The stream carries
-- plan spans only, a few per trace, so passing them through costs little (0011's stream
-- carried every span with its attribute map, which is why 0012 dropped it). A Null table keeps
-- no rows; on a cluster it exists per shard (storage._migrations.distribute). Deduplication of
-- a replayed insert reaches the tables behind it as it reaches any view's target
-- (deduplicate_blocks_in_dependent_materialized_views; tested in
-- test_same_dedup_token_twice_changes_no_table).
--
-- (Migrations run before the collector accepts spans, so no insert falls between DROP and CREATE.)

DROP VIEW IF EXISTS {db}.planscope_plans_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_plan_steps_mv {on_cluster};

CREATE TABLE IF NOT EXISTS {db}.planscope_plan_stream {on_cluster} (
    Project LowCardinality(String),
    TraceId String,
    SpanId String,
    ParentSpanId String,
    RunId String,
    PlanId String,
    Version UInt32,
    ParentVersion Nullable(UInt32),
    Scope String,
    Objective String,
    ReplanReason String,
    Approval String,
    StepCount UInt32,
    PlanJson String,
    PlanJsonValid UInt8,
    ServiceName LowCardinality(String),
    Start DateTime64(9),
    Duration UInt64,
    StatusCode LowCardinality(String),
    Source LowCardinality(String),
    Inferred UInt8,
    Steps Array(String)
) ENGINE = Null;

-- plans, one row per span that shows one ---------------------------------------------------------
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_plans_mv {on_cluster}
TO {db}.planscope_plans
AS SELECT * EXCEPT (Steps) FROM {db}.planscope_plan_stream;

-- plan steps: one row per element of the plan's steps (none for garbage JSON; 0011, 4.) -------
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_plan_steps_mv {on_cluster}
TO {db}.planscope_plan_steps
AS WITH
    JSONType(StepJson) = 'String' AS IsText
SELECT
    Project,
    TraceId,
    SpanId AS PlanSpanId,
    RunId,
    PlanId,
    Version AS PlanVersion,
    Scope,
    toUInt32(StepIndex - 1) AS Position,
    multiIf(Inferred = 0, JSONExtract(StepJson, 'id', 'String'),
            IsText, if(match(JSONExtractString(StepJson), '^[A-Za-z_][A-Za-z0-9_.-]{0,63}$'),
                       JSONExtractString(StepJson), toString(StepIndex)),
            JSONExtract(StepJson, 'id', 'String') != '', JSONExtract(StepJson, 'id', 'String'),
            JSONExtract(StepJson, 'step_id', 'String') != '',
            JSONExtract(StepJson, 'step_id', 'String'),
            JSONExtract(StepJson, 'name', 'String') != '', JSONExtract(StepJson, 'name', 'String'),
            toString(StepIndex)) AS StepId,
    multiIf(Inferred = 0, JSONExtract(StepJson, 'description', 'String'),
            IsText, JSONExtractString(StepJson),
            JSONExtract(StepJson, 'description', 'String') != '',
            JSONExtract(StepJson, 'description', 'String'),
            JSONExtract(StepJson, 'task', 'String') != '', JSONExtract(StepJson, 'task', 'String'),
            JSONExtract(StepJson, 'title', 'String') != '', JSONExtract(StepJson, 'title', 'String'),
            JSONExtract(StepJson, 'action', 'String') != '',
            JSONExtract(StepJson, 'action', 'String'),
            JSONExtract(StepJson, 'instruction', 'String') != '',
            JSONExtract(StepJson, 'instruction', 'String'),
            JSONExtract(StepJson, 'goal', 'String') != '', JSONExtract(StepJson, 'goal', 'String'),
            JSONExtract(StepJson, 'step', 'String') != '', JSONExtract(StepJson, 'step', 'String'),
            JSONExtract(StepJson, 'command', 'String')) AS Description,
    multiIf(Inferred = 0, JSONExtract(StepJson, 'executor', 'String'),
            JSONExtract(StepJson, 'executor', 'String') != '',
            JSONExtract(StepJson, 'executor', 'String'),
            JSONExtract(StepJson, 'assignee', 'String') != '',
            JSONExtract(StepJson, 'assignee', 'String'),
            JSONExtract(StepJson, 'agent', 'String')) AS Executor,
    JSONExtract(StepJson, 'tool', 'String') AS Tool,
    JSONExtract(StepJson, 'depends_on', 'Array(String)') AS DependsOn,
    JSONExtract(StepJson, 'requires', 'Array(String)') AS Requires,
    JSONExtract(StepJson, 'produces', 'Array(String)') AS Produces,
    toUInt8(JSONExtract(StepJson, 'irreversible', 'Bool')) AS Irreversible,
    Start,
    Inferred
FROM {db}.planscope_plan_stream
ARRAY JOIN
    Steps AS StepJson,
    arrayEnumerate(Steps) AS StepIndex;

-- the stream: 0016's stages, once -----------------------------------------------------------------
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
                        SpanAttributes['gen_ai.completion.0.content'])),
                        '^```[A-Za-z]*\\s*([\\s\\S]*?)\\s*```$', '\\1'),
                    SpanModelInferred = 1,
                    multiIf(SpanAttributes['output.value'] != '', SpanAttributes['output.value'],
                            SpanAttributes['traceloop.entity.output'] != '',
                            SpanAttributes['traceloop.entity.output'],
                            SpanAttributes['gen_ai.output.messages'] != '',
                            JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                              'parts', 1, 'content'),
                            SpanAttributes['planscope.output']),
                    SpanAttributes['planscope.plan.json']) AS Plan
        FROM {db}.otel_traces
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

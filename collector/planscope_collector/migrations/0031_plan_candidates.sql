-- The plan stream's costly SELECT only for inserts that hold a span whose text may be a plan
-- (issue #16, "fewer, cheaper writes per insert"; figures in docs/benchmarks.md, "The plan
-- stream only where a plan may be").
--
-- ClickHouse analyses a materialized view's SELECT for every block it receives, whatever the
-- block's size; a view over a Null table that receives no rows is not analysed at all (measured:
-- an empty block costs nothing downstream). After 0028 and 0030 the plan stream's SELECT (the
-- foreign answers' lists and ranks, the markdown steps) costs ~190-220 ms of fixed CPU per
-- insert, most of what the views cost, whether or not the insert holds a span whose text could
-- be read as a plan: planscope's own spans declare their plans, and a foreign span's output is a
-- plan only when it looks like one. So the stream is now fed in two ways:
--
--   otel_traces --planscope_plan_declared_mv--> planscope_plan_stream
--       the declared plans (SpanModelKind 'plan' from planscope's SDK): their plan-level fields
--       and steps from planscope.plan.json, the expressions 0030's stream gives such a span;
--   otel_traces --planscope_plan_candidates_mv--> planscope_plan_candidates (Null)
--       --planscope_plan_stream_mv--> planscope_plan_stream
--       the observed spans (foreign LLM calls, inferred runs, plans and steps) whose text passes
--       a cheap check, computed from typed columns and a few lookups, that every span the
--       stream keeps passes: an inferred run's or step's output text as 0030 reads it, starting
--       with '{' and holding "steps", "plan" or a \u escape (0030's own pre-check), or a foreign
--       LLM answer holding '{', '[', '`', '**' or '__' (a JSON value, a fenced block or a
--       markdown step list need one). planscope_plan_stream_mv is 0030's SELECT unchanged,
--       reading the candidates instead of otel_traces.
--
-- The same rows reach planscope_plans and planscope_plan_steps as with 0030
-- (tests/storage/test_views_0031.py inserts the same spans into both layouts and compares every
-- typed table). A block with no candidate costs the check per observed span and no analysis of
-- the costly SELECT; a block with one costs what 0030 did plus the check. Deduplication of a
-- replayed insert reaches every table behind a Null table as behind any view
-- (test_same_dedup_token_twice_changes_no_table). (Migrations run before the collector accepts
-- spans, so no insert falls between DROP and CREATE; spans stored before it are not re-read.)

DROP VIEW IF EXISTS {db}.planscope_plan_stream_mv {on_cluster};

CREATE TABLE IF NOT EXISTS {db}.planscope_plan_candidates {on_cluster} (
    Project LowCardinality(String),
    TraceId String,
    SpanId String,
    ParentSpanId String,
    SpanAttributes Map(LowCardinality(String), String),
    ServiceName LowCardinality(String),
    Timestamp DateTime64(9),
    Duration UInt64,
    SpanModelKind LowCardinality(String),
    SpanModelInferred UInt8,
    SpanModelStatusCode LowCardinality(String),
    SpanModelSource LowCardinality(String)
) ENGINE = Null;

-- declared plans: 0030's columns for a span with SpanModelKind 'plan' and SpanModelSource
-- 'planscope' (not observed: its plan text is planscope.plan.json, its steps that JSON's "steps")
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_plan_declared_mv {on_cluster}
TO {db}.planscope_plan_stream
AS WITH SpanAttributes['planscope.plan.json'] AS Plan, JSONExtractArrayRaw(Plan, 'steps') AS Steps
SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    SpanAttributes['planscope.run.id'] AS RunId,
    if(SpanAttributes['planscope.plan.id'] != '', SpanAttributes['planscope.plan.id'],
       JSONExtract(Plan, 'id', 'String')) AS PlanId,
    if(SpanAttributes['planscope.plan.version'] != '',
       toUInt32OrZero(SpanAttributes['planscope.plan.version']),
       JSONExtract(Plan, 'version', 'UInt32')) AS Version,
    toUInt32OrNull(SpanAttributes['planscope.plan.parent_version']) AS ParentVersion,
    if(SpanAttributes['planscope.plan.scope'] != '', SpanAttributes['planscope.plan.scope'],
       JSONExtract(Plan, 'scope', 'String')) AS Scope,
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
    toUInt8(0) AS Inferred,
    Steps
FROM {db}.otel_traces
WHERE SpanModelKind = 'plan' AND SpanModelSource = 'planscope';

-- observed spans whose text may be a plan (a superset of what 0030's stream keeps of them)
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_plan_candidates_mv {on_cluster}
TO {db}.planscope_plan_candidates
AS SELECT
    Project, TraceId, SpanId, ParentSpanId, SpanAttributes, ServiceName, Timestamp, Duration,
    SpanModelKind, SpanModelInferred, SpanModelStatusCode, SpanModelSource
FROM {db}.otel_traces
WHERE SpanModelSource != 'planscope'
  AND (SpanModelKind = 'plan'
       -- an inferred run or step: its output text, as 0030 reads it, and 0030's pre-check
       OR (SpanModelKind IN ('run', 'step')
           AND match(multiIf(SpanAttributes['output.value'] != '', SpanAttributes['output.value'],
                             SpanAttributes['traceloop.entity.output'] != '',
                             SpanAttributes['traceloop.entity.output'],
                             SpanAttributes['final_result'] != '', SpanAttributes['final_result'],
                             SpanAttributes['gen_ai.output.messages'] != '',
                             JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                               'parts', 1, 'content'),
                             SpanAttributes['planscope.output']) AS OutputText,
                     '^\\x{FEFF}?[ \\t\\n\\r]*\\{')
           AND multiSearchAny(OutputText, ['"steps"', '"plan"', '\\u']))
       -- a foreign LLM call: any of the texts 0030 reads its answer from holds a character that
       -- a JSON answer, a fenced block or a markdown step list needs
       OR (SpanModelKind = 'llm'
           AND (multiSearchAny(SpanAttributes['llm.output_messages.0.message.content'],
                               ['{', '[', '`', '**', '__'])
                OR multiSearchAny(
                       SpanAttributes['llm.output_messages.0.message.contents.0.message_content.text'],
                       ['{', '[', '`', '**', '__'])
                OR multiSearchAny(SpanAttributes['gen_ai.completion.0.content'],
                                  ['{', '[', '`', '**', '__'])
                OR multiSearchAny(
                       concat(JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                                'content'),
                              JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                                'parts', 1, 'content')),
                       ['{', '[', '`', '**', '__']))));

-- the observed plans: 0030's stream view, reading the candidates
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
            -- its answer text; a fenced ```json block stands for its content
            if(FromLlm, replaceRegexpOne(trimBoth(multiIf(
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
                        SpanAttributes['gen_ai.completion.0.content'])),
                        '^```[A-Za-z]*\\s*([\\s\\S]*?)\\s*```$', '\\1'), '') AS Answer,
            -- a markdown list whose items name steps (0030): `1. **slug**: goal`, or `slug`
            -- in backticks, with optional indented `tool:` / `args:` lines; (slug, goal, the
            -- item's indented lines) per item, read only when the answer has such an item
            if(FromLlm AND match(Answer,
                                 '(?m)^(?:\\d+[.)]|[-*+])[ \\t]+(?:\\*\\*|__|`)[A-Za-z_]'),
               extractAllGroupsVertical(Answer,
                   '(?m)^(?:\\d+[.)]|[-*+])[ \\t]+(?:\\*\\*|__|`)([A-Za-z_][A-Za-z0-9_.-]{0,63}):?(?:\\*\\*|__|`)[ \\t]*(?:[:.\\x{2013}\\x{2014}-][ \\t]*)?([^\\n]*)((?:\\n[ \\t]+[^\\n]*)*)'),
               []) AS MdItems,
            -- it is a plan when every top-level item (at the line start) is such an item and
            -- there are at least two: prose plans (items of free text) are not read
            length(MdItems) >= 2
                AND length(MdItems) = length(extractAll(Answer, '(?m)^(?:\\d+[.)]|[-*+])[ \\t]+'))
                AS MdPlan,
            multiIf(FromLlm AND MdPlan,
                    -- read as the JSON array of step objects it stands for
                    concat('[', arrayStringConcat(arrayMap(g -> concat(
                        '{"id":', toJSONString(g[1]),
                        ',"description":', toJSONString(trimBoth(g[2])),
                        ',"tool":', toJSONString(extract(g[3],
                            '(?mi)^[ \\t]+(?:[-*+][ \\t]+)?(?:\\*\\*)?tool(?:\\*\\*)?:(?:\\*\\*)?[ \\t]*`?([A-Za-z_][A-Za-z0-9_.-]*)')),
                        if(JSONType(extract(g[3],
                               '(?mi)^[ \\t]+(?:[-*+][ \\t]+)?(?:\\*\\*)?args(?:\\*\\*)?:(?:\\*\\*)?[ \\t]*`([^`\\n]*)`')) = 'Object',
                           concat(',"args":', extract(g[3],
                               '(?mi)^[ \\t]+(?:[-*+][ \\t]+)?(?:\\*\\*)?args(?:\\*\\*)?:(?:\\*\\*)?[ \\t]*`([^`\\n]*)`')),
                           ''),
                        '}'), MdItems), ','), ']'),
                    FromLlm, Answer,
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

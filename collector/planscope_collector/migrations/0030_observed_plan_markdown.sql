-- The plan stream of 0028, reading one more form of a foreign LLM call's answer (issue #13,
-- sealed-6: a pydantic-ai planner answering its plan as a numbered markdown list): a markdown
-- list whose every top-level item names a step as an identifier in bold or backticks
-- (`1. **slug**: goal`), at least two items, each optionally followed by indented `tool:` and
-- `args:` lines, is read as the JSON array of step objects it stands for
-- (`{"id": slug, "description": goal, "tool": ..., "args": {...}}`) and stored as that JSON.
-- Only an LLM's answer is read so, the place a JSON plan answer is read; a list with any
-- top-level item of free text (smolagents' own planning, a prose plan) is not a plan.
-- Everything else is 0028's stream view, unchanged. (Migrations run before the collector
-- accepts spans, so no insert falls between DROP and CREATE; spans stored before it are not
-- re-read.)

DROP VIEW IF EXISTS {db}.planscope_plan_stream_mv {on_cluster};

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

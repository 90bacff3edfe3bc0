-- Observed plan shapes (issue #13; docs/semantic-conventions.md, "Plans are observed, never
-- guessed"): 0013's plan views re-created with one general rule for a planner LLM answer that is
-- a JSON object.
--
-- 0013 read an answer as a plan when it was a JSON array of step objects, or an object with a
-- "steps" / "plan" array. An object holding its steps under any other key gave no plan. Now:
--   * an object with a "steps" or "plan" array: that array (as before);
--   * else, of the object's top-level arrays, the qualifying ones are
--       - a list of step objects: non-empty, every item an object with a work field, a non-empty
--         string under description, task, title, action, step, tool, instruction, goal or
--         command (an id or name alone is a record, not a step: [{"name": "GET /healthz",
--         "status": 200}] is a report);
--       - a list of step names: at least two items, every item a non-empty string;
--     and the plan is the longest list of step objects, else the longest list of step names,
--     the first in the answer's order on a tie;
--   * a bare JSON array is a plan only as before (every item a step object: now with the same
--     work fields); a bare array of strings stays data.
-- The answer text of a GenAI output message is its first part's content (0013) or, for the older
-- shape whose message has its text as "content" ({"role": "assistant", "content": "..."}), that.
-- A step's id: its id / step_id / name; a step given as a string is named by that string when it
-- is a bare word (an identifier: "extract"), else by its position (as before). Its description:
-- description, task, title, action, instruction, goal, step, command (the first non-empty).
-- Only foreign LLM answers get the general rule; an inferred run or step output (a chain's
-- output) is a plan only under "steps" / "plan", as in 0013 (tool results never are).
--
-- (Migrations run before the collector accepts spans, so no insert falls between DROP and CREATE.)

DROP VIEW IF EXISTS {db}.planscope_plans_mv {on_cluster};
DROP VIEW IF EXISTS {db}.planscope_plan_steps_mv {on_cluster};

-- plans --------------------------------------------------------------------------------------------
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_plans_mv {on_cluster}
TO {db}.planscope_plans
AS WITH
    -- a foreign LLM call's answer is read as a plan (planscope's own LLM spans are not: their
    -- plans are declared), like an inferred span's output
    SpanModelKind = 'llm' AND SpanAttributes['planscope.span.kind'] = '' AS FromLlm,
    FromLlm OR SpanModelInferred = 1 AS Observed,
    multiIf(FromLlm,
            -- its answer text; a fenced ```json block stands for its content
            replaceRegexpOne(trimBoth(multiIf(
                SpanAttributes['llm.output_messages.0.message.content'] != '',
                SpanAttributes['llm.output_messages.0.message.content'],
                SpanAttributes['gen_ai.output.messages'] != '',
                -- the parts format; a message whose content is the text itself (older
                -- GenAI instrumentations) stands for its text
                if(JSONType(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                            'content') = 'String',
                   JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                     'content'),
                   JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
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
            SpanAttributes['planscope.plan.json']) AS Plan,
    -- the answer's top-level arrays (an object answer of a foreign LLM call only)
    if(FromLlm AND JSONType(Plan) = 'Object',
       arrayFilter(l -> JSONType(l) = 'Array',
                   arrayMap(kv -> kv.2, JSONExtractKeysAndValuesRaw(Plan))),
       []) AS Lists,
    -- each list's rank: 2 = step objects, 1 = step names, 0 = neither; then its length; the
    -- first of the best (indexOf) is the plan
    arrayMap(l -> multiIf(
        JSONLength(l) > 0
            AND arrayAll(s -> JSONType(s) = 'Object'
                AND (JSONExtractString(s, 'description') != '' OR JSONExtractString(s, 'task') != ''
                 OR JSONExtractString(s, 'title') != '' OR JSONExtractString(s, 'action') != ''
                 OR JSONExtractString(s, 'step') != '' OR JSONExtractString(s, 'tool') != ''
                 OR JSONExtractString(s, 'instruction') != ''
                 OR JSONExtractString(s, 'goal') != '' OR JSONExtractString(s, 'command') != ''), JSONExtractArrayRaw(l)), 2,
        JSONLength(l) >= 2
            AND arrayAll(s -> JSONType(s) = 'String' AND JSONExtractString(s) != '',
                         JSONExtractArrayRaw(l)), 1,
        0) * 1000000 + JSONLength(l), Lists) AS ListRanks,
    arrayMax(arrayPushBack(ListRanks, 0)) AS BestRank,
    if(BestRank >= 1000000, Lists[indexOf(ListRanks, BestRank)], '') AS BestList,
    multiIf(NOT Observed, JSONExtractArrayRaw(Plan, 'steps'),
            (SpanModelKind = 'plan' OR FromLlm) AND JSONType(Plan) = 'Array',
            JSONExtractArrayRaw(Plan),
            JSONType(Plan, 'steps') = 'Array', JSONExtractArrayRaw(Plan, 'steps'),
            JSONType(Plan, 'plan') = 'Array', JSONExtractArrayRaw(Plan, 'plan'),
            JSONExtractArrayRaw(BestList)) AS Steps,
    -- an LLM's answer is a plan when it is an object with a steps/plan array or another list
    -- that reads as steps (header), or an array whose every element is a step object (records
    -- or bare strings are data, not steps)
    JSONType(Plan, 'steps') = 'Array' OR JSONType(Plan, 'plan') = 'Array' OR BestList != ''
        OR (JSONType(Plan) = 'Array'
            AND arrayAll(s -> JSONType(s) = 'Object' AND (JSONExtractString(s, 'description') != '' OR JSONExtractString(s, 'task') != ''
                 OR JSONExtractString(s, 'title') != '' OR JSONExtractString(s, 'action') != ''
                 OR JSONExtractString(s, 'step') != '' OR JSONExtractString(s, 'tool') != ''
                 OR JSONExtractString(s, 'instruction') != ''
                 OR JSONExtractString(s, 'goal') != '' OR JSONExtractString(s, 'command') != ''), Steps)) AS StepLike
SELECT
    Project,
    TraceId,
    SpanId,
    ParentSpanId,
    SpanAttributes['planscope.run.id'] AS RunId,
    if(SpanAttributes['planscope.plan.id'] != '', SpanAttributes['planscope.plan.id'],
       if(Observed, '', JSONExtract(Plan, 'id', 'String'))) AS PlanId,
    if(SpanAttributes['planscope.plan.version'] != '',
       toUInt32OrZero(SpanAttributes['planscope.plan.version']),
       if(Observed, 0, JSONExtract(Plan, 'version', 'UInt32'))) AS Version,
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
    toUInt8(Observed) AS Inferred
FROM {db}.otel_traces
WHERE SpanModelKind = 'plan'
   OR (SpanModelKind IN ('run', 'step') AND SpanModelInferred = 1 AND Plan != ''
       AND (JSONType(Plan, 'steps') = 'Array' OR JSONType(Plan, 'plan') = 'Array')
       AND length(Steps) > 0)
   OR (FromLlm AND Plan != '' AND length(Steps) > 0 AND StepLike);

-- plan steps: one row per element of the plan's steps (none for garbage JSON; 0011, 4.) -------
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.planscope_plan_steps_mv {on_cluster}
TO {db}.planscope_plan_steps
AS WITH
    -- a foreign LLM call's answer is read as a plan (planscope's own LLM spans are not: their
    -- plans are declared), like an inferred span's output
    SpanModelKind = 'llm' AND SpanAttributes['planscope.span.kind'] = '' AS FromLlm,
    FromLlm OR SpanModelInferred = 1 AS Observed,
    multiIf(FromLlm,
            -- its answer text; a fenced ```json block stands for its content
            replaceRegexpOne(trimBoth(multiIf(
                SpanAttributes['llm.output_messages.0.message.content'] != '',
                SpanAttributes['llm.output_messages.0.message.content'],
                SpanAttributes['gen_ai.output.messages'] != '',
                -- the parts format; a message whose content is the text itself (older
                -- GenAI instrumentations) stands for its text
                if(JSONType(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                            'content') = 'String',
                   JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                     'content'),
                   JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
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
            SpanAttributes['planscope.plan.json']) AS Plan,
    -- the answer's top-level arrays (an object answer of a foreign LLM call only)
    if(FromLlm AND JSONType(Plan) = 'Object',
       arrayFilter(l -> JSONType(l) = 'Array',
                   arrayMap(kv -> kv.2, JSONExtractKeysAndValuesRaw(Plan))),
       []) AS Lists,
    -- each list's rank: 2 = step objects, 1 = step names, 0 = neither; then its length; the
    -- first of the best (indexOf) is the plan
    arrayMap(l -> multiIf(
        JSONLength(l) > 0
            AND arrayAll(s -> JSONType(s) = 'Object'
                AND (JSONExtractString(s, 'description') != '' OR JSONExtractString(s, 'task') != ''
                 OR JSONExtractString(s, 'title') != '' OR JSONExtractString(s, 'action') != ''
                 OR JSONExtractString(s, 'step') != '' OR JSONExtractString(s, 'tool') != ''
                 OR JSONExtractString(s, 'instruction') != ''
                 OR JSONExtractString(s, 'goal') != '' OR JSONExtractString(s, 'command') != ''), JSONExtractArrayRaw(l)), 2,
        JSONLength(l) >= 2
            AND arrayAll(s -> JSONType(s) = 'String' AND JSONExtractString(s) != '',
                         JSONExtractArrayRaw(l)), 1,
        0) * 1000000 + JSONLength(l), Lists) AS ListRanks,
    arrayMax(arrayPushBack(ListRanks, 0)) AS BestRank,
    if(BestRank >= 1000000, Lists[indexOf(ListRanks, BestRank)], '') AS BestList,
    multiIf(NOT Observed, JSONExtractArrayRaw(Plan, 'steps'),
            (SpanModelKind = 'plan' OR FromLlm) AND JSONType(Plan) = 'Array',
            JSONExtractArrayRaw(Plan),
            JSONType(Plan, 'steps') = 'Array', JSONExtractArrayRaw(Plan, 'steps'),
            JSONType(Plan, 'plan') = 'Array', JSONExtractArrayRaw(Plan, 'plan'),
            JSONExtractArrayRaw(BestList)) AS Steps,
    -- an LLM's answer is a plan when it is an object with a steps/plan array or another list
    -- that reads as steps (header), or an array whose every element is a step object (records
    -- or bare strings are data, not steps)
    JSONType(Plan, 'steps') = 'Array' OR JSONType(Plan, 'plan') = 'Array' OR BestList != ''
        OR (JSONType(Plan) = 'Array'
            AND arrayAll(s -> JSONType(s) = 'Object' AND (JSONExtractString(s, 'description') != '' OR JSONExtractString(s, 'task') != ''
                 OR JSONExtractString(s, 'title') != '' OR JSONExtractString(s, 'action') != ''
                 OR JSONExtractString(s, 'step') != '' OR JSONExtractString(s, 'tool') != ''
                 OR JSONExtractString(s, 'instruction') != ''
                 OR JSONExtractString(s, 'goal') != '' OR JSONExtractString(s, 'command') != ''), Steps)) AS StepLike,
    JSONType(StepJson) = 'String' AS IsText
SELECT
    Project,
    TraceId,
    SpanId AS PlanSpanId,
    SpanAttributes['planscope.run.id'] AS RunId,
    if(SpanAttributes['planscope.plan.id'] != '', SpanAttributes['planscope.plan.id'],
       if(Observed, '', JSONExtract(Plan, 'id', 'String'))) AS PlanId,
    if(SpanAttributes['planscope.plan.version'] != '',
       toUInt32OrZero(SpanAttributes['planscope.plan.version']),
       if(Observed, 0, JSONExtract(Plan, 'version', 'UInt32'))) AS PlanVersion,
    if(SpanAttributes['planscope.plan.scope'] != '', SpanAttributes['planscope.plan.scope'],
       JSONExtract(Plan, 'scope', 'String')) AS Scope,
    toUInt32(StepIndex - 1) AS Position,
    multiIf(NOT Observed, JSONExtract(StepJson, 'id', 'String'),
            IsText, if(match(JSONExtractString(StepJson), '^[A-Za-z_][A-Za-z0-9_.-]{0,63}$'),
                       JSONExtractString(StepJson), toString(StepIndex)),
            JSONExtract(StepJson, 'id', 'String') != '', JSONExtract(StepJson, 'id', 'String'),
            JSONExtract(StepJson, 'step_id', 'String') != '',
            JSONExtract(StepJson, 'step_id', 'String'),
            JSONExtract(StepJson, 'name', 'String') != '', JSONExtract(StepJson, 'name', 'String'),
            toString(StepIndex)) AS StepId,
    multiIf(NOT Observed, JSONExtract(StepJson, 'description', 'String'),
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
    multiIf(NOT Observed, JSONExtract(StepJson, 'executor', 'String'),
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
    Timestamp AS Start,
    toUInt8(Observed) AS Inferred
FROM {db}.otel_traces
ARRAY JOIN
    Steps AS StepJson,
    arrayEnumerate(Steps) AS StepIndex
WHERE SpanModelKind = 'plan'
   OR (SpanModelKind IN ('run', 'step') AND SpanModelInferred = 1 AND Plan != ''
       AND (JSONType(Plan, 'steps') = 'Array' OR JSONType(Plan, 'plan') = 'Array'))
   OR (FromLlm AND Plan != '' AND StepLike);

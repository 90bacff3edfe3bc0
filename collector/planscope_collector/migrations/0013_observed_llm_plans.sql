-- Plans read from a planner LLM call's answer (issue #11, item 2; docs/semantic-conventions.md,
-- "Plans are observed, never guessed").
--
-- An LLM call of another convention than planscope's is the planner when what it answered is a
-- plan: its answer text (OpenInference's first output message, the GenAI conventions' first
-- output part, OpenLLMetry's older gen_ai.completion.0.content; a fenced ```json block stands for
-- its content) is a JSON array of step objects (each with a description, task or title), or a
-- JSON object with a "steps" or "plan" array (of step objects or strings). Such a call keeps its
-- kind (llm) and also gets an observed plan row (Inferred = 1, PlanId '', as every observed plan).
-- Which executor work did which of its steps is read at query time
-- (planscope_collector.observed). Only the two plan views change (0012's layout otherwise); the
-- answer is computed in their WITH, for LLM rows only, never as an ALIAS of otel_traces (an
-- ALIAS is computed for every row a view reads: docs/storage.md, "The span model").
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
                JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                  'parts', 1, 'content'),
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
    multiIf(NOT Observed, JSONExtractArrayRaw(Plan, 'steps'),
            (SpanModelKind = 'plan' OR FromLlm) AND JSONType(Plan) = 'Array',
            JSONExtractArrayRaw(Plan),
            JSONType(Plan, 'steps') = 'Array', JSONExtractArrayRaw(Plan, 'steps'),
            JSONExtractArrayRaw(Plan, 'plan')) AS Steps,
    -- an LLM's answer is a plan when it is an object with a steps/plan array, or an array
    -- whose every element is a step object (records or bare strings are data, not steps)
    JSONType(Plan, 'steps') = 'Array' OR JSONType(Plan, 'plan') = 'Array'
        OR arrayAll(s -> JSONType(s) = 'Object'
                         AND (JSONExtractString(s, 'description') != ''
                              OR JSONExtractString(s, 'task') != ''
                              OR JSONExtractString(s, 'title') != ''), Steps) AS StepLike
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
                JSONExtractString(JSONExtractRaw(SpanAttributes['gen_ai.output.messages'], 1),
                                  'parts', 1, 'content'),
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
    multiIf(NOT Observed, JSONExtractArrayRaw(Plan, 'steps'),
            (SpanModelKind = 'plan' OR FromLlm) AND JSONType(Plan) = 'Array',
            JSONExtractArrayRaw(Plan),
            JSONType(Plan, 'steps') = 'Array', JSONExtractArrayRaw(Plan, 'steps'),
            JSONExtractArrayRaw(Plan, 'plan')) AS Steps,
    -- an LLM's answer is a plan when it is an object with a steps/plan array, or an array
    -- whose every element is a step object (records or bare strings are data, not steps)
    JSONType(Plan, 'steps') = 'Array' OR JSONType(Plan, 'plan') = 'Array'
        OR arrayAll(s -> JSONType(s) = 'Object'
                         AND (JSONExtractString(s, 'description') != ''
                              OR JSONExtractString(s, 'task') != ''
                              OR JSONExtractString(s, 'title') != ''), Steps) AS StepLike,
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
            IsText, toString(StepIndex),
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
            JSONExtract(StepJson, 'title', 'String')) AS Description,
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

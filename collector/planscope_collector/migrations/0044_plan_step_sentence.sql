-- A plan whose steps are bare strings (`{"steps": ["Find the bales ...", "Order a test ..."]}`:
-- LangGraph's Plan-and-Execute tutorial's `Plan(steps: list[str])`, and any planner whose steps
-- are sentences) names each step by its text, trimmed, whatever it holds; before (0014 .. 0042),
-- only a text that was an identifier was its step's id, a sentence's id was its position, which
-- no executor span carries and no user reads. A step's sentence as it was first written is the
-- id a user sees; a re-plan that rewrites it (results written in) is tied back to it when the
-- trace is bound (planscope_collector.observed.step_lineage), not here: a view sees one span.
--
-- Rows already stored keep their ids (a materialized view acts at insert). Migrations run
-- before the collector accepts spans, so no insert falls between DROP and CREATE.

DROP VIEW IF EXISTS {db}.planscope_plan_steps_mv {on_cluster};

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
            IsText, if(trimBoth(JSONExtractString(StepJson)) != '',
                       trimBoth(JSONExtractString(StepJson)), toString(StepIndex)),
            JSONExtract(StepJson, 'id', 'String') != '', JSONExtract(StepJson, 'id', 'String'),
            JSONExtract(StepJson, 'step_id', 'String') != '',
            JSONExtract(StepJson, 'step_id', 'String'),
            JSONExtract(StepJson, 'name', 'String') != '', JSONExtract(StepJson, 'name', 'String'),
            JSONExtract(StepJson, 'key', 'String') != '', JSONExtract(StepJson, 'key', 'String'),
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

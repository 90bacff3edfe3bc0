"""The run model's metrics, defined once in SQL: what an attempt, a retry, a replan, a failed
step, a token and a dollar are, per trace. The query API (``/api/traces``), ``/api/stats``,
the alert rules and the analyzers all build on these fragments; the dashboard only displays
what they answer.

Definitions (over the typed tables the span model fills, migration 0011):

- *step attempts*: attempt spans, including an attempt an enforced budget refused (status
  ``skipped``: the agent did try it); a step's *attempt count* for budgets is its highest
  attempt number when numbered, else its number of attempt spans;
- *retries*: attempts beyond the first, per step id;
- *failed steps*: steps whose last attempt that ran did not succeed (status other than ``ok``,
  or the executor self-assessed ``failure``);
- *plan versions*: plan spans; *replans*: plan versions beyond the first, per plan id (an
  observed plan has the empty plan id, so each further observed plan is a replan; an observed
  plan span that is the parent of another observed plan span only contains it and is not
  counted, and a trace that declares a plan counts no observed plan);
- *tokens*: input + output tokens of every LLM call (cached input tokens are part of input);
  *cost*: each call's own cost when its span carries one, else its tokens priced from
  ``planscope_model_prices`` (``planscope_llm_costs``).

>>> "StepAttempts" in run_metrics_sql("Project = {project:String}")
True
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ATTEMPT_NUMBER",
    "METRIC_COLUMNS",
    "OBSERVED_PLAN_STEPS_SQL",
    "RUN_OUTCOME_REASON",
    "SPAN_MODEL_SQL",
    "STEP_ATTEMPT_COUNT",
    "STEP_FAILED",
    "run_metrics_sql",
]

ATTEMPT_NUMBER: Final = (
    "if(Attempt > 0, Attempt, toUInt32(row_number() OVER (PARTITION BY TraceId, StepId "
    "ORDER BY Start, SpanId)))"
)
"""A step attempt row's number: its own (planscope's SDK numbers attempts), else its place in
start order among the step's attempts in the trace (foreign steps are not numbered)."""

RUN_OUTCOME_REASON: Final = "if(OutcomeReason = '' AND Inferred = 1, StatusMessage, OutcomeReason)"
"""A ``planscope_runs`` row's outcome reason: planscope's own attribute, else, for a run the
mapping inferred (a framework's agent or workflow root), its span's status message, which is
where OpenTelemetry puts why the work failed."""

STEP_ATTEMPT_COUNT: Final = "if(max(Attempt) > 0, max(Attempt), count())"
"""Aggregate over one step's rows of ``planscope_step_attempts``: its attempt count."""

STEP_FAILED: Final = (
    "(countIf(Status != 'skipped') > 0 AND NOT ("
    "argMaxIf(Status, (Attempt, Start), Status != 'skipped') = 'ok' AND "
    "argMaxIf(SelfAssessment, (Attempt, Start), Status != 'skipped') != 'failure'))"
)
"""Aggregate over one step's rows of ``planscope_step_attempts``: 1 when the step failed."""

_OBSERVED: Final = (
    "if(countIf(Inferred = 0) > 0, 0, toInt64(countIf(Inferred = 1)) - "
    "toInt64(arrayCount(x -> has(groupArrayIf(ParentSpanId, Inferred = 1), x), "
    "groupUniqArrayIf(SpanId, Inferred = 1))))"
)
"""Aggregate over one trace's plan rows: its observed plans that count. None when the trace
declares a plan (declared plans win); else not those that are the parent of another observed
plan (a container showing its child's plan: ``planscope_collector.observed``)."""

METRIC_COLUMNS: Final = (
    "TraceId",
    "RunId",
    "Agent",
    "Outcome",
    "Variant",
    "Service",
    "RunStart",
    "RunDuration",
    "HasRun",
    "RunSpanId",
    "Objective",
    "OutcomeReason",
    "Budget",
    "RunInferred",
    "RunSource",
    "ObservedPlans",
    "StepAttempts",
    "Retries",
    "FailedSteps",
    "WorstStep",
    "WorstStepAttempts",
    "PlanVersions",
    "Replans",
    "LlmCalls",
    "InputTokens",
    "OutputTokens",
    "CacheReadTokens",
    "ReasoningTokens",
    "Tokens",
    "CostUsd",
    "ToolCalls",
    "FailedToolCalls",
)
"""The columns of :func:`run_metrics_sql`, one row per trace."""


def run_metrics_sql(where: str, run_where: str | None = None) -> str:
    """SQL for one row per trace with the run model's metrics (:data:`METRIC_COLUMNS`).

    ``where`` is a condition every typed table understands (``Project``, ``TraceId``,
    ``Start``), with bound parameters only; ``run_where`` (default ``where``) selects the
    trace's run rows. Branches are combined by UNION ALL + GROUP BY, not joins, so each table
    is read once by its primary key. The run fields come from the outermost (earliest) run.

    >>> sql = run_metrics_sql("Project = {project:String} AND TraceId IN {ids:Array(String)}")
    >>> sql.count("UNION ALL")
    4
    """
    run_filter = run_where or where
    return f"""
SELECT TraceId,
       max(bRunId) AS RunId, max(bAgent) AS Agent, max(bOutcome) AS Outcome,
       max(bVariant) AS Variant, max(bService) AS Service,
       max(bRunStart) AS RunStart, max(bRunDuration) AS RunDuration, max(bHasRun) AS HasRun,
       max(bRunSpan) AS RunSpanId, max(bObjective) AS Objective,
       max(bOutcomeReason) AS OutcomeReason, max(bBudget) AS Budget,
       max(bRunInferred) AS RunInferred, max(bRunSource) AS RunSource,
       sum(bObserved) AS ObservedPlans,
       sum(bAttempts) AS StepAttempts, sum(bRetries) AS Retries, sum(bFailed) AS FailedSteps,
       argMax(bWorstStep, bWorst) AS WorstStep, max(bWorst) AS WorstStepAttempts,
       sum(bVersions) AS PlanVersions, sum(bReplans) AS Replans,
       sum(bLlm) AS LlmCalls, sum(bIn) AS InputTokens, sum(bOut) AS OutputTokens,
       sum(bCacheRead) AS CacheReadTokens, sum(bReasoning) AS ReasoningTokens,
       sum(bIn) + sum(bOut) AS Tokens, sum(bCost) AS CostUsd,
       sum(bTools) AS ToolCalls, sum(bFailedTools) AS FailedToolCalls
FROM (
    SELECT TraceId, argMin(RunId, Start) AS bRunId, toString(argMin(AgentName, Start)) AS bAgent,
           toString(argMin(Outcome, Start)) AS bOutcome,
           toString(argMin(Variant, Start)) AS bVariant,
           toString(argMin(ServiceName, Start)) AS bService,
           min(Start) AS bRunStart, argMin(Duration, Start) AS bRunDuration, toUInt8(1) AS bHasRun,
           argMin(SpanId, Start) AS bRunSpan, argMin(Objective, Start) AS bObjective,
           argMin({RUN_OUTCOME_REASON}, Start) AS bOutcomeReason, argMin(Budget, Start) AS bBudget,
           argMin(Inferred, Start) AS bRunInferred, toString(argMin(Source, Start)) AS bRunSource,
           toInt64(0) AS bObserved,
           toInt64(0) AS bAttempts, toInt64(0) AS bRetries, toInt64(0) AS bFailed,
           '' AS bWorstStep, toInt64(0) AS bWorst, toInt64(0) AS bVersions,
           toInt64(0) AS bReplans, toInt64(0) AS bLlm, toInt64(0) AS bIn, toInt64(0) AS bOut,
           toInt64(0) AS bCacheRead, toInt64(0) AS bReasoning, toFloat64(0) AS bCost,
           toInt64(0) AS bTools, toInt64(0) AS bFailedTools
    FROM planscope_runs
    WHERE {run_filter}
    GROUP BY TraceId
    UNION ALL
    SELECT TraceId, '', '', '', '', '', toDateTime64(0, 9), toUInt64(0), toUInt8(0),
           '', '', '', '', toUInt8(0), '', 0,
           sum(sRan), sum(greatest(sRan - 1, 0)), sum(sFailed), argMax(StepId, sCount),
           max(sCount), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
    FROM (
        SELECT TraceId, StepId, toInt64(count()) AS sRan,
               toInt64({STEP_FAILED}) AS sFailed, toInt64({STEP_ATTEMPT_COUNT}) AS sCount
        FROM planscope_step_attempts
        WHERE {where}
        GROUP BY TraceId, StepId
    )
    GROUP BY TraceId
    UNION ALL
    SELECT TraceId, '', '', '', '', '', toDateTime64(0, 9), toUInt64(0), toUInt8(0),
           '', '', '', '', toUInt8(0), '', {_OBSERVED},
           0, 0, 0, '', 0, toInt64(uniqExactIf(SpanId, Inferred = 0)) + {_OBSERVED},
           toInt64(uniqExactIf(SpanId, Inferred = 0)) + {_OBSERVED}
               - toInt64(uniqExactIf(PlanId, Inferred = 0)) - toInt64({_OBSERVED} > 0),
           0, 0, 0, 0, 0, 0, 0, 0
    FROM planscope_plans
    WHERE {where}
    GROUP BY TraceId
    UNION ALL
    SELECT TraceId, '', '', '', '', '', toDateTime64(0, 9), toUInt64(0), toUInt8(0),
           '', '', '', '', toUInt8(0), '', 0,
           0, 0, 0, '', 0, 0, 0, toInt64(count()), toInt64(sum(InputTokens)),
           toInt64(sum(OutputTokens)), toInt64(sum(CacheReadTokens)),
           toInt64(sum(ReasoningTokens)), sum(EffectiveCostUsd), 0, 0
    FROM planscope_llm_costs
    WHERE {where}
    GROUP BY TraceId
    UNION ALL
    SELECT TraceId, '', '', '', '', '', toDateTime64(0, 9), toUInt64(0), toUInt8(0),
           '', '', '', '', toUInt8(0), '', 0,
           0, 0, 0, '', 0, 0, 0, 0, 0, 0, 0, 0, 0, toInt64(count()),
           toInt64(countIf(StatusCode = 'Error'))
    FROM planscope_tool_calls
    WHERE {where}
    GROUP BY TraceId
)
GROUP BY TraceId
"""


SPAN_MODEL_SQL: Final = f"""
SELECT * FROM (
SELECT SpanId AS span_id, 'run' AS kind, 0 AS rank, Inferred AS inferred, Source AS source,
       RunId AS run_id, '' AS step_id, toUInt32(0) AS attempt, Outcome AS status,
       AgentName AS executor, '' AS tool, '' AS model, toUInt64(0) AS input_tokens,
       toUInt64(0) AS output_tokens, toFloat64(0) AS cost_usd, '' AS cost_from
FROM planscope_runs WHERE Project = {{project:String}} AND TraceId = {{trace_id:String}}
UNION ALL
SELECT SpanId, 'step', 1, Inferred, Source, RunId, StepId, {ATTEMPT_NUMBER}, Status,
       Executor, '', '', 0, 0, 0, ''
FROM planscope_step_attempts
WHERE Project = {{project:String}} AND TraceId = {{trace_id:String}}
UNION ALL
SELECT SpanId, 'plan', 4, Inferred, Source, RunId, '', 0, '', '', '', '', 0, 0, 0, ''
FROM planscope_plans WHERE Project = {{project:String}} AND TraceId = {{trace_id:String}}
UNION ALL
SELECT SpanId, 'tool', 2, 0, Source, RunId, StepId, Attempt,
       if(StatusCode = 'Error' OR ErrorType != '', 'error', 'ok'), '', ToolName, '', 0, 0, 0, ''
FROM planscope_tool_calls WHERE Project = {{project:String}} AND TraceId = {{trace_id:String}}
UNION ALL
SELECT SpanId, 'llm', 3, 0, Source, RunId, StepId, Attempt, '', '', '', Model, InputTokens,
       OutputTokens, EffectiveCostUsd, CostFrom
FROM planscope_llm_costs WHERE Project = {{project:String}} AND TraceId = {{trace_id:String}}
)
WHERE span_id IN {{span_ids:Array(String)}}
"""
"""The typed rows of some spans of one trace as the span model classified them (``{project}``,
``{trace_id}``, ``{span_ids}`` bound; attempts are numbered over the whole trace first): kind
(a span that is both a step or an LLM call and a plan - a planner node, a planner's LLM call -
ranks as the step or the LLM call), whether it was
inferred, its source convention, and the model's fields (step, attempt, status,
executor, tool, model, tokens, cost and where the cost came from)."""

OBSERVED_PLAN_STEPS_SQL: Final = """
SELECT PlanSpanId AS plan_span_id, Position AS position, StepId AS id,
       Description AS description, Executor AS executor, Tool AS tool, DependsOn AS depends_on
FROM planscope_plan_steps
WHERE Project = {project:String} AND TraceId = {trace_id:String} AND Inferred = 1
ORDER BY Start, PlanSpanId, Position
"""
"""The steps of the plans the span model observed in one trace (planscope plans carry JSON)."""

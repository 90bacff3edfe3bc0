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

from collections.abc import Mapping, Sequence
from typing import Any, Final

from planscope import semconv as A

from .observed import Binding, SpanNode, user_request_sql

__all__ = [
    "ATTEMPT_NUMBER",
    "BIND_NODES_SQL",
    "INFERRED_TRACES_SQL",
    "METRIC_COLUMNS",
    "OBSERVED_PLAN_STEPS_SQL",
    "RUN_OUTCOME_REASON",
    "SPAN_MODEL_SQL",
    "STEP_ATTEMPT_COUNT",
    "STEP_FAILED",
    "TRACE_WHERE",
    "WORKFLOW_SQL",
    "binding_parameters",
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

WORKFLOW_SQL: Final = (
    f"(SpanAttributes['{A.GEN_AI_OPERATION_NAME}'] = '{A.OP_INVOKE_WORKFLOW}' "
    f"OR lower(SpanAttributes['{A.TL_SPAN_KIND}']) = 'workflow')"
)
"""Over ``otel_traces``: the span is a workflow (GenAI ``invoke_workflow``, a Traceloop
``workflow``), whose child tasks are a plan when the trace has none of its own (``observed``)."""

_WORKFLOW_PLANS: Final = """
    UNION ALL
    SELECT w, '', '', '', '', '', toDateTime64(0, 9), toUInt64(0), toUInt8(0),
           '', '', '', '', toUInt8(0), '', toInt64(1),
           0, 0, 0, '', 0, toInt64(1), toInt64(0), 0, 0, 0, 0, 0, 0, 0, 0
    FROM (SELECT arrayJoin({workflow_plans:Array(String)}) AS w)"""
"""One observed plan (one version, no replan) per trace whose workflow's tasks are its plan."""

_BOUND_STEP: Final = (
    "transform(SpanId, {bound_spans:Array(String)}, {bound_steps:Array(String)}, StepId)"
)
_BOUND_STATUS: Final = "if(has({failed_spans:Array(String)}, SpanId), 'error', toString(Status))"
_PROMOTED: Final = """
    UNION ALL
    SELECT p.1, p.2, p.3, if(p.4 = 1, 'error', 'ok'), toUInt32(0), '',
           fromUnixTimestamp64Nano(p.5), toUInt8(1)
    FROM (SELECT arrayJoin({promoted:Array(Tuple(String, String, String, UInt8, Int64))}) AS p)"""
_GROUPING: Final = """
    UNION ALL
    SELECT g.1, g.1, g.3, if(g.4 = 1, 'failure', 'unknown'), '', g.6,
           fromUnixTimestamp64Nano(g.7), g.8, g.2, '', '', g.5, '', toUInt8(1), 'framework'
    FROM (SELECT arrayJoin(
        {grouping:Array(Tuple(String, String, String, UInt8, String, String, Int64, UInt64))}
    ) AS g)"""


def _bound_attempts(where: str, binding: Mapping[str, Any]) -> str:
    """Step attempt rows as bound across spans (:func:`binding_parameters`): the typed rows with
    their bound step id and status, plus the unclassified spans that are attempts of a plan
    step. Only the parts a binding needs are in the SQL (each costs a fixed analysis time)."""
    if not ("bound_spans" in binding or "failed_spans" in binding or "promoted" in binding):
        return f"planscope_step_attempts WHERE {where}"
    step = _BOUND_STEP if "bound_spans" in binding else "StepId"
    status = _BOUND_STATUS if "failed_spans" in binding else "toString(Status)"
    return f"""(
    SELECT TraceId, SpanId, {step} AS StepId, {status} AS Status, Attempt,
           toString(SelfAssessment) AS SelfAssessment, Start, Inferred
    FROM planscope_step_attempts WHERE {where}{_PROMOTED if "promoted" in binding else ""}
)"""


def _bound_runs(where: str, binding: Mapping[str, Any]) -> str:
    """Run rows plus the grouping runs found across spans (:func:`binding_parameters`)."""
    if "grouping" not in binding:
        return f"planscope_runs WHERE {where}"
    return f"""(
    SELECT TraceId, RunId, toString(AgentName) AS AgentName, toString(Outcome) AS Outcome,
           toString(Variant) AS Variant, toString(ServiceName) AS ServiceName, Start, Duration,
           SpanId, Objective, OutcomeReason, StatusMessage, Budget, Inferred,
           toString(Source) AS Source
    FROM planscope_runs WHERE {where}{_GROUPING}
)"""


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


def run_metrics_sql(
    where: str, run_where: str | None = None, *, binding: Mapping[str, Any] | None = None
) -> str:
    """SQL for one row per trace with the run model's metrics (:data:`METRIC_COLUMNS`).

    ``where`` is a condition every typed table understands (``Project``, ``TraceId``,
    ``Start``), with bound parameters only; ``run_where`` (default ``where``) selects the
    trace's run rows. Branches are combined by UNION ALL + GROUP BY, not joins, so each table
    is read once by its primary key. The run fields come from the outermost (earliest) run.

    ``binding`` (the parameters :func:`binding_parameters` gives, to bind with the query): the
    step attempts and runs are read as ``planscope_collector.observed.bind`` derived them
    across spans (bound step ids, failed attempts, attempts named after a plan step, a
    grouping run); the same definitions then count them, so a trace's numbers are those of its
    bound structure.

    >>> sql = run_metrics_sql("Project = {project:String} AND TraceId IN {ids:Array(String)}")
    >>> sql.count("UNION ALL")
    4
    >>> bound = {"failed_spans": ["e1"]}
    >>> "{failed_spans:" in run_metrics_sql("TraceId = {t:String}", binding=bound)
    True
    """
    run_filter = run_where or where
    binding = binding or {}
    attempts = _bound_attempts(where, binding)
    runs = _bound_runs(run_filter, binding)
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
    FROM {runs}
    GROUP BY TraceId
    UNION ALL
    SELECT TraceId, '', '', '', '', '', toDateTime64(0, 9), toUInt64(0), toUInt8(0),
           '', '', '', '', toUInt8(0), '', 0,
           sum(sRan), sum(greatest(sRan - 1, 0)), sum(sFailed), argMax(StepId, sCount),
           max(sCount), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
    FROM (
        SELECT TraceId, StepId, toInt64(count()) AS sRan,
               toInt64({STEP_FAILED}) AS sFailed, toInt64({STEP_ATTEMPT_COUNT}) AS sCount
        FROM {attempts}
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
    GROUP BY TraceId{_WORKFLOW_PLANS if "workflow_plans" in binding else ""}
)
GROUP BY TraceId
"""


def binding_parameters(
    traces: Mapping[str, tuple[Sequence[SpanNode], Binding]],
) -> dict[str, Any]:
    """The query parameters of ``run_metrics_sql(..., binding=...)`` for some traces, from each
    trace's span nodes and what ``planscope_collector.observed.bind`` derived from them (a
    trace not given is counted as its typed rows stand). Only those a binding needs are given
    (``run_metrics_sql`` leaves the others' SQL out).

    >>> from planscope_collector.observed import bind
    >>> nodes = [SpanNode("app", "", "other", "refund-agent", start_ns=1),
    ...          SpanNode("e", "app", "step", "executor", step_name="executor", start_ns=2)]
    >>> binding_parameters({"t1": (nodes, bind(nodes, []))})["grouping"]
    [('t1', 'app', 'refund-agent', 0, '', '', 1, 0)]
    """
    out: dict[str, Any] = {
        "bound_spans": [],
        "bound_steps": [],
        "failed_spans": [],
        "promoted": [],
        "grouping": [],
        "workflow_plans": [],
    }
    for trace_id, (spans, b) in traces.items():
        nodes = {s.span_id: s for s in spans}
        if b.workflow_plan is not None:
            out["workflow_plans"].append(trace_id)
        for span_id in b.attempts:
            node = nodes[span_id]
            failed = span_id in b.failed
            if span_id in b.promoted:
                out["promoted"].append((trace_id, span_id, node.name, int(failed), node.start_ns))
                continue
            step = b.step_of(span_id, node.step_name)
            if step != node.step_name:
                out["bound_spans"].append(span_id)
                out["bound_steps"].append(step)
            if failed:
                out["failed_spans"].append(span_id)
        if b.run_span_id is not None and b.run_span_id in nodes:
            root = nodes[b.run_span_id]
            reason = root.message if root.failed else ""
            out["grouping"].append(
                (
                    trace_id,
                    root.span_id,
                    root.name,
                    int(root.failed),
                    reason,
                    root.service,
                    root.start_ns,
                    root.duration_ns,
                )
            )
    return {name: values for name, values in out.items() if values}


TRACE_WHERE: Final = (
    "Project = {project:String} AND TraceId = {trace_id:String} "
    "AND Start >= fromUnixTimestamp64Nano({since:Int64}) "
    "AND Start < fromUnixTimestamp64Nano({until:Int64})"
)
"""The typed rows of one trace (``{project}``, ``{trace_id}``), within the time range its spans
start in (``{since}``, ``{until}``, Unix ns): the range prunes the other daily partitions, which
a trace-id condition alone does not (each table's parts are checked by primary key otherwise)."""

SPAN_MODEL_SQL: Final = f"""
SELECT * FROM (
SELECT SpanId AS span_id, 'run' AS kind, 0 AS rank, Inferred AS inferred, Source AS source,
       RunId AS run_id, '' AS step_id, toUInt32(0) AS attempt, Outcome AS status,
       AgentName AS executor, '' AS tool, '' AS model, toUInt64(0) AS input_tokens,
       toUInt64(0) AS output_tokens, toFloat64(0) AS cost_usd, '' AS cost_from
FROM planscope_runs WHERE {TRACE_WHERE}
UNION ALL
SELECT SpanId, 'step', 1, Inferred, Source, RunId, StepId, {ATTEMPT_NUMBER}, Status,
       Executor, '', '', 0, 0, 0, ''
FROM planscope_step_attempts
WHERE {TRACE_WHERE}
UNION ALL
SELECT SpanId, 'plan', 4, Inferred, Source, RunId, '', 0, '', '', '', '', 0, 0, 0, ''
FROM planscope_plans WHERE {TRACE_WHERE}
UNION ALL
SELECT SpanId, 'tool', 2, 0, Source, RunId, StepId, Attempt,
       if(StatusCode = 'Error' OR ErrorType != '', 'error', 'ok'), '', ToolName, '', 0, 0, 0, ''
FROM planscope_tool_calls WHERE {TRACE_WHERE}
UNION ALL
SELECT SpanId, 'llm', 3, 0, Source, RunId, StepId, Attempt, '', '', '', Model, InputTokens,
       OutputTokens, EffectiveCostUsd, CostFrom
FROM planscope_llm_costs WHERE {TRACE_WHERE}
)
WHERE span_id IN {{span_ids:Array(String)}}
"""
"""The typed rows of some spans of one trace as the span model classified them (``{project}``,
``{trace_id}``, ``{since}``, ``{until}`` as for :data:`TRACE_WHERE`, ``{span_ids}``; attempts
are numbered over the whole trace first): kind (a span that is both a step or an LLM call and a
plan - a planner node, a planner's LLM call - ranks as the step or the LLM call), whether it was
inferred, its source convention, and the model's fields (step, attempt, status, executor, tool,
model, tokens, cost and where the cost came from)."""

OBSERVED_PLAN_STEPS_SQL: Final = f"""
SELECT PlanSpanId AS plan_span_id, Position AS position, StepId AS id,
       Description AS description, Executor AS executor, Tool AS tool, DependsOn AS depends_on
FROM planscope_plan_steps
WHERE {TRACE_WHERE} AND Inferred = 1
  AND TraceId NOT IN (SELECT TraceId FROM planscope_plans WHERE {TRACE_WHERE} AND Inferred = 0)
ORDER BY Start, PlanSpanId, Position
"""
"""The steps of the plans the span model observed in one trace (planscope plans carry JSON),
none when the trace declares a plan (declared plans win)."""

INFERRED_TRACES_SQL: Final = """
SELECT DISTINCT TraceId AS trace_id FROM (
    SELECT TraceId FROM planscope_step_attempts
    WHERE Project = {project:String} AND TraceId IN {ids:Array(String)}
      AND Start >= fromUnixTimestamp64Nano({since:Int64})
      AND Start <= fromUnixTimestamp64Nano({until:Int64}) AND Inferred = 1
    UNION ALL
    SELECT TraceId FROM planscope_plans
    WHERE Project = {project:String} AND TraceId IN {ids:Array(String)}
      AND Start >= fromUnixTimestamp64Nano({since:Int64})
      AND Start <= fromUnixTimestamp64Nano({until:Int64}) AND Inferred = 1
)
"""
"""Those of some traces (``{project}``, ``{ids}``, ``{since}``, ``{until}``) that have
structure the span model inferred: the ones :data:`BIND_NODES_SQL` is for (planscope's own have
nothing to bind). A query of its own, its ids then bound as a literal set: as a subquery of each
branch it would be evaluated once per branch (3x the cost on a 1,000-trace page)."""

_BIND_WHERE: Final = (
    "Project = {project:String} AND TraceId IN {ids:Array(String)} "
    "AND Start >= fromUnixTimestamp64Nano({since:Int64}) "
    "AND Start <= fromUnixTimestamp64Nano({until:Int64})"
)

BIND_NODES_SQL: Final = f"""
SELECT 'span' AS row, TraceId AS trace_id, SpanId AS span_id, ParentSpanId AS parent_span_id,
       toString(SpanName) AS name, toString(SpanModelKind) AS kind,
       SpanModelInferred AS inferred, SpanModelStatusCode = 'Error' AS failed, '' AS step,
       '' AS tool, toUnixTimestamp64Nano(Timestamp) AS start_ns, Duration AS duration_ns,
       StatusMessage AS message, toString(ServiceName) AS service, toUInt32(0) AS position,
       {WORKFLOW_SQL} AS workflow, Links.SpanId AS links,
       if(SpanModelKind = 'llm', {user_request_sql()}, map()) AS messages
FROM otel_traces
WHERE Project = {{project:String}} AND TraceId IN {{ids:Array(String)}}
  AND Timestamp >= fromUnixTimestamp64Nano({{since:Int64}})
  AND Timestamp <= fromUnixTimestamp64Nano({{until:Int64}})
UNION ALL
SELECT 'step', TraceId, SpanId, '', '', '', Inferred, Status = 'error', StepId, '', 0, 0, '',
       '', 0, 0, CAST([] AS Array(String)), map()
FROM planscope_step_attempts WHERE {_BIND_WHERE}
UNION ALL
SELECT 'tool', TraceId, SpanId, '', '', '', 0, StatusCode = 'Error' OR ErrorType != '', '',
       ToolName, 0, 0, '', '', 0, 0, CAST([] AS Array(String)), map()
FROM planscope_tool_calls WHERE {_BIND_WHERE}
UNION ALL
SELECT 'plan_step', TraceId, PlanSpanId, '', '', '', 1, 0, StepId, Tool, 0, 0, '', '', Position,
       0, CAST([] AS Array(String)), map()
FROM planscope_plan_steps
WHERE {_BIND_WHERE} AND Inferred = 1
  AND TraceId NOT IN (SELECT TraceId FROM planscope_plans WHERE {_BIND_WHERE} AND Inferred = 0)
"""
"""What ``planscope_collector.observed.bind`` reads of some traces (``{project}``, ``{ids}``,
``{since}``, ``{until}`` bound), in one read: every span (``row`` = ``span``: kind, name,
status, start, what a grouping run reports, whether it is a workflow, the spans it links to,
an LLM call's input messages as ``observed.user_request`` reads them),
the step name and status of each step attempt (``step``), the tool name and status of each
tool call (``tool``) and the steps of the observed plans (``plan_step``: the plan's span, step
id, tool, position; none in a trace that declares a plan)."""

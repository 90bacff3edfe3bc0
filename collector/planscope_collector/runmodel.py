"""The run model's metrics, defined once in SQL: what an attempt, a retry, a replan, a failed
step, a token and a dollar are, per trace. The query API (``/api/traces``), ``/api/stats``,
the alert rules and the analyzers all build on these fragments; the dashboard only displays
what they answer.

Definitions (over the typed tables the span model fills, migration 0011):

- *step attempts*: attempt spans, including an attempt an enforced budget refused (status
  ``skipped``: the agent did try it); a step's *attempt count* for budgets is its highest
  attempt number when numbered, else its number of attempt spans;
- *retries*: attempts beyond the first, per step id;
- *outcome*: the run's own; an inferred run of unknown outcome whose step failed for good
  (``observed.Binding.failed_for_good``) failed, for the reason that step's last call gave;
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

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from planscope import semconv as A

from .observed import (
    NO_SPAN,
    Binding,
    ObservedStep,
    SpanNode,
    ToolEvent,
    answer,
    answer_sql,
    bind,
    conversation_calls_sql,
    conversation_sql,
    conversation_tool_events,
    function_calls_sql,
    function_results,
    function_results_sql,
    recorded_work,
    tool_event_sql,
    user_request,
    user_request_sql,
)
from .storage import SPAN_STATUS_MESSAGE_SQL

__all__ = [
    "ATTEMPT_NUMBER",
    "BIND_NODES_SQL",
    "CLOCK_SKEW_NS",
    "GROUPING_RUN_SOURCE",
    "METRIC_COLUMNS",
    "OBSERVED_PLAN_STEPS_SQL",
    "RUN_OUTCOME_REASON",
    "SPAN_MODEL_SQL",
    "STEP_ATTEMPT_COUNT",
    "STEP_FAILED",
    "TRACE_WHERE",
    "WORKFLOW_SQL",
    "BindingCache",
    "Query",
    "bind_traces",
    "binding_parameters",
    "run_metrics_sql",
    "runs_sql",
    "step_attempts_sql",
    "used_parameters",
]

Query = Callable[[str, Mapping[str, Any]], list[dict[str, Any]]]
"""``Store.query``: SQL with ``{name:Type}`` placeholders and its parameters, rows as dicts."""

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


def _observed(binding: Mapping[str, Any]) -> str:
    """Aggregate over one trace's plan rows: its observed plans that count. None when the trace
    declares a plan (declared plans win); else not those that are the parent of another observed
    plan, nor the containers a binding found higher up (a container showing an enclosed plan:
    ``planscope_collector.observed``)."""
    higher = " OR has({containers:Array(String)}, x)" if "containers" in binding else ""
    return (
        "if(countIf(Inferred = 0) > 0, 0, toInt64(countIf(Inferred = 1)) - "
        f"toInt64(arrayCount(x -> has(groupArrayIf(ParentSpanId, Inferred = 1), x){higher}, "
        "groupUniqArrayIf(SpanId, Inferred = 1))))"
    )


WORKFLOW_SQL: Final = (
    f"(SpanAttributes['{A.GEN_AI_OPERATION_NAME}'] = '{A.OP_INVOKE_WORKFLOW}' "
    f"OR lower(SpanAttributes['{A.TL_SPAN_KIND}']) = 'workflow')"
)
"""Over ``otel_traces``: the span is a workflow (GenAI ``invoke_workflow``, a Traceloop
``workflow``), whose child tasks are a plan when the trace has none of its own (``observed``)."""

_READ_PLANS: Final = """
    UNION ALL
    SELECT r.1, '', '', '', '', '', toDateTime64(0, 9), toUInt64(0), toUInt8(0),
           '', '', '', '', toUInt8(0), '', r.2,
           0, 0, 0, '', 0, r.2, r.2 - 1, 0, 0, 0, 0, 0, 0, 0, 0
    FROM (SELECT arrayJoin({read_plans:Array(Tuple(String, Int64))}) AS r)"""
"""The observed plans a binding read across spans, per trace (trace id, number of plans): a
workflow's tasks (one plan), a planner's answers read from structure (each a plan version,
each after the first a replan)."""

_EVENT_CALLS: Final = """
    UNION ALL
    SELECT c.1 AS TraceId, '', '', '', '', '', toDateTime64(0, 9), toUInt64(0), toUInt8(0),
           '', '', '', '', toUInt8(0), '', 0,
           0, 0, 0, '', 0, 0, 0, 0, 0, 0, 0, 0, 0, toInt64(count()), toInt64(countIf(c.2 = 1))
    FROM (SELECT arrayJoin({event_calls:Array(Tuple(String, UInt8))}) AS c)
    GROUP BY TraceId"""
"""The tool calls no row of ``planscope_tool_calls`` holds, per trace (trace id, whether the
call failed): those only GenAI events say (``observed.event_calls``) and the component calls
binding found (``Binding.calls``: a Logfire ``@logfire.instrument`` function the model asked
for, a Haystack component)."""

_FAILED_TOOLS: Final = " OR SpanId IN {failed_tools:Array(String)}"
"""Typed tool calls that ended OK whose result the model was handed as an error
(``Binding.returned``): failed."""

_BOUND_STEP: Final = (
    "transform(SpanId, {bound_spans:Array(String)}, {bound_steps:Array(String)}, StepId)"
)
_BOUND_STATUS: Final = "if(SpanId IN {failed_spans:Array(String)}, 'error', toString(Status))"
"""(``IN`` builds one hash set per query; ``has`` would scan the array for every row.)"""
_NOT_WRAPPER: Final = " AND SpanId NOT IN {wrappers:Array(String)}"
"""Step spans that only wrap other attempts (``observed.bind``) are no attempts."""
_PROMOTED: Final = """
    UNION ALL
    SELECT TraceId, SpanId, StepId, Status, Attempt, SelfAssessment, Start, Inferred, RunId,
           ServiceName
    FROM (
        SELECT p.1 AS TraceId, p.2 AS SpanId, p.3 AS StepId, if(p.4 = 1, 'error', 'ok') AS Status,
               toUInt32(0) AS Attempt, '' AS SelfAssessment,
               fromUnixTimestamp64Nano(p.5) AS Start, toUInt8(1) AS Inferred, '' AS RunId,
               p.6 AS ServiceName, {{project:String}} AS Project
        FROM (SELECT arrayJoin(
            {{promoted:Array(Tuple(String, String, String, UInt8, Int64, String))}}
        ) AS p)
    )
    WHERE {where}"""
GROUPING_RUN_SOURCE: Final = "framework"
"""The source convention of a grouping run (``observed.bind``): a framework's application span."""
_GROUPING: Final = """
    UNION ALL
    SELECT TraceId, RunId, AgentName, Outcome, Variant, ServiceName, Start, Duration, SpanId,
           Objective, OutcomeReason, StatusMessage, Budget, Inferred, Source
    FROM (
        SELECT g.1 AS TraceId, g.1 AS RunId, g.3 AS AgentName,
               if(g.4 = 1, 'failure', 'unknown') AS Outcome, '' AS Variant, g.6 AS ServiceName,
               fromUnixTimestamp64Nano(g.7) AS Start, g.8 AS Duration, g.2 AS SpanId,
               '' AS Objective, '' AS OutcomeReason, g.5 AS StatusMessage, '' AS Budget,
               toUInt8(1) AS Inferred, '{source}' AS Source,
               fromUnixTimestamp64Nano(g.7 + toInt64(g.8)) AS End, {{project:String}} AS Project
        FROM (SELECT arrayJoin(
            {{grouping:Array(Tuple(String, String, String, UInt8, String, String, Int64, UInt64))}}
        ) AS g)
    )
    WHERE {where}"""


_AGENT_RUN: Final = (
    "arrayFirst(a -> a.1 = TraceId, {{agent_runs:Array(Tuple(String, UInt8, String))}})"
)
_AGENT_ROOTS: Final = f"""
    UNION ALL
    SELECT TraceId, argMin(RunId, Start), '',
           if(tupleElement({_AGENT_RUN}, 2) = 1, 'failure', 'unknown'), '',
           toString(argMin(ServiceName, Start)), min(Start),
           toUInt64(toUnixTimestamp64Nano(max(End)) - toUnixTimestamp64Nano(min(Start))),
           '{NO_SPAN}', '', tupleElement({_AGENT_RUN}, 3), '', '', toUInt8(1),
           toString(argMin(Source, Start))
    FROM planscope_runs WHERE ({{where}}) AND SpanId IN {{{{agent_spans:Array(String)}}}}
    GROUP BY TraceId"""
"""The run no span stands for of each trace whose agent runs are its attempts
(``observed.agent_roots``; ``{agent_runs}``: trace, whether and why it failed;
``{agent_spans}``: the agent runs, which are no runs): the first agent run's id, service and
source, from its start to the last one's end."""

_GIVEN_UP: Final = "{given_up:Array(Tuple(String, String))}"


def step_attempts_sql(where: str, binding: Mapping[str, Any] | None = None) -> str:
    """A ``FROM`` source of step attempt rows (``TraceId``, ``SpanId``, ``StepId``, ``Status``,
    ``Attempt``, ``SelfAssessment``, ``Start``, ``Inferred``, ``RunId``, ``ServiceName``), those
    of ``planscope_step_attempts`` that ``where`` selects, as bound across spans
    (:func:`binding_parameters`): each with its bound step id and status, without the step
    spans that only wrap attempts, plus the unclassified spans that are attempts of a plan step
    (selected by ``where`` too, which may use ``Project``, ``TraceId`` and ``Start``; its
    ``{project}`` parameter is theirs). Only the
    parts a binding needs are in the SQL (each costs a fixed analysis time).

    >>> step_attempts_sql("Project = {project:String}")
    'planscope_step_attempts WHERE Project = {project:String}'
    >>> "{promoted:" in step_attempts_sql("Project = {project:String}", {"promoted": []})
    True
    """
    binding = binding or {}
    if not any(k in binding for k in ("bound_spans", "failed_spans", "promoted", "wrappers")):
        return f"planscope_step_attempts WHERE {where}"
    step = _BOUND_STEP if "bound_spans" in binding else "StepId"
    status = _BOUND_STATUS if "failed_spans" in binding else "toString(Status)"
    rows = f"({where}){_NOT_WRAPPER}" if "wrappers" in binding else where
    promoted = _PROMOTED.format(where=where) if "promoted" in binding else ""
    return f"""(
    SELECT TraceId, SpanId, {step} AS StepId, {status} AS Status, Attempt,
           toString(SelfAssessment) AS SelfAssessment, Start, Inferred, RunId,
           toString(ServiceName) AS ServiceName
    FROM planscope_step_attempts WHERE {rows}{promoted}
)"""


def runs_sql(where: str, binding: Mapping[str, Any] | None = None) -> str:
    """A ``FROM`` source of run rows: those of ``planscope_runs`` that ``where`` selects, plus
    the grouping runs found across spans (:func:`binding_parameters`) that it selects too (by
    ``Project``, ``TraceId``, ``Start``, ``End``; its ``{project}`` parameter is theirs).

    >>> runs_sql("Project = {project:String}")
    'planscope_runs WHERE Project = {project:String}'
    """
    binding = binding or {}
    if not any(binding.get(k) for k in ("grouping", "given_up", "agent_runs")):
        return f"planscope_runs WHERE {where}"
    grouping = _GROUPING.format(where=where, source=GROUPING_RUN_SOURCE)
    agents = _AGENT_ROOTS.format(where=where) if binding.get("agent_runs") else ""
    runs = f"({where}) AND SpanId NOT IN {{agent_spans:Array(String)}}" if agents else where
    rows = f"""
    SELECT TraceId, RunId, toString(AgentName) AS AgentName, toString(Outcome) AS Outcome,
           toString(Variant) AS Variant, toString(ServiceName) AS ServiceName, Start, Duration,
           SpanId, Objective, OutcomeReason, StatusMessage, Budget, Inferred,
           toString(Source) AS Source
    FROM planscope_runs WHERE {runs}{grouping if binding.get("grouping") else ""}{agents}"""
    if not binding.get("given_up"):
        return f"({rows}\n)"
    # an inferred run of unknown outcome failed where a step gave up for good (observed.bind)
    return f"""(
    SELECT TraceId, RunId, AgentName,
           if(gaveUp, 'failure', Outcome) AS Outcome, Variant, ServiceName, Start, Duration,
           SpanId, Objective,
           if(gaveUp AND OutcomeReason = '' AND StatusMessage = '',
              tupleElement(arrayFirst(g -> g.1 = TraceId, {_GIVEN_UP}), 2),
              OutcomeReason) AS OutcomeReason,
           StatusMessage, Budget, Inferred, Source
    FROM (
        SELECT *, Inferred = 1 AND Outcome IN ('', 'unknown')
                  AND arrayExists(g -> g.1 = TraceId, {_GIVEN_UP}) AS gaveUp
        FROM ({rows}
        )
    )
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
    attempts = step_attempts_sql(where, binding)
    runs = runs_sql(run_filter, binding)
    observed = _observed(binding)
    failed_tools = _FAILED_TOOLS if "failed_tools" in binding else ""
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
           '', '', '', '', toUInt8(0), '', {observed},
           0, 0, 0, '', 0, toInt64(uniqExactIf(SpanId, Inferred = 0)) + {observed},
           toInt64(uniqExactIf(SpanId, Inferred = 0)) + {observed}
               - toInt64(uniqExactIf(PlanId, Inferred = 0)) - toInt64({observed} > 0),
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
           toInt64(countIf(StatusCode = 'Error'{failed_tools}))
    FROM planscope_tool_calls
    WHERE {where}
    GROUP BY TraceId{_EVENT_CALLS if "event_calls" in binding else ""}{
        _READ_PLANS if "read_plans" in binding else ""
    }
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
        "wrappers": [],
        "grouping": [],
        "read_plans": [],
        "given_up": [],
        "containers": [],
        "agent_runs": [],
        "agent_spans": [],
        "event_calls": [],
        "failed_tools": [],
    }
    for trace_id, (spans, b) in traces.items():
        nodes = {s.span_id: s for s in spans}
        if plans := len(b.read_plans) + (b.workflow_plan is not None):
            out["read_plans"].append((trace_id, plans))
        agents: dict[str, str] = {}
        if (roots := b.agent_roots) is not None:
            out["agent_runs"].append((trace_id, int(roots.failed), roots.reason))
            out["agent_spans"].extend(roots.attempts)
            agents = dict(zip(roots.attempts, roots.agents, strict=True))
        out["event_calls"].extend((trace_id, int(c.failed)) for c in b.event_calls)
        out["event_calls"].extend(
            (trace_id, int(nodes[c].failed or c in b.returned)) for c in b.calls
        )
        out["failed_tools"].extend(b.typed_failures())
        for span_id in b.attempts:
            node = nodes[span_id]
            failed = span_id in b.failed
            if span_id in b.promoted or span_id in agents:  # no row of planscope_step_attempts
                step = b.step_of(span_id, agents.get(span_id, node.name))
                promoted = (trace_id, span_id, step, int(failed), node.start_ns, node.service)
                out["promoted"].append(promoted)
                continue
            step = b.step_of(span_id, node.step_name)
            if step != node.step_name:
                out["bound_spans"].append(span_id)
                out["bound_steps"].append(step)
            if failed:
                out["failed_spans"].append(span_id)
        out["wrappers"].extend(b.wrappers)
        out["containers"].extend(b.containers)
        if b.failed_for_good is not None:
            out["given_up"].append((trace_id, b.given_up_reason))
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

_INFERRED_TRACES: Final = """
SELECT TraceId AS trace_id, min(Begin) AS start_ns, max(Finish) AS end_ns FROM (
    SELECT TraceId, toUnixTimestamp64Nano(Start) AS Begin,
           toUnixTimestamp64Nano(Start) + toInt64(Duration) AS Finish
    FROM planscope_step_attempts WHERE {where} AND Inferred = 1
    UNION ALL
    SELECT TraceId, toUnixTimestamp64Nano(Start), toUnixTimestamp64Nano(Start) + toInt64(Duration)
    FROM planscope_plans WHERE {where} AND Inferred = 1
    UNION ALL
    SELECT TraceId, toUnixTimestamp64Nano(Start), toUnixTimestamp64Nano(Start) + toInt64(Duration)
    FROM planscope_tool_calls WHERE {where} AND Source NOT IN ('planscope', '')
      AND TraceId NOT IN (SELECT TraceId FROM planscope_runs WHERE {where})
    UNION ALL
    SELECT TraceId, toUnixTimestamp64Nano(Start), toUnixTimestamp64Nano(End)
    FROM planscope_runs WHERE {where} AND Inferred = 1
)
GROUP BY TraceId
"""
"""Those of the traces whose typed rows ``{where}`` selects that have structure the span model
inferred (a run, step or plan: several agent runs ``observed.agent_roots`` may take as the
attempts of one run, a run whose tool calls only GenAI events say), or a framework's tool
calls and no run (whose calls under the application's span ``observed.bind`` may take as the
runs): the ones :func:`bind_traces` binds (planscope's own have nothing to bind), with the
time range of those rows. A query of its own, its ids then bound as a literal set: as a
subquery of each branch it would be evaluated once per branch (3x the cost on a 1,000-trace
page)."""

CLOCK_SKEW_NS: Final = 3600 * 10**9
"""A trace's spans may start this long before (a root span, clock skew between services) or
after its inferred rows: :func:`bind_traces` reads its spans within this slack."""

_BIND_WHERE: Final = (
    "Project = {project:String} AND TraceId IN {ids:Array(String)} "
    "AND Start >= fromUnixTimestamp64Nano({since:Int64}) "
    "AND Start <= fromUnixTimestamp64Nano({until:Int64})"
)

_BIND_SPANS: Final = (
    "Project = {project:String} AND TraceId IN {ids:Array(String)} "
    "AND Timestamp >= fromUnixTimestamp64Nano({since:Int64}) "
    "AND Timestamp <= fromUnixTimestamp64Nano({until:Int64})"
)
"""The spans of :data:`BIND_NODES_SQL`'s traces, as ``_BIND_WHERE`` selects their typed rows."""

_EVENTS: Final = "Array(Tuple(Int64, String, Map(String, String)))"
_NO_EVENTS: Final = f"CAST([] AS {_EVENTS})"

BIND_NODES_SQL: Final = f"""
SELECT 'span' AS row, TraceId AS trace_id, SpanId AS span_id, ParentSpanId AS parent_span_id,
       toString(SpanName) AS name, toString(SpanModelKind) AS kind,
       SpanModelInferred AS inferred, SpanModelStatusCode = 'Error' AS failed, '' AS step,
       '' AS tool, toUnixTimestamp64Nano(Timestamp) AS start_ns, Duration AS duration_ns,
       if(SpanModelLogLevel != 0, SpanModelLogMessage, {SPAN_STATUS_MESSAGE_SQL}) AS message,
       toString(ServiceName) AS service,
       toUInt32(0) AS position, {WORKFLOW_SQL} AS workflow, Links.SpanId AS links,
       if(SpanModelKind = 'llm', {user_request_sql()}, map()) AS messages,
       if({conversation_calls_sql(_BIND_SPANS)}, {conversation_sql()}, map()) AS conversation,
       if({function_calls_sql(_BIND_SPANS)}, {function_results_sql()}, map()) AS results,
       if(TraceId NOT IN (SELECT TraceId FROM planscope_plans WHERE {_BIND_WHERE}),
          {answer_sql()}, map()) AS answers,
       CAST(arrayFilter(e -> {tool_event_sql("e.2", "e.3")}, arrayZip(
           arrayMap(t -> toUnixTimestamp64Nano(t), Events.Timestamp), Events.Name,
           Events.Attributes)), '{_EVENTS}') AS events, SpanModelLogLevel AS log_level
FROM otel_traces
WHERE {_BIND_SPANS}
UNION ALL
SELECT 'step', TraceId, SpanId, '', '', '', Inferred, Status = 'error', StepId, '', 0, 0, '',
       '', 0, 0, CAST([] AS Array(String)), map(), map(), map(), map(), {_NO_EVENTS}, 0
FROM planscope_step_attempts WHERE {_BIND_WHERE}
UNION ALL
SELECT 'run', TraceId, SpanId, '', '', '', Inferred, 0, toString(AgentName), '', 0, 0, '', '', 0,
       0, CAST([] AS Array(String)), map(), map(), map(), map(), {_NO_EVENTS}, 0
FROM planscope_runs WHERE {_BIND_WHERE}
UNION ALL
SELECT 'tool', TraceId, SpanId, '', '', '', 0, StatusCode = 'Error' OR ErrorType != '', '',
       ToolName, 0, 0, '', '', 0, 0, CAST([] AS Array(String)), map(), map(), map(), map(),
       {_NO_EVENTS}, 0
FROM planscope_tool_calls WHERE {_BIND_WHERE}
UNION ALL
SELECT 'plan_step', TraceId, PlanSpanId, '', '', '', 1, 0, StepId, Tool, 0, 0, '', '', Position,
       0, CAST([] AS Array(String)), map(), map(), map(), map(), {_NO_EVENTS}, 0
FROM planscope_plan_steps
WHERE {_BIND_WHERE} AND Inferred = 1
  AND TraceId NOT IN (SELECT TraceId FROM planscope_plans WHERE {_BIND_WHERE} AND Inferred = 0)
"""
"""What ``planscope_collector.observed.bind`` reads of some traces (``{project}``, ``{ids}``,
``{since}``, ``{until}`` bound), in one read: every span (``row`` = ``span``: kind, name,
status, start, what a grouping run reports, whether it is a workflow, the spans it links to,
an LLM call's input messages as ``observed.user_request`` reads them and, where they may say
tool calls binding takes (``observed.conversation_calls_sql``), its messages as
``observed.conversation_tool_events`` reads them (``conversation``), and where it may be handed
a tool's error (``observed.function_calls_sql``), its function results as
``observed.function_results`` reads them (``results``), an LLM call's or inferred
agent run's answer or a tool call's arguments as ``observed.answer`` reads them, only in a
trace with no plan row: where ``observed.read_plans`` looks for a plan, the events
``observed.event_calls`` reads, and a Logfire log's level, ``observed.log_level``: an event of
its span, no node),
the step name and status of each step attempt (``step``), the agent of each run (``run``),
the tool name and status of each tool call (``tool``) and the steps of the observed plans
(``plan_step``: the plan's span, step id, tool, position; none in a trace that declares a
plan)."""

_NO_ROW: Final[dict[str, Any]] = {"step": "", "tool": "", "inferred": 0, "failed": 0}
"""What a span without a step or tool row contributes to its node."""


_BIND_VERSIONS_SQL: Final = """
SELECT TraceId AS trace_id, sum(SpanCount) AS spans, toUnixTimestamp64Nano(min(Start)) AS start_ns,
       toUnixTimestamp64Nano(max(End)) AS end_ns
FROM planscope_trace_index WHERE Project = {project:String} AND TraceId IN {ids:Array(String)}
GROUP BY TraceId
"""
"""Per trace, its span count and time range from the trace index (a primary-key read). What
:data:`BIND_NODES_SQL` reads of a trace whose whole range is within the read's is all its spans
and the typed rows the span views derived from them at insert, so the span count says when a
cached binding is stale: the trace gained spans."""

Bound = tuple[list[SpanNode], Binding]
"""A trace's nodes and their binding, as :func:`bind_traces` returns them."""


class BindingCache:
    """The bindings of the last ``size`` traces :func:`bind_traces` bound, least recently used
    dropped first, each kept with the span count it was bound at (:data:`_BIND_VERSIONS_SQL`),
    keyed by project and trace: a repeated read re-binds only the traces that gained spans.
    Thread-safe; the ``Store`` owns one (``Store.bindings``) for the life of the process. The
    default size holds the framework traces of several busy days (~10 KB each).

    >>> cache = BindingCache(size=1)
    >>> cache.put("p", "t1", 7, ([], Binding()))
    >>> cache.get("p", "t1", 7) is not None, cache.get("p", "t1", 8), cache.get("q", "t1", 7)
    (True, None, None)
    >>> cache.put("p", "t2", 1, ([], Binding())); cache.get("p", "t1", 7) is None
    True
    """

    def __init__(self, size: int = 20_000) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[str, str], tuple[Any, Bound]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, project: str, trace_id: str, version: Any) -> Bound | None:
        """The binding of ``trace_id`` in ``project`` if it was bound from rows of ``version``."""
        with self._lock:
            entry = self._entries.get((project, trace_id))
            if entry is None or entry[0] != version:
                return None
            self._entries.move_to_end((project, trace_id))
            return entry[1]

    def put(self, project: str, trace_id: str, version: Any, bound: Bound) -> None:
        """Keep ``bound`` as the binding of ``trace_id`` in ``project`` at ``version``."""
        with self._lock:
            self._entries[(project, trace_id)] = (version, bound)
            self._entries.move_to_end((project, trace_id))
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)


def bind_traces(
    query: Query,
    where: str,
    params: Mapping[str, Any],
    cache: BindingCache | None = None,
) -> dict[str, Bound]:
    """Bind across spans (``planscope_collector.observed.bind``) the traces with structure the
    span model inferred among those whose typed rows ``where`` selects (a condition on
    ``Project``, ``TraceId``, ``Start`` with ``{name:Type}`` parameters from ``params``, which
    holds ``project``); planscope's own traces are left out (nothing to bind). One read finds
    them, one more reads what binding needs of all of them (:data:`BIND_NODES_SQL`: their spans
    from :data:`CLOCK_SKEW_NS` before their inferred rows, or from ``params["since"]`` when
    earlier, to :data:`CLOCK_SKEW_NS` after); the result
    goes to :func:`binding_parameters`. ``query`` is ``Store.query``. The query API, ``/api/stats``
    and the alert rules all bind through here. With a ``cache`` (``Store.bindings``) another
    read first takes each trace's span count and range from the trace index
    (:data:`_BIND_VERSIONS_SQL`); only traces not cached at that count are read and bound again,
    and only traces wholly within the read's range are cached.

    >>> def query(sql, params):  # a store's answers for one pydantic-ai-like trace
    ...     if "Inferred = 1" in sql and "'span'" not in sql:
    ...         return [{"trace_id": "t1", "start_ns": 2, "end_ns": 3}]
    ...     span = dict(row="span", trace_id="t1", kind="", inferred=0, failed=0, step="",
    ...                 tool="", duration_ns=3, message="", service="s", position=0,
    ...                 workflow=0, links=[], messages={}, conversation={}, results={},
    ...                 answers={},
    ...                 events=[],
    ...                 log_level=0)
    ...     return [span | dict(span_id="app", parent_span_id="", name="agent", start_ns=1),
    ...             span | dict(span_id="e", parent_span_id="app", name="executor",
    ...                         kind="step", start_ns=2),
    ...             span | dict(row="step", span_id="e", step="executor", inferred=1)]
    >>> bound = bind_traces(query, "Project = {project:String}", {"project": "default"})
    >>> bound["t1"][1].run_span_id
    'app'
    """
    sql = _INFERRED_TRACES.format(where=where)
    found = query(sql, used_parameters(sql, params))
    if not found:
        return {}
    since = min(int(r["start_ns"]) for r in found) - CLOCK_SKEW_NS
    if "since" in params:  # the caller's range may hold a root that starts earlier still
        since = min(since, int(params["since"]))
    read = {
        "project": params["project"],
        "ids": [r["trace_id"] for r in found],
        "since": since,
        "until": max(int(r["end_ns"]) for r in found) + CLOCK_SKEW_NS,
    }
    out: dict[str, Bound] = {}
    versions: dict[str, int] = {}
    if cache is not None:
        for r in query(_BIND_VERSIONS_SQL, used_parameters(_BIND_VERSIONS_SQL, read)):
            if read["since"] <= int(r["start_ns"]) and int(r["end_ns"]) <= read["until"]:
                versions[r["trace_id"]] = int(r["spans"])
                cached = cache.get(read["project"], r["trace_id"], int(r["spans"]))
                if cached is not None:
                    out[r["trace_id"]] = cached
        read["ids"] = [t for t in read["ids"] if t not in out]
        if not read["ids"]:
            return out
    spans: dict[str, dict[str, dict[str, Any]]] = {}
    typed: dict[str, dict[str, Any]] = {}
    plan_steps: dict[str, list[ObservedStep]] = {}
    agents: dict[str, dict[str, str]] = {}
    for r in query(BIND_NODES_SQL, read):
        if r["row"] == "span":
            spans.setdefault(r["trace_id"], {})[r["span_id"]] = r
        elif r["row"] == "run":
            agents.setdefault(r["trace_id"], {})[r["span_id"]] = r["step"]
        elif r["row"] == "plan_step":
            step = ObservedStep(r["span_id"], r["step"], r["tool"], int(r["position"]))
            plan_steps.setdefault(r["trace_id"], []).append(step)
        else:
            typed[r["span_id"]] = r
    for trace_id, by_id in spans.items():
        nodes = []
        for r in by_id.values():
            t = typed.get(r["span_id"], _NO_ROW)
            kind = r["kind"] or "other"
            named, io = recorded_work(dict(r["answers"]), kind)
            nodes.append(
                SpanNode(
                    r["span_id"],
                    r["parent_span_id"],
                    kind,
                    r["name"],
                    step_name=t["step"] if kind == A.KIND_STEP else "",
                    inferred=bool(t["inferred"] if t is not _NO_ROW else r["inferred"]),
                    failed=bool(r["failed"] or t["failed"]),
                    tool=t["tool"],
                    start_ns=int(r["start_ns"]),
                    message=r["message"],
                    duration_ns=int(r["duration_ns"]),
                    service=r["service"],
                    workflow=bool(r["workflow"]),
                    links=tuple(r["links"]),
                    request=user_request(dict(r["messages"])) if r["messages"] else "",
                    answer=answer(dict(r["answers"]), kind, bool(r["inferred"]))
                    if r["answers"]
                    else "",
                    app_step=named,
                    io=io,
                    log_level=int(r["log_level"]),
                    handed=function_results(dict(r["results"])) if r["results"] else (),
                )
            )
        events = [
            ToolEvent(r["span_id"], int(time_ns), name, dict(attributes))
            for r in by_id.values()
            for time_ns, name, attributes in r["events"]
        ] + [
            e
            for r in by_id.values()
            if r["conversation"]
            for e in conversation_tool_events(
                r["span_id"],
                r["parent_span_id"],
                int(r["start_ns"]),
                int(r["start_ns"]) + int(r["duration_ns"]),
                dict(r["conversation"]),
            )
        ]
        steps = plan_steps.get(trace_id, [])
        binding = bind(nodes, steps, events=events, agents=agents.get(trace_id, {}))
        out[trace_id] = (nodes, binding)
        if cache is not None and trace_id in versions:
            cache.put(read["project"], trace_id, versions[trace_id], out[trace_id])
    return out


def used_parameters(sql: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters ``sql`` has a ``{name:Type}`` placeholder for (``Store.query`` refuses
    others; the SQL of a binding has only the placeholders that binding needs).

    >>> used_parameters("SELECT {a:UInt8}", {"a": 1, "b": 2})
    {'a': 1}
    """
    return {name: value for name, value in params.items() if "{" + name + ":" in sql}

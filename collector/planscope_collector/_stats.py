"""Aggregate query endpoints (``/api/stats/...``), computed in ClickHouse.

Every query is scoped to the caller's project (``project_of``) and every value is a bound
``{name:Type}`` parameter. A *run* is a trace with a run in the span model (``planscope_runs``,
or a grouping run found across spans; nested runs of one trace count once, by the outermost =
earliest run span); the time range selects runs by their start. Per-run numbers are the run
model's (``planscope_collector.runmodel``: attempts, retries, failed steps, plan versions,
replans, tokens, cost), read only for the selected runs, plus budget-exceeded events
(``planscope.retry_budget.exceeded`` on step spans) from ``otel_traces``. The range's traces
with structure the span model inferred (a framework's) are bound across spans first
(``runmodel.bind_traces``), exactly as ``/api/traces`` binds them, so the totals are the sums
over the trace list's rows; planscope's own traces are counted in SQL alone.

Tables are partitioned by day on start time; a run's children start no earlier than the run, so
the lower time bound prunes every table's partitions.
"""

from __future__ import annotations

from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, Query, Request
from planscope import api
from planscope import semconv as A

from .extensions import project_of
from .runmodel import (
    STEP_FAILED,
    bind_traces,
    binding_parameters,
    run_metrics_sql,
    runs_sql,
    step_attempts_sql,
    used_parameters,
)
from .storage import Store

MAX_BUCKETS = 10_000
"""Most rows ``/api/stats/runs`` answers (buckets x outcomes); a narrower range or a wider
bucket is needed beyond."""

_TEXT = Annotated[str | None, Query(max_length=512)]
_MAX_NS = (1 << 63) - 1  # DateTime64(9)'s end: larger values are a 400, never SQL
_SINCE = Annotated[int | None, Query(description="run start from, unix ns", ge=0, le=_MAX_NS)]
_UNTIL = Annotated[int | None, Query(description="run start before, unix ns", ge=0, le=_MAX_NS)]


class _Scope:
    """The WHERE clauses and bound parameters shared by the stats queries; the runs' SQL is
    built for a binding (:meth:`binding`: the range's traces with inferred structure, bound
    across spans as ``/api/traces`` binds them)."""

    def __init__(
        self,
        project: str,
        since_ns: int | None,
        until_ns: int | None,
        service: str | None = None,
        agent: str | None = None,
    ) -> None:
        self.params: dict[str, Any] = {"project": project, "event": A.EVENT_RETRY_BUDGET_EXCEEDED}
        run_where = ["Project = {project:String}"]
        child_where = ["Project = {project:String}"]
        index_where = ["Project = {project:String}"]
        if since_ns is not None:
            self.params["since"] = since_ns
            run_where.append("Start >= fromUnixTimestamp64Nano({since:Int64})")
            child_where.append("Start >= fromUnixTimestamp64Nano({since:Int64})")
        if until_ns is not None:
            self.params["until"] = until_ns
            run_where.append("Start < fromUnixTimestamp64Nano({until:Int64})")
            # A trace that started before ``until`` has a partial index row that did.
            index_where.append("Start < fromUnixTimestamp64Nano({until:Int64})")
        bind_where = list(child_where)
        if service:
            self.params["service"] = service
            service_where = ["Project = {project:String}", "has(Services, {service:String})"]
            if since_ns is not None:
                # A partial index row starts no earlier than its trace.
                service_where.append("Start >= fromUnixTimestamp64Nano({since:Int64})")
            run_where.append(
                f"TraceId IN (SELECT TraceId FROM planscope_trace_index "
                f"WHERE {' AND '.join(service_where)})"
            )
            index_where.append("has(Services, {service:String})")
        if len(index_where) > 1:
            bind_where.append(
                f"TraceId IN (SELECT TraceId FROM planscope_trace_index "
                f"WHERE {' AND '.join(index_where)})"
            )
        self.having = ""
        if agent:
            self.params["agent"] = agent
            self.having = "HAVING agent = {agent:String}"
        self.child_where = " AND ".join(child_where)
        if agent or service or until_ns is not None:
            # The runs are a subset of what the lower time bound selects: read only theirs.
            self.child_where += " AND TraceId IN (SELECT TraceId FROM run_ids)"
        self.otel_where = self.child_where.replace("Start >=", "Timestamp >=")
        self.run_where = " AND ".join(run_where)
        self.run_filter = self.run_where
        if agent:
            self.run_filter += " AND TraceId IN (SELECT TraceId FROM run_ids)"
        self.bind_where = " AND ".join(bind_where)
        """The typed rows whose traces may hold a selected run (no agent filter: an inferred
        run's agent is known once bound)."""

    def binding(self, store: Store) -> dict[str, Any]:
        """The binding parameters of the range's traces with structure the span model inferred
        (``runmodel.bind_traces``); planscope's own traces need none."""
        return binding_parameters(
            bind_traces(store.query, self.bind_where, self.params, store.bindings)
        )

    def run_ids_sql(self, binding: dict[str, Any]) -> str:
        """The selected runs' traces (``TraceId``, ``agent``: the outermost run's)."""
        return f"""
            SELECT TraceId, argMin(AgentName, Start) AS agent
            FROM {runs_sql(self.run_where, binding)}
            GROUP BY TraceId {self.having}
        """

    def with_runs(self, body: str, binding: dict[str, Any]) -> str:
        """``body`` with the CTEs ``run_ids`` (selected traces) and ``runs`` (per-run numbers:
        the run model's metrics, plus budget-exceeded events)."""
        metrics = run_metrics_sql(self.child_where, self.run_filter, binding=binding)
        runs = f"""
            SELECT m.TraceId AS TraceId, m.Outcome AS outcome, m.Agent AS agent,
                   m.Variant AS variant, m.RunStart AS start, m.RunDuration AS duration,
                   m.InputTokens AS input_tokens, m.OutputTokens AS output_tokens,
                   m.CostUsd AS cost_usd, m.StepAttempts AS attempts, m.Retries AS retries,
                   m.FailedSteps AS failed_steps, m.PlanVersions AS plan_versions,
                   m.Replans AS replans, e.budget_exceeded AS budget_exceeded
            FROM ({metrics}) AS m
            LEFT JOIN (
                SELECT TraceId, count() AS budget_exceeded
                FROM otel_traces
                WHERE {self.otel_where} AND has(Events.Name, {{event:String}})
                GROUP BY TraceId
            ) AS e ON e.TraceId = m.TraceId
            WHERE m.HasRun = 1
        """
        return f"WITH run_ids AS ({self.run_ids_sql(binding)}), runs AS ({runs})\n{body}"


def _query(store: Store, sql: str, scope: _Scope, binding: dict[str, Any], **extra: Any) -> Any:
    """``sql`` with the scope's, the binding's and ``extra`` parameters it uses."""
    return store.query(sql, used_parameters(sql, {**scope.params, **binding, **extra}))


_AGGREGATES = """
    count() AS runs,
    countIf(outcome = 'success') AS successes,
    countIf(outcome = 'failure') AS failures,
    sum(input_tokens) AS input_tokens,
    sum(output_tokens) AS output_tokens,
    sum(cost_usd) AS cost_usd,
    quantileExact(0.5)(duration) AS p50_duration_ns,
    quantileExact(0.95)(duration) AS p95_duration_ns,
    sum(attempts) AS step_attempts,
    sum(retries) AS retries,
    sum(failed_steps) AS failed_steps,
    sum(replans) AS replans,
    sum(budget_exceeded) AS budget_exceeded
"""


def _empty_totals() -> dict[str, Any]:
    names: tuple[str, ...] = ("runs", "successes", "failures", "input_tokens", "output_tokens")
    names += ("step_attempts", "retries", "failed_steps", "replans", "budget_exceeded")
    return {
        **dict.fromkeys(names, 0),
        "cost_usd": 0.0,
        "p50_duration_ns": None,
        "p95_duration_ns": None,
    }


def _rate(row: dict[str, Any]) -> None:
    decided = row["successes"] + row["failures"]
    row["success_rate"] = round(row["successes"] / row["runs"], 4) if decided else None
    row["cost_usd"] = round(float(row["cost_usd"]), 9)
    for key in ("p50_duration_ns", "p95_duration_ns"):
        value = row.get(key)
        if value is None or not row["runs"]:  # quantiles of nothing are NaN or 0
            row[key] = None
        else:
            row[key] = int(value)


def run_stats(store: Store, scope: _Scope, bucket_s: int) -> dict[str, Any]:
    """Runs per (time bucket, outcome), the range's totals and per-agent failures."""
    # One pass over the runs: GROUPING SETS give buckets x outcome, per agent and the totals.
    # grouping() has a bit set for each key column NOT grouped by: 1 = (bucket, outcome),
    # 6 = (agent), 7 = ().
    binding = scope.binding(store)
    sql = scope.with_runs(
        f"""
            SELECT toUnixTimestamp64Nano(toDateTime64(
                       toStartOfInterval(start, toIntervalSecond({{bucket:UInt32}})), 9
                   )) AS bucket_ns,
                   outcome, agent, grouping(bucket_ns, outcome, agent) AS grouping_set,
                   {_AGGREGATES}
            FROM runs
            GROUP BY GROUPING SETS ((bucket_ns, outcome), (agent), ())
            ORDER BY grouping_set, bucket_ns, outcome, failures DESC, runs DESC, agent""",
        binding,
    )
    rows = _query(store, sql, scope, binding, bucket=bucket_s)
    buckets = [r for r in rows if r["grouping_set"] == 1]
    agents = [
        {"agent": r["agent"], "runs": r["runs"], "failures": r["failures"]}
        for r in rows
        if r["grouping_set"] == 6
    ][:100]
    totals = next((r for r in rows if r["grouping_set"] == 7), None) or _empty_totals()
    for row in buckets:
        del row["agent"], row["grouping_set"]
    for key in ("bucket_ns", "outcome", "agent", "grouping_set"):
        totals.pop(key, None)
    truncated = len(buckets) > MAX_BUCKETS
    for row in [*buckets, totals]:
        _rate(row)
    for row in agents:
        row["failure_rate"] = round(row["failures"] / row["runs"], 4) if row["runs"] else 0.0
    return {
        "bucket_seconds": bucket_s,
        "buckets": buckets[:MAX_BUCKETS],
        "truncated": truncated,
        "totals": totals,
        "agents": agents,
    }


def step_stats(store: Store, scope: _Scope, limit: int) -> dict[str, Any]:
    """Per (agent, step id) over the runs of the range: worst (failed runs, retries) first.

    A step *failed* in a run when its last attempt that ran (not ``skipped``) did not succeed
    (status other than ``ok``, or the executor self-assessed ``failure``).
    """
    binding = scope.binding(store)
    sql = f"""
        WITH run_ids AS ({scope.run_ids_sql(binding)})
        SELECT r.agent AS agent, a.StepId AS step,
               count() AS runs, sum(a.n) AS attempts, sum(a.n - 1) AS retries,
               sum(a.errors) AS error_attempts, countIf(a.failed) AS failed_runs,
               sum(e.exceeded) AS budget_exceeded
        FROM (
            SELECT TraceId, StepId, count() AS n,
                   countIf(Status = 'error') AS errors, {STEP_FAILED} AS failed
            FROM {step_attempts_sql(scope.child_where, binding)}
            GROUP BY TraceId, StepId
        ) AS a
        INNER JOIN run_ids AS r ON r.TraceId = a.TraceId
        LEFT JOIN (
            SELECT TraceId, SpanAttributes[{{step_key:String}}] AS StepId, count() AS exceeded
            FROM otel_traces
            WHERE {scope.otel_where} AND has(Events.Name, {{event:String}})
            GROUP BY TraceId, StepId
        ) AS e ON e.TraceId = a.TraceId AND e.StepId = a.StepId
        GROUP BY agent, step
        ORDER BY failed_runs DESC, retries DESC, error_attempts DESC, agent, step
        LIMIT {{limit:UInt32}}
    """
    rows = _query(store, sql, scope, binding, limit=limit, step_key=A.STEP_ID)
    return {"steps": rows, "limit": limit}


def variant_stats(store: Store, scope: _Scope) -> dict[str, Any]:
    """Per runtime variant: runs, success rate, tokens, cost, latency, replans, retries."""
    binding = scope.binding(store)
    body = f"SELECT variant, {_AGGREGATES} FROM runs GROUP BY variant ORDER BY variant LIMIT 1000"
    rows = _query(store, scope.with_runs(body, binding), scope, binding)
    for row in rows:
        _rate(row)
        runs = row["runs"] or 1
        row["tokens_per_run"] = round((row["input_tokens"] + row["output_tokens"]) / runs, 2)
        row["cost_per_run_usd"] = round(row["cost_usd"] / runs, 9)
        row["replans_per_run"] = round(row["replans"] / runs, 4)
        row["retries_per_run"] = round(row["retries"] / runs, 4)
    return {"variants": rows}


router = APIRouter()


def _store(request: Request) -> Store:
    store: Store = request.app.state.collector.store
    return store


def _run_scope(
    proj: Annotated[str, Depends(project_of)],
    since: _SINCE = None,
    until: _UNTIL = None,
    service: _TEXT = None,
    agent: _TEXT = None,
) -> _Scope:
    """FastAPI dependency: the caller's project and the filters every stats route takes."""
    return _Scope(proj, since, until, service, agent)


_RunScope = Annotated[_Scope, Depends(_run_scope)]


@router.get("/api/stats/runs", response_model=api.RunStats)
async def stats_runs(
    request: Request,
    scope: _RunScope,
    bucket: Annotated[int, Query(ge=1, le=366 * 86400, description="seconds")] = 3600,
) -> dict[str, Any]:
    """Runs per time bucket and outcome: runs, tokens, cost, p50/p95 duration, retries."""
    store = _store(request)
    return await anyio.to_thread.run_sync(lambda: run_stats(store, scope, bucket))


@router.get("/api/stats/steps", response_model=api.StepStats)
async def stats_steps(
    request: Request,
    scope: _RunScope,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
) -> dict[str, Any]:
    """Per (agent, step id): runs, attempts, retries, error attempts, failed runs, budget."""
    store = _store(request)
    return await anyio.to_thread.run_sync(lambda: step_stats(store, scope, limit))


@router.get("/api/stats/variants", response_model=api.VariantStats)
async def stats_variants(request: Request, scope: _RunScope) -> dict[str, Any]:
    """Per runtime variant: runs, success rate, tokens, cost, latency p50/p95, replans, retries."""
    store = _store(request)
    return await anyio.to_thread.run_sync(lambda: variant_stats(store, scope))

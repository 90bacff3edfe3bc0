"""Rule evaluation: one parameterised query per rule over the derived tables' recent window.

Every query binds its values server-side (``{name:Type}``) and reads only rows whose ``Start``
(``TraceStart`` for findings) is within the rule's window, so the cost is bounded by the window,
not by the table. Attribute-derived columns are the typed columns of the span model (0011);
a framework's traces in the window are bound across spans first, as ``/api/traces`` binds them
(``planscope_collector.runmodel.bind_traces``: run, agent and step scopes, and the agent
filter of the others), so a rule counts the runs and attempts the trace list shows;
the string literals below are values from ``planscope.semconv`` (``tests/alerts`` checks them).

>>> ev = Evaluation(False, 0.0, 1.0, "ok", {})
>>> ev.firing
False
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from planscope_collector.runmodel import (
    STEP_ATTEMPT_COUNT,
    BindingCache,
    Query,
    bind_traces,
    binding_parameters,
    run_metrics_sql,
    runs_sql,
    step_attempts_sql,
    used_parameters,
)

from ._rules import BurnRateRule, FindingCountRule, RetryBudgetRule

__all__ = ["Evaluation", "evaluate_rule"]

MAX_SAMPLES = 20
"""Violating units kept as evidence (the worst first)."""


@dataclass(frozen=True)
class Evaluation:
    """The outcome of evaluating one rule now.

    Attributes:
        firing: the rule's condition holds.
        value: what was measured (violations, a share, tokens per minute...).
        threshold: what ``value`` is compared with.
        summary: one sentence for people (notifications, the CLI).
        evidence: JSON-ready detail: population, violating units, samples with trace and step
            ids, counts and limits.
        trace_ids: the traces of the samples, worst first.
    """

    firing: bool
    value: float
    threshold: float
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)
    trace_ids: tuple[str, ...] = ()


# --- SQL ------------------------------------------------------------------------------------
# Shared filters. '' (or -1 for limits) means "no filter / no limit".
_SINCE = "fromUnixTimestamp64Nano({since:Int64})"
_WINDOW = "Project = {project:String} AND Start >= " + _SINCE
"""The typed rows of the window; a framework's traces among them are bound across spans first
(``planscope_collector.runmodel.bind_traces``), as ``/api/traces`` binds them."""
_RUN_WINDOW = "Project = {project:String} AND End >= " + _SINCE
_AGENT_MARK = "AND /*agent*/ 1"


def _with_agent(sql: str, agent: str | None, binding: Mapping[str, Any]) -> str:
    """Add the agent filter only when the rule has one (an IN subquery is not free): traces
    whose run (a bound grouping run too) is the agent's."""
    if not agent:
        return sql.replace(_AGENT_MARK, "")
    runs = runs_sql(_RUN_WINDOW + " AND AgentName = {agent:String}", binding)
    return sql.replace(_AGENT_MARK, f"AND TraceId IN (SELECT TraceId FROM {runs})")


def step_sql(binding: Mapping[str, Any]) -> str:
    """Step scope: one unit per (trace, step id) as bound; attempts = the run model's attempt
    count of the step (the highest attempt number, counting an attempt an enforced budget
    refused, or the number of attempt spans when attempts are unnumbered)."""
    return f"""
SELECT '' AS Grp, count() AS Units, countIf(Val > {{limit:Int64}}) AS Violating,
       arraySlice(arrayReverseSort(x -> tupleElement(x, 4),
           groupArrayIf((TraceId, RunId, StepId, Val), Val > {{limit:Int64}})),
           1, {{samples:UInt32}}) AS Samples
FROM (
    SELECT TraceId, StepId, any(RunId) AS RunId, toInt64({STEP_ATTEMPT_COUNT}) AS Val
    FROM (SELECT * FROM {step_attempts_sql(_WINDOW, binding)})
    WHERE ({{step_id:String}} = '' OR StepId = {{step_id:String}})
      AND ({{service:String}} = '' OR ServiceName = {{service:String}})
      {_AGENT_MARK}
    GROUP BY TraceId, StepId
)
"""


# tool scope: one unit per (trace, step id, tool); value = calls of the tool for that step.
TOOL_SQL = f"""
SELECT Tool AS Grp, count() AS Units, countIf(Val > {{limit:Int64}}) AS Violating,
       arraySlice(arrayReverseSort(x -> tupleElement(x, 5),
           groupArrayIf((TraceId, RunId, StepId, Tool, Val), Val > {{limit:Int64}})),
           1, {{samples:UInt32}}) AS Samples
FROM (
    SELECT TraceId, StepId, toString(ToolName) AS Tool, any(RunId) AS RunId,
           toInt64(count()) AS Val
    FROM planscope_tool_calls
    WHERE Project = {{project:String}} AND Start >= {_SINCE}
      AND ({{tool:String}} = '' OR ToolName = {{tool:String}})
      AND ({{step_id:String}} = '' OR StepId = {{step_id:String}})
      AND ({{service:String}} = '' OR ServiceName = {{service:String}})
      {_AGENT_MARK}
    GROUP BY TraceId, StepId, ToolName
)
GROUP BY Grp
"""


def run_sql(binding: Mapping[str, Any]) -> str:
    """Run / agent scope: one unit per trace with activity in the window, measured by the run
    model (``planscope_collector.runmodel``, bound: the worst step's attempt count, the run's
    attempts, replans, tokens, cost). A limit of -1 is "not set"."""
    metrics = run_metrics_sql(_WINDOW, _RUN_WINDOW, binding=binding)
    return f"""
SELECT if({{by_agent:Bool}}, Agent, '') AS Grp, count() AS Units,
       countIf(Violates) AS Violating,
       arraySlice(arrayReverseSort(x -> tupleElement(x, 5),
           groupArrayIf((TraceId, RunId, Agent, WorstStep, WorstAttempts, RunAttempts, RunReplans,
                         RunTokens, RunCost), Violates)),
           1, {{samples:UInt32}}) AS Samples
FROM (
    -- Aliases differ from the metrics columns: an alias named like a column (StepAttempts)
    -- would replace that column everywhere else in this SELECT.
    SELECT TraceId, RunId, Agent, WorstStep, toInt64(WorstStepAttempts) AS WorstAttempts,
           toInt64(StepAttempts) AS RunAttempts, toInt64(Replans) AS RunReplans,
           toInt64(Tokens) AS RunTokens, CostUsd AS RunCost,
           ({{l_step:Int64}} >= 0 AND WorstAttempts > {{l_step:Int64}})
           OR ({{l_run:Int64}} >= 0 AND RunAttempts > {{l_run:Int64}})
           OR ({{l_replans:Int64}} >= 0 AND RunReplans > {{l_replans:Int64}})
           OR ({{l_tokens:Int64}} >= 0 AND RunTokens > {{l_tokens:Int64}})
           OR ({{l_cost:Float64}} >= 0 AND RunCost > {{l_cost:Float64}}) AS Violates
    FROM ({metrics})
    WHERE ({{agent:String}} = '' OR Agent = {{agent:String}})
      AND ({{service:String}} = '' OR Service = {{service:String}})
)
GROUP BY Grp
"""


# findings of the analyzer (migration 0004), newest version of each, tombstones excluded.
FINDINGS_SQL = f"""
SELECT Kind, Severity, count() AS N,
       arraySlice(groupArray((TraceId, RunId, StepId, Component)), 1, {{samples:UInt32}})
           AS Samples
FROM findings FINAL
WHERE Project = {{project:String}} AND TraceStart >= {_SINCE} AND IsDeleted = 0
  AND ({{kind:String}} = '' OR Kind = {{kind:String}})
  AND has({{severities:Array(String)}}, Severity)
GROUP BY Kind, Severity
"""

# LLM usage in the window, per trace (the heaviest traces are the evidence).
BURN_SQL = f"""
SELECT toInt64(sum(T)) AS Tokens, sum(C) AS Cost, toInt64(sum(N)) AS Calls,
       arraySlice(arrayReverseSort(x -> tupleElement(x, 3), groupArray((TraceId, RunId, T, C))),
           1, {{samples:UInt32}}) AS Samples
FROM (
    SELECT TraceId, any(RunId) AS RunId, toInt64(sum(InputTokens + OutputTokens)) AS T,
           sum(EffectiveCostUsd) AS C, count() AS N
    FROM planscope_llm_costs
    WHERE Project = {{project:String}} AND Start >= {_SINCE}
      AND ({{model:String}} = '' OR Model = {{model:String}})
      AND ({{service:String}} = '' OR ServiceName = {{service:String}})
      {_AGENT_MARK}
    GROUP BY TraceId
)
"""


def _bound_query(
    query: Query,
    sql: Callable[[Mapping[str, Any]], str],
    params: Mapping[str, Any],
    bind: bool,
    bindings: BindingCache | None,
) -> list[dict[str, Any]]:
    """Run the SQL ``sql`` builds for the window's binding (``bind``: the traces of the window
    with structure the span model inferred, bound across spans, through the ``bindings``
    cache; else none)."""
    binding = binding_parameters(bind_traces(query, _WINDOW, params, bindings)) if bind else {}
    text = sql(binding)
    return query(text, used_parameters(text, {**params, **binding}))


def _lim(value: int | float | None) -> int:
    return -1 if value is None else int(value)


def _since_ns(now: float, window: float) -> int:
    return int((now - window) * 1e9)


def evaluate_rule(
    rule: Any,
    project: str,
    query: Query,
    *,
    now: float | None = None,
    bindings: BindingCache | None = None,
) -> Evaluation:
    """Evaluate ``rule`` for ``project`` at ``now`` (unix seconds) through ``query``, reusing
    the framework traces' bindings in ``bindings`` (``Store.bindings``) when given.

    >>> rule = BurnRateRule(id="b", kind="burn_rate", max_tokens_per_minute=10, window="1m")
    >>> fake = lambda sql, p: [{"Tokens": 20, "Cost": 0.0, "Calls": 2, "Samples": []}]
    >>> evaluate_rule(rule, "default", fake, now=0).firing
    True
    """
    now = time.time() if now is None else now
    if isinstance(rule, RetryBudgetRule):
        return _retry_budget(rule, project, query, now, bindings)
    if isinstance(rule, FindingCountRule):
        return _findings(rule, project, query, now)
    if isinstance(rule, BurnRateRule):
        return _burn(rule, project, query, now, bindings)
    raise TypeError(f"not an alert rule: {rule!r}")


def _retry_budget(
    rule: RetryBudgetRule, project: str, query: Query, now: float, bindings: BindingCache | None
) -> Evaluation:
    budget = rule.retry_budget()
    base: dict[str, Any] = {
        "project": project,
        "since": _since_ns(now, rule.window_seconds),
        "samples": MAX_SAMPLES,
        "agent": rule.agent or "",
        "service": rule.service or "",
    }
    limits: dict[str, float | int] = {}
    names: tuple[str, ...]
    if rule.scope in ("step", "tool"):
        assert budget.max_attempts_per_step is not None  # validated
        limits["max_attempts_per_step"] = budget.max_attempts_per_step
        params = {**base, "limit": budget.max_attempts_per_step, "step_id": rule.step_id or ""}
        if rule.scope == "step":
            rows = _bound_query(
                query,
                lambda b: _with_agent(step_sql(b), rule.agent, b),
                params,
                bind=True,
                bindings=bindings,
            )
            names = ("trace_id", "run_id", "step_id", "attempts")
        else:
            params["tool"] = rule.tool or ""
            rows = _bound_query(
                query,
                lambda b: _with_agent(TOOL_SQL, rule.agent, b),
                params,
                bind=bool(rule.agent),
                bindings=bindings,
            )
            names = ("trace_id", "run_id", "step_id", "tool", "calls")
    else:
        for name in ("max_attempts_per_step", "max_attempts_per_run", "max_replans", "max_tokens"):
            if getattr(budget, name) is not None:
                limits[name] = getattr(budget, name)
        if rule.max_cost_usd is not None:
            limits["max_cost_usd"] = rule.max_cost_usd
        params = {
            **base,
            "by_agent": rule.scope == "agent",
            "l_step": _lim(budget.max_attempts_per_step),
            "l_run": _lim(budget.max_attempts_per_run),
            "l_replans": _lim(budget.max_replans),
            "l_tokens": _lim(budget.max_tokens),
            "l_cost": -1.0 if rule.max_cost_usd is None else float(rule.max_cost_usd),
        }
        rows = _bound_query(query, run_sql, params, bind=True, bindings=bindings)
        names = (
            "trace_id", "run_id", "agent", "worst_step_id", "step_attempts", "attempts",
            "replans", "tokens", "cost_usd",
        )  # fmt: skip
    groups = []
    samples: list[dict[str, Any]] = []
    firing_groups = []
    for row in rows:
        units, violating = int(row["Units"]), int(row["Violating"])
        if units == 0:
            continue
        share = violating / units
        group = {"group": row["Grp"], "units": units, "violating": violating, "share": share}
        groups.append(group)
        fires = violating >= rule.min_count and (
            rule.threshold_share is None or share > rule.threshold_share
        )
        if fires:
            firing_groups.append(group)
        for sample in row["Samples"]:
            item = dict(zip(names, sample, strict=True))
            item["exceeded"] = _exceeded(item, limits)
            samples.append(item)
    value_key = "share" if rule.threshold_share is not None else "violating"
    pool = firing_groups or groups
    top = max(pool, key=lambda g: g[value_key]) if pool else None
    value = float(top[value_key]) if top else 0.0
    threshold = float(rule.threshold_share if rule.threshold_share is not None else rule.min_count)
    unit = {"step": "steps", "tool": "tool uses", "run": "runs", "agent": "runs"}[rule.scope]
    where = _where(rule)
    if top is None:
        summary = f"no {unit} in the last {rule.window}{where}"
    else:
        lim = ", ".join(f"{k}={v}" for k, v in limits.items())
        who = (
            f" of {'agent' if rule.scope == 'agent' else 'tool'} {top['group']!r}"
            if (rule.scope in ("agent", "tool") and top["group"])
            else ""
        )
        summary = (
            f"{top['violating']} of {top['units']} {unit}{who} ({top['share']:.0%}) exceeded "
            f"{lim} in the last {rule.window}{where}"
        )
        if rule.threshold_share is not None:
            summary += f" (threshold: more than {rule.threshold_share:.0%})"
    samples.sort(
        key=lambda s: -float(s.get("attempts") or s.get("calls") or s.get("step_attempts") or 0)
    )
    return Evaluation(
        firing=bool(firing_groups),
        value=value,
        threshold=threshold,
        summary=summary,
        evidence={
            "scope": rule.scope,
            "window": rule.window,
            "limits": limits,
            "groups": groups,
            "samples": samples[:MAX_SAMPLES],
        },
        trace_ids=_unique(s["trace_id"] for s in samples),
    )


def _exceeded(item: Mapping[str, Any], limits: Mapping[str, float | int]) -> list[str]:
    observed = {
        # a run's sample: its worst step's count; a step's: its attempts; a tool use's: calls
        "max_attempts_per_step": item.get("step_attempts", item.get("attempts", item.get("calls"))),
        "max_attempts_per_run": item.get("attempts") if "step_attempts" in item else None,
        "max_replans": item.get("replans"),
        "max_tokens": item.get("tokens"),
        "max_cost_usd": item.get("cost_usd"),
    }
    out = []
    for name, limit in limits.items():
        seen = observed.get(name)
        if seen is not None and float(seen) > float(limit):
            out.append(f"{name}: {seen} > {limit}")
    return out


def _where(rule: Any) -> str:
    parts = [
        f"{k}={getattr(rule, k)!r}"
        for k in ("agent", "tool", "step_id", "model", "service")
        if getattr(rule, k, None)
    ]
    return f" ({', '.join(parts)})" if parts else ""


def _unique(values: Any) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for v in values:
        seen.setdefault(str(v), None)
    return tuple(seen)


def _findings(rule: FindingCountRule, project: str, query: Query, now: float) -> Evaluation:
    rows = query(
        FINDINGS_SQL,
        {
            "project": project,
            "since": _since_ns(now, rule.window_seconds),
            "samples": MAX_SAMPLES,
            "kind": rule.finding_kind or "",
            "severities": list(rule.severities()),
        },
    )
    total = sum(int(r["N"]) for r in rows)
    by_kind: dict[str, int] = {}
    samples = []
    for r in rows:
        by_kind[f"{r['Kind']}/{r['Severity']}"] = int(r["N"])
        for t, run, step, comp in r["Samples"]:
            samples.append(
                {"trace_id": t, "run_id": run, "step_id": step, "component": comp,
                 "kind": r["Kind"], "severity": r["Severity"]}
            )  # fmt: skip
    what = rule.finding_kind or "any kind"
    sev = f", severity >= {rule.min_severity}" if rule.min_severity else ""
    summary = (
        f"{total} finding(s) of {what}{sev} in the last {rule.window} (threshold: {rule.min_count})"
    )
    return Evaluation(
        firing=total >= rule.min_count,
        value=float(total),
        threshold=float(rule.min_count),
        summary=summary,
        evidence={"window": rule.window, "counts": by_kind, "samples": samples[:MAX_SAMPLES]},
        trace_ids=_unique(s["trace_id"] for s in samples),
    )


def _burn(
    rule: BurnRateRule, project: str, query: Query, now: float, bindings: BindingCache | None
) -> Evaluation:
    params = {
        "project": project,
        "since": _since_ns(now, rule.window_seconds),
        "samples": MAX_SAMPLES,
        "model": rule.model or "",
        "service": rule.service or "",
        "agent": rule.agent or "",
    }
    rows = _bound_query(
        query,
        lambda b: _with_agent(BURN_SQL, rule.agent, b),
        params,
        bind=bool(rule.agent),
        bindings=bindings,
    )
    empty: dict[str, Any] = {"Tokens": 0, "Cost": 0.0, "Calls": 0, "Samples": []}
    row = rows[0] if rows else empty
    minutes = rule.window_seconds / 60.0
    tpm = int(row["Tokens"]) / minutes
    cpm = float(row["Cost"]) / minutes
    checks: list[tuple[str, float, float]] = []
    if rule.max_tokens_per_minute is not None:
        checks.append(("tokens/min", tpm, rule.max_tokens_per_minute))
    if rule.max_cost_usd_per_minute is not None:
        checks.append(("USD/min", cpm, rule.max_cost_usd_per_minute))
    over = [c for c in checks if c[1] > c[2]]
    name, value, threshold = (over or checks)[0]
    summary = (
        f"{value:,.4g} {name} over the last {rule.window}{_where(rule)} "
        f"(threshold {threshold:,.4g})"
    )
    samples = [
        {"trace_id": t, "run_id": r, "tokens": int(tok), "cost_usd": float(c)}
        for t, r, tok, c in row["Samples"]
    ]
    return Evaluation(
        firing=bool(over),
        value=float(value),
        threshold=float(threshold),
        summary=summary,
        evidence={
            "window": rule.window,
            "tokens": int(row["Tokens"]),
            "cost_usd": float(row["Cost"]),
            "llm_calls": int(row["Calls"]),
            "tokens_per_minute": tpm,
            "cost_usd_per_minute": cpm,
            "samples": samples,
        },
        trace_ids=_unique(s["trace_id"] for s in samples),
    )


def sql_texts() -> Sequence[str]:
    """Every query text (tests check attribute-derived literals against planscope's names)."""
    bound = {k: ["x"] for k in ("bound_spans", "failed_spans", "promoted", "wrappers", "grouping")}
    texts = [FINDINGS_SQL]
    for binding in ({}, bound):
        texts += [step_sql(binding), run_sql(binding)]
        texts += [_with_agent(q, a, binding) for q in (step_sql(binding), TOOL_SQL, BURN_SQL)
                  for a in (None, "x")]  # fmt: skip
    return texts

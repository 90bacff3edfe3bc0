"""Read queries behind the query API. Every value is a bound parameter; every query is scoped
to one project, so one project can never read another's traces."""

from __future__ import annotations

from typing import Any

from planscope import safejson
from planscope import semconv as A

from .storage import Store, span_kind_sql, status_code_sql

_SPAN_COLUMNS = f"""
    toUnixTimestamp64Nano(Timestamp) AS start_ns, SpanId AS span_id,
    ParentSpanId AS parent_span_id, SpanName AS name, {span_kind_sql()} AS span_kind,
    ServiceName AS service, Duration AS duration_ns, {status_code_sql()} AS status_code,
    StatusMessage AS status_message, SpanAttributes AS attributes,
    ResourceAttributes AS resource, ScopeName AS scope,
    arrayMap(t -> toUnixTimestamp64Nano(t), Events.Timestamp) AS event_times,
    Events.Name AS event_names, Events.Attributes AS event_attributes,
    Links.TraceId AS link_trace_ids, Links.SpanId AS link_span_ids
"""

# Attributes whose values are JSON documents, parsed for the client.
_JSON_ATTRIBUTES = (A.PLAN_JSON, A.STEP_CONTEXT_KEYS, A.RUN_BUDGET)
NO_RUN = "(no run)"
"""The ``outcome`` filter value for traces without a planscope run span."""
_NO_RUN_COLUMNS: dict[str, Any] = {
    "step_attempts": None,
    "retries": None,
    "plan_versions": None,
    "replans": None,
}

_INT_ATTRIBUTES = (
    A.PLAN_VERSION,
    A.STEP_ATTEMPT,
    A.STEP_CONTEXT_TOKENS,
    A.GEN_AI_USAGE_INPUT_TOKENS,
    A.GEN_AI_USAGE_OUTPUT_TOKENS,
)


class TraceQueries:
    """The collector's read side.

    >>> # queries = TraceQueries(open_store("chdb:///tmp/ps/store"))
    >>> # queries.list_traces("default", None, None, None, None, 50, 0)["traces"]
    """

    def __init__(self, store: Store) -> None:
        self.store = store

    def list_traces(
        self,
        project: str,
        service: str | None,
        status: str | None,
        since_ns: int | None,
        until_ns: int | None,
        limit: int,
        offset: int,
        *,
        agent: str | None = None,
        variant: str | None = None,
        outcome: str | None = None,
        q: str | None = None,
    ) -> dict[str, Any]:
        """A page of traces, newest first, with run-level fields when the trace has a run.

        ``outcome`` ``(no run)`` selects traces without a run span and ``unknown`` runs without
        a recorded outcome; ``q`` is a case-insensitive substring of the trace id, run id, root
        span name, agent or variant. The page's traces get ``step_attempts``, ``retries``
        (attempts beyond the first, per step), ``plan_versions`` and ``replans``.
        """
        where = ["Project = {project:String}"]
        params: dict[str, Any] = {"project": project, "limit": limit + 1, "offset": offset}
        having = []
        bounds = []
        if service:
            having.append("has(services, {service:String})")
            params["service"] = service
        if since_ns is not None:
            having.append("start_ns >= {since:Int64}")
            bounds.append("Start >= fromUnixTimestamp64Nano({since:Int64})")
            params["since"] = since_ns
        if until_ns is not None:
            having.append("start_ns < {until:Int64}")
            bounds.append("Start < fromUnixTimestamp64Nano({until:Int64})")
            params["until"] = until_ns
        if bounds:
            # The index holds partial rows per trace, each starting no earlier than its trace:
            # a trace starts in [since, until) only if one of its partial rows does. This
            # prunes partitions before the exact check on the merged start in HAVING.
            where.append(
                "TraceId IN (SELECT TraceId FROM planscope_trace_index "
                f"WHERE Project = {{project:String}} AND {' AND '.join(bounds)})"
            )
        if status == "error":
            having.append("error_count > 0")
        elif status == "ok":
            having.append("error_count = 0")
        if agent:
            having.append("agent = {agent:String}")
            params["agent"] = agent
        if variant:
            having.append("variant = {variant:String}")
            params["variant"] = variant
        if outcome == NO_RUN:
            having.append("run_id = ''")
        elif outcome == "unknown":
            having.append("run_id != '' AND outcome IN ('', 'unknown')")
        elif outcome:
            having.append("outcome = {outcome:String}")
            params["outcome"] = outcome
        if q:
            having.append(
                "("
                + " OR ".join(
                    f"positionCaseInsensitiveUTF8({col}, {{q:String}}) > 0"
                    for col in ("trace_id", "run_id", "root_name", "agent", "variant")
                )
                + ")"
            )
            params["q"] = q
        sql = f"""
            SELECT TraceId AS trace_id,
                   toUnixTimestamp64Nano(min(Start)) AS start_ns,
                   toUnixTimestamp64Nano(max(End)) AS end_ns,
                   sum(SpanCount) AS span_count,
                   sum(ErrorCount) AS error_count,
                   groupUniqArrayArray(Services) AS services,
                   max(RootSpanName) AS root_name,
                   max(RootServiceName) AS root_service,
                   max(RunId) AS run_id,
                   max(AgentName) AS agent,
                   max(Variant) AS variant,
                   max(Outcome) AS outcome,
                   sum(InputTokens) AS input_tokens,
                   sum(OutputTokens) AS output_tokens,
                   sum(CostUsd) AS cost_usd
            FROM planscope_trace_index
            WHERE {" AND ".join(where)}
            GROUP BY TraceId
            {"HAVING " + " AND ".join(having) if having else ""}
            ORDER BY start_ns DESC, trace_id
            LIMIT {{limit:UInt32}} OFFSET {{offset:UInt32}}
        """
        rows = self.store.query(sql, params)
        more = len(rows) > limit
        rows = rows[:limit]
        extras = self._run_columns(project, [r["trace_id"] for r in rows if r["run_id"]])
        for row in rows:
            row["duration_ns"] = max(0, row["end_ns"] - row["start_ns"])
            row["status"] = "error" if row["error_count"] else "ok"
            row.update(extras.get(row["trace_id"], _NO_RUN_COLUMNS))
        return {
            "traces": rows,
            "limit": limit,
            "offset": offset,
            "next_offset": offset + limit if more else None,
        }

    def _run_columns(self, project: str, trace_ids: list[str]) -> dict[str, dict[str, Any]]:
        """Step attempts, retries, plan versions and replans of a page's runs (by trace id).

        Two grouped reads on tables ordered by (Project, TraceId), for the page's ids only.
        """
        if not trace_ids:
            return {}
        params = {"project": project, "ids": trace_ids}
        out: dict[str, dict[str, Any]] = {
            tid: {"step_attempts": 0, "retries": 0, "plan_versions": 0, "replans": 0}
            for tid in trace_ids
        }
        for row in self.store.query(
            """SELECT TraceId AS t, sum(n) AS attempts, sum(n - 1) AS retries
               FROM (SELECT TraceId, StepId, count() AS n FROM planscope_step_attempts
                     WHERE Project = {project:String} AND TraceId IN {ids:Array(String)}
                     GROUP BY TraceId, StepId)
               GROUP BY TraceId""",
            params,
        ):
            out[row["t"]].update(step_attempts=row["attempts"], retries=row["retries"])
        for row in self.store.query(
            """SELECT TraceId AS t, count() AS versions, count() - uniqExact(PlanId) AS replans
               FROM planscope_plans
               WHERE Project = {project:String} AND TraceId IN {ids:Array(String)}
               GROUP BY TraceId""",
            params,
        ):
            out[row["t"]].update(plan_versions=row["versions"], replans=row["replans"])
        return out

    def get_trace(
        self, project: str, trace_id: str, offset: int = 0, limit: int = 10_000
    ) -> dict[str, Any] | None:
        """One page of a trace's spans (in time order) with parsed planscope attributes, or None.

        ``span_count``, ``start_ns`` and ``end_ns`` describe the whole trace; ``next_offset`` is
        the offset of the next page (None on the last), so a 200,000-span trace is never
        answered whole.
        """
        params: dict[str, Any] = {"project": project, "trace_id": trace_id}
        where = "WHERE Project = {project:String} AND TraceId = {trace_id:String}"
        (total,) = self.store.query(
            f"""SELECT count() AS n, toUnixTimestamp64Nano(min(Timestamp)) AS start_ns,
                       max(toUnixTimestamp64Nano(Timestamp) + Duration) AS end_ns
                FROM otel_traces {where}""",
            params,
        )
        if not total["n"]:
            return None
        rows = self.store.query(
            f"""SELECT {_SPAN_COLUMNS} FROM otel_traces {where}
                ORDER BY Timestamp, SpanId LIMIT {{limit:UInt64}} OFFSET {{offset:UInt64}}""",
            {**params, "offset": offset, "limit": limit},
        )
        spans = [_span(row) for row in rows]
        run = next((s for s in spans if s["planscope_kind"] == A.KIND_RUN), None)
        plans = [s["plan"] for s in spans if s.get("plan") is not None]
        count = int(total["n"])
        return {
            "trace_id": trace_id,
            "project": project,
            "span_count": count,
            "start_ns": int(total["start_ns"]),
            "end_ns": int(total["end_ns"]),
            "run": _run_summary(run) if run else None,
            "plans": plans,
            "spans": spans,
            "offset": offset,
            "next_offset": offset + len(spans) if offset + len(spans) < count else None,
        }


def _span(row: dict[str, Any]) -> dict[str, Any]:
    attributes: dict[str, Any] = dict(row.pop("attributes"))
    parse_errors: list[str] = []
    for key in _JSON_ATTRIBUTES:
        if key in attributes:
            try:  # bounded: a value nested 100,000 deep is an error of that span, not a 500
                attributes[key] = safejson.loads(attributes[key])
            except ValueError:
                parse_errors.append(key)
    for key in _INT_ATTRIBUTES:
        value = attributes.get(key)
        if isinstance(value, str) and value.lstrip("-").isdigit():
            attributes[key] = int(value)
    events = [
        {"time_ns": t, "name": n, "attributes": dict(a)}
        for t, n, a in zip(
            row.pop("event_times"),
            row.pop("event_names"),
            row.pop("event_attributes"),
            strict=False,
        )
    ]
    links = [
        {"trace_id": t, "span_id": s}
        for t, s in zip(row.pop("link_trace_ids"), row.pop("link_span_ids"), strict=False)
    ]
    span = dict(row)
    span["resource"] = dict(span["resource"])
    span["end_ns"] = span["start_ns"] + span["duration_ns"]
    span["attributes"] = attributes
    span["events"] = events
    span["links"] = links
    span["planscope_kind"] = attributes.get(A.SPAN_KIND)
    if span["planscope_kind"] == A.KIND_PLAN and isinstance(attributes.get(A.PLAN_JSON), dict):
        span["plan"] = attributes[A.PLAN_JSON]
    if parse_errors:
        span["attribute_errors"] = [f"{key}: not valid JSON" for key in parse_errors]
    return span


def _run_summary(span: dict[str, Any]) -> dict[str, Any]:
    attrs = span["attributes"]
    return {
        "span_id": span["span_id"],
        "run_id": attrs.get(A.RUN_ID),
        "agent": attrs.get(A.GEN_AI_AGENT_NAME),
        "objective": attrs.get(A.RUN_OBJECTIVE),
        "variant": attrs.get(A.RUN_VARIANT),
        "outcome": attrs.get(A.RUN_OUTCOME),
        "outcome_reason": attrs.get(A.RUN_OUTCOME_REASON),
        "budget": attrs.get(A.RUN_BUDGET),
    }

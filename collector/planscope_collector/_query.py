"""Read queries behind the query API. Every value is a bound parameter; every query is scoped
to one project, so one project can never read another's traces."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from planscope import safejson
from planscope import semconv as A

from .observed import (
    AgentRoots,
    Binding,
    EventCall,
    ObservedStep,
    SpanNode,
    ToolEvent,
    answer,
    bind,
    conversation_tool_events,
    event_values,
    function_results,
    log_level,
    recorded_work,
    user_request,
)
from .runmodel import (
    CLOCK_SKEW_NS,
    GROUPING_RUN_SOURCE,
    OBSERVED_PLAN_STEPS_SQL,
    SPAN_MODEL_SQL,
    TRACE_WHERE,
    WORKFLOW_SQL,
    bind_traces,
    binding_parameters,
    run_metrics_sql,
)
from .storage import SPAN_STATUS_CODE_SQL, SPAN_STATUS_MESSAGE_SQL, Store, span_kind_sql

_SPAN_COLUMNS = f"""
    toUnixTimestamp64Nano(Timestamp) AS start_ns, SpanId AS span_id,
    ParentSpanId AS parent_span_id, SpanName AS name, {span_kind_sql()} AS span_kind,
    ServiceName AS service, Duration AS duration_ns, {SPAN_STATUS_CODE_SQL} AS status_code,
    {SPAN_STATUS_MESSAGE_SQL} AS status_message, SpanAttributes AS attributes,
    ResourceAttributes AS resource, ScopeName AS scope,
    arrayMap(t -> toUnixTimestamp64Nano(t), Events.Timestamp) AS event_times,
    Events.Name AS event_names, Events.Attributes AS event_attributes,
    Links.TraceId AS link_trace_ids, Links.SpanId AS link_span_ids
"""

_TRACE_RANGE_SQL = """
SELECT count() AS n, toInt64(toUnixTimestamp(min(Start))) * 1000000000 AS since,
       (toInt64(toUnixTimestamp(max(End))) + 1) * 1000000000 AS until
FROM otel_traces_trace_id_ts
WHERE TraceId = {trace_id:String} AND Project = {project:String}
"""
"""The range a trace's spans start in, in whole seconds (the trace-id lookup table of 0001, read
by its primary key); ``n`` = 0 for a trace that is not stored."""
_SPANS_WHERE = (
    "Project = {project:String} AND TraceId = {trace_id:String} "
    "AND Timestamp >= fromUnixTimestamp64Nano({since:Int64}) "
    "AND Timestamp < fromUnixTimestamp64Nano({until:Int64})"
)
"""A trace's rows of ``otel_traces``, within their range (:data:`_TRACE_RANGE_SQL`)."""

# Attributes whose values are JSON documents, parsed for the client.
_JSON_ATTRIBUTES = (A.PLAN_JSON, A.STEP_CONTEXT_KEYS, A.RUN_BUDGET)
NO_RUN = "(no run)"
"""The ``outcome`` filter value for traces without a planscope run span."""
_NO_RUN_COLUMNS: dict[str, Any] = {
    "step_attempts": None,
    "retries": None,
    "failed_steps": None,
    "plan_versions": None,
    "replans": None,
}
_NO_METRICS: dict[str, Any] = {
    **_NO_RUN_COLUMNS,
    "llm_calls": 0,
    "tool_calls": 0,
    "input_tokens": 0,
    "output_tokens": 0,
    "cost_usd": 0.0,
}

_WHOLE = re.compile(r"-?[0-9]{1,4300}")
"""A count attribute's text that is a number: ``--5`` and ``²`` pass ``str.isdigit`` and more
than 4,300 digits pass ``int()``'s limit, and those would make ``int()`` raise; they stay text."""
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
        span name, agent or variant. The page's traces get the run model's metrics
        (``planscope_collector.runmodel``): ``step_attempts``, ``retries``, ``failed_steps``,
        ``plan_versions``, ``replans`` (None without a run), ``llm_calls``, ``tool_calls``,
        ``input_tokens``, ``output_tokens`` and ``cost_usd``.
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
                   max(Outcome) AS outcome
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
        extras = self._run_columns(project, rows)
        for row in rows:
            row["duration_ns"] = max(0, row["end_ns"] - row["start_ns"])
            row["status"] = "error" if row["error_count"] else "ok"
            row.update(extras.get(row["trace_id"], _NO_METRICS))
            if not row["run_id"]:
                row.update(_NO_RUN_COLUMNS)
        return {
            "traces": rows,
            "limit": limit,
            "offset": offset,
            "next_offset": offset + limit if more else None,
        }

    def _run_columns(self, project: str, rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """The run model's metrics (``planscope_collector.runmodel``) of a page's traces, and
        their outermost run (as the trace detail has it).

        One grouped read per typed table, by primary key, for the page's ids only; the time
        bounds (the earliest start and the latest end on the page, with clock-skew slack) prune
        the other partitions. Traces with structure the span model inferred are bound across
        spans first (``runmodel.bind_traces``) and counted as bound, so a row's numbers are the
        trace detail's.
        """
        if not rows:
            return {}
        params = {
            "project": project,
            "ids": [r["trace_id"] for r in rows],
            "since": min(r["start_ns"] for r in rows) - CLOCK_SKEW_NS,
            "until": max(r["end_ns"] for r in rows) + CLOCK_SKEW_NS,
        }
        where = (
            "Project = {project:String} AND TraceId IN {ids:Array(String)} "
            "AND Start >= fromUnixTimestamp64Nano({since:Int64}) "
            "AND Start <= fromUnixTimestamp64Nano({until:Int64})"
        )
        bound = binding_parameters(
            bind_traces(self.store.query, where, params, self.store.bindings)
        )
        out: dict[str, dict[str, Any]] = {}
        for m in self.store.query(run_metrics_sql(where, binding=bound), {**params, **bound}):
            trace_id = m["TraceId"]
            out[trace_id] = {
                "step_attempts": m["StepAttempts"],
                "retries": m["Retries"],
                "failed_steps": m["FailedSteps"],
                "plan_versions": m["PlanVersions"],
                "replans": m["Replans"],
                "llm_calls": m["LlmCalls"],
                "tool_calls": m["ToolCalls"],
                "input_tokens": m["InputTokens"],
                "output_tokens": m["OutputTokens"],
                "cost_usd": round(float(m["CostUsd"]), 9),
            }
            if m["HasRun"]:
                out[trace_id] |= {
                    "run_id": m["RunId"],
                    "agent": m["Agent"],
                    "variant": m["Variant"],
                    "outcome": m["Outcome"],
                }
        return out

    def get_trace(
        self, project: str, trace_id: str, offset: int = 0, limit: int = 10_000
    ) -> dict[str, Any] | None:
        """One page of a trace's spans (in time order) with parsed planscope attributes, or None.

        ``span_count``, ``start_ns`` and ``end_ns`` describe the whole trace; ``next_offset`` is
        the offset of the next page (None on the last), so a 200,000-span trace is never
        answered whole. Each span also carries ``planscope_kind`` and ``model``: what the span
        model made of it (``planscope_collector.runmodel.SPAN_MODEL_SQL``), for planscope's
        spans and any other convention's alike; ``run`` is the outermost run, ``plans`` every
        plan (observed plans built from their steps, marked ``inferred``) and ``metrics`` the
        run model's.
        """
        params: dict[str, Any] = {"project": project, "trace_id": trace_id}
        (span_range,) = self.store.query(_TRACE_RANGE_SQL, params)
        if not span_range["n"]:
            return None
        # Every read below is bounded by the range the trace's spans start in (whole seconds in
        # the trace-id lookup): it prunes the other daily partitions of each table.
        params |= {"since": span_range["since"], "until": span_range["until"]}
        rows = self.store.query(
            f"""SELECT {_SPAN_COLUMNS}, {WORKFLOW_SQL} AS workflow,
                       count() OVER () AS trace_spans,
                       min(toUnixTimestamp64Nano(Timestamp)) OVER () AS trace_start_ns,
                       max(toUnixTimestamp64Nano(Timestamp) + Duration) OVER () AS trace_end_ns
                FROM otel_traces WHERE {_SPANS_WHERE}
                ORDER BY Timestamp, SpanId LIMIT {{limit:UInt64}} OFFSET {{offset:UInt64}}""",
            {**params, "offset": offset, "limit": limit},
        )
        if rows:
            total = {
                "n": rows[0]["trace_spans"],
                "start_ns": rows[0]["trace_start_ns"],
                "end_ns": rows[0]["trace_end_ns"],
            }
            for row in rows:
                del row["trace_spans"], row["trace_start_ns"], row["trace_end_ns"]
        else:  # a page past the end: the trace's figures alone
            (total,) = self.store.query(
                f"""SELECT count() AS n, toUnixTimestamp64Nano(min(Timestamp)) AS start_ns,
                           max(toUnixTimestamp64Nano(Timestamp) + Duration) AS end_ns
                    FROM otel_traces WHERE {_SPANS_WHERE}""",
                params,
            )
            if not total["n"]:
                return None
        workflows = {row["span_id"] for row in rows if row.pop("workflow")}
        model: dict[str, dict[str, Any]] = {}
        found = self.store.query(
            SPAN_MODEL_SQL, {**params, "span_ids": [r["span_id"] for r in rows]}
        )
        for m in sorted(found, key=lambda m: m["rank"]):
            model.setdefault(m.pop("span_id"), m)
        spans = [_span(row, model.get(row["span_id"])) for row in rows]
        plans = [s["plan"] for s in spans if s.get("plan") is not None]
        observed_plan = any(m["kind"] == A.KIND_PLAN and m["inferred"] for m in found)
        observed = self._observed_plans(params) if observed_plan else []
        count = int(total["n"])
        whole = offset == 0 and len(spans) == count
        next_offset = offset + len(spans) if offset + len(spans) < count else None
        observed, nodes, binding = _bind(trace_id, spans, observed, workflows)
        if not whole:  # the page alone cannot bind the trace: read what binding needs of it all
            bound_traces = bind_traces(self.store.query, TRACE_WHERE, params, self.store.bindings)
            nodes, binding = bound_traces.get(trace_id, ([], Binding()))
        if binding.lineage:  # a re-plan's rewritten sentence is its step as first written
            observed = [
                p
                | {
                    "steps": [
                        s | {"id": binding.first_written(p["span_id"], s["id"])} for s in p["steps"]
                    ]
                }
                for p in observed
            ]
        bound = binding_parameters({trace_id: (nodes, binding)})
        metrics = self.store.query(
            run_metrics_sql(TRACE_WHERE, binding=bound),
            {**params, **bound},
        )
        run = _run_summary(metrics[0]) if metrics and metrics[0]["HasRun"] else None
        if offset == 0:
            plans += observed + _read_plans(binding)
        return {
            "trace_id": trace_id,
            "project": project,
            "span_count": count,
            "start_ns": int(total["start_ns"]),
            "end_ns": int(total["end_ns"]),
            "run": run,
            "plans": plans,
            "metrics": _metrics(metrics[0]) if metrics else None,
            "spans": spans,
            "offset": offset,
            "next_offset": next_offset,
        }

    def _observed_plans(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        by_span: dict[str, list[dict[str, Any]]] = {}
        for row in self.store.query(OBSERVED_PLAN_STEPS_SQL, params):
            by_span.setdefault(row.pop("plan_span_id"), []).append(row)
        return [
            {"id": "", "version": i + 1, "span_id": span_id, "inferred": True, "steps": steps}
            for i, (span_id, steps) in enumerate(by_span.items())
        ]


def _bind(
    trace_id: str,
    spans: list[dict[str, Any]],
    observed: list[dict[str, Any]],
    workflows: set[str],
) -> tuple[list[dict[str, Any]], list[SpanNode], Binding]:
    """Apply the cross-span structure of ``planscope_collector.observed`` to a page of spans:
    tool calls only GenAI events say (``observed.event_calls``: added to ``spans`` as tool
    spans of their own, under the span that asked), typed tool calls whose result the model was
    handed as an error (``Binding.returned``: failed), agent runs that are the attempts of a run no
    span stands for (``observed.agent_roots``: step spans), bound step ids, statuses and attempt
    numbers of inferred attempts, the attempt of each tool and LLM call, attempts named after a
    plan step, a grouping run's root, step spans that only wrap attempts (plain spans). Returns
    the observed plans that are plans (containers dropped), the page's nodes and their binding
    (what the run model counts, ``runmodel.binding_parameters``; ``workflows``: the page's
    workflow spans, whose tasks are a plan in a trace without one of its own)."""
    nodes = []
    for s in spans:
        model = s["model"] or {}
        kind = s["planscope_kind"] or "other"
        logged = log_level(s["attributes"])
        # what it said in GenAI message events (Strands Agents), attributes first
        said = {**event_values(s["events"]), **s["attributes"]}
        step, io = recorded_work(s["attributes"], kind)
        nodes.append(
            SpanNode(
                s["span_id"],
                s["parent_span_id"],
                kind,
                s["name"],
                step_name=str(model.get("step_id") or "") if kind == A.KIND_STEP else "",
                inferred=bool(model.get("inferred")),
                failed=s["status_code"] == "Error" or model.get("status") == "error",
                tool=str(model.get("tool") or ""),
                start_ns=s["start_ns"],
                message=s["attributes"].get(A.LOGFIRE_MSG, "") if logged else s["status_message"],
                duration_ns=s["duration_ns"],
                service=s["service"],
                workflow=s["span_id"] in workflows,
                links=tuple(link["span_id"] for link in s["links"]),
                request=user_request(said) if kind == A.KIND_LLM else "",
                answer=answer(said, kind, bool(model.get("inferred"))),
                log_level=logged,
                app_step=step,
                io=io,
                handed=function_results(s["attributes"]) if kind == A.KIND_LLM else (),
            )
        )
    steps = [
        ObservedStep(p["span_id"], str(step["id"]), str(step.get("tool") or ""), i)
        for p in observed
        for i, step in enumerate(p["steps"])
    ]
    events = [
        ToolEvent(s["span_id"], e["time_ns"], e["name"], e["attributes"])
        for s in spans
        for e in s["events"]
    ] + [
        e
        for s in spans
        if s["planscope_kind"] == A.KIND_LLM
        for e in conversation_tool_events(
            s["span_id"],
            s["parent_span_id"],
            s["start_ns"],
            s["start_ns"] + s["duration_ns"],
            s["attributes"],
        )
    ]
    agents = {
        s["span_id"]: str(s["model"]["executor"])
        for s in spans
        if s["planscope_kind"] == A.KIND_RUN and s["model"]
    }
    b = bind(nodes, steps, events=events, agents=agents)
    _add_event_calls(spans, b.event_calls)
    if b.agent_roots is not None:
        _as_attempts(spans, b.agent_roots)
    by_id = {s["span_id"]: s for s in spans}
    if b.run_span_id is not None and b.run_span_id in by_id:
        root = by_id[b.run_span_id]
        outcome = "failure" if root["status_code"] == "Error" else "unknown"
        root["planscope_kind"] = A.KIND_RUN
        root["model"] = _inferred_model(run_id=trace_id, status=outcome, executor=root["name"])
    for span_id in b.wrappers:  # a wrapper of attempts is a plain span
        by_id[span_id]["planscope_kind"], by_id[span_id]["model"] = A.KIND_OTHER, None
    for span_id in b.promoted:
        span = by_id[span_id]
        span["planscope_kind"] = A.KIND_STEP
        span["model"] = _inferred_model(step_id=span["name"], status=A.STATUS_OK)
    for span_id, tool in b.calls.items():  # component calls: tool calls no typed row holds
        span = by_id[span_id]
        failed = span["status_code"] == "Error" or span_id in b.returned  # an error as a value
        span["planscope_kind"] = A.KIND_TOOL
        span["model"] = _inferred_model(tool=tool, status=A.STATUS_ERROR if failed else A.STATUS_OK)
    for span_id in b.typed_failures():  # a typed call handed to the model as an error
        if (model := by_id[span_id]["model"]) is not None:
            model["status"] = A.STATUS_ERROR
    for span_id, number in b.attempts.items():
        model = by_id[span_id]["model"]
        model["step_id"] = b.step_of(span_id, model["step_id"])
        model["attempt"] = number
        if span_id in b.failed:
            model["status"] = A.STATUS_ERROR
    for span_id, attempt in b.actions.items():
        model = by_id[span_id]["model"]
        owner = by_id[attempt]["model"] or {}
        if model is not None and not model["step_id"] and owner.get("step_id"):
            model["step_id"] = owner["step_id"]
    plans = [p for p in observed if p["span_id"] not in b.containers]
    for i, plan in enumerate(plans):
        plan["version"] = i + 1
    return plans, nodes, b


def _add_event_calls(spans: list[dict[str, Any]], calls: Sequence[EventCall]) -> None:
    """Each tool call only events say (``observed.event_calls``) as a span of the page (in
    start order, under the span that asked): named, timed and failed as the call, its tool, call
    id, arguments and result as GenAI attributes, inferred."""
    if not calls:
        return
    by_id = {s["span_id"]: s for s in spans}
    for c in calls:
        host = by_id[c.parent_span_id]
        attributes = {
            A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
            A.GEN_AI_TOOL_NAME: c.tool,
            A.GEN_AI_TOOL_CALL_ID: c.call_id,
            A.GEN_AI_TOOL_CALL_ARGUMENTS: c.arguments,
            A.GEN_AI_TOOL_CALL_RESULT: c.result,
        }
        if c.failed:
            attributes["error.type"] = c.error_type
        status = A.STATUS_ERROR if c.failed else A.STATUS_OK
        span = host | {
            "span_id": c.span_id,
            "parent_span_id": c.parent_span_id,
            "name": c.name,
            "start_ns": c.start_ns,
            "end_ns": c.end_ns,
            "duration_ns": c.end_ns - c.start_ns,
            "status_code": c.status_code,
            "status_message": c.message,
            "attributes": attributes,
            "events": [],
            "links": [],
            "planscope_kind": A.KIND_TOOL,
            "model": _inferred_model(tool=c.tool, status=status),
        }
        span.pop("plan", None)
        span.pop("attribute_errors", None)
        spans.append(span)
    spans.sort(key=lambda s: s["start_ns"])  # stable: the page's order otherwise


def _as_attempts(spans: list[dict[str, Any]], agents: AgentRoots) -> None:
    """The agent runs ``observed.agent_roots`` found, as step spans of the page, each named
    after its agent (the run's executor)."""
    by_id = {s["span_id"]: s for s in spans}
    for span_id, agent in zip(agents.attempts, agents.agents, strict=True):
        span = by_id[span_id]
        failed = span["status_code"] == "Error"
        span["planscope_kind"] = A.KIND_STEP
        span["model"] = (span["model"] or {}) | {
            "step_id": agent,
            "attempt": 0,
            "status": A.STATUS_ERROR if failed else A.STATUS_OK,
            "executor": "",
        }


def _read_plans(b: Binding) -> list[dict[str, Any]]:
    """The plans a binding read across spans (``observed.bind``: a workflow's tasks, a
    planner's answer read from structure), as the API's observed plans are."""
    plans: list[tuple[str, list[tuple[str, str, list[str]]]]] = [
        (r.span_id, [(s.step_id, s.tool, []) for s in r.steps]) for r in b.read_plans
    ]
    if (w := b.workflow_plan) is not None:
        plans.append((w.span_id, [(s, "", list(w.depends_on.get(s, ()))) for s in w.steps]))
    return [
        {
            "id": "",
            "version": version,
            "span_id": span_id,
            "inferred": True,
            "steps": [
                {
                    "position": i,
                    "id": step,
                    "description": "",
                    "executor": "",
                    "tool": tool,
                    "depends_on": depends_on,
                }
                for i, (step, tool, depends_on) in enumerate(steps)
            ],
        }
        for version, (span_id, steps) in enumerate(plans, 1)
    ]


def _inferred_model(**fields: Any) -> dict[str, Any]:
    """The ``model`` of a span whose kind :func:`_bind` derived (inferred, no typed row)."""
    return {
        "inferred": True,
        "source": GROUPING_RUN_SOURCE,
        "run_id": "",
        "step_id": "",
        "attempt": 0,
        "status": "",
        "executor": "",
        "tool": "",
        "model": "",
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": 0.0,
        "cost_from": "",
    } | fields


def _metrics(m: dict[str, Any]) -> dict[str, Any]:
    """The run model's row as the API's snake_case fields."""
    return {
        "step_attempts": m["StepAttempts"],
        "retries": m["Retries"],
        "failed_steps": m["FailedSteps"],
        "worst_step": m["WorstStep"],
        "worst_step_attempts": m["WorstStepAttempts"],
        "plan_versions": m["PlanVersions"],
        "replans": m["Replans"],
        "llm_calls": m["LlmCalls"],
        "tool_calls": m["ToolCalls"],
        "failed_tool_calls": m["FailedToolCalls"],
        "input_tokens": m["InputTokens"],
        "output_tokens": m["OutputTokens"],
        "cache_read_tokens": m["CacheReadTokens"],
        "reasoning_tokens": m["ReasoningTokens"],
        "cost_usd": round(float(m["CostUsd"]), 9),
    }


def _span(row: dict[str, Any], found: dict[str, Any] | None) -> dict[str, Any]:
    model = found
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
        if isinstance(value, str) and _WHOLE.fullmatch(value):
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
    if model is not None:  # a copy: two stored rows may share a span id
        model = {k: v for k, v in model.items() if k not in ("kind", "rank")} | {
            "inferred": bool(model["inferred"]),
            "cost_usd": round(float(model["cost_usd"]), 9),
        }
    span["planscope_kind"] = (found or {}).get("kind") or attributes.get(A.SPAN_KIND)
    span["model"] = model
    if span["planscope_kind"] == A.KIND_PLAN and isinstance(attributes.get(A.PLAN_JSON), dict):
        span["plan"] = attributes[A.PLAN_JSON]
    if parse_errors:
        span["attribute_errors"] = [f"{key}: not valid JSON" for key in parse_errors]
    return span


def _run_summary(m: dict[str, Any]) -> dict[str, Any]:
    """The outermost run of a trace, from the run model's row."""
    try:
        budget = safejson.loads(m["Budget"]) if m["Budget"] else None
    except ValueError:
        budget = m["Budget"]
    return {
        "span_id": m["RunSpanId"],
        "run_id": m["RunId"],
        "agent": m["Agent"] or None,
        "objective": m["Objective"] or None,
        "variant": m["Variant"] or None,
        "outcome": m["Outcome"] or None,
        "outcome_reason": m["OutcomeReason"] or None,
        "budget": budget,
        "inferred": bool(m["RunInferred"]),
        "source": m["RunSource"] or None,
    }

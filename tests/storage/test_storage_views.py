"""Spans in, typed rows out: every materialized view on the real chDB engine."""

from __future__ import annotations

import json
from typing import Any

import planscope.semconv as A
import pytest
from planscope_collector.storage import TABLES, Store

from ._spans import (
    BASE_NS,
    count,
    make_span,
    new_span_id,
    new_trace_id,
    planscope_trace,
    spans_ipc,
)

DERIVED = (
    "otel_traces_trace_id_ts",
    "planscope_runs",
    "planscope_plans",
    "planscope_plan_steps",
    "planscope_step_attempts",
    "planscope_tool_calls",
    "planscope_llm_calls",
    "planscope_trace_index",
)
SPAN_TABLES = ("otel_traces", *DERIVED)


def _one(store: Store, sql: str, **params: Any) -> dict[str, Any]:
    rows = store.query(sql, params)
    assert len(rows) == 1, rows
    return rows[0]


def test_exporter_shaped_insert_lands_in_default_project_and_every_view(store: Store) -> None:
    """Rows with exactly the OTel Collector exporter's column list (no Project) work unchanged."""
    trace_id = new_trace_id()
    store.insert_spans(spans_ipc(planscope_trace(trace_id, project=None), exporter_columns=True))
    for table in SPAN_TABLES:
        assert count(store, table, "TraceId = {t:String}", {"t": trace_id}) > 0, table
        assert count(store, table, "Project != 'default'") == 0, table
    lookup = _one(
        store,
        "SELECT min(Start) AS s, max(End) AS e FROM otel_traces_trace_id_ts "
        "WHERE TraceId = {t:String} AND Project = 'default'",
        t=trace_id,
    )
    assert lookup["s"].timestamp() == BASE_NS // 1_000_000_000


def test_planscope_trace_produces_typed_rows(store: Store) -> None:
    trace_id = new_trace_id()
    store.insert_spans(spans_ipc(planscope_trace(trace_id, project="p1")), dedup_token="seg-1")
    where = {"t": trace_id}

    run = _one(store, "SELECT * FROM planscope_runs WHERE TraceId = {t:String}", **where)
    assert run["Project"] == "p1"
    assert run["RunId"] == "run-1"
    assert run["AgentName"] == "trip-agent"
    assert run["Objective"] == "book a trip"
    assert run["Variant"] == "plan_and_act"
    assert (run["Outcome"], run["OutcomeReason"]) == (A.OUTCOME_FAILURE, "no booking")
    assert json.loads(run["Budget"]) == {"max_attempts_per_step": 3}
    assert run["Duration"] == 10_000_000_000
    assert (run["End"] - run["Start"]).total_seconds() == 10
    assert run["StatusCode"] == "Error"

    plan = _one(store, "SELECT * FROM planscope_plans WHERE TraceId = {t:String}", **where)
    assert (plan["PlanId"], plan["Version"], plan["Scope"]) == ("plan-1", 1, "root")
    assert plan["ParentVersion"] is None
    assert (plan["StepCount"], plan["PlanJsonValid"], plan["RunId"]) == (2, 1, "run-1")
    assert plan["Objective"] == "book a trip"
    assert plan["Approval"] == A.APPROVAL_NOT_REQUIRED

    steps = store.query(
        "SELECT * FROM planscope_plan_steps WHERE TraceId = {t:String} ORDER BY Position", where
    )
    assert [(s["Position"], s["StepId"]) for s in steps] == [(0, "s1"), (1, "s2")]
    assert steps[1]["DependsOn"] == ["s1"]
    assert steps[1]["Requires"] == ["flights", "card"]
    assert steps[1]["Produces"] == ["booking"]
    assert [s["Irreversible"] for s in steps] == [0, 1]
    assert (steps[0]["Executor"], steps[0]["Tool"]) == ("web", "search")
    assert {(s["PlanId"], s["PlanVersion"]) for s in steps} == {("plan-1", 1)}

    attempts = store.query(
        "SELECT * FROM planscope_step_attempts WHERE TraceId = {t:String} ORDER BY Attempt", where
    )
    assert [a["Attempt"] for a in attempts] == [1, 2]
    first, second = attempts
    assert (first["Status"], first["ErrorType"], first["ErrorFingerprint"]) == (
        A.STATUS_ERROR,
        "TimeoutError",
        "fp-1",
    )
    assert first["ContextKeys"] == ["destination"]
    assert second["ContextKeys"] == ["destination", "dates"]
    assert (first["ContextTokens"], second["ContextTokens"]) == (120, 250)
    assert (first["SelfAssessment"], second["Depth"]) == ("failure", 1)
    assert (first["PlanId"], first["PlanVersion"], first["StepId"]) == ("plan-1", 1, "s1")
    assert first["InputHash"] == "ih-1"
    assert first["Executor"] == "web"

    tool = _one(store, "SELECT * FROM planscope_tool_calls WHERE TraceId = {t:String}", **where)
    assert (tool["ToolName"], tool["Resource"], tool["Effect"]) == ("search", "web:flights", "read")
    assert json.loads(tool["Arguments"]) == {"q": "flights"}
    assert (tool["Result"], tool["ArgsHash"], tool["StepId"], tool["Attempt"]) == (
        "3 results",
        "ah-1",
        "s1",
        2,
    )
    assert tool["ParentSpanId"] == second["SpanId"]

    llm = _one(store, "SELECT * FROM planscope_llm_calls WHERE TraceId = {t:String}", **where)
    assert (llm["Model"], llm["InputTokens"], llm["OutputTokens"]) == ("gpt-4o", 1000, 200)
    assert llm["CostUsd"] == pytest.approx(0.0125)
    assert (llm["StepId"], llm["RunId"]) == ("s1", "run-1")

    index = _one(
        store,
        "SELECT min(Start) AS Start, max(End) AS End, sum(SpanCount) AS Spans, "
        "sum(ErrorCount) AS Errors, max(RootSpanName) AS Root, max(RunId) AS Run, "
        "max(Outcome) AS Outcome, max(Variant) AS Variant, "
        "groupUniqArrayArray(Services) AS Services "
        "FROM planscope_trace_index WHERE Project = 'p1' AND TraceId = {t:String} GROUP BY TraceId",
        **where,
    )
    assert (index["Spans"], index["Errors"], index["Root"]) == (6, 2, "invoke_agent trip-agent")
    assert (index["Run"], index["Outcome"], index["Variant"]) == (
        "run-1",
        "failure",
        "plan_and_act",
    )
    assert index["Services"] == ["agent-svc"]
    cost = _one(
        store,
        "SELECT sum(InputTokens) AS Tin, sum(EffectiveCostUsd) AS Cost, any(CostFrom) AS By "
        "FROM planscope_llm_costs WHERE TraceId = {t:String}",
        **where,
    )
    assert (cost["Tin"], cost["By"]) == (1000, "span")
    assert cost["Cost"] == pytest.approx(0.0125)
    assert (index["End"] - index["Start"]).total_seconds() == 10


def test_garbage_plan_json_keeps_raw_span_and_plan_row(store: Store) -> None:
    trace_id = new_trace_id()
    rows = [
        make_span(
            trace_id=trace_id,
            name="plan",
            attrs={
                A.SPAN_KIND: A.KIND_PLAN,
                A.PLAN_ID: "p-bad",
                A.PLAN_VERSION: "not-a-number",
                A.PLAN_JSON: '{"steps": [ {"id": "s1", oops',
            },
        ),
        make_span(
            trace_id=trace_id,
            name="plan",
            attrs={A.SPAN_KIND: A.KIND_PLAN, A.PLAN_JSON: '{"id": "p-odd", "steps": "nope"}'},
        ),
        make_span(
            trace_id=trace_id,
            name="plan",
            attrs={
                A.SPAN_KIND: A.KIND_PLAN,
                # numeric ids and a non-list field: converted / defaulted, not fatal
                A.PLAN_JSON: '{"id": 7, "version": "3", "steps": [{"id": 1, "depends_on": [0],'
                ' "requires": "x", "irreversible": "yes"}, 42]}',
            },
        ),
    ]
    store.insert_spans(spans_ipc(rows))
    assert count(store, "otel_traces", "TraceId = {t:String}", {"t": trace_id}) == 3
    plans = store.query(
        "SELECT PlanId, Version, StepCount, PlanJsonValid FROM planscope_plans "
        "WHERE TraceId = {t:String} ORDER BY PlanId",
        {"t": trace_id},
    )
    assert plans == [
        {"PlanId": "7", "Version": 3, "StepCount": 2, "PlanJsonValid": 1},
        {"PlanId": "p-bad", "Version": 0, "StepCount": 0, "PlanJsonValid": 0},
        {"PlanId": "p-odd", "Version": 0, "StepCount": 0, "PlanJsonValid": 1},
    ]
    steps = store.query(
        "SELECT PlanId, Position, StepId, DependsOn, Requires, Irreversible "
        "FROM planscope_plan_steps WHERE TraceId = {t:String} ORDER BY Position",
        {"t": trace_id},
    )
    assert steps == [
        {
            "PlanId": "7",
            "Position": 0,
            "StepId": "1",
            "DependsOn": ["0"],
            "Requires": [],
            "Irreversible": 0,
        },
        {
            "PlanId": "7",
            "Position": 1,
            "StepId": "",
            "DependsOn": [],
            "Requires": [],
            "Irreversible": 0,
        },
    ]


def test_missing_attributes_give_defaults(store: Store) -> None:
    trace_id = new_trace_id()
    kinds = (A.KIND_RUN, A.KIND_PLAN, A.KIND_STEP, A.KIND_TOOL, A.KIND_LLM)
    store.insert_spans(
        spans_ipc(
            [make_span(trace_id=trace_id, status="Error", attrs={A.SPAN_KIND: k}) for k in kinds]
            + [make_span(trace_id=trace_id, attrs={A.SPAN_KIND: A.KIND_STEP, A.STEP_ATTEMPT: "x"})]
        )
    )
    run = _one(store, "SELECT * FROM planscope_runs WHERE TraceId = {t:String}", t=trace_id)
    assert (run["RunId"], run["Outcome"]) == ("", A.OUTCOME_UNKNOWN)
    attempts = store.query(
        "SELECT Attempt, Status, ContextKeys, ContextTokens FROM planscope_step_attempts "
        "WHERE TraceId = {t:String} ORDER BY Status",
        {"t": trace_id},
    )
    assert attempts == [
        {"Attempt": 0, "Status": "", "ContextKeys": [], "ContextTokens": 0},
        {"Attempt": 0, "Status": "error", "ContextKeys": [], "ContextTokens": 0},
    ]
    for table in ("planscope_plans", "planscope_tool_calls", "planscope_llm_calls"):
        assert count(store, table, "TraceId = {t:String}", {"t": trace_id}) == 1, table


def test_plain_genai_spans_without_planscope_kind_are_captured(store: Store) -> None:
    """Spans from other GenAI instrumentations (no planscope.span.kind) still count."""
    trace_id = new_trace_id()
    store.insert_spans(
        spans_ipc(
            [
                make_span(
                    trace_id=trace_id,
                    attrs={
                        A.GEN_AI_OPERATION_NAME: A.OP_CHAT,
                        A.GEN_AI_RESPONSE_MODEL: "llama3",
                        A.GEN_AI_USAGE_INPUT_TOKENS: 5,
                    },
                ),
                make_span(
                    trace_id=trace_id,
                    attrs={A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: "ls"},
                ),
                make_span(trace_id=trace_id, attrs={"http.method": "GET"}),
            ]
        )
    )
    llm = _one(store, "SELECT * FROM planscope_llm_calls WHERE TraceId = {t:String}", t=trace_id)
    assert (llm["Model"], llm["InputTokens"]) == ("llama3", 5)
    tool = _one(store, "SELECT * FROM planscope_tool_calls WHERE TraceId = {t:String}", t=trace_id)
    assert tool["ToolName"] == "ls"
    assert count(store, "planscope_step_attempts", "TraceId = {t:String}", {"t": trace_id}) == 0


def _counts(store: Store) -> dict[str, int]:
    return {table: count(store, table) for table in SPAN_TABLES}


def test_same_dedup_token_twice_changes_no_table(store: Store) -> None:
    segment = planscope_trace(new_trace_id()) + planscope_trace(new_trace_id(), project="p2")
    store.insert_spans(spans_ipc(segment), dedup_token="segment-7")
    before = _counts(store)
    assert all(before.values()), before
    store.insert_spans(spans_ipc(segment), dedup_token="segment-7")  # replay after a crash
    assert _counts(store) == before
    # a different token is a different segment: everything lands again
    store.insert_spans(spans_ipc(segment), dedup_token="segment-8")
    after = _counts(store)
    assert after == {t: 2 * n for t, n in before.items()}


def test_distinct_inserts_with_identical_view_output_are_not_deduplicated(store: Store) -> None:
    """Two different spans of one trace in one second give identical partial rows in the
    id->time lookup; block-hash dedup of the view must not swallow the second one."""
    trace_id = new_trace_id()
    for token in (None, "a", "b"):
        store.insert_spans(
            spans_ipc([make_span(trace_id=trace_id, attrs={}, start_ns=BASE_NS + 17)]),
            dedup_token=token,
        )
    # the None-token insert hashes content; the tokened ones are distinct segments
    assert count(store, "otel_traces", "TraceId = {t:String}", {"t": trace_id}) == 3
    spans = store.query(
        "SELECT sum(SpanCount) AS n FROM planscope_trace_index WHERE TraceId = {t:String}",
        {"t": trace_id},
    )
    assert spans == [{"n": 3}]


def test_trace_list_query_from_docs(store: Store) -> None:
    """The GET /api/traces query documented in docs/storage.md, over a trace split across
    inserts (partial index rows) and a second service and project."""
    t1, t2, t3 = new_trace_id(), new_trace_id(), new_trace_id()
    root = new_span_id()
    store.insert_spans(
        spans_ipc(
            [make_span(trace_id=t1, span_id=root, name="root", service="api", start_ns=BASE_NS)]
        )
    )
    store.insert_spans(
        spans_ipc(
            [
                make_span(
                    trace_id=t1,
                    parent=root,
                    service="worker",
                    status="Error",
                    start_ns=BASE_NS + 5_000_000_000,
                ),
                make_span(trace_id=t2, name="other", service="worker", start_ns=BASE_NS + 1),
                make_span(trace_id=t3, name="p2", service="api", project="p2"),
            ]
        )
    )
    sql = """
        SELECT TraceId,
               min(Start) AS TraceStart, max(End) AS TraceEnd,
               sum(SpanCount) AS Spans, sum(ErrorCount) AS Errors,
               max(RootSpanName) AS RootSpan, max(RootServiceName) AS RootService,
               groupUniqArrayArray(Services) AS AllServices
        FROM planscope_trace_index
        WHERE Project = {project:String}
          AND Start >= {since:DateTime64(9)} - INTERVAL 1 DAY
          AND Start < {until:DateTime64(9)} + INTERVAL 1 DAY
        GROUP BY TraceId
        HAVING TraceStart >= {since:DateTime64(9)} AND TraceStart < {until:DateTime64(9)}
           AND ({service:String} = '' OR has(AllServices, {service:String}))
           AND (NOT {errors_only:Bool} OR Errors > 0)
        ORDER BY TraceStart DESC, TraceId
        LIMIT {limit:UInt32} OFFSET {offset:UInt32}
    """
    params = {
        "project": "default",
        "since": BASE_NS // 1_000_000_000 - 60,
        "until": BASE_NS // 1_000_000_000 + 3600,
        "service": "",
        "errors_only": False,
        "limit": 50,
        "offset": 0,
    }
    rows = store.query(sql, params)
    assert [r["TraceId"] for r in rows] == [t2, t1]
    first = rows[1]
    assert (first["Spans"], first["Errors"], first["RootSpan"]) == (2, 1, "root")
    assert (first["RootService"], sorted(first["AllServices"])) == ("api", ["api", "worker"])
    assert (first["TraceEnd"] - first["TraceStart"]).total_seconds() == pytest.approx(5.001)
    assert [r["TraceId"] for r in store.query(sql, {**params, "service": "api"})] == [t1]
    assert [r["TraceId"] for r in store.query(sql, {**params, "errors_only": True})] == [t1]
    assert [r["TraceId"] for r in store.query(sql, {**params, "limit": 1, "offset": 1})] == [t1]
    assert [r["TraceId"] for r in store.query(sql, {**params, "project": "p2"})] == [t3]


def test_all_tables_listed_in_tables_constant_exist(store: Store) -> None:
    names = {
        r["name"]
        for r in store.query(
            "SELECT name FROM system.tables WHERE database = {d:String}", {"d": store.database}
        )
    }
    assert set(TABLES) <= names

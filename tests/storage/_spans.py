"""Span builders shaped like the clickhouseexporter's rows, shared by the storage tests."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import planscope.semconv as A
from planscope_collector.storage import TRACE_COLUMNS, Store

# Timestamps near "now": rows older than the TTL would be dropped by merges.
BASE_NS = (time.time_ns() // 1_000_000_000 - 3600) * 1_000_000_000


_ids = itertools.count(1)


def new_trace_id() -> str:
    return f"{next(_ids):032x}"


def new_span_id() -> str:
    return f"{next(_ids):016x}"


def make_span(
    *,
    trace_id: str,
    name: str = "span",
    span_id: str | None = None,
    parent: str = "",
    attrs: Mapping[str, Any] | None = None,
    resource: Mapping[str, str] | None = None,
    service: str = "agent-svc",
    start_ns: int = BASE_NS,
    duration_ns: int = 1_000_000,
    status: str = "Unset",
    status_message: str = "",
    kind: str = "Internal",
    project: str | None = "default",
    events: list[tuple[int, str, dict[str, str]]] | None = None,
) -> list[Any]:
    """One row in TRACE_COLUMNS order (without Project when ``project`` is None), the values
    stringified the way the clickhouseexporter does (ints decimal, bools true/false, else JSON)."""

    def stringify(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float, str)):
            return str(v)
        return json.dumps(v)

    ev = events or []
    row: list[Any] = [
        start_ns,
        trace_id,
        span_id or new_span_id(),
        parent,
        "",
        name,
        kind,
        service,
        {"service.name": service, **(resource or {})},
        "planscope",
        "0.1.0",
        {k: stringify(v) for k, v in (attrs or {}).items()},
        duration_ns,
        status,
        status_message,
        [e[0] for e in ev],
        [e[1] for e in ev],
        [e[2] for e in ev],
        [],
        [],
        [],
        [],
    ]
    if project is not None:
        row.append(project)
    assert len(row) == len(TRACE_COLUMNS) - (project is None)
    return row


PLAN = {
    "id": "plan-1",
    "version": 1,
    "scope": "root",
    "objective": "book a trip",
    "replan_reason": "",
    "steps": [
        {
            "id": "s1",
            "description": "search flights",
            "executor": "web",
            "tool": "search",
            "depends_on": [],
            "requires": ["destination"],
            "produces": ["flights"],
            "irreversible": False,
        },
        {
            "id": "s2",
            "description": "book flight",
            "executor": "booker",
            "tool": "book",
            "depends_on": ["s1"],
            "requires": ["flights", "card"],
            "produces": ["booking"],
            "irreversible": True,
        },
    ],
}


def planscope_trace(
    trace_id: str, *, project: str | None = "default", run_id: str = "run-1"
) -> list[list[Any]]:
    """A run with one plan, two attempts of step s1 (error then ok), a tool call and an LLM call."""
    run_sid, plan_sid, a1, a2, tool_sid, llm_sid = (new_span_id() for _ in range(6))
    common = {A.RUN_ID: run_id}
    step_common = {**common, A.PLAN_ID: "plan-1", A.PLAN_VERSION: 1, A.STEP_ID: "s1"}
    t = BASE_NS
    return [
        make_span(
            trace_id=trace_id,
            span_id=run_sid,
            name="invoke_agent trip-agent",
            project=project,
            start_ns=t,
            duration_ns=10_000_000_000,
            status="Error",
            attrs={
                A.SPAN_KIND: A.KIND_RUN,
                A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT,
                A.GEN_AI_AGENT_NAME: "trip-agent",
                A.RUN_OBJECTIVE: "book a trip",
                A.RUN_VARIANT: "plan_and_act",
                A.RUN_OUTCOME: A.OUTCOME_FAILURE,
                A.RUN_OUTCOME_REASON: "no booking",
                A.RUN_BUDGET: {"max_attempts_per_step": 3},
                **common,
            },
        ),
        make_span(
            trace_id=trace_id,
            span_id=plan_sid,
            parent=run_sid,
            name="plan",
            project=project,
            start_ns=t + 1_000,
            attrs={
                A.SPAN_KIND: A.KIND_PLAN,
                A.GEN_AI_OPERATION_NAME: A.OP_PLAN,
                A.PLAN_ID: "plan-1",
                A.PLAN_VERSION: 1,
                A.PLAN_SCOPE: "root",
                A.PLAN_JSON: PLAN,
                A.PLAN_APPROVAL: A.APPROVAL_NOT_REQUIRED,
                **common,
            },
        ),
        make_span(
            trace_id=trace_id,
            span_id=a1,
            parent=run_sid,
            name="step s1",
            project=project,
            start_ns=t + 2_000,
            status="Error",
            attrs={
                A.SPAN_KIND: A.KIND_STEP,
                **step_common,
                A.STEP_ATTEMPT: 1,
                A.STEP_STATUS: A.STATUS_ERROR,
                A.ERROR_TYPE: "TimeoutError",
                A.STEP_ERROR_FINGERPRINT: "fp-1",
                A.STEP_EXECUTOR: "web",
                A.STEP_CONTEXT_KEYS: ["destination"],
                A.STEP_CONTEXT_TOKENS: 120,
                A.STEP_SELF_ASSESSMENT: "failure",
                A.STEP_DEPTH: 0,
                A.STEP_INPUT_HASH: "ih-1",
            },
        ),
        make_span(
            trace_id=trace_id,
            span_id=a2,
            parent=run_sid,
            name="step s1",
            project=project,
            start_ns=t + 3_000,
            attrs={
                A.SPAN_KIND: A.KIND_STEP,
                **step_common,
                A.STEP_ATTEMPT: 2,
                A.STEP_STATUS: A.STATUS_OK,
                A.STEP_EXECUTOR: "web",
                A.STEP_CONTEXT_KEYS: ["destination", "dates"],
                A.STEP_CONTEXT_TOKENS: 250,
                A.STEP_DEPTH: 1,
            },
        ),
        make_span(
            trace_id=trace_id,
            span_id=tool_sid,
            parent=a2,
            name="execute_tool search",
            project=project,
            start_ns=t + 4_000,
            attrs={
                A.SPAN_KIND: A.KIND_TOOL,
                A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
                A.GEN_AI_TOOL_NAME: "search",
                A.GEN_AI_TOOL_CALL_ARGUMENTS: {"q": "flights"},
                A.GEN_AI_TOOL_CALL_RESULT: "3 results",
                A.TOOL_RESOURCE: "web:flights",
                A.TOOL_EFFECT: A.EFFECT_READ,
                A.TOOL_ARGS_HASH: "ah-1",
                **step_common,
                A.STEP_ATTEMPT: 2,
            },
        ),
        make_span(
            trace_id=trace_id,
            span_id=llm_sid,
            parent=a2,
            name="chat gpt-4o",
            project=project,
            start_ns=t + 5_000,
            kind="Client",
            attrs={
                A.SPAN_KIND: A.KIND_LLM,
                A.GEN_AI_OPERATION_NAME: A.OP_CHAT,
                A.GEN_AI_REQUEST_MODEL: "gpt-4o",
                A.GEN_AI_USAGE_INPUT_TOKENS: 1000,
                A.GEN_AI_USAGE_OUTPUT_TOKENS: 200,
                A.LLM_ROLE: "executor",
                A.LLM_COST_USD: 0.0125,
                **step_common,
                A.STEP_ATTEMPT: 2,
            },
        ),
    ]


def count(
    store: Store, table: str, where: str = "1", params: Mapping[str, Any] | None = None
) -> int:
    rows = store.query(f"SELECT count() AS n FROM {table} WHERE {where}", params)
    return int(rows[0]["n"])


def spans_ipc(rows: Sequence[Sequence[Any]], *, exporter_columns: bool = False) -> Any:
    """Hand-built rows (``make_span``) as the Arrow IPC stream ``Store.insert_spans`` takes,
    typed like the collector's flattener builds it; ``exporter_columns``: rows without
    ``Project`` (the OTel Collector exporter's column list)."""
    import pyarrow as pa
    from planscope_collector._otlp import SpanColumns
    from planscope_collector.storage import ipc_stream

    schema = SpanColumns().to_arrow().schema
    if exporter_columns:
        schema = schema.remove(schema.get_field_index("Project"))
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
    arrays = [pa.array(list(c), f.type) for c, f in zip(columns, schema, strict=True)]
    return ipc_stream(pa.Table.from_arrays(arrays, schema=schema))


def otlp_to_rows(request: Any, project: str | None) -> list[list[Any]]:
    """An OTLP request's spans as the collector's flattener stores them, one row per span in
    ``TRACE_COLUMNS`` order (maps as dicts, times as int nanoseconds)."""
    import pyarrow as pa
    from planscope_collector._otlp import SpanColumns

    columns = SpanColumns()
    columns.add(request, project)
    table = columns.to_arrow()
    table = table.set_column(0, "Timestamp", table["Timestamp"].cast(pa.int64()))
    events = table["Events.Timestamp"].cast(pa.list_(pa.int64()))
    table = table.set_column(15, "Events.Timestamp", events)
    return [list(r.values()) for r in table.to_pylist(maps_as_pydicts="strict")]


def kept_rows(before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``after`` holds ``before``'s rows in the columns ``after`` has (a later migration
    may drop typed columns no reader reads, 0029), whatever their order."""
    kept = list(after[0]) if after else []
    return sorted(map(repr, after)) == sorted(repr({c: r[c] for c in kept}) for r in before)


def typed_rows_before_and_after(
    tmp_path: Path, first_left_out: str, until: str, rows: Sequence[Sequence[Any]]
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """``rows`` inserted into a store migrated without the migrations from ``first_left_out`` on
    (``"before"``) and into one migrated up to, not including, ``until`` (``"after"``): each
    typed table's rows. The two layouts are the pair a test compares, not today's: a later
    migration may change the rows on purpose (0044 named text steps by their text)."""
    import shutil
    from importlib import resources

    from planscope_collector.storage import TABLES, open_store

    layouts = {"before": first_left_out, "after": until}
    for database, last in layouts.items():
        (tmp_path / database).mkdir()
        for path in Path(str(resources.files("planscope_collector") / "migrations")).glob("*.sql"):
            if path.name < last:
                shutil.copy(path, tmp_path / database / path.name)
    body = spans_ipc(rows)
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for database in layouts:
        directory = tmp_path / database
        with open_store(f"chdb://{tmp_path}/db", database=database) as s:
            s.migrate(directory=directory)
            s.insert_spans(body, dedup_token="same")
            out[database] = {
                t: s.query("SELECT * FROM {t:Identifier}", {"t": t})
                for t in TABLES
                if t.startswith("planscope_") and t != "planscope_ingest_batches"
            }
    return out

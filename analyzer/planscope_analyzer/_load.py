"""Load a batch of traces from the typed tables into :class:`TraceData` values."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any, Protocol

from . import _queries as Q
from ._model import (
    Attempt,
    Plan,
    PlanStep,
    RawSpan,
    Run,
    ToolCall,
    TraceData,
    derive_fingerprint,
    parse_json_object,
)

PARTITION_SLACK_NS = 3600 * 10**9
"""Rows are read from 1 h before the batch's earliest trace start (spans of a trace may start
before its first indexed span by clock skew between services)."""


class Queryable(Protocol):
    """What the analyzer needs from a store (``planscope_collector.storage.Store``)."""

    def query(self, sql: str, parameters: Any = None) -> list[dict[str, Any]]: ...

    def command(self, sql: str, parameters: Any = None) -> None: ...


def ns_to_datetime(ns: int) -> datetime:
    """Unix nanoseconds → naive UTC datetime (microsecond precision) for DateTime64 params."""
    return datetime.fromtimestamp(ns / 1e9, tz=timezone.utc).replace(tzinfo=None)


def _ints(values: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in values or ())


def _check_ids(ids: Sequence[str]) -> list[str]:
    """Trace ids are hex (the OTLP convention); anything else cannot be stored, so skip it."""
    return sorted({i for i in ids if i and all(c in "0123456789abcdef" for c in i)})


def load_traces(
    store: Queryable, project: str, trace_ids: Sequence[str], since_ns: int | None = None
) -> dict[str, TraceData]:
    """Read every typed row of ``trace_ids`` (one query per table) into ``TraceData``.

    ``since_ns`` (the earliest start of these traces, when known) lets the reads skip older
    partitions; without it the trace index is asked first.

    >>> # load_traces(store, "default", ["5b8e..."])["5b8e..."].attempts
    """
    ids = _check_ids(trace_ids)
    if not ids:
        return {}
    params: dict[str, Any] = {"project": project, "ids": ",".join(ids), "since": ns_to_datetime(0)}
    index_sql = Q.LOAD_INDEX.format(filter=Q.TRACE_FILTER)
    if since_ns is not None:
        params["since"] = ns_to_datetime(max(0, since_ns - PARTITION_SLACK_NS))
    traces: dict[str, TraceData] = {}
    for r in store.query(index_sql, params):
        traces[r["trace_id"]] = TraceData(
            project,
            r["trace_id"],
            start_ns=int(r["start_ns"]),
            end_ns=int(r["end_ns"]),
            span_count=int(r["spans"]),
            has_root=bool(r["has_root"]),
        )
    if not traces:
        return {}
    if since_ns is None:
        earliest = min(t.start_ns for t in traces.values())
        params["since"] = ns_to_datetime(max(0, earliest - PARTITION_SLACK_NS))

    def rows(sql: str) -> list[dict[str, Any]]:
        return store.query(sql.format(filter=Q.TRACE_FILTER), params)

    for r in rows(Q.LOAD_RUNS):
        t = traces.get(r["trace_id"])
        if t is not None:
            t.runs.append(
                Run(
                    r["span_id"],
                    r["parent_span_id"],
                    r["run_id"],
                    r["variant"],
                    r["outcome"],
                    r["outcome_reason"],
                    parse_json_object(r["budget"]),
                    int(r["start_ns"]),
                    int(r["end_ns"]),
                    r["status_code"],
                )
            )
    for r in rows(Q.LOAD_PLANS):
        t = traces.get(r["trace_id"])
        if t is not None:
            t.plans.append(
                Plan(
                    r["span_id"],
                    r["parent_span_id"],
                    r["plan_id"],
                    int(r["version"]),
                    r["scope"],
                    r["replan_reason"],
                    int(r["step_count"]),
                    bool(r["json_valid"]),
                    int(r["start_ns"]),
                )
            )
    for r in rows(Q.LOAD_PLAN_STEPS):
        t = traces.get(r["trace_id"])
        if t is not None:
            t.plan_steps.append(
                PlanStep(
                    r["plan_span_id"],
                    r["plan_id"],
                    int(r["plan_version"]),
                    int(r["position"]),
                    r["step_id"],
                    r["description"],
                    r["executor"],
                    r["tool"],
                    _ints(r["depends_on"]),
                    _ints(r["requires"]),
                    _ints(r["produces"]),
                    bool(r["irreversible"]),
                )
            )
    for r in rows(Q.LOAD_LLM_BY_PARENT):
        t = traces.get(r["trace_id"])
        if t is not None:
            t.llm_spans += int(r["calls"])
            t.llm_by_parent[r["parent_span_id"]] = (int(r["tokens"]), float(r["cost_usd"]))
            t.llm_span_ids.update(r["span_ids"])
    for r in rows(Q.LOAD_STEP_ATTEMPTS):
        t = traces.get(r["trace_id"])
        if t is None:
            continue
        tokens, cost = t.llm_by_parent.get(r["span_id"], (0, 0.0))
        fingerprint = r["fingerprint"]
        if not fingerprint and r["status"] in ("error", "skipped"):
            fingerprint = derive_fingerprint(r["error_type"], r["status_message"])
        t.attempts.append(
            Attempt(
                r["span_id"],
                r["parent_span_id"],
                r["plan_id"],
                int(r["plan_version"]),
                r["step_id"],
                int(r["attempt"]),
                r["status"],
                r["error_type"],
                fingerprint,
                r["executor"],
                tuple(r["context_keys"] or ()),
                int(r["context_tokens"]),
                r["self_assessment"],
                int(r["depth"]),
                r["input_hash"],
                int(r["start_ns"]),
                int(r["end_ns"]),
                tokens,
                cost,
            )
        )
    for r in rows(Q.LOAD_TOOL_CALLS):
        t = traces.get(r["trace_id"])
        if t is not None:
            t.tools.append(
                ToolCall(
                    r["span_id"],
                    r["parent_span_id"],
                    r["step_id"],
                    int(r["attempt"]),
                    r["plan_id"],
                    int(r["plan_version"]),
                    r["tool"],
                    r["resource"],
                    r["effect"],
                    r["args_key"],
                    r["error_type"],
                    r["status_code"],
                    int(r["start_ns"]),
                    int(r["duration_ns"]),
                )
            )
    _load_raw_where_needed(store, project, traces)
    return traces


def typed_span_count(t: TraceData) -> int:
    """How many of the trace's spans the typed tables account for."""
    return len(t.runs) + len(t.plans) + len(t.attempts) + len(t.tools) + t.llm_spans


def _load_raw_where_needed(store: Queryable, project: str, traces: dict[str, TraceData]) -> None:
    """Span skeletons for traces with spans outside the typed tables (third-party spans)."""
    partial = [t for t in traces.values() if typed_span_count(t) < t.span_count]
    if not partial:
        return
    params = {
        "project": project,
        "ids": ",".join(t.trace_id for t in partial),
        "since": ns_to_datetime(max(0, min(t.start_ns for t in partial) - PARTITION_SLACK_NS)),
        "until": ns_to_datetime(max(t.end_ns for t in partial) + PARTITION_SLACK_NS),
    }
    for t in partial:
        t.raw = []
    for r in store.query(Q.LOAD_RAW_SKELETON, params):
        found = traces.get(r["trace_id"])
        if found is not None and found.raw is not None:
            found.raw.append(
                RawSpan(r["span_id"], r["parent_span_id"], r["name"], r["status_code"])
            )

"""Load a batch of traces from the typed tables into :class:`TraceData` values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, Protocol

from planscope.fingerprints import status_fingerprint

from . import _queries as Q
from ._model import (
    Attempt,
    Plan,
    PlanStep,
    RawSpan,
    Run,
    SchedulerSpan,
    ToolCall,
    TraceData,
    parse_json_object,
)

PARTITION_SLACK_NS = 3600 * 10**9
"""Rows are read from 1 h before the batch's earliest trace start (spans of a trace may start
before its first indexed span by clock skew between services)."""


class Queryable(Protocol):
    """What the analyzer needs from a store (``planscope_collector.storage.Store``).

    A store that also has ``query_arrow(sql, parameters) -> pyarrow.Table`` (the real one does)
    is read column by column; otherwise through ``query``'s dict rows, with the same result.
    """

    def query(self, sql: str, parameters: Any = None) -> list[dict[str, Any]]: ...

    def command(self, sql: str, parameters: Any = None) -> None: ...


def ns_to_datetime(ns: int) -> datetime:
    """Unix nanoseconds → naive UTC datetime (microsecond precision) for DateTime64 params."""
    return datetime.fromtimestamp(ns / 1e9, tz=timezone.utc).replace(tzinfo=None)


def _check_ids(ids: Sequence[str]) -> list[str]:
    """Trace ids are hex (the OTLP convention); anything else cannot be stored, so skip it."""
    return sorted({i for i in ids if i and all(c in "0123456789abcdef" for c in i)})


def fetch_columns(store: Queryable, sql: str, params: Mapping[str, Any]) -> dict[str, list[Any]]:
    """A SELECT's result as one Python list per column (empty dict when no rows).

    Through ``store.query_arrow`` when the store has it (no per-row dict is ever built), else
    through ``store.query``.
    """
    query_arrow = getattr(store, "query_arrow", None)
    if query_arrow is not None:
        table = query_arrow(sql, params)
        if table.num_rows == 0:
            return {}
        return {name: table.column(name).to_pylist() for name in table.column_names}
    rows = store.query(sql, params)
    if not rows:
        return {}
    return {name: [r[name] for r in rows] for name in rows[0]}


_fingerprint = lru_cache(maxsize=1 << 16)(status_fingerprint)
"""Error messages repeat a lot across traces (the same failure in many runs)."""


def trace_starts(
    store: Queryable, project: str, trace_ids: Sequence[str], since_ns: int | None = None
) -> dict[str, int]:
    """The start (unix ns) of each of these traces that the trace index knows."""
    ids = _check_ids(trace_ids)
    if not ids:
        return {}
    since = ns_to_datetime(max(0, since_ns - PARTITION_SLACK_NS) if since_ns is not None else 0)
    cols = fetch_columns(
        store,
        Q.TRACE_STARTS.format(filter=Q.TRACE_FILTER),
        {"project": project, "ids": ",".join(ids), "since": since},
    )
    return dict(zip(cols.get("trace_id", ()), map(int, cols.get("start_ns", ())), strict=True))


def load_traces(
    store: Queryable, project: str, trace_ids: Sequence[str], since_ns: int | None = None
) -> dict[str, TraceData]:
    """Read every typed row of ``trace_ids`` (one query per table) into ``TraceData``.

    ``since_ns`` (the earliest start of these traces, when known) lets the reads skip older
    partitions; without it the trace index is asked first. Reads of the typed tables stop at
    the batch's latest span end, so newer partitions are skipped as well.

    >>> # load_traces(store, "default", ["5b8e..."])["5b8e..."].attempts
    """
    ids = _check_ids(trace_ids)
    if not ids:
        return {}
    params: dict[str, Any] = {"project": project, "ids": ",".join(ids), "since": ns_to_datetime(0)}
    if since_ns is not None:
        params["since"] = ns_to_datetime(max(0, since_ns - PARTITION_SLACK_NS))
    index = fetch_columns(store, Q.LOAD_INDEX.format(filter=Q.TRACE_FILTER), params)
    if not index:
        return {}
    traces: dict[str, TraceData] = {}
    for trace_id, start, end, spans, has_root in zip(
        index["trace_id"],
        index["start_ns"],
        index["end_ns"],
        index["spans"],
        index["has_root"],
        strict=True,
    ):
        traces[trace_id] = TraceData(
            project,
            trace_id,
            start_ns=int(start),
            end_ns=int(end),
            span_count=int(spans),
            has_root=bool(has_root),
        )
    if since_ns is None:
        earliest = min(t.start_ns for t in traces.values())
        params["since"] = ns_to_datetime(max(0, earliest - PARTITION_SLACK_NS))
    params["until"] = ns_to_datetime(max(t.end_ns for t in traces.values()) + PARTITION_SLACK_NS)

    def columns(sql: str) -> dict[str, list[Any]]:
        return fetch_columns(store, sql.format(filter=Q.TYPED_FILTER), params)

    get = traces.get
    c = columns(Q.LOAD_RUNS)
    if c:
        runs = map(
            Run._make,
            zip(
                c["span_id"],
                c["parent_span_id"],
                c["run_id"],
                c["variant"],
                c["outcome"],
                c["outcome_reason"],
                map(parse_json_object, c["budget"]),
                map(int, c["start_ns"]),
                map(int, c["end_ns"]),
                c["status_code"],
                c["objective"],
                map(bool, c["inferred"]),
                strict=True,
            ),
        )
        for trace_id, run in zip(c["trace_id"], runs, strict=True):
            if (t := get(trace_id)) is not None:
                t.runs.append(run)
    c = columns(Q.LOAD_PLANS)
    if c:
        plans = map(
            Plan._make,
            zip(
                c["span_id"],
                c["parent_span_id"],
                c["plan_id"],
                map(int, c["version"]),
                c["scope"],
                c["replan_reason"],
                map(int, c["step_count"]),
                map(bool, c["json_valid"]),
                map(int, c["start_ns"]),
                map(bool, c["inferred"]),
                strict=True,
            ),
        )
        for trace_id, plan in zip(c["trace_id"], plans, strict=True):
            if (t := get(trace_id)) is not None:
                t.plans.append(plan)
    c = columns(Q.LOAD_PLAN_STEPS)
    if c:
        steps = map(
            PlanStep._make,
            zip(
                c["plan_span_id"],
                c["plan_id"],
                map(int, c["plan_version"]),
                map(int, c["position"]),
                c["step_id"],
                c["description"],
                c["executor"],
                c["tool"],
                map(_strings, c["depends_on"]),
                map(_strings, c["requires"]),
                map(_strings, c["produces"]),
                map(bool, c["irreversible"]),
                strict=True,
            ),
        )
        for trace_id, step in zip(c["trace_id"], steps, strict=True):
            if (t := get(trace_id)) is not None:
                t.plan_steps.append(step)
    c = columns(Q.LOAD_LLM_BY_PARENT)
    for trace_id, parent, tokens, cost, calls, span_ids in zip(
        c.get("trace_id", ()),
        c.get("parent_span_id", ()),
        c.get("tokens", ()),
        c.get("cost_usd", ()),
        c.get("calls", ()),
        c.get("span_ids", ()),
        strict=True,
    ):
        if (t := get(trace_id)) is not None:
            t.llm_spans += int(calls)
            t.llm_by_parent[parent] = (int(tokens), float(cost))
            t.llm_span_ids.update(span_ids)
    c = columns(Q.LOAD_STEP_ATTEMPTS)
    if c:
        trace_col = c["trace_id"]
        span_col = c["span_id"]
        usage = [
            t.llm_by_parent.get(span_id, _NO_USAGE)
            if (t := get(trace_id)) is not None
            else _NO_USAGE
            for trace_id, span_id in zip(trace_col, span_col, strict=True)
        ]
        fingerprints = [
            fp if fp or status not in ("error", "skipped") else _fingerprint(error_type, message)
            for fp, status, error_type, message in zip(
                c["fingerprint"], c["status"], c["error_type"], c["status_message"], strict=True
            )
        ]
        attempts = map(
            Attempt._make,
            zip(
                span_col,
                c["parent_span_id"],
                c["plan_id"],
                map(int, c["plan_version"]),
                c["step_id"],
                map(int, c["attempt"]),
                c["status"],
                c["error_type"],
                fingerprints,
                c["executor"],
                map(_strings, c["context_keys"]),
                map(int, c["context_tokens"]),
                c["self_assessment"],
                map(int, c["depth"]),
                c["input_hash"],
                map(int, c["start_ns"]),
                map(int, c["end_ns"]),
                (u[0] for u in usage),
                (u[1] for u in usage),
                c["status_message"],
                map(_recorded, c["context_keys"], c["context_tokens"]),
                map(bool, c["inferred"]),
                strict=True,
            ),
        )
        for trace_id, attempt in zip(trace_col, attempts, strict=True):
            if (t := get(trace_id)) is not None:
                t.attempts.append(attempt)
        _load_empty_context(store, project, traces)
    c = columns(Q.LOAD_TOOL_CALLS)
    if c:
        tools = map(
            ToolCall._make,
            zip(
                c["span_id"],
                c["parent_span_id"],
                c["step_id"],
                map(int, c["attempt"]),
                c["plan_id"],
                map(int, c["plan_version"]),
                c["tool"],
                c["resource"],
                c["effect"],
                c["args_key"],
                c["error_type"],
                c["status_code"],
                map(int, c["start_ns"]),
                map(int, c["duration_ns"]),
                c["arguments"],
                strict=True,
            ),
        )
        for trace_id, tool in zip(c["trace_id"], tools, strict=True):
            if (t := get(trace_id)) is not None:
                t.tools.append(tool)
    _load_raw_where_needed(store, project, traces)
    return traces


_NO_USAGE = (0, 0.0)


def _recorded(keys: Any, tokens: Any) -> bool:
    """Context keys or a token count on the row: the attempt recorded its context."""
    return bool(keys) or bool(tokens)


def _strings(values: Any) -> tuple[str, ...]:
    """An Array(String) value as a tuple of str."""
    return tuple(values) if values else ()


def typed_span_count(t: TraceData) -> int:
    """How many of the trace's spans the typed tables account for."""
    return (
        len(t.runs)
        + len(t.plans)
        + len(t.attempts)
        + len(t.tools)
        + t.llm_spans
        + len(t.scheduling)
    )


def _load_empty_context(store: Queryable, project: str, traces: dict[str, TraceData]) -> None:
    """Mark attempts that recorded an empty context, in traces whose plan steps require keys
    and that have attempts without any recorded key (the only ones where it matters)."""
    ambiguous = [
        t
        for t in traces.values()
        if any(s.requires for s in t.plan_steps) and any(not a.context_recorded for a in t.attempts)
    ]
    if not ambiguous:
        return
    params = {
        "project": project,
        "ids": ",".join(t.trace_id for t in ambiguous),
        "since": ns_to_datetime(max(0, min(t.start_ns for t in ambiguous) - PARTITION_SLACK_NS)),
        "until": ns_to_datetime(max(t.end_ns for t in ambiguous) + PARTITION_SLACK_NS),
    }
    c = fetch_columns(store, Q.LOAD_EMPTY_CONTEXT, params)
    empty: dict[str, set[str]] = {}
    for trace_id, span_id in zip(c.get("trace_id", ()), c.get("span_id", ()), strict=True):
        empty.setdefault(trace_id, set()).add(span_id)
    for t in ambiguous:
        spans = empty.get(t.trace_id)
        if spans:
            t.attempts = [
                a._replace(context_recorded=True) if a.span_id in spans else a for a in t.attempts
            ]


def _load_raw_where_needed(store: Queryable, project: str, traces: dict[str, TraceData]) -> None:
    """Scheduler spans, then span skeletons, for traces with spans outside the typed tables
    (a central scheduler's, third-party spans)."""
    partial = [t for t in traces.values() if typed_span_count(t) < t.span_count]
    if not partial:
        return
    params = {
        "project": project,
        "ids": ",".join(t.trace_id for t in partial),
        "since": ns_to_datetime(max(0, min(t.start_ns for t in partial) - PARTITION_SLACK_NS)),
        "until": ns_to_datetime(max(t.end_ns for t in partial) + PARTITION_SLACK_NS),
    }
    c = fetch_columns(store, Q.LOAD_SCHEDULER, params)
    if c:
        rows = map(SchedulerSpan._make, zip(*(c[f] for f in SchedulerSpan._fields), strict=True))
        for trace_id, row in zip(c["trace_id"], rows, strict=True):
            found = traces.get(trace_id)
            if found is not None:
                found.scheduling.append(row)
    partial = [t for t in partial if typed_span_count(t) < t.span_count]
    if not partial:
        return
    params["ids"] = ",".join(t.trace_id for t in partial)
    for t in partial:
        t.raw = []
    c = fetch_columns(store, Q.LOAD_RAW_SKELETON, params)
    if not c:
        return
    spans = map(
        RawSpan._make,
        zip(
            c["span_id"],
            c["parent_span_id"],
            c["name"],
            c["status_code"],
            c["message"],
            strict=True,
        ),
    )
    for trace_id, span in zip(c["trace_id"], spans, strict=True):
        found = traces.get(trace_id)
        if found is not None and found.raw is not None:
            found.raw.append(span)

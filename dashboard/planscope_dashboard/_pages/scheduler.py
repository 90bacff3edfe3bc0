"""Scheduler: a central scheduler's queue over time and the waits of the runs it served.

Reads the ``scheduler.queue`` and ``scheduler.context_switch`` spans (docs/semantic-conventions.md,
"Central scheduler spans") of the newest runs of the time range through the query API, groups
them by ``planscope.scheduler.id`` (one kernel may serve many runs, each its own trace) and
draws the number of waiting requests over time (+1 at a wait's start, -1 at its grant) and the
waits per run, next to the preemptions each run suffered.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go
import streamlit as st
from planscope import semconv as A
from planscope.client import ClientSettings

from .. import _state as S
from ._common import no_traces, rows_table

MAX_RUNS = 60
"""Newest runs whose spans are read (scheduler spans are not in the trace list)."""


@dataclass(frozen=True)
class Wait:
    """One ``scheduler.queue`` span."""

    kernel: str
    policy: str
    slots: int
    trace_id: str
    requester: str
    reason: str
    start_ns: int
    end_ns: int
    wait_ms: float
    queue_length: int


def waits_of(trace: dict[str, Any]) -> tuple[list[Wait], dict[str, int]]:
    """The queue waits of one trace, and its context switches per kernel.

    >>> waits_of({"trace_id": "t", "spans": []})
    ([], {})
    """
    waits: list[Wait] = []
    switches: dict[str, int] = defaultdict(int)
    for span in trace.get("spans") or []:
        attrs = span.get("attributes") or {}
        kernel = str(attrs.get(A.SCHEDULER_ID) or "")
        if not kernel:
            continue
        if span.get("name") == A.SPAN_SCHEDULER_CONTEXT_SWITCH:
            switches[kernel] += attrs.get(A.SCHEDULER_SWITCH_OP) == A.SWITCH_SAVE
            continue
        if span.get("name") != A.SPAN_SCHEDULER_QUEUE:
            continue
        start, end = int(span.get("start_ns") or 0), int(span.get("end_ns") or 0)
        waits.append(
            Wait(
                kernel=kernel,
                policy=str(attrs.get(A.SCHEDULER_POLICY) or ""),
                slots=_int(attrs.get(A.SCHEDULER_SLOTS)),
                trace_id=str(trace.get("trace_id") or ""),
                requester=str(attrs.get(A.SCHEDULER_REQUESTER) or ""),
                reason=str(attrs.get(A.SCHEDULER_REASON) or ""),
                start_ns=start,
                end_ns=max(end, start),
                wait_ms=_float(attrs.get(A.SCHEDULER_WAIT_MS), (end - start) / 1e6),
                queue_length=_int(attrs.get(A.SCHEDULER_QUEUE_LENGTH)),
            )
        )
    return waits, dict(switches)


def queue_over_time(waits: list[Wait]) -> list[tuple[int, int]]:
    """(time ns, requests waiting) after every arrival and grant, in time order.

    >>> w = [Wait("k", "fifo", 1, "t", "a", "arrival", 0, 10, 0.0, 1),
    ...      Wait("k", "fifo", 1, "t", "b", "arrival", 5, 20, 0.0, 2)]
    >>> queue_over_time(w)
    [(0, 1), (5, 2), (10, 1), (20, 0)]
    """
    changes = sorted([(w.start_ns, 1) for w in waits] + [(w.end_ns, -1) for w in waits])
    out: list[tuple[int, int]] = []
    level = 0
    for at, delta in changes:
        level += delta
        if out and out[-1][0] == at:
            out[-1] = (at, level)
        else:
            out.append((at, level))
    return out


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _float(value: Any, default: float) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


@st.cache_data(ttl=S.CACHE_TTL, show_spinner=False, max_entries=16)
def _scheduler_waits(
    settings: ClientSettings, trace_ids: tuple[str, ...]
) -> tuple[list[Wait], dict[tuple[str, str], int]]:
    waits: list[Wait] = []
    switches: dict[tuple[str, str], int] = {}
    for trace in S.client_for(settings).get_traces(trace_ids):
        found, saved = waits_of(trace)
        waits += found
        for kernel, n in saved.items():
            switches[(kernel, str(trace.get("trace_id") or ""))] = n
    return waits, switches


def render(settings: ClientSettings, filters: S.Filters) -> None:
    st.header("Scheduler")
    with st.spinner("Loading runs…"):
        rows, _ = S.recent_traces(settings, filters.service, filters.since_ns, S.MAX_LIST_ROWS)
    runs = [r for r in rows if r.get("variant") == "scheduler"][:MAX_RUNS]
    if not rows:
        no_traces(settings)
        return
    if not runs:
        st.info(
            "No run behind a central scheduler in this time range. Run one with "
            "`planscope run --variant scheduler --task ops-audit-wide --collector URL` "
            "(or `--concurrent 4` for several runs sharing one kernel)."
        )
        return
    waits, switches = _scheduler_waits(settings, tuple(str(r["trace_id"]) for r in runs))
    kernels = sorted(
        {w.kernel for w in waits}, key=lambda k: -max(w.end_ns for w in waits if w.kernel == k)
    )
    if not kernels:
        st.info("These runs recorded no scheduler.queue spans.")
        return

    def label(kernel: str) -> str:
        mine = [w for w in waits if w.kernel == kernel]
        traces = {w.trace_id for w in mine}
        return f"{kernel} ({mine[0].policy}, {mine[0].slots} slots, {len(traces)} runs)"

    kernel = st.selectbox("Scheduler", kernels, format_func=label, key="scheduler_kernel")
    mine = [w for w in waits if w.kernel == kernel]
    origin = min(w.start_ns for w in mine)
    points = queue_over_time(mine)
    a, b, c, d = st.columns(4)
    a.metric("Requests", len(mine))
    b.metric("Max waiting", max(level for _, level in points))
    c.metric("Median wait", f"{sorted(w.wait_ms for w in mine)[len(mine) // 2]:.1f} ms")
    d.metric("Preemptions", sum(n for (k, _), n in switches.items() if k == kernel))
    st.subheader("Queue length over time")
    figure = go.Figure(
        go.Scatter(
            x=[(at - origin) / 1e6 for at, _ in points],
            y=[level for _, level in points],
            mode="lines",
            line={"shape": "hv"},
            name="waiting",
        )
    )
    figure.update_layout(
        xaxis_title="ms since the first request", yaxis_title="requests waiting", height=280
    )
    st.plotly_chart(figure, key="scheduler_queue", config={"displaylogo": False})
    st.subheader("Waits per run")
    by_run: dict[str, list[Wait]] = defaultdict(list)
    for w in mine:
        by_run[w.trace_id].append(w)
    table: list[dict[str, Any]] = []
    for trace_id, items in by_run.items():
        ordered = sorted(x.wait_ms for x in items)
        table.append(
            {
                "trace": trace_id,
                "requests": len(items),
                "preempted_requeues": sum(x.reason == "preempted" for x in items),
                "context_saves": switches.get((kernel, trace_id), 0),
                "median_wait_ms": round(ordered[len(ordered) // 2], 2),
                "max_wait_ms": round(ordered[-1], 2),
                "total_wait_ms": round(sum(ordered), 2),
            }
        )
    table.sort(key=lambda row: -float(row["max_wait_ms"]))
    waits_fig = go.Figure(
        go.Box(
            x=[w.wait_ms for w in mine],
            y=[w.trace_id[:8] for w in mine],
            orientation="h",
            boxpoints="all",
            name="wait",
        )
    )
    waits_fig.update_layout(xaxis_title="wait (ms)", yaxis_title="run (trace)", height=300)
    st.plotly_chart(waits_fig, key="scheduler_waits", config={"displaylogo": False})
    rows_table(table, key="scheduler_runs")

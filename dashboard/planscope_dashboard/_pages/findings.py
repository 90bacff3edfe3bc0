"""Findings: the analyzers' list and trends per detector (empty state without an analyzer)."""

from __future__ import annotations

import time

import streamlit as st
from planscope.client import ClientSettings

from .. import _aggregate as G
from .. import _charts as C
from .. import _state as S
from .._safe import cap
from ._common import analysis_unavailable, rows_table, when


def render(settings: ClientSettings, filters: S.Filters) -> None:
    st.header("Findings")
    with st.spinner("Loading findings…"):
        available, everything = S.findings(settings, filters.since_ns)
    if not available:
        analysis_unavailable()
        return
    kinds = ["", *sorted({f.kind for f in everything})]
    severities = ["", *sorted({f.severity for f in everything})]
    c1, c2 = st.columns(2)
    kind = S.bound_select(c1, "Detector", kinds, "fkind", "", lambda v: v or "all detectors")
    severity = S.bound_select(
        c2, "Severity", severities, "fsev", "", lambda v: v or "all severities"
    )
    found = [
        f
        for f in everything
        if (not kind or f.kind == kind) and (not severity or f.severity == severity)
    ]
    if filters.agent or filters.service:
        rows, _ = S.recent_traces(settings, filters.service, filters.since_ns, S.MAX_LIST_ROWS)
        keep = {r["trace_id"] for r in G.filter_traces(rows, agent=filters.agent)}
        found = [f for f in found if f.trace_id in keep]
    if not found:
        st.info(
            "No findings in this time range"
            + (" for these filters" if kind or severity else "")
            + ". Widen the time range, or send runs that misbehave (e.g. "
            "`planscope run --scenario runaway-loop`)."
        )
        return
    by_kind = G.findings_by_kind(found)
    cols = st.columns(3)
    cols[0].metric("Findings", len(found))
    cols[1].metric("Wasted tokens", f"{sum(k['wasted_tokens'] for k in by_kind):,}")
    cols[2].metric("Runs affected", len({f.trace_id for f in found}))
    times = [f.time_ns for f in found if f.time_ns]
    left, right = st.columns(2)
    with left:
        st.subheader("Trend per detector")
        if times:
            until = time.time_ns()
            start = filters.since_ns if filters.since_ns is not None else min(times)
            width = G.bucket_ns(max(until - start, 1))
            kinds = [k["kind"] for k in by_kind]
            st.plotly_chart(
                C.time_chart(
                    C.wide(G.findings_over_time(found, width), "kind", "findings"),
                    series={k: k for k in kinds},
                    width_ns=width,
                    since_ns=filters.since_ns,
                    until_ns=until,
                ),
                key="findings_trend",
            )
        else:
            st.info("These findings carry no time, so no trend can be drawn.")
    with right:
        st.subheader("Per detector")
        rows_table(by_kind)
    st.subheader("All findings")
    rows_table(
        [
            {
                "time": when(f.time_ns),
                "severity": f.severity,
                "kind": f.kind,
                "step": f.step_id or "",
                "component": f.component or "",
                "wasted tokens": f.wasted_tokens,
                "wasted s": round(f.wasted_seconds, 3) if f.wasted_seconds is not None else None,
                "explanation": cap(f.explanation, 300),
                "trace_id": f.trace_id,
            }
            for f in found[:2000]
        ]
    )
    c1, c2 = st.columns([4, 1])
    index = c1.selectbox(
        "Open the run of a finding",
        list(range(min(len(found), 2000))),
        format_func=lambda i: (
            f"{found[i].severity} · {found[i].kind} · "
            f"{found[i].step_id or found[i].component or ''} · {found[i].trace_id[:12]}"
        ),
        key="finding_open",
    )
    c2.write("")
    if c2.button("Open run", key="finding_open_btn"):
        f = found[int(index)]
        S.navigate(page="run", trace=f.trace_id, step=f.step_id, version=None, span=None)

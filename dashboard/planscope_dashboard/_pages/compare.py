"""Compare: runtime variants and individual runs side by side."""

from __future__ import annotations

from typing import Any

import streamlit as st
from planscope.client import ClientSettings

from .. import _aggregate as G
from .. import _charts as C
from .. import _state as S
from .._dag import layout_dag
from ._common import fmt_ms, no_traces, rows_table


def render(settings: ClientSettings, filters: S.Filters) -> None:
    st.header("Compare")
    with st.spinner("Loading runs…"):
        rows, _ = S.recent_traces(settings, filters.service, filters.since_ns, S.MAX_LIST_ROWS)
    rows = [r for r in G.filter_traces(rows, agent=filters.agent) if r.get("run_id")]
    if not rows:
        no_traces(settings)
        return
    tab_variants, tab_runs = st.tabs(["Variants", "Runs side by side"])
    with tab_variants:
        _variants(settings, filters)
    with tab_runs:
        _runs(settings, rows)


def _server_summary(stats: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``/api/stats/variants`` rows in the table's shape (every run of the range)."""
    out = []
    for v in stats:
        p50, p95 = v.get("p50_duration_ns"), v.get("p95_duration_ns")
        out.append(
            {
                "variant": str(v.get("variant") or "(none)"),
                "runs": v["runs"],
                "success_rate": v.get("success_rate"),
                "tokens_per_run": v.get("tokens_per_run"),
                "cost_per_run_usd": v.get("cost_per_run_usd"),
                "p50_ms": round(p50 / 1e6, 2) if p50 is not None else None,
                "p95_ms": round(p95 / 1e6, 2) if p95 is not None else None,
                "replans_per_run": v.get("replans_per_run"),
                "retries_per_run": v.get("retries_per_run"),
            }
        )
    return out


def _variants(settings: ClientSettings, filters: S.Filters) -> None:
    stats = S.stats_variants(settings, filters.service, filters.agent, filters.since_ns)
    summary = _server_summary(stats)
    st.caption(f"{sum(s['runs'] for s in summary)} runs of the range, every one counted.")
    rows_table(summary)
    _variant_charts(summary)


def _variant_charts(summary: list[dict[str, Any]]) -> None:
    labels = [s["variant"] for s in summary]
    charts = (
        ("success_rate", "Success rate", "#2e7d32"),
        ("tokens_per_run", "Tokens per run", "#5c6bc0"),
        ("p95_ms", "p95 latency (ms)", "#ef6c00"),
        ("replans_per_run", "Replans per run", "#8e24aa"),
    )
    cols = st.columns(2)
    for i, (column, title, colour) in enumerate(charts):
        with cols[i % 2]:
            st.text(title)
            st.plotly_chart(
                C.bars(
                    labels,
                    [s[column] or 0 for s in summary],
                    name=title,
                    colour=colour,
                    height=60 + 40 * max(1, len(labels)),
                ),
                key=f"cmp_{column}",
            )


def _runs(settings: ClientSettings, rows: list[dict[str, Any]]) -> None:
    by_id = {r["trace_id"]: r for r in rows}
    options = list(by_id)[:500]
    default = [t for t in S.qp_get("cmp").split(",") if t in by_id][:4]
    chosen = st.multiselect(
        "Runs (up to 4)",
        options,
        default=default,
        max_selections=4,
        format_func=lambda t: (
            f"{t[:12]} · {by_id[t].get('variant') or '-'} · {G.outcome_of(by_id[t])}"
        ),
        key="cmp_runs",
    )
    S.qp_set("cmp", ",".join(chosen))
    if not chosen:
        st.info("Pick two or more runs to compare their numbers and plans.")
        return
    with st.spinner("Reading the selected runs…"):
        views = {v.trace_id: v for v in S.run_views(settings, list(chosen))}
    table = []
    for tid in chosen:
        r = by_id[tid]
        table.append(
            {
                "trace_id": tid,
                "variant": r.get("variant") or "",
                "outcome": G.outcome_of(r),
                "tokens": int(r.get("input_tokens") or 0) + int(r.get("output_tokens") or 0),
                "cost_usd": round(float(r.get("cost_usd") or 0), 6),
                "duration": fmt_ms(int(r.get("duration_ns") or 0) / 1e6),
                # the run model's numbers, as /api/traces answers them
                "attempts": r.get("step_attempts"),
                "retries": r.get("retries"),
                "replans": r.get("replans"),
                "failed steps": r.get("failed_steps"),
            }
        )
    rows_table(table)
    cols = st.columns(len(chosen))
    for col, tid in zip(cols, chosen, strict=True):
        view = views.get(tid)
        with col:
            st.text(f"{tid[:12]} · {by_id[tid].get('variant') or '-'}")
            if view is None or not view.plans:
                st.info("No plan recorded.")
                continue
            plan = view.plans[-1]
            st.plotly_chart(C.dag_figure(layout_dag(view, plan)), key=f"cmp_dag_{tid}")
            if st.button("Open run", key=f"cmp_open_{tid}"):
                S.navigate(page="run", trace=tid, version=None, step=None, span=None)

"""Trace explorer: searchable, filterable, paged table of runs; select a row to open the run.

Search, filters and paging run in the collector (``/api/traces`` with ``agent``, ``variant``,
``outcome``, ``q``, ``offset``; attempts, retries and replans come with each row).
"""

from __future__ import annotations

from typing import Any

import streamlit as st
from planscope.client import ClientSettings

from .. import _aggregate as G
from .. import _state as S
from .._findings import findings_by_trace
from ._common import column_formats, ms, no_traces, when

PAGE_SIZE = 25
COLUMNS = {
    "started": st.column_config.DatetimeColumn("started", format="YYYY-MM-DD HH:mm:ss"),
    **column_formats(["cost_usd", "duration_ms", "trace_id"]),
}
"""How the run tables show their typed columns."""
OUTCOMES = ["", "success", "failure", "unknown", G.NO_RUN]


def _page_number() -> int:
    try:
        return max(1, int(S.qp_get("pg", "1")))
    except ValueError:
        return 1


def render(settings: ClientSettings, filters: S.Filters) -> None:
    st.header("Trace explorer")
    variants_stats = S.stats_variants(settings, filters.service, filters.agent, filters.since_ns)
    variants = ["", *sorted({str(v["variant"]) for v in variants_stats if v.get("variant")})]
    c1, c2, c3 = st.columns([3, 1, 1])
    search = S.bound_text(c1, "Search", "q", "trace id, run id, root span, agent, variant…")
    outcome = S.bound_select(c2, "Outcome", OUTCOMES, "outcome", "", lambda v: v or "any outcome")
    variant = S.bound_select(c3, "Variant", variants, "variant", "", lambda v: v or "any variant")
    page = _page_number()
    with st.spinner("Loading runs…"):
        body = S.traces_page(
            settings,
            filters.service,
            filters.agent,
            filters.since_ns,
            variant or None,
            outcome or None,
            search or None,
            PAGE_SIZE,
            (page - 1) * PAGE_SIZE,
        )
    page_rows: list[dict[str, Any]] = body.traces
    if not page_rows and page > 1:
        S.navigate(pg=None)
    filtered = bool(search or outcome or variant)
    if not page_rows:
        if filtered:
            st.info("No run matches these filters; clear the search or pick another outcome.")
        else:
            no_traces(settings)
        return
    more = body.next_offset is not None
    first = (page - 1) * PAGE_SIZE + 1
    st.caption(
        f"traces {first} to {first + len(page_rows) - 1}"
        + (", more on the next page" if more else "")
        + f" · page {page}"
        + (" · filtered" if filtered else "")
    )
    available, found = S.findings(settings, filters.since_ns)
    counts = findings_by_trace(found) if available else {}
    metrics = {
        r["trace_id"]: {
            "attempts": r.get("step_attempts"),
            "retries": r.get("retries"),
            "replans": r.get("replans"),
        }
        for r in page_rows
        if r.get("run_id")
    }
    _table(page_rows, metrics, counts, available, page, page > 1, more)


def _table(
    page_rows: list[dict[str, Any]],
    metrics: dict[str, dict[str, Any]],
    counts: dict[str, int],
    available: bool,
    page: int,
    has_prev: bool,
    has_next: bool,
) -> None:
    table = [row(r, metrics.get(r["trace_id"]), counts, available) for r in page_rows]
    import pandas as pd

    event = st.dataframe(
        pd.DataFrame(table),
        hide_index=True,
        width="stretch",
        on_select="rerun",
        selection_mode="single-row",
        key=f"traces_table_{page}",
        column_config=COLUMNS,
    )
    selected = getattr(getattr(event, "selection", None), "rows", None) or []
    if selected:
        S.navigate(
            page="run", trace=page_rows[selected[0]]["trace_id"], version=None, step=None, span=None
        )
    prev_col, next_col, open_col, go_col = st.columns([1, 1, 3, 1])
    if prev_col.button("◀ Previous", disabled=not has_prev):
        S.navigate(pg=str(page - 1) if page > 2 else None)
    if next_col.button("Next ▶", disabled=not has_next):
        S.navigate(pg=str(page + 1))
    target = open_col.selectbox(
        "Open a run",
        [r["trace_id"] for r in page_rows],
        format_func=lambda t: _label(next(r for r in page_rows if r["trace_id"] == t)),
        key="open_run",
    )
    go_col.write("")
    if go_col.button("Open run", key="open_run_btn"):
        S.navigate(page="run", trace=str(target), version=None, step=None, span=None)
    st.caption("Select a row (click its left edge) or use “Open run” to see the run in detail.")


def _label(row: dict[str, Any]) -> str:
    return (
        f"{row['trace_id'][:12]} · {row.get('variant') or '-'} · {G.outcome_of(row)} · "
        f"{row.get('agent') or row.get('root_name') or ''}"
    )


def row(
    r: dict[str, Any], m: dict[str, Any] | None, counts: dict[str, int], available: bool
) -> dict[str, Any]:
    return {
        "started": when(r.get("start_ns")),
        "outcome": G.outcome_of(r),
        "variant": r.get("variant") or "",
        "agent": r.get("agent") or r.get("root_service") or "",
        "findings": counts.get(r["trace_id"], 0) if available else None,
        "attempts": m["attempts"] if m else None,
        "retries": m["retries"] if m else None,
        "replans": m["replans"] if m else None,
        "tokens": int(r.get("input_tokens") or 0) + int(r.get("output_tokens") or 0),
        "cost_usd": float(r.get("cost_usd") or 0.0),
        "duration_ms": ms(r.get("duration_ns")),
        "spans": r.get("span_count"),
        "errors": r.get("error_count"),
        "trace_id": r["trace_id"],
    }

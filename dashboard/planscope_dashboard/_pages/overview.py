"""Overview: runs by outcome, findings by kind, tokens and cost, retry-budget burn, top failures."""

from __future__ import annotations

import streamlit as st

from .. import _aggregate as G
from .. import _charts as C
from .. import _state as S
from .._client import ClientSettings
from ._common import analysis_unavailable, fmt_ms, no_traces, rows_table


def render(settings: ClientSettings, filters: S.Filters) -> None:
    st.header("Overview")
    with st.spinner("Loading runs…"):
        rows, truncated = S.recent_traces(
            settings, filters.service, filters.since_ns, S.MAX_LIST_ROWS
        )
    rows = G.filter_traces(rows, agent=filters.agent)
    if not rows:
        no_traces(settings)
        return
    if truncated:
        st.caption(
            f"Showing the newest {S.MAX_LIST_ROWS} traces of the range; narrow the time range "
            "for exact totals."
        )
    available, found = S.findings(settings, filters.since_ns)
    trace_ids = {r["trace_id"] for r in rows}
    found = [f for f in found if not f.trace_id or f.trace_id in trace_ids] if found else []
    t = G.totals(rows)
    cols = st.columns(6)
    cols[0].metric("Runs", t.runs)
    cols[1].metric("Success rate", f"{t.success_rate:.0%}" if t.success_rate is not None else "-")
    cols[2].metric("Tokens", f"{t.tokens:,}")
    cols[3].metric("Cost", f"${t.cost_usd:,.4f}")
    cols[4].metric("p95 run time", fmt_ms(t.p95_ms))
    cols[5].metric("Findings", len(found) if available else "-")

    span = max(int(r["start_ns"]) for r in rows) - min(int(r["start_ns"]) for r in rows)
    width = G.bucket_ns(max(span, 1))
    left, right = st.columns(2)
    with left:
        st.subheader("Runs over time by outcome")
        st.plotly_chart(
            C.stacked_bars(
                G.runs_over_time(rows, width),
                x="bucket_ns",
                y="runs",
                colour="outcome",
                colours=C.OUTCOME_COLOURS,
            ),
            key="ov_runs",
        )
    with right:
        st.subheader("Findings by kind")
        if not available:
            analysis_unavailable()
        elif not found:
            st.info("No findings in this time range: the analyzers found nothing to report.")
        else:
            kinds = G.findings_by_kind(found)
            st.plotly_chart(
                C.bars(
                    [k["kind"] for k in kinds],
                    [k["findings"] for k in kinds],
                    name="findings",
                    colour="#d81b60",
                ),
                key="ov_findings",
            )
    left, right = st.columns(2)
    tokens = G.tokens_over_time(rows, width)
    with left:
        st.subheader("Tokens")
        st.plotly_chart(
            C.lines(
                tokens,
                x="bucket_ns",
                series={"input_tokens": "input tokens", "output_tokens": "output tokens"},
            ),
            key="ov_tokens",
        )
    with right:
        st.subheader("Cost (USD)")
        st.plotly_chart(
            C.lines(tokens, x="bucket_ns", series={"cost_usd": "cost USD"}), key="ov_cost"
        )

    runs = [r for r in rows if r.get("run_id")][: S.DETAIL_SAMPLE]
    with st.spinner(f"Reading the spans of {len(runs)} runs for step-level numbers…"):
        views = S.run_views(settings, [r["trace_id"] for r in runs])
    st.subheader("Retry-budget burn")
    st.caption(
        f"Step attempts beyond the first, over the newest {len(views)} runs of the range "
        f"(at most {S.DETAIL_SAMPLE} are read for step-level numbers)."
    )
    burn = G.retry_burn_over_time(views, width)
    total_retries = sum(b["retries"] for b in burn)
    exceeded = sum(G.run_metrics(v)["budget_exceeded"] for v in views)
    a, b, c = st.columns(3)
    a.metric("Attempts beyond the first", total_retries)
    b.metric("Retry budget exceeded", exceeded)
    c.metric("Retries per run", f"{total_retries / len(views):.2f}" if views else "-")
    if burn:
        st.plotly_chart(
            C.stacked_bars(
                [{**x, "series": "retries"} for x in burn],
                x="bucket_ns",
                y="retries",
                colour="series",
                colours={"retries": "#f9a825"},
                height=240,
            ),
            key="ov_burn",
        )
    left, right = st.columns(2)
    with left:
        st.subheader("Top failing plan steps")
        steps = [s for s in G.step_failures(views) if s["failed_runs"] or s["retries"]][:10]
        if steps:
            rows_table(steps)
        else:
            st.info("No step failed or retried in these runs.")
    with right:
        st.subheader("Agents by failures")
        agents = G.agent_failures(rows)[:10]
        if agents:
            rows_table(agents)
        else:
            st.info("No agent runs in this range.")

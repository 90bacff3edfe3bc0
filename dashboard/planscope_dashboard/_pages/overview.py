"""Overview: runs by outcome, findings by kind, tokens and cost, retry-budget burn, top failures.

Numbers come from the collector's ``/api/stats`` (computed in ClickHouse over every run of the
range).
"""

from __future__ import annotations

import time
from typing import Any

import streamlit as st
from planscope import api
from planscope.client import ClientSettings

from .. import _aggregate as G
from .. import _charts as C
from .. import _state as S
from .._findings import Finding
from ._common import analysis_unavailable, fmt_ms, no_traces, rows_table


def render(settings: ClientSettings, filters: S.Filters) -> None:
    st.header("Overview")
    seconds = S.RANGES.get(filters.range_key)
    bucket_s = G.bucket_ns((seconds or 30 * 86400) * 10**9) // 10**9
    with st.spinner("Loading runs…"):
        stats = S.stats_runs(settings, filters.service, filters.agent, filters.since_ns, bucket_s)
    _render(settings, filters, stats, bucket_s * 10**9)


def _findings_of_range(settings: ClientSettings, filters: S.Filters) -> tuple[bool, list[Finding]]:
    """Findings of the range; with an agent/service filter, those of the newest matching runs."""
    available, found = S.findings(settings, filters.since_ns)
    if found and (filters.agent or filters.service):
        rows, _ = S.recent_traces(settings, filters.service, filters.since_ns, S.MAX_LIST_ROWS)
        keep = {r["trace_id"] for r in G.filter_traces(rows, agent=filters.agent)}
        found = [f for f in found if not f.trace_id or f.trace_id in keep]
    return available, found


def _render(
    settings: ClientSettings, filters: S.Filters, stats: api.RunStats, width_ns: int
) -> None:
    t = stats.totals
    if not t.get("runs"):
        no_traces(settings)
        return
    available, found = _findings_of_range(settings, filters)
    cols = st.columns(6)
    cols[0].metric("Runs", t["runs"])
    rate = t.get("success_rate")
    cols[1].metric("Success rate", f"{rate:.0%}" if rate is not None else "-")
    cols[2].metric("Tokens", f"{int(t['input_tokens']) + int(t['output_tokens']):,}")
    cols[3].metric("Cost", f"${float(t['cost_usd']):,.4f}")
    p95 = t.get("p95_duration_ns")
    cols[4].metric("p95 run time", fmt_ms(p95 / 1e6 if p95 is not None else None))
    cols[5].metric("Findings", len(found) if available else "-")
    _links_to_runs(int(t["runs"]), int(t.get("failures") or 0), bool(found))
    buckets = stats.buckets
    if stats.truncated:
        st.caption("The range holds more buckets than shown; pick a shorter time range.")
    left, right = st.columns(2)
    with left:
        st.subheader("Runs over time by outcome")
        _runs_chart(buckets, width_ns, filters)
    with right:
        _findings_chart(available, found)
    per_bucket: dict[int, dict[str, Any]] = {}
    for row in buckets:
        slot = per_bucket.setdefault(
            int(row["bucket_ns"]),
            {
                "bucket_ns": int(row["bucket_ns"]),
                "input_tokens": 0,
                "output_tokens": 0,
                "cost_usd": 0.0,
                "retries": 0,
            },
        )
        slot["input_tokens"] += int(row["input_tokens"])
        slot["output_tokens"] += int(row["output_tokens"])
        slot["cost_usd"] += float(row["cost_usd"])
        slot["retries"] += int(row["retries"])
    series = [per_bucket[k] for k in sorted(per_bucket)]
    _token_charts(series, width_ns, filters)
    st.subheader("Retry-budget burn")
    st.caption("Step attempts beyond the first, over every run of the range.")
    a, b, c = st.columns(3)
    a.metric("Attempts beyond the first", int(t["retries"]))
    b.metric("Retry budget exceeded", int(t["budget_exceeded"]))
    c.metric("Retries per run", f"{int(t['retries']) / int(t['runs']):.2f}")
    _burn_chart(series, width_ns, filters)
    left, right = st.columns(2)
    with left:
        st.subheader("Top failing plan steps")
        steps = S.stats_steps(settings, filters.service, filters.agent, filters.since_ns)
        _failing_steps(steps)
    with right:
        st.subheader("Agents by failures")
        agents = [a for a in stats.agents if a.get("runs")][:10]
        if agents:
            rows_table(agents)
        else:
            st.info("No agent runs in this range.")


def _links_to_runs(runs: int, failures: int, findings: bool) -> None:
    """From the numbers to the runs behind them (the explorer keeps the sidebar's filters)."""
    a, b, c, _ = st.columns([1, 1, 1, 2])
    if a.button(f"Open the {runs:,} runs", key="ov_open_runs"):
        S.navigate(page="traces", outcome=None, pg=None)
    if failures and b.button(f"Open the {failures:,} failed runs", key="ov_open_failed"):
        S.navigate(page="traces", outcome="failure", pg=None)
    if findings and c.button("Open the findings", key="ov_open_findings"):
        S.navigate(page="findings")


def _failing_steps(steps: list[dict[str, Any]]) -> None:
    """Steps by failed attempts (the sort column first after the step). A step that "failed"
    with no error and no retry was handed on by design (an ADaPT decomposition, a replan), not
    broken: those are counted in the caption, not listed."""
    for s in steps:  # the client-side aggregate calls it "errors"
        s.setdefault("error_attempts", s.get("errors", 0))
    by_design = [s for s in steps if s.get("failed_runs") and not s.get("error_attempts")]
    shown = [s for s in steps if s not in by_design and (s.get("failed_runs") or s.get("retries"))]
    # Failed attempts first: a loop that burns its retry budget in one run outranks a step
    # that failed once in each of two runs.
    shown.sort(key=lambda s: (-int(s["error_attempts"] or 0), -int(s.get("failed_runs") or 0)))
    if not shown:
        st.info("No step failed or retried in these runs.")
        return
    one_agent = len({s.get("agent") for s in shown}) == 1  # then the column says nothing
    rows_table(
        [
            {
                "step": s.get("step"),
                "failed attempts": s.get("error_attempts"),
                "failed runs": s.get("failed_runs"),
                "runs": s.get("runs"),
                "retries": s.get("retries"),
                "over budget": s.get("budget_exceeded"),
                **({} if one_agent else {"agent": s.get("agent")}),
            }
            for s in shown[:10]
        ]
    )
    st.caption(
        "Sorted by failed attempts."
        + (
            f" Not listed: {len(by_design)} step(s) that ended without an error or a retry "
            "(decomposed or replanned by design, e.g. ADaPT)."
            if by_design
            else ""
        )
    )


def _findings_chart(available: bool, found: list[Finding]) -> None:
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


def _runs_chart(long: list[dict[str, Any]], width_ns: int, filters: S.Filters) -> None:
    outcomes = [o for o in C.OUTCOME_COLOURS if any(r["outcome"] == o for r in long)]
    outcomes += sorted({str(r["outcome"]) for r in long} - set(outcomes))
    st.plotly_chart(
        C.time_chart(
            C.wide(long, "outcome", "runs"),
            series={o: o for o in outcomes},
            colours=C.OUTCOME_COLOURS,
            **_axis(width_ns, filters),
        ),
        key="ov_runs",
    )


def _axis(width_ns: int, filters: S.Filters) -> dict[str, Any]:
    """The time axis of every overview chart: the whole range, buckets of ``width_ns``."""
    return {"width_ns": width_ns, "since_ns": filters.since_ns, "until_ns": time.time_ns()}


def _token_charts(series: list[dict[str, Any]], width_ns: int, filters: S.Filters) -> None:
    left, right = st.columns(2)
    with left:
        st.subheader("Tokens")
        st.plotly_chart(
            C.time_chart(
                series,
                series={"input_tokens": "input tokens", "output_tokens": "output tokens"},
                colours={"input_tokens": "#1565c0", "output_tokens": "#64b5f6"},
                **_axis(width_ns, filters),
            ),
            key="ov_tokens",
        )
    with right:
        st.subheader("Cost")
        st.plotly_chart(
            C.time_chart(
                series,
                series={"cost_usd": "cost"},
                colours={"cost_usd": "#6a1b9a"},
                value_format=",.4f",
                prefix="$",
                **_axis(width_ns, filters),
            ),
            key="ov_cost",
        )


def _burn_chart(series: list[dict[str, Any]], width_ns: int, filters: S.Filters) -> None:
    if any(b["retries"] for b in series):
        st.plotly_chart(
            C.time_chart(
                series,
                series={"retries": "attempts beyond the first"},
                colours={"retries": "#f9a825"},
                height=240,
                **_axis(width_ns, filters),
            ),
            key="ov_burn",
        )

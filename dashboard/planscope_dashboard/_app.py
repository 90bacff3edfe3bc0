"""The Streamlit app: sidebar (connection, navigation, global filters) and page dispatch.

Pages are plain functions; the current page and every filter live in ``st.query_params``, so
switching pages keeps the filters and any view can be shared as a link.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from planscope.client import ClientError, ClientSettings

from . import _state as S
from ._safe import md_escape

PAGES: dict[str, str] = {
    "overview": "Overview",
    "traces": "Trace explorer",
    "run": "Run detail",
    "findings": "Findings",
    "compare": "Compare",
    "alerts": "Alerts",
    "approvals": "Approvals",
    "scheduler": "Scheduler",
}


def _page_functions() -> dict[str, Callable[[ClientSettings, S.Filters], None]]:
    from ._pages import alerts, approvals, compare, findings, overview, run, scheduler, traces

    return {
        "overview": overview.render,
        "traces": traces.render,
        "run": run.render,
        "findings": findings.render,
        "compare": compare.render,
        "alerts": alerts.render,
        "approvals": approvals.render,
        "scheduler": scheduler.render,
    }


def _sidebar(settings: ClientSettings) -> tuple[str, S.Filters]:
    side = st.sidebar
    side.title("planscope")
    side.caption("planner-executor agent observability")
    page = S.qp_get("page", "overview")
    if page not in PAGES:
        page = "overview"
    st.session_state["nav"] = page

    def changed() -> None:
        S.qp_set("page", st.session_state["nav"], "overview")

    page = side.radio(
        "Page", list(PAGES), key="nav", format_func=PAGES.__getitem__, on_change=changed
    )
    side.divider()
    range_key = S.bound_select(
        side, "Time range", list(S.RANGES), "range", S.DEFAULT_RANGE, S.RANGE_LABELS.__getitem__
    )
    services: list[str] = [""]
    agents: list[str] = [""]
    try:
        since = S.Filters(range_key, None, None).since_ns
        rows, _ = S.recent_traces(settings, None, since, S.MAX_LIST_ROWS)
        services += sorted({s for r in rows for s in r.get("services") or [] if s})
        agents += sorted({str(r["agent"]) for r in rows if r.get("agent")})
    except ClientError:
        pass  # the page itself reports the error
    service = S.bound_select(
        side, "Service", services, "service", "", lambda v: v or "all services"
    )
    agent = S.bound_select(side, "Agent", agents, "agent", "", lambda v: v or "all agents")
    side.divider()
    side.caption("Collector")
    side.text(settings.base_url + ("  (API key set)" if settings.api_key else ""))
    return str(page), S.Filters(range_key, service or None, agent or None)


def main(settings: ClientSettings | None = None) -> None:
    """Render the dashboard once (Streamlit calls the script on every interaction)."""
    st.set_page_config(page_title="planscope", layout="wide", initial_sidebar_state="expanded")
    settings = settings or ClientSettings.from_env()
    page, filters = _sidebar(settings)
    try:
        _page_functions()[page](settings, filters)
    except ClientError as exc:
        st.error(md_escape(exc))

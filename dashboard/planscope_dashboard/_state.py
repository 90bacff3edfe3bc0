"""Streamlit glue: filters kept in ``st.query_params`` (so they survive page switches, reloads
and shared links) and cached reads through :class:`CollectorClient`."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import streamlit as st
from planscope import api
from planscope.client import ClientSettings, CollectorClient, CollectorResponseError, Unavailable

from ._findings import Finding, normalise_findings
from ._runview import RunView, build_run_view
from ._safe import md_escape

T = TypeVar("T")

RANGES: dict[str, int | None] = {
    "15m": 15 * 60,
    "1h": 3600,
    "6h": 6 * 3600,
    "24h": 24 * 3600,
    "7d": 7 * 24 * 3600,
    "30d": 30 * 24 * 3600,
    "all": None,
}
RANGE_LABELS = {
    "15m": "last 15 minutes",
    "1h": "last hour",
    "6h": "last 6 hours",
    "24h": "last 24 hours",
    "7d": "last 7 days",
    "30d": "last 30 days",
    "all": "all time",
}
DEFAULT_RANGE = "24h"

MAX_LIST_ROWS = 1000
"""Traces read per list query (the collector's page size); pages filter within these."""
MAX_FINDINGS = 5000
"""Findings read for the overview and findings pages (newest traces first)."""
CACHE_TTL = 15


def qp_get(name: str, default: str = "") -> str:
    """One query parameter as a string."""
    value = st.query_params.get(name)
    return default if value is None else str(value)


def qp_set(name: str, value: str | None, default: str = "") -> None:
    """Set (or clear, when equal to the default) a query parameter."""
    if value is None or value == default:
        if name in st.query_params:
            del st.query_params[name]
    elif st.query_params.get(name) != value:
        st.query_params[name] = value


def bound_select(
    container: Any,
    label: str,
    options: Sequence[str],
    param: str,
    default: str,
    format_func: Callable[[str], str] = str,
    key: str | None = None,
) -> str:
    """A selectbox whose value lives in the query parameter ``param``.

    Options are shown as plain text (selectbox options are not Markdown).
    """
    options = list(options)
    current = qp_get(param, default)
    if current not in options:
        options.append(current) if current else None
    widget_key = key or f"qp_{param}"
    st.session_state[widget_key] = current if current in options else default

    def changed() -> None:
        qp_set(param, st.session_state[widget_key], default)

    value = container.selectbox(
        label, options, key=widget_key, format_func=format_func, on_change=changed
    )
    return str(value)


def bound_text(container: Any, label: str, param: str, placeholder: str = "") -> str:
    """A text input whose value lives in the query parameter ``param``."""
    key = f"qp_{param}"
    st.session_state[key] = qp_get(param)

    def changed() -> None:
        qp_set(param, str(st.session_state[key]).strip())

    return str(
        container.text_input(label, key=key, placeholder=placeholder, on_change=changed)
    ).strip()


def navigate(**params: str | None) -> None:
    """Set query parameters (None clears one) and rerun: the page switch of the dashboard."""
    for name, value in params.items():
        qp_set(name, value)
    st.rerun()


@dataclass(frozen=True)
class Filters:
    """The global filters shown in the sidebar (persisted in the URL)."""

    range_key: str
    service: str | None
    agent: str | None

    @property
    def since_ns(self) -> int | None:
        seconds = RANGES.get(self.range_key)
        if seconds is None:
            return None
        # Rounded to 5 s so that reruns within a few seconds hit the cache.
        now = int(time.time()) // 5 * 5
        return (now - seconds) * 10**9


@st.cache_resource(show_spinner=False)
def client_for(settings: ClientSettings) -> CollectorClient:
    """One HTTP client (connection pool) per collector settings."""
    return CollectorClient(settings)


@st.cache_data(ttl=CACHE_TTL, show_spinner=False, max_entries=64)
def recent_traces(
    settings: ClientSettings, service: str | None, since_ns: int | None, max_rows: int
) -> tuple[list[dict[str, Any]], bool]:
    """Newest traces of the time range (cached ``CACHE_TTL`` seconds)."""
    return client_for(settings).recent_traces(max_rows=max_rows, service=service, since_ns=since_ns)


@st.cache_resource(ttl=60, show_spinner=False, max_entries=8)
def run_view(settings: ClientSettings, trace_id: str) -> RunView:
    """One run, fetched and indexed once a minute at most; shared, never mutated after build
    (a cached resource is not copied, which keeps reruns of a 5,000-span run cheap)."""
    return build_run_view(client_for(settings).get_trace(trace_id))


def run_views(settings: ClientSettings, trace_ids: list[str]) -> list[RunView]:
    """Several runs, fetched concurrently (not cached as views: they can be large)."""
    return [build_run_view(t) for t in _traces_bulk(settings, tuple(trace_ids))]


@st.cache_data(ttl=CACHE_TTL, show_spinner=False, max_entries=16)
def _traces_bulk(settings: ClientSettings, trace_ids: tuple[str, ...]) -> list[dict[str, Any]]:
    return client_for(settings).get_traces(trace_ids)


@st.cache_data(ttl=CACHE_TTL, show_spinner=False, max_entries=32)
def _findings(
    settings: ClientSettings,
    since_ns: int | None,
    kind: str | None,
    severity: str | None,
) -> list[api.Finding] | None:
    try:
        page = client_for(settings).list_findings(
            since_ns=since_ns, kind=kind, severity=severity, max_rows=MAX_FINDINGS
        )
    except Unavailable:
        return None
    return page.findings


def findings(
    settings: ClientSettings,
    since_ns: int | None,
    kind: str | None = None,
    severity: str | None = None,
) -> tuple[bool, list[Finding]]:
    """(available, findings) for the time range; available is False without an analyzer.

    Findings are secondary on every page but one: an analyzer that answers an error is
    reported as a warning and the page renders without them.
    """
    try:
        found = _findings(settings, since_ns, kind, severity)
    except CollectorResponseError as exc:
        findings_warning(exc)
        return False, []
    return found is not None, normalise_findings(found or [])


def findings_warning(exc: Exception) -> None:
    st.warning(md_escape(f"Findings could not be read: {exc}"))


@st.cache_data(ttl=CACHE_TTL, show_spinner=False, max_entries=64)
def _trace_findings(settings: ClientSettings, trace_id: str) -> list[api.Finding] | None:
    try:
        return client_for(settings).trace_findings(trace_id)
    except Unavailable:
        return None


def trace_findings(settings: ClientSettings, trace_id: str) -> tuple[bool, list[Finding]]:
    """(available, findings) of one trace."""
    try:
        found = _trace_findings(settings, trace_id)
    except CollectorResponseError as exc:
        findings_warning(exc)
        return False, []
    return found is not None, normalise_findings(found or [])


# -- server-side aggregates (/api/stats) and filtered pages ---------------------------------------


@st.cache_data(ttl=CACHE_TTL, show_spinner=False, max_entries=32)
def stats_runs(
    settings: ClientSettings,
    service: str | None,
    agent: str | None,
    since_ns: int | None,
    bucket_s: int,
) -> api.RunStats:
    """``/api/stats/runs`` of the range."""
    return client_for(settings).stats_runs(
        since_ns=since_ns, service=service, agent=agent, bucket_s=bucket_s
    )


@st.cache_data(ttl=CACHE_TTL, show_spinner=False, max_entries=32)
def stats_steps(
    settings: ClientSettings,
    service: str | None,
    agent: str | None,
    since_ns: int | None,
    limit: int = 50,
) -> list[dict[str, Any]]:
    """``/api/stats/steps`` of the range (worst first)."""
    return client_for(settings).stats_steps(
        since_ns=since_ns, service=service, agent=agent, limit=limit
    )


@st.cache_data(ttl=CACHE_TTL, show_spinner=False, max_entries=32)
def stats_variants(
    settings: ClientSettings, service: str | None, agent: str | None, since_ns: int | None
) -> list[dict[str, Any]]:
    """``/api/stats/variants`` of the range."""
    return client_for(settings).stats_variants(since_ns=since_ns, service=service, agent=agent)


@st.cache_data(ttl=CACHE_TTL, show_spinner=False, max_entries=64)
def traces_page(
    settings: ClientSettings,
    service: str | None,
    agent: str | None,
    since_ns: int | None,
    variant: str | None,
    outcome: str | None,
    search: str | None,
    limit: int,
    offset: int,
) -> api.TracesPage:
    """One filtered page of ``/api/traces`` (filters applied by the collector)."""
    return client_for(settings).list_traces(
        service=service,
        since_ns=since_ns,
        agent=agent,
        variant=variant,
        outcome=outcome,
        q=search,
        limit=limit,
        offset=offset,
    )

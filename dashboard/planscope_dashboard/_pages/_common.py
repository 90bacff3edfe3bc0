"""Helpers shared by the pages: empty states, time formatting, table conversion."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import streamlit as st
from planscope.client import ClientSettings

ANALYSIS_UNAVAILABLE = (
    "Analysis isn't available on this collector (its /api/findings answers 404). Findings "
    "appear here once the analyzer runs inside the collector: install `planscope[server]` "
    "with the analyzer and restart `planscope serve`."
)


def no_traces(settings: ClientSettings) -> None:
    """The empty state when the time range holds no traces: say what to do."""
    st.info(
        "No traces yet in this time range. Run `planscope demo` (it starts a collector and "
        "sends an example agent's runs), widen the time range in the sidebar, or point an "
        "OTLP/HTTP exporter at this collector's ingest endpoint:"
    )
    st.code(f"{settings.base_url}/v1/traces", language=None)


def analysis_unavailable() -> None:
    st.info(ANALYSIS_UNAVAILABLE)


def when(ns: int | None) -> datetime | None:
    """A UTC datetime for a unix-ns timestamp (None passes through)."""
    return None if not ns else datetime.fromtimestamp(ns / 1e9, tz=timezone.utc)


def ms(ns: int | float | None) -> float:
    return round((ns or 0) / 1e6, 2)


def fmt_ms(value: float | None) -> str:
    """A duration in at most four digits, so that it fits a metric column: 9.5 ms, 139 ms,
    1.39 s, 12.5 min.

    >>> [fmt_ms(v) for v in (9.51, 138.72, 1387.2, 750_000)]
    ['9.5 ms', '139 ms', '1.39 s', '12.5 min']
    """
    if value is None:
        return "-"
    if value >= 600_000:
        return f"{value / 60_000:.1f} min"
    if value >= 1000:
        return f"{value / 1000:.3g} s"
    return f"{value:.1f} ms" if value < 100 else f"{value:.0f} ms"


def column_label(name: str) -> str:
    """A column name as a header: ``duration_ms`` -> ``duration (ms)``.

    >>> column_label("duration_ms"), column_label("tokens_per_run"), column_label("wasted_s")
    ('duration (ms)', 'tokens per run', 'wasted (s)')
    """
    for unit in ("ms", "s"):
        if name.endswith(f"_{unit}"):
            return f"{name[: -len(unit) - 1].replace('_', ' ')} ({unit})"
    return name.replace("_", " ")


def column_formats(columns: list[str]) -> dict[str, Any]:
    """How a table shows its columns, by name: rates as %, costs in $, headers without
    underscores (times are datetimes)."""
    out: dict[str, Any] = {}
    for name in columns:
        low = name.lower()
        label = column_label(name)
        if low.endswith("rate"):
            out[name] = st.column_config.NumberColumn(label, format="percent")
        elif "cost" in low:
            out[name] = st.column_config.NumberColumn(label.replace(" usd", ""), format="$%.5f")
        elif label != name:
            out[name] = st.column_config.Column(label)
    return out


def rows_table(rows: list[dict[str, Any]], **kwargs: Any) -> Any:
    """``st.dataframe`` of a list of dicts (text cells are rendered literally), numbers
    formatted by :func:`column_formats`."""
    import pandas as pd

    frame = pd.DataFrame(rows)
    config = {**column_formats(list(frame.columns)), **kwargs.pop("column_config", {})}
    return st.dataframe(frame, hide_index=True, width="stretch", column_config=config, **kwargs)

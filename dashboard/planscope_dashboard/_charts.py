"""Plotly figures from view models. Every string from span data goes through ``html_text``
(Plotly interprets a subset of HTML in text and hover labels)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

import plotly.graph_objects as go

from ._dag import DEPENDS, STATUS_COLOURS, DagLayout
from ._safe import html_text
from ._timeline import BAR_COLOURS, TimelineRow

HIGHLIGHT = "#d81b60"
"""Outline of nodes and bars named by a finding."""
SELECTED = "#1a237e"
OUTCOME_COLOURS = {
    "success": "#2e7d32",
    "failure": "#c62828",
    "unknown": "#9e9e9e",
    "(no run)": "#cfd8dc",
}
_MAX_ARROWS = 200
_FONT = {"family": "Inter, Segoe UI, Helvetica, Arial, sans-serif", "size": 12}


def _base(fig: go.Figure, height: int, **layout: Any) -> go.Figure:
    fig.update_layout(
        height=height,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        font=_FONT,
        plot_bgcolor="white",
        paper_bgcolor="white",
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0},
        **layout,
    )
    return fig


DAG_PLOT_WIDTH_PX = 1000
"""The width a DAG is drawn in on the run page (labels are fitted to it)."""
_CHAR_PX = 7


def dag_label(step_id: str, attempts: int, chars: int) -> str:
    """A node label that fits ``chars`` characters: the step id cut with "…", then ``xN``.

    >>> dag_label("fetch-the-invoice-from-erp", 3, 12)
    'fetch-th… x3'
    """
    suffix = f" x{attempts}" if attempts > 1 else ""
    room = max(chars - len(suffix), 1)
    text = step_id if len(step_id) <= room else step_id[: max(room - 1, 1)] + "…"
    return text + suffix


def dag_figure(layout: DagLayout, selected: str | None = None) -> go.Figure:
    """The layered plan graph: nodes coloured by status, edges routed around nodes with their
    arrowhead on the edge, labels fitted to the space between layers (the full step id and
    details on hover), a pink ring for steps named by a finding and a navy one for the selected
    step (both on a white halo, so they show on every status colour)."""
    fig = go.Figure()
    depth, width = max(layout.depth, 1), max(layout.width, 1)
    col_px = DAG_PLOT_WIDTH_PX / (depth + 0.4)
    height = int(max(260, min(2400, 70 * width + 90)))
    row_px = (height - 60) / (width + 0.6)
    node_px = max(8.0, min(30.0, 0.45 * min(col_px, row_px)))
    # Labels alternate below / above the nodes from one layer to the next when layers are
    # narrow, so each label has two layers' width; too little room for 3 characters: hover only.
    alternate = col_px < 160
    chars = int(col_px * (2 if alternate else 1) * 0.9 / _CHAR_PX)
    show_text = chars >= 3 and row_px >= 26
    ids = [n.step_id for n in layout.nodes]
    # Ids that share a long prefix (turn-01:..., turn-02:...) keep the part that tells them apart.
    shared = os.path.commonprefix(ids) if len(ids) > 1 else ""  # noqa: RUF071 (by character)
    cut = len(shared) if len(shared) >= 3 and max(map(len, ids)) > chars else 0

    def label(n: Any) -> str:
        short = n.step_id if not cut else "…" + n.step_id[cut:]
        return html_text(dag_label(short, n.attempts, chars))

    pos = {n.step_id: (n.x, n.y) for n in layout.nodes}
    arrows: list[dict[str, Any]] = []
    for kind, dash, colour in ((DEPENDS, "solid", "#78909c"), ("scope", "dot", "#5c6bc0")):
        xs: list[float | None] = []
        ys: list[float | None] = []
        for e in layout.edges:
            if e.kind != kind:
                continue
            points = [pos[e.source], *sorted(e.via, reverse=pos[e.source][0] > pos[e.target][0])]
            points.append(pos[e.target])
            xs += [p[0] for p in points] + [None]
            ys += [p[1] for p in points] + [None]
            if len(layout.edges) <= _MAX_ARROWS:
                # Drawn along the last segment itself, stopping at the node's edge.
                arrows.append(
                    {
                        "x": points[-1][0],
                        "y": points[-1][1],
                        "ax": points[-2][0],
                        "ay": points[-2][1],
                        "xref": "x",
                        "yref": "y",
                        "axref": "x",
                        "ayref": "y",
                        "showarrow": True,
                        "arrowhead": 2,
                        "arrowsize": 1.1,
                        "arrowwidth": 1.4,
                        "arrowcolor": colour,
                        "standoff": node_px / 2 + 1,
                        "startstandoff": node_px / 2 if len(points) == 2 else 0,
                        "text": "",
                    }
                )
        if xs:
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines",
                    line={"color": colour, "width": 1.4, "dash": dash},
                    hoverinfo="skip",
                    name="depends on" if kind == DEPENDS else "decomposed / replanned into",
                    showlegend=kind != DEPENDS,
                )
            )
    fig.update_layout(annotations=arrows)
    for name, colour, nodes, grow in (
        ("selected", SELECTED, [n for n in layout.nodes if n.step_id == selected], 18),
        ("named by a finding", HIGHLIGHT, [n for n in layout.nodes if n.highlighted], 10),
    ):
        if nodes:
            fig.add_trace(
                go.Scatter(
                    x=[n.x for n in nodes],
                    y=[n.y for n in nodes],
                    mode="markers",
                    name=name,
                    showlegend=False,
                    marker={
                        "size": node_px + grow,
                        "color": "white",
                        "symbol": ["diamond" if n.irreversible else "circle" for n in nodes],
                        "line": {"color": colour, "width": 3},
                    },
                    hoverinfo="skip",
                )
            )
            _legend_entry(fig, name, "white", "circle", colour, 3)
    for status, colour in STATUS_COLOURS.items():
        nodes = [n for n in layout.nodes if n.status == status]
        if not nodes:
            continue
        fig.add_trace(
            go.Scatter(
                x=[n.x for n in nodes],
                y=[n.y for n in nodes],
                mode="markers",
                name=status,
                showlegend=False,
                marker={
                    "size": node_px,
                    "color": colour,
                    "symbol": ["diamond" if n.irreversible else "circle" for n in nodes],
                    "line": {"color": "#37474f", "width": 1},
                },
                text=[label(n) for n in nodes],
                customdata=[n.step_id for n in nodes],
                hovertext=[_node_hover(n) for n in nodes],
                hoverinfo="text",
            )
        )
        _legend_entry(fig, status, colour, "circle", "#37474f", 1)
    if any(n.irreversible for n in layout.nodes):
        _legend_entry(fig, "irreversible", "white", "diamond", "#37474f", 1)
    if show_text:
        # Labels clear of the rings: below the node, or above it on every other layer.
        gap = (node_px / 2 + 20) / row_px
        above = [alternate and n.depth % 2 == 1 for n in layout.nodes]
        fig.add_trace(
            go.Scatter(
                x=[n.x for n in layout.nodes],
                y=[n.y + (gap if up else -gap) for n, up in zip(layout.nodes, above, strict=True)],
                mode="text",
                text=[label(n) for n in layout.nodes],
                textfont={"size": 11, "color": "#263238"},
                hovertext=[_node_hover(n) for n in layout.nodes],
                hoverinfo="text",
                customdata=[n.step_id for n in layout.nodes],
                showlegend=False,
                name="labels",
            )
        )
    _base(fig, height, hovermode="closest", dragmode="pan")
    fig.update_xaxes(visible=False, range=[-0.6, depth - 0.4])
    # Room for the labels above the top row and below the bottom one.
    room = (node_px / 2 + 30) / row_px if show_text else 0.0
    rows = [n.y for n in layout.nodes] + [y for e in layout.edges for _, y in e.via] or [0.0]
    top, bottom = max(rows) + (room if alternate else 0.4), min(rows) - max(room, 0.4)
    fig.update_yaxes(visible=False, range=[bottom, top])
    return fig


def _legend_entry(
    fig: go.Figure, name: str, fill: str, symbol: str, line: str, width: float
) -> None:
    """A legend item of its own: the legend shows a trace's first marker, so a status whose
    first node is irreversible would otherwise be drawn as a diamond. Colour is the status,
    the diamond is "irreversible", whatever the status."""
    fig.add_trace(
        go.Scatter(
            x=[None],
            y=[None],
            mode="markers",
            name=name,
            marker={
                "size": 11,
                "color": fill,
                "symbol": symbol,
                "line": {"color": line, "width": width},
            },
            hoverinfo="skip",
        )
    )


def _node_hover(n: Any) -> str:
    lines = [
        f"<b>{html_text(n.step_id, 80)}</b> — {n.status}",
        f"attempts: {n.attempts}",
    ]
    if n.executor:
        lines.append(f"executor: {html_text(n.executor, 60)}")
    if n.tool:
        lines.append(f"tool: {html_text(n.tool, 60)}")
    if n.description:
        lines.append(html_text(n.description, 120))
    if n.irreversible:
        lines.append("irreversible")
    if n.highlighted:
        lines.append("named by a finding")
    return "<br>".join(lines)


def timeline_figure(
    rows: list[TimelineRow], lanes: list[str], selected: str | None = None
) -> go.Figure:
    """A waterfall: x = ms since run start, y = executor lane; finding evidence outlined."""
    fig = go.Figure()
    lane_labels = {lane: html_text(lane, 40) for lane in lanes}
    order = [g for g in BAR_COLOURS if any(r.group == g for r in rows)]
    for group in order:
        items = [r for r in rows if r.group == group]
        fig.add_trace(
            go.Bar(
                orientation="h",
                name=group,
                y=[lane_labels.get(r.lane, html_text(r.lane, 40)) for r in items],
                x=[max(r.duration_ms, 0.001) for r in items],
                base=[r.start_ms for r in items],
                width=[r.thickness for r in items],
                marker={
                    "color": BAR_COLOURS[group],
                    "line": {
                        "color": [
                            HIGHLIGHT
                            if r.highlighted
                            else SELECTED
                            if r.span_id == selected
                            else "rgba(0,0,0,0.25)"
                            for r in items
                        ],
                        "width": [
                            3 if r.highlighted or r.span_id == selected else 0.5 for r in items
                        ],
                    },
                },
                customdata=[r.span_id for r in items],
                hovertext=[
                    f"{html_text(r.label, 120)}<br>{r.start_ms:.2f} ms + {r.duration_ms:.2f} ms"
                    f"<br>{r.status}{' · evidence of a finding' if r.highlighted else ''}"
                    for r in items
                ],
                hoverinfo="text",
            )
        )
    n_lanes = max(1, len(lanes))
    _base(fig, max(220, min(1200, 34 * n_lanes + 110)), barmode="overlay", hovermode="closest")
    fig.update_yaxes(
        categoryorder="array",
        categoryarray=[lane_labels[lane] for lane in reversed(lanes)],
        showgrid=False,
    )
    fig.update_xaxes(title_text="ms since run start", showgrid=True, gridcolor="#eceff1")
    return fig


def _times(buckets: Iterable[int]) -> list[datetime]:
    return [datetime.fromtimestamp(b / 1e9, tz=timezone.utc) for b in buckets]


def bars(
    labels: list[Any], values: list[float], *, name: str, height: int = 300, colour: str = "#5c6bc0"
) -> go.Figure:
    """Plain horizontal bars, largest on top."""
    fig = go.Figure(
        go.Bar(
            x=values,
            y=[html_text(label, 40) for label in labels],
            orientation="h",
            name=name,
            marker_color=colour,
        )
    )
    _base(fig, height)
    fig.update_yaxes(autorange="reversed")
    return fig


def wide(rows: list[dict[str, Any]], key: str, value: str) -> list[dict[str, Any]]:
    """Long rows (``bucket_ns``, ``key``, ``value``) to one row per bucket, a column per key.

    >>> wide([{"bucket_ns": 0, "outcome": "success", "runs": 2}], "outcome", "runs")
    [{'bucket_ns': 0, 'success': 2}]
    """
    out: dict[int, dict[str, Any]] = {}
    for r in rows:
        slot = out.setdefault(int(r["bucket_ns"]), {"bucket_ns": int(r["bucket_ns"])})
        slot[str(r[key])] = slot.get(str(r[key]), 0) + r[value]
    return [out[k] for k in sorted(out)]


FEW_BUCKETS = 12
"""Below this many non-empty buckets a time chart draws bars (a line needs points to join)."""


def time_chart(
    rows: list[dict[str, Any]],
    *,
    series: dict[str, str],
    width_ns: int,
    since_ns: int | None,
    until_ns: int,
    colours: dict[str, str] | None = None,
    value_format: str = ",.0f",
    prefix: str = "",
    stacked: bool = True,
    height: int = 300,
) -> go.Figure:
    """Values per time bucket (``rows`` have ``bucket_ns`` and one column per ``series`` key) on
    a real time axis spanning the range: bars a bucket wide when there are few buckets, lines
    otherwise; values formatted with ``value_format`` (d3) and ``prefix`` (e.g. ``$``).

    >>> fig = time_chart([{"bucket_ns": 0, "runs": 3}], series={"runs": "runs"},
    ...                  width_ns=60 * 10**9, since_ns=None, until_ns=60 * 10**9)
    >>> fig.data[0].type
    'bar'
    """
    buckets = sorted({int(r["bucket_ns"]) for r in rows})
    as_bars = len(buckets) < FEW_BUCKETS
    fig = go.Figure()
    for column, name in series.items():
        hover = f"%{{x|%Y-%m-%d %H:%M}}<br>{html_text(name)}: {prefix}%{{y:{value_format}}}"
        common: dict[str, Any] = {
            "y": [r.get(column) or 0 for r in rows],
            "name": html_text(name, 40),
            "hovertemplate": hover + "<extra></extra>",
        }
        colour = (colours or {}).get(column)
        if as_bars:
            # Centred on their bucket, one bucket wide (a date axis counts in milliseconds).
            centres = _times(int(r["bucket_ns"]) + width_ns // 2 for r in rows)
            fig.add_trace(
                go.Bar(x=centres, width=width_ns / 1e6 * 0.9, marker_color=colour, **common)
            )
        else:
            fig.add_trace(
                go.Scatter(
                    x=_times(int(r["bucket_ns"]) for r in rows),
                    mode="lines+markers",
                    line={"color": colour} if colour else None,
                    **common,
                )
            )
    start = since_ns if since_ns is not None else (buckets[0] if buckets else until_ns)
    end = max(until_ns, (buckets[-1] + width_ns) if buckets else until_ns)
    _base(fig, height, barmode="stack" if stacked else "group")
    fig.update_xaxes(type="date", range=_times([start, end]), showgrid=False)
    fig.update_yaxes(rangemode="tozero", tickprefix=prefix, tickformat="~s" if not prefix else None)
    return fig

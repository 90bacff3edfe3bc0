"""Waterfall rows: one bar per span, grouped in lanes by executor (planner and run on top).

Parallel executors are separate lanes, so their bars overlap in time; within a lane, the step
attempt is a wide bar and its tool and LLM calls are narrower bars drawn on top of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from planscope import semconv as A

from ._runview import RunView

KIND_STYLE = {
    A.KIND_RUN: ("run", 0.85),
    A.KIND_PLAN: ("plan", 0.85),
    A.KIND_STEP: ("step", 0.8),
    A.KIND_TOOL: ("tool", 0.4),
    A.KIND_LLM: ("llm", 0.4),
}
"""planscope kind -> (legend group, bar thickness)."""

BAR_COLOURS = {
    "run": "#90a4ae",
    "plan": "#5c6bc0",
    "step": "#66bb6a",
    "step (retried)": "#f9a825",
    "step (skipped)": "#8e7cc3",
    "tool": "#26a69a",
    "llm": "#42a5f5",
    "other": "#bdbdbd",
    "error": "#c62828",
}


@dataclass(frozen=True)
class TimelineRow:
    """One span on the waterfall; times in ms from the run's start."""

    span_id: str
    lane: str
    kind: str
    group: str
    start_ms: float
    duration_ms: float
    thickness: float
    label: str
    status: str
    step_id: str | None
    attempt: int | None
    highlighted: bool


def timeline_rows(
    view: RunView,
    highlight: set[str] | frozenset[str] = frozenset(),
    kinds: set[str] | None = None,
) -> list[TimelineRow]:
    """Rows in start order; ``kinds`` limits which planscope kinds are shown.

    >>> from ._runview import build_run_view
    >>> timeline_rows(build_run_view({"spans": []}))
    []
    """
    origin = view.start_ns
    rows: list[TimelineRow] = []
    for sid in view.order:
        span = view.spans[sid]
        if kinds is not None and span.kind not in kinds:
            continue
        group, thickness = KIND_STYLE.get(span.kind, ("other", 0.6))
        status = span.status
        if span.kind == A.KIND_STEP:
            step_status = span.attributes.get(A.STEP_STATUS)
            if step_status == "skipped":
                group, status = "step (skipped)", "skipped"
            elif (span.attempt or 1) > 1 and status == "ok":
                group = "step (retried)"
        if status == "error":
            group = "error"
        label = span.name
        if span.name == A.SPAN_HANDOFF:
            to = span.attributes.get(A.HANDOFF_TO) or "?"
            label = f"hand-off → {to} · {span.attributes.get(A.HANDOFF_SUBTASK) or '?'}"
        elif span.step_id and span.kind != A.KIND_STEP:
            label = f"{span.name} · {span.step_id}#{span.attempt or '?'}"
        elif span.kind == A.KIND_STEP:
            label = f"{span.step_id} attempt {span.attempt or '?'}"
        rows.append(
            TimelineRow(
                span_id=sid,
                lane=span.lane,
                kind=span.kind,
                group=group,
                start_ms=(span.start_ns - origin) / 1e6,
                duration_ms=max(span.duration_ns / 1e6, 0.0),
                thickness=thickness,
                label=label,
                status=status,
                step_id=span.step_id,
                attempt=span.attempt,
                highlighted=sid in highlight,
            )
        )
    return rows


def overlapping_lanes(rows: list[TimelineRow]) -> set[tuple[str, str]]:
    """Pairs of executor lanes whose step attempts ran at the same time (parallel executors)."""
    steps = sorted(
        (r for r in rows if r.kind == A.KIND_STEP),
        key=lambda r: r.start_ms,
    )
    pairs: set[tuple[str, str]] = set()
    active: list[TimelineRow] = []
    for row in steps:
        active = [a for a in active if a.start_ms + a.duration_ms > row.start_ms]
        for other in active:
            if other.lane != row.lane:
                pairs.add(tuple(sorted((other.lane, row.lane))))  # type: ignore[arg-type]
        active.append(row)
    return pairs

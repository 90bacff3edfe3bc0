"""Small view-side aggregates: outcome labels, filters over list rows, bucket widths, the
numbers of the runs picked for comparison and findings per kind. Totals over a time range come
from the collector's ``/api/stats`` (computed in ClickHouse)."""

from __future__ import annotations

from typing import Any

from ._findings import Finding

NO_RUN = "(no run)"


def outcome_of(row: dict[str, Any]) -> str:
    """The run's outcome, ``(no run)`` for a trace without a planscope run span."""
    if not row.get("run_id"):
        return NO_RUN
    return str(row.get("outcome") or "unknown")


def filter_traces(
    rows: list[dict[str, Any]],
    *,
    agent: str | None = None,
    variant: str | None = None,
    outcome: str | None = None,
    search: str | None = None,
) -> list[dict[str, Any]]:
    """Client-side filters over list rows; ``search`` matches ids, agent, variant, root name.

    >>> filter_traces([{"trace_id": "ab", "agent": "x"}, {"trace_id": "cd"}], search="AB")
    [{'trace_id': 'ab', 'agent': 'x'}]
    """
    needle = (search or "").strip().lower()
    out = []
    for row in rows:
        if agent and row.get("agent") != agent:
            continue
        if variant and row.get("variant") != variant:
            continue
        if outcome and outcome_of(row) != outcome:
            continue
        if needle:
            hay = " ".join(
                str(row.get(k) or "")
                for k in ("trace_id", "run_id", "agent", "variant", "root_name", "root_service")
            ).lower()
            if needle not in hay:
                continue
        out.append(row)
    return out


def bucket_ns(span_ns: int) -> int:
    """A readable bucket width for a time range: ~40 buckets, rounded to a whole unit."""
    minute = 60 * 10**9
    for width in (
        10**9,
        10 * 10**9,
        minute,
        5 * minute,
        15 * minute,
        60 * minute,
        6 * 60 * minute,
        24 * 60 * minute,
    ):
        if span_ns / width <= 48:
            return width
    return 7 * 24 * 60 * minute


def findings_by_kind(findings: list[Finding]) -> list[dict[str, Any]]:
    """Count, wasted tokens and wasted seconds per finding kind."""
    acc: dict[str, dict[str, Any]] = {}
    for f in findings:
        slot = acc.setdefault(
            f.kind, {"kind": f.kind, "findings": 0, "wasted_tokens": 0, "wasted_s": 0.0}
        )
        slot["findings"] += 1
        slot["wasted_tokens"] += f.wasted_tokens or 0
        slot["wasted_s"] += f.wasted_seconds or 0.0
    return sorted(acc.values(), key=lambda r: (-r["findings"], r["kind"]))


def findings_over_time(findings: list[Finding], width_ns: int) -> list[dict[str, Any]]:
    """Count per (bucket, kind) for findings that carry a time."""
    acc: dict[tuple[int, str], int] = {}
    for f in findings:
        if f.time_ns is None:
            continue
        key = (f.time_ns // width_ns * width_ns, f.kind)
        acc[key] = acc.get(key, 0) + 1
    return [{"bucket_ns": b, "kind": k, "findings": n} for (b, k), n in sorted(acc.items())]

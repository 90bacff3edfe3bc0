"""Findings as view models (the fields ``/api/findings`` answers), ordered by severity."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SEVERITY_ORDER = {"critical": 0, "high": 1, "error": 1, "medium": 2, "warning": 2, "low": 3}
"""Lower sorts first; unknown severities sort last."""


@dataclass(frozen=True)
class Finding:
    """One analyzer finding, normalised for display."""

    kind: str
    severity: str
    trace_id: str
    explanation: str
    run_id: str | None = None
    component: str | None = None
    step_id: str | None = None
    evidence_span_ids: tuple[str, ...] = ()
    wasted_tokens: int | None = None
    wasted_seconds: float | None = None
    time_ns: int | None = None
    finding_id: str | None = None
    wasted_cost_usd: float | None = None
    detail: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    raw: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def severity_rank(self) -> int:
        return SEVERITY_ORDER.get(self.severity.lower(), 9)


def normalise_finding(raw: dict[str, Any]) -> Finding:
    """Map one finding of ``/api/findings`` to :class:`Finding`.

    >>> f = normalise_finding({"kind": "runaway_loop", "severity": "high", "trace_id": "ab",
    ...     "evidence_span_ids": ["s1"], "explanation": "4 same errors", "wasted_tokens": 900,
    ...     "wasted_ms": 1500.0, "trace_start_ns": 7})
    >>> (f.kind, f.evidence_span_ids, f.wasted_tokens, f.wasted_seconds, f.time_ns)
    ('runaway_loop', ('s1',), 900, 1.5, 7)
    """
    wasted_ms = _opt_float(raw.get("wasted_ms"))
    return Finding(
        kind=str(raw.get("kind") or "unknown"),
        severity=str(raw.get("severity") or "unknown"),
        trace_id=str(raw.get("trace_id") or ""),
        explanation=str(raw.get("explanation") or ""),
        run_id=_opt_str(raw.get("run_id")),
        component=_opt_str(raw.get("component")),
        step_id=_opt_str(raw.get("step_id")),
        evidence_span_ids=tuple(str(s) for s in raw.get("evidence_span_ids") or () if s),
        wasted_tokens=_opt_int(raw.get("wasted_tokens")),
        wasted_seconds=wasted_ms / 1e3 if wasted_ms is not None else None,
        time_ns=_opt_int(raw.get("trace_start_ns")),
        finding_id=_opt_str(raw.get("key")),
        wasted_cost_usd=_opt_float(raw.get("wasted_cost_usd")),
        detail=dict(raw["detail"]) if isinstance(raw.get("detail"), dict) else {},
        raw=raw,
    )


def normalise_findings(items: list[dict[str, Any]]) -> list[Finding]:
    """Normalise and sort: most severe first, then by kind and step."""
    found = [normalise_finding(item) for item in items]
    return sorted(found, key=lambda f: (f.severity_rank, f.kind, f.step_id or "", f.trace_id))


def findings_by_trace(findings: list[Finding]) -> dict[str, int]:
    """Count of findings per trace id."""
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.trace_id] = counts.get(f.trace_id, 0) + 1
    return counts


def _opt_str(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _opt_int(value: Any) -> int | None:
    try:
        return None if value is None or value == "" else int(float(value))
    except (TypeError, ValueError):
        return None


def _opt_float(value: Any) -> float | None:
    try:
        return None if value is None or value == "" else float(value)
    except (TypeError, ValueError):
        return None

"""Findings as view models (the fields ``/api/findings`` answers), ordered by severity."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from planscope import api

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

    @property
    def severity_rank(self) -> int:
        return SEVERITY_ORDER.get(self.severity.lower(), 9)


def normalise_finding(item: api.Finding | dict[str, Any]) -> Finding:
    """Map one finding of ``/api/findings`` (a :class:`planscope.api.Finding` or its JSON) to
    :class:`Finding`.

    >>> f = normalise_finding({"kind": "runaway_loop", "severity": "high", "trace_id": "ab",
    ...     "evidence_span_ids": ["s1"], "explanation": "4 same errors", "wasted_tokens": 900,
    ...     "wasted_ms": 1500.0, "trace_start_ns": 7})
    >>> (f.kind, f.evidence_span_ids, f.wasted_tokens, f.wasted_seconds, f.time_ns)
    ('runaway_loop', ('s1',), 900, 1.5, 7)
    """
    f = item if isinstance(item, api.Finding) else api.Finding.model_validate(item)
    return Finding(
        kind=f.kind,
        severity=f.severity,
        trace_id=f.trace_id,
        explanation=f.explanation,
        run_id=f.run_id or None,
        component=f.component or None,
        step_id=f.step_id or None,
        evidence_span_ids=tuple(s for s in f.evidence_span_ids if s),
        wasted_tokens=f.wasted_tokens,
        wasted_seconds=f.wasted_ms / 1e3,
        time_ns=f.trace_start_ns,
        finding_id=f.key or None,
        wasted_cost_usd=f.wasted_cost_usd,
        detail=dict(f.detail),
    )


def normalise_findings(items: Sequence[api.Finding | dict[str, Any]]) -> list[Finding]:
    """Normalise and sort: most severe first, then by kind and step."""
    found = [normalise_finding(item) for item in items]
    return sorted(found, key=lambda f: (f.severity_rank, f.kind, f.step_id or "", f.trace_id))


def findings_by_trace(findings: list[Finding]) -> dict[str, int]:
    """Count of findings per trace id."""
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.trace_id] = counts.get(f.trace_id, 0) + 1
    return counts

"""Findings as view models: tolerant of the analyzer's field spellings, ordered by severity."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
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
    """Map one JSON finding to :class:`Finding`.

    >>> f = normalise_finding({"kind": "runaway_loop", "severity": "high", "trace_id": "ab",
    ...     "evidence_span_ids": ["s1"], "explanation": "4 same errors", "wasted_tokens": 900})
    >>> (f.kind, f.evidence_span_ids, f.wasted_tokens)
    ('runaway_loop', ('s1',), 900)
    """
    wasted: dict[str, Any] = raw["wasted"] if isinstance(raw.get("wasted"), dict) else {}
    return Finding(
        kind=str(raw.get("kind") or raw.get("detector") or "unknown"),
        severity=str(raw.get("severity") or "unknown"),
        trace_id=str(raw.get("trace_id") or ""),
        explanation=str(raw.get("explanation") or raw.get("message") or raw.get("summary") or ""),
        run_id=_opt_str(raw.get("run_id")),
        component=_opt_str(raw.get("component")),
        step_id=_opt_str(raw.get("step_id")),
        evidence_span_ids=_evidence(raw),
        wasted_tokens=_opt_int(raw.get("wasted_tokens", wasted.get("tokens") if wasted else None)),
        wasted_seconds=_wasted_seconds(raw, wasted),
        time_ns=_time_ns(raw),
        finding_id=_opt_str(raw.get("id") or raw.get("finding_id") or raw.get("key")),
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


def _evidence(raw: dict[str, Any]) -> tuple[str, ...]:
    for key in ("evidence_span_ids", "evidence_spans", "span_ids", "evidence"):
        value = raw.get(key)
        if isinstance(value, str):
            value = [v for v in value.replace(",", " ").split() if v]
        if isinstance(value, list):
            ids = []
            for item in value:
                if isinstance(item, dict):
                    item = item.get("span_id")
                if item:
                    ids.append(str(item))
            return tuple(ids)
    return ()


def _wasted_seconds(raw: dict[str, Any], wasted: dict[str, Any]) -> float | None:
    scales = (
        ("wasted_time_ns", 1e-9),
        ("wasted_ns", 1e-9),
        ("wasted_time_ms", 1e-3),
        ("wasted_ms", 1e-3),
        ("wasted_time_s", 1.0),
        ("wasted_seconds", 1.0),
        ("wasted_time", 1.0),
    )
    for key, scale in scales:
        value = _opt_float(raw.get(key))
        if value is not None:
            return value * scale
    for key, scale in (("time_ns", 1e-9), ("time_ms", 1e-3), ("seconds", 1.0)):
        value = _opt_float(wasted.get(key)) if wasted else None
        if value is not None:
            return value * scale
    return None


def _time_ns(raw: dict[str, Any]) -> int | None:
    for key in ("time_ns", "detected_ns", "start_ns", "created_ns", "trace_start_ns"):
        value = _opt_int(raw.get(key))
        if value is not None:
            return value
    for key in ("detected_at", "created_at", "time", "timestamp"):
        value = raw.get(key)
        if isinstance(value, str) and value:
            try:
                return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1e9)
            except ValueError:
                continue
        number = _opt_float(value)
        if number is not None:  # seconds or nanoseconds since the epoch
            return int(number if number > 1e14 else number * 1e9)
    return None

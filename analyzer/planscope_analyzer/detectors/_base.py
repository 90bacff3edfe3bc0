"""The detector plug-in point and the helpers every detector shares."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from .._model import SEVERITIES, Attempt, Finding, TraceData, unique


class Detector(Protocol):
    """A rule that finds one failure mode in one trace.

    ``detect`` is a pure function of the trace's typed rows; it must not raise on partial or
    malformed data (the engine turns an exception into a ``data_quality`` finding anyway).
    """

    kind: str
    version: int

    def detect(self, trace: TraceData) -> list[Finding]: ...


def make_finding(
    detector: Detector,
    trace: TraceData,
    *,
    severity: str,
    component: str,
    step_id: str,
    evidence: Iterable[str],
    explanation: str,
    wasted_tokens: int = 0,
    wasted_cost_usd: float = 0.0,
    wasted_ns: int = 0,
    detail: Mapping[str, Any] | None = None,
    identity: str = "",
    kind: str | None = None,
) -> Finding:
    """A :class:`Finding` stamped with the detector's kind and version."""
    assert severity in SEVERITIES, severity
    return Finding(
        kind=kind or detector.kind,
        severity=severity,
        project=trace.project,
        trace_id=trace.trace_id,
        run_id=trace.run_id,
        component=component,
        step_id=step_id,
        evidence=unique(evidence)[:MAX_EVIDENCE],
        explanation=explanation,
        wasted_tokens=max(0, int(wasted_tokens)),
        wasted_cost_usd=max(0.0, float(wasted_cost_usd)),
        wasted_ns=max(0, int(wasted_ns)),
        detail=dict(detail or {}),
        detector_version=f"{detector.kind}@{detector.version}",
        identity=identity,
    )


def memoised(
    trace: TraceData, kind: str, rule: Callable[[TraceData], list[Finding]]
) -> list[Finding]:
    """``rule``'s findings (of ``kind``) on ``trace``, worked out once per trace: plan
    propagation asks other detectors whether they explain a failed run. The engine stores there
    the verdict of a detector's screen too (a trace it clears has no finding of its kind), so a
    rule asked about a cleared trace does no work.

    >>> memoised(TraceData("p", "t"), "demo", lambda trace: [])
    []
    """
    found: list[Finding] | None = trace._memo.get(kind)
    if found is None:
        found = trace._memo[kind] = rule(trace)
    return list(found)


MAX_EVIDENCE = 50
"""Evidence lists are capped: a runaway loop of 500 attempts needs a sample, not every span."""


def by_start(attempts: Iterable[Attempt]) -> list[Attempt]:
    return sorted(attempts, key=lambda a: (a.start_ns, a.attempt))


def succeeded_steps(trace: TraceData) -> set[str]:
    """Step ids with at least one successful attempt."""
    return {a.step_id for a in trace.attempts if a.succeeded}


def fmt_keys(keys: Iterable[str]) -> str:
    return ", ".join(sorted(keys)) or "none"

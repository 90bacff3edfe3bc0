"""The collector's query API, as response models: declared once, used by the routes
(FastAPI ``response_model``) and parsed by :class:`planscope.client.CollectorClient`.

Rows whose columns are documented in ``docs/collector.md`` (trace list rows, stats rows) stay
mappings, so a new column needs no change here; a finding is typed field by field. Needs
``pydantic`` (``pip install 'planscope[dashboard]'`` or ``'planscope[server]'``).

>>> from planscope.api import FindingsPage
>>> FindingsPage.model_validate({"findings": [], "limit": 1, "offset": 0}).has_more
False
"""

from __future__ import annotations

from typing import Any

try:
    from pydantic import BaseModel, ConfigDict, Field
except ImportError as exc:  # the agent's install has only opentelemetry-api
    raise ImportError("planscope.api needs pydantic: pip install 'planscope[dashboard]'") from exc

__all__ = [
    "AnalyzeResult",
    "Finding",
    "FindingsPage",
    "RunStats",
    "StepStats",
    "TraceFindings",
    "TracesPage",
    "VariantStats",
    "is_trace_id",
]

Row = dict[str, Any]


def is_trace_id(value: str) -> bool:
    """True for a trace id as the API spells it: 32 lower-case hex characters.

    >>> is_trace_id("0af7651916cd43dd8448eb211c80319c"), is_trace_id("x" * 32)
    (True, False)
    """
    return len(value) == 32 and all(c in "0123456789abcdef" for c in value)


class _Model(BaseModel):
    # Fields a newer collector adds are kept, not refused: the client stays readable.
    model_config = ConfigDict(extra="allow")


class Finding(_Model):
    """One analyzer finding (a row of the ``findings`` table)."""

    kind: str
    severity: str
    trace_id: str
    project: str = "default"
    run_id: str = ""
    component: str = ""
    step_id: str = ""
    evidence_span_ids: list[str] = Field(default_factory=list)
    explanation: str = ""
    wasted_tokens: int = 0
    wasted_cost_usd: float = 0.0
    wasted_ms: float = 0.0
    detail: dict[str, Any] = Field(default_factory=dict)
    detector_version: str = ""
    key: str = ""
    trace_start_ns: int | None = None
    """Start of the finding's trace (the time findings are listed and charted by)."""
    analyzed_at_us: int | None = None


class FindingsPage(_Model):
    """``GET /api/findings``: a page of findings, newest trace first."""

    findings: list[Finding]
    limit: int
    offset: int
    has_more: bool = False


class TraceFindings(_Model):
    """``GET /api/traces/{id}/findings``."""

    trace_id: str
    findings: list[Finding]


class AnalyzeResult(_Model):
    """``POST /api/analyze``: what one analysis pass read and found."""

    project: str
    traces: int
    spans: int
    seconds: float
    counts: dict[str, int]
    findings: list[Finding]
    truncated: bool = False


class TracesPage(_Model):
    """``GET /api/traces``: one page of trace rows (newest first); ``next_offset`` is None on
    the last page."""

    traces: list[Row]
    limit: int
    offset: int
    next_offset: int | None = None


class RunStats(_Model):
    """``GET /api/stats/runs``: runs per time bucket and outcome, totals, agents."""

    bucket_seconds: int
    buckets: list[Row]
    truncated: bool = False
    totals: Row
    agents: list[Row]


class StepStats(_Model):
    """``GET /api/stats/steps``: per (agent, step id), worst first."""

    steps: list[Row]
    limit: int


class VariantStats(_Model):
    """``GET /api/stats/variants``: per runtime variant."""

    variants: list[Row]

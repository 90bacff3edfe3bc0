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

import json
from typing import Any, Literal

try:
    from pydantic import BaseModel, ConfigDict, Field, model_validator
except ImportError as exc:  # the agent's install has only opentelemetry-api
    raise ImportError("planscope.api needs pydantic: pip install 'planscope[dashboard]'") from exc

__all__ = [
    "AnalyzeResult",
    "Approval",
    "ApprovalDecision",
    "ApprovalRequest",
    "ApprovalsPage",
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


# --- plan approvals (/api/approvals) ---------------------------------------------------------
MAX_PLAN_BYTES = 1_000_000
"""Largest plan JSON an approval request (or an edit) may carry."""


def _check_plan(plan: dict[str, Any]) -> None:
    steps = plan.get("steps")
    if not isinstance(steps, list) or not steps:
        raise ValueError("plan.steps must be a non-empty list")
    for i, step in enumerate(steps):
        if not isinstance(step, dict) or not isinstance(step.get("id"), str) or not step["id"]:
            raise ValueError(f"plan.steps[{i}] needs a non-empty string id")
    if len(json.dumps(plan)) > MAX_PLAN_BYTES:
        raise ValueError(f"plan exceeds {MAX_PLAN_BYTES} bytes")


class ApprovalRequest(BaseModel):
    """``POST /api/approvals``: the plan an agent will not run before a decision.

    >>> ApprovalRequest(run_id="r", plan_id="p", plan_version=1, plan={"steps": [{"id": "a"}]}
    ...                 ).default_decision
    'reject'
    """

    model_config = ConfigDict(extra="forbid")

    run_id: str = Field(min_length=1, max_length=128)
    trace_id: str = Field(default="", pattern="^([0-9a-f]{32})?$")
    plan_id: str = Field(min_length=1, max_length=256)
    plan_version: int = Field(ge=1, le=1_000_000)
    agent: str = Field(default="", max_length=256)
    objective: str = Field(default="", max_length=10_000)
    plan: dict[str, Any]
    """The plan as ``planscope.Plan`` JSON (``Plan.to_dict()``)."""
    timeout_s: float = Field(default=600.0, gt=0, le=7 * 86400)
    default_decision: Literal["approve", "reject"] = "reject"

    @model_validator(mode="after")
    def _plan_shape(self) -> ApprovalRequest:
        _check_plan(self.plan)
        return self


class ApprovalDecision(BaseModel):
    """``POST /api/approvals/{id}/decision``: a rejection needs a reason, an edit the plan."""

    model_config = ConfigDict(extra="forbid")

    decision: Literal["approve", "edit", "reject"]
    reason: str = Field(default="", max_length=4000)
    reviewer: str = Field(default="", max_length=256)
    plan: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ApprovalDecision:
        if self.decision == "reject" and not self.reason.strip():
            raise ValueError("a rejection needs a reason")
        if self.decision == "edit":
            if self.plan is None:
                raise ValueError("an edit needs the edited plan")
            _check_plan(self.plan)
        elif self.plan is not None:
            raise ValueError(f"only an edit carries a plan, not {self.decision!r}")
        return self


class Approval(_Model):
    """One approval request and, once decided, its decision (times in Unix seconds)."""

    id: str
    status: Literal["pending", "approved", "edited", "rejected"]
    run_id: str
    trace_id: str
    plan_id: str
    plan_version: int
    agent: str
    objective: str
    plan: dict[str, Any]
    edited_plan: dict[str, Any] | None
    reason: str
    reviewer: str
    timeout_s: float
    default_decision: str
    created_at: float
    decided_at: float | None


class ApprovalsPage(_Model):
    """``GET /api/approvals``: requests, newest first."""

    approvals: list[Approval]

"""Plan approvals (``/api/approvals``): an agent files a plan and waits; a person decides.

An agent (``planscope run --approve queue``) files a plan with ``POST /api/approvals`` and
polls ``GET /api/approvals/{id}`` until it is decided; the dashboard's approval queue lists the
pending ones and decides with ``POST /api/approvals/{id}/decision`` (approve, edit with a new
plan, or reject with a reason). The agent that gives up waiting posts its default decision the
same way, so the first decision wins whoever makes it and a second one is refused (409). Every
route takes the caller's project from its API key like the query API; rows live in
``planscope_plan_approvals`` (migration 0020). The wire models are in ``planscope.api``.
"""

from __future__ import annotations

import json
import threading
import uuid
from datetime import datetime, timezone
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, HTTPException, Query, Request
from planscope.api import Approval, ApprovalDecision, ApprovalRequest, ApprovalsPage

from .extensions import project_of
from .storage import Store

TABLE = "planscope_plan_approvals"
COLUMNS = (
    "Project",
    "ApprovalId",
    "Revision",
    "Status",
    "RunId",
    "TraceId",
    "PlanId",
    "PlanVersion",
    "Agent",
    "Objective",
    "PlanJson",
    "EditedPlanJson",
    "Reason",
    "Reviewer",
    "TimeoutSeconds",
    "DefaultDecision",
    "CreatedAt",
    "DecidedAt",
)
PENDING = "pending"
_STATUS_OF = {"approve": "approved", "edit": "edited", "reject": "rejected"}

router = APIRouter()
_decide_lock = threading.Lock()
"""Read-then-write of a decision is serialised, so the first decision wins (one collector
process owns the embedded store; see docs/collector.md for a cluster)."""


def _store(request: Request) -> Store:
    store: Store = request.app.state.collector.store
    return store


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _seconds(value: Any) -> float:
    if isinstance(value, datetime):
        when = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        return when.timestamp()
    return float(value or 0)


def _approval(row: dict[str, Any]) -> Approval:
    decided = row["Status"] != PENDING
    return Approval(
        id=row["ApprovalId"],
        status=row["Status"],
        run_id=row["RunId"],
        trace_id=row["TraceId"],
        plan_id=row["PlanId"],
        plan_version=int(row["PlanVersion"]),
        agent=row["Agent"],
        objective=row["Objective"],
        plan=json.loads(row["PlanJson"]),
        edited_plan=json.loads(row["EditedPlanJson"]) if row["EditedPlanJson"] else None,
        reason=row["Reason"],
        reviewer=row["Reviewer"],
        timeout_s=float(row["TimeoutSeconds"]),
        default_decision=row["DefaultDecision"],
        created_at=_seconds(row["CreatedAt"]),
        decided_at=_seconds(row["DecidedAt"]) if decided else None,
    )


def _row(project: str, a: Approval, revision: int) -> list[Any]:
    created = datetime.fromtimestamp(a.created_at, timezone.utc)
    decided = datetime.fromtimestamp(a.decided_at, timezone.utc) if a.decided_at else created
    return [
        project,
        a.id,
        revision,
        a.status,
        a.run_id,
        a.trace_id,
        a.plan_id,
        a.plan_version,
        a.agent,
        a.objective,
        json.dumps(a.plan),
        json.dumps(a.edited_plan) if a.edited_plan is not None else "",
        a.reason,
        a.reviewer,
        a.timeout_s,
        a.default_decision,
        created,
        decided,
    ]


def _select(store: Store, where: str, params: dict[str, Any], limit: int) -> list[Approval]:
    rows = store.query(
        f"SELECT * FROM {TABLE} FINAL WHERE Project = {{project:String}} AND {where} "
        "ORDER BY CreatedAt DESC LIMIT {limit:UInt32}",
        {**params, "limit": limit},
    )
    return [_approval(r) for r in rows]


def _get(store: Store, project: str, approval_id: str) -> Approval:
    found = _select(store, "ApprovalId = {id:String}", {"project": project, "id": approval_id}, 1)
    if not found:
        raise HTTPException(404, f"approval {approval_id} not found")
    return found[0]


def _check_id(approval_id: str) -> str:
    if len(approval_id) != 32 or any(c not in "0123456789abcdef" for c in approval_id):
        raise HTTPException(400, "approval id must be 32 hex characters")
    return approval_id


@router.post("/api/approvals", status_code=201)
async def file_approval(
    request: Request, body: ApprovalRequest, proj: Annotated[str, Depends(project_of)]
) -> Approval:
    """File a plan for approval; answers the pending request (its ``id`` is what to poll)."""
    approval = Approval(
        id=uuid.uuid4().hex,
        status=PENDING,
        run_id=body.run_id,
        trace_id=body.trace_id,
        plan_id=body.plan_id,
        plan_version=body.plan_version,
        agent=body.agent,
        objective=body.objective,
        plan=body.plan,
        edited_plan=None,
        reason="",
        reviewer="",
        timeout_s=body.timeout_s,
        default_decision=body.default_decision,
        created_at=_now().timestamp(),
        decided_at=None,
    )
    store = _store(request)
    await anyio.to_thread.run_sync(
        lambda: store.insert_rows(TABLE, [_row(proj, approval, 0)], COLUMNS)
    )
    return approval


@router.get("/api/approvals")
async def list_approvals(
    request: Request,
    proj: Annotated[str, Depends(project_of)],
    status: Annotated[str | None, Query(pattern="^(pending|approved|edited|rejected)$")] = None,
    run_id: Annotated[str | None, Query(max_length=128)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> ApprovalsPage:
    """Approval requests, newest first (``status=pending``: the queue)."""
    where, params = ["1"], {"project": proj}
    if status:
        where.append("Status = {status:String}")
        params["status"] = status
    if run_id:
        where.append("RunId = {run:String}")
        params["run"] = run_id
    store = _store(request)
    found = await anyio.to_thread.run_sync(
        lambda: _select(store, " AND ".join(where), params, limit)
    )
    return ApprovalsPage(approvals=found)


@router.get("/api/approvals/{approval_id}")
async def get_approval(
    request: Request, approval_id: str, proj: Annotated[str, Depends(project_of)]
) -> Approval:
    """One approval request (what the waiting agent polls)."""
    store = _store(request)
    return await anyio.to_thread.run_sync(lambda: _get(store, proj, _check_id(approval_id)))


@router.post("/api/approvals/{approval_id}/decision")
async def decide(
    request: Request,
    approval_id: str,
    body: ApprovalDecision,
    proj: Annotated[str, Depends(project_of)],
) -> Approval:
    """Decide a pending request; 409 when it is decided already (the first decision wins)."""
    store = _store(request)
    _check_id(approval_id)

    def write() -> Approval:
        with _decide_lock:
            current = _get(store, proj, approval_id)
            if current.status != PENDING:
                raise HTTPException(
                    409, f"approval {approval_id} is {current.status} already ({current.reason})"
                )
            decided = current.model_copy(
                update={
                    "status": _STATUS_OF[body.decision],
                    "reason": body.reason,
                    "reviewer": body.reviewer,
                    "edited_plan": body.plan,
                    "decided_at": _now().timestamp(),
                }
            )
            store.insert_rows(TABLE, [_row(proj, decided, 1)], COLUMNS)
            return decided

    return await anyio.to_thread.run_sync(write)

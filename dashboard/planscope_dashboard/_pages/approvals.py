"""Approvals: plans waiting for a person's decision, and the decisions made.

Reads and writes the collector's approval routes (``/api/approvals``) through
``planscope.client``: an agent run with ``planscope run --approve queue`` files each plan
version and waits; here a reviewer approves it, saves an edited plan (JSON) or rejects it with
a reason. The agent records the decision on the plan span. Plans, objectives and reasons are
data: shown with ``st.text``, ``st.json`` and ``st.dataframe``, never as Markdown or HTML.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import streamlit as st
from planscope import api
from planscope.client import ClientError, ClientSettings, CollectorClient, Rejected, Unavailable
from pydantic import ValidationError

from .. import _state as S
from .._safe import cap, md_escape
from ._common import rows_table

APPROVALS_UNAVAILABLE = (
    "Plan approvals aren't available on this collector (its /api/approvals answers 404): "
    "upgrade `planscope serve`."
)
NO_PENDING = (
    "No plan is waiting for a decision. An agent files its plans here when it runs with "
    "`planscope run --approve queue --collector URL`."
)


def _when(seconds: float | None) -> datetime | None:
    return datetime.fromtimestamp(seconds, tz=timezone.utc) if seconds else None


def render(settings: ClientSettings, filters: S.Filters) -> None:
    st.header("Approvals")
    flash = st.session_state.pop("approval_flash", None)
    if flash:
        st.success(md_escape(flash))
    client = S.client_for(settings)
    try:
        pending = client.list_approvals("pending")
        recent = client.list_approvals(limit=100)
    except Unavailable:
        st.info(APPROVALS_UNAVAILABLE)
        return
    st.subheader(f"Waiting for a decision ({len(pending)})")
    if not pending:
        st.info(NO_PENDING)
    for approval in pending:
        _pending(client, approval)
    st.subheader("Decided")
    decided = [a for a in recent if a.status != "pending"]
    if not decided:
        st.text("No decision yet.")
        return
    rows_table(
        [
            {
                "decided": _when(a.decided_at),
                "status": a.status,
                "plan": f"{a.plan_id} v{a.plan_version}",
                "reviewer": a.reviewer,
                "reason": cap(a.reason, 300),
                "run": a.run_id,
                "trace": a.trace_id,
            }
            for a in decided
        ]
    )


def _steps(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "step": str(s.get("id", "")),
            "description": cap(str(s.get("description", "")), 300),
            "executor": str(s.get("executor") or ""),
            "tool": str(s.get("tool") or ""),
            "after": ", ".join(str(d) for d in s.get("depends_on") or []),
            "irreversible": bool(s.get("irreversible")),
        }
        for s in plan.get("steps") or []
        if isinstance(s, dict)
    ]


def _pending(client: CollectorClient, approval: api.Approval) -> None:
    with st.container(border=True):
        st.text(
            f"Plan {approval.plan_id} version {approval.plan_version} · run {approval.run_id} · "
            f"filed {_when(approval.created_at):%Y-%m-%d %H:%M:%S} UTC · "
            f"default on timeout ({approval.timeout_s:g}s): {approval.default_decision}"
        )
        if approval.objective:
            st.text("Objective: " + cap(approval.objective, 2000))
        rows_table(_steps(approval.plan), key=f"approval_steps_{approval.id}")
        if approval.trace_id:
            st.link_button("Open the run", f"?page=run&trace={approval.trace_id}")
        with st.form(f"decide_{approval.id}"):
            reason = st.text_input("Reason (required to reject)", key=f"reason_{approval.id}")
            reviewer = st.text_input("Reviewer", value="dashboard", key=f"reviewer_{approval.id}")
            edited = st.text_area(
                "Plan JSON (edit it, then Save edit)",
                value=json.dumps(approval.plan, indent=2),
                height=220,
                key=f"plan_{approval.id}",
            )
            a, e, r = st.columns(3)
            approve = a.form_submit_button("Approve", type="primary")
            edit = e.form_submit_button("Save edit")
            reject = r.form_submit_button("Reject")
        choice = "approve" if approve else "edit" if edit else "reject" if reject else None
        if choice is not None:
            _decide(client, approval, choice, reason, reviewer, edited)


def _decide(
    client: CollectorClient,
    approval: api.Approval,
    choice: str,
    reason: str,
    reviewer: str,
    edited: str,
) -> None:
    try:
        plan = json.loads(edited) if choice == "edit" else None
        decision = api.ApprovalDecision.model_validate(
            {"decision": choice, "reason": reason, "reviewer": reviewer, "plan": plan}
        )
    except json.JSONDecodeError as exc:
        st.error(md_escape(f"The edited plan is not JSON: {exc}"))
        return
    except ValidationError as exc:
        st.error(md_escape("; ".join(str(e["msg"]) for e in exc.errors())))
        return
    try:
        done = client.decide_approval(approval.id, decision)
    except Rejected as exc:
        st.error(md_escape(f"The collector refused the decision: {exc}"))
        return
    except ClientError as exc:
        st.error(md_escape(str(exc)))
        return
    st.session_state["approval_flash"] = (
        f"Plan {done.plan_id} version {done.plan_version}: {done.status}"
    )
    st.rerun()

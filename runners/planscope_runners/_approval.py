"""Approval gates a person answers: a terminal prompt, or the collector's approval queue.

Both are :data:`~planscope_runners._core.ApprovalGate` callables: they see every plan version
before any of its steps runs and return Approved, Edited or Rejected.

* :class:`TerminalGate` (``planscope run --approve ask``): prints the plan and asks approve,
  edit (the plan as JSON in ``$VISUAL`` / ``$EDITOR``) or reject (with a reason).
* :class:`QueueGate` (``planscope run --approve queue``): files the plan with the collector
  (``POST /api/approvals``, the collector's API key), polls until someone decides in the
  dashboard's approval queue, and after ``timeout_s`` applies its default decision (posted the
  same way, so a decision that arrived first wins).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import httpx
import planscope
from planscope import Plan, PlanValidationError

from ._core import AGENT, Approved, Decision, Edited, Rejected

DEFAULT_TIMEOUT_S = 600.0
POLL_INTERVAL_S = 0.5


class ApprovalUnavailable(planscope.ConfigurationError):
    """The approval queue cannot be reached or refused the request."""


def describe(plan: Plan) -> str:
    """The plan as a reviewer reads it: one line per step, dependencies and irreversibility.

    >>> print(describe(Plan([planscope.PlanStep("a", "read the config", tool="get_config")])))
    plan ... version 1 (1 steps)
      a: read the config [get_config]
    """
    lines = [f"plan {plan.id} version {plan.version} ({len(plan.steps)} steps)"]
    for step in plan.topological_order():
        extra = [step.tool or "", f"by {step.executor}" if step.executor else ""]
        if step.depends_on:
            extra.append("after " + ", ".join(step.depends_on))
        if step.irreversible:
            extra.append("IRREVERSIBLE")
        detail = "; ".join(e for e in extra if e)
        lines.append(f"  {step.id}: {step.description}" + (f" [{detail}]" if detail else ""))
    return "\n".join(lines)


def edited_plan(original: Plan, data: Any) -> Plan:
    """An edited plan from its JSON (id and version stay those of the original)."""
    if not isinstance(data, dict):
        raise PlanValidationError("the edited plan must be a JSON object with steps")
    return Plan.from_dict({**data, "id": original.id, "version": original.version})


class TerminalGate:
    """Ask a person at the terminal: approve, edit in ``$EDITOR``, or reject with a reason.

    >>> import io
    >>> gate = TerminalGate(stdin=io.StringIO("a\\n"), stdout=io.StringIO())
    >>> gate(Plan([planscope.PlanStep("a", "read")]))
    Approved(reviewer='terminal', reason=None)
    """

    def __init__(
        self,
        *,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        editor: str | None = None,
        reviewer: str = "terminal",
    ) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self.editor = editor
        self.reviewer = reviewer

    def _say(self, text: str) -> None:
        import sys

        out = self.stdout or sys.stdout
        out.write(text)
        out.flush()

    def _ask(self, prompt: str) -> str:
        import sys

        self._say(prompt)
        line = (self.stdin or sys.stdin).readline()
        if not line:
            raise EOFError("no answer on the terminal")
        return line.strip()

    def __call__(self, plan: Plan) -> Decision:
        self._say(describe(plan) + "\n")
        while True:
            answer = self._ask("Approve this plan? [a]pprove / [e]dit / [r]eject: ").lower()
            if answer in ("a", "approve", "y", "yes"):
                return Approved(reviewer=self.reviewer)
            if answer in ("r", "reject", "n", "no"):
                reason = ""
                while not reason:
                    reason = self._ask("Reason for rejecting: ")
                return Rejected(reason, reviewer=self.reviewer)
            if answer in ("e", "edit"):
                try:
                    changed = self._edit(plan)
                except (ValueError, PlanValidationError, OSError) as exc:
                    self._say(f"The edited plan is not valid ({exc}); nothing changed.\n")
                    continue
                self._say(describe(changed) + "\n")
                reason = self._ask("Why the edit (optional): ")
                return Edited(changed, reviewer=self.reviewer, reason=reason or None)
            self._say("Answer a, e or r.\n")

    def _edit(self, plan: Plan) -> Plan:
        editor = self.editor or os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        with tempfile.TemporaryDirectory(prefix="planscope-plan-") as tmp:
            path = Path(tmp) / f"{plan.id}-v{plan.version}.json"
            path.write_text(json.dumps(plan.to_dict(), indent=2) + "\n", encoding="utf-8")
            code = subprocess.call([*shlex.split(editor), str(path)])
            if code != 0:
                raise OSError(f"the editor {editor!r} exited with {code}")
            return edited_plan(plan, json.loads(path.read_text(encoding="utf-8")))


class QueueGate:
    """Wait for a decision from the collector's approval queue (the dashboard's Approvals page).

    ``default`` (``reject`` or ``approve``) is applied after ``timeout_s`` without a decision.

    >>> gate = QueueGate("http://127.0.0.1:4318", timeout_s=30)  # doctest: +SKIP
    """

    def __init__(
        self,
        collector: str,
        *,
        api_key: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        default: str = "reject",
        poll_interval_s: float = POLL_INTERVAL_S,
        on_filed: Callable[[str], None] | None = None,
        agent: str = AGENT,
    ) -> None:
        if default not in ("approve", "reject"):
            raise planscope.ConfigurationError(
                f"the default decision must be approve or reject, not {default!r}"
            )
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.Client(base_url=collector.rstrip("/"), headers=headers, timeout=10)
        self.timeout_s = timeout_s
        self.default = default
        self.poll_interval_s = poll_interval_s
        self.on_filed = on_filed
        self.agent = agent

    def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            return self.client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise ApprovalUnavailable(f"the approval queue is unreachable: {exc}") from None

    def __call__(self, plan: Plan) -> Decision:
        run = planscope.current_run()
        trace_id = ""
        if run is not None:
            context = run.span.get_span_context()
            trace_id = format(context.trace_id, "032x") if context.trace_id else ""
        filed = self._call(
            "POST",
            "/api/approvals",
            json={
                "run_id": (run.run_id if run is not None else "") or plan.id,
                "trace_id": trace_id,
                "plan_id": plan.id,
                "plan_version": plan.version,
                "agent": self.agent,
                "objective": plan.objective or "",
                "plan": plan.to_dict(),
                "timeout_s": self.timeout_s,
                "default_decision": self.default,
            },
        )
        if filed.status_code != 201:
            raise ApprovalUnavailable(
                f"the collector refused the approval request ({filed.status_code}): "
                f"{filed.text[:300]}"
            )
        approval_id = str(filed.json()["id"])
        if self.on_filed is not None:
            self.on_filed(approval_id)
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            got = self._call("GET", f"/api/approvals/{approval_id}")
            if got.status_code == 200 and got.json()["status"] != "pending":
                return _decision(plan, got.json())
            time.sleep(self.poll_interval_s)
        body = {
            "decision": self.default,
            "reason": f"no decision within {self.timeout_s:g}s: default policy {self.default}",
            "reviewer": "policy:timeout",
        }
        posted = self._call("POST", f"/api/approvals/{approval_id}/decision", json=body)
        if posted.status_code == 409:  # someone decided just before the timeout: theirs wins
            posted = self._call("GET", f"/api/approvals/{approval_id}")
        if posted.status_code != 200:
            raise ApprovalUnavailable(
                f"the collector refused the default decision ({posted.status_code}): "
                f"{posted.text[:300]}"
            )
        return _decision(plan, posted.json())


def _decision(plan: Plan, approval: dict[str, Any]) -> Decision:
    reviewer = str(approval.get("reviewer") or "") or None
    reason = str(approval.get("reason") or "") or None
    status = approval["status"]
    if status == "approved":
        return Approved(reviewer=reviewer, reason=reason)
    if status == "edited":
        return Edited(edited_plan(plan, approval["edited_plan"]), reviewer=reviewer, reason=reason)
    return Rejected(reason or "rejected", reviewer=reviewer)

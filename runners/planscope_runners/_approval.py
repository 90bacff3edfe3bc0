"""Approval gates a person answers: a terminal prompt, or the collector's approval queue.

Both are :data:`~planscope_runners._core.ApprovalGate` callables: they see every plan version
before any of its steps runs and return Approved, Edited or Rejected.

* :class:`TerminalGate` (``planscope run --approve ask``): prints the plan and asks approve,
  edit (the plan as JSON in ``$VISUAL`` / ``$EDITOR``) or reject (with a reason).
* :class:`QueueGate` (``planscope run --approve queue``): files the plan with the collector
  (``POST /api/approvals``, the collector's API key), polls until someone decides in the
  dashboard's approval queue, and after ``timeout_s`` applies its default decision (posted the
  same way, so a decision that arrived first wins), through ``planscope.client``.
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

import planscope
from planscope import Plan, PlanValidationError, api
from planscope.client import ClientSettings, CollectorClient, Rejected

from ._core import AGENT, Approved, Decision, Edited
from ._core import Rejected as RejectedPlan

DEFAULT_TIMEOUT_S = 600.0
POLL_INTERVAL_S = 0.5


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
        try:
            return self._review(plan)
        except EOFError:  # nobody can answer (input closed): nothing runs unreviewed
            self._say("\n")
            return RejectedPlan("no answer at the terminal (input closed)", reviewer=self.reviewer)

    def _review(self, plan: Plan) -> Decision:
        self._say(describe(plan) + "\n")
        while True:
            answer = self._ask("Approve this plan? [a]pprove / [e]dit / [r]eject: ").lower()
            if answer in ("a", "approve", "y", "yes"):
                return Approved(reviewer=self.reviewer)
            if answer in ("r", "reject", "n", "no"):
                reason = ""
                while not reason:
                    reason = self._ask("Reason for rejecting: ")
                return RejectedPlan(reason, reviewer=self.reviewer)
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

    >>> gate = QueueGate(ClientSettings(base_url="http://127.0.0.1:4318"), timeout_s=30)
    >>> gate.default
    'reject'
    """

    def __init__(
        self,
        settings: ClientSettings,
        *,
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
        self.settings = settings
        self.timeout_s = timeout_s
        self.default = default
        self.poll_interval_s = poll_interval_s
        self.on_filed = on_filed
        self.agent = agent

    def __call__(self, plan: Plan) -> Decision:
        run = planscope.current_run()
        trace_id = ""
        if run is not None:
            context = run.span.get_span_context()
            trace_id = format(context.trace_id, "032x") if context.trace_id else ""
        request = api.ApprovalRequest(
            run_id=(run.run_id if run is not None else "") or plan.id,
            trace_id=trace_id,
            plan_id=plan.id,
            plan_version=plan.version,
            agent=self.agent,
            objective=plan.objective or "",
            plan=plan.to_dict(),
            timeout_s=self.timeout_s,
            default_decision="approve" if self.default == "approve" else "reject",
        )
        with CollectorClient(self.settings, user_agent="planscope-runners") as client:
            filed = client.file_approval(request)
            if self.on_filed is not None:
                self.on_filed(filed.id)
            deadline = time.monotonic() + self.timeout_s
            while time.monotonic() < deadline:
                current = client.get_approval(filed.id)
                if current.status != "pending":
                    return _decision(plan, current)
                time.sleep(self.poll_interval_s)
            timeout = api.ApprovalDecision(
                decision="approve" if self.default == "approve" else "reject",
                reason=f"no decision within {self.timeout_s:g}s: default policy {self.default}",
                reviewer="policy:timeout",
            )
            try:
                decided = client.decide_approval(filed.id, timeout)
            except Rejected as exc:
                if exc.status != 409:
                    raise
                decided = client.get_approval(filed.id)  # decided just before: theirs wins
            return _decision(plan, decided)


def _decision(plan: Plan, approval: api.Approval) -> Decision:
    reviewer = approval.reviewer or None
    reason = approval.reason or None
    if approval.status == "approved":
        return Approved(reviewer=reviewer, reason=reason)
    if approval.status == "edited":
        return Edited(edited_plan(plan, approval.edited_plan), reviewer=reviewer, reason=reason)
    return RejectedPlan(reason or "rejected", reviewer=reviewer)

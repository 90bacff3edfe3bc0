"""Plan drift: executor actions that map to no plan step.

Definition. In a run that has at least one plan, a step attempt whose step id is in no plan
version of the run (or that carries no plan id at all), or a tool call made outside any step,
is an action no plan step explains ("why did the agent do that?"). Tool calls the run makes
after every step attempt ended (checking the outcome, polling a booking's status) serve no
step and are not drift. Runs without any plan (ReAct
and other plan-less agents) are skipped: for them there is nothing to drift from. Plans whose
JSON could not be parsed are a data-quality problem, not drift, and suppress this check. Plans
and steps the span model inferred from another convention are not considered.
"""

from __future__ import annotations

from planscope import semconv as A

from .._columns import BatchColumns, traces_of, unmatched
from .._model import Finding, TraceData
from ._base import make_finding

KIND = A.FINDING_PLAN_DRIFT


class PlanDrift:
    """Detects executor actions outside the plan.

    >>> PlanDrift().detect(TraceData("p", "t"))
    []
    """

    kind = KIND
    version = 2

    def screen(self, batch: BatchColumns) -> set[str]:
        """Traces of ``batch`` with plan steps and attempts where an attempt's step id is no
        plan step's, or a tool call has no step id and no attempt for a parent."""
        import pyarrow.compute as pc

        steps, attempts, tools = batch.plan_steps, batch.attempts, batch.tools
        if steps is None or attempts is None:
            return set()
        out = unmatched(attempts, ["step_id"], steps, ["step_id"])
        if tools is not None:
            loose = tools.filter(pc.equal(tools.column("step_id"), ""))
            out |= unmatched(loose, ["parent_span_id"], attempts, ["span_id"])
        return out & traces_of(steps) & traces_of(attempts)

    def detect(self, trace: TraceData) -> list[Finding]:
        # Structure the span model inferred (an observed plan, executor-level steps of another
        # convention) never drifts from itself: only planscope-declared plans and steps count.
        plans = [p for p in trace.plans if not p.inferred]
        if not plans or any(not p.json_valid for p in plans):
            return []
        planned = {s.step_id for s in trace.plan_steps}
        if not planned:
            return []
        findings = []
        seen: set[str] = set()
        attempts = [a for a in trace.attempts if not a.inferred]
        for a in attempts:
            if a.step_id in planned or a.step_id in seen:
                continue
            seen.add(a.step_id)
            same = [x.span_id for x in attempts if x.step_id == a.step_id]
            findings.append(
                make_finding(
                    self,
                    trace,
                    severity="medium",
                    component=a.executor or "executor",
                    step_id=a.step_id,
                    evidence=same,
                    explanation=(
                        f"Executor '{a.executor or '?'}' ran step '{a.step_id or '(no id)'}', "
                        "which is in none of the run's plan versions."
                    ),
                    detail={"plan_id": a.plan_id, "plan_version": a.plan_version},
                )
            )
        step_spans = {a.span_id for a in trace.attempts}
        finished = max((a.end_ns for a in trace.attempts), default=0)
        loose = [
            t
            for t in trace.tools
            if not t.step_id and t.parent_span_id not in step_spans and t.start_ns < finished
        ]
        if loose and attempts:
            tools = sorted({t.tool for t in loose})
            findings.append(
                make_finding(
                    self,
                    trace,
                    severity="low",
                    component=tools[0] if len(tools) == 1 else "executor",
                    step_id="",
                    evidence=[t.span_id for t in loose],
                    explanation=(
                        f"{len(loose)} tool call(s) ({', '.join(tools)}) were made outside any "
                        "plan step."
                    ),
                    detail={"tools": tools},
                    identity="loose-tools",
                )
            )
        return findings

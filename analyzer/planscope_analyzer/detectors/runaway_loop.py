"""Runaway recovery loop: one action retried past its budget or without progress.

Definition. A *streak* is a run of consecutive failed attempts of one plan step within one plan
version (retries, not replans), or, for runtimes without plan steps (ReAct, third-party
agents), consecutive failed calls of one tool with the same arguments. A streak is a runaway
loop when it never recovers (no later success of that step / call) and either

* it went beyond the retry budget (an attempt number above ``max_attempts_per_step`` of
  ``planscope.run.budget``, or an attempt refused with status ``skipped``), or
* it repeated at least :data:`MIN_REPEATS` times without progress: the same error fingerprint,
  the same input hash, or the same tool + arguments hash on every attempt.

Without step attributes (a third-party agent) the tool call's parent span stands for the step:
its name minus the ``execute_step`` operation prefix is reported as the step id.

A flaky step that recovers within its budget is healthy and never reported. Attempts of one
step spread over *different* plan versions are replans, reported by ``unbounded_replan``.

Evidence: the attempts (and their failing tool spans). Waste: tokens, cost and time of every
attempt after the first.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from planscope import semconv as A

from .._model import Attempt, Finding, ToolCall, TraceData
from ._base import by_start, make_finding

KIND = A.FINDING_RUNAWAY_LOOP
MIN_REPEATS = 3
"""Identical failures in a row before a loop is reported. Two identical failures are an
ordinary retry (and what flaky dependencies produce); a third with nothing changed (same error,
same inputs) shows the agent is not adapting. Used only when no budget was exceeded."""
HIGH_SEVERITY_REPEATS = 5
"""Streaks at least this long (or beyond the budget) are ``high`` severity."""


def _parent_step(trace: TraceData, parent_span_id: str) -> str:
    """Without step attributes, the step a tool call belongs to is named by its parent span:
    ``execute_step {step id}`` by the conventions, else the parent span's name as is."""
    for span in trace.raw or ():
        if span.span_id == parent_span_id:
            prefix = A.OP_EXECUTE_STEP + " "
            return span.name[len(prefix) :] if span.name.startswith(prefix) else span.name
    return ""


class RunawayLoop:
    """Detects runaway recovery loops (see the module docstring).

    >>> RunawayLoop().detect(TraceData("p", "t"))
    []
    """

    kind = KIND
    version = 2

    def detect(self, trace: TraceData) -> list[Finding]:
        # Both rules need several failures: at least 2 failed attempts of a step, or
        # MIN_REPEATS failed tool calls. Most traces have neither (a cheap exit).
        failed_attempts = sum(a.status == A.STATUS_ERROR for a in trace.attempts)
        if failed_attempts < 2 and sum(t.failed for t in trace.tools) < MIN_REPEATS:
            return []
        findings: list[Finding] = []
        seen_steps: set[str] = set()
        budget = trace.budget_limit("max_attempts_per_step")
        versions = {(p.plan_id, p.version) for p in trace.plans}
        groups: dict[tuple[str, str, int], list[Attempt]] = defaultdict(list)
        for a in trace.attempts:
            if a.step_id:
                groups[(a.step_id, a.plan_id, a.plan_version)].append(a)
        for (step_id, plan_id, version), attempts in groups.items():
            f = self._step_loop(
                trace, step_id, plan_id, version, by_start(attempts), budget, versions
            )
            if f is not None:
                findings.append(f)
                seen_steps.add(step_id)
        findings.extend(
            f for f in self._tool_loops(trace) if f.step_id not in seen_steps or not f.step_id
        )
        return findings

    # -- plan steps ----------------------------------------------------------------------------
    def _step_loop(
        self,
        trace: TraceData,
        step_id: str,
        plan_id: str,
        version: int,
        attempts: Sequence[Attempt],
        budget: int | None,
        versions: set[tuple[str, int]],
    ) -> Finding | None:
        # The last streak of non-successful attempts; a success after it means recovered.
        streak: list[Attempt] = []
        for a in attempts:
            if a.status == A.STATUS_OK:
                streak = []
            else:
                streak.append(a)
        failed = [a for a in streak if a.status == A.STATUS_ERROR]
        if len(failed) < 2:
            return None
        refused = any(a.status == A.STATUS_SKIPPED for a in streak)
        over_budget = refused or (budget is not None and max(a.attempt for a in streak) > budget)
        signals = []
        fingerprints = {a.fingerprint for a in failed}
        if len(fingerprints) == 1 and "" not in fingerprints:
            signals.append("same_error")
        hashes = {a.input_hash for a in failed}
        if len(hashes) == 1 and "" not in hashes:
            signals.append("same_inputs")
        tool_calls = [t for a in failed for t in trace.tools_of(a)]
        failing_tools = [t for t in tool_calls if t.failed]
        keys = {(t.tool, t.args_key) for t in failing_tools}
        if len(keys) == 1 and len(failing_tools) >= len(failed) and next(iter(keys))[1]:
            signals.append("same_tool_args")
        if not over_budget and not (len(failed) >= MIN_REPEATS and signals):
            return None
        tool = Counter(t.tool for t in failing_tools).most_common(1)
        executor = next((a.executor for a in failed if a.executor), "")
        component = tool[0][0] if tool else executor or "executor"
        escalated = plan_id != "" and any(p == plan_id and v > version for p, v in versions)
        wasted = failed[1:]
        n = len(failed)
        why = []
        if over_budget:
            why.append(
                f"beyond its retry budget ({budget} attempts)"
                if budget
                else "until the retry budget refused it"
            )
        if signals:
            why.append("with " + " and ".join(s.replace("_", " ") for s in signals))
        explanation = (
            f"Step '{step_id}' failed {n} attempts in a row {' '.join(why)} and never recovered"
            + ("" if escalated else "; it was not escalated to a replan")
            + "."
        )
        return make_finding(
            self,
            trace,
            severity="high" if over_budget or n >= HIGH_SEVERITY_REPEATS else "medium",
            component=component,
            step_id=step_id,
            evidence=[a.span_id for a in streak] + [t.span_id for t in failing_tools],
            explanation=explanation,
            wasted_tokens=sum(a.tokens for a in wasted),
            wasted_cost_usd=sum(a.cost_usd for a in wasted),
            wasted_ns=sum(max(0, a.end_ns - a.start_ns) for a in wasted),
            detail={
                "attempts": n,
                "signals": signals,
                "over_budget": over_budget,
                "budget": budget,
                "escalated_to_replan": escalated,
                "tool": component if tool else "",
                "plan_version": version,
            },
        )

    # -- tool calls without (distinct) plan steps ----------------------------------------------
    def _tool_loops(self, trace: TraceData) -> list[Finding]:
        """Consecutive failures of one tool with one argument hash, within one plan version."""
        attempt_of = {a.span_id: a for a in trace.attempts}
        groups: dict[tuple[str, str, str, int], list[ToolCall]] = defaultdict(list)
        for t in sorted(trace.tools, key=lambda t: t.start_ns):
            if t.tool and t.args_key:
                groups[(t.tool, t.args_key, t.plan_id, t.plan_version)].append(t)
        findings = []
        for (tool, _args, _plan, _version), calls in groups.items():
            streak: list[ToolCall] = []
            for c in calls:
                streak = [*streak, c] if c.failed else []
            if len(streak) < MIN_REPEATS:
                continue
            first = streak[0]
            parent = attempt_of.get(first.parent_span_id)
            step_id = (
                first.step_id
                or (parent.step_id if parent else "")
                or _parent_step(trace, first.parent_span_id)
            )
            parents = [
                attempt_of[c.parent_span_id] for c in streak if c.parent_span_id in attempt_of
            ]
            wasted = streak[1:]
            findings.append(
                make_finding(
                    self,
                    trace,
                    severity="high" if len(streak) >= HIGH_SEVERITY_REPEATS else "medium",
                    component=tool,
                    step_id=step_id,
                    evidence=[c.span_id for c in streak] + [p.span_id for p in parents],
                    explanation=(
                        f"Tool '{tool}' was called {len(streak)} times in a row with the same "
                        f"arguments, failed every time and never succeeded afterwards."
                    ),
                    wasted_tokens=sum(p.tokens for p in parents[1:]),
                    wasted_cost_usd=sum(p.cost_usd for p in parents[1:]),
                    wasted_ns=sum(max(0, p.end_ns - p.start_ns) for p in parents[1:])
                    or sum(c.duration_ns for c in wasted),
                    detail={"attempts": len(streak), "signals": ["same_tool_args"], "tool": tool},
                    identity=tool,
                )
            )
        return findings

"""Unbounded replanning: the planner keeps re-issuing the plan that just failed.

Definition. Within one plan id, a *repeat* is a replan (version > first) whose plan is
structurally identical to the version it replaces (same step ids, tools, ``depends_on``,
``requires``, ``produces``, irreversibility). Reported when the replans exceed the run's
``max_replans`` budget, or when there are at least :data:`MIN_IDENTICAL_REPLANS` repeats and
no replan limit is configured (``max_replans`` null or no budget recorded). Repeats that a
configured budget stopped are reported by ``plan_propagation`` (pattern
``repeated_failed_plan``): the planner could not produce a different plan.
Blame: the planner, at the step whose failures triggered the replans (the step with
failed attempts in most replaced versions). A replan that changes the plan (healthy recovery,
an ADaPT decomposition that grows the tree, a repaired script) is never a repeat, and identical
replans after which the failing step succeeded (a sold-out fare, then the next one) are a
recovery, not a loop, unless they exceeded ``max_replans``.

Only plans an agent declared count: the versions of plans read from a trace's structure are the
loader's count of the plans it read there, among them an executor's restatement of the one step
it delegates next (the same one-step "plan" before each retry of that step), which no planner
issued as a replan.
"""

from __future__ import annotations

import itertools
from collections import Counter

from planscope import semconv as A

from .._columns import BatchColumns, trace_ids
from .._model import PLANNER, Finding, PlanStep, TraceData, parse_json_object
from ._base import make_finding, memoised

KIND = A.FINDING_UNBOUNDED_REPLAN
MIN_IDENTICAL_REPLANS = 2
"""One identical replan can be a legitimate retry of a transient failure at plan level (the
plan was fine, the world changed); a second identical one after the same failure is a loop."""


def signature(steps: list[PlanStep]) -> tuple[tuple[object, ...], ...]:
    """What makes two plan versions the same plan (descriptions and order excluded)."""
    return tuple(
        sorted(
            (
                s.step_id,
                s.tool,
                tuple(sorted(s.depends_on)),
                tuple(sorted(s.requires)),
                tuple(sorted(s.produces)),
                s.irreversible,
            )
            for s in steps
        )
    )


def version_signature(
    trace: TraceData, plan_id: str, version: int
) -> tuple[tuple[object, ...], ...]:
    """:func:`signature` of one plan version of the trace (computed once per trace)."""
    memo: dict[tuple[str, int], tuple[tuple[object, ...], ...]] = trace._memo.setdefault(
        "signature", {}
    )
    found = memo.get((plan_id, version))
    if found is None:
        found = memo[(plan_id, version)] = signature(trace.steps_of(plan_id, version))
    return found


def _max_replans(budget: str) -> int | None:
    """The ``max_replans`` a run's budget text configures (as ``TraceData.budget_limit``
    reads it), None when none."""
    value = parse_json_object(budget).get("max_replans")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class UnboundedReplan:
    """Detects replans that reproduce the same failed plan, or exceed the replan budget.

    >>> UnboundedReplan().detect(TraceData("p", "t"))
    []
    """

    kind = KIND
    version = 3

    def screen(self, batch: BatchColumns) -> set[str]:
        """Traces of ``batch`` with a plan id whose steps come in at least
        ``MIN_IDENTICAL_REPLANS + 1`` versions (that many repeats need as many replans), or in
        more versions than a run's ``max_replans`` allows (the rule reads its trace's first
        run's: one of them)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        steps = batch.plan_steps
        if steps is None:
            return set()
        versions = steps.group_by(["trace_id", "plan_id"], use_threads=False).aggregate(
            [("plan_version", "count_distinct")]
        )
        count = versions.column("plan_version_count_distinct")
        out = trace_ids(versions, pc.greater(count, MIN_IDENTICAL_REPLANS))
        runs = batch.runs
        if runs is None:
            return out
        budgets = pc.unique(runs.column("budget"))
        limits = pa.array([_max_replans(b) for b in budgets.to_pylist()], pa.int64())
        if limits.null_count == len(limits):
            return out
        limit = limits.take(pc.index_in(runs.column("budget"), value_set=budgets))
        limited = pa.table({"trace_id": runs.column("trace_id"), "limit": limit})
        over = versions.join(limited, "trace_id", join_type="inner", use_threads=False)
        replans = pc.subtract(over.column("plan_version_count_distinct"), 1)
        return out | trace_ids(over, pc.greater(replans, over.column("limit")))

    def detect(self, trace: TraceData) -> list[Finding]:
        return memoised(trace, KIND, self._detect)  # plan_propagation asks too

    def _detect(self, trace: TraceData) -> list[Finding]:
        findings = []
        max_replans = trace.budget_limit("max_replans")
        read = {p.span_id for p in trace.plans if p.inferred}
        by_plan: dict[str, dict[int, list[PlanStep]]] = {}
        for s in trace.plan_steps:
            if s.plan_span_id not in read:
                by_plan.setdefault(s.plan_id, {}).setdefault(s.plan_version, []).append(s)
        for plan_id, versions in by_plan.items():
            ordered = sorted(versions)
            replans = len(ordered) - 1
            repeats = [
                v
                for prev, v in itertools.pairwise(ordered)
                if version_signature(trace, plan_id, v) == version_signature(trace, plan_id, prev)
            ]
            exceeded = max_replans is not None and replans > max_replans
            if not exceeded and (len(repeats) < MIN_IDENTICAL_REPLANS or max_replans is not None):
                continue  # a configured budget that held bounds the loop (plan_propagation)
            failing = Counter(
                a.step_id
                for a in trace.attempts
                if a.plan_id == plan_id and a.failed and a.plan_version in ordered[:-1]
            )
            step_id = failing.most_common(1)[0][0] if failing else ""
            if not exceeded and any(
                a.step_id == step_id and a.succeeded and a.plan_version == ordered[-1]
                for a in trace.attempts
            ):
                continue  # the same plan, re-run, worked: the world changed, not a loop
            plan_spans = [p for p in trace.plans if p.plan_id == plan_id and p.version in repeats]
            wasted = [trace.llm_by_parent.get(p.span_id, (0, 0.0)) for p in plan_spans]
            repeated_attempts = [
                a for a in trace.attempts if a.plan_id == plan_id and a.plan_version in repeats
            ]
            findings.append(
                make_finding(
                    self,
                    trace,
                    severity="high",
                    component=PLANNER,
                    step_id=step_id,
                    evidence=[p.span_id for p in plan_spans]
                    + [a.span_id for a in repeated_attempts if a.step_id == step_id],
                    explanation=(
                        f"The planner replanned {replans} times"
                        + (f" (budget {max_replans})" if exceeded else "")
                        + f", {len(repeats)} of them reproducing the previous plan unchanged"
                        + (f" after step '{step_id}' failed" if step_id else "")
                        + "."
                    ),
                    wasted_tokens=sum(w[0] for w in wasted)
                    + sum(a.tokens for a in repeated_attempts),
                    wasted_cost_usd=sum(w[1] for w in wasted)
                    + sum(a.cost_usd for a in repeated_attempts),
                    wasted_ns=sum(max(0, a.end_ns - a.start_ns) for a in repeated_attempts),
                    detail={
                        "replans": replans,
                        "identical_replans": len(repeats),
                        "max_replans": max_replans,
                        "plan_id": plan_id,
                    },
                    identity=plan_id,
                )
            )
        return findings

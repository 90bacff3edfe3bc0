"""Parallel executors writing the same resource.

Definition. Two tool calls with effect ``write`` or ``irreversible`` on the same
``planscope.tool.resource``, made by different plan steps whose executions overlapped in time
(their step attempts — or, without step spans, the tool spans — overlap), where neither step is
a transitive ``depends_on`` of the other in the plan. Nothing orders the two writers, so one
can lose the other's update. Every such pair of steps is reported once (three overlapping
writers are three pairs), at the writer that started second, with the other in ``detail``: a
conflict is a pair, and which of the two started first is the scheduler's doing. Blame: the
planner (the missing edge). Without a plan, the overlap alone is reported at ``medium``
severity with the executor blamed.
"""

from __future__ import annotations

from planscope import semconv as A

from .._columns import BatchColumns, trace_ids
from .._model import PLANNER, Finding, TraceData, ancestors
from ._base import make_finding, memoised

KIND = A.FINDING_WRITE_CONFLICT


class WriteConflict:
    """Detects unordered concurrent writers of one resource.

    >>> WriteConflict().detect(TraceData("p", "t"))
    []
    """

    kind = KIND
    version = 2

    def screen(self, batch: BatchColumns) -> set[str]:
        """Traces of ``batch`` with two write calls on one resource, for two different step
        ids, whose intervals overlap (a call's interval and step: its parent attempt's, else
        its own and its own step id)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        tools, attempts = batch.tools, batch.attempts
        if tools is None:
            return set()
        effects = pa.array([A.EFFECT_WRITE, A.EFFECT_IRREVERSIBLE], pa.string())
        writes = tools.filter(
            pc.and_(
                pc.not_equal(tools.column("resource"), ""),
                pc.is_in(tools.column("effect"), value_set=effects),
            )
        )
        if writes.num_rows < 2:
            return set()
        start = writes.column("start_ns")
        writes = pa.table(
            {
                "trace_id": writes.column("trace_id"),
                "resource": writes.column("resource"),
                "parent": writes.column("parent_span_id"),
                "step": writes.column("step_id"),
                "start": start,
                "end": pc.add(start, pc.cast(writes.column("duration_ns"), pa.int64())),
            }
        )
        if attempts is not None:
            of = pa.table(
                {
                    "trace_id": attempts.column("trace_id"),
                    "parent": attempts.column("span_id"),
                    "a_step": attempts.column("step_id"),
                    "a_start": attempts.column("start_ns"),
                    "a_end": attempts.column("end_ns"),
                }
            )
            writes = writes.join(
                of, ["trace_id", "parent"], join_type="left outer", use_threads=False
            )
            step = writes.column("step")
            writes = pa.table(
                {
                    "trace_id": writes.column("trace_id"),
                    "resource": writes.column("resource"),
                    "step": pc.if_else(
                        pc.equal(step, ""), pc.coalesce(writes.column("a_step"), ""), step
                    ),
                    "start": pc.coalesce(writes.column("a_start"), writes.column("start")),
                    "end": pc.coalesce(writes.column("a_end"), writes.column("end")),
                }
            )
        writes = writes.select(["trace_id", "resource", "step", "start", "end"])
        writes = writes.filter(pc.not_equal(writes.column("step"), ""))
        other = writes.rename_columns(["trace_id", "resource", "step2", "start2", "end2"])
        pairs = writes.join(other, ["trace_id", "resource"], use_threads=False)
        return trace_ids(
            pairs,
            pc.and_(
                pc.not_equal(pairs.column("step"), pairs.column("step2")),
                pc.and_(
                    pc.less(pairs.column("start"), pairs.column("end2")),
                    pc.less(pairs.column("start2"), pairs.column("end")),
                ),
            ),
        )

    def detect(self, trace: TraceData) -> list[Finding]:
        return memoised(trace, KIND, self._detect)  # plan_propagation asks too

    def _detect(self, trace: TraceData) -> list[Finding]:
        writes = [
            t
            for t in trace.tools
            if t.resource and t.effect in (A.EFFECT_WRITE, A.EFFECT_IRREVERSIBLE)
        ]
        if len(writes) < 2:  # a conflict needs two writers
            return []
        attempt_of = {a.span_id: a for a in trace.attempts}
        steps_by_version = {(pid, v): trace.steps_of(pid, v) for pid, v in trace.plan_versions()}

        def interval(t: object) -> tuple[int, int, str, str]:
            a = attempt_of.get(getattr(t, "parent_span_id", ""))
            step = getattr(t, "step_id", "") or (a.step_id if a else "")
            if a is not None:
                return a.start_ns, a.end_ns, step, a.span_id
            return getattr(t, "start_ns", 0), getattr(t, "end_ns", 0), step, ""

        seen: set[tuple[str, str, str]] = set()
        children = trace.decomposition()
        findings = []
        writes.sort(key=lambda t: t.start_ns)
        for i, first in enumerate(writes):
            s1, e1, step1, span1 = interval(first)
            for second in writes[i + 1 :]:
                if second.resource != first.resource:
                    continue
                s2, e2, step2, span2 = interval(second)
                if not step1 or not step2 or step1 == step2 or not (s1 < e2 and s2 < e1):
                    continue
                steps = steps_by_version.get((second.plan_id, second.plan_version), [])
                planned = {s.step_id for s in steps}
                if (
                    step1 in planned
                    and step2 in planned
                    and (
                        step1 in ancestors(steps, step2, children)
                        or step2 in ancestors(steps, step1, children)
                    )
                ):
                    continue
                low, high = sorted((step1, step2))
                key = (low, high, first.resource)
                if key in seen:
                    continue
                seen.add(key)
                has_plan = bool(planned)
                executor = attempt_of[span2].executor if span2 in attempt_of else ""
                findings.append(
                    make_finding(
                        self,
                        trace,
                        severity="high" if has_plan else "medium",
                        component=PLANNER if has_plan else executor or second.tool,
                        step_id=step2,
                        evidence=[first.span_id, second.span_id, span1, span2],
                        explanation=(
                            f"Steps '{step1}' and '{step2}' wrote '{first.resource}' at the same "
                            "time and nothing in the plan orders them."
                        ),
                        detail={
                            "other": step1,
                            "resource": first.resource,
                            "tools": [first.tool, second.tool],
                        },
                        identity=f"{step1}\x1f{first.resource}",
                    )
                )
        return findings

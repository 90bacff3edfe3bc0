"""Irreversible action after a failure.

Definition. An ``irreversible`` tool call (``planscope.tool.effect``; or a successful attempt of
a plan step marked ``irreversible``) starts after an attempt of another step failed and before
that step ever succeeded, and the failed step is a transitive ``depends_on`` of the irreversible
step (its precondition did not hold). Without a plan, a failed tool call counts when the same
tool + arguments had not succeeded before the irreversible call. Blame: the executor of the
irreversible step (it acted although its precondition failed); reported at that step.
"""

from __future__ import annotations

from planscope import semconv as A

from .._columns import BatchColumns, trace_ids
from .._model import Attempt, Finding, TraceData, ancestors
from ._base import by_start, make_finding, memoised

KIND = A.FINDING_IRREVERSIBLE_AFTER_FAILURE


class IrreversibleAfterFailure:
    """Detects irreversible actions taken while an upstream failure was unresolved.

    >>> IrreversibleAfterFailure().detect(TraceData("p", "t"))
    []
    """

    kind = KIND
    version = 1

    def screen(self, batch: BatchColumns) -> set[str]:
        """Traces of ``batch`` where a failed attempt or tool call ended no later than an
        irreversible action started (an irreversible tool call, or an attempt of a plan step
        marked irreversible): every failure the rule weighs ended by the action's start."""
        import pyarrow as pa
        import pyarrow.compute as pc

        steps, attempts, tools = batch.plan_steps, batch.attempts, batch.tools
        acts, failures = [], []
        if tools is not None:
            start = tools.column("start_ns")
            irreversible = tools.filter(pc.equal(tools.column("effect"), A.EFFECT_IRREVERSIBLE))
            acts.append(irreversible.select(["trace_id", "start_ns"]))
            failed = pc.or_(
                pc.equal(tools.column("status_code"), "Error"),
                pc.not_equal(tools.column("error_type"), ""),
            )
            end = pc.add(start, pc.cast(tools.column("duration_ns"), pa.int64()))
            failures.append(
                pa.table({"trace_id": tools.column("trace_id"), "end": end}).filter(failed)
            )
        if attempts is not None:
            status = attempts.column("status")
            failures.append(
                attempts.filter(pc.equal(status, A.STATUS_ERROR))
                .select(["trace_id", "end_ns"])
                .rename_columns(["trace_id", "end"])
            )
            if steps is not None:
                marked = steps.filter(pc.not_equal(steps.column("irreversible"), 0))
                acts.append(
                    attempts.select(["trace_id", "step_id", "start_ns"])
                    .join(
                        marked.select(["trace_id", "step_id"]),
                        ["trace_id", "step_id"],
                        join_type="left semi",
                        use_threads=False,
                    )
                    .select(["trace_id", "start_ns"])
                )
        if not acts or not failures:
            return set()
        latest = (
            pa.concat_tables(acts, promote_options="permissive")
            .group_by("trace_id", use_threads=False)
            .aggregate([("start_ns", "max")])
        )
        earliest = (
            pa.concat_tables(failures, promote_options="permissive")
            .group_by("trace_id", use_threads=False)
            .aggregate([("end", "min")])
        )
        both = latest.join(earliest, "trace_id", join_type="inner", use_threads=False)
        return trace_ids(both, pc.less_equal(both.column("end_min"), both.column("start_ns_max")))

    def detect(self, trace: TraceData) -> list[Finding]:
        return memoised(trace, KIND, self._detect)  # plan_propagation asks too

    def _detect(self, trace: TraceData) -> list[Finding]:
        attempt_of = {a.span_id: a for a in trace.attempts}
        actions: list[tuple[int, str, str, Attempt | None, str]] = []  # start, step, span, ...
        for t in trace.tools:
            if t.effect == A.EFFECT_IRREVERSIBLE:
                a = attempt_of.get(t.parent_span_id)
                actions.append(
                    (t.start_ns, t.step_id or (a.step_id if a else ""), t.span_id, a, t.tool)
                )
        irreversible_steps = {s.step_id for s in trace.plan_steps if s.irreversible}
        for a in trace.attempts:
            if a.step_id in irreversible_steps and a.succeeded and not trace.tools_of(a):
                actions.append((a.start_ns, a.step_id, a.span_id, a, ""))
        if not actions:
            return []
        ordered = by_start(trace.attempts)
        findings = []
        seen: set[tuple[str, str]] = set()
        for start, step_id, span_id, attempt, tool in sorted(actions, key=lambda x: x[0]):
            if attempt is not None and not step_id:
                step_id = attempt.step_id
            if not step_id:
                continue
            steps = []
            if attempt is not None and attempt.plan_id:
                steps = trace.steps_of(attempt.plan_id, attempt.plan_version)
            if not steps:
                steps = [s for s in trace.latest_steps().values()]
            upstream = ancestors(steps, step_id, trace.decomposition()) if steps else None
            failed = self._unresolved(ordered, start, step_id, upstream)
            if failed is None and upstream is None:
                failed = self._unresolved_tool(trace, start)
            if failed is None:
                continue
            failing_step, failing_span = failed
            if (step_id, failing_step) in seen:
                continue
            seen.add((step_id, failing_step))
            executor = attempt.executor if attempt is not None and attempt.executor else ""
            if not executor:
                plan_step = trace.latest_steps().get(step_id)
                executor = plan_step.executor if plan_step else ""
            findings.append(
                make_finding(
                    self,
                    trace,
                    severity="critical",
                    component=executor or tool or "executor",
                    step_id=step_id,
                    evidence=[span_id, failing_span] + ([attempt.span_id] if attempt else []),
                    explanation=(
                        f"Step '{step_id}' took an irreversible action"
                        + (f" ({tool})" if tool else "")
                        + f" after step '{failing_step}', which it depends on, had failed and "
                        "not recovered."
                    ),
                    detail={"failing_step": failing_step, "tool": tool},
                    identity=failing_step,
                )
            )
        return findings

    @staticmethod
    def _unresolved(
        ordered: list[Attempt], start: int, step_id: str, upstream: set[str] | None
    ) -> tuple[str, str] | None:
        """The first failed attempt before ``start`` whose step had not succeeded by then."""
        if upstream is None:
            return None
        ok_before = {a.step_id for a in ordered if a.succeeded and a.end_ns <= start}
        for a in ordered:
            if a.start_ns >= start:
                break
            if (
                a.failed
                and a.end_ns <= start
                and a.step_id != step_id
                and a.step_id in upstream
                and a.step_id not in ok_before
            ):
                return a.step_id, a.span_id
        return None

    @staticmethod
    def _unresolved_tool(trace: TraceData, start: int) -> tuple[str, str] | None:
        done = sorted((t for t in trace.tools if t.end_ns <= start), key=lambda t: t.start_ns)
        ok = {(t.tool, t.args_key) for t in done if not t.failed}
        for t in done:
            if t.failed and (t.tool, t.args_key) not in ok:
                return t.step_id or t.tool, t.span_id
        return None

"""Context-starved executor: a plan step's declared needs were not handed to its executor.

Definition. For every executed attempt of a plan step, the step's ``requires`` (plan JSON) is
compared with ``planscope.step.context.keys`` (what the executor actually got). A required key
that is missing is a starvation, *unless* it is produced by a plan step that had not succeeded
when the attempt started (then the gap is an upstream failure, or an ordering problem that
``implicit_dependency`` reports, not the hand-over). One finding per starved hand-over
(executor + missing keys): copies of the step made by later decompositions or replans that
repeat the same starvation are not reported again. The planner (which decides what each
executor gets) is blamed.

Only attempts that recorded their context are judged: "recorded and empty" (the SDK writes
``planscope.step.context.keys = []`` for ``record_context({})``) is an executor given nothing
and is judged like any other hand-over, while an attempt without the attribute (a runtime or a
foreign trace that does not record context) is out of scope for this detector — nothing is
reported about it, rather than flagging every step of agents that simply do not say.

Severity is ``high`` when the starved step failed (or self-assessed failure) or the run failed,
``medium`` otherwise. The detail carries the failure rate of starved vs fully-fed attempts in
the trace (failures concentrated on narrow context).
"""

from __future__ import annotations

from planscope import semconv as A

from .._columns import BatchColumns, flatten, unmatched
from .._model import PLANNER, Finding, TraceData
from ._base import by_start, fmt_keys, make_finding, memoised

KIND = A.FINDING_CONTEXT_STARVED


def starved_steps(trace: TraceData) -> set[str]:
    """Step ids of the trace with a starved attempt (for other detectors' explanations)."""
    return {f.step_id for f in ContextStarved().detect(trace)} | _starved_copies(trace)


def _starved_copies(trace: TraceData) -> set[str]:
    """Every step id whose attempts lack a required key (including repeated hand-overs)."""
    latest = trace.latest_steps()
    return {
        a.step_id
        for a in trace.attempts
        if a.status != A.STATUS_SKIPPED
        and a.context_recorded
        and a.step_id in latest
        and set(latest[a.step_id].requires) - set(a.context_keys)
    }


class ContextStarved:
    """Detects executors that did not get the context keys their plan step requires.

    >>> ContextStarved().detect(TraceData("p", "t"))
    []
    """

    kind = KIND
    version = 2

    def screen(self, batch: BatchColumns) -> set[str]:
        """Traces of ``batch`` with an attempt (not skipped, not inferred, its context recorded
        or its trace one with an explicitly empty context) that lacks a key some plan step of
        its step id requires."""
        import pyarrow as pa
        import pyarrow.compute as pc

        steps, attempts = batch.plan_steps, batch.attempts
        if steps is None or attempts is None:
            return set()
        recorded = pc.or_(
            pc.greater(pc.list_value_length(attempts.column("context_keys")), 0),
            pc.not_equal(attempts.column("context_tokens"), 0),
        )
        if batch.context_marked:
            marked = pa.array(sorted(batch.context_marked), pa.string())
            recorded = pc.or_(recorded, pc.is_in(attempts.column("trace_id"), value_set=marked))
        judged = attempts.filter(
            pc.and_(
                recorded,
                pc.and_(
                    pc.not_equal(attempts.column("status"), A.STATUS_SKIPPED),
                    pc.equal(attempts.column("inferred"), 0),
                ),
            )
        )
        judged = judged.append_column("row", pa.array(range(judged.num_rows), pa.int64()))
        required = flatten(steps, ("step_id",), "requires", "key")
        pairs = judged.select(["trace_id", "step_id", "row"]).join(
            required, ["trace_id", "step_id"], join_type="inner", use_threads=False
        )
        given = flatten(judged, ("row",), "context_keys", "key")
        return unmatched(pairs, ["row", "key"], given, ["row", "key"])

    def detect(self, trace: TraceData) -> list[Finding]:
        return memoised(trace, KIND, self._detect)  # plan_propagation asks too

    def _detect(self, trace: TraceData) -> list[Finding]:
        if not any(a.context_recorded for a in trace.attempts):
            return []
        steps = {(s.plan_id, s.plan_version, s.step_id): s for s in trace.plan_steps}
        latest = trace.latest_steps()
        # When each step first succeeded: a key whose producer had not succeeded by the time of
        # the hand-over could not be given (an upstream failure, or an ordering problem that
        # implicit_dependency reports), so it is no starvation.
        done_at: dict[str, int] = {}
        for a in trace.attempts:
            if a.succeeded:
                done_at[a.step_id] = min(done_at.get(a.step_id, a.end_ns), a.end_ns)
        producers: dict[tuple[str, int], dict[str, set[str]]] = {}
        for s in trace.plan_steps:
            by_key = producers.setdefault((s.plan_id, s.plan_version), {})
            for key in s.produces:
                by_key.setdefault(key, set()).add(s.step_id)
        starved: dict[str, tuple[object, list[str]]] = {}
        handovers: set[tuple[str, tuple[str, ...]]] = set()
        # Executor-level steps the span model inferred declare no context: not judged.
        attempts = [
            a
            for a in by_start(trace.attempts)
            if a.status != A.STATUS_SKIPPED and a.context_recorded and not a.inferred
        ]
        n_starved = failed_starved = n_fed = failed_fed = 0
        for a in attempts:
            step = steps.get((a.plan_id, a.plan_version, a.step_id)) or latest.get(a.step_id)
            if step is None or not step.requires:
                continue
            made_by = producers.get((step.plan_id, step.plan_version), {})
            missing = [
                k
                for k in step.requires
                if k not in a.context_keys
                and not (
                    k in made_by
                    and not any(
                        done_at.get(p, 1 << 62) <= a.start_ns for p in made_by[k] - {a.step_id}
                    )
                )
            ]
            bad = not a.succeeded
            if missing:
                n_starved += 1
                failed_starved += bad
                handover = (a.executor, tuple(sorted(missing)))
                if a.step_id in starved or handover not in handovers:
                    starved.setdefault(a.step_id, (a, missing))
                handovers.add(handover)
            else:
                n_fed += 1
                failed_fed += bad
        run = trace.run
        run_failed = run is not None and run.outcome == A.OUTCOME_FAILURE
        findings = []
        for step_id, (first, missing) in starved.items():
            assert hasattr(first, "span_id")
            step_attempts = [a for a in attempts if a.step_id == step_id]
            step_failed = any(not a.succeeded for a in step_attempts)
            executor = getattr(first, "executor", "") or (
                latest[step_id].executor if step_id in latest else ""
            )
            given = getattr(first, "context_keys", ())
            findings.append(
                make_finding(
                    self,
                    trace,
                    severity="high" if step_failed or run_failed else "medium",
                    component=PLANNER,
                    step_id=step_id,
                    evidence=[a.span_id for a in step_attempts],
                    explanation=(
                        f"Plan step '{step_id}' requires {fmt_keys(missing)} but executor "
                        f"'{executor or '?'}' was given only [{fmt_keys(given)}]."
                    ),
                    detail={
                        "missing_keys": sorted(missing),
                        "given_keys": sorted(given),
                        "executor": executor,
                        "step_failed": step_failed,
                        "failure_rate_starved": round(failed_starved / n_starved, 3)
                        if n_starved
                        else None,
                        "failure_rate_fed": round(failed_fed / n_fed, 3) if n_fed else None,
                    },
                )
            )
        return findings

"""Data quality: traces that are malformed or partial, reported instead of crashing.

Issues (``detail.issue``), all blamed on ``instrumentation``:

* ``bad_plan_json``: a plan span whose ``planscope.plan.json`` is not valid JSON, or declares
  steps but yields none.
* ``dangling_dependency``: a plan step ``depends_on`` an id that is not in its plan version.
* ``missing_plan``: step attempts reference a plan id/version for which no plan span arrived.
* ``missing_run``: planscope step/plan spans without a run (``invoke_agent``) span.
* ``orphan_spans``: spans whose parent span is not in the trace (lost or not yet exported),
  checked when the trace's root span is missing or when span skeletons were loaded.
* ``unclassified_spans``: spans that carry no planscope kind and no GenAI operation (counted,
  low severity; typical of third-party instrumentation); the runtime machinery spans the
  conventions define (``semconv.MACHINERY_SPANS``: scheduler queue/switch, hand-offs) are known,
  and so are a tool or LLM call's own spans (a tool server's, an HTTP client's, under the call)
  and a span that encloses typed spans (an application's span grouping its calls or steps).
"""

from __future__ import annotations

from planscope import semconv as A

from .._columns import BatchColumns, flatten, stacked, trace_ids, traces_of, unmatched
from .._model import INSTRUMENTATION, Finding, TraceData
from ._base import make_finding

KIND = A.FINDING_DATA_QUALITY


class DataQuality:
    """Reports malformed or partial traces.

    >>> DataQuality().detect(TraceData("p", "t"))
    []
    """

    kind = KIND
    version = 2

    def detect(self, trace: TraceData) -> list[Finding]:
        out: list[Finding] = []

        def issue(
            issue: str, severity: str, evidence: list[str], text: str, **detail: object
        ) -> None:
            out.append(
                make_finding(
                    self,
                    trace,
                    severity=severity,
                    component=INSTRUMENTATION,
                    step_id="",
                    evidence=evidence,
                    explanation=text,
                    detail={"issue": issue, **detail},
                    identity=issue,
                )
            )

        steps_by_span: dict[str, int] = {}
        for s in trace.plan_steps:
            steps_by_span[s.plan_span_id] = steps_by_span.get(s.plan_span_id, 0) + 1
        # Structure the span model inferred from another convention is not planscope
        # instrumentation: it is not judged here, and a trace with only such structure (a
        # framework's trace) is not expected to classify every span.
        declared_attempts = [a for a in trace.attempts if not a.inferred]
        declared_plans = [p for p in trace.plans if not p.inferred]
        shaped = bool(declared_attempts or declared_plans) or any(
            not r.inferred for r in trace.runs
        )
        bad = [
            p
            for p in trace.plans
            if (not p.inferred and not p.json_valid)
            or (p.step_count > 0 and not steps_by_span.get(p.span_id))
        ]
        if bad:
            issue(
                "bad_plan_json",
                "medium",
                [p.span_id for p in bad],
                f"{len(bad)} plan span(s) carry plan JSON that is invalid or has no readable "
                "steps.",
                versions=[p.version for p in bad],
            )
        dangling = []
        for pid, v in trace.plan_versions():
            steps = trace.steps_of(pid, v)
            ids = {s.step_id for s in steps}
            dangling += [
                (s.step_id, d, s.plan_span_id) for s in steps for d in s.depends_on if d not in ids
            ]
        if dangling:
            issue(
                "dangling_dependency",
                "low",
                [d[2] for d in dangling],
                f"Plan steps depend on ids missing from their plan: "
                f"{', '.join(f'{a}→{b}' for a, b, _ in dangling[:5])}.",
            )
        known = {(p.plan_id, p.version) for p in trace.plans}
        referenced = {(a.plan_id, a.plan_version) for a in trace.attempts if a.plan_id}
        missing = sorted(referenced - known)
        if missing:
            spans = [a.span_id for a in trace.attempts if (a.plan_id, a.plan_version) in missing]
            issue(
                "missing_plan",
                "medium",
                spans,
                f"Steps ran under plan version(s) {', '.join(f'{p}@{v}' for p, v in missing)} "
                "but no plan span for them is in the trace.",
            )
        if not trace.runs and (declared_attempts or declared_plans):
            issue(
                "missing_run",
                "low",
                [a.span_id for a in declared_attempts[:5]],
                "The trace has plan or step spans but no run (invoke_agent) span.",
            )
        orphans = self._orphans(trace)
        if orphans:
            issue(
                "orphan_spans",
                "low",
                orphans,
                f"{len(orphans)} span(s) have a parent that is not in the trace.",
            )
        if trace.raw is not None and shaped:
            typed = trace.typed_span_ids()
            accounted = self._accounted(trace, typed)
            other = [
                r
                for r in trace.raw
                if r.span_id not in typed
                and r.span_id not in accounted
                and r.name not in A.MACHINERY_SPANS  # a scheduler's or a host's own spans
            ]
            if other:
                issue(
                    "unclassified_spans",
                    "low",
                    [r.span_id for r in other],
                    f"{len(other)} span(s) carry neither a planscope kind nor a GenAI operation.",
                    names=sorted({r.name for r in other})[:10],
                )
        return out

    def screen(self, batch: BatchColumns) -> set[str]:
        """Traces of ``batch`` that may have an issue, from its columns: a plan that is invalid
        or has no step rows, a dependency outside its plan version, an attempt under an unknown
        plan version, plan or step rows without a run; in a trace without span skeletons a
        typed span or an LLM call whose parent is no typed span of the trace; in one with
        skeletons (the rule then reads only those for orphans) a span whose parent is none of
        the trace's spans, or a span that no typed row accounts for and that is no machinery
        span (an unclassified span)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        runs, plans, steps, attempts = batch.runs, batch.plans, batch.plan_steps, batch.attempts
        out = (traces_of(attempts) | traces_of(plans)) - traces_of(runs)
        if plans is not None:
            invalid = pc.and_(
                pc.equal(plans.column("inferred"), 0), pc.equal(plans.column("json_valid"), 0)
            )
            out |= trace_ids(plans, invalid)
            with_steps = plans.filter(pc.greater(plans.column("step_count"), 0))
            out |= unmatched(with_steps, ["span_id"], steps, ["plan_span_id"])
        if steps is not None:
            on = ["plan_id", "plan_version", "step_id"]
            deps = flatten(steps, ("plan_id", "plan_version"), "depends_on", "step_id")
            out |= unmatched(deps, on, steps, on)
        if attempts is not None:
            named = attempts.filter(pc.not_equal(attempts.column("plan_id"), ""))
            out |= unmatched(named, ["plan_id", "plan_version"], plans, ["plan_id", "version"])
        typed = [runs, plans, attempts, batch.tools, batch.llm]
        llm_spans = None if batch.llm is None else flatten(batch.llm, (), "span_ids", "span_id")
        spans = stacked([(t, {"span_id": "span_id"}) for t in typed[:4]] + [(llm_spans, {})])
        if spans.num_columns == 1:  # no typed rows at all
            spans = spans.append_column("span_id", pa.array([], pa.string()))
        raw = batch.raw
        if raw is not None:
            parented = raw.filter(pc.not_equal(raw.column("parent_span_id"), ""))
            out |= unmatched(parented, ["parent_span_id"], raw, ["span_id"])
            machinery = pa.array(A.MACHINERY_SPANS, pa.string())
            other = raw.filter(pc.invert(pc.is_in(raw.column("name"), value_set=machinery)))
            out |= unmatched(other, ["span_id"], spans, ["span_id"])
        if all(t is None for t in typed):
            return out
        parents = stacked([(t, {"parent_span_id": "parent"}) for t in typed])
        parents = parents.filter(pc.not_equal(parents.column("parent"), ""))
        if batch.skeletons:
            skeletal = pa.array(sorted(batch.skeletons), pa.string())
            parents = parents.filter(
                pc.invert(pc.is_in(parents.column("trace_id"), value_set=skeletal))
            )
        return out | unmatched(parents, ["parent"], spans, ["span_id"])

    @staticmethod
    def _accounted(trace: TraceData, typed: frozenset[str]) -> set[str]:
        """The untyped raw spans the trace's structure accounts for: those inside a tool or LLM
        call (nearest typed ancestor), which are the call's own work (a tool server's handler,
        an HTTP client's request), and those that enclose typed spans (an application's
        grouping span, which the span model walks through)."""
        parent = {r.span_id: r.parent_span_id for r in trace.raw or ()}
        calls = {t.span_id for t in trace.tools} | trace.llm_parents.keys()
        out: set[str] = set()
        for span_id in parent.keys() - typed:
            up, seen = parent[span_id], {span_id}
            while up in parent and up not in typed and up not in seen:
                seen.add(up)
                up = parent[up]
            if up in calls:
                out.add(span_id)
        for span_id in typed:
            up = parent.get(span_id, "")
            while up in parent and up not in typed and up not in out:
                out.add(up)
                up = parent[up]
        return out

    @staticmethod
    def _orphans(trace: TraceData) -> list[str]:
        if trace.raw is not None:
            raw = {r.span_id for r in trace.raw} | {""}
            return [r.span_id for r in trace.raw if r.parent_span_id not in raw]
        # Every span is typed (the loader checked the counts): the typed ids, with those the
        # loader folded into others, are the whole trace.
        ids = trace.typed_span_ids() | trace.folded
        parents = (
            [(r.span_id, r.parent_span_id) for r in trace.runs]
            + [(p.span_id, p.parent_span_id) for p in trace.plans]
            + [(a.span_id, a.parent_span_id) for a in trace.attempts]
            + [(t.span_id, t.parent_span_id) for t in trace.tools]
        )
        orphans = [s for s, parent in parents if parent and parent not in ids]
        orphans += [p for p in trace.llm_by_parent if p and p not in ids]
        return orphans

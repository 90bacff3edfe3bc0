"""Implicit dependency: a step needs what another step produces without depending on it.

Definition. In a plan version, step S requires key k, some other step P produces k, and no
producer of k is among S's transitive ``depends_on``. The plan then relies on execution order
by luck (a parallel or reordered executor reads a missing or stale value). Depending on a
step that was later decomposed (ADaPT, scoped replans: a plan version whose ``scope`` is that
step) counts as depending on every sub-step its decomposition added. Only executed steps
are reported (when the trace has attempts), once per (reader, producer, key) over all plan
versions. Severity ``high`` when S actually started before P's first success ended (the race
happened), ``medium`` when the order held by chance.
"""

from __future__ import annotations

from typing import Any

from planscope import semconv as A

from .._columns import BatchColumns, flatten, repeated, unmatched
from .._model import PLANNER, Ancestry, Finding, TraceData
from ._base import by_start, make_finding
from .unbounded_replan import version_signature

KIND = A.FINDING_IMPLICIT_DEPENDENCY


def _ancestors(edges: Any, of: Any) -> Any:
    """The transitive ``depends_on`` of the steps ``of`` names (``trace_id``, ``plan_id``,
    ``plan_version``, ``step_id``), from ``edges`` (those and ``producer``: the step depends on
    it): (step, ancestor) pairs as ``step_id``, ``producer``, by joins until no new pair
    appears (as many rounds as the longest chain of dependencies)."""
    import pyarrow as pa

    version = ["trace_id", "plan_id", "plan_version"]
    keys = [*version, "step_id", "producer"]
    edges = _distinct(edges, keys)
    via = edges.rename_columns([*version, "via", "producer"])
    closure = frontier = edges.join(
        _distinct(of, keys[:-1]), keys[:-1], join_type="left semi", use_threads=False
    )
    while frontier.num_rows:
        longer = frontier.rename_columns([*version, "step_id", "via"]).join(
            via, [*version, "via"], join_type="inner", use_threads=False
        )
        frontier = _distinct(longer, keys).join(
            closure, keys, join_type="left anti", use_threads=False
        )
        closure = pa.concat_tables([closure, frontier])
    return closure


def _distinct(table: Any, keys: list[str]) -> Any:
    return table.group_by(keys, use_threads=False).aggregate([]).select(keys)


class ImplicitDependency:
    """Detects plan steps that read a non-ancestor's output.

    >>> ImplicitDependency().detect(TraceData("p", "t"))
    []
    """

    kind = KIND
    version = 1

    def screen(self, batch: BatchColumns) -> set[str]:
        """Traces of ``batch`` where a step that ran (or any step, in a trace without attempts)
        requires a key that another step of its plan version produces and none of those
        producers is among its transitive ``depends_on`` (a subset of its ancestry, which a
        decomposition only widens), or a plan version has two steps of one id (its ancestry
        then mixes theirs)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        steps = batch.plan_steps
        if steps is None:
            return set()
        version = ["plan_id", "plan_version"]
        out = repeated(steps, [*version, "step_id"], 2)
        steps = steps.append_column("row", pa.array(range(steps.num_rows), pa.int64()))
        required = flatten(steps, (*version, "step_id", "row"), "requires", "key")
        produced = flatten(steps, (*version, "step_id"), "produces", "key")
        produced = produced.rename_columns(["trace_id", *version, "producer", "key"])
        pairs = required.join(
            produced, ["trace_id", *version, "key"], join_type="inner", use_threads=False
        )
        pairs = pairs.filter(pc.not_equal(pairs.column("step_id"), pairs.column("producer")))
        if pairs.num_rows == 0:
            return out
        deps = flatten(steps, (*version, "step_id"), "depends_on", "producer")
        edge = ["trace_id", *version, "step_id", "producer"]
        # (row, key) pairs of which some producer is a direct dependency are covered; the
        # ancestry (joins to a fixpoint) is walked only for the steps of the others
        direct = pairs.join(deps, edge, join_type="left semi", use_threads=False)
        pairs = pairs.join(
            direct.select(["trace_id", "row", "key"]),
            ["trace_id", "row", "key"],
            join_type="left anti",
            use_threads=False,
        )
        if pairs.num_rows == 0:
            return out
        open_traces = pc.unique(pairs.column("trace_id"))
        attempts = batch.attempts
        if attempts is not None:  # only steps that ran are reported
            ran = attempts.select(["trace_id", "step_id"])
            ran = ran.filter(pc.is_in(ran.column("trace_id"), value_set=open_traces))
            pairs = pa.concat_tables(
                [
                    pairs.join(
                        ran, ["trace_id", "step_id"], join_type="left semi", use_threads=False
                    ),
                    pairs.join(
                        ran.select(["trace_id"]),
                        "trace_id",
                        join_type="left anti",
                        use_threads=False,
                    ),
                ]
            )
        if pairs.num_rows == 0:
            return out
        deps = deps.filter(pc.is_in(deps.column("trace_id"), value_set=open_traces))
        reached = pairs.join(
            _ancestors(deps, pairs), edge, join_type="left semi", use_threads=False
        )
        return out | unmatched(pairs, ["row", "key"], reached, ["row", "key"])

    def detect(self, trace: TraceData) -> list[Finding]:
        executed = {a.step_id for a in trace.attempts}
        first_start: dict[str, int] = {}
        first_ok_end: dict[str, int] = {}

        def raced(step_id: str, producer: str) -> bool:
            """The step started before its producer's first success ended (worked out at the
            first finding: most traces have none)."""
            if not first_start:
                for a in by_start(trace.attempts):
                    first_start.setdefault(a.step_id, a.start_ns)
                    if a.succeeded:
                        first_ok_end.setdefault(a.step_id, a.end_ns)
            return first_start.get(step_id, 0) < first_ok_end.get(producer, 0)

        seen: set[tuple[str, str, str]] = set()
        children = trace.decomposition()
        findings = []
        checked: set[tuple[object, ...]] = set()
        versions = trace.plan_versions()
        for plan_id, version in versions:
            steps = trace.steps_of(plan_id, version)
            if len(versions) > 1:  # most traces have one version: no shape to compare
                shape = version_signature(trace, plan_id, version)
                if shape in checked:  # an unchanged replan cannot add new implicit edges
                    continue
                checked.add(shape)
            produced_by: dict[str, list[str]] = {}  # key → producing step ids, in plan order
            for p in steps:
                for key in dict.fromkeys(p.produces):
                    produced_by.setdefault(key, []).append(p.step_id)
            ancestry: Ancestry | None = None
            for s in steps:
                if trace.attempts and s.step_id not in executed:
                    continue
                before: set[str] | None = None
                for key in s.requires:
                    producers = [p for p in produced_by.get(key, ()) if p != s.step_id]
                    if not producers:
                        continue
                    if before is None:
                        ancestry = ancestry or Ancestry(steps, children)
                        before = ancestry.of(s.step_id)
                    if any(p in before for p in producers):
                        continue
                    producer = producers[0]
                    if (s.step_id, producer, key) in seen:
                        continue
                    seen.add((s.step_id, producer, key))
                    early = raced(s.step_id, producer)
                    evidence = [
                        a.span_id for a in trace.attempts if a.step_id in (s.step_id, producer)
                    ]
                    plan_span = next((p.plan_span_id for p in steps), "")
                    findings.append(
                        make_finding(
                            self,
                            trace,
                            severity="high" if early else "medium",
                            component=PLANNER,
                            step_id=s.step_id,
                            evidence=[plan_span, *evidence],
                            explanation=(
                                f"Step '{s.step_id}' requires '{key}', which step '{producer}' "
                                f"produces, but does not depend on it (plan version {version})."
                            ),
                            detail={
                                "producer": producer,
                                "key": key,
                                "raced": early,
                                "plan_version": version,
                            },
                            identity=f"{producer}\x1f{key}",
                        )
                    )
        return findings

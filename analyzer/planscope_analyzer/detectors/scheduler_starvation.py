"""Starvation under a central scheduler.

Definition. Among the ``scheduler.queue`` spans of one scheduler (``planscope.scheduler.id``)
in a trace (a span starts when a request arrives and ends when it gets a slot), a requester —
a plan step's executor or the planner — is starved when (a) requests that arrived later than
one of its own got a slot before it at least ``MIN_OVERTAKES`` times, and (b) either its total
wait is at least ``FACTOR`` times the median total wait of the other requesters that waited at
all, or the scheduler passed over nobody else. FIFO and round-robin never serve a later
arrival first; a priority rule can, and when it keeps doing so to one requester that requester
waits longer than its peers. Overtakes are the
scheduler's own count (``planscope.scheduler.overtaken``, decisions, not clock readings) where
it records one; otherwise they are read from span timestamps (arrivals more than
``TOLERANCE_MS`` later, to ignore arrival races), and (b) then needs the wait ratio: the
timestamps of a fair scheduler on a loaded machine show overtakes too. The wait ratio alone
is wall-clock time, which CPU contention squeezes (every thread's wake-up is late, so every
wait grows, not only the starved one's, and the first arrivals of a wave wait for the others);
"only requester passed over" is not (see docs/analyzers.md). Wasted time: the requester's
waits in which it was overtaken. Blame: the scheduler; reported at the starved requester.
Runs that share a kernel are separate traces: this sees only the peers in the same trace (the
dashboard's Scheduler page compares runs).
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from planscope import semconv as A

from .._columns import BatchColumns, trace_ids
from .._model import Finding, SchedulerSpan, TraceData
from ._base import make_finding

KIND = "scheduler_starvation"
FACTOR = 1.5
MIN_OVERTAKES = 2
TOLERANCE_MS = 1.0


class SchedulerStarvation:
    """Detects a requester that later arrivals keep overtaking and that waits longer.

    >>> SchedulerStarvation().detect(TraceData("p", "t"))
    []
    """

    kind = KIND
    version = 2

    def screen(self, batch: BatchColumns) -> set[str]:
        """Traces of ``batch`` with a scheduler whose queue spans (those naming a requester)
        name two requesters (a finding needs a peer) and either lack the scheduler's own
        count somewhere (overtakes are then read from timestamps) or count at least
        :data:`MIN_OVERTAKES` for one requester (the rule's count, summed alike)."""
        import pyarrow.compute as pc

        spans = batch.scheduling
        if spans is None:
            return set()
        queued = spans.filter(
            pc.and_(
                pc.equal(spans.column("name"), A.SPAN_SCHEDULER_QUEUE),
                pc.not_equal(spans.column("requester"), ""),
            )
        )
        if queued.num_rows == 0:
            return set()
        uncounted = pc.CountOptions(mode="only_null")
        per_requester = queued.group_by(
            ["trace_id", "scheduler_id", "requester"], use_threads=False
        ).aggregate([("overtaken", "sum"), ("overtaken", "count", uncounted)])
        per_scheduler = per_requester.group_by(
            ["trace_id", "scheduler_id"], use_threads=False
        ).aggregate(
            [
                ("requester", "count"),
                ("overtaken_sum", "max"),
                ("overtaken_count", "sum"),
            ]
        )
        return trace_ids(
            per_scheduler,
            pc.and_(
                pc.greater_equal(per_scheduler.column("requester_count"), 2),
                pc.or_(
                    pc.greater(per_scheduler.column("overtaken_count_sum"), 0),
                    pc.fill_null(
                        pc.greater_equal(per_scheduler.column("overtaken_sum_max"), MIN_OVERTAKES),
                        False,
                    ),
                ),
            ),
        )

    def detect(self, trace: TraceData) -> list[Finding]:
        by_scheduler: dict[str, list[SchedulerSpan]] = defaultdict(list)
        # In time order (then id), whatever order the store gave: the waits are summed as
        # floats and named as evidence in this order.
        for s in sorted(trace.scheduling, key=lambda s: (s.start_ns, s.span_id)):
            if s.name == A.SPAN_SCHEDULER_QUEUE and s.requester:
                by_scheduler[s.scheduler_id].append(s)
        findings = []
        for scheduler, spans in sorted(by_scheduler.items()):
            findings.extend(self._check(trace, scheduler, spans))
        return findings

    def _check(self, trace: TraceData, scheduler: str, spans: list[SchedulerSpan]) -> list[Finding]:
        tolerance = int(TOLERANCE_MS * 1e6)
        waits: dict[str, float] = defaultdict(float)
        overtakes: dict[str, int] = defaultdict(int)
        passed_over_ns: dict[str, int] = defaultdict(int)
        recorded = all(s.overtaken is not None for s in spans)
        for s in spans:
            waits[s.requester] += s.duration_ns / 1e6
            granted = s.start_ns + s.duration_ns
            n = (
                s.overtaken or 0
                if recorded
                else sum(
                    1
                    for o in spans
                    if o.requester != s.requester
                    and o.start_ns > s.start_ns + tolerance
                    and o.start_ns + o.duration_ns < granted
                )
            )
            overtakes[s.requester] += n
            passed_over_ns[s.requester] += s.duration_ns if n else 0
        findings = []
        for requester, total in sorted(waits.items()):
            peers = [w for who, w in waits.items() if who != requester and w > TOLERANCE_MS]
            if overtakes[requester] < MIN_OVERTAKES or not peers:
                continue
            median = statistics.median(peers)
            alone = recorded and not any(n for who, n in overtakes.items() if who != requester)
            if total < FACTOR * median and not alone:
                continue
            mine = [s for s in spans if s.requester == requester]
            findings.append(
                make_finding(
                    self,
                    trace,
                    severity="high",
                    component="scheduler",
                    step_id=requester,
                    evidence=[s.span_id for s in mine],
                    explanation=(
                        f"'{requester}' waited {total:.1f} ms for a model slot, "
                        f"{total / median:.1f}x the median of its peers ({median:.1f} ms), "
                        f"while {overtakes[requester]} later requests were served first."
                    ),
                    wasted_ns=passed_over_ns[requester],
                    detail={
                        "scheduler": scheduler,
                        "policy": mine[0].policy,
                        "wait_ms": round(total, 3),
                        "peer_median_ms": round(median, 3),
                        "overtaken": overtakes[requester],
                    },
                    identity=f"{scheduler}\x1f{requester}",
                )
            )
        return findings

"""Context lost across a context switch.

Definition. A central scheduler preempted a model request and saved its context
(``scheduler.context_switch`` with ``planscope.scheduler.switch.op`` = ``save``); when the
request was resumed, the restored context (``op`` = ``restore``, same
``planscope.scheduler.request_id``) differs from what was saved: another hash, or fewer tokens.
The saved side comes from the matching save span, else from the restore span's own record of
what was saved (``planscope.scheduler.context.saved_hash`` / ``saved_tokens``). The model then
continued from an incomplete context. Blame: the scheduler; reported at the requester's step.
"""

from __future__ import annotations

from planscope import semconv as A

from .._columns import BatchColumns, trace_ids
from .._model import Finding, SchedulerSpan, TraceData
from ._base import make_finding, memoised

KIND = "context_lost"


class ContextLost:
    """Detects restores that do not give back what the scheduler saved.

    >>> ContextLost().detect(TraceData("p", "t"))
    []
    """

    kind = KIND
    version = 1

    def screen(self, batch: BatchColumns) -> set[str]:
        """Traces of ``batch`` with a restore that differs from what was saved, by its own
        record (a saved hash, another hash or more tokens) or from the last save of its
        request that started no later (a hash, another one or more tokens): the rule's saved
        side is one of the two (saves that started together all count)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        spans = batch.scheduling
        if spans is None:
            return set()
        switches = spans.filter(pc.equal(spans.column("name"), A.SPAN_SCHEDULER_CONTEXT_SWITCH))
        op = switches.column("switch_op")
        restores = switches.filter(pc.equal(op, A.SWITCH_RESTORE))
        if restores.num_rows == 0:
            return set()
        own = pc.and_(
            pc.not_equal(restores.column("saved_hash"), ""),
            pc.or_(
                pc.not_equal(restores.column("context_hash"), restores.column("saved_hash")),
                pc.less(restores.column("context_tokens"), restores.column("saved_tokens")),
            ),
        )
        saves = switches.filter(pc.equal(op, A.SWITCH_SAVE))
        saves = pa.table(
            {
                "trace_id": saves.column("trace_id"),
                "request_id": saves.column("request_id"),
                "save_start": saves.column("start_ns"),
                "save_hash": saves.column("context_hash"),
                "save_tokens": saves.column("context_tokens"),
            }
        )
        restored = restores.select(
            ["trace_id", "span_id", "request_id", "start_ns", "context_hash", "context_tokens"]
        )
        pairs = restored.join(
            saves, ["trace_id", "request_id"], join_type="inner", use_threads=False
        )
        pairs = pairs.filter(pc.less_equal(pairs.column("save_start"), pairs.column("start_ns")))
        last = pairs.group_by(["trace_id", "span_id"], use_threads=False).aggregate(
            [("save_start", "max")]
        )
        pairs = pairs.join(
            last.rename_columns(["trace_id", "span_id", "save_start"]),
            ["trace_id", "span_id", "save_start"],
            join_type="left semi",
            use_threads=False,
        )
        differs = pc.and_(
            pc.not_equal(pairs.column("save_hash"), ""),
            pc.or_(
                pc.not_equal(pairs.column("save_hash"), pairs.column("context_hash")),
                pc.greater(pairs.column("save_tokens"), pairs.column("context_tokens")),
            ),
        )
        return trace_ids(restores, own) | trace_ids(pairs, differs)

    def detect(self, trace: TraceData) -> list[Finding]:
        return memoised(trace, KIND, self._detect)  # plan_propagation asks too

    def _detect(self, trace: TraceData) -> list[Finding]:
        switches = sorted(
            (s for s in trace.scheduling if s.name == A.SPAN_SCHEDULER_CONTEXT_SWITCH),
            key=lambda s: s.start_ns,
        )
        last_save: dict[str, SchedulerSpan] = {}
        findings: dict[str, Finding] = {}
        for s in switches:
            if s.switch_op == A.SWITCH_SAVE:
                last_save[s.request_id] = s
                continue
            if s.switch_op != A.SWITCH_RESTORE:
                continue
            save = last_save.get(s.request_id)
            saved_hash = save.context_hash if save else s.saved_hash
            saved_tokens = save.context_tokens if save else s.saved_tokens
            if not saved_hash or (
                s.context_hash == saved_hash and s.context_tokens >= saved_tokens
            ):
                continue
            if s.requester in findings:  # one finding per requester; the first loss explains it
                continue
            lost = max(0, saved_tokens - s.context_tokens)
            findings[s.requester] = make_finding(
                self,
                trace,
                severity="high",
                component="scheduler",
                step_id=s.requester,
                evidence=[s.span_id, save.span_id if save else "", s.parent_span_id],
                explanation=(
                    f"The scheduler resumed '{s.requester}' with a context that differs from the "
                    f"one it saved ({s.context_tokens} of {saved_tokens} tokens restored)."
                ),
                detail={
                    "scheduler": s.scheduler_id,
                    "request_id": s.request_id,
                    "saved_tokens": saved_tokens,
                    "restored_tokens": s.context_tokens,
                    "lost_tokens": lost,
                },
                identity=s.requester,
            )
        return list(findings.values())

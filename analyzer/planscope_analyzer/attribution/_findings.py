"""Map a trace's analyzer findings (read with :class:`planscope.client.CollectorClient`) onto
history indices."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from planscope import api
from planscope import semconv as A

from ..importers import _conventions as C
from ..importers._conversation import Conversation
from ._method import FindingRef, owner_of


def map_findings(
    findings: Sequence[api.Finding], trace: dict[str, Any] | None, conv: Conversation
) -> list[FindingRef]:
    """Findings with their step ids / evidence spans mapped to history indices, each credited
    to the speaker who owns that step in ``conv`` (never to the finding's own ``component``
    label, e.g. ``planner``, which need not be a speaker of the log). Findings that map to no
    turn are dropped.

    >>> from planscope_analyzer.importers import parse_whowhen
    >>> conv = parse_whowhen(b'{"history": [{"name": "A", "content": "x"},'
    ...     b'{"name": "W", "content": "y"}]}', "x.json")
    >>> [(f.component, f.step) for f in map_findings([api.Finding(kind="runaway_loop",
    ...     severity="high", trace_id="t", component="planner", step_id="s1", explanation="x")],
    ...     {"spans": [{"span_id": "a", "attributes": {
    ...         "planscope.step.id": "s1", "planscope.import.record": "1"}}]}, conv)]
    [('W', 1)]
    """
    span_record: dict[str, int] = {}
    step_record: dict[str, int] = {}
    for s in (trace or {}).get("spans", []):
        attrs = s.get("attributes") or {}
        rec = attrs.get(C.IMPORT_RECORD)
        if rec is None or not str(rec).lstrip("-").isdigit():
            continue
        span_record[str(s.get("span_id"))] = int(rec)
        step = attrs.get(A.STEP_ID)
        if step is not None:
            step_record.setdefault(str(step), int(rec))
    out = []
    for f in findings:
        recs = [span_record[e] for e in f.evidence_span_ids if e in span_record]
        step = min(recs) if recs else step_record.get(f.step_id)
        owner = owner_of(conv, step) if step is not None else None
        if step is None or owner is None:
            continue
        out.append(FindingRef(f.kind, f.severity, owner, step, f.explanation))
    return out

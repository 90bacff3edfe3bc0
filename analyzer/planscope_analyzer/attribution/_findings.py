"""Read a trace and its analyzer findings from a collector's query API, and map findings onto
history indices.

``GET /api/traces/{id}/findings`` may not exist (no analyzer deployed): a 404 means "no
findings", and attribution proceeds on structure alone.
"""

from __future__ import annotations

from typing import Any

import httpx
from planscope import PlanscopeError
from planscope import semconv as A

from .._http import refusal_reason
from ..importers import _conventions as C
from ..importers._conversation import Conversation
from ._method import FindingRef, owner_of


def fetch_trace(
    client: httpx.Client, base: str, trace_id: str, project: str | None = None
) -> dict[str, Any] | None:
    """The trace JSON, or ``None`` when the collector does not have it (404); a collector that
    cannot be reached or refuses the request is a :class:`~planscope.PlanscopeError`."""
    params = {"project": project} if project else None
    try:
        r = client.get(f"{base.rstrip('/')}/api/traces/{trace_id}", params=params)
    except httpx.HTTPError as exc:
        raise PlanscopeError(f"cannot reach the collector at {base}: {exc}") from None
    if r.status_code == 404:
        return None
    if r.status_code != 200:
        raise PlanscopeError(f"the collector answered {r.status_code}: {refusal_reason(r)}")
    data: dict[str, Any] = r.json()
    return data


def fetch_findings(
    client: httpx.Client, base: str, trace_id: str, project: str | None = None
) -> list[dict[str, Any]] | None:
    """The analyzers' findings for a trace; ``None`` when the endpoint or trace is absent."""
    params = {"project": project} if project else None
    try:
        r = client.get(f"{base.rstrip('/')}/api/traces/{trace_id}/findings", params=params)
    except httpx.HTTPError:
        return None
    if r.status_code in (404, 405, 501):
        return None
    if r.status_code != 200:
        return None
    body = r.json()
    items = body.get("findings", body) if isinstance(body, dict) else body
    return [f for f in items if isinstance(f, dict)] if isinstance(items, list) else None


def map_findings(
    findings: list[dict[str, Any]], trace: dict[str, Any] | None, conv: Conversation
) -> list[FindingRef]:
    """Findings with their step ids / evidence spans mapped to history indices, each credited
    to the speaker who owns that step in ``conv`` (never to the finding's own ``component``
    label, e.g. ``planner``, which need not be a speaker of the log). Findings that map to no
    turn are dropped.

    >>> from planscope_analyzer.importers import parse_whowhen
    >>> conv = parse_whowhen(b'{"history": [{"name": "A", "content": "x"},'
    ...     b'{"name": "W", "content": "y"}]}', "x.json")
    >>> [(f.component, f.step) for f in map_findings([{"kind": "runaway_loop",
    ...     "severity": "high", "component": "planner", "step_id": "s1", "explanation": "x"}],
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
        ev = f.get("evidence") or []
        ev_ids = [
            e if isinstance(e, str) else (e.get("span_id") if isinstance(e, dict) else None)
            for e in (ev if isinstance(ev, list) else [])
        ]
        recs = [span_record[e] for e in ev_ids if e in span_record]
        step = min(recs) if recs else step_record.get(str(f.get("step_id") or ""))
        owner = owner_of(conv, step) if step is not None else None
        if step is None or owner is None:
            continue
        out.append(
            FindingRef(
                str(f.get("kind", "")),
                str(f.get("severity", "")),
                owner,
                step,
                str(f.get("explanation", "")),
            )
        )
    return out

"""Reading stored findings (the query side of the ``findings`` table)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from . import _queries as Q
from ._load import Queryable, ns_to_datetime


def list_findings(
    store: Queryable,
    project: str,
    *,
    kinds: Sequence[str] | None = None,
    severities: Sequence[str] | None = None,
    trace_id: str | None = None,
    since_ns: int | None = None,
    until_ns: int | None = None,
    limit: int = 100,
    offset: int = 0,
) -> dict[str, Any]:
    """A page of live findings of ``project``, newest trace first.

    >>> # list_findings(store, "default", kinds=["runaway_loop"])["findings"][0]["step_id"]
    """
    sql = Q.FINDING_SELECT
    params: dict[str, Any] = {"project": project, "limit": limit + 1, "offset": offset}
    if kinds:
        sql += " AND Kind IN {kinds:Array(String)}"
        params["kinds"] = list(kinds)
    if severities:
        sql += " AND Severity IN {severities:Array(String)}"
        params["severities"] = list(severities)
    if trace_id:
        sql += " AND TraceId = {trace_id:String}"
        params["trace_id"] = trace_id
    if since_ns is not None:
        sql += " AND TraceStart >= {since:DateTime64(9)}"
        params["since"] = ns_to_datetime(since_ns)
    if until_ns is not None:
        sql += " AND TraceStart < {until:DateTime64(9)}"
        params["until"] = ns_to_datetime(until_ns)
    sql += (
        " ORDER BY TraceStart DESC, TraceId, Kind, FindingKey"
        " LIMIT {limit:UInt32} OFFSET {offset:UInt32}"
    )
    rows = store.query(sql, params)
    out = []
    for r in rows[:limit]:
        item = dict(r)
        try:
            item["detail"] = json.loads(item["detail"])
        except (TypeError, ValueError):
            item["detail"] = {}
        out.append(item)
    return {"findings": out, "limit": limit, "offset": offset, "has_more": len(rows) > limit}

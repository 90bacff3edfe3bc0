"""planscope dashboard: Streamlit + Plotly over the collector's query API.

Install with ``pip install 'planscope[dashboard]'``; run with ``planscope dashboard``. It reads
the collector through :class:`planscope.client.CollectorClient`; the view models (run view, DAG
layout, timeline rows, planned-vs-executed diff, "why" chain, findings, aggregates) need no
Streamlit and are public here for tests and other front ends.
"""

from ._dag import DagLayout, layout_dag
from ._findings import Finding, normalise_finding, normalise_findings
from ._runview import (
    RunView,
    build_run_view,
    context_check,
    plan_diff,
    step_status,
    why_chain,
)
from ._timeline import TimelineRow, timeline_rows

__all__ = [
    "DagLayout",
    "Finding",
    "RunView",
    "TimelineRow",
    "build_run_view",
    "context_check",
    "layout_dag",
    "normalise_finding",
    "normalise_findings",
    "plan_diff",
    "step_status",
    "timeline_rows",
    "why_chain",
]

"""Failure attribution for multi-agent runs: which component failed, at which step, and why.

The default is offline and deterministic (structural rules, see docs/attribution.md); the
analyzers' findings refine it when a collector serves them, and an LLM judge can be added.

>>> from planscope_analyzer.attribution import attribute, RULES
>>> "failed-code" in RULES
True
"""

from ._evaluate import Row, evaluate, format_table, table
from ._findings import fetch_findings, fetch_trace, map_findings
from ._from_trace import conversation_from_trace
from ._judge import JudgeSettings, judge
from ._loops import loop_signals
from ._rules import RULES, Attribution, Evidence, FindingRef, attribute, is_planner_executor

__all__ = [
    "RULES",
    "Attribution",
    "Evidence",
    "FindingRef",
    "JudgeSettings",
    "Row",
    "attribute",
    "conversation_from_trace",
    "evaluate",
    "fetch_findings",
    "fetch_trace",
    "format_table",
    "is_planner_executor",
    "judge",
    "loop_signals",
    "map_findings",
    "table",
]

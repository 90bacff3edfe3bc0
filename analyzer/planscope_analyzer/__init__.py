"""planscope analyzer: structural detectors for planner-executor failure modes.

Reads the typed tables the collector's materialized views fill, runs one small detector per
failure mode (runaway recovery loops, context-starved executors, plan-propagation failures and
the structural weaknesses), and stores findings idempotently in ``findings``. It runs inside the
collector (``planscope_analyzer.service.extension``), from the CLI (``planscope analyze``,
``planscope evaluate``) or as a library:

>>> from planscope_analyzer import Analyzer
>>> # Analyzer(store).analyze_window("default").counts()
"""

from __future__ import annotations

from ._engine import ANALYZER_VERSION, AnalysisResult, Analyzer, detect
from ._evaluate import Report, score
from ._load import load_traces
from ._model import SEVERITIES, Finding, TraceData
from ._settings import AnalyzerSettings
from .detectors import DETECTORS, Detector

__all__ = [
    "ANALYZER_VERSION",
    "DETECTORS",
    "SEVERITIES",
    "AnalysisResult",
    "Analyzer",
    "AnalyzerSettings",
    "Detector",
    "Finding",
    "Report",
    "TraceData",
    "detect",
    "load_traces",
    "score",
]

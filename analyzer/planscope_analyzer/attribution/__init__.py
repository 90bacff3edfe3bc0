"""Failure attribution for agent runs: which agent failed, at which step, and why.

The default is offline and deterministic: a small ranker (conditional logit) over candidate
(agent, step) pairs of the log, whose features exist in any multi-agent or tool-use
conversation; its weights ship in ``weights.json`` and every accuracy figure is
cross-validated next to simple baselines (docs/attribution.md). Analyzer findings are attached
as evidence for the speaker who owns their step; an LLM judge can be added.

>>> from planscope_analyzer.attribution import BASELINES, METHOD
>>> METHOD, sorted(BASELINES)[0]
('ranker', 'first-error-receiver')
"""

from ._baselines import BASELINES
from ._evaluate import (
    Labelled,
    Score,
    best_default,
    cross_validate,
    fingerprint,
    format_paired,
    format_scores,
    label_agent,
    label_problems,
    load,
    paired,
    score_shipped,
    train,
)
from ._features import FEATURES, Candidate, candidates
from ._findings import map_findings
from ._from_trace import conversation_from_trace
from ._judge import JudgeSettings, judge
from ._method import METHOD, Attribution, Evidence, FindingRef, attribute, owner_of, rank, shipped
from ._model import Model, fit

__all__ = [
    "BASELINES",
    "FEATURES",
    "METHOD",
    "Attribution",
    "Candidate",
    "Evidence",
    "FindingRef",
    "JudgeSettings",
    "Labelled",
    "Model",
    "Score",
    "attribute",
    "best_default",
    "candidates",
    "conversation_from_trace",
    "cross_validate",
    "fingerprint",
    "fit",
    "format_paired",
    "format_scores",
    "judge",
    "label_agent",
    "label_problems",
    "load",
    "map_findings",
    "owner_of",
    "paired",
    "rank",
    "score_shipped",
    "shipped",
    "train",
]

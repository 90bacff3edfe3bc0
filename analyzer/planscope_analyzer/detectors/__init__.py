"""The detectors: one module per failure mode, each a :class:`Detector`.

>>> sorted(d.kind for d in DETECTORS)[:3]
['context_lost', 'context_starved', 'data_quality']
"""

from __future__ import annotations

from ._base import Detector, make_finding
from .context_lost import ContextLost
from .context_starved import ContextStarved
from .data_quality import DataQuality
from .implicit_dependency import ImplicitDependency
from .irreversible_after_failure import IrreversibleAfterFailure
from .plan_drift import PlanDrift
from .plan_propagation import PlanPropagation
from .runaway_loop import RunawayLoop
from .scheduler_starvation import SchedulerStarvation
from .unbounded_replan import UnboundedReplan
from .write_conflict import WriteConflict

DETECTORS: tuple[Detector, ...] = (
    RunawayLoop(),
    ContextStarved(),
    PlanPropagation(),
    ImplicitDependency(),
    UnboundedReplan(),
    WriteConflict(),
    IrreversibleAfterFailure(),
    PlanDrift(),
    SchedulerStarvation(),
    ContextLost(),
    DataQuality(),
)
"""Every built-in detector, in reporting order."""

__all__ = [
    "DETECTORS",
    "ContextLost",
    "ContextStarved",
    "DataQuality",
    "Detector",
    "ImplicitDependency",
    "IrreversibleAfterFailure",
    "PlanDrift",
    "PlanPropagation",
    "RunawayLoop",
    "SchedulerStarvation",
    "UnboundedReplan",
    "WriteConflict",
    "make_finding",
]

"""The runtime variants: one small module each on the shared core (``planscope_runners._core``).

>>> from planscope_runners.variants import VARIANTS
>>> sorted(VARIANTS)
['adapt', 'dag', 'host', 'plan_and_act', 'react', 'scheduler', 'scripts']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from planscope import RetryBudget

from .._core import DEFAULT_BUDGET, Run
from . import adapt, dag, host, plan_and_act, react, scheduler, scripts


@dataclass(frozen=True)
class Variant:
    """A runtime variant: ``run`` executes a task and returns why it failed (None if it did not)."""

    name: str
    description: str
    run: Callable[[Run], str | None]
    budget: RetryBudget = DEFAULT_BUDGET
    executor_turns: int = 1
    """Model calls an executor may make in one attempt (see ``RunOptions.executor_turns``)."""


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(plan_and_act.NAME, plan_and_act.DESCRIPTION, plan_and_act.run),
        Variant(adapt.NAME, adapt.DESCRIPTION, adapt.run, adapt.BUDGET, adapt.EXECUTOR_TURNS),
        Variant(scripts.NAME, scripts.DESCRIPTION, scripts.run),
        Variant(dag.NAME, dag.DESCRIPTION, dag.run),
        Variant(react.NAME, react.DESCRIPTION, react.run, react.BUDGET),
        Variant(scheduler.NAME, scheduler.DESCRIPTION, scheduler.run),
        Variant(host.NAME, host.DESCRIPTION, host.run, host.BUDGET, host.EXECUTOR_TURNS),
    )
}

__all__ = ["VARIANTS", "Variant"]

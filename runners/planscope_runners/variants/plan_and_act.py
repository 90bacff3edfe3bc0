"""Plan-and-Act: the planner writes the whole plan up front; executors only act.

Executors never judge their own success: a step fails only when its tool fails. A permanent
failure makes the planner rewrite the whole plan (completed steps are kept, not redone); the
run's outcome comes from the task's success check after execution.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._core import Run
from .._ir import PlanDraft

NAME = "plan_and_act"
DESCRIPTION = "whole plan up front, executors only act, whole-plan replanning, outcome check"


def run(r: Run) -> str | None:
    """Plan, get approval, execute in dependency order, replan the whole plan on failure.

    >>> # run_task("plan_and_act", "ops", "ops-deploy-api")  # see planscope_runners.run_task
    """
    draft = r.plan_once()

    def replan(failure: str, completed: Sequence[str]) -> PlanDraft:
        return r.plan_once("replan", failure=failure, completed=completed)

    return r.execute_with_whole_replans(draft, replan=replan)

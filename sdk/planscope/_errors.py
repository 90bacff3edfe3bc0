"""Exceptions raised by planscope.

Telemetry never breaks the agent: planscope raises into application code only where the user
asked for it (an enforced retry budget) or called an API with invalid values (configuration,
plans, budgets). Every planscope exception derives from :class:`PlanscopeError`; the collector,
analyzers and dashboard root their own errors there too.

Hierarchy::

    PlanscopeError             root of every planscope exception (all components)
    ├── ConfigurationError     invalid configure() argument, environment or budget (ValueError)
    ├── PlanValidationError    a plan that is not a DAG of unique step ids (ValueError)
    └── RetryBudgetExceeded    an enforced RetryBudget limit was crossed at run time
"""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "PlanValidationError",
    "PlanscopeError",
    "RetryBudgetExceeded",
]


class PlanscopeError(Exception):
    """Root of every exception raised by planscope (SDK, collector, analyzers, dashboard)."""


class ConfigurationError(PlanscopeError, ValueError):
    """Invalid configuration: a configure() argument, an environment variable or a budget."""


class PlanValidationError(PlanscopeError, ValueError):
    """A plan is invalid: duplicate step ids, unknown dependencies or a dependency cycle."""


class RetryBudgetExceeded(PlanscopeError):
    """An enforced :class:`~planscope.RetryBudget` limit was crossed.

    Raised into the application on purpose (the user asked for enforcement with
    ``enforce=True``), at the start of the attempt, replan or LLM call that crossed the limit.
    Catch it to escalate, e.g. to replan or to give up the run.

    Attributes:
        limit_name: which limit, e.g. ``"max_attempts_per_step"``.
        limit_value: the configured limit.
        observed: the value that crossed it (e.g. the attempt number that was refused).
        step_id: the plan step concerned, when the limit is per step or crossed inside a step.
        run_id: the run whose budget it is.
    """

    def __init__(
        self,
        limit_name: str,
        limit_value: int,
        observed: int,
        step_id: str | None = None,
        run_id: str | None = None,
    ) -> None:
        self.limit_name = limit_name
        self.limit_value = limit_value
        self.observed = observed
        self.step_id = step_id
        self.run_id = run_id
        where = f" (step {step_id!r})" if step_id is not None else ""
        super().__init__(
            f"retry budget exceeded: {limit_name}={limit_value}, observed {observed}{where}"
        )

    def __reduce__(self) -> tuple[type[RetryBudgetExceeded], tuple[object, ...]]:
        return (
            type(self),
            (self.limit_name, self.limit_value, self.observed, self.step_id, self.run_id),
        )

"""Exceptions of the reference runtime.

Hierarchy::

    PlanscopeError                 (planscope)
    └── RunnerError                root of the runtime's errors
        ├── ModelError             a model call failed (transport, HTTP status, bad response)
        ├── PlanFormatError        a planner's output is not a valid plan / script (rejected
        │                          before anything executes)
        ├── UnknownNameError       unknown variant, environment, task or fault (ValueError)
        ├── FaultNotApplicable     a fault that the variant or the task cannot produce
                                   (ValueError)
        └── ToolError              a tool call failed; ``retryable`` says if retrying may help
"""

from __future__ import annotations

from planscope import PlanscopeError


class RunnerError(PlanscopeError):
    """Root of the reference runtime's exceptions."""


class ModelError(RunnerError):
    """A model call failed: transport error, HTTP error status or an unparseable answer."""


class PlanFormatError(RunnerError):
    """A planner's output is not a valid plan or planning script; nothing was executed."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid plan: " + "; ".join(problems))


class UnknownNameError(RunnerError, ValueError):
    """An unknown variant, environment, task or fault name."""


class FaultNotApplicable(RunnerError, ValueError):
    """A known fault that the chosen variant or task cannot produce (no target for it)."""


class ToolError(RunnerError):
    """A tool call failed. ``retryable`` errors are retried within the retry budget; others
    escalate (replan, decomposition or run failure, depending on the variant)."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable

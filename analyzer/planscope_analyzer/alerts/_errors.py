"""Exceptions of the alerting component.

Hierarchy::

    planscope.PlanscopeError
     └── AlertError               any alerting failure
          ├── RuleValidationError  a rule or rules file is invalid (+ValueError); the message
          │                        lists every problem with its location
          └── DeliveryError        one delivery attempt failed (kept pending and retried)
"""

from __future__ import annotations

from planscope import PlanscopeError

__all__ = ["AlertError", "DeliveryError", "RuleValidationError"]


class AlertError(PlanscopeError):
    """Root of the alerting component's exceptions."""


class RuleValidationError(AlertError, ValueError):
    """A rule (or a rules file) is invalid; ``problems`` holds one line per problem."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or [message]


class DeliveryError(AlertError):
    """A notifier could not deliver a message (network error, timeout, non-2xx answer)."""

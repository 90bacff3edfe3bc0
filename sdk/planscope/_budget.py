"""Retry budgets: limits on attempts, replans and tokens, enforced by the SDK and by alert rules.

The same definition is loaded by the alerting system, so it is a plain, documented schema. JSON form
(every key optional, unknown keys rejected)::

    {"max_attempts_per_step": 3, "max_attempts_per_run": 20, "max_replans": 2,
     "max_tokens": 200000, "enforce": true}

``null`` (or an absent key) means "no limit". Limits are inclusive:
``max_attempts_per_step=3`` allows attempts 1, 2 and 3 and refuses the fourth.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._errors import ConfigurationError

__all__ = ["LIMIT_NAMES", "RetryBudget"]

LIMIT_NAMES = ("max_attempts_per_step", "max_attempts_per_run", "max_replans", "max_tokens")


@dataclass(frozen=True)
class RetryBudget:
    """Limits for one run. ``None`` means unlimited; ``enforce=False`` only observes.

    When a new step attempt, a replan or an LLM call's token usage crosses a limit, the SDK adds a
    ``planscope.retry_budget.exceeded`` event to the span; with ``enforce=True`` it also raises
    :class:`~planscope.RetryBudgetExceeded` into the application.

    >>> budget = RetryBudget(max_attempts_per_step=3, max_replans=1)
    >>> RetryBudget.from_json(budget.to_json()) == budget
    True
    """

    max_attempts_per_step: int | None = None
    """Attempts allowed for one plan step id within a run (attempts are 1-based)."""
    max_attempts_per_run: int | None = None
    """Step attempts allowed across all steps of a run."""
    max_replans: int | None = None
    """Plan versions allowed beyond the first (per run, over all plan ids)."""
    max_tokens: int | None = None
    """LLM tokens (input + output, from record_usage) allowed per run."""
    enforce: bool = True
    """Raise RetryBudgetExceeded when a limit is crossed; otherwise only record the event."""

    def __post_init__(self) -> None:
        problems = []
        for name in LIMIT_NAMES:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                problems.append(f"{name} must be a non-negative integer or None, got {value!r}")
            elif value < 0:
                problems.append(f"{name} must be >= 0, got {value}")
        if not isinstance(self.enforce, bool):
            problems.append(f"enforce must be a boolean, got {self.enforce!r}")
        if problems:
            raise ConfigurationError("invalid RetryBudget: " + "; ".join(problems))

    def to_dict(self) -> dict[str, Any]:
        """All fields as a JSON-ready dict (None for unlimited)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RetryBudget:
        """Build from a mapping; unknown keys raise ConfigurationError.

        >>> RetryBudget.from_dict({"max_tokens": 1000}).max_tokens
        1000
        """
        if not isinstance(data, Mapping):
            raise ConfigurationError(
                f"a RetryBudget must be a JSON object, got {type(data).__name__}"
            )
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigurationError(
                f"unknown RetryBudget key(s) {unknown}; allowed keys are {sorted(known)}"
            )
        return cls(**dict(data))

    def to_json(self) -> str:
        """The budget as JSON (the value of the ``planscope.run.budget`` attribute)."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> RetryBudget:
        """Parse the JSON form; invalid JSON or values raise ConfigurationError."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigurationError(f"RetryBudget JSON is invalid: {exc}") from None
        return cls.from_dict(data)

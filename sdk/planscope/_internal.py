"""Internal-error policy: telemetry never breaks the application.

Errors inside planscope's own code are logged on the ``planscope`` logger and swallowed, except when
running under pytest (or with ``PLANSCOPE_RAISE_INTERNAL_ERRORS=true``), where they are re-raised so
that bugs surface in tests. User exceptions never pass through here: they are recorded on the span
and re-raised by the instrumentation itself.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from ._env import PLANSCOPE_RAISE_INTERNAL_ERRORS, parse_bool
from ._errors import RetryBudgetExceeded

logger = logging.getLogger("planscope")

#: Test hook: when not None, overrides the environment / pytest detection.
raise_override: bool | None = None


def should_raise_internal_errors() -> bool:
    """True when SDK-internal errors should propagate instead of being logged."""
    if raise_override is not None:
        return raise_override
    raw = os.environ.get(PLANSCOPE_RAISE_INTERNAL_ERRORS)
    if raw is not None:
        try:
            return parse_bool(PLANSCOPE_RAISE_INTERNAL_ERRORS, raw)
        except ValueError:
            return False
    return "pytest" in sys.modules


@contextmanager
def handle_internal_errors() -> Iterator[None]:
    """Log and swallow exceptions raised by the block (re-raise under tests).

    :class:`~planscope.RetryBudgetExceeded` always propagates: it is the enforcement the user asked
    for, not an internal error.
    """
    try:
        yield
    except RetryBudgetExceeded:
        raise
    except Exception:
        if should_raise_internal_errors():
            raise
        logger.exception(
            "internal error in planscope; telemetry dropped, the application continues"
        )

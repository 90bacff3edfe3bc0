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
from types import TracebackType

from ._errors import RetryBudgetExceeded
from .environment_variables import PLANSCOPE_RAISE_INTERNAL_ERRORS, parse_bool

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


class _InternalErrors:
    """Context manager behind :func:`handle_internal_errors` (a class: it runs on every span)."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        if exc is None or not isinstance(exc, Exception):
            return False
        return swallow(exc)


def swallow(exc: Exception) -> bool:
    """The policy of :func:`handle_internal_errors` for an exception caught by hand.

    True: ``exc`` was logged, carry on; False: re-raise it. For the per-call paths, where a
    ``try``/``except`` costs nothing until something fails, unlike a ``with`` block::

        try:
            ...
        except Exception as exc:
            if not swallow(exc):
                raise
    """
    if isinstance(exc, RetryBudgetExceeded) or should_raise_internal_errors():
        return False
    logger.error(
        "internal error in planscope; telemetry dropped, the application continues",
        exc_info=(type(exc), exc, exc.__traceback__),
    )
    return True


_HANDLER = _InternalErrors()


def handle_internal_errors() -> _InternalErrors:
    """Log and swallow exceptions raised by the block (re-raise under tests).

    :class:`~planscope.RetryBudgetExceeded` always propagates: it is the enforcement the user asked
    for, not an internal error. BaseExceptions (KeyboardInterrupt, cancellation) propagate too.

    >>> with handle_internal_errors():  # doctest: +SKIP
    ...     span.set_attribute(key, compute_value())
    """
    return _HANDLER

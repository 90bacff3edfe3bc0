"""Exceptions of the storage layer; the hierarchy is drawn in the package docstring."""

from __future__ import annotations

from planscope import PlanscopeError


class StoreError(PlanscopeError):
    """A storage operation failed; the message says which and why."""


class StoreUnavailable(StoreError):
    """Transient: the store cannot be reached or is overloaded right now; retrying may succeed."""


class MigrationError(StoreError):
    """A schema migration could not be loaded, rendered or applied, or an applied file changed."""


class InvalidDsn(StoreError, ValueError):
    """The DSN is not ``chdb:///abs/path`` or ``http(s)://[user:pass@]host[:port][/db]``."""


__all__ = ["InvalidDsn", "MigrationError", "PlanscopeError", "StoreError", "StoreUnavailable"]

"""Exceptions of the storage layer and the classification of ClickHouse errors.

Every driver error is mapped onto one of three classes, because the writer must treat them
differently (docs/collector.md, "Failure classes"):

* :class:`StoreUnavailable` - transient: network, timeouts, disk full, too many parts,
  memory, credentials, and for inserts a missing table (an operator fixes those). Retried
  with back-off, never quarantined: the data is fine, the store is not.
* :class:`StoreRejected` - permanent for *this data*: a value out of range, a type the column
  cannot hold, too many partitions in one block. Retrying the same rows fails again, so the
  writer isolates the request that causes it and quarantines it alone.
* :class:`StoreError` - anything else (a query we wrote wrong, a closed store).
"""

from __future__ import annotations

import re

from planscope import PlanscopeError


class StoreError(PlanscopeError):
    """A storage operation failed; the message says which and why."""


class StoreUnavailable(StoreError):
    """Transient: the store cannot be reached or is overloaded right now; retrying may succeed."""


class StoreRejected(StoreError):
    """Permanent: the store refuses this data; sending the same rows again fails again."""


class MigrationError(StoreError):
    """A schema migration could not be loaded, rendered or applied, or an applied file changed."""


class InvalidDsn(StoreError, ValueError):
    """The DSN is not ``chdb:///abs/path`` or ``http(s)://[user:pass@]host[:port][/db]``."""


_CODE_RE = re.compile(r"Code: (\d+)")

# ClickHouse error codes that mean "the store, not this data, is the problem: try again".
TRANSIENT_CODES = frozenset(
    {
        159,  # TIMEOUT_EXCEEDED
        164,  # READONLY
        173,  # CANNOT_ALLOCATE_MEMORY
        202,  # TOO_MANY_SIMULTANEOUS_QUERIES
        203,  # NO_FREE_CONNECTION
        209,  # SOCKET_TIMEOUT
        210,  # NETWORK_ERROR
        225,  # NO_ZOOKEEPER
        236,  # ABORTED
        241,  # MEMORY_LIMIT_EXCEEDED
        242,  # TABLE_IS_READ_ONLY
        243,  # NOT_ENOUGH_SPACE
        252,  # TOO_MANY_PARTS (but see _DATA_MESSAGES: too many *partitions* is the data's)
        279,  # ALL_CONNECTION_TRIES_FAILED
        285,  # TOO_FEW_LIVE_REPLICAS
        319,  # UNKNOWN_STATUS_OF_INSERT
        394,  # QUERY_WAS_CANCELLED
        425,  # SYSTEM_ERROR
        497,  # ACCESS_DENIED
        516,  # AUTHENTICATION_FAILED
        999,  # KEEPER_EXCEPTION
    }
)
# For an insert, a missing table or column is the schema's state (not migrated yet, detached):
# an operator fixes it and the same rows then go in. For a query it is the query's error.
INSERT_TRANSIENT_CODES = frozenset(
    {
        16,  # NO_SUCH_COLUMN_IN_TABLE
        60,  # UNKNOWN_TABLE
        81,  # UNKNOWN_DATABASE
    }
)
_TRANSIENT_MESSAGES = ("No space left on device", "Cannot allocate memory", "Too many parts")
# Shares code 252 with TOO_MANY_PARTS, but is caused by the rows of one block.
_DATA_MESSAGES = ("Too many partitions for single INSERT block",)


def error_code(exc: BaseException) -> int | None:
    """The ClickHouse error code in an exception's text, if any.

    >>> error_code(RuntimeError("Code: 243. DB::Exception: Not enough space"))
    243
    """
    match = _CODE_RE.search(str(exc))
    return int(match.group(1)) if match else None


def is_transient(exc: BaseException, *, insert: bool = False) -> bool:
    """True when a ClickHouse error is the store's state (retry), False when it is the data's.

    >>> is_transient(RuntimeError("Code: 252. DB::Exception: Too many parts (300)"))
    True
    >>> is_transient(RuntimeError("Code: 252. Too many partitions for single INSERT block"))
    False
    >>> is_transient(RuntimeError("Code: 407. DB::Exception: Decimal math overflow"))
    False
    """
    message = str(exc)
    if any(text in message for text in _DATA_MESSAGES):
        return False
    if any(text in message for text in _TRANSIENT_MESSAGES):
        return True
    code = error_code(exc)
    return code in TRANSIENT_CODES or (insert and code in INSERT_TRANSIENT_CODES)


__all__ = [
    "InvalidDsn",
    "MigrationError",
    "PlanscopeError",
    "StoreError",
    "StoreRejected",
    "StoreUnavailable",
    "error_code",
    "is_transient",
]

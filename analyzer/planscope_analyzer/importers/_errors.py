"""Importer exceptions.

::

    planscope.PlanscopeError
     └── ImportFailed               nothing was sent for the file named in the message
          ├── UnknownFormat         the file matches no supported format
          ├── MalformedInput        the file is of a known format but broken; names the record
          └── SendFailed            the collector refused or could not be reached
"""

from __future__ import annotations

from planscope import PlanscopeError


class ImportFailed(PlanscopeError):
    """An import did not happen; the message names the file (and record when known)."""


class UnknownFormat(ImportFailed):
    """The file is not in any supported format (or not in the one that was asked for)."""


class MalformedInput(ImportFailed):
    """The file is of a known format but a record is broken.

    >>> str(MalformedInput("run.json", "history[3]", "content is missing"))
    'run.json: history[3]: content is missing'
    """

    def __init__(self, path: str, record: str | None, reason: str) -> None:
        self.path, self.record, self.reason = path, record, reason
        super().__init__(f"{path}: {record}: {reason}" if record else f"{path}: {reason}")


class SendFailed(ImportFailed):
    """The collector refused a request or could not be reached."""

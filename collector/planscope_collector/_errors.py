"""The collector's exceptions.

    PlanscopeError                       (planscope, the root of every planscope error)
    └── CollectorError
        ├── IngestRejected               a request we refuse; carries its HTTP status (4xx)
        │   ├── BadPayload               400: malformed protobuf/JSON, bad gzip, invalid ids
        │   ├── PayloadTooLarge          413: body or decompressed body over the cap
        │   ├── UnsupportedMediaType     415: content type or encoding we do not speak
        │   ├── Unauthorized             401: missing or unknown API key
        │   ├── Forbidden                403: the key lacks the scope the route needs
        │   ├── RequestTimeout           408: the body did not arrive within the upload time
        │   └── NotIngesting             503: this collector runs with role ``analyze``
        ├── SpoolFull                    503: the store is behind and the spool hit its cap
        └── ServerNotStarted             a BackgroundServer that did not start (also a RuntimeError)

Every ``IngestRejected`` is answered with its status and a one-line reason; nothing from a
rejected request is spooled, so a bad request never leaves partial rows behind.
"""

from __future__ import annotations

from planscope import PlanscopeError


class CollectorError(PlanscopeError):
    """Root of the collector's errors."""


class IngestRejected(CollectorError):
    """A request the collector refuses, with the HTTP status to answer."""

    status_code = 400

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class BadPayload(IngestRejected):
    """Malformed body: protobuf or JSON that does not parse, bad gzip, invalid ids."""

    status_code = 400


class PayloadTooLarge(IngestRejected):
    """The body (or what it decompresses to) exceeds the configured cap."""

    status_code = 413


class UnsupportedMediaType(IngestRejected):
    """A content type or content encoding that OTLP/HTTP does not define."""

    status_code = 415


class Unauthorized(IngestRejected):
    """No API key, or one the collector does not know."""

    status_code = 401


class Forbidden(IngestRejected):
    """A known key without the scope the route needs (``admin`` for alert rule changes)."""

    status_code = 403


class RequestTimeout(IngestRejected):
    """The request body did not arrive within ``upload_timeout_seconds``."""

    status_code = 408


class NotIngesting(IngestRejected):
    """This collector was started with ``--role analyze`` and accepts no spans."""

    status_code = 503


class SpoolFull(CollectorError):
    """The spool reached its cap because the store is not keeping up; retry later."""

    def __init__(self, retry_after_seconds: int) -> None:
        super().__init__(f"spool is full; retry after {retry_after_seconds}s")
        self.retry_after_seconds = retry_after_seconds


class ServerNotStarted(CollectorError, RuntimeError):
    """A :class:`BackgroundServer` that did not start in time, or whose thread stopped while
    starting; the thread has been told to stop before this is raised."""

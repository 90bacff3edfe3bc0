"""Accepting a request: decode, validate, de-duplicate, spool. Framework-free, so it is testable.

The order matters for the promise "nothing accepted is lost, nothing rejected is stored":
everything that can refuse a request (size, encoding, parse, ids, spool cap) runs before the
record is appended, and the 200 is sent only after the append's fsync returned.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

from ._errors import SpoolFull
from ._otlp import (
    MAX_DAYS_PER_INSERT,
    PROTOBUF,
    ParseLimits,
    decompress,
    media_type,
    parse_request,
    parse_scalar_request,
    span_count,
    spans_ipc,
)
from ._spool import ARROW, SCALAR_OTLP, Record, RecordFormat, Spool, scalar_body


class RecentBatches:
    """Digests of recently accepted requests, so a client's re-delivery is not stored twice.

    Bounded in count and age; seeded at start from the store and the spool, so the window
    survives restarts. A digest counts as seen only once its record is durable (``commit``):
    an identical request arriving while the first one is still being written waits for that
    write, and is written itself if the first one fails.

    >>> seen = RecentBatches(window_seconds=60)
    >>> seen.claim(b"x" * 32)
    True
    >>> seen.commit(b"x" * 32)
    >>> seen.claim(b"x" * 32)
    False
    """

    def __init__(self, window_seconds: float, max_entries: int = 500_000) -> None:
        self.window = window_seconds
        self.max_entries = max_entries
        self._seen: OrderedDict[bytes, float] = OrderedDict()
        self._pending: set[bytes] = set()
        self._cond = threading.Condition()

    def claim(self, digest: bytes) -> bool:
        """False if ``digest`` is already durable within the window; else the caller writes it.

        Blocks while another request with the same digest is being written.
        """
        with self._cond:
            while digest in self._pending:
                self._cond.wait()
            seen_at = self._seen.get(digest)
            if seen_at is not None and time.monotonic() - seen_at < self.window:
                return False
            self._pending.add(digest)
            return True

    def commit(self, digest: bytes) -> None:
        """The claimed request is durable: identical ones are duplicates from now on."""
        with self._cond:
            self._pending.discard(digest)
            self._remember(digest)
            self._cond.notify_all()

    def release(self, digest: bytes) -> None:
        """The claimed request was not stored: a waiting identical one may write it."""
        with self._cond:
            self._pending.discard(digest)
            self._cond.notify_all()

    def _remember(self, digest: bytes) -> None:
        now = time.monotonic()
        self._seen[digest] = now
        self._seen.move_to_end(digest)
        while self._seen and (
            len(self._seen) > self.max_entries
            or now - next(iter(self._seen.values())) >= self.window
        ):
            self._seen.popitem(last=False)

    def seed(self, digests: Iterable[bytes]) -> None:
        with self._cond:
            for digest in digests:
                self._remember(digest)


@dataclass(frozen=True)
class Accepted:
    """What an accepted request amounted to."""

    spans: int
    duplicate: bool
    encoding: str


@dataclass(frozen=True)
class IngestLimits:
    max_decompressed_bytes: int
    spool_max_bytes: int
    retry_after_seconds: int
    parse: ParseLimits = field(default_factory=ParseLimits)


def batch_digest(project: str | None, body: bytes) -> bytes:
    """Content digest of a decompressed request body within its project."""
    h = hashlib.sha256((project or "").encode())
    h.update(b"\0")
    h.update(body)
    return h.digest()


def accept(
    spool: Spool,
    recent: RecentBatches,
    limits: IngestLimits,
    *,
    body: bytes,
    content_type: str | None,
    content_encoding: str | None,
    project: str | None,
    decode_slots: threading.Semaphore | None = None,
) -> Accepted:
    """Validate one OTLP/HTTP request and make it durable, or raise IngestRejected/SpoolFull.

    ``decode_slots`` bounds how many requests are inflated and parsed at once: decoding is
    CPU-bound (more at once gains nothing) and holds the decoded request in memory, so the
    bound caps the collector's memory however many requests arrive together. The spool append
    runs outside it, so group commit still gathers every waiting request into one fsync.
    """
    kind = media_type(content_type)
    with decode_slots or contextlib.nullcontext():
        raw = decompress(body, content_encoding, limits.max_decompressed_bytes)
        # Scalar values only (the common case): spooled as received, ClickHouse flattens it
        # (record format 3). Otherwise flattened here, where it is parsed already, so the
        # writer never parses a request again (format 2; see ``_spool``).
        scalar = parse_scalar_request(raw, limits.parse, project) if kind == PROTOBUF else None
        request = scalar.request if scalar is not None else parse_request(raw, kind, limits.parse)
        count = span_count(request)
        if count == 0:
            return Accepted(0, False, kind)
        if spool.pending_bytes >= limits.spool_max_bytes:
            raise SpoolFull(limits.retry_after_seconds)
        fmt: RecordFormat = SCALAR_OTLP
        if scalar is not None and len(scalar.days) <= MAX_DAYS_PER_INSERT:
            payload = scalar_body(raw, scalar.trace_keys, scalar.days)
        else:  # (a request over more days than one insert may hold: split by the store)
            payload, fmt = spans_ipc(request, project), ARROW
        del request, scalar
    digest = batch_digest(project, raw)
    if not recent.claim(digest):
        return Accepted(count, True, kind)
    try:
        spool.append(Record(project or "", digest, count, payload, fmt))
    except BaseException:
        recent.release(digest)
        raise
    recent.commit(digest)
    return Accepted(count, False, kind)

"""The spool: an fsync'd write-ahead log of accepted requests, in numbered segment files.

The collector answers 200 only after a request's record is on disk (written and fsync'd), so a
crash at any moment loses nothing it acknowledged. Concurrent requests share one fsync (group
commit: the first waiter writes and syncs everything queued, the others wait for it).

Layout of ``<dir>``::

    SPOOL_ID              random id of this spool, part of every insert's dedup token
    000000000001.seg      sealed segments: complete, waiting for the writer
    000000000002.seg      the active segment (the highest number), being appended to
    quarantine/           single requests the store refused for good (``NNN-III.seg`` holding one
                          record, ``NNN-III.json`` saying why), kept for ``planscope quarantine``

A record is ``MAGIC | u32 length | u32 crc32 | payload``; a torn tail (a crash mid-write, which
was never acknowledged) fails its length or CRC check and is ignored on replay. The magic names
the payload's format, so an upgrade never strands a spool: ``PSR3`` (written since 2026-12-02)
holds an OTLP protobuf request whose values are all scalars, byte for byte as received, which
ClickHouse flattens itself (``storage._protobuf``), behind a small JSON header with its trace
keys and days; ``PSR2`` holds the request's spans already flattened by Python, as an Arrow IPC
stream of ``TRACE_COLUMNS`` (requests with array or kvlist values, and OTLP/JSON); ``PSR1``
(every version before 2026-12-02) holds the OTLP protobuf request, which the writer parses and
flattens. Segments and quarantined requests of every kind are read by this version, record by
record. Segments are sealed by size or by the age of their oldest record; the writer inserts a
sealed segment as one batch with the dedup token ``<SPOOL_ID>:<segment number>:<digest of its
bytes>``, so a replay after a crash between insert and delete is dropped by ClickHouse instead
of duplicated.
"""

from __future__ import annotations

import hashlib
import json
import logging
import mmap
import os
import struct
import threading
import time
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from io import FileIO
from pathlib import Path
from typing import Literal

log = logging.getLogger("planscope.collector")

OTLP: Literal["otlp"] = "otlp"
"""A record whose body is the OTLP protobuf request (format 1, written before 2026-12-02)."""
ARROW: Literal["arrow"] = "arrow"
"""A record whose body is the request's spans as an Arrow IPC stream (format 2)."""
SCALAR_OTLP: Literal["scalar-otlp"] = "scalar-otlp"
"""A record whose body is :func:`scalar_body`: a validated OTLP protobuf request with scalar
values only, for ClickHouse to flatten (format 3)."""
RecordFormat = Literal["otlp", "arrow", "scalar-otlp"]
_MAGIC: dict[RecordFormat, bytes] = {OTLP: b"PSR1", ARROW: b"PSR2", SCALAR_OTLP: b"PSR3"}
_FORMAT = {magic: fmt for fmt, magic in _MAGIC.items()}
_HEADER = struct.Struct("<4sII")
_META = struct.Struct("<32sIH")  # digest, span count, project length


@dataclass(frozen=True)
class Record:
    """One accepted request: its project override, content digest, span count and body.

    ``body`` is in ``format``: ``arrow`` (what this version writes: the spans flattened by the
    request handler, project applied) or ``otlp`` (the protobuf request, as older versions
    wrote it; flattened by the writer).
    """

    project: str
    digest: bytes
    span_count: int
    body: bytes | memoryview  # read from a segment: a view of the segment's bytes, no copy
    format: RecordFormat = OTLP

    def encode(self) -> bytes:
        return b"".join(self.parts())

    def parts(self) -> tuple[bytes, bytes, bytes | memoryview]:
        """:meth:`encode` in three pieces, the body not copied (the spool joins a whole group
        commit's records at once: one copy of each body)."""
        project = self.project.encode()
        meta = _META.pack(self.digest, self.span_count, len(project)) + project
        crc = zlib.crc32(self.body, zlib.crc32(meta))
        header = _HEADER.pack(_MAGIC[self.format], len(meta) + len(self.body), crc)
        return header, meta, self.body

    @classmethod
    def decode(cls, payload: bytes | memoryview, format: RecordFormat = OTLP) -> Record:
        digest, count, plen = _META.unpack_from(payload)
        start = _META.size
        project = bytes(payload[start : start + plen]).decode()
        return cls(project, digest, count, payload[start + plen :], format)


_SCALAR_HEAD = struct.Struct("<I")


def scalar_body(message: bytes, trace_keys: list[list[str]], days: list[int]) -> bytes:
    """A format-3 record body: the request's (project, trace id) pairs and span days (what the
    writer needs without decoding it), then the protobuf request.

    >>> read_scalar_body(scalar_body(b"pb", [["p", "ab"]], [1]))
    ([['p', 'ab']], [1], b'pb')
    """
    head = json.dumps([trace_keys, days], separators=(",", ":")).encode()
    return b"".join((_SCALAR_HEAD.pack(len(head)), head, message))


def read_scalar_body(
    body: bytes | memoryview,
) -> tuple[list[list[str]], list[int], bytes | memoryview]:
    """What :func:`scalar_body` packed (the message a view of ``body`` when that is a view)."""
    (size,) = _SCALAR_HEAD.unpack_from(body)
    start = _SCALAR_HEAD.size
    trace_keys, days = json.loads(bytes(body[start : start + size]))
    return trace_keys, days, body[start + size :]


class _Waiter:
    __slots__ = ("data", "done", "error", "size")

    def __init__(self, data: tuple[bytes, bytes, bytes | memoryview]) -> None:
        self.data = data
        self.size = sum(len(part) for part in data)
        self.done = False
        self.error: BaseException | None = None


@dataclass(frozen=True)
class Segment:
    """A sealed segment file."""

    number: int
    path: Path

    def records(self) -> Iterator[Record]:
        """Records in order, stopping at a torn or corrupt tail."""
        # Mapped, not read: records are views of the page cache (no segment-sized copy into
        # fresh memory, whose page faults cost more than the copy). A sealed segment is never
        # written again, and unlinking it leaves the mapping valid.
        with open(self.path, "rb") as f:
            if not os.fstat(f.fileno()).st_size:
                return
            data = memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
        pos = 0
        while pos + _HEADER.size <= len(data):
            magic, length, crc = _HEADER.unpack_from(data, pos)
            payload = data[pos + _HEADER.size : pos + _HEADER.size + length]
            fmt = _FORMAT.get(magic)
            if fmt is None or len(payload) != length or zlib.crc32(payload) != crc:
                log.warning("spool segment %s: ignoring torn tail at byte %d", self.path, pos)
                return
            yield Record.decode(payload, fmt)
            pos += _HEADER.size + length


def write_fully(f: FileIO, data: bytes) -> None:
    """Write all of ``data`` or raise ``OSError``: ``FileIO.write`` may write less (disk full).

    >>> import tempfile
    >>> with FileIO(tempfile.mktemp(), "wb") as f:
    ...     write_fully(f, b"abc")
    """
    view = memoryview(data)
    while view:
        written = f.write(view)
        if not written:
            raise OSError(28, f"short write to {f.name!r}: {len(view)} bytes not written")
        view = view[written:]


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Quarantined:
    """One request the store refused for good, as ``planscope quarantine list`` shows it."""

    id: str
    path: Path
    project: str
    spans: int
    reason: str
    quarantined_at: float


class Quarantine:
    """Requests the store refuses for good, one file each, kept until replayed or dropped.

    One request per file, so a replay or a deletion never touches another request (or another
    tenant's). Usable from another process (``planscope quarantine``) while a collector runs.

    >>> import tempfile
    >>> q = Quarantine(Path(tempfile.mkdtemp()))
    >>> _ = q.add("000000000001-000000", Record("a", bytes(32), 2, b""), "Code: 407 overflow")
    >>> [(i.id, i.spans) for i in q.list()]
    [('000000000001-000000', 2)]
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)

    def add(self, item_id: str, record: Record, reason: str) -> Path:
        """Keep ``record`` (durably) with the reason it was refused; returns its file."""
        meta = {
            "project": record.project,
            "spans": record.span_count,
            "digest": record.digest.hex(),
            "reason": reason[:2000],
            "quarantined_at": time.time(),
        }
        target = self.directory / f"{item_id}.seg"
        for path, data in (
            (target.with_suffix(".json"), json.dumps(meta).encode()),
            (target, record.encode()),  # last: a .seg without .json still lists (reason unknown)
        ):
            tmp = path.with_suffix(path.suffix + ".tmp")
            with FileIO(tmp, "wb") as f:
                write_fully(f, data)
                os.fsync(f.fileno())
            os.replace(tmp, path)
        _fsync_dir(self.directory)
        return target

    def list(self) -> list[Quarantined]:
        """Every quarantined request, oldest first."""
        items = []
        for path in sorted(self.directory.glob("*.seg")):
            try:
                meta = json.loads(path.with_suffix(".json").read_text())
            except (OSError, ValueError):
                meta = {"reason": "unknown (no .json beside the file)"}
            items.append(
                Quarantined(
                    path.stem,
                    path,
                    str(meta.get("project", "")),
                    int(meta.get("spans", 0)),
                    str(meta.get("reason", "")),
                    float(meta.get("quarantined_at", path.stat().st_mtime)),
                )
            )
        return items

    def count(self) -> int:
        return sum(1 for _ in self.directory.glob("*.seg"))

    def remove(self, item: Quarantined) -> None:
        """Forget ``item`` (after it was stored by a replay)."""
        item.path.unlink(missing_ok=True)
        item.path.with_suffix(".json").unlink(missing_ok=True)
        _fsync_dir(self.directory)


class Spool:
    """Durable append-only log of accepted requests.

    >>> import tempfile
    >>> spool = Spool(Path(tempfile.mkdtemp()))
    >>> spool.append(Record("default", bytes(32), 1, b""))
    >>> [s.number for s in spool.seal()]
    [1]
    """

    def __init__(self, directory: Path, *, segment_max_bytes: int = 64 << 20) -> None:
        self.directory = directory
        self.segment_max_bytes = segment_max_bytes
        directory.mkdir(parents=True, exist_ok=True)
        self.quarantine = Quarantine(directory / "quarantine")
        self.spool_id = self._load_or_create_id()
        for number in self._numbers():  # an active segment a previous process never wrote to
            path = self._path(number)
            if path.stat().st_size == 0:
                path.unlink()
        existing = self._numbers()
        # Whatever a previous process left is sealed now: it is replayed before new data.
        self._active_number = (existing[-1] if existing else 0) + 1
        self._active = self._open(self._active_number)
        self._active_bytes = 0
        self._oldest_at: float | None = None  # when the active segment's first record was written
        self._cond = threading.Condition()
        self._queue: list[_Waiter] = []
        self._syncing = False
        self._sealed_bytes = sum(self._path(n).stat().st_size for n in existing)

    # -- writing ---------------------------------------------------------------------------
    def append(self, record: Record) -> None:
        """Write ``record`` and return once it is fsync'd (shared with concurrent callers).

        Raises ``OSError`` when the disk refuses the write; the record is then not accepted.
        """
        mine = _Waiter(record.parts())
        with self._cond:
            self._queue.append(mine)
            while not mine.done:
                if self._syncing:
                    self._cond.wait()
                    continue
                # Leader: write everything queued with one fsync, without holding the lock.
                self._syncing = True
                batch, self._queue = self._queue, []
                error: BaseException | None = None
                self._cond.release()
                try:
                    self._write(b"".join(part for w in batch for part in w.data))
                except BaseException as exc:
                    error = exc
                finally:
                    self._cond.acquire()
                for w in batch:
                    w.done, w.error = True, error
                if error is None:
                    if not self._active_bytes:
                        self._oldest_at = time.monotonic()
                    self._active_bytes += sum(w.size for w in batch)
                if error is not None or self._active_bytes >= self.segment_max_bytes:
                    # After a failed write the segment may end in a torn record; start a new
                    # one so that records acknowledged later are not hidden behind it.
                    try:
                        self._rotate()
                    except OSError:
                        log.exception("spool: cannot start a new segment; will retry")
                self._syncing = False
                self._cond.notify_all()
        if mine.error is not None:
            raise mine.error

    def _write(self, data: bytes) -> None:
        # Only the leader (``_syncing`` set) calls this, so the file has a single writer.
        if self._active.closed:  # a rotation failed earlier (disk full); try again
            self._active = self._open(self._active_number)
        start = os.fstat(self._active.fileno()).st_size
        try:
            write_fully(self._active, data)
            os.fsync(self._active.fileno())
        except OSError:
            # Nothing of this batch is acknowledged: cut what reached the file, so a later
            # replay does not store records whose senders were told to retry.
            try:
                os.ftruncate(self._active.fileno(), start)
            except OSError:
                log.exception("spool: cannot cut a failed write back to %d bytes", start)
            raise

    def _rotate(self) -> None:
        # Called with the condition held.
        self._active.close()
        self._sealed_bytes += self._path(self._active_number).stat().st_size
        self._active_number += 1
        self._active = self._open(self._active_number)
        self._active_bytes = 0
        self._oldest_at = None

    # -- reading (the writer thread) -------------------------------------------------------
    def seal(self, min_age_seconds: float = 0.0) -> list[Segment]:
        """Seal the active segment if its oldest record is ``min_age_seconds`` old; list sealed
        segments."""
        with self._cond:
            while self._syncing:
                self._cond.wait()
            if self._active_bytes and self.oldest_age() >= min_age_seconds:
                self._rotate()
            active = self._active_number
        return [Segment(n, self._path(n)) for n in self._numbers() if n < active]

    def remove(self, segment: Segment) -> None:
        """Delete a segment whose rows are in the store."""
        size = segment.path.stat().st_size
        segment.path.unlink()
        self._fsync_dir()
        with self._cond:
            self._sealed_bytes -= size

    def dedup_token(self, segment: Segment) -> str:
        """The insert deduplication token of a segment: the same on every replay of it.

        It names the spool, the segment number and a digest of the segment's content. The
        digest matters: numbers restart at 1 when a drained spool is reopened, and a token
        that repeated for different data would make ClickHouse drop the new batch silently.
        The content digest hashes each record's header (length, CRC of its payload) and the
        request digest at the start of its payload, read with a few seeks: hashing the
        whole segment cost up to 180 ms per 32 MiB segment on the writer's path.
        """
        content = hashlib.blake2b(digest_size=16)
        with open(segment.path, "rb") as f:
            while True:
                header = f.read(_HEADER.size)
                if len(header) < _HEADER.size:
                    break
                _magic, length, _crc = _HEADER.unpack(header)
                content.update(header)
                content.update(f.read(min(length, _META.size)))
                if length > _META.size:
                    f.seek(length - _META.size, os.SEEK_CUR)
        return f"{self.spool_id}:{segment.number}:{content.hexdigest()}"

    def oldest_age(self) -> float:
        """Seconds since the active segment's oldest record was written (0.0 when empty)."""
        oldest = self._oldest_at
        return 0.0 if oldest is None else time.monotonic() - oldest

    @property
    def pending_bytes(self) -> int:
        """Bytes accepted but not yet in the store."""
        return self._sealed_bytes + self._active_bytes

    def close(self) -> None:
        with self._cond:
            self._active.close()

    # -- files -----------------------------------------------------------------------------
    def _path(self, number: int) -> Path:
        return self.directory / f"{number:012d}.seg"

    def _numbers(self) -> list[int]:
        return sorted(int(p.stem) for p in self.directory.glob("*.seg") if p.stem.isdigit())

    def _open(self, number: int) -> FileIO:
        f = FileIO(self._path(number), "ab")
        self._fsync_dir()
        return f

    def _fsync_dir(self) -> None:
        _fsync_dir(self.directory)

    def _load_or_create_id(self) -> str:
        path = self.directory / "SPOOL_ID"
        if path.exists():
            return path.read_text().strip()
        spool_id = uuid.uuid4().hex
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            f.write(spool_id)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        self._fsync_dir()
        return spool_id

"""Flattening spool segments into Arrow in a helper process, beside the insert.

The writer's two steps per segment are CPU work in Python (protobuf -> ``SpanColumns`` -> Arrow,
about half the time) and the chDB insert (native, but it takes the GIL back often). Run in one
process, they are serial: a Python thread beside the insert slows the insert badly. So the
writer hands the *path* of segment N+1 to a small child process while it inserts segment N, and
receives the segment as Arrow IPC stream bytes, which the store sends as they are.

Nothing about durability changes: the child only reads sealed segment files; the writer still
computes the dedup token from the file, inserts, and only then deletes the file. If the child
dies (killed, crashed), the writer flattens that segment itself and starts a new child for the
next one. The child reads its requests from a pipe whose only writer is the collector process,
so when the collector exits, however it exits (even SIGKILL), the child sees end-of-file and
exits too: no orphan.

Protocol (child stdin/stdout, binary): request ``u32 length | path (utf-8)``; answer
``u8 status`` then, for ``0`` (ok), ``u64 length | pickle((batches, trace_keys, spans))`` and
``u64 length | Arrow IPC stream``; for ``1`` (error), ``u64 length | message (utf-8)``.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import pickle
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ._otlp import DEFAULT_PROJECT, SpanColumns
from ._spool import Record, Segment

log = logging.getLogger("planscope.collector")

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_OK, _ERROR = 0, 1
_PIPE_BYTES = 1 << 20


@dataclass
class FlatSegment:
    """A segment ready to insert: its spans as Arrow IPC stream bytes, plus bookkeeping."""

    ipc: Any  # bytes-like: an Arrow IPC stream of ``TRACE_COLUMNS``
    batches: list[list[Any]]  # one ``planscope_ingest_batches`` row per request
    trace_keys: set[tuple[str, str]]  # distinct (project, trace id) pairs
    spans: int


class FlattenFailed(Exception):
    """The child could not flatten a segment (bad data): the segment's own failure."""


class WorkerDied(Exception):
    """The child process is gone or its pipe broke; nothing about the segment is known."""


def columns(records: Iterable[Record]) -> tuple[SpanColumns, list[list[Any]]]:
    """The records' spans as columns, and one ``planscope_ingest_batches`` row per request.

    The cyclic GC is paused meanwhile: building a segment allocates hundreds of thousands of
    short-lived protobuf wrappers and strings, and collections triggered by them (which find
    nothing: no cycles are created here) slowed this step by up to 1.8x.
    """
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    spans = SpanColumns()
    batches: list[list[Any]] = []
    received_ms = time.time_ns() // 1_000_000  # ReceivedAt is DateTime64(3)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for record in records:
            request = ExportTraceServiceRequest.FromString(record.body)
            start = len(spans)
            spans.add(request, record.project or None)
            project = spans.project[start] if len(spans) > start else None
            project = project or record.project or DEFAULT_PROJECT
            batches.append([project, record.digest.hex(), received_ms, record.span_count])
    finally:
        if gc_was_enabled:
            gc.enable()
    return spans, batches


def flatten_segment(segment: Segment) -> FlatSegment:
    """Flatten a segment in this process (what the child does; the writer's fallback)."""
    return flatten_records(segment.records())


def flatten_records(records: Iterable[Record]) -> FlatSegment:
    """Flatten some records in this process (one request, when the writer isolates a failure)."""
    spans, batches = columns(records)
    # bytes, as the parent reads them from the child: the store sends either the same way.
    ipc = spans.to_ipc().to_pybytes() if len(spans) else b""
    return FlatSegment(ipc, batches, spans.trace_keys(), len(spans))


class FlattenWorker:
    """The collector side of one child process; used by the writer thread only."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._pending: int | None = None  # segment number submitted, answer not yet read

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def pending(self) -> int | None:
        return self._pending

    def start(self) -> None:
        """Start the child (it imports in the background; the first answer waits for it)."""
        if self._proc is not None and self._proc.poll() is None:
            return
        code = (
            "import sys, json; sys.path[:] = json.loads(sys.argv[1]); "
            "from planscope_collector._flatten_worker import main; main()"
        )
        self._proc = subprocess.Popen(
            [sys.executable, "-c", code, json.dumps(sys.path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            close_fds=True,
        )
        self._pending = None
        # A segment comes back as ~40 MB; through the default 64 KiB pipe that is ~600 wake-ups
        # of each side, which on a busy machine cost more than the copy. 1 MiB is the default
        # limit for unprivileged processes (/proc/sys/fs/pipe-max-size); best effort.
        assert self._proc.stdout is not None
        with contextlib.suppress(ImportError, OSError, AttributeError):
            import fcntl

            fcntl.fcntl(self._proc.stdout.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)

    def submit(self, segment: Segment) -> None:
        """Ask the child to flatten ``segment``; read the answer with :meth:`result`."""
        if self._pending is not None:
            raise RuntimeError("a segment is already being flattened")
        self.start()
        assert self._proc is not None and self._proc.stdin is not None
        path = str(segment.path).encode()
        try:
            self._proc.stdin.write(_U32.pack(len(path)) + path)
            self._proc.stdin.flush()
        except OSError as exc:
            self._died()
            raise WorkerDied(f"flatten worker: {exc}") from exc
        self._pending = segment.number

    def result(self) -> FlatSegment:
        """The answer for the submitted segment (raises ``FlattenFailed`` or ``WorkerDied``)."""
        assert self._pending is not None and self._proc is not None
        out = self._proc.stdout
        assert out is not None
        self._pending = None
        try:
            status = _read_exact(out, 1)[0]
            payload = _read_exact(out, _U64.unpack(_read_exact(out, _U64.size))[0])
            if status != _OK:
                raise FlattenFailed(payload.decode(errors="replace"))
            batches, trace_keys, spans = pickle.loads(payload)
            ipc = _read_exact(out, _U64.unpack(_read_exact(out, _U64.size))[0])
        except (OSError, EOFError, ValueError, pickle.UnpicklingError) as exc:
            self._died()
            raise WorkerDied(f"flatten worker: {exc!r}") from exc
        return FlatSegment(ipc, batches, trace_keys, spans)

    def close(self, timeout: float = 5.0) -> None:
        """Stop the child: end of input makes it exit; kill it if it does not."""
        proc, self._proc, self._pending = self._proc, None, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def _died(self) -> None:
        proc = self._proc
        self.close(timeout=1.0)
        if proc is not None:
            log.warning("flatten worker %d exited (%s); restarting", proc.pid, proc.returncode)


def _read_exact(stream: IO[bytes], n: int) -> bytes:
    data = stream.read(n)
    if data is None or len(data) != n:
        raise EOFError("flatten worker closed its output")
    return data


def main() -> None:
    """The child: answer requests on stdin until end-of-file (the collector is gone)."""
    # Ctrl-C reaches the whole process group; the collector drains and then closes our input.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed goes to stderr, never into the protocol
    inp = sys.stdin.buffer
    while True:
        header = inp.read(_U32.size)
        if len(header) < _U32.size:
            return
        path = Path(inp.read(_U32.unpack(header)[0]).decode())
        try:
            spans, batches = columns(Segment(0, path).records())
            ipc = spans.to_ipc() if len(spans) else b""
            meta = pickle.dumps((batches, spans.trace_keys(), len(spans)), protocol=5)
            del spans
            answer = [bytes([_OK]), _U64.pack(len(meta)), meta, _U64.pack(len(ipc)), ipc]
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}".encode()
            answer = [bytes([_ERROR]), _U64.pack(len(message)), message]
        try:
            for part in answer:
                out.write(part)
            out.flush()
        except (BrokenPipeError, ValueError):
            return

"""A rules worker: one forked process per window pass that decodes stored bindings and runs the
detectors on them, beside the pass's own process.

Why: a stored-bindings pass spends most of its CPU in pure Python under one GIL (the rules
~8.5 s, the bindings' decode ~1.4 s of ~14 CPU s on the 1M-span frameworks store); a trace
whose stored binding holds is fully described by its row-less value from the trace index and
its binding's JSON text, so it can go to another process cheaply (text, not objects). Forked
once, before the pass loads anything (forking per batch instead write-protects the whole
loaded process each time: docs/benchmarks.md, "The rules on the second core").

Why it is safe although the parent has other threads (chDB's, a server's): the worker runs only
:func:`_serve` (decode, ``detect``, pickle) over what it is sent, never touches the store, and
leaves by ``os._exit`` (no atexit, finalizers or inherited buffers flushed). CPython re-creates
the GIL, the import lock and ``threading``'s state after a fork, glibc its malloc locks,
``logging`` its handlers' locks; anything else (a C library's lock held at the fork) could hang
it, which is why the parent waits with a deadline, then kills it and does the work itself
(:meth:`RulesWorker.collect` returns None): no finding is lost or doubled. What the worker logs
goes back with its findings and is emitted by the parent's handlers.
"""

from __future__ import annotations

import gc
import logging
import os
import pickle
import select
import signal
import struct
import sys
import time
import warnings
from collections.abc import Sequence
from typing import Any, NoReturn

import msgspec

from ._bindings import decode
from ._model import Finding, TraceData

__all__ = ["RulesWorker", "can_fork", "run_work"]

log = logging.getLogger("planscope.analyzer")
_HEADER = struct.Struct("<Q")
"""A message's length, before it (a message is complete only at that length)."""
COLLECT_EVERY = 10
"""The worker's cyclic collection, as the pass's (``_engine.COLLECT_EVERY_BATCHES``)."""

Work = list[tuple[TraceData, str]]
"""Row-less traces (from the trace index) and their stored bindings' text."""
Result = tuple[dict[str, list[Finding]], list[str]]
"""Findings by trace, and the traces whose binding did not decode (the parent binds them)."""


def can_fork() -> bool:
    """Linux only: elsewhere ``fork`` is absent (Windows) or unsafe once system frameworks run
    threads (macOS), and the rules run in the pass's process."""
    return sys.platform == "linux" and hasattr(os, "fork")


def _send(fd: int, value: object) -> None:
    payload = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
    data = memoryview(_HEADER.pack(len(payload)) + payload)
    while data:
        data = data[os.write(fd, data) :]


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes | None:
    """``size`` bytes from ``fd``; None at an end of file or past ``deadline``."""
    chunks, got = [], 0
    while got < size:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
        chunk = os.read(fd, min(size - got, 1 << 22))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _receive(fd: int, deadline: float | None = None) -> Any:
    """The next message; raises EOFError when none came whole (by ``deadline``)."""
    header = _read_exactly(fd, _HEADER.size, deadline)
    body = _read_exactly(fd, _HEADER.unpack(header)[0], deadline) if header else None
    if body is None:
        raise EOFError
    return pickle.loads(body)


def _portable(record: logging.LogRecord) -> logging.LogRecord:
    """A log record that pickles: its message rendered, its traceback as text."""
    if record.exc_info:
        if not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        record.exc_info = None
    record.msg, record.args = record.getMessage(), None
    return record


def run_work(work: Work, detectors: Sequence[Any]) -> Result:
    """Decode each binding into its row-less trace and run ``detect`` on it (every rule: a
    stored binding that holds makes its trace run every rule)."""
    from ._engine import detect  # the engine imports this module

    found: dict[str, list[Finding]] = {}
    failed: list[str] = []
    for trace, text in work:
        try:
            decode(trace, text)
        except msgspec.DecodeError:  # the pass binds it afresh (and logs it, as the loader)
            failed.append(trace.trace_id)
            continue
        found[trace.trace_id] = detect(trace, detectors)
    return found, failed


def _serve(requests: int, results: int, detectors: Sequence[Any]) -> NoReturn:
    """The worker: for each :data:`Work` message, decode and run ``detect``, answer a
    :data:`Result` and the log records made; exit at the end of the requests. Never returns
    (``os._exit`` whatever happens: the worker never runs the parent's code after the fork)."""
    code = 70
    try:
        # A signal meant to stop the program ends the worker at once (a server's graceful-stop
        # handler must not run here); the parent then does the work itself.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        records: list[logging.LogRecord] = []

        def relay(self: logging.Logger, record: logging.LogRecord) -> None:
            records.append(_portable(record))

        logging.Logger.callHandlers = relay  # type: ignore[method-assign]
        done = 0
        while True:
            try:
                work: Work = _receive(requests)
            except EOFError:
                break
            result = run_work(work, detectors)
            del work
            _send(results, (result, records))
            records.clear()
            done += 1
            if done % COLLECT_EVERY == 0:
                gc.collect(1)  # as the pass does: the rules' cycles (gc is paused, inherited)
        code = 0
    except BaseException:  # the parent does the work itself
        pass
    finally:
        os._exit(code)


class RulesWorker:
    """The parent's handle on a worker: :meth:`submit` a batch's work, :meth:`collect` its
    result (in order), :meth:`close` at the end of the pass."""

    def __init__(self, pid: int, requests: int, results: int) -> None:
        self.pid, self.requests, self.results = pid, requests, results
        self._closed = False
        self.alive = True
        """False once closed (died, killed, or the pass ended): no more work is sent."""

    @classmethod
    def start(cls, detectors: Sequence[Any]) -> RulesWorker | None:
        """Fork the worker (None when the fork fails: no memory, too many processes)."""
        req_r, req_w = os.pipe()
        res_r, res_w = os.pipe()
        try:
            with warnings.catch_warnings():
                # Python 3.12+ warns of fork in a process with threads: the worker runs only
                # _serve; what a lock held by another thread could do to it is bounded by
                # collect's deadline (see the module's docstring).
                warnings.filterwarnings("ignore", r".*multi-threaded.*fork", DeprecationWarning)
                pid = os.fork()
        except OSError as exc:
            for fd in (req_r, req_w, res_r, res_w):
                os.close(fd)
            log.warning("no rules worker (fork failed: %s); the rules run in the pass", exc)
            return None
        if pid == 0:
            os.close(req_w)
            os.close(res_r)
            _serve(req_r, res_w, detectors)
        os.close(req_r)
        os.close(res_w)
        return cls(pid, req_w, res_r)

    def submit(self, work: Work) -> bool:
        """Send a batch's work; False when the worker is gone (the caller does it)."""
        try:
            _send(self.requests, work)
        except OSError:  # a broken pipe: the worker died
            self.close(kill=True)
            return False
        return True

    def collect(self, timeout: float) -> Result | None:
        """The result of the oldest work submitted; None when the worker died, sent something
        unreadable or took longer than ``timeout`` seconds (it is then killed): the caller does
        that work itself, and the worker is closed."""
        try:
            result: Result
            records: list[logging.LogRecord]
            result, records = _receive(self.results, time.monotonic() + timeout)
        except Exception:  # EOFError: died or too slow; anything else: unreadable
            log.warning("rules worker %d gave no result; the pass does its work", self.pid)
            self.close(kill=True)
            return None
        for record in records:
            logging.getLogger(record.name).handle(record)
        return result

    def close(self, kill: bool = False) -> None:
        """End the worker (at once with ``kill``, else once it has read every request) and
        reap it; idempotent."""
        if self._closed:
            return
        self._closed = True
        self.alive = False
        os.close(self.requests)  # the worker's end of its requests: it exits
        os.close(self.results)
        try:
            deadline = time.monotonic() + (0 if kill else 10)
            while os.waitpid(self.pid, os.WNOHANG)[0] == 0:
                if time.monotonic() >= deadline:  # stuck: of no use any more
                    os.kill(self.pid, signal.SIGKILL)
                    os.waitpid(self.pid, 0)
                    break
                time.sleep(0.005)
        except (ChildProcessError, ProcessLookupError):  # reaped elsewhere (SIGCHLD ignored)
            pass

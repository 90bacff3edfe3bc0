"""A rules worker: one process per window pass that decodes stored bindings and runs the
detectors on them, beside the pass's own process.

Why: a stored-bindings pass spends most of its CPU in pure Python under one GIL (the rules
~8.5 s, the bindings' decode ~1.4 s of ~14 CPU s on the 1M-span frameworks store); a trace
whose stored binding holds is fully described by its row-less value from the trace index and
its binding's JSON text, so it can go to another process cheaply (text, not objects).

Why a fresh interpreter (``subprocess``: fork and exec at once), not ``os.fork``: the pass runs
in long-lived processes that already run other threads and other code (the collector's server,
chDB's threads, an OTel SDK's ``BatchSpanProcessor``, a notebook, a test runner). A forked
worker inherits all of it: the ``os.register_at_fork`` handlers other libraries registered (an
OTel SDK or Logfire processor restarts its export thread in the child), locks other threads
held at the fork, open descriptors and module state; in the fresh-clone CI it never reached a
rule (docs/benchmarks.md, speed16). An exec'd worker inherits only the two pipes it is given
and the environment: it is sent the parent's ``sys.path`` (so it imports the same code), then
the detectors (pickled) and the logging levels, then one message per batch. It leaves by
``os._exit``; a worker that dies, answers something unreadable or misses the deadline is killed
and the pass does that work itself (:meth:`RulesWorker.collect` returns None): no finding is
lost or doubled. What the worker logs goes back with its findings and is emitted by the
parent's handlers.
"""

from __future__ import annotations

import gc
import logging
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import time
import traceback
from collections.abc import Sequence
from typing import Any, NoReturn

import msgspec

from ._bindings import decode
from ._model import Finding, TraceData

__all__ = ["RulesWorker", "can_start", "run_work"]

log = logging.getLogger("planscope.analyzer")
_HEADER = struct.Struct("<Q")
"""A message's length, before it (a message is complete only at that length)."""
START_TIMEOUT_SECONDS = 60.0
"""How long the pass waits, at most, for its worker to start (a fresh interpreter importing the
analyzer: ~1 s on an idle core), before the first batch's own deadline runs."""
_READY = "ready"
"""The worker's first answer: started, the detectors read."""
COLLECT_EVERY = 10
"""The worker's cyclic collection, as the pass's (``_engine.COLLECT_EVERY_BATCHES``)."""

Work = list[tuple[TraceData, str]]
"""Row-less traces (from the trace index) and their stored bindings' text."""
Result = tuple[dict[str, list[Finding]], list[str]]
"""Findings by trace, and the traces whose binding did not decode (the parent binds them)."""

_BOOT = """\
import os, pickle, struct, sys
requests, results = int(sys.argv[1]), int(sys.argv[2])
def read(size):
    data = b""
    while len(data) < size:
        chunk = os.read(requests, size - len(data))
        if not chunk:
            os._exit(70)
        data += chunk
    return data
sys.path[:] = pickle.loads(read(struct.unpack("<Q", read(8))[0]))
from planscope_analyzer._worker import serve
serve(requests, results)
"""
"""The worker's first lines (stdlib only): the parent's ``sys.path`` before anything of
planscope is imported, so the worker runs the same code as the pass."""


def can_start() -> bool:
    """POSIX only (``pass_fds``); elsewhere the rules run in the pass's process."""
    return os.name == "posix"


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


def _levels() -> tuple[int, dict[str, int]]:
    """What the parent's logging lets through: ``logging.disable``'s level and the levels set
    on the root and on planscope's loggers (the worker sets the same, so it relays the records
    the parent would have emitted, no more)."""
    loggers = logging.root.manager.loggerDict.items()
    levels = {n: lg.level for n, lg in loggers if isinstance(lg, logging.Logger) and lg.level}
    levels = {n: v for n, v in levels.items() if n.split(".")[0] == "planscope"}
    levels[""] = logging.root.level
    return logging.root.manager.disable, levels


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


def serve(requests: int, results: int) -> NoReturn:
    """The worker (after :data:`_BOOT`): read the detectors and logging levels, then for each
    :data:`Work` message decode and run ``detect``, answer a :data:`Result` and the log records
    made; exit at the end of the requests. Never returns (``os._exit`` whatever happens)."""
    code = 70
    try:
        # A signal meant to stop the program ends the worker at once; the parent then does
        # the work itself (and a terminal's ^C reaches the whole process group).
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        detectors: Sequence[Any]
        disabled: int
        levels: dict[str, int]
        detectors, (disabled, levels) = _receive(requests)
        logging.disable(disabled)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
        records: list[logging.LogRecord] = []

        def relay(self: logging.Logger, record: logging.LogRecord) -> None:
            records.append(_portable(record))

        logging.Logger.callHandlers = relay  # type: ignore[method-assign]
        _send(results, _READY)
        gc.disable()  # as the pass (``_engine._gc_paused``): its rules' cycles collected below
        gc.freeze()  # the modules imported so far are never walked
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
                gc.collect(1)  # as the pass does (``_engine._PASS_GENERATION``)
        code = 0
    except BaseException:  # the parent does the work itself; why, on the shared stderr
        traceback.print_exc()
    finally:
        os._exit(code)


class RulesWorker:
    """The parent's handle on a worker: :meth:`submit` a batch's work, :meth:`collect` its
    result (in order), :meth:`close` at the end of the pass."""

    def __init__(self, process: subprocess.Popen[bytes], requests: int, results: int) -> None:
        self.process, self.requests, self.results = process, requests, results
        self.pid = process.pid
        self._closed = False
        self._ready = False
        self.alive = True
        """False once closed (died, killed, or the pass ended): no more work is sent."""

    @classmethod
    def start(cls, detectors: Sequence[Any]) -> RulesWorker | None:
        """Start the worker and send it the detectors (None when it cannot start: no memory,
        too many processes, detectors that do not pickle)."""
        req_r, req_w = os.pipe()
        res_r, res_w = os.pipe()
        try:
            # fork and exec in one step (no Python code runs between them in the child):
            # nothing of this process's threads, locks or fork handlers reaches the worker
            process = subprocess.Popen(
                [sys.executable, "-c", _BOOT, str(req_r), str(res_w)],
                stdin=subprocess.DEVNULL,
                pass_fds=(req_r, res_w),
            )
        except OSError as exc:
            os.close(req_w)
            os.close(res_r)
            log.warning("no rules worker (%s); the rules run in the pass", exc)
            return None
        finally:  # the worker's ends
            os.close(req_r)
            os.close(res_w)
        worker = cls(process, req_w, res_r)
        try:
            _send(req_w, sys.path)
            _send(req_w, (tuple(detectors), _levels()))
        except Exception as exc:  # a detector that does not pickle; a worker that died
            log.warning("no rules worker (%s); the rules run in the pass", exc)
            worker.close(kill=True)
            return None
        return worker

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
            if not self._ready:  # its start does not count against the batch's deadline
                if _receive(self.results, time.monotonic() + START_TIMEOUT_SECONDS) != _READY:
                    raise EOFError
                self._ready = True
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
        if not kill:
            try:
                self.process.wait(10)
                return
            except subprocess.TimeoutExpired:  # stuck: of no use any more
                pass
        self.process.kill()
        self.process.wait()

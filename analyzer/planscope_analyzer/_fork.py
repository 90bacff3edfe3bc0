"""Run a pure-Python function in a forked child and get its (picklable) result back.

Why a fork: the analyzer's rules are pure Python over traces already in memory, serialised by
the GIL; a forked child sees those traces copy-on-write (nothing re-loaded, nothing pickled on
the way in) and sends back only its result. Why it is safe although the parent has other
threads (the loader, chDB's, a server's): the child runs only the function handed to it, on
in-memory Python objects, and leaves by ``os._exit`` (no atexit, no finalizers, no flush of
inherited buffers, no store). Locks another thread held at the fork stay held in the child:
CPython re-creates the GIL, the import lock and ``threading``'s state, glibc its malloc locks,
``logging`` its handlers' locks; anything else the function took (a C library's lock) could
hang the child, which is why the parent waits with a deadline, kills a child that misses it
and does that part itself (:meth:`Child.result` returns None: the caller runs the part).

>>> child = fork_call(lambda: 6 * 7) if can_fork() else None
>>> child.result(10.0) if child else (42,)
(42,)
"""

from __future__ import annotations

import logging
import os
import pickle
import select
import signal
import struct
import sys
import time
import warnings
from collections.abc import Callable
from typing import Generic, NoReturn, TypeVar

__all__ = ["Child", "can_fork", "fork_call"]

log = logging.getLogger("planscope.analyzer")
T = TypeVar("T")
_HEADER = struct.Struct("<Q")
"""The payload's length, before it: a payload is complete only when that many bytes came (a
child killed mid-write, or one whose pipe another fork inherited, is told by its length, not
by an end of file)."""


def can_fork() -> bool:
    """Linux only: elsewhere ``fork`` is absent (Windows) or unsafe once system frameworks
    run threads (macOS), and the rules run serially."""
    return sys.platform == "linux" and hasattr(os, "fork")


def _portable(record: logging.LogRecord) -> logging.LogRecord:
    """A log record that pickles: its message rendered, its traceback as text."""
    if record.exc_info:
        if not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        record.exc_info = None
    record.msg, record.args = record.getMessage(), None
    return record


def _child_main(write_fd: int, call: Callable[[], object]) -> NoReturn:
    """In the child: run ``call``, send its result and the log records it made; never returns
    (``os._exit`` whatever happens, so the child never runs the parent's code after the fork)."""
    code = 70
    try:
        # A signal meant to stop the program ends the child at once; the parent sees an
        # incomplete result and does the part itself (a handler of the parent's, e.g. a
        # server's graceful stop, would otherwise run in the child).
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        records: list[logging.LogRecord] = []
        # The parent's handlers re-emit what the child logs (pytest's capture, a queue to a
        # thread that does not exist here): records go back with the result.
        logging.Logger.callHandlers = lambda _self, record: records.append(  # type: ignore[method-assign]
            _portable(record)
        )
        value = call()
        payload = pickle.dumps((value, records), pickle.HIGHEST_PROTOCOL)
        data = memoryview(_HEADER.pack(len(payload)) + payload)
        while data:
            data = data[os.write(write_fd, data) :]
        code = 0
    except BaseException:  # the parent does this part itself
        pass
    finally:
        os._exit(code)


class Child(Generic[T]):
    """A forked child computing a value; :meth:`result` collects it (or kills the child)."""

    def __init__(self, pid: int, read_fd: int) -> None:
        self.pid = pid
        self.fd = read_fd
        self._done = False

    def result(self, timeout: float) -> tuple[T] | None:
        """``(value,)``, or None when the child died, was killed, sent something incomplete
        or took longer than ``timeout`` seconds (then it is killed): the caller computes the
        value itself. The child is always reaped."""
        deadline = time.monotonic() + timeout
        chunks: list[bytes] = []
        need, got = _HEADER.size, 0
        header = True
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                    log.warning("rules child %d took over %.0f s; killed", self.pid, timeout)
                    return None
                chunk = os.read(self.fd, max(need - got, 1 << 20))
                if not chunk:
                    log.warning("rules child %d ended without its result", self.pid)
                    return None
                chunks.append(chunk)
                got += len(chunk)
                if header and got >= _HEADER.size:
                    data = b"".join(chunks)
                    need = _HEADER.size + _HEADER.unpack_from(data)[0]
                    header = False
                    chunks = [data]
                if not header and got >= need:
                    break
            value, records = pickle.loads(b"".join(chunks)[_HEADER.size : need])
        except Exception:  # an unreadable result: do the part here
            log.exception("rules child %d sent an unreadable result", self.pid)
            return None
        finally:
            self.close(finished=not header and got >= need)
        for record in records:
            logging.getLogger(record.name).handle(record)
        return (value,)

    def close(self, finished: bool = False) -> None:
        """Reap the child (killed first unless it ``finished``: sent its whole result, so it
        is exiting), close the pipe; idempotent."""
        if self._done:
            return
        self._done = True
        os.close(self.fd)
        try:
            if not finished:
                os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ChildProcessError, ProcessLookupError):  # reaped elsewhere (SIGCHLD ignored)
            pass


def fork_call(call: Callable[[], T]) -> Child[T] | None:
    """Fork a child that runs ``call`` (over objects the parent already holds: the child sees
    them copy-on-write) and sends back its result; None when the fork fails (no memory, too
    many processes): the caller runs ``call`` itself."""
    read_fd, write_fd = os.pipe()
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns of fork in a process with threads: the child runs only
            # ``call`` and exits; what a lock held by another thread could do to it is bounded
            # by Child.result's deadline (see the module's docstring).
            warnings.filterwarnings("ignore", r".*multi-threaded.*fork", DeprecationWarning)
            pid = os.fork()
    except OSError as exc:
        os.close(read_fd)
        os.close(write_fd)
        log.warning("no rules child (fork failed: %s); the rules run here", exc)
        return None
    if pid == 0:
        os.close(read_fd)
        _child_main(write_fd, call)
    os.close(write_fd)
    return Child(pid, read_fd)

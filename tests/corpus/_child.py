"""Checks that must run in a process of their own (a play takes the process's global tracer
provider, an instrumentor's wrappers or a framework's dispatcher for good), run cheaply.

Children fork from one server process that imported ``tests.corpus`` (every corpus framework,
~12 s) once, so each starts as a fresh interpreter that had just imported it would, without
paying the import again. Importing the corpus starts no thread, which is what makes forking it
safe.
"""

from __future__ import annotations

import importlib
import multiprocessing
import traceback
from multiprocessing.connection import Connection

_CHILDREN = multiprocessing.get_context("forkserver")
_CHILDREN.set_forkserver_preload(["tests.corpus"])


def check_in_child(module: str, check: str, *args: str, timeout: float = 600) -> None:
    """Call ``module.check(*args)`` in a child process of its own; its traceback, if it fails,
    fails the caller with an AssertionError."""
    receive, send = _CHILDREN.Pipe(duplex=False)
    child = _CHILDREN.Process(target=_run, args=(send, module, check, args))
    child.start()
    send.close()
    try:
        assert receive.poll(timeout), f"{module}.{check} still running after {timeout} s"
        try:
            failure = receive.recv()
        except EOFError:  # the child died without a word (a crash in native code)
            child.join(5)
            failure = f"{module}.{check} died, exit code {child.exitcode}"
    finally:
        child.kill()
        child.join()
    assert failure is None, failure


def _run(send: Connection, module: str, check: str, args: tuple[str, ...]) -> None:
    try:
        getattr(importlib.import_module(module), check)(*args)
    except BaseException:  # any failure goes back to the caller, whole
        send.send(traceback.format_exc()[-6000:])
    else:
        send.send(None)

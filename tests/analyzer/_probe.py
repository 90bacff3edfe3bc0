"""A detector for the rules worker's tests, in a module of its own: the worker is a fresh
interpreter that unpickles its detectors, so it imports this (light) module, not the test
file (which imports the whole corpus: ~18 CPU s)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from planscope_analyzer._model import Finding, TraceData


class Probe:
    """A detector that finds nothing and notes, in ``seen``, the traces a rules worker ran it
    on; in the worker, ``fault`` then ends it (``exit``, ``kill``), stalls it (``hang``) or
    raises (``raise``). The pass never sees the worker's memory: the file is the record."""

    kind, version = "probe", 1

    def __init__(self, seen: Path, fault: str = "") -> None:
        self.seen, self.fault, self.parent = seen, fault, os.getpid()

    def detect(self, trace: TraceData) -> list[Finding]:
        if os.getpid() == self.parent:
            return []
        with self.seen.open("a") as out:
            out.write(trace.trace_id + "\n")
        if self.fault == "exit":
            os._exit(3)
        if self.fault == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if self.fault == "hang":
            time.sleep(3600)
        if self.fault == "raise":
            raise RuntimeError("only in the worker")
        return []

"""Run one source's agent through both scenarios: ``python -m tests.conformance.agents SOURCE``.

Environment: ``CONFORMANCE_MODEL`` (the fake model server's ``/v1`` URL) and
``CONFORMANCE_OTLP`` (the collector: ``http://host:port`` or ``grpc://host:port``). Prints one
JSON line: per scenario its ``trace_id``, ``start_ns`` and ``end_ns``; ``--dump FILE`` writes
the spans as OTLP/JSON.

A process per source keeps each framework's global state (patched clients, trace processors,
tracer providers) out of the others and out of pytest.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from . import JS_SOURCES, SOURCES
from ._common import SCENARIOS, telemetry


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.agents")
    parser.add_argument("source", choices=SOURCES)
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--scenario", action="append", choices=SCENARIOS)
    args = parser.parse_args()
    if args.source in JS_SOURCES:  # the same contract, in Node.js: hand over to it
        argv = ["node", str(Path(__file__).parents[3] / JS_SOURCES[args.source])]
        argv += ["--dump", str(args.dump)] if args.dump else []
        argv += [a for s in args.scenario or [] for a in ("--scenario", s)]
        os.execvp(argv[0], argv)
    tel = telemetry(f"conformance-{args.source.replace('_', '-')}")
    traces: dict[str, dict[str, object]] = {}

    @contextmanager
    def mark(scenario: str) -> Iterator[None]:
        """Name the trace that one scenario produced (it must produce exactly one)."""
        before = len(tel.memory.get_finished_spans())
        start = time.time_ns()
        yield
        end = time.time_ns()
        tel.provider.force_flush()
        new = tel.memory.get_finished_spans()[before:]
        ids = {format(s.context.trace_id, "032x") for s in new if s.context is not None}
        assert len(ids) == 1, f"{scenario}: {len(ids)} traces: {sorted(s.name for s in new)}"
        traces[scenario] = {"trace_id": ids.pop(), "start_ns": start, "end_ns": end}

    module = importlib.import_module(f".{args.source}", __package__)
    module.run(
        tel.provider, os.environ["CONFORMANCE_MODEL"], args.scenario or list(SCENARIOS), mark
    )
    tel.finish(args.dump)
    print(json.dumps(traces))


if __name__ == "__main__":
    main()

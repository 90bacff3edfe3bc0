"""Insert cost of migration 0010 (the clickhouseexporter's four map bloom-filter indexes).

The same Arrow segment (the collector_ingest workload) is inserted into ``otel_traces`` of fresh
embedded stores migrated with and without 0010, interleaved, median of the repetitions.

    .venv/bin/python benchmarks/exporter_indexes.py [--traces 216] [--repeat 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, machine_facts
from collector_ingest import encode_bodies
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from planscope_collector._otlp import SpanColumns
from planscope_collector.storage import open_store


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=216, help="28 spans each")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {machine_facts()}")
    columns = SpanColumns()
    for body in encode_bodies(max(1, args.traces // 36), 36, 1):
        columns.add(ExportTraceServiceRequest.FromString(body), None)
    body = columns.to_ipc()
    without = Path(tempfile.mkdtemp())
    for sql in (REPO / "collector/planscope_collector/migrations").glob("*.sql"):
        if not sql.name.startswith("0010_"):
            shutil.copy(sql, without / sql.name)
    variants: dict[str, Path | None] = {"with 0010": None, "without 0010": without}
    times: dict[str, list[float]] = {label: [] for label in variants}
    for rep in range(args.repeat):
        order = list(variants) if rep % 2 == 0 else list(reversed(variants))
        for label in order:
            store = open_store(f"chdb://{tempfile.mkdtemp()}/store")
            store.migrate(directory=variants[label])
            start = time.perf_counter()
            store.insert_spans(body)
            times[label].append(time.perf_counter() - start)
            store.close()
    for label, values in times.items():
        runs = [round(v * 1000) for v in values]
        print(f"{label}: median {statistics.median(values) * 1000:.0f} ms per insert {runs}")
    ratio = statistics.median(times["without 0010"]) / statistics.median(times["with 0010"])
    print(f"{len(columns)} spans; insert throughput with / without the indexes: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

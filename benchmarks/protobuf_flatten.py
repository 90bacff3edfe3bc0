"""Flattening OTLP in ClickHouse (``Protobuf`` input format) against the Python flattener.

Both sides start from the same spooled OTLP protobuf requests (one 32 MiB segment's worth) and
end in the same place: rows of ``otel_traces``'s columns inserted into a ``Null``-engine copy in
chDB, so only decoding and flattening are timed (no MergeTree part, no view).

* ``python``: ``ExportTraceServiceRequest.FromString`` + ``SpanColumns.add`` (GC paused) +
  ``to_ipc``, then ``INSERT ... FORMAT ArrowStream`` of that stream (what the writer did per
  segment before the spool kept Arrow).
* ``clickhouse``: the requests as length-delimited messages, read by ClickHouse's ``Protobuf``
  format and flattened by the collector's own SQL (``storage._protobuf``: what the writer runs
  for requests with scalar values only, spool format 3).

CPU is this process's (``time.process_time``: chDB's threads included), median of repetitions,
the two sides interleaved. Then the rows of both are compared cell by cell on the workload and
on a request with a double, a list and a repeated key: only the list differs (a nested value,
which the collector leaves to the Python flattener).

    .venv/bin/python benchmarks/protobuf_flatten.py [--workload planscope|openinference]
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import collector_ingest
from _common import median, print_table
from planscope_collector.storage._protobuf import literal, request_parts, settings_clause

TRACES = """Timestamp DateTime64(9), TraceId String, SpanId String, ParentSpanId String,
TraceState String, SpanName LowCardinality(String), SpanKind LowCardinality(String),
ServiceName LowCardinality(String), ResourceAttributes Map(LowCardinality(String), String),
ScopeName String, ScopeVersion String, SpanAttributes Map(LowCardinality(String), String),
Duration UInt64, StatusCode LowCardinality(String), StatusMessage String,
`Events.Timestamp` Array(DateTime64(9)), `Events.Name` Array(LowCardinality(String)),
`Events.Attributes` Array(Map(LowCardinality(String), String)), `Links.TraceId` Array(String),
`Links.SpanId` Array(String), `Links.TraceState` Array(String),
`Links.Attributes` Array(Map(LowCardinality(String), String)), Project LowCardinality(String)"""


class Bench:
    def __init__(self, directory: Path) -> None:
        import chdb.session

        self.dir = directory
        self.session = chdb.session.Session(str(directory / "db"))
        self.session.query(f"CREATE TABLE null_traces ({TRACES}) ENGINE = Null")
        self.session.query(f"CREATE TABLE mem_traces ({TRACES}) ENGINE = Memory")

    def clickhouse(self, bodies: list[bytes], table: str = "null_traces") -> None:
        """The collector's own SQL (``storage._protobuf``), as ``Store.insert_otlp_spans``
        runs it on chDB."""
        from planscope_collector.storage._protobuf import (
            SETTINGS,
            STRUCTURE,
            flatten_select,
            schema_settings,
        )

        path = self.dir / "segment.pb"
        path.write_bytes(b"".join(part for b in bodies for part in request_parts(b, "")))
        source = f"file({literal(str(path))}, 'Protobuf', {literal(STRUCTURE)})"
        settings = {**SETTINGS, **schema_settings(self.dir / "db")}
        sql = f"INSERT INTO {table} {flatten_select(source)} SETTINGS {settings_clause(settings)}"
        self.session.query(sql)

    def python(self, bodies: list[bytes], table: str = "null_traces") -> int:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )
        from planscope_collector._otlp import SpanColumns

        columns = SpanColumns()
        gc.disable()
        try:
            for body in bodies:
                columns.add(ExportTraceServiceRequest.FromString(body), None)
        finally:
            gc.enable()
        path = self.dir / "segment.arrow"
        path.write_bytes(bytes(columns.to_ipc()))
        self.session.query(f"INSERT INTO {table} SELECT * FROM file('{path}', 'ArrowStream')")
        return len(columns)

    def differing_cells(self, bodies: list[bytes]) -> dict[str, int]:
        """Cells that differ between the two flatteners' rows, per column (rows by SpanId)."""
        self.session.query("TRUNCATE TABLE mem_traces")
        self.python(bodies, "mem_traces")
        self.session.query("CREATE TABLE IF NOT EXISTS mem_ch AS mem_traces ENGINE = Memory")
        self.session.query("TRUNCATE TABLE mem_ch")
        self.clickhouse(bodies, "mem_ch")
        from planscope_collector.storage import TRACE_COLUMNS

        columns = list(TRACE_COLUMNS)
        diffs = ", ".join(f"countIf(NOT (p.`{c}` = c.`{c}`)) AS `{c}`" for c in columns)
        result = self.session.query(
            f"SELECT {diffs} FROM mem_traces AS p INNER JOIN mem_ch AS c ON p.SpanId = c.SpanId "
            "AND p.TraceId = c.TraceId",
            "JSONCompact",
        )
        import json

        row = json.loads(str(result))["data"][0]
        return {c: int(n) for c, n in zip(columns, row, strict=True) if int(n)}


def _odd_values_request() -> bytes:
    """One span with the value kinds the workloads lack: a double, a list, a repeated key."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue

    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = b"\x01" * 16, b"\x02" * 8, "odd"
    span.start_time_unix_nano = span.end_time_unix_nano = time.time_ns()
    span.attributes.extend(
        [
            KeyValue(key="cost", value=AnyValue(double_value=1e21)),
            KeyValue(
                key="tags", value=AnyValue(array_value=ArrayValue(values=[AnyValue(int_value=1)]))
            ),
            KeyValue(key="k", value=AnyValue(string_value="first")),
            KeyValue(key="k", value=AnyValue(string_value="last")),
        ]
    )
    return request.SerializeToString()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=("planscope", "openinference"), default="planscope")
    parser.add_argument("--bodies", type=int, default=18, help="requests per segment")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    collector_ingest.WORKLOAD = args.workload
    bench = Bench(Path(tempfile.mkdtemp(prefix="planscope-bench-pb-")))
    cpu: dict[str, list[float]] = {"python": [], "clickhouse": []}
    spans = 0
    for rep in range(args.repeat + 1):  # the first repetition warms up and is dropped
        bodies = collector_ingest.encode_bodies(args.bodies, 36, salt=0xB000 + rep)
        order = ["python", "clickhouse"] if rep % 2 else ["clickhouse", "python"]
        for side in order:
            t0 = time.process_time()
            if side == "python":
                spans = bench.python(bodies)
            else:
                bench.clickhouse(bodies)
            if rep:
                cpu[side].append(time.process_time() - t0)
    rows: list[list[Any]] = [
        [side, median(values) * 1000, median(values) / spans * 1e6] for side, values in cpu.items()
    ]
    print_table(
        f"Decode + flatten of {spans:,} spans ({args.workload}) into a Null otel_traces copy, "
        "CPU of this process (median)",
        ["flattener", "ms/segment", "us/span"],
        rows,
    )
    workload = collector_ingest.encode_bodies(2, 36, salt=0xBEEF)
    print("cells that differ, workload:", bench.differing_cells(workload) or "none")
    print(
        "cells that differ, double/list/repeated key (the list only is expected):",
        bench.differing_cells([_odd_values_request()]),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

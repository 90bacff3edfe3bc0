"""Flattening OTLP in ClickHouse (``Protobuf`` input format) against the Python flattener.

Both sides start from the same spooled OTLP protobuf requests (one 32 MiB segment's worth) and
end in the same place: rows of ``otel_traces``'s columns inserted into a ``Null``-engine copy in
chDB, so only decoding and flattening are timed (no MergeTree part, no view).

* ``python``: ``ExportTraceServiceRequest.FromString`` + ``SpanColumns.add`` (GC paused) +
  ``to_ipc``, then ``INSERT ... FORMAT ArrowStream`` of that stream (what the writer did per
  segment before the spool kept Arrow).
* ``clickhouse``: the requests as length-delimited messages, read by ClickHouse's ``Protobuf``
  format with a schema of the OTLP messages (the same field numbers; ``AnyValue``'s oneof
  through ``input_format_protobuf_oneof_presence``), ``ARRAY JOIN`` over resource, scope and
  span, attribute maps built by ``mapFromArrays``.

CPU is this process's (``time.process_time``: chDB's threads included), median of repetitions,
the two sides interleaved. Then the rows of both are compared cell by cell on the workload and
on a request with the value kinds the workloads lack (a double, a list, a repeated key).

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

PROTO = """
syntax = "proto3";
package bench;
message AnyValue {
  oneof value {
    string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
    ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message InstrumentationScope { string name = 1; string version = 2; }
message Status { string message = 2; int32 code = 3; }
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }
message Link {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4;
}
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4;
  string name = 5; int32 kind = 6; fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9; repeated Event events = 11;
  repeated Link links = 13; Status status = 15;
}
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
"""

_AV = (
    "Tuple(value Enum8('none' = 0, 'string_value' = 1, 'bool_value' = 2, 'int_value' = 3, "
    "'double_value' = 4, 'array_value' = 5, 'kvlist_value' = 6, 'bytes_value' = 7), "
    "string_value String, bool_value Bool, int_value Int64, double_value Float64, "
    "bytes_value String)"
)
_KV = f"Array(Tuple(key String, value {_AV}))"
STRUCTURE = (
    f"resource_spans Array(Tuple(resource Tuple(attributes {_KV}), scope_spans Array(Tuple("
    "scope Tuple(name String, version String), spans Array(Tuple(trace_id String, "
    "span_id String, trace_state String, parent_span_id String, name String, kind Int32, "
    f"start_time_unix_nano UInt64, end_time_unix_nano UInt64, attributes {_KV}, "
    f"events Array(Tuple(time_unix_nano UInt64, name String, attributes {_KV})), "
    f"links Array(Tuple(trace_id String, span_id String, trace_state String, attributes {_KV})), "
    "status Tuple(message String, code Int32)))))))"
)
TRACES = """Timestamp DateTime64(9), TraceId String, SpanId String, ParentSpanId String,
TraceState String, SpanName LowCardinality(String), SpanKind LowCardinality(String),
ServiceName LowCardinality(String), ResourceAttributes Map(LowCardinality(String), String),
ScopeName String, ScopeVersion String, SpanAttributes Map(LowCardinality(String), String),
Duration UInt64, StatusCode LowCardinality(String), StatusMessage String,
`Events.Timestamp` Array(DateTime64(9)), `Events.Name` Array(LowCardinality(String)),
`Events.Attributes` Array(Map(LowCardinality(String), String)), `Links.TraceId` Array(String),
`Links.SpanId` Array(String), `Links.TraceState` Array(String),
`Links.Attributes` Array(Map(LowCardinality(String), String)), Project LowCardinality(String)"""
FUNCTIONS = (
    "CREATE FUNCTION IF NOT EXISTS bench_av AS (v) -> multiIf("
    "v.value = 'string_value', v.string_value, v.value = 'int_value', toString(v.int_value), "
    "v.value = 'bool_value', if(v.bool_value, 'true', 'false'), "
    "v.value = 'double_value', toString(v.double_value), "
    "v.value = 'bytes_value', base64Encode(v.bytes_value), '')",
    "CREATE FUNCTION IF NOT EXISTS bench_kv AS (a) -> "
    "mapFromArrays(arrayMap(x -> x.key, a), arrayMap(x -> bench_av(x.value), a))",
)
FLATTEN = """SELECT
 fromUnixTimestamp64Nano(toInt64(sp.start_time_unix_nano)), lower(hex(sp.trace_id)),
 lower(hex(sp.span_id)), lower(hex(sp.parent_span_id)), sp.trace_state, sp.name,
 if(sp.kind BETWEEN 0 AND 5,
    ['Unspecified', 'Internal', 'Server', 'Client', 'Producer', 'Consumer'][sp.kind + 1],
    'Unspecified'),
 (bench_kv(rs.resource.attributes) AS res)['service.name'], res, ss.scope.name,
 ss.scope.version, bench_kv(sp.attributes),
 if(sp.end_time_unix_nano = 0, 0, sp.end_time_unix_nano - sp.start_time_unix_nano),
 if(sp.status.code BETWEEN 0 AND 2, ['Unset', 'Ok', 'Error'][sp.status.code + 1], 'Unset'),
 sp.status.message,
 arrayMap(e -> fromUnixTimestamp64Nano(toInt64(e.time_unix_nano)), sp.events),
 arrayMap(e -> e.name, sp.events), arrayMap(e -> bench_kv(e.attributes), sp.events),
 arrayMap(l -> lower(hex(l.trace_id)), sp.links), arrayMap(l -> lower(hex(l.span_id)), sp.links),
 arrayMap(l -> l.trace_state, sp.links), arrayMap(l -> bench_kv(l.attributes), sp.links),
 if(res['planscope.project'] != '', res['planscope.project'], 'default')
FROM file('{path}', 'Protobuf', $${structure}$$)
ARRAY JOIN resource_spans AS rs ARRAY JOIN rs.scope_spans AS ss ARRAY JOIN ss.spans AS sp
SETTINGS format_schema = '{schema}:ExportTraceServiceRequest',
 input_format_protobuf_oneof_presence = 1"""


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


class Bench:
    def __init__(self, directory: Path) -> None:
        import chdb.session

        self.dir = directory
        self.schema = directory / "otlp_trace.proto"
        self.schema.write_text(PROTO)
        self.session = chdb.session.Session(str(directory / "db"))
        self.session.query(f"CREATE TABLE null_traces ({TRACES}) ENGINE = Null")
        self.session.query(f"CREATE TABLE mem_traces ({TRACES}) ENGINE = Memory")
        for statement in FUNCTIONS:
            self.session.query(statement)

    def clickhouse(self, bodies: list[bytes], table: str = "null_traces") -> None:
        path = self.dir / "segment.pb"
        path.write_bytes(b"".join(_varint(len(b)) + b for b in bodies))
        sql = FLATTEN.format(path=path, structure=STRUCTURE, schema=self.schema)
        self.session.query(f"INSERT INTO {table} {sql}")

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
        "cells that differ, double/list/repeated key:",
        bench.differing_cells([_odd_values_request()]),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

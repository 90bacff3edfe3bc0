"""The writer's CPU per persisted span, stage by stage (spool segment -> chDB insert).

One process, one migrated chDB store (merges stopped), the collector's own code. Per
repetition, ``--bodies`` requests of ``collector_ingest.py``'s workload (fresh trace ids) go
through ``_ingest.accept`` into a spool, are sealed into one segment, and the writer's steps run
on it one at a time, each timed with ``time.process_time`` (chDB's threads included):

* ``read``: ``Segment.records`` (the file read and the records' CRC checks);
* ``token``: ``Spool.dedup_token``;
* ``block``: ``_writer.flatten_records`` (format-3 headers, the protobuf stream's pieces);
* ``temp file``: the stream written to the file chDB reads (as ``Store.insert_otlp_spans``);
* ``decode``: ClickHouse's ``Protobuf`` format alone (the stream into a ``Null`` table of the
  flatten's source structure);
* ``flatten``: decode + ``_protobuf.flatten_select`` into a ``Null`` copy of ``otel_traces``'s
  columns, and the same with one column group replaced by a constant (``-X``: what X costs);
* ``insert (writer)``: ``_writer.insert`` (the spans into ``otel_traces`` with every view,
  then the ingest-batch rows), as the writer runs it; ``of it: batches`` is the ingest-batch
  insert alone (again, under another token).

With ``--fixed`` the same for a segment of one request of one span (the fixed cost per insert).

    .venv/bin/python benchmarks/writer_cost.py --workload planscope [--bodies 17] [--repeat 5]
    .venv/bin/python benchmarks/writer_cost.py --fixed --compare-with main --rounds 3
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import collector_ingest
from _common import REPO, median, print_table, write_json
from protobuf_flatten import TRACES

#: Column groups of the flatten, replaced by a constant of their type in the ``-X`` variants.
GROUPS: dict[str, dict[str, str]] = {
    "ids": {c: "''" for c in ("TraceId", "SpanId", "ParentSpanId")},
    "span attrs": {"SpanAttributes": "map()"},
    "resource attrs": {
        "ResourceAttributes": "map()",
        "ServiceName": "''",
        "Project": "'default'",
    },
    "events": {
        "Events.Timestamp": "[]",
        "Events.Name": "[]",
        "Events.Attributes": "[]",
    },
}


def _spool_segment(directory: Path, bodies: list[bytes]) -> tuple[Any, Any]:
    from planscope_collector._ingest import IngestLimits, RecentBatches, accept
    from planscope_collector._spool import Spool

    spool = Spool(directory, segment_max_bytes=1 << 40)
    limits = IngestLimits(1 << 30, 1 << 40, 1)
    recent = RecentBatches(60)
    for body in bodies:
        accept(spool, recent, limits, body=body, content_type="application/x-protobuf",
               content_encoding=None, project=None)  # fmt: skip
    (segment,) = spool.seal()
    return spool, segment


def _one_span_body(salt: int) -> bytes:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    template = collector_ingest.build_template(1)
    if collector_ingest.WORKLOAD == "openinference":
        collector_ingest.as_openinference(template)
    request = ExportTraceServiceRequest()
    rs = request.resource_spans.add()
    rs.resource.CopyFrom(template.resource_spans[0].resource)
    ss = rs.scope_spans.add()
    ss.scope.CopyFrom(template.resource_spans[0].scope_spans[0].scope)
    span = ss.spans.add()
    span.CopyFrom(template.resource_spans[0].scope_spans[0].spans[2])
    span.trace_id = salt.to_bytes(8, "big") + bytes(8)
    return request.SerializeToString()


def _select(columns: dict[str, str], source: str) -> str:
    from planscope_collector.storage._protobuf import _COLUMNS, flatten_select

    if not columns:
        return flatten_select(source)
    body = ",\n ".join(f"{columns.get(n, sql)} AS `{n}`" for n, sql in _COLUMNS.items())
    return (
        f"SELECT\n {body}\nFROM {source}\nARRAY JOIN resource_spans AS rs "
        "ARRAY JOIN rs.scope_spans AS ss ARRAY JOIN ss.spans AS sp"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=("planscope", "openinference"), default="planscope")
    parser.add_argument("--bodies", type=int, default=17, help="requests per segment")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--fixed", action="store_true", help="one request of one span")
    parser.add_argument("--no-groups", action="store_true", help="skip the -X variants")
    parser.add_argument("--json", help="also write the medians (seconds per segment) here")
    parser.add_argument(
        "--compare-with",
        metavar="REV",
        help="run this script with git revision REV's packages and with this tree's, "
        "alternating, --rounds times, and print the ratios of the writer's total",
    )
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.compare_with:
        return compare(args)
    collector_ingest.WORKLOAD = args.workload

    from planscope_collector._writer import flatten_records, insert
    from planscope_collector.storage import open_store
    from planscope_collector.storage._protobuf import (
        SETTINGS,
        STRUCTURE,
        literal,
        schema_settings,
        settings_clause,
    )

    root = Path(tempfile.mkdtemp(prefix="planscope-writer-cost-"))
    try:
        store = open_store(f"chdb://{root / 'data'}")
        store.migrate()
        store.command("SYSTEM STOP MERGES")
        store.command(f"CREATE TABLE null_traces ({TRACES}) ENGINE = Null")
        store.command(f"CREATE TABLE null_source ({STRUCTURE}) ENGINE = Null")
        settings = settings_clause({**SETTINGS, **schema_settings(root / "data")})
        stream_path = root / "stream.pb"
        source = f"file({literal(str(stream_path))}, 'Protobuf', {literal(STRUCTURE)})"

        cpu: dict[str, list[float]] = {}
        spans = 0
        for rep in range(args.repeat + 1):  # the first repetition warms up and is dropped
            salt = 0xC000 + rep
            if args.fixed:
                bodies = [_one_span_body(salt)]
            else:
                bodies = collector_ingest.encode_bodies(args.bodies, 36, salt=salt)
            spool, segment = _spool_segment(root / f"spool{rep}", bodies)
            t0 = time.process_time()
            records = list(segment.records())
            stages = {"read": time.process_time() - t0}
            t0 = time.process_time()
            token = spool.dedup_token(segment)
            stages["token"] = time.process_time() - t0
            t0 = time.process_time()
            flat = flatten_records(records)
            stages["block"] = time.process_time() - t0
            t0 = time.process_time()
            with open(stream_path, "wb") as f:  # as Store.insert_otlp_spans does for chDB
                stream = flat.scalar_streams[0]  # bytes before 2026-12-03, pieces since
                f.writelines([stream] if isinstance(stream, bytes) else stream)
            stages["temp file"] = time.process_time() - t0
            queries = {
                "decode": f"INSERT INTO null_source SELECT * FROM {source}",
                "flatten": f"INSERT INTO null_traces {_select({}, source)}",
            }
            if not args.no_groups:
                for group, replaced in GROUPS.items():
                    queries[f"flatten -{group}"] = (
                        f"INSERT INTO null_traces {_select(replaced, source)}"
                    )
            for name, sql in queries.items():
                t0 = time.process_time()
                store.command(f"{sql} SETTINGS {settings}")
                stages[name] = time.process_time() - t0
            t0 = time.process_time()
            insert(store, flat, token)
            stages["insert (writer)"] = time.process_time() - t0
            t0 = time.process_time()
            store.insert_ingest_batches(flat.batches, dedup_token=f"{token}/again")
            stages["of it: batches"] = time.process_time() - t0
            if rep:
                for name, value in stages.items():
                    cpu.setdefault(name, []).append(value)
            spans = flat.spans
        rows = []
        full = median(cpu["flatten"])
        for name, values in cpu.items():
            value = median(values)
            extra = f"{(full - value) / spans * 1e6:.2f}" if name.startswith("flatten -") else ""
            rows.append([name, value * 1000, value / spans * 1e6, extra])
        write_json(args.json, {"spans": spans, "medians": {k: median(v) for k, v in cpu.items()}})
        print_table(
            f"Writer stages, {spans:,} spans per segment ({args.workload}), CPU of this process, "
            f"median of {args.repeat}",
            ["stage", "ms/segment", "us/span", "group costs us/span"],
            rows,
        )
        store.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


WRITER = ("read", "token", "block", "insert (writer)")
"""The stages the writer runs per segment (``insert`` writes chDB's temp file itself)."""


def compare(args: argparse.Namespace) -> int:
    """This tree against ``args.compare_with``, one subprocess per side and round."""
    import json
    import os
    import subprocess

    other = collector_ingest.export_source(args.compare_with)
    cmd = [sys.executable, __file__, "--workload", args.workload, "--bodies", str(args.bodies)]
    cmd += ["--repeat", str(args.repeat), "--no-groups"] + (["--fixed"] if args.fixed else [])
    sides: dict[str, Path | None] = {"this": None, args.compare_with: other}
    totals: dict[str, list[float]] = {side: [] for side in sides}
    flattens: dict[str, list[float]] = {side: [] for side in sides}
    spans = 0
    try:
        for number in range(args.rounds):
            for side in sides if number % 2 == 0 else reversed(list(sides)):
                source = sides[side]
                env = dict(os.environ)
                if source is not None:  # PYTHONPATH wins over the editable install's finder
                    env["PYTHONPATH"] = os.pathsep.join(
                        str(source / p) for p in collector_ingest.PACKAGES
                    )
                out = Path(tempfile.mkstemp(suffix=".json")[1])
                subprocess.run([*cmd, "--json", str(out)], env=env, cwd=REPO, check=True,
                               stdout=subprocess.DEVNULL)  # fmt: skip
                result = json.loads(out.read_text())
                out.unlink()
                spans = result["spans"]
                totals[side].append(sum(result["medians"][k] for k in WRITER) / spans * 1e6)
                flattens[side].append(result["medians"]["flatten"] / spans * 1e6)
    finally:
        shutil.rmtree(other, ignore_errors=True)
    this, base = totals["this"], totals[args.compare_with]
    rows = [
        [side, ", ".join(f"{v:.2f}" for v in totals[side]), median(totals[side]),
         median(flattens[side])]
        for side in sides
    ]  # fmt: skip
    print_table(
        f"Writer CPU per span ({args.workload}, {spans:,} spans per segment), "
        f"each round the median of {args.repeat}",
        ["side", "us/span per round", "median", "flatten us/span (median)"],
        rows,
    )
    ratios = [a / b for a, b in zip(this, base, strict=True)]
    print(
        f"this / {args.compare_with}: ratio per round {[round(r, 3) for r in ratios]}, "
        f"median {median(ratios):.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

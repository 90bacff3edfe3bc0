"""Storage per million spans and insert time, measured on the embedded store.

Inserts N realistic spans (default 1,000,000) into a fresh, migrated embedded chDB store and
reports, per table, rows and bytes from ``system.parts`` (compressed vs uncompressed, bytes on
disk) plus the heaviest ``otel_traces`` columns, and the insert time.

Workload: the same trace shape as ``collector_ingest.py`` (28 spans per trace: run, plan with an
8-step plan JSON, planner LLM call, 8 steps each with an LLM and a tool call, one failed attempt
with an exception event; the planscope attributes as the SDK sets them). What differs is the
~500-byte ``planscope.input``/``planscope.output`` (and tool arguments/result): here every value
is a distinct 500-byte window of real text (English docs and Python source from the standard
library), JSON-wrapped, so ZSTD sees text that compresses like prose and code, not the 20-word
vocabulary of the ingest benchmark (which flatters compression). ``--text vocab`` uses that
vocabulary instead, for comparison.

Spans are flattened by the collector's ``SpanColumns`` and go through ``Store.insert_spans`` (one
Arrow IPC block) in inserts of 5,040 spans (one collector spool segment), each with a dedup
token, like the writer.
Timestamps are spread over the last ``--hours`` hours (default 1), i.e. daily partitions as in
production. After the inserts ``OPTIMIZE TABLE ... FINAL`` merges each table's parts (timed
separately), so the figures are the steady state a server reaches with background merges.

    .venv/bin/python benchmarks/storage_footprint.py [--spans 1000000] [--quick] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, machine_facts, print_table, write_json

SPANS_PER_TRACE = 28
TRACES_PER_REQUEST = 36  # 1,008 spans, as in collector_ingest.py
REQUESTS_PER_INSERT = 5  # 5,040 spans: one spool segment
PAYLOAD_BYTES = 500


def _corpus(limit: int = 12 << 20) -> str:
    """Up to ``limit`` characters of real text: repo docs, then standard-library sources."""
    parts: list[str] = []
    size = 0
    paths = sorted((REPO / "docs").glob("*.md"))
    paths += sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))
    for path in paths:
        try:
            text = " ".join(path.read_text(encoding="utf-8", errors="replace").split())
        except OSError:
            continue
        parts.append(text)
        size += len(text)
        if size >= limit:
            break
    return " ".join(parts)


class TextSource:
    """Distinct ~500-byte JSON-wrapped text values (``corpus`` windows or the 20-word vocab)."""

    def __init__(self, kind: str, seed: int = 7) -> None:
        self.kind = kind
        self.rng = random.Random(seed)
        self.corpus = _corpus() if kind == "corpus" else ""
        self.counter = 0

    def __call__(self) -> str:
        self.counter += 1
        if self.kind == "corpus":
            start = self.rng.randrange(0, len(self.corpus) - PAYLOAD_BYTES)
            return json.dumps({"text": self.corpus[start : start + PAYLOAD_BYTES - 12]})
        from collector_ingest import _text

        return _text(self.counter * 7919)


def requests(n_requests: int, text: TextSource, hours: float) -> Iterator[Any]:
    """``n_requests`` OTLP requests of 36 traces each: fresh ids, texts and times per request.

    One template request is patched in place and yielded each time (consume it before the next).
    """
    from collector_ingest import build_template
    from planscope import semconv as A

    template = build_template(TRACES_PER_REQUEST)
    spans = template.resource_spans[0].scope_spans[0].spans
    text_keys = {A.INPUT, A.OUTPUT, A.GEN_AI_TOOL_CALL_ARGUMENTS, A.GEN_AI_TOOL_CALL_RESULT}
    base_start = [s.start_time_unix_nano for s in spans]
    base_end = [s.end_time_unix_nano for s in spans]
    old_ids = [bytes(s.span_id) for s in spans]
    old_traces = [bytes(s.trace_id) for s in spans]
    old_parents = [bytes(s.parent_span_id) for s in spans]
    range_ns = int(hours * 3600e9)
    rng = random.Random(11)
    for r in range(n_requests):
        # random 128-bit trace ids, as real SDKs make them (they compress ~2x as hex, not 40x)
        new_traces = {t: rng.getrandbits(128).to_bytes(16, "big") for t in set(old_traces)}
        shift = int(r / max(1, n_requests) * range_ns) - range_ns
        new_ids = {old: rng.getrandbits(64).to_bytes(8, "big") for old in old_ids}
        for i, s in enumerate(spans):
            s.trace_id = new_traces[old_traces[i]]
            s.span_id = new_ids[old_ids[i]]
            s.parent_span_id = new_ids[old_parents[i]] if old_parents[i] else b""
            s.start_time_unix_nano = base_start[i] + shift
            s.end_time_unix_nano = base_end[i] + shift
            # planscope.input/output get fresh text; a tool span's gen_ai.tool.call.arguments /
            # result repeat its input/output, as the SDK sets them
            fresh = {A.INPUT: text(), A.OUTPUT: text()}
            fresh[A.GEN_AI_TOOL_CALL_ARGUMENTS] = fresh[A.INPUT]
            fresh[A.GEN_AI_TOOL_CALL_RESULT] = fresh[A.OUTPUT]
            for kv in s.attributes:
                if kv.key in text_keys:
                    kv.value.string_value = fresh[kv.key]
        yield template


def parts_by_table(store: Any) -> list[dict[str, Any]]:
    return store.query(
        "SELECT table, sum(rows) AS rows, count() AS parts, "
        "sum(data_compressed_bytes) AS compressed, sum(data_uncompressed_bytes) AS uncompressed, "
        "sum(bytes_on_disk) AS on_disk FROM system.parts "
        "WHERE database = currentDatabase() AND active GROUP BY table ORDER BY on_disk DESC"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spans", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="50k spans")
    parser.add_argument("--text", choices=["corpus", "vocab"], default="corpus")
    parser.add_argument("--hours", type=float, default=1.0, help="time range of the spans")
    parser.add_argument("--no-optimize", action="store_true")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    target = 50_000 if args.quick else args.spans

    from planscope_collector._otlp import SpanColumns
    from planscope_collector.storage import open_store

    per_request = TRACES_PER_REQUEST * SPANS_PER_TRACE
    n_requests = -(-target // per_request)
    text = TextSource(args.text)
    tmp = Path(tempfile.mkdtemp(prefix="planscope-footprint-"))
    store = open_store(f"chdb://{tmp / 'store'}")
    store.migrate(ttl_days=30)
    gen_s = flatten_s = insert_s = 0.0
    inserted = 0
    batch = SpanColumns()
    inserts = 0

    def flush() -> None:
        nonlocal insert_s, inserted, inserts, batch
        if not len(batch):
            return
        t = time.perf_counter()
        store.insert_spans(batch.to_ipc(), dedup_token=f"footprint:{inserts}")
        insert_s += time.perf_counter() - t
        inserted += len(batch)
        inserts += 1
        batch = SpanColumns()

    t_all = time.perf_counter()
    stream = requests(n_requests, text, args.hours)
    for _ in range(n_requests):
        t = time.perf_counter()
        request = next(stream)
        gen_s += time.perf_counter() - t
        t = time.perf_counter()
        batch.add(request, "bench")
        flatten_s += time.perf_counter() - t
        if len(batch) >= per_request * REQUESTS_PER_INSERT:
            flush()
            if inserts % 20 == 0:
                rate = inserted / insert_s if insert_s else 0.0
                print(f"  {inserted:,} spans, insert {rate:,.0f} spans/s", flush=True)
    flush()
    wall_s = time.perf_counter() - t_all

    before = parts_by_table(store)
    optimize_s = 0.0
    if not args.no_optimize:
        t = time.perf_counter()
        for row in before:
            store.command(f"OPTIMIZE TABLE `{row['table']}` FINAL")
        optimize_s = time.perf_counter() - t
    after = parts_by_table(store)
    columns = store.query(
        "SELECT column AS name, sum(column_data_compressed_bytes) AS compressed, "
        "sum(column_data_uncompressed_bytes) AS uncompressed FROM system.parts_columns "
        "WHERE database = currentDatabase() AND table = 'otel_traces' AND active "
        "GROUP BY name ORDER BY compressed DESC LIMIT 8"
    )
    store.close()

    per_m = 1_000_000 / inserted
    rows = []
    total = {"compressed": 0, "uncompressed": 0, "on_disk": 0}
    for r in after:
        for k in total:
            total[k] += int(r[k])
        rows.append(
            [
                r["table"],
                int(r["rows"]),
                int(r["parts"]),
                int(r["compressed"]) * per_m / 1e6,
                int(r["uncompressed"]) * per_m / 1e6,
                int(r["uncompressed"]) / max(1, int(r["compressed"])),
                int(r["on_disk"]) * per_m / 1e6,
            ]
        )
    rows.append(
        [
            "**total**",
            "",
            "",
            total["compressed"] * per_m / 1e6,
            total["uncompressed"] * per_m / 1e6,
            total["uncompressed"] / max(1, total["compressed"]),
            total["on_disk"] * per_m / 1e6,
        ]
    )
    print(f"\n{inserted:,} spans ({inserted // SPANS_PER_TRACE:,} traces), text={args.text}")
    print_table(
        "per table, after OPTIMIZE FINAL, MB per million spans",
        ["table", "rows", "parts", "compressed MB", "uncompressed MB", "ratio", "on disk MB"],
        rows,
    )
    print_table(
        "heaviest otel_traces columns, MB per million spans",
        ["column", "compressed MB", "uncompressed MB", "ratio"],
        [
            [
                c["name"],
                int(c["compressed"]) * per_m / 1e6,
                int(c["uncompressed"]) * per_m / 1e6,
                int(c["uncompressed"]) / max(1, int(c["compressed"])),
            ]
            for c in columns
        ],
    )
    print_table(
        "time",
        ["phase", "s", "spans/s"],
        [
            ["generate requests (benchmark only)", gen_s, inserted / gen_s if gen_s else 0.0],
            ["flatten (collector code)", flatten_s, inserted / flatten_s],
            ["Store.insert_spans (7 views, dedup token)", insert_s, inserted / insert_s],
            ["wall, all of the above", wall_s, inserted / wall_s],
            ["OPTIMIZE FINAL, all tables", optimize_s, ""],
        ],
    )
    write_json(
        args.json,
        {
            "machine": machine_facts(),
            "spans": inserted,
            "text": args.text,
            "inserts": inserts,
            "insert_s": insert_s,
            "flatten_s": flatten_s,
            "wall_s": wall_s,
            "optimize_s": optimize_s,
            "tables_before_optimize": before,
            "tables": after,
            "otel_traces_columns": columns,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What each materialized view costs at insert, and the view layouts side by side.

One chDB process, one database per variant, the same Arrow block (the collector's writer
input: ``SpanColumns`` of ``collector_ingest.py``'s workload, ``to_ipc``) inserted into each
with ``Store.insert_spans``; with ``--protobuf`` the same request as protobuf, flattened by
ClickHouse (``Store.insert_otlp_spans``: the writer's path for requests with scalar values
only, as both workloads' are). Variants:

- ``0010``: the views as of 48f5097 (migrations up to 0010; 0002's views, 0010's rewrites);
- ``0011``: the classifying view and its ``Null`` stream into the per-kind views;
- ``0012``: the span model as columns of ``otel_traces``, views filtering on ``SpanModelKind``;
- ``0013``: 0012 with plans also read from LLM answers;
- ``0014``: 0013 with more plan shapes read from LLM answers;
- ``0015``: 0014 with wider background merges of ``otel_traces``;
- ``0016``: 0015 with the plan views computing the plan text once per span and parsing only
  text that can be JSON;
- ``0021``: 0016's two plan views fed from one ``Null`` stream, so an insert analyses the plan
  expression once (with 0022-0025);
- ``0026``: 0021 with ``otel_traces``' segment inserts written as Compact parts;
- ``0029``: 0026, merges of at most 8 parts (0027), pydantic-ai's ``final_result`` plans
  (0028), the typed columns no reader reads dropped (0029);
- ``0030``: 0029 with markdown step lists read as plans;
- ``0031``: the plan stream of 0029 again, without 0030's markdown reader, fed from a cheap
  check: its costly ``SELECT`` only over candidate spans; declared plans by their own view
  (with 0032's scheduler columns);
- ``0033``: 0031 with the exception-only error in the span model: three ``MATERIALIZED``
  columns, the runs / step attempts / tool calls views reading them;
- ``0040``: 0033 with the frameworks mapped since (Langfuse, MLflow, Griptape: 0034-0040);
- ``0041``: 0040 with errors returned as values by typed tool spans (one ``MATERIALIZED``
  column and three ``ALIAS`` columns, the tool calls view reading them);
- ``0042``: 0041 with a structured-output plan step's ``key`` as its id;
- ``0043``: 0042 with errors returned as values by Langfuse and MLflow tool spans too;
- ``0045``: 0043 with 0044-0045's plan stream (a plan step's sentence, OpenLLMetry task outputs);
- ``0046``: 0045 with a tool call's result read out of OpenLLMetry's LangChain envelope (two
  ``ALIAS`` columns the tool calls view and the returned-error column read);
- ``0047``: 0046 with Logfire's openai-agents integration (the span model's columns, a
  ``MATERIALIZED`` error message, the step attempts and tool calls views);
- ``0048``: 0047 with Google ADK's own tracing;
- ``0049``: the current layout (0048 with OpenLLMetry's LlamaIndex ``call_tool`` steps);
- ``<layout> none``: the layout's tables with every materialized view dropped (the insert floor);
- ``<layout> only <view>``: one view attached (for 0011 with the classifying view it reads);
- ``<layout> without <view>`` (``--without``): every view but that one (the plan stream with
  its two views).

Every repetition inserts a block with fresh trace ids into every variant, in a rotated order,
so the variants share the machine's state; medians over the repetitions. CPU is the process's
(chDB runs in this process), so it counts every thread the insert uses. Background merges are
stopped for these figures (they would land in whichever insert is being timed).

``--merges N`` measures what the inserts leave behind instead: per layout, N inserts of
``--traces`` traces each (fresh ids) with merges running, then a wait until no merge has run
for 3 s; the CPU of inserts plus merges, and how many rows the merges rewrote per row inserted
(all tables; ``system.events`` MergedRows / InsertedRows). Layouts run one after the other (a
merge cannot be told apart from another database's), in a rotated order per repetition.

    .venv/bin/python benchmarks/view_cost.py [--traces 648] [--repeat 5] [--per-view [LAYOUT ...]]
    .venv/bin/python benchmarks/view_cost.py --merges 300 --traces 20 --workload planscope
    .venv/bin/python benchmarks/view_cost.py --protobuf --layouts 0026 --tweak lz4 zstd3
    .venv/bin/python benchmarks/view_cost.py --protobuf --layouts 0026 0031 --without 0031
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import collector_ingest
from _common import machine_facts, median, print_table, write_json

#: The views each layout attaches to otel_traces (0011's per-kind views read its stream).
PER_KIND_VIEWS = (
    "planscope_runs_mv",
    "planscope_plans_mv",
    "planscope_plan_steps_mv",
    "planscope_step_attempts_mv",
    "planscope_tool_calls_mv",
    "planscope_llm_calls_mv",
    "planscope_trace_index_mv",
)
TRACE_ID_VIEW = "otel_traces_trace_id_ts_mv"
CLASSIFIER_VIEW = "planscope_span_model_mv"
PLAN_VIEWS = ("planscope_plans_mv", "planscope_plan_steps_mv")
PLAN_STREAM_VIEW = "planscope_plan_stream_mv"
"""From 0021 on, the plan views read the stream this view fills."""
PLAN_FEED_VIEWS = ("planscope_plan_declared_mv", "planscope_plan_candidates_mv")
"""From 0031 on, the views that feed the plan stream besides (and before) its own."""


def plan_stream(layout: str) -> tuple[str, ...]:
    """The views that fill ``layout``'s plan stream (none before 0021)."""
    if layout < "0021":
        return ()
    return (*PLAN_FEED_VIEWS, PLAN_STREAM_VIEW) if layout >= "0031" else (PLAN_STREAM_VIEW,)


LAYOUTS = {
    "0010": "0011",
    "0011": "0012",
    "0012": "0013",
    "0013": "0014",
    "0014": "0015",
    "0015": "0016",
    "0016": "0021",
    "0021": "0026",
    "0026": "0027",
    "0029": "0030",
    "0030": "0031",
    "0031": "0033",
    "0033": "0034",
    "0040": "0041",
    "0041": "0042",
    "0042": "0043",
    "0043": "0044",
    "0045": "0046",
    "0046": "0047",
    "0047": "0048",
    "0048": "0049",
    "0049": None,
}
"""Layout -> the first migration left out (the last: the current one)."""
UNRELATED = ("0020",)
"""Migrations that change no table a span insert writes (kept in every layout)."""

ATTR_BLOOMS = ("idx_res_attr_key", "idx_res_attr_value", "idx_span_attr_key", "idx_span_attr_value")


def _recodec(store: Any, old: str, new: str) -> list[str]:
    """``otel_traces``' columns with ``old`` in their codec re-declared with ``new`` instead."""
    rows = store.query(
        "SELECT name, compression_codec AS c FROM system.columns WHERE database = "
        "currentDatabase() AND table = 'otel_traces' AND position(compression_codec, {o:String})",
        {"o": old},
    )
    return [f"ALTER TABLE otel_traces MODIFY COLUMN `{r['name']}` {r['c'].replace(old, new)}"
            for r in rows]  # fmt: skip


#: ``--tweak`` variants of the current layout: statements run after its migrations, and
#: settings added to each insert (levers measured one at a time, docs/benchmarks.md).
TWEAKS: dict[str, tuple[Any, dict[str, Any]]] = {
    "no-attr-blooms": (
        lambda s: [f"ALTER TABLE otel_traces DROP INDEX {i}" for i in ATTR_BLOOMS],
        {},
    ),
    "no-trace-bloom": (lambda s: ["ALTER TABLE otel_traces DROP INDEX idx_trace_id"], {}),
    "no-skip-indexes": (
        lambda s: [
            f"ALTER TABLE otel_traces DROP INDEX {i}"
            for i in (*ATTR_BLOOMS, "idx_trace_id", "idx_duration")
        ],
        {},
    ),
    "lz4": (lambda s: _recodec(s, "ZSTD(1)", "LZ4"), {}),
    "zstd3": (lambda s: _recodec(s, "ZSTD(1)", "ZSTD(3)"), {}),
    "no-dedup": (lambda s: [], {"insert_deduplicate": 0}),
    "no-mv-dedup": (lambda s: [], {"deduplicate_blocks_in_dependent_materialized_views": 0}),
    "no-optimize-on-insert": (lambda s: [], {"optimize_on_insert": 0}),
    "no-index-on-insert": (lambda s: [], {"materialize_skip_indexes_on_insert": 0}),
    "no-stats-on-insert": (lambda s: [], {"materialize_statistics_on_insert": 0}),
    "compact-parts": (
        lambda s: ["ALTER TABLE otel_traces MODIFY SETTING min_bytes_for_wide_part = 1073741824"],
        {},
    ),
    "compress-block-64k": (
        lambda s: [],
        {"max_compress_block_size": 65536, "min_compress_block_size": 65536},
    ),
    "threads-1": (lambda s: [], {"max_insert_threads": 1, "max_threads": 1}),
    "no-raw-columns": (
        lambda s: [
            "ALTER TABLE otel_traces DROP COLUMN SpanModelContextEmpty",
            "ALTER TABLE otel_traces DROP COLUMN SchedulerAttributes",
        ],
        {},
    ),
    "lz4-maps": (
        lambda s: [
            f"ALTER TABLE otel_traces MODIFY COLUMN {c} Map(LowCardinality(String), String) "
            "CODEC(LZ4)"
            for c in ("ResourceAttributes", "SpanAttributes")
        ],
        {},
    ),
}


@dataclass(frozen=True)
class Variant:
    label: str
    layout: str
    keep: tuple[str, ...] | None  # views kept; None = all
    tweak: str | None = None  # a TWEAKS entry applied after the migrations
    drop: tuple[str, ...] = ()  # views dropped (``--without``)


def variants(
    per_view: list[str], tweaks: Sequence[str] = (), without: Sequence[str] = ()
) -> list[Variant]:
    out = [Variant(layout, layout, None) for layout in LAYOUTS]
    current = list(LAYOUTS)[-1]
    out += [Variant(f"{current} {name}", current, None, name) for name in tweaks]
    for layout in without:
        out.append(Variant(f"{layout} none", layout, ()))
        for view in (TRACE_ID_VIEW, *PER_KIND_VIEWS):
            if layout >= "0021" and view == PLAN_VIEWS[1]:
                continue  # the plan stream goes with its two views: they read nothing else
            drop = (
                (*plan_stream(layout), *PLAN_VIEWS)
                if (layout >= "0021" and view == PLAN_VIEWS[0])
                else (view,)
            )
            label = PLAN_STREAM_VIEW if view == PLAN_VIEWS[0] and layout >= "0021" else view
            out.append(Variant(f"{layout} without {label}", layout, None, drop=drop))
    for layout in per_view:
        base: tuple[str, ...] = (CLASSIFIER_VIEW,) if layout == "0011" else ()
        out.append(Variant(f"{layout} none", layout, ()))
        if base:
            out.append(Variant(f"{layout} only {CLASSIFIER_VIEW}", layout, base))
        for view in (TRACE_ID_VIEW, *PER_KIND_VIEWS):
            if layout == "0011" and view != TRACE_ID_VIEW:
                out.append(Variant(f"{layout} only {view}", layout, (*base, view)))
            elif layout >= "0021" and view in PLAN_VIEWS:
                out.append(Variant(f"{layout} only {view}", layout, (*plan_stream(layout), view)))
            else:
                out.append(Variant(f"{layout} only {view}", layout, (view,)))
    return out


def migrations_dir(layout: str, root: Path) -> Path:
    """A copy of the packaged migrations without those after ``layout``."""
    stop = LAYOUTS[layout]
    target = root / f"migrations-{layout}"
    target.mkdir()
    source = resources.files("planscope_collector") / "migrations"
    for entry in source.iterdir():
        name = entry.name
        if name.endswith(".sql") and (stop is None or name[:4] < stop or name[:4] in UNRELATED):
            (target / name).write_text(entry.read_text(encoding="utf-8"), encoding="utf-8")
    return target


def block(workload: str, traces: int, salt: int, protobuf: bool = False) -> Any:
    """The writer's input for ``traces`` traces of ``workload`` with fresh trace ids: an Arrow
    IPC stream, or with ``protobuf`` the length-delimited request ClickHouse flattens (the path
    of a request with scalar values only, as both workloads are)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from planscope_collector._otlp import SpanColumns
    from planscope_collector.storage._protobuf import request_parts

    collector_ingest.WORKLOAD = workload
    (body,) = collector_ingest.encode_bodies(1, traces, salt=salt)
    if protobuf:
        return b"".join(request_parts(body, ""))
    columns = SpanColumns()
    columns.add(ExportTraceServiceRequest.FromString(body), None)
    return columns.to_ipc()


def insert(store: Any, body: Any, token: str, settings: dict[str, Any] | None = None) -> None:
    """``body`` (from :func:`block`) into ``store`` the way the writer inserts it (``settings``:
    added to the writer's insert settings, for a ``--tweak``)."""
    if settings:
        from planscope_collector.storage import _store

        saved = _store._INSERT_SETTINGS
        _store._INSERT_SETTINGS = {**saved, **settings}
        try:
            insert(store, body, token)
        finally:
            _store._INSERT_SETTINGS = saved
        return
    if isinstance(body, bytes):
        store.insert_otlp_spans(body, dedup_token=token)
    else:
        store.insert_spans(body, dedup_token=token)


def _events(store: Any) -> dict[str, int]:
    rows = store.query(
        "SELECT event, value FROM system.events WHERE event IN ('MergedRows', 'InsertedRows')"
    )
    return {str(r["event"]): int(r["value"]) for r in rows}


def _wait_for_merges(store: Any, quiet_seconds: int = 3, limit_seconds: float = 600) -> None:
    """Return once no merge has been running for ``quiet_seconds`` polls in a row."""
    quiet, deadline = 0, time.monotonic() + limit_seconds
    while quiet < quiet_seconds and time.monotonic() < deadline:
        busy = store.query("SELECT count() AS n FROM system.merges")[0]["n"]
        quiet = 0 if busy else quiet + 1
        time.sleep(1)


def merge_cost(args: argparse.Namespace, workloads: list[str], root: Path) -> dict[str, Any]:
    """CPU of ``--merges`` inserts per layout, background merges included (module docstring)."""
    from planscope_collector.storage import open_store

    layouts = args.layouts or list(LAYOUTS)
    dirs = {layout: migrations_dir(layout, root) for layout in layouts}
    spans = args.merges * args.traces * collector_ingest.SPANS_PER_TRACE
    results: dict[str, Any] = {}
    number = 0
    for workload in workloads:
        cpu: dict[str, list[float]] = {layout: [] for layout in layouts}
        merged: dict[str, list[float]] = {layout: [] for layout in layouts}
        parts: dict[str, list[int]] = {layout: [] for layout in layouts}
        for rep in range(args.repeat):
            order = layouts[rep % len(layouts) :] + layouts[: rep % len(layouts)]
            for layout in order:
                bodies = [
                    block(workload, args.traces, salt=(number << 16) + i, protobuf=args.protobuf)
                    for i in range(args.merges)
                ]
                number += 1
                store = open_store(f"chdb://{root / 'data'}", database=f"m{number}")
                store.migrate(directory=dirs[layout])
                _wait_for_merges(store)
                before, c0 = _events(store), time.process_time()
                for i, body in enumerate(bodies):
                    insert(store, body, f"merges:{i}")
                _wait_for_merges(store)
                after, c1 = _events(store), time.process_time()
                inserted = after["InsertedRows"] - before["InsertedRows"]
                cpu[layout].append(c1 - c0)
                merged[layout].append((after["MergedRows"] - before["MergedRows"]) / inserted)
                parts[layout].append(
                    store.query(
                        "SELECT count() AS n FROM system.parts WHERE database = currentDatabase() "
                        "AND table = 'otel_traces' AND active"
                    )[0]["n"]
                )
                store.command(f"DROP DATABASE {store.database} SYNC")
                store.close()
                del bodies
        rows = [[layout, median(cpu[layout]), median(cpu[layout]) * 1e6 / spans,
                 median(merged[layout]), max(parts[layout])] for layout in layouts]  # fmt: skip
        per_insert = args.traces * collector_ingest.SPANS_PER_TRACE
        print_table(
            f"{workload}: {args.merges} inserts of {per_insert:,} spans, merges running, "
            f"median of {args.repeat}",
            ["layout", "CPU s (inserts + merges)", "CPU µs/span", "rows merged per row inserted",
             "otel_traces parts left"],
            rows,
        )  # fmt: skip
        *earlier, current = layouts
        for layout in earlier:
            print(f"{workload}: CPU {layout} / CPU {current} = "
                  f"{median(cpu[layout]) / median(cpu[current]):.2f}")  # fmt: skip
        results[workload] = {"spans": spans, "cpu_s": cpu, "merged_per_inserted": merged}
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--traces",
        type=int,
        default=648,
        help="traces per block (28 spans; 648 = the writer's 18,144-span block)",
    )
    parser.add_argument("--repeat", type=int, default=5, help="repetitions (median)")
    parser.add_argument(
        "--per-view",
        nargs="*",
        choices=tuple(LAYOUTS),
        help="also these layouts with one view at a time (all layouts when none is named)",
    )
    parser.add_argument(
        "--workload", choices=("planscope", "openinference", "both"), default="both"
    )
    parser.add_argument(
        "--merges",
        type=int,
        metavar="N",
        help="measure N inserts per layout with background merges running (docstring)",
    )
    parser.add_argument("--layouts", nargs="+", choices=tuple(LAYOUTS), help="only these layouts")
    parser.add_argument(
        "--protobuf",
        action="store_true",
        help="insert protobuf requests that ClickHouse flattens (the writer's path for requests "
        "with scalar values only) instead of Arrow blocks",
    )
    parser.add_argument(
        "--tweak", nargs="+", default=[], choices=tuple(TWEAKS),
        help="also the current layout with these changes, one variant each (TWEAKS)",
    )  # fmt: skip
    parser.add_argument(
        "--without", nargs="+", default=[], choices=tuple(LAYOUTS),
        help="also these layouts with one view (the plan stream: with its two views) dropped "
        "at a time, and with none",
    )  # fmt: skip
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args()

    from planscope_collector.storage import open_store

    workloads = ["planscope", "openinference"] if args.workload == "both" else [args.workload]
    chosen = variants(
        list(LAYOUTS) if args.per_view == [] else args.per_view or [], args.tweak, args.without
    )
    if args.layouts and not args.merges:
        chosen = [v for v in chosen if v.layout in args.layouts or v.tweak]
    root = Path(tempfile.mkdtemp(prefix="planscope-view-cost-"))
    print(
        f"view_cost: {args.traces * collector_ingest.SPANS_PER_TRACE:,} spans per block, "
        f"{args.repeat} repetitions, {len(chosen)} variants x {len(workloads)} workloads"
    )
    print(f"machine: {machine_facts()}")
    results: dict[str, Any] = {}
    if args.merges:
        try:
            results = merge_cost(args, workloads, root)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        write_json(args.json, {"machine": machine_facts(), "results": results})
        return 0
    try:
        dirs = {layout: migrations_dir(layout, root) for layout in LAYOUTS}
        dsn = f"chdb://{root / 'data'}"
        stores = {}
        for number, (workload, variant) in enumerate((w, v) for w in workloads for v in chosen):
            store = open_store(dsn, database=f"v{number}")
            store.migrate(directory=dirs[variant.layout])
            for view in variant.drop:
                store.command(f"DROP VIEW {store.database}.{view}")
            if variant.keep is not None:
                views = store.query(
                    "SELECT name FROM system.tables WHERE database = currentDatabase() "
                    "AND engine = 'MaterializedView'"
                )
                for row in views:
                    if row["name"] not in variant.keep:
                        store.command(f"DROP VIEW {store.database}.{row['name']}")
            if variant.tweak is not None:
                for sql in TWEAKS[variant.tweak][0](store):
                    store.command(sql)
            stores[workload, variant.label] = store
        # Background merges run on threads of this process and would land in whichever insert
        # is being timed; they are stopped, so each figure is the insert's own work.
        next(iter(stores.values())).command("SYSTEM STOP MERGES")
        for workload in workloads:
            spans = args.traces * collector_ingest.SPANS_PER_TRACE
            wall: dict[str, list[float]] = {v.label: [] for v in chosen}
            cpu: dict[str, list[float]] = {v.label: [] for v in chosen}
            for rep in range(args.repeat + 1):  # the first repetition warms up
                body = block(workload, args.traces, salt=0xB000 + rep, protobuf=args.protobuf)
                shift = rep % len(chosen)
                for variant in chosen[shift:] + chosen[:shift]:
                    store = stores[workload, variant.label]
                    c0, t0 = time.process_time(), time.perf_counter()
                    extra = TWEAKS[variant.tweak][1] if variant.tweak else None
                    insert(store, body, f"view-cost:{rep}", extra)
                    c1, t1 = time.process_time(), time.perf_counter()
                    if rep:
                        wall[variant.label].append(t1 - t0)
                        cpu[variant.label].append(c1 - c0)
            figures = {
                label: {"wall_s": median(wall[label]), "cpu_s": median(cpu[label])}
                for label in wall
            }
            results[workload] = {"spans": spans, "variants": figures}
            floors = {layout: figures.get(f"{layout} none", {}).get("cpu_s") for layout in LAYOUTS}
            rows = []
            for variant in chosen:
                fig = figures[variant.label]
                floor = floors[variant.layout]
                added = "" if floor is None else f"{(fig['cpu_s'] - floor) * 1e6 / spans:+.1f}"
                rows.append([variant.label, fig["wall_s"] * 1e3, fig["cpu_s"] * 1e3,
                             fig["cpu_s"] * 1e6 / spans, added])  # fmt: skip
            print_table(
                f"{workload}: {spans:,} spans per insert, median of {args.repeat}",
                ["variant", "wall ms", "CPU ms", "CPU µs/span", "µs/span over 'none'"],
                rows,
            )
            *earlier, current = LAYOUTS
            for label in [*earlier, *(v.label for v in chosen if v.tweak)]:
                if label in figures and current in figures:
                    ratio = figures[label]["cpu_s"] / figures[current]["cpu_s"]
                    print(f"{workload}: CPU {label} / CPU {current} = {ratio:.2f}")
        for store in stores.values():
            store.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    write_json(args.json, {"machine": machine_facts(), "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())

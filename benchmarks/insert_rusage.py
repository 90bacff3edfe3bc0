"""User CPU, system CPU and minor page faults per span of one spool segment's insert.

Each variant runs in a process of its own (the embedded engine's allocator is per process and
reads ``JE_MALLOC_CONF`` when chDB loads): a fresh migrated chDB store, merges stopped, the
jemalloc options ``planscope serve`` sets (``_server.EMBEDDED_ALLOCATOR``), then one warm-up
and ``--repeat`` inserts of a 64 MiB segment's worth of protobuf requests (1,260 traces = 35,280
spans, fresh trace ids) through ``Store.insert_otlp_spans``, each followed by
``SYSTEM JEMALLOC PURGE`` as the writer runs it above ``_writer.RELEASE_MEMORY_ABOVE_BYTES``
(which a loaded collector is). ``getrusage`` of the process (chDB's threads included) around
each insert and its purge; the medians per span. Variants, alternating over ``--rounds``:

* ``base``: as the collector runs;
* ``no-purge``: without the purge (what the freed memory's faults cost);
* ``thp``: jemalloc on transparent huge pages (``thp:always``);
* ``KEY=VALUE`` (``--setting``): a setting added to the insert.

    .venv/bin/python benchmarks/insert_rusage.py --workload planscope --rounds 2 --repeat 3
    .venv/bin/python benchmarks/insert_rusage.py --setting storage_file_read_method=pread
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import median, print_table

TRACES_PER_SEGMENT = 1260  # 35,280 spans: what a 64 MiB segment holds of the planscope workload
SPANS = TRACES_PER_SEGMENT * 28


def _body(cache: Path, workload: str, number: int) -> bytes:
    """The protobuf stream of one segment, made once per run and shared by the variants."""
    import view_cost

    path = cache / f"{workload}-{number}.pb"
    if not path.exists():
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(view_cost.block(workload, TRACES_PER_SEGMENT, 1000 + number, True))
        os.replace(partial, path)
    return path.read_bytes()


def child(workload: str, variant: str, repeat: int, cache: Path) -> dict[str, float]:
    """One variant's medians (µs of user and system CPU, minor faults, per span)."""
    from planscope_collector.storage import _store, open_store

    if "=" in variant:
        key, value = variant.split("=", 1)
        _store._INSERT_SETTINGS = {**_store._INSERT_SETTINGS, key: value}
    bodies = [_body(cache, workload, i) for i in range(repeat + 1)]
    with tempfile.TemporaryDirectory(prefix="insert-rusage-") as data:
        store = open_store(f"chdb://{data}/store")
        store.migrate()
        store.command("SYSTEM STOP MERGES")
        rows: list[tuple[float, float, float]] = []
        for number, body in enumerate(bodies):
            before = resource.getrusage(resource.RUSAGE_SELF)
            store.insert_otlp_spans(body, dedup_token=f"segment:{number}")
            if variant != "no-purge":
                store.command("SYSTEM JEMALLOC PURGE")
            after = resource.getrusage(resource.RUSAGE_SELF)
            if number:  # the first insert warms up
                rows.append(
                    (
                        (after.ru_utime - before.ru_utime) / SPANS * 1e6,
                        (after.ru_stime - before.ru_stime) / SPANS * 1e6,
                        (after.ru_minflt - before.ru_minflt) / SPANS,
                    )
                )
        store.close()
    user, system, faults = (median([r[i] for r in rows]) for i in range(3))
    return {"user": user, "system": system, "cpu": user + system, "faults": faults}


def run_variant(workload: str, variant: str, repeat: int, cache: Path) -> dict[str, float]:
    from planscope_collector._server import EMBEDDED_ALLOCATOR

    allocator = EMBEDDED_ALLOCATOR + (",thp:always" if variant == "thp" else "")
    env = {**os.environ, "JE_MALLOC_CONF": allocator}
    argv = [sys.executable, __file__, "--child", variant, "--workload", workload]
    argv += ["--repeat", str(repeat), "--cache", str(cache)]
    out = subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=("planscope", "openinference"), default="planscope")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="inserts per process (median)")
    parser.add_argument("--setting", nargs="*", default=[], help="KEY=VALUE variants")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--cache", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.workload, args.child, args.repeat, args.cache)))
        return
    variants = ["base", "no-purge", "thp", *args.setting]
    results: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
    with tempfile.TemporaryDirectory(prefix="insert-rusage-bodies-") as cache:
        for number in range(args.rounds):
            order = variants[number % len(variants) :] + variants[: number % len(variants)]
            for variant in order:
                results[variant].append(
                    run_variant(args.workload, variant, args.repeat, Path(cache))
                )
                print(variant, results[variant][-1], f"load {os.getloadavg()[0]:.1f}", flush=True)
    rows: list[list[Any]] = []
    base_cpu = median([r["cpu"] for r in results["base"]])
    for variant, runs in results.items():
        cpu = median([r["cpu"] for r in runs])
        rows.append(
            [
                variant,
                f"{median([r['user'] for r in runs]):.1f}",
                f"{median([r['system'] for r in runs]):.1f}",
                f"{cpu:.1f}",
                f"{median([r['faults'] for r in runs]):.2f}",
                f"{cpu / base_cpu:.2f}",
            ]
        )
    title = (
        f"{args.workload}, {SPANS:,}-span inserts, per span: median of the rounds, each the "
        f"median of {args.repeat} inserts"
    )
    print_table(
        title, ["variant", "user µs", "system µs", "CPU µs", "minor faults", "CPU / base"], rows
    )


if __name__ == "__main__":
    main()

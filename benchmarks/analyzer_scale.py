"""Analyzer scale: a full pass over ~1,000,000 spans on the embedded store, then an
incremental pass over ~1% new spans.

Two shapes of store (``--shape``, one or both; both are timed round by round in one run):

* ``sdk`` (in ``--workdir``): the reference runtime's spans (a labelled suite through our SDK);
* ``frameworks`` (in ``--workdir``/frameworks): the spans of the corpus's framework agents
  (tests/corpus: OpenInference, the OpenAI Agents SDK, LangGraph under OpenLLMetry,
  pydantic-ai, smolagents, Agno, DSPy, Haystack, Semantic Kernel, plain GenAI, OpenLLMetry and
  pydantic-ai's layout by hand), :data:`FRAMEWORK_RUNS_PER_AGENT` runs of each from the spent
  split :data:`FRAMEWORK_SPLIT`; their runs, attempts and tool calls are inferred by the
  analyzer's other paths.

Either shape's seed spans (played on an in-memory exporter when the store is built, kept in its
directory as ``seed.pickle`` for the incremental pass) are encoded as OTLP and flattened by the
collector's own code, replicated with fresh trace/span ids and
spread over ``--days`` daily partitions (like a store that has been ingesting for that long),
inserted through ``Store.insert_spans`` (as Arrow IPC, like the collector's writer) so every
materialized view fills the typed tables.

Each full pass runs in its own process (chDB opens a data dir in one process at a time).
``--compare-with REV`` runs the analyzer of git revision ``REV`` (its ``analyzer/``,
``collector/`` and ``sdk/`` exported to a temp dir, first on ``PYTHONPATH``) on the same
store (or on its copy in ``--compare-workdir``), alternating which build goes first in each
round, and prints the ratio per round and whether both wrote the same findings. Then
``--new-percent`` of new spans (whole copies of the suite, fresh ids, the newest timestamps)
are inserted and ``Analyzer.analyze_changed`` (what the collector's poll runs) analyses them:
its time against the full pass's is the incremental figure.

    .venv/bin/python benchmarks/analyzer_scale.py --spans 1000000 --days 100 --workdir /tmp/ab
    .venv/bin/python benchmarks/analyzer_scale.py --workdir /tmp/ab --reuse --no-optimize \
        --repeat 3 --compare-with main
    .venv/bin/python benchmarks/analyzer_scale.py --shape sdk frameworks --workdir /tmp/ab \
        --repeat 3
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.storage._spans

from _common import REPO, machine_facts

from tests.storage._spans import otlp_to_rows, spans_ipc

DAY_NS = 86400 * 10**9
TYPED_TABLES = (
    "planscope_runs",
    "planscope_plans",
    "planscope_plan_steps",
    "planscope_step_attempts",
    "planscope_tool_calls",
    "planscope_llm_calls",
    "planscope_trace_index",
)


SHAPES = ("sdk", "frameworks")
FRAMEWORK_AGENTS = (
    "refund",
    "analyst",
    "oncall",
    "claims",
    "lab",
    "lease",
    "customs",
    "venue",
    "fleet",
    "etl",
    "restock",
    "release",
)
"""The corpus's agents on a framework instrumentation or plain OTel conventions (no planscope
attribute): everything but travel and support, which use our SDK."""
FRAMEWORK_SPLIT = "sealed11"
"""A spent split (tuned on since) that has runs of every agent, faults and traps alike."""
FRAMEWORK_RUNS_PER_AGENT = 4


def sdk_rows(runs: int, seed: int) -> list[list[Any]]:
    """OTLP-flattened rows of a labelled suite (30% faults), in ``TRACE_COLUMNS`` order."""
    import planscope
    from planscope_runners import run_suite

    with _recorded() as (provider, spans):
        planscope.configure(tracer_provider=provider)
        run_suite(runs, fault_rate=0.3, seed=seed)
    return _rows(spans)


def framework_labels() -> list[Any]:
    """The framework shape's runs: :data:`FRAMEWORK_RUNS_PER_AGENT` of each agent of
    :data:`FRAMEWORK_AGENTS` in :data:`FRAMEWORK_SPLIT`, spread over its scenarios."""
    from tests.corpus import read_labels

    labels = [lab for lab in read_labels() if lab.split == FRAMEWORK_SPLIT]
    out = []
    for agent in FRAMEWORK_AGENTS:
        mine = [lab for lab in labels if lab.agent == agent]
        step = max(1, len(mine) // FRAMEWORK_RUNS_PER_AGENT)
        out += mine[::step][:FRAMEWORK_RUNS_PER_AGENT]
    return out


def framework_rows() -> list[list[Any]]:
    """OTLP-flattened rows of :func:`framework_labels` played through their frameworks."""
    from tests.corpus import play

    with _recorded() as (provider, spans):
        play(framework_labels(), provider)
    return _rows(spans)


@contextmanager
def _recorded() -> Iterator[tuple[Any, list[Any]]]:
    """A tracer provider whose ended spans land in the yielded list when the block ends."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider, exporter = TracerProvider(), InMemorySpanExporter()
    spans: list[Any] = []
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        yield provider, spans
    finally:
        provider.shutdown()
        spans.extend(exporter.get_finished_spans())


def _rows(spans: list[Any]) -> list[list[Any]]:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return otlp_to_rows(encode_spans(spans), "bench")


def seed_rows(shape: str, where: Path, sdk_runs: int, *, fresh: bool) -> list[list[Any]]:
    """The shape's seed rows, played (``fresh``, or nothing kept yet) and kept in ``where``
    (``seed.pickle``), else the kept ones (a store's incremental copies repeat its seed)."""
    cache = where / "seed.pickle"
    if cache.exists() and not fresh:
        return list(pickle.loads(cache.read_bytes()))
    rows = sdk_rows(sdk_runs, 11) if shape == "sdk" else framework_rows()
    cache.write_bytes(pickle.dumps(rows))
    return rows


def _remap(value: str, copy: int, width: int) -> str:
    if not value:
        return ""
    return hashlib.blake2b(f"{copy}:{value}".encode(), digest_size=width // 2).hexdigest()


def replicate(rows: list[list[Any]], copy: int, shift_ns: int) -> list[list[Any]]:
    """Copy ``copy`` of ``rows``: trace, span, parent and link ids remapped (the same id gets
    the same new id within a copy, another in every other copy), times shifted by ``shift_ns``.

    >>> row = [0, "a" * 32, "b" * 16, "", *[None] * 11, [5], [], [], ["a" * 32], ["b" * 16]]
    >>> one, two = replicate([row], 1, 10)[0], replicate([row], 2, 10)[0]
    >>> one[1] == one[18][0] != two[1], one[0], one[15]
    (True, 10, [15])
    """
    out = []
    for r in rows:
        row = list(r)
        row[0] = r[0] + shift_ns
        row[1] = _remap(r[1], copy, 32)
        row[2] = _remap(r[2], copy, 16)
        row[3] = _remap(r[3], copy, 16)
        row[15] = [t + shift_ns for t in r[15]]
        row[18] = [_remap(t, copy, 32) for t in r[18]]
        row[19] = [_remap(t, copy, 16) for t in r[19]]
        out.append(row)
    return out


def fill(store: Any, base: list[list[Any]], copies: range, days: int, total: int) -> float:
    """Insert copies ``copies`` of the suite's rows (``total`` copies spread over ``days`` daily
    partitions, copy ``c`` on day ``c * days // total``; copies beyond ``total`` on the newest
    day, later than every other); seconds taken."""
    now = time.time_ns() - 3600 * 10**9
    oldest = min(r[0] for r in base)
    started = time.perf_counter()
    for copy in copies:
        day = min(days - 1, copy * days // total)
        shift = now - oldest - (days - 1 - day) * DAY_NS + copy * 10**9
        store.insert_spans(spans_ipc(replicate(base, copy, shift)))
    return time.perf_counter() - started


def findings_digest(findings: list[Any], out: Path | None) -> str:
    """md5 of every finding (all fields, sorted); written as JSON lines to ``out`` if given."""
    lines = sorted(json.dumps(f.to_dict(), sort_keys=True, default=str) for f in findings)
    text = "".join(line + "\n" for line in lines)
    if out is not None:
        out.write_text(text)
    return hashlib.md5(text.encode()).hexdigest()


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process (chDB's threads included) and of its child
    processes that have exited (a pass that ran work in child processes is counted whole)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def one_pass(workdir: Path, findings_out: Path | None) -> dict[str, Any]:
    """One full pass (``analyze_window(project, 0)``, findings written) in this process."""
    from planscope_analyzer import Analyzer
    from planscope_collector.storage import open_store

    store = open_store(f"chdb://{workdir / 'store'}")
    try:
        cpu = _cpu_seconds()
        started = time.perf_counter()
        full = Analyzer(store).analyze_window("bench", 0)
        seconds = time.perf_counter() - started
        cpu = _cpu_seconds() - cpu
    finally:
        store.close()
    return {
        "seconds": seconds,
        "cpu_s": cpu,
        # peak resident memory of the pass's process (ru_maxrss is KiB on Linux), chDB's included
        "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        "load_average": os.getloadavg(),
        "traces": full.traces,
        "spans": full.spans,
        "phases": dict(getattr(full, "phases", {})),
        "counts": full.counts(),
        "digest": findings_digest(full.findings, findings_out),
    }


def run_pass(workdir: Path, source: Path | None, findings_out: Path | None) -> dict[str, Any]:
    """:func:`one_pass` in a child process, with the analyzer of ``source`` (an exported tree)
    first on the path when given."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            [*(str(source / d) for d in EXPORTED), *filter(None, [env.get("PYTHONPATH")])]
        )
    cmd = [sys.executable, __file__, "--workdir", str(workdir), "--one-pass"]
    if findings_out is not None:
        cmd += ["--findings-out", str(findings_out)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=REPO)
    if out.returncode != 0:
        raise RuntimeError(f"full pass failed ({source or 'this checkout'}):\n{out.stderr}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


EXPORTED = ("analyzer", "collector", "sdk")
"""The packages of the other revision put first on its pass's path (the store stays this
checkout's: migrated by it, read by both)."""


def export_source(rev: str) -> Path:
    """:data:`EXPORTED` of git revision ``rev`` in a temp dir (no worktree, no repo change)."""
    target = Path(tempfile.mkdtemp(prefix="planscope-bench-analyzer-"))
    archive = subprocess.run(
        ["git", "archive", rev, *EXPORTED], cwd=REPO, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def describe(label: str, r: dict[str, Any]) -> str:
    phases = ", ".join(f"{k} {v:.1f} s" for k, v in r["phases"].items())
    return (
        f"  {label}: {r['traces']} traces, {r['spans']} spans in {r['seconds']:.1f} s "
        f"({r['spans'] / r['seconds']:,.0f} spans/s), CPU {r['cpu_s']:.1f} s, "
        f"peak RSS {r.get('max_rss_mib', 0)} MiB; {phases}; "
        f"findings md5 {r['digest'][:12]}; load average {r['load_average'][0]:.1f}"
    )


def shape_dir(workdir: Path, shape: str) -> Path:
    """Where a shape's store, seed and ``copies.json`` live (the sdk shape in ``workdir``
    itself, as before there were shapes)."""
    return workdir if shape == "sdk" else workdir / shape


def prepare(where: Path, shape: str, args: argparse.Namespace) -> float:
    """Build the shape's store in ``where`` unless ``--reuse``, merge its parts unless
    ``--no-optimize``; seconds spent inserting."""
    from planscope_collector.storage import open_store

    where.mkdir(parents=True, exist_ok=True)
    store = open_store(f"chdb://{where / 'store'}")
    insert_s = 0.0
    try:
        if not args.reuse:
            store.migrate(ttl_days=max(365, args.days + 30))
            started = time.perf_counter()
            base = seed_rows(shape, where, args.seed_runs, fresh=True)
            copies = max(1, round(args.spans / len(base)))
            print(
                f"{shape} seed: {len(base)} spans ({time.perf_counter() - started:.1f} s); "
                f"{copies} copies over {args.days} days",
                flush=True,
            )
            insert_s = fill(store, base, range(copies), args.days, copies)
            (where / "copies.json").write_text(
                json.dumps({"total": copies, "next": copies, "days": args.days})
            )
        if not args.no_optimize:
            started = time.perf_counter()
            for table in TYPED_TABLES:
                store.command(f"OPTIMIZE TABLE {table} FINAL")
            print(f"{shape}: merged parts in {time.perf_counter() - started:.1f} s", flush=True)
        total = store.query(
            "SELECT count() AS n, uniqExact(TraceId) AS t FROM otel_traces WHERE Project = 'bench'"
        )[0]
    finally:
        store.close()
    print(
        f"{shape} store: {total['n']} spans / {total['t']} traces (insert {insert_s:.1f} s)",
        flush=True,
    )
    return insert_s


def drop_bindings(where: Path, ttl_days: int) -> None:
    """Empty the store's ``planscope_trace_bindings`` (migration 0035, applied with the
    store's retention if it is not yet: a shorter one would drop the older traces' bindings):
    the next pass of this checkout binds every trace again, as on a store analysed for the
    first time."""
    from planscope_collector.storage import open_store

    store = open_store(f"chdb://{where / 'store'}")
    try:
        store.migrate(ttl_days=ttl_days)
        store.command("TRUNCATE TABLE planscope_trace_bindings")
    finally:
        store.close()


def compare(
    shape: str,
    rev: str,
    mine: list[dict[str, Any]],
    theirs: list[dict[str, Any]],
    rebound: bool,
) -> dict[str, Any]:
    """Paired figures of this checkout's passes against ``rev``'s on one shape (printed);
    ``rebound``: the stored bindings were dropped first, so the first pass binds and stores."""
    ratios = [b["seconds"] / a["seconds"] for a, b in zip(mine, theirs, strict=True)]
    cpu_ratios = [b["cpu_s"] / a["cpu_s"] for a, b in zip(mine, theirs, strict=True)]
    base_s = statistics.median(x["seconds"] for x in theirs)
    base_cpu = statistics.median(x["cpu_s"] for x in theirs)
    same = {x["digest"] for x in mine} == {x["digest"] for x in theirs}
    if len(mine) > 1:  # a first pass after --rebind bound and stored, the later ones read
        later = cpu_ratios[1:]
        first = "first pass (binds, stores)" if rebound else "first pass (bindings as stored)"
        print(
            f"{shape}: {first} CPU {mine[0]['cpu_s']:.1f} s against "
            f"{theirs[0]['cpu_s']:.1f} (ratio {cpu_ratios[0]:.2f}), peak RSS "
            f"{mine[0]['max_rss_mib']} against {theirs[0]['max_rss_mib']} MiB; later passes "
            f"(stored bindings) CPU median "
            f"{statistics.median(x['cpu_s'] for x in mine[1:]):.1f} s against "
            f"{statistics.median(x['cpu_s'] for x in theirs[1:]):.1f}, CPU ratio per round "
            f"{[round(x, 2) for x in later]}, median {statistics.median(later):.2f}x; peak RSS "
            f"{[x['max_rss_mib'] for x in mine[1:]]} against "
            f"{[x['max_rss_mib'] for x in theirs[1:]]} MiB"
        )
    print(
        f"{shape} full pass, {rev}: median {base_s:.1f} s, CPU {base_cpu:.1f} s; "
        f"speed-up per round {[round(x, 2) for x in ratios]}, median "
        f"{statistics.median(ratios):.2f}x; CPU ratio per round "
        f"{[round(x, 2) for x in cpu_ratios]}; same findings: {'yes' if same else 'NO'}"
    )
    if not same:  # rules changed between the builds: what each found, kind by kind
        print(
            f"{shape} findings per kind: this checkout {mine[-1]['counts']}; "
            f"{rev} {theirs[-1]['counts']}"
        )
    return {
        "rev": rev,
        "passes_s": [round(x["seconds"], 2) for x in theirs],
        "median_s": round(base_s, 2),
        "cpu_s": [round(x["cpu_s"], 2) for x in theirs],
        "median_cpu_s": round(base_cpu, 2),
        "speedup_per_round": [round(x, 3) for x in ratios],
        "cpu_ratio_per_round": [round(x, 3) for x in cpu_ratios],
        "same_findings": same,
        "findings": theirs[-1]["counts"],
    }


def incremental(
    where: Path, shape: str, args: argparse.Namespace, full: tuple[float, float], spans: int
) -> dict[str, Any] | None:
    """``--new-percent`` of new spans (whole copies of the shape's seed, the newest times)
    inserted, then ``analyze_changed`` over them and once more with nothing new (printed), in
    wall and CPU seconds (this process's, chDB's threads included), each against the full
    pass's median (``full``: wall, CPU)."""
    from planscope_analyzer import Analyzer
    from planscope_collector.storage import open_store

    copies_file = where / "copies.json"
    if not copies_file.exists():
        print(f"{shape}: no copies.json in the workdir (an older store): incremental skipped")
        return None
    state = json.loads(copies_file.read_text())
    base = seed_rows(shape, where, args.seed_runs, fresh=False)
    n_new = max(1, round(state["total"] * args.new_percent / 100))
    store = open_store(f"chdb://{where / 'store'}")
    try:
        analyzer = Analyzer(store)
        since = time.time_ns()
        first = state["next"]
        fill(store, base, range(first, first + n_new), state["days"], state["total"])
        state["next"] = first + n_new
        copies_file.write_text(json.dumps(state))
        cpu, began = _cpu_seconds(), time.perf_counter()
        inc = analyzer.analyze_changed("bench", since - 7200 * 10**9)
        inc_s, inc_cpu = time.perf_counter() - began, _cpu_seconds() - cpu
        cpu, began = _cpu_seconds(), time.perf_counter()
        again = analyzer.analyze_changed("bench", since - 7200 * 10**9)
        again_s, again_cpu = time.perf_counter() - began, _cpu_seconds() - cpu
    finally:
        store.close()
    full_s, full_cpu = full
    print(
        f"{shape} incremental: {n_new} new copies, {inc.traces} traces / {inc.spans} spans "
        f"({100 * inc.spans / spans:.2f}% of the store) in {inc_s:.2f} s = "
        f"{100 * inc_s / full_s:.2f}% of the full pass, CPU {inc_cpu:.2f} s = "
        f"{100 * inc_cpu / full_cpu:.2f}% of its CPU; nothing new: {again.traces} "
        f"traces in {again_s:.2f} s, CPU {again_cpu:.2f} s"
    )
    return {
        "traces": inc.traces,
        "spans": inc.spans,
        "seconds": round(inc_s, 3),
        "cpu_s": round(inc_cpu, 3),
        "share_of_full": round(inc_s / full_s, 4),
        "cpu_share_of_full": round(inc_cpu / full_cpu, 4),
        "phases_s": {k: round(v, 3) for k, v in inc.phases.items()},
        "unchanged_pass_s": round(again_s, 3),
        "unchanged_pass_cpu_s": round(again_cpu, 3),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--spans", type=int, default=1_000_000)
    p.add_argument("--days", type=int, default=100)
    p.add_argument("--seed-runs", type=int, default=400, help="the sdk shape's suite runs")
    p.add_argument(
        "--shape",
        nargs="+",
        choices=SHAPES,
        default=["sdk"],
        help="the store(s) to build and time, round by round in one run",
    )
    p.add_argument("--workdir", type=Path)
    p.add_argument("--json", type=Path, help="also write the figures here")
    p.add_argument("--reuse", action="store_true", help="analyse the store(s) in --workdir as is")
    p.add_argument("--repeat", type=int, default=1, help="full passes per build (median)")
    p.add_argument("--compare-with", metavar="REV", help="also time REV's analyzer, interleaved")
    p.add_argument(
        "--compare-workdir",
        type=Path,
        help="REV's passes analyse the store(s) here (a copy of --workdir) instead: a store "
        "keeps one binding row per trace, so two builds of different BINDING_VERSIONs on one "
        "store replace each other's rows and each re-binds the traces whose rows merges dropped",
    )
    p.add_argument(
        "--new-percent",
        type=float,
        default=1.0,
        help="new spans to add (share of the store, in whole seed copies) for the incremental "
        "pass; 0 skips it",
    )
    p.add_argument(
        "--findings-out",
        type=Path,
        help="write this checkout's full-pass findings here (JSON lines, sorted; a shape other "
        "than sdk adds -SHAPE to the file's name)",
    )
    p.add_argument(
        "--no-optimize",
        action="store_true",
        help="skip OPTIMIZE ... FINAL (merging the parts, as a long-running store's)",
    )
    p.add_argument(
        "--rebind",
        action="store_true",
        help="drop the stored bindings first (this checkout's first full pass binds every "
        "trace and stores the bindings; the later ones read them)",
    )
    p.add_argument("--one-pass", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one_pass:
        print(json.dumps(one_pass(args.workdir, args.findings_out)))
        return 0

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="ps-analyzer-bench-"))
    shapes: list[str] = list(dict.fromkeys(args.shape))
    dirs = {shape: shape_dir(workdir, shape) for shape in shapes}
    base_dirs = {shape: shape_dir(args.compare_workdir or workdir, shape) for shape in shapes}
    insert_s = {shape: prepare(dirs[shape], shape, args) for shape in shapes}
    if args.rebind:
        for shape in shapes:
            for where in {dirs[shape], base_dirs[shape]}:
                drop_bindings(where, max(365, args.days + 30))

    def findings_out(shape: str) -> Path | None:
        out: Path | None = args.findings_out
        if out is None or shape == "sdk":
            return out
        return out.with_name(f"{out.stem}-{shape}{out.suffix}")

    baseline = export_source(args.compare_with) if args.compare_with else None
    mine: dict[str, list[dict[str, Any]]] = {shape: [] for shape in shapes}
    theirs: dict[str, list[dict[str, Any]]] = {shape: [] for shape in shapes}
    try:
        for r in range(max(1, args.repeat)):
            builds = [None, baseline] if r % 2 == 0 else [baseline, None]
            for shape in shapes if r % 2 == 0 else shapes[::-1]:
                for source in builds if baseline is not None else [None]:
                    out = findings_out(shape) if source is None else None
                    where = dirs[shape] if source is None else base_dirs[shape]
                    result = run_pass(where, source, out)
                    (mine if source is None else theirs)[shape].append(result)
                    label = "this checkout" if source is None else args.compare_with
                    print(f"round {r + 1} {shape}" + describe(label, result), flush=True)
    finally:
        if baseline is not None:
            shutil.rmtree(baseline, ignore_errors=True)

    figures: dict[str, Any] = {"machine": machine_facts(), "load_average": os.getloadavg()}
    for shape in shapes:
        passes = mine[shape]
        full_s = statistics.median(x["seconds"] for x in passes)
        cpu_s = statistics.median(x["cpu_s"] for x in passes)
        spans = passes[-1]["spans"]
        print(
            f"\n{shape} full pass, this checkout: median {full_s:.1f} s "
            f"({spans / full_s:,.0f} spans/s), CPU {cpu_s:.1f} s"
        )
        comparison = (
            compare(shape, args.compare_with, passes, theirs[shape], args.rebind)
            if baseline
            else None
        )
        inc = (
            incremental(dirs[shape], shape, args, (full_s, cpu_s), spans)
            if args.new_percent > 0
            else None
        )
        figures[shape] = {
            "spans": spans,
            "traces": passes[-1]["traces"],
            "insert_s": round(insert_s[shape], 2),
            "full_s": round(full_s, 2),
            "full_cpu_median_s": round(cpu_s, 2),
            "full_passes_s": [round(x["seconds"], 2) for x in passes],
            "full_cpu_s": [round(x["cpu_s"], 2) for x in passes],
            "full_max_rss_mib": [x["max_rss_mib"] for x in passes],
            "full_load_average": [x["load_average"] for x in passes],
            "full_phases_s": {k: round(v, 2) for k, v in passes[-1]["phases"].items()},
            "full_spans_per_s": round(spans / full_s),
            "findings": passes[-1]["counts"],
            "findings_md5": passes[-1]["digest"],
            "baseline": comparison,
            "incremental": inc,
        }
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Score the detectors on the independent corpus (tests/corpus), next to simple baselines.

Plays every labelled run of the corpus (three agents written for it, none on
``planscope_runners``) through the real OTel SDK and OTLP/HTTP into a real collector on an
embedded store, analyses the traces with the built-in detectors, and scores, per split
(dev / held-out), per failure kind:

* trace level: the run has a finding of the labelled kind (a finding of a kind on a run not
  labelled with it is a false positive);
* step level: the finding also names the labelled step. A finding that names no step (the
  detector could not tie the work to a plan step) is a step-level miss on a run labelled with
  its kind, not a false positive; on any other run it is a false positive at both levels.

Baselines, scored on the same traces in the same run:

* ``>=3 failed attempts``: any step with at least 3 failed attempts, or a tool with at least 3
  failed calls in one parent span, is a runaway loop at that step;
* ``empty context``: any attempt whose recorded context keys are empty while its plan step
  requires keys is context-starved;
* ``first state change``: a failed run is a plan-propagation failure at its first step that made
  a write/irreversible tool call (else its first step).

    .venv/bin/python benchmarks/detector_corpus.py [--json out.json] [--split dev|heldout]

``--without-readers macros,commands`` switches those format plan readers off for the run (for
measurement only: the plans they read reach only the generic path, as a new agent's would).

The sealed splits (built after the last tuning, labels committed first) are left out unless
``--sealed``, ``--sealed2`` ... ``--sealed28`` is given, which scores that split
alone: run it once, at the end, and report it apart.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import machine_facts, print_table, write_json
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from planscope import semconv as A
from planscope_analyzer import Analyzer, Finding, TraceData, load_traces
from planscope_collector import observed

from tests.corpus import KINDS, Label, all_labels, play, read_labels

HEALTHY = "healthy"
SEALED = (
    "sealed",
    "sealed2",
    "sealed3",
    "sealed4",
    "sealed5",
    "sealed6",
    "sealed7",
    "sealed8",
    "sealed9",
    "sealed10",
    "sealed11",
    "sealed12",
    "sealed13",
    "sealed14",
    "sealed15",
    "sealed16",
    "sealed17",
    "sealed18",
    "sealed19",
    "sealed20",
    "sealed21",
    "sealed22",
    "sealed23",
    "sealed24",
    "sealed25",
    "sealed26",
    "sealed27",
    "sealed28",
    "sealed29",
    "sealed30",
    "sealed31",
    "sealed32",
    "sealed33",
    "sealed34",
    "sealed35",
    "sealed36",
    "sealed37",
    "sealed38",
    "sealed39",
    "sealed40",
    "sealed41",
    "sealed42",
    "sealed43",
    "sealed44",
    "sealed45",
    "sealed46",
    "sealed47",
    "sealed48",
    "sealed49",
    "sealed50",
    "sealed51",
    "sealed52",
    "sealed53",
    "sealed55",
    "sealed56",
    "sealed54",
    "sealed59",
    "sealed57",
    "sealed58",
    "sealed61",
    "sealed60",
    "sealed62",
    "sealed65",
    "sealed63",
    "sealed64",
    "sealed68",
    "sealed66",
    "sealed67",
    "sealed69",
    "sealed70",
    "sealed71",
    "sealed72",
    "sealed73",
    "sealed74",
    "sealed75",
    "sealed76",
    "sealed77",
    "sealed78",
    "sealed79",
    "sealed80",
    "sealed81",
    "sealed82",
    "sealed83",
    "sealed84",
    "sealed85",
)
"""Splits scored once, each only when asked for (``--sealed28``); left out of the plain scoring."""
_PREFIXES = ("invoke_agent ", "execute_step ", "execute_tool ")


def step_name(step: str) -> str:
    """A step id as labelled: operation prefixes of span names dropped."""
    for p in _PREFIXES:
        if step.startswith(p):
            return step[len(p) :]
    return step


# --- baselines --------------------------------------------------------------------------
Pair = tuple[str, str]
"""(kind, step) of one finding."""


def _parent_names(t: TraceData) -> dict[str, str]:
    return {s.span_id: s.name for s in t.raw or ()}


def baseline_loops(t: TraceData) -> list[Pair]:
    failed: dict[str, int] = defaultdict(int)
    for a in t.attempts:
        failed[a.step_id] += a.failed
    out = {s for s, n in failed.items() if n >= 3}
    names = _parent_names(t)
    attempts = {a.span_id: a.step_id for a in t.attempts}
    calls: dict[tuple[str, str], int] = defaultdict(int)
    for c in t.tools:
        calls[(c.parent_span_id, c.tool)] += c.failed
    for (parent, _tool), n in calls.items():
        if n >= 3:
            out.add(attempts.get(parent) or names.get(parent, ""))
    return [(A.FINDING_RUNAWAY_LOOP, s) for s in out]


def baseline_starved(t: TraceData) -> list[Pair]:
    requires = {(s.plan_id, s.plan_version, s.step_id): s.requires for s in t.plan_steps}
    return list(
        {
            (A.FINDING_CONTEXT_STARVED, a.step_id)
            for a in t.attempts
            if not a.context_keys and requires.get((a.plan_id, a.plan_version, a.step_id))
        }
    )


def baseline_first_state_change(t: TraceData) -> list[Pair]:
    run = t.run
    failed = (run is not None and run.outcome == A.OUTCOME_FAILURE) or any(
        s.status_code == "Error" and not s.parent_span_id for s in t.raw or ()
    )
    if not failed:
        return []
    names = _parent_names(t)
    attempts = {a.span_id: a.step_id for a in t.attempts}
    for c in sorted(t.tools, key=lambda c: c.start_ns):
        if c.effect in (A.EFFECT_WRITE, A.EFFECT_IRREVERSIBLE):
            return [(A.FINDING_PLAN_PROPAGATION, c.step_id or attempts.get(c.parent_span_id, ""))]
    first = sorted(t.attempts, key=lambda a: a.start_ns)
    if first:
        return [(A.FINDING_PLAN_PROPAGATION, first[0].step_id)]
    tools = sorted(t.tools, key=lambda c: c.start_ns)
    return [(A.FINDING_PLAN_PROPAGATION, names.get(tools[0].parent_span_id, ""))] if tools else []


BASELINES: dict[str, Callable[[TraceData], list[Pair]]] = {
    ">=3 failed attempts": baseline_loops,
    "empty context": baseline_starved,
    "first state change": baseline_first_state_change,
}
BASELINE_KIND = {
    ">=3 failed attempts": A.FINDING_RUNAWAY_LOOP,
    "empty context": A.FINDING_CONTEXT_STARVED,
    "first state change": A.FINDING_PLAN_PROPAGATION,
}


# --- scoring ----------------------------------------------------------------------------
def score(labels: Sequence[Label], found: dict[str, list[Pair]], kind: str) -> dict[str, Any]:
    """Trace- and step-level TP/FP/FN of one kind (counted once per run)."""
    c: dict[str, Any] = {
        "t_tp": 0, "t_fp": 0, "t_fn": 0, "s_tp": 0, "s_fp": 0, "s_fn": 0, "labelled": 0
    }  # fmt: skip
    for lab in labels:
        steps = {step_name(s) for k, s in found.get(lab.run, ()) if k == kind}
        if lab.kind == kind:
            c["labelled"] += 1
            c["t_tp" if steps else "t_fn"] += 1
            hit = bool(lab.step) and lab.step in steps
            c["s_tp" if hit else "s_fn"] += 1
            # a finding that names no step ('') claims no step: a miss, not a wrong step
            c["s_fp"] += bool(steps - {lab.step, ""})
        elif steps:
            c["t_fp"] += 1
            c["s_fp"] += 1

    def ratio(a: int, b: int) -> float | None:
        return a / (a + b) if a + b else None

    c["t_precision"], c["t_recall"] = ratio(c["t_tp"], c["t_fp"]), ratio(c["t_tp"], c["t_fn"])
    c["s_precision"], c["s_recall"] = ratio(c["s_tp"], c["s_fp"]), ratio(c["s_tp"], c["s_fn"])
    return c


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def report(
    title: str,
    labels: Sequence[Label],
    detectors: dict[str, list[Pair]],
    baselines: dict[str, dict[str, list[Pair]]],
) -> dict[str, Any]:
    rows: list[list[Any]] = []
    out: dict[str, Any] = {}
    for kind in KINDS:
        methods = {"detectors": detectors} | {
            name: found for name, found in baselines.items() if BASELINE_KIND[name] == kind
        }
        for name, found in methods.items():
            s = score(labels, found, kind)
            out[f"{kind}/{name}"] = s
            rows.append(
                [
                    kind,
                    name,
                    s["labelled"],
                    _f(s["t_precision"]),
                    _f(s["t_recall"]),
                    _f(s["s_precision"]),
                    _f(s["s_recall"]),
                    s["s_tp"],
                    s["s_fp"],
                    s["s_fn"],
                ]
            )
    print_table(
        title,
        ["kind", "method", "labelled", "trace P", "trace R", "step P", "step R", "TP", "FP", "FN"],
        rows,
    )
    healthy = [lab for lab in labels if lab.kind == HEALTHY]
    flagged = [lab for lab in healthy if detectors.get(lab.run)]
    kinds: dict[str, int] = defaultdict(int)
    for lab in flagged:
        for k, _ in detectors[lab.run]:
            kinds[k] += 1
    print(f"healthy runs with any finding: {len(flagged)}/{len(healthy)} {dict(kinds) or ''}")
    out["healthy_flagged"] = len(flagged)
    out["healthy_total"] = len(healthy)
    out["healthy_kinds"] = dict(kinds)
    return out


Recorded = tuple[dict[str, str], Sequence[ReadableSpan]]
"""Runs already played (:func:`record`): run name -> trace id, and their ended spans."""


def record(labels: Sequence[Label]) -> Recorded:
    """Play the runs once and keep their spans in memory (to export them, or changed, later)."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider()
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    ids = play(labels, provider)
    provider.shutdown()
    return ids, memory.get_finished_spans()


def collect(
    labels: Sequence[Label],
    workdir: Path,
    unread: Sequence[str] = (),
    recorded: Recorded | None = None,
) -> tuple[dict[str, str], list[Finding], dict, dict[str, set[str]], set[str]]:
    """Play the runs into a real collector; return trace ids, findings, loaded traces, per
    trace of an ``unread`` agent the plan steps the span model had read at ingest, and the
    traces whose plan was read from structure (no plan row stored).
    ``unread``: agents whose plans the span model read at ingest are deleted before analysis
    (leave-one-format-out: their plan format's reader switched off on their runs only).
    ``recorded``: export these spans (of the runs ``labels`` names) instead of playing."""
    import httpx
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from planscope_collector import BackgroundServer, CollectorSettings

    settings = CollectorSettings(data_dir=workdir / "data", port=0, flush_interval=0.2)
    formatted: dict[str, set[str]] = {}
    # a scoring run on a shared 2-core machine (load ~20) can take minutes to start the store;
    # the default 60 s failed whole runs there ("collector failed to start")
    with BackgroundServer(settings, start_timeout=600.0) as server:
        provider = TracerProvider()
        sent = _Count()
        provider.add_span_processor(sent)
        exporter = _Exported(OTLPSpanExporter(endpoint=f"{server.url}/v1/traces"))
        # A queue no run fills (the default, 2048, drops spans silently when the agents outrun
        # the exporter); whatever still fails to export is counted and stops the scoring.
        provider.add_span_processor(BatchSpanProcessor(exporter, max_queue_size=1 << 20))
        if recorded is None:
            ids = play(labels, provider)
        else:
            ids = {lab.run: recorded[0][lab.run] for lab in labels}
            spans = recorded[1]
            sent.spans = len(spans)
            # 128 spans a request: 512 of the agents' longest spans (whole conversations in
            # their attributes) passed the collector's 16 MiB body limit (a 413)
            for i in range(0, len(spans), 128):
                exporter.export(spans[i : i + 128])
        provider.force_flush()
        provider.shutdown()
        if exporter.spans != sent.spans:
            raise SystemExit(
                f"{sent.spans - exporter.spans} of {sent.spans} spans were not exported "
                f"({exporter.failed} in failed batches): the scores would be wrong"
            )
        store = server.app.state.collector.store
        deadline = time.monotonic() + 300
        # Wait for every span, not just every trace: a trace analysed while half of its spans
        # are still in the spool loses its findings.
        while time.monotonic() < deadline:
            if httpx.get(f"{server.url}/readyz").json()["spool_pending_bytes"] == 0:
                n = store.query(
                    "SELECT count() AS n FROM otel_traces "
                    "WHERE Project = 'default' AND TraceId IN {ids:Array(String)}",
                    {"ids": list(ids.values())},
                )
                if int(n[0]["n"]) >= sent.spans:
                    break
            time.sleep(0.2)
        else:
            raise SystemExit(f"timed out waiting for {sent.spans} spans to be stored")
        if unread:
            off = [ids[lab.run] for lab in labels if lab.agent in unread]
            for r in store.query(
                "SELECT TraceId, groupUniqArray(StepId) AS steps FROM planscope_plan_steps "
                "WHERE Inferred = 1 AND TraceId IN {ids:Array(String)} GROUP BY TraceId",
                {"ids": off},
            ):
                formatted[r["TraceId"]] = set(r["steps"])
            for table in ("planscope_plans", "planscope_plan_steps"):
                store.command(
                    f"ALTER TABLE {table} DELETE WHERE Inferred = 1 AND TraceId IN "
                    "{ids:Array(String)} SETTINGS mutations_sync = 2",
                    {"ids": off},
                )
        stored = {
            r["TraceId"]
            for r in store.query(
                "SELECT DISTINCT TraceId FROM planscope_plans WHERE TraceId IN {ids:Array(String)}",
                {"ids": list(ids.values())},
            )
        }
        result = Analyzer(store).analyze("default", list(ids.values()), write=False)
        traces = load_traces(store, "default", list(ids.values()))
    # a plan of a trace with no stored plan row was read from structure (observed.read_plans)
    read = {t for t, d in traces.items() if d.plans and t not in stored}
    return ids, list(result.findings), traces, formatted, read


class _Exported(SpanExporter):
    """Counts the spans an exporter accepted, and those in batches it failed."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner
        self.spans = 0
        self.failed = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        result = self.inner.export(spans)
        if result is SpanExportResult.SUCCESS:
            self.spans += len(spans)
        else:
            self.failed += len(spans)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.inner.force_flush(timeout_millis)


class _Count(SpanProcessor):
    """Counts the spans the agents ended (what the collector must end up storing)."""

    def __init__(self) -> None:
        self.spans = 0

    def on_end(self, span: ReadableSpan) -> None:
        self.spans += 1


def plan_steps(t: TraceData) -> set[str]:
    """The step ids of a loaded trace's plans."""
    return {s.step_id for s in t.plan_steps}


def by_run(ids: dict[str, str], pairs: Iterable[tuple[str, Pair]]) -> dict[str, list[Pair]]:
    run_of = {t: r for r, t in ids.items()}
    out: dict[str, list[Pair]] = defaultdict(list)
    for trace_id, pair in pairs:
        if trace_id in run_of:
            out[run_of[trace_id]].append(pair)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--split", choices=["dev", "heldout"], help="only this split")
    for split in SEALED:
        parser.add_argument(
            f"--{split}",
            action="store_true",
            help=f"score only the {split} split (once, at the end)",
        )
    parser.add_argument("--misses", action="store_true", help="list misses and false findings")
    parser.add_argument("--agent", action="append", help="only this agent's runs (repeatable)")
    parser.add_argument(
        "--unread",
        action="append",
        default=[],
        help="delete the plans the span model read at ingest for this agent's runs before "
        "analysis (leave-one-format-out; repeatable)",
    )
    parser.add_argument(
        "--without-readers",
        default="",
        help="for measurement only: switch these format plan readers off (comma-separated, of "
        f"{', '.join(observed.PLAN_READERS)}), so the plans they read reach only the generic "
        "path (leave one reader out)",
    )
    args = parser.parse_args(argv)
    try:
        observed.switch_off_plan_readers(filter(None, args.without_readers.split(",")))
    except ValueError as e:
        parser.error(str(e))
    labels = read_labels()
    if [lab.to_dict() for lab in labels] != [lab.to_dict() for lab in all_labels()]:
        print("tests/corpus/labels.jsonl differs from the generator", file=sys.stderr)
        return 1
    chosen = {split for split in SEALED if getattr(args, split)}
    if chosen:
        labels = [lab for lab in labels if lab.split in chosen]
    else:
        labels = [lab for lab in labels if lab.split not in SEALED]
    if args.split:
        labels = [lab for lab in labels if lab.split == args.split]
    if args.agent:
        labels = [lab for lab in labels if lab.agent in args.agent]
    with tempfile.TemporaryDirectory(prefix="ps-corpus-") as tmp:
        started = time.perf_counter()
        ids, findings, traces, formatted, read = collect(labels, Path(tmp), args.unread)
        elapsed = time.perf_counter() - started
    detectors = by_run(ids, ((f.trace_id, (f.kind, f.step_id)) for f in findings))
    baselines = {
        name: by_run(ids, ((tid, p) for tid, t in traces.items() for p in fn(t)))
        for name, fn in BASELINES.items()
    }
    payload: dict[str, Any] = {"machine": machine_facts(), "runs": len(labels), "seconds": elapsed}
    for split in ("dev", "heldout", *SEALED):
        part = [lab for lab in labels if lab.split == split]
        if part:
            payload[split] = report(f"{split} ({len(part)} runs)", part, detectors, baselines)
    for agent in sorted({lab.agent for lab in labels}):
        part = [lab for lab in labels if lab.agent == agent]
        payload[f"agent:{agent}"] = report(
            f"agent {agent} ({len(part)} runs)", part, detectors, baselines
        )
    print("\nruns whose plan was read from structure (no format reader read one), per agent:")
    for agent in sorted({lab.agent for lab in labels}):
        runs = [ids[lab.run] for lab in labels if lab.agent == agent]
        print(f"  {agent}: {sum(t in read for t in runs)}/{len(runs)}")
    for agent in args.unread:
        # leave-one-format-out: the steps the structural reader recovered of the format reader's
        runs = [ids[lab.run] for lab in labels if lab.agent == agent]
        ref = sum(len(formatted.get(t, ())) for t in runs)
        recovered = sum(len(formatted.get(t, set()) & plan_steps(traces[t])) for t in runs)
        extra = sum(len(plan_steps(traces[t]) - formatted.get(t, set())) for t in runs)
        planned = sum(bool(plan_steps(traces[t])) for t in runs)
        print(
            f"\n{agent}, format reader off: plan steps recovered {recovered}/{ref}, {extra} steps "
            f"read that it did not read; runs with a plan {planned}/{len(runs)} "
            f"(it read {sum(t in formatted for t in runs)})"
        )
        payload[f"unread:{agent}"] = {"recovered": recovered, "reference": ref, "extra": extra}
    if args.misses:
        print("\nmisses and false findings (detectors):")
        for lab in labels:
            got = detectors.get(lab.run, [])
            want = [(lab.kind, lab.step)] if lab.kind != HEALTHY else []
            mine = [(k, step_name(s)) for k, s in got if k in KINDS]
            if sorted(mine) != sorted(want) or (lab.kind == HEALTHY and got):
                print(f"  {lab.run} {lab.scenario}: want {want} got {got}")
    if args.without_readers:
        print(f"\nformat plan readers switched off (measurement only): {args.without_readers}")
    print(f"\n{len(labels)} runs played, stored and analysed in {elapsed:.1f} s (busy machine)")
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())

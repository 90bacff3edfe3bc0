"""Score detectors against the reference runtime's ground-truth labels.

A reported finding is a true positive when its trace has an expected finding of the same kind
at the same plan step (``strict``), a false positive otherwise; an expected finding nobody
reported is a miss. Kinds the runtime does not label (``plan_drift``, ``data_quality``) are
counted separately: on the reference runtime every one of them is a false alarm.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planscope import semconv as A

from ._model import Finding

LABELED_KINDS = A.LABELED_FINDING_KINDS
MAIN_KINDS = LABELED_KINDS[:3]
"""The three failure modes with precision/recall targets."""

# Attributes removed to simulate runtimes that send less (see docs/analyzers.md).
DEGRADE_LEVELS: dict[str, tuple[str, ...]] = {
    "partial": (
        A.STEP_ERROR_FINGERPRINT,
        A.STEP_INPUT_HASH,
        A.TOOL_ARGS_HASH,
        A.STEP_CONTEXT_KEYS,
        A.STEP_CONTEXT_TOKENS,
        A.RUN_BUDGET,
    ),
    "no-context-no-budget": (
        A.STEP_CONTEXT_KEYS,
        A.STEP_CONTEXT_TOKENS,
        A.RUN_BUDGET,
        A.STEP_ERROR_FINGERPRINT,
    ),
}
GENAI_ONLY = "genai-only"
"""Every ``planscope.*`` attribute removed: what a third-party OTel GenAI agent sends."""


@dataclass
class KindScore:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    component_ok: int = 0

    # None (shown as n/a) when undefined: nothing reported, or nothing to find. A 1.000 there
    # would read as a perfect score for a detector that found nothing.
    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None:
            return None
        return 2 * p * r / (p + r) if p + r else 0.0


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _fmt(value: float | None) -> str:
    """Three decimals, or n/a when undefined.

    >>> _fmt(None), _fmt(0.5)
    ('n/a', '0.500')
    """
    return "n/a" if value is None else f"{value:.3f}"


@dataclass
class Report:
    """The outcome of scoring findings against labels."""

    runs: int = 0
    scores: dict[str, KindScore] = field(default_factory=dict)
    confusion: dict[str, Counter[str]] = field(default_factory=dict)
    misses: list[dict[str, Any]] = field(default_factory=list)
    false_positives: list[dict[str, Any]] = field(default_factory=list)
    unlabeled: Counter[str] = field(default_factory=Counter)
    negatives_flagged: int = 0
    negatives_total: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "scores": {
                k: {
                    "tp": s.tp,
                    "fp": s.fp,
                    "fn": s.fn,
                    "precision": _round(s.precision),
                    "recall": _round(s.recall),
                    "f1": _round(s.f1),
                    "component_ok": s.component_ok,
                }
                for k, s in self.scores.items()
            },
            "confusion": {k: dict(v) for k, v in self.confusion.items()},
            "misses": self.misses,
            "false_positives": self.false_positives,
            "unlabeled_findings": dict(self.unlabeled),
            "negatives_flagged": self.negatives_flagged,
            "negatives_total": self.negatives_total,
        }

    def table(self) -> str:
        """A markdown table of the scores, then the confusion table."""
        lines = [
            "| failure mode | TP | FP | FN | precision | recall | F1 | blame ok |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for k in LABELED_KINDS:
            s = self.scores.get(k, KindScore())
            lines.append(
                f"| {k} | {s.tp} | {s.fp} | {s.fn} | {_fmt(s.precision)} | {_fmt(s.recall)} | "
                f"{_fmt(s.f1)} | {s.component_ok}/{s.tp} |"
            )
        lines.append("")
        lines.append(
            f"healthy recoveries (negative labels) flagged: {self.negatives_flagged}"
            f"/{self.negatives_total}; unlabeled kinds reported: "
            f"{dict(self.unlabeled) or 'none'}"
        )
        lines.append("")
        lines.append(
            "confusion (rows: expected kind or 'none'; columns: reported kinds on the same trace)"
        )
        cols = [*LABELED_KINDS, "none"]
        lines.append("| expected \\ reported | " + " | ".join(c[:12] for c in cols) + " |")
        lines.append("|---|" + "---:|" * len(cols))
        for row in [*LABELED_KINDS, "none"]:
            counts = self.confusion.get(row, Counter())
            lines.append(f"| {row} | " + " | ".join(str(counts.get(c, 0)) for c in cols) + " |")
        return "\n".join(lines)


def load_labels(path: str | Path) -> list[dict[str, Any]]:
    """Read a runners labels JSONL file."""
    with Path(path).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _matches(f: Finding, expected: Mapping[str, Any]) -> bool:
    """A finding is the expected one: same kind at the same plan step. A write conflict is a
    pair of steps, named in either order (the finding sits at the writer that started second,
    which thread scheduling decides; the label at the one that lost its edge)."""
    if f.kind != expected["kind"]:
        return False
    if f.step_id == expected["step_id"]:
        return True
    other = (expected.get("detail") or {}).get("other")
    return (
        f.kind == A.FINDING_WRITE_CONFLICT
        and bool(other)
        and {f.step_id, f.detail.get("other")} == {expected["step_id"], other}
    )


def score(labels: Sequence[Mapping[str, Any]], findings: Iterable[Finding]) -> Report:
    """Score findings (of any traces) against labels (one per run).

    >>> score([{"trace_id": "t", "expected_findings": [], "negative_findings": []}], []).runs
    1
    """
    by_trace: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        by_trace[f.trace_id].append(f)
    report = Report(runs=len(labels))
    report.scores = {k: KindScore() for k in LABELED_KINDS}
    report.confusion = {k: Counter() for k in [*LABELED_KINDS, "none"]}
    for label in labels:
        trace = label["trace_id"]
        reported = by_trace.get(trace, [])
        expected = [e for e in label.get("expected_findings", []) if e["kind"] in LABELED_KINDS]
        matched: set[int] = set()
        for e in expected:
            hit = next(
                (i for i, f in enumerate(reported) if i not in matched and _matches(f, e)), None
            )
            s = report.scores[e["kind"]]
            if hit is None:
                s.fn += 1
                report.misses.append(
                    {
                        "trace_id": trace,
                        "variant": label.get("variant"),
                        "task": label.get("task"),
                        "expected": e,
                        "reported": [(f.kind, f.step_id) for f in reported],
                    }
                )
            else:
                matched.add(hit)
                s.tp += 1
                s.component_ok += reported[hit].component == e["component"]
        for i, f in enumerate(reported):
            if i in matched:
                continue
            if f.kind in report.scores:
                report.scores[f.kind].fp += 1
                report.false_positives.append(
                    {
                        "trace_id": trace,
                        "variant": label.get("variant"),
                        "task": label.get("task"),
                        "kind": f.kind,
                        "step_id": f.step_id,
                        "explanation": f.explanation,
                        "faults": [x.get("knob") for x in label.get("faults", [])],
                    }
                )
            else:
                report.unlabeled[f.kind] += 1
        kinds_reported = {f.kind for f in reported if f.kind in LABELED_KINDS}
        rows = {e["kind"] for e in expected} or {"none"}
        for row in rows:
            for k in kinds_reported or {"none"}:
                report.confusion[row][k] += 1
        for n in label.get("negative_findings", []):
            report.negatives_total += 1
            report.negatives_flagged += any(
                f.kind == n["kind"] and f.step_id == n["step_id"] for f in reported
            )
    return report


# --- orchestration ----------------------------------------------------------------------------
def degrade_copy(store: Any, source: str, target: str, strip: Sequence[str] | None) -> int:
    """Copy a project's spans into ``target`` with attributes removed, as a runtime that sends
    less would have; the collector's views re-derive every typed table for the copy.

    ``strip=None`` removes every ``planscope.*`` attribute (a third-party GenAI agent).
    """
    if strip is None:
        attrs = "mapFilter((k, v) -> NOT startsWith(k, {prefix:String}), SpanAttributes)"
        params: dict[str, Any] = {"src": source, "dst": target, "prefix": A.NAMESPACE}
    else:
        attrs = "mapFilter((k, v) -> NOT has({strip:Array(String)}, k), SpanAttributes)"
        params = {"src": source, "dst": target, "strip": list(strip)}
    store.command(
        "INSERT INTO otel_traces (Timestamp, TraceId, SpanId, ParentSpanId, TraceState, SpanName, "
        "SpanKind, ServiceName, ResourceAttributes, ScopeName, ScopeVersion, SpanAttributes, "
        "Duration, StatusCode, StatusMessage, `Events.Timestamp`, `Events.Name`, "
        "`Events.Attributes`, `Links.TraceId`, `Links.SpanId`, `Links.TraceState`, "
        "`Links.Attributes`, Project) "
        "SELECT Timestamp, TraceId, SpanId, ParentSpanId, TraceState, SpanName, SpanKind, "
        f"ServiceName, ResourceAttributes, ScopeName, ScopeVersion, {attrs}, Duration, "
        "StatusCode, StatusMessage, `Events.Timestamp`, `Events.Name`, `Events.Attributes`, "
        "`Links.TraceId`, `Links.SpanId`, `Links.TraceState`, `Links.Attributes`, "
        "{dst:String} FROM otel_traces WHERE Project = {src:String}",
        params,
    )
    rows = store.query(
        "SELECT count() AS n FROM otel_traces WHERE Project = {dst:String}", {"dst": target}
    )
    return int(rows[0]["n"])


@dataclass
class Evaluation:
    """Reports per attribute level, with the exact suite that produced them."""

    suite: dict[str, Any]
    reports: dict[str, Report]
    seconds: dict[str, float]
    labels_path: str


def run_evaluation(
    runs: int = 500,
    fault_rate: float = 0.3,
    seed: int = 1,
    *,
    workdir: Path,
    degrade: Sequence[str] = ("partial", GENAI_ONLY),
    variants: str | None = None,
    timeout: float = 600.0,
    progress: Callable[[str], None] = lambda message: None,
) -> Evaluation:
    """Start a collector on an embedded store in ``workdir``, run the runners' suite against it
    in a subprocess (``planscope suite``), wait until everything is stored, analyse and score;
    then score again on degraded copies (see :data:`DEGRADE_LEVELS`). ``progress`` is told what
    each stage is doing."""
    import subprocess
    import sys
    import time

    from planscope.client import ClientSettings, CollectorClient
    from planscope_collector import BackgroundServer, CollectorSettings

    from ._engine import Analyzer

    labels_path = workdir / "labels.jsonl"
    settings = CollectorSettings(data_dir=workdir / "data", port=0, flush_interval=0.2)
    reports: dict[str, Report] = {}
    seconds: dict[str, float] = {}
    with BackgroundServer(settings) as server:
        progress(f"running {runs} runs of the reference runtime ({fault_rate:.0%} with faults)…")
        cmd = [
            sys.executable,
            "-m",
            "planscope",
            "suite",
            "--runs",
            str(runs),
            "--fault-rate",
            str(fault_rate),
            "--seed",
            str(seed),
            "--collector",
            server.url,
            "--labels",
            str(labels_path),
            "--quiet",
        ]
        if variants:
            cmd += ["--variants", variants]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"suite failed: {proc.stderr[-2000:]}")
        labels = load_labels(labels_path)
        ids = [str(label["trace_id"]) for label in labels]
        collector = server.app.state.collector
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with CollectorClient(ClientSettings(base_url=server.url)) as client:
                state = client.ready()
            if state["spool_pending_bytes"] == 0:
                stored = collector.store.query(
                    "SELECT uniqExact(TraceId) AS n FROM planscope_trace_index "
                    "WHERE Project = 'default' AND TraceId IN {ids:Array(String)}",
                    {"ids": ids},
                )
                if int(stored[0]["n"]) >= len(ids):
                    break
            time.sleep(0.2)
        progress(f"{len(ids)} traces stored; analysing…")
        store = collector.store
        analyzer = Analyzer(store)
        started = time.perf_counter()
        result = analyzer.analyze("default", ids)
        seconds["full"] = time.perf_counter() - started
        reports["full"] = score(labels, result.findings)
        for level in degrade:
            strip = None if level == GENAI_ONLY else DEGRADE_LEVELS[level]
            progress(f"analysing again with attributes removed ({level})…")
            project = f"eval-{level}"
            degrade_copy(store, "default", project, strip)
            started = time.perf_counter()
            result = analyzer.analyze(project, ids)
            seconds[level] = time.perf_counter() - started
            reports[level] = score(labels, result.findings)
    return Evaluation(
        suite={"runs": runs, "fault_rate": fault_rate, "seed": seed, "variants": variants},
        reports=reports,
        seconds=seconds,
        labels_path=str(labels_path),
    )

"""``planscope analyze`` and ``planscope evaluate``.

``analyze`` talks to a running collector over HTTP (in embedded mode the collector process owns
the chDB data directory); ``evaluate`` scores the detectors against the reference runtime's
ground truth, either from a labels file plus a collector, or end to end (its own collector on a
temporary embedded store, the runners' suite in a subprocess).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from planscope import PlanscopeError
from planscope.cli import client_settings, collector_options, deprecated_alias, number

_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")


def parse_since(text: str) -> int:
    """``1h`` / ``30m`` / ``2d`` ago, unix seconds, or an ISO datetime (UTC) → unix ns.

    >>> parse_since("1970-01-01T00:00:01")
    1000000000
    """
    m = _RELATIVE.match(text.strip())
    if m:
        unit = {"s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
        return time.time_ns() - int(float(m.group(1)) * unit * 10**9)
    try:
        return int(float(text) * 10**9)
    except ValueError:
        pass
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise PlanscopeError(
            f"--since: cannot read {text!r} (try 1h, 2d, unix seconds, ISO)"
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(dt.timestamp() * 10**9)


def _client(args: argparse.Namespace) -> Any:
    from planscope.client import CollectorClient

    return CollectorClient(client_settings(args), user_agent="planscope-cli/analyze")


def _table(findings: list[dict[str, Any]]) -> str:
    if not findings:
        return "no findings"
    lines = [f"{'kind':26s} {'sev':8s} {'trace':32s} {'step':16s} {'blame':16s} explanation"]
    for f in findings:
        lines.append(
            f"{f['kind']:26s} {f['severity']:8s} {f['trace_id']:32s} {f['step_id'][:16]:16s} "
            f"{f['component'][:16]:16s} {f['explanation']}"
        )
    return "\n".join(lines)


def cmd_analyze(args: argparse.Namespace) -> int:
    since = parse_since(args.since) if args.since else None
    with _client(args) as client:
        result = client.analyze(trace_id=args.trace_id, since_ns=since)
    if args.trace_id and not result.traces:
        project = client.settings.project or "default"
        raise PlanscopeError(
            f"no trace {args.trace_id} in project {project!r} at {client.base_url}"
        )
    if args.format == "json":
        print(result.model_dump_json(indent=2))
    else:
        print(_table([f.model_dump() for f in result.findings]))
        print(
            f"\n{result.traces} traces, {result.spans} spans analysed in {result.seconds} s; "
            f"findings: {result.counts or 'none'}"
        )
    return 0


def _collector_findings(args: argparse.Namespace, trace_ids: set[str]) -> list[Any]:
    from ._model import Finding

    with _client(args) as client:
        client.analyze(since_ns=0)
        page = client.list_findings(max_rows=10**9)
    return [
        Finding(
            f.kind,
            f.severity,
            f.project,
            f.trace_id,
            f.run_id,
            f.component,
            f.step_id,
            tuple(f.evidence_span_ids),
            f.explanation,
        )
        for f in page.findings
        if f.trace_id in trace_ids
    ]


def cmd_evaluate(args: argparse.Namespace) -> int:
    from ._evaluate import GENAI_ONLY, load_labels, run_evaluation, score

    if args.labels:
        labels = load_labels(args.labels)
        findings = _collector_findings(args, {str(label["trace_id"]) for label in labels})
        report = score(labels, findings)
        print(json.dumps(report.to_dict(), indent=2) if args.format == "json" else report.table())
        return 0
    degrade = [] if args.no_degrade else list(args.degrade or ["partial", GENAI_ONLY])
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="ps-eval-"))
    workdir.mkdir(parents=True, exist_ok=True)
    ev = run_evaluation(
        args.runs,
        args.fault_rate,
        args.seed,
        workdir=workdir,
        degrade=degrade,
        variants=args.variants,
        progress=lambda message: print(message, file=sys.stderr, flush=True),
    )
    if args.format == "json":
        print(
            json.dumps(
                {
                    "suite": ev.suite,
                    "labels": ev.labels_path,
                    "seconds": ev.seconds,
                    "reports": {k: r.to_dict() for k, r in ev.reports.items()},
                },
                indent=2,
            )
        )
        return 0
    for level, report in ev.reports.items():
        print(f"\n## attributes: {level}  ({ev.seconds[level]:.2f} s to analyse)\n")
        print(report.table())
        if report.misses and args.show_misses:
            print("\nmisses:")
            for m in report.misses[: args.show_misses]:
                print(
                    f"  {m['variant']:12s} {m['task']:24s} expected {m['expected']['kind']} at "
                    f"{m['expected']['step_id']}; reported {m['reported']}"
                )
    print(f"\nlabels: {ev.labels_path}; suite {ev.suite}")
    return 0


def register(subparsers: Any) -> None:
    """Add ``analyze`` and ``evaluate`` to the ``planscope`` command."""

    def connection(p: argparse.ArgumentParser) -> None:
        collector_options(p)
        p.add_argument("--format", choices=["table", "json"], default="table", help="output")

    analyze = subparsers.add_parser("analyze", help="run the detectors on stored traces")
    which = analyze.add_mutually_exclusive_group()
    which.add_argument("--trace-id", help="analyse one trace (32 hex characters)")
    which.add_argument("--trace", dest="trace_id", action=deprecated_alias("--trace-id"))
    which.add_argument("--since", help="traces started since: 1h, 2d, unix seconds or ISO")
    connection(analyze)
    analyze.set_defaults(func=cmd_analyze)

    ev = subparsers.add_parser(
        "evaluate", help="score the detectors against the reference runtime's labels"
    )
    ev.add_argument("--runs", type=number(1), default=500, help="runs of the reference runtime")
    ev.add_argument(
        "--fault-rate",
        type=number(0, 1, kind=float),
        default=0.3,
        help="share of runs with an injected fault",
    )
    ev.add_argument("--seed", type=int, default=1, help="seed of the suite (same seed, same runs)")
    ev.add_argument("--variants", help="comma-separated runner variants (default: all)")
    ev.add_argument(
        "--labels",
        type=Path,
        help="score an existing labels file against --collector instead of running",
    )
    ev.add_argument(
        "--degrade",
        action="append",
        choices=["partial", "no-context-no-budget", "genai-only"],
        help="also score with these attributes removed (default: partial, genai-only)",
    )
    ev.add_argument("--no-degrade", action="store_true", help="score the full attributes only")
    ev.add_argument("--workdir", help="keep the store and labels here (default: a temp dir)")
    ev.add_argument(
        "--show-misses", type=number(0), default=10, metavar="N", help="list up to N missed labels"
    )
    connection(ev)
    ev.set_defaults(func=cmd_evaluate)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0)

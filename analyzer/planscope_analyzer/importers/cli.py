"""``planscope import`` and ``planscope attribute`` (registered through the CLI plugin list).

::

    planscope import runs/*.json --collector http://127.0.0.1:4318
    planscope attribute hand_crafted/5.json                  # offline, deterministic
    planscope attribute --evaluate ../shared/datasets/who_and_when/algorithm_generated \\
        ../shared/datasets/who_and_when/hand_crafted_dev
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from planscope import PlanscopeError, api
from planscope import environment_variables as ENV
from planscope.cli import client_settings, collector_options
from planscope.client import CollectorClient, NotFound, Unavailable

from ._conversation import Conversation
from ._import import (
    FORMATS,
    Prepared,
    dumps_summary,
    import_files,
    prepare,
    send,
)
from ._log import read_logs


def register(subparsers: Any) -> None:
    """Add ``import`` and ``attribute`` to the ``planscope`` command."""
    p = subparsers.add_parser(
        "import",
        help="import Who&When logs, tool-use conversations, OTLP JSON, OpenInference spans",
    )
    p.add_argument("files", nargs="+", type=Path, metavar="FILE", help="files to import")
    p.add_argument(
        "--format", default="auto", choices=FORMATS, help="input format (auto: from the content)"
    )
    collector_options(p)
    p.add_argument(
        "--keep-time",
        action="store_true",
        help="keep the OTLP files' timestamps (default: re-time to end now)",
    )
    p.add_argument("--dry-run", action="store_true", help="validate and convert, send nothing")
    p.set_defaults(func=cmd_import)

    a = subparsers.add_parser("attribute", help="name the agent and step that failed a run")
    a.add_argument(
        "files",
        nargs="*",
        type=Path,
        metavar="FILE",
        help="Who&When logs or tool-use conversations (with --evaluate: labelled files/folders)",
    )
    a.add_argument(
        "--trace-id",
        action="append",
        default=[],
        help="attribute a trace stored in the collector (repeatable)",
    )
    a.add_argument(
        "--method",
        default=None,
        help="ranker or a baseline (" + ", ".join(_method_names()[1:]) + "); "
        "default: the one the shipped evaluation chose",
    )
    a.add_argument(
        "--evaluate",
        action="store_true",
        help="cross-validate the ranker against the files' labels, baselines side by side",
    )
    a.add_argument(
        "--shipped",
        action="store_true",
        help="with --evaluate: score the shipped weights and the baselines on the files "
        "(a held-out set), fitting nothing",
    )
    a.add_argument(
        "--write-weights",
        type=Path,
        default=None,
        metavar="PATH",
        help="with --evaluate: fit on all the files and write the weights and the chosen default",
    )
    a.add_argument(
        "--collector",
        default=None,
        help="import each file there first and attach the analyzers' findings",
    )
    collector_options(a, collector=False)
    a.add_argument("--json", action="store_true", help="one JSON object per line")
    a.add_argument("--judge-url", help="OpenAI-compatible base URL of an optional LLM judge")
    a.add_argument("--judge-model", default="gpt-4o-mini", help="model name for the judge")
    a.add_argument(
        "--judge-key",
        default=os.environ.get(ENV.OPENAI_API_KEY),
        help=f"env {ENV.OPENAI_API_KEY}",
    )
    a.add_argument(
        "--prefer-judge",
        action="store_true",
        help="adopt the judge's answer when it is well-formed",
    )
    a.set_defaults(func=cmd_attribute)


def cmd_import(args: argparse.Namespace) -> int:
    project = client_settings(args).project  # --project, else PLANSCOPE_PROJECT
    if args.dry_run:
        prepared = [
            prepare(p, args.format, project=project, keep_time=args.keep_time) for p in args.files
        ]
    else:
        prepared = import_files(
            args.files,
            args.format,
            collector=args.collector,
            api_key=args.api_key,
            project=project,
            keep_time=args.keep_time,
        )
    for p in prepared:
        print(dumps_summary(p))
    return 0


def _client(args: argparse.Namespace) -> CollectorClient:
    return CollectorClient(
        client_settings(args, timeout=30.0), user_agent="planscope-cli/attribute"
    )


def _trace(client: CollectorClient, trace_id: str) -> dict[str, Any] | None:
    try:
        return client.get_trace(trace_id)
    except NotFound:
        return None


def _findings(client: CollectorClient, trace_id: str) -> list[api.Finding] | None:
    """The analyzers' findings of a trace; None without an analyzer (attribution then
    proceeds on structure alone)."""
    try:
        return client.trace_findings(trace_id)
    except Unavailable:
        return None


def wait_for_trace(
    client: CollectorClient, trace_id: str, spans: int, timeout: float = 30.0
) -> dict[str, Any]:
    """Poll the query API until the trace holds ``spans`` spans."""
    deadline = time.monotonic() + timeout
    while True:
        trace = _trace(client, trace_id)
        if trace is not None and int(trace.get("span_count", 0)) >= spans:
            return trace
        if time.monotonic() > deadline:
            raise PlanscopeError(
                f"trace {trace_id} did not appear in the collector at {client.base_url}"
            )
        time.sleep(0.1)


def _method_names() -> list[str]:
    from ..attribution import BASELINES, METHOD

    return ["default", METHOD, *BASELINES]


class _Online:
    """Import + findings for ``attribute FILE --collector``."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.client = _client(args)

    def findings(self, convs: list[Conversation], path: Path) -> list[list[Any] | None]:
        """Import the file and read each of its traces' findings (one per conversation)."""
        from ..attribution import map_findings

        prepared: Prepared = prepare(path, "auto", project=self.client.settings.project)
        send(prepared, self.client)
        out: list[list[Any] | None] = []
        for conv, tid, n in zip(convs, prepared.trace_ids, prepared.trace_spans, strict=True):
            trace = wait_for_trace(self.client, tid, n)
            raw = _findings(self.client, tid)
            out.append(map_findings(raw, trace, conv) if raw else [])
        return out


def cmd_attribute(args: argparse.Namespace) -> int:
    from ..attribution import (
        JudgeSettings,
        attribute,
        best_default,
        conversation_from_trace,
        cross_validate,
        fingerprint,
        format_paired,
        format_scores,
        judge,
        label_problems,
        load,
        map_findings,
        paired,
        score_shipped,
        shipped,
        train,
    )

    method = None if args.method in (None, "default") else args.method
    if method is not None and method not in _method_names():
        raise PlanscopeError(
            f"--method: unknown method {args.method!r}; use one of {', '.join(_method_names())}"
        )
    if args.evaluate:
        if not args.files:
            raise PlanscopeError("attribute --evaluate needs labelled files or folders")
        if args.shipped and args.write_weights:
            raise PlanscopeError("--shipped fits nothing: it cannot --write-weights")
        logs = load(args.files)
        for problem in label_problems(logs):
            print(f"planscope: warning: {problem} (scored as a miss)", file=sys.stderr)
        model = (
            shipped().model
            if args.shipped
            else train(logs, fitted_on=", ".join(sorted({g.subset for g in logs})))
        )
        scores = (
            score_shipped(logs, model, shipped().fitted_logs)
            if args.shipped
            else cross_validate(logs, model)
        )
        default = shipped().default if args.shipped else best_default(scores)
        if args.json:
            for sc in scores:
                print(json.dumps(sc.as_dict(), ensure_ascii=False))
            for row in paired(scores):
                print(json.dumps({"paired": True, **row}, ensure_ascii=False))
            print(json.dumps({"default": default}))
        else:
            print(format_scores(scores))
            if paired(scores):
                print("\nranker vs the best baseline, log by log (+ only the ranker right, - only")
                print("the baseline; p: two-sided exact sign test):\n")
                print(format_paired(scores))
            else:
                print("\nno held-out logs: the shipped weights were fitted on every file given")
            what = "shipped default" if args.shipped else "default method by this evaluation"
            print(f"\n{what}: {default}")
        if args.write_weights:
            doc = {
                "default": default,
                **json.loads(model.to_json()),
                "fitted_logs": sorted({fingerprint(g.conv) for g in logs}),
            }
            args.write_weights.write_text(json.dumps(doc, indent=2) + "\n")
        return 0
    if args.write_weights:
        raise PlanscopeError("--write-weights needs --evaluate")
    if not args.files and not args.trace_id:
        raise PlanscopeError("attribute needs FILE... or --trace-id ID")
    if args.trace_id and not args.collector:
        raise PlanscopeError("--trace-id needs --collector URL")
    settings = (
        JudgeSettings(args.judge_url, args.judge_model, args.judge_key, args.prefer_judge)
        if args.judge_url
        else None
    )
    online = _Online(args) if args.collector and args.files else None

    def run(conv: Conversation, found: list[Any] | None) -> Any:
        result = attribute(conv, found, method=method)
        return judge(conv, result, settings) if settings else result

    out: list[dict[str, Any]] = []
    for path in args.files:
        convs = read_logs(path)
        per_run: list[list[Any] | None] = (
            online.findings(convs, path) if online else [None] * len(convs)
        )
        for conv, refs in zip(convs, per_run, strict=True):
            out.append({"file": conv.source, **run(conv, refs).as_dict()})
    if args.trace_id:
        with _client(args) as client:
            for tid in args.trace_id:
                trace = _trace(client, tid)
                if trace is None:
                    raise PlanscopeError(f"trace {tid} not found at {args.collector}")
                conv = conversation_from_trace(trace)
                if not conv.turns:
                    raise PlanscopeError(f"trace {tid} has no agent turns to attribute")
                raw = _findings(client, tid)
                found = map_findings(raw, trace, conv) if raw else None
                out.append({"trace_id": tid, **run(conv, found).as_dict()})
    for item in out:
        if args.json:
            print(json.dumps(item, ensure_ascii=False))
        else:
            where = item.get("file") or item.get("trace_id")
            print(
                f"{where}: {item['component']} at step {item['step']} [{item['rule']}] "
                f"{item['explanation']}"
            )
    sys.stdout.flush()
    return 0

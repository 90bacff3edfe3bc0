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

import httpx
from planscope import PlanscopeError, semconv
from planscope import environment_variables as ENV

from ._conversation import Conversation
from ._import import (
    DEFAULT_COLLECTOR,
    FORMATS,
    Prepared,
    dumps_summary,
    import_files,
    prepare,
    send,
)
from ._whowhen import parse_whowhen

LOOP_FINDING_KINDS = (semconv.FINDING_RUNAWAY_LOOP, semconv.FINDING_UNBOUNDED_REPLAN)
"""Analyzer finding kinds that report repetition (compared with repetition labels)."""


def register(subparsers: Any) -> None:
    """Add ``import`` and ``attribute`` to the ``planscope`` command."""
    p = subparsers.add_parser("import", help="import Who&When logs, OTLP JSON, OpenInference spans")
    p.add_argument("files", nargs="+", type=Path, metavar="FILE")
    p.add_argument("--format", default="auto", choices=FORMATS)
    _collector_args(p)
    p.add_argument(
        "--keep-time",
        action="store_true",
        help="keep the OTLP files' timestamps (default: re-time to end now)",
    )
    p.add_argument("--dry-run", action="store_true", help="validate and convert, send nothing")
    p.set_defaults(func=cmd_import)

    a = subparsers.add_parser("attribute", help="name the component and step that failed a run")
    a.add_argument(
        "files",
        nargs="*",
        type=Path,
        metavar="FILE",
        help="Who&When logs (with --evaluate: labeled files or folders)",
    )
    a.add_argument(
        "--trace-id",
        action="append",
        default=[],
        help="attribute a trace stored in the collector (repeatable)",
    )
    a.add_argument(
        "--evaluate",
        action="store_true",
        help="compare with the files' labels; print accuracy per subset and half",
    )
    a.add_argument(
        "--collector",
        default=None,
        help="import each file there first and use the analyzers' findings",
    )
    a.add_argument("--api-key", default=os.environ.get(ENV.PLANSCOPE_API_KEY))
    a.add_argument("--project", default=os.environ.get(ENV.PLANSCOPE_PROJECT))
    a.add_argument("--json", action="store_true", help="one JSON object per line")
    a.add_argument("--judge-url", help="OpenAI-compatible base URL of an optional LLM judge")
    a.add_argument("--judge-model", default="gpt-4o-mini")
    a.add_argument("--judge-key", default=os.environ.get("OPENAI_API_KEY"))
    a.add_argument(
        "--prefer-judge",
        action="store_true",
        help="adopt the judge's answer when it is well-formed",
    )
    a.set_defaults(func=cmd_attribute)


def _collector_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--collector",
        default=os.environ.get(ENV.PLANSCOPE_ENDPOINT, DEFAULT_COLLECTOR),
        help=f"collector base URL (default: $PLANSCOPE_ENDPOINT or {DEFAULT_COLLECTOR})",
    )
    p.add_argument("--api-key", default=os.environ.get(ENV.PLANSCOPE_API_KEY))
    p.add_argument("--project", default=os.environ.get(ENV.PLANSCOPE_PROJECT))


def cmd_import(args: argparse.Namespace) -> int:
    if args.dry_run:
        prepared = [
            prepare(p, args.format, project=args.project, keep_time=args.keep_time)
            for p in args.files
        ]
    else:
        prepared = import_files(
            args.files,
            args.format,
            collector=args.collector,
            api_key=args.api_key,
            project=args.project,
            keep_time=args.keep_time,
        )
    for p in prepared:
        print(dumps_summary(p))
    return 0


def wait_for_trace(
    client: httpx.Client,
    base: str,
    trace_id: str,
    spans: int,
    project: str | None,
    timeout: float = 30.0,
) -> dict[str, Any]:
    """Poll the query API until the trace holds ``spans`` spans."""
    from ..attribution import fetch_trace

    deadline = time.monotonic() + timeout
    while True:
        trace = fetch_trace(client, base, trace_id, project)
        if trace is not None and int(trace.get("span_count", 0)) >= spans:
            return trace
        if time.monotonic() > deadline:
            raise PlanscopeError(f"trace {trace_id} did not appear in the collector at {base}")
        time.sleep(0.1)


class _Online:
    """Import + findings for ``attribute --collector``."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.client = httpx.Client(timeout=30.0)
        self.cache: dict[Path, Any] = {}

    def findings(self, conv: Conversation, path: Path) -> tuple[list[Any], bool | None]:
        from ..attribution import fetch_findings, map_findings

        if path in self.cache:
            return self.cache[path]
        prepared: Prepared = prepare(path, "whowhen", project=self.args.project)
        send(prepared, self.args.collector, api_key=self.args.api_key, client=self.client)
        tid = prepared.trace_ids[0]
        trace = wait_for_trace(
            self.client, self.args.collector, tid, prepared.span_count, self.args.project
        )
        raw = fetch_findings(self.client, self.args.collector, tid, self.args.project)
        result = (
            map_findings(raw, trace) if raw else [],
            None if raw is None else any(f.get("kind") in LOOP_FINDING_KINDS for f in raw),
        )
        self.cache[path] = result
        return result


def cmd_attribute(args: argparse.Namespace) -> int:
    from ..attribution import (
        JudgeSettings,
        attribute,
        conversation_from_trace,
        evaluate,
        fetch_findings,
        fetch_trace,
        format_table,
        judge,
        map_findings,
        table,
    )

    online = _Online(args) if args.collector else None
    settings = (
        JudgeSettings(args.judge_url, args.judge_model, args.judge_key, args.prefer_judge)
        if args.judge_url
        else None
    )

    def run(conv: Conversation, path: Path | None) -> Any:
        found = online.findings(conv, path)[0] if online and path else None
        result = attribute(conv, found)
        return judge(conv, result, settings) if settings else result

    if args.evaluate:
        if not args.files:
            raise PlanscopeError("attribute --evaluate needs labeled files or folders")
        rows = evaluate(
            args.files,
            attribute_fn=run,
            analyzer_loop=(lambda c, p: online.findings(c, p)[1]) if online else None,
        )
        if args.json:
            for r in table(rows):
                print(json.dumps(r, ensure_ascii=False))
        else:
            print(format_table(rows))
        return 0
    if not args.files and not args.trace_id:
        raise PlanscopeError("attribute needs FILE... or --trace-id ID")
    out: list[dict[str, Any]] = []
    for path in args.files:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise PlanscopeError(f"{path}: cannot read: {exc.strerror or exc}") from None
        conv = parse_whowhen(data, str(path))
        out.append({"file": str(path), **run(conv, path).as_dict()})
    for tid in args.trace_id:
        if not args.collector:
            raise PlanscopeError("--trace-id needs --collector URL")
        client = httpx.Client(timeout=30.0)
        trace = fetch_trace(client, args.collector, tid, args.project)
        if trace is None:
            raise PlanscopeError(f"trace {tid} not found at {args.collector}")
        raw = fetch_findings(client, args.collector, tid, args.project)
        conv = conversation_from_trace(trace)
        result = attribute(conv, map_findings(raw, trace) if raw else None)
        if settings:
            result = judge(conv, result, settings)
        out.append({"trace_id": tid, **result.as_dict()})
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

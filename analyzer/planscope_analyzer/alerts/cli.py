"""``planscope alerts``: list, add, remove and dry-run rules through the collector's HTTP API.

In embedded mode one process (the collector) owns the store, so the CLI never opens it.

    planscope alerts list [--collector URL] [--api-key KEY] [--project P] [--json]
    planscope alerts add rules.yaml [--replace]      # a rule, a list, or {project, rules}
    planscope alerts rm RULE_ID
    planscope alerts test RULE_ID | --file rule.yaml
    planscope alerts events [--rule RULE_ID] [--limit N]
    planscope alerts state
    planscope alerts validate rules.yaml             # offline, no collector
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from planscope import PlanscopeError
from planscope.cli import client_settings, collector_options, number

from ._errors import RuleValidationError
from ._rules import load_rules_file, parse_rules_document

__all__ = ["main", "register"]

USER_AGENT = "planscope-cli/alerts"


def _client(args: argparse.Namespace) -> Any:
    from planscope.client import CollectorClient

    return CollectorClient(client_settings(args), user_agent=USER_AGENT)


def _load(path: str, project: str | None) -> list[tuple[str, Any]]:
    """Rules of a file (``-``: stdin) as (project, rule); a single mapping is one rule."""
    import yaml

    if path == "-":
        docs = list(yaml.safe_load_all(sys.stdin.read()))
        parsed = parse_rules_document([_as_doc(d) for d in docs], "<stdin>")
    else:
        text = Path(path).read_text(encoding="utf-8") if Path(path).exists() else None
        if text is None:
            raise RuleValidationError(f"no such file: {path}")
        docs = list(yaml.safe_load_all(text))
        if len(docs) == 1 and isinstance(docs[0], dict) and "kind" in docs[0]:
            parsed = parse_rules_document([_as_doc(docs[0])], path)
        else:
            parsed = load_rules_file(Path(path))
    out = []
    for proj, rules in parsed.rules.items():
        for rule in rules:
            out.append((project or proj, rule))
    return out


def _as_doc(doc: Any) -> Any:
    return {"rules": [doc]} if isinstance(doc, dict) and "kind" in doc else doc


def _fail(message: str) -> None:
    """One failed item of several: reported like any error, the others still go ahead."""
    print(f"planscope: error: {message}", file=sys.stderr)


def _when(unix_s: float) -> str:
    return datetime.fromtimestamp(unix_s, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")


def _print(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, indent=2, default=str) if args.json else text)


def cmd_list(args: argparse.Namespace) -> int:
    with _client(args) as client:
        rows = client.alert_rules()
    lines = [f"{'ID':<28} {'KIND':<14} {'SCOPE':<7} {'WINDOW':<7} {'STATE':<9} VERSION"]
    for r in rows:
        lines.append(
            f"{r['id']:<28} {r['kind']:<14} {r.get('scope') or '-':<7} {r['window']:<7} "
            f"{r['state']:<9} {r['version']}"
        )
    _print(args, rows, "\n".join(lines) if rows else "no rules")
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    from planscope.client import Rejected

    rules = _load(args.file, args.project)  # all validated before anything is sent
    failed = 0
    with _client(args) as client:
        for project, rule in rules:
            data = rule.model_dump(mode="json")
            try:
                try:
                    body = client.save_alert_rule(data, replace=False, project=project)
                except Rejected as exc:
                    if exc.status != 409:
                        raise
                    if not args.replace:
                        failed += 1
                        _fail(f"{rule.id}: exists in {project}; add --replace to update it")
                        continue
                    body = client.save_alert_rule(data, replace=True, project=project)
            except Rejected as exc:
                failed += 1
                _fail(f"{rule.id}: {exc}")
                continue
            print(f"{rule.id}: version {body['version']} ({project})")
    return 1 if failed else 0


def cmd_rm(args: argparse.Namespace) -> int:
    with _client(args) as client:
        body = client.delete_alert_rule(args.rule_id)
    print(f"deleted {args.rule_id} (version {body['version']})")
    return 0


def cmd_test(args: argparse.Namespace) -> int:
    with _client(args) as client:
        if args.file:
            (project, rule), *_ = _load(args.file, args.project)
            body = client.test_alert_rule(rule=rule.model_dump(mode="json"), project=project)
        elif args.rule_id:
            body = client.test_alert_rule(args.rule_id)
        else:
            raise PlanscopeError("give a RULE_ID or --file")
    verdict = "WOULD FIRE" if body["would_fire"] else "would not fire"
    links = "\n".join(f"  {u}" for u in body["evidence"].get("trace_links", []))
    _print(args, body, f"{verdict}: {body['summary']}" + (f"\n{links}" if links else ""))
    return 0


def cmd_events(args: argparse.Namespace) -> int:
    with _client(args) as client:
        events = client.alert_events(rule_id=args.rule, limit=args.limit)
    lines = [
        f"{_when(e['at'])} {e['rule_id']:<24} {e['state']:<9} {e['delivery']['state']:<10} "
        f"attempts={e['delivery']['attempts']} {e['summary']}"
        for e in events
    ]
    _print(args, events, "\n".join(lines) if events else "no events")
    return 0


def cmd_state(args: argparse.Namespace) -> int:
    with _client(args) as client:
        body = client.alert_state()
    lines = [f"{r['rule_id']:<28} {r['state']:<9} {r['summary']}" for r in body.get("rules", [])]
    if body.get("file", {}).get("error"):
        lines.append(f"rules file error: {body['file']['error']}")
    _print(args, body, "\n".join(lines) if lines else "no rules")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    rules = _load(args.file, args.project)
    print(f"{args.file}: {len(rules)} valid rule(s)")
    return 0


def register(subparsers: Any) -> None:
    """Add ``planscope alerts`` (the CLI's plug-in hook)."""
    alerts = subparsers.add_parser("alerts", help="alert rules on retry budgets, findings, cost")
    common = argparse.ArgumentParser(add_help=False)
    collector_options(common)
    common.add_argument("--json", action="store_true", help="print JSON")
    sub = alerts.add_subparsers(dest="alerts_command", required=True, metavar="ACTION")
    p = sub.add_parser("list", parents=[common], help="rules and their state")
    p.set_defaults(func=cmd_list)
    p = sub.add_parser("add", parents=[common], help="add rules from YAML/JSON (- for stdin)")
    p.add_argument("file", help="a YAML/JSON rules file, or - for stdin")
    p.add_argument("--replace", action="store_true", help="update rules that already exist")
    p.set_defaults(func=cmd_add)
    p = sub.add_parser("rm", parents=[common], help="delete a rule (kept in its history)")
    p.add_argument("rule_id", help="the rule's id")
    p.set_defaults(func=cmd_rm)
    p = sub.add_parser("test", parents=[common], help="dry-run: would the rule fire now?")
    p.add_argument("rule_id", nargs="?", help="a stored rule's id")
    p.add_argument("--file", help="test an unsaved rule from a file")
    p.set_defaults(func=cmd_test)
    p = sub.add_parser("events", parents=[common], help="alert history with delivery state")
    p.add_argument("--rule", help="only this rule's events")
    p.add_argument("--limit", type=number(1, 1000), default=50, help="newest events to show")
    p.set_defaults(func=cmd_events)
    p = sub.add_parser("state", parents=[common], help="firing/resolved per rule")
    p.set_defaults(func=cmd_state)
    p = sub.add_parser("validate", parents=[common], help="check a rules file offline")
    p.add_argument("file", help="a YAML/JSON rules file")
    p.set_defaults(func=cmd_validate)


def main(argv: list[str] | None = None) -> int:
    """Run ``planscope alerts ...`` with these arguments (tests)."""
    parser = argparse.ArgumentParser(prog="planscope")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))

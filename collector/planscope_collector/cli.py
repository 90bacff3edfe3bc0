"""``planscope quarantine``: list and replay requests the store refused for good.

    planscope quarantine list   [--data-dir DIR] [--json]
    planscope quarantine replay [--data-dir DIR] [--clickhouse-url URL] [ID ...]

Listing reads the spool's ``quarantine/`` folder and works while the collector runs. Replaying
inserts into the store: with the embedded store, stop the collector first (one process owns a
chDB data directory); with a ClickHouse server it may run meanwhile.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from planscope import PlanscopeError

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add the ``quarantine`` subcommand to the ``planscope`` parser."""
    parser = sub.add_parser("quarantine", help="list or replay requests the store refused")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, help_text in (
        ("list", "list quarantined requests with the reason each was refused"),
        ("replay", "insert quarantined requests again (all, or the IDs given)"),
    ):
        p = actions.add_parser(name, help=help_text)
        p.add_argument(
            "--data-dir",
            type=Path,
            default=Path(os.environ.get("PLANSCOPE_DATA_DIR", ".planscope")),
            help="the collector's data directory (default: .planscope, env PLANSCOPE_DATA_DIR)",
        )
        if name == "list":
            p.add_argument("--json", action="store_true", help="one JSON object per line")
            p.set_defaults(func=_list)
        else:
            p.add_argument(
                "--clickhouse-url",
                default=os.environ.get("PLANSCOPE_CLICKHOUSE_URL"),
                help="a ClickHouse server instead of the embedded store in --data-dir",
            )
            p.add_argument("ids", nargs="*", metavar="ID", help="quarantine ids (default: all)")
            p.set_defaults(func=_replay)


def _quarantine(data_dir: Path) -> Any:
    from ._spool import Quarantine

    directory = data_dir / "spool" / "quarantine"
    if not directory.is_dir():
        raise PlanscopeError(f"no quarantine at {directory}: is --data-dir the collector's?")
    return Quarantine(directory)


def _list(args: argparse.Namespace) -> int:
    items = _quarantine(args.data_dir).list()
    for item in items:
        if args.json:
            print(
                json.dumps(
                    {
                        "id": item.id,
                        "project": item.project,
                        "spans": item.spans,
                        "quarantined_at": item.quarantined_at,
                        "reason": item.reason,
                    }
                )
            )
        else:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(item.quarantined_at))
            print(f"{item.id}  {when}Z  {item.project or '-'}  {item.spans} spans  {item.reason}")
    if not args.json:
        print(f"{len(items)} quarantined request(s)")
    return 0


def _replay(args: argparse.Namespace) -> int:
    from ._settings import CollectorSettings
    from ._writer import replay_quarantined
    from .storage import StoreError, open_store

    quarantine = _quarantine(args.data_dir)
    unknown = set(args.ids) - {item.id for item in quarantine.list()}
    if unknown:
        raise PlanscopeError(f"no quarantined request with id {', '.join(sorted(unknown))}")
    settings = CollectorSettings(data_dir=args.data_dir, clickhouse_url=args.clickhouse_url)
    try:
        store = open_store(settings.dsn)
    except StoreError as exc:
        raise PlanscopeError(
            f"cannot open the store ({exc}); with the embedded store, stop the collector first"
        ) from None
    try:
        store.migrate(ttl_days=settings.ttl_days)  # as `serve` does; a no-op when up to date
        result = replay_quarantined(quarantine, store, set(args.ids) or None)
    except StoreError as exc:
        raise PlanscopeError(f"replay stopped, the store is unavailable: {exc}") from None
    finally:
        store.close()
    print(
        f"replayed {result.stored} request(s), {result.spans} spans; "
        f"{result.refused} refused again (see 'planscope quarantine list')"
    )
    return 1 if result.refused else 0

"""The collector's subcommands: ``planscope serve``, ``migrate`` and ``quarantine``.

The ``planscope`` command finds :func:`register` through the ``planscope.commands`` entry points,
so the SDK's command line names no server package.

``quarantine`` lists and replays requests the store refused for good:

    planscope quarantine list   [--data-dir DIR] [--json]
    planscope quarantine replay [--data-dir DIR] [--clickhouse-url URL] [ID ...]

Listing reads the spool's ``quarantine/`` folder and works while the collector runs. Replaying
inserts into the store: with the embedded store, stop the collector first (one process owns a
chDB data directory); with a ClickHouse server it may run meanwhile.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from planscope import PlanscopeError
from planscope.cli import number, port
from pydantic import ValidationError

from ._server import serve
from ._settings import CollectorSettings, load_keys_file, settings_problems
from .storage import open_store
from .storage._migrations import MAX_TTL_DAYS

__all__ = ["register", "settings_from_args"]


def _store_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data-dir", type=Path, help=_setting("data_dir", "spool and embedded store directory")
    )
    p.add_argument(
        "--clickhouse-url",
        help=_setting(
            "clickhouse_url",
            "a ClickHouse server, http(s)://user:pass@host:8123/db, instead of the embedded store",
        ),
    )


def settings_from_args(args: argparse.Namespace, **extra: Any) -> CollectorSettings:
    """The collector's settings from parsed ``serve``/``migrate`` arguments.

    >>> settings_from_args(argparse.Namespace(port=4319)).port
    4319
    """
    keys: dict[str, Any] = {}
    if getattr(args, "keys_file", None):
        keys.update(load_keys_file(args.keys_file))
    if getattr(args, "api_key", None):
        keys[args.api_key] = args.project
    values: dict[str, Any] = dict(extra)
    if keys:  # else PLANSCOPE_API_KEYS applies
        values["api_keys"] = keys
    if getattr(args, "data_dir", None) is not None:
        values["data_dir"] = args.data_dir
    if getattr(args, "clickhouse_url", None):
        values["clickhouse_url"] = args.clickhouse_url
    if getattr(args, "grpc_port", None) is not None:
        values["grpc_port"] = None if args.grpc_port == "off" else args.grpc_port
    for name in ("host", "port", "spool_max_bytes", "max_body_bytes", "ttl_days", "role"):
        if getattr(args, name, None) is not None:
            values[name] = getattr(args, name)
    try:
        settings = CollectorSettings(**values)
    except ValidationError as exc:
        raise PlanscopeError(f"invalid settings: {settings_problems(exc)}") from None
    if settings.data_dir.exists() and not settings.data_dir.is_dir():
        raise PlanscopeError(f"--data-dir {settings.data_dir} exists and is not a directory")
    return settings


def _grpc_port(value: str) -> int | str:
    if value.strip().lower() in ("off", "none", "no", "false"):
        return "off"
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port or 'off', got {value!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is out of range 0-65535")
    return port


def cmd_serve(args: argparse.Namespace) -> int:
    serve(settings_from_args(args), log_level=args.log_level)
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    if not settings.clickhouse_url and _locked(settings.data_dir / "store" / "status"):
        raise PlanscopeError(
            f"the embedded store in {settings.data_dir} is in use by another process (a running "
            "`planscope serve` or demo applies migrations itself on start); stop it first"
        )
    store = open_store(settings.dsn)
    try:
        applied = store.migrate(cluster=args.cluster, ttl_days=settings.ttl_days)
    finally:
        store.close()
    print("applied: " + ", ".join(applied) if applied else "schema is up to date")
    return 0


def _locked(status: Path) -> bool:
    """True when another process holds chDB's lock on its ``status`` file (ClickHouse takes
    an exclusive ``flock`` on it for as long as the engine is open)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: let chDB report it
        return False
    if not status.exists():
        return False
    with status.open("rb") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
    return False


def _setting(name: str, text: str) -> str:
    """Help for a flag of a collector setting. The flag's own default stays None, so that
    the setting's environment variable applies when the flag is not given (a flag wins)."""
    field = CollectorSettings.model_fields[name]
    return f"{text} (default: {field.default}, env {field.validation_alias})"


def _ttl_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--ttl-days",
        type=number(1, MAX_TTL_DAYS),
        help=_setting(
            "ttl_days", "retention of stored spans, in days (chosen when the schema is created)"
        ),
    )


def _register_server(sub: Any) -> None:
    serve_p = sub.add_parser("serve", help="run the collector (OTLP ingest + query API)")
    serve_p.add_argument("--host", help=_setting("host", "address to listen on"))
    serve_p.add_argument("--port", type=port, help=_setting("port", "OTLP/HTTP + query API port"))
    serve_p.add_argument(
        "--grpc-port",
        type=_grpc_port,
        help=_setting("grpc_port", "OTLP/gRPC port; 0 = any free port, 'off' = no gRPC"),
    )
    _store_args(serve_p)
    serve_p.add_argument("--api-key", help="require this key (Authorization: Bearer KEY)")
    serve_p.add_argument("--project", default="default", help="the project --api-key writes to")
    serve_p.add_argument(
        "--keys-file",
        type=Path,
        help="file of 'KEY PROJECT [SCOPE,...]' lines or JSON (scopes: ingest, read, admin)",
    )
    serve_p.add_argument(
        "--spool-max-bytes",
        type=number(1),
        help=_setting("spool_max_bytes", "answer 503 while this much is accepted, not stored"),
    )
    serve_p.add_argument(
        "--max-body-bytes",
        type=number(1),
        help=_setting("max_body_bytes", "answer 413 beyond this body size (compressed, as sent)"),
    )
    _ttl_arg(serve_p)
    serve_p.add_argument(
        "--role",
        choices=["all", "ingest", "analyze"],
        help=_setting("role", "all: everything; ingest: no analysis; analyze: no ingest"),
    )
    serve_p.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="log verbosity",
    )
    serve_p.set_defaults(func=cmd_serve)

    migrate = sub.add_parser("migrate", help="create or upgrade the ClickHouse schema")
    _store_args(migrate)
    migrate.add_argument("--cluster", help="render ON CLUSTER / Replicated variants for NAME")
    _ttl_arg(migrate)
    migrate.set_defaults(func=cmd_migrate)


def register(sub: Any) -> None:
    """Add ``serve``, ``migrate`` and ``quarantine`` to the ``planscope`` parser."""
    _register_server(sub)
    parser = sub.add_parser("quarantine", help="list or replay requests the store refused")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, help_text in (
        ("list", "list quarantined requests with the reason each was refused"),
        ("replay", "insert quarantined requests again (all, or the IDs given)"),
    ):
        p = actions.add_parser(name, help=help_text)
        p.add_argument(
            "--data-dir", type=Path, help=_setting("data_dir", "the collector's data directory")
        )
        if name == "list":
            p.add_argument("--json", action="store_true", help="one JSON object per line")
            p.set_defaults(func=_list)
        else:
            p.add_argument(
                "--clickhouse-url",
                help=_setting(
                    "clickhouse_url", "a ClickHouse server instead of the embedded store"
                ),
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
    items = _quarantine(settings_from_args(args).data_dir).list()
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
    from ._writer import replay_quarantined
    from .storage import StoreError, open_store

    settings = settings_from_args(args)
    quarantine = _quarantine(settings.data_dir)
    unknown = set(args.ids) - {item.id for item in quarantine.list()}
    if unknown:
        raise PlanscopeError(f"no quarantined request with id {', '.join(sorted(unknown))}")
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

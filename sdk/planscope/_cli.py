"""The ``planscope`` command. Server-side parts are imported lazily, so the SDK-only install
still has a working command that names the extra to install."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from ._errors import PlanscopeError


class MissingExtra(PlanscopeError):
    """A subcommand needs an optional dependency group that is not installed."""


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or fail with the exact install command.

    >>> require("json", "server").__name__
    'json'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra(
            f"this command needs the '{extra}' extra ({exc.name} is missing): "
            f"pip install 'planscope[{extra}]'"
        ) from None


class HelpFormatter(argparse.HelpFormatter):
    """Appends ``(default: X)`` to an option's help when it has a default worth showing (not
    None, not a flag's False, never a secret such as an API key from the environment)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if (
            action.option_strings
            and action.default is not None
            and action.default is not False
            and action.default != argparse.SUPPRESS
            and "default" not in text
            and "key" not in action.dest
        ):
            text += " (default: %(default)s)"
        return text


def _store_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data-dir",
        type=Path,
        default=Path(os.environ.get("PLANSCOPE_DATA_DIR", ".planscope")),
        help="spool and embedded store directory (env PLANSCOPE_DATA_DIR)",
    )
    p.add_argument(
        "--clickhouse-url",
        default=os.environ.get("PLANSCOPE_CLICKHOUSE_URL"),
        help="a ClickHouse server, http(s)://user:pass@host:8123/db, instead of the embedded store",
    )


def _settings(args: argparse.Namespace, **extra: Any) -> Any:
    collector = require("planscope_collector", "server")
    keys: dict[str, str] = {}
    if getattr(args, "keys_file", None):
        keys.update(collector.load_keys_file(args.keys_file))
    if getattr(args, "api_key", None):
        keys[args.api_key] = args.project
    values: dict[str, Any] = {"api_keys": keys, **extra}
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
        return collector.CollectorSettings(**values)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise PlanscopeError(f"invalid settings: {exc}") from None


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
    collector = require("planscope_collector", "server")
    collector.serve(_settings(args), log_level=args.log_level)
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    storage = require("planscope_collector.storage", "server")
    settings = _settings(args)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    if not settings.clickhouse_url and _locked(settings.data_dir / "store" / "status"):
        raise PlanscopeError(
            f"the embedded store in {settings.data_dir} is in use by another process (a running "
            "`planscope serve` or demo applies migrations itself on start); stop it first"
        )
    store = storage.open_store(settings.dsn)
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


def cmd_demo(args: argparse.Namespace) -> int:
    demo = require("planscope_runners.demo", "runners")
    return int(demo.main(args))


# Components that add their own subcommands: (module, extra). Each module has
# ``register(subparsers) -> None``; a missing extra leaves a stub that names the install command.
PLUGINS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("planscope_runners.cli", "runners", ("run", "suite")),
    ("planscope_collector.cli", "server", ("quarantine",)),
    ("planscope_analyzer.cli", "server", ("analyze", "evaluate")),
    ("planscope_analyzer.alerts.cli", "server", ("alerts",)),
    ("planscope_analyzer.importers.cli", "server", ("import", "attribute")),
    ("planscope_dashboard.cli", "dashboard", ("dashboard",)),
)


def _register_plugins(sub: Any) -> None:
    for module, extra, commands in PLUGINS:
        try:
            register = importlib.import_module(module).register
        except ImportError as exc:
            if exc.name == module.split(".")[0]:
                continue  # the component is not part of this build
            for name in commands:
                stub = sub.add_parser(name, help=f"(needs planscope[{extra}])")
                stub.set_defaults(func=_missing(module, extra))
            continue
        register(sub)


def _missing(module: str, extra: str) -> Any:
    def run(args: argparse.Namespace) -> int:
        require(module, extra)
        raise MissingExtra(f"{module} provides no such command; pip install 'planscope[{extra}]'")

    return run


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="planscope",
        description="Observability for planner-executor LLM agents.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"planscope {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = sub.add_parser("serve", help="run the collector (OTLP ingest + query API)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=4318, help="OTLP/HTTP + query API port")
    serve.add_argument(
        "--grpc-port",
        type=_grpc_port,
        default=4317,
        help="OTLP/gRPC port (default 4317; 0 = any free port; 'off' = no gRPC)",
    )
    _store_args(serve)
    serve.add_argument("--api-key", help="require this key (Authorization: Bearer KEY)")
    serve.add_argument("--project", default="default", help="the project --api-key writes to")
    serve.add_argument("--keys-file", type=Path, help="file of 'KEY PROJECT' lines or JSON")
    serve.add_argument("--spool-max-bytes", type=int, help="answer 503 beyond this backlog")
    serve.add_argument("--max-body-bytes", type=int, help="answer 413 beyond this body size")
    serve.add_argument("--ttl-days", type=int, help="retention of stored spans")
    serve.add_argument(
        "--role",
        choices=["all", "ingest", "analyze"],
        help="all (default): everything; ingest: no analysis; analyze: no ingest (scale-out)",
    )
    serve.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="log verbosity",
    )
    serve.set_defaults(func=cmd_serve)

    migrate = sub.add_parser("migrate", help="create or upgrade the ClickHouse schema")
    _store_args(migrate)
    migrate.add_argument("--cluster", help="render ON CLUSTER / Replicated variants for NAME")
    migrate.add_argument(
        "--ttl-days", type=int, help="retention of stored spans, in days (default: keep forever)"
    )
    migrate.set_defaults(func=cmd_migrate)

    demo = sub.add_parser(
        "demo", help="collector + reference runtime suite with faults + analysis + dashboard"
    )
    demo.add_argument(
        "--data-dir",
        type=Path,
        default=Path(".planscope/demo"),
        help="spool and embedded store of the demo's collector",
    )
    demo.add_argument("--port", type=int, default=4318, help="collector port (busy: a free one)")
    demo.add_argument(
        "--dashboard-port", type=int, default=8501, help="dashboard port (busy: a free one)"
    )
    demo.add_argument("--runs", type=int, default=300, help="runs of the reference runtime")
    demo.add_argument("--seed", type=int, default=1, help="seed of the runs (same seed, same runs)")
    demo.add_argument("--no-wait", action="store_true", help="exit after the report")
    demo.set_defaults(func=cmd_demo)
    _register_plugins(sub)
    _use_formatter(parser)
    return parser


def _use_formatter(parser: argparse.ArgumentParser) -> None:
    """Every (sub)command's help shows defaults the same way, whoever registered it."""
    parser.formatter_class = HelpFormatter
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _use_formatter(child)


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    try:
        code = args.func(args)
    except PlanscopeError as exc:
        print(f"planscope: error: {exc}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        code = 130
    raise SystemExit(code)

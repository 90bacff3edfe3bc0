"""The ``planscope`` command. Subcommands come from the ``planscope.commands`` entry points of
the installed packages (the collector adds ``serve``/``migrate``, the analyzer ``analyze``, ...),
imported lazily, so the SDK-only install still has a working command that names the extra to
install, and the SDK names no package above it."""

from __future__ import annotations

import argparse
import importlib
import sys
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any, NoReturn

from ._errors import PlanscopeError

COMMANDS_GROUP = "planscope.commands"
"""Entry-point group: ``<command> = "module:register [extra]"``, where ``register(subparsers)``
adds the command (one function may add several; it is called once)."""


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


class Parser(argparse.ArgumentParser):
    """Usage errors in the command's one error format, ``planscope: error: ...``, naming the
    help to read; every subcommand's parser is one of these (argparse creates them with the
    parent's class)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"planscope: error: {message} (see {self.prog} --help)\n")


def _register_commands(sub: Any) -> None:
    registered: set[str] = set()
    for ep in sorted(entry_points(group=COMMANDS_GROUP), key=lambda e: e.name):
        if ep.value in registered:
            continue
        try:
            register = ep.load()
        except ImportError:
            _stub(sub, ep)
            continue
        registered.add(ep.value)
        register(sub)


def _stub(sub: Any, ep: EntryPoint) -> None:
    """A command whose extra is missing: running it names the install command."""
    extra = ep.extras[0] if ep.extras else "all"

    def run(args: argparse.Namespace) -> int:
        require(ep.module, extra)
        raise MissingExtra(f"{ep.module} provides no {ep.name!r}; pip install 'planscope[{extra}]'")

    stub = sub.add_parser(ep.name, help=f"(needs planscope[{extra}])")
    stub.set_defaults(func=run)


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = Parser(
        prog="planscope",
        description="Observability for planner-executor LLM agents.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"planscope {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _register_commands(sub)
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
    except OSError as exc:  # a file or directory given on the command line: say which, briefly
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"planscope: error: {where}{exc.strerror or exc}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        code = 130
    raise SystemExit(code)

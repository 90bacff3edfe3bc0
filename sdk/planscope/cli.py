"""Helpers for packages that add subcommands to the ``planscope`` command.

Public so that the collector, analyzer and runners build their subcommands the same way without
importing the SDK's private command-line module.

>>> import argparse
>>> from planscope.cli import deprecated_alias
>>> p = argparse.ArgumentParser()
>>> _ = p.add_argument("--trace-id")
>>> _ = p.add_argument("--trace", dest="trace_id", action=deprecated_alias("--trace-id"))
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from . import environment_variables as ENV

if TYPE_CHECKING:
    from .client import ClientSettings

__all__ = ["client_settings", "collector_options", "deprecated_alias", "number", "port"]


def collector_options(parser: argparse.ArgumentParser, *, collector: bool = True) -> None:
    """Add ``--collector``, ``--api-key`` and ``--project``, the options of a command that talks
    to the collector. Each stays None unless given, so that :func:`client_settings` reads its
    environment variable instead (a flag wins). ``collector=False`` leaves ``--collector`` to
    the command (where it is optional and means more than where to connect).

    >>> p = argparse.ArgumentParser()
    >>> collector_options(p)
    >>> p.parse_args(["--project", "team-a"]).project
    'team-a'
    """
    if collector:
        parser.add_argument(
            "--collector",
            help=f"collector base URL (env {ENV.PLANSCOPE_ENDPOINT}, else http://127.0.0.1:4318)",
        )
    parser.add_argument(
        "--api-key", help=f"API key for the collector (env {ENV.PLANSCOPE_API_KEY})"
    )
    parser.add_argument(
        "--project",
        help=f"project to read in open mode; an API key implies its own (env "
        f"{ENV.PLANSCOPE_PROJECT}, else default)",
    )


def client_settings(args: argparse.Namespace, **extra: Any) -> ClientSettings:
    """The :class:`planscope.client.ClientSettings` of :func:`collector_options`' arguments:
    each given flag, else its environment variable, else the default.

    >>> client_settings(argparse.Namespace(collector="http://c:1", api_key=None,
    ...                                    project=None)).base_url
    'http://c:1'
    """
    from .client import ClientSettings  # needs the 'dashboard' or 'server' extra

    return ClientSettings.from_env(
        base_url=getattr(args, "collector", None),
        api_key=getattr(args, "api_key", None),
        project=getattr(args, "project", None),
        **extra,
    )


def deprecated_alias(new: str) -> type[argparse.Action]:
    """An argparse action for an old option name: stores like ``new`` and says it is deprecated.

    >>> p = argparse.ArgumentParser()
    >>> _ = p.add_argument("--trace", dest="trace_id", action=deprecated_alias("--trace-id"))
    """

    class Alias(argparse.Action):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("help", f"deprecated: use {new}")
            super().__init__(*args, **kwargs)

        def __call__(
            self, parser: Any, namespace: Any, values: Any, option_string: str | None = None
        ) -> None:
            print(
                f"planscope: warning: {option_string} is deprecated and will be removed in 0.3; "
                f"use {new}",
                file=sys.stderr,
            )
            setattr(namespace, self.dest, values)

    return Alias


def number(
    low: float = 0, high: float | None = None, *, kind: type[int] | type[float] = int
) -> Any:
    """An argparse ``type`` for a number within ``low..high``: a bad value is a usage error
    naming the range, never a silent empty run or a traceback later.

    >>> p = argparse.ArgumentParser()
    >>> _ = p.add_argument("--runs", type=number(1), default=300)
    >>> p.parse_args(["--runs", "5"]).runs
    5
    """
    span = f"{low}..{high}" if high is not None else f"at least {low}"

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'an integer' if kind is int else 'a number'}, got {text!r}"
            ) from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{text} is out of range ({span})")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


port = number(0, 65535)
"""An argparse ``type`` for a TCP port, 0..65535 (0: any free port)."""

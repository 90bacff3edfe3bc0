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
from typing import Any

__all__ = ["deprecated_alias", "number", "port"]


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

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

__all__ = ["deprecated_alias"]


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

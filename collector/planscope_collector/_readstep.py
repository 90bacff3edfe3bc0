"""The one value a plan-format reader returns for each step it read (observed reads them all
alike, whatever the format)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

_T = TypeVar("_T")


@dataclass(frozen=True)
class ReadStep:
    """One step a plan-format reader read from a text: its id, the earlier steps it refers to,
    its goal, its tool and its arguments (literals as values, references as written).

    >>> ReadStep("ship", ("pick",), "Ship it", "courier", {"parcel": "pick"}).needs
    ('pick',)
    """

    name: str
    needs: tuple[str, ...]
    goal: str
    tool: str
    args: dict[str, Any]


def first_read(text: str, fenced: re.Pattern[str], read: Callable[[str], list[_T]]) -> list[_T]:
    """What ``read`` reads from the first of the text's fenced blocks (``fenced``'s group 1)
    it reads anything from, or from the whole text when it has no such block.

    >>> fence = re.compile(r"```\\n(.*?)```", re.DOTALL)
    >>> first_read("a\\n```\\nx\\n```\\n```\\ny z\\n```", fence, lambda c: c.split()[1:])
    ['z']
    >>> first_read("y z", fence, lambda c: c.split()[1:])
    ['z']
    """
    for code in [m[1] for m in fenced.finditer(text)] or [text]:
        if found := read(code):
            return found
    return []

"""The one value a plan-format reader returns for each step it read (observed reads them all
alike, whatever the format)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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

"""JSON that cannot hurt the reader: bounded nesting and size, checked before decoding.

``json.loads`` recurses once per nesting level (a value nested 100,000 deep raises
``RecursionError``) and builds every value in memory (30 MB of ``{}`` becomes 15 million
dicts). :func:`shape` measures a document's nesting depth and number of values in one pass
at C speed, without building anything, so callers refuse a document before decoding it.
Used for OTLP/JSON bodies (the collector), attribute values (the query API) and run budgets
and plans (the analyzer).

>>> from planscope.safejson import loads, shape
>>> shape('{"a": [1, 2, {"b": "}"}]}')
JsonShape(depth=3, values=6)
>>> loads("[" * 100 + "]" * 100, max_depth=64)
Traceback (most recent call last):
...
planscope.safejson.JsonTooComplex: JSON nested 100 deep; at most 64 allowed
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "JsonShape",
    "JsonTooComplex",
    "check",
    "load_object",
    "loads",
    "loads_or_literal",
    "shape",
    "value_bound",
]

MAX_DEPTH = 64
"""Default nesting limit: far beyond any plan, budget or attribute planscope writes."""
MAX_LITERAL = 20_000
"""Longest text :func:`loads_or_literal` reads as a Python literal (a repr of a call's inputs is
short; the parser's cost and memory grow with the text)."""

# A JSON string (escapes included); removed before counting brackets and commas.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_KEEP = b"{}[]"
_DELETE = bytes(c for c in range(256) if c not in _KEEP)
_STEP = tuple(1 if c in b"{[" else -1 if c in b"}]" else 0 for c in range(256))


class JsonTooComplex(ValueError):
    """A JSON document nests deeper, or holds more values, than allowed."""


@dataclass(frozen=True)
class JsonShape:
    """How deep a document nests, and an upper bound of the values it holds."""

    depth: int
    values: int


def value_bound(data: str | bytes) -> int:
    """An upper bound of the number of values in ``data``: brackets and commas plus one.

    Counted over the raw text (strings included, so it may over-count) at C speed, without
    decoding: the check to run before a decoder builds millions of objects.

    >>> value_bound("[1, 2, {}]")
    5
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    return raw.count(b"{") + raw.count(b"[") + raw.count(b",") + 1


def shape(data: str | bytes) -> JsonShape:
    """Nesting depth (exact for valid JSON: strings are skipped) and :func:`value_bound`."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if b"[" not in raw and b"{" not in raw:
        return JsonShape(0, value_bound(raw))
    brackets = _STRING.sub(b"", raw).translate(None, _DELETE)
    depth = max(accumulate(map(_STEP.__getitem__, brackets)), default=0)
    return JsonShape(depth, value_bound(raw))


def _openings(data: str | bytes) -> int:
    """Opening brackets in ``data``, strings included: a bound of its nesting depth."""
    if isinstance(data, str):
        return data.count("{") + data.count("[")
    return data.count(b"{") + data.count(b"[")


def check(data: str | bytes, *, max_depth: int = MAX_DEPTH, max_values: int | None = None) -> None:
    """Raise :class:`JsonTooComplex` when ``data`` nests or counts beyond the limits."""
    if max_values is not None and (bound := value_bound(data)) > max_values:
        raise JsonTooComplex(f"JSON holds up to {bound} values; at most {max_values} allowed")
    if _openings(data) <= max_depth:  # fewer brackets than the limit (most texts): no scan
        return
    depth = shape(data).depth
    if depth > max_depth:
        raise JsonTooComplex(f"JSON nested {depth} deep; at most {max_depth} allowed")


def loads(data: str | bytes, *, max_depth: int = MAX_DEPTH, max_values: int | None = None) -> Any:
    """``json.loads`` after :func:`check`: raises ``ValueError`` (``JsonTooComplex`` or
    ``json.JSONDecodeError``), never ``RecursionError``."""
    check(data, max_depth=max_depth, max_values=max_values)
    try:
        return json.loads(data)
    except RecursionError:  # defensive: the check above makes this unreachable for valid JSON
        raise JsonTooComplex("JSON nested too deep") from None


def load_object(data: str | bytes | None, *, max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    """The JSON object in ``data``, ``{}`` for anything else (never raises).

    >>> load_object('{"max_attempts": 3}'), load_object("[1]"), load_object("{" * 10_000)
    ({'max_attempts': 3}, {}, {})
    """
    if not data:
        return {}
    try:
        value = loads(data, max_depth=max_depth)
    except (ValueError, UnicodeDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def loads_or_literal(text: str) -> Any:
    """A JSON text, else a Python literal of a dict or list of at most :data:`MAX_LITERAL`
    characters (how some instrumentations record a call's inputs: LangChain's ``input_str``,
    ``"{'host': 'web-04'}"``); ``ValueError`` when it is neither.

    >>> loads_or_literal("{'host': 'web-04', 'n': 2}")
    {'host': 'web-04', 'n': 2}
    """
    try:
        return loads(text)  # bounded: a value nested 100,000 deep is no JSON here
    except ValueError:
        if text[:1] in ("{", "[") and len(text) <= MAX_LITERAL:
            try:
                return ast.literal_eval(text)
            except (SyntaxError, MemoryError, RecursionError, TypeError, ValueError):
                pass
        raise

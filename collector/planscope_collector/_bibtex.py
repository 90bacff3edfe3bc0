"""Plans stated as BibTeX-like entries: ``@kind{key, field = {value}, field = word}``.

A planner may write its plan as entries of a bibliography database: one entry per step, its
key the step's id, its fields the call (the tool, the goal, the arguments), a bare word as a
field's value an earlier entry's key (as a BibTeX string macro: that step's result). Read by
the syntax alone (:func:`steps`), whatever the entry kinds and field names are called; what
the entries stand for is read from their shape (``observed.evidence_plans`` offers every
planner answer to it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ._readstep import ReadStep

_HEAD = re.compile(r"@([A-Za-z]\w*)[ \t]*\{[ \t]*([^,\s{}]+)[ \t]*,")
_FIELD = re.compile(r"\s*([A-Za-z_][\w-]*)\s*=\s*")
_KEY = re.compile(r"[A-Za-z_][\w-]*")
_BARE = re.compile(r"[A-Za-z_][\w.:-]*")
_COMMA = re.compile(r"\s*,?")
_TOOL_FIELDS = ("tool", "action", "call", "function", "uses")
_GOAL_FIELDS = ("goal", "description", "title", "task", "summary")


@dataclass(frozen=True)
class Entry:
    """One entry: its kind, key and fields (a braced or quoted value as its text, a bare word
    as ``("ref", word)``)."""

    kind: str
    key: str
    fields: dict[str, Any] = field(default_factory=dict)


def entries(text: str) -> list[Entry]:
    """The BibTeX-like entries of a text, in order (unbalanced braces end the reading).

    >>> [(e.kind, e.key, e.fields) for e in entries("@step{a, n = {1}, after = b,}")]
    [('step', 'a', {'n': '1', 'after': ('ref', 'b')})]
    """
    out: list[Entry] = []
    closing = closing_braces(text)
    pos = 0
    while (m := _HEAD.search(text, pos)) is not None:
        end = closing.get(m.start() + m.group(0).index("{"), -1)
        if end < 0:
            break
        out.append(Entry(m.group(1).lower(), m.group(2), _fields(text[m.end() : end])))
        pos = end + 1
    return out


def steps(text: str) -> list[ReadStep]:
    """The steps a text states as BibTeX-like entries: the kind of entry, keyed by an
    identifier, that recurs with two fields or more (the most frequent such kind; on a tie the
    last to appear: a header entry comes first) is a step; its ``tool``-like field its tool, its
    ``goal``-like field its goal, the other fields its arguments (as written: the plan reader
    reads whole numbers). [] when no step refers (by a bare word) to a step or to the key of
    another entry (a revision's done-marker): a list of entries is no plan.

    >>> plan = ("@plan{job-7, revision = {1}}\\n@step{pick, tool = {wms}, goal = {Pick it},"
    ...         " order = {7}}\\n@step{ship, tool = {courier}, parcel = pick, to = {Oslo}}")
    >>> for s in steps(plan):
    ...     print(s.name, s.tool, s.goal, s.args, s.needs)
    pick wms Pick it {'order': '7'} ()
    ship courier  {'parcel': 'pick', 'to': 'Oslo'} ('pick',)
    >>> steps("@book{knuth84, title = {TeX}, year = {1984}}")
    []
    """
    if "@" not in text or "=" not in text:
        return []
    found = [e for e in entries(text) if _KEY.fullmatch(e.key)]
    counts: dict[str, int] = {}
    for e in found:
        if len(e.fields) >= 2:
            counts[e.kind] = counts.get(e.kind, 0) + 1
    if not counts:
        return []
    last = {e.kind: i for i, e in enumerate(found)}
    kind = max(counts, key=lambda k: (counts[k], last[k]))
    mine = [e for e in found if e.kind == kind]
    ids = {e.key for e in mine}
    known = {e.key for e in found}
    out: list[ReadStep] = []
    refers = False
    for e in mine:
        tool, goal = _named(e, _TOOL_FIELDS), _named(e, _GOAL_FIELDS)
        args: dict[str, Any] = {}
        needs: list[str] = []
        for name, value in e.fields.items():
            if name in _TOOL_FIELDS or name in _GOAL_FIELDS:
                continue
            if isinstance(value, tuple):
                word = value[1]
                args[name] = word
                if word in known and word != e.key:
                    refers = True
                    if word in ids:
                        needs.append(word)
            else:
                args[name] = value
        out.append(ReadStep(e.key, tuple(dict.fromkeys(needs)), goal, tool, args))
    return out if refers else []


def _named(e: Entry, names: tuple[str, ...]) -> str:
    """The text of the first of these fields the entry has as a braced or quoted value."""
    return next((v for f in names if isinstance(v := e.fields.get(f), str)), "")


def closing_braces(text: str) -> dict[int, int]:
    """The index of the brace closing each opening brace of ``text``, by the opening one's index
    (an unbalanced one has none), in one pass (also the LaTeX-like macro reader's,
    ``observed._macro_calls``: a scan from each brace would be quadratic in a text of
    unbalanced ones).

    >>> closing_braces("{a{b}c}d"), closing_braces("{a{b}")
    ({2: 4, 0: 6}, {2: 4})
    """
    out: dict[int, int] = {}
    opened: list[int] = []
    for i, c in enumerate(text):
        if c == "{":
            opened.append(i)
        elif c == "}" and opened:
            out[opened.pop()] = i
    return out


def _fields(body: str) -> dict[str, Any]:
    """The ``name = value`` fields of an entry's body, by name (the first of a repeated name)."""
    out: dict[str, Any] = {}
    closing = closing_braces(body)
    pos = 0
    while (m := _FIELD.match(body, pos)) is not None:
        pos = m.end()
        value: Any
        if body.startswith("{", pos):
            end = closing.get(pos, -1)
            if end < 0:
                break
            value, pos = body[pos + 1 : end].strip(), end + 1
        elif body.startswith('"', pos):
            end = body.find('"', pos + 1)
            if end < 0:
                break
            value, pos = body[pos + 1 : end].strip(), end + 1
        elif (word := _BARE.match(body, pos)) is not None:
            value, pos = ("ref", word.group(0)), word.end()
        else:
            break
        out.setdefault(m.group(1).lower(), value)
        pos = _COMMA.match(body, pos).end()  # type: ignore[union-attr]
    return out

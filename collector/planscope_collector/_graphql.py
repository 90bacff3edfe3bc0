"""Plans stated as a GraphQL operation: one top-level field a step.

A planner may write its plan as a GraphQL document (October 2021 specification): an operation
whose top-level fields are the calls to make, an alias naming each (``book: bookRoom(...)``),
literal arguments, ``$variables`` for what earlier fields return (bound by the community
``@export(as: "name")`` directive on an earlier field's selection, or named after an earlier
field's alias), a ``#`` comment before a field saying what it is for. A ``mutation``'s
top-level fields run serially, in order (the specification's "Normal and Serial Execution"), so
a mutation is a plan as written; a ``query`` is one only when a field uses what an earlier one
exports. A variable with a default (``($room: ID = "R-7")``) is a value already settled (a
re-plan restating what is done): no step. This module tokenizes and parses the executable
syntax (operations, variable definitions, selections, arguments, directives, fragments skipped)
and **never executes** anything. ``observed.evidence_plans`` offers every planner answer to
:func:`steps`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ._readstep import ReadStep, first_read

_FENCED = re.compile(r"```[ \t]*(?:graphql|gql)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
"""A fenced code block, GraphQL or unlabelled (markdown chat answers fence their code)."""
_OPENS = re.compile(
    r"(?:\s*#[^\n]*)*\s*(?:(?:query|mutation)\b[^{]*)?\{\s*(?:#[^\n]*\s*)*[_A-Za-z]"
)
"""How an operation opens (comments, ``query`` / ``mutation`` with its name and variables, a
selection set, a field name): checked before parsing, so that other answers (prose, JSON
objects, whose keys are strings) are not parsed at all."""
_MAX_TEXT = 200_000
"""Longer answers are not parsed (a plan is never this long)."""
_TOKEN = re.compile(
    r'(?P<ws>[\s,\ufeff]+)|(?P<comment>#[^\n\r]*)|(?P<block>"""(?:\\"""|[^"]|"(?!""))*""")'
    r'|(?P<string>"(?:\\.|[^"\\\n])*")|(?P<number>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)'
    r"|(?P<name>[_A-Za-z]\w*)|(?P<punct>\.\.\.|[!$&():=@\[\]{}|])"
)
"""GraphQL's lexical tokens (commas are insignificant, as white space)."""


class _Bad(Exception):
    """The text is not a GraphQL operation this reader reads."""


@dataclass
class _Field:
    """One top-level field: its alias (or name), its name, its arguments, the variables it
    uses, the names its selection exports, the comment before it."""

    key: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    uses: list[str] = field(default_factory=list)
    exports: list[str] = field(default_factory=list)
    goal: str = ""


def steps(text: str) -> list[ReadStep]:
    """The steps a text states as a GraphQL operation (the whole text or a fenced block): a
    step per top-level field, its alias the step's name, its field the tool, its literal
    arguments as values and ``$variables`` as written, the earlier fields whose export (or
    alias) a variable names its ``needs``, the comment before it its goal; [] unless the
    operation is a mutation or a field uses an earlier one's result, and the keys are distinct.

    >>> a, b = steps('mutation {\\n  # find a room\\n  room: findRoom(city: "Oslo", beds: 2)'
    ...     ' { id @export(as: "r") }\\n  pay: charge(room: $r, cents: 900) { ok }\\n}')
    >>> a.name, a.tool, a.goal, a.args
    ('room', 'findRoom', 'find a room', {'city': 'Oslo', 'beds': 2})
    >>> b.name, b.needs, b.args
    ('pay', ('room',), {'room': '$r', 'cents': 900})
    >>> [s.needs for s in steps('mutation M($r: ID = "R-1") { pay: charge(room: $r) { ok } }')]
    [()]
    >>> steps('query { a: user(id: 1) { name } b: user(id: 2) { name } }'), steps('{"a": 1}')
    ([], [])
    """
    if len(text) > _MAX_TEXT or "{" not in text:
        return []
    return first_read(text, _FENCED, _read)


def _read(code: str) -> list[ReadStep]:
    """:func:`steps` of one piece of text."""
    if not _OPENS.match(code):
        return []
    try:
        kind, settled, fields = _Parser(code).operation()
    except (_Bad, RecursionError):
        return []
    keys = [f.key for f in fields]
    if not fields or len(set(keys)) != len(keys):
        return []
    out: list[ReadStep] = []
    refers = False
    for i, f in enumerate(fields):
        needs: list[str] = []
        for var in f.uses:
            if var in settled:
                continue  # a value the operation states as settled: no earlier step
            for earlier in fields[:i]:
                if var in earlier.exports or var == earlier.key:
                    needs.append(earlier.key)
                    refers = True
                    break
        out.append(ReadStep(f.key, tuple(dict.fromkeys(needs)), f.goal, f.name, f.args))
    return out if kind == "mutation" or refers else []


class _Parser:
    """A recursive-descent parser of one executable GraphQL operation (the first in the text;
    fragment definitions after it are skipped)."""

    def __init__(self, text: str) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise _Bad(f"no token at {pos}")
            kind = m.lastgroup or ""
            if kind != "ws":
                self.tokens.append((kind, m.group()))
            pos = m.end()
        self.i = 0
        self.comment: list[str] = []

    def _peek(self) -> tuple[str, str]:
        """The next token that is no comment (comments before it are kept as a goal)."""
        while self.i < len(self.tokens) and self.tokens[self.i][0] == "comment":
            self.comment.append(self.tokens[self.i][1][1:].strip())
            self.i += 1
        return self.tokens[self.i] if self.i < len(self.tokens) else ("end", "")

    def _take(self, value: str | None = None, kind: str | None = None) -> str:
        k, v = self._peek()
        if (value is not None and v != value) or (kind is not None and k != kind) or k == "end":
            raise _Bad(f"expected {value or kind}, got {v!r}")
        self.i += 1
        return v

    def _at(self, value: str) -> bool:
        k, v = self._peek()
        return k in ("punct", "name") and v == value

    def operation(self) -> tuple[str, dict[str, Any], list[_Field]]:
        """The operation's type, its variables' defaults, its top-level fields."""
        kind = "query"
        settled: dict[str, Any] = {}
        if self._peek()[0] == "name":
            kind = self._take(kind="name")
            if kind not in ("query", "mutation", "subscription"):
                raise _Bad("no operation")
            if self._peek()[0] == "name":
                self._take(kind="name")
            if self._at("("):
                self._take("(")
                while not self._at(")"):
                    self._take("$")
                    var = self._take(kind="name")
                    self._take(":")
                    self._type()
                    if self._at("="):
                        self._take("=")
                        settled[var] = self._value([])
                    self._directives([])
                self._take(")")
            self._directives([])
        self._take("{")
        fields: list[_Field] = []
        self.comment = []
        while not self._at("}"):
            if self._at("..."):
                raise _Bad("a fragment at the top: no step of its own")
            first = self._take(kind="name")
            goal = " ".join(c for c in self.comment if c)
            if self._at(":"):
                self._take(":")
                f = _Field(first, self._take(kind="name"), goal=goal)
            else:
                f = _Field(first, first, goal=goal)
            if self._at("("):
                self._take("(")
                while not self._at(")"):
                    arg = self._take(kind="name")
                    self._take(":")
                    f.args[arg] = self._value(f.uses)
                self._take(")")
            self._directives(f.uses)
            if self._at("{"):
                self._selection(f)
            fields.append(f)
            self.comment = []  # what comes next is the next field's
        self._take("}")
        return kind, settled, fields

    def _type(self) -> None:
        if self._at("["):
            self._take("[")
            self._type()
            self._take("]")
        else:
            self._take(kind="name")
        if self._at("!"):
            self._take("!")

    def _value(self, uses: list[str]) -> Any:
        """A value: a literal as Python, a variable as written (``$x``, noted in ``uses``)."""
        k, v = self._peek()
        if v == "$" and k == "punct":
            self._take("$")
            name = self._take(kind="name")
            uses.append(name)
            return f"${name}"
        if v == "[" and k == "punct":
            self._take("[")
            items = []
            while not self._at("]"):
                items.append(self._value(uses))
            self._take("]")
            return items
        if v == "{" and k == "punct":
            self._take("{")
            obj: dict[str, Any] = {}
            while not self._at("}"):
                key = self._take(kind="name")
                self._take(":")
                obj[key] = self._value(uses)
            self._take("}")
            return obj
        self.i += 1
        if k == "string":
            return json.loads(v)
        if k == "block":
            return v[3:-3].replace('\\"""', '"""')
        if k == "number":
            return float(v) if any(c in v for c in ".eE") else int(v)
        if k == "name":
            return {"true": True, "false": False, "null": None}.get(v, v)  # else an enum value
        raise _Bad(f"no value: {v!r}")

    def _directives(self, uses: list[str], exports: list[str] | None = None) -> None:
        """Directives (``@name(args)``); ``@export(as: "x")`` adds ``x`` to ``exports``."""
        while self._at("@"):
            self._take("@")
            name = self._take(kind="name")
            args: dict[str, Any] = {}
            if self._at("("):
                self._take("(")
                while not self._at(")"):
                    arg = self._take(kind="name")
                    self._take(":")
                    args[arg] = self._value(uses)
                self._take(")")
            if name == "export" and exports is not None and isinstance(args.get("as"), str):
                exports.append(args["as"])

    def _selection(self, top: _Field) -> None:
        """A selection set under a top-level field: what it exports, the variables it uses."""
        self._take("{")
        while not self._at("}"):
            if self._at("..."):
                self._take("...")
                if self._at("on"):
                    self._take("on")
                    self._take(kind="name")
                elif self._peek()[0] == "name" and not self._at("{"):
                    self._take(kind="name")
                self._directives(top.uses, top.exports)
                if self._at("{"):
                    self._selection(top)
                continue
            self._take(kind="name")
            if self._at(":"):
                self._take(":")
                self._take(kind="name")
            if self._at("("):
                self._take("(")
                while not self._at(")"):
                    self._take(kind="name")
                    self._take(":")
                    self._value(top.uses)
                self._take(")")
            self._directives(top.uses, top.exports)
            if self._at("{"):
                self._selection(top)
        self._take("}")

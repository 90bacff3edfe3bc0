"""Plans stated as a Handlebars template of function calls (Semantic Kernel's HandlebarsPlanner).

Semantic Kernel's ``HandlebarsPlanner`` asks the model for its plan as a Handlebars template:
per step a comment (``{{!-- Step 1: what --}}``) and a call of a kernel function as a
Handlebars helper, its result kept in a variable with the ``set`` helper (``{{set "lot"
(Auction-search_lots grade="TR1" page=1)}}``; a kernel function's helper is named
``Plugin-function``), arguments as hash pairs ``key=value`` (or positional), an earlier result
referred to by its variable or a field of it (``lot.lot_id``), joined with text by a built-in
helper (``(concat "lot " lot.lot_id)``), the plan ending with an output statement (``{{json
lot}}``). This module tokenizes the mustache statements and **never evaluates** anything: a
step is a ``set`` whose value is a call of a helper that is no template built-in (or such a call
made as a statement of its own), its id the variable (the function's name for a bare call), its
goal the comment before it, its arguments literals as values and expressions as written.
``observed.evidence_plans`` offers every planner answer to :func:`steps`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from ._readstep import ReadStep

_MAX_TEXT = 200_000
"""Longer answers are not read (a plan is never this long)."""
_MUSTACHE = re.compile(r"\{\{(!?)([^{}]*)\}\}")
"""A mustache other than a long comment: a short comment (``{{! x }}``) or an expression
statement (blocks ``{{#each}}`` / ``{{/each}}`` and ``{{else}}`` included)."""
_SPACE = re.compile(r"\s*")
_TOKEN = re.compile(
    r"""\s*(?:(?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
    |(?P<open>\()|(?P<close>\))
    |(?P<hash>[A-Za-z_][\w-]*)=
    |(?P<number>-?\d+(?:\.\d+)?)(?![\w.-])
    |(?P<path>(?:\.\./)*@?[\w-]+(?:[./](?:[\w-]+|\[[^\]]*\]))*|\[[^\]]*\](?:\.[\w-]+)*))""",
    re.VERBOSE,
)
_BUILT_IN = frozenset(
    {
        # Semantic Kernel's system helpers (KernelSystemHelpers / KernelHelpersUtils)
        "message",
        "set",
        "get",
        "json",
        "concat",
        "array",
        "raw",
        "range",
        "or",
        "and",
        "not",
        "add",
        "subtract",
        "multiply",
        "divide",
        "equals",
        "camelCase",
        "doubleOpen",
        "doubleClose",
        # Handlebars' own block and lookup helpers
        "if",
        "unless",
        "each",
        "with",
        "lookup",
        "log",
        "else",
        "this",
    }
)
"""The template's own helpers: a call of one is no step (a function of the kernel is)."""
_STEP_COMMENT = re.compile(r"(?i)^\s*step\s*\d+\s*[:.)-]\s*")
"""A planner's ``Step n:`` before a step's goal in its comment."""


@dataclass(frozen=True)
class Call:
    """A helper call (``(name a b=c)``): its helper, positional and hash arguments, as parsed,
    and its text as written."""

    helper: str
    positional: tuple[Any, ...]
    hashes: dict[str, Any]
    text: str


@dataclass(frozen=True)
class Path:
    """A reference (``lot``, ``lot.lot_id``, ``../x``, ``@index``), as written."""

    text: str

    @property
    def head(self) -> str:
        """The variable it starts with (``lot`` of ``lot.lot_id``)."""
        return re.split(r"[./\[]", self.text.lstrip("./@"), maxsplit=1)[0]


class _Unreadable(ValueError):
    """An expression this reader does not read."""


def steps(text: str) -> list[ReadStep]:
    """The steps a text states as a Handlebars plan: function calls kept with ``{{set}}`` or
    made as statements, at least one of them with a variable (a ``set``), ids distinct; [] else
    (a template that only prints values states no plan).

    >>> a, b = steps('{{!-- Step 1: Find the lot --}}\\n{{set "lot" (Shop-find q="x" n=2)}}\\n'
    ...     '{{set "paid" (Bank-pay ref=(concat "lot " lot.id) to=lot)}}\\n{{json paid}}')
    >>> (a.name, a.tool, a.goal, a.args, a.needs)
    ('lot', 'Shop-find', 'Find the lot', {'q': 'x', 'n': 2}, ())
    >>> (b.name, b.args, b.needs)
    ('paid', {'ref': '(concat "lot " lot.id)', 'to': 'lot'}, ('lot',))
    >>> steps('{{set "n" 5}}{{json n}}'), steps("Hello {{name}}"), steps("a plan")
    ([], [], [])
    """
    if len(text) > _MAX_TEXT or "{{" not in text:
        return []
    out: list[ReadStep] = []
    comment = ""
    for is_comment, body in _statements(text):
        if is_comment:
            comment = body.strip()
            continue
        try:
            step = _step(body, comment)
        except (_Unreadable, RecursionError):
            continue
        if step is not None:
            out.append(step)
            comment = ""
    names = [s.name for s in out]
    if not any(s.name != s.tool for s in out) or len(set(names)) != len(names):
        return []
    return [
        replace(s, needs=tuple(n for n in s.needs if n in names[:i])) for i, s in enumerate(out)
    ]


def _statements(text: str) -> Iterator[tuple[bool, str]]:
    """The mustaches of a text in order: (whether a comment, its body). A long comment
    (``{{!-- x --}}``, which may hold braces) is searched for its end once: one never closed
    ends the reading (a hostile text of many openings is not rescanned from each).

    >>> list(_statements("a {{!-- {{x}} --}} b {{! n }}{{set y 1}} {{ {"))
    [(True, ' {{x}} '), (True, ' n '), (False, 'set y 1')]
    """
    at = 0
    while (start := text.find("{{", at)) != -1:
        if text.startswith("{{!--", start):
            end = text.find("--}}", start + 5)
            if end == -1:
                return
            yield True, text[start + 5 : end]
            at = end + 4
        elif m := _MUSTACHE.match(text, start):
            yield m[1] == "!", m[2]
            at = m.end()
        else:
            at = start + 2


def _step(expr: str, comment: str) -> ReadStep | None:
    """The step one expression statement states, None when it states none."""
    expr = expr.strip()
    if not expr or expr[0] in "#/^>&" or expr.startswith("else"):
        return None  # a block's open or close, a partial: control text, no call
    call = _call(expr.lstrip("~").rstrip("~"))
    name = ""
    if call.helper == "set":
        name_value = call.hashes.get("name", call.positional[0] if call.positional else None)
        value = call.hashes.get("value", call.positional[1] if len(call.positional) > 1 else None)
        if not isinstance(name_value, str) or not isinstance(value, Call):
            return None  # a variable set to a literal or a reference: no call
        name, call = name_value, value
    if call.helper in _BUILT_IN or not re.fullmatch(r"[A-Za-z_][\w-]*", call.helper):
        return None
    args = {str(i): _written(v) for i, v in enumerate(call.positional)}
    args |= {k: _written(v) for k, v in call.hashes.items()}
    needs = tuple(dict.fromkeys(_heads(call)))
    goal = _STEP_COMMENT.sub("", comment)
    return ReadStep(name or call.helper, needs, goal, call.helper, args)


def _call(expr: str) -> Call:
    """The helper call of an expression statement's text (``set "x" (f a=1)``)."""
    tokens = [(m.lastgroup or "", m[m.lastgroup or 0], m.start(), m.end()) for m in _tokens(expr)]
    value, at = _parse_call(expr, tokens, 0, len(tokens), 0, len(expr))
    if at != len(tokens):
        raise _Unreadable(expr)
    return value


def _tokens(expr: str) -> list[re.Match[str]]:
    out: list[re.Match[str]] = []
    at = 0
    while at < len(expr):
        if _SPACE.match(expr, at).end() == len(expr):  # type: ignore[union-attr]
            break
        m = _TOKEN.match(expr, at)
        if m is None or m.end() == at:
            raise _Unreadable(expr)
        out.append(m)
        at = m.end()
    return out


def _parse_call(
    expr: str, tokens: list[tuple[str, str, int, int]], i: int, end: int, start: int, stop: int
) -> tuple[Call, int]:
    """A call from ``tokens[i]`` (its helper) to ``end``; ``start`` / ``stop`` its text."""
    if i >= end or tokens[i][0] != "path":
        raise _Unreadable(expr)
    helper = tokens[i][1]
    positional: list[Any] = []
    hashes: dict[str, Any] = {}
    i += 1
    while i < end and tokens[i][0] != "close":
        if tokens[i][0] == "hash":
            key = tokens[i][1]
            hashes[key], i = _parse_value(expr, tokens, i + 1, end)
        else:
            value, i = _parse_value(expr, tokens, i, end)
            positional.append(value)
    return Call(helper, tuple(positional), hashes, expr[start:stop].strip()), i


def _parse_value(
    expr: str, tokens: list[tuple[str, str, int, int]], i: int, end: int
) -> tuple[Any, int]:
    """One argument from ``tokens[i]``: a literal, a path or a sub-expression."""
    if i >= end:
        raise _Unreadable(expr)
    kind, text, start, _ = tokens[i]
    if kind == "string":
        return _unquote(text.strip()), i + 1
    if kind == "number":
        number = float(text)
        return (int(number) if number.is_integer() and "." not in text else number), i + 1
    if kind == "path":
        literal = {"true": True, "false": False, "null": None, "undefined": None}
        return (literal[text] if text in literal else Path(text)), i + 1
    if kind == "open":
        call, j = _parse_call(expr, tokens, i + 1, end, start, start)
        if j >= end or tokens[j][0] != "close":
            raise _Unreadable(expr)
        text_of = expr[start : tokens[j][3]].strip()
        return Call(call.helper, call.positional, call.hashes, text_of), j + 1
    raise _Unreadable(expr)


def _unquote(text: str) -> str:
    """A string literal's text (``"a \\"b\\""`` → ``a "b"``)."""
    return re.sub(r"\\(.)", r"\1", text[1:-1])


def _written(value: Any) -> Any:
    """An argument as the plan's args keep it: literals as values, the rest as written."""
    if isinstance(value, Path | Call):
        return value.text
    return value


def _heads(value: Any) -> list[str]:
    """The variables an argument (or a call's arguments) refers to, in order."""
    if isinstance(value, Path):
        return [value.head]
    if isinstance(value, Call):
        return [h for v in (*value.positional, *value.hashes.values()) for h in _heads(v)]
    return []

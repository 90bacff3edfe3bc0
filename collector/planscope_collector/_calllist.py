"""Plans stated as a Python list of calls: ``[search(q='x'), fetch(url=search, n=2)]``.

A planner may write its plan as Python code: one call expression per step, in a list (as
LLMCompiler-like and CodeAct-style planners write a program of tool calls), a bare name of an
earlier call (or an attribute of it, ``search.url``) standing for that call's result. The text
is parsed with :mod:`ast` and **never evaluated**: a literal argument is read with
:func:`ast.literal_eval`, a reference as written. Comments (a re-plan's ``# done: ...`` lines)
are Python comments: no step. ``observed.evidence_plans`` offers every planner answer to it.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ._readstep import ReadStep, first_read

_FENCED = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
"""A fenced code block, Python or unlabelled (markdown chat answers fence their code)."""
_OPENS = re.compile(
    r"(?:[ \t]*(?:#[^\n]*)?\n)*[ \t]*(?:[A-Za-z_]\w*[ \t]*=[ \t]*)?[\[(]"
    r"(?:\s*#[^\n]*)*\s*[A-Za-z_][\w.]*[ \t]*\("
)
"""How a call list opens (comment lines, an optional ``name =``, a bracket, a call): checked
before parsing, so that other answers (prose, a JSON list of objects) are not parsed at all."""
_MAX_TEXT = 200_000
"""Longer answers are not parsed (:func:`ast.parse` is linear, but a plan is never this long)."""


def steps(text: str) -> list[ReadStep]:
    """The calls a text states as a Python list of calls: the whole text or one fenced block
    of it is a single expression (or ``name = [...]``) that is a list or tuple of calls of
    (dotted) names, with distinct function names (a bare name must say which call it means),
    and at least one argument refers to a result by name (a list of calls with literals only
    passes nothing on: no plan's dataflow); [] else.

    >>> a, b = steps("```python\\n[search(q='x', n=2), fetch(search.url, 'en', depth=-1)]\\n```")
    >>> (a.name, a.args, a.needs), b.needs
    (('search', {'q': 'x', 'n': 2}, ()), ('search',))
    >>> b.args
    {'0': 'search.url', '1': 'en', 'depth': -1}
    >>> [c.needs for c in steps("# done: search -> 7\\n[fetch(url=search)]")]
    [()]
    >>> steps("[print('a'), print('b')]"), steps("[f(x=1), g(y=2)]"), steps("import os")
    ([], [], [])
    """
    if len(text) > _MAX_TEXT or "(" not in text:
        return []
    return first_read(text, _FENCED, _read)


def _read(code: str) -> list[ReadStep]:
    """:func:`steps` of one piece of code."""
    code = code.strip()
    if not _OPENS.match(code):
        return []
    try:
        module = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    if len(module.body) != 1:
        return []
    node = module.body[0]
    if isinstance(node, ast.Assign) and [type(t) for t in node.targets] == [ast.Name]:
        value: ast.expr = node.value
    elif isinstance(node, ast.Expr):
        value = node.value
    else:
        return []
    if not isinstance(value, ast.List | ast.Tuple) or not value.elts:
        return []
    names: list[str] = []
    for element in value.elts:
        if not isinstance(element, ast.Call) or not (called := dotted(element.func)):
            return []
        names.append(called.rsplit(".", 1)[-1])
    if len(set(names)) != len(names):
        return []
    calls: list[ReadStep] = []
    refers = False
    for element, name in zip(value.elts, names, strict=True):
        assert isinstance(element, ast.Call)
        args: dict[str, Any] = {}
        needs: list[str] = []
        keyed = [(str(i), a) for i, a in enumerate(element.args)]
        keyed += [(k.arg, k.value) for k in element.keywords if k.arg is not None]
        for key, argument in keyed:
            if (referred := _reference(argument)) is not None:
                refers = True
                args[key] = ast.unparse(argument)
                if referred in names[: len(calls)]:
                    needs.append(referred)
                continue
            try:
                args[key] = ast.literal_eval(argument)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                args[key] = ast.unparse(argument)  # an expression: kept as written
        calls.append(ReadStep(name, tuple(dict.fromkeys(needs)), "", dotted(element.func), args))
    return calls if refers else []


def dotted(node: ast.expr) -> str:
    """A called function's dotted name (``clerk.book``), '' when it is not a name (also
    ``_airflow``'s operators and callables).

    >>> import ast
    >>> [dotted(ast.parse(code).body[0].value.func) for code in ("a.b.c()", "f()()")]
    ['a.b.c', '']
    """
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (owner := dotted(node.value)):
        return f"{owner}.{node.attr}"
    return ""


def _reference(node: ast.expr) -> str | None:
    """The name an argument refers to (a bare name, or an attribute or item of it:
    ``search``, ``search.url``, ``search['url']``), None for anything else."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None

"""Plans stated as a declarative Jenkinsfile: one stage a step.

A planner may write its plan the way a team that runs Jenkins writes a pipeline (Jenkins'
Declarative Pipeline syntax): ``pipeline { agent any  stages { stage('name') { steps { ... } }
... } }``, the stages run in order, each stage's ``steps`` block calling pipeline steps with
Groovy's named parameters (``bookRoom(room: 'R-7', nights: 2)``) or positional ones
(``sh 'make'``), double-quoted GStrings interpolating values (``"${fetch.id}"``). A stage's id
is its name, its tool the first step it calls, its arguments that call's named parameters
(literals as values, GStrings with their ``${...}`` as written); an interpolation whose dotted
path names an earlier stage is what that stage needs; an ``environment { }`` block (values
already known, a re-plan's settled results) holds no stage. Nested ``stages`` and ``parallel``
blocks hold stages too. This module finds the stages and their calls; the Groovy scanning
(braces matched with strings and comments skipped, parameters split and read) is
:mod:`._groovy`'s, and nothing is ever evaluated. ``observed.evidence_plans`` offers
every planner answer to :func:`steps`.
"""

from __future__ import annotations

import re
from typing import Any

from . import _groovy
from ._readstep import ReadStep, first_read

_FENCED = re.compile(
    r"```[ \t]*(?:groovy|jenkinsfile|jenkins)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE
)
"""A fenced code block, Groovy or unlabelled (markdown chat answers fence their code)."""
_PIPELINE = re.compile(r"(?m)^[ \t]*pipeline[ \t]*\{")
"""A declarative pipeline's opening line: checked before anything is read."""
_MAX_TEXT = 200_000
"""Longer answers are not parsed (a plan is never this long)."""
_STAGE = re.compile(r"""\bstage[ \t]*\([ \t]*(?:'([^'\n]+)'|"([^"\n$]+)")[ \t]*\)[ \t]*\{""")
_SECTION = re.compile(r"\b(stages|parallel|steps|environment)[ \t]*\{")
_CALL = re.compile(r"[ \t]*([A-Za-z_]\w*)[ \t]*(\(|[ \t]+(?=[\w'\"\[]))")
"""A pipeline step's call: its name and an opening parenthesis, or Groovy's command syntax
(``sh 'make'``, ``book room: 'R-7'``: the arguments to the end of the line)."""
_INTERPOLATION = re.compile(r"\$\{([^{}]*)\}|\$([A-Za-z_][\w.]*)")
_NOT_STEPS = frozenset({"script", "echo", "timeout", "retry", "dir", "withEnv"})
"""Pipeline steps that wrap or print, not the stage's work: skipped when the stage calls
another (a ``script { }`` block or an ``echo`` before the real call)."""


def steps(text: str) -> list[ReadStep]:
    """The stages a text states as a declarative Jenkinsfile (the whole text or a fenced
    block of it): one step a stage, in order; ids distinct; [] else.

    >>> a, b = steps(
    ...     "pipeline {\\n  agent any\\n  stages {\\n"
    ...     "    stage('pick') { steps { wms(order: 7, rush: true) } }\\n"
    ...     "    stage('ship') { steps { courier(parcel: \\"${results.pick.id}\\", to: 'Oslo') } }"
    ...     "\\n  }\\n}")
    >>> (a.name, a.tool, a.args, a.needs), (b.name, b.tool, b.args, b.needs)
    (('pick', 'wms', {'order': 7, 'rush': True}, ()), ('ship', 'courier', \
{'parcel': '${results.pick.id}', 'to': 'Oslo'}, ('pick',)))
    >>> steps("stage('pick') { steps { wms() } }"), steps("pipeline {\\n  agent any\\n}")
    ([], [])
    """
    if len(text) > _MAX_TEXT or "stage" not in text:
        return []
    return first_read(text, _FENCED, _read)


def _read(code: str) -> list[ReadStep]:
    """:func:`steps` of one piece of code."""
    if (opening := _PIPELINE.search(code)) is None:
        return []
    try:
        stages = _stages(_groovy.block(code, opening.end() - 1))
        names = [name for name, _ in stages]
        if not stages or len(set(names)) != len(names):
            return []
        calls = [_call(stage) for _, stage in stages]
    except _groovy.Unreadable:  # a string, comment or bracket left open: no Groovy
        return []
    out: list[ReadStep] = []
    for position, (name, (tool, args)) in enumerate(zip(names, calls, strict=True)):
        earlier = set(names[:position])
        needs = [
            part
            for value in _strings(args)
            for m in _INTERPOLATION.finditer(value)
            for part in (m[1] or m[2] or "").strip().split(".")
            if part in earlier
        ]
        out.append(ReadStep(name, tuple(dict.fromkeys(needs)), "", tool, args))
    return out


def _stages(body: str) -> list[tuple[str, str]]:
    """The stages of a block's text, in order, nested ones (``stages`` / ``parallel``
    inside a stage) in place of the stage that holds them: (name, the stage's body)."""
    out: list[tuple[str, str]] = []
    at = 0
    while (m := _groovy.next_match(body, at, _STAGE)) is not None:
        inner = _groovy.block(body, m.end() - 1)
        nested = _stages(_outside(inner, ("steps", "environment")))
        out.extend(nested or [(m[1] or m[2], inner)])
        at = m.end() - 1 + len(inner) + 2
    return out


def _outside(text: str, sections: tuple[str, ...]) -> str:
    """A block's text with the named sections' bodies taken out (their stages are none)."""
    at, kept = 0, []
    while (m := _groovy.next_match(text, at, _SECTION)) is not None:
        inner = _groovy.block(text, m.end() - 1)
        end = m.end() + len(inner) + 1
        kept.append(text[at:end] if m[1] not in sections else text[at : m.start()])
        at = end
    return "".join(kept) + text[at:]


def _call(stage: str) -> tuple[str, dict[str, Any]]:
    """The tool a stage's ``steps`` block calls first (a wrapping or printing step when it
    calls nothing else) and that call's named parameters."""
    m = _groovy.next_match(stage, 0, _SECTION)
    while m is not None and m[1] != "steps":
        m = _groovy.next_match(
            stage, m.end() - 1 + len(_groovy.block(stage, m.end() - 1)) + 2, _SECTION
        )
    if m is None:
        return "", {}
    calls: list[tuple[str, dict[str, Any]]] = []
    for line in _statements(_groovy.block(stage, m.end() - 1)):
        if (c := _CALL.match(line)) is None:
            continue
        if c[2] == "(":
            close = _groovy.closing(line, c.end() - 1, "(", ")")
            arguments = line[c.end() : close]
        else:
            arguments = line[c.end() :]
        calls.append((c[1], _named(arguments)))
    work = [c for c in calls if c[0] not in _NOT_STEPS] or calls
    return work[0] if work else ("", {})


def _statements(block: str) -> list[str]:
    """A steps block's statements: its lines, a call's parenthesised arguments and a string
    kept whole over several lines, comment lines dropped (a nested block's lines are its own
    statements: ``script { ... }`` wraps the work, it is none)."""
    out: list[str] = []
    for line in _groovy.lines(block, "("):
        stripped = line.strip()
        if stripped and not stripped.startswith(("//", "/*")):
            out.append(stripped)
    return out


def _named(arguments: str) -> dict[str, Any]:
    """A call's named parameters (``key: value, ...``; a map literal's ``[key: value]`` too);
    {} for positional ones (``sh 'make'``: no parameter a later stage could name)."""
    return {key: value for key, value in _groovy.arguments(arguments) if key is not None}


def _strings(args: dict[str, Any]) -> list[str]:
    return [v for v in args.values() if isinstance(v, str)]

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
blocks hold stages too. This module matches braces with strings and comments skipped, reads
the calls' parameters, and **never evaluates** anything. ``observed.evidence_plans`` offers
every planner answer to :func:`steps`.
"""

from __future__ import annotations

import re
from typing import Any

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
_NAMED = re.compile(r"\s*([A-Za-z_]\w*|'[^']*'|\"[^\"]*\")\s*:(?!:)")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_INTERPOLATION = re.compile(r"\$\{([^{}]*)\}|\$([A-Za-z_][\w.]*)")
_NOT_STEPS = frozenset({"script", "echo", "timeout", "retry", "dir", "withEnv"})
"""Pipeline steps that wrap or print, not the stage's work: skipped when the stage calls
another (a ``script { }`` block or an ``echo`` before the real call)."""


class _Unreadable(ValueError):
    """Not a declarative pipeline this reader reads."""


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
        body = _block(code, opening.end() - 1)
        stages = _stages(body)
    except _Unreadable:
        return []
    names = [name for name, _ in stages]
    if not stages or len(set(names)) != len(names):
        return []
    out: list[ReadStep] = []
    for position, (name, stage) in enumerate(stages):
        tool, args = _call(stage)
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
    while (m := _next(body, at, _STAGE)) is not None:
        inner = _block(body, m.end() - 1)
        nested = _stages(_outside(inner, ("steps", "environment")))
        out.extend(nested or [(m[1] or m[2], inner)])
        at = m.end() - 1 + len(inner) + 2
    return out


def _outside(text: str, sections: tuple[str, ...]) -> str:
    """A block's text with the named sections' bodies taken out (their stages are none)."""
    at, kept = 0, []
    while (m := _next(text, at, _SECTION)) is not None:
        inner = _block(text, m.end() - 1)
        end = m.end() + len(inner) + 1
        kept.append(text[at:end] if m[1] not in sections else text[at : m.start()])
        at = end
    return "".join(kept) + text[at:]


def _call(stage: str) -> tuple[str, dict[str, Any]]:
    """The tool a stage's ``steps`` block calls first (a wrapping or printing step when it
    calls nothing else) and that call's named parameters."""
    m = _next(stage, 0, _SECTION)
    while m is not None and m[1] != "steps":
        m = _next(stage, m.end() - 1 + len(_block(stage, m.end() - 1)) + 2, _SECTION)
    if m is None:
        return "", {}
    calls: list[tuple[str, dict[str, Any]]] = []
    for line in _statements(_block(stage, m.end() - 1)):
        if (c := _CALL.match(line)) is None:
            continue
        if c[2] == "(":
            close = _closing(line, c.end() - 1, "(", ")")
            arguments = line[c.end() : close]
        else:
            arguments = line[c.end() :]
        calls.append((c[1], _named(arguments)))
    work = [c for c in calls if c[0] not in _NOT_STEPS] or calls
    return work[0] if work else ("", {})


def _statements(block: str) -> list[str]:
    """A steps block's statements: its lines, a call's parenthesised arguments kept whole
    over several lines, comments dropped."""
    out: list[str] = []
    at = 0
    while at < len(block):
        end = block.find("\n", at)
        end = len(block) if end < 0 else end
        line = block[at:end]
        if (c := _CALL.match(line)) is not None and c[2] == "(":
            close = _closing(block, at + c.end() - 1, "(", ")")
            end = block.find("\n", close)
            end = len(block) if end < 0 else end
            line = block[at:end]
        stripped = line.strip()
        if stripped and not stripped.startswith(("//", "/*", "*")):
            out.append(stripped)
        at = end + 1
    return out


def _named(arguments: str) -> dict[str, Any]:
    """A call's named parameters (``key: value, ...``; a map literal's ``[key: value]`` too);
    {} for positional ones."""
    text = arguments.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    out: dict[str, Any] = {}
    for part in _split(text):
        if (key := _NAMED.match(part)) is None:
            continue
        name = key[1].strip("'\"")
        out[name] = _value(part[key.end() :].strip())
    return out


def _value(text: str) -> Any:
    """A Groovy literal's value (a string, GString as written, number, boolean, null), else
    the expression as written."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1].replace("\\" + text[0], text[0])
    if _NUMBER.fullmatch(text):
        return float(text) if "." in text else int(text)
    return {"true": True, "false": False, "null": None}.get(text, text)


def _strings(args: dict[str, Any]) -> list[str]:
    return [v for v in args.values() if isinstance(v, str)]


def _split(text: str) -> list[str]:
    """A parameter list split at its top-level commas (strings and brackets kept whole)."""
    parts, depth, at, start = [], 0, 0, 0
    while at < len(text):
        ch = text[at]
        if ch in "'\"":
            at = _string_end(text, at)
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:at])
            start = at + 1
        at += 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def _next(text: str, at: int, pattern: re.Pattern[str]) -> re.Match[str] | None:
    """The next match of ``pattern`` at or after ``at`` outside strings and comments."""
    while (m := pattern.search(text, at)) is not None:
        skip = _skipped(text, at, m.start())
        if skip is None:
            return m
        at = skip
    return None


def _skipped(text: str, start: int, until: int) -> int | None:
    """Where the string or comment that covers ``until`` (scanning from ``start``) ends, or
    None when ``until`` is in code."""
    at = start
    while at < until:
        if text.startswith(("//", "/*"), at) or text[at] in "'\"":
            end = _string_end(text, at)
            if end > until:
                return end
            at = end
        else:
            at += 1
    return None


def _string_end(text: str, at: int) -> int:
    """The end of the string or comment opening at ``at`` (Groovy's ``'...'``, ``"..."``,
    ``'''...'''``, ``\"\"\"...\"\"\"``, ``// ...``, ``/* ... */``)."""
    if text.startswith("//", at):
        end = text.find("\n", at)
        return len(text) if end < 0 else end
    if text.startswith("/*", at):
        end = text.find("*/", at + 2)
        if end < 0:
            raise _Unreadable("unterminated comment")
        return end + 2
    quote = text[at] * 3 if text.startswith(text[at] * 3, at) else text[at]
    i = at + len(quote)
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text.startswith(quote, i):
            return i + len(quote)
        if text[i] == "\n" and len(quote) == 1:
            break
        i += 1
    raise _Unreadable("unterminated string")


def _closing(text: str, at: int, opening: str, closing: str) -> int:
    """The index of the bracket closing the one at ``at`` (strings and comments skipped)."""
    depth, i = 0, at
    while i < len(text):
        if text.startswith(("//", "/*"), i) or text[i] in "'\"":
            i = _string_end(text, i)
            continue
        if text[i] == opening:
            depth += 1
        elif text[i] == closing:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise _Unreadable(f"no closing {closing}")


def _block(text: str, at: int) -> str:
    """The body of the brace block opening at ``at`` (without its braces)."""
    return text[at + 1 : _closing(text, at, "{", "}")]

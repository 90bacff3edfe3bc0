"""Plans stated as a Nextflow DSL2 workflow.

A planner may write its plan the way a bioinformatics team writes a pipeline: a Nextflow DSL2
``workflow { ... }`` block (named or not, with an optional ``main:`` section) calling one
process a statement, ``name = PROCESS(...)`` (the step is the name its outputs are assigned to)
or a bare ``PROCESS(...)`` (the step is the process), arguments positional or Groovy named
ones (``key: value``), an earlier step's output referred to as ``name.out.field``,
``PROCESS.out.field`` or ``name.field``, and ``params.x`` a pipeline parameter (a value
settled outside the block, no step: read as the literal a ``params.x = ...`` line of the text
gives it, else as written). A ``// comment`` line just above a call is its goal.
This module reads the block with a small tokenizer and **never evaluates** anything; channel
operators (``ch.map { ... }``, ``Channel.of(...)``: dotted calls) and closures are no steps.
``observed.evidence_plans`` offers every planner answer to :func:`steps`.
"""

from __future__ import annotations

import re
from typing import Any

from ._readstep import ReadStep, first_read

_FENCED = re.compile(r"```[ \t]*(?:nextflow|nf|groovy)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
"""A fenced code block, Nextflow, Groovy or unlabelled (markdown chat answers fence code)."""
_BLOCK = re.compile(r"(?m)^[ \t]*workflow(?:[ \t]+[A-Za-z_]\w*)?[ \t]*\{[ \t]*$")
"""A workflow block's opening line (``workflow {`` or ``workflow NAME {``)."""
_MAX_TEXT = 200_000
"""Longer answers are not parsed (a plan is never this long)."""
_CALL = re.compile(r"(?:([A-Za-z_]\w*)[ \t]*=[ \t]*)?([A-Za-z_]\w*)[ \t]*\(")
"""A statement calling a process: an optional ``name =``, the process, its opening bracket."""
_COMMENT = re.compile(r"^[ \t]*//[ \t]*(.*?)[ \t]*$")
_SECTION = re.compile(r"^[ \t]*(?:take|main|emit)[ \t]*:[ \t]*$")
"""A named workflow's section labels: no statements of their own."""
_STRING = re.compile(r"""'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)\"""")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_REF = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_KEY = re.compile(r"([A-Za-z_]\w*)[ \t]*:(?!:)[ \t]*")
_PARAM = re.compile(r"(?m)^[ \t]*params\.([A-Za-z_]\w*)[ \t]*=[ \t]*(.+?)[ \t]*;?[ \t]*$")
"""A pipeline parameter's assignment outside the workflow block (``params.genome = 'hg38'``)."""
_KEYWORDS = frozenset({"if", "else", "for", "while", "def", "return", "println", "log"})
"""Groovy's statements and Nextflow's helpers a workflow block may call: no process."""


def steps(text: str) -> list[ReadStep]:
    r"""The process calls of a text's Nextflow DSL2 workflow block (the whole text or its first
    fenced block that has one), each a step named by the name its call is assigned to (else by
    its process), its tool the process, its arguments the call's (named ones by name,
    positional ones by position), the earlier steps its references name as its needs, the
    ``//`` comment above it its goal; [] when there is no such block, when it calls fewer than
    one process, or when two calls share a step name.

    >>> s = steps('''include { FETCH; ALIGN } from './modules/reads'
    ... workflow {
    ...     // step 1: fetch the run's reads
    ...     reads = FETCH(run: 'SRR1', paired: true)
    ...     // step 2: align them
    ...     bam = ALIGN(reads.out.fastq, genome: params.genome, threads: 8)
    ... }''')
    >>> [(x.name, x.tool, x.needs) for x in s], s[1].goal
    ([('reads', 'FETCH', ()), ('bam', 'ALIGN', ('reads',))], 'step 2: align them')
    >>> s[0].args
    {'run': 'SRR1', 'paired': True}
    >>> s[1].args
    {'0': 'reads.out.fastq', 'genome': 'params.genome', 'threads': 8}
    >>> steps("params.genome = 'hg38'\nworkflow {\n  a = F(g: params.genome)\n}")[0].args
    {'g': 'hg38'}
    >>> [x.needs for x in steps("workflow {\n  FETCH('a')\n  ALIGN(FETCH.out)\n}")]
    [(), ('FETCH',)]
    >>> steps("workflow {\n  Channel.of(1, 2).view()\n}"), steps("x = FETCH(a: 1)")
    ([], [])
    """
    if len(text) > _MAX_TEXT or "workflow" not in text:
        return []
    return first_read(text, _FENCED, _read)


def _read(code: str) -> list[ReadStep]:
    """:func:`steps` of one piece of code."""
    opening = _BLOCK.search(code)
    if opening is None:
        return []
    body = _block(code, opening.end())
    if body is None:
        return []
    params = {
        f"params.{m.group(1)}": value
        for m in _PARAM.finditer(code[: opening.start()])
        if not isinstance(value := _value(m.group(2)), str) or _STRING.fullmatch(m.group(2))
    }
    out: list[ReadStep] = []
    names: dict[str, str] = {}  # a step's name, and its process's, -> the step
    goal = ""
    for statement in _statements(body):
        if comment := _COMMENT.match(statement):
            goal = comment.group(1)
            continue
        if not statement.strip() or _SECTION.match(statement):
            continue
        call = _CALL.fullmatch(statement.strip()[: statement.strip().find("(") + 1])
        inner = _inside(statement.strip())
        if call is None or inner is None or call.group(2) in _KEYWORDS:
            goal = ""
            continue
        name = call.group(1) or call.group(2)
        if name in names.values():
            return []
        args = {k: params.get(v, v) if isinstance(v, str) else v for k, v in _args(inner).items()}
        needs = tuple(
            dict.fromkeys(
                names[head]
                for value in args.values()
                if isinstance(value, str) and (head := value.split(".")[0]) in names
            )
        )
        out.append(ReadStep(name, needs, goal, call.group(2), args))
        names[name] = name
        names.setdefault(call.group(2), name)
        goal = ""
    return out


def _block(code: str, start: int) -> str | None:
    """The text of a block from just after its ``{`` to its matching ``}`` (strings and
    ``//`` comments skipped); None when it does not close."""
    depth = 1
    i = start
    while i < len(code):
        c = code[i]
        if c in "'\"":
            m = _STRING.match(code, i)
            i = m.end() if m else i + 1
            continue
        if code.startswith("//", i):
            i = code.find("\n", i) if "\n" in code[i:] else len(code)
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return code[start:i]
        i += 1
    return None


def _statements(body: str) -> list[str]:
    """The block's lines, a statement whose brackets span lines joined into one."""
    out: list[str] = []
    pending = ""
    for line in body.split("\n"):
        pending = f"{pending} {line.strip()}" if pending else line
        if _depth(pending) <= 0:
            out.append(pending)
            pending = ""
    if pending:
        out.append(pending)
    return out


def _depth(text: str) -> int:
    """How many brackets a text leaves open (strings skipped)."""
    bare = _STRING.sub("", text)
    return sum(bare.count(c) for c in "([{") - sum(bare.count(c) for c in ")]}")


def _inside(statement: str) -> str | None:
    """What a call statement's outer brackets hold, when the statement ends with them."""
    at = statement.find("(")
    if at < 0 or not statement.endswith(")") or _depth(statement[at:]) != 0:
        return None
    inner = statement[at + 1 : -1]
    return inner if _depth(inner) == 0 else None


def _args(inner: str) -> dict[str, Any]:
    """A call's arguments: ``key: value`` by key, the others by position; values read."""
    out: dict[str, Any] = {}
    position = 0
    for part in _split(inner):
        if not part:
            continue
        key = _KEY.match(part)
        if key and not _STRING.match(part):
            out[key.group(1)] = _value(part[key.end() :])
        else:
            out[str(position)] = _value(part)
            position += 1
    return out


def _split(inner: str) -> list[str]:
    """The comma-separated parts of an argument list (commas in strings or brackets kept)."""
    parts: list[str] = []
    depth = 0
    current = ""
    i = 0
    while i < len(inner):
        c = inner[i]
        if c in "'\"" and (m := _STRING.match(inner, i)):
            current += m.group()
            i = m.end()
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += c
        i += 1
    parts.append(current.strip())
    return parts


def _value(text: str) -> Any:
    """A literal's value (a string unquoted, a number, a boolean); anything else as written
    (a reference such as ``name.out.field`` or ``params.x``, an expression)."""
    text = text.strip()
    if (m := _STRING.fullmatch(text)) is not None:
        return m.group(1) if m.group(1) is not None else m.group(2)
    if _NUMBER.fullmatch(text):
        return float(text) if "." in text else int(text)
    if text in ("true", "false"):
        return text == "true"
    return text

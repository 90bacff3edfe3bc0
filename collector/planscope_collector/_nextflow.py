"""Plans stated as a Nextflow DSL2 workflow.

A planner may write its plan the way a bioinformatics team writes a pipeline: a Nextflow DSL2
``workflow { ... }`` block (named or not, with an optional ``main:`` section) calling one
process a statement, ``name = PROCESS(...)`` (the step is the name its outputs are assigned to)
or a bare ``PROCESS(...)`` (the step is the process), arguments positional or Groovy named
ones (``key: value``), an earlier step's output referred to as ``name.out.field``,
``PROCESS.out.field`` or ``name.field``, and ``params.x`` a pipeline parameter (a value
settled outside the block, no step: read as the literal a ``params.x = ...`` line of the text
gives it, else as written). A ``// comment`` line just above a call is its goal.
This module reads the block's statements with :mod:`._groovy`'s scanner (brackets matched,
strings and comments skipped, arguments split and read) and **never evaluates** anything;
channel operators (``ch.map { ... }``, ``Channel.of(...)``: dotted calls) and closures are no
steps.
``observed.evidence_plans`` offers every planner answer to :func:`steps`.
"""

from __future__ import annotations

import re
from typing import Any

from . import _groovy
from ._readstep import ReadStep, first_read

_FENCED = re.compile(r"```[ \t]*(?:nextflow|nf|groovy)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
"""A fenced code block, Nextflow, Groovy or unlabelled (markdown chat answers fence code)."""
_BLOCK = re.compile(r"(?m)^[ \t]*workflow(?:[ \t]+[A-Za-z_]\w*)?[ \t]*(\{)[ \t]*$")
"""A workflow block's opening line (``workflow {`` or ``workflow NAME {``)."""
_MAX_TEXT = 200_000
"""Longer answers are not parsed (a plan is never this long)."""
_CALL = re.compile(r"(?:([A-Za-z_]\w*)[ \t]*=[ \t]*)?([A-Za-z_]\w*)[ \t]*\(")
"""A statement calling a process: an optional ``name =``, the process, its opening bracket."""
_COMMENT = re.compile(r"^[ \t]*//[ \t]*(.*?)[ \t]*$")
_SECTION = re.compile(r"^[ \t]*(?:take|main|emit)[ \t]*:[ \t]*$")
"""A named workflow's section labels: no statements of their own."""
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
    try:
        statements = _groovy.lines(_groovy.block(code, opening.start(1)))
        # a param's value is the literal the text gives it: what no literal is stays a reference
        params = {
            f"params.{m[1]}": value
            for m in _PARAM.finditer(code[: opening.start()])
            if (value := _groovy.value(m[2])) != m[2].strip()
        }
        return _calls(statements, params)
    except _groovy.Unreadable:  # a string, comment or bracket left open: no Groovy
        return []


def _calls(statements: list[str], params: dict[str, Any]) -> list[ReadStep]:
    """The steps of a workflow block's statements (its logical lines)."""
    out: list[ReadStep] = []
    names: dict[str, str] = {}  # a step's name, and its process's, -> the step
    goal = ""
    for statement in statements:
        if comment := _COMMENT.match(statement):
            goal = comment.group(1)
            continue
        code = _groovy.uncommented(statement).strip()  # a comment after a call is no argument
        if not code or _SECTION.match(code):
            continue
        call = _CALL.fullmatch(code[: code.find("(") + 1])
        inner = _inside(code)
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


def _inside(statement: str) -> str | None:
    """What a call statement's outer brackets hold, when the statement ends with them."""
    at = statement.find("(")
    if at < 0 or not statement.endswith(")") or _groovy.depth(statement[at:]) != 0:
        return None
    inner = statement[at + 1 : -1]
    return inner if _groovy.depth(inner) == 0 else None


def _args(inner: str) -> dict[str, Any]:
    """A call's arguments: ``key: value`` by key, the others by position; values read."""
    out: dict[str, Any] = {}
    position = 0
    for key, value in _groovy.arguments(inner):
        if key is None:
            key = str(position)
            position += 1
        out[key] = value
    return out

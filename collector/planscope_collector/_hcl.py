"""Plans stated as HCL blocks (HashiCorp configuration language, native syntax).

A planner may write its plan the way a Terraform-minded team writes configuration: one labelled
block a step (``step "fetch" { ... }``, or Terraform's two-label ``resource "type" "name"``),
attributes for its tool, goal and arguments, ``depends_on = [step.fetch]`` and traversal
references (``step.fetch.result``, ``<type>.<name>.<attr>``) to an earlier block. This module
parses the native syntax (blocks with labels, attributes, strings, numbers, booleans, lists,
objects, traversals, function calls and heredocs kept as written, ``#`` / ``//`` / ``/* */``
comments) and **never evaluates** anything. ``observed.evidence_plans`` offers every planner
answer to :func:`steps`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ._readstep import ReadStep, first_read

_FENCED = re.compile(
    r"```[ \t]*(?:hcl|terraform|tf|hcl2)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE
)
"""A fenced code block, HCL or unlabelled (markdown chat answers fence their code)."""
_OPENS = re.compile(
    r'(?:[ \t]*(?:(?:#|//)[^\n]*)?\n)*[ \t]*[A-Za-z_][\w-]*(?:[ \t]+"[^"\n]*")+[ \t]*\{'
)
"""How an HCL plan opens (comment lines, then a block with at least one label): checked before
parsing, so that other answers (prose, JSON, other formats) are not parsed at all."""
_MAX_TEXT = 200_000
"""Longer answers are not parsed (a plan is never this long)."""
_TOOL_KEYS = ("tool", "call", "action", "function", "command", "invoke", "uses", "skill")
"""The attributes that name a step's tool, in the order they are read (as the other readers'
plan vocabulary: JSON's ``tool``, Org-mode's ``:TOOL:``...)."""
_GOAL_KEYS = ("goal", "description", "task", "purpose", "summary", "title")
_ARGS_KEYS = ("args", "arguments", "params", "parameters", "inputs", "input", "with")
_NOT_ARGS = frozenset(
    {"depends_on", "count", "for_each", "provider", "lifecycle"} | set(_TOOL_KEYS) | set(_GOAL_KEYS)
)
"""Terraform's meta-arguments and the step's own fields: no argument of its call."""
_TOKEN = re.compile(
    r"""(?P<space>(?:[ \t\r]+|\\\n|\#[^\n]*|//[^\n]*)+)
    |(?P<newline>\n)
    |(?P<string>"(?:[^"\\\n]|\\.)*")
    |(?P<number>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
    |(?P<name>[A-Za-z_][\w-]*)
    |(?P<punct>[{}\[\]()=,.:*?!<>+/%&|-])""",
    re.VERBOSE | re.DOTALL,
)
_HEREDOC = re.compile(r"<<-?([A-Za-z_]\w*)[ \t]*\n")
"""A heredoc's opening (``<<EOT``); its end is searched once (:func:`_tokens`)."""


@dataclass(frozen=True)
class Ref:
    """A traversal (``step.fetch.result``): its parts, the names and indexes as written."""

    parts: tuple[str, ...]

    def __str__(self) -> str:
        return ".".join(self.parts)


@dataclass
class Block:
    """A block: its type, labels, attributes (in order) and nested blocks."""

    type: str
    labels: tuple[str, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    blocks: list[Block] = field(default_factory=list)


class _Unreadable(ValueError):
    """Not HCL this parser reads."""


def parse(text: str) -> list[Block]:
    """The top-level blocks of an HCL body (top-level attributes are read and left out).

    >>> (b,) = parse('step "b" {\\n  tool = "f"\\n  args = { x = step.a.result, n = [1, 2] }\\n}')
    >>> b.type, b.labels, b.attrs["args"]["n"], str(b.attrs["args"]["x"])
    ('step', ('b',), [1, 2], 'step.a.result')
    """
    parser = _Parser(text, _tokens(text))
    blocks, _ = parser.body(end=None)
    return blocks


def steps(text: str) -> list[ReadStep]:
    """The steps a text states as HCL blocks: the whole text or one fenced block of it is an
    HCL body whose step blocks are the labelled blocks of a type some traversal in the text
    refers to (``step.fetch`` names type ``step``; Terraform's ``aws_s3_bucket.logs`` a
    ``resource "aws_s3_bucket" "logs"`` block, so type ``resource``), so that a header block
    (``plan "x" { revision = 2 }``) or a done block nothing refers to is no step; ids
    distinct; [] else.

    >>> a, b = steps('step "a" {\\n tool = "f"\\n}\\nstep "b" {\\n args = { x = step.a.id }\\n}')
    >>> (a.name, a.tool, a.needs), (b.name, b.args, b.needs)
    (('a', 'f', ()), ('b', {'x': 'step.a.id'}, ('a',)))
    >>> steps('step "a" {\\n tool = "f"\\n}\\nstep "b" {\\n tool = "g"\\n}'), steps("a = 1")
    ([], [])
    """
    if len(text) > _MAX_TEXT or "{" not in text:
        return []
    return first_read(text, _FENCED, _read)


def _read(code: str) -> list[ReadStep]:
    """:func:`steps` of one piece of code."""
    if not _OPENS.match(code):
        return []
    try:
        blocks = parse(code)
    except (_Unreadable, RecursionError):
        return []
    refs = [r.parts for b in blocks for r in _refs(b.attrs) if len(r.parts) >= 2]
    types = {b.type for b in blocks if b.labels}
    # the kinds of block referred to: by a block's address (``step.a``, Terraform's
    # ``t.a`` of ``resource "t" "a"``), or by its type when the block referred to is not in
    # this text (a re-plan refers to a done step by the address it had)
    kinds = {p[0] for p in refs if p[0] in types} | {
        b.type for b in blocks if len(b.labels) >= 2 and b.labels[:2] in {p[:2] for p in refs}
    }
    chosen = [b for b in blocks if b.labels and b.type in kinds]
    names = [b.labels[-1] for b in chosen]
    if not chosen or len(set(names)) != len(names):
        return []
    address: dict[tuple[str, ...], str] = {}
    for block, name in zip(chosen, names, strict=True):
        # ``step "a"`` is ``step.a``; Terraform's ``resource "t" "a"`` is ``t.a``, a ``data``
        # block's ``data.t.a``
        address[(block.type, *block.labels)] = name
        if len(block.labels) >= 2:
            address[block.labels[:2]] = name
    out: list[ReadStep] = []
    for block, name in zip(chosen, names, strict=True):
        referred = (
            address.get(r.parts[:3]) or address.get(r.parts[:2]) for r in _refs(block.attrs)
        )
        earlier = set(names[: len(out)])
        out.append(
            ReadStep(
                name,
                tuple(dict.fromkeys(n for n in referred if n in earlier)),
                next((str(block.attrs[k]) for k in _GOAL_KEYS if k in block.attrs), ""),
                _tool(block),
                _args(block),
            )
        )
    return out


def _tool(block: Block) -> str:
    """The tool a step block names (a tool attribute, else a Terraform resource's type)."""
    for key in _TOOL_KEYS:
        if isinstance(value := block.attrs.get(key), str | Ref):
            return str(value)
    return block.labels[0] if len(block.labels) >= 2 else ""


def _args(block: Block) -> dict[str, Any]:
    """A step block's arguments: its arguments object, else its other attributes."""
    for key in _ARGS_KEYS:
        if isinstance(value := block.attrs.get(key), dict):
            return {k: _written(v) for k, v in value.items()}
    return {k: _written(v) for k, v in block.attrs.items() if k not in _NOT_ARGS}


def _written(value: Any) -> Any:
    """A value with its references as written (``step.a.result``)."""
    if isinstance(value, Ref):
        return str(value)
    if isinstance(value, list):
        return [_written(v) for v in value]
    if isinstance(value, dict):
        return {k: _written(v) for k, v in value.items()}
    return value


def _refs(value: Any) -> list[Ref]:
    """Every traversal in a value, in order."""
    if isinstance(value, Ref):
        return [value]
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    if isinstance(value, dict):
        return [r for v in value.values() for r in _refs(v)]
    if isinstance(value, _Template):
        return list(value.refs)
    return []


class _Template(str):
    """A quoted template with ``${...}`` interpolations: kept as written, its traversals kept."""

    refs: tuple[Ref, ...] = ()

    def __new__(cls, text: str, refs: tuple[Ref, ...]) -> _Template:
        made = super().__new__(cls, text)
        made.refs = refs
        return made


_INTERPOLATION = re.compile(r"\$\{([^{}]*)\}")
_TRAVERSAL = re.compile(r"[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*|\[\d+\])+")


def _string(token: str) -> str:
    """A quoted string's value (escapes read, interpolations kept as written)."""
    text = re.sub(
        r"\\(.)",
        lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m[1], m[1]),
        token[1:-1],
    )
    refs = tuple(
        Ref(tuple(re.split(r"\.|\[|\]", t.group(0).replace("]", ""))))
        for m in _INTERPOLATION.finditer(text)
        for t in _TRAVERSAL.finditer(m[1])
    )
    return _Template(text, refs) if refs else text


def _tokens(text: str) -> list[tuple[str, str, int, int]]:
    """The tokens of a text (kind, text, start, end), spaces and comments dropped."""
    out: list[tuple[str, str, int, int]] = []
    at = 0
    while at < len(text):
        if (opening := _HEREDOC.match(text, at)) is not None:
            # one search for its closing line: an unterminated heredoc ends the reading, so
            # a text of many openings is not scanned again from each of them
            end = re.compile(rf"^[ \t]*{opening[1]}[ \t]*$", re.MULTILINE)
            if (closing := end.search(text, opening.end())) is None:
                raise _Unreadable("unterminated heredoc")
            body = text[opening.end() : closing.start()]
            out.append(("heredoc", "\n" + body, at, closing.end()))
            at = closing.end()
            continue
        if text.startswith("/*", at):  # a block comment, its end searched once
            if (closed := text.find("*/", at + 2)) < 0:
                raise _Unreadable("unterminated comment")
            at = closed + 2
            continue
        m = _TOKEN.match(text, at)
        if m is None or m.lastgroup is None:
            raise _Unreadable(f"unreadable HCL at {text[at : at + 20]!r}")
        if m.lastgroup != "space":
            out.append((m.lastgroup, m.group(0), m.start(), m.end()))
        at = m.end()
    return out


class _Parser:
    """A recursive-descent reader of the tokens (:func:`_tokens`)."""

    def __init__(self, source: str, tokens: list[tuple[str, str, int, int]]) -> None:
        self.source = source
        self.tokens = tokens
        self.at = 0

    def peek(self, skip_newlines: bool = False) -> tuple[str, str]:
        if skip_newlines:
            while self.at < len(self.tokens) and self.tokens[self.at][0] == "newline":
                self.at += 1
        return self.tokens[self.at][:2] if self.at < len(self.tokens) else ("end", "")

    def take(self, text: str | None = None, skip_newlines: bool = False) -> tuple[str, str]:
        token = self.peek(skip_newlines)
        if token[0] == "end" or (text is not None and token[1] != text):
            raise _Unreadable(f"expected {text or 'a token'}, got {token[1]!r}")
        self.at += 1
        return token

    def body(self, end: str | None) -> tuple[list[Block], dict[str, Any]]:
        """Blocks and attributes until ``end`` (``}``) or the end of the text."""
        blocks: list[Block] = []
        attrs: dict[str, Any] = {}
        while True:
            kind, text = self.peek(skip_newlines=True)
            if kind == "end" and end is None:
                return blocks, attrs
            if text == end and kind == "punct":
                self.at += 1
                return blocks, attrs
            if kind != "name":
                raise _Unreadable(f"expected a name, got {text!r}")
            self.at += 1
            if self.peek()[1] == "=":
                self.at += 1
                attrs[text] = self.expression()
            else:
                labels: list[str] = []
                while self.peek()[0] in ("string", "name"):
                    label = self.take()[1]
                    labels.append(str(_string(label)) if label.startswith('"') else label)
                self.take("{")
                inner, inner_attrs = self.body("}")
                blocks.append(Block(text, tuple(labels), inner_attrs, inner))
            if self.peek()[0] not in ("newline", "end") and self.peek()[1] != "}":
                raise _Unreadable(f"expected a new line, got {self.peek()[1]!r}")

    def expression(self) -> Any:
        """One expression: a literal, collection or traversal read; anything else (operators,
        function calls, conditionals) kept as written."""
        start = self.at
        value = self.term()
        kind, text = self.peek()
        if kind == "punct" and text not in ",)]}:" and text != "=":
            # an operator or conditional: the whole expression kept as written
            while self.peek()[0] != "end" and not (
                self.peek()[0] == "newline" or self.peek()[1] in ",)]}"
            ):
                self.at += 1
                if self.tokens[self.at - 1][1] in ("(", "[", "{"):
                    self.skip_nested(self.tokens[self.at - 1][1])
            return self.written(start)
        return value

    def written(self, start: int) -> str:
        """The source of the tokens from ``start`` to the current one, as written."""
        return self.source[self.tokens[start][2] : self.tokens[self.at - 1][3]]

    def skip_nested(self, opening: str) -> None:
        """Skip to the bracket that closes ``opening`` (already taken)."""
        depth = 1
        while depth:
            kind, text = self.take()
            if kind == "punct" and text in "([{":
                depth += 1
            elif kind == "punct" and text in ")]}":
                depth -= 1

    def term(self) -> Any:
        kind, text = self.take(skip_newlines=False)
        if kind == "string":
            return _string(text)
        if kind == "heredoc":
            return text[1:].removesuffix("\n")
        if kind == "number":
            return float(text) if re.search(r"[.eE]", text) else int(text)
        if text == "[":
            items: list[Any] = []
            while self.peek(skip_newlines=True)[1] != "]":
                items.append(self.expression())
                if self.peek(skip_newlines=True)[1] == ",":
                    self.at += 1
            self.take("]", skip_newlines=True)
            return items
        if text == "{":
            obj: dict[str, Any] = {}
            while self.peek(skip_newlines=True)[1] != "}":
                key_kind, key = self.take(skip_newlines=True)
                if key_kind not in ("name", "string"):
                    raise _Unreadable(f"expected a key, got {key!r}")
                if self.take()[1] not in ("=", ":"):
                    raise _Unreadable("expected = or : after a key")
                obj[str(_string(key)) if key_kind == "string" else key] = self.expression()
                if self.peek()[1] == ",":
                    self.at += 1
            self.take("}", skip_newlines=True)
            return obj
        if kind == "name":
            if text in ("true", "false"):
                return text == "true"
            if text == "null":
                return None
            if self.peek()[1] == "(":  # a function call: kept as written
                start = self.at - 1
                self.at += 1
                self.skip_nested("(")
                return self.written(start)
            parts = [text]
            while self.peek()[1] in (".", "["):
                if self.take()[1] == ".":
                    parts.append(self.take()[1])
                else:
                    parts.append(str(self.expression()))
                    self.take("]")
            return Ref(tuple(parts))
        raise _Unreadable(f"unexpected {text!r}")

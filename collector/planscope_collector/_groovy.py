"""Groovy source scanning shared by the plan readers of Groovy dialects (``_jenkinsfile``:
declarative Jenkinsfiles; ``_nextflow``: Nextflow DSL2 workflows).

Both read a planner's answer the same way at this level: brackets matched with strings and
comments skipped, an argument list split at its top-level commas, a literal read as its value.
One scanner keeps the two from disagreeing about what Groovy is. It knows Groovy's
``'...'``, ``"..."`` (a GString: its ``${...}`` may hold quotes and braces of its own),
``'''...'''`` and ``\"\"\"...\"\"\"`` strings and its ``//`` and ``/* */`` comments; not slashy
strings (``/.../``, ``$/.../$``: a slash is division as often). It **never evaluates**
anything: what is no literal is kept as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_KEY = re.compile(r"([A-Za-z_]\w*)\s*:(?!:)")
"""A named argument's bare key (``a::b`` is a method reference, not a key)."""
_COLON = re.compile(r"\s*:(?!:)")
_ESCAPED_QUOTE = re.compile(r"\\([\\'\"])")
_WORDS = {"true": True, "false": False, "null": None}


class Unreadable(ValueError):
    """The text is no Groovy this scanner reads (a string, comment or bracket left open)."""


def string_end(text: str, at: int) -> int:
    """The end of the string or comment opening at ``at``.

    >>> string_end("'it\\\\'s' + x", 0), string_end('"${m["k"]}" + x', 0), string_end("// c\\nx", 0)
    (7, 11, 4)

    Raises :class:`Unreadable` when it does not close (a one-quote string never spans lines in
    Groovy: a quote left open there is a syntax error, not a string to the end of the text).
    """
    if text.startswith("//", at):
        end = text.find("\n", at)
        return len(text) if end < 0 else end
    if text.startswith("/*", at):
        end = text.find("*/", at + 2)
        if end < 0:
            raise Unreadable("unterminated comment")
        return end + 2
    quote = text[at] * 3 if text.startswith(text[at] * 3, at) else text[at]
    i = at + len(quote)
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text.startswith(quote, i):
            return i + len(quote)
        if quote[0] == '"' and text.startswith("${", i):
            # a GString's expression is code: its own strings may hold the closing quote
            i = closing(text, i + 1, "{", "}") + 1
            continue
        if text[i] == "\n" and len(quote) == 1:
            break
        i += 1
    raise Unreadable("unterminated string")


def _opens(text: str, at: int) -> bool:
    """Whether a string or comment opens at ``at``."""
    return text[at] in "'\"" or text.startswith(("//", "/*"), at)


def pieces(text: str, at: int = 0) -> Iterator[tuple[int, int]]:
    """The text from ``at`` as (start, end) pieces: each string and comment whole, each other
    character alone (so a piece longer than one character is never code).

    >>> [text[s:e] for text in ["f('a, b') // c"] for s, e in pieces(text, 1)]
    ['(', "'a, b'", ')', ' ', '// c']
    """
    i = at
    while i < len(text):
        end = string_end(text, i) if _opens(text, i) else i + 1
        yield i, end
        i = end


def closing(text: str, at: int, opening: str, close: str) -> int:
    """The index of the bracket closing the one at ``at`` (strings and comments skipped).

    >>> closing("{ a('}') /* } */ { } } x", 0, "{", "}")
    21
    """
    depth = 0
    for s, e in pieces(text, at):
        if e - s == 1 and text[s] == opening:
            depth += 1
        elif e - s == 1 and text[s] == close:
            depth -= 1
            if depth == 0:
                return s
    raise Unreadable(f"no closing {close}")


def block(text: str, at: int) -> str:
    """The body of the brace block opening at ``at`` (without its braces).

    >>> block("stage { steps { f('}') } } // }", 6)
    " steps { f('}') } "
    """
    return text[at + 1 : closing(text, at, "{", "}")]


def next_match(text: str, at: int, pattern: re.Pattern[str]) -> re.Match[str] | None:
    """The next match of ``pattern`` at or after ``at`` outside strings and comments.

    >>> next_match("// stage {\\nx = 'stage {'\\nstage {", 0, re.compile(r"stage \\{")).start()
    25
    """
    while (m := pattern.search(text, at)) is not None:
        # the piece the match starts in: code (one character), or a string or comment
        start, end = next((s, e) for s, e in pieces(text, at) if e > m.start())
        if end - start == 1:
            return m
        at = end
    return None


def depth(text: str) -> int:
    """How many brackets (``(``, ``[``, ``{``) the text leaves open; strings and comments
    skipped.

    >>> depth("f(x: '(', y: [1, // )\\n"), depth("g(') (')")
    (2, 0)
    """
    opened = 0
    for s, e in pieces(text):
        if e - s == 1 and text[s] in "([{":
            opened += 1
        elif e - s == 1 and text[s] in ")]}":
            opened -= 1
    return opened


def lines(text: str, brackets: str = "([{") -> list[str]:
    """The text's logical lines: split at the line breaks that are in code and not inside one
    of ``brackets`` (a call's arguments over several lines, a string over several, one line).

    >>> lines("a = F(\\n  x: '''1\\n2''')\\n// c\\nb = G()")
    ["a = F(\\n  x: '''1\\n2''')", '// c', 'b = G()']
    """
    opening, close = set(brackets), {")]}"["([{".index(b)] for b in brackets}
    out: list[str] = []
    start, opened = 0, 0
    for s, e in pieces(text):
        if e - s > 1:
            continue
        if text[s] in opening:
            opened += 1
        elif text[s] in close:
            opened -= 1
        elif text[s] == "\n" and opened <= 0:
            out.append(text[start:s])
            start, opened = s + 1, 0
    out.append(text[start:])
    return out


def uncommented(text: str) -> str:
    """The text with its comments taken out (each a space, as Groovy reads it).

    >>> uncommented("f(x: 1, /* y: 2, */ z: '// 3') // done")
    "f(x: 1,   z: '// 3')  "
    """
    return "".join(" " if text.startswith(("//", "/*"), s) else text[s:e] for s, e in pieces(text))


def split(text: str) -> list[str]:
    """An argument list's parts: split at its top-level commas (strings, comments and
    brackets kept whole), comments dropped, each stripped, empty ones (a trailing comma's)
    dropped.

    >>> split("a: 'x, y', b: [1, 2], // the count\\n c: f(3, 4),")
    ["a: 'x, y'", 'b: [1, 2]', 'c: f(3, 4)']
    """
    parts, current, opened = [], [], 0
    for s, e in pieces(text):
        piece = text[s:e]
        if text.startswith(("//", "/*"), s):
            current.append(" ")
            continue
        if piece in ("(", "[", "{"):
            opened += 1
        elif piece in (")", "]", "}"):
            opened -= 1
        elif piece == "," and opened == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(piece)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def value(text: str) -> Any:
    """A Groovy literal's value: a string (a GString with its ``${...}`` as written), a number,
    a boolean, null; anything else (a reference, an expression) as written.

    >>> value("'it\\\\'s'"), value('"${a.id}"'), value("'''x'''"), value("-2.5"), value("null")
    ("it's", '${a.id}', 'x', -2.5, None)
    >>> value("'a' + 'b'"), value("fetch.out.reads")
    ("'a' + 'b'", 'fetch.out.reads')
    """
    text = text.strip()
    if text and text[0] in "'\"":
        try:
            whole = string_end(text, 0) == len(text)
        except Unreadable:
            whole = False
        if whole:
            quote = 3 if text.startswith(text[0] * 3) else 1
            # the quotes and the backslash unescaped; other escapes (``\n``, ``\$``) as written,
            # as GStrings' ``${...}`` are: the value is compared with what a tool was called with
            return _ESCAPED_QUOTE.sub(r"\1", text[quote:-quote])
    if _NUMBER.fullmatch(text):
        return float(text) if "." in text else int(text)
    return _WORDS.get(text, text)


def arguments(text: str) -> list[tuple[str | None, Any]]:
    """A call's arguments in order: (key, value) for a named one (``key: value``, the key
    bare or quoted), (None, value) for a positional one; values read by :func:`value`. A sole
    map literal (``f([key: value])``) is the named arguments, as Groovy passes them.

    >>> arguments("reads.out, 'k-1': 2, to: \\"${x}\\", ")
    [(None, 'reads.out'), ('k-1', 2), ('to', '${x}')]
    >>> arguments("[run: 'SRR1', paired: true]"), arguments("[1, 2]")
    ([('run', 'SRR1'), ('paired', True)], [(None, '[1, 2]')])
    """
    text = text.strip()
    if text.startswith("[") and closing(text, 0, "[", "]") == len(text) - 1:
        inner = split(text[1:-1])
        if inner and _named(inner[0]) is not None:
            text = text[1:-1]
    out: list[tuple[str | None, Any]] = []
    for part in split(text):
        named = _named(part)
        out.append((named[0], value(named[1])) if named else (None, value(part)))
    return out


def _named(part: str) -> tuple[str, str] | None:
    """A named argument's key and its value's text; None for a positional one."""
    if part[0] in "'\"":
        end = string_end(part, 0)
        colon = _COLON.match(part, end)
        return (str(value(part[:end])), part[colon.end() :]) if colon else None
    key = _KEY.match(part)
    return (key[1], part[key.end() :]) if key else None

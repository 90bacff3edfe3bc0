"""Untrusted text: everything that comes from span attributes is data, never markup.

Streamlit widgets whose labels accept Markdown, and Plotly text (which accepts a subset of HTML),
only ever get values that passed through these functions. Bodies are shown with ``st.text``,
``st.code``, ``st.json`` or ``st.dataframe``, which render text literally.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

MAX_PAYLOAD_CHARS = 4000
"""Size cap for inputs/outputs shown in the step panel."""

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>:~=$^&\"'])")


def cap(text: str, limit: int = MAX_PAYLOAD_CHARS) -> str:
    """Cut ``text`` to ``limit`` characters and say how much was dropped.

    >>> cap("abcdef", 3)
    'abc… [3 more characters]'
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


def md_escape(text: object) -> str:
    """Backslash-escape every Markdown-active character (for widget labels that render Markdown).

    >>> md_escape("[x](javascript:alert(1))")
    '\\\\[x\\\\]\\\\(javascript\\\\:alert\\\\(1\\\\)\\\\)'
    """
    return _MD_SPECIAL.sub(r"\\\1", str(text).replace("\n", " "))


def html_text(text: object, limit: int = 300) -> str:
    """Escape for Plotly text/hover (which interprets ``<b>``, ``<a>``…), capped, one line.

    >>> html_text("<script>alert(1)</script>")
    '&lt;script&gt;alert(1)&lt;/script&gt;'
    """
    return html.escape(cap(str(text), limit), quote=True)


def pretty(value: Any, limit: int = MAX_PAYLOAD_CHARS) -> str:
    """A payload for ``st.code``: JSON documents re-indented, capped.

    >>> pretty('{"a":1}')
    '{\\n  "a": 1\\n}'
    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return cap(value, limit)
        if isinstance(value, str):
            return cap(value, limit)
    try:
        return cap(json.dumps(value, indent=2, ensure_ascii=False, default=str), limit)
    except (TypeError, ValueError):
        return cap(repr(value), limit)

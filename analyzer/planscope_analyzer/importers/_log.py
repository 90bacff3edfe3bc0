"""Read any conversation log planscope can attribute — a Who&When multi-agent log (Magentic-One
ledgers, AG2 group chats) or a single-agent tool-use conversation — by its shape.

A file holds one log, or several runs (a JSON array of tool-use runs, as τ-bench's
``historical_trajectories`` files): the readers return every conversation in it.

>>> [c.framework for c in parse_logs(b'[{"role": "user", "content": "hi"}]', "t.json")]
['tool-use']
>>> [c.framework for c in parse_logs(b'{"history": [{"name": "A", "content": "hi"}]}', "w.json")]
['ag2-captainagent']
"""

from __future__ import annotations

from pathlib import Path

from ._conversation import Conversation
from ._errors import ImportFailed, UnknownFormat
from ._import import detect_format
from ._tooluse import parse_tool_use
from ._whowhen import parse_whowhen


def parse_logs(data: bytes, source: str) -> list[Conversation]:
    """The conversations in a log's bytes, whichever supported shape it has."""
    fmt = detect_format(data, source)
    if fmt == "whowhen":
        return [parse_whowhen(data, source)]
    if fmt == "tool-use":
        return parse_tool_use(data, source)
    raise UnknownFormat(
        f"{source}: an OTLP file is not a conversation log; import it "
        "(planscope import) and attribute the stored trace with --trace-id"
    )


def read_logs(path: Path) -> list[Conversation]:
    """:func:`parse_logs` on a file; ``ImportFailed`` names the file when it cannot be read."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImportFailed(f"{path}: cannot read: {exc.strerror or exc}") from None
    return parse_logs(data, str(path))

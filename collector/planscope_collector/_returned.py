"""A tool call's result as its tool returned it (:func:`tool_result`), and errors returned as
values: a call that did not raise (its span's status is not ERROR) but
whose result is an error envelope failed (:func:`returned_error`; ``observed.bind`` reads it of
the function spans it finds to be calls, spans the SDK did not write). Typed tool spans of the
other conventions (OpenInference, GenAI, OpenLLMetry: migration 0041; Langfuse, MLflow: 0043)
are read so by the span model at insert, in SQL (the same shapes:
tests/collector/test_returned_errors.py holds the cases both are checked on).

The envelopes are told by their **shape**, never by a word in a text:

* MCP's ``CallToolResult`` (``{"isError": true, "content": [...]}``) and the same flag spelled
  ``is_error`` (Anthropic's ``tool_result`` block);
* Anthropic's API error (``{"type": "error", "error": {"type": ..., "message": ...}}``);
* a bare error object, ``{"error": ...}`` (a non-empty object or string) with nothing beside it
  but an error's own fields (``code``, ``status``, ``message``, ...): a tool that returns its
  error instead of raising;
* Google ADK's recommended tool result for an error, an object whose ``status`` is ``"error"``
  with an ``error_code`` or ``error_message`` beside it (``{"status": "error", "error_code": ...,
  "error_message": ...}``): its type its ``error_code`` (else ``code``, ``status``), its message
  its ``error_message`` (else ``message``, else the text; migration 0048). A ``status`` of
  ``"error"`` alone (``{"status": "error", "message": ...}``, a job's state) is not one, except
  on a tool span that carries ADK's ``gcp.vertex.agent.tool_response`` (ADK documents the
  ``status`` key as the call's outcome): the span model reads that in SQL only (migration 0053),
  as ADK's spans are always typed tool spans, under its own tracing or OpenInference's.
* Agno's ``FunctionExecutionResult`` as OpenLLMetry's Agno instrumentor records it (its
  ``str()``, ``status='failure' result=None error="..."``: Agno catches a tool's exception and
  the span ends OK): failed, type ``failure``, message its ``error``; in SQL only (migration
  0055), as that instrumentor's tool spans are always typed tool spans.

A result that only mentions an error (``"errors": []``, ``"error": null``, an ``error`` beside
a result, a ``message`` field, a log text) is not one.

OpenLLMetry's LlamaIndex instrumentor records an ``AgentWorkflow``'s tool call as the
workflow's ``ToolCallResult`` (migration 0049): the result is its tool output's ``raw_output``,
and a tool output whose ``is_error`` is true (a tool that raised, its text handed back to the
model) failed, its message that text.

OpenLLMetry's LangChain instrumentor records a tool's output inside its callback's envelope,
``{"output": <what the tool returned>, "kwargs": {...}}``, and what a LangChain tool called with
a tool call returns is a serialised ``ToolMessage`` (its ``content`` beside ``tool_call_id``,
``name``, ``status``...): the result is that ``content`` (:func:`tool_result`; migration 0046
reads it so in SQL, tests/collector/test_tool_results.py holds the cases both are checked on).
LangSmith's OpenTelemetry export records a tool run's outputs as ``{"output": <the ToolMessage as
a plain object>}`` (``content``, ``type`` ``tool``, ``tool_call_id``, ...): the result is that
``content`` too (migration 0050).
A ``ToolMessage`` whose ``status`` is ``error`` (a tool's ``ToolException`` handled by
LangChain, a middleware's or ``ToolNode``'s error message), in either serialisation, failed
too, with its content as the message, unless that content is an envelope above (0046; the plain
object since 0051).
"""

from __future__ import annotations

import json
from typing import Any

from planscope import safejson

__all__ = ["returned_error", "tool_result"]

_LANGCHAIN_OUTPUT = '{"output":'
"""How OpenLLMetry's LangChain callback envelope starts (``json.dumps`` of ``{"output": ...,
"kwargs": ...}``): only such a text is decoded (0046 tests the same prefix in SQL)."""

_LLAMAINDEX_RESULT = '{"tool_name":'
"""How a LlamaIndex ``ToolCallResult`` as OpenLLMetry records it starts (0049 tests the same
prefix in SQL)."""

_ERROR_FIELDS = frozenset(
    {"error", "code", "status", "status_code", "message", "details", "request_id", "type"}
)
"""The keys a bare error object (``{"error": ...}``) may have beside ``error``: an error's own
fields, no result."""

_ADK_ERROR_FIELDS = frozenset({"error_code", "error_message"})
"""The fields of Google ADK's recommended error result (``{"status": "error", ...}``), one of
which makes such an object an error returned as a value."""


def returned_error(result: str) -> tuple[str, str] | None:
    """The error type and message of a call's result that is an error envelope (module
    docstring); None for any other result.

    >>> returned_error('{"type": "error", "error": {"type": "overloaded_error", '
    ...                '"message": "busy"}}')
    ('overloaded_error', 'busy')
    >>> returned_error('{"isError": true, "content": [{"type": "text", "text": "no such file"}]}')
    ('', 'no such file')
    >>> returned_error('{"error": "quota exceeded", "code": 429}')
    ('429', 'quota exceeded')
    >>> returned_error('{"status": "error", "error_code": "HELD", "error_message": "on loan"}')
    ('HELD', 'on loan')
    >>> returned_error('{"output": {"lc": 1, "type": "constructor", "id": ["ToolMessage"], '
    ...                '"kwargs": {"content": "no such job", "status": "error"}}, "kwargs": {}}')
    ('', 'no such job')
    >>> returned_error('{"output": {"content": "no such job", "type": "tool", '
    ...                '"tool_call_id": "c1", "status": "error"}}')
    ('', 'no such job')
    >>> [returned_error(r) for r in ('{"rows": 3, "error": null}', '{"errors": []}',
    ...  '{"id": 7, "error": "none"}', '{"message": "error: retry"}', 'error: timeout')]
    [None, None, None, None, None]
    """
    content, message = _unwrapped(result)
    said = _envelope(content)
    if said is None and message is not None and message.get("status") == "error":
        return "", _message_of_content(content)
    if said is None and message is not None and message.get("is_error") is True:
        return "", content  # a LlamaIndex tool that raised: its text handed back
    return said


def tool_result(recorded: str) -> str:
    """What a tool returned, from its span's recorded result: the content of OpenLLMetry's
    LangChain envelope (a ``ToolMessage``'s ``content``, else the ``output`` itself; a string
    as it is, any other value as its JSON text); any other result unchanged.

    >>> tool_result('{"output": {"lc": 1, "type": "constructor", "id": ["langchain", "schema", '
    ...             '"messages", "ToolMessage"], "kwargs": {"content": "pending", "type": "tool", '
    ...             '"tool_call_id": "c1", "status": "success"}}, "kwargs": {"name": "poll"}}')
    'pending'
    >>> tool_result('{"output": {"rows": [1, 2]}, "kwargs": {}}'), tool_result('{"rows": 3}')
    ('{"rows":[1,2]}', '{"rows": 3}')
    >>> tool_result('{"output": {"content": "pending", "type": "tool", "tool_call_id": "c1"}}')
    'pending'
    """
    return _unwrapped(recorded)[0]


def _unwrapped(recorded: str) -> tuple[str, dict[str, Any] | None]:
    """What the tool returned (:func:`tool_result`) and the fields of the serialised
    ``ToolMessage`` it came in (LangChain's ``{"lc": 1, "type": "constructor", "id": [...,
    "ToolMessage"], "kwargs": {...}}``: its ``kwargs``; LangSmith's plain object: itself) or
    of the ``ToolOutput`` of a LlamaIndex ``ToolCallResult``, None when it came in neither."""
    if recorded.startswith(_LLAMAINDEX_RESULT):
        return _llamaindex_output(recorded)
    if not recorded.startswith(_LANGCHAIN_OUTPUT):
        return recorded, None
    envelope = safejson.load_object(recorded)
    output = envelope.get("output")
    if len(envelope) == 1 and isinstance(output, dict) and _plain_tool_message(output):
        content = output["content"]  # LangSmith's tool run outputs (0050), its fields (0051)
        return (content if isinstance(content, str) else _json_text(content)), output
    if len(envelope) != 2 or not isinstance(envelope.get("kwargs"), dict):
        return recorded, None
    message = None
    if isinstance(output, dict) and output.get("type") == "constructor":
        ids, fields = output.get("id"), output.get("kwargs")
        if isinstance(ids, list) and ids and ids[-1] == "ToolMessage" and isinstance(fields, dict):
            message = fields
    value = output if message is None else message.get("content", "")
    return value if isinstance(value, str) else _json_text(value), message


def _plain_tool_message(value: dict[str, Any]) -> bool:
    """A ``ToolMessage`` serialised as a plain object (LangSmith's run outputs): type ``tool``
    with a ``tool_call_id`` and a ``content``."""
    return value.get("type") == "tool" and "tool_call_id" in value and "content" in value


def _llamaindex_output(recorded: str) -> tuple[str, dict[str, Any] | None]:
    """A LlamaIndex ``ToolCallResult`` (``{"tool_name", "tool_kwargs", "tool_id",
    "tool_output": {..., "raw_output", "is_error"}, "return_direct"}``, OpenLLMetry's output of
    an ``AgentWorkflow``'s ``call_tool`` step): its tool output's ``raw_output`` (a string as it
    is, any other value as its JSON text) and that tool output; the text unchanged otherwise."""
    decoded = safejson.load_object(recorded)
    output = decoded.get("tool_output")
    if not isinstance(output, dict) or "tool_kwargs" not in decoded or "tool_id" not in decoded:
        return recorded, None
    raw = output.get("raw_output")
    return (raw if isinstance(raw, str) else _json_text(raw)), output


def _json_text(value: Any) -> str:
    """A JSON value as ClickHouse's ``JSONExtractRaw`` writes it (no spaces, no escapes)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _message_of_content(content: str) -> str:
    """The message of a failed ``ToolMessage`` whose content is no envelope: its ``error``
    (an object: what it says; a string: itself) when it is an object naming one, else the
    content (0046's rule in SQL)."""
    if not content.startswith("{"):
        return content
    error = safejson.load_object(content).get("error")
    if isinstance(error, dict):
        return _message(error)
    return error if isinstance(error, str) else content


def _envelope(result: str) -> tuple[str, str] | None:
    """The error type and message of a result that is one of the envelopes of the module
    docstring (MCP's, Anthropic's, a bare error object); None for any other."""
    if not result.startswith("{"):
        return None
    decoded = safejson.load_object(result)
    if decoded.get("isError") is True or decoded.get("is_error") is True:
        return _kind(decoded), _message(decoded)
    error = decoded.get("error")
    if decoded.get("type") == "error" and isinstance(error, dict):
        return _kind(decoded), _message(error)
    if error and isinstance(error, dict | str) and set(decoded) <= _ERROR_FIELDS:
        return _kind(decoded), _message(error) if isinstance(error, dict) else error
    if decoded.get("status") == "error" and _ADK_ERROR_FIELDS & set(decoded):
        said = decoded.get("error_message")
        if not (isinstance(said, str) and said):
            said = _message(decoded) or result
        return _kind(decoded), said
    return None


def _kind(envelope: dict[str, Any]) -> str:
    """An envelope's error type: the first of its error object's ``type`` and ``code``, then
    its own ``error_code``, ``code`` and ``status``, that is a non-empty string or an integer;
    empty when none is (0041 reads it so in SQL, 0048 with ``error_code``)."""
    error = envelope.get("error")
    said = (error.get("type"), error.get("code")) if isinstance(error, dict) else ()
    own = (envelope.get("error_code"), envelope.get("code"), envelope.get("status"))
    for value in (*said, *own):
        if isinstance(value, str) and value:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return ""


def _message(envelope: dict[str, Any], depth: int = 2) -> str:
    """What an error envelope says: its ``message``, else the text of its ``content`` blocks
    (MCP), else what its ``error`` says (an object: read so, at most ``depth`` objects down; a
    string: itself). The depth is 0041's, which reads a fixed number of levels in SQL."""
    message = envelope.get("message")
    if isinstance(message, str) and message:
        return message
    content = envelope.get("content")
    if isinstance(content, list):
        texts = [
            b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
        ]
        if texts:
            return "\n".join(texts)
    if isinstance(content, str) and content:
        return content
    error = envelope.get("error")
    if isinstance(error, dict):
        return _message(error, depth - 1) if depth else ""
    return error if isinstance(error, str) else ""

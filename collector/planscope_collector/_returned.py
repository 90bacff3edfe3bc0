"""Errors returned as values: a call that did not raise (its span's status is not ERROR) but
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
  error instead of raising.

A result that only mentions an error (``"errors": []``, ``"error": null``, an ``error`` beside
a result, a ``message`` field, a log text) is not one.
"""

from __future__ import annotations

from typing import Any

from planscope import safejson

__all__ = ["returned_error"]

_ERROR_FIELDS = frozenset(
    {"error", "code", "status", "status_code", "message", "details", "request_id", "type"}
)
"""The keys a bare error object (``{"error": ...}``) may have beside ``error``: an error's own
fields, no result."""


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
    >>> [returned_error(r) for r in ('{"rows": 3, "error": null}', '{"errors": []}',
    ...  '{"id": 7, "error": "none"}', '{"message": "error: retry"}', 'error: timeout')]
    [None, None, None, None, None]
    """
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
    return None


def _kind(envelope: dict[str, Any]) -> str:
    """An envelope's error type: the first of its error object's ``type`` and ``code``, then
    its own ``code`` and ``status``, that is a non-empty string or an integer; empty when none
    is (0041 reads it so in SQL)."""
    error = envelope.get("error")
    said = (error.get("type"), error.get("code")) if isinstance(error, dict) else ()
    for value in (*said, envelope.get("code"), envelope.get("status")):
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

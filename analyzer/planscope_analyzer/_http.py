"""What the collector said when it refused a request, for the one-line CLI errors."""

from __future__ import annotations

from typing import Any


def refusal_reason(response: Any) -> str:
    """The ``error`` of the API's one error shape (``{"error": ...}``), else the body's start.

    >>> import httpx
    >>> refusal_reason(httpx.Response(400, json={"error": "limit: too big", "field": "limit"}))
    'limit: too big'
    """
    try:
        return str(response.json()["error"])[:300]
    except (ValueError, KeyError, TypeError):
        return str(response.text)[:300]

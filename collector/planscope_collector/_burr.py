"""Burr's own OpenTelemetry (``burr.integrations.opentelemetry.OpenTelemetryBridge``), read
as the work it shows (``observed.step_io`` and ``observed.answer_sql`` call this module).

The bridge writes, all INTERNAL and with no ``gen_ai.*`` name: a span per ``app.run()`` (the
root, no attributes), a span per action run (what the app logged on it as attributes), and a
span per ``@trace()``-decorated function called inside an action, carrying the function's
arguments as attributes, its ``return`` (JSON) and ``__burr_function`` /
``__burr_function_hash``. Burr sets OK on every function span, also when the function returned
an error object (``_returned``).

* a **function span** (one carrying ``__burr_function``) records what its function was given
  (its other attributes) and gave back (``return``): :func:`function_io`, what binding reads of
  it as a call (a model call when it answered a chat message or a plan, else a tool call);
* the action spans need nothing of their own: binding finds them as the attempts that enclose
  those calls, under the run's root.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

__all__ = ["FUNCTION", "RETURN", "call_sql", "function_io", "function_sql"]

FUNCTION = "__burr_function"
"""The attribute Burr's ``@trace()`` puts on a function's span (the function's qualified name);
``__burr_function_hash`` beside it."""
RETURN = "return"
"""The attribute holding a traced function's return value (JSON)."""
_OWN = "__burr"
"""Burr's own attributes start with this (not the function's arguments)."""


def function_io(attributes: Mapping[str, str]) -> tuple[str, str] | None:
    """What a Burr function span's function was given (its arguments, a JSON object) and gave
    back (``return``); None for any other span.

    >>> function_io({"__burr_function": "services.search", "__burr_function_hash": "9f",
    ...              "ward": "north", "return": '{"id": "A-1"}'})
    ('{"ward": "north"}', '{"id": "A-1"}')
    >>> function_io({"ward": "north"}) is None
    True
    """
    if FUNCTION not in attributes:
        return None
    given = {k: v for k, v in sorted(attributes.items()) if not k.startswith(_OWN) and k != RETURN}
    return json.dumps(given), attributes.get(RETURN) or ""


def function_sql(column: str = "SpanAttributes") -> tuple[str, str]:
    """SQL saying whether a span of ``otel_traces`` is a Burr function span, and SQL for the
    attributes :func:`function_io` reads of it (a Map).

    >>> function_sql()[0]
    "has(mapKeys(SpanAttributes), '__burr_function')"
    """
    return (
        f"has(mapKeys({column}), '{FUNCTION}')",
        f"mapFilter((k, v) -> k != '{FUNCTION}_hash', {column})",
    )


def call_sql(column: str = "SpanAttributes") -> tuple[str, str]:
    """SQL for a Burr function span's arguments (its other attributes as a JSON object) and
    result (``return``), each '' for any other span: what the analyzer reads of a call binding
    found (its component calls), as :func:`function_io` does.

    >>> call_sql()[1]
    "if(has(mapKeys(SpanAttributes), '__burr_function'), SpanAttributes['return'], '')"
    """
    function = function_sql(column)[0]
    return (
        f"if({function}, toJSONString(mapFilter((k, v) -> NOT startsWith(k, '{_OWN}') "
        f"AND k != '{RETURN}', {column})), '')",
        f"if({function}, {column}['{RETURN}'], '')",
    )

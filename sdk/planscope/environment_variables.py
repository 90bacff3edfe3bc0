"""Environment variables read by planscope, one constant each (like
``opentelemetry.environment_variables``).

Arguments given to :func:`planscope.configure` win over the environment; the environment wins over
the built-in defaults. Where a ``PLANSCOPE_*`` variable is unset, ``configure()`` reads
OpenTelemetry's standard one (``OTEL_EXPORTER_OTLP_*``, ``OTEL_SERVICE_NAME``; listed below).
Capture settings are also honoured without ``configure()``.

>>> from planscope import environment_variables as env
>>> env.PLANSCOPE_ENDPOINT
'PLANSCOPE_ENDPOINT'
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Final

PLANSCOPE_ENDPOINT: Final = "PLANSCOPE_ENDPOINT"
"""Base URL of the planscope collector (or any OTLP/HTTP receiver), without ``/v1/traces``.

Default ``http://localhost:4318``. Example: ``PLANSCOPE_ENDPOINT=https://planscope.example.com``.
"""

PLANSCOPE_COLLECTOR_URL: Final = "PLANSCOPE_COLLECTOR_URL"
"""Deprecated name of ``PLANSCOPE_ENDPOINT`` for the ``planscope`` commands and the dashboard;
still read (with a warning) when ``PLANSCOPE_ENDPOINT`` is unset, until 0.3."""

PLANSCOPE_API_KEY: Final = "PLANSCOPE_API_KEY"
"""API key sent as ``Authorization: Bearer <key>``; the collector maps it to a project."""

PLANSCOPE_SERVICE_NAME: Final = "PLANSCOPE_SERVICE_NAME"
"""``service.name`` resource attribute of the exported spans. Falls back to ``OTEL_SERVICE_NAME``,
then to ``"planscope-agent"``."""

PLANSCOPE_PROJECT: Final = "PLANSCOPE_PROJECT"
"""``planscope.project`` resource attribute (the collector overrides it with the API key's project).
"""

PLANSCOPE_HEADERS: Final = "PLANSCOPE_HEADERS"
"""Extra export headers as ``key=value`` pairs separated by commas,
e.g. ``x-tenant=acme,x-env=dev``."""

PLANSCOPE_CAPTURE: Final = "PLANSCOPE_CAPTURE"
"""``true``/``false``: record function inputs and outputs on spans (default ``true``)."""

PLANSCOPE_CAPTURE_MAX_BYTES: Final = "PLANSCOPE_CAPTURE_MAX_BYTES"
"""Maximum UTF-8 size of each captured payload attribute, in bytes (default ``8192``)."""

PLANSCOPE_RAISE_INTERNAL_ERRORS: Final = "PLANSCOPE_RAISE_INTERNAL_ERRORS"
"""``true``/``false``: re-raise SDK-internal errors instead of logging them. Defaults to true when
pytest is imported (so bugs surface in tests) and false otherwise (telemetry never breaks the app).
"""

ALL: Final = (
    PLANSCOPE_ENDPOINT,
    PLANSCOPE_API_KEY,
    PLANSCOPE_SERVICE_NAME,
    PLANSCOPE_PROJECT,
    PLANSCOPE_HEADERS,
    PLANSCOPE_CAPTURE,
    PLANSCOPE_CAPTURE_MAX_BYTES,
    PLANSCOPE_RAISE_INTERNAL_ERRORS,
)

# OpenTelemetry's standard variables (OTLP exporter specification), read by ``configure()`` only
# where the planscope variable above is unset.

OTEL_EXPORTER_OTLP_ENDPOINT: Final = "OTEL_EXPORTER_OTLP_ENDPOINT"
"""Base URL; ``/v1/traces`` is appended. Falls back after ``PLANSCOPE_ENDPOINT``."""

OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Final = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
"""Full traces URL, used as-is; wins over ``OTEL_EXPORTER_OTLP_ENDPOINT``."""

OTEL_EXPORTER_OTLP_HEADERS: Final = "OTEL_EXPORTER_OTLP_HEADERS"
"""``k=v,k2=v2``, URL-encoded values. Falls back after ``PLANSCOPE_HEADERS``."""

OTEL_EXPORTER_OTLP_TRACES_HEADERS: Final = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
"""Like ``OTEL_EXPORTER_OTLP_HEADERS``, for traces only; wins over it."""

OTEL_EXPORTER_OTLP_PROTOCOL: Final = "OTEL_EXPORTER_OTLP_PROTOCOL"
"""planscope exports ``http/protobuf``; ``grpc`` here (or in the traces variant) logs a warning."""

OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: Final = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
"""The traces-only variant of ``OTEL_EXPORTER_OTLP_PROTOCOL``."""

OTEL_SERVICE_NAME: Final = "OTEL_SERVICE_NAME"
"""``service.name``; falls back after ``PLANSCOPE_SERVICE_NAME``."""

OTEL_FALLBACKS: Final = (
    OTEL_EXPORTER_OTLP_ENDPOINT,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    OTEL_EXPORTER_OTLP_HEADERS,
    OTEL_EXPORTER_OTLP_TRACES_HEADERS,
    OTEL_EXPORTER_OTLP_PROTOCOL,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
    OTEL_SERVICE_NAME,
)

# Server side: read by ``planscope serve``'s analyzer and alerting extensions. The collector's
# own settings are ``PLANSCOPE_<FIELD>`` for every field of ``CollectorSettings`` (pydantic
# settings, documented there and in docs/collector.md).

PLANSCOPE_ANALYZER_QUIET_SECONDS: Final = "PLANSCOPE_ANALYZER_QUIET_SECONDS"
"""A trace is analysed once no span of it arrived for this long. Default 2."""

PLANSCOPE_ANALYZER_ROOT_WAIT_SECONDS: Final = "PLANSCOPE_ANALYZER_ROOT_WAIT_SECONDS"
"""Traces whose root span has not arrived are analysed anyway after this much quiet.
Default 30."""

PLANSCOPE_ANALYZER_POLL_SECONDS: Final = "PLANSCOPE_ANALYZER_POLL_SECONDS"
"""With ``--role analyze``: how often the store is searched for traces to analyse. Default 5."""

PLANSCOPE_ANALYZER_LOOKBACK_SECONDS: Final = "PLANSCOPE_ANALYZER_LOOKBACK_SECONDS"
"""With ``--role analyze``: how far back each search looks (the first looks back a day).
Default 3600."""

PLANSCOPE_ALERTS_FILE: Final = "PLANSCOPE_ALERTS_FILE"
"""YAML rules file loaded at start. Default: ``<data dir>/alerts.yaml`` when it exists."""

PLANSCOPE_ALERTS_INTERVAL: Final = "PLANSCOPE_ALERTS_INTERVAL"
"""Seconds between evaluation passes (new data also triggers one). Default 1."""

PLANSCOPE_ALERTS_MIN_GAP: Final = "PLANSCOPE_ALERTS_MIN_GAP"
"""Least seconds between two passes triggered by new data. Default 0.2."""

PLANSCOPE_DASHBOARD_URL: Final = "PLANSCOPE_DASHBOARD_URL"
"""Base of trace links in alert events. Default ``http://127.0.0.1:8501``."""

PLANSCOPE_ALERTS_RETRY_BASE: Final = "PLANSCOPE_ALERTS_RETRY_BASE"
"""First retry delay of a failed delivery, seconds (doubling). Default 1."""

PLANSCOPE_ALERTS_RETRY_MAX: Final = "PLANSCOPE_ALERTS_RETRY_MAX"
"""Largest delay between delivery attempts, seconds. Default 60."""

PLANSCOPE_ALERTS_GIVE_UP: Final = "PLANSCOPE_ALERTS_GIVE_UP"
"""Seconds after which an undeliverable event is marked ``failed``. Default 86400."""

PLANSCOPE_ALERTS_ENABLED: Final = "PLANSCOPE_ALERTS_ENABLED"
"""``0`` turns evaluation and delivery off (the API still edits rules). Default 1."""

PLANSCOPE_ALERTS_ALLOW_TARGETS: Final = "PLANSCOPE_ALERTS_ALLOW_TARGETS"
"""Non-public webhook targets the operator allows: comma-separated networks (``10.0.0.0/8``,
``127.0.0.1``) or host names. Default none: webhooks go to public addresses only."""

SERVER: Final = (
    PLANSCOPE_ANALYZER_QUIET_SECONDS,
    PLANSCOPE_ANALYZER_ROOT_WAIT_SECONDS,
    PLANSCOPE_ANALYZER_POLL_SECONDS,
    PLANSCOPE_ANALYZER_LOOKBACK_SECONDS,
    PLANSCOPE_ALERTS_FILE,
    PLANSCOPE_ALERTS_INTERVAL,
    PLANSCOPE_ALERTS_MIN_GAP,
    PLANSCOPE_DASHBOARD_URL,
    PLANSCOPE_ALERTS_RETRY_BASE,
    PLANSCOPE_ALERTS_RETRY_MAX,
    PLANSCOPE_ALERTS_GIVE_UP,
    PLANSCOPE_ALERTS_ENABLED,
    PLANSCOPE_ALERTS_ALLOW_TARGETS,
)
"""The server-side variables above, in one tuple."""

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


_warned: set[str] = set()


def collector_url(
    environ: Mapping[str, str] | None = None, default: str = "http://127.0.0.1:4318"
) -> str:
    """The collector URL of the ``planscope`` commands and the dashboard: ``PLANSCOPE_ENDPOINT``,
    else the deprecated ``PLANSCOPE_COLLECTOR_URL`` (with a warning on stderr), else ``default``.

    >>> collector_url({"PLANSCOPE_ENDPOINT": "http://c:4318"})
    'http://c:4318'
    """
    import os

    env = os.environ if environ is None else environ
    if env.get(PLANSCOPE_ENDPOINT):
        return env[PLANSCOPE_ENDPOINT]
    old = env.get(PLANSCOPE_COLLECTOR_URL)
    if not old:
        return default
    if PLANSCOPE_COLLECTOR_URL not in _warned:
        _warned.add(PLANSCOPE_COLLECTOR_URL)
        print(
            f"planscope: warning: {PLANSCOPE_COLLECTOR_URL} is deprecated and will be removed in "
            f"0.3; set {PLANSCOPE_ENDPOINT} instead",
            file=sys.stderr,
        )
    return old


def parse_bool(name: str, raw: str) -> bool:
    """Parse a boolean environment value; raise ValueError naming the variable otherwise."""
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{name}={raw!r} is not a boolean (use true or false)")

"""Every environment variable planscope reads, one constant with a docstring each (like
``opentelemetry.environment_variables``). The one registry of names: every package takes the
names it reads from here, and docs/configuration.md is generated from these docstrings.

How they are read (docs/configuration.md, "One configuration style"):

- the agent-side SDK (:func:`planscope.configure`, capture, internal errors) reads its few
  variables itself, with the standard library, when ``configure()`` runs (the agent installs
  ``opentelemetry-api`` only). Arguments win over the environment, the environment over the
  defaults; where a ``PLANSCOPE_*`` variable is unset, OpenTelemetry's standard one applies;
- everything else is a pydantic-settings model whose fields take these names as their
  ``validation_alias`` (``planscope.client.ClientSettings``, ``CollectorSettings``,
  ``AnalyzerSettings``, ``AlertSettings``), built when a command or component starts, never at
  import. A value passed in code or a command-line flag wins over the environment.

>>> from planscope import environment_variables as env
>>> env.PLANSCOPE_ENDPOINT
'PLANSCOPE_ENDPOINT'
"""

from __future__ import annotations

from typing import Final

# -- the agent: planscope.configure() and the decorators ------------------------------------------

PLANSCOPE_ENDPOINT: Final = "PLANSCOPE_ENDPOINT"
"""Base URL of the planscope collector (or any OTLP/HTTP receiver), without ``/v1/traces``:
where the agent exports (unset: ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, then
``OTEL_EXPORTER_OTLP_ENDPOINT``, then ``http://localhost:4318``) and what the ``planscope``
commands and the dashboard read (default ``http://127.0.0.1:4318``).
Example: ``PLANSCOPE_ENDPOINT=https://planscope.example.com``."""

PLANSCOPE_API_KEY: Final = "PLANSCOPE_API_KEY"
"""API key sent as ``Authorization: Bearer <key>`` by the agent, the commands and the
dashboard; the collector maps it to a project."""

PLANSCOPE_SERVICE_NAME: Final = "PLANSCOPE_SERVICE_NAME"
"""``service.name`` resource attribute of the exported spans. Falls back to ``OTEL_SERVICE_NAME``,
then to ``service.name`` in ``OTEL_RESOURCE_ATTRIBUTES`` (read by the OpenTelemetry SDK), then to
``planscope-agent``."""

PLANSCOPE_PROJECT: Final = "PLANSCOPE_PROJECT"
"""``planscope.project`` resource attribute of the agent's spans, and the project the commands
and the dashboard read in open mode (with an API key, the key's project wins)."""

PLANSCOPE_HEADERS: Final = "PLANSCOPE_HEADERS"
"""Extra export headers as ``key=value`` pairs separated by commas, values URL-encoded
(``x-tenant=acme,authorization=Bearer%20key``). Falls back to
``OTEL_EXPORTER_OTLP_TRACES_HEADERS``, then ``OTEL_EXPORTER_OTLP_HEADERS``."""

PLANSCOPE_CAPTURE: Final = "PLANSCOPE_CAPTURE"
"""``true``/``false``: record function inputs and outputs on spans (default ``true``)."""

PLANSCOPE_CAPTURE_MAX_BYTES: Final = "PLANSCOPE_CAPTURE_MAX_BYTES"
"""Maximum UTF-8 size of each captured payload attribute, in bytes (default ``8192``)."""

PLANSCOPE_RAISE_INTERNAL_ERRORS: Final = "PLANSCOPE_RAISE_INTERNAL_ERRORS"
"""``true``/``false``: re-raise SDK-internal errors instead of logging them. Defaults to true when
pytest is imported (so bugs surface in tests) and false otherwise (telemetry never breaks the app).
"""

SDK: Final = (
    PLANSCOPE_ENDPOINT,
    PLANSCOPE_API_KEY,
    PLANSCOPE_SERVICE_NAME,
    PLANSCOPE_PROJECT,
    PLANSCOPE_HEADERS,
    PLANSCOPE_CAPTURE,
    PLANSCOPE_CAPTURE_MAX_BYTES,
    PLANSCOPE_RAISE_INTERNAL_ERRORS,
)
"""What ``configure()`` and the decorators read (with the standard library)."""

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

# -- clients of the collector: planscope.client.ClientSettings (commands, dashboard, runtime) ----
# PLANSCOPE_ENDPOINT, PLANSCOPE_API_KEY and PLANSCOPE_PROJECT (above), and:

PLANSCOPE_COLLECTOR_URL: Final = "PLANSCOPE_COLLECTOR_URL"
"""Deprecated name of ``PLANSCOPE_ENDPOINT`` for the ``planscope`` commands and the dashboard;
still read (with a warning) when ``PLANSCOPE_ENDPOINT`` is unset, until 0.3."""

CLIENT: Final = (PLANSCOPE_ENDPOINT, PLANSCOPE_API_KEY, PLANSCOPE_PROJECT, PLANSCOPE_COLLECTOR_URL)
"""What ``ClientSettings`` reads."""

# -- the collector: CollectorSettings (planscope serve, migrate, quarantine) ----------------------

PLANSCOPE_HOST: Final = "PLANSCOPE_HOST"
"""Address ``planscope serve`` listens on (``--host``)."""

PLANSCOPE_PORT: Final = "PLANSCOPE_PORT"
"""OTLP/HTTP and query API port (``--port``); 0 picks a free port."""

PLANSCOPE_GRPC_PORT: Final = "PLANSCOPE_GRPC_PORT"
"""OTLP/gRPC port (``--grpc-port``); 0 picks a free port, ``off`` turns gRPC off."""

PLANSCOPE_DATA_DIR: Final = "PLANSCOPE_DATA_DIR"
"""Directory of the spool and (in embedded mode) the chDB store (``--data-dir``)."""

PLANSCOPE_CLICKHOUSE_URL: Final = "PLANSCOPE_CLICKHOUSE_URL"
"""``http(s)://user:pass@host:8123/db`` of a ClickHouse server (``--clickhouse-url``); unset means
the embedded chDB store in the data directory."""

PLANSCOPE_API_KEYS: Final = "PLANSCOPE_API_KEYS"
"""API keys as JSON, ``{"key": "project"}`` or ``{"key": {"project": "p", "scopes": ["ingest"]}}``
(scopes ``ingest``, ``read``, ``admin``; default ``ingest,read``). Unset means open mode: project
from the resource attribute, every route open."""

PLANSCOPE_MAX_BODY_BYTES: Final = "PLANSCOPE_MAX_BODY_BYTES"
"""Largest OTLP request body accepted as sent (compressed); 413 beyond (``--max-body-bytes``)."""

PLANSCOPE_MAX_API_BODY_BYTES: Final = "PLANSCOPE_MAX_API_BODY_BYTES"
"""Largest body of any other route (``/api/...``): 413 beyond, checked before reading."""

PLANSCOPE_MAX_DECOMPRESSED_BYTES: Final = "PLANSCOPE_MAX_DECOMPRESSED_BYTES"
"""Largest OTLP body once inflated (gzip bombs get 413)."""

PLANSCOPE_MAX_JSON_DEPTH: Final = "PLANSCOPE_MAX_JSON_DEPTH"
"""Deepest nesting of objects and arrays in an OTLP/JSON body (400 beyond)."""

PLANSCOPE_MAX_JSON_VALUES: Final = "PLANSCOPE_MAX_JSON_VALUES"
"""Most values (objects, arrays, scalars) in an OTLP/JSON body: bounds decoding memory."""

PLANSCOPE_MAX_RESOURCE_EXPANSION_BYTES: Final = "PLANSCOPE_MAX_RESOURCE_EXPANSION_BYTES"
"""A resource's attributes are stored on every one of its spans: (resource size x spans) summed
over a request may not exceed this (413)."""

PLANSCOPE_MAX_CONCURRENT_REQUESTS: Final = "PLANSCOPE_MAX_CONCURRENT_REQUESTS"
"""Requests handled at once; more are answered 503 + Retry-After at once (``/healthz`` is
exempt)."""

PLANSCOPE_MAX_CONCURRENT_DECODES: Final = "PLANSCOPE_MAX_CONCURRENT_DECODES"
"""Requests inflated and parsed at once (the rest wait): bounds decoding memory."""

PLANSCOPE_UPLOAD_TIMEOUT_SECONDS: Final = "PLANSCOPE_UPLOAD_TIMEOUT_SECONDS"
"""A request body must arrive within this time (408 otherwise): stalled uploads end."""

PLANSCOPE_MAX_TRACE_SPANS: Final = "PLANSCOPE_MAX_TRACE_SPANS"
"""Most spans ``GET /api/traces/{id}`` returns in one page (``?offset=`` pages on)."""

PLANSCOPE_MAX_ALERT_RULES: Final = "PLANSCOPE_MAX_ALERT_RULES"
"""Most alert rules per project (409 beyond)."""

PLANSCOPE_SPOOL_MAX_BYTES: Final = "PLANSCOPE_SPOOL_MAX_BYTES"
"""When this much is accepted but not yet stored, ingest answers 503 with Retry-After
(``--spool-max-bytes``)."""

PLANSCOPE_SEGMENT_MAX_BYTES: Final = "PLANSCOPE_SEGMENT_MAX_BYTES"
"""A spool segment is sealed at this size (or when its oldest record is
``PLANSCOPE_FLUSH_INTERVAL`` old) and becomes one insert. Larger segments cost less CPU per
span and more memory per insert (docs/storage.md, "Sealing"); keep ``PLANSCOPE_SPOOL_MAX_BYTES``
at two segments or more, or accepting and inserting take turns."""

PLANSCOPE_FLUSH_INTERVAL: Final = "PLANSCOPE_FLUSH_INTERVAL"
"""A spool segment is sealed and stored once its oldest record is this many seconds old (if its
size does not seal it first): the freshness bound at low load, and what sets the CPU at a trickle
(docs/storage.md, "Sealing")."""

PLANSCOPE_TTL_DAYS: Final = "PLANSCOPE_TTL_DAYS"
"""Retention of stored spans in days, chosen when the schema is created (``--ttl-days``)."""

PLANSCOPE_DEDUP_WINDOW_SECONDS: Final = "PLANSCOPE_DEDUP_WINDOW_SECONDS"
"""Re-deliveries of an identical request within this window are acknowledged, not stored."""

PLANSCOPE_RETRY_AFTER_SECONDS: Final = "PLANSCOPE_RETRY_AFTER_SECONDS"
"""``Retry-After`` of a 503 answer."""

PLANSCOPE_MIGRATE_ON_START: Final = "PLANSCOPE_MIGRATE_ON_START"
"""``true``/``false``: apply the schema's migrations when ``planscope serve`` starts."""

PLANSCOPE_ROLE: Final = "PLANSCOPE_ROLE"
"""``all``: one node does everything. Scaled out: N replicas with ``ingest`` (OTLP, spool, writer,
query API; no analysis) and one or more with ``analyze`` (no ingest; they discover new traces in
the store, whoever wrote them, and a lease makes one of them work at a time) (``--role``)."""

COLLECTOR: Final = (
    PLANSCOPE_HOST,
    PLANSCOPE_PORT,
    PLANSCOPE_GRPC_PORT,
    PLANSCOPE_DATA_DIR,
    PLANSCOPE_CLICKHOUSE_URL,
    PLANSCOPE_API_KEYS,
    PLANSCOPE_MAX_BODY_BYTES,
    PLANSCOPE_MAX_API_BODY_BYTES,
    PLANSCOPE_MAX_DECOMPRESSED_BYTES,
    PLANSCOPE_MAX_JSON_DEPTH,
    PLANSCOPE_MAX_JSON_VALUES,
    PLANSCOPE_MAX_RESOURCE_EXPANSION_BYTES,
    PLANSCOPE_MAX_CONCURRENT_REQUESTS,
    PLANSCOPE_MAX_CONCURRENT_DECODES,
    PLANSCOPE_UPLOAD_TIMEOUT_SECONDS,
    PLANSCOPE_MAX_TRACE_SPANS,
    PLANSCOPE_MAX_ALERT_RULES,
    PLANSCOPE_SPOOL_MAX_BYTES,
    PLANSCOPE_SEGMENT_MAX_BYTES,
    PLANSCOPE_FLUSH_INTERVAL,
    PLANSCOPE_TTL_DAYS,
    PLANSCOPE_DEDUP_WINDOW_SECONDS,
    PLANSCOPE_RETRY_AFTER_SECONDS,
    PLANSCOPE_MIGRATE_ON_START,
    PLANSCOPE_ROLE,
)
"""What ``CollectorSettings`` reads."""

# -- the analyzer inside the collector: AnalyzerSettings -----------------------------------------

PLANSCOPE_ANALYZER_QUIET_SECONDS: Final = "PLANSCOPE_ANALYZER_QUIET_SECONDS"
"""A trace is analysed once no span of it arrived for this many seconds."""

PLANSCOPE_ANALYZER_ROOT_WAIT_SECONDS: Final = "PLANSCOPE_ANALYZER_ROOT_WAIT_SECONDS"
"""Traces whose root span has not arrived are analysed anyway after this much quiet."""

PLANSCOPE_ANALYZER_POLL_SECONDS: Final = "PLANSCOPE_ANALYZER_POLL_SECONDS"
"""How often the store is searched for traces to analyse (all the work with ``--role analyze``;
with ``--role all``, the traces this process did not write itself)."""

PLANSCOPE_ANALYZER_LOOKBACK_SECONDS: Final = "PLANSCOPE_ANALYZER_LOOKBACK_SECONDS"
"""How far back each search looks (the first one looks back a day)."""

ANALYZER: Final = (
    PLANSCOPE_ANALYZER_QUIET_SECONDS,
    PLANSCOPE_ANALYZER_ROOT_WAIT_SECONDS,
    PLANSCOPE_ANALYZER_POLL_SECONDS,
    PLANSCOPE_ANALYZER_LOOKBACK_SECONDS,
)
"""What ``AnalyzerSettings`` reads."""

# -- alerting inside the collector: AlertSettings -----------------------------------------------

PLANSCOPE_ALERTS_FILE: Final = "PLANSCOPE_ALERTS_FILE"
"""YAML rules file loaded at start; unset: ``<data dir>/alerts.yaml`` when it exists."""

PLANSCOPE_ALERTS_INTERVAL: Final = "PLANSCOPE_ALERTS_INTERVAL"
"""Seconds between evaluation passes (new data also triggers one)."""

PLANSCOPE_ALERTS_MIN_GAP: Final = "PLANSCOPE_ALERTS_MIN_GAP"
"""Least seconds between two passes triggered by new data."""

PLANSCOPE_DASHBOARD_URL: Final = "PLANSCOPE_DASHBOARD_URL"
"""Base of the trace links in alert events."""

PLANSCOPE_ALERTS_RETRY_BASE: Final = "PLANSCOPE_ALERTS_RETRY_BASE"
"""First retry delay of a failed delivery, seconds (doubling)."""

PLANSCOPE_ALERTS_RETRY_MAX: Final = "PLANSCOPE_ALERTS_RETRY_MAX"
"""Largest delay between delivery attempts, seconds."""

PLANSCOPE_ALERTS_GIVE_UP: Final = "PLANSCOPE_ALERTS_GIVE_UP"
"""Seconds after which an undeliverable event is marked ``failed``."""

PLANSCOPE_ALERTS_ENABLED: Final = "PLANSCOPE_ALERTS_ENABLED"
"""``0``/``false`` turns evaluation and delivery off (the API still edits rules)."""

PLANSCOPE_ALERTS_ALLOW_TARGETS: Final = "PLANSCOPE_ALERTS_ALLOW_TARGETS"
"""Non-public webhook targets the operator allows: comma-separated networks (``10.0.0.0/8``,
``127.0.0.1``) or host names. Unset: webhooks go to public addresses only."""

ALERTS: Final = (
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
"""What ``AlertSettings`` reads."""

SERVER: Final = ANALYZER + ALERTS
"""The analyzer's and alerting's variables (the collector extensions)."""

# -- another vendor's standard variables, read where planscope talks to an OpenAI-compatible API --

OPENAI_API_KEY: Final = "OPENAI_API_KEY"
"""Key of the OpenAI-compatible model server: ``planscope run``'s ``--api-key`` and
``planscope attribute``'s ``--judge-key`` default to it."""

OPENAI_BASE_URL: Final = "OPENAI_BASE_URL"
"""``planscope run``'s ``--base-url`` default (else ``https://api.openai.com/v1``)."""

OPENAI: Final = (OPENAI_API_KEY, OPENAI_BASE_URL)

ALL: Final = tuple(dict.fromkeys(SDK + CLIENT + COLLECTOR + SERVER))
"""Every ``PLANSCOPE_*`` variable; with ``OTEL_FALLBACKS`` and ``OPENAI``, every variable
planscope reads."""

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


def parse_bool(name: str, raw: str) -> bool:
    """Parse a boolean environment value; raise ValueError naming the variable otherwise."""
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{name}={raw!r} is not a boolean (use true or false)")

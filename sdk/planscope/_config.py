"""Process-wide configuration: where spans go and what is captured.

Without :func:`configure` everything works as a cheap no-op through the OpenTelemetry API (spans
go to whatever global TracerProvider exists, typically none). ``configure()`` wires an OTel SDK
TracerProvider with an OTLP/HTTP exporter (the ``planscope[otlp]`` extra, imported lazily), or
reuses a TracerProvider the application already installed.
"""

from __future__ import annotations

import importlib.metadata
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace

from . import environment_variables as _env
from ._budget import RetryBudget
from ._capture import Redactor
from ._errors import ConfigurationError
from ._internal import logger

__all__ = ["PlanscopeHandle", "configure"]

try:  # the one version: the installed distribution's (pyproject.toml)
    VERSION = importlib.metadata.version("planscope")
except importlib.metadata.PackageNotFoundError:  # a source tree on sys.path, not installed
    VERSION = "0+unknown"
DEFAULT_ENDPOINT = "http://localhost:4318"
DEFAULT_SERVICE_NAME = "planscope-agent"
DEFAULT_CAPTURE_MAX_BYTES = 8192
INSTRUMENTATION_NAME = "planscope"
OTLP_HINT = "pip install 'planscope[otlp]'"


@dataclass
class Settings:
    """What the instrumentation reads on every span (replaced as a whole by configure())."""

    capture: bool = True
    capture_max_bytes: int = DEFAULT_CAPTURE_MAX_BYTES
    redact: Redactor | None = None
    budget: RetryBudget | None = None
    tracer: trace.Tracer | None = None  # None: the global (proxy) tracer
    extra: dict[str, Any] = field(default_factory=dict)


_lock = threading.Lock()
_settings: Settings | None = None
_default_tracer: trace.Tracer | None = None
_warned_missing_otlp = False


def _env_settings() -> Settings:
    capture = True
    max_bytes = DEFAULT_CAPTURE_MAX_BYTES
    raw = os.environ.get(_env.PLANSCOPE_CAPTURE)
    if raw is not None:
        try:
            capture = _env.parse_bool(_env.PLANSCOPE_CAPTURE, raw)
        except ValueError as exc:
            logger.warning("%s; keeping capture on", exc)
    raw = os.environ.get(_env.PLANSCOPE_CAPTURE_MAX_BYTES)
    if raw is not None:
        try:
            max_bytes = _parse_max_bytes(int(raw))
        except (ValueError, ConfigurationError):
            logger.warning(
                "%s=%r is not a non-negative integer; using %d",
                _env.PLANSCOPE_CAPTURE_MAX_BYTES,
                raw,
                DEFAULT_CAPTURE_MAX_BYTES,
            )
    return Settings(capture=capture, capture_max_bytes=max_bytes)


def _parse_max_bytes(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigurationError(f"capture_max_bytes must be a non-negative integer, got {value!r}")
    return value


def settings() -> Settings:
    """The current settings (from the environment until configure() is called)."""
    global _settings
    current = _settings
    if current is None:
        with _lock:
            if _settings is None:
                _settings = _env_settings()
            current = _settings
    return current


def tracer() -> trace.Tracer:
    """The tracer planscope spans are created with."""
    configured = settings().tracer
    if configured is not None:
        return configured
    global _default_tracer
    if _default_tracer is None:
        # A ProxyTracer: it follows the global provider even if it is set later.
        _default_tracer = trace.get_tracer(INSTRUMENTATION_NAME, VERSION)
    return _default_tracer


def reset() -> None:
    """Forget the configuration (tests). Does not touch the global TracerProvider."""
    global _settings, _default_tracer, _warned_missing_otlp
    with _lock:
        _settings = None
        _default_tracer = None
        _warned_missing_otlp = False


class PlanscopeHandle:
    """What :func:`configure` returns: flush or shut down the export pipeline.

    ``shutdown()`` shuts the TracerProvider down only if configure() created it; a provider the
    application installed itself is only flushed (its owner shuts it down).
    """

    def __init__(self, tracer_provider: Any | None, owned: bool) -> None:
        self.tracer_provider = tracer_provider
        """The OpenTelemetry TracerProvider in use (None when planscope is a no-op)."""
        self.owned = owned
        """True when configure() created the provider."""

    @property
    def enabled(self) -> bool:
        """True when spans are recorded by a real (SDK) TracerProvider."""
        return self.tracer_provider is not None

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Export every finished span now; True on success (and when there is nothing to do)."""
        flush = getattr(self.tracer_provider, "force_flush", None)
        if flush is None:
            return True
        return bool(flush(timeout_millis))

    def shutdown(self) -> None:
        """Flush, then shut the exporter down (owned providers only)."""
        if self.tracer_provider is None:
            return
        if self.owned:
            self.tracer_provider.shutdown()
        else:
            self.force_flush()

    def __repr__(self) -> str:
        provider = type(self.tracer_provider).__name__ if self.tracer_provider else None
        return f"PlanscopeHandle(tracer_provider={provider}, owned={self.owned})"


def _is_real_provider(provider: object) -> bool:
    return not isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider))


TRACES_PATH = "/v1/traces"


def _parse_headers(name: str, raw: str) -> dict[str, str]:
    """``k=v,k2=v2`` with URL-encoded values, parsed by OpenTelemetry's own helper."""
    from opentelemetry.util.re import parse_env_headers

    try:
        return dict(parse_env_headers(raw, liberal=True))
    except Exception as exc:  # the helper's failure modes are not part of its contract
        raise ConfigurationError(f"{name}={raw!r} is not a list of key=value pairs") from exc


def traces_url(endpoint: str | None, env: Mapping[str, str]) -> str:
    """The URL spans are POSTed to, by the OTLP exporter specification's precedence.

    ``endpoint`` (the argument), then ``PLANSCOPE_ENDPOINT``, then ``OTEL_EXPORTER_OTLP_ENDPOINT``
    are base URLs that get ``/v1/traces`` appended; ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is used
    as-is and wins over the generic OTel variable.

    >>> traces_url(None, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel:4318/"})
    'http://otel:4318/v1/traces'
    >>> traces_url(None, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://x/ingest"})
    'https://x/ingest'
    """
    base = endpoint or env.get(_env.PLANSCOPE_ENDPOINT)
    if not base:
        exact = env.get(_env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
        if exact:
            return exact
        base = env.get(_env.OTEL_EXPORTER_OTLP_ENDPOINT) or DEFAULT_ENDPOINT
    return base.rstrip("/") + TRACES_PATH


def export_headers(env: Mapping[str, str]) -> dict[str, str]:
    """Headers from ``PLANSCOPE_HEADERS``, else ``OTEL_EXPORTER_OTLP_TRACES_HEADERS``, else
    ``OTEL_EXPORTER_OTLP_HEADERS`` (the first set one, as the OTel exporters do). Values are
    URL-decoded, as the OTLP specification says.

    >>> export_headers({"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20k,x-tenant=a"})
    {'authorization': 'Bearer k', 'x-tenant': 'a'}
    """
    for name in (
        _env.PLANSCOPE_HEADERS,
        _env.OTEL_EXPORTER_OTLP_TRACES_HEADERS,
        _env.OTEL_EXPORTER_OTLP_HEADERS,
    ):
        raw = env.get(name)
        if raw:
            return _parse_headers(name, raw)
    return {}


def configure(
    endpoint: str | None = None,
    *,
    service_name: str | None = None,
    api_key: str | None = None,
    project: str | None = None,
    headers: Mapping[str, str] | None = None,
    capture: bool | None = None,
    capture_max_bytes: int | None = None,
    redact: Redactor | None = None,
    budget: RetryBudget | Mapping[str, Any] | None = None,
    batch: bool = True,
    tracer_provider: Any | None = None,
) -> PlanscopeHandle:
    """Send planscope spans to a collector; optional, everything is a no-op until called.

    Arguments left as ``None`` come from the ``PLANSCOPE_*`` environment variables, then from
    OpenTelemetry's own (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` as-is,
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` + ``/v1/traces``, ``OTEL_EXPORTER_OTLP_HEADERS``,
    ``OTEL_SERVICE_NAME``), then defaults: endpoint ``http://localhost:4318`` (spans go to
    ``{endpoint}/v1/traces``), capture on, 8 KiB per captured payload.

    The TracerProvider used is, in order: ``tracer_provider`` if given (not installed globally);
    the global one if the application (or an earlier ``configure()``) already installed an SDK
    provider, logging a warning if exporter arguments were passed, as they are then not applied;
    otherwise a new ``TracerProvider`` with an OTLP/HTTP exporter, installed globally. Without
    the ``otlp`` extra a warning is logged once and spans stay no-ops.

    Calling it again replaces the whole configuration for the spans started afterwards
    (arguments not passed fall back to the environment and defaults, not to the previous call).

    ``budget`` is the default :class:`RetryBudget` of runs that do not set one. ``redact`` is called
    as ``redact(span_kind, key, value)`` on every captured value (see :data:`Redactor`).

    >>> import planscope
    >>> handle = planscope.configure(  # doctest: +SKIP
    ...     "http://localhost:4318", service_name="billing-agent", api_key="ps_...",
    ...     budget=planscope.RetryBudget(max_attempts_per_step=3))
    >>> handle.shutdown()  # at exit: flush and stop the exporter  # doctest: +SKIP
    """
    global _settings, _warned_missing_otlp
    env = os.environ
    base = _env_settings()
    if capture is None:
        capture = base.capture
    if capture_max_bytes is None:
        capture_max_bytes = base.capture_max_bytes
    capture_max_bytes = _parse_max_bytes(capture_max_bytes)
    if isinstance(budget, Mapping):
        budget = RetryBudget.from_dict(budget)
    if budget is not None and not isinstance(budget, RetryBudget):
        raise ConfigurationError(f"budget must be a RetryBudget or a mapping, got {budget!r}")
    if redact is not None and not callable(redact):
        raise ConfigurationError("redact must be a callable redact(span_kind, key, value)")

    provider: Any | None
    owned = False
    if tracer_provider is not None:
        provider = tracer_provider
    elif _is_real_provider(trace.get_tracer_provider()):
        provider = trace.get_tracer_provider()
        exporter_args = (
            ("endpoint", endpoint),
            ("service_name", service_name),
            ("api_key", api_key),
            ("project", project),
            ("headers", headers),
        )
        ignored = [name for name, value in exporter_args if value is not None]
        if not batch:
            ignored.append("batch")
        if ignored:  # the global provider can be set once per process: say so, never silently
            logger.warning(
                "planscope.configure(): using the TracerProvider already installed globally (by "
                "the application or an earlier configure() call); %s not applied. Configure "
                "that provider's exporter, or pass tracer_provider=",
                ", ".join(ignored),
            )
    else:
        provider = _build_provider(
            url=traces_url(endpoint, env),
            service_name=service_name
            or env.get(_env.PLANSCOPE_SERVICE_NAME)
            or env.get(_env.OTEL_SERVICE_NAME),
            api_key=api_key or env.get(_env.PLANSCOPE_API_KEY),
            project=project or env.get(_env.PLANSCOPE_PROJECT),
            headers={**export_headers(env), **(headers or {})},
            batch=batch,
        )
        if provider is not None:
            trace.set_tracer_provider(provider)
            owned = trace.get_tracer_provider() is provider
            if not owned:  # lost a race with another library: use the winner
                provider = trace.get_tracer_provider()

    tracer_obj = (
        provider.get_tracer(INSTRUMENTATION_NAME, VERSION) if provider is not None else None
    )
    with _lock:
        _settings = Settings(
            capture=capture,
            capture_max_bytes=capture_max_bytes,
            redact=redact,
            budget=budget,
            tracer=tracer_obj,
        )
    return PlanscopeHandle(provider, owned)


def _build_provider(
    *,
    url: str,
    service_name: str | None,
    api_key: str | None,
    project: str | None,
    headers: dict[str, str],
    batch: bool,
) -> Any | None:
    global _warned_missing_otlp
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    except ImportError as exc:
        if not _warned_missing_otlp:
            _warned_missing_otlp = True
            logger.warning(
                "planscope.configure(): the OTLP exporter is not installed (%s); spans are not "
                "exported. Install it with: %s",
                exc,
                OTLP_HINT,
            )
        return None

    from .semconv import PROJECT, SERVICE_NAME

    protocol = os.environ.get(_env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) or os.environ.get(
        _env.OTEL_EXPORTER_OTLP_PROTOCOL
    )
    if protocol and protocol.strip().lower() == "grpc":
        logger.warning(
            "planscope.configure() exports over OTLP/HTTP to %s; OTEL_EXPORTER_OTLP_PROTOCOL=grpc "
            "is not used (point the endpoint at the collector's HTTP port, 4318)",
            url,
        )
    resource_attrs: dict[str, str] = {SERVICE_NAME: service_name} if service_name else {}
    if project:
        resource_attrs[PROJECT] = project
    resource = Resource.create(resource_attrs)  # also reads OTEL_RESOURCE_ATTRIBUTES
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE_NAME}))
    send_headers = {k.lower(): v for k, v in headers.items()}
    if api_key:
        send_headers["authorization"] = f"Bearer {api_key}"
    exporter = OTLPSpanExporter(endpoint=url, headers=send_headers or None)
    provider = TracerProvider(resource=resource)
    processor = BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter)
    provider.add_span_processor(processor)
    return provider

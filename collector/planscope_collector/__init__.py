"""planscope collector: receives OTLP, spools it durably, writes ClickHouse, serves the query API.

Install with ``pip install 'planscope[server]'``; run with ``planscope serve``.
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from ._app import Collector, create_app
    from ._errors import (
        BadPayload,
        CollectorError,
        IngestRejected,
        NotIngesting,
        PayloadTooLarge,
        ServerNotStarted,
        SpoolFull,
        Unauthorized,
        UnsupportedMediaType,
    )
    from ._otlp import JSON, PROTOBUF, parse_request
    from ._server import BackgroundServer, serve
    from ._settings import CollectorSettings, load_keys_file, settings_problems

# Each re-exported name is imported on first use (PEP 562): the app pulls in FastAPI,
# pydantic and their plugins (~1 CPU s), which the store's users (the analyzer, its rules
# worker, every `planscope` command) never need.
_SOURCES: dict[str, str] = {
    "Collector": "._app",
    "create_app": "._app",
    "BadPayload": "._errors",
    "CollectorError": "._errors",
    "IngestRejected": "._errors",
    "NotIngesting": "._errors",
    "PayloadTooLarge": "._errors",
    "ServerNotStarted": "._errors",
    "SpoolFull": "._errors",
    "Unauthorized": "._errors",
    "UnsupportedMediaType": "._errors",
    "JSON": "._otlp",
    "PROTOBUF": "._otlp",
    "parse_request": "._otlp",
    "BackgroundServer": "._server",
    "serve": "._server",
    "CollectorSettings": "._settings",
    "load_keys_file": "._settings",
    "settings_problems": "._settings",
}

__all__ = [
    "JSON",
    "PROTOBUF",
    "BackgroundServer",
    "BadPayload",
    "Collector",
    "CollectorError",
    "CollectorSettings",
    "IngestRejected",
    "NotIngesting",
    "PayloadTooLarge",
    "ServerNotStarted",
    "SpoolFull",
    "Unauthorized",
    "UnsupportedMediaType",
    "create_app",
    "load_keys_file",
    "parse_request",
    "serve",
    "settings_problems",
]


def __getattr__(name: str) -> _typing.Any:
    """The re-exported ``name``, imported from its module on first use and kept."""
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(source, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SOURCES))

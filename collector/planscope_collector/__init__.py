"""planscope collector: receives OTLP, spools it durably, writes ClickHouse, serves the query API.

Install with ``pip install 'planscope[server]'``; run with ``planscope serve``.
"""

from ._app import Collector, create_app
from ._errors import (
    BadPayload,
    CollectorError,
    IngestRejected,
    NotIngesting,
    PayloadTooLarge,
    SpoolFull,
    Unauthorized,
    UnsupportedMediaType,
)
from ._otlp import JSON, PROTOBUF, parse_request
from ._server import BackgroundServer, serve
from ._settings import CollectorSettings, load_keys_file, settings_problems

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
    "SpoolFull",
    "Unauthorized",
    "UnsupportedMediaType",
    "create_app",
    "load_keys_file",
    "parse_request",
    "serve",
    "settings_problems",
]

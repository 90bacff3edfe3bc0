"""Collector configuration: one validated object built from CLI flags and environment variables.

Every field can be set as ``PLANSCOPE_<FIELD>`` in the environment (``PLANSCOPE_MAX_BODY_BYTES``,
``PLANSCOPE_MAX_CONCURRENT_REQUESTS``, ...); a CLI flag, or a value passed in code, wins.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_DATA_DIR = Path(".planscope")

Scope = Literal["ingest", "read", "admin"]
SCOPES: tuple[Scope, ...] = ("ingest", "read", "admin")
DEFAULT_SCOPES: tuple[Scope, ...] = ("ingest", "read")
"""A key listed without scopes may send spans and read its project, but not change alert rules
(the key agents carry must not be able to point webhooks anywhere)."""


class ApiKey(BaseModel):
    """One API key's project and what it may do.

    >>> ApiKey(project="team-a").scopes
    ('ingest', 'read')
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    project: str = Field(min_length=1)
    scopes: tuple[Scope, ...] = DEFAULT_SCOPES


class CollectorSettings(BaseSettings):
    """Everything ``planscope serve`` can be told.

    >>> CollectorSettings(data_dir=Path("/tmp/ps")).dsn
    'chdb:///tmp/ps/store'
    """

    model_config = SettingsConfigDict(frozen=True, extra="forbid", env_prefix="PLANSCOPE_")

    host: str = "127.0.0.1"
    port: int = Field(4318, ge=0, le=65535)
    """OTLP/HTTP and the query API."""
    grpc_port: int | None = Field(4317, ge=0, le=65535)
    """OTLP/gRPC; 0 picks a free port, None turns gRPC off."""
    data_dir: Path = DEFAULT_DATA_DIR
    """Spool and (in embedded mode) the chDB store live here."""
    clickhouse_url: str | None = None
    """``http(s)://user:pass@host:8123/db`` for a ClickHouse server; None means embedded chDB."""
    api_keys: dict[str, ApiKey] = Field(default_factory=dict)
    """API key -> project (and scopes). Empty means open mode (project from the resource
    attribute, every route open)."""
    max_body_bytes: int = Field(16 << 20, gt=0)
    """Largest OTLP request body accepted as sent (compressed), answered with 413 beyond."""
    max_api_body_bytes: int = Field(1 << 20, gt=0)
    """Largest body of any other route (``/api/...``): 413 beyond, checked before reading."""
    max_decompressed_bytes: int = Field(64 << 20, gt=0)
    max_json_depth: int = Field(128, ge=8)
    """Deepest nesting of objects and arrays in an OTLP/JSON body (400 beyond)."""
    max_json_values: int = Field(2_000_000, gt=0)
    """Most values (objects, arrays, scalars) in an OTLP/JSON body: bounds decoding memory."""
    max_resource_expansion_bytes: int = Field(64 << 20, gt=0)
    """A resource's attributes are stored on every one of its spans: (resource size x spans)
    summed over a request may not exceed this (413)."""
    max_concurrent_requests: int = Field(64, gt=0)
    """Requests handled at once; more are answered 503 + Retry-After at once (``/healthz`` is
    exempt)."""
    max_concurrent_decodes: int = Field(2, gt=0)
    """Requests inflated and parsed at once (the rest wait): bounds decoding memory."""
    upload_timeout_seconds: float = Field(30.0, gt=0)
    """A request body must arrive within this time (408 otherwise): stalled uploads end."""
    max_trace_spans: int = Field(10_000, gt=0)
    """Most spans ``GET /api/traces/{id}`` returns in one page (``?offset=`` pages on)."""
    max_alert_rules: int = Field(100, gt=0)
    """Most alert rules per project (409 beyond)."""
    spool_max_bytes: int = Field(1 << 30, gt=0)
    """When this much is accepted but not yet stored, ingest answers 503 with Retry-After."""
    segment_max_bytes: int = Field(32 << 20, gt=0)
    """A spool segment is sealed at this size (or ``flush_interval`` age) and becomes one insert.
    Large: every insert pays a fixed cost per table and view, and each part it writes is merged
    again later (32 MiB ~ 17k spans of ~1.9 KB; 8 MiB cost ~1.6x the CPU per span)."""
    flush_interval: float = Field(0.5, gt=0)
    ttl_days: int = Field(30, gt=0)
    dedup_window_seconds: int = Field(24 * 3600, ge=0)
    """Re-deliveries of an identical request within this window are acknowledged, not stored."""
    retry_after_seconds: int = Field(5, gt=0)
    migrate_on_start: bool = True
    role: Literal["all", "ingest", "analyze"] = "all"
    """``all``: one node does everything. Scaled out: N replicas with ``ingest`` (OTLP, spool,
    writer, query API; no analysis) and one or more with ``analyze`` (no ingest; they discover
    new traces in the store, whoever wrote them, and a lease makes one of them work at a time)."""

    @field_validator("clickhouse_url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://", "chdb://")):
            raise ValueError("clickhouse_url must start with http://, https:// or chdb://")
        return value

    @field_validator("api_keys", mode="before")
    @classmethod
    def _project_names(cls, value: Any) -> Any:
        """``{"key": "project"}`` (the original form) means the default scopes."""
        if isinstance(value, dict):
            return {k: {"project": v} if isinstance(v, str) else v for k, v in value.items()}
        return value

    @model_validator(mode="after")
    def _check_keys(self) -> CollectorSettings:
        for key in self.api_keys:
            if not key:
                raise ValueError("API keys and their projects must be non-empty")
        return self

    @property
    def dsn(self) -> str:
        return self.clickhouse_url or f"chdb://{(self.data_dir / 'store').resolve()}"

    @property
    def spool_dir(self) -> Path:
        return self.data_dir / "spool"


def redact_url(url: str) -> str:
    """``url`` without its password (for logs and answers).

    >>> redact_url("http://ps:s3cret@ch:8123/db")
    'http://ps:***@ch:8123/db'
    """
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def load_keys_file(path: Path) -> dict[str, ApiKey]:
    """Read API keys: ``KEY PROJECT [SCOPE,...]`` lines, or JSON.

    JSON is ``{"key": "project"}`` or ``{"key": {"project": "p", "scopes": ["ingest"]}}``. A key
    without scopes gets ``ingest,read``; ``admin`` (alert rule changes) is granted explicitly.

    >>> import tempfile, os
    >>> p = Path(tempfile.mkdtemp()) / "keys"; _ = p.write_text("k1 team-a\\n# c\\nk2 ops admin\\n")
    >>> {k: v.scopes for k, v in load_keys_file(p).items()}
    {'k1': ('ingest', 'read'), 'k2': ('admin',)}
    """
    text = path.read_text()
    if text.lstrip().startswith("{"):
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a JSON object of key -> project")
        try:
            return {
                str(k): ApiKey(project=v) if isinstance(v, str) else ApiKey.model_validate(v)
                for k, v in data.items()
            }
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    keys: dict[str, ApiKey] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) not in (2, 3):
            raise ValueError(f"{path}:{number}: expected 'KEY PROJECT [SCOPE,...]'")
        scopes = tuple(s for s in parts[2].split(",") if s) if len(parts) == 3 else DEFAULT_SCOPES
        unknown = sorted(set(scopes) - set(SCOPES))
        if unknown:
            raise ValueError(f"{path}:{number}: unknown scope(s) {unknown}; use {list(SCOPES)}")
        keys[parts[0]] = ApiKey.model_validate({"project": parts[1], "scopes": scopes})
    return keys

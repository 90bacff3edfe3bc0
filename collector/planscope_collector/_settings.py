"""Collector configuration: one validated object built from CLI flags and environment variables.

Every field is read from its variable of ``planscope.environment_variables``
(``PLANSCOPE_MAX_BODY_BYTES``, ``PLANSCOPE_MAX_CONCURRENT_REQUESTS``, ...); a CLI flag, or a value
passed in code, wins.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from planscope import environment_variables as ENV
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
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
    """Everything ``planscope serve`` can be told; each field is read from its variable in
    ``planscope.environment_variables`` (documented there and in docs/configuration.md).

    >>> CollectorSettings(data_dir=Path("/tmp/ps")).dsn
    'chdb:///tmp/ps/store'
    """

    model_config = SettingsConfigDict(
        frozen=True,
        extra="forbid",
        validate_by_name=True,
        env_ignore_empty=True,
        env_parse_none_str="off",  # PLANSCOPE_GRPC_PORT=off, as --grpc-port off
    )

    host: str = Field("127.0.0.1", validation_alias=ENV.PLANSCOPE_HOST)
    port: int = Field(4318, ge=0, le=65535, validation_alias=ENV.PLANSCOPE_PORT)
    grpc_port: int | None = Field(4317, ge=0, le=65535, validation_alias=ENV.PLANSCOPE_GRPC_PORT)
    data_dir: Path = Field(DEFAULT_DATA_DIR, validation_alias=ENV.PLANSCOPE_DATA_DIR)
    clickhouse_url: str | None = Field(None, validation_alias=ENV.PLANSCOPE_CLICKHOUSE_URL)
    api_keys: dict[str, ApiKey] = Field(
        default_factory=dict, validation_alias=ENV.PLANSCOPE_API_KEYS
    )
    max_body_bytes: int = Field(16 << 20, gt=0, validation_alias=ENV.PLANSCOPE_MAX_BODY_BYTES)
    max_api_body_bytes: int = Field(
        1 << 20, gt=0, validation_alias=ENV.PLANSCOPE_MAX_API_BODY_BYTES
    )
    max_decompressed_bytes: int = Field(
        64 << 20, gt=0, validation_alias=ENV.PLANSCOPE_MAX_DECOMPRESSED_BYTES
    )
    max_json_depth: int = Field(128, ge=8, validation_alias=ENV.PLANSCOPE_MAX_JSON_DEPTH)
    max_json_values: int = Field(2_000_000, gt=0, validation_alias=ENV.PLANSCOPE_MAX_JSON_VALUES)
    max_resource_expansion_bytes: int = Field(
        64 << 20, gt=0, validation_alias=ENV.PLANSCOPE_MAX_RESOURCE_EXPANSION_BYTES
    )
    max_concurrent_requests: int = Field(
        64, gt=0, validation_alias=ENV.PLANSCOPE_MAX_CONCURRENT_REQUESTS
    )
    max_concurrent_decodes: int = Field(
        2, gt=0, validation_alias=ENV.PLANSCOPE_MAX_CONCURRENT_DECODES
    )
    upload_timeout_seconds: float = Field(
        30.0, gt=0, validation_alias=ENV.PLANSCOPE_UPLOAD_TIMEOUT_SECONDS
    )
    max_trace_spans: int = Field(10_000, gt=0, validation_alias=ENV.PLANSCOPE_MAX_TRACE_SPANS)
    max_alert_rules: int = Field(100, gt=0, validation_alias=ENV.PLANSCOPE_MAX_ALERT_RULES)
    spool_max_bytes: int = Field(1 << 30, gt=0, validation_alias=ENV.PLANSCOPE_SPOOL_MAX_BYTES)
    # Large: every insert pays a fixed cost per table and view, and each part it writes is
    # merged again later (64 MiB ~ 34k spans of ~1.9 KB; 32 MiB cost ~1.1-1.35x the CPU per
    # span, 8 MiB ~1.6x that). Memory bounds it: docs/storage.md, "Sealing".
    segment_max_bytes: int = Field(64 << 20, gt=0, validation_alias=ENV.PLANSCOPE_SEGMENT_MAX_BYTES)
    # A segment is also sealed when its oldest record is this old: the freshness bound at low
    # load, and the CPU at a trickle (~0.3 s of CPU per insert cycle; docs/storage.md).
    flush_interval: float = Field(2.0, gt=0, validation_alias=ENV.PLANSCOPE_FLUSH_INTERVAL)
    ttl_days: int = Field(30, gt=0, validation_alias=ENV.PLANSCOPE_TTL_DAYS)
    dedup_window_seconds: int = Field(
        24 * 3600, ge=0, validation_alias=ENV.PLANSCOPE_DEDUP_WINDOW_SECONDS
    )
    retry_after_seconds: int = Field(5, gt=0, validation_alias=ENV.PLANSCOPE_RETRY_AFTER_SECONDS)
    migrate_on_start: bool = Field(True, validation_alias=ENV.PLANSCOPE_MIGRATE_ON_START)
    role: Literal["all", "ingest", "analyze"] = Field("all", validation_alias=ENV.PLANSCOPE_ROLE)

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


def settings_problems(exc: ValidationError) -> str:
    """One line naming each bad setting (its variable, when it came from the environment).

    >>> try:
    ...     CollectorSettings(port=-1)
    ... except ValidationError as exc:
    ...     print(settings_problems(exc))
    port: Input should be greater than or equal to 0
    """
    return "; ".join(
        f"{'.'.join(map(str, e['loc'])) or 'settings'}: {e['msg']}" for e in exc.errors()
    )


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

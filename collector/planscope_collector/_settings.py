"""Collector configuration: one validated object built from CLI flags and environment variables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

DEFAULT_DATA_DIR = Path(".planscope")


class CollectorSettings(BaseModel):
    """Everything ``planscope serve`` can be told.

    >>> CollectorSettings(data_dir=Path("/tmp/ps")).dsn
    'chdb:///tmp/ps/store'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(4318, ge=0, le=65535)
    """OTLP/HTTP and the query API."""
    grpc_port: int | None = Field(4317, ge=0, le=65535)
    """OTLP/gRPC; 0 picks a free port, None turns gRPC off."""
    data_dir: Path = DEFAULT_DATA_DIR
    """Spool and (in embedded mode) the chDB store live here."""
    clickhouse_url: str | None = None
    """``http(s)://user:pass@host:8123/db`` for a ClickHouse server; None means embedded chDB."""
    api_keys: dict[str, str] = Field(default_factory=dict)
    """API key -> project. Empty means open mode (project from the resource attribute)."""
    max_body_bytes: int = Field(16 << 20, gt=0)
    """Largest request body accepted as sent (compressed), answered with 413 beyond."""
    max_decompressed_bytes: int = Field(64 << 20, gt=0)
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

    @model_validator(mode="after")
    def _check_keys(self) -> CollectorSettings:
        for key, project in self.api_keys.items():
            if not key or not project:
                raise ValueError("API keys and their projects must be non-empty")
        return self

    @property
    def dsn(self) -> str:
        return self.clickhouse_url or f"chdb://{(self.data_dir / 'store').resolve()}"

    @property
    def spool_dir(self) -> Path:
        return self.data_dir / "spool"


def load_keys_file(path: Path) -> dict[str, str]:
    """Read ``{"key": "project", ...}`` (JSON) or ``key project`` lines (text).

    >>> import tempfile, os
    >>> p = Path(tempfile.mkdtemp()) / "keys"; _ = p.write_text("k1 team-a\\n# c\\n")
    >>> load_keys_file(p)
    {'k1': 'team-a'}
    """
    text = path.read_text()
    if text.lstrip().startswith("{"):
        data = json.loads(text)
        if not isinstance(data, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in data.items()
        ):
            raise ValueError(f"{path}: expected a JSON object of key -> project strings")
        return dict(data)
    keys: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2:
            raise ValueError(f"{path}:{number}: expected 'KEY PROJECT'")
        keys[parts[0]] = parts[1]
    return keys

"""Alerting settings (pydantic settings): each field is read from its variable of
``planscope.environment_variables`` (``PLANSCOPE_ALERTS_*``, ``PLANSCOPE_DASHBOARD_URL``;
documented there and in docs/configuration.md) when the alerting extension starts.

>>> AlertSettings(interval=0.5).interval
0.5
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlencode

from planscope import environment_variables as ENV
from pydantic import BeforeValidator, Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from ._targets import AllowList

__all__ = ["AlertSettings"]


def _allow_list(value: Any) -> Any:
    return AllowList.parse(value) if isinstance(value, str) else value


class AlertSettings(BaseSettings):
    """Everything the alerting extension can be told (see the variables above).

    >>> AlertSettings(allow_targets="127.0.0.1").allow_targets.allows("x", "127.0.0.1")
    True
    """

    model_config = SettingsConfigDict(frozen=True, validate_by_name=True, env_ignore_empty=True)

    rules_file: Path | None = Field(None, validation_alias=ENV.PLANSCOPE_ALERTS_FILE)
    """None: ``<data dir>/alerts.yaml`` when it exists (:meth:`with_data_dir`)."""
    interval: float = Field(1.0, ge=0.01, validation_alias=ENV.PLANSCOPE_ALERTS_INTERVAL)
    min_gap: float = Field(0.2, ge=0, validation_alias=ENV.PLANSCOPE_ALERTS_MIN_GAP)
    dashboard_url: str = Field(
        "http://127.0.0.1:8501", validation_alias=ENV.PLANSCOPE_DASHBOARD_URL
    )
    retry_base: float = Field(1.0, ge=0.01, validation_alias=ENV.PLANSCOPE_ALERTS_RETRY_BASE)
    retry_max: float = Field(60.0, ge=0.01, validation_alias=ENV.PLANSCOPE_ALERTS_RETRY_MAX)
    give_up_after: float = Field(86400.0, ge=1, validation_alias=ENV.PLANSCOPE_ALERTS_GIVE_UP)
    enabled: bool = Field(True, validation_alias=ENV.PLANSCOPE_ALERTS_ENABLED)
    # NoDecode: a comma-separated list, not JSON.
    allow_targets: Annotated[AllowList, NoDecode, BeforeValidator(_allow_list)] = Field(
        default_factory=AllowList, validation_alias=ENV.PLANSCOPE_ALERTS_ALLOW_TARGETS
    )

    @field_validator("dashboard_url")
    @classmethod
    def _no_trailing_slash(cls, value: str) -> str:
        return value.rstrip("/")

    def with_data_dir(self, data_dir: Path) -> AlertSettings:
        """These settings, with the data directory's ``alerts.yaml`` as the rules file when no
        file is set and it exists."""
        default = data_dir / "alerts.yaml"
        if self.rules_file is not None or not default.exists():
            return self
        return self.model_copy(update={"rules_file": default})

    def trace_link(
        self, trace_id: str, project: str = "default", step_id: str | None = None
    ) -> str:
        """Dashboard URL of one run (opened on ``step_id`` when given).

        >>> AlertSettings().trace_link("ab" * 16, step_id="fetch")
        'http://127.0.0.1:8501/?page=run&trace=abababababababababababababababab&step=fetch'
        """
        query = {"page": "run", "trace": trace_id}
        if step_id:
            query["step"] = step_id
        if project != "default":
            query["project"] = project
        return f"{self.dashboard_url}/?{urlencode(query)}"

"""Settings of the analyzer inside the collector (``planscope serve``), read from the
``PLANSCOPE_ANALYZER_*`` variables of ``planscope.environment_variables`` when the extension
starts.

>>> AnalyzerSettings(quiet_seconds=0.5).quiet_seconds
0.5
"""

from __future__ import annotations

from planscope import environment_variables as ENV
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["AnalyzerSettings"]


class AnalyzerSettings(BaseSettings):
    """When traces are analysed (each field's variable documents it)."""

    model_config = SettingsConfigDict(frozen=True, validate_by_name=True, env_ignore_empty=True)

    quiet_seconds: float = Field(2.0, ge=0, validation_alias=ENV.PLANSCOPE_ANALYZER_QUIET_SECONDS)
    root_wait_seconds: float = Field(
        30.0, ge=0, validation_alias=ENV.PLANSCOPE_ANALYZER_ROOT_WAIT_SECONDS
    )
    poll_seconds: float = Field(5.0, gt=0, validation_alias=ENV.PLANSCOPE_ANALYZER_POLL_SECONDS)
    lookback_seconds: float = Field(
        3600.0, gt=0, validation_alias=ENV.PLANSCOPE_ANALYZER_LOOKBACK_SECONDS
    )

"""Settings of the analyzer inside the collector (``planscope serve``), read from the
``PLANSCOPE_ANALYZER_*`` variables of ``planscope.environment_variables`` when the extension
starts.

>>> AnalyzerSettings(quiet_seconds=0.5).quiet_seconds
0.5
"""

from __future__ import annotations

import os

from planscope import environment_variables as ENV
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["AnalyzerSettings", "auto_processes"]


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
    processes: int = Field(0, ge=0, validation_alias=ENV.PLANSCOPE_ANALYZER_PROCESSES)


def auto_processes() -> int:
    """Processes a batch's rules run in when ``processes`` is 0: two when this process may use
    two CPUs or more (measured on 2 cores: docs/benchmarks.md, "The rules on the second core"),
    else one (a fork would only add its cost).

    >>> 1 <= auto_processes() <= 2
    True
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux: the rules run serially anyway (_fork.can_fork)
        cpus = os.cpu_count() or 1
    return 2 if cpus >= 2 else 1

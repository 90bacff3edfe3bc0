"""Alerting settings: the values of the environment variables of ``planscope.environment_variables``
(``PLANSCOPE_ALERTS_*``, ``PLANSCOPE_DASHBOARD_URL``; one constant and docstring each there).

>>> AlertSettings.from_env({"PLANSCOPE_ALERTS_INTERVAL": "0.5"}).interval
0.5
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

from planscope.environment_variables import (
    PLANSCOPE_ALERTS_ALLOW_TARGETS,
    PLANSCOPE_ALERTS_ENABLED,
    PLANSCOPE_ALERTS_FILE,
    PLANSCOPE_ALERTS_GIVE_UP,
    PLANSCOPE_ALERTS_INTERVAL,
    PLANSCOPE_ALERTS_MIN_GAP,
    PLANSCOPE_ALERTS_RETRY_BASE,
    PLANSCOPE_ALERTS_RETRY_MAX,
    PLANSCOPE_DASHBOARD_URL,
)

from ._errors import AlertError
from ._targets import AllowList

__all__ = ["AlertSettings"]


@dataclass(frozen=True)
class AlertSettings:
    """Everything the alerting extension can be told (see the environment variables above)."""

    rules_file: Path | None = None
    interval: float = 1.0
    min_gap: float = 0.2
    dashboard_url: str = "http://127.0.0.1:8501"
    retry_base: float = 1.0
    retry_max: float = 60.0
    give_up_after: float = 86400.0
    enabled: bool = True
    allow_targets: AllowList = field(default_factory=AllowList)

    @classmethod
    def from_env(cls, env: Mapping[str, str], data_dir: Path | None = None) -> AlertSettings:
        """Read the environment; a bad value raises AlertError naming the variable."""

        def num(name: str, default: float, low: float = 0.0) -> float:
            raw = env.get(name)
            if raw is None or raw == "":
                return default
            try:
                value = float(raw)
            except ValueError:
                raise AlertError(f"{name} must be a number of seconds, got {raw!r}") from None
            if value < low:
                raise AlertError(f"{name} must be >= {low}, got {raw!r}")
            return value

        try:
            allow = AllowList.parse(env.get(PLANSCOPE_ALERTS_ALLOW_TARGETS, ""))
        except ValueError as exc:
            raise AlertError(f"{PLANSCOPE_ALERTS_ALLOW_TARGETS}: {exc}") from None
        path = env.get(PLANSCOPE_ALERTS_FILE)
        rules_file = Path(path) if path else None
        if rules_file is None and data_dir is not None and (data_dir / "alerts.yaml").exists():
            rules_file = data_dir / "alerts.yaml"
        return cls(
            rules_file=rules_file,
            interval=num(PLANSCOPE_ALERTS_INTERVAL, 1.0, 0.01),
            min_gap=num(PLANSCOPE_ALERTS_MIN_GAP, 0.2),
            dashboard_url=env.get(PLANSCOPE_DASHBOARD_URL, "http://127.0.0.1:8501").rstrip("/"),
            retry_base=num(PLANSCOPE_ALERTS_RETRY_BASE, 1.0, 0.01),
            retry_max=num(PLANSCOPE_ALERTS_RETRY_MAX, 60.0, 0.01),
            give_up_after=num(PLANSCOPE_ALERTS_GIVE_UP, 86400.0, 1.0),
            enabled=env.get(PLANSCOPE_ALERTS_ENABLED, "1").strip().lower() not in ("0", "false"),
            allow_targets=allow,
        )

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

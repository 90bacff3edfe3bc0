"""The :mod:`.openinference_smolagents` agent with smolagents' own planning step before each
step of the executor's loop (free-text plans: no plan planscope reads)."""

from .openinference_smolagents import run_planning as run

__all__ = ["run"]

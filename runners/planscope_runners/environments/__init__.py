"""The bundled environments and their tasks.

>>> from planscope_runners.environments import make_env, tasks_for
>>> env = make_env("ops"); [t.id for t in tasks_for("ops")][:2]
['ops-deploy-api', 'ops-deploy-billing']
"""

from __future__ import annotations

from collections.abc import Callable

from .._env import Environment, Task
from .._errors import UnknownNameError
from . import files, ops, support

FACTORIES: dict[str, Callable[..., Environment]] = {
    ops.NAME: ops.OpsEnv,
    support.NAME: support.SupportEnv,
    files.NAME: files.FilesEnv,
}
TASKS: dict[str, Task] = {t.id: t for t in (*ops.TASKS, *support.TASKS, *files.TASKS)}


def make_env(name: str, *, latency: float = 0.0) -> Environment:
    """A fresh environment by name (``ops``, ``support``, ``files``)."""
    try:
        factory = FACTORIES[name]
    except KeyError:
        raise UnknownNameError(
            f"unknown environment {name!r}; known: {sorted(FACTORIES)}"
        ) from None
    return factory(latency=latency)


def get_task(task_id: str) -> Task:
    """A bundled task by id."""
    try:
        return TASKS[task_id]
    except KeyError:
        raise UnknownNameError(f"unknown task {task_id!r}; see `planscope run --list`") from None


def tasks_for(env: str) -> list[Task]:
    """The bundled tasks of one environment."""
    if env not in FACTORIES:
        raise UnknownNameError(f"unknown environment {env!r}; known: {sorted(FACTORIES)}")
    return [t for t in TASKS.values() if t.env == env]


__all__ = ["FACTORIES", "TASKS", "get_task", "make_env", "tasks_for"]

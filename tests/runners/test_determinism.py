"""A run's label is a function of its seed and options, not of how its threads were scheduled.

Each case runs one parallel task twice with the same seed while a wrapper holds back the
executor of different steps (so the threads start, retry and finish in a different order);
the two labels must be the same, metrics included (wall time and ids aside).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from planscope_runners import Fault, ScriptedModel, run_task
from planscope_runners._models import ChatRequest, ChatResponse

DELAY_S = 0.15


class _HeldBack:
    """The scripted executor, sleeping before it acts for some steps (a slow or busy thread)."""

    name, provider = "scripted-executor", "scripted"

    def __init__(self, slow: set[str], seed: int) -> None:
        self.inner = ScriptedModel("scripted-executor", seed=seed)
        self.slow = slow

    def complete(self, request: ChatRequest) -> ChatResponse:
        if request.hints.get("step_id") in self.slow:
            time.sleep(DELAY_S)
        return self.inner.complete(request)


def _label(variant: str, task: str, fault: Fault, slow: set[str]) -> dict[str, Any]:
    seed = 7
    result = run_task(
        variant, task.split("-")[0], task, [fault], seed=seed, executor=_HeldBack(slow, seed)
    )
    label = result.label()
    for key in ("trace_id", "run_id"):
        label.pop(key)
    label["metrics"].pop("wall_time_s")
    return label


CASES = [
    # every assign_i performs the faulted action: which ones loop must not depend on which
    # branch reaches its assign step first
    pytest.param(
        "dag",
        "support-triage-wide",
        Fault("loop_unchanged_inputs", "assign_0"),
        ({"find_1", "find_2", "find_3"}, {"find_0", "prio_0"}),
        id="loop-on-parallel-branches",
    ),
    # a flaky action performed by parallel steps: which of them sees the failures
    pytest.param(
        "dag",
        "support-triage-wide",
        Fault("flaky_tool", "assign_0", {"failures": 2}),
        ({"assign_1", "assign_2", "assign_3"}, {"assign_0"}),
        id="flaky-on-parallel-steps",
    ),
    # the reader whose edge was dropped runs beside its producer: whether it sees the value
    pytest.param(
        "dag",
        "support-triage-pair",
        Fault("implicit_dependency", "prio_1", {"producer": "find_1", "key": "cust_1"}),
        ({"prio_1"}, {"find_1"}),
        id="dropped-edge-reader-beside-producer",
    ),
    pytest.param(
        "scheduler",
        "support-triage-wide",
        Fault("loop_same_error", "assign_0"),
        ({"find_1", "find_2", "find_3"}, {"find_0", "prio_0"}),
        id="scheduler-loop-on-parallel-branches",
    ),
]


@pytest.mark.parametrize(("variant", "task", "fault", "schedules"), CASES)
def test_the_same_seed_gives_the_same_label_under_any_thread_schedule(
    variant: str, task: str, fault: Fault, schedules: tuple[set[str], set[str]]
) -> None:
    first, second = (_label(variant, task, fault, slow) for slow in schedules)
    assert first == second

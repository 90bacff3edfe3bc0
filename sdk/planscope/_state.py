"""Per-run bookkeeping shared by the spans of one run, and the context frame that links them.

One :class:`contextvars.ContextVar` holds the current :class:`Frame`: the enclosing run, step, plan
and LLM spans. asyncio tasks inherit it, so parallel executors of one run share the same
:class:`RunState` (a lock guards it for threads).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ._budget import RetryBudget
from ._plan import Plan

if TYPE_CHECKING:
    from ._spans import LlmHandle, PlanHandle, RunHandle, SpanHandle, StepHandle


@dataclass(eq=False)
class RunState:
    """Counters of one run (or, outside a run, of one trace)."""

    run_id: str | None = None
    agent: str | None = None
    budget: RetryBudget | None = None
    attempts: dict[str, int] = field(default_factory=dict)
    total_attempts: int = 0
    plan_versions: dict[str, int] = field(default_factory=dict)
    replans: int = 0
    tokens: int = 0
    current_plan: Plan | None = None
    outcome: str | None = None
    outcome_reason: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def next_attempt(self, step_id: str) -> tuple[int, int]:
        """Count a new attempt of ``step_id``; return (attempt of this step, attempts in run)."""
        with self.lock:
            attempt = self.attempts.get(step_id, 0) + 1
            self.attempts[step_id] = attempt
            self.total_attempts += 1
            return attempt, self.total_attempts

    def register_plan(self, plan: Plan) -> tuple[Plan, int | None]:
        """Assign the plan's version within this run; return (recorded plan, parent version).

        The first plan of an id keeps its version. A later plan with the same id is a replan: it
        keeps an explicit version greater than the last one, otherwise gets last + 1.
        """
        with self.lock:
            last = self.plan_versions.get(plan.id)
            if last is None:
                self.plan_versions[plan.id] = plan.version
                return plan, None
            version = plan.version if plan.version > last else last + 1
            self.plan_versions[plan.id] = version
            self.replans += 1
            recorded = plan if version == plan.version else plan.with_version(version)
            return recorded, last

    def add_tokens(self, tokens: int) -> int:
        with self.lock:
            self.tokens += tokens
            return self.tokens


@dataclass(eq=False, slots=True)
class StepState:
    """Bookkeeping of one step attempt."""

    step_id: str
    attempt: int
    depth: int
    plan_id: str | None
    plan_version: int | None
    parent: StepState | None = None
    child_plan: Plan | None = None  # a plan made inside this step (decomposition / scoped replan)
    context_keys: set[str] = field(default_factory=set)
    context_tokens: int | None = None


class Frame:
    """What encloses the code running now (never changed once made: a new span makes a new one).

    A plain slotted class rather than a frozen dataclass: one is built per span, and a frozen
    dataclass's ``__init__`` costs an ``object.__setattr__`` per field.
    """

    __slots__ = ("innermost", "llm", "plan", "role_hint", "run", "state", "step")

    def __init__(
        self,
        state: RunState | None = None,
        run: RunHandle | None = None,
        step: StepHandle | None = None,
        plan: PlanHandle | None = None,
        llm: LlmHandle | None = None,
        innermost: SpanHandle | None = None,
        role_hint: str | None = None,
    ) -> None:
        self.state = state
        self.run = run
        self.step = step
        self.plan = plan
        self.llm = llm
        self.innermost = innermost
        self.role_hint = role_hint

    def __repr__(self) -> str:
        return (
            f"Frame(run={self.run!r}, step={self.step!r}, plan={self.plan!r}, llm={self.llm!r}, "
            f"innermost={self.innermost!r}, role_hint={self.role_hint!r})"
        )


EMPTY_FRAME = Frame()
CURRENT: ContextVar[Frame] = ContextVar("planscope_frame", default=EMPTY_FRAME)

# Outside a run, attempts and plan versions are counted per trace (bounded, oldest dropped).
_ORPHAN_LIMIT = 4096
_orphans: OrderedDict[int, RunState] = OrderedDict()
_orphans_lock = threading.Lock()


def orphan_state(trace_id: int) -> RunState:
    """The counters of a trace that has no planscope run (a fresh one for an invalid trace id)."""
    if not trace_id:
        return RunState()
    with _orphans_lock:
        state = _orphans.get(trace_id)
        if state is None:
            state = _orphans[trace_id] = RunState()
            if len(_orphans) > _ORPHAN_LIMIT:
                _orphans.popitem(last=False)
        else:
            _orphans.move_to_end(trace_id)
        return state


def effective_plan(frame: Frame) -> Plan | None:
    """The plan the code runs under: the innermost step's sub-plan, else the run's plan."""
    step = frame.step.state if frame.step is not None else None
    while step is not None:
        if step.child_plan is not None:
            return step.child_plan
        step = step.parent
    return frame.state.current_plan if frame.state is not None else None


def place_plan(frame: Frame, plan: Plan) -> None:
    """Make ``plan`` current at the level that owns its id, or at the innermost level if new."""
    state = frame.state
    step = frame.step.state if frame.step is not None else None
    node = step
    while node is not None:
        if node.child_plan is not None and node.child_plan.id == plan.id:
            node.child_plan = plan
            return
        node = node.parent
    if state is not None and (
        step is None or (state.current_plan is not None and state.current_plan.id == plan.id)
    ):
        state.current_plan = plan
    elif step is not None:
        step.child_plan = plan


def reset() -> None:
    """Forget orphan counters (tests)."""
    with _orphans_lock:
        _orphans.clear()

"""Plans: what a planner produced, as a DAG of steps. The JSON shape is a storage contract.

``Plan.to_json()`` is recorded verbatim in the ``planscope.plan.json`` span attribute, and the
ClickHouse materialized views parse exactly these keys (docs/semantic-conventions.md)::

    {"id": str, "version": int, "scope": str|null, "objective": str|null,
     "replan_reason": str|null,
     "steps": [{"id": str, "description": str, "executor": str|null, "tool": str|null,
                "depends_on": [str], "requires": [str], "produces": [str],
                "irreversible": bool}]}

``approval`` is not part of the JSON: it travels in the ``planscope.plan.approval`` attribute.
"""

from __future__ import annotations

import dataclasses
import heapq
import json
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._errors import PlanValidationError

__all__ = ["Plan", "PlanStep"]


def _new_plan_id() -> str:
    return uuid.uuid4().hex


def _str_tuple(owner: str, name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise PlanValidationError(f"{owner}: {name} must be a list of strings, got {value!r}")
    items = tuple(value)
    for item in items:
        if not isinstance(item, str):
            raise PlanValidationError(f"{owner}: {name} must contain strings, got {item!r}")
    return items


def _opt_str(owner: str, name: str, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise PlanValidationError(f"{owner}: {name} must be a string or null, got {value!r}")


@dataclass(frozen=True)
class PlanStep:
    """One step of a plan.

    >>> PlanStep("fetch", "download the invoice", tool="http_get", produces=["invoice"]).produces
    ('invoice',)
    """

    id: str
    """Unique within the plan; step spans carry it as ``planscope.step.id``."""
    description: str = ""
    executor: str | None = None
    """The executor (agent, worker, model) assigned to the step."""
    tool: str | None = None
    """The tool the planner expects the step to use."""
    depends_on: Sequence[str] = ()
    """Ids of the steps that must finish first."""
    requires: Sequence[str] = ()
    """Context keys the executor needs (compared with ``planscope.step.context.keys``)."""
    produces: Sequence[str] = ()
    """Context keys the step produces for later steps."""
    irreversible: bool = False
    """The step has effects that cannot be undone (payments, deletes, e-mails)."""

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise PlanValidationError(f"a plan step id must be a non-empty string, got {self.id!r}")
        owner = f"step {self.id!r}"
        if not isinstance(self.description, str):
            raise PlanValidationError(f"{owner}: description must be a string")
        _opt_str(owner, "executor", self.executor)
        _opt_str(owner, "tool", self.tool)
        for name in ("depends_on", "requires", "produces"):
            object.__setattr__(self, name, _str_tuple(owner, name, getattr(self, name)))
        if not isinstance(self.irreversible, bool):
            raise PlanValidationError(f"{owner}: irreversible must be a boolean")

    def to_dict(self) -> dict[str, Any]:
        """The step in the contract's JSON shape."""
        return {
            "id": self.id,
            "description": self.description,
            "executor": self.executor,
            "tool": self.tool,
            "depends_on": list(self.depends_on),
            "requires": list(self.requires),
            "produces": list(self.produces),
            "irreversible": self.irreversible,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PlanStep:
        """Build from the JSON shape; only ``id`` is required, unknown keys are ignored."""
        if isinstance(data, PlanStep):
            return data
        if not isinstance(data, Mapping):
            raise PlanValidationError(f"a plan step must be an object, got {data!r}")
        if "id" not in data:
            raise PlanValidationError(f"a plan step needs an 'id': {dict(data)!r}")
        return cls(
            id=data["id"],
            description=data.get("description") or "",
            executor=data.get("executor"),
            tool=data.get("tool"),
            depends_on=data.get("depends_on") or (),
            requires=data.get("requires") or (),
            produces=data.get("produces") or (),
            irreversible=data.get("irreversible", False),
        )


@dataclass(frozen=True)
class Plan:
    """A validated plan: unique step ids, known dependencies, no cycles.

    Return one from a ``@planscope.planner`` function to record it. Replanning keeps the id and
    bumps the version.

    >>> plan = Plan([PlanStep("a"), PlanStep("b", depends_on=["a"])], id="p1")
    >>> plan.replan([PlanStep("a"), PlanStep("c", depends_on=["a"])], reason="b failed").version
    2
    >>> Plan.from_json(plan.to_json()) == plan
    True
    """

    steps: Sequence[PlanStep]
    id: str = field(default_factory=_new_plan_id)
    version: int = 1
    scope: str | None = None
    """The sub-goal the plan covers (a step id for scoped replanning / decomposition)."""
    objective: str | None = None
    replan_reason: str | None = None
    approval: str | None = None
    """pending | approved | edited | rejected | not_required (not part of the JSON)."""

    def __post_init__(self) -> None:
        if isinstance(self.steps, (str, bytes)) or not isinstance(self.steps, Iterable):
            raise PlanValidationError(f"plan steps must be a list, got {self.steps!r}")
        steps = tuple(s if isinstance(s, PlanStep) else PlanStep.from_dict(s) for s in self.steps)
        object.__setattr__(self, "steps", steps)
        if not isinstance(self.id, str) or not self.id:
            raise PlanValidationError(f"a plan id must be a non-empty string, got {self.id!r}")
        if isinstance(self.version, bool) or not isinstance(self.version, int) or self.version < 1:
            raise PlanValidationError(f"plan version must be an integer >= 1, got {self.version!r}")
        for name in ("scope", "objective", "replan_reason", "approval"):
            _opt_str("plan", name, getattr(self, name))
        self._validate_graph()

    def _validate_graph(self) -> None:
        counts = Counter(s.id for s in self.steps)
        seen = set(counts)
        duplicates = sorted(sid for sid, n in counts.items() if n > 1)
        if duplicates:
            raise PlanValidationError(f"plan {self.id}: duplicate step ids {duplicates}")
        for step in self.steps:
            missing = [d for d in step.depends_on if d not in seen]
            if missing:
                raise PlanValidationError(
                    f"plan {self.id}: step {step.id!r} depends on unknown step(s) {missing}"
                )
            if step.id in step.depends_on:
                raise PlanValidationError(f"plan {self.id}: step {step.id!r} depends on itself")
        order = self._topological_ids()
        if len(order) < len(self.steps):
            cycle = self._find_cycle()
            raise PlanValidationError(f"plan {self.id}: dependency cycle {' -> '.join(cycle)}")

    def _topological_ids(self) -> list[str]:
        index = {s.id: i for i, s in enumerate(self.steps)}
        indegree = {s.id: len(set(s.depends_on)) for s in self.steps}
        dependents: dict[str, list[str]] = {s.id: [] for s in self.steps}
        for s in self.steps:
            for dep in set(s.depends_on):
                dependents[dep].append(s.id)
        ready = [(index[sid], sid) for sid, deg in indegree.items() if deg == 0]
        heapq.heapify(ready)
        order: list[str] = []
        while ready:
            _, sid = heapq.heappop(ready)
            order.append(sid)
            for nxt in dependents[sid]:
                indegree[nxt] -= 1
                if indegree[nxt] == 0:
                    heapq.heappush(ready, (index[nxt], nxt))
        return order

    def _find_cycle(self) -> list[str]:
        deps = {s.id: list(s.depends_on) for s in self.steps}
        state: dict[str, int] = {}
        stack: list[str] = []

        def visit(sid: str) -> list[str] | None:
            state[sid] = 1
            stack.append(sid)
            for dep in deps[sid]:
                if state.get(dep) == 1:
                    return [*stack[stack.index(dep) :], dep]
                if dep not in state:
                    found = visit(dep)
                    if found:
                        return found
            stack.pop()
            state[sid] = 2
            return None

        for sid in deps:
            if sid not in state:
                found = visit(sid)
                if found:
                    return found
        return []  # pragma: no cover - only called when a cycle exists

    # --- queries ---------------------------------------------------------------------------
    def step(self, step_id: str) -> PlanStep:
        """The step with this id (KeyError if absent)."""
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)

    def topological_order(self) -> list[PlanStep]:
        """Steps so that each comes after its dependencies; ties keep the plan's order.

        >>> plan = Plan([PlanStep("b", depends_on=["a"]), PlanStep("a")])
        >>> [s.id for s in plan.topological_order()]
        ['a', 'b']
        """
        by_id = {s.id: s for s in self.steps}
        return [by_id[sid] for sid in self._topological_ids()]

    def replan(
        self,
        steps: Sequence[PlanStep | Mapping[str, Any]],
        *,
        reason: str | None = None,
        scope: str | None = None,
    ) -> Plan:
        """The next version of this plan (same id, version + 1) with new steps."""
        return Plan(
            steps=tuple(s if isinstance(s, PlanStep) else PlanStep.from_dict(s) for s in steps),
            id=self.id,
            version=self.version + 1,
            scope=scope if scope is not None else self.scope,
            objective=self.objective,
            replan_reason=reason,
        )

    # --- (de)serialisation -------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The plan in the contract's JSON shape (keys in contract order)."""
        return {
            "id": self.id,
            "version": self.version,
            "scope": self.scope,
            "objective": self.objective,
            "replan_reason": self.replan_reason,
            "steps": [s.to_dict() for s in self.steps],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, default_id: str | None = None) -> Plan:
        """Build and validate from the JSON shape. ``steps`` is required; ``id`` defaults to
        ``default_id`` or a new uuid; an optional ``approval`` key is read; others are ignored."""
        if not isinstance(data, Mapping):
            raise PlanValidationError(f"a plan must be an object, got {type(data).__name__}")
        if "steps" not in data:
            raise PlanValidationError("a plan needs a 'steps' list")
        plan_id = data.get("id") or default_id or _new_plan_id()
        return cls(
            steps=data["steps"],
            id=plan_id,
            version=1 if data.get("version") is None else data["version"],
            scope=data.get("scope"),
            objective=data.get("objective"),
            replan_reason=data.get("replan_reason"),
            approval=data.get("approval"),
        )

    def to_json(self) -> str:
        """Compact JSON of :meth:`to_dict` (the ``planscope.plan.json`` attribute value)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Plan:
        """Parse and validate the JSON shape."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PlanValidationError(f"plan JSON is invalid: {exc}") from None
        return cls.from_dict(data)

    def with_version(self, version: int, **changes: Any) -> Plan:
        """A copy with another version (and optional other field changes)."""
        return dataclasses.replace(self, version=version, **changes)

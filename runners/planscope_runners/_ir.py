"""The wire boundary: what planners return, parsed and validated with pydantic.

A planner answers JSON (a real model as text, the scripted model the same way). :func:`parse_plan`
turns it into a :class:`PlanDraft`: the :class:`planscope.Plan` that is recorded on the trace plus
what the runtime needs beside it (the inputs bound per step, the resources each step writes and,
for planning scripts, the explicit tool arguments).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import planscope
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._errors import PlanFormatError


class StepIR(BaseModel):
    """One plan step as a planner writes it."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1, max_length=120)
    description: str = ""
    tool: str | None = None
    executor: str | None = None
    depends_on: list[str] = Field(default_factory=list)
    requires: list[str] = Field(default_factory=list)
    produces: list[str] = Field(default_factory=list)
    irreversible: bool = False
    inputs: dict[str, Any] = Field(default_factory=dict)
    """Values the planner hands to the executor (the facts the step needs)."""
    writes: list[str] = Field(default_factory=list)
    """Resources the step writes (for the write-conflict check)."""
    args: dict[str, Any] | None = None
    """Explicit tool arguments (planning scripts); ``{$key}`` refers to a produced value."""
    covers: list[str] = Field(default_factory=list)
    """Optional: ids of the task's reference steps this (sub-)task covers. Only offline models
    fill it (ADaPT decompositions); the runtime passes it back to them untouched."""
    tools: list[str] = Field(default_factory=list)
    """Optional: every tool a sub-task of several actions calls for (the host variant routes
    it to an application agent that has them)."""


class PlanIR(BaseModel):
    """A plan as a planner writes it."""

    model_config = ConfigDict(extra="ignore")

    steps: list[StepIR] = Field(min_length=1, max_length=200)


class ScriptStepIR(StepIR):
    """A planning-script step: the tool and its arguments are mandatory, nothing else allowed."""

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1)
    args: dict[str, Any]


class ScriptIR(BaseModel):
    """A planning script: a typed program the deterministic engine validates, then runs."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    steps: list[ScriptStepIR] = Field(min_length=1, max_length=200)


class DecompositionIR(BaseModel):
    """ADaPT: how the planner splits a failed sub-task (``and``: all, ``or``: any one)."""

    model_config = ConfigDict(extra="ignore")

    logic: Literal["and", "or"] = "and"
    steps: list[StepIR] = Field(min_length=1, max_length=50)


@dataclass(frozen=True)
class PlanDraft:
    """A recorded plan plus the runtime's per-step extras."""

    plan: planscope.Plan
    inputs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    writes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    args: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    covers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    tools: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Per step: the tools it calls for (``tool`` when it names one, else ``StepIR.tools``)."""

    def merged(self, other: PlanDraft, plan: planscope.Plan) -> PlanDraft:
        """Extras of both drafts (``other`` wins), attached to ``plan``."""
        return PlanDraft(
            plan=plan,
            inputs={**self.inputs, **other.inputs},
            writes={**self.writes, **other.writes},
            args={**self.args, **other.args},
            covers={**self.covers, **other.covers},
            tools={**self.tools, **other.tools},
        )


def _load_json(text: str | None) -> Any:
    if not text:
        raise PlanFormatError(["the planner returned no content"])
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.strip("`")
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else stripped
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise PlanFormatError([f"not JSON: {exc}"]) from None


def _problems(exc: ValidationError) -> list[str]:
    return [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]


def parse_steps(text: str | None, *, script: bool = False) -> list[StepIR]:
    """Parse a planner's JSON answer into validated steps (raises PlanFormatError)."""
    data = _load_json(text)
    try:
        if script:
            return list(ScriptIR.model_validate(data).steps)
        return list(PlanIR.model_validate(data).steps)
    except ValidationError as exc:
        raise PlanFormatError(_problems(exc)) from None


def parse_decomposition(text: str | None) -> DecompositionIR:
    """Parse an ADaPT decomposition (raises PlanFormatError)."""
    try:
        return DecompositionIR.model_validate(_load_json(text))
    except ValidationError as exc:
        raise PlanFormatError(_problems(exc)) from None


def to_draft(
    steps: list[StepIR],
    *,
    plan_id: str | None = None,
    objective: str | None = None,
    scope: str | None = None,
) -> PlanDraft:
    """Build the recorded Plan (validated by planscope: unique ids, known deps, no cycle)."""
    plan_steps = [
        planscope.PlanStep(
            id=s.id,
            description=s.description,
            executor=s.executor,
            tool=s.tool,
            depends_on=s.depends_on,
            requires=s.requires,
            produces=s.produces,
            irreversible=s.irreversible,
        )
        for s in steps
    ]
    try:
        plan = planscope.Plan(plan_steps, objective=objective, scope=scope)
        if plan_id:
            plan = replace(plan, id=plan_id)
    except planscope.PlanValidationError as exc:
        raise PlanFormatError([str(exc)]) from None
    return PlanDraft(
        plan=plan,
        inputs={s.id: dict(s.inputs) for s in steps},
        writes={s.id: tuple(s.writes) for s in steps},
        args={s.id: dict(s.args) for s in steps if s.args is not None},
        covers={s.id: tuple(s.covers) for s in steps if s.covers},
        tools={s.id: tuple(s.tools or ([s.tool] if s.tool else [])) for s in steps},
    )


def dump_steps(steps: list[dict[str, Any]], **extra: Any) -> str:
    """Serialise steps the way a planner answers (used by the scripted model)."""
    return json.dumps({**extra, "steps": steps}, separators=(",", ":"), default=str)

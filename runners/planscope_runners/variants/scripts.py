"""Planning scripts: the plan is a typed program (``ScriptIR``) that a deterministic engine
validates and runs. Malformed scripts are rejected before anything executes; the planner gets
the problems back and may repair the script (bounded by the retry budget's ``max_replans``).

No executor model is involved: the engine calls each step's tool with the script's arguments,
``{$key}`` references resolved from what earlier steps produced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from planscope import PlanStep

from .._core import Run, StepOutcome
from .._env import IRREVERSIBLE, Tool, references
from .._errors import PlanFormatError
from .._ir import PlanDraft

NAME = "scripts"
DESCRIPTION = "typed plan IR validated then run by a deterministic engine, no executor LLM"
MAX_REPAIRS = 2


def validate_script(draft: PlanDraft, tools: Mapping[str, Tool]) -> list[str]:
    """Every problem that makes a script unrunnable (empty when it is valid).

    Unknown tools, missing or unknown arguments, references to keys no earlier step (in
    ``depends_on``, transitively) produces, and irreversible flags that contradict the tool.
    """
    problems: list[str] = []
    plan = draft.plan
    ancestors: dict[str, set[str]] = {}
    for step in plan.topological_order():
        ancestors[step.id] = set(step.depends_on).union(*(ancestors[d] for d in step.depends_on))
        tool = tools.get(step.tool or "")
        args = draft.args.get(step.id, {})
        if tool is None:
            problems.append(f"step {step.id}: unknown tool {step.tool!r}")
            continue
        missing = [p for p in tool.required if p not in args]
        unknown = [a for a in args if a not in tool.parameters]
        if missing:
            problems.append(f"step {step.id}: missing argument(s) {missing} for {tool.name}")
        if unknown:
            problems.append(f"step {step.id}: unknown argument(s) {unknown} for {tool.name}")
        available = {k for a in ancestors[step.id] for k in plan.step(a).produces}
        for value in args.values():
            for ref in references(value):
                if isinstance(value, str) and f"{{${ref}" in value and ref not in available:
                    problems.append(
                        f"step {step.id}: {{${ref}}} is not produced by a step it depends on"
                    )
        if (tool.effect == IRREVERSIBLE) != step.irreversible:
            problems.append(f"step {step.id}: irreversible must be {tool.effect == IRREVERSIBLE}")
    return problems


def run(r: Run) -> str | None:
    """Generate a script, validate it (repair on rejection), then run it deterministically."""

    def validate(draft: PlanDraft) -> PlanDraft:
        problems = validate_script(draft, r.tools)
        if problems:
            raise PlanFormatError(problems)
        return draft

    def generate(purpose: str, failure: str | None, completed: Sequence[str]) -> PlanDraft:
        attempt = 1
        while True:
            try:
                return r.plan_once(
                    purpose,
                    script=True,
                    failure=failure,
                    completed=completed,
                    validate=validate,
                    attempt=attempt,
                )
            except PlanFormatError as exc:
                r.failures.append(f"script rejected: {exc}")
                if attempt > MAX_REPAIRS:
                    raise
                failure = f"the engine rejected the script: {exc}"
                purpose, attempt = "replan", attempt + 1

    try:
        draft = generate("plan", None, ())
    except PlanFormatError as exc:
        return f"no valid script after {MAX_REPAIRS + 1} attempts: {exc}"

    def run_step(step: PlanStep, d: PlanDraft) -> StepOutcome:
        return r.execute_step(step, d, script_args=d.args.get(step.id, {}))

    def replan(failure: str, completed: Sequence[str]) -> PlanDraft:
        return generate("replan", failure, completed)

    return r.execute_with_whole_replans(draft, replan=replan, run_step=run_step)

"""ADaPT (as-needed decomposition): the executor tries first and judges its own result; when it
fails, the planner decomposes that sub-task (``and``: all children, ``or``: alternatives) and the
children are tried the same way, recursively, down to a maximum depth.

The plan starts as one step (the whole objective); every decomposition is a new plan version,
scoped to the sub-task it splits, that keeps the tree so far (children depend on their earlier
siblings). Step spans carry the depth (``planscope.step.depth``) and the executor's
self-assessment (``planscope.step.self_assessment``).
"""

from __future__ import annotations

from dataclasses import replace

from planscope import Plan, PlanStep

from .._core import DEFAULT_BUDGET, Run, RunAborted
from .._ir import DecompositionIR, PlanDraft, parse_decomposition, to_draft
from .._prompts import decompose_messages

NAME = "adapt"
DESCRIPTION = "executor first with self-assessment, recursive AND/OR decomposition on failure"
BUDGET = replace(DEFAULT_BUDGET, max_replans=24)
"""Decompositions are plan versions: ADaPT needs more of them than a replanning variant."""
EXECUTOR_TURNS = 8
"""The executor works through a sub-task in up to this many model calls (act, observe, act)
before it judges its own result; only a sub-task it cannot finish is decomposed."""


class _Tree:
    """The plan so far; every decomposition adds children and records a new version."""

    def __init__(self, r: Run) -> None:
        self.r = r
        root = PlanStep("root", r.task.rendered_objective, executor="adapt-executor")
        self.draft = r.record_plan(lambda: PlanDraft(Plan([root])))
        self.covers: dict[str, list[str]] = {"root": [s.id for s in r.task.order()]}

    def unique(self, step_id: str) -> str:
        existing = {s.id for s in self.draft.plan.steps}
        candidate, n = step_id, 1
        while candidate in existing:
            n += 1
            candidate = f"{step_id}~{n}"
        return candidate

    def decompose(self, node: PlanStep, failure: str, depth: int) -> tuple[str, list[PlanStep]]:
        r = self.r
        children: list[PlanStep] = []
        logic = "and"

        def produce() -> PlanDraft:
            nonlocal logic
            response = r.llm(
                "planner",
                "decompose",
                decompose_messages(r.task, r.tools, node.id, node.description, failure, depth),
                json_output=True,
                hints=r.hints(
                    node=node.id,
                    covers=self.covers.get(node.id, []),
                    description=node.description,
                    failures=tuple(r.failures),
                    depth=depth,
                ),
            )
            parsed: DecompositionIR = parse_decomposition(response.content)
            logic = parsed.logic
            renamed = {}
            for ir in parsed.steps:
                renamed[ir.id] = self.unique(ir.id)
            sub = []
            previous: str | None = None
            for ir in parsed.steps:
                new_id = renamed[ir.id]
                deps = [renamed[d] for d in ir.depends_on if d in renamed]
                if logic == "and" and previous is not None and not deps:
                    deps = [previous]
                sub.append(ir.model_copy(update={"id": new_id, "depends_on": deps}))
                self.covers[new_id] = list(ir.covers)
                previous = new_id
            extra = to_draft(sub)
            children.extend(extra.plan.steps)
            steps = [*self.draft.plan.steps, *extra.plan.steps]
            return self.draft.merged(extra, replace(self.draft.plan, steps=steps))

        self.draft = r.record_plan(produce, reason=f"{node.id}: {failure}", scope=node.id)
        return logic, children

    def solve(self, node: PlanStep, depth: int) -> bool:
        r = self.r
        outcome = r.execute_step(
            node, self.draft, depth=depth, covers=self.covers.get(node.id, []), self_assess=True
        )
        if outcome.ok:
            return True
        if outcome.budget is not None:
            raise RunAborted(f"retry budget exceeded at step {node.id}: {outcome.error}")
        if depth >= r.options.max_depth:
            r.failures.append(f"{node.id}: maximum depth {r.options.max_depth} reached")
            return False
        logic, children = self.decompose(node, outcome.error or "self-assessed failure", depth)
        if logic == "or":
            return any(self.solve(child, depth + 1) for child in children)
        return all(self.solve(child, depth + 1) for child in children)


def run(r: Run) -> str | None:
    """Try the whole objective; decompose what fails, recursively (bounded by max_depth)."""
    tree = _Tree(r)
    try:
        ok = tree.solve(tree.draft.plan.step("root"), 0)
    except RunAborted as exc:
        return str(exc)
    return None if ok else f"could not solve the objective: {'; '.join(r.failures[-2:])}"

"""DAG with scoped replanning: sub-goals run in parallel executors once they are ready.

LLMCompiler-style dispatch, in rounds: a bounded thread pool receives every node whose
dependencies (and the producers of what it requires) are done when a round opens, and the round
closes when all of them have finished (so what runs together, and what the run decides, does
not follow thread timing); each worker runs in a copy of the coordinator's context, so its step
spans are children of the run. Before execution the planner's graph is checked for write
conflicts (two nodes that may run in parallel writing one resource) and such pairs are
serialised. When a node fails, only that sub-goal is replanned: a new plan version with
``scope`` = the node, its other nodes kept. Irreversible actions already taken constrain the
replan: a replacement that would repeat one is refused.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import planscope
from planscope import Plan, PlanStep

from .._core import Run, StepOutcome
from .._errors import PlanFormatError
from .._ir import PlanDraft, to_draft

NAME = "dag"
DESCRIPTION = "parallel ready-node dispatch, write-conflict check, sub-goal-scoped replanning"
EVENT_CONFLICTS_SERIALISED = "planscope_runners.write_conflicts.serialised"


def ancestors(plan: Plan) -> dict[str, set[str]]:
    """Step id -> every step it (transitively) depends on."""
    result: dict[str, set[str]] = {}
    for step in plan.topological_order():
        result[step.id] = set(step.depends_on).union(*(result[d] for d in step.depends_on))
    return result


def write_conflicts(draft: PlanDraft) -> list[tuple[str, str, str]]:
    """(earlier, later, resource) for nodes that may run in parallel and write one resource.

    >>> from planscope_runners._ir import to_draft, StepIR
    >>> d = to_draft([StepIR(id="a", writes=["file:x"]), StepIR(id="b", writes=["file:x"])])
    >>> write_conflicts(d)
    [('a', 'b', 'file:x')]
    """
    plan = draft.plan
    anc = ancestors(plan)
    steps = list(plan.steps)
    found = []
    for i, a in enumerate(steps):
        for b in steps[i + 1 :]:
            if a.id in anc[b.id] or b.id in anc[a.id]:
                continue
            shared = set(draft.writes.get(a.id, ())) & set(draft.writes.get(b.id, ()))
            for resource in sorted(shared):
                found.append((a.id, b.id, resource))
    return found


def serialise_conflicts(draft: PlanDraft) -> PlanDraft:
    """Add an edge (later depends on earlier) for every write conflict; record what was fixed."""
    conflicts = write_conflicts(draft)
    if not conflicts:
        return draft
    extra: dict[str, set[str]] = {}
    for earlier, later, _ in conflicts:
        extra.setdefault(later, set()).add(earlier)
    steps = [
        replace(s, depends_on=(*s.depends_on, *sorted(extra.get(s.id, set()) - set(s.depends_on))))
        for s in draft.plan.steps
    ]
    planscope.record_event(
        EVENT_CONFLICTS_SERIALISED,
        conflicts=[f"{a}->{b} on {r}" for a, b, r in conflicts],
    )
    return replace(draft, plan=replace(draft.plan, steps=steps))


def check_irreversible(replacement: PlanDraft, irreversible: Sequence[str]) -> None:
    """Refuse a replacement whose irreversible step writes a resource an irreversible action
    already touched (``irreversible`` holds ``"tool on resource (step id)"`` records)."""
    for step in replacement.plan.steps:
        if not step.irreversible:
            continue
        for resource in replacement.writes.get(step.id, ()):
            if any(f" on {resource} " in f"{done} " for done in irreversible):
                raise PlanFormatError(
                    [f"step {step.id} would repeat an irreversible action on {resource}"]
                )


def merge_scoped(
    draft: PlanDraft, node: str, replacement: PlanDraft, irreversible: Sequence[str]
) -> PlanDraft:
    """Replace ``node`` by the replacement steps; dependents of the node wait for its last
    replacement step. Refuses replacements that redo an irreversible action already taken.
    """
    old = draft.plan.step(node)
    others = [s for s in draft.plan.steps if s.id != node]
    known = {s.id for s in others}
    new_steps = list(replacement.plan.steps)
    check_irreversible(replacement, irreversible)
    if len(new_steps) == 1 and new_steps[0].id == node:  # the node rewritten in place
        rewritten = replace(new_steps[0], depends_on=old.depends_on)
        steps = [rewritten if s.id == node else s for s in draft.plan.steps]
        return draft.merged(replacement, replace(draft.plan, steps=steps))
    clash = [s.id for s in new_steps if s.id in known]
    if clash:
        raise PlanFormatError([f"replacement step id(s) {clash} already exist in the plan"])
    new_ids = {s.id for s in new_steps}
    fixed = []
    for step in new_steps:
        deps = [d for d in step.depends_on if d in known or d in new_ids]
        if not any(d in new_ids for d in deps):
            deps = sorted(set(deps) | set(old.depends_on))
        fixed.append(replace(step, depends_on=tuple(deps)))
    terminal = fixed[-1].id
    rewired = [
        replace(s, depends_on=tuple(terminal if d == node else d for d in s.depends_on))
        for s in others
    ]
    position = [s.id for s in draft.plan.steps].index(node)
    merged_steps = [*rewired[:position], *fixed, *rewired[position:]]
    return draft.merged(replacement, replace(draft.plan, steps=merged_steps))


def run(r: Run, on_start: Callable[[list[str]], None] | None = None) -> str | None:
    """Plan the graph, check conflicts, dispatch ready nodes in parallel, replan failed nodes.

    Nodes run in rounds: every node ready when a round opens starts in it (in parallel, up
    to ``max_workers`` at a time) and the round closes when all of them have finished; then
    their outcomes are taken in plan order (successes first, then each failure: a scoped
    replan, or the end of the run). Which nodes run together, what each one sees and what the
    run decides are then a function of the plan and the outcomes, never of which thread
    finished first (see :meth:`Run.parallel_round`).

    ``on_start`` hears, before they are submitted, the nodes that start at once (two or more
    ready nodes for free workers; the scheduler variant's kernel admits them together)."""
    validate = serialise_conflicts if r.options.check_write_conflicts else None
    draft = r.plan_once(validate=validate)
    done: set[str] = set()
    first_error: str | None = None
    with ThreadPoolExecutor(max_workers=r.options.max_workers, thread_name_prefix="dag") as pool:
        while True:
            ready = _ready(draft, done)
            if not ready:
                return first_error
            starting = [s.id for s in ready[: r.options.max_workers]]
            if on_start is not None and len(starting) > 1:
                on_start(starting)
            with r.parallel_round([s.id for s in ready]):
                futures = [
                    pool.submit(contextvars.copy_context().run, r.execute_step, step, draft)
                    for step in ready
                ]
                outcomes = [f.result() for f in futures]
            failed: list[tuple[str, StepOutcome]] = []
            for step, outcome in zip(ready, outcomes, strict=True):
                if outcome.ok:
                    done.add(step.id)
                elif r.options.continue_on_error:
                    first_error = first_error or f"step {step.id} failed: {outcome.error}"
                    done.add(step.id)
                else:
                    failed.append((step.id, outcome))
            for node, outcome in failed:
                if outcome.budget is not None:
                    return f"retry budget exceeded at step {node}: {outcome.error}"
                if not r.replans_left():
                    return f"step {node} failed and no replan is left: {outcome.error}"
                try:
                    draft = _replan_node(r, draft, node, outcome, done)
                except PlanFormatError as exc:
                    return f"scoped replan of {node} refused: {exc}"


def _ready(draft: PlanDraft, done: set[str]) -> list[PlanStep]:
    """The nodes a round starts: their dependencies are done and no unfinished node produces
    a key they require (the reference to its output holds them back, as LLMCompiler's task
    fetching waits for the tasks an argument names, whether or not the plan has the edge).
    Without that a reader would start beside its producer and never see the value; when the
    keys alone would start nothing (a cycle through them), the edges decide."""
    pending = [s for s in draft.plan.steps if s.id not in done]
    ready = [s for s in pending if all(d in done for d in s.depends_on)]
    produced = {key: s.id for s in pending for key in s.produces}
    fed = [s for s in ready if all(produced.get(k, s.id) == s.id for k in s.requires)]
    return fed or ready


def _replan_node(
    r: Run, draft: PlanDraft, node: str, outcome: StepOutcome, done: set[str]
) -> PlanDraft:
    failure = f"step {node}: {outcome.error}"
    planscope.record_replan_request(outcome.error or "step failed", step_id=node)

    def produce() -> PlanDraft:
        steps = r.ask_planner("replan_scoped", failure=failure, completed=sorted(done), scope=node)
        own = [
            s.model_copy(
                update={"depends_on": [d for d in s.depends_on if d in {t.id for t in steps}]}
            )
            for s in steps
        ]
        return merge_scoped(draft, node, to_draft(own), r.irreversible_done)

    return r.record_plan(produce, reason=failure, scope=node)

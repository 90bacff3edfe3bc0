"""``run_task`` and ``run_suite``: one traced run, or a labelled suite of them."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import planscope
from planscope import RetryBudget, RetryBudgetExceeded

from ._core import ApprovalGate, Counters, PlanRejected, Run, RunOptions
from ._env import Environment, Task
from ._errors import PlanFormatError, UnknownNameError
from ._faults import (
    ExpectedBlame,
    ExpectedFinding,
    Fault,
    applicable_knobs,
    expected_blame,
    expected_findings,
    resolve_faults,
)
from ._models import ChatModel
from ._scripted import ScriptedModel
from .environments import FACTORIES, TASKS, get_task, make_env, tasks_for
from .variants import VARIANTS

SERVICE_NAME = "planscope-runners"


@dataclass(frozen=True)
class RunResult:
    """What one run did, what it cost and what an analyzer should find in its trace."""

    run_id: str
    trace_id: str
    variant: str
    env: str
    task: str
    outcome: str
    reason: str | None
    faults: tuple[Fault, ...]
    expected: tuple[ExpectedFinding, ...]
    negatives: tuple[ExpectedFinding, ...]
    counters: Counters
    wall_time_s: float
    seed: int = 0
    inert: tuple[str, ...] = ()
    """Injected knobs that never took effect (no expected finding comes from them)."""
    blame: ExpectedBlame | None = None
    """Who a failure attribution should blame (host-variant faults), if a fault decides it."""

    @property
    def success(self) -> bool:
        return self.outcome == "success"

    def label(self) -> dict[str, Any]:
        """The ground-truth label (one line of the labels JSONL)."""
        return {
            "trace_id": self.trace_id,
            "run_id": self.run_id,
            "variant": self.variant,
            "env": self.env,
            "task": self.task,
            "seed": self.seed,
            "faults": [f.to_dict() for f in self.faults],
            "inert_faults": list(self.inert),
            "expected_findings": [e.to_dict() for e in self.expected],
            "negative_findings": [e.to_dict() for e in self.negatives],
            "blame": self.blame.to_dict() if self.blame is not None else None,
            "healthy": not self.expected and self.blame is None,
            "outcome": self.outcome,
            "outcome_reason": self.reason,
            "metrics": {**asdict(self.counters), "wall_time_s": round(self.wall_time_s, 4)},
        }


def _models(
    model: str | ChatModel,
    planner: ChatModel | None,
    executor: ChatModel | None,
    seed: int,
) -> tuple[ChatModel, ChatModel]:
    if isinstance(model, str):
        if model != "scripted":
            raise UnknownNameError(
                f"unknown model {model!r}: pass 'scripted' or a ChatModel (e.g. OpenAIChatModel)"
            )
        default_planner: ChatModel = ScriptedModel("scripted-planner", seed=seed)
        default_executor: ChatModel = ScriptedModel("scripted-executor", seed=seed)
    else:
        default_planner = default_executor = model
    return planner or default_planner, executor or default_executor


def run_task(
    variant: str,
    env: str | Environment,
    task: str | Task,
    faults: Sequence[str | Fault] = (),
    model: str | ChatModel = "scripted",
    *,
    planner: ChatModel | None = None,
    executor: ChatModel | None = None,
    approve: ApprovalGate | None = None,
    budget: RetryBudget | None = None,
    seed: int = 0,
    max_workers: int = 4,
    max_depth: int = 5,
) -> RunResult:
    """Run one task with one variant, traced with planscope; returns the result and its label.

    ``faults`` are knob names (resolved against the task with ``seed``) or resolved
    :class:`Fault` objects. ``model`` is ``"scripted"`` or a :class:`ChatModel` for both roles;
    ``planner`` / ``executor`` override per role.

    >>> result = run_task("plan_and_act", "ops", "ops-deploy-api")
    >>> result.outcome
    'success'
    >>> run_task("dag", "files", "files-merge-6", ["flaky_tool"], seed=3).negatives[0].kind
    'runaway_loop'
    """
    if variant not in VARIANTS:
        raise UnknownNameError(f"unknown variant {variant!r}; known: {sorted(VARIANTS)}")
    spec = VARIANTS[variant]
    the_task = get_task(task) if isinstance(task, str) else task
    owned = isinstance(env, str)
    environment = make_env(env) if isinstance(env, str) else env
    if environment.name != the_task.env:
        raise ValueError(f"task {the_task.id} belongs to environment {the_task.env!r}")
    try:
        resolved = tuple(f for f in faults if isinstance(f, Fault)) + resolve_faults(
            [f for f in faults if isinstance(f, str)],
            the_task,
            variant,
            seed=seed,
            tools=environment.tools(),
        )
        knobs = {f.knob for f in resolved}
        run_budget = budget if budget is not None else spec.budget
        if "unbounded_replan" in knobs:
            run_budget = replace(run_budget, max_replans=None, max_attempts_per_step=None)
        plan_model, exec_model = _models(model, planner, executor, seed)
        options = RunOptions(
            planner=plan_model,
            executor=exec_model,
            budget=run_budget,
            approve=approve,
            max_workers=max_workers,
            max_depth=max_depth,
            continue_on_error="irreversible_after_failure" in knobs,
            check_write_conflicts="write_conflict" not in knobs,
            executor_turns=spec.executor_turns,
        )
        environment.reset(the_task)
        return _execute(spec.name, environment, the_task, options, resolved, seed)
    finally:
        if owned:
            environment.close()


def _execute(
    variant: str,
    env: Environment,
    task: Task,
    options: RunOptions,
    faults: tuple[Fault, ...],
    seed: int,
) -> RunResult:
    r = Run(variant, env, task, options, faults)
    started = time.perf_counter()
    reason: str | None = None
    outcome = "failure"
    with planscope.start_run(
        "planscope-reference-agent",
        run_id=r.run_id,
        objective=task.rendered_objective,
        variant=variant,
        budget=options.budget,
        inputs={"task": task.id, "env": env.name, "faults": [f.knob for f in faults]},
    ) as run:
        context = run.span.get_span_context()
        r.trace_id = format(context.trace_id, "032x") if context.trace_id else ""
        try:
            reason = VARIANTS[variant].run(r)
        except PlanRejected as exc:
            reason = f"plan rejected by the reviewer: {exc.reason}"
            run.set_outcome("failure", reason)
        except RetryBudgetExceeded as exc:
            reason = f"retry budget exceeded: {exc}"
        except PlanFormatError as exc:
            reason = f"invalid plan: {exc}"
        if not reason or not reason.startswith("plan rejected"):
            passed = r.check_outcome(reason)
            outcome = "success" if passed and reason is None else "failure"
            if passed and reason is not None:  # the world is right but the agent gave up
                run.set_outcome("failure", reason)
        if outcome == "failure" and reason is None:
            reason = "the success check failed"
    fired = {knob: r.injector.first_step(knob) for knob in r.knobs}
    effective = tuple(f for f in faults if _took_effect(r, f))
    expected, negatives = expected_findings(
        effective,
        task,
        fired_at=lambda k: fired.get(k),
        fired_steps=r.injector.steps,
        cut_off={t: [s for s in steps if s in r.attempted] for t, steps in r.cut_off.items()},
    )
    blame = expected_blame(effective, fired.get, r.assignees, host=r.agent)
    return RunResult(
        run_id=r.run_id,
        trace_id=r.trace_id,
        variant=variant,
        env=env.name,
        task=task.id,
        outcome=outcome,
        reason=reason,
        faults=faults,
        expected=tuple(expected),
        negatives=tuple(negatives),
        counters=r.counters,
        wall_time_s=time.perf_counter() - started,
        seed=seed,
        inert=tuple(f.knob for f in faults if f not in effective),
        blame=blame,
    )


PLANNER_KNOBS = frozenset(
    {"context_starved", "misread_objective", "implicit_dependency", "write_conflict"}
)
"""Faults in a plan step: they exist only if the planner wrote that step. All four are
injected by the runtime, whatever the model: a misread fact in what the planner is told, a
dropped key in the hand-over to the executor, a dropped edge in the plan the planner wrote."""
SCHEDULER_KNOBS = frozenset({"scheduler_starvation", "context_lost_on_switch"})
"""Faults of the central scheduler: they act only if the target competed for a slot."""
REPORTED_KNOBS = SCHEDULER_KNOBS | {"misroute", "app_tool_failure"}
"""Faults that act only when the runtime reports them fired: the scheduler's (the target
competed for a slot), the host's routing (it sent the target to an agent without its tool)
and an application agent's tool (the target action was called)."""


def _took_effect(r: Run, fault: Fault) -> bool:
    """False for a planner-side fault the run never reached: ADaPT's executor may finish the
    task (or the sub-task holding the target) without the planner ever writing the target
    step, or never fail the root the re-split fault needs; and only the scripted planner
    writes these faults at all. Such a run has nothing to find."""
    # Injected by the runtime itself, whatever the model: in what the planner is told (a
    # misread fact) or in the hand-over to the executor (a dropped key). They took effect if a
    # tool received the wrong value, or the step was handed a context without its key.
    if fault.knob == "misread_objective":
        return r.injector.first_step(fault.knob) is not None
    if fault.knob == "context_starved":
        return fault.target in r.starved_handovers
    # The edge existed in a plan the model wrote, the runtime dropped it and the premise held
    # (the reader requires what the producer produces); two writers must also have raced (met
    # inside their calls on the resource, see WriteRace).
    if fault.knob == "implicit_dependency":
        return fault.target in r.dropped_edges and fault.target in r.attempted
    if fault.knob == "write_conflict":
        race = r.injector.race
        return fault.target in r.dropped_edges and race is not None and race.met
    planner_side = fault.knob in PLANNER_KNOBS or fault.knob == "adapt_same_goal"
    if planner_side and not isinstance(r.options.planner, ScriptedModel):
        return False
    if fault.knob == "misroute" and not isinstance(r.options.planner, ScriptedModel):
        return False
    if fault.knob in REPORTED_KNOBS:  # the kernel / the host report when their fault acted
        return r.injector.first_step(fault.knob) is not None
    if fault.knob == "adapt_same_goal":
        return fault.target in r.split_nodes
    if fault.knob in PLANNER_KNOBS:
        return fault.target in r.planned_steps
    return True


# --- suites ---------------------------------------------------------------------------------------
@dataclass
class SuiteResult:
    """The runs of a suite and where their labels went."""

    runs: list[RunResult] = field(default_factory=list)
    labels_path: Path | None = None

    def by_variant(self) -> dict[str, dict[str, float]]:
        """Per variant: runs, success rate, mean tokens / LLM calls / wall time / plans."""
        table: dict[str, dict[str, float]] = {}
        for name in sorted({r.variant for r in self.runs}):
            runs = [r for r in self.runs if r.variant == name]
            n = len(runs)
            table[name] = {
                "runs": n,
                "success_rate": sum(r.success for r in runs) / n,
                "tokens": sum(r.counters.input_tokens + r.counters.output_tokens for r in runs) / n,
                "llm_calls": sum(r.counters.llm_calls for r in runs) / n,
                "wall_time_s": sum(r.wall_time_s for r in runs) / n,
                "plans": sum(r.counters.plans for r in runs) / n,
                "replans": sum(r.counters.replans for r in runs) / n,
            }
        return table


def plan_suite(
    n_runs: int,
    fault_rate: float,
    seed: int,
    variants: Sequence[str] | None = None,
    envs: Sequence[str] | None = None,
) -> list[tuple[str, str, str, tuple[str, ...], int]]:
    """The (variant, env, task, knobs, seed) of every run of a suite (deterministic).

    >>> plan_suite(3, 0.0, 1, ["dag"], ["ops"])[0][:2]
    ('dag', 'ops')
    """
    if not 0.0 <= fault_rate <= 1.0:
        raise ValueError(f"fault_rate must be within [0, 1], got {fault_rate}")
    chosen_variants = list(variants or VARIANTS)
    chosen_envs = list(envs or FACTORIES)
    for v in chosen_variants:
        if v not in VARIANTS:
            raise UnknownNameError(f"unknown variant {v!r}; known: {sorted(VARIANTS)}")
    tools = {name: make_env(name).tools() for name in chosen_envs}
    rng = random.Random(seed)
    plan = []
    for i in range(n_runs):
        variant = chosen_variants[i % len(chosen_variants)]
        env = rng.choice(chosen_envs)
        task = rng.choice(tasks_for(env))
        knobs: tuple[str, ...] = ()
        if rng.random() < fault_rate:
            options = applicable_knobs(task, variant, tools[env])
            if options:
                knobs = (rng.choice(options),)
        plan.append((variant, env, task.id, knobs, seed * 100_003 + i))
    return plan


def run_suite(
    n_runs: int = 100,
    fault_rate: float = 0.3,
    seed: int = 0,
    variants: Sequence[str] | None = None,
    envs: Sequence[str] | None = None,
    endpoint: str | None = None,
    labels_path: str | Path | None = None,
    *,
    model: str | ChatModel = "scripted",
    planner: ChatModel | None = None,
    executor: ChatModel | None = None,
    service_name: str = SERVICE_NAME,
    progress: Callable[[int, int, RunResult], None] | None = None,
) -> SuiteResult:
    """Run ``n_runs`` tasks (variants round-robin, envs and tasks drawn with ``seed``), a
    ``fault_rate`` share of them with one fault; write one label per run to ``labels_path``.

    With ``endpoint`` spans go to that collector (``planscope.configure``) and are flushed at
    the end. ``model`` serves both roles; ``planner`` / ``executor`` override per role.

    >>> suite = run_suite(10, fault_rate=0.3, seed=1, labels_path="/tmp/labels.jsonl")
    >>> len(suite.runs)
    10
    """
    handle = None
    if endpoint is not None:
        handle = planscope.configure(endpoint=endpoint, service_name=service_name)
    result = SuiteResult(labels_path=Path(labels_path) if labels_path is not None else None)
    envs_cache: dict[str, Environment] = {}
    out = None
    try:
        if result.labels_path is not None:
            result.labels_path.parent.mkdir(parents=True, exist_ok=True)
            out = result.labels_path.open("w", encoding="utf-8")
        planned = plan_suite(n_runs, fault_rate, seed, variants, envs)
        for i, (variant, env_name, task_id, knobs, run_seed) in enumerate(planned, start=1):
            env = envs_cache.get(env_name) or envs_cache.setdefault(env_name, make_env(env_name))
            run = run_task(
                variant,
                env,
                TASKS[task_id],
                knobs,
                model,
                planner=planner,
                executor=executor,
                seed=run_seed,
            )
            result.runs.append(run)
            if out is not None:
                out.write(json.dumps(run.label(), default=str) + "\n")
                out.flush()
            if progress is not None:
                progress(i, len(planned), run)
    finally:
        if out is not None:
            out.close()
        for env in envs_cache.values():
            env.close()
        if handle is not None:
            handle.force_flush()
    return result


def load_labels(path: str | Path) -> list[Mapping[str, Any]]:
    """Read a labels JSONL file."""
    with Path(path).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]

"""Fault injection with ground truth: knobs that produce each failure mode, and their labels.

A knob is resolved against a task into a :class:`Fault` (which step it targets and how). Four
parts of the system read faults: the tool injector (a tool that fails), the runtime (a wrong
fact in what the planner is told, a key dropped from an executor's hand-over, an edge dropped
from the plan any model wrote), the scripted planner (the faults that are a planner's own
behaviour: a re-split goal, a stale value, a malformed script) and the runtime's policy (skip
the write-conflict check, continue after a failure, no replan limit). The injector also holds
the point where an injected write conflict's two writers meet (:class:`WriteRace`), so the
race it labels happens whatever the threads' timing. :func:`expected_findings`
turns the faults of a run into the findings an analyzer should report (and the ones it must
not).

Finding kinds and who is blamed (``component``):

==========================  =================  ================================================
kind                        component          produced by
==========================  =================  ================================================
runaway_loop                the failing tool   loop_same_error, loop_unchanged_inputs
context_starved             planner            context_starved
plan_propagation            planner            misread_objective, adapt_same_goal
implicit_dependency         planner            implicit_dependency
write_conflict              planner            write_conflict
irreversible_after_failure  the step executor  irreversible_after_failure
unbounded_replan            planner            unbounded_replan
scheduler_starvation        scheduler          scheduler_starvation
context_lost                scheduler          context_lost_on_switch
==========================  =================  ================================================

``flaky_tool``, ``needs_replan`` and ``malformed_script`` are healthy recoveries: they label
*negative* findings (a loop / replan detector must stay quiet on them).

The host variant's knobs label who is to blame for the failed run (:class:`ExpectedBlame`,
for failure attribution) rather than a detector finding: ``misroute`` blames the host agent's
routing, ``app_tool_failure`` the application agent's execution, both at the sub-task that
failed.
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from planscope import semconv

from ._apps import application_of, applications
from ._env import IRREVERSIBLE, WRITE, StepSpec, Task, Tool, bind_facts, references, resolve_args
from ._errors import FaultNotApplicable, ToolError, UnknownNameError

RUNAWAY_LOOP = semconv.FINDING_RUNAWAY_LOOP
CONTEXT_STARVED = semconv.FINDING_CONTEXT_STARVED
PLAN_PROPAGATION = semconv.FINDING_PLAN_PROPAGATION
IMPLICIT_DEPENDENCY = semconv.FINDING_IMPLICIT_DEPENDENCY
WRITE_CONFLICT = semconv.FINDING_WRITE_CONFLICT
IRREVERSIBLE_AFTER_FAILURE = semconv.FINDING_IRREVERSIBLE_AFTER_FAILURE
UNBOUNDED_REPLAN = semconv.FINDING_UNBOUNDED_REPLAN
SCHEDULER_STARVATION = semconv.FINDING_SCHEDULER_STARVATION
CONTEXT_LOST = semconv.FINDING_CONTEXT_LOST
FINDING_KINDS = semconv.LABELED_FINDING_KINDS

PLANNED = ("plan_and_act", "scripts", "dag")
ALL_VARIANTS = ("plan_and_act", "adapt", "scripts", "dag", "react", "scheduler", "host")


@dataclass(frozen=True)
class Fault:
    """One injected fault: the knob, the ground-truth step it targets and its parameters."""

    knob: str
    target: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"knob": self.knob, "target": self.target, "params": dict(self.params)}


@dataclass(frozen=True)
class ExpectedFinding:
    """A finding an analyzer should (or, in ``negatives``, must not) report for a run."""

    kind: str
    component: str
    step_id: str
    detail: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "component": self.component,
            "step_id": self.step_id,
            "detail": dict(self.detail),
        }


@dataclass(frozen=True)
class ExpectedBlame:
    """Who a failure attribution should blame for a failed run: the agent and the plan step,
    and whether the cause was the host's ``routing`` or the agent's ``execution``."""

    component: str
    step_id: str
    cause: str

    def to_dict(self) -> dict[str, Any]:
        return {"component": self.component, "step_id": self.step_id, "cause": self.cause}


@dataclass(frozen=True)
class Knob:
    """A fault knob: where it applies and how it picks its target in a task."""

    name: str
    description: str
    variants: tuple[str, ...]
    pick: Callable[[Task, random.Random, Mapping[str, Tool] | None], Fault | None]


# --- target selection -------------------------------------------------------------------------
def _static_resource(task: Task, step: StepSpec, tools: Mapping[str, Tool] | None) -> str | None:
    """The resource a step writes, from its arguments resolved with the facts only."""
    if tools is None or step.tool not in tools:
        return None
    tool = tools[step.tool]
    if tool.effect not in (WRITE, IRREVERSIBLE):
        return None
    return tool.resource(bind_facts(step.args, task.facts))


def _ancestors(task: Task, step_id: str, skip_edge: tuple[str, str] | None = None) -> set[str]:
    seen: set[str] = set()
    stack = [step_id]
    while stack:
        current = task.step(stack.pop())
        for dep in current.depends_on:
            if skip_edge == (dep, current.id) or dep in seen:
                continue
            seen.add(dep)
            stack.append(dep)
    return seen


def _pick_any(task: Task, rng: random.Random, knob: str, **params: Any) -> Fault:
    candidates = [s for s in task.steps if not _is_irreversible_tool(s)] or list(task.steps)
    return Fault(knob, rng.choice(candidates).id, params)


_IRREVERSIBLE_TOOLS = {"deploy", "issue_refund", "send_email", "delete_file"}
"""Irreversible tools of the bundled environments (used when no tool table is given)."""


def _is_irreversible_tool(step: StepSpec, tools: Mapping[str, Tool] | None = None) -> bool:
    if tools is not None and step.tool in tools:
        return tools[step.tool].effect == IRREVERSIBLE
    return step.tool in _IRREVERSIBLE_TOOLS


def _has_effect(step: StepSpec, tools: Mapping[str, Tool] | None) -> bool:
    """True when the step changes state (write or irreversible), or when unknown."""
    if tools is None or step.tool not in tools:
        return True
    return tools[step.tool].effect in (WRITE, IRREVERSIBLE)


def _pick_loop_same(
    task: Task, rng: random.Random, tools: Mapping[str, Tool] | None = None
) -> Fault:
    return _pick_any(task, rng, "loop_same_error")


def _pick_loop_inputs(
    task: Task, rng: random.Random, tools: Mapping[str, Tool] | None = None
) -> Fault:
    return _pick_any(task, rng, "loop_unchanged_inputs")


def _pick_flaky(task: Task, rng: random.Random, tools: Mapping[str, Tool] | None = None) -> Fault:
    return _pick_any(task, rng, "flaky_tool", failures=rng.choice([1, 2]))


def _fact_steps(task: Task, tools: Mapping[str, Tool] | None = None) -> list[StepSpec]:
    """Steps that use a misreadable fact and change state (a wrong value shows in the outcome)."""
    return [
        s
        for s in task.order()
        if any(f in task.misread for f in s.fact_refs) and _has_effect(s, tools)
    ]


def _pick_context_starved(
    task: Task, rng: random.Random, tools: Mapping[str, Tool] | None = None
) -> Fault | None:
    steps = _fact_steps(task, tools)
    if not steps:
        return None
    step = rng.choice(steps)
    fact = rng.choice([f for f in step.fact_refs if f in task.misread])
    return Fault("context_starved", step.id, {"fact": fact})


def _pick_misread(
    task: Task, rng: random.Random, tools: Mapping[str, Tool] | None = None
) -> Fault | None:
    facts = sorted({f for s in _fact_steps(task, tools) for f in s.fact_refs if f in task.misread})
    if not facts:
        return None
    fact = rng.choice(facts)
    first = next(s for s in task.order() if fact in s.fact_refs)
    return Fault("misread_objective", first.id, {"fact": fact, "wrong": task.misread[fact]})


def _pick_needs_replan(
    task: Task, rng: random.Random, tools: Mapping[str, Tool] | None = None
) -> Fault | None:
    steps = [s for s in _fact_steps(task, tools) if not _is_irreversible_tool(s, tools)]
    steps = steps or _fact_steps(task, tools)
    if not steps:
        return None
    step = rng.choice(steps)
    fact = rng.choice([f for f in step.fact_refs if f in task.misread])
    return Fault("needs_replan", step.id, {"fact": fact, "wrong": task.misread[fact]})


def _pick_adapt_same_goal(
    task: Task, rng: random.Random, tools: Mapping[str, Tool] | None = None
) -> Fault:
    return Fault("adapt_same_goal", "root")


def implicit_dependency_candidates(task: Task) -> list[tuple[str, str, str]]:
    """(reader, producer, key) triples whose edge can be dropped while a sequential executor
    still runs the producer first."""
    found = []
    for step in task.steps:
        for ref in step.requires:
            producer = task.producer_of(ref)
            if producer is None or producer.id not in step.depends_on:
                continue
            if producer.id in _ancestors(task, step.id, skip_edge=(producer.id, step.id)):
                continue
            order = _order_without(task, (producer.id, step.id))
            if order.index(producer.id) < order.index(step.id):
                found.append((step.id, producer.id, ref))
    return found


def _order_without(task: Task, edge: tuple[str, str]) -> list[str]:
    """Plan order after dropping an edge (ties by position, as planscope.Plan orders them)."""
    deps = {s.id: [d for d in s.depends_on if (d, s.id) != edge] for s in task.steps}
    done: list[str] = []
    while len(done) < len(deps):
        ready = [
            s.id for s in task.steps if s.id not in done and all(d in done for d in deps[s.id])
        ]
        done.append(ready[0])
    return done


def _pick_implicit(
    task: Task, rng: random.Random, tools: Mapping[str, Tool] | None = None
) -> Fault | None:
    candidates = implicit_dependency_candidates(task)
    if not candidates:
        return None
    reader, producer, key = rng.choice(candidates)
    return Fault("implicit_dependency", reader, {"producer": producer, "key": key})


def write_conflict_candidates(
    task: Task, tools: Mapping[str, Tool] | None
) -> list[tuple[str, str, str]]:
    """(second, first, resource): two writers of one resource ordered only by a direct edge."""
    found = []
    for step in task.steps:
        res = _static_resource(task, step, tools)
        if res is None:
            continue
        for dep in step.depends_on:
            if _static_resource(task, task.step(dep), tools) != res:
                continue
            if dep not in _ancestors(task, step.id, skip_edge=(dep, step.id)):
                found.append((step.id, dep, res))
    return found


def _irreversible_candidates(
    task: Task, tools: Mapping[str, Tool] | None = None
) -> list[tuple[str, str]]:
    order = [s.id for s in task.order()]
    found = []
    for step in task.steps:
        if not _is_irreversible_tool(step, tools):
            continue
        before = [
            sid
            for sid in order[: order.index(step.id)]
            if not _is_irreversible_tool(task.step(sid), tools)
        ]
        if before:
            found.append((step.id, before[-1]))
    return found


def _pick_irreversible(
    task: Task, rng: random.Random, tools: Mapping[str, Tool] | None = None
) -> Fault | None:
    candidates = _irreversible_candidates(task, tools)
    if not candidates:
        return None
    step, failing = rng.choice(candidates)
    return Fault("irreversible_after_failure", step, {"failing_step": failing})


def _pick_unbounded(
    task: Task, rng: random.Random, tools: Mapping[str, Tool] | None = None
) -> Fault:
    return _pick_any(task, rng, "unbounded_replan")


def _pick_malformed(
    task: Task, rng: random.Random, tools: Mapping[str, Tool] | None = None
) -> Fault:
    return Fault("malformed_script", task.steps[0].id)


def _pick_write_conflict(
    task: Task, rng: random.Random, tools: Mapping[str, Tool] | None = None
) -> Fault | None:
    candidates = write_conflict_candidates(task, tools)
    if not candidates:
        return None
    second, first, resource = rng.choice(candidates)
    return Fault("write_conflict", second, {"other": first, "resource": resource})


def _pick_concurrent(knob: str, peers: int) -> Callable[..., Fault | None]:
    """A step in a wave of at least ``peers`` + 1 steps that become ready together (same
    dependency depth), so parallel executors make it compete for model slots."""

    def pick(
        task: Task, rng: random.Random, tools: Mapping[str, Tool] | None = None
    ) -> Fault | None:
        level: dict[str, int] = {}
        for step in task.order():
            level[step.id] = 1 + max((level[d] for d in step.depends_on), default=-1)
        waves: dict[int, list[str]] = {}
        for step_id, depth in level.items():
            waves.setdefault(depth, []).append(step_id)
        candidates = [s for wave in waves.values() if len(wave) > peers for s in wave[1:]]
        return Fault(knob, rng.choice(candidates)) if candidates else None

    return pick


def _pick_misroute(
    task: Task, rng: random.Random, tools: Mapping[str, Tool] | None = None
) -> Fault | None:
    """A step and an application whose agent lacks the step's tool."""
    apps = applications(task.env, tools if tools is not None else [s.tool for s in task.steps])
    candidates = [
        (s.id, a.name)
        for s in task.steps
        if application_of(apps, s.tool) is not None
        for a in apps
        if s.tool not in a.tools
    ]
    if not candidates:
        return None
    step, wrong = rng.choice(candidates)
    return Fault("misroute", step, {"wrong_app": wrong})


def _pick_app_tool_failure(
    task: Task, rng: random.Random, tools: Mapping[str, Tool] | None = None
) -> Fault:
    return _pick_any(task, rng, "app_tool_failure")


KNOBS: dict[str, Knob] = {
    k.name: k
    for k in (
        Knob(
            "loop_same_error",
            "a tool fails the same way on every attempt (same error, same "
            "args): a runaway recovery loop the retry budget stops",
            ALL_VARIANTS,
            _pick_loop_same,
        ),
        Knob(
            "loop_unchanged_inputs",
            "a step is retried with unchanged inputs while its tool fails with varying errors",
            ALL_VARIANTS,
            _pick_loop_inputs,
        ),
        Knob(
            "flaky_tool",
            "a tool fails 1-2 times then succeeds within budget (healthy; negative for loops)",
            ALL_VARIANTS,
            _pick_flaky,
        ),
        Knob(
            "context_starved",
            "the planner binds a constraint it knows but leaves it out of "
            "the step's scoped context; the executor guesses",
            ("plan_and_act", "adapt", "dag"),
            _pick_context_starved,
        ),
        Knob(
            "misread_objective",
            "the planner misreads one fact of the objective; every step "
            "succeeds, the outcome check fails",
            ("plan_and_act", "adapt", "scripts", "dag"),
            _pick_misread,
        ),
        Knob(
            "adapt_same_goal",
            "ADaPT's planner re-splits the same goal at every depth until the maximum depth",
            ("adapt",),
            _pick_adapt_same_goal,
        ),
        Knob(
            "implicit_dependency",
            "the planner drops a depends_on edge; the step still reads "
            "what the other step produced (planning scripts reject this statically)",
            ("plan_and_act", "dag"),
            _pick_implicit,
        ),
        Knob(
            "write_conflict",
            "the planner drops the edge serialising two writers of one "
            "resource and its conflict check is off; parallel executors race",
            ("dag",),
            _pick_write_conflict,
        ),
        Knob(
            "irreversible_after_failure",
            "a step fails and the runtime continues into an irreversible action",
            PLANNED,
            _pick_irreversible,
        ),
        Knob(
            "unbounded_replan",
            "a step fails permanently, the planner keeps producing the same "
            "plan and no replan limit is configured",
            PLANNED,
            _pick_unbounded,
        ),
        Knob(
            "needs_replan",
            "the first plan binds a stale value that a tool rejects; one replan fixes it (healthy)",
            ("plan_and_act", "adapt", "scripts", "dag"),
            _pick_needs_replan,
        ),
        Knob(
            "malformed_script",
            "the first planning script is malformed and rejected before "
            "anything runs; the planner repairs it (healthy)",
            ("scripts",),
            _pick_malformed,
        ),
        Knob(
            "scheduler_starvation",
            "the central scheduler passes over one step's model requests while any other "
            "request waits (a priority rule gone wrong)",
            ("scheduler",),
            _pick_concurrent("scheduler_starvation", 2),
        ),
        Knob(
            "context_lost_on_switch",
            "a step's model request is preempted and its saved context comes back without "
            "the conversation; the executor continues blind",
            ("scheduler",),
            _pick_concurrent("context_lost_on_switch", 1),
        ),
        Knob(
            "misroute",
            "the host agent routes a sub-task to an application agent without the tools for "
            "it, and routes it there again when it re-plans",
            ("host",),
            _pick_misroute,
        ),
        Knob(
            "app_tool_failure",
            "an application agent's tool refuses one action for good (its session lost the "
            "permission); the sub-task fails however it is routed",
            ("host",),
            _pick_app_tool_failure,
        ),
    )
}


def resolve_faults(
    knobs: Sequence[str],
    task: Task,
    variant: str,
    *,
    seed: int = 0,
    tools: Mapping[str, Tool] | None = None,
) -> tuple[Fault, ...]:
    """Resolve knob names into faults targeting ``task`` (deterministic for a seed).

    Raises UnknownNameError for unknown knobs and FaultNotApplicable when a knob does not apply
    to the variant or the task.

    >>> from planscope_runners.environments import get_task
    >>> resolve_faults(["flaky_tool"], get_task("ops-deploy-api"), "dag", seed=1)[0].knob
    'flaky_tool'
    """
    rng = random.Random(f"{seed}:{task.id}:{variant}")
    faults = []
    for name in knobs:
        knob = KNOBS.get(name)
        if knob is None:
            raise UnknownNameError(f"unknown fault {name!r}; known: {sorted(KNOBS)}")
        if variant not in knob.variants:
            raise FaultNotApplicable(
                f"fault {name!r} does not apply to variant {variant!r}; "
                f"it applies to {', '.join(sorted(knob.variants))}"
            )
        fault = knob.pick(task, rng, tools)
        if fault is None:
            applicable = ", ".join(applicable_knobs(task, variant, tools)) or "none"
            raise FaultNotApplicable(
                f"fault {name!r} has no target in task {task.id!r}; "
                f"faults that apply to it in {variant}: {applicable}"
            )
        faults.append(fault)
    return tuple(faults)


def applicable_knobs(task: Task, variant: str, tools: Mapping[str, Tool] | None) -> list[str]:
    """The knobs that can target this task in this variant."""
    names = []
    for name, knob in KNOBS.items():
        if variant not in knob.variants:
            continue
        if knob.pick(task, random.Random(0), tools) is not None:
            names.append(name)
    return names


# --- the injector ------------------------------------------------------------------------------
_VARYING = (
    "upstream timeout",
    "connection reset by peer",
    "upstream returned malformed JSON",
    "TLS handshake failed",
    "gateway closed the stream",
)


class ToolInjector:
    """Decides, before each tool call, whether an injected fault makes it fail.

    A fault targets an *action* (the target step's tool with its fact-resolved arguments), so it
    fires whichever variant or step id performs it. ``fired`` records (step id, knob) pairs.
    """

    def __init__(self, task: Task, faults: Sequence[Fault]) -> None:
        self.task = task
        self.faults = [f for f in faults if f.knob in _TOOL_KNOBS]
        self.misread = [f for f in faults if f.knob == "misread_objective"]
        """Observed, not raised: a misread fact took effect where a tool got its wrong value."""
        self.calls: dict[str, int] = {}
        self.fired: list[tuple[str, str]] = []
        self._round: dict[str, _Pending] | None = None
        """Step id -> what it did this round, while a parallel round is open (see
        :meth:`open_round`)."""
        self._lock = threading.Lock()
        conflict = next((f for f in faults if f.knob == "write_conflict"), None)
        self.race = WriteRace(conflict) if conflict is not None else None
        """The injected write conflict's meeting point (armed by the runtime once it dropped
        the edge between the writers and they can run in parallel)."""

    def _matches(self, fault: Fault, tool: str, args: Mapping[str, Any]) -> bool:
        target_id = fault.params.get("failing_step", fault.target)
        step = self.task.step(target_id)
        if step.tool != tool:
            return False
        facts = dict(self.task.facts)
        if fault.knob == "needs_replan":
            facts[fault.params["fact"]] = fault.params["wrong"]
        for name, template in step.args.items():
            if isinstance(template, str) and any(
                r not in self.task.facts for r in references(template)
            ):
                continue  # depends on a produced value: any value matches
            if args.get(name) != resolve_args({name: template}, facts)[name]:
                return False
        return True

    def before_call(self, step_id: str, tool: str, args: Mapping[str, Any]) -> None:
        """Raise the injected ToolError for this call, if any (and note where a misread
        fact's wrong value reached a tool)."""
        for fault in self.misread:
            wrong = str(fault.params["wrong"])
            if any(wrong in str(v) for v in args.values()):
                self.note(step_id, fault.knob)
        for fault in self.faults:
            if not self._matches(fault, tool, args):
                continue
            n = self._count(step_id, fault.knob)
            if fault.knob == "loop_same_error":
                raise ToolError(f"{tool}: 503 service unavailable", retryable=True)
            if fault.knob == "loop_unchanged_inputs":
                raise ToolError(f"{tool}: {_VARYING[(n - 1) % len(_VARYING)]}", retryable=True)
            if fault.knob == "flaky_tool" and n <= int(fault.params.get("failures", 1)):
                raise ToolError(f"{tool}: connection reset by peer", retryable=True)
            if fault.knob in ("irreversible_after_failure", "unbounded_replan"):
                raise ToolError(f"{tool}: permission denied for this service account")
            if fault.knob == "app_tool_failure":
                raise ToolError(f"{tool}: the application session lost its permission")
            if fault.knob == "needs_replan":
                raise ToolError(
                    f"{tool}: {fault.params['fact']}={fault.params['wrong']!r} is not valid "
                    "for this request (stale value?)"
                )

    def note(self, step_id: str, knob: str) -> None:
        """Record that ``knob`` acted at ``step_id`` (the kernel and the host report theirs)."""
        with self._lock:
            pending = self._round.get(step_id) if self._round is not None else None
            (pending.fired if pending is not None else self.fired).append((step_id, knob))

    def _count(self, step_id: str, knob: str) -> int:
        """Note a matching call and return its number: the run's calls before the round plus
        this step's own in it (parallel steps do not see each other's calls)."""
        self.note(step_id, knob)
        with self._lock:
            pending = self._round.get(step_id) if self._round is not None else None
            if pending is None:
                n = self.calls[knob] = self.calls.get(knob, 0) + 1
                return n
            pending.calls[knob] = pending.calls.get(knob, 0) + 1
            return self.calls.get(knob, 0) + pending.calls[knob]

    def open_round(self, step_ids: Sequence[str]) -> None:
        """Steps start together: until :meth:`commit_round` each one's calls and firings are
        kept apart, so what a fault does to one of them does not depend on how the threads
        interleave. The write race is armed only for writers that start together.

        >>> from planscope_runners.environments import get_task
        >>> injector = ToolInjector(get_task("ops-deploy-api"), [])
        >>> injector.open_round(["a", "b"]); injector.note("b", "k"); injector.note("a", "k")
        >>> injector.fired
        []
        >>> injector.commit_round(); injector.fired
        [('a', 'k'), ('b', 'k')]
        """
        with self._lock:
            self._round = {s: _Pending() for s in step_ids}
        if self.race is not None:
            self.race.together = self.race.writers <= set(step_ids)

    def commit_round(self) -> None:
        """Close the round: its steps' calls and firings join the run's, in the order the
        round listed the steps (plan order), whatever order their threads finished in."""
        with self._lock:
            pending, self._round = self._round or {}, None
            for step in pending.values():
                self.fired += step.fired
                for knob, n in step.calls.items():
                    self.calls[knob] = self.calls.get(knob, 0) + n
        if self.race is not None:
            self.race.together = False

    def meeting(self, step_id: str, resource: str) -> Callable[[], None] | None:
        """The meeting with the other writer a write call of ``step_id`` on ``resource`` must
        keep (an armed write conflict whose writers started together, see :class:`WriteRace`),
        or None."""
        race = self.race
        if race is None or not race.armed or not race.together:
            return None
        return race.meeting(step_id, resource)

    def first_step(self, knob: str) -> str | None:
        """The step id where a knob first fired."""
        return next((s for s, k in self.fired if k == knob), None)

    def steps(self, knob: str) -> list[str]:
        """Every step id where a knob fired, in order (a fault on an action fires at every
        step that performs it: parallel steps calling the same tool all loop)."""
        return list(dict.fromkeys(s for s, k in self.fired if k == knob))


@dataclass
class _Pending:
    """One step's matching calls and firings in an open round, not yet the run's."""

    calls: dict[str, int] = field(default_factory=dict)
    fired: list[tuple[str, str]] = field(default_factory=list)


RACE_TIMEOUT_S = 60.0
"""How long a racing writer waits for the other at the meeting point before it writes alone:
a safety net only (both writers started in the same round, so the other one comes unless its
attempt ends first, which breaks the barrier at once)."""


class WriteRace:
    """The two writers of an injected write conflict meet inside their calls on the resource,
    so the race happens whatever the threads' timing (a loaded machine may otherwise run them
    one after the other: no race, nothing to label). A read-modify-write meets the other
    between its read and its write, so both read before either writes and one update is lost;
    a plain write meets it after writing, still inside its call, so the calls overlap.

    Each writer meets the other once (in its first write call on the resource), and only when
    both started in the same parallel round (``together``). The barrier breaks when a writer's
    attempt ends without meeting (it failed first, or wrote elsewhere): the waiting writer goes
    on alone. ``met`` says whether the two met, the fact the label rests on (not whether the
    attempts happened to overlap on the clock).

    >>> race = WriteRace(Fault("write_conflict", "b", {"other": "a", "resource": "t:{$x.id}"}))
    >>> race.meeting("c", "t:1") is None, race.meeting("a", "u:1") is None
    (True, True)
    >>> race.meeting("a", "t:1") is not None, race.meeting("a", "t:1") is None
    (True, True)
    """

    def __init__(self, fault: Fault) -> None:
        self.writers = {fault.target, str(fault.params["other"])}
        # the task's resource is a template where it names a produced value ({$key.field})
        parts = re.split(r"\{[^}]*\}", str(fault.params["resource"]))
        self._resource = re.compile(".+".join(re.escape(p) for p in parts))
        self.armed = False
        self.together = False
        self.met = False
        self._barrier = threading.Barrier(2, timeout=RACE_TIMEOUT_S)
        self._met: set[str] = set()
        self._lock = threading.Lock()

    def meeting(self, step_id: str, resource: str) -> Callable[[], None] | None:
        """The wait for the other writer, for a writer's first write call on the resource
        (calling it again is a no-op); None for any other call."""
        if step_id not in self.writers or not self._resource.fullmatch(resource):
            return None
        with self._lock:
            if step_id in self._met:
                return None
            self._met.add(step_id)
        met = False

        def meet() -> None:
            nonlocal met
            if met:
                return
            met = True
            with suppress(threading.BrokenBarrierError):  # the other is not coming: go on alone
                self._barrier.wait()
                self.met = True

        return meet

    def attempt_ended(self, step_id: str) -> None:
        """A writer's attempt ended: the other must not wait for it any longer."""
        if step_id in self.writers:
            self._barrier.abort()


_TOOL_KNOBS = {
    "loop_same_error",
    "loop_unchanged_inputs",
    "flaky_tool",
    "irreversible_after_failure",
    "unbounded_replan",
    "needs_replan",
    "app_tool_failure",
}


# --- labels ------------------------------------------------------------------------------------
def expected_findings(
    faults: Sequence[Fault],
    task: Task,
    *,
    fired_at: Callable[[str], str | None] = lambda knob: None,
    fired_steps: Callable[[str], Sequence[str]] = lambda knob: (),
    cut_off: Mapping[str, Sequence[str]] | None = None,
) -> tuple[list[ExpectedFinding], list[ExpectedFinding]]:
    """(expected, negatives) findings for a run with these faults.

    ``fired_at(knob)`` maps a tool knob to the step id where it fired (ReAct's iterations);
    by default the ground-truth step id is used. ``fired_steps(knob)`` lists every step where
    it fired: a loop fault that took effect at several plan steps of the task (parallel steps
    performing the same action) labels a loop at each of them. ``cut_off`` maps the target of a
    dropped dependency to the other readers of its key the drop cut off from the producer
    (they depended on the target only): each is an implicit dependency too.
    """
    expected: list[ExpectedFinding] = []
    negatives: list[ExpectedFinding] = []
    for f in faults:
        step = fired_at(f.knob) or f.target
        gt = task.step(f.target) if f.target in {s.id for s in task.steps} else None
        if f.knob in ("loop_same_error", "loop_unchanged_inputs"):
            signal = "same_error" if f.knob == "loop_same_error" else "same_inputs"
            assert gt is not None
            plan_steps = {s.id for s in task.steps}
            others = [s for s in fired_steps(f.knob) if s in plan_steps and s != step]
            for at in [step, *others]:
                expected.append(
                    ExpectedFinding(RUNAWAY_LOOP, gt.tool, at, {"signal": signal, "tool": gt.tool})
                )
        elif f.knob == "flaky_tool":
            assert gt is not None
            negatives.append(ExpectedFinding(RUNAWAY_LOOP, gt.tool, step, {"tool": gt.tool}))
        elif f.knob == "context_starved":
            assert gt is not None
            expected.append(
                ExpectedFinding(
                    CONTEXT_STARVED,
                    "planner",
                    f.target,
                    {"missing_keys": [f.params["fact"]], "executor": gt.executor},
                )
            )
        elif f.knob == "misread_objective":
            # Where the wrong value first reached a tool (the target when the plan followed
            # the task's steps; any planner model's own step otherwise).
            entered = fired_steps(f.knob)
            expected.append(
                ExpectedFinding(
                    PLAN_PROPAGATION,
                    "planner",
                    f.target if f.target in entered or not entered else entered[0],
                    {"pattern": "misread_objective", "fact": f.params["fact"]},
                )
            )
        elif f.knob == "adapt_same_goal":
            expected.append(
                ExpectedFinding(
                    PLAN_PROPAGATION, "planner", "root", {"pattern": "recursive_same_goal"}
                )
            )
        elif f.knob == "implicit_dependency":
            for at in [f.target, *sorted((cut_off or {}).get(f.target, ()))]:
                expected.append(ExpectedFinding(IMPLICIT_DEPENDENCY, "planner", at, dict(f.params)))
        elif f.knob == "write_conflict":
            expected.append(ExpectedFinding(WRITE_CONFLICT, "planner", f.target, dict(f.params)))
        elif f.knob == "irreversible_after_failure":
            assert gt is not None
            expected.append(
                ExpectedFinding(IRREVERSIBLE_AFTER_FAILURE, gt.executor, f.target, dict(f.params))
            )
        elif f.knob == "unbounded_replan":
            expected.append(ExpectedFinding(UNBOUNDED_REPLAN, "planner", step))
        elif f.knob == "needs_replan":
            negatives.append(ExpectedFinding(UNBOUNDED_REPLAN, "planner", step))
            assert gt is not None
            negatives.append(ExpectedFinding(RUNAWAY_LOOP, gt.tool, step))
        elif f.knob == "malformed_script":
            negatives.append(ExpectedFinding(UNBOUNDED_REPLAN, "planner", f.target))
        elif f.knob == "scheduler_starvation":
            expected.append(ExpectedFinding(SCHEDULER_STARVATION, "scheduler", f.target))
        elif f.knob == "context_lost_on_switch":
            expected.append(ExpectedFinding(CONTEXT_LOST, "scheduler", f.target))
    return expected, negatives


def expected_blame(
    faults: Sequence[Fault],
    fired_at: Callable[[str], str | None],
    assignees: Mapping[str, str],
    host: str,
) -> ExpectedBlame | None:
    """Who to blame for a host-variant run: the host at the misrouted sub-task, or the agent
    assigned the sub-task whose tool failed (``fired_at``: knob -> sub-task step id)."""
    for f in faults:
        step = fired_at(f.knob)
        if step is None:
            continue
        if f.knob == "misroute":
            return ExpectedBlame(host, step, "routing")
        if f.knob == "app_tool_failure":
            return ExpectedBlame(assignees.get(step, "executor"), step, "execution")
    return None

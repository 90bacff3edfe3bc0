"""The core every variant shares: LLM calls, planning with the approval gate, the executor loop
with retries under the retry budget, scoped context, tool dispatch and the outcome check.

Each piece opens the planscope span it stands for, so any variant built on :class:`Run` is
traced the same way: run → plan (with its LLM call) → step attempt (with the executor's LLM call
and its tool calls). Every executor action happens inside a step span of a plan step.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Union

import planscope
from planscope import Plan, PlanStep, RetryBudget, RetryBudgetExceeded
from planscope import semconv as A

from . import _prompts as prompts
from ._env import READ, Environment, Task, Tool, interleave, resolve_args
from ._errors import ToolError
from ._faults import Fault, ToolInjector
from ._ir import PlanDraft, StepIR, parse_steps, to_draft
from ._models import ChatModel, ChatRequest, ChatResponse, Message, ToolCall

AGENT = "planscope-reference-agent"
DEFAULT_BUDGET = RetryBudget(
    max_attempts_per_step=4, max_attempts_per_run=120, max_replans=3, enforce=True
)
HARD_ATTEMPT_CAP = 12
"""Attempts of one step when the budget does not limit them (a runtime safety net)."""
HARD_REPLAN_CAP = 6
"""Replans when the budget does not limit them (a runtime safety net)."""


# --- the approval gate ----------------------------------------------------------------------
@dataclass(frozen=True)
class Approved:
    """The reviewer accepts the plan as is."""

    reviewer: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class Edited:
    """The reviewer accepts an edited plan (same id and version; step extras kept by id)."""

    plan: Plan
    reviewer: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class Rejected:
    """The reviewer refuses the plan; nothing executes."""

    reason: str
    reviewer: str | None = None


Decision = Union[Approved, Edited, Rejected]  # noqa: UP007 (a runtime alias on 3.10)
ApprovalGate = Callable[[Plan], Decision]


class PlanRejected(Exception):
    """Raised inside a run when the approval gate rejects a plan."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RunAborted(Exception):
    """A variant gives up (unrecoverable step, replan limit, depth limit)."""


# --- options and results ----------------------------------------------------------------------
@dataclass(frozen=True)
class RunOptions:
    """How a run is executed (models, budget, gate, parallelism, limits)."""

    planner: ChatModel
    executor: ChatModel
    budget: RetryBudget = DEFAULT_BUDGET
    approve: ApprovalGate | None = None
    max_workers: int = 4
    max_depth: int = 5
    max_iterations: int = 40
    continue_on_error: bool = False
    check_write_conflicts: bool = True
    executor_turns: int = 1
    """Model calls the executor may make in one attempt (act, observe, act again). ADaPT's
    executor works through a sub-task this way and only reports failure when it cannot."""


@dataclass
class Counters:
    """What a run consumed (thread-safe increments through :meth:`Run.count`)."""

    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    tool_calls: int = 0
    step_attempts: int = 0
    plans: int = 0
    replans: int = 0
    rejected_plans: int = 0


@dataclass(frozen=True)
class ActionRecord:
    """One tool call as it happened."""

    step_id: str
    tool: str
    arguments: Mapping[str, Any]
    resource: str
    effect: str
    ok: bool
    error: str | None = None


@dataclass(frozen=True)
class StepOutcome:
    """How the executor's work on one plan step ended (after all its attempts)."""

    ok: bool
    error: str | None = None
    budget: RetryBudgetExceeded | None = None
    attempts: int = 0
    self_assessment: str | None = None


@dataclass
class _Effects:
    """What one step of an open parallel round did to the run's records, kept apart until the
    round commits (see :meth:`Run.parallel_round`)."""

    blackboard: dict[str, Any] = field(default_factory=dict)
    call_results: dict[str, Any] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    actions: list[ActionRecord] = field(default_factory=list)
    irreversible: list[str] = field(default_factory=list)
    costs: list[float] = field(default_factory=list)


def _reach(depends_on: Mapping[str, Sequence[str]], start: str) -> set[str]:
    """Every step ``start`` transitively depends on (unknown ids and cycles tolerated)."""
    seen: set[str] = set()
    todo = list(depends_on.get(start, ()))
    while todo:
        d = todo.pop()
        if d not in seen:
            seen.add(d)
            todo += depends_on.get(d, ())
    return seen


# --- the run ------------------------------------------------------------------------------------
class Run:
    """One task executed by one variant: the state and services the variants share."""

    def __init__(
        self,
        variant: str,
        env: Environment,
        task: Task,
        options: RunOptions,
        faults: Sequence[Fault] = (),
    ) -> None:
        self.variant = variant
        self.env = env
        self.task = task
        self.options = options
        self.faults = tuple(faults)
        self.knobs = {f.knob for f in self.faults}
        self.injector = ToolInjector(task, self.faults)
        misread = next((f for f in self.faults if f.knob == "misread_objective"), None)
        self.planner_task = (
            replace(task, facts={**task.facts, misread.params["fact"]: misread.params["wrong"]})
            if misread is not None
            else task
        )
        """The task as the planner receives it: a misread fact is wrong in what it is told,
        whatever the model (the runtime injects it, not the scripted model's hints)."""
        self.starve = {
            f.target: str(f.params["fact"]) for f in self.faults if f.knob == "context_starved"
        }
        """Step id -> the fact the hand-over to its executor drops (runtime-side)."""
        self.starved_handovers: set[str] = set()
        """Steps whose executor was handed a context without its starved fact."""
        self.drop_edges = {
            f.target: (str(f.params["producer" if f.knob == "implicit_dependency" else "other"]), f)
            for f in self.faults
            if f.knob in ("implicit_dependency", "write_conflict")
        }
        """Step id -> (the dependency the runtime drops from what the planner wrote, fault)."""
        self.dropped_edges: set[str] = set()
        """Steps whose planned edge was dropped and the fault's premise held in that plan (the
        reader requires what the producer produces; the two writers write one resource)."""
        self.cut_off: dict[str, set[str]] = {}
        """Target of a dropped dependency -> other readers of its key that the drop cut off
        from the producer (they reached it only through the target)."""
        self.attempted: set[str] = set()
        """Step ids with at least one attempt."""
        self.run_id = uuid.uuid4().hex
        self.trace_id = ""
        self.plan_id = f"plan-{self.run_id[:12]}"
        self.version = 0
        self.blackboard: dict[str, Any] = {}
        self.actions: list[ActionRecord] = []
        self.irreversible_done: list[str] = []
        self.counters = Counters()
        self.failures: list[str] = []
        self.call_results: dict[str, Any] = {}
        """Result of every successful tool call that carried a call id (the executor's memory
        of what it already did, so a retried attempt does not redo finished actions)."""
        self.planned_steps: set[str] = set()
        self.split_nodes: set[str] = set()
        """Steps some plan version was scoped to (decomposed or replanned)."""
        self.assignees: dict[str, str] = {}
        """Step id -> the executor the latest plan assigned it to."""
        self.agent = AGENT
        """The agent that writes the plans (the host agent in the host variant)."""
        self.executor_tools: Callable[[PlanStep], Mapping[str, Tool]] | None = None
        """The tool set of a step's executor (default: every tool of the environment); an
        executor asking for a tool outside its set fails the attempt permanently."""
        self._round: dict[str, _Effects] | None = None
        """Step id -> its effects, while a parallel round is open."""
        self._lock = threading.Lock()

    @property
    def tools(self) -> Mapping[str, Tool]:
        return self.env.tools()

    def count(self, **increments: float) -> None:
        step = planscope.current_step()
        with self._lock:
            pending = self._pending(step.step_id if step is not None else None)
            for name, value in increments.items():
                if name == "cost_usd" and pending is not None:
                    pending.costs.append(value)  # float sums depend on their order
                    continue
                setattr(self.counters, name, getattr(self.counters, name) + value)

    def _pending(self, step_id: str | None) -> _Effects | None:
        """The open round's effects of ``step_id`` (None: record into the run at once); call
        with the lock held."""
        if self._round is None or step_id is None:
            return None
        return self._round.get(step_id)

    @contextmanager
    def parallel_round(self, step_ids: Sequence[str]) -> Iterator[None]:
        """Steps that start together and run in parallel: each sees the run's records (the
        blackboard, earlier results, the fault injector's counts) as they were when the round
        opened plus its own effects; at the end their effects are committed in the order of
        ``step_ids``. What the steps see and what the run records is then the same whatever
        order the threads ran and finished in.

        >>> # with r.parallel_round(["find_0", "find_1"]): ...  # see variants.dag
        """
        with self._lock:
            self._round = {s: _Effects() for s in step_ids}
        self.injector.open_round(step_ids)
        try:
            yield
        finally:
            with self._lock:
                pending, self._round = self._round, None
                for effects in pending.values():
                    self.blackboard.update(effects.blackboard)
                    self.call_results.update(effects.call_results)
                    self.failures += effects.failures
                    self.actions += effects.actions
                    self.irreversible_done += effects.irreversible
                    for cost in effects.costs:
                        self.counters.cost_usd += cost
            self.injector.commit_round()

    def note_failure(self, step_id: str, failure: str) -> None:
        """Record a step's failure (what the planner is told about when it replans)."""
        with self._lock:
            pending = self._pending(step_id)
            (pending.failures if pending is not None else self.failures).append(failure)

    def hints(self, **extra: Any) -> dict[str, Any]:
        """Structured side-channel for offline models (ignored by HTTP models)."""
        return {"task": self.task, "faults": self.faults, "tools": self.tools, **extra}

    # --- LLM ------------------------------------------------------------------------------
    def llm(
        self,
        role: str,
        purpose: str,
        messages: Sequence[Message],
        *,
        tools: Iterable[Tool] = (),
        json_output: bool = False,
        hints: Mapping[str, Any] | None = None,
    ) -> ChatResponse:
        """Call the planner or executor model inside an LLM span and record its usage."""
        model = self.options.planner if role == "planner" else self.options.executor
        request = ChatRequest(
            messages=tuple(messages),
            purpose=purpose,
            tools=tuple(t.schema() for t in tools),
            json_output=json_output,
            hints=hints if hints is not None else self.hints(),
        )
        with planscope.start_llm(
            model.name,
            role=role,
            provider=model.provider,
            inputs={"purpose": purpose, "prompt": messages[-1].content if messages else ""},
        ) as call:
            response = model.complete(request)
            self.count(
                llm_calls=1,
                input_tokens=response.usage.input_tokens,
                output_tokens=response.usage.output_tokens,
                cost_usd=response.cost_usd or 0.0,
            )
            call.set_output(
                {
                    "content": response.content,
                    "tool_calls": [
                        {"name": c.name, "arguments": dict(c.arguments)}
                        for c in response.tool_calls
                    ],
                }
            )
            if response.tool_calls:
                call.set_attribute(A.LLM_TOOL_CALLS, len(response.tool_calls))
            call.record_usage(
                response.usage.input_tokens,
                response.usage.output_tokens,
                response.cost_usd,
                response.model or None,
            )
        return response

    # --- planning -------------------------------------------------------------------------
    def next_plan(self, draft: PlanDraft, *, reason: str | None, scope: str | None) -> PlanDraft:
        """Give a draft this run's plan id and the next version."""
        plan = replace(
            draft.plan,
            id=self.plan_id,
            version=self.version + 1,
            objective=self.task.rendered_objective,
            scope=scope,
            replan_reason=reason,
        )
        return replace(draft, plan=plan)

    def ask_planner(
        self,
        purpose: str,
        *,
        script: bool = False,
        failure: str | None = None,
        completed: Sequence[str] = (),
        scope: str | None = None,
        attempt: int = 1,
    ) -> list[StepIR]:
        """One planner LLM call, parsed (raises PlanFormatError)."""
        messages = prompts.planner_messages(
            self.planner_task,
            self.tools,
            self.planner_task.facts,
            script=script,
            failure=failure,
            completed=completed,
            irreversible_done=self.irreversible_done,
            scope=scope,
        )
        response = self.llm(
            "planner",
            purpose,
            messages,
            json_output=True,
            hints=self.hints(
                script=script,
                failures=tuple(self.failures),
                completed=tuple(completed),
                scope=scope,
                attempt=attempt,
                irreversible_done=tuple(self.irreversible_done),
            ),
        )
        return self.drop_planned_edges(parse_steps(response.content, script=script))

    def drop_planned_edges(self, steps: list[StepIR]) -> list[StepIR]:
        """Apply the dropped-edge faults to a plan whatever model wrote it: the target step
        loses its ``depends_on`` on the producer (``implicit_dependency``) or on the other
        writer, whose own dependencies it inherits so both become ready together
        (``write_conflict``). Notes where the fault's premise held in this plan."""
        if not self.drop_edges:
            return steps
        by_id = {s.id: s for s in steps}
        out = []
        for step in steps:
            other, fault = self.drop_edges.get(step.id, ("", None))
            if fault is None or other not in step.depends_on or other not in by_id:
                out.append(step)
                continue
            deps = [d for d in step.depends_on if d != other]
            if fault.knob == "write_conflict":
                deps += [d for d in by_id[other].depends_on if d not in deps and d != step.id]
                premise = bool(set(step.writes) & set(by_id[other].writes))
            else:
                key = str(fault.params["key"])
                premise = key in step.requires and key in by_id[other].produces
            if premise:
                with self._lock:
                    self.dropped_edges.add(step.id)
                race = self.injector.race
                if fault.knob == "write_conflict" and race is not None:
                    # the writers can now run in parallel: make them race for certain
                    race.armed = self.options.max_workers > 1
            out.append(step.model_copy(update={"depends_on": deps}))
        self._note_cut_off(steps, out)
        return out

    def _note_cut_off(self, before: list[StepIR], after: list[StepIR]) -> None:
        """Readers of a dropped dependency's key, other than its target, that no longer reach
        the producer: the same missing edge is an implicit dependency of theirs too."""
        old = {s.id: s.depends_on for s in before}
        new = {s.id: s.depends_on for s in after}
        for target, (producer, fault) in self.drop_edges.items():
            if fault.knob != "implicit_dependency" or target not in self.dropped_edges:
                continue
            key = str(fault.params["key"])
            cut = {
                s.id
                for s in after
                if s.id not in (target, producer)
                and key in s.requires
                and producer in _reach(old, s.id)
                and producer not in _reach(new, s.id)
            }
            if cut:
                with self._lock:
                    self.cut_off.setdefault(target, set()).update(cut)

    def record_plan(
        self,
        produce: Callable[[], PlanDraft],
        *,
        reason: str | None = None,
        scope: str | None = None,
        validate: Callable[[PlanDraft], PlanDraft] | None = None,
    ) -> PlanDraft:
        """Record the next plan version in a plan span, after the approval gate.

        ``produce`` runs inside the span (so the planner's LLM call is its child) and returns
        the draft; ``validate`` may fix it or raise PlanFormatError before anyone sees it.
        Raises PlanRejected if the reviewer rejects it, PlanFormatError if it is invalid and
        RetryBudgetExceeded beyond an enforced ``max_replans``.
        """
        decision: Decision | None = None
        with planscope.start_plan(self.agent, scope=scope) as span:
            draft = self.next_plan(produce(), reason=reason, scope=scope)
            if validate is not None:
                draft = validate(draft)
            gate = self.options.approve
            if gate is not None:
                decision = gate(draft.plan)
                if isinstance(decision, Edited):
                    draft = replace(
                        draft,
                        plan=replace(
                            decision.plan,
                            id=draft.plan.id,
                            version=draft.plan.version,
                            objective=draft.plan.objective,
                            scope=draft.plan.scope,
                            replan_reason=draft.plan.replan_reason,
                        ),
                    )
            else:
                draft = replace(draft, plan=replace(draft.plan, approval="not_required"))
            self.version = draft.plan.version
            self.count(plans=1, replans=1 if draft.plan.version > 1 else 0)
            self.planned_steps.update(s.id for s in draft.plan.steps)
            self.assignees.update({s.id: s.executor for s in draft.plan.steps if s.executor})
            if scope is not None:
                self.split_nodes.add(scope)
            span.set_plan(draft.plan)
            if decision is not None:
                approved = not isinstance(decision, Rejected)
                span.record_approval(
                    approved,
                    edited=isinstance(decision, Edited),
                    reviewer=decision.reviewer,
                    reason=decision.reason,
                )
        if isinstance(decision, Rejected):
            self.count(rejected_plans=1)
            raise PlanRejected(decision.reason)
        return draft

    def plan_once(
        self,
        purpose: str = "plan",
        *,
        script: bool = False,
        failure: str | None = None,
        completed: Sequence[str] = (),
        validate: Callable[[PlanDraft], PlanDraft] | None = None,
        attempt: int = 1,
    ) -> PlanDraft:
        """Ask the planner for a whole plan and record it (the LLM call inside the plan span)."""

        def produce() -> PlanDraft:
            steps = self.ask_planner(
                purpose, script=script, failure=failure, completed=completed, attempt=attempt
            )
            return to_draft(steps)

        return self.record_plan(produce, reason=failure, validate=validate)

    def replans_left(self) -> bool:
        """False when the budget (or, without one, the runtime's cap) allows no more replans."""
        limit = self.options.budget.max_replans
        cap = HARD_REPLAN_CAP if limit is None or not self.options.budget.enforce else limit
        return self.counters.replans < cap

    # --- execution ------------------------------------------------------------------------
    def context_for(self, step: PlanStep, draft: PlanDraft) -> dict[str, Any]:
        """The scoped context handed to a step's executor: its required keys, nothing else."""
        bound = draft.inputs.get(step.id, {})
        context: dict[str, Any] = {}
        with self._lock:
            pending = self._pending(step.id)
            board = {**self.blackboard, **(pending.blackboard if pending is not None else {})}
            for key in step.requires:
                if key in bound:
                    context[key] = bound[key]
                elif key in board:
                    context[key] = board[key]
            starved = self.starve.get(step.id)
            if starved is not None and starved in step.requires:
                context.pop(starved, None)
                self.starved_handovers.add(step.id)
        return context

    def execute_step(
        self,
        step: PlanStep,
        draft: PlanDraft,
        *,
        depth: int | None = None,
        covers: Sequence[str] = (),
        self_assess: bool = False,
        script_args: Mapping[str, Any] | None = None,
    ) -> StepOutcome:
        """Run attempts at one plan step until it succeeds, fails permanently or the budget
        refuses another attempt. Retryable tool errors are retried with the same inputs.

        ``script_args`` (planning scripts) replaces the executor model: the engine calls the
        step's tool with these arguments, references resolved from the context."""
        attempts = 0
        while True:
            context = self.context_for(step, draft)
            attempts += 1
            if attempts > HARD_ATTEMPT_CAP:
                return StepOutcome(False, "runtime attempt cap reached", attempts=attempts - 1)
            try:
                assessment = self._attempt(step, context, depth, covers, self_assess, script_args)
            except RetryBudgetExceeded as exc:
                return StepOutcome(False, str(exc), budget=exc, attempts=attempts - 1)
            except ToolError as exc:
                self.note_failure(step.id, f"step {step.id}: {exc}")
                if exc.retryable:
                    continue
                return StepOutcome(False, str(exc), attempts=attempts)
            if assessment == "failure":
                return StepOutcome(
                    False, "self-assessed failure", attempts=attempts, self_assessment=assessment
                )
            return StepOutcome(True, attempts=attempts, self_assessment=assessment)

    def _attempt(
        self,
        step: PlanStep,
        context: Mapping[str, Any],
        depth: int | None,
        covers: Sequence[str],
        self_assess: bool,
        script_args: Mapping[str, Any] | None,
    ) -> str | None:
        with self._lock:
            self.attempted.add(step.id)
        try:
            return self._traced_attempt(step, context, depth, covers, self_assess, script_args)
        finally:
            if self.injector.race is not None:
                self.injector.race.attempt_ended(step.id)

    def _traced_attempt(
        self,
        step: PlanStep,
        context: Mapping[str, Any],
        depth: int | None,
        covers: Sequence[str],
        self_assess: bool,
        script_args: Mapping[str, Any] | None,
    ) -> str | None:
        with planscope.start_step(step, depth=depth, inputs=dict(context)) as span:
            self.count(step_attempts=1)
            span.record_context(dict(context))
            if script_args is not None:
                calls = (ToolCall(step.tool or "", resolve_args(script_args, context)),)
                response = ChatResponse(content="script", tool_calls=calls)
            else:
                response = self._act(step, context, covers, ())
            outcomes: list[tuple[bool, str]] = []
            acted = False
            turns = 1
            filled: list[str] = []
            allowed = self.executor_tools(step) if self.executor_tools is not None else None
            try:
                while response.tool_calls:
                    acted = True
                    batch = response.tool_calls
                    for index, call in enumerate(batch, start=1):
                        try:
                            if allowed is not None and call.name not in allowed:
                                raise ToolError(
                                    f"{step.executor or 'the executor'} has no tool "
                                    f"{call.name!r} (its tools: {', '.join(allowed)})"
                                )
                            result = self.call_tool(
                                step.id, call, batch=(index, len(batch)) if len(batch) > 1 else None
                            )
                        except ToolError:
                            if index < len(batch):  # a multi-action step stops at a failure
                                span.record_event(
                                    A.EVENT_ACTIONS_DISCARDED,
                                    **{A.ACTIONS_DISCARDED: len(batch) - index},
                                )
                            raise
                        outcomes.append((True, f"{call.name} -> {json.dumps(result, default=str)}"))
                        with self._lock:
                            pending = self._pending(step.id)
                            results = self.call_results if pending is None else pending.call_results
                            board = self.blackboard if pending is None else pending.blackboard
                            if call.id:
                                results[call.id] = result
                            for key in _produced_keys(step, call, filled):
                                board[key] = result
                    if turns >= self.options.executor_turns:
                        break
                    turns += 1
                    response = self._act(step, context, covers, [o[1] for o in outcomes])
            except ToolError as exc:
                outcomes.append((False, f"error: {exc}"))
                if self_assess:
                    self._assess(step, outcomes)
                raise
            if not acted:
                outcomes.append((False, f"no action: {response.content}"))
            if self_assess:
                return self._assess(step, outcomes)
            if not acted:
                raise ToolError(f"the executor took no action: {response.content}")
            span.set_output([o[1] for o in outcomes])
            return None

    def _act(
        self,
        step: PlanStep,
        context: Mapping[str, Any],
        covers: Sequence[str],
        observations: Sequence[str],
    ) -> ChatResponse:
        """One executor model call for a step; ``observations`` are this attempt's results so
        far (an executor with several turns sees what its earlier calls returned)."""
        messages = prompts.executor_messages(step.id, step.description, step.tool, context)
        if observations:
            messages = (*messages, Message("user", "Results so far:\n" + "\n".join(observations)))
        with self._lock:
            pending = self._pending(step.id)
            done = {**self.call_results, **(pending.call_results if pending is not None else {})}
        if self.executor_tools is not None:  # an agent with its own tool set sees all of it
            own = self.executor_tools(step)
            return self.llm(
                "executor",
                "act",
                messages,
                tools=own.values(),
                hints=self.hints(
                    step_id=step.id,
                    context=dict(context),
                    covers=list(covers),
                    done_calls=done,
                    tools=own,
                    multi_action=True,
                ),
            )
        return self.llm(
            "executor",
            "act",
            messages,
            tools=[self.tools[step.tool]]
            if step.tool is not None and step.tool in self.tools
            else self.tools.values(),
            hints=self.hints(
                step_id=step.id, context=dict(context), covers=list(covers), done_calls=done
            ),
        )

    def _assess(self, step: PlanStep, outcomes: Sequence[tuple[bool, str]]) -> str:
        response = self.llm(
            "executor",
            "assess",
            prompts.assess_messages(step.description, [o[1] for o in outcomes]),
            json_output=True,
            hints=self.hints(outcomes=tuple(outcomes), step_id=step.id),
        )
        try:
            verdict = (
                "success" if json.loads(response.content or "{}").get("success") else "failure"
            )
        except (json.JSONDecodeError, AttributeError):
            verdict = "failure"
        planscope.record_self_assessment(verdict)
        return verdict

    def call_tool(
        self, step_id: str, call: ToolCall, *, batch: tuple[int, int] | None = None
    ) -> Any:
        """Dispatch one tool call inside a tool span (resource and effect recorded);
        ``batch`` is (position, size) when the call is one of several a model call proposed."""
        tool = self.tools.get(call.name)
        if tool is None:
            raise ToolError(f"unknown tool {call.name!r}")
        args = dict(call.arguments)
        resource = tool.resource(args)
        self.count(tool_calls=1)
        error: str | None = None
        meet = self.injector.meeting(step_id, resource) if tool.effect != READ else None
        try:
            with planscope.start_tool(
                tool.name, resource=resource, effect=tool.effect, arguments=args
            ) as span:
                if batch is not None:
                    span.set_attribute(A.TOOL_ACTION_INDEX, batch[0])
                    span.set_attribute(A.TOOL_ACTION_BATCH, batch[1])
                self.injector.before_call(step_id, tool.name, args)
                try:
                    with interleave(meet):  # a read-modify-write meets between read and write
                        result = tool.fn(**args)
                except TypeError as exc:
                    raise ToolError(f"{tool.name}: bad arguments: {exc}") from None
                if meet is not None:  # a plain write meets after writing (else a no-op)
                    meet()
                span.set_output(result)
        except ToolError as exc:
            error = str(exc)
            raise
        finally:
            with self._lock:
                pending = self._pending(step_id)
                action = ActionRecord(
                    step_id, tool.name, args, resource, tool.effect, error is None, error
                )
                (self.actions if pending is None else pending.actions).append(action)
                if error is None and tool.effect == "irreversible":
                    done = f"{tool.name} on {resource} (step {step_id})"
                    (self.irreversible_done if pending is None else pending.irreversible).append(
                        done
                    )
        return result

    def execute_with_whole_replans(
        self,
        draft: PlanDraft,
        *,
        replan: Callable[[str, Sequence[str]], PlanDraft],
        run_step: Callable[[PlanStep, PlanDraft], StepOutcome] | None = None,
    ) -> str | None:
        """Execute a plan in order; when a step fails permanently, ask ``replan(failure,
        completed)`` for a whole new plan and continue. Returns the reason of a failure or None.

        With ``continue_on_error`` a failed step is recorded and execution carries on.
        """
        done: set[str] = set()
        first_error: str | None = None
        while True:
            failure: tuple[str, StepOutcome] | None = None
            for step in draft.plan.topological_order():
                if step.id in done:
                    continue
                outcome = run_step(step, draft) if run_step else self.execute_step(step, draft)
                if outcome.ok:
                    done.add(step.id)
                    continue
                if self.options.continue_on_error:
                    first_error = first_error or f"step {step.id} failed: {outcome.error}"
                    done.add(step.id)
                    continue
                failure = (step.id, outcome)
                break
            if failure is None:
                return first_error
            step_id, outcome = failure
            if outcome.budget is not None:
                return f"retry budget exceeded at step {step_id}: {outcome.error}"
            if not self.replans_left():
                return f"step {step_id} failed and no replan is left: {outcome.error}"
            planscope.record_replan_request(outcome.error or "step failed", step_id=step_id)
            draft = replan(f"step {step_id}: {outcome.error}", sorted(done))

    # --- outcome --------------------------------------------------------------------------
    def check_outcome(self, reason: str | None = None) -> bool:
        """Run the task's success check and record it on the run."""
        check = self.task.check(self.env)
        why = check.reason if not check.passed else None
        if reason and not check.passed:
            why = f"{reason}; {check.reason}" if check.reason else reason
        planscope.record_outcome_check(check.passed, name=f"{self.task.id}:check", reason=why)
        return check.passed


def _produced_keys(step: PlanStep, call: ToolCall, filled: list[str]) -> list[str]:
    """The context keys a successful call fills: the step's only key; with several, the one
    the call names, else the next one not filled yet in this attempt (``filled`` grows)."""
    keys = list(step.produces)
    if len(keys) <= 1:
        return keys
    if call.produces == "":  # the call says it fills nothing
        return []
    chosen: str | None = call.produces if call.produces in keys else None
    if chosen is None:
        chosen = next((k for k in keys if k not in filled), None)
    if chosen is None:
        return []
    filled.append(chosen)
    return [chosen]


def now() -> float:
    return time.perf_counter()

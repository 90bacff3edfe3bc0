"""Opening and closing planscope spans: the one place that knows what each span kind records.

The decorators (``_instrument``) and the context managers (``start_run`` & co.) both go through
:func:`begin`, which returns a :class:`Scope`; the caller then brackets the user's code with
``enter()``/``exit()`` (possibly several times, for generators) and ends with ``succeed()`` or
``fail()``. Every method here swallows internal errors (see ``_internal``); only an enforced
:class:`RetryBudgetExceeded` is raised on purpose.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextvars import Token
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeAlias, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from . import _config
from . import semconv as A
from ._budget import RetryBudget
from ._capture import (
    OUTPUT_KEY,
    Binder,
    cap,
    dumps,
    error_fingerprint,
    error_type,
    estimate_tokens,
    redact_mapping,
    stable_hash,
)
from ._errors import ConfigurationError, RetryBudgetExceeded
from ._internal import handle_internal_errors, logger, swallow
from ._plan import Plan, PlanStep
from ._state import CURRENT, Frame, RunState, StepState, effective_plan, orphan_state, place_plan

_UNSET: Any = object()
Arguments: TypeAlias = "Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None"


@dataclass
class SpanOptions:
    """Everything a span kind may take; each kind reads its own fields.

    Treated as immutable: use :meth:`evolve` for a changed copy (cheaper than
    ``dataclasses.replace``, which matters on the per-call path).
    """

    kind: str
    name: str | None = None  # run/plan: agent, step: step id, tool: tool name, llm: model
    fallback_name: str | None = None  # the decorated function's name
    capture: bool | None = None
    # run
    run_id: str | None = None
    objective: str | None = None
    variant: str | None = None
    budget: RetryBudget | None = None
    # plan
    scope: str | None = None
    # step
    executor: str | None = None
    depth: int | None = None
    plan_step: PlanStep | None = None
    # tool
    resource: Any = None  # str, or a callable taking the tool's arguments
    effect: str | None = None
    # llm
    role: str | None = None
    provider: str | None = None

    def evolve(self, **changes: Any) -> SpanOptions:
        clone = object.__new__(SpanOptions)
        fields = clone.__dict__
        fields.update(self.__dict__)
        for key, value in changes.items():
            if key not in fields:
                raise AttributeError(key)
            fields[key] = value
        return clone


# --- handles -------------------------------------------------------------------------------------
class SpanHandle:
    """A live planscope span. Yielded by the ``start_*`` context managers.

    >>> import planscope
    >>> with planscope.start_tool("search", effect="read") as span:
    ...     span.set_output(["result"])
    """

    kind: str = ""

    def __init__(self, span: trace.Span, frame: Frame | None = None) -> None:
        self.span = span
        """The underlying OpenTelemetry span."""
        self._frame = frame
        self._output: Any = _UNSET

    @property
    def is_recording(self) -> bool:
        """False when spans go nowhere (no SDK configured): skip expensive attributes then."""
        return self.span.is_recording()

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        """Set an attribute on the span (use the names in ``planscope.semconv``)."""
        with handle_internal_errors():
            self.span.set_attribute(key, value)

    def set_output(self, value: Any) -> None:
        """Record ``value`` as the span's output (captured at the end, like a return value)."""
        self._output = value

    def record_event(self, name: str, **attributes: AttributeValue) -> None:
        """Add an event to the span."""
        with handle_internal_errors():
            self.span.add_event(name, attributes=_clean(attributes))

    # --- what this kind records (called by begin() and Scope; not public API) ---------------
    _otel_kind = SpanKind.INTERNAL
    _input_hash_key: str | None = None
    """The attribute the hash of the call's arguments goes to (None: not hashed)."""
    _genai_payloads = False
    """Also record input/output as ``gen_ai.tool.call.arguments`` / ``.result``."""

    @classmethod
    def _start(
        cls, options: SpanOptions, parent: Frame, settings: _config.Settings, name: str | None,
        live: bool, current: trace.Span | None,
    ) -> _Start:  # fmt: skip
        """The state, span name and first attributes of a new span of this kind (the attributes
        only when ``live``: a span will be started)."""
        raise ValueError(f"unknown span kind {options.kind!r}; expected one of {A.SPAN_KINDS}")

    @classmethod
    def _open(
        cls, span: trace.Span, start: _Start, parent: Frame, options: SpanOptions
    ) -> tuple[SpanHandle, Frame]:
        """The handle of a started span and the frame current inside it."""
        raise NotImplementedError

    @classmethod
    def _noop(cls) -> SpanHandle:
        """A handle on the invalid span (begin() failed internally)."""
        return cls(trace.INVALID_SPAN)

    def _succeeded(
        self, scope: Scope[Any], output: Any, generator: bool
    ) -> tuple[RetryBudgetExceeded | None, Any]:
        """What a normal end records; returns a crossed budget and the output to capture."""
        return None, output

    def _failed(self, scope: Scope[Any], exc: BaseException, etype: str) -> None:
        """What a failure records beyond the status, exception event and ``error.type``."""

    def _item(self, item: Any) -> None:
        """One item yielded by a generator function."""

    @classmethod
    def _from_call(
        cls, options: SpanOptions, arguments: Mapping[str, Any], args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
    ) -> dict[str, Any]:  # fmt: skip
        """Options a decorated function's call fills in (what the decorator left open)."""
        return {}


_Start: TypeAlias = (
    "tuple[RunState | None, StepState | None, str | None, str, dict[str, AttributeValue], int]"
)
"""What ``_start`` returns: state, step state, role hint, span name, attributes, and the run's
total attempts so far (steps)."""


class RunHandle(SpanHandle):
    """The span of one agent run; ``planscope.current_run()`` returns it inside the run."""

    kind = A.KIND_RUN

    def __init__(self, span: trace.Span, state: RunState, frame: Frame | None = None) -> None:
        super().__init__(span, frame)
        self.state = state

    @property
    def run_id(self) -> str:
        """The run id (``planscope.run.id``)."""
        return self.state.run_id or ""

    @property
    def trace_id(self) -> str | None:
        """The run's trace id as 32 lowercase hex digits, the form the collector's
        ``/api/traces/{id}`` and other OpenTelemetry backends take; None when there is no trace
        (planscope not configured, no incoming trace).

        >>> import planscope
        >>> with planscope.start_run("billing-agent") as run:
        ...     link = f"http://localhost:4318/api/traces/{run.trace_id}"
        """
        context = self.span.get_span_context()
        return format(context.trace_id, "032x") if context.is_valid else None

    @property
    def budget(self) -> RetryBudget | None:
        """The retry budget in force for this run."""
        return self.state.budget

    @property
    def plan(self) -> Plan | None:
        """The run's current top-level plan (with the version the SDK assigned)."""
        return self.state.current_plan

    def set_outcome(self, outcome: str, reason: str | None = None) -> None:
        """Declare the run's outcome: ``"success"``, ``"failure"`` or ``"unknown"``.

        >>> planscope.current_run().set_outcome("failure", reason="invoice total mismatch")

        Raises ConfigurationError for any other outcome (a bug in the caller, not telemetry).
        """
        check_outcome(outcome)
        with handle_internal_errors():
            self.state.outcome = outcome
            self.state.outcome_reason = reason
            self.span.set_attribute(A.RUN_OUTCOME, outcome)
            if reason is not None:
                self.span.set_attribute(A.RUN_OUTCOME_REASON, reason)

    @classmethod
    def _start(
        cls, options: SpanOptions, parent: Frame, settings: _config.Settings, name: str | None,
        live: bool, current: trace.Span | None,
    ) -> _Start:  # fmt: skip
        budget = options.budget if options.budget is not None else settings.budget
        run_id = options.run_id or uuid.uuid4().hex
        state = RunState(run_id=run_id, agent=name, budget=budget)
        if not live:
            return state, None, None, "", {}, 0
        attrs = _clean(
            {
                A.SPAN_KIND: A.KIND_RUN,
                A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT,
                A.GEN_AI_AGENT_NAME: name,
                A.RUN_ID: run_id,
                A.GEN_AI_CONVERSATION_ID: run_id,
                A.RUN_OBJECTIVE: options.objective,
                A.RUN_VARIANT: options.variant,
                A.RUN_BUDGET: budget.to_json() if budget is not None else None,
            }
        )
        return state, None, None, f"{A.OP_INVOKE_AGENT} {name}", attrs, 0

    @classmethod
    def _open(
        cls, span: trace.Span, start: _Start, parent: Frame, options: SpanOptions
    ) -> tuple[SpanHandle, Frame]:
        state = start[0]
        assert state is not None
        handle = cls(span, state)
        return handle, Frame(state, handle, None, None, None, handle, start[2])

    @classmethod
    def _noop(cls) -> SpanHandle:
        return cls(trace.INVALID_SPAN, RunState(run_id=uuid.uuid4().hex))

    @classmethod
    def _from_call(
        cls, options: SpanOptions, arguments: Mapping[str, Any], args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
    ) -> dict[str, Any]:  # fmt: skip
        changes: dict[str, Any] = {}
        if options.objective is None and isinstance(arguments.get("objective"), str):
            changes["objective"] = arguments["objective"]
        if options.run_id is None and isinstance(arguments.get("run_id"), str):
            changes["run_id"] = arguments["run_id"]
        return changes

    def _succeeded(
        self, scope: Scope[Any], output: Any, generator: bool
    ) -> tuple[RetryBudgetExceeded | None, Any]:
        state = self.state
        if state.outcome is None:
            state.outcome = A.OUTCOME_UNKNOWN
            self.span.set_attribute(A.RUN_OUTCOME, A.OUTCOME_UNKNOWN)
        return None, output

    def _failed(self, scope: Scope[Any], exc: BaseException, etype: str) -> None:
        if self.state.outcome is None:
            self.state.outcome = A.OUTCOME_FAILURE
            self.state.outcome_reason = etype
            self.span.set_attribute(A.RUN_OUTCOME, A.OUTCOME_FAILURE)
            self.span.set_attribute(A.RUN_OUTCOME_REASON, etype)


def check_outcome(outcome: object) -> None:
    """Raise ConfigurationError unless ``outcome`` is one of ``A.OUTCOMES``."""
    if outcome not in A.OUTCOMES:
        raise ConfigurationError(
            f"set_outcome: outcome must be one of {', '.join(A.OUTCOMES)}, got {outcome!r}"
        )


class PlanHandle(SpanHandle):
    """The span of one planner call; record the plan with :meth:`set_plan`."""

    kind = A.KIND_PLAN

    def __init__(
        self, span: trace.Span, state: RunState, scope: str | None, frame: Frame | None = None
    ) -> None:
        super().__init__(span, frame)
        self.state = state
        self.default_scope = scope
        self.plan: Plan | None = None
        """The recorded plan (None until set)."""
        self.approval: str | None = None

    def set_plan(self, plan: Plan | Mapping[str, Any] | Sequence[Any]) -> Plan | None:
        """Record the plan on this span and make it current; returns it with its assigned version.

        Accepts a :class:`Plan`, its dict form, or a list of steps (a list or a dict without
        ``id`` continues the current plan's id, i.e. it is a replan). Raises RetryBudgetExceeded
        if it is a replan beyond an enforced ``max_replans``: that plan is recorded with the next
        version but does not become current.

        >>> with planscope.start_plan("billing") as p:
        ...     plan = p.set_plan(Plan([PlanStep("fetch"), PlanStep("pay", depends_on=["fetch"])]))
        """
        frame = self._frame or CURRENT.get()
        exceeded: RetryBudgetExceeded | None = None
        recorded: Plan | None = None
        with handle_internal_errors():
            coerced = coerce_plan(plan, effective_plan(frame))
            if coerced is None:
                return None
            if coerced.scope is None and self.default_scope is not None:
                coerced = replace(coerced, scope=self.default_scope)
            recorded, parent = self.state.register_plan(coerced)
            self.plan = recorded
            span = self.span
            if parent is not None:
                exceeded = _check_budget(
                    span, self.state, [("max_replans", self.state.replans)], step_id=None
                )
            # A refused replan keeps its version (the span shows what was refused) but never
            # becomes current: the application did not get it, so later steps stay on the last one.
            if exceeded is None:
                place_plan(frame, recorded)
            approval = recorded.approval or self.approval
            attrs: dict[str, AttributeValue | None] = {
                A.PLAN_ID: recorded.id,
                A.PLAN_VERSION: recorded.version,
                A.PLAN_PARENT_VERSION: parent,
                A.PLAN_SCOPE: recorded.scope,
                A.PLAN_REPLAN_REASON: recorded.replan_reason,
                A.PLAN_STEP_COUNT: len(recorded.steps),
                A.PLAN_APPROVAL: approval,
            }
            if span.is_recording():
                attrs[A.PLAN_JSON] = recorded.to_json()
            span.set_attributes(_clean(attrs))
        if exceeded is not None:
            raise exceeded
        return recorded

    def record_approval(
        self,
        approved: bool,
        *,
        edited: bool = False,
        reviewer: str | None = None,
        reason: str | None = None,
    ) -> None:
        """Record a human decision on this plan (``planscope.plan.approval`` + an event)."""
        with handle_internal_errors():
            self.approval = _approval_value(approved, edited)
            self.span.set_attribute(A.PLAN_APPROVAL, self.approval)
            _approval_event(self.span, approved, self.approval, reviewer, self.plan, reason)

    @classmethod
    def _start(
        cls, options: SpanOptions, parent: Frame, settings: _config.Settings, name: str | None,
        live: bool, current: trace.Span | None,
    ) -> _Start:  # fmt: skip
        if not live:
            return parent.state, None, "planner", "", {}, 0
        agent = options.name or (parent.run.state.agent if parent.run else None) or name
        attrs = _clean(
            {
                A.SPAN_KIND: A.KIND_PLAN,
                A.GEN_AI_OPERATION_NAME: A.OP_PLAN,
                A.GEN_AI_AGENT_NAME: agent,
                A.RUN_ID: parent.run.run_id if parent.run is not None else None,
            }
        )
        return parent.state, None, "planner", f"{A.OP_PLAN} {agent}", attrs, 0

    @classmethod
    def _open(
        cls, span: trace.Span, start: _Start, parent: Frame, options: SpanOptions
    ) -> tuple[SpanHandle, Frame]:
        state = start[0]
        if state is None:
            state = orphan_state(span.get_span_context().trace_id)
        scope_default = options.scope
        if scope_default is None and parent.step is not None:
            scope_default = parent.step.step_id
        handle = cls(span, state, scope_default)
        return handle, Frame(state, parent.run, parent.step, handle, parent.llm, handle, start[2])

    @classmethod
    def _noop(cls) -> SpanHandle:
        return cls(trace.INVALID_SPAN, RunState(), None)

    def _succeeded(
        self, scope: Scope[Any], output: Any, generator: bool
    ) -> tuple[RetryBudgetExceeded | None, Any]:
        if self.plan is not None or generator or not is_plan_like(output):
            return None, output
        exceeded: RetryBudgetExceeded | None = None
        try:
            self.set_plan(output)
        except RetryBudgetExceeded as exc:
            exceeded = exc
        return exceeded, _UNSET  # recorded as planscope.plan.json


class StepHandle(SpanHandle):
    """The span of one attempt at one plan step; ``planscope.current_step()`` returns it."""

    kind = A.KIND_STEP

    def __init__(
        self,
        span: trace.Span,
        state: StepState,
        parent: StepHandle | None,
        frame: Frame | None = None,
    ) -> None:
        # SpanHandle.__init__, inlined: one of these is made per step attempt
        self.span = span
        self._frame = frame
        self._output = _UNSET
        self.state = state
        self.parent = parent

    @property
    def step_id(self) -> str:
        return self.state.step_id

    @property
    def attempt(self) -> int:
        """1-based attempt number of this step id within the run."""
        return self.state.attempt

    def record_context(
        self, keys: Sequence[str] | Mapping[str, Any], tokens: int | None = None
    ) -> None:
        """Record the context keys given to the executor (see :func:`planscope.record_context`)."""
        with handle_internal_errors():
            if isinstance(keys, Mapping):
                names = [str(k) for k in keys]
                if tokens is None:
                    tokens = estimate_tokens(keys)
            elif isinstance(keys, str):
                raise TypeError("record_context() takes a list of keys or a mapping, not a str")
            else:
                names = [str(k) for k in keys]
            self.state.context_keys.update(names)
            self.span.set_attribute(
                A.STEP_CONTEXT_KEYS, json.dumps(sorted(self.state.context_keys))
            )
            if tokens is not None:
                self.state.context_tokens = (self.state.context_tokens or 0) + int(tokens)
                self.span.set_attribute(A.STEP_CONTEXT_TOKENS, self.state.context_tokens)

    def record_self_assessment(self, result: str) -> None:
        """Record the executor's own verdict on the step, ``"success"`` or ``"failure"`` (ADaPT)."""
        with handle_internal_errors():
            if result not in (A.OUTCOME_SUCCESS, A.OUTCOME_FAILURE):
                raise ValueError(f"self-assessment must be 'success' or 'failure', got {result!r}")
            self.span.set_attribute(A.STEP_SELF_ASSESSMENT, result)

    _input_hash_key = A.STEP_INPUT_HASH

    @classmethod
    def _start(
        cls, options: SpanOptions, parent: Frame, settings: _config.Settings, name: str | None,
        live: bool, current: trace.Span | None,
    ) -> _Start:  # fmt: skip
        plan_step = options.plan_step
        step_id = options.name or (plan_step.id if plan_step else None) or name or "step"
        state = parent.state
        if state is None:
            if current is None:
                current = trace.get_current_span()
            state = orphan_state(current.get_span_context().trace_id)
        attempt, total = state.next_attempt(step_id)
        plan = effective_plan(parent)
        parent_step = parent.step
        depth = options.depth
        if depth is None:
            depth = parent_step.state.depth + 1 if parent_step is not None else 0
        step_state = StepState(
            step_id,
            attempt,
            depth,
            plan.id if plan else None,
            plan.version if plan else None,
            parent_step.state if parent_step is not None else None,
        )
        if not live:
            return state, step_state, "executor", "", {}, total
        executor = options.executor or (plan_step.executor if plan_step else None)
        attrs: dict[str, AttributeValue] = {
            A.SPAN_KIND: A.KIND_STEP,
            A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_STEP,
        }
        if parent.run is not None:
            attrs[A.RUN_ID] = parent.run.run_id
        attrs[A.STEP_ID] = step_id
        attrs[A.STEP_ATTEMPT] = attempt
        if executor is not None:
            attrs[A.STEP_EXECUTOR] = executor
        attrs[A.STEP_DEPTH] = depth
        if step_state.plan_id is not None:
            attrs[A.PLAN_ID] = step_state.plan_id
        if step_state.plan_version is not None:
            attrs[A.PLAN_VERSION] = step_state.plan_version
        return state, step_state, "executor", f"{A.OP_EXECUTE_STEP} {step_id}", attrs, total

    @classmethod
    def _open(
        cls, span: trace.Span, start: _Start, parent: Frame, options: SpanOptions
    ) -> tuple[SpanHandle, Frame]:
        step_state = start[1]
        assert step_state is not None
        handle = cls(span, step_state, parent.step)
        return handle, Frame(start[0], parent.run, handle, None, None, handle, start[2])

    @classmethod
    def _noop(cls) -> SpanHandle:
        return cls(trace.INVALID_SPAN, StepState("unknown", 1, 0, None, None), None)

    @classmethod
    def _from_call(
        cls, options: SpanOptions, arguments: Mapping[str, Any], args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
    ) -> dict[str, Any]:  # fmt: skip
        if options.name is not None:
            return {}
        step = arguments.get("step")
        if isinstance(step, PlanStep):
            return {"plan_step": step}
        if isinstance(arguments.get("step_id"), str):
            return {"name": arguments["step_id"]}
        return {}

    def _succeeded(
        self, scope: Scope[Any], output: Any, generator: bool
    ) -> tuple[RetryBudgetExceeded | None, Any]:
        if scope.recording:
            self.span.set_attribute(A.STEP_STATUS, A.STATUS_OK)
        return None, output

    def _failed(self, scope: Scope[Any], exc: BaseException, etype: str) -> None:
        self.span.set_attribute(
            A.STEP_STATUS, A.STATUS_SKIPPED if scope.refused else A.STATUS_ERROR
        )
        self.span.set_attribute(A.STEP_ERROR_FINGERPRINT, error_fingerprint(exc))


class ToolHandle(SpanHandle):
    """The span of one tool call."""

    kind = A.KIND_TOOL
    _input_hash_key = A.TOOL_ARGS_HASH
    _genai_payloads = True

    @classmethod
    def _start(
        cls, options: SpanOptions, parent: Frame, settings: _config.Settings, name: str | None,
        live: bool, current: trace.Span | None,
    ) -> _Start:  # fmt: skip
        resource = options.resource
        if resource is not None and not isinstance(resource, str):
            resource = str(resource)
        if options.effect is not None and options.effect not in A.TOOL_EFFECTS:
            raise ValueError(f"tool effect must be one of {A.TOOL_EFFECTS}, got {options.effect!r}")
        if not live:
            return parent.state, None, parent.role_hint, "", {}, 0
        attrs = _stamp(parent, A.KIND_TOOL)
        attrs.update(
            _clean(
                {
                    A.GEN_AI_TOOL_NAME: name,
                    A.TOOL_RESOURCE: resource,
                    A.TOOL_EFFECT: options.effect,
                }
            )
        )
        return parent.state, None, parent.role_hint, f"{A.OP_EXECUTE_TOOL} {name}", attrs, 0

    @classmethod
    def _open(
        cls, span: trace.Span, start: _Start, parent: Frame, options: SpanOptions
    ) -> tuple[SpanHandle, Frame]:
        handle = cls(span)
        frame = Frame(start[0], parent.run, parent.step, parent.plan, parent.llm, handle, start[2])
        return handle, frame

    @classmethod
    def _from_call(
        cls, options: SpanOptions, arguments: Mapping[str, Any], args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
    ) -> dict[str, Any]:  # fmt: skip
        if callable(options.resource):
            return {"resource": options.resource(*args, **kwargs)}
        return {}


class LlmHandle(SpanHandle):
    """The span of one LLM call; record token usage with :meth:`record_usage`."""

    kind = A.KIND_LLM

    def __init__(
        self, span: trace.Span, state: RunState | None, frame: Frame | None = None
    ) -> None:
        super().__init__(span, frame)
        self.state = state
        self.input_tokens = 0
        self.output_tokens = 0
        self.cost_usd: float | None = None
        self.usage_recorded = False

    def record_usage(
        self,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        cost_usd: float | None = None,
        response_model: str | None = None,
    ) -> None:
        """Add token usage (and cost) to this call; counts towards the run's ``max_tokens``."""
        exceeded = _apply_usage(
            self, self.state, input_tokens, output_tokens, cost_usd, response_model
        )
        if exceeded is not None:
            raise exceeded

    _otel_kind = SpanKind.CLIENT

    @classmethod
    def _start(
        cls, options: SpanOptions, parent: Frame, settings: _config.Settings, name: str | None,
        live: bool, current: trace.Span | None,
    ) -> _Start:  # fmt: skip
        if not live:
            return parent.state, None, parent.role_hint, "", {}, 0
        model = options.name
        attrs = _stamp(parent, A.KIND_LLM)
        attrs.update(
            _clean(
                {
                    A.GEN_AI_REQUEST_MODEL: model,
                    A.LLM_ROLE: options.role or parent.role_hint,
                    A.GEN_AI_PROVIDER_NAME: options.provider,
                }
            )
        )
        span_name = f"{A.OP_CHAT} {model}" if model else A.OP_CHAT
        return parent.state, None, parent.role_hint, span_name, attrs, 0

    @classmethod
    def _open(
        cls, span: trace.Span, start: _Start, parent: Frame, options: SpanOptions
    ) -> tuple[SpanHandle, Frame]:
        handle = cls(span, start[0])
        frame = Frame(start[0], parent.run, parent.step, parent.plan, handle, handle, start[2])
        return handle, frame

    @classmethod
    def _noop(cls) -> SpanHandle:
        return cls(trace.INVALID_SPAN, None)

    @classmethod
    def _from_call(
        cls, options: SpanOptions, arguments: Mapping[str, Any], args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
    ) -> dict[str, Any]:  # fmt: skip
        if options.name is None and isinstance(arguments.get("model"), str):
            return {"name": arguments["model"]}
        return {}

    def _succeeded(
        self, scope: Scope[Any], output: Any, generator: bool
    ) -> tuple[RetryBudgetExceeded | None, Any]:
        if self.usage_recorded or generator or output is _UNSET:
            return None, output
        usage = extract_usage(output)
        if usage is None:
            return None, output
        return _apply_usage(self, self.state, usage[0], usage[1], None, usage[2]), output

    def _item(self, item: Any) -> None:
        usage = extract_usage(item)
        if usage is not None:
            exceeded = _apply_usage(self, self.state, usage[0], usage[1], None, usage[2])
            if exceeded is not None:  # observed only: enforcement mid-stream would cut
                logger.debug("token budget exceeded during a stream: %s", exceeded)


def _apply_usage(
    target: SpanHandle,
    state: RunState | None,
    input_tokens: int | None,
    output_tokens: int | None,
    cost_usd: float | None,
    response_model: str | None,
) -> RetryBudgetExceeded | None:
    exceeded: RetryBudgetExceeded | None = None
    with handle_internal_errors():
        added = 0
        span = target.span
        counters = target if isinstance(target, LlmHandle) else None
        for value in (input_tokens, output_tokens):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise TypeError(f"token counts must be integers, got {value!r}")
        if counters is not None:
            counters.usage_recorded = True
            counters.input_tokens += input_tokens or 0
            counters.output_tokens += output_tokens or 0
            if cost_usd is not None:
                counters.cost_usd = (counters.cost_usd or 0.0) + float(cost_usd)
            totals = (counters.input_tokens, counters.output_tokens, counters.cost_usd)
        else:
            totals = (input_tokens or 0, output_tokens or 0, cost_usd)
        added = (input_tokens or 0) + (output_tokens or 0)
        span.set_attributes(
            _clean(
                {
                    A.GEN_AI_USAGE_INPUT_TOKENS: totals[0],
                    A.GEN_AI_USAGE_OUTPUT_TOKENS: totals[1],
                    A.LLM_COST_USD: totals[2],
                    A.GEN_AI_RESPONSE_MODEL: response_model,
                }
            )
        )
        if state is not None and added:
            total = state.add_tokens(added)
            frame = CURRENT.get()
            step = frame.step.step_id if frame.step is not None else None
            exceeded = _check_budget(span, state, [("max_tokens", total)], step_id=step)
    return exceeded


# --- budget --------------------------------------------------------------------------------------
def _check_budget(
    span: trace.Span,
    state: RunState,
    observations: Sequence[tuple[str, int]],
    step_id: str | None,
) -> RetryBudgetExceeded | None:
    """Add an exceeded event per crossed limit; return the exception to raise if enforced."""
    budget = state.budget
    if budget is None:
        return None
    first: RetryBudgetExceeded | None = None
    for limit_name, observed in observations:
        limit = getattr(budget, limit_name)
        if limit is None or observed <= limit:
            continue
        span.add_event(
            A.EVENT_RETRY_BUDGET_EXCEEDED,
            attributes=_clean(
                {
                    A.BUDGET_LIMIT_NAME: limit_name,
                    A.BUDGET_LIMIT_VALUE: limit,
                    A.BUDGET_OBSERVED: observed,
                    A.BUDGET_ENFORCED: budget.enforce,
                    A.STEP_ID: step_id,
                    A.RUN_ID: state.run_id,
                }
            ),
        )
        logger.info(
            "retry budget exceeded: %s=%d observed %d (step %s, enforced=%s)",
            limit_name,
            limit,
            observed,
            step_id,
            budget.enforce,
        )
        if budget.enforce and first is None:
            first = RetryBudgetExceeded(limit_name, limit, observed, step_id, state.run_id)
    return first


# --- plans ---------------------------------------------------------------------------------------
def is_plan_like(value: Any) -> bool:
    """A Plan, a dict with ``steps``, or a non-empty list of PlanStep / step dicts."""
    if isinstance(value, Plan):
        return True
    if isinstance(value, Mapping):
        return "steps" in value
    if isinstance(value, (list, tuple)) and value:
        return all(isinstance(s, PlanStep) or (isinstance(s, Mapping) and "id" in s) for s in value)
    return False


def coerce_plan(value: Any, current: Plan | None) -> Plan | None:
    """Turn a planner's return value into a Plan; id-less forms continue ``current``'s id."""
    if isinstance(value, Plan):
        return value
    default_id = current.id if current is not None else None
    if isinstance(value, Mapping):
        return Plan.from_dict(value, default_id=default_id)
    if isinstance(value, (list, tuple)):
        return Plan.from_dict({"steps": list(value)}, default_id=default_id)
    logger.warning("planner returned %s, not a plan; no plan recorded", type(value).__name__)
    return None


def _approval_value(approved: bool, edited: bool) -> str:
    if not approved:
        return A.APPROVAL_REJECTED
    return A.APPROVAL_EDITED if edited else A.APPROVAL_APPROVED


def _approval_event(
    span: trace.Span,
    approved: bool,
    approval: str,
    reviewer: str | None,
    plan: Plan | None,
    reason: str | None = None,
) -> None:
    span.add_event(
        A.EVENT_APPROVAL_GRANTED if approved else A.EVENT_APPROVAL_DENIED,
        attributes=_clean(
            {
                A.PLAN_APPROVAL: approval,
                A.APPROVAL_REVIEWER: reviewer,
                A.APPROVAL_REASON: reason,
                A.PLAN_ID: plan.id if plan else None,
                A.PLAN_VERSION: plan.version if plan else None,
            }
        ),
    )


# --- LLM usage extraction ------------------------------------------------------------------------
def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


def extract_usage(value: Any) -> tuple[int | None, int | None, str | None] | None:
    """Token usage from an OpenAI/Anthropic-shaped response (object or dict), if any."""
    usage = _field(value, "usage")
    if usage is None:
        return None

    def pick(*names: str) -> int | None:
        for name in names:
            number = _field(usage, name)
            if isinstance(number, int) and not isinstance(number, bool):
                return number
        return None

    inp = pick("prompt_tokens", "input_tokens")
    out = pick("completion_tokens", "output_tokens")
    if inp is None and out is None:
        return None
    model = _field(value, "model")
    return inp, out, model if isinstance(model, str) else None


# --- scopes -------------------------------------------------------------------------------------
H = TypeVar("H", bound=SpanHandle)


class Scope(Generic[H]):
    """One span from begin() to succeed()/fail(); enter()/exit() bracket the user's code.

    ``enter()`` makes the scope's frame current (and its OTel context, unless ``otel_ctx`` is None:
    the span is already the current one, nothing to attach); an inactive scope (an internal error
    while starting) enters nothing.
    """

    __slots__ = (
        "active",
        "capture",
        "ended",
        "frame",
        "handle",
        "items",
        "items_size",
        "items_truncated",
        "otel_ctx",
        "recording",
        "refused",
        "settings",
    )

    def __init__(
        self,
        handle: H,
        frame: Frame,
        otel_ctx: otel_context.Context | None,
        capture: bool,
        settings: _config.Settings,
        active: bool = True,
        recording: bool | None = None,
    ) -> None:
        self.handle = handle
        self.frame = frame
        self.otel_ctx = otel_ctx
        self.active = active
        # is_recording() only changes when the span ends, and the scope ends it
        self.recording = handle.span.is_recording() if recording is None else recording
        self.capture = capture and self.recording
        self.settings = settings
        self.items: list[str] = []
        self.items_size = 0
        self.items_truncated = False
        self.ended = False
        self.refused = False  # a step attempt refused by an enforced budget

    # context
    def enter(self) -> tuple[object | None, Token[Frame]] | None:
        if not self.active:
            return None
        # try/except rather than handle_internal_errors(): free unless something fails
        try:
            ctx = self.otel_ctx
            return (otel_context.attach(ctx) if ctx is not None else None), CURRENT.set(self.frame)
        except Exception as exc:
            if not swallow(exc):
                raise
        return None

    def exit(self, tokens: tuple[object | None, Token[Frame]] | None) -> None:
        if tokens is None:
            return
        try:
            CURRENT.reset(tokens[1])
            if tokens[0] is not None:
                otel_context.detach(tokens[0])  # type: ignore[arg-type]
        except Exception as exc:
            if not swallow(exc):
                raise

    # generators
    def add_item(self, item: Any) -> None:
        with handle_internal_errors():
            self.handle._item(item)
            if not self.capture or self.items_truncated:
                return
            text = dumps(self._redact_output(item))
            size = len(text.encode("utf-8")) + 1  # the item and its comma (or closing bracket)
            if 1 + self.items_size + size > self.settings.capture_max_bytes:
                self.items_truncated = True  # keep the recorded list valid JSON
                return
            self.items.append(text)
            self.items_size += size

    # ends
    def succeed(self, result: Any = _UNSET, *, generator: bool = False) -> None:
        """End the span normally; raises RetryBudgetExceeded if the result crosses a budget."""
        exceeded: RetryBudgetExceeded | None = None
        try:
            exceeded = self._on_success(result, generator)
        except Exception as exc:
            if not swallow(exc):
                raise
        if exceeded is not None:
            self.fail(exceeded)
            raise exceeded
        self._end()

    def _on_success(self, result: Any, generator: bool) -> RetryBudgetExceeded | None:
        if self.ended:
            return None
        handle = self.handle
        output = handle._output if handle._output is not _UNSET else result
        exceeded, output = handle._succeeded(self, output, generator)
        if self.capture:
            if generator:
                text = "[" + ",".join(self.items) + "]"
                self._set_payload(A.OUTPUT, text, self.items_truncated)
            elif output is not _UNSET:
                text = dumps(self._redact_output(output))
                self._set_payload(A.OUTPUT, text)
                if handle._genai_payloads:
                    self._set_payload(A.GEN_AI_TOOL_CALL_RESULT, text)
        return exceeded

    def _redact_output(self, value: Any) -> Any:
        redact = self.settings.redact
        return value if redact is None else redact(self.handle.kind, OUTPUT_KEY, value)

    def _set_payload(self, key: str, text: str, truncated: bool = False) -> None:
        text, cut = cap(text, self.settings.capture_max_bytes)
        self.handle.span.set_attribute(key, text)
        if cut or truncated:
            self.handle.span.set_attribute(A.TRUNCATED, True)

    def fail(self, exc: BaseException) -> None:
        """Record a user exception (the caller re-raises it) and end the span."""
        with handle_internal_errors():
            if self.ended:
                return
            handle = self.handle
            span = handle.span
            etype = error_type(exc)
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, f"{etype}: {exc}"))
            span.set_attribute(A.ERROR_TYPE, etype)
            handle._failed(self, exc, etype)
        self._end()

    def _end(self) -> None:
        if self.ended:
            return
        self.ended = True
        try:
            self.handle.span.end()
        except Exception as exc:
            if not swallow(exc):
                raise


class _Noop(SpanHandle):
    pass


def _noop_scope(kind: str) -> Scope[Any]:
    handle = _HANDLES.get(kind, _Noop)._noop()
    scope: Scope[Any] = Scope(handle, CURRENT.get(), None, False, _config.settings(), active=False)
    scope.ended = True
    return scope


def _clean(attrs: Mapping[str, AttributeValue | None]) -> dict[str, AttributeValue]:
    return {k: v for k, v in attrs.items() if v is not None}


def _stamp(frame: Frame, kind: str) -> dict[str, AttributeValue]:
    """The first attributes of tool and LLM spans: kind, operation, and the run, step and plan of
    the enclosing step (None values left out)."""
    attrs: dict[str, AttributeValue] = {
        A.SPAN_KIND: kind,
        A.GEN_AI_OPERATION_NAME: A.OPERATION_FOR_KIND[kind],
    }
    if frame.run is not None:
        run_id = frame.run.run_id
        if run_id is not None:
            attrs[A.RUN_ID] = run_id
    if frame.step is not None:
        st = frame.step.state
        attrs[A.STEP_ID] = st.step_id
        attrs[A.STEP_ATTEMPT] = st.attempt
        if st.plan_id is not None:
            attrs[A.PLAN_ID] = st.plan_id
        if st.plan_version is not None:
            attrs[A.PLAN_VERSION] = st.plan_version
    return attrs


def begin(
    options: SpanOptions,
    arguments: Arguments = None,
    binder: Binder | None = None,
    args: tuple[Any, ...] = (),
    kwargs: Mapping[str, Any] | None = None,
) -> Scope[Any]:
    """Start a span of ``options.kind`` as a child of the current context.

    ``arguments`` are the call's bound arguments (captured as input and hashed), or a function
    returning them; or, from the decorators, ``binder(args, kwargs)`` gives them. Either is only
    evaluated if the span records. Raises only RetryBudgetExceeded (a step attempt beyond an
    enforced budget); internal errors give a no-op scope.
    """
    exceeded: RetryBudgetExceeded | None = None
    scope: Scope[Any] | None = None
    try:
        scope, exceeded = _begin(options, arguments, binder, args, kwargs)
    except Exception as exc:
        if not swallow(exc):
            raise
    if exceeded is not None:
        assert scope is not None
        scope.refused = True
        scope.fail(exceeded)
        raise exceeded
    return scope if scope is not None else _noop_scope(options.kind)


def _tracer_is_noop(tracer: trace.Tracer) -> bool:
    """True if ``tracer.start_span`` is NoOpTracer's (directly or through the global proxy)."""
    # exact types: isinstance() on these ABCs is slow, and a subclass may do anything
    if type(tracer) is trace.ProxyTracer:  # delegates to the global provider, once there is one
        tracer = getattr(tracer, "_tracer", tracer)
    return type(tracer) is trace.NoOpTracer


_HANDLES: dict[str, type[SpanHandle]] = {
    h.kind: h for h in (RunHandle, PlanHandle, StepHandle, ToolHandle, LlmHandle)
}
"""The handle class of each span kind: what the kind records lives on it."""


def _begin(
    options: SpanOptions,
    arguments: Arguments,
    binder: Binder | None = None,
    args: tuple[Any, ...] = (),
    kwargs: Mapping[str, Any] | None = None,
) -> tuple[Scope[Any], RetryBudgetExceeded | None]:
    settings = _config._settings or _config.settings()
    tracer = settings.tracer
    if tracer is None:
        tracer = _config._default_tracer or _config.tracer()
    parent = CURRENT.get()
    kind = options.kind

    # Without an SDK the tracer is a NoOpTracer, whose start_span returns the current span itself
    # when that one is not recording: then there is no span to start nor context to attach, and
    # no attribute to compute. The bookkeeping (state, attempts, budgets, frames) is the same.
    span: trace.Span | None = None
    current: trace.Span | None = None
    if _tracer_is_noop(tracer):
        current = trace.get_current_span()
        if type(current) is trace.NonRecordingSpan:
            span = current
    live = span is None

    cls = _HANDLES.get(kind, SpanHandle)
    start = cls._start(
        options, parent, settings, options.name or options.fallback_name, live, current
    )
    otel_ctx: otel_context.Context | None = None
    if span is None:
        span = tracer.start_span(start[3], kind=cls._otel_kind, attributes=start[4])
        otel_ctx = trace.set_span_in_context(span)
    handle, frame = cls._open(span, start, parent, options)
    handle._frame = frame
    capture = settings.capture if options.capture is None else options.capture
    recording = live and span.is_recording()
    scope: Scope[Any] = Scope(handle, frame, otel_ctx, capture, settings, recording=recording)

    if recording and (arguments is not None or binder is not None):
        with handle_internal_errors():  # the span is started: a capture problem must not lose it
            if arguments is None:
                assert binder is not None
                arguments = binder(args, kwargs if kwargs is not None else {})
            elif callable(arguments):
                arguments = arguments()
            _record_arguments(scope, kind, arguments, settings)
    exceeded = None
    state, step_state = start[0], start[1]
    if step_state is not None and state is not None and state.budget is not None:
        exceeded = _check_budget(
            span,
            state,
            [("max_attempts_per_step", step_state.attempt), ("max_attempts_per_run", start[5])],
            step_id=step_state.step_id,
        )
    return scope, exceeded


def _record_arguments(
    scope: Scope[Any], kind: str, arguments: Mapping[str, Any], settings: _config.Settings
) -> None:
    if settings.redact is None and type(arguments) is dict:
        redacted: Mapping[str, Any] = arguments  # only read below: no copy needed
    else:
        redacted = redact_mapping(settings.redact, kind, arguments)
    handle = scope.handle
    if handle._input_hash_key is not None:
        handle.span.set_attribute(handle._input_hash_key, stable_hash(redacted))
    if scope.capture and redacted:
        text = dumps(redacted)
        scope._set_payload(A.INPUT, text)
        if handle._genai_payloads:
            scope._set_payload(A.GEN_AI_TOOL_CALL_ARGUMENTS, text)

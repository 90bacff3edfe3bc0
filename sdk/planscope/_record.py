"""Module-level helpers that act on the enclosing planscope spans (found through contextvars).

All of them are safe to call anywhere: outside the span kind they target they do nothing (or
fall back to the current span, as documented per function).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.util.types import AttributeValue

from . import semconv as A
from ._internal import handle_internal_errors
from ._plan import Plan
from ._spans import (
    RunHandle,
    StepHandle,
    _apply_usage,
    _approval_event,
    _approval_value,
    _clean,
    check_outcome,
)
from ._state import CURRENT, effective_plan


def current_run() -> RunHandle | None:
    """The run the code is running in, or None.

    >>> import planscope
    >>> run = planscope.current_run()
    >>> if run is not None:
    ...     run.set_outcome("success")
    """
    return CURRENT.get().run


def current_step() -> StepHandle | None:
    """The innermost step attempt the code is running in, or None."""
    return CURRENT.get().step


def current_plan() -> Plan | None:
    """The plan in force here, with the version the SDK assigned (None before any planner)."""
    return effective_plan(CURRENT.get())


def set_outcome(outcome: str, reason: str | None = None) -> None:
    """Set the current run's outcome: ``"success"``, ``"failure"`` or ``"unknown"``.

    The run span's status is left alone (ERROR only if the run raises). No-op outside a run; any
    other outcome raises ConfigurationError, inside a run or not.

    >>> import planscope
    >>> planscope.set_outcome("failure", reason="total mismatch")
    """
    check_outcome(outcome)
    run = CURRENT.get().run
    if run is not None:
        run.set_outcome(outcome, reason)


def record_context(keys: Sequence[str] | Mapping[str, Any], tokens: int | None = None) -> None:
    """Record the context keys given to the current step's executor (and their size in tokens).

    Pass the context mapping itself to get the keys and a ``ceil(chars / 4)`` token estimate, or
    a list of keys with an optional token count. Values are never recorded here: they reach the
    trace only as the step's captured arguments (``planscope.input``). Repeated calls accumulate.
    No-op outside a step.

    >>> import planscope
    >>> planscope.record_context({"invoice": "INV-7: 3 items", "customer": "acme"})
    >>> planscope.record_context(["invoice", "customer"], tokens=1200)
    """
    step = CURRENT.get().step
    if step is not None:
        step.record_context(keys, tokens)


def record_self_assessment(result: str) -> None:
    """Record the executor's own verdict on the current step (``"success"``/``"failure"``, ADaPT).

    >>> import planscope
    >>> planscope.record_self_assessment("failure")
    """
    step = CURRENT.get().step
    if step is not None:
        step.record_self_assessment(result)


def record_usage(
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    cost_usd: float | None = None,
    response_model: str | None = None,
) -> None:
    """Add token usage to the current LLM span (else to the innermost planscope span).

    Tokens count towards the run's ``max_tokens`` budget; crossing an enforced one raises
    :class:`RetryBudgetExceeded`.

    >>> import planscope
    >>> planscope.record_usage(input_tokens=812, output_tokens=96, cost_usd=0.0002)
    """
    frame = CURRENT.get()
    target = frame.llm or frame.innermost
    if target is None:
        return
    exceeded = _apply_usage(
        target, frame.state, input_tokens, output_tokens, cost_usd, response_model
    )
    if exceeded is not None:
        raise exceeded


def record_event(name: str, **attributes: AttributeValue) -> None:
    """Add an event to the current span (any OpenTelemetry span).

    >>> import planscope
    >>> planscope.record_event("cache.miss", key="invoice-42")
    """
    with handle_internal_errors():
        trace.get_current_span().add_event(name, attributes=_clean(attributes))


def record_replan_request(reason: str, *, step_id: str | None = None) -> None:
    """Record that the executor asked the planner for a new plan (event on the current span).

    >>> import planscope
    >>> planscope.record_replan_request("supplier API returned 410", step_id="fetch")
    """
    with handle_internal_errors():
        frame = CURRENT.get()
        if step_id is None and frame.step is not None:
            step_id = frame.step.step_id
        plan = effective_plan(frame)
        trace.get_current_span().add_event(
            A.EVENT_REPLAN_REQUESTED,
            attributes=_clean(
                {
                    A.PLAN_REPLAN_REASON: reason,
                    A.STEP_ID: step_id,
                    A.PLAN_ID: plan.id if plan else None,
                    A.PLAN_VERSION: plan.version if plan else None,
                }
            ),
        )


def record_approval(
    approved: bool,
    *,
    edited: bool = False,
    reviewer: str | None = None,
    reason: str | None = None,
) -> None:
    """Record a human approval decision on the current plan.

    Inside a planner (or ``start_plan`` block) it sets ``planscope.plan.approval`` on the plan
    span (``approved``, ``edited`` or ``rejected``) and adds an approval granted/denied event;
    elsewhere it adds the event, with the current plan's id and version, to the current span.

    >>> import planscope
    >>> planscope.record_approval(True, reviewer="alice@example.com")
    """
    frame = CURRENT.get()
    if frame.plan is not None:
        frame.plan.record_approval(approved, edited=edited, reviewer=reviewer, reason=reason)
        return
    with handle_internal_errors():
        approval = _approval_value(approved, edited)
        _approval_event(
            trace.get_current_span(), approved, approval, reviewer, effective_plan(frame), reason
        )


def record_outcome_check(
    passed: bool, *, name: str | None = None, reason: str | None = None
) -> None:
    """Record the result of a success check on the run's outcome and set the run's outcome.

    Adds an outcome-check event to the current span and sets the run outcome to ``success`` or
    ``failure`` (a later :func:`set_outcome` wins); the run span's status is left alone.

    >>> import planscope
    >>> planscope.record_outcome_check(False, name="balance_matches", reason="off by 12.50")
    """
    with handle_internal_errors():
        outcome = A.OUTCOME_SUCCESS if passed else A.OUTCOME_FAILURE
        trace.get_current_span().add_event(
            A.EVENT_OUTCOME_CHECK,
            attributes=_clean(
                {
                    A.RUN_OUTCOME: outcome,
                    A.RUN_OUTCOME_REASON: reason,
                    A.OUTCOME_CHECK_NAME: name,
                }
            ),
        )
    set_outcome(A.OUTCOME_SUCCESS if passed else A.OUTCOME_FAILURE, reason)

"""planscope: observability for planner-executor LLM agents.

Decorate the agent's run, planner, steps, tools and LLM calls; planscope records OpenTelemetry
spans that tie every executor action to the plan step it serves. Without :func:`configure` (or
without the ``planscope[otlp]`` extra) everything is a cheap no-op.

>>> import planscope
>>> planscope.configure("http://localhost:4318", service_name="billing-agent")  # doctest: +SKIP
>>> @planscope.step
... def fetch(step: planscope.PlanStep) -> str: ...
"""

from ._budget import RetryBudget
from ._capture import Redactor
from ._config import VERSION as __version__
from ._config import PlanscopeHandle, configure
from ._errors import (
    ConfigurationError,
    PlanscopeError,
    PlanValidationError,
    RetryBudgetExceeded,
)
from ._instrument import (
    SpanContext,
    llm,
    planner,
    run,
    start_llm,
    start_plan,
    start_run,
    start_span,
    start_step,
    start_tool,
    step,
    tool,
)
from ._plan import Plan, PlanStep
from ._record import (
    current_plan,
    current_run,
    current_step,
    record_approval,
    record_context,
    record_event,
    record_outcome_check,
    record_replan_request,
    record_self_assessment,
    record_usage,
    set_outcome,
)
from ._spans import LlmHandle, PlanHandle, RunHandle, SpanHandle, StepHandle, ToolHandle

__all__ = [
    "ConfigurationError",
    "LlmHandle",
    "Plan",
    "PlanHandle",
    "PlanStep",
    "PlanValidationError",
    "PlanscopeError",
    "PlanscopeHandle",
    "Redactor",
    "RetryBudget",
    "RetryBudgetExceeded",
    "RunHandle",
    "SpanContext",
    "SpanHandle",
    "StepHandle",
    "ToolHandle",
    "__version__",
    "configure",
    "current_plan",
    "current_run",
    "current_step",
    "llm",
    "planner",
    "record_approval",
    "record_context",
    "record_event",
    "record_outcome_check",
    "record_replan_request",
    "record_self_assessment",
    "record_usage",
    "run",
    "set_outcome",
    "start_llm",
    "start_plan",
    "start_run",
    "start_span",
    "start_step",
    "start_tool",
    "step",
    "tool",
]

# Public classes report the public module (tracebacks, docs, reprs).
for _name in __all__:
    _obj = globals()[_name]
    if isinstance(_obj, type) and _obj.__module__.startswith("planscope._"):
        _obj.__module__ = "planscope"
del _name, _obj

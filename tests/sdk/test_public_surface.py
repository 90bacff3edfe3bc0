"""The public surface is exactly what we meant (httpx style)."""

from __future__ import annotations

import inspect

import planscope

EXPECTED = {
    # configuration
    "configure", "PlanscopeHandle", "Redactor", "__version__",
    # decorators and context managers
    "run", "planner", "step", "tool", "llm",
    "start_run", "start_plan", "start_step", "start_tool", "start_llm", "start_span", "SpanContext",
    # handles
    "SpanHandle", "RunHandle", "PlanHandle", "StepHandle", "ToolHandle", "LlmHandle",
    # helpers on the current spans
    "current_run", "current_step", "current_plan", "set_outcome",
    "record_context", "record_self_assessment", "record_usage", "record_event",
    "record_approval", "record_replan_request", "record_outcome_check",
    # values
    "Plan", "PlanStep", "RetryBudget",
    # errors
    "PlanscopeError", "ConfigurationError", "PlanValidationError", "RetryBudgetExceeded",
}  # fmt: skip


PUBLIC_MODULES = {
    "semconv", "fingerprints", "environment_variables", "cli", "api", "client", "safejson"
}  # fmt: skip


def test_all_equals_the_public_names() -> None:
    public = {
        name
        for name in dir(planscope)
        if not name.startswith("_") and not inspect.ismodule(getattr(planscope, name))
    }
    assert set(planscope.__all__) == public | {"__version__"}
    assert len(planscope.__all__) == len(set(planscope.__all__))


def test_all_is_the_intended_surface() -> None:
    assert set(planscope.__all__) == EXPECTED


def test_public_modules_are_the_intended_contracts() -> None:
    """Submodules other packages may import: documented, with an example; the rest is private."""
    import importlib
    import pkgutil

    found = {m.name for m in pkgutil.iter_modules(planscope.__path__) if not m.name.startswith("_")}
    assert found == PUBLIC_MODULES
    for name in PUBLIC_MODULES:
        doc = importlib.import_module(f"planscope.{name}").__doc__
        assert doc and ">>>" in doc, name


def test_public_classes_live_in_the_public_module() -> None:
    for name in planscope.__all__:
        obj = getattr(planscope, name)
        if inspect.isclass(obj):
            assert obj.__module__ == "planscope", name


def test_public_functions_have_docstrings_with_examples() -> None:
    for name in planscope.__all__:
        obj = getattr(planscope, name)
        if inspect.isfunction(obj) and name.startswith(("record_", "start_", "configure")):
            assert obj.__doc__ and ">>>" in obj.__doc__, name


def test_errors_share_one_root() -> None:
    for exc in (
        planscope.ConfigurationError,
        planscope.PlanValidationError,
        planscope.RetryBudgetExceeded,
    ):
        assert issubclass(exc, planscope.PlanscopeError)
    assert issubclass(planscope.PlanValidationError, ValueError)
    assert issubclass(planscope.PlanscopeError, Exception)

"""The decorators (``@run``, ``@planner``, ``@step``, ``@tool``, ``@llm``) and context managers.

One decorator core, :func:`_instrument`, wraps plain, async, generator and async-generator
functions alike: it opens a span per call through ``_spans.begin`` and keeps it current while the
user's code runs. Generators are traced over their whole iteration, but their span is current only
while the generator body runs (never leaks into the consumer between items).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import AsyncGenerator, Callable, Generator, Iterator, Mapping
from types import TracebackType
from typing import Any, Generic, Protocol, TypeVar, cast, overload

from opentelemetry.util.types import AttributeValue
from typing_extensions import ParamSpec

from . import semconv as A
from ._budget import RetryBudget
from ._capture import Binder, make_binder
from ._config import tracer
from ._internal import handle_internal_errors
from ._plan import PlanStep
from ._spans import (
    _HANDLES,
    LlmHandle,
    PlanHandle,
    RunHandle,
    Scope,
    SpanHandle,
    SpanOptions,
    StepHandle,
    ToolHandle,
    begin,
)

P = ParamSpec("P")
R = TypeVar("R")
H = TypeVar("H", bound=SpanHandle)


class Decorator(Protocol):
    """What ``@planscope.step("x")`` & co. return: a decorator that keeps the function's type.

    A protocol with a generic ``__call__`` rather than the alias
    ``Callable[[Callable[P, R]], Callable[P, R]]``: with the alias, P and R would belong to the
    factory call, where nothing binds them, and mypy would type the decorated function as
    ``def (*Never, **Never) -> Never``.
    """

    def __call__(self, func: Callable[P, R], /) -> Callable[P, R]: ...


# --- call-time resolution ----------------------------------------------------------------------
_RESOLVED_PARAMS = frozenset({"step", "step_id", "model", "objective", "run_id"})


def _resolve(
    options: SpanOptions,
    arguments: Mapping[str, Any],
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
) -> SpanOptions:
    """Fill what the decorator left open from the call's arguments (documented in docs/sdk.md)."""
    handle = _HANDLES.get(options.kind)
    changes = handle._from_call(options, arguments, args, kwargs) if handle is not None else {}
    return options.evolve(**changes) if changes else options


def _begin_resolved(
    options: SpanOptions, binder: Binder, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Scope[Any]:
    """begin() for a function whose arguments decide the span (step id, model, resource...)."""
    call_opts = options
    arguments: dict[str, Any] | None = None
    with handle_internal_errors():
        arguments = binder(args, kwargs)
        call_opts = _resolve(options, arguments, args, kwargs)
    return begin(call_opts, arguments)


def _instrument(options: SpanOptions) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """The decorator core shared by every span kind.

    Everything that depends only on the function (its signature, how to bind its arguments,
    whether its arguments decide the span) is worked out here, once, not per call.
    """

    def decorator(func: Callable[P, R]) -> Callable[P, R]:
        try:
            signature: inspect.Signature | None = inspect.signature(func)
        except (TypeError, ValueError):
            signature = None
        opts = options
        if opts.fallback_name is None:
            opts = opts.evolve(fallback_name=getattr(func, "__name__", None) or "function")

        params = set(signature.parameters) if signature is not None else set()
        resolves = bool(params & _RESOLVED_PARAMS) or callable(opts.resource)
        binder = make_binder(signature)

        # The wrappers below start with the same line (a helper would be one more call per call):
        # when the arguments decide the span, bind them now; else binding is only needed for
        # capture, and begin() does it if the span records.

        wrapper: Callable[..., Any]
        if inspect.isasyncgenfunction(func):
            agen_func = cast(Callable[..., AsyncGenerator[Any, Any]], func)

            async def wrapper(*args: Any, **kwargs: Any) -> AsyncGenerator[Any, Any]:
                scope = (
                    _begin_resolved(opts, binder, args, kwargs)
                    if resolves
                    else begin(opts, None, binder, args, kwargs)
                )
                agen = agen_func(*args, **kwargs)
                to_send: Any = None
                to_throw: BaseException | None = None
                while True:
                    tokens = scope.enter()
                    try:
                        if to_throw is not None:
                            exc, to_throw = to_throw, None
                            item = await agen.athrow(exc)
                        else:
                            item = await agen.asend(to_send)
                    except StopAsyncIteration:
                        scope.succeed(generator=True)
                        return
                    except BaseException as exc:
                        scope.fail(exc)
                        raise
                    finally:
                        scope.exit(tokens)
                    scope.add_item(item)
                    try:
                        to_send = yield item
                    except GeneratorExit:
                        tokens = scope.enter()
                        try:
                            await agen.aclose()
                        except BaseException as exc:
                            scope.fail(exc)
                            raise
                        finally:
                            scope.exit(tokens)
                        scope.succeed(generator=True)
                        raise
                    except BaseException as exc:
                        to_throw = exc

        elif inspect.iscoroutinefunction(func):
            coro_func = cast(Callable[..., Any], func)

            async def wrapper(*args: Any, **kwargs: Any) -> Any:
                scope = (
                    _begin_resolved(opts, binder, args, kwargs)
                    if resolves
                    else begin(opts, None, binder, args, kwargs)
                )
                tokens = scope.enter()
                try:
                    result = await coro_func(*args, **kwargs)
                except BaseException as exc:
                    scope.fail(exc)
                    raise
                finally:
                    scope.exit(tokens)
                scope.succeed(result)
                return result

        elif inspect.isgeneratorfunction(func):
            gen_func = cast(Callable[..., Generator[Any, Any, Any]], func)

            def wrapper(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
                scope = (
                    _begin_resolved(opts, binder, args, kwargs)
                    if resolves
                    else begin(opts, None, binder, args, kwargs)
                )
                gen = gen_func(*args, **kwargs)
                to_send: Any = None
                to_throw: BaseException | None = None
                while True:
                    tokens = scope.enter()
                    try:
                        if to_throw is not None:
                            exc, to_throw = to_throw, None
                            item = gen.throw(exc)
                        else:
                            item = gen.send(to_send)
                    except StopIteration as stop:
                        scope.succeed(generator=True)
                        return stop.value
                    except BaseException as exc:
                        scope.fail(exc)
                        raise
                    finally:
                        scope.exit(tokens)
                    scope.add_item(item)
                    try:
                        to_send = yield item
                    except GeneratorExit:
                        tokens = scope.enter()
                        try:
                            gen.close()
                        except BaseException as exc:
                            scope.fail(exc)
                            raise
                        finally:
                            scope.exit(tokens)
                        scope.succeed(generator=True)
                        raise
                    except BaseException as exc:
                        to_throw = exc

        else:
            sync_func = cast(Callable[..., Any], func)

            def wrapper(*args: Any, **kwargs: Any) -> Any:
                scope = (
                    _begin_resolved(opts, binder, args, kwargs)
                    if resolves
                    else begin(opts, None, binder, args, kwargs)
                )
                tokens = scope.enter()
                try:
                    result = sync_func(*args, **kwargs)
                except BaseException as exc:
                    scope.fail(exc)
                    raise
                finally:
                    scope.exit(tokens)
                scope.succeed(result)
                return result

        functools.update_wrapper(wrapper, func)
        return cast(Callable[P, R], wrapper)

    return decorator


def _apply(
    first: Any, options: SpanOptions, field: str
) -> Callable[[Callable[P, R]], Callable[P, R]] | Callable[P, R]:
    """Support both ``@deco`` and ``@deco(...)``/``@deco("name", ...)``."""
    if callable(first):
        return _instrument(options)(first)
    if first is not None:
        options = options.evolve(**{field: first})
    return _instrument(options)


def _budget(budget: RetryBudget | Mapping[str, Any] | None) -> RetryBudget | None:
    if budget is None or isinstance(budget, RetryBudget):
        return budget
    return RetryBudget.from_dict(budget)


# --- decorators ----------------------------------------------------------------------------------
@overload
def run(agent: Callable[P, R], /) -> Callable[P, R]: ...
@overload
def run(
    agent: str | None = None,
    *,
    objective: str | None = None,
    variant: str | None = None,
    budget: RetryBudget | Mapping[str, Any] | None = None,
    capture: bool | None = None,
) -> Decorator: ...
def run(
    agent: str | Callable[..., Any] | None = None,
    *,
    objective: str | None = None,
    variant: str | None = None,
    budget: RetryBudget | Mapping[str, Any] | None = None,
    capture: bool | None = None,
) -> Any:
    """Trace one agent run (``invoke_agent {agent}``); every span inside carries its run id.

    ``agent`` defaults to the function name. A parameter named ``objective`` (or ``run_id``) of the
    decorated function fills the run's objective (or id) at call time. ``budget`` overrides the
    configured default :class:`RetryBudget`. Use :func:`planscope.set_outcome` inside; a run that
    raises ends with outcome ``failure``, one that returns without an outcome with ``unknown``.

    >>> import planscope
    >>> @planscope.run("billing-agent", variant="plan-and-act", budget=RetryBudget(max_replans=2))
    ... def handle_ticket(objective: str) -> str: ...
    """
    options = SpanOptions(
        A.KIND_RUN, objective=objective, variant=variant, budget=_budget(budget), capture=capture
    )
    return _apply(agent, options, "name")


@overload
def planner(agent: Callable[P, R], /) -> Callable[P, R]: ...
@overload
def planner(
    agent: str | None = None, *, scope: str | None = None, capture: bool | None = None
) -> Decorator: ...
def planner(
    agent: str | Callable[..., Any] | None = None,
    *,
    scope: str | None = None,
    capture: bool | None = None,
) -> Any:
    """Trace a planner call (``plan {agent}``); its return value is recorded as the plan.

    Return a :class:`Plan` (or its dict form, or a list of steps): the SDK records it, assigns its
    version within the run (a later plan with the same id is a replan: version + 1) and makes it
    the current plan of the steps that follow. ``agent`` defaults to the run's agent. A planner
    called inside a step plans that step's sub-goal: ``scope`` defaults to the step id.

    >>> import planscope
    >>> @planscope.planner
    ... def make_plan(objective: str) -> Plan:
    ...     return Plan([PlanStep("fetch"), PlanStep("pay", depends_on=["fetch"])])
    """
    return _apply(agent, SpanOptions(A.KIND_PLAN, scope=scope, capture=capture), "name")


@overload
def step(step_id: Callable[P, R], /) -> Callable[P, R]: ...
@overload
def step(
    step_id: str | None = None,
    *,
    executor: str | None = None,
    depth: int | None = None,
    capture: bool | None = None,
) -> Decorator: ...
def step(
    step_id: str | Callable[..., Any] | None = None,
    *,
    executor: str | None = None,
    depth: int | None = None,
    capture: bool | None = None,
) -> Any:
    """Trace one attempt at a plan step (``execute_step {step_id}``); each call is one attempt.

    The step id is, in order: ``step_id`` given here; else, at call time, an argument named
    ``step`` holding a :class:`PlanStep` or an argument named ``step_id`` holding a str; else the
    function name. ``executor`` given here wins over the PlanStep's. Attempts are counted per
    (run, step id); an enforced budget refuses an attempt by raising
    :class:`RetryBudgetExceeded` before the body.

    >>> import planscope
    >>> @planscope.step(executor="worker-1")
    ... def execute(step: PlanStep, context: dict) -> str: ...
    """
    options = SpanOptions(A.KIND_STEP, executor=executor, depth=depth, capture=capture)
    return _apply(step_id, options, "name")


@overload
def tool(name: Callable[P, R], /) -> Callable[P, R]: ...
@overload
def tool(
    name: str | None = None,
    *,
    resource: str | Callable[..., str] | None = None,
    effect: str | None = None,
    capture: bool | None = None,
) -> Decorator: ...
def tool(
    name: str | Callable[..., Any] | None = None,
    *,
    resource: str | Callable[..., str] | None = None,
    effect: str | None = None,
    capture: bool | None = None,
) -> Any:
    """Trace a tool call (``execute_tool {name}``), stamped with the enclosing step.

    ``effect`` is ``"read"``, ``"write"`` or ``"irreversible"``; ``resource`` names what the tool
    touches, either a str or a function called with the tool's own arguments, as the tool was
    called (on a method: ``self`` included).

    >>> import planscope
    >>> @planscope.tool(effect="write", resource=lambda path, text: f"file:{path}")
    ... def write_file(path: str, text: str) -> None: ...
    """
    options = SpanOptions(A.KIND_TOOL, resource=resource, effect=effect, capture=capture)
    return _apply(name, options, "name")


@overload
def llm(model: Callable[P, R], /) -> Callable[P, R]: ...
@overload
def llm(
    model: str | None = None,
    *,
    role: str | None = None,
    provider: str | None = None,
    capture: bool | None = None,
) -> Decorator: ...
def llm(
    model: str | Callable[..., Any] | None = None,
    *,
    role: str | None = None,
    provider: str | None = None,
    capture: bool | None = None,
) -> Any:
    """Trace an LLM call (``chat {model}``), stamped with the enclosing step.

    ``model`` may also come from an argument named ``model`` at call time. ``role`` defaults to
    ``planner`` inside a planner and ``executor`` inside a step. Token usage is read from an
    OpenAI-shaped return value (``.usage.prompt_tokens`` / ``["usage"]``) unless
    :func:`planscope.record_usage` was called.

    >>> import planscope
    >>> @planscope.llm(provider="openai")
    ... def chat(messages: list[dict], model: str = "gpt-4o-mini") -> dict: ...
    """
    options = SpanOptions(A.KIND_LLM, role=role, provider=provider, capture=capture)
    return _apply(model, options, "name")


# --- context managers ----------------------------------------------------------------------------
class SpanContext(Generic[H]):
    """A context manager that opens a planscope span and yields its handle."""

    def __init__(self, options: SpanOptions, arguments: Mapping[str, Any] | None) -> None:
        self._options = options
        self._arguments = arguments
        self._scope: Scope[Any] | None = None
        self._tokens: Any = None

    def __enter__(self) -> H:
        self._scope = begin(self._options, self._arguments)
        self._tokens = self._scope.enter()
        return cast(H, self._scope.handle)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        scope = self._scope
        if scope is None:
            return
        try:
            if exc is not None:
                scope.fail(exc)
            else:
                scope.succeed()
        finally:
            scope.exit(self._tokens)


def start_run(
    agent: str,
    *,
    run_id: str | None = None,
    objective: str | None = None,
    variant: str | None = None,
    budget: RetryBudget | Mapping[str, Any] | None = None,
    inputs: Mapping[str, Any] | None = None,
    capture: bool | None = None,
) -> SpanContext[RunHandle]:
    """Context-manager form of :func:`run`; yields the :class:`RunHandle`.

    >>> import planscope
    >>> with planscope.start_run("billing-agent", objective="pay invoice 42") as run:
    ...     run.set_outcome("success")
    """
    options = SpanOptions(
        A.KIND_RUN,
        name=agent,
        run_id=run_id,
        objective=objective,
        variant=variant,
        budget=_budget(budget),
        capture=capture,
    )
    return SpanContext(options, inputs)


def start_plan(
    agent: str | None = None,
    *,
    scope: str | None = None,
    inputs: Mapping[str, Any] | None = None,
    capture: bool | None = None,
) -> SpanContext[PlanHandle]:
    """Context-manager form of :func:`planner`; record the plan with ``handle.set_plan(plan)``.

    >>> import planscope
    >>> with planscope.start_plan() as p:
    ...     plan = p.set_plan([PlanStep("fetch"), PlanStep("pay", depends_on=["fetch"])])
    """
    options = SpanOptions(
        A.KIND_PLAN, name=agent, fallback_name="planner", scope=scope, capture=capture
    )
    return SpanContext(options, inputs)


def start_step(
    step: str | PlanStep,
    *,
    executor: str | None = None,
    depth: int | None = None,
    inputs: Mapping[str, Any] | None = None,
    capture: bool | None = None,
) -> SpanContext[StepHandle]:
    """Context-manager form of :func:`step`: one attempt at the given step id or PlanStep.

    ``executor`` given here wins over the PlanStep's.

    >>> import planscope
    >>> with planscope.start_step("fetch", executor="worker-1") as s:
    ...     s.record_context({"invoice_id": "42"})
    """
    options = SpanOptions(
        A.KIND_STEP,
        name=step if isinstance(step, str) else None,
        plan_step=step if isinstance(step, PlanStep) else None,
        executor=executor,
        depth=depth,
        capture=capture,
    )
    return SpanContext(options, inputs)


def start_tool(
    name: str,
    *,
    resource: str | None = None,
    effect: str | None = None,
    arguments: Mapping[str, Any] | None = None,
    capture: bool | None = None,
) -> SpanContext[ToolHandle]:
    """Context-manager form of :func:`tool`; ``arguments`` are captured and hashed.

    >>> import planscope
    >>> url = "https://example.com/invoice/7"
    >>> with planscope.start_tool("http_get", effect="read", arguments={"url": url}) as t:
    ...     t.set_output({"status": 200})
    """
    options = SpanOptions(A.KIND_TOOL, name=name, resource=resource, effect=effect, capture=capture)
    return SpanContext(options, arguments)


def start_llm(
    model: str | None = None,
    *,
    role: str | None = None,
    provider: str | None = None,
    inputs: Mapping[str, Any] | None = None,
    capture: bool | None = None,
) -> SpanContext[LlmHandle]:
    """Context-manager form of :func:`llm`; yields an :class:`LlmHandle`.

    >>> import planscope
    >>> with planscope.start_llm("gpt-4o-mini", role="executor") as call:
    ...     call.record_usage(input_tokens=812, output_tokens=96, cost_usd=0.0002)
    """
    options = SpanOptions(A.KIND_LLM, name=model, role=role, provider=provider, capture=capture)
    return SpanContext(options, inputs)


@contextlib.contextmanager
def start_span(
    name: str, attributes: Mapping[str, AttributeValue] | None = None
) -> Iterator[SpanHandle]:
    """A plain span, under the current one, for runtime machinery that is none of planscope's
    kinds: a scheduler's queue wait, a context switch. Exceptions are recorded and re-raised.

    >>> import planscope
    >>> with planscope.start_span("scheduler.queue", {"planscope.scheduler.policy": "fifo"}):
    ...     pass
    """
    with tracer().start_as_current_span(name, attributes=dict(attributes or {})) as span:
        yield SpanHandle(span)

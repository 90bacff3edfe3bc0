"""One decorator core: every decorator on sync, async, generator and async-generator functions."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable
from typing import Any

import planscope
import pytest
from opentelemetry import trace
from opentelemetry.trace import StatusCode
from planscope import semconv as A

from .conftest import Spans

FUNCTION_KINDS = ["sync", "async", "generator", "async_generator"]

# decorator, arguments form, expected span name for a function named `work`
CASES = [
    ("run", None, "invoke_agent work", A.KIND_RUN),
    ("run", "billing", "invoke_agent billing", A.KIND_RUN),
    ("planner", None, "plan work", A.KIND_PLAN),
    ("planner", "billing", "plan billing", A.KIND_PLAN),
    ("step", None, "execute_step work", A.KIND_STEP),
    ("step", "fetch", "execute_step fetch", A.KIND_STEP),
    ("tool", None, "execute_tool work", A.KIND_TOOL),
    ("tool", "http_get", "execute_tool http_get", A.KIND_TOOL),
    ("llm", None, "chat", A.KIND_LLM),
    ("llm", "gpt-4o", "chat gpt-4o", A.KIND_LLM),
]


def make_function(kind: str) -> Callable[..., Any]:
    if kind == "sync":

        def work(x: int, label: str = "a") -> int:
            return x + 1

    elif kind == "async":

        async def work(x: int, label: str = "a") -> int:  # type: ignore[misc]
            await asyncio.sleep(0)
            return x + 1

    elif kind == "generator":

        def work(x: int, label: str = "a") -> Any:  # type: ignore[misc]
            yield x
            yield x + 1

    else:

        async def work(x: int, label: str = "a") -> Any:  # type: ignore[misc]
            yield x
            await asyncio.sleep(0)
            yield x + 1

    return work


def call(func: Callable[..., Any], kind: str, *args: Any) -> Any:
    if kind == "sync":
        return func(*args)
    if kind == "async":
        return asyncio.run(func(*args))
    if kind == "generator":
        return list(func(*args))

    async def consume() -> list[Any]:
        return [item async for item in func(*args)]

    return asyncio.run(consume())


def decorate(func: Callable[..., Any], decorator: str, arg: str | None) -> Callable[..., Any]:
    deco = getattr(planscope, decorator)
    return deco(func) if arg is None else deco(arg)(func)


@pytest.mark.parametrize("fkind", FUNCTION_KINDS)
@pytest.mark.parametrize(("decorator", "arg", "span_name", "span_kind"), CASES)
def test_every_decorator_traces_every_function_kind(
    spans: Spans, fkind: str, decorator: str, arg: str | None, span_name: str, span_kind: str
) -> None:
    original = make_function(fkind)
    wrapped = decorate(original, decorator, arg)

    result = call(wrapped, fkind, 41)

    assert result == ([41, 42] if "generator" in fkind else 42)
    span = spans.one(span_kind)
    assert span.name == span_name
    attrs = Spans.attrs(span)
    assert attrs[A.GEN_AI_OPERATION_NAME] == A.OPERATION_FOR_KIND[span_kind]
    assert json.loads(attrs[A.INPUT]) == {"x": 41, "label": "a"}
    assert json.loads(attrs[A.OUTPUT]) == ([41, 42] if "generator" in fkind else 42)
    assert span.status.status_code is StatusCode.UNSET


@pytest.mark.parametrize("fkind", FUNCTION_KINDS)
@pytest.mark.parametrize("decorator", ["run", "planner", "step", "tool", "llm"])
def test_wrapping_preserves_signature_name_and_function_kind(fkind: str, decorator: str) -> None:
    original = make_function(fkind)
    for wrapped in (decorate(original, decorator, None), decorate(original, decorator, "x")):
        assert inspect.signature(wrapped) == inspect.signature(original)
        assert wrapped.__name__ == "work"
        assert wrapped.__wrapped__ is original  # type: ignore[attr-defined]
        assert inspect.iscoroutinefunction(wrapped) == inspect.iscoroutinefunction(original)
        assert inspect.isgeneratorfunction(wrapped) == inspect.isgeneratorfunction(original)
        assert inspect.isasyncgenfunction(wrapped) == inspect.isasyncgenfunction(original)


def test_methods_capture_arguments_without_self(spans: Spans) -> None:
    class Agent:
        bucket = "notes"

        @planscope.tool(resource=lambda self, key: f"s3:{self.bucket}/{key}")
        def lookup(self, key: str) -> str:
            return key.upper()

    assert Agent().lookup("k") == "K"
    attrs = Spans.attrs(spans.one(A.KIND_TOOL))
    assert json.loads(attrs[A.INPUT]) == {"key": "k"}
    assert attrs[A.TOOL_RESOURCE] == "s3:notes/k"  # the resource callable does get self


def test_generator_span_covers_iteration_but_does_not_leak_into_consumer(spans: Spans) -> None:
    @planscope.tool
    def search() -> str:
        return "hit"

    @planscope.step("stream")
    def produce() -> Any:
        yield 1
        search()
        yield 2

    seen_outside = []
    for _ in produce():
        seen_outside.append(planscope.current_step())
        assert not trace.get_current_span().is_recording()
    assert seen_outside == [None, None]

    step_span = spans.one(A.KIND_STEP)
    tool_span = spans.one(A.KIND_TOOL)
    assert tool_span.parent is not None
    assert tool_span.parent.span_id == step_span.context.span_id
    assert Spans.attrs(tool_span)[A.STEP_ID] == "stream"
    assert step_span.end_time is not None and tool_span.end_time is not None
    assert step_span.end_time >= tool_span.end_time


def test_generator_closed_early_ends_ok_with_the_items_seen(spans: Spans) -> None:
    cleaned = []

    @planscope.step
    def numbers() -> Any:
        try:
            yield from range(10)
        finally:
            cleaned.append(planscope.current_step())

    gen = numbers()
    assert next(gen) == 0
    assert next(gen) == 1
    gen.close()

    span = spans.one(A.KIND_STEP)
    attrs = Spans.attrs(span)
    assert json.loads(attrs[A.OUTPUT]) == [0, 1]
    assert attrs[A.STEP_STATUS] == A.STATUS_OK
    assert cleaned and cleaned[0] is not None  # cleanup ran inside the step's context


def test_generator_send_and_throw_are_forwarded(spans: Spans) -> None:
    @planscope.tool
    def echo() -> Any:
        received = yield "ready"
        try:
            yield f"got {received}"
        except KeyError:
            yield "recovered"

    gen = echo()
    assert next(gen) == "ready"
    assert gen.send("ping") == "got ping"
    assert gen.throw(KeyError("x")) == "recovered"
    gen.close()
    assert json.loads(Spans.attrs(spans.one(A.KIND_TOOL))[A.OUTPUT]) == [
        "ready",
        "got ping",
        "recovered",
    ]


def test_generator_error_is_recorded(spans: Spans) -> None:
    @planscope.step
    def broken() -> Any:
        yield 1
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        list(broken())
    span = spans.one(A.KIND_STEP)
    assert span.status.status_code is StatusCode.ERROR
    assert Spans.attrs(span)[A.STEP_STATUS] == A.STATUS_ERROR


def test_async_generator_closed_early(spans: Spans) -> None:
    @planscope.llm("m")
    async def stream() -> Any:
        for token in ("a", "b", "c"):
            yield token

    async def main() -> list[str]:
        out = []
        agen = stream()
        async for token in agen:
            out.append(token)
            if token == "b":
                break
        await agen.aclose()
        return out

    assert asyncio.run(main()) == ["a", "b"]
    assert json.loads(Spans.attrs(spans.one(A.KIND_LLM))[A.OUTPUT]) == ["a", "b"]


def test_concurrent_async_steps_get_their_own_context(spans: Spans) -> None:
    @planscope.tool
    async def io(tag: str) -> str:
        await asyncio.sleep(0.001)
        return tag

    @planscope.step
    async def execute(step_id: str) -> str:
        await asyncio.sleep(0)
        return await io(step_id)

    @planscope.run("parallel")
    async def main() -> list[str]:
        return list(await asyncio.gather(*(execute(f"s{i}") for i in range(5))))

    assert asyncio.run(main()) == [f"s{i}" for i in range(5)]
    steps = {s.context.span_id: Spans.attrs(s)[A.STEP_ID] for s in spans.of_kind(A.KIND_STEP)}
    assert sorted(steps.values()) == [f"s{i}" for i in range(5)]
    for tool_span in spans.of_kind(A.KIND_TOOL):
        assert tool_span.parent is not None
        parent_step = steps[tool_span.parent.span_id]
        assert Spans.attrs(tool_span)[A.STEP_ID] == parent_step
        assert json.loads(Spans.attrs(tool_span)[A.OUTPUT]) == parent_step


def test_context_managers_open_the_same_spans(spans: Spans) -> None:
    with planscope.start_run("agent", run_id="r-1", objective="o") as run:
        with planscope.start_plan() as plan_span:
            plan_span.set_plan([planscope.PlanStep("a")])
        with planscope.start_step("a") as step_span:
            with planscope.start_tool("search", effect="read", arguments={"q": "x"}) as tool_span:
                tool_span.set_output({"hits": 1})
            with planscope.start_llm("gpt-4o") as call:
                call.record_usage(input_tokens=3, output_tokens=4)
        assert step_span.attempt == 1
        assert run.run_id == "r-1"

    names = sorted(s.name for s in spans.all())
    assert names == sorted(
        [
            "invoke_agent agent",
            "plan agent",
            "execute_step a",
            "execute_tool search",
            "chat gpt-4o",
        ]
    )
    tool_attrs = Spans.attrs(spans.one(A.KIND_TOOL))
    assert tool_attrs[A.RUN_ID] == "r-1"
    assert json.loads(tool_attrs[A.GEN_AI_TOOL_CALL_ARGUMENTS]) == {"q": "x"}
    assert json.loads(tool_attrs[A.GEN_AI_TOOL_CALL_RESULT]) == {"hits": 1}
    run_attrs = Spans.attrs(spans.one(A.KIND_RUN))
    assert run_attrs[A.RUN_OBJECTIVE] == "o"
    assert run_attrs[A.GEN_AI_CONVERSATION_ID] == "r-1"

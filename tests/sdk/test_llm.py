"""LLM spans: model, role, token usage (manual and from OpenAI/Anthropic-shaped responses)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import planscope
from planscope import semconv as A

from .conftest import Spans


def test_usage_from_an_openai_response_object(spans: Spans) -> None:
    @planscope.llm(provider="openai")
    def chat(messages: list[dict[str, str]], model: str = "gpt-4o-mini") -> Any:
        usage = SimpleNamespace(prompt_tokens=120, completion_tokens=30)
        return SimpleNamespace(usage=usage, model="gpt-4o-mini-2024-07-18")

    chat([{"role": "user", "content": "hi"}])
    span = spans.one(A.KIND_LLM)
    attrs = Spans.attrs(span)
    assert span.name == "chat gpt-4o-mini"  # model taken from the call's `model` argument
    assert attrs[A.GEN_AI_REQUEST_MODEL] == "gpt-4o-mini"
    assert attrs[A.GEN_AI_PROVIDER_NAME] == "openai"
    assert attrs[A.GEN_AI_USAGE_INPUT_TOKENS] == 120
    assert attrs[A.GEN_AI_USAGE_OUTPUT_TOKENS] == 30
    assert attrs[A.GEN_AI_RESPONSE_MODEL] == "gpt-4o-mini-2024-07-18"


def test_usage_from_dicts_and_anthropic_shape(spans: Spans) -> None:
    @planscope.llm("claude")
    def anthropic() -> dict[str, Any]:
        return {"usage": {"input_tokens": 7, "output_tokens": 2}}

    @planscope.llm("none")
    def no_usage() -> dict[str, Any]:
        return {"choices": []}

    anthropic()
    no_usage()
    first, second = (Spans.attrs(s) for s in spans.of_kind(A.KIND_LLM))
    assert (first[A.GEN_AI_USAGE_INPUT_TOKENS], first[A.GEN_AI_USAGE_OUTPUT_TOKENS]) == (7, 2)
    assert A.GEN_AI_USAGE_INPUT_TOKENS not in second


def test_record_usage_wins_over_the_response_and_accumulates(spans: Spans) -> None:
    @planscope.llm("m", role="judge")
    def chat() -> dict[str, Any]:
        planscope.record_usage(input_tokens=10, output_tokens=1, cost_usd=0.001)
        planscope.record_usage(input_tokens=5, output_tokens=1, cost_usd=0.002)
        return {"usage": {"prompt_tokens": 999, "completion_tokens": 999}}

    with planscope.start_run("agent") as run:
        chat()
    attrs = Spans.attrs(spans.one(A.KIND_LLM))
    assert attrs[A.GEN_AI_USAGE_INPUT_TOKENS] == 15
    assert attrs[A.GEN_AI_USAGE_OUTPUT_TOKENS] == 2
    assert abs(attrs[A.LLM_COST_USD] - 0.003) < 1e-12
    assert attrs[A.LLM_ROLE] == "judge"
    assert run.state.tokens == 17


def test_streaming_usage_from_the_last_chunk(spans: Spans) -> None:
    @planscope.llm("m")
    def stream() -> Any:
        yield SimpleNamespace(delta="Hel", usage=None)
        yield SimpleNamespace(delta="lo", usage=None)
        yield SimpleNamespace(delta="", usage=SimpleNamespace(prompt_tokens=9, completion_tokens=2))

    assert "".join(chunk.delta for chunk in stream()) == "Hello"
    attrs = Spans.attrs(spans.one(A.KIND_LLM))
    assert (attrs[A.GEN_AI_USAGE_INPUT_TOKENS], attrs[A.GEN_AI_USAGE_OUTPUT_TOKENS]) == (9, 2)


def test_record_usage_outside_an_llm_span_goes_to_the_innermost_span(spans: Spans) -> None:
    with planscope.start_run("agent") as run, planscope.start_step("s"):
        planscope.record_usage(input_tokens=4, output_tokens=4)
    assert Spans.attrs(spans.one(A.KIND_STEP))[A.GEN_AI_USAGE_INPUT_TOKENS] == 4
    assert run.state.tokens == 8

"""Captured inputs/outputs: JSON, repr fallback, size caps, redaction, switches."""

from __future__ import annotations

import json
from typing import Any

import planscope
import pytest
from opentelemetry.sdk.trace import TracerProvider
from planscope import _capture
from planscope import semconv as A
from planscope.environment_variables import PLANSCOPE_CAPTURE, PLANSCOPE_CAPTURE_MAX_BYTES

from .conftest import Spans


class Opaque:
    def __repr__(self) -> str:
        return "<Opaque 7>"


def test_non_json_values_fall_back_to_repr(spans: Spans) -> None:
    @planscope.tool
    def odd(obj: Any, tags: set[str], blob: bytes) -> Any:
        return {"obj": obj}

    odd(Opaque(), {"b", "a"}, b"\x00")
    attrs = Spans.attrs(spans.one(A.KIND_TOOL))
    assert json.loads(attrs[A.INPUT]) == {
        "obj": "<Opaque 7>",
        "tags": ["a", "b"],
        "blob": "b'\\x00'",
    }
    assert json.loads(attrs[A.OUTPUT]) == {"obj": "<Opaque 7>"}


def test_circular_values_do_not_break_capture(spans: Spans) -> None:
    loop: list[Any] = []
    loop.append(loop)

    @planscope.tool
    def f(x: list[Any]) -> int:
        return 1

    assert f(loop) == 1
    assert "[[...]]" in Spans.attrs(spans.one(A.KIND_TOOL))[A.INPUT]


def test_payloads_are_capped_and_marked_truncated(spans: Spans, provider: TracerProvider) -> None:
    planscope.configure(tracer_provider=provider, capture_max_bytes=64)

    @planscope.step
    def big(text: str) -> str:
        return "é" * 100

    @planscope.step
    def small(text: str) -> str:
        return "ok"

    big("x" * 1000)
    small("y")
    big_attrs, small_attrs = (Spans.attrs(s) for s in spans.of_kind(A.KIND_STEP))
    assert len(big_attrs[A.INPUT].encode()) <= 64
    assert len(big_attrs[A.OUTPUT].encode()) <= 64
    assert big_attrs[A.OUTPUT].startswith('"éé')  # cut on a character boundary
    assert big_attrs[A.TRUNCATED] is True
    assert A.TRUNCATED not in small_attrs


def test_generator_output_is_a_capped_list(spans: Spans, provider: TracerProvider) -> None:
    planscope.configure(tracer_provider=provider, capture_max_bytes=20)

    @planscope.tool
    def many() -> Any:
        yield from range(100)

    assert sum(many()) == 4950
    attrs = Spans.attrs(spans.one(A.KIND_TOOL))
    assert json.loads(attrs[A.OUTPUT]) == list(range(9))  # 19 bytes: the list stays valid
    assert attrs[A.TRUNCATED] is True


def test_capture_off_globally_and_per_decorator(spans: Spans, provider: TracerProvider) -> None:
    @planscope.tool(capture=False)
    def secret(password: str) -> str:
        return "token"

    @planscope.tool
    def public(q: str) -> str:
        return q

    secret("hunter2")
    tool_attrs = Spans.attrs(spans.one(A.KIND_TOOL))
    assert not {A.INPUT, A.OUTPUT, A.GEN_AI_TOOL_CALL_ARGUMENTS} & set(tool_attrs)
    assert A.TOOL_ARGS_HASH in tool_attrs  # hashes are still recorded

    planscope.configure(tracer_provider=provider, capture=False)
    public("q")

    @planscope.tool(capture=True)
    def forced(q: str) -> str:
        return q

    forced("q")
    public_attrs, forced_attrs = (Spans.attrs(s) for s in spans.of_kind(A.KIND_TOOL)[1:])
    assert A.INPUT not in public_attrs
    assert json.loads(forced_attrs[A.INPUT]) == {"q": "q"}


def test_capture_env_vars_are_honoured(
    monkeypatch: pytest.MonkeyPatch, spans: Spans, provider: TracerProvider
) -> None:
    monkeypatch.setenv(PLANSCOPE_CAPTURE, "false")
    planscope.configure(tracer_provider=provider)

    @planscope.tool
    def f(q: str) -> str:
        return q

    f("a")
    assert A.INPUT not in Spans.attrs(spans.all()[-1])

    monkeypatch.setenv(PLANSCOPE_CAPTURE, "true")
    monkeypatch.setenv(PLANSCOPE_CAPTURE_MAX_BYTES, "5")
    planscope.configure(tracer_provider=provider)
    f("abcdefgh")
    assert Spans.attrs(spans.all()[-1])[A.INPUT] == '{"q":'


def test_redaction_runs_before_serialisation_and_hashing(
    spans: Spans, provider: TracerProvider
) -> None:
    seen: list[tuple[str, str]] = []

    def redact(kind: str, key: str, value: Any) -> Any:
        seen.append((kind, key))
        if key in ("api_key", "return"):
            return "***"
        return value

    planscope.configure(tracer_provider=provider, redact=redact)

    @planscope.tool
    def call_api(url: str, api_key: str) -> str:
        return "secret-response"

    call_api("https://x", "sk-1")
    call_api("https://x", "sk-2")
    first, second = (Spans.attrs(s) for s in spans.of_kind(A.KIND_TOOL))
    assert json.loads(first[A.INPUT]) == {"url": "https://x", "api_key": "***"}
    assert first[A.OUTPUT] == '"***"'
    assert "sk-1" not in json.dumps(first)
    assert first[A.TOOL_ARGS_HASH] == second[A.TOOL_ARGS_HASH]
    assert ("tool", "api_key") in seen and ("tool", "return") in seen


def test_invalid_configuration_is_rejected(provider: TracerProvider) -> None:
    with pytest.raises(planscope.ConfigurationError):
        planscope.configure(tracer_provider=provider, capture_max_bytes=-1)
    with pytest.raises(planscope.ConfigurationError):
        planscope.configure(tracer_provider=provider, budget={"nope": 1})


def test_hash_and_fingerprint_helpers() -> None:
    assert _capture.stable_hash({"a": Opaque()}) == _capture.stable_hash({"a": Opaque()})
    assert _capture.stable_hash([1, 2]) != _capture.stable_hash([2, 1])
    e1 = ConnectionError("conn 10.0.0.1:5432 refused, trace 4b1f9a7c2e3d4f5a")
    e2 = ConnectionError("conn 10.0.0.7:5433 refused, trace 99aa11bb22cc33dd")
    assert _capture.error_fingerprint(e1) == _capture.error_fingerprint(e2)
    assert _capture.error_fingerprint(e1) != _capture.error_fingerprint(OSError(str(e1)))
    assert _capture.normalise_message("job 123e4567-e89b-12d3-a456-426614174000 failed") == (
        "job <uuid> failed"
    )

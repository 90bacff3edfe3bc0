"""Errors: user exceptions are recorded and re-raised; internal errors never break the app."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import planscope
import pytest
from opentelemetry.trace import StatusCode
from planscope import _internal, _spans
from planscope import semconv as A

from .conftest import Spans


class PaymentDeclined(Exception):
    pass


def test_user_exception_is_recorded_and_reraised_unchanged(spans: Spans) -> None:
    original = PaymentDeclined("card 4242 declined")

    @planscope.tool(effect="irreversible")
    def pay() -> None:
        raise original

    with pytest.raises(PaymentDeclined) as info:
        pay()
    assert info.value is original
    assert info.traceback[-1].name == "pay"  # the user's frame is the last one
    span = spans.one(A.KIND_TOOL)
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "PaymentDeclined: card 4242 declined"
    assert Spans.attrs(span)[A.ERROR_TYPE] == "PaymentDeclined"
    (event,) = [e for e in span.events if e.name == "exception"]
    assert event.attributes is not None
    assert event.attributes["exception.message"] == "card 4242 declined"


def test_async_user_exception(spans: Spans) -> None:
    @planscope.llm("m")
    async def chat() -> None:
        raise TimeoutError("slow")

    with pytest.raises(TimeoutError, match="slow"):
        asyncio.run(chat())
    assert spans.one(A.KIND_LLM).status.status_code is StatusCode.ERROR


def test_context_manager_records_and_propagates(spans: Spans) -> None:
    with pytest.raises(KeyError), planscope.start_step("s"):
        raise KeyError("missing")
    assert Spans.attrs(spans.one(A.KIND_STEP))[A.STEP_STATUS] == A.STATUS_ERROR


def broken(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("planscope bug")


@pytest.mark.parametrize("where", ["stable_hash", "dumps", "extract_usage"])
def test_internal_errors_are_swallowed_and_logged_in_production(
    spans: Spans,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    where: str,
) -> None:
    monkeypatch.setattr(_spans, where, broken)
    _internal.raise_override = False  # as if not running under pytest

    @planscope.llm("m")
    def chat(prompt: str) -> dict[str, Any]:
        return {"usage": {"prompt_tokens": 1}}

    @planscope.step
    def execute(step_id: str) -> str:
        chat("hi")
        return "done"

    with caplog.at_level(logging.ERROR, logger="planscope"):
        assert execute("s") == "done"
    assert any("internal error in planscope" in r.getMessage() for r in caplog.records)
    assert any(r.exc_info and "planscope bug" in str(r.exc_info[1]) for r in caplog.records)
    # the spans still end
    assert {s.attributes[A.SPAN_KIND] for s in spans.all() if s.attributes} == {"step", "llm"}


def test_internal_errors_are_raised_under_tests(
    spans: Spans, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_spans, "stable_hash", broken)
    _internal.raise_override = True

    @planscope.step
    def execute() -> str:
        return "done"

    with pytest.raises(RuntimeError, match="planscope bug"):
        execute()


def test_pytest_detection_and_env_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLANSCOPE_RAISE_INTERNAL_ERRORS", raising=False)
    assert _internal.should_raise_internal_errors()  # pytest is imported
    monkeypatch.setenv("PLANSCOPE_RAISE_INTERNAL_ERRORS", "false")
    assert not _internal.should_raise_internal_errors()


def test_internal_error_while_starting_gives_a_noop_span(
    spans: Spans, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_spans, "_begin", broken)
    _internal.raise_override = False

    @planscope.run
    def agent() -> str:
        run = planscope.current_run()
        return "ran" if run is None else "unexpected"

    assert agent() == "ran"
    with planscope.start_run("agent") as handle:
        handle.set_outcome("success")  # a handle is still yielded
    assert spans.all() == []


def test_user_exception_is_not_swallowed_when_internal_errors_are(
    spans: Spans, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_spans, "error_fingerprint", broken)
    _internal.raise_override = False

    @planscope.step
    def execute() -> None:
        raise ValueError("user bug")

    with pytest.raises(ValueError, match="user bug"):
        execute()
    assert spans.one(A.KIND_STEP).end_time is not None

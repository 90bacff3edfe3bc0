"""An app's own plain tool spans (component calls: ``observed._component_calls``) that record
their arguments and result as attributes of their own (``<prefix>.tool.args`` /
``<prefix>.tool.result``), through a real OTel SDK exporter into a real collector: the loader
reads the result by the rule ``observed.step_io`` reads a plain span's (``APP_RESULT_KEY``),
so plan propagation follows a value through it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode
from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.plan_propagation import PlanPropagation
from planscope_collector import BackgroundServer, CollectorSettings
from planscope_collector.observed import step_io

from tests.conftest import poll

pytestmark = pytest.mark.integration

# A bakery's job: the planner sets the oven search's top temperature too low (the order's
# sourdough bakes at 250C); the search returns an oven that only reaches it, which the
# executor hands to the booking (the plan says only that the booking comes after the search:
# the oven is carried by the search's result alone)
PLAN = """@plan{BK-12, revision = {1}}
@step{find, tool = {oven_find}, goal = {Find a free oven}, max_temp_c = {180}}
@step{book, tool = {oven_book}, goal = {Book the oven}, batch = {BK-12}, after = find}"""
ASKED = "Bake the sourdough batch BK-12 (40 loaves at 250C) this Friday."
CALLS = {
    "find": ("oven_find", {"max_temp_c": 180}, {"oven": "OV-5510", "bay": 3}),
    "book": ("oven_book", {"oven": "OV-5510", "batch": "BK-12"}, None),
}
REFUSAL = "oven OV-5510 tops out at 180C; batch BK-12 bakes at 250C"


def _chat(said: dict[str, str]) -> dict[str, str]:
    """A chat call's attributes, with what it was ``said``."""
    return {A.GEN_AI_OPERATION_NAME: "chat", A.GEN_AI_REQUEST_MODEL: "gpt-4o"} | said


def _bakery(url: str) -> tuple[str, dict[str, dict[str, str]]]:
    """The app's job span over the planner's chat call, its plan span and one
    ``bakery.step {id}`` span per step (``bakery.step.id`` naming it), each over a chat call and
    then the plain tool span the model asked for (named by its tool, its ``bakery.tool.args``
    and ``bakery.tool.result``); the booking fails. The trace id and each tool span's
    attributes by step."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    tracer = provider.get_tracer("bakery")
    recorded: dict[str, dict[str, str]] = {}
    with tracer.start_as_current_span("bakery.job") as job:
        asked = {"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": ASKED}
        with tracer.start_as_current_span("chat gpt-4o", attributes=_chat(asked)):
            pass
        with tracer.start_as_current_span("bakery.plan", attributes={"bakery.plan.text": PLAN}):
            pass
        for step, (tool, args, result) in CALLS.items():
            with tracer.start_as_current_span(
                f"bakery.step {step}", attributes={"bakery.step.id": step}
            ) as attempt:
                with tracer.start_as_current_span("chat gpt-4o", attributes=_chat({})):
                    pass
                attributes = {"bakery.tool.name": tool, "bakery.tool.args": json.dumps(args)}
                if result is not None:  # an empty field sorts first: the first not empty
                    attributes["bakery.tool.output"] = ""
                    attributes["bakery.tool.result"] = json.dumps(result)
                recorded[step] = attributes
                with tracer.start_as_current_span(tool, attributes=attributes) as t:
                    if result is None:
                        t.set_status(Status(StatusCode.ERROR, REFUSAL))
                if result is None:
                    attempt.set_status(Status(StatusCode.ERROR, REFUSAL))
        job.set_status(Status(StatusCode.ERROR, REFUSAL))
    provider.shutdown()
    return f"{job.get_span_context().trace_id:032x}", recorded


@pytest.fixture
def server(data_dir: Path) -> Iterator[BackgroundServer]:
    with BackgroundServer(CollectorSettings(data_dir=data_dir, port=0)) as s:
        yield s


def test_an_apps_tool_result_attribute_is_its_component_calls_result(
    server: BackgroundServer,
) -> None:
    """The loader (``LOAD_COMPONENT_CALLS``) gives a component call the result its span's
    ``<prefix>.tool.result`` holds, the same ``step_io`` reads of the span, next to the
    arguments of its ``<prefix>.tool.args``; and plan propagation blames the wrong oven where
    its search returned it, not where the booking used it."""
    trace_id, recorded = _bakery(server.url)
    poll(f"{server.url}/api/traces/{trace_id}", lambda t: t["span_count"] == 9)
    loaded = load_traces(server.app.state.collector.store, "default", [trace_id])[trace_id]
    calls = {c.step_id: c for c in loaded.tools}
    assert sorted(calls) == ["book", "find"]
    for step, (tool, args, result) in CALLS.items():
        call = calls[step]
        assert (call.tool, json.loads(call.arguments)) == (tool, args)
        assert call.result == step_io(recorded[step])[1]  # one rule, SQL and Python
        assert call.result == (json.dumps(result) if result is not None else "")
    # without the result the oven first appears in the booking's arguments: blamed there
    (finding,) = PlanPropagation().detect(loaded)
    assert (finding.step_id, finding.detail["values"]) == ("find", ["OV-5510"])
    assert finding.detail["entered_at_tool_call"] == calls["find"].span_id
    assert "returned by tool 'oven_find', then an argument of tool 'oven_book'" in (
        finding.explanation
    )

"""Without an SDK provider, spans are not started but the bookkeeping is the same."""

from __future__ import annotations

import json

import planscope
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from .test_config import run_python


def test_noop_spans_keep_the_current_otel_span_and_the_planscope_bookkeeping() -> None:
    outer = trace.get_current_span()
    seen: list[tuple[trace.Span, str, int]] = []

    @planscope.tool
    def lookup(key: str) -> str:
        return key

    @planscope.step
    def execute(step: planscope.PlanStep) -> str:
        current = planscope.current_step()
        assert current is not None
        seen.append((trace.get_current_span(), current.step_id, current.attempt))
        return lookup(step.id)

    with planscope.start_run("agent") as run:
        with planscope.start_plan() as plan:
            plan.set_plan([planscope.PlanStep("a")])
        assert execute(planscope.PlanStep("a")) == "a"
        assert execute(planscope.PlanStep("a")) == "a"
        assert planscope.current_run() is run
        assert run.plan is not None and run.plan.steps[0].id == "a"
        assert run.trace_id is None  # no trace to look up
    assert [s[1:3] for s in seen] == [("a", 1), ("a", 2)]
    assert all(span is outer for span, _, _ in seen)  # what NoOpTracer.start_span returns
    assert not outer.is_recording()
    assert planscope.current_run() is None


def test_a_recording_span_from_elsewhere_gets_a_non_recording_child_as_before() -> None:
    """No planscope SDK, but the application's own provider made a span current."""
    provider = TracerProvider()
    inside: list[trace.Span] = []

    @planscope.step
    def work() -> None:
        inside.append(trace.get_current_span())

    with provider.get_tracer("app").start_as_current_span("app-span") as app_span:
        work()
    provider.shutdown()
    (span,) = inside
    assert span is not app_span and not span.is_recording()
    assert span.get_span_context() == app_span.get_span_context()


LATE_PROVIDER_SCRIPT = r"""
import json
import planscope
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

@planscope.step("fetch")
def fetch(n: int) -> int:
    return n

fetch(1)  # no provider yet: nothing recorded
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)  # the application installs one later
fetch(2)
print(json.dumps([[s.name, s.attributes["planscope.step.attempt"]]
                  for s in exporter.get_finished_spans()]))
"""


def test_a_provider_installed_later_is_followed() -> None:
    proc = run_python(LATE_PROVIDER_SCRIPT)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [["execute_step fetch", 1]]

"""A Haystack planner pipeline's output read as its plan (``observed._plan_span``, ``answer``):
Haystack's tracer records what a ``Pipeline.run`` returned in ``haystack.pipeline.output_data``
(JSON keyed by component); a planner pipeline whose last component parses the model's plan
states its steps there as data, whatever syntax the model wrote. A charity fun run's planner
answers a pipe-separated call line naming only tools; its parser component hands back the tasks
by id with their arguments. Spans shaped as Haystack's ``OpenTelemetryTracer`` writes them
(``opentelemetry-haystack``; the same under MLflow's Haystack autologging), from the real OTel
SDK into a real chDB store."""

from __future__ import annotations

import json

from opentelemetry.trace import Span, Tracer
from planscope_analyzer import load_traces
from planscope_collector.storage import Store

from tests.analyzer._genai_play import played

_ANSWER = "route_search(city=Leeds) | apply_permit(day=2027-05-02) | book_marshals(count=12)"
_TASKS = [
    {"id": "find_route", "tool": "route_search", "args": {"city": "Leeds"}},
    {"id": "permit", "tool": "apply_permit", "args": {"day": "2027-05-02"}, "after": "find_route"},
    {"id": "marshals", "tool": "book_marshals", "args": {"count": 12}, "after": "permit"},
]


def _pipeline(tracer: Tracer) -> None:
    """The planner pipeline: a generator answering the call line, the app's parser component
    returning the tasks (the pipeline's output)."""
    output = json.dumps({"parser": {"tasks": _TASKS}})
    with tracer.start_as_current_span(
        "haystack.pipeline.run", attributes={"haystack.pipeline.output_data": output}
    ):
        replies = {"replies": [{"role": "assistant", "content": [{"text": _ANSWER}]}]}
        llm = {
            "haystack.component.name": "llm",
            "haystack.component.type": "OpenAIChatGenerator",
            "haystack.component.output": json.dumps(replies),
        }
        with tracer.start_as_current_span("haystack.component.run", attributes=llm):
            pass
        parser = {
            "haystack.component.name": "parser",
            "haystack.component.type": "TaskParser",
            "haystack.component.output": json.dumps({"tasks": _TASKS}),
        }
        with tracer.start_as_current_span("haystack.component.run", attributes=parser):
            pass


def _attempt(tracer: Tracer, task: dict[str, object]) -> None:
    """An Agent's run for one task (the app's template variables name it), one tool call."""
    given = {"messages": [], "step": task["id"]}
    with (
        tracer.start_as_current_span(
            "haystack.agent.run", attributes={"haystack.agent.input": json.dumps(given)}
        ),
        tracer.start_as_current_span("haystack.agent.step", attributes={"haystack.agent.step": 0}),
    ):
        with tracer.start_as_current_span("haystack.agent.step.llm"):
            pass
        tool = {
            "haystack.tool.name": str(task["tool"]),
            "haystack.agent.step.tool.input": json.dumps(task["args"]),
            "haystack.agent.step.tool.output": json.dumps({"ok": True}),
        }
        with tracer.start_as_current_span("haystack.agent.step.tool", attributes=tool):
            pass


def test_a_pipelines_parsed_output_is_its_plan(store: Store) -> None:
    def play(tracer: Tracer, root: Span) -> None:
        _pipeline(tracer)
        for task in _TASKS:
            _attempt(tracer, task)

    t = played(store, "haystack", "fun run", play)
    trace = load_traces(store, "default", [t])[t]
    assert [(s.step_id, s.tool) for s in trace.plan_steps] == [
        ("find_route", "route_search"),
        ("permit", "apply_permit"),
        ("marshals", "book_marshals"),
    ]
    (plan,) = trace.plans
    assert json.loads(plan.json)[1]["args"] == {"day": "2027-05-02"}
    assert {a.step_id for a in trace.attempts} == {"find_route", "permit", "marshals"}

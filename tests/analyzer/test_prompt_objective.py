"""A failed run under a foreign root declares no objective: the loader takes the planner's
prompt as its objective, so what the user asked for is not a suspect of plan propagation. The
prompt is read in every convention the span model reads (``planscope_collector.observed.
user_request``): the GenAI input messages (parts, as pydantic-ai and OpenLLMetry write them, or a
string content), OpenInference's flattened ``llm.input_messages.*``, the older OpenLLMetry
``gen_ai.prompt.*``; the real spans of tests/conformance/data show it for each instrumentation."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.plan_propagation import PlanPropagation
from planscope_collector import JSON, parse_request
from planscope_collector.storage import Store

from tests.conformance.agents._common import OBJECTIVE
from tests.storage._spans import (
    BASE_NS,
    make_span,
    new_span_id,
    new_trace_id,
    otlp_to_rows,
    spans_ipc,
)

pytestmark = pytest.mark.integration

MS = 1_000_000
PLAN = {
    "release": "api",
    "tasks": [
        {"id": "book", "action": "book a change window", "tool": "book_window",
         "args": {"service": "api"}},
        {"id": "deploy", "action": "roll out the image", "tool": "rollout",
         "args": {"service": "api", "version": "1.2.2"}},
    ],
}  # fmt: skip
ARGS = {"book_window": {"service": "api"}, "rollout": {"service": "api", "version": "1.2.2"}}


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def _genai_parts(prompt: str, answer: str) -> dict[str, Any]:
    """pydantic-ai / GenAI semconv: input and output messages in the parts format."""
    return {
        A.GEN_AI_OPERATION_NAME: "chat",
        A.GEN_AI_INPUT_MESSAGES: json.dumps(
            [
                {"role": "system", "parts": [{"type": "text", "content": "You plan releases."}]},
                {"role": "user", "parts": [{"type": "text", "content": prompt}]},
            ]
        ),
        A.GEN_AI_OUTPUT_MESSAGES: _messages("assistant", answer),
    }


def _genai_content(prompt: str, answer: str) -> dict[str, Any]:
    """Older GenAI instrumentations: each message's text as a string ``content``."""
    return {
        A.GEN_AI_OPERATION_NAME: "chat",
        A.GEN_AI_INPUT_MESSAGES: json.dumps([{"role": "user", "content": prompt}]),
        A.GEN_AI_OUTPUT_MESSAGES: json.dumps([{"role": "assistant", "content": answer}]),
    }


def _openinference(prompt: str, answer: str) -> dict[str, Any]:
    """OpenInference's LLM span: flattened ``llm.input_messages.{i}.message.*``."""
    return {
        A.OI_SPAN_KIND: "LLM",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "You plan releases.",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.contents.0.message_content.type": "text",
        "llm.input_messages.1.message.contents.0.message_content.text": prompt,
        A.OI_OUTPUT_MESSAGE_CONTENT: answer,
    }


def _openllmetry_legacy(prompt: str, answer: str) -> dict[str, Any]:
    """OpenLLMetry's legacy attributes: ``gen_ai.prompt.{i}.role`` / ``.content`` (a content
    list as JSON for the user turn, as it writes multi-part content)."""
    return {
        A.GEN_AI_SYSTEM: "openai",
        "llm.request.type": "chat",
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": "You plan releases.",
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": json.dumps([{"type": "text", "text": prompt}]),
        A.GEN_AI_COMPLETION_CONTENT: answer,
    }


CONVENTIONS: dict[str, Callable[[str, str], dict[str, Any]]] = {
    "genai_parts": _genai_parts,
    "genai_content": _genai_content,
    "openinference": _openinference,
    "openllmetry_legacy": _openllmetry_legacy,
}


def _release(
    store: Store,
    prompt: str,
    llm: Callable[[str, str], dict[str, Any]] = _genai_parts,
    plan: dict[str, Any] = PLAN,
    args: dict[str, dict[str, str]] = ARGS,
    serves: str = "1.2.2",
    given: str = "",
    root_attrs: dict[str, Any] | None = None,
) -> str:
    """A logfire-style root (no agent span, no objective unless it was ``given`` an input, or
    has the ``root_attrs``) that fails its release check (api serves ``serves``); a
    planner agent run whose chat answers ``plan`` to ``prompt``; one executor run per task, its
    tool called with ``args``."""
    if given:
        root_attrs = {A.OI_SPAN_KIND: "AGENT", A.OI_INPUT_VALUE: given}
    t, root, planner = new_trace_id(), new_span_id(), new_span_id()
    agent = {A.GEN_AI_OPERATION_NAME: "invoke_agent"}
    spans: list[list[Any]] = [
        make_span(
            trace_id=t, span_id=root, name="release {service}", duration_ns=100 * MS,
            status="Error",
            status_message=f"ReleaseFailed: release check failed: api serves {serves}",
            attrs=root_attrs,
        ),
        make_span(trace_id=t, span_id=planner, parent=root, name="invoke_agent planner",
                  start_ns=BASE_NS + MS, duration_ns=5 * MS, attrs=agent),
        make_span(
            trace_id=t, parent=planner, name="chat gpt-4o", start_ns=BASE_NS + 2 * MS,
            attrs=llm(prompt, json.dumps(plan)),
        ),
    ]  # fmt: skip
    for i, (tool, arguments) in enumerate(args.items()):
        run, start = new_span_id(), BASE_NS + (10 + 10 * i) * MS
        spans += [
            make_span(trace_id=t, span_id=run, parent=root, name="invoke_agent executor",
                      start_ns=start, duration_ns=8 * MS, attrs=agent),
            make_span(
                trace_id=t, parent=run, name=f"execute_tool {tool}", start_ns=start + MS,
                attrs={
                    A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
                    A.GEN_AI_TOOL_NAME: tool,
                    A.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps(arguments),
                },
            ),
        ]  # fmt: skip
    store.insert_spans(spans_ipc(spans))
    return t


@pytest.mark.parametrize("convention", sorted(CONVENTIONS))
def test_the_planners_prompt_is_the_objective_of_a_run_without_one(
    store: Store, convention: str
) -> None:
    t = _release(store, "Release api 1.2.3", CONVENTIONS[convention])
    trace = load_traces(store, "default", [t])[t]
    assert trace.run is not None and trace.run.objective == "Release api 1.2.3"
    # the service the user named is not a suspect: the version the planner wrote is
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["values"]) == ("deploy", ["1.2.2"])


def test_a_prompt_subtracts_only_what_it_says(store: Store) -> None:
    # the prompt does not name the service: it stays a suspect, first carried by 'book'
    t = _release(store, "Ship the new build")
    trace = load_traces(store, "default", [t])[t]
    (finding,) = PlanPropagation().detect(trace)
    assert finding.step_id == "book" and "api" in finding.detail["values"]


def test_without_the_prompt_the_users_service_is_blamed(store: Store) -> None:
    # the same run whose planner call records no input: the service the user named is taken
    # for the planner's, first carried by 'book' (what reading the prompt avoids above)
    t = _release(store, "Release api 1.2.3", lambda p, a: _genai_parts("", a))
    trace = load_traces(store, "default", [t])[t]
    assert trace.run is not None and trace.run.objective == ""
    (finding,) = PlanPropagation().detect(trace)
    assert finding.step_id == "book" and "api" in finding.detail["values"]


def test_the_objective_a_plan_states_wins_over_the_prompt(store: Store) -> None:
    # the prompt also carries a stale note with the version the planner took; the plan states
    # the objective it worked to: what the note said stays a suspect
    prompt = 'Objective: Release api 1.2.3\nTeam notes: {"version": "1.2.2"}'
    t = _release(store, prompt, plan={**PLAN, "objective": "Release api 1.2.3"})
    trace = load_traces(store, "default", [t])[t]
    assert trace.run is not None and trace.run.objective == "Release api 1.2.3"
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["values"]) == ("deploy", ["1.2.2"])
    # the same run whose plan states no objective: the prompt is the objective, the note in it
    # names the version, and no value is a suspect (only the every-step-succeeded fallback)
    t = _release(store, prompt)
    (fallback,) = PlanPropagation().detect(load_traces(store, "default", [t])[t])
    assert fallback.detail["pattern"] == "faithful_execution_failed"


@pytest.mark.parametrize(
    ("facts", "note"),
    [
        ("- Service: api\n- Version: 1.2.3", "Team notes:\n- version: 1.2.2"),
        ("{'service': 'api', 'version': '1.2.3'}", "Team notes: {'version': '1.2.2'}"),
        ("service = api\nversion = 1.2.3", "**Version**: 1.2.2"),
    ],
)
def test_a_prompts_contested_fact_leaves_the_objective_however_written(
    store: Store, facts: str, note: str
) -> None:
    # the release's facts and a stale note that overrides the version, written as lines or as
    # a Python literal: which version the user asked for the prompt does not say, so the one
    # the planner took and the failure names stays a suspect
    t = _release(store, f"Release the service.\n{facts}\n{note}")
    trace = load_traces(store, "default", [t])[t]
    assert trace.run is not None and "1.2.2" not in trace.run.objective
    assert "1.2.3" not in trace.run.objective and "api" in trace.run.objective
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["values"]) == ("deploy", ["1.2.2"])


def test_a_note_that_overrides_what_the_prompt_says_after_the_facts_name_is_contested(
    store: Store,
) -> None:
    # the request says "version 1.2.3" in prose, a note sets the version the planner took: the
    # prompt states two versions, so neither is the objective's and the note's stays a suspect
    t = _release(store, 'Release api version 1.2.3.\nTeam notes: {"version": "1.2.2"}')
    trace = load_traces(store, "default", [t])[t]
    assert trace.run is not None and "api" in trace.run.objective
    assert "1.2.2" not in trace.run.objective and "1.2.3" not in trace.run.objective
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["values"]) == ("deploy", ["1.2.2"])


def test_a_contested_fact_of_what_the_runs_root_was_given_is_no_objective(
    store: Store,
) -> None:
    # the app's root span records the brief it was given (an input, not a declared objective):
    # a prompt like the planner's, whose note overrides the version; the note's version the
    # planner took stays a suspect, the service both state is the objective's
    given = 'Release api.\nOrder: {"service": "api", "version": "1.2.3"}\n'
    given += 'Team notes: {"version": "1.2.2"}'
    t = _release(store, "Plan the release.", given=given)
    trace = load_traces(store, "default", [t])[t]
    assert trace.run is not None and trace.run.objective == given
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["values"]) == ("deploy", ["1.2.2"])


def test_a_contested_fact_of_a_brief_recorded_as_call_json_is_no_objective(
    store: Store,
) -> None:
    # the same brief recorded as traceloop-sdk's @workflow writes a call's input, as JSON: the
    # brief is one escaped string there, whose note still overrides the version
    brief = 'Release api.\nOrder: {"service": "api", "version": "1.2.3"}\n'
    brief += 'Team notes: {"version": "1.2.2"}'
    workflow = {
        A.TL_SPAN_KIND: "workflow",
        A.TL_ENTITY_NAME: "release",
        A.TL_ENTITY_INPUT: json.dumps({"args": [brief], "kwargs": {}}),
    }
    t = _release(store, "Plan the release.", root_attrs=workflow)
    trace = load_traces(store, "default", [t])[t]
    assert trace.run is not None and brief in json.loads(trace.run.objective)["args"]
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["values"]) == ("deploy", ["1.2.2"])


TAGGED = {"book_window": {"service": "api"}, "rollout": {"service": "api", "image": "rc-8"}}
TAGGED_PLAN = {
    "tasks": [
        {"id": "book", "action": "book a change window", "tool": "book_window",
         "args": {"service": "api"}},
        {"id": "deploy", "action": "roll out the image", "tool": "rollout",
         "args": {"service": "api", "image": "rc-8"}},
    ],
}  # fmt: skip


def test_a_note_that_overrides_a_code_of_the_same_shape_is_contested(store: Store) -> None:
    # the prose names the build without the note's key: a code of the same shape (letters and
    # digits at the same places) is the same thing stated twice
    prompt = 'Release api at rc-7, after the freeze.\nTeam notes: {"image": "rc-8"}'
    t = _release(store, prompt, plan=TAGGED_PLAN, args=TAGGED, serves="rc-8")
    trace = load_traces(store, "default", [t])[t]
    assert trace.run is not None and "rc-" not in trace.run.objective
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["values"]) == ("deploy", ["rc-8"])


def test_a_note_the_prose_agrees_with_or_of_another_shape_is_no_contest(store: Store) -> None:
    # the prose states the note's build too, and a count of the same shape as the note's is
    # no code: the prompt stays the objective, and what the user asked for is no suspect
    prompt = 'Release api at rc-8 in 2 waves.\nTeam notes: {"image": "rc-8", "retries": 3}'
    t = _release(store, prompt, plan=TAGGED_PLAN, args=TAGGED, serves="rc-8")
    trace = load_traces(store, "default", [t])[t]
    assert trace.run is not None and trace.run.objective == prompt
    (fallback,) = PlanPropagation().detect(trace)
    assert fallback.detail["pattern"] == "faithful_execution_failed"


DATA = Path(__file__).resolve().parents[1] / "conformance" / "data"
_OBJECTIVE_KEYS = (A.OI_INPUT_VALUE, "traceloop.entity.input")
"""Where a root span of the conformance agents declares the objective (OpenInference,
OpenLLMetry); GenAI and pydantic-ai roots declare none."""


def _failed_without_objective(source: str) -> tuple[bytes, str]:
    """A conformance source's real ``loop`` trace as a failed run that declares no objective:
    the root's objective attributes removed, its status an error (the openai-agents SDK and
    LangGraph leave it OK); every LLM span as the instrumentation recorded it."""
    trace_id = json.loads((DATA / "scenarios.json").read_text())[source]["loop"]
    body = json.loads((DATA / f"{source}.json").read_text())
    for resource in body["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            scope["spans"] = [s for s in scope["spans"] if s["traceId"] == trace_id]
            for span in scope["spans"]:
                if not span.get("parentSpanId"):
                    span["attributes"] = [
                        a for a in span.get("attributes", []) if a["key"] not in _OBJECTIVE_KEYS
                    ]
                    span["status"] = {"code": 2, "message": "refund failed"}
    return json.dumps(body).encode(), trace_id


SOURCES = (
    "genai_semconv",
    "openai_agents",
    "openinference_langgraph",
    "openinference_openai",
    "openinference_smolagents",
    "openllmetry_langgraph",
    "openllmetry_openai",
    "pydantic_ai",
    "strands_agents",
)


def test_real_instrumentations_prompt_is_found(store: Store) -> None:
    # one store for all sources (a migration per source would cost a minute)
    traces = {}
    for source in SOURCES:
        body, t = _failed_without_objective(source)
        store.insert_spans(spans_ipc(otlp_to_rows(parse_request(body, JSON), "default")))
        traces[source] = t
    loaded = load_traces(store, "default", list(traces.values()))
    found = {s: [(r.outcome, r.objective) for r in loaded[t].runs] for s, t in traces.items()}
    assert found == {s: [("failure", OBJECTIVE)] for s in SOURCES}

"""The detectors still name the labelled step when a few runs are changed in ways that keep
their labels true (``tests.corpus.shapes``): a plan stated as YAML instead of JSON (its
arguments still trace a wrong value to its step), steps named only in what an executor's LLM
call is asked, tool spans named after their call method, errors in other words, a step named
only in its span's name, agent runs that are roots of their own, a plan answered as a tool
call's arguments, errors said only by exception events; each second-round transformation
changes what it says it does (unit tests on a small GenAI trace); a healthy
LangGraph run renamed to the GenAI conventions (every graph node an ``invoke_agent`` span, the
nodes that only wrap others folded away) has no finding at all.

The full tables are ``benchmarks/detector_shapes.py``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import planscope
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from planscope_analyzer import Analyzer, TraceData, load_traces
from planscope_collector.storage import Store, open_store

from tests.conftest import Migrated
from tests.corpus import play, read_labels
from tests.corpus._child import check_in_child
from tests.corpus.shapes import HELD_OUT, TRANSFORMS, Span, as_span, reword, transformed
from tests.storage._spans import BASE_NS, otlp_to_rows, spans_ipc

MAIN_KINDS = ("runaway_loop", "context_starved", "plan_propagation")
CASES = (
    ("plan_yaml", "dev", "restock", "wrong_date"),
    ("anonymous_steps", "dev", "etl", "loop_stage_varying"),
    ("anonymous_steps", "dev", "etl", "wrong_column"),
    ("tool_call_suffix", "dev", "travel", "loop_tool_in_step"),
    ("errors_reworded", "dev", "travel", "loop_step_varying"),
    ("step_name_quoted", "dev", "etl", "loop_tool_varying_args"),
    ("roots_split", "dev", "restock", "loop_across_replans"),
    ("plan_tool_call", "dev", "restock", "wrong_quantity"),
    ("errors_as_events", "dev", "restock", "loop_task_varying"),
)
"""(transformation, split, agent, scenario): each run once (the first labelled run of its
split, agent and scenario)."""
ONCALL = ("convention_genai", "sealed5", "oncall", "healthy")  # a spent split: no oncall in dev
"""Played in a child process: OpenLLMetry's LangChain instrumentor serves one oncall play per
process (tests/corpus/README.md), and test_corpus.py's LangGraph test has this one's."""


def test_a_reworded_error_keeps_its_values_and_stays_distinct() -> None:
    a, b = "timeout after 30s (retry later)", "timeout after 45s (retry later)"
    assert reword(a) == "deadline after 30s (try again later)"
    assert reword(a) != reword(b)
    assert reword("HTTP 503: warehouse LYS-3 unavailable") == (
        "HTTP 529: warehouse LYS-3 not reachable"
    )


def test_a_plan_in_a_tool_result_is_data_not_a_plan() -> None:
    flights = '[{"id": "FL1", "tool": "x"}, {"id": "FL2", "tool": "y"}]'
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.result": flights}
    tool = {"name": "execute_tool search", "attributes": attributes}
    chat = {"name": "chat", "attributes": {"gen_ai.output.messages": flights}}
    after = TRANSFORMS["plan_yaml"]([tool, chat])
    assert after[0]["attributes"]["gen_ai.tool.call.result"] == flights
    assert after[1]["attributes"]["gen_ai.output.messages"].startswith("steps:\n- id: FL1")


def _span(span_id: int, parent: int, name: str, attributes: dict[str, str]) -> Span:
    return {
        "name": name,
        "trace_id": 1,
        "span_id": span_id,
        "parent_id": parent,
        "kind": SpanKind.INTERNAL,
        "start": span_id * 10,
        "end": span_id * 10 + 5,
        "status": "UNSET",
        "description": None,
        "attributes": attributes,
        "events": [],
        "links": [],
        "resource": None,
        "scope": None,
    }


PLAN = json.dumps({"steps": [{"id": "pick", "tool": "wms"}, {"id": "ship", "tool": "courier"}]})


def _genai_trace() -> list[Span]:
    """A run, its planner's LLM call answering a JSON plan, a step run with an LLM call and a
    failed tool call (span ids 1..5)."""
    op = "gen_ai.operation.name"
    said = [{"role": "assistant", "parts": [{"type": "text", "content": PLAN}]}]
    tool = _span(5, 3, "execute_tool wms", {op: "execute_tool", "gen_ai.tool.name": "wms"})
    tool.update(status="ERROR", description="wms timed out")
    return [
        _span(1, 0, "invoke_agent app", {op: "invoke_agent", "gen_ai.agent.name": "app"}),
        _span(2, 1, "chat m", {op: "chat", "gen_ai.output.messages": json.dumps(said)}),
        _span(3, 1, "invoke_agent pick", {op: "invoke_agent", "gen_ai.agent.name": "pick"}),
        _span(4, 3, "chat m", {op: "chat"}),
        tool,
    ]


def test_each_case_plays_a_run_of_its_own() -> None:
    assert len({case[1:] for case in CASES}) == len(CASES)  # one trace, one transformation


def test_half_of_the_second_round_is_held_out() -> None:
    second = list(TRANSFORMS)[12:20]
    assert len(second) == 8
    assert sum(name in HELD_OUT for name in second) == 4


def test_half_of_the_fourth_round_is_held_out_and_each_keeps_the_plan() -> None:
    fourth = list(TRANSFORMS)[20:]
    assert len(fourth) == 10 and all(name.startswith("plan_") for name in fourth)
    assert sum(name in HELD_OUT for name in fourth) == 5
    plan = {
        "objective": "ship order 7",
        "steps": [
            {"id": "pick", "goal": "pick it", "tool": "wms", "args": {"order": 7}},
            {"id": "ship", "goal": "ship it", "tool": "courier", "args": {"to": "Oslo"}},
        ],
    }
    op = "gen_ai.operation.name"
    for name in fourth:
        chat = _span(1, 0, "chat m", {op: "chat", "gen_ai.completion": json.dumps(plan)})
        (after,) = TRANSFORMS[name]([chat])
        text = after["attributes"]["gen_ai.completion"]
        assert text != json.dumps(plan), name
        for said in ("pick", "ship", "wms", "courier", "7", "Oslo"):
            assert said in text, (name, said)


def test_a_step_said_only_in_its_span_name() -> None:
    quoted = TRANSFORMS["step_name_quoted"](_genai_trace())
    step = next(d for d in quoted if d["span_id"] == 3)
    assert step["name"] == "workflow step: 'pick'"
    assert "gen_ai.agent.name" not in step["attributes"]
    crew = TRANSFORMS["step_name_task_prefix"](_genai_trace())
    step = next(d for d in crew if d["span_id"] == 3)
    assert (step["name"], step["attributes"]["gen_ai.agent.name"]) == ("Task: pick", "crew_member")
    root = next(d for d in crew if d["span_id"] == 1)
    assert root["name"] == "invoke_agent app"  # the run is no step


def test_roots_split_drops_the_run_root_and_keeps_every_other_span() -> None:
    spans = TRANSFORMS["roots_split"](_genai_trace())
    assert sorted(d["span_id"] for d in spans) == [2, 3, 4, 5]
    assert sorted(d["span_id"] for d in spans if not d["parent_id"]) == [2, 3]


def test_a_plan_answered_as_a_tool_call_or_as_a_crew_task_list() -> None:
    spans = TRANSFORMS["plan_tool_call"](_genai_trace())
    (message,) = json.loads(spans[1]["attributes"]["gen_ai.output.messages"])
    (part,) = message["parts"]
    assert (part["type"], part["name"]) == ("tool_call", "submit_plan")
    assert part["arguments"] == json.loads(PLAN)
    crew = TRANSFORMS["plan_crew_attribute"](_genai_trace())
    tasks = json.loads(crew[0]["attributes"]["crewai.crew.tasks"])
    assert [(t["name"], t["tools"]) for t in tasks] == [
        ("pick", [{"name": "wms"}]),
        ("ship", [{"name": "courier"}]),
    ]
    assert PLAN not in crew[1]["attributes"]["gen_ai.output.messages"]


def test_errors_and_tool_calls_said_only_by_events() -> None:
    spans = TRANSFORMS["errors_as_events"](_genai_trace())
    tool = spans[4]
    assert (tool["status"], tool["description"]) == ("UNSET", None)
    (event,) = tool["events"]
    assert (event["name"], event["attributes"]["exception.message"]) == (
        "exception",
        "wms timed out",
    )
    spans = TRANSFORMS["tool_events"](_genai_trace())
    assert [d["span_id"] for d in spans] == [1, 2, 3, 4]  # no tool span
    call, outcome = spans[3]["events"]  # on the LLM call that asked for it
    assert (call["name"], call["attributes"]["gen_ai.tool.name"]) == ("gen_ai.choice", "wms")
    assert outcome["attributes"]["exception.message"] == "wms timed out"


def test_sdk_traces_are_left_alone_and_kinds_become_internal() -> None:
    sdk = [_span(1, 0, "run", {"planscope.span.kind": "run"})]
    sdk[0]["kind"] = SpanKind.SERVER
    for name in list(TRANSFORMS)[12:]:
        assert TRANSFORMS[name](copy.deepcopy(sdk)) == sdk, name
    trace = _genai_trace()
    trace[1]["kind"] = SpanKind.CLIENT
    assert {d["kind"] for d in TRANSFORMS["internal_kinds"](trace)} == {SpanKind.INTERNAL}


def _loaded(store: Store, spans: list[Span]) -> TraceData:
    """The analyzer's model of one synthetic trace (trace id 1), stored as spans (times from
    ``BASE_NS``)."""
    for d in spans:
        d["start"], d["end"] = d["start"] + BASE_NS, d["end"] + BASE_NS
        for e in d["events"]:
            e["time"] += BASE_NS
    store.insert_spans(
        spans_ipc(otlp_to_rows(encode_spans([as_span(d) for d in spans]), "default"))
    )
    return load_traces(store, "default", [f"{1:032x}"])[f"{1:032x}"]


@pytest.mark.integration
def test_a_tool_call_said_only_by_events_is_a_tool_call_of_its_step(store: Store) -> None:
    trace = _loaded(store, TRANSFORMS["tool_events"](_genai_trace()))
    (call,) = trace.tools
    assert (call.tool, call.parent_span_id, call.failed) == ("wms", f"{4:016x}", True)
    (attempt,) = trace.attempts
    assert (attempt.step_id, call.step_id, attempt.status) == ("pick", "pick", "error")


@pytest.mark.integration
def test_a_step_named_only_in_its_span_name_under_a_shared_role_binds(store: Store) -> None:
    spans = _genai_trace()[:4]  # no tool call: the span's name is all that names its step
    trace = _loaded(store, TRANSFORMS["step_name_task_prefix"](spans))
    assert [a.step_id for a in trace.attempts] == ["pick"]


@pytest.mark.integration
def test_a_plan_stated_as_a_task_list_in_a_root_attribute_is_the_plan(store: Store) -> None:
    trace = _loaded(store, TRANSFORMS["plan_crew_attribute"](_genai_trace()))
    (plan,) = trace.plans
    assert plan.span_id == f"{1:016x}"  # the root span states it
    assert [s.step_id for s in trace.plan_steps] == ["pick", "ship"]
    assert [a.step_id for a in trace.attempts] == ["pick"]


@pytest.mark.integration
def test_detectors_name_the_labelled_step_on_transformed_runs(store: Store) -> None:
    check(CASES, store)


@pytest.mark.integration
def test_a_langgraph_run_renamed_to_genai_names_has_no_finding(
    migrated: Migrated, tmp_path: Path
) -> None:
    """The oncall LangGraph run, its names rewritten to the GenAI conventions', in a child
    process (OpenLLMetry's LangChain instrumentor keeps its first tracer provider)."""
    check_in_child(__name__, "check_oncall_renamed", migrated.store_dsn(tmp_path / "chdb"))


def check_oncall_renamed(dsn: str) -> None:
    store = open_store(dsn)
    store.migrate()
    check((ONCALL,), store)


def check(cases: tuple[tuple[str, str, str, str], ...], store: Store) -> None:
    """Play ``cases`` (transformation, split, agent, scenario), store only their transformed
    spans, and assert the detectors name each labelled step (nothing at all on healthy runs)."""
    labels = read_labels()
    picked = [
        next(lab for lab in labels if (lab.split, lab.agent, lab.scenario) == case[1:])
        for case in cases
    ]
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        ids = play(picked, provider)
    finally:
        planscope.configure(tracer_provider=TracerProvider())
    spans = exporter.get_finished_spans()
    for (name, *_), lab in zip(cases, picked, strict=True):
        mine = [s for s in spans if s.context and f"{s.context.trace_id:032x}" == ids[lab.run]]
        changed, out = transformed(mine, name)
        assert changed == {ids[lab.run]}, (name, lab.run)  # the shape is really new
        store.insert_spans(spans_ipc(otlp_to_rows(encode_spans(out), "default")))
    findings = Analyzer(store).analyze("default", list(ids.values()), write=False).findings
    for (name, *_), lab in zip(cases, picked, strict=True):
        got = sorted((f.kind, f.step_id) for f in findings if f.trace_id == ids[lab.run])
        if lab.kind == "healthy":
            assert got == [], (name, lab, got)  # not even a data-quality finding
        else:
            assert [g for g in got if g[0] in MAIN_KINDS] == [(lab.kind, lab.step)], (name, lab)

"""Plans read from a planner LLM call's answer (migrations 0013, 0014), on real chDB: which
answers are plans, and how they count in the run model
(declared plans win, containers do not count)."""

from __future__ import annotations

import json
from typing import Any

import planscope.semconv as A
import pytest
from planscope_collector.runmodel import run_metrics_sql
from planscope_collector.storage import Store

from ._spans import BASE_NS, make_span, new_span_id, new_trace_id, spans_ipc

MS = 1_000_000
STEPS = [
    {"id": "fetch", "description": "Fetch invoice 7", "tool": "get_invoice"},
    {"id": "pay", "description": "Pay invoice 7", "tool": "pay"},
]


def _genai_answer(text: str) -> str:
    return json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": text}]}])


def _trace(
    store: Store, *llm_attrs: dict[str, Any], root_attrs: dict[str, Any] | None = None
) -> str:
    """A root agent span with one LLM call per attribute set; returns the trace id."""
    t, root = new_trace_id(), new_span_id()
    spans = [
        make_span(
            trace_id=t,
            span_id=root,
            name="invoke_agent billing",
            attrs=root_attrs or {A.GEN_AI_OPERATION_NAME: "invoke_agent"},
            duration_ns=100 * MS,
        )
    ]
    for i, attrs in enumerate(llm_attrs):
        spans.append(
            make_span(
                trace_id=t, parent=root, name="chat", start_ns=BASE_NS + (i + 1) * MS, attrs=attrs
            )
        )
    store.insert_spans(spans_ipc(spans))
    return t


def _plan_steps(store: Store, t: str) -> list[tuple[str, str, str, int]]:
    rows = store.query(
        "SELECT StepId, Description, Tool, Inferred FROM planscope_plan_steps "
        "WHERE TraceId = {t:String} ORDER BY Start, Position",
        {"t": t},
    )
    return [(r["StepId"], r["Description"], r["Tool"], r["Inferred"]) for r in rows]


def _metrics(store: Store, t: str) -> dict[str, Any]:
    (m,) = store.query(run_metrics_sql("Project = 'default' AND TraceId = {t:String}"), {"t": t})
    return m


def test_a_json_list_of_steps_answered_by_an_llm_is_an_observed_plan(store: Store) -> None:
    t = _trace(
        store,
        {
            A.GEN_AI_OPERATION_NAME: "chat",
            A.GEN_AI_OUTPUT_MESSAGES: _genai_answer(json.dumps(STEPS)),
        },
        {A.GEN_AI_OPERATION_NAME: "chat", A.GEN_AI_OUTPUT_MESSAGES: _genai_answer("paid.")},
    )
    assert _plan_steps(store, t) == [
        ("fetch", "Fetch invoice 7", "get_invoice", 1),
        ("pay", "Pay invoice 7", "pay", 1),
    ]
    (plan,) = store.query(
        "SELECT PlanId, StepCount, Inferred, Source FROM planscope_plans "
        "WHERE TraceId = {t:String}",
        {"t": t},
    )
    assert (plan["PlanId"], plan["StepCount"], plan["Inferred"], plan["Source"]) == (
        "",
        2,
        1,
        "genai",
    )
    m = _metrics(store, t)
    assert (m["ObservedPlans"], m["PlanVersions"], m["Replans"], m["LlmCalls"]) == (1, 1, 0, 2)


def test_openinference_and_fenced_object_answers_are_read(store: Store) -> None:
    fenced = "```json\n" + json.dumps({"plan": ["fetch the invoice", "pay it"]}) + "\n```"
    t = _trace(
        store,
        {A.OI_SPAN_KIND: "LLM", "llm.output_messages.0.message.content": fenced},
        root_attrs={A.OI_SPAN_KIND: "AGENT"},
    )
    # a step that is a sentence is named by its text (0044)
    assert _plan_steps(store, t) == [
        ("fetch the invoice", "fetch the invoice", "", 1),
        ("pay it", "pay it", "", 1),
    ]


def test_answers_that_are_not_plans_give_no_plan(store: Store) -> None:
    records = json.dumps([{"id": 1, "name": "invoice 7", "amount": 30}])  # data, not steps
    t = _trace(
        store,
        {A.GEN_AI_OPERATION_NAME: "chat", A.GEN_AI_OUTPUT_MESSAGES: _genai_answer(records)},
        {A.GEN_AI_OPERATION_NAME: "chat", A.GEN_AI_OUTPUT_MESSAGES: _genai_answer('["a", "b"]')},
        {A.GEN_AI_OPERATION_NAME: "chat", A.GEN_AI_OUTPUT_MESSAGES: _genai_answer("[{oops")},
        {A.GEN_AI_OPERATION_NAME: "chat", A.GEN_AI_OUTPUT_MESSAGES: "not json at all"},
    )
    assert _plan_steps(store, t) == []
    assert _metrics(store, t)["PlanVersions"] == 0


def test_planscope_llm_spans_are_not_read_and_declared_plans_win(store: Store) -> None:
    answer = _genai_answer(json.dumps(STEPS))
    own = _trace(store, {A.SPAN_KIND: A.KIND_LLM, A.GEN_AI_OUTPUT_MESSAGES: answer})
    assert _plan_steps(store, own) == []
    declared = _trace(
        store,
        {
            A.SPAN_KIND: A.KIND_PLAN,
            A.PLAN_ID: "p1",
            A.PLAN_VERSION: 1,
            A.PLAN_JSON: json.dumps({"id": "p1", "version": 1, "steps": STEPS}),
        },
        {A.GEN_AI_OPERATION_NAME: "chat", A.GEN_AI_OUTPUT_MESSAGES: answer},
    )
    m = _metrics(store, declared)
    assert (m["ObservedPlans"], m["PlanVersions"], m["Replans"]) == (0, 1, 0)


def _chat(answer: Any) -> dict[str, Any]:
    return {
        A.GEN_AI_OPERATION_NAME: "chat",
        A.GEN_AI_OUTPUT_MESSAGES: _genai_answer(json.dumps(answer)),
    }


def test_an_object_holding_its_steps_under_any_key_is_a_plan(store: Store) -> None:
    # the longest list of step objects wins over a shorter one and over a list of strings
    dag = {
        "release": "api 1.2.3",
        "tasks": [
            {"id": "build", "action": "build the image", "tool": "build_image"},
            {"id": "deploy", "action": "roll it out", "tool": "rollout"},
            {"id": "announce", "action": "post the changelog", "tool": "post"},
        ],
        "owners": [{"team": "sre", "tool": "pager"}],
        "rollback_if": ["error rate above 2%", "p99 above 800 ms", "a third condition"],
    }
    t = _trace(store, _chat(dag))
    assert _plan_steps(store, t) == [
        ("build", "build the image", "build_image", 1),
        ("deploy", "roll it out", "rollout", 1),
        ("announce", "post the changelog", "post", 1),
    ]


def test_lists_of_step_names_the_longest_first_on_a_tie(store: Store) -> None:
    pipeline = {
        "source": "orders",
        "columns": ["id", "total"],
        "stages": ["extract", "load", "x y"],
    }
    t = _trace(store, _chat(pipeline))
    # a bare word names its step, and so does a phrase (its text, 0044)
    assert _plan_steps(store, t) == [
        ("extract", "extract", "", 1),
        ("load", "load", "", 1),
        ("x y", "x y", "", 1),
    ]
    tie = _trace(store, _chat({"first": ["a", "b"], "second": ["c", "d"]}))
    assert [s[0] for s in _plan_steps(store, tie)] == ["a", "b"]
    # a steps/plan array keeps precedence over a longer list under another key
    keyed = _trace(store, _chat({"plan": ["go"], "notes": ["n1", "n2", "n3"]}))
    assert [s[0] for s in _plan_steps(store, keyed)] == ["go"]


def test_objects_whose_lists_are_not_steps_give_no_plan(store: Store) -> None:
    numbers = {"scores": [0.3, 0.9, 0.5], "ids": [1, 2, 3]}
    records = {
        "checks": [{"name": "GET /healthz", "status": 200}, {"name": "GET /v", "status": 200}]
    }
    mixed = {"items": [{"action": "a"}, "b"], "one": ["only"], "empty": []}
    t = _trace(store, _chat(numbers), _chat(records), _chat(mixed))
    assert _plan_steps(store, t) == []
    assert _metrics(store, t)["PlanVersions"] == 0


def test_a_tool_result_holding_step_like_records_is_not_a_plan(store: Store) -> None:
    result = {
        "results": [{"title": "Paris hotels", "action": "open"}, {"title": "Lyon", "task": "x"}]
    }
    tool = {
        A.GEN_AI_OPERATION_NAME: "execute_tool",
        A.GEN_AI_TOOL_NAME: "search",
        "gen_ai.tool.call.result": json.dumps(result),
        A.GEN_AI_OUTPUT_MESSAGES: _genai_answer(json.dumps(result)),
    }
    t = _trace(store, tool)
    assert _plan_steps(store, t) == []


def test_an_output_message_whose_content_is_the_text_is_read(store: Store) -> None:
    # the older GenAI message shape: {"role": "assistant", "content": "<text>"}, no parts
    text = json.dumps(
        {"source": "orders", "columns": ["id", "total"], "stages": ["extract", "load", "publish"]}
    )
    t = _trace(
        store,
        {
            A.GEN_AI_OPERATION_NAME: "chat",
            A.GEN_AI_OUTPUT_MESSAGES: json.dumps([{"role": "assistant", "content": text}]),
        },
    )
    assert [s[0] for s in _plan_steps(store, t)] == ["extract", "load", "publish"]


def test_an_openinference_answer_in_content_parts_is_read(store: Store) -> None:
    # OpenInference's multi-part message form (smolagents' model spans): the first text part
    t = _trace(
        store,
        {
            A.OI_SPAN_KIND: "LLM",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.contents.0.message_content.type": "text",
            "llm.output_messages.0.message.contents.0.message_content.text": json.dumps(STEPS),
        },
        root_attrs={A.OI_SPAN_KIND: "AGENT"},
    )
    assert [s[:3] for s in _plan_steps(store, t)] == [
        ("fetch", "Fetch invoice 7", "get_invoice"),
        ("pay", "Pay invoice 7", "pay"),
    ]


def _genai_ask(text: str) -> str:
    return json.dumps([{"role": "user", "parts": [{"type": "text", "content": text}]}])


@pytest.mark.parametrize("stated", ["markdown", "tool calls"])
def test_a_plan_in_markdown_is_read_from_the_executor_runs_at_read_time(
    store: Store, stated: str
) -> None:
    """No format reader reads a markdown list at ingest (0031), nor a plan stated through the
    planner's tool calls (one call per step, no answer text); the one mapping reads it from
    structure (``observed.read_plans``): the run model counts it, the analyzer's loader gets its
    steps, and the executor runs are attempts of them."""
    from planscope_analyzer import load_traces
    from planscope_collector.runmodel import bind_traces, binding_parameters

    markdown = (
        "Plan for invoice 7:\n\n1. **fetch**: Fetch it\n   - tool: `get_invoice`\n2. **pay**: Pay"
    )
    calls = [{"step": "fetch", "use": "get_invoice"}, {"step": "pay", "use": "pay"}]
    t, root, planner = new_trace_id(), new_span_id(), new_span_id()
    agent = {A.GEN_AI_OPERATION_NAME: "invoke_agent"}

    def chat(parent: str, at: int, ask: str, answer: str) -> list[Any]:
        attrs = {
            A.GEN_AI_OPERATION_NAME: "chat",
            A.GEN_AI_INPUT_MESSAGES: _genai_ask(ask),
            A.GEN_AI_OUTPUT_MESSAGES: _genai_answer(answer),
        }
        return make_span(
            trace_id=t, parent=parent, name="chat", start_ns=BASE_NS + at * MS, attrs=attrs
        )

    spans = [
        make_span(trace_id=t, span_id=root, name="settle invoice 7", duration_ns=100 * MS),
        make_span(trace_id=t, span_id=planner, parent=root, name="invoke_agent planner",
                  start_ns=BASE_NS + MS, attrs=agent | {A.GEN_AI_AGENT_NAME: "planner"}),
        chat(planner, 2, "Settle invoice 7", markdown if stated == "markdown" else ""),
    ]  # fmt: skip
    if stated == "tool calls":
        spans += [
            make_span(trace_id=t, parent=planner, name="execute_tool add",
                      start_ns=BASE_NS + (3 + i) * MS,
                      attrs={A.GEN_AI_OPERATION_NAME: "execute_tool", A.GEN_AI_TOOL_NAME: "add",
                             A.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps(args)})
            for i, args in enumerate(calls)
        ]  # fmt: skip
    for i, (step, tool) in enumerate([("fetch", "get_invoice"), ("pay", "pay")]):
        run = new_span_id()
        spans += [
            make_span(trace_id=t, span_id=run, parent=root, name="invoke_agent executor",
                      start_ns=BASE_NS + (10 + 10 * i) * MS,
                      attrs=agent | {A.GEN_AI_AGENT_NAME: "executor"}),
            chat(run, 11 + 10 * i, f"## {i + 1}. {step}\nTool: `{tool}`", "done"),
            make_span(trace_id=t, parent=run, name=f"execute_tool {tool}",
                      start_ns=BASE_NS + (12 + 10 * i) * MS,
                      attrs={A.GEN_AI_OPERATION_NAME: "execute_tool", A.GEN_AI_TOOL_NAME: tool}),
        ]  # fmt: skip
    store.insert_spans(spans_ipc(spans))
    assert _plan_steps(store, t) == []  # not read at ingest
    bound = bind_traces(store.query, "Project = {project:String}", {"project": "default"})
    (read,) = bound[t][1].read_plans
    # the markdown names no tool for pay, but the step is named like a tool the trace called
    assert [(s.step_id, s.tool) for s in read.steps] == [("fetch", "get_invoice"), ("pay", "pay")]
    params = binding_parameters(bound)
    sql = run_metrics_sql("Project = 'default' AND TraceId = {t:String}", binding=params)
    (m,) = store.query(sql, {"t": t, "project": "default", **params})
    assert (m["ObservedPlans"], m["PlanVersions"], m["Replans"]) == (1, 1, 0)
    loaded = load_traces(store, "default", [t])[t]
    assert [s.step_id for s in loaded.plan_steps] == ["fetch", "pay"]
    assert [a.step_id for a in loaded.attempts] == ["planner", "fetch", "pay"]


def _langfuse(kind: str, output: str) -> dict[str, Any]:
    return {A.LF_OBSERVATION_TYPE: kind, A.LF_OBSERVATION_OUTPUT: output}


def test_a_langfuse_generations_answer_and_agents_output_are_read(store: Store) -> None:
    # the langfuse.openai wrapper records the answer message; other integrations the text itself
    answered = {"role": "assistant", "content": json.dumps(STEPS)}
    message = _langfuse("generation", json.dumps(answered))
    text = _langfuse("generation", json.dumps({"steps": STEPS}))
    root = _langfuse("agent", "")
    for answer in (message, text):
        t = _trace(store, answer, root_attrs=root)
        assert [s[:3] for s in _plan_steps(store, t)] == [
            ("fetch", "Fetch invoice 7", "get_invoice"),
            ("pay", "Pay invoice 7", "pay"),
        ]
        (plan,) = store.query(
            "SELECT Source FROM planscope_plans WHERE TraceId = {t:String}", {"t": t}
        )
        assert plan["Source"] == "langfuse"
    # an agent observation's output names its steps, as an inferred run's output does
    t = _trace(store, _langfuse("agent", json.dumps({"plan": STEPS})), root_attrs=root)
    assert [s[0] for s in _plan_steps(store, t)] == ["fetch", "pay"]
    # an answer of tool calls only, and text that is no JSON, are no plan rows
    calls = {"role": "assistant", "content": None, "tool_calls": [{"function": {
        "name": "plan", "arguments": json.dumps(STEPS)}}]}  # fmt: skip
    t = _trace(
        store,
        _langfuse("generation", json.dumps(calls)),
        _langfuse("generation", "1. fetch\n2. pay"),
        root_attrs=root,
    )
    assert _plan_steps(store, t) == []


def _mlflow(kind: str, output: Any) -> dict[str, Any]:
    # MLflow writes every attribute value JSON-encoded
    return {A.MLFLOW_SPAN_TYPE: json.dumps(kind), A.MLFLOW_SPAN_OUTPUTS: json.dumps(output)}


def test_an_mlflow_chat_spans_completion_is_read(store: Store) -> None:
    # mlflow.openai.autolog() records the provider's completion: the first choice's message
    def completion(content: str) -> dict[str, Any]:
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}

    root = _mlflow("AGENT", "")
    t = _trace(store, _mlflow("CHAT_MODEL", completion(json.dumps(STEPS))), root_attrs=root)
    assert [s[:3] for s in _plan_steps(store, t)] == [
        ("fetch", "Fetch invoice 7", "get_invoice"),
        ("pay", "Pay invoice 7", "pay"),
    ]
    (plan,) = store.query("SELECT Source FROM planscope_plans WHERE TraceId = {t:String}", {"t": t})
    assert plan["Source"] == "mlflow"
    # a completion whose answer is no JSON (RFC 822 stanzas) is no plan row: read at read time
    stanzas = "Step: fetch\nTool: get_invoice\n\nStep: pay\nTool: pay"
    t = _trace(store, _mlflow("CHAT_MODEL", completion(stanzas)), root_attrs=root)
    assert _plan_steps(store, t) == []


def test_an_openllmetry_tasks_outputs_are_read_as_its_answer(store: Store) -> None:
    """0045: OpenLLMetry's LangChain callback records a node's output as ``{"outputs": <what it
    returned>, "kwargs": {...}}``; a node that returned ``{"plan": [...]}`` (a re-planner's
    steps still to do) is a plan as it is under OpenInference (``output.value``: the value
    itself). Only that envelope is opened: a third key beside it, or ``outputs`` that is no
    object, is read as before (no plan)."""
    node = "traceloop.association.properties.langgraph_node"

    def visit(name: str, output: Any) -> dict[str, Any]:
        return {
            A.GEN_AI_OPERATION_NAME: "execute_task",
            A.TL_SPAN_KIND: "task",
            A.TL_ENTITY_NAME: name,
            node: name,
            A.TL_ENTITY_OUTPUT: json.dumps(output),
        }

    loaves = ["Proof the rye dough overnight.", "Bake the rye loaves at 240 degrees."]
    tags = {"tags": ["graph:step:3"]}
    workflow = {A.TL_SPAN_KIND: "workflow", A.TL_ENTITY_NAME: "LangGraph"}
    t = _trace(store, visit("rework", {"outputs": {"plan": loaves}, "kwargs": tags}),
               root_attrs=workflow)  # fmt: skip
    assert _plan_steps(store, t) == [(s, s, "", 1) for s in loaves]
    for other in (
        {"outputs": {"plan": loaves}, "kwargs": tags, "extra": 1},
        {"outputs": [loaves], "kwargs": tags},
        {"outputs": {"response": "The loaves are baked."}, "kwargs": tags},
    ):
        t = _trace(store, visit("rework", other), root_attrs=workflow)
        assert _plan_steps(store, t) == []

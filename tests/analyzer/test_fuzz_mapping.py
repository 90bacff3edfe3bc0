"""Property-based fuzzing (hypothesis) of what happens to stored spans: the mapping from spans
to the run model (``observed.bind`` and the per-span readers), the analyzer's loader and
detectors, and the trace API's detail of a trace.

The generated traces are shaped like real frameworks' traces (the attribute keys, span names
and event names the mapping reads: OpenInference, OTel GenAI, OpenLLMetry, Langfuse, MLflow,
Logfire, AutoGen, an app's ``<prefix>.step`` spans, planscope's own) and carry hostile values:
broken JSON, JSON of the wrong type, NaN, huge numbers, deep nesting, long strings, odd unicode,
plan-like texts cut in the middle, orphans, duplicate span ids, parent cycles, many roots,
zero-length spans. Properties:

- the per-span readers and :func:`bind` never raise, and what they bind names spans of the
  trace;
- the loader and every detector never raise over a stored hostile trace (no ``detector_error``
  or ``unloadable_trace`` finding), their findings are well formed (a known kind and severity,
  evidence span ids of the trace, a step id of its model), and its detail page is served;
- end to end (OTLP into a real collector, ``POST /api/analyze``, ``GET /api/traces/{id}``): a
  hostile trace next to a normal one does not cost the normal one its run or its findings, and
  no route answers a 5xx.

``make test`` runs 300 cases of the first property, 20 of the second and 12 end to end (a
fifteenth and a twenty-fifth of ``PLANSCOPE_FUZZ_EXAMPLES``, which runs the big count:
docs/analyzers.md, "Hostile and huge traces", records the figures).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from planscope import semconv as A
from planscope_analyzer import DETECTORS, SEVERITIES, Analyzer, load_traces
from planscope_collector import BackgroundServer, CollectorSettings, observed
from planscope_collector._query import TraceQueries
from planscope_collector.observed import ObservedStep, SpanNode, ToolEvent
from planscope_collector.storage import Store
from planscope_runners import run_task
from planscope_runners.environments import get_task

from tests.collector import _otlp_factory as otlp
from tests.conftest import wait_for_trace
from tests.storage._spans import BASE_NS, make_span, spans_ipc

EXAMPLES = int(os.environ.get("PLANSCOPE_FUZZ_EXAMPLES", "300"))


def _fuzz(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,  # the same cases on every run: a failure is reproducible
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
        database=None,
    )


# -- values ------------------------------------------------------------------------------------

# combining marks, RTL and bidi controls, NUL, digits int() refuses (superscripts) or reads
# (Arabic-Indic), line and paragraph separators, zero-width joiners; no surrogates (refused at
# ingest)
ODD = "\u0301\u0336\u05d0\u0627\u202e\u200f\x00\u00b2\u0661\u2028\u200d\ufeff"
ODD += "\t\r\n{}[]()\"'\\$#@%`|=:,."
text = st.text(alphabet=st.one_of(st.characters(codec="utf-8"), st.sampled_from(ODD)), max_size=40)
IDS = ("fetch", "pay", "s1", "s2", "plan", "search", "step", "check")
TOOLS = ("search", "pay", "http_get", "write_file", "final_answer", "lookup")
word = st.one_of(st.sampled_from(IDS + TOOLS), text)

json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        word,
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(word, inner, max_size=4)),
    max_leaves=12,
)
WRONG = (
    "",
    "null",
    "NaN",
    "Infinity",
    "-Infinity",
    "1e400",
    "-0",
    "[]",
    "{}",
    '"a string"',
    "9" * 5000,  # more digits than int() reads
    "[" * 20_000 + "]" * 20_000,
    '{"a":' * 3000 + "1" + "}" * 3000,
    '{"steps": {"id": "fetch"}}',
    '[{"id": null}, {"id": 3}, {"id": ["x"]}, {"id": {"a": 1}}]',
    "true",
    "{'id': 'fetch', 'tool': 'search'}",  # a Python literal
    "\x00" * 10,
    "--5",
    '[{"id": "a", "x": [\n' * 2000,  # nested past the stack, a line at a time
    "\\note{" * 2000,  # unbalanced braces
    "x = t --k $y" + " w" * 2000,  # a command of many words
)


@st.composite
def step_list(draw: st.DrawFn) -> str:
    """A JSON list of steps whose ``requires`` / ``depends_on`` are missing, duplicate, cyclic
    or name the step itself."""
    ids = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=6))
    steps = []
    for i, sid in enumerate(ids):
        step: dict[str, Any] = {"id": draw(st.sampled_from([sid, sid, i, None, ""]))}
        if draw(st.booleans()):
            step["tool"] = draw(st.sampled_from((*TOOLS, "", "search.__call__")))
        key = draw(st.sampled_from(["requires", "depends_on", "after", "needs"]))
        step[key] = draw(st.lists(st.sampled_from([*ids, "missing", sid]), max_size=3))
        if draw(st.booleans()):
            step["args"] = draw(json_values)
        steps.append(step)
    wrapped: Any = draw(st.sampled_from(["list", "steps", "plan", "tasks"]))
    doc = steps if wrapped == "list" else {wrapped: steps}
    return json.dumps(doc, allow_nan=True)


def _fmt(template: str) -> st.SearchStrategy[str]:
    return st.builds(
        lambda a, b, t, x: template.format(a=a, b=b, t=t, x=x),
        st.sampled_from(IDS),
        st.sampled_from(IDS),
        st.sampled_from(TOOLS),
        text,
    )


PLAN_TEMPLATES = (
    "1. {a}: use {t} to get {x}\n2. {b}: {t} the result of step 1\n3. done",
    "Plan:\n- {a} ({t})\n- {b} -> {a}\n  - nested {x}",
    "#E1 = {t}[{x}]\n#E2 = {t}[#E1, #E2]\n#E3 = LLM[#E9]",
    '1. {t}("{x}")\n2. {t}($1, $2)\n3. join($3)',
    "{a}: {b}  ## {x}\n\t{t} key={x} n=$({b})\n{b}: {a}\n\t{t} --flag",
    "{a} = {t} --key {x}  # goal\n{b} = {t} --from ${a} --n 00\nexport {a}=done\n{a} = ",
    "\\step{{{a}}}{{tool={t}, q={x}}}\n\\step{{{b}}}{{tool={t}, from=\\ref{{{a}}}}}\n"
    "\\done{{{a}}}{{ok}}\\step{{",
    "@step{{{a}, tool = {{{t}}}, q = {{{x}}}}}\n@step{{{b}, tool={{{t}}}, after={{{a}}}, n=007}}"
    "\n@step{{",
    "<plan><step id='{a}' tool='{t}'>{x}</step><step id='{b}' requires='{a}' tool='{t}'/>"
    "</plan><step id=",
    "Step: {a}\nTool: {t}\nInput: {x}\n\nStep: {b}\nTool: {t}\nRequires: {a}\n\nStep:",
    "{t}://{a}?q={x}&n=1\n{t}://{b}?from={a}\n{t}://",
    "| id | tool | input |\n|---|---|---|\n| {a} | {t} | {x} |\n| {b} | {t} |\n|",
    "- id: {a}\n  tool: {t}\n  args: {{q: {x}}}\n"
    "- id: {b}\n  tool: {t}\n  requires: [{a}, {b}]\n- id:",
    '```json\n[{{"id": "{a}", "tool": "{t}"}}, {{"id": "{b}", "tool": "{t}"}}]\n```',
    "Step 1 — {a}: call {t}\nStep 2 — {b}: call {t} with {x}\nStep 2 — {b}: again",
    "#+TODO: TODO | DONE\n* TODO [#A] {a}: {x} :t:\n  :PROPERTIES:\n  :TOOL: {t}\n  :q: {x}\n"
    '  :BLOCKER: ids({b} {a})\n  :END:\n** NEXT {b}\n   {t}(q="[[#{a}]]", n=007)\n'
    "   - [ ] {x}\n   - k :: [[*{a}: {x}]]\n* DONE {a}\n  :PROPERTIES:\n  :",
)


@st.composite
def plan_text(draw: st.DrawFn) -> str:
    """A plan in one of the formats the readers know, maybe repeated, maybe cut anywhere."""
    body = draw(st.one_of(st.sampled_from(PLAN_TEMPLATES).flatmap(_fmt), step_list()))
    body = body * draw(st.integers(1, 3))
    cut = draw(st.integers(0, len(body)))
    return body[:cut] if draw(st.booleans()) else body


def _messages(content: Any, role: str = "user") -> str:
    return json.dumps([{"role": role, "content": content}], allow_nan=True)


hostile = st.one_of(
    text,
    plan_text(),
    st.sampled_from(WRONG),
    json_values.map(lambda v: json.dumps(v, allow_nan=True)),
    st.builds(lambda v: json.dumps(v).replace("1", "NaN"), json_values),
    st.builds(lambda v, n: str(v)[:n], json_values, st.integers(0, 30)),  # broken JSON
    st.one_of(plan_text(), text).map(_messages),
    st.builds(
        lambda c, n: c * n,
        st.sampled_from(["a", " ", "\n", "1. a\n", "é\u0301"]),
        st.integers(1, 20_000),
    ),
)

# -- span trees --------------------------------------------------------------------------------

KIND_VALUES: dict[str, tuple[str, ...]] = {
    A.SPAN_KIND: (A.KIND_RUN, A.KIND_PLAN, A.KIND_STEP, A.KIND_TOOL, A.KIND_LLM, "other"),
    A.GEN_AI_OPERATION_NAME: (
        A.OP_INVOKE_AGENT,
        A.OP_EXECUTE_TOOL,
        A.OP_CHAT,
        A.OP_PLAN,
        A.OP_EXECUTE_STEP,
        A.OP_INVOKE_WORKFLOW,
        A.OP_CREATE_AGENT,
        A.OP_TEXT_COMPLETION,
    ),
    A.OI_SPAN_KIND: ("LLM", "TOOL", "CHAIN", "AGENT", "RETRIEVER"),
    A.TL_SPAN_KIND: ("workflow", "task", "agent", "tool"),
    A.LF_OBSERVATION_TYPE: ("agent", "chain", "generation", "tool", "span", "event"),
    A.MLFLOW_SPAN_TYPE: ("AGENT", "CHAIN", "TOOL", "CHAT_MODEL", "LLM"),
    A.LOGFIRE_SPAN_TYPE: ("span", "log", "pending_span"),
    A.LOGFIRE_LEVEL_NUM: ("9", "13", "17", "21", "²", "-1", "99999999999999999999"),
    A.AUTOGEN_MESSAGING_OPERATION: ("create", "publish", "process", "send"),
    A.STEP_STATUS: (A.STATUS_OK, A.STATUS_ERROR, A.STATUS_SKIPPED),
    A.RUN_OUTCOME: (A.OUTCOME_SUCCESS, A.OUTCOME_FAILURE, A.OUTCOME_UNKNOWN),
    A.PLAN_APPROVAL: (A.APPROVAL_PENDING, A.APPROVAL_REJECTED, A.APPROVAL_NOT_REQUIRED),
    A.TOOL_EFFECT: ("read", "write", "irreversible"),
}
VALUE_KEYS = (
    A.RUN_ID,
    A.RUN_OBJECTIVE,
    A.RUN_BUDGET,
    A.RUN_VARIANT,
    A.RUN_OUTCOME_REASON,
    A.PLAN_ID,
    A.PLAN_VERSION,
    A.PLAN_JSON,
    A.PLAN_SCOPE,
    A.PLAN_PARENT_VERSION,
    A.PLAN_REPLAN_REASON,
    A.PLAN_STEP_COUNT,
    A.STEP_ID,
    A.STEP_ATTEMPT,
    A.STEP_CONTEXT_KEYS,
    A.STEP_CONTEXT_TOKENS,
    A.STEP_EXECUTOR,
    A.STEP_ERROR_FINGERPRINT,
    A.STEP_INPUT_HASH,
    A.STEP_DEPTH,
    A.STEP_SELF_ASSESSMENT,
    A.TOOL_RESOURCE,
    A.TOOL_ARGS_HASH,
    "planscope.output",
    "planscope.llm.role",
    A.GEN_AI_AGENT_NAME,
    A.GEN_AI_TOOL_NAME,
    A.GEN_AI_TOOL_CALL_ID,
    A.GEN_AI_TOOL_CALL_ARGUMENTS,
    A.GEN_AI_TOOL_CALL_RESULT,
    A.GEN_AI_INPUT_MESSAGES,
    A.GEN_AI_OUTPUT_MESSAGES,
    "gen_ai.prompt.0.role",
    "gen_ai.prompt.0.content",
    "gen_ai.prompt.1.content",
    "gen_ai.prompt.².content",
    "gen_ai.completion.0.content",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.request.model",
    A.OI_INPUT_VALUE,
    A.OI_OUTPUT_VALUE,
    "llm.input_messages.0.message.role",
    "llm.input_messages.0.message.content",
    "llm.input_messages.x.message.content",
    A.OI_OUTPUT_MESSAGE_CONTENT,
    A.OI_TOOL_NAME,
    A.OI_METADATA,
    A.OI_AGENT_NAME,
    "llm.token_count.prompt",
    A.TL_ENTITY_NAME,
    A.TL_ENTITY_INPUT,
    A.TL_ENTITY_OUTPUT,
    "traceloop.association.properties.langgraph_node",
    A.LF_OBSERVATION_INPUT,
    A.LF_OBSERVATION_OUTPUT,
    A.LF_OBSERVATION_LEVEL,
    A.LF_OBSERVATION_STATUS_MESSAGE,
    A.MLFLOW_SPAN_INPUTS,
    A.MLFLOW_SPAN_OUTPUTS,
    A.LOGFIRE_MSG,
    A.LOGFIRE_RETURN,
    A.LOGFIRE_REQUEST_DATA,
    A.LOGFIRE_RESPONSE_DATA,
    A.AUTOGEN_MESSAGE,
    "shop.step",
    "shop.step.id",
    "shop.step.args",
    "shop.step.result",
    "shop.plan.text",
    "step_id",
    "crew.tasks",
    "error.type",
    "exception.message",
    "tags",
)
NAMES = (
    "invoke_agent planner",
    "invoke_agent worker",
    "execute_tool search",
    "chat gpt-4o",
    "invoke_workflow",
    "workflow",
    "plan",
    "step s1",
    "shop.step fetch",
    "shop.step pay",
    "shop.plan",
    "search.__call__",
    "search.acall",
    "Task: fetch",
    "workflow step: 'fetch'",
    "LangGraph",
    "agent",
    "process",
    "publish",
    "main",
    "fetch",
    "pay",
    "planner",
    "executor",
    "run",
    "",
)
EVENT_NAMES = (
    A.GEN_AI_USER_MESSAGE_EVENT,
    A.GEN_AI_CHOICE_EVENT,
    A.GEN_AI_TOOL_MESSAGE_EVENT,
    "exception",
    "log",
    "gen_ai.unknown",
)
EVENT_KEYS = (
    "content",
    "message",
    A.GEN_AI_TOOL_CALL_ID,
    A.GEN_AI_TOOL_NAME,
    A.GEN_AI_TOOL_CALL_ARGUMENTS,
    A.GEN_AI_TOOL_CALL_RESULT,
    "error.type",
    "exception.message",
)

attributes = st.dictionaries(
    st.one_of(st.sampled_from(VALUE_KEYS), text), hostile, max_size=6
).flatmap(
    lambda values: st.dictionaries(
        st.sampled_from(sorted(KIND_VALUES)),
        st.sampled_from(sorted(KIND_VALUES)).flatmap(lambda k: st.sampled_from(KIND_VALUES[k])),
        max_size=3,
    ).map(lambda kinds: {**values, **kinds})
)
events = st.lists(
    st.tuples(
        st.integers(0, 10**6),
        st.one_of(st.sampled_from(EVENT_NAMES), text),
        st.dictionaries(st.sampled_from(EVENT_KEYS), st.one_of(word, hostile), max_size=4),
    ),
    max_size=3,
)


@st.composite
def span_tree(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Spans (as dicts) of one trace: each span's parent another span, an absent one, itself or
    none (orphans, cycles, many roots); ids drawn from a pool (duplicates); sometimes thousands
    of siblings."""
    n = draw(st.integers(1, 12))
    pool = [f"{i + 1:016x}" for i in range(n + draw(st.integers(0, 2)))]
    spans = []
    for i in range(n):
        span_id = pool[i] if draw(st.integers(0, 9)) else draw(st.sampled_from(pool))
        spans.append(
            {
                "span_id": span_id,
                "parent": draw(st.one_of(st.just(""), st.sampled_from(pool), st.just("f" * 16))),
                "name": draw(st.one_of(st.sampled_from(NAMES), text)),
                "start": draw(st.integers(0, 10**9)),
                "duration": draw(st.sampled_from([0, 1, 10**6, 10**9, 2**62])),
                "error": draw(st.booleans()),
                "message": draw(st.sampled_from(["", "", "boom"])),
                "attrs": draw(attributes),
                "events": draw(events),
                "links": draw(st.lists(st.sampled_from([*pool, "e" * 16]), max_size=2)),
            }
        )
    siblings = draw(st.sampled_from([0, 0, 0, 0, 0, 0, 0, 2000]))
    for i in range(siblings):
        kind = (A.KIND_TOOL, A.KIND_LLM)[i % 2]
        spans.append(
            {
                "span_id": f"{0x100000 + i:016x}",
                "parent": pool[0],
                "name": f"execute_tool {TOOLS[i % len(TOOLS)]}",
                "start": i,
                "duration": 1,
                "error": i % 3 == 0,
                "message": "",
                "attrs": {A.SPAN_KIND: kind, A.GEN_AI_TOOL_NAME: TOOLS[i % len(TOOLS)]},
                "events": [],
                "links": [],
            }
        )
    return spans


# -- property 1: the per-span readers and bind -------------------------------------------------

KINDS = (A.KIND_RUN, A.KIND_PLAN, A.KIND_STEP, A.KIND_TOOL, A.KIND_LLM, A.KIND_OTHER)


def _node(s: dict[str, Any], kind: str, inferred: bool, step: str) -> SpanNode:
    """A span as the readers see it (what the loader reads for each, by the same functions)."""
    attrs = {k: str(v) for k, v in s["attrs"].items()}
    said = {
        **observed.event_values(
            {"name": n, "attributes": {k: str(v) for k, v in a.items()}} for _, n, a in s["events"]
        ),
        **attrs,
    }
    return SpanNode(
        s["span_id"],
        s["parent"],
        kind,
        s["name"],
        step_name=step,
        inferred=inferred,
        failed=s["error"],
        tool=str(attrs.get(A.GEN_AI_TOOL_NAME, "")),
        start_ns=s["start"],
        message=s["message"],
        duration_ns=s["duration"],
        workflow=s["name"] == "workflow",
        links=tuple(s["links"]),
        request=observed.user_request(said),
        answer=observed.answer(said, kind, inferred),
        log_level=observed.log_level(attrs),
        app_step=observed.app_step(attrs),
        io=observed.step_io(attrs),
    )


@_fuzz(EXAMPLES)
@given(
    spans=span_tree(),
    kinds=st.lists(st.tuples(st.sampled_from(KINDS), st.booleans(), word), min_size=1),
    plan=st.lists(st.tuples(st.integers(0, 14), word, st.sampled_from((*TOOLS, ""))), max_size=6),
    agents=st.one_of(
        st.none(), st.dictionaries(st.sampled_from(["0" * 15 + "1", "0" * 15 + "2"]), word)
    ),
    with_events=st.booleans(),
)
def test_the_readers_and_bind_never_raise(
    spans: list[dict[str, Any]],
    kinds: list[tuple[str, bool, str]],
    plan: list[tuple[int, str, str]],
    agents: dict[str, str] | None,
    with_events: bool,
) -> None:
    nodes = [_node(s, *kinds[i % len(kinds)]) for i, s in enumerate(spans)]
    ids = [n.span_id for n in nodes]
    steps = [ObservedStep(ids[i % len(ids)], sid, tool, i) for i, sid, tool in plan]
    said = [
        ToolEvent(s["span_id"], t, n, {k: str(v) for k, v in a.items()})
        for s in spans
        for t, n, a in s["events"]
    ]
    b = observed.bind(nodes, steps, events=said if with_events else None, agents=agents)
    known = set(ids) | {c.span_id for c in b.event_calls} | {observed.NO_SPAN}
    assert set(b.actions) <= known and set(b.actions.values()) <= known
    assert set(b.steps) <= known and set(b.attempts) <= known
    # a promoted span is an attempt (the loader numbers each; one folded into another is none)
    assert b.promoted <= set(b.attempts)
    assert b.failed_for_good is None or b.failed_for_good in known
    for r in b.read_plans:
        assert r.span_id in known
        assert isinstance(json.loads(r.json), list)


# -- property 2: loader, detectors and the trace detail over a stored trace --------------------


def _rows(trace_id: str, spans: list[dict[str, Any]], project: str) -> list[list[Any]]:
    rows = []
    for s in spans:
        row = make_span(
            trace_id=trace_id,
            span_id=s["span_id"],
            parent=s["parent"],
            name=s["name"],
            attrs=s["attrs"],
            start_ns=BASE_NS + s["start"],
            duration_ns=s["duration"],
            status="Error" if s["error"] else "Unset",
            status_message=s["message"],
            project=project,
            events=[(BASE_NS + t, n, {k: str(v) for k, v in a.items()}) for t, n, a in s["events"]],
        )
        row[18] = [trace_id] * len(s["links"])  # Links.TraceId, .SpanId, .TraceState, .Attributes
        row[19] = list(s["links"])
        row[20] = [""] * len(s["links"])
        row[21] = [{"odd": "\x00"}] * len(s["links"])
        rows.append(row)
    return rows


KNOWN_KINDS = {d.kind for d in DETECTORS} | {A.FINDING_DATA_QUALITY}


def _check_findings(store: Store, project: str, trace_id: str, span_ids: set[str]) -> None:
    result = Analyzer(store).analyze(project, [trace_id], write=False)
    model = load_traces(store, project, [trace_id])[trace_id]
    steps = {s.step_id for s in model.plan_steps} | {a.step_id for a in model.attempts} | {""}
    for f in result.findings:
        assert f.detail.get("issue") not in ("detector_error", "unloadable_trace"), f
        assert f.kind in KNOWN_KINDS and f.severity in SEVERITIES, f
        assert f.trace_id == trace_id and f.explanation, f
        assert set(f.evidence) <= span_ids | model.typed_span_ids(), f
        assert f.step_id in steps, f
        assert f.wasted_tokens >= 0 and f.wasted_ns >= 0, f
        assert math.isfinite(f.wasted_cost_usd) and f.wasted_cost_usd >= 0, f
        json.dumps(f.detail)


_trace_numbers = iter(range(1, 1 << 40))


@_fuzz(max(20, EXAMPLES // 15))
@given(spans=span_tree())
def test_the_loader_detectors_and_detail_never_fail_on_a_stored_trace(
    store: Store, spans: list[dict[str, Any]]
) -> None:
    trace_id = f"{next(_trace_numbers):032x}"
    store.insert_spans(spans_ipc(_rows(trace_id, spans, "fuzz")))
    _check_findings(store, "fuzz", trace_id, {s["span_id"] for s in spans})
    detail = TraceQueries(store).get_trace("fuzz", trace_id, 0, 1000)
    assert detail is not None
    json.dumps(detail)


# -- property 3: end to end, next to a normal trace --------------------------------------------

PB = {"Content-Type": "application/x-protobuf"}


def _otlp_spans(trace_id: bytes, spans: list[dict[str, Any]]) -> bytes:
    out = []
    for s in spans:
        span = otlp.make_span(
            trace_id=trace_id,
            span_id=bytes.fromhex(s["span_id"]),
            parent=bytes.fromhex(s["parent"]) if s["parent"] else b"",
            name=s["name"],
            start=BASE_NS + s["start"],
            duration=s["duration"],
            attributes=s["attrs"],
            error=s["error"],
        )
        span.status.message = s["message"]
        if s["duration"] == 2**62:  # ends before it starts
            span.end_time_unix_nano = span.start_time_unix_nano - 1
        for t, n, a in s["events"]:
            span.events.add(name=n, time_unix_nano=BASE_NS + t).attributes.extend(
                otlp.kv(k, v) for k, v in a.items()
            )
        for link in s["links"]:
            span.links.add(trace_id=trace_id, span_id=bytes.fromhex(link)).attributes.append(
                otlp.kv("odd", "\x00")
            )
        out.append(span)
    return otlp.make_request(out).SerializeToString()


@pytest.fixture
def normal_server(
    data_dir: Path, exporter: InMemorySpanExporter
) -> Iterator[tuple[BackgroundServer, str]]:
    """A collector holding one normal run (a runaway loop), for every end-to-end case (one
    collector for all of hypothesis's cases)."""
    settings_ = CollectorSettings(data_dir=data_dir, port=0, flush_interval=0.05)
    with BackgroundServer(settings_) as server:
        loop = run_task("plan_and_act", "ops", get_task("ops-deploy-api"), ["loop_same_error"])
        body = encode_spans(list(exporter.get_finished_spans())).SerializeToString()
        r = httpx.post(f"{server.url}/v1/traces", content=body, headers=PB)
        assert r.status_code == 200, r.text
        wait_for_trace(server.url, loop.trace_id, 1)
        yield server, loop.trace_id


@_fuzz(max(12, EXAMPLES // 25))
@given(spans=span_tree())
def test_a_hostile_trace_next_to_a_normal_one_end_to_end(
    normal_server: tuple[BackgroundServer, str], spans: list[dict[str, Any]]
) -> None:
    server, normal = normal_server
    hostile_id = f"{next(_trace_numbers) | 1 << 120:032x}"
    body = _otlp_spans(bytes.fromhex(hostile_id), spans)
    r = httpx.post(f"{server.url}/v1/traces", content=body, headers=PB)
    stored = r.status_code == 200
    assert stored or (r.status_code == 400 and r.json()["error"]), r.text  # ends before it starts
    if stored:
        wait_for_trace(server.url, hostile_id, 1)
    r = httpx.post(f"{server.url}/api/analyze", json={"since": 0}, timeout=60)
    assert r.status_code == 200, r.text
    result = r.json()
    assert any(
        f["trace_id"] == normal and f["kind"] == "runaway_loop" for f in result["findings"]
    ), result["counts"]
    for trace_id in (hostile_id, normal) if stored else (normal,):
        for path in ("", "/findings"):
            r = httpx.get(f"{server.url}/api/traces/{trace_id}{path}", timeout=60)
            assert r.status_code == 200, (path, r.text[:500])
    runs = httpx.get(f"{server.url}/api/traces/{normal}").json()
    assert runs["span_count"] > 1


def test_digits_str_isdigit_accepts_but_int_refuses() -> None:
    """Found by the fuzzing: ``"²".isdigit()`` is true and ``int("²")`` raises, so a message
    key ``gen_ai.prompt.².content`` or a log level ``²`` raised in the readers; a level of 5,000
    digits raised too (more digits than int() reads). They read as the SQL reads them."""
    attrs = {"gen_ai.prompt.².content": "x", "gen_ai.prompt.0.role": "user"}
    attrs["gen_ai.prompt.0.content"] = "fetch"
    assert observed.user_request(attrs) == "fetch"
    for level, read in (("²", 1), ("9" * 5000, 1), ("17", 17), ("4294967296", 1), ("300", 255)):
        assert observed.log_level({A.LOGFIRE_SPAN_TYPE: "log", A.LOGFIRE_LEVEL_NUM: level}) == read


# -- huge traces: the output on a big input (the time is benchmarks/mapping_scaling.py's) -------


def test_a_poll_that_stalled_among_thousands_of_attempts(store: Store) -> None:
    """Stalled polls were found by scanning, for each failed attempt, every later attempt for a
    success of its step: quadratic (10,000 attempts of one step took 14 CPU s). Among 3,000
    attempts, a step whose polling attempt failed and that succeeded 3,000 attempts later is no
    stalled poll; one that never succeeded is."""
    trace_id = f"{next(_trace_numbers) | 1 << 121:032x}"
    run = make_span(
        trace_id=trace_id,
        name="run",
        project="huge",
        attrs={A.SPAN_KIND: A.KIND_RUN, A.RUN_ID: "r"},
    )
    rows = [run]

    def attempt(step: str, start: int, ok: bool, polls: int = 0) -> list[str]:
        span = make_span(
            trace_id=trace_id,
            name=f"step {step}",
            parent=run[2],
            project="huge",
            start_ns=BASE_NS + start * 10,
            status="Unset" if ok else "Error",
            attrs={
                A.SPAN_KIND: A.KIND_STEP,
                A.RUN_ID: "r",
                A.STEP_ID: step,
                A.STEP_ATTEMPT: 1 + (step == "s1" and ok),
                A.STEP_STATUS: A.STATUS_OK if ok else A.STATUS_ERROR,
            },
        )
        calls = [
            make_span(
                trace_id=trace_id,
                name="execute_tool poll_job",
                parent=span[2],
                project="huge",
                start_ns=BASE_NS + start * 10 + 1 + i,
                attrs={
                    A.SPAN_KIND: A.KIND_TOOL,
                    A.GEN_AI_TOOL_NAME: "poll_job",
                    A.RUN_ID: "r",
                    A.STEP_ID: step,
                    A.STEP_ATTEMPT: 1 + (step == "s1" and ok),
                    A.TOOL_ARGS_HASH: step,
                    A.GEN_AI_TOOL_CALL_RESULT: "pending",
                },
            )
            for i in range(polls)
        ]
        rows.extend([span, *calls])
        return [span[2]] + [c[2] for c in calls]

    attempt("s1", 0, ok=False, polls=5)  # succeeds 3,000 attempts later: no stall
    for i in range(3000):
        attempt(f"filler{i}", 1 + i, ok=True)
    stalled = attempt("s2", 4000, ok=False, polls=5)
    attempt("s1", 5000, ok=True)
    store.insert_spans(spans_ipc(rows))
    result = Analyzer(store).analyze("huge", [trace_id], write=False)
    assert [(f.kind, f.step_id, list(f.evidence)) for f in result.findings] == [
        ("runaway_loop", "s2", stalled)
    ]


def _app_plan(text: str, steps: tuple[str, ...]) -> observed.Binding:
    """:func:`observed.bind` of an app's trace: its ``shop.plan`` span says ``text``, then one
    ``shop.step`` span per step calls a tool."""
    nodes = [
        SpanNode("r", "", "other", "app"),
        SpanNode("p", "r", "other", "shop.plan", answer=text),
    ]
    for i, step in enumerate(steps):
        nodes += [
            SpanNode(f"s{i}", "r", "step", f"shop.step {step}", step_name=step, start_ns=10 + i),
            SpanNode(f"t{i}", f"s{i}", "tool", "execute_tool wms", tool="wms", start_ns=11 + i),
        ]
    return observed.bind(nodes, [])


def test_plans_after_thousands_of_unbalanced_macros_or_options_are_read() -> None:
    """Found timing the readers on huge plan texts: the macro reader scanned to the end of the
    text for each unbalanced brace (160 KB of them took 40 CPU s) and the shell reader recounted
    a command's numbered words for each word (12 CPU s); both are one pass now, reading the
    same plans."""
    macros = (
        "\\task{pick}{wms}{order=7}{Pick it}\n\\task{ship}{courier}{parcel=\\ref{pick}}{Ship}\n"
        + "\\note{" * 40_000
    )
    (plan,) = _app_plan(macros, ("pick", "ship")).read_plans
    assert [(s.step_id, s.tool) for s in plan.steps] == [("pick", "wms"), ("ship", "courier")]
    script = "pick = wms --order 7  # Pick it\nship = courier --parcel ${pick}" + " x" * 40_000
    (plan,) = _app_plan(script, ("pick", "ship")).read_plans
    pick, ship = json.loads(plan.json)
    assert pick["args"] == {"order": 7}
    assert ship["args"] == {"parcel": "${pick}"} | {str(i): "x" for i in range(1, 40_001)}


def test_json_nested_past_the_stack_on_lines_of_its_own_reads_no_plan() -> None:
    """Found timing the readers: a text of lines that each open a JSON array or object, nested
    thousands deep, made the embedded-JSON reader raise RecursionError (bind raised), then, when
    caught, try each line a thousand levels down (160 KB: 8.5 CPU s)."""
    for line in ('[{"id": "a", "tool": "wms", "x": [\n', "[1,\n"):
        assert _app_plan(line * 40_000, ("a", "b")).read_plans == ()


def test_a_trace_whose_counts_are_no_whole_numbers_has_a_detail(store: Store) -> None:
    """Found by the fuzzing: the trace API read a count attribute as a number when
    ``value.lstrip("-").isdigit()``, so ``--5``, ``²`` or 5,000 digits made ``int()`` raise
    (the trace's detail page a 500); such values stay text."""
    trace_id = f"{next(_trace_numbers) | 1 << 122:032x}"
    attrs = {
        A.SPAN_KIND: A.KIND_STEP,
        A.STEP_ID: "s1",
        A.STEP_ATTEMPT: "--5",
        A.PLAN_VERSION: "²",
        A.STEP_CONTEXT_TOKENS: "9" * 5000,
        A.GEN_AI_USAGE_INPUT_TOKENS: "-12",
    }
    store.insert_spans(spans_ipc([make_span(trace_id=trace_id, attrs=attrs, project="odd")]))
    detail = TraceQueries(store).get_trace("odd", trace_id, 0, 10)
    assert detail is not None
    (span,) = detail["spans"]
    got = {k: span["attributes"][k] for k in attrs if k != A.SPAN_KIND}
    assert got == {k: v for k, v in attrs.items() if k != A.SPAN_KIND} | {
        A.GEN_AI_USAGE_INPUT_TOKENS: -12
    }


def test_tool_values_nested_past_the_stack_are_no_json() -> None:
    """Found probing the detectors with the fuzzing's values: plan propagation decoded a tool
    call's arguments and results with an unbounded ``json.loads``, so a value nested 5,000 deep
    raised RecursionError (the detector skipped the trace with a ``detector_error``); it is
    no JSON, as any text the bounded reader refuses."""
    from planscope_analyzer.detectors.plan_propagation import (
        argument_leaves,
        argument_values,
        result_values,
    )

    deep = "[" * 5000 + "]" * 5000
    assert argument_values(deep) == {} and argument_leaves(deep) == []
    assert result_values(deep) == set()
    assert argument_values('{"order": [{"sku": "A-1"}]}') == {"sku": {"A-1"}}


def test_a_trace_whose_only_structure_is_a_plan_and_tool_calls_is_analysed(store: Store) -> None:
    """Found by probing the loader with the fuzzing's shapes: a trace whose typed rows are an
    observed plan (GenAI ``plan`` at its root) and tool calls, with no run, attempt or LLM
    call, could not be loaded (an Arrow join on a table with no ``span_id`` column): it was
    skipped with an ``unloadable_trace`` finding."""
    trace_id = f"{next(_trace_numbers) | 1 << 123:032x}"
    spans: list[dict[str, Any]] = [
        {"span_id": "01" * 8, "parent": "", "attrs": {A.GEN_AI_OPERATION_NAME: A.OP_PLAN}},
        {
            "span_id": "02" * 8,
            "parent": "01" * 8,
            "attrs": {A.GEN_AI_OPERATION_NAME: "execute_tool"},
        },
    ]
    for s in spans:
        s |= {"name": "x", "start": 0, "duration": 1, "error": False, "message": ""}
        s |= {"events": [], "links": []}
    store.insert_spans(spans_ipc(_rows(trace_id, spans, "plan-only")))
    result = Analyzer(store).analyze("plan-only", [trace_id], write=False)
    assert [f.detail.get("issue") for f in result.findings] == []
    model = load_traces(store, "plan-only", [trace_id])[trace_id]
    assert [t.span_id for t in model.tools] == ["02" * 8]

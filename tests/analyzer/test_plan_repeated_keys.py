"""A plan whose items each state the same keys (``call=``, ``status=``) read from structure on a
re-plan: a university lab ordering a reagent, plain GenAI spans from the real OTel SDK, stored in
the real chDB store and loaded for real. The planner answers one item a line (its name, then
logfmt-style ``key=value`` pairs, ``call=`` the tool); a re-plan answers every item again, the
done ones with ``status=done result=...``. One executor run per step attempt (the app names the
step on it, ``lab.step``) is handed its item's line, earlier results filled in.

Read from structure (the names later executor runs carry), a re-plan whose later attempts were
all of one step took the key every item states (``call``), carried by those attempts and
written before the step's own name, as the plan's one step: the loop across the re-plans was
found at ``call``, not at the step."""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode, Tracer
from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector.storage import Store

from tests.analyzer.conftest import otlp_rows
from tests.storage._spans import spans_ipc

pytestmark = pytest.mark.integration

PROMPT = "Order 5 L of Tris buffer (ACS grade) for the Kowalski lab, cost centre LAB-2207."

ITEMS = {
    "find_vendor": "call=search_vendors reagent=Tris grade=ACS",
    "order_reagent": "call=place_order vendor=@find_vendor reagent=Tris litres=5 centre={centre}",
    "book_courier": "call=book_courier vendor=@find_vendor building=Hartley dock=2",
    "notify_lab": "call=send_mail to=kowalski-lab order=@order_reagent courier=@book_courier",
}
CENTRES = ("LAB-2207", "LAB-2270", "LAB-7022")
VENDOR = "V-SIG-17"
AGENT = {A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT}


def _plan_text(revision: int, centre: str) -> str:
    lines = [f"# order plan, revision {revision}"]
    for item, pairs in ITEMS.items():
        line = f"{item} {pairs.format(centre=centre)}"
        if revision > 1 and item == "find_vendor":
            line += f" status=done result={VENDOR}"
        lines.append(line)
    return "\n".join(lines)


def _chat(tracer: Tracer, asked: str, answer: str = "") -> None:
    attributes = {
        A.GEN_AI_OPERATION_NAME: "chat",
        A.GEN_AI_INPUT_MESSAGES: json.dumps([{"role": "user", "content": asked}]),
    }
    if answer:
        out = [{"role": "assistant", "content": answer}]
        attributes[A.GEN_AI_OUTPUT_MESSAGES] = json.dumps(out)
    with tracer.start_as_current_span("chat gpt-4o", attributes=attributes):
        pass


def _plan(tracer: Tracer, revision: int, centre: str) -> None:
    asked = PROMPT
    if revision > 1:  # a re-plan is told what is done and what went wrong
        asked += f"\nDone: find_vendor -> {VENDOR}. order_reagent refused cost centre."
    with tracer.start_as_current_span("invoke_agent order_planner", attributes=AGENT):
        _chat(tracer, asked, _plan_text(revision, centre))


def _attempt(tracer: Tracer, item: str, centre: str, error: str = "") -> None:
    """One executor run on ``item``, handed its line; one tool call, failing with ``error``."""
    line = f"{item} {ITEMS[item].format(centre=centre)}".replace("@find_vendor", VENDOR)
    tool = line.split("call=")[1].split()[0]
    with tracer.start_as_current_span(
        "invoke_agent lab_runner", attributes={**AGENT, "lab.step": item}
    ) as run:
        _chat(tracer, f"Carry out this item of the order plan:\n{line}")
        with tracer.start_as_current_span(
            f"execute_tool {tool}",
            attributes={
                A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
                A.GEN_AI_TOOL_NAME: tool,
                A.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps({"item": item, "centre": centre}),
            },
            record_exception=False,
        ) as call:
            if error:
                call.set_status(Status(StatusCode.ERROR, error))
        if error:
            run.set_status(Status(StatusCode.ERROR, error))


def _lab(store: Store) -> str:
    """The order, its reagent refused in every plan version; the trace id."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("lab-orders")
    errors = iter(
        f"finance system: {text}"
        for text in (
            "ledger closing, try again",
            "cost centre frozen, use LAB-2270",
            "batch 41 posting, try again",
            "cost centre frozen, use LAB-7022",
            "budget holder on leave, try again",
            "order refused for good",
        )
    )
    with tracer.start_as_current_span("reagent order") as root:
        for revision, centre in enumerate(CENTRES, 1):
            _plan(tracer, revision, centre)
            if revision == 1:
                _attempt(tracer, "find_vendor", centre)
            _attempt(tracer, "order_reagent", centre, next(errors))
            _attempt(tracer, "order_reagent", centre, next(errors))
        root.set_status(Status(StatusCode.ERROR, "order refused for good"))
        trace_id = format(root.get_span_context().trace_id, "032x")
    store.insert_spans(spans_ipc(otlp_rows(list(exporter.get_finished_spans()))))
    provider.shutdown()
    return trace_id


def test_a_key_every_item_states_is_no_step_of_a_replan(store: Store) -> None:
    t = _lab(store)
    trace = load_traces(store, "default", [t])[t]
    versions = [
        [s.step_id for s in trace.plan_steps if s.plan_version == p.version] for p in trace.plans
    ]
    assert len(versions) == 3
    assert versions[0][:2] == ["find_vendor", "order_reagent"]
    for later in versions[1:]:  # not the key every item states
        assert "call" not in later and "order_reagent" in later
    failed = {a.step_id for a in trace.attempts if a.status == "error"}
    assert failed == {"order_reagent"}
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "order_reagent"
    assert finding.detail["plan_versions"] == [1, 2, 3]

"""The official ``anthropic`` SDK with tool use by hand under OpenInference's Anthropic
instrumentor, as kiln of the detector corpus writes it, in another domain (a bike-repair shop):
a planner forced through a ``submit_plan`` tool (``tool_choice`` naming it, the plan its
``tool_use`` input), then one executor conversation per step under the app's own plain OTel
span, sending ``is_error`` ``tool_result`` blocks back. The instrumentor records a result
block's text but not its ``is_error`` flag, so the app runs each tool under a TOOL span of its
own (as a Phoenix user adds one) whose status says the call failed. Played for real (the SDK,
the instrumentor, the corpus's fake Messages API) in a child process: the instrumentor patches
the SDK for good. The wheel truing stand answers an error, each time another, until the mechanic
gives up and the repair fails. The same shop **without tool spans of its own** (its tools run in
no span): the instrumentor drops ``is_error``, the request JSON it records as the LLM span's
``input.value`` keeps it, and the conversation reader takes the failed calls from there."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

from planscope import semconv as A
from planscope_analyzer import Analyzer
from planscope_collector import BackgroundServer

from tests.collector.test_returned_errors import _played

if TYPE_CHECKING:
    from anthropic.types import ToolParam

SERVICE = "bike-repairs"
PLANNER = "You plan a bike repair ticket. Submit the plan with submit_plan."
MECHANIC = "You are the shop's mechanic. Do the step you are given, then say done: or failed:."
STEPS = [
    {"id": "check_brakes", "goal": "Check the brake pads.", "tool": "measure_pads"},
    {"id": "true_wheel", "goal": "True the rear wheel.", "tool": "adjust_spokes"},
]
JAMS = [
    "truing stand clamp slipped at spoke 7",
    "spoke nipple 12 seized, wrench rounded it",
    "rim dial gauge reads 3.1 mm hop, out of range",
    "spoke 21 snapped under tension",
    "stand arm loose again after spoke 4",
]
"""What the truing stand answers the mechanic, one call after another (never the same)."""
FAILING = "true_wheel"
"""The step whose tool answers :data:`JAMS`."""
JAMMED = next(s["tool"] for s in STEPS if s["id"] == FAILING)


def _tool(name: str, description: str) -> ToolParam:
    return {
        "name": name,
        "description": description,
        "input_schema": {"type": "object", "properties": {"bike": {"type": "string"}}},
    }


SUBMIT_PLAN: ToolParam = {
    "name": "submit_plan",
    "description": "Submit the repair plan: ordered steps, each naming one shop tool.",
    "input_schema": {"type": "object", "properties": {"steps": {"type": "array"}}},
}
TOOLS: list[ToolParam] = [
    _tool("measure_pads", "Measure a bike's brake pad wear."),
    _tool("adjust_spokes", "Tension a wheel's spokes on the truing stand."),
]


def respond(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The scripted model: the planner submits :data:`STEPS`; the mechanic calls its step's
    tool until it works (``done:``) or has failed once per :data:`JAMS` (``failed:``)."""
    system = str(body.get("system") or "")
    messages = body["messages"]
    if system == PLANNER:
        plan = {"steps": STEPS}
        return [{"type": "tool_use", "id": "toolu_plan", "name": "submit_plan", "input": plan}]
    order = str(messages[0]["content"])
    (step,) = [s for s in STEPS if f"Step {s['id']}:" in order]
    results = [
        b
        for m in messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    if results and not results[-1].get("is_error"):
        return [{"type": "text", "text": f"done: {results[-1]['content']}"}]
    if len(results) >= len(JAMS):
        return [{"type": "text", "text": f"failed: {results[-1]['content']}"}]
    use = {"bike": "BK-88"}
    n = len(results)
    return [{"type": "tool_use", "id": f"toolu_{n}", "name": step["tool"], "input": use}]


def repair(url: str, service: str = SERVICE, tool_spans: bool = True) -> None:
    """One repair ticket: the SDK traced by OpenInference into the collector at ``url``, under
    the app's own root span and one span per step attempt; each tool run in a TOOL span of the
    app's own unless ``tool_spans`` is false."""
    from anthropic import Anthropic
    from openinference.instrumentation.anthropic import AnthropicInstrumentor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.trace import Status, StatusCode

    from tests.corpus._fake_anthropic import MODEL, AnthropicServer

    def run_tool(name: str, jams: list[str], tracer: Any) -> tuple[str, bool]:
        """Run a tool under the app's OpenInference TOOL span (as a Phoenix user adds one):
        the instrumentor records a ``tool_result`` block's text but not its ``is_error``, so
        the span's status is what says the call failed."""
        if not tool_spans:
            return (jams.pop(0), True) if name == JAMMED else (json.dumps({"pads_mm": 2.5}), False)
        with tracer.start_as_current_span(name) as span:
            span.set_attributes({"openinference.span.kind": "TOOL", "tool.name": name})
            if name == JAMMED:
                said = jams.pop(0)
                span.set_status(Status(StatusCode.ERROR, said))
                return said, True
            said = json.dumps({"pads_mm": 2.5})
            span.set_attribute("output.value", said)
            return said, False

    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    AnthropicInstrumentor().instrument(tracer_provider=provider)
    tracer = provider.get_tracer("bikes")
    jams = list(JAMS)
    with AnthropicServer(respond) as server:
        client = Anthropic(base_url=server.base_url("bikes"), api_key="t", max_retries=0)
        with tracer.start_as_current_span("repair ticket BK-88") as root:
            planned = client.messages.create(
                model=MODEL,
                max_tokens=1024,
                system=PLANNER,
                tools=[SUBMIT_PLAN],
                tool_choice={"type": "tool", "name": "submit_plan"},
                messages=[
                    {"role": "user", "content": "Bike BK-88: squealing brakes, wobbly wheel."}
                ],
            )
            (use,) = [b for b in planned.content if b.type == "tool_use"]
            for step in cast(list[dict[str, str]], use.input["steps"]):
                with tracer.start_as_current_span(f"step {step['id']}") as span:
                    messages: list[Any] = [
                        {"role": "user", "content": f"Step {step['id']}: {step['goal']}"}
                    ]
                    while True:
                        answer = client.messages.create(
                            model=MODEL,
                            max_tokens=1024,
                            system=MECHANIC,
                            tools=TOOLS,
                            messages=messages,
                        )
                        if answer.stop_reason != "tool_use":
                            break
                        messages.append({"role": "assistant", "content": answer.content})
                        results = []
                        for b in answer.content:
                            if b.type == "tool_use":
                                said, failed = run_tool(b.name, jams, tracer)
                                results.append(
                                    {"type": "tool_result", "tool_use_id": b.id,
                                     "content": said, "is_error": failed}
                                )  # fmt: skip
                        messages.append({"role": "user", "content": results})
                    said = "".join(b.text for b in answer.content if b.type == "text")
                    if said.startswith("failed:"):
                        span.set_status(Status(StatusCode.ERROR, said))
                        root.set_status(Status(StatusCode.ERROR, f"{step['id']} {said}"))
                        break
    assert provider.force_flush(10_000)
    provider.shutdown()


def test_anthropic_sdk_under_openinference_reads_the_submitted_plan_and_the_loop(
    collector: BackgroundServer,
) -> None:
    """Through the real instrumentor: the plan is the ``submit_plan`` input, the executor
    conversation is its step's attempt, the ``is_error`` tool results are its failed calls, and
    the truing stand failing again and again inside one conversation is a runaway loop there."""
    t = _played(collector, "tests.collector.test_openinference_anthropic", "repair", SERVICE)
    assert [s.step_id for s in t.plan_steps] == [s["id"] for s in STEPS], t.plan_steps
    jammed = [c for c in t.tools if c.tool == JAMMED]
    assert [(c.step_id, c.failed, c.message) for c in jammed] == [
        (FAILING, True, jam) for jam in JAMS
    ], t.tools
    attempts = [(a.step_id, a.attempt, a.status) for a in t.attempts]
    assert attempts == [(s["id"], 1, "error" if s["id"] == FAILING else "ok") for s in STEPS], (
        t.attempts
    )
    result = Analyzer(collector.app.state.collector.store, settle_seconds=0).analyze(
        "default", [t.trace_id], write=False
    )
    loops = [f for f in result.findings if f.kind == A.FINDING_RUNAWAY_LOOP]
    assert [f.step_id for f in loops] == [FAILING], result.findings
    # the failures inside the one conversation are the loop: each call's own text counted
    assert loops[0].detail["tool"] == JAMMED
    assert loops[0].detail["distinct_errors"] == len(JAMS)
    assert loops[0].detail["last_error"] == JAMS[-1]


def repair_without_tool_spans(url: str) -> None:
    """:func:`repair` by a shop whose tools run in no span of its own."""
    repair(url, f"{SERVICE}-bare", tool_spans=False)


def test_is_error_results_of_a_conversation_without_tool_spans_are_failed_calls(
    collector: BackgroundServer,
) -> None:
    """Without the app's tool spans, the tool calls only the conversation says are read from
    the LLM spans' messages; the ones whose ``tool_result`` the request marked ``is_error``
    failed, with their text as the error, and the truing stand failing again and again in one
    conversation is a runaway loop at its step. (Before: every call OK, no loop.)"""
    t = _played(
        collector,
        "tests.collector.test_openinference_anthropic",
        "repair_without_tool_spans",
        f"{SERVICE}-bare",
    )
    assert [s.step_id for s in t.plan_steps] == [s["id"] for s in STEPS], t.plan_steps
    calls = [(c.step_id, c.tool, c.failed) for c in t.tools]
    assert calls == [("check_brakes", "measure_pads", False)] + [
        (FAILING, JAMMED, True) for _ in JAMS
    ], t.tools
    assert [c.message for c in t.tools if c.failed] == JAMS
    result = Analyzer(collector.app.state.collector.store, settle_seconds=0).analyze(
        "default", [t.trace_id], write=False
    )
    loops = [f for f in result.findings if f.kind == A.FINDING_RUNAWAY_LOOP]
    assert [f.step_id for f in loops] == [FAILING], result.findings
    assert loops[0].detail["tool"] == JAMMED
    assert loops[0].detail["last_error"] == JAMS[-1]

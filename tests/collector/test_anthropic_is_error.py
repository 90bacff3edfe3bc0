"""A framework-less app on the official ``anthropic`` SDK under OpenInference's Anthropic
instrumentor with **no tool spans of its own**, in another domain (a greenhouse's irrigation
round): a planner forced through a ``submit_plan`` tool, then one executor conversation per step
under the app's plain OTel span, its tools run without a span and their failures sent back as
``tool_result`` blocks with ``is_error`` (plain text, no error envelope). The instrumentor
records a result block's id and text but drops ``is_error``; the request JSON it records as the
LLM span's ``input.value`` keeps it, and the conversation reader takes it from there. Played for
real (the SDK, the instrumentor, the corpus's fake Messages API) in a child process: the
instrumentor patches the SDK for good."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from planscope import semconv as A
from planscope_analyzer import Analyzer
from planscope_collector import BackgroundServer

from tests.collector.test_returned_errors import _played

if TYPE_CHECKING:
    from anthropic.types import ToolParam

SERVICE = "greenhouse-irrigation"
PLANNER = "You plan a greenhouse irrigation round. Submit the plan with submit_plan."
GARDENER = "You water the greenhouse. Do the step you are given, then say done: or failed:."
STEPS = [
    {"id": "read_moisture", "goal": "Read the soil moisture of bed 4.", "tool": "probe_soil"},
    {"id": "open_valves", "goal": "Open the drip valves of bed 4.", "tool": "set_valve"},
]
STUCK = [
    "valve 3 did not move, solenoid silent",
    "valve 3 moved 2 degrees then stopped",
    "pressure dropped to 0.4 bar at the manifold",
    "valve 3 controller rebooted mid-command",
]
"""What the valve controller answers, one call after another (plain text, never the same)."""
FAILING = "open_valves"
VALVE = next(s["tool"] for s in STEPS if s["id"] == FAILING)


def _tool(name: str, description: str) -> ToolParam:
    return {
        "name": name,
        "description": description,
        "input_schema": {"type": "object", "properties": {"bed": {"type": "integer"}}},
    }


SUBMIT_PLAN: ToolParam = {
    "name": "submit_plan",
    "description": "Submit the irrigation plan: ordered steps, each naming one tool.",
    "input_schema": {"type": "object", "properties": {"steps": {"type": "array"}}},
}
TOOLS: list[ToolParam] = [
    _tool("probe_soil", "Read a bed's soil moisture."),
    _tool("set_valve", "Open or close a bed's drip valves."),
]


def respond(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The scripted model: the planner submits :data:`STEPS`; the gardener calls its step's
    tool until it works (``done:``) or has failed once per :data:`STUCK` (``failed:``)."""
    if str(body.get("system") or "") == PLANNER:
        plan = {"steps": STEPS}
        return [{"type": "tool_use", "id": "toolu_plan", "name": "submit_plan", "input": plan}]
    messages = body["messages"]
    (step,) = [s for s in STEPS if f"Step {s['id']}:" in str(messages[0]["content"])]
    results = [
        b
        for m in messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    if results and not results[-1].get("is_error"):
        return [{"type": "text", "text": f"done: {results[-1]['content']}"}]
    if len(results) >= len(STUCK):
        return [{"type": "text", "text": f"failed: {results[-1]['content']}"}]
    n = len(results)
    return [{"type": "tool_use", "id": f"toolu_{n}", "name": step["tool"], "input": {"bed": 4}}]


def water(url: str) -> None:
    """One irrigation round: the SDK traced by OpenInference into the collector at ``url``,
    under the app's own root span and one span per step; its tools run in no span."""
    from anthropic import Anthropic
    from openinference.instrumentation.anthropic import AnthropicInstrumentor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.trace import Status, StatusCode

    from tests.corpus._fake_anthropic import MODEL, AnthropicServer

    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    AnthropicInstrumentor().instrument(tracer_provider=provider)
    tracer = provider.get_tracer("greenhouse")
    stuck = list(STUCK)
    with AnthropicServer(respond) as server:
        client = Anthropic(base_url=server.base_url("greenhouse"), api_key="t", max_retries=0)
        with tracer.start_as_current_span("irrigation round bed 4") as root:
            planned = client.messages.create(
                model=MODEL,
                max_tokens=1024,
                system=PLANNER,
                tools=[SUBMIT_PLAN],
                tool_choice={"type": "tool", "name": "submit_plan"},
                messages=[{"role": "user", "content": "Bed 4 looks dry; water it."}],
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
                            system=GARDENER,
                            tools=TOOLS,
                            messages=messages,
                        )
                        if answer.stop_reason != "tool_use":
                            break
                        messages.append({"role": "assistant", "content": answer.content})
                        results = [
                            {"type": "tool_result", "tool_use_id": b.id, "is_error": failed,
                             "content": stuck.pop(0) if failed else "moisture 18%"}
                            for b in answer.content
                            if b.type == "tool_use"
                            for failed in [b.name == VALVE]
                        ]  # fmt: skip
                        messages.append({"role": "user", "content": results})
                    said = "".join(b.text for b in answer.content if b.type == "text")
                    if said.startswith("failed:"):
                        span.set_status(Status(StatusCode.ERROR, said))
                        root.set_status(Status(StatusCode.ERROR, f"{step['id']} {said}"))
                        break
    assert provider.force_flush(10_000)
    provider.shutdown()


def test_is_error_results_of_a_conversation_without_tool_spans_are_failed_calls(
    collector: BackgroundServer,
) -> None:
    """The tool calls only the conversation says are read from the LLM spans' messages; the
    ones whose ``tool_result`` the request marked ``is_error`` failed, with their text as the
    error, and the valve failing again and again in one conversation is a runaway loop at its
    step. (Before: every call OK, no loop.)"""
    t = _played(collector, "tests.collector.test_anthropic_is_error", "water", SERVICE)
    assert [s.step_id for s in t.plan_steps] == [s["id"] for s in STEPS], t.plan_steps
    calls = [(c.step_id, c.tool, c.failed, c.message) for c in t.tools]
    assert calls == [("read_moisture", "probe_soil", False, "")] + [
        (FAILING, VALVE, True, text) for text in STUCK
    ], t.tools
    result = Analyzer(collector.app.state.collector.store, settle_seconds=0).analyze(
        "default", [t.trace_id], write=False
    )
    loops = [f for f in result.findings if f.kind == A.FINDING_RUNAWAY_LOOP]
    assert [f.step_id for f in loops] == [FAILING], result.findings
    assert loops[0].detail["tool"] == VALVE
    assert loops[0].detail["last_error"] == STUCK[-1]

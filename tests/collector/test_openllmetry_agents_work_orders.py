"""A plan stated only in the work orders its executor runs were handed
(``observed._handed_plans``): the OpenAI Agents SDK on Chat Completions under OpenLLMetry's
openai-agents instrumentor records no model output, so the planner's answer is in no span; the
app hands each step to a fresh runner agent run, its input message holding the step as planned
(a JSON object on a line of its own). Played for real (the SDK, the instrumentor, the
conformance suite's fake OpenAI server) in a child process: the instrumentor adds its processor
to the SDK's global trace provider for good. The domain is a bakery's wholesale order (not the
corpus's): reserve the flour, then bake the batch, whose oven keeps faulting; the app runs the
bake again, then re-plans it onto another oven, which faults too."""

from __future__ import annotations

import json
from typing import Any

from planscope import semconv as A
from planscope_analyzer import Analyzer
from planscope_collector import BackgroundServer

from tests.collector.test_returned_errors import _played

SERVICE = "bakery-wholesale"
PLANNER = "You plan a wholesale bake. Answer the plan as JSON Lines."
RUNNER = "You are the bakery's shift runner. Do the step with your tools, then report."
RUNS = 3
"""How often the app runs the faulting bake in each plan."""


def _steps(oven: str) -> list[dict[str, Any]]:
    return [
        {"n": 1, "id": "reserve_flour", "tool": "order_flour", "args": {"kg": 40}},
        {"n": 2, "id": "bake_batch", "tool": "start_oven", "args": {"oven": oven, "lot": 7}},
    ]


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model: the planner answers JSON Lines (no span records it); a runner calls
    the tool its order names with the order's arguments once, then reports."""
    from tests.conformance.fake_openai import completion

    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = str(messages[0].get("content") or "") if messages else ""
    if system.startswith(PLANNER):
        oven = "O-2" if "Problem:" in str(messages[-1].get("content")) else "O-1"
        steps = _steps(oven)[1:] if oven == "O-2" else _steps(oven)
        lines = [json.dumps({"revision": 1 if oven == "O-1" else 2}), *map(json.dumps, steps)]
        return completion(body, {"role": "assistant", "content": "\n".join(lines)})
    order = json.loads(str(messages[1].get("content")).split("\n")[1])
    if messages[-1].get("role") == "user":
        call = {"id": f"call_{len(messages)}", "type": "function"}
        call["function"] = {"name": order["tool"], "arguments": json.dumps(order["args"])}
        return completion(body, {"role": "assistant", "content": None, "tool_calls": [call]})
    said = str(messages[-1].get("content") or "")
    return completion(
        body, {"role": "assistant", "content": "failed" if "fault" in said else "done"}
    )


def play_bake(url: str) -> None:
    """One wholesale order: the Agents SDK traced by OpenLLMetry into the collector at
    ``url``, under the app's own root span; the app runs each step in a fresh runner run."""
    import asyncio

    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
    from agents.tracing import set_trace_provider, trace
    from agents.tracing.provider import DefaultTraceProvider
    from openai import AsyncOpenAI
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from tests.conformance.fake_openai import MODEL, ModelServer

    def said(ctx: Any, error: Exception) -> str:
        return f"fault: {error}"

    @function_tool(failure_error_function=said)
    def order_flour(kg: int) -> str:
        """Reserve flour from the mill."""
        return json.dumps({"reservation": f"FL-{kg}"})

    @function_tool(failure_error_function=said)
    def start_oven(oven: str, lot: int) -> str:
        """Start a bake in an oven."""
        raise RuntimeError(f"oven {oven} thermostat fault on lot {lot}")

    async def order() -> None:
        planner = Agent(name="bake_planner", instructions=PLANNER, model=model)
        runner = Agent(
            name="shift_runner", instructions=RUNNER, model=model, tools=[order_flour, start_oven]
        )
        ask = "Plan the bake of wholesale order W-7."
        with trace("wholesale bake"):
            for _ in range(2):
                plan = await Runner.run(planner, ask)
                lines = str(plan.final_output).splitlines()[1:]
                for line in lines:
                    step = json.loads(line)
                    for _ in range(RUNS if step["id"] == "bake_batch" else 1):
                        handed = f"Run step {step['n']} ({step['id']}):\n{line}\nEarlier: {{}}"
                        result = await Runner.run(runner, handed)
                        if result.final_output == "done":
                            break
                ask = f"Revision\nProblem: bake_batch: oven {step['args']['oven']} faults"

    set_trace_provider(DefaultTraceProvider())  # no processor of the SDK's: nothing to OpenAI
    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    with ModelServer(respond=respond) as server:
        client = AsyncOpenAI(base_url=server.base_url("bake"), api_key="t", max_retries=0)
        model = OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
        with provider.get_tracer("bakery").start_as_current_span("wholesale order W-7"):
            asyncio.run(order())
    assert provider.force_flush(10_000)
    provider.shutdown()


def test_a_plan_handed_out_in_work_orders_is_read_and_its_loop_found_at_its_step(
    collector: BackgroundServer,
) -> None:
    """Through the real instrumentor: no span records the planner's answer; the plan is read
    from the orders the runner runs were handed (ids, tools, arguments), the re-plan from those
    handed after the planner's second run, each runner run is an attempt of the step its order
    names, and the bake run again across both plans is a runaway loop at ``bake_batch``."""
    t = _played(
        collector, "tests.collector.test_openllmetry_agents_work_orders", "play_bake", SERVICE
    )
    assert [p.version for p in t.plans] == [1, 2]
    assert [(s.plan_version, s.step_id, s.tool) for s in t.plan_steps] == [
        (1, "reserve_flour", "order_flour"),
        (1, "bake_batch", "start_oven"),
        (2, "bake_batch", "start_oven"),
    ]
    assert json.loads(t.plans[0].json)[1]["args"] == {"oven": "O-1", "lot": 7}
    baked = sorted((a for a in t.attempts if a.step_id == "bake_batch"), key=lambda a: a.start_ns)
    assert [a.attempt for a in baked] == list(range(1, 2 * RUNS + 1))
    assert all(a.status == "error" for a in baked)
    result = Analyzer(collector.app.state.collector.store, settle_seconds=0).analyze(
        "default", [t.trace_id], write=False
    )
    loops = [f for f in result.findings if f.kind == A.FINDING_RUNAWAY_LOOP]
    assert [f.step_id for f in loops] == ["bake_batch"], loops


def test_a_recorded_json_lines_plan_is_read() -> None:
    """When the planner's answer is recorded, a JSON Lines plan (a header object, then one
    object a step) is read by the readers that were already there (no new rule: a check),
    steps, tools and arguments, and each runner turn binds to its step."""
    from planscope_collector.observed import SpanNode, bind

    lines = "\n".join(json.dumps(o) for o in [{"revision": 1, "done": []}, *_steps("O-1")])
    nodes = [
        SpanNode("r", "", "run", "order"),
        SpanNode("p", "r", "step", "planner", step_name="planner", start_ns=1, duration_ns=1,
                 inferred=True),
        SpanNode("l", "p", "llm", "chat", start_ns=1, duration_ns=1, request="Plan W-7",
                 answer=lines),
        SpanNode("e1", "r", "step", "runner", step_name="runner", start_ns=3, inferred=True),
        SpanNode("c1", "e1", "llm", "chat", start_ns=3, request="Do reserve_flour"),
        SpanNode("t1", "e1", "tool", "order_flour", tool="order_flour", start_ns=3),
        SpanNode("e2", "r", "step", "runner", step_name="runner", start_ns=5, inferred=True),
        SpanNode("c2", "e2", "llm", "chat", start_ns=5, request="Do bake_batch"),
        SpanNode("t2", "e2", "tool", "start_oven", tool="start_oven", start_ns=5, failed=True),
    ]  # fmt: skip
    b = bind(nodes, [])
    (plan,) = b.read_plans
    assert [(s.step_id, s.tool) for s in plan.steps] == [
        ("reserve_flour", "order_flour"),
        ("bake_batch", "start_oven"),
    ]
    assert json.loads(plan.json)[1]["args"] == {"oven": "O-1", "lot": 7}
    assert b.steps == {"e1": "reserve_flour", "e2": "bake_batch"}

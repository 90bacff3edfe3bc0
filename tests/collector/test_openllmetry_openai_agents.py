"""The OpenAI Agents SDK with handoffs under OpenLLMetry's openai-agents instrumentor
(``observed._agent_tools``, ``_conversation.handed_over``): every agent turn is a sibling
``{agent}.agent`` span, the planner run as a tool (``Agent.as_tool``) is traced beside its tool
call, not under it, its model calls record no answer (the plan is only the tool call's result),
and a handoff's arguments (the work order) are on no span: only the next model call's input
messages hold them, answered by the SDK's transfer message. Played for real (the SDK, the
instrumentor, the conformance suite's fake OpenAI server) in a child process: the instrumentor
adds its processor to the SDK's global trace provider for good. The domain is a vet clinic
shipping vaccine doses (not the corpus's): a ``front_desk`` asks its ``route_planner`` tool for
the plan, hands each task to a team, and hands the courier team its task again while the
courier keeps refusing."""

from __future__ import annotations

import json
from typing import Any

from planscope import semconv as A
from planscope_analyzer import Analyzer
from planscope_collector import BackgroundServer

from tests.collector.test_returned_errors import _played

SERVICE = "vet-shipping"
FRONT = "You are the clinic's front desk. Get the plan, hand each task to its team."
PLANNER = "You plan a vaccine shipment. Answer the plan."
TEAM = "You are the clinic's {team}. Do the task with your services, then report back."
TASKS = [
    {"task": "check_stock", "team": "stock_team", "action": "count_doses", "lot": "V-9"},
    {"task": "ship_doses", "team": "courier_team", "action": "book_courier", "lot": "V-9"},
]
HANDED = 4
"""How often the front desk hands the refused shipment to the courier team."""


def _call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{n}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model: the planner answers the plan, the front desk hands the next task
    off (the refused one again, up to :data:`HANDED` times), a team calls its task's service
    once and reports."""
    from tests.conformance.fake_openai import completion

    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = str(messages[0].get("content") or "") if messages else ""
    n = len(messages)
    calls = [
        (c["function"]["name"], json.loads(c["function"]["arguments"] or "{}"))
        for m in messages
        for c in m.get("tool_calls") or []
    ]
    if system.startswith(PLANNER):
        plan = [
            {"task": t["task"], "team": t["team"], "action": t["action"],
             "params": [{"name": "lot", "value": t["lot"]}]}
            for t in TASKS
        ]  # fmt: skip
        return completion(body, {"role": "assistant", "content": json.dumps({"tasks": plan})})
    if system.startswith(FRONT):
        if not any(name == "route_planner" for name, _ in calls):
            return completion(body, _call("route_planner", {"input": "Ship lot V-9"}, n))
        reports = [a for name, a in calls if name == "report_back"]
        done = {r["task"] for r in reports if r["outcome"] == "done"}
        refused = sum(r["outcome"] == "refused" for r in reports)
        todo = [t for t in TASKS if t["task"] not in done]
        if not todo or refused >= HANDED:
            said = json.dumps({"status": "failed" if todo else "shipped"})
            return completion(body, {"role": "assistant", "content": said})
        t = todo[0]
        params = [{"name": "lot", "value": t["lot"]}]
        order = {"task": t["task"], "action": t["action"], "params": params}
        return completion(body, _call(f"transfer_to_{t['team']}", order, n))
    at = max(i for i, (name, _) in enumerate(calls) if name.startswith("transfer_to_"))
    order = calls[at][1]
    if len(calls) == at + 1:
        args = {p["name"]: p["value"] for p in order["params"]}
        return completion(body, _call(order["action"], args, n))
    said = str(messages[-1].get("content") or "")
    outcome = "refused" if "refused" in said or "error" in said.lower() else "done"
    return completion(body, _call("report_back", {"task": order["task"], "outcome": outcome}, n))


def play_shipment(url: str) -> None:
    """One shipment: the Agents SDK traced by OpenLLMetry into the collector at ``url``, under
    the app's own root span."""
    import asyncio

    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, handoff
    from agents.tracing import set_trace_provider
    from agents.tracing.provider import DefaultTraceProvider
    from openai import AsyncOpenAI
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from pydantic import BaseModel

    from tests.conformance.fake_openai import MODEL, ModelServer

    class Param(BaseModel):
        name: str
        value: str

    class Task(BaseModel):
        task: str
        team: str
        action: str
        params: list[Param]

    class Plan(BaseModel):
        tasks: list[Task]

    class Order(BaseModel):
        task: str
        action: str
        params: list[Param]

    class Report(BaseModel):
        task: str
        outcome: str

    @function_tool
    def count_doses(lot: str) -> str:
        """Count a lot's doses in the fridge."""
        return json.dumps({"lot": lot, "doses": 40})

    @function_tool
    def book_courier(lot: str) -> str:
        """Book the cold-chain courier for a lot."""
        raise RuntimeError(f"courier refused lot {lot}: no cold box free")

    async def plan_json(result: Any) -> str:
        return str(result.final_output_as(Plan).model_dump_json())

    async def handed(ctx: Any, given: Any) -> None:
        """The team reads its order from the conversation."""

    set_trace_provider(DefaultTraceProvider())  # no processor of the SDK's: nothing to OpenAI
    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    with ModelServer(respond=respond) as server:
        client = AsyncOpenAI(base_url=server.base_url("vet"), api_key="t", max_retries=0)
        model = OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
        planner = Agent(name="planner", instructions=PLANNER, model=model, output_type=Plan)
        tool = planner.as_tool("route_planner", "Plan it.", custom_output_extractor=plan_json)
        front = Agent(name="front_desk", instructions=FRONT, model=model, tools=[tool])
        back = handoff(
            front, tool_name_override="report_back", input_type=Report, on_handoff=handed
        )
        teams = {"stock_team": [count_doses], "courier_team": [book_courier]}
        desks = {
            team: Agent(name=team, instructions=TEAM.format(team=team), model=model, tools=tools)
            for team, tools in teams.items()
        }
        for desk in desks.values():
            desk.handoffs = [back]
        front.handoffs = [handoff(d, input_type=Order, on_handoff=handed) for d in desks.values()]
        with provider.get_tracer("vet").start_as_current_span("ship lot V-9"):
            asyncio.run(Runner.run(front, "Ship lot V-9 to the farm.", max_turns=40))
    assert provider.force_flush(10_000)
    provider.shutdown()


def test_agents_sdk_handoffs_under_openllmetry_read_the_plan_and_the_loop(
    collector: BackgroundServer,
) -> None:
    """Through the real instrumentor: the plan is the planner tool's result (its agent's run
    traced beside the call), each team turn is the attempt of the task its handed work order
    names, and the courier handed the refused task again and again is a runaway loop there."""
    t = _played(
        collector, "tests.collector.test_openllmetry_openai_agents", "play_shipment", SERVICE
    )
    assert [s.step_id for s in t.plan_steps] == ["check_stock", "ship_doses"]
    booked = [c for c in t.tools if c.tool == "book_courier"]
    assert len(booked) == HANDED
    assert {(c.step_id, c.failed) for c in booked} == {("ship_doses", True)}
    shipped = [a for a in t.attempts if a.step_id == "ship_doses"]
    assert [a.attempt for a in shipped] == list(range(1, HANDED + 1))
    result = Analyzer(collector.app.state.collector.store, settle_seconds=0).analyze(
        "default", [t.trace_id], write=False
    )
    loops = [f for f in result.findings if f.kind == A.FINDING_RUNAWAY_LOOP]
    assert [f.step_id for f in loops] == ["ship_doses"], loops
    # each turn the binding found failed (its agent span ended OK) has the error it gave up on
    # (the SDK's default error function redacts the courier's text: its error dict is all the
    # span says), which the finding counts and quotes
    assert all(a.fingerprint for a in shipped)
    assert loops[0].detail["distinct_errors"] == 1
    assert "Tool execution failed" in loops[0].detail["last_error"]

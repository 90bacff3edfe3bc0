"""A LlamaIndex ``AgentWorkflow`` under OpenLLMetry's LlamaIndex instrumentor (migration 0049,
``observed``'s flat workflow rules): every workflow step is an ``AgentWorkflow.task`` span right
under the workflow span, a tool call the ``call_tool`` step's span (``tool.name``,
``tool.arguments``, the ``ToolCallResult`` as its output), a tool that raises handed back to the
model with ``is_error`` and no span in error. Played for real (llama-index-core, the
instrumentor, LiteLLM against the conformance suite's fake OpenAI server) in a child process:
OpenLLMetry's instrumentor keeps its handlers on LlamaIndex's root dispatcher for the life of the
process. The domain is a depot's restock desk (not the corpus's): a ``dispatcher`` writes its
plan with a tool and hands each step off to a ``clerk``, whose supplier keeps refusing."""

# no ``from __future__ import annotations``: FunctionTool builds each tool's schema from the
# signatures, and the plan tool's ``Context`` must be a real type for it
import json
import os
import subprocess
import sys
from typing import Any

from planscope import semconv as A
from planscope_analyzer import Analyzer, load_traces
from planscope_collector import BackgroundServer

from tests.conftest import wait_for_trace

from .test_returned_errors import _only_trace

SERVICE = "restock-desk"
STEPS = [
    {"step": "count_stock", "service": "count_shelf", "params": {"sku": "B-77"}},
    {"step": "order_parts", "service": "place_order", "params": {"sku": "B-77", "qty": 40}},
]
REFUSALS = 4


def _call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(args)}
    call = {"id": f"call_{n}_{name}", "type": "function", "function": function}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model: the dispatcher plans, then hands each step off; the clerk calls the
    step's service (again while it is refused), reports and hands back."""
    from tests.conformance.fake_openai import completion

    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    calls = [
        (i, c["function"]["name"], json.loads(c["function"]["arguments"] or "{}"))
        for i, m in enumerate(messages)
        for c in m.get("tool_calls") or []
    ]
    n = len(messages)
    tools = {t["function"]["name"] for t in body.get("tools") or []}
    if "write_plan" in tools:  # the dispatcher
        if not any(name == "write_plan" for _, name, _ in calls):
            return completion(body, _call("write_plan", {"steps": STEPS}, n))
        reports = [a for _, name, a in calls if name == "report_step"]
        if reports and reports[-1]["outcome"] == "failed":
            return completion(body, {"role": "assistant", "content": "Restock failed."})
        done = {r["step"] for r in reports if r["outcome"] == "done"}
        todo = [s for s in STEPS if s["step"] not in done]
        if not todo:
            return completion(body, {"role": "assistant", "content": "Restocked."})
        s = todo[0]
        reason = f"Step {s['step']}: call {s['service']} with {json.dumps(s['params'])}"
        return completion(body, _call("handoff", {"to_agent": "clerk", "reason": reason}, n))
    at, _, handed = next(c for c in reversed(calls) if c[1] == "handoff" and c[2]["to_agent"])
    step = next(s for s in STEPS if f"Step {s['step']}:" in handed["reason"])
    mine = [c for c in calls if c[0] > at]
    if not mine:
        return completion(body, _call(step["service"], step["params"], n))
    name = mine[-1][1]
    if name == "report_step":
        back = {"to_agent": "dispatcher", "reason": f"{step['step']} reported"}
        return completion(body, _call("handoff", back, n))
    said = str(messages[-1].get("content") or "")
    refused = sum(c[1] == step["service"] for c in mine)
    if "refused" in said and refused <= REFUSALS:
        return completion(body, _call(step["service"], step["params"], n))
    outcome = "failed" if "refused" in said else "done"
    report = {"step": step["step"], "outcome": outcome, "note": said}
    return completion(body, _call("report_step", report, n))


def play_restock(url: str) -> None:
    """One restock run: an AgentWorkflow traced by OpenLLMetry's LlamaIndex instrumentor into
    the collector at ``url``, under the app's own root span."""
    import asyncio

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
    from llama_index.core.tools import FunctionTool
    from llama_index.core.workflow import Context
    from llama_index.llms.litellm import LiteLLM
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.llamaindex import LlamaIndexInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from tests.conformance.fake_openai import MODEL, ModelServer

    async def write_plan(ctx: Context, steps: list[dict]) -> str:  # type: ignore[type-arg]
        """Record the restock plan."""
        async with ctx.store.edit_state() as state:
            state["state"]["plan"] = steps
        return "Plan recorded."

    async def report_step(ctx: Context, step: str, outcome: str, note: str) -> str:
        """Record a step's outcome."""
        return f"Recorded {step}: {outcome}."

    def count_shelf(sku: str) -> str:
        """Count a SKU's shelf."""
        return json.dumps({"sku": sku, "count": 3})

    def place_order(sku: str, qty: int) -> str:
        """Order parts from the supplier."""
        raise RuntimeError(f"supplier refused order of {qty} x {sku}: credit hold")

    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    instrumentor = LlamaIndexInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer(respond=respond) as server:
            llm = LiteLLM(
                model=f"openai/{MODEL}", api_base=server.base_url("restock"), api_key="test"
            )
            dispatcher = FunctionAgent(
                name="dispatcher",
                description="Plans the restock and hands each step to the clerk.",
                system_prompt="Write the plan with write_plan, then hand each step off.",
                llm=llm,
                tools=[FunctionTool.from_defaults(write_plan)],
                can_handoff_to=["clerk"],
            )
            clerk = FunctionAgent(
                name="clerk",
                description="Runs the dispatcher's steps.",
                system_prompt="Run the step handed to you, report it, hand back.",
                llm=llm,
                tools=[
                    FunctionTool.from_defaults(count_shelf),
                    FunctionTool.from_defaults(place_order),
                    FunctionTool.from_defaults(report_step),
                ],
                can_handoff_to=["dispatcher"],
            )
            flow = AgentWorkflow(
                agents=[dispatcher, clerk], root_agent="dispatcher", initial_state={"plan": []}
            )
            tracer = provider.get_tracer("restock")
            with tracer.start_as_current_span("restock run"):
                asyncio.run(_run(flow))
    finally:
        instrumentor.uninstrument()
    assert provider.force_flush(10_000)
    provider.shutdown()


async def _run(flow: Any) -> None:
    await flow.run(user_msg="Restock SKU B-77.", max_iterations=100)


def test_a_llamaindex_workflow_tool_error_is_a_failed_call_and_a_runaway_loop(
    collector: BackgroundServer,
) -> None:
    """Through the real instrumentor: each ``call_tool`` step is a tool call with its arguments
    and the tool's own output; every refused order (``is_error``, no span in error) failed with
    the supplier's text; the refusals are one step's attempt of the plan the dispatcher's
    ``write_plan`` call states, and a runaway loop at that step."""
    code = (
        "from tests.collector.test_llamaindex_workflow import play_restock\n"
        f"play_restock({collector.url!r})\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    trace_id = _only_trace(collector, SERVICE)
    wait_for_trace(collector.url, trace_id, 1)
    store = collector.app.state.collector.store
    calls = store.query(
        "SELECT ToolName AS tool, Arguments AS args, Result AS result, StatusCode AS status "
        "FROM planscope_tool_calls WHERE TraceId = {t:String} ORDER BY Start",
        {"t": trace_id},
    )
    orders = [c for c in calls if c["tool"] == "place_order"]
    assert len(orders) == REFUSALS + 1
    assert {c["status"] for c in orders} == {"Error"}
    assert json.loads(orders[0]["args"]) == {"sku": "B-77", "qty": 40}
    assert orders[0]["result"] == "supplier refused order of 40 x B-77: credit hold"
    (count,) = [c for c in calls if c["tool"] == "count_shelf"]
    assert (count["status"], json.loads(count["result"])) == ("Unset", {"sku": "B-77", "count": 3})
    t = load_traces(store, "default", [trace_id])[trace_id]
    assert [s.step_id for s in t.plan_steps] == ["count_stock", "order_parts"]
    ordered = [c for c in t.tools if c.tool == "place_order"]
    assert {(c.step_id, c.failed) for c in ordered} == {("order_parts", True)}
    result = Analyzer(store, settle_seconds=0).analyze("default", [trace_id], write=False)
    loops = [f for f in result.findings if f.kind == A.FINDING_RUNAWAY_LOOP]
    assert [f.step_id for f in loops] == ["order_parts"], loops

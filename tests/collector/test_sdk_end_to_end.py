"""The planscope SDK's decorators → real OTLP/HTTP exporter → real collector → query API."""

from __future__ import annotations

from collections.abc import Iterator

import planscope
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from planscope import Plan, PlanStep, RetryBudget, RetryBudgetExceeded, _config, _state
from planscope import semconv as A
from planscope_collector import BackgroundServer

from tests.conftest import wait_for_trace


@pytest.fixture
def exporting(collector: BackgroundServer) -> Iterator[TracerProvider]:
    provider = TracerProvider(resource=Resource.create({"service.name": "toy-agent"}))
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{collector.url}/v1/traces"))
    )
    planscope.configure(tracer_provider=provider)
    yield provider
    provider.shutdown()
    _config.reset()
    _state.reset()


class Flaky(Exception):
    pass


def test_toy_agent_trace_is_queryable_with_plan_and_steps(
    collector: BackgroundServer, exporting: TracerProvider
) -> None:
    failures = {"fetch": 1, "pay": 99}  # fetch recovers on its 2nd attempt, pay never does

    @planscope.tool(effect="irreversible", resource="payments")
    def charge(amount: float) -> str:
        if failures["pay"] > 0:
            failures["pay"] -= 1
            raise Flaky("card declined: insufficient funds")
        return "ok"

    @planscope.planner
    def make_plan(objective: str) -> Plan:
        return Plan(
            [
                PlanStep("fetch", "fetch the invoice", executor="reader", produces=["invoice"]),
                PlanStep(
                    "pay",
                    "pay it",
                    executor="payer",
                    depends_on=["fetch"],
                    requires=["invoice", "limit"],
                    irreversible=True,
                ),
            ],
            objective=objective,
        )

    @planscope.step
    def execute(step: PlanStep, context: dict[str, str]) -> None:
        planscope.record_context({k: context[k] for k in step.requires if k in context})
        if step.id == "fetch" and failures["fetch"] > 0:
            failures["fetch"] -= 1
            raise Flaky("timeout")
        if step.id == "pay":
            charge(10.0)

    @planscope.run("toy", variant="plan-and-act", budget=RetryBudget(max_attempts_per_step=2))
    def agent(objective: str) -> str:
        run = planscope.current_run()
        assert run is not None
        for step in make_plan(objective).topological_order():
            while True:
                try:
                    execute(step, {"invoice": "inv-1"})
                    break
                except Flaky:
                    continue
                except RetryBudgetExceeded:
                    planscope.set_outcome("failure", f"budget exceeded at {step.id}")
                    return run.span.get_span_context().trace_id.to_bytes(16, "big").hex()
        return ""

    trace_id = agent("pay invoice inv-1")
    assert exporting.force_flush(10_000)
    # run, plan, fetch x2, pay x3 (2 attempts + 1 refused), 2 charge tool calls
    detail = wait_for_trace(collector.url, trace_id, 9)

    assert detail["run"]["agent"] == "toy"
    assert detail["run"]["outcome"] == "failure"
    assert detail["run"]["budget"]["max_attempts_per_step"] == 2
    (plan,) = detail["plans"]
    assert [s["id"] for s in plan["steps"]] == ["fetch", "pay"]
    assert plan["steps"][1]["requires"] == ["invoice", "limit"]
    assert plan["steps"][1]["irreversible"] is True

    steps = [s for s in detail["spans"] if s["planscope_kind"] == A.KIND_STEP]
    attempts = sorted(
        (
            s["attributes"][A.STEP_ID],
            s["attributes"][A.STEP_ATTEMPT],
            s["attributes"].get(A.STEP_STATUS),
        )
        for s in steps
    )
    assert attempts == [
        ("fetch", 1, "error"),
        ("fetch", 2, "ok"),
        ("pay", 1, "error"),
        ("pay", 2, "error"),
        ("pay", 3, "skipped"),
    ]
    pay1 = next(s for s in steps if s["attributes"][A.STEP_ID] == "pay")
    assert pay1["attributes"][A.STEP_CONTEXT_KEYS] == ["invoice"]  # "limit" never given
    assert pay1["attributes"][A.PLAN_ID] == plan["id"]
    tools = [s for s in detail["spans"] if s["planscope_kind"] == A.KIND_TOOL]
    assert len(tools) == 2
    assert {t["attributes"][A.STEP_ID] for t in tools} == {"pay"}
    assert all(t["attributes"][A.TOOL_EFFECT] == "irreversible" for t in tools)
    refused = next(s for s in steps if s["attributes"].get(A.STEP_STATUS) == "skipped")
    assert A.EVENT_RETRY_BUDGET_EXCEEDED in [e["name"] for e in refused["events"]]

    # the derived tables the analyzers read were filled by the materialized views
    store = collector.app.state.collector.store
    rows = store.query(
        "SELECT StepId, Attempt, Status FROM planscope_step_attempts "
        "WHERE TraceId = {t:String} ORDER BY StepId, Attempt",
        {"t": trace_id},
    )
    assert [(r["StepId"], r["Attempt"]) for r in rows] == [
        ("fetch", 1),
        ("fetch", 2),
        ("pay", 1),
        ("pay", 2),
        ("pay", 3),
    ]
    plan_steps = store.query(
        "SELECT StepId, Requires FROM planscope_plan_steps WHERE TraceId = {t:String} "
        "ORDER BY Position",
        {"t": trace_id},
    )
    assert [(r["StepId"], list(r["Requires"])) for r in plan_steps] == [
        ("fetch", []),
        ("pay", ["invoice", "limit"]),
    ]

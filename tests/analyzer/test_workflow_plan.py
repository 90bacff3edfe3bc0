"""A GenAI ``invoke_workflow`` whose child tasks are the plan (issue #11, observed plans): sent
through the real OTel SDK to a real collector, bound at read time, counted alike by the trace
list and the trace detail, and never the subject of a plan finding."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, Status, StatusCode
from planscope import environment_variables as ENV
from planscope import semconv as A
from planscope_collector import BackgroundServer, CollectorSettings

from tests.conftest import wait_for_trace

pytestmark = pytest.mark.integration


@pytest.fixture
def server(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[BackgroundServer]:
    monkeypatch.setenv(ENV.PLANSCOPE_ANALYZER_QUIET_SECONDS, "0.1")
    settings = CollectorSettings(data_dir=data_dir, port=0, flush_interval=0.05)
    with BackgroundServer(settings) as s:
        yield s


def workflow_spans() -> tuple[str, int, bytes]:
    """A workflow of three tasks (GenAI ``invoke_agent`` sub-agents, each calling a tool); the
    second fails once and is retried; each task links to the task whose output it reads."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("workflow-test")

    def task(name: str, tool: str, links: list[Link], fail: bool = False) -> Link:
        with tracer.start_as_current_span(
            f"invoke_agent {name}",
            links=links,
            attributes={A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT, A.GEN_AI_AGENT_NAME: name},
        ) as span:
            with tracer.start_as_current_span(
                f"execute_tool {tool}",
                attributes={A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL, A.GEN_AI_TOOL_NAME: tool},
            ):
                pass
            if fail:
                span.set_status(Status(StatusCode.ERROR, "parse error"))
            return Link(span.get_span_context())

    with tracer.start_as_current_span(
        "invoke_workflow report-flow",
        attributes={A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_WORKFLOW, A.GEN_AI_AGENT_NAME: "flow"},
    ) as root:
        fetched = task("fetch", "http_get", [])
        task("parse", "parse_csv", [fetched], fail=True)
        parsed = task("parse", "parse_csv", [fetched])
        task("report", "write_report", [fetched, parsed])
        trace_id = format(root.get_span_context().trace_id, "032x")
    spans = list(exporter.get_finished_spans())
    return trace_id, len(spans), encode_spans(spans).SerializeToString()


def test_a_workflows_tasks_are_its_plan_and_raise_no_plan_finding(
    server: BackgroundServer,
) -> None:
    trace_id, count, body = workflow_spans()
    headers = {"content-type": "application/x-protobuf"}
    httpx.post(f"{server.url}/v1/traces", content=body, headers=headers).raise_for_status()
    wait_for_trace(server.url, trace_id, count)
    trace = httpx.get(f"{server.url}/api/traces/{trace_id}").json()
    (plan,) = trace["plans"]
    assert plan["inferred"] and plan["span_id"] == trace["run"]["span_id"]
    assert [(s["id"], s["depends_on"]) for s in plan["steps"]] == [
        ("fetch", []),
        ("parse", ["fetch"]),
        ("report", ["fetch", "parse"]),
    ]
    metrics = trace["metrics"]
    numbers = ("step_attempts", "retries", "failed_steps", "plan_versions", "replans")
    assert {k: metrics[k] for k in numbers} == {
        "step_attempts": 4,
        "retries": 1,
        "failed_steps": 0,
        "plan_versions": 1,
        "replans": 0,
    }
    (row,) = httpx.get(f"{server.url}/api/traces", params={"q": trace_id}).json()["traces"]
    assert {k: row[k] for k in numbers} == {k: metrics[k] for k in numbers}
    r = httpx.post(f"{server.url}/api/analyze", json={"trace_id": trace_id}, timeout=120)
    assert r.status_code == 200, r.text
    found = httpx.get(f"{server.url}/api/traces/{trace_id}/findings").json()["findings"]
    about_plans = {A.FINDING_PLAN_DRIFT, A.FINDING_CONTEXT_STARVED, A.FINDING_DATA_QUALITY}
    assert [f for f in found if f["kind"] in about_plans] == []

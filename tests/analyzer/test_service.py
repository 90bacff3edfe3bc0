"""The analyzer inside a real collector (uvicorn on loopback, embedded chDB): incremental
analysis after ingest, the HTTP routes, the CLI against it, and an evaluation smoke test."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from planscope import environment_variables as ENV
from planscope import semconv as A
from planscope_analyzer._evaluate import run_evaluation
from planscope_analyzer.cli import parse_since
from planscope_collector import BackgroundServer, CollectorSettings
from planscope_runners import run_task
from planscope_runners.environments import get_task

from tests.analyzer.conftest import otlp_rows  # noqa: F401  (same encoding path as the SDK)
from tests.conftest import poll

pytestmark = pytest.mark.integration
PROTOBUF = {"Content-Type": "application/x-protobuf"}


@pytest.fixture
def server(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[BackgroundServer]:
    monkeypatch.setenv(ENV.PLANSCOPE_ANALYZER_QUIET_SECONDS, "0.1")
    monkeypatch.setenv(ENV.PLANSCOPE_ANALYZER_ROOT_WAIT_SECONDS, "2")
    settings = CollectorSettings(
        data_dir=data_dir, port=0, flush_interval=0.05, api_keys={"k1": "team-a"}
    )
    with BackgroundServer(settings) as s:
        yield s


def _send(url: str, exporter: InMemorySpanExporter, key: str) -> None:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    body = encode_spans(list(exporter.get_finished_spans())).SerializeToString()
    exporter.clear()
    r = httpx.post(
        f"{url}/v1/traces", content=body, headers={**PROTOBUF, "Authorization": f"Bearer {key}"}
    )
    assert r.status_code == 200, r.text


def _wait(url: str, path: str, key: str, pred: Any) -> Any:
    return poll(f"{url}{path}", pred, headers={"Authorization": f"Bearer {key}"}, what=path)


def test_incremental_analysis_and_routes(
    server: BackgroundServer, exporter: InMemorySpanExporter
) -> None:
    loop = run_task("plan_and_act", "ops", get_task("ops-deploy-api"), ["loop_same_error"])
    healthy = run_task("plan_and_act", "ops", get_task("ops-deploy-api"))
    _send(server.url, exporter, "k1")
    # analysed by the background thread once quiet, without any request
    page = _wait(server.url, "/api/findings", "k1", lambda p: p["findings"])
    assert {(f["kind"], f["trace_id"]) for f in page["findings"]} == {
        ("runaway_loop", loop.trace_id)
    }
    auth = {"Authorization": "Bearer k1"}
    one = httpx.get(f"{server.url}/api/traces/{loop.trace_id}/findings", headers=auth).json()
    assert one["findings"][0]["step_id"] == loop.expected[0].step_id
    assert one["findings"][0]["evidence_span_ids"]
    detail = httpx.get(f"{server.url}/api/traces/{loop.trace_id}", headers=auth).json()
    assert detail["findings"] == one["findings"]  # the trace's detail includes its findings
    assert (
        httpx.get(f"{server.url}/api/traces/{healthy.trace_id}/findings", headers=auth).json()[
            "findings"
        ]
        == []
    )
    filtered = httpx.get(
        f"{server.url}/api/findings", params={"kind": "context_starved"}, headers=auth
    ).json()
    assert filtered["findings"] == []
    paged = httpx.get(
        f"{server.url}/api/findings", params={"limit": 1, "severity": "high"}, headers=auth
    ).json()
    assert len(paged["findings"]) == 1 and paged["has_more"] is False
    # another project sees nothing (the key decides the project)
    assert httpx.get(f"{server.url}/api/findings").status_code in (401, 403)
    # explicit analysis: idempotent, same findings
    r = httpx.post(f"{server.url}/api/analyze", json={"trace_id": loop.trace_id}, headers=auth)
    assert r.status_code == 200 and r.json()["counts"] == {"runaway_loop": 1}
    r = httpx.post(f"{server.url}/api/analyze", json={"since": 0}, headers=auth)
    assert r.json()["traces"] == 2
    again = httpx.get(f"{server.url}/api/findings", headers=auth).json()
    assert len(again["findings"]) == 1
    assert (
        httpx.post(f"{server.url}/api/analyze", json={"trace_id": "nope"}, headers=auth).status_code
        == 400
    )
    assert httpx.get(f"{server.url}/api/traces/xyz/findings", headers=auth).status_code == 400


def test_cli_analyze_against_the_collector(
    server: BackgroundServer, exporter: InMemorySpanExporter, capsys: pytest.CaptureFixture[str]
) -> None:
    from planscope._cli import build_parser

    result = run_task("dag", "ops", get_task("ops-deploy-billing"), ["context_starved"])
    _send(server.url, exporter, "k1")
    _wait(server.url, f"/api/traces/{result.trace_id}/findings", "k1", lambda p: p["findings"])
    args = build_parser().parse_args(
        ["analyze", "--trace", result.trace_id, "--collector", server.url, "--api-key", "k1"]
    )
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "context_starved" in out and "1 traces" in out


def test_parse_since() -> None:
    assert abs(parse_since("1h") - (time.time_ns() - 3600 * 10**9)) < 5 * 10**9
    assert parse_since("10") == 10 * 10**9


def test_evaluation_smoke(tmp_path: Path, data_dir: Path) -> None:
    # data_dir is tmp_path / "data", the workdir's store: already migrated
    ev = run_evaluation(
        24, 0.5, 7, workdir=tmp_path, degrade=("partial",), variants="plan_and_act,dag"
    )
    full = ev.reports["full"]
    assert full.runs == 24
    assert sum(s.tp for s in full.scores.values()) > 0
    # Step level for every kind; a write conflict names its pair of steps, matched in either
    # order (which writer started second is the threads' scheduling).
    assert all(s.precision is None or s.precision >= 0.9 for s in full.scores.values()), (
        full.table()
    )
    assert full.confusion[A.FINDING_WRITE_CONFLICT]["none"] == 0, full.table()
    assert full.negatives_flagged == 0
    assert "partial" in ev.reports and "| runaway_loop |" in ev.reports["partial"].table()


def test_rows_an_otel_collector_wrote_directly_are_mapped_and_analysed(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An OpenTelemetry Collector's clickhouseexporter inserts into otel_traces itself: the span
    model's views map the rows, and the ``--role all`` server finds and analyses the trace."""
    from planscope import semconv as A

    from tests.storage._spans import make_span, new_span_id, new_trace_id, spans_ipc

    monkeypatch.setenv(ENV.PLANSCOPE_ANALYZER_QUIET_SECONDS, "0.1")
    monkeypatch.setenv(ENV.PLANSCOPE_ANALYZER_POLL_SECONDS, "0.2")
    t, root, agent = new_trace_id(), new_span_id(), new_span_id()
    start = time.time_ns() - 10**9
    rows = [
        make_span(
            trace_id=t, span_id=root, name="Agent workflow", project=None, start_ns=start,
            attrs={A.OI_SPAN_KIND: "CHAIN"}, duration_ns=10**8,
        ),
        make_span(
            trace_id=t, span_id=agent, parent=root, name="billing", project=None,
            start_ns=start, attrs={A.OI_SPAN_KIND: "AGENT"}, duration_ns=10**8,
        ),
    ] + [
        make_span(
            trace_id=t, parent=agent, name="lookup", project=None, status="STATUS_CODE_ERROR",
            start_ns=start + (i + 1) * 10**6,
            attrs={A.OI_SPAN_KIND: "TOOL", A.OI_TOOL_NAME: "lookup", A.OI_INPUT_VALUE: "{}"},
        )
        for i in range(5)
    ]  # fmt: skip
    settings = CollectorSettings(data_dir=data_dir, port=0, flush_interval=0.05)
    with BackgroundServer(settings) as s:
        s.app.state.collector.store.insert_spans(spans_ipc(rows, exporter_columns=True))
        body = _wait(
            s.url,
            f"/api/traces/{t}/findings",
            "unused",  # no API keys configured: any bearer is the default project
            lambda body: any(f["kind"] == A.FINDING_RUNAWAY_LOOP for f in body["findings"]),
        )
        loop = next(f for f in body["findings"] if f["kind"] == A.FINDING_RUNAWAY_LOOP)
        # the agent's name is not a plan step: the finding names none, and says where
        assert (loop["step_id"], loop["component"]) == ("", "lookup")
        assert loop["detail"]["where"] == "billing" and "billing" in loop["explanation"]
        assert {f["kind"] for f in body["findings"]} == {A.FINDING_RUNAWAY_LOOP}
        trace = httpx.get(f"{s.url}/api/traces/{t}").json()
        assert trace["run"]["inferred"] and trace["metrics"]["failed_tool_calls"] == 5


def test_analyze_request_prices_the_runs_llm_calls(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run analysed on request is listed with its cost, although no background pass (which
    prices new models too) has run yet: the LLM span carries tokens and a model, no cost."""
    monkeypatch.setenv(ENV.PLANSCOPE_ANALYZER_QUIET_SECONDS, "3600")
    settings = CollectorSettings(
        data_dir=data_dir, port=0, flush_interval=0.05, api_keys={"k1": "team-a"}
    )
    auth = {"Authorization": "Bearer k1"}
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("a-framework")
    with BackgroundServer(settings) as s:
        with (
            tracer.start_as_current_span("invoke_agent") as root,
            tracer.start_as_current_span("chat gpt-4o-mini") as llm,
        ):
            llm.set_attribute(A.GEN_AI_OPERATION_NAME, "chat")
            llm.set_attribute(A.GEN_AI_PROVIDER_NAME, "openai")
            llm.set_attribute(A.GEN_AI_REQUEST_MODEL, "gpt-4o-mini")
            llm.set_attribute(A.GEN_AI_USAGE_INPUT_TOKENS, 1000)
            llm.set_attribute(A.GEN_AI_USAGE_OUTPUT_TOKENS, 100)
        trace_id = format(root.get_span_context().trace_id, "032x")
        _send(s.url, exporter, "k1")
        _wait(s.url, f"/api/traces/{trace_id}", "k1", lambda t: t["span_count"] == 2)
        r = httpx.post(
            f"{s.url}/api/analyze", json={"trace_id": trace_id}, headers=auth, timeout=60
        )
        assert r.status_code == 200, r.text
        listing = httpx.get(f"{s.url}/api/traces", params={"q": trace_id}, headers=auth)
        rows = listing.json()["traces"]
        assert rows[0]["input_tokens"] == 1000 and rows[0]["cost_usd"] > 0

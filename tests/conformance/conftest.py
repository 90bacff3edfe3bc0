"""Fixtures of the conformance suite: the fake model server, a real ``planscope serve``, and
each source's agent run once (both scenarios) against them.

Each agent runs in its own process (``python -m tests.conformance.agents SOURCE``): the
frameworks patch clients and install global trace processors, which must not leak into each
other or into pytest. Nothing reaches the internet: the fake server is the only model
endpoint, the frameworks' own telemetry is off, and any other HTTP(S) request goes to a
proxy address where nothing listens.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..collector.test_crash_recovery import ServeProcess, free_port
from .agents import SOURCES
from .fake_openai import ModelServer, Served

REPO = Path(__file__).parents[2]
DATA = Path(__file__).parent / "data"
UPDATE_ENV = "PLANSCOPE_UPDATE_CONFORMANCE"
"""Set to 1 to rewrite tests/conformance/data from this run's spans."""
OFFLINE_ENV = {
    # The frameworks' own exporters and phone-home. The Agents SDK's exporter to OpenAI is
    # replaced by OpenInference's processor (exclusive_processor, its default);
    # OPENAI_AGENTS_DISABLE_TRACING would silence that processor too.
    "TRACELOOP_TELEMETRY": "false",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "OPENAI_API_KEY": "test",
    # A safety net: any request that is not for loopback goes to a port where nothing listens.
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "ALL_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
}


class Serve(ServeProcess):
    """``planscope serve`` in its own process, with its OTLP/gRPC receiver on a free port."""

    def __init__(self, data_dir: Path) -> None:
        self.grpc_target = f"127.0.0.1:{free_port()}"
        super().__init__(data_dir, free_port(), "--grpc-port", self.grpc_target.split(":")[1])


@dataclass(frozen=True)
class Scenario:
    """One scenario of one source: its trace, the spans the agent recorded, what the model
    server answered meanwhile."""

    trace_id: str
    spans: list[dict[str, Any]]
    served: list[Served]

    @property
    def llm_calls(self) -> int:
        return len(self.served)

    @property
    def tool_calls(self) -> int:
        return sum(s.tool_calls for s in self.served)

    @property
    def input_tokens(self) -> int:
        return sum(s.input_tokens for s in self.served)

    @property
    def output_tokens(self) -> int:
        return sum(s.output_tokens for s in self.served)


@dataclass(frozen=True)
class Ran:
    """A source's agent after both scenarios, stored and analysed by the collector."""

    source: str
    url: str
    healthy: Scenario
    loop: Scenario

    def scenario(self, name: str) -> Scenario:
        return self.healthy if name == "healthy" else self.loop


@pytest.fixture(scope="session")
def model() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


@pytest.fixture(scope="session")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    server = Serve(tmp_path_factory.mktemp("conformance") / "data")
    yield server
    server.stop()


def otlp_spans(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The spans of an OTLP/JSON request, each with its service name."""
    out = []
    for resource in body.get("resourceSpans", []):
        attrs = {a["key"]: a["value"] for a in resource.get("resource", {}).get("attributes", [])}
        service = attrs.get("service.name", {}).get("stringValue", "")
        for scope in resource.get("scopeSpans", []):
            out += [dict(span, service=service) for span in scope.get("spans", [])]
    return out


def run_agent(source: str, model: ModelServer, serve: Serve, dump: Path) -> dict[str, Any]:
    """Run one source's agent in its own process; its scenarios' trace ids and times."""
    otlp = f"grpc://{serve.grpc_target}" if source.endswith("_grpc") else serve.url
    env = {**os.environ, **OFFLINE_ENV, "CONFORMANCE_MODEL": model.base_url}
    env["CONFORMANCE_OTLP"] = otlp
    env["OPENAI_BASE_URL"] = model.base_url
    proc = subprocess.run(
        [sys.executable, "-m", "tests.conformance.agents", source, "--dump", str(dump)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def wait_stored(url: str, trace_id: str, spans: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    count = 0
    while time.monotonic() < deadline:
        r = httpx.get(f"{url}/api/traces/{trace_id}", timeout=10)
        if r.status_code == 200:
            count = r.json()["span_count"]
            if count >= spans:
                return
        time.sleep(0.1)
    raise AssertionError(f"trace {trace_id}: {count} of {spans} spans stored")


@pytest.fixture(scope="session", params=SOURCES)
def agent(
    request: pytest.FixtureRequest,
    model: ModelServer,
    serve: Serve,
    tmp_path_factory: pytest.TempPathFactory,
) -> Ran:
    """One source's agent run through both scenarios, its traces stored and analysed."""
    source = str(request.param)
    dump = tmp_path_factory.mktemp(source) / f"{source}.json"
    traces = run_agent(source, model, serve, dump)
    spans = otlp_spans(json.loads(dump.read_text()))
    scenarios = {}
    for name, t in traces.items():
        mine = [s for s in spans if s["traceId"] == t["trace_id"]]
        wait_stored(serve.url, t["trace_id"], len(mine))
        scenarios[name] = Scenario(
            t["trace_id"], mine, model.served(int(t["start_ns"]), int(t["end_ns"]))
        )
        r = httpx.post(f"{serve.url}/api/analyze", json={"trace_id": t["trace_id"]}, timeout=60)
        assert r.status_code == 200, r.text
    if os.environ.get(UPDATE_ENV) == "1":
        shutil.copyfile(dump, DATA / f"{source}.json")
    return Ran(source, serve.url, scenarios["healthy"], scenarios["loop"])

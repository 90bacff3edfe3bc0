"""Fixtures of the conformance suite: the fake model server, a real ``planscope serve``, and
each source's agent run once (both scenarios) against them.

Each agent runs in its own process (``python -m tests.conformance.agents SOURCE``, or ``node``
for a JavaScript source): the
frameworks patch clients and install global trace processors, which must not leak into each
other or into pytest. Nothing reaches the internet: the fake server is the only model
endpoint, the frameworks' own telemetry is off, and any other HTTP(S) request goes to a
proxy address where nothing listens.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Migrated, wait_for_trace

from ..collector.test_crash_recovery import ServeProcess, free_port
from .agents import JS_SOURCES, SOURCES
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
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
}
"""Plus HTTP(S)_PROXY at :class:`Blackhole`: any request not for loopback goes there."""
JS_PACKAGES = REPO / "tests" / "conformance" / "js" / "node_modules" / ".package-lock.json"
"""What ``npm ci`` leaves once it installed the JavaScript sources' packages (``make js``)."""


def js_missing(source: str) -> str | None:
    """Why a JavaScript source cannot run here (no Node.js, its packages not installed), else
    None: its tests skip, they never fail for a missing Node."""
    if source not in JS_SOURCES:
        return None
    if shutil.which("node") is None:
        return "Node.js not found (`make js`, part of `make test`, installs Debian's nodejs npm)"
    if not JS_PACKAGES.exists():
        return "tests/conformance/js has no node_modules: run `make js` (npm ci)"
    return None


class Blackhole:
    """A proxy address that answers nothing and records what asked for it: the agents' HTTP(S)
    proxy, so a request for anything but loopback never leaves the machine and is seen."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:  # closed
                return
            with conn:
                conn.settimeout(2)
                try:
                    first = conn.recv(512).split(b"\r\n", 1)[0]
                except OSError:
                    first = b"?"
                self.requests.append(first.decode(errors="replace"))

    def close(self) -> None:
        self._sock.close()


class Serve(ServeProcess):
    """``planscope serve`` in its own process, with its OTLP/gRPC receiver on a free port.

    Its stderr is drained (and the last lines kept), so a chatty server never blocks on a
    full pipe."""

    def __init__(self, data_dir: Path) -> None:
        self.grpc_target = f"127.0.0.1:{free_port()}"
        super().__init__(data_dir, free_port(), "--grpc-port", self.grpc_target.split(":")[1])
        self.log: deque[str] = deque(maxlen=200)
        stream = self.proc.stderr
        assert stream is not None
        threading.Thread(
            target=lambda: self.log.extend(b.decode(errors="replace") for b in stream),
            daemon=True,
        ).start()


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
def blackhole() -> Iterator[Blackhole]:
    hole = Blackhole()
    yield hole
    hole.close()


@pytest.fixture(scope="session")
def serve(tmp_path_factory: pytest.TempPathFactory, migrated: Migrated) -> Iterator[Serve]:
    server = Serve(migrated.data_dir(tmp_path_factory.mktemp("conformance") / "data"))
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


class Launched:
    """The agents of the sources this session needs, a few at a time: they spend most of
    their time importing their frameworks and waiting for the model, so they overlap well,
    but all at once would starve the collector on a 2-core machine."""

    PARALLEL = 3

    def __init__(
        self, sources: list[str], model: ModelServer, serve: Serve, proxy: str, tmp: Path
    ) -> None:
        self.url = serve.url
        self._proxy = proxy
        self.serve_log = serve.log
        self._model, self._serve = model, serve
        self.dumps = {source: tmp / f"{source}.json" for source in sources}
        self._pending = list(sources)
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self._fill()

    def _fill(self, first: str | None = None) -> None:
        if first in self._pending:
            self._pending.remove(first)
            self._pending.insert(0, first)
        running = [p for p in self.procs.values() if p.returncode is None and p.poll() is None]
        while self._pending and (len(running) < self.PARALLEL or first in self._pending):
            source = self._pending.pop(0)
            self.procs[source] = self._start(source)
            running.append(self.procs[source])

    def _start(self, source: str) -> subprocess.Popen[bytes]:
        serve = self._serve
        otlp = f"grpc://{serve.grpc_target}" if source.endswith("_grpc") else serve.url
        base_url = self._model.base_url(source)
        env = {**os.environ, **OFFLINE_ENV, "CONFORMANCE_MODEL": base_url}
        env.update(CONFORMANCE_OTLP=otlp, OPENAI_BASE_URL=base_url)
        env.update(HTTP_PROXY=self._proxy, HTTPS_PROXY=self._proxy, ALL_PROXY=self._proxy)
        argv = [sys.executable, "-m", "tests.conformance.agents", source]
        if source in JS_SOURCES:
            argv = ["node", str(REPO / JS_SOURCES[source])]
        with (
            self._out(source, "stdout").open("w") as out,
            self._out(source, "stderr").open("w") as err,
        ):
            return subprocess.Popen(
                [*argv, "--dump", str(self.dumps[source])],
                cwd=REPO,
                env=env,
                stdout=out,
                stderr=err,
            )

    def _out(self, source: str, stream: str) -> Path:
        return self.dumps[source].with_suffix(f".{stream}")

    def result(self, source: str) -> dict[str, Any]:
        """The scenarios' trace ids and times, once the source's agent has finished."""
        self._fill(first=source)
        proc = self.procs[source]
        proc.wait(timeout=300)
        self._fill()
        err = self._out(source, "stderr").read_text()
        assert proc.returncode == 0, f"{source} agent failed:\n{err[-4000:]}"
        return dict(json.loads(self._out(source, "stdout").read_text().strip().splitlines()[-1]))

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="session")
def launched(
    request: pytest.FixtureRequest,
    model: ModelServer,
    serve: Serve,
    blackhole: Blackhole,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Launched]:
    # the sources of the collected tests: under pytest-xdist a worker collects every test, so
    # this holds only while one worker runs the whole file (`--dist loadfile`, the Makefile's)
    wanted = {
        item.callspec.params["agent"]
        for item in request.session.items
        if hasattr(item, "callspec") and "agent" in item.callspec.params
    }
    agents = Launched(
        [s for s in SOURCES if s in wanted and js_missing(s) is None],
        model,
        serve,
        blackhole.url,
        tmp_path_factory.mktemp("agents"),
    )
    yield agents
    agents.stop()


def wait_stored(
    url: str, trace_id: str, spans: int, log: deque[str], timeout: float = 120.0
) -> None:
    try:
        wait_for_trace(url, trace_id, spans, timeout=timeout)
    except AssertionError as e:
        tail = "".join(list(log)[-20:])
        raise AssertionError(f"{e}; serve:\n{tail}") from None


@pytest.fixture(scope="session", params=SOURCES)
def agent(request: pytest.FixtureRequest, model: ModelServer, launched: Launched) -> Ran:
    """One source's agent run through both scenarios, its traces stored and analysed."""
    source = str(request.param)
    if (missing := js_missing(source)) is not None:
        pytest.skip(missing)
    traces = launched.result(source)
    dump = launched.dumps[source]
    spans = otlp_spans(json.loads(dump.read_text()))
    url = launched.url
    scenarios = {}
    for name, t in traces.items():
        mine = [s for s in spans if s["traceId"] == t["trace_id"]]
        wait_stored(url, t["trace_id"], len(mine), launched.serve_log)
        served = model.served(source, int(t["start_ns"]), int(t["end_ns"]))
        scenarios[name] = Scenario(t["trace_id"], mine, served)
        r = httpx.post(f"{url}/api/analyze", json={"trace_id": t["trace_id"]}, timeout=180)
        assert r.status_code == 200, r.text
    if os.environ.get(UPDATE_ENV) == "1":
        shutil.copyfile(dump, DATA / f"{source}.json")
        index = json.loads((DATA / "scenarios.json").read_text())
        index[source] = {name: t["trace_id"] for name, t in traces.items()}
        (DATA / "scenarios.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    return Ran(source, url, scenarios["healthy"], scenarios["loop"])

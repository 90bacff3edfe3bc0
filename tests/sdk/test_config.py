"""configure(): the OTLP pipeline, reuse of an installed provider, and the no-op path.

These run in subprocesses because they install a global TracerProvider (once per process) or
hide the OpenTelemetry SDK.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import planscope
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

NO_SDK_SCRIPT = r"""
import sys
# Simulate `pip install planscope` without the otlp extra: the OTel SDK cannot be imported.
for name in ("opentelemetry.sdk", "opentelemetry.exporter", "opentelemetry.exporter.otlp"):
    sys.modules[name] = None

import asyncio, json, planscope

@planscope.tool
def search(q: str) -> str:
    return q.upper()

@planscope.step
def execute(step: planscope.PlanStep) -> str:
    planscope.record_context({"q": "x"})
    return search(step.id)

@planscope.step
def numbers():
    yield from (1, 2)

@planscope.llm("m")
async def chat() -> dict:
    return {"usage": {"prompt_tokens": 3, "completion_tokens": 4}}

@planscope.planner
def plan() -> planscope.Plan:
    return planscope.Plan([planscope.PlanStep("a")], id="p")

@planscope.run(budget=planscope.RetryBudget(max_attempts_per_step=1))
def agent() -> list:
    plan()
    out = [execute(planscope.PlanStep("a")), list(numbers()), asyncio.run(chat())["usage"]]
    try:
        execute(planscope.PlanStep("a"))
    except planscope.RetryBudgetExceeded as exc:
        out.append(exc.limit_name)
    out.append(planscope.current_plan().version)
    return out

print(json.dumps(agent()))  # works before configure()
h1 = planscope.configure("http://127.0.0.1:9")
h2 = planscope.configure()
print(json.dumps([h1.enabled, h2.enabled, h1.force_flush(), agent()]))
h1.shutdown()
"""

# An OTLP/HTTP receiver in the child process that records what the exporter sends.
RECEIVER = r"""
import json, os, threading
from http.server import BaseHTTPRequestHandler, HTTPServer

received = []

class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        received.append({"path": self.path, "auth": self.headers.get("Authorization"),
                         "tenant": self.headers.get("x-tenant"), "body": body.decode("latin-1")})
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()
    def log_message(self, *args):
        pass

server = HTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
"""

EXPORT_SCRIPT = (
    RECEIVER
    + r"""
import os
os.environ["PLANSCOPE_ENDPOINT"] = f"http://127.0.0.1:{server.server_port}"
os.environ["PLANSCOPE_API_KEY"] = "ps_secret"
os.environ["PLANSCOPE_HEADERS"] = "x-tenant=acme"

import planscope
from opentelemetry import trace

handle = planscope.configure(service_name="billing-agent", project="payments", batch=False)

@planscope.step("fetch")
def fetch() -> str:
    return "ok"

fetch()
handle.shutdown()
server.shutdown()
print(json.dumps({
    "owned": handle.owned,
    "global": trace.get_tracer_provider() is handle.tracer_provider,
    "received": received,
}))
"""
)

REUSE_SCRIPT = r"""
import json
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)

import planscope

handle = planscope.configure("http://127.0.0.1:9", api_key="ignored")

@planscope.tool
def t() -> None: ...

t()
handle.shutdown()  # not ours: flushed, not shut down
t()
print(json.dumps({
    "owned": handle.owned,
    "same": handle.tracer_provider is provider,
    "spans": [s.name for s in exporter.get_finished_spans()],
}))
"""


def run_python(script: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANSCOPE_", "OTEL_"))}
    env["PLANSCOPE_RAISE_INTERNAL_ERRORS"] = "1"  # SDK bugs fail these tests
    env.update(extra_env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_without_the_otel_sdk_everything_is_a_noop_and_configure_warns_once() -> None:
    proc = run_python(NO_SDK_SCRIPT)
    assert proc.returncode == 0, proc.stderr
    before, after = (json.loads(line) for line in proc.stdout.splitlines())
    expected_run = [
        "A",
        [1, 2],
        {"prompt_tokens": 3, "completion_tokens": 4},
        "max_attempts_per_step",
        1,
    ]
    assert before == expected_run
    assert after == [False, False, True, expected_run]
    assert proc.stderr.count("pip install 'planscope[otlp]'") == 1, proc.stderr


def test_configure_exports_otlp_http_with_resource_and_auth() -> None:
    proc = run_python(EXPORT_SCRIPT)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["owned"] is True and out["global"] is True
    (request,) = out["received"]
    assert request["path"] == "/v1/traces"
    assert request["auth"] == "Bearer ps_secret"
    assert request["tenant"] == "acme"
    body = request["body"]
    for text in ("billing-agent", "planscope.project", "payments", "execute_step fetch"):
        assert text in body


def test_configure_reuses_an_installed_provider() -> None:
    proc = run_python(REUSE_SCRIPT)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out == {"owned": False, "same": True, "spans": ["execute_tool t", "execute_tool t"]}
    # the global provider can be installed once: arguments it cannot take are reported
    assert "endpoint, api_key not applied" in proc.stderr


def test_configure_again_sends_later_spans_to_the_new_provider() -> None:
    exporters = [InMemorySpanExporter(), InMemorySpanExporter()]

    @planscope.tool
    def lookup() -> None: ...

    for exporter in exporters:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        planscope.configure(tracer_provider=provider)
        lookup()
        provider.shutdown()
    assert [len(e.get_finished_spans()) for e in exporters] == [1, 1]


OTEL_ENV_SCRIPT = (
    RECEIVER
    + r"""# The variables under test, once the receiver's port is known.
for name, value in json.loads(os.environ["TEST_ENV"]).items():
    os.environ[name] = value.replace("PORT", str(server.server_port))

import planscope

handle = planscope.configure(batch=False)

@planscope.tool
def lookup() -> str:
    return "ok"

lookup()
handle.shutdown()
server.shutdown()
print(json.dumps(received))
"""
)


def run_with_env(env: dict[str, str]) -> dict[str, str]:
    """What the exporter sent under ``env`` (plus ``stderr``: the SDK's log)."""
    proc = run_python(OTEL_ENV_SCRIPT, TEST_ENV=json.dumps(env))
    assert proc.returncode == 0, proc.stderr
    (request,) = json.loads(proc.stdout)
    return {**request, "stderr": proc.stderr}


def test_configure_honours_opentelemetry_variables() -> None:
    request = run_with_env(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:PORT/base/",
            "OTEL_EXPORTER_OTLP_HEADERS": "x-tenant=acme%2C%20inc,Authorization=Bearer%20otel-key",
            "OTEL_SERVICE_NAME": "otel-named-agent",
        }
    )
    assert request["path"] == "/base/v1/traces"  # the generic endpoint gets /v1/traces
    assert request["auth"] == "Bearer otel-key"  # URL-decoded, by OpenTelemetry's parser
    assert request["tenant"] == "acme, inc"
    assert "otel-named-agent" in request["body"]


def test_the_traces_endpoint_is_used_as_is_and_planscope_variables_win() -> None:
    otel = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9/unused",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:PORT/custom/spans",
        "OTEL_EXPORTER_OTLP_HEADERS": "x-tenant=from-otel",
        "OTEL_SERVICE_NAME": "otel-named-agent",
    }
    assert run_with_env(otel)["path"] == "/custom/spans"
    ours = {
        **otel,
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:9/unused",
        "PLANSCOPE_ENDPOINT": "http://127.0.0.1:PORT",
        "PLANSCOPE_HEADERS": "x-tenant=from-planscope",
        "PLANSCOPE_SERVICE_NAME": "planscope-named-agent",
    }
    request = run_with_env(ours)
    assert request["path"] == "/v1/traces"
    assert request["tenant"] == "from-planscope"
    assert "planscope-named-agent" in request["body"]
    assert "otel-named-agent" not in request["body"]
    assert "OTEL_EXPORTER_OTLP_PROTOCOL" not in request["stderr"]


def test_a_grpc_protocol_setting_is_reported_not_silently_ignored() -> None:
    request = run_with_env(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:PORT",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
        }
    )
    assert request["path"] == "/v1/traces"  # still OTLP/HTTP, which this SDK speaks
    assert "OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not used" in request["stderr"]

"""OTLP over gRPC: the real OTel SDK gRPC exporter against a real ``planscope serve`` process."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from google.rpc.error_details_pb2 import RetryInfo
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc import TraceServiceStub
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from planscope_collector import BackgroundServer, CollectorSettings

from tests.conftest import REQUEST_TIMEOUT, Migrated, wait_for_trace

from ._otlp_factory import make_request, make_span
from .test_crash_recovery import ServeProcess, free_port

KEY = "grpc-test-key"
AUTH = {"authorization": f"Bearer {KEY}"}


class Serve(ServeProcess):
    def __init__(self, data_dir: Path) -> None:
        self.grpc_target = f"127.0.0.1:{free_port()}"
        grpc_port = self.grpc_target.rsplit(":", 1)[1]
        super().__init__(
            data_dir, free_port(), "--grpc-port", grpc_port, "--api-key", KEY, "--project", "team"
        )


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory, migrated: Migrated) -> Iterator[Serve]:
    server = Serve(migrated.data_dir(tmp_path_factory.mktemp("grpc") / "data"))
    yield server
    server.stop()


def _send(exporter: OTLPSpanExporter, service: str, n: int) -> tuple[str, SpanExportResult]:
    """Record ``n`` spans with the real SDK, then export them through ``exporter``."""
    recorded = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(recorded))
    tracer = provider.get_tracer("grpc-test")
    with tracer.start_as_current_span("invoke_agent planner") as root:
        root.set_attribute("gen_ai.operation.name", "invoke_agent")
        for i in range(n - 1):
            with tracer.start_as_current_span(f"execute_tool t{i}") as child:
                child.set_attribute("gen_ai.tool.name", f"t{i}")
        tid = format(root.get_span_context().trace_id, "032x")
    provider.shutdown()
    result = exporter.export(recorded.get_finished_spans())
    exporter.shutdown()
    return tid, result


@pytest.mark.parametrize("compression", [grpc.Compression.Gzip, grpc.Compression.NoCompression])
def test_otel_sdk_grpc_exporter_spans_arrive(serve: Serve, compression: grpc.Compression) -> None:
    exporter = OTLPSpanExporter(
        endpoint=serve.grpc_target, insecure=True, headers=AUTH, compression=compression
    )
    tid, result = _send(exporter, "grpc-client", 3)
    assert result == SpanExportResult.SUCCESS
    detail = wait_for_trace(serve.url, tid, 3, headers=AUTH)
    spans = {s["name"]: s for s in detail["spans"]}
    assert spans["invoke_agent planner"]["service"] == "grpc-client"
    assert spans["execute_tool t1"]["attributes"]["gen_ai.tool.name"] == "t1"
    assert spans["execute_tool t1"]["parent_span_id"] == spans["invoke_agent planner"]["span_id"]


def test_auth_is_enforced_with_the_same_keys(serve: Serve) -> None:
    body = make_request([make_span(os.urandom(16))])
    with grpc.insecure_channel(serve.grpc_target) as channel:
        stub = TraceServiceStub(channel)
        for metadata in ((), (("authorization", "Bearer wrong"),)):
            with pytest.raises(grpc.RpcError) as err:
                stub.Export(body, metadata=metadata, timeout=10)
            assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "API key" in err.value.details()
        ok = stub.Export(body, metadata=tuple(AUTH.items()), timeout=10)
    assert isinstance(ok, ExportTraceServiceResponse)
    # The key decides the project, exactly as over HTTP: the trace is readable with the key.
    tid = body.resource_spans[0].scope_spans[0].spans[0].trace_id.hex()
    assert wait_for_trace(serve.url, tid, 1, headers=AUTH)["span_count"] == 1


def test_bad_input_is_invalid_argument_with_the_reason(serve: Serve) -> None:
    zero_trace = make_request([make_span(bytes(16))]).SerializeToString()
    with grpc.insecure_channel(serve.grpc_target) as channel:
        export = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
        cases = {b"\xff\xff not protobuf": "not a valid OTLP protobuf", zero_trace: "traceId"}
        for body, reason in cases.items():
            with pytest.raises(grpc.RpcError) as err:
                export(body, metadata=tuple(AUTH.items()), timeout=10)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert reason in err.value.details()
    # the tests' request timeout, not httpx's 5 s: timed out on a loaded machine
    listed = httpx.get(
        f"{serve.url}/api/traces", headers=AUTH, params={"limit": 1000}, timeout=REQUEST_TIMEOUT
    ).json()
    assert all(t["trace_id"] != "0" * 32 for t in listed["traces"])


def test_store_backlog_is_unavailable_with_retry_info(tmp_path: Path) -> None:
    dead = free_port()  # nothing listens here: a ClickHouse server that is down
    settings = CollectorSettings(
        data_dir=tmp_path / "data",
        port=0,
        grpc_port=0,
        clickhouse_url=f"http://127.0.0.1:{dead}",
        spool_max_bytes=2000,
        retry_after_seconds=7,
    )
    with (
        BackgroundServer(settings, grpc=True) as server,
        grpc.insecure_channel(server.grpc_target) as channel,
    ):
        stub = TraceServiceStub(channel)
        codes = []
        for _ in range(20):
            request: ExportTraceServiceRequest = make_request(
                [make_span(os.urandom(16)) for _ in range(10)]
            )
            try:
                stub.Export(request, timeout=10)
                codes.append(grpc.StatusCode.OK)
            except grpc.RpcError as exc:
                codes.append(exc.code())
                trailer = dict(exc.trailing_metadata())["google.rpc.retryinfo-bin"]
                assert RetryInfo.FromString(trailer).retry_delay.seconds == 7
                assert "spool" in exc.details()
                break
    assert codes[0] == grpc.StatusCode.OK and codes[-1] == grpc.StatusCode.UNAVAILABLE


def test_serve_says_how_to_fix_a_busy_grpc_port(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        command = ["serve", "--grpc-port", str(port), "--port", str(free_port())]
        proc = subprocess.run(
            [sys.executable, "-m", "planscope", *command, "--data-dir", str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 2
    assert proc.stderr.startswith("planscope: error: cannot listen for OTLP/gRPC")
    assert "--grpc-port off" in proc.stderr

"""The collector over real HTTP: a uvicorn server on loopback, the real chDB store."""

from __future__ import annotations

import gzip
import os
import time
from collections.abc import Callable

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from planscope_collector import BackgroundServer

from tests.conftest import wait_for_trace

from ._otlp_factory import make_request, make_span, to_otlp_json

PB = {"content-type": "application/x-protobuf"}
JS = {"content-type": "application/json"}


def one_trace(n: int = 3, **resource: str) -> tuple[str, bytes]:
    tid = os.urandom(16)
    root = make_span(tid, name="root")
    spans = [root] + [make_span(tid, parent=root.span_id, name=f"child-{i}") for i in range(n - 1)]
    return tid.hex(), make_request(spans, resource=resource).SerializeToString()


def stored_span_count(server: BackgroundServer, project: str = "default") -> int:
    collector = server.app.state.collector
    collector.writer.drain()
    rows = collector.store.query(
        "SELECT count() AS n FROM otel_traces WHERE Project = {p:String}", {"p": project}
    )
    return int(rows[0]["n"])


def test_protobuf_json_and_gzip_are_stored_and_queryable(collector: BackgroundServer) -> None:
    tid1, body1 = one_trace(3)
    tid2, body2 = one_trace(2)
    tid3, body3 = one_trace(4)
    json_body = to_otlp_json(ExportTraceServiceRequest.FromString(body2))
    assert httpx.post(f"{collector.url}/v1/traces", content=body1, headers=PB).status_code == 200
    assert httpx.post(f"{collector.url}/v1/traces", content=json_body, headers=JS).json() == {}
    r = httpx.post(
        f"{collector.url}/v1/traces",
        content=gzip.compress(body3),
        headers={**PB, "content-encoding": "gzip"},
    )
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/x-protobuf"
    detail = wait_for_trace(collector.url, tid1, 3)
    assert {s["name"] for s in detail["spans"]} == {"root", "child-0", "child-1"}
    assert wait_for_trace(collector.url, tid2, 2)["span_count"] == 2
    assert wait_for_trace(collector.url, tid3, 4)["span_count"] == 4


def test_duplicate_delivery_stores_once(collector: BackgroundServer) -> None:
    tid, body = one_trace(5)
    for _ in range(3):
        assert httpx.post(f"{collector.url}/v1/traces", content=body, headers=PB).status_code == 200
    wait_for_trace(collector.url, tid, 5)
    assert stored_span_count(collector) == 5


BAD_INPUTS = [
    pytest.param(b"\x0a\x05junk!", PB, 400, "protobuf", id="malformed-protobuf"),
    pytest.param(b'{"resourceSpans": [', JS, 400, "JSON", id="malformed-json"),
    pytest.param(b"{}", {"content-type": "text/plain"}, 415, "content type", id="content-type"),
    pytest.param(b"xx", {**PB, "content-encoding": "gzip"}, 400, "gzip", id="bad-gzip"),
    pytest.param(b"xx", {**PB, "content-encoding": "br"}, 415, "encoding", id="encoding"),
    pytest.param(
        b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"abc","spanId":"00"}]}]}]}',
        JS,
        400,
        "traceId",
        id="invalid-ids",
    ),
]


@pytest.mark.parametrize(("body", "headers", "status", "reason"), BAD_INPUTS)
def test_bad_input_gets_a_clear_4xx_and_stores_nothing(
    collector: BackgroundServer, body: bytes, headers: dict[str, str], status: int, reason: str
) -> None:
    tid, good = one_trace(2)
    httpx.post(f"{collector.url}/v1/traces", content=good, headers=PB).raise_for_status()
    wait_for_trace(collector.url, tid, 2)
    before = stored_span_count(collector)
    r = httpx.post(f"{collector.url}/v1/traces", content=body, headers=headers)
    assert r.status_code == status
    assert reason.lower() in r.json()["error"].lower()
    assert stored_span_count(collector) == before
    # the collector is still healthy after bad input
    assert httpx.get(f"{collector.url}/readyz").status_code == 200


def test_oversized_bodies_get_413(make_collector: Callable[..., BackgroundServer]) -> None:
    server = make_collector(max_body_bytes=1000, max_decompressed_bytes=2000)
    _, body = one_trace(40)
    assert len(body) > 2000
    r = httpx.post(f"{server.url}/v1/traces", content=body, headers=PB)
    assert r.status_code == 413
    # a gzip bomb: small on the wire, large when inflated
    r = httpx.post(
        f"{server.url}/v1/traces",
        content=gzip.compress(body),
        headers={**PB, "content-encoding": "gzip"},
    )
    assert r.status_code == 413 and "decompressed" in r.json()["error"]


def test_api_keys_decide_the_project_and_isolate_reads(
    make_collector: Callable[..., BackgroundServer],
) -> None:
    server = make_collector(api_keys={"key-a": "team-a", "key-b": "team-b"})
    url = f"{server.url}/v1/traces"
    tid, body = one_trace(2, **{"planscope.project": "team-b"})  # resource cannot pick a project
    assert httpx.post(url, content=body, headers=PB).status_code == 401
    assert (
        httpx.post(url, content=body, headers={**PB, "authorization": "Bearer nope"}).status_code
        == 401
    )
    ok = httpx.post(url, content=body, headers={**PB, "authorization": "Bearer key-a"})
    assert ok.status_code == 200
    a = {"authorization": "Bearer key-a"}
    b = {"authorization": "Bearer key-b"}
    assert wait_for_trace(server.url, tid, 2, headers=a)["project"] == "team-a"
    assert httpx.get(f"{server.url}/api/traces/{tid}", headers=b).status_code == 404
    # asking for another project by parameter does not help
    r = httpx.get(f"{server.url}/api/traces/{tid}", headers=b, params={"project": "team-a"})
    assert r.status_code == 404
    assert httpx.get(f"{server.url}/api/traces", headers=b).json()["traces"] == []
    assert [
        t["trace_id"] for t in httpx.get(f"{server.url}/api/traces", headers=a).json()["traces"]
    ] == [tid]
    assert httpx.get(f"{server.url}/api/traces").status_code == 401


def test_trace_list_pages_and_filters(collector: BackgroundServer) -> None:
    BASE = time.time_ns() - 3600 * 10**9
    ids = []
    for i in range(5):
        tid = os.urandom(16)
        root = make_span(tid, name="root", start=BASE + i * 10**9, error=i == 2)
        body = make_request(
            [root], service="svc-even" if i % 2 == 0 else "svc-odd"
        ).SerializeToString()
        httpx.post(f"{collector.url}/v1/traces", content=body, headers=PB).raise_for_status()
        ids.append(tid.hex())
    for tid in ids:
        wait_for_trace(collector.url, tid, 1)
    page1 = httpx.get(f"{collector.url}/api/traces", params={"limit": 2}).json()
    assert [t["trace_id"] for t in page1["traces"]] == ids[::-1][:2]  # newest first
    page2 = httpx.get(
        f"{collector.url}/api/traces", params={"limit": 2, "offset": page1["next_offset"]}
    ).json()
    assert [t["trace_id"] for t in page2["traces"]] == ids[::-1][2:4]
    errors = httpx.get(f"{collector.url}/api/traces", params={"status": "error"}).json()["traces"]
    assert [t["trace_id"] for t in errors] == [ids[2]]
    odd = httpx.get(f"{collector.url}/api/traces", params={"service": "svc-odd"}).json()["traces"]
    assert sorted(t["trace_id"] for t in odd) == sorted([ids[1], ids[3]])
    since = httpx.get(f"{collector.url}/api/traces", params={"since": BASE + 3 * 10**9}).json()[
        "traces"
    ]
    assert sorted(t["trace_id"] for t in since) == sorted(ids[3:])


def test_query_parameters_are_validated(collector: BackgroundServer) -> None:
    assert httpx.get(f"{collector.url}/api/traces/not-hex").status_code == 400
    assert httpx.get(f"{collector.url}/api/traces", params={"limit": 0}).status_code == 400
    assert httpx.get(f"{collector.url}/api/traces", params={"status": "x'"}).status_code == 400
    hostile = "svc' OR 1=1 --"
    r = httpx.get(f"{collector.url}/api/traces", params={"service": hostile})
    assert r.status_code == 200 and r.json()["traces"] == []
    assert httpx.get(f"{collector.url}/api/traces/{'0' * 32}").status_code == 404  # never stored
    assert httpx.get(f"{collector.url}/api/traces/{'0' * 31}1").status_code == 404


def test_real_otel_sdk_exporter_is_a_client(collector: BackgroundServer) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "otel-client"}))
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{collector.url}/v1/traces"))
    )
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("parent") as parent:
        parent.set_attribute("planscope.span.kind", "run")
        for i in range(3):
            with tracer.start_as_current_span(f"child-{i}") as child:
                child.set_attribute("attempt", i)
                child.add_event("evt", {"k": "v"})
        tid = format(parent.get_span_context().trace_id, "032x")
    assert provider.force_flush(10_000)
    provider.shutdown()
    detail = wait_for_trace(collector.url, tid, 4)
    spans = {s["name"]: s for s in detail["spans"]}
    assert spans["child-1"]["attributes"]["attempt"] == "1"
    assert spans["child-2"]["events"][0]["name"] == "evt"
    assert spans["child-0"]["parent_span_id"] == spans["parent"]["span_id"]
    assert spans["parent"]["service"] == "otel-client"
    assert spans["parent"]["span_kind"] == "Internal"


def test_health_endpoints(collector: BackgroundServer) -> None:
    assert httpx.get(f"{collector.url}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{collector.url}/readyz")
    assert ready.status_code == 200 and ready.json()["store"] == "up"


def test_restart_on_a_drained_spool_keeps_storing(
    make_collector: Callable[..., BackgroundServer],
) -> None:
    """Regression: segment numbers restart on a drained spool; the new batches must land."""
    first = make_collector()
    tid1, body1 = one_trace(3)
    httpx.post(f"{first.url}/v1/traces", content=body1, headers=PB).raise_for_status()
    wait_for_trace(first.url, tid1, 3)
    assert stored_span_count(first) == 3
    first.stop()
    second = make_collector()  # same data dir, empty spool
    tid2, body2 = one_trace(4)
    httpx.post(f"{second.url}/v1/traces", content=body2, headers=PB).raise_for_status()
    wait_for_trace(second.url, tid2, 4)
    assert stored_span_count(second) == 7


def test_api_docs_never_load_from_a_cdn(collector: BackgroundServer) -> None:
    for page in ("/docs", "/redoc"):
        r = httpx.get(collector.url + page)
        assert r.status_code == 404 and "cdn" not in r.text.lower(), page
    assert "/api/traces" in httpx.get(collector.url + "/openapi.json").json()["paths"]


def test_trace_pages_describe_the_whole_trace(collector: BackgroundServer) -> None:
    """Each page of a trace's spans, and a page past its end, carries the whole trace's span
    count, time range and run metrics (every read is bounded by the range the trace's spans
    start in, in whole seconds: spans seconds apart, the last one in its last second, count)."""
    tid = os.urandom(16)
    base = time.time_ns() - 7200 * 10**9
    root = make_span(tid, name="root", start=base, duration=5 * 10**9)
    late = [
        make_span(tid, parent=root.span_id, name=f"child-{i}", start=base + (i + 1) * 10**9)
        for i in range(3)
    ]
    body = make_request([root, *late]).SerializeToString()
    httpx.post(f"{collector.url}/v1/traces", content=body, headers=PB).raise_for_status()
    wait_for_trace(collector.url, tid.hex(), 4)
    url = f"{collector.url}/api/traces/{tid.hex()}"
    whole = httpx.get(url).json()
    names = []
    for offset in (0, 2, 4):
        page = httpx.get(url, params={"offset": offset, "limit": 2}).json()
        assert (page["span_count"], page["start_ns"], page["end_ns"]) == (
            4,
            whole["start_ns"],
            whole["end_ns"],
        )
        assert page["metrics"] == whole["metrics"]
        assert page["next_offset"] == (offset + 2 if offset < 2 else None)
        names += [s["name"] for s in page["spans"]]
    assert names == ["root", "child-0", "child-1", "child-2"]
    assert whole["end_ns"] - whole["start_ns"] == 5 * 10**9

"""Issue #12, items 2, 7, 10 and 11: bounded resources, keys before bodies, no secrets leaked.

Each test runs a real collector (uvicorn on loopback, chDB) and fails on the code before the
fix: the body used to be read before the key was checked, JSON decoded without a bound, a
request's resource attributes multiplied into gigabytes, and the store's text answered.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import logging
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from planscope_collector import BackgroundServer, CollectorSettings
from planscope_collector._otlp import JSON, PROTOBUF, ParseLimits, parse_request

from tests.conftest import wait_for_trace

from ._otlp_factory import kv, make_request, make_span, to_otlp_json

PB = {"Content-Type": PROTOBUF}
KEYS = {
    "agent-key": {"project": "team-a"},
    "ops-key": {"project": "team-a", "scopes": ["ingest", "read", "admin"]},
    "b-key": {"project": "team-b"},
}


def _raw_request(port: int, head: bytes, body: bytes = b"", *, wait: float = 10.0) -> bytes:
    """Send raw bytes (a stalled or oversized upload httpx would not send) and read the answer.

    The body is sent from a thread while the answer is read: the collector answers (and closes)
    before it has read everything, which is the point.
    """
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as s:

        def send() -> None:
            with contextlib.suppress(OSError):  # refused part-way: the answer is on its way
                s.sendall(head + body)

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        data = b""
        try:
            while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except (TimeoutError, ConnectionResetError):
            pass
        sender.join(wait)
    return data


def test_an_unauthenticated_body_is_refused_before_it_is_read(
    make_collector: Callable[..., BackgroundServer],
) -> None:
    """Item 7: a 120 MB POST /api/analyze without a key was read and parsed before its 401."""
    server = make_collector(api_keys=KEYS)
    port = server.settings.port
    head = (
        b"POST /api/analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 120000000\r\n\r\n"
    )
    started = time.monotonic()
    answer = _raw_request(port, head, b"{" * 1000)  # the rest never comes
    assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
    assert time.monotonic() - started < 5
    # With a key, the declared size is refused before reading too (413, not after 120 MB).
    answer = _raw_request(port, head.replace(b"Host: x", b"Host: x\r\nAuthorization: Bearer b-key"))
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


def test_a_body_larger_than_declared_or_streamed_is_413_on_every_route(
    make_collector: Callable[..., BackgroundServer],
) -> None:
    """Item 7: POST /api/alerts/rules read 300 MiB before its 64 KiB check."""
    server = make_collector(max_api_body_bytes=64 << 10)
    port = server.settings.port

    def chunked(size: int) -> bytes:  # no Content-Length: only the streamed count can refuse it
        part = b"x" * 65536
        return b"".join(b"%x\r\n%s\r\n" % (len(part), part) for _ in range(size // 65536))

    head = (
        b"POST /api/alerts/rules HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    answer = _raw_request(port, head, chunked(4 << 20))
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"65536-byte limit" in answer
    r = httpx.post(f"{server.url}/api/alerts/rules", content=b"x" * (65 << 10))
    assert r.status_code == 413 and "limit" in r.json()["error"]


def test_a_stalled_upload_is_timed_out(make_collector: Callable[..., BackgroundServer]) -> None:
    """Item 7: a client that stops sending half-way held a request open for ever."""
    server = make_collector(upload_timeout_seconds=0.5)
    head = (
        b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
        b"Content-Length: 1000\r\n\r\n"
    )
    started = time.monotonic()
    answer = _raw_request(server.settings.port, head, b"\x0a" * 10)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert time.monotonic() - started < 5


def test_requests_beyond_the_concurrency_cap_get_503_at_once(
    make_collector: Callable[..., BackgroundServer],
) -> None:
    """Item 7: there was no cap on concurrent requests; stalled ones now hold the slots."""
    server = make_collector(max_concurrent_requests=2, upload_timeout_seconds=5)
    head = (
        b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
        b"Content-Length: 100\r\n\r\n"
    )
    stalled = [socket.create_connection(("127.0.0.1", server.settings.port)) for _ in range(2)]
    try:
        for s in stalled:
            s.sendall(head + b"\x0a")
        time.sleep(0.3)
        r = httpx.get(f"{server.url}/api/traces")
        assert r.status_code == 503 and r.headers["retry-after"]
        assert "at once" in r.json()["error"]
        assert httpx.get(f"{server.url}/healthz").status_code == 200  # liveness is exempt
    finally:
        for s in stalled:
            s.close()
    deadline = time.monotonic() + 10
    while httpx.get(f"{server.url}/api/traces").status_code != 200:
        assert time.monotonic() < deadline, "slots were not given back"
        time.sleep(0.1)


def test_json_of_millions_of_empty_objects_is_refused_quickly() -> None:
    """Item 7: 30 MB of ``{}`` (a 29 KB gzip) took 47 s and 4.5 GB to decode; now a bound on
    the values it holds refuses it before decoding."""
    body = b'{"resourceSpans":[' + b",".join([b"{}"] * 15_000_000) + b"]}"
    assert len(gzip.compress(body)) < 200_000
    started = time.monotonic()
    with pytest.raises(Exception, match="values; at most 2000000") as info:
        parse_request(body, JSON)
    assert type(info.value).__name__ == "PayloadTooLarge"
    assert time.monotonic() - started < 5


def test_nested_json_and_kvlists_are_a_400_not_a_500(collector: BackgroundServer) -> None:
    """Item 6: nested JSON or kvlists on ingest gave a 500."""
    deep_json = b'{"resourceSpans":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    r = httpx.post(f"{collector.url}/v1/traces", content=deep_json, headers={"Content-Type": JSON})
    assert r.status_code == 400, r.text
    assert "recursion" in r.json()["error"]

    value: dict[str, object] = {"stringValue": "leaf"}
    for _ in range(150):
        value = {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
    span = json.loads(to_otlp_json(make_request([make_span()])))
    span["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"] = [
        {"key": "deep", "value": value}
    ]
    r = httpx.post(
        f"{collector.url}/v1/traces", content=json.dumps(span), headers={"Content-Type": JSON}
    )
    assert r.status_code == 400, r.text

    request = make_request([make_span()])
    attr = request.resource_spans[0].scope_spans[0].spans[0].attributes.add(key="deep")
    inner = attr.value
    for _ in range(200):
        inner = inner.kvlist_value.values.add(key="k").value
    inner.string_value = "leaf"
    r = httpx.post(f"{collector.url}/v1/traces", content=request.SerializeToString(), headers=PB)
    assert r.status_code == 400, r.text


def test_an_otlp_json_error_names_the_span() -> None:
    """Item 11: errors were cut to 'Failed to parse resourceSpans field: ...'."""
    doc = json.loads(to_otlp_json(make_request([make_span(), make_span()])))
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["attributes"] = [
        {"key": "n", "value": {"intValue": "not a number"}}
    ]
    with pytest.raises(Exception, match=r"resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[1\]: "):
        parse_request(json.dumps(doc).encode(), JSON)


def test_resource_attribute_amplification_is_refused_and_another_tenant_is_unaffected(
    make_collector: Callable[..., BackgroundServer],
) -> None:
    """Item 2: a 7.6 KB gzip request (a 1 MiB resource attribute on 2,100 spans) became a 2 GiB
    Arrow column; the segment failed and another tenant's spans were quarantined with it."""
    big = make_request([make_span() for _ in range(2100)], resource={"blob": "x" * (1 << 20)})
    body = gzip.compress(big.SerializeToString())
    assert len(body) < 128 << 10  # random ids; the 1 MiB value compresses to ~1 KB
    server = make_collector()
    other = make_request([make_span(trace_id=bytes.fromhex("ab" * 16)) for _ in range(30)])
    other.resource_spans[0].resource.attributes.append(kv("planscope.project", "b"))
    r = httpx.post(
        f"{server.url}/v1/traces", content=body, headers={**PB, "Content-Encoding": "gzip"}
    )
    assert r.status_code == 413, r.text
    assert "resource attributes" in r.json()["error"] and "2100 spans" in r.json()["error"]
    r = httpx.post(f"{server.url}/v1/traces", content=other.SerializeToString(), headers=PB)
    assert r.status_code == 200
    wait_for_trace(server.url, "ab" * 16, 30, project="b")
    ready = httpx.get(f"{server.url}/readyz").json()
    assert ready["requests_quarantined"] == 0
    # The same bound applies where the writer would have met it: limits are per request.
    with pytest.raises(Exception, match="would expand"):
        parse_request(big.SerializeToString(), PROTOBUF, ParseLimits())


def test_a_large_trace_is_paged(make_collector: Callable[..., BackgroundServer]) -> None:
    """Item 7: a 200,000-span trace was returned whole (70 MB); pages are capped."""
    server = make_collector(max_trace_spans=100)
    trace_id = bytes.fromhex("cd" * 16)
    body = make_request([make_span(trace_id=trace_id) for _ in range(250)]).SerializeToString()
    assert httpx.post(f"{server.url}/v1/traces", content=body, headers=PB).status_code == 200
    first = wait_for_trace(server.url, "cd" * 16, 250)
    assert first["span_count"] == 250 and len(first["spans"]) == 100
    seen = {s["span_id"] for s in first["spans"]}
    offset = first["next_offset"]
    while offset is not None:
        page = httpx.get(
            f"{server.url}/api/traces/{'cd' * 16}", params={"offset": offset, "limit": 1000}
        ).json()
        assert len(page["spans"]) <= 100
        seen |= {s["span_id"] for s in page["spans"]}
        offset = page["next_offset"]
    assert len(seen) == 250


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/api/traces", {"until": "7e25"}),
        ("/api/traces", {"until": str(10**26)}),
        ("/api/traces", {"since": "1e308"}),
        ("/api/traces", {"since": "inf"}),
        ("/api/traces", {"since": str(1 << 64)}),
        ("/api/findings", {"since": str(1 << 63)}),
        ("/api/stats/runs", {"until": str(1 << 63)}),
        ("/api/alerts/events", {"since": "inf"}),
        ("/api/alerts/events", {"since": "1e308"}),
        ("/api/traces/" + "ab" * 16, {"offset": "-1"}),
    ],
)
def test_out_of_range_query_parameters_are_4xx_with_a_reason(
    collector: BackgroundServer, path: str, params: dict[str, str]
) -> None:
    """Item 11: these gave 500s or a 503 carrying ClickHouse's text and the chDB path."""
    r = httpx.get(f"{collector.url}{path}", params=params)
    assert r.status_code == 400, (r.status_code, r.text)
    assert r.json()["error"] and r.json()["field"] in path + str(params), r.text
    assert "chdb" not in r.text.lower() and "Code:" not in r.text


def test_the_largest_time_is_accepted_and_answered(collector: BackgroundServer) -> None:
    r = httpx.get(f"{collector.url}/api/traces", params={"since": 0, "until": (1 << 63) - 1})
    assert r.status_code == 200, r.text
    r = httpx.post(f"{collector.url}/api/analyze", json={"since": 1 << 70})
    assert r.status_code == 400 and "unix nanoseconds" in r.json()["error"]


def test_with_keys_openapi_metrics_and_readyz_details_need_a_key(
    make_collector: Callable[..., BackgroundServer],
) -> None:
    """Item 11: /openapi.json and /readyz (with last_error) needed no key."""
    server = make_collector(api_keys=KEYS)
    assert httpx.get(f"{server.url}/openapi.json").status_code == 401
    assert httpx.get(f"{server.url}/metrics").status_code == 401
    bare = httpx.get(f"{server.url}/readyz")
    assert bare.status_code == 200 and bare.json() == {"ready": True}
    auth = {"Authorization": "Bearer agent-key"}
    assert "last_error" in httpx.get(f"{server.url}/readyz", headers=auth).json()
    assert httpx.get(f"{server.url}/openapi.json", headers=auth).status_code == 200
    assert httpx.get(f"{server.url}/healthz").json() == {"status": "ok"}


def test_rule_changes_need_the_admin_scope_and_state_is_per_project(
    make_collector: Callable[..., BackgroundServer],
) -> None:
    """Items 9 and 11: the ingest key agents carry could create rules; /api/alerts/state showed
    every tenant's counters and errors."""
    server = make_collector(api_keys=KEYS, max_alert_rules=2)
    rule = {"kind": "burn_rate", "name": "burn", "max_tokens_per_minute": 50000}
    agent = {"Authorization": "Bearer agent-key"}
    ops = {"Authorization": "Bearer ops-key"}
    r = httpx.post(f"{server.url}/api/alerts/rules", json=rule, headers=agent)
    assert r.status_code == 403 and "'admin' scope" in r.json()["error"]
    for n in range(2):
        r = httpx.post(f"{server.url}/api/alerts/rules", json={**rule, "id": f"r{n}"}, headers=ops)
        assert r.status_code == 201, r.text
    r = httpx.post(f"{server.url}/api/alerts/rules", json={**rule, "id": "r3"}, headers=ops)
    assert r.status_code == 409 and "max_alert_rules" in r.json()["error"]
    assert httpx.delete(f"{server.url}/api/alerts/rules/r0", headers=agent).status_code == 403
    assert len(httpx.get(f"{server.url}/api/alerts/rules", headers=agent).json()["rules"]) == 2
    state = httpx.get(
        f"{server.url}/api/alerts/state", headers={"Authorization": "Bearer b-key"}
    ).json()
    assert state["rules"] == [] and "file" not in state and "last_error" not in state["engine"]


def test_keys_file_scopes(tmp_path: Path) -> None:
    from planscope_collector import load_keys_file

    path = tmp_path / "keys"
    path.write_text("k1 team-a\nk2 team-a ingest,read,admin\n")
    keys = load_keys_file(path)
    assert keys["k1"].scopes == ("ingest", "read") and "admin" in keys["k2"].scopes
    path.write_text(json.dumps({"k1": "team-a", "k2": {"project": "p", "scopes": ["read"]}}))
    keys = load_keys_file(path)
    assert keys["k1"].project == "team-a" and keys["k2"].scopes == ("read",)
    path.write_text("k1 team-a root\n")
    with pytest.raises(ValueError, match="unknown scope"):
        load_keys_file(path)


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANSCOPE_MAX_CONCURRENT_REQUESTS", "7")
    monkeypatch.setenv("PLANSCOPE_UPLOAD_TIMEOUT_SECONDS", "2.5")
    settings = CollectorSettings(port=0)
    assert settings.max_concurrent_requests == 7 and settings.upload_timeout_seconds == 2.5


def test_the_start_up_line_hides_the_store_password(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Item 10: the start-up line printed the ClickHouse password in the store URL."""
    from planscope_collector import Collector

    caplog.set_level(logging.INFO, logger="planscope.collector")
    settings = CollectorSettings(
        data_dir=tmp_path, clickhouse_url="http://ps:hunter2@127.0.0.1:9/db", migrate_on_start=False
    )
    collector = Collector(settings)
    collector.start()
    collector.stop()
    text = caplog.text
    assert "collector started" in text and "ps:***@127.0.0.1:9" in text
    assert "hunter2" not in text

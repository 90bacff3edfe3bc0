"""Issue #12: a corpus of bad inputs against one real collector: no 5xx, nothing stored lost.

Several hundred requests, each built to break one thing: OTLP protobuf (truncated, bit-flipped,
wrong ids, impossible times, nesting, amplification), OTLP/JSON (syntax, types, ids, numbers,
nesting, value counts), gzip (truncated, trailing garbage, bombs), headers, and every query
route's parameters and bodies. Every answer must be a 2xx or a 4xx with a reason (503 only as
an explicit back-pressure answer, which this corpus does not provoke), and a trace stored
before the corpus must be intact after it.
"""

from __future__ import annotations

import gzip
import json
import random
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from planscope_collector import BackgroundServer, CollectorSettings

from tests.conftest import Migrated, wait_for_trace

from ._otlp_factory import kv, make_request, make_span, to_otlp_json

PB = "application/x-protobuf"
JS = "application/json"
KNOWN = bytes.fromhex("5eed" * 8)

Case = tuple[str, str, dict[str, Any]]  # (label, method path, httpx kwargs)


def _pb(request: Any) -> bytes:
    return bytes(request.SerializeToString())


def _ingest(label: str, body: bytes, ctype: str = PB, **headers: str) -> Case:
    return (
        label,
        "POST /v1/traces",
        {"content": body, "headers": {"Content-Type": ctype, **headers}},
    )


def _protobuf_cases(rng: random.Random) -> Iterator[Case]:
    good = _pb(make_request([make_span(attributes={"k": "v", "n": 3}) for _ in range(5)]))
    for cut in sorted(rng.sample(range(1, len(good)), 40)):
        yield _ingest(f"pb truncated at {cut}", good[:cut])
    for i in range(40):
        flipped = bytearray(good)
        for _ in range(1 + i % 4):
            flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
        yield _ingest(f"pb bit flips {i}", bytes(flipped))
    for i in range(10):
        yield _ingest(f"pb random bytes {i}", rng.randbytes(rng.randrange(1, 2000)))
    for name, span in (
        ("empty trace id", make_span(trace_id=b"")),
        ("zero trace id", make_span(trace_id=bytes(16))),
        ("short trace id", make_span(trace_id=b"\x01" * 15)),
        ("long trace id", make_span(trace_id=b"\x01" * 17)),
        ("zero span id", make_span(span_id=bytes(8))),
        ("short span id", make_span(span_id=b"\x01" * 7)),
        ("bad parent", make_span(parent=b"\x01" * 3)),
        ("end before start", make_span(start=10**18, duration=-5)),
    ):
        yield _ingest(f"pb {name}", _pb(make_request([span])))
    for value in ((1 << 64) - 1, 1 << 63, (1 << 63) - 1):
        span = make_span()
        span.end_time_unix_nano = value
        yield _ingest(f"pb end {value}", _pb(make_request([span])))
        span = make_span()
        event = span.events.add(name="e")
        event.time_unix_nano = value
        yield _ingest(f"pb event time {value}", _pb(make_request([span])))
    for depth in (50, 99, 150, 400):
        request = make_request([make_span()])
        value = request.resource_spans[0].scope_spans[0].spans[0].attributes.add(key="d").value
        for _ in range(depth):
            value = value.kvlist_value.values.add(key="k").value
        value.string_value = "leaf"
        yield _ingest(f"pb kvlist depth {depth}", _pb(request))
        request = make_request([make_span()])
        value = request.resource_spans[0].scope_spans[0].spans[0].attributes.add(key="d").value
        for _ in range(depth):
            value = value.array_value.values.add()
        yield _ingest(f"pb array depth {depth}", _pb(request))
    big = make_request([make_span() for _ in range(700)], resource={"blob": "x" * (100 << 10)})
    yield _ingest(
        "pb resource amplification", gzip.compress(_pb(big)), **{"Content-Encoding": "gzip"}
    )
    odd = make_request(
        [make_span(name="\udcff".encode("utf-8", "surrogatepass").decode("latin-1"))]
    )
    odd.resource_spans[0].resource.attributes.append(kv("\x00key", "\x00"))
    yield _ingest("pb odd strings", _pb(odd))


def _json_doc() -> dict[str, Any]:
    return dict(json.loads(to_otlp_json(make_request([make_span(attributes={"a": 1})]))))


def _json_cases(rng: random.Random) -> Iterator[Case]:
    for label, body in (
        ("not json", b"{not json"),
        ("array", b"[]"),
        ("string", b'"x"'),
        ("number", b"1e999"),
        ("null", b"null"),
        ("nan", b'{"resourceSpans": NaN}'),
        ("utf-16", '{"resourceSpans": []}'.encode("utf-16")),
        ("bad utf-8", b'{"resourceSpans": "\xff\xfe"}'),
        ("deep arrays", b"[" * 5000 + b"]" * 5000),
        ("deep objects", b'{"a":' * 5000 + b"1" + b"}" * 5000),
        ("deep in resourceSpans", b'{"resourceSpans":' + b"[" * 300 + b"]" * 300 + b"}"),
        ("many values", b'{"resourceSpans":[' + b",".join([b"{}"] * 2_100_000) + b"]}"),
    ):
        yield _ingest(f"json {label}", body, JS)
    paths: list[tuple[str, Any]] = [
        ("resourceSpans", "x"),
        ("resourceSpans", {"a": 1}),
        ("resourceSpans", [1]),
        ("resourceSpans.0.scopeSpans", "x"),
        ("resourceSpans.0.scopeSpans.0.spans", {"x": 1}),
        ("resourceSpans.0.scopeSpans.0.spans.0", []),
        ("resourceSpans.0.scopeSpans.0.spans.0.traceId", "zz" * 16),
        ("resourceSpans.0.scopeSpans.0.spans.0.traceId", 12),
        ("resourceSpans.0.scopeSpans.0.spans.0.traceId", "ab"),
        ("resourceSpans.0.scopeSpans.0.spans.0.spanId", "0" * 16),
        ("resourceSpans.0.scopeSpans.0.spans.0.parentSpanId", "abc"),
        ("resourceSpans.0.scopeSpans.0.spans.0.startTimeUnixNano", "soon"),
        ("resourceSpans.0.scopeSpans.0.spans.0.startTimeUnixNano", -1),
        ("resourceSpans.0.scopeSpans.0.spans.0.endTimeUnixNano", str(1 << 64)),
        ("resourceSpans.0.scopeSpans.0.spans.0.endTimeUnixNano", 1e300),
        ("resourceSpans.0.scopeSpans.0.spans.0.kind", 99),
        ("resourceSpans.0.scopeSpans.0.spans.0.kind", "SPAN_KIND_NOPE"),
        ("resourceSpans.0.scopeSpans.0.spans.0.status", "ok"),
        ("resourceSpans.0.scopeSpans.0.spans.0.status.code", 7),
        ("resourceSpans.0.scopeSpans.0.spans.0.attributes", {"k": "v"}),
        ("resourceSpans.0.scopeSpans.0.spans.0.attributes.0.value", "plain"),
        ("resourceSpans.0.scopeSpans.0.spans.0.attributes.0.value", {"intValue": "x"}),
        ("resourceSpans.0.scopeSpans.0.spans.0.attributes.0.value", {"intValue": 1e30}),
        ("resourceSpans.0.scopeSpans.0.spans.0.attributes.0.value", {"doubleValue": "x"}),
        ("resourceSpans.0.scopeSpans.0.spans.0.attributes.0.value", {"bytesValue": "!!"}),
        ("resourceSpans.0.scopeSpans.0.spans.0.attributes.0.value", {"boolValue": "yes"}),
        ("resourceSpans.0.scopeSpans.0.spans.0.attributes.0.value", {"arrayValue": 3}),
        ("resourceSpans.0.scopeSpans.0.spans.0.attributes.0.value", {"kvlistValue": []}),
        ("resourceSpans.0.scopeSpans.0.spans.0.attributes.0.key", 5),
        ("resourceSpans.0.scopeSpans.0.spans.0.events", [{"timeUnixNano": "x"}]),
        ("resourceSpans.0.scopeSpans.0.spans.0.links", [{"traceId": "nothex"}]),
        ("resourceSpans.0.scopeSpans.0.spans.0.links", [{"traceId": "ab" * 16, "spanId": ""}]),
        ("resourceSpans.0.resource", "x"),
        (
            "resourceSpans.0.resource.attributes",
            [{"key": "k", "value": {"kvlistValue": {"values": 1}}}],
        ),
        ("resourceSpans.0.scopeSpans.0.scope", 1),
    ]
    for path, value in paths:
        doc = _json_doc()
        node: Any = doc
        *parents, last = path.split(".")
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        if last.isdigit():
            node[int(last)] = value
        else:
            node[last] = value
        yield _ingest(f"json {path}={value!r}"[:80], json.dumps(doc).encode(), JS)
    text = json.dumps(_json_doc())
    for i in range(30):
        pos = rng.randrange(len(text))
        mutated = (
            text[:pos] + rng.choice(['"', "{", "]", ",", ":", "\\", "9" * 30, ""]) + text[pos + 1 :]
        )
        yield _ingest(f"json mutation {i}", mutated.encode(), JS)


def _encoding_cases(rng: random.Random) -> Iterator[Case]:
    good = _pb(make_request([make_span()]))
    zipped = gzip.compress(good)
    yield _ingest("gzip truncated", zipped[:-5], PB, **{"Content-Encoding": "gzip"})
    yield _ingest("gzip trailing garbage", zipped + b"garbage", PB, **{"Content-Encoding": "gzip"})
    yield _ingest("gzip of nothing", b"", PB, **{"Content-Encoding": "gzip"})
    yield _ingest("gzip not gzip", good, PB, **{"Content-Encoding": "gzip"})
    yield _ingest(
        "gzip bomb", gzip.compress(b"\0" * (80 << 20)), PB, **{"Content-Encoding": "gzip"}
    )
    for enc in ("br", "deflate", "zstd", "gzip, gzip", "x" * 300):
        yield _ingest(f"encoding {enc[:20]}", good, PB, **{"Content-Encoding": enc})
    for ctype in ("", "text/plain", "application/xml", "application/x-protobuf; x=" + "y" * 500):
        yield _ingest(f"content type {ctype[:20]!r}", good, ctype)
    junk = {"Content-Type": PB, "Authorization": "Bearer " + "x" * 5000}
    yield ("auth header junk", "POST /v1/traces", {"content": good, "headers": junk})


_HOSTILE = [
    "-1", "1e308", "inf", "nan", str(1 << 63), str(1 << 64), str(10**40), "7e25", "", "'",
    "\x00", "a" * 5000, "\uff11\uff12", "0x10", "'; DROP TABLE otel_traces; --",
    "{{project:String}}",
]  # fmt: skip


def _query_cases() -> Iterator[Case]:
    routes = {
        "/api/traces": (
            "since", "until", "limit", "offset", "status", "service", "agent", "q", "outcome"
        ),
        "/api/findings": ("since", "until", "limit", "offset", "kind", "severity", "trace_id"),
        "/api/stats/runs": ("since", "until", "bucket", "service", "agent"),
        "/api/stats/steps": ("since", "until", "limit"),
        "/api/stats/variants": ("since", "until"),
        "/api/alerts/events": ("since", "limit", "state", "rule_id"),
        f"/api/traces/{KNOWN.hex()}": ("offset", "limit"),
    }  # fmt: skip
    for path, params in routes.items():
        for param in params:
            for value in _HOSTILE:
                yield (
                    f"GET {path}?{param}={value[:20]!r}",
                    f"GET {path}",
                    {"params": {param: value}},
                )
    for tid in ("", "x", "0" * 32, "g" * 32, "A" * 32, "ab" * 17, "%2e%2e", "ab" * 16 + "/../x"):
        yield (f"trace id {tid[:20]!r}", f"GET /api/traces/{tid}", {})
        yield (f"trace findings {tid[:20]!r}", f"GET /api/traces/{tid}/findings", {})
    bodies: list[Any] = [
        b"[" * 50_000, b"{", b"null", b"[]", b'"x"', b"1e999",
        {"since": 1 << 70}, {"since": -1}, {"since": "x"}, {"since": 1e308}, {"since": True},
        {"trace_id": "zz"}, {"trace_id": 5}, {"trace_id": ["a"]}, {"x": "y" * 100_000},
    ]  # fmt: skip
    for body in bodies:
        kwargs: dict[str, Any] = (
            {"content": body, "headers": {"Content-Type": JS}}
            if isinstance(body, bytes)
            else {"json": body}
        )
        yield (f"analyze {str(body)[:30]}", "POST /api/analyze", kwargs)
        yield (f"rule {str(body)[:30]}", "POST /api/alerts/rules", kwargs)
        yield (f"rule test {str(body)[:30]}", "POST /api/alerts/test", kwargs)
        yield (f"approval {str(body)[:30]}", "POST /api/approvals", kwargs)


def corpus() -> list[Case]:
    rng = random.Random(12)
    return [*_protobuf_cases(rng), *_json_cases(rng), *_encoding_cases(rng), *_query_cases()]


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, migrated: Migrated
) -> Iterator[BackgroundServer]:
    data = migrated.data_dir(tmp_path_factory.mktemp("corpus") / "data")
    settings = CollectorSettings(data_dir=data, port=0, flush_interval=0.05)
    with BackgroundServer(settings) as s:
        yield s


def test_the_corpus_has_enough_cases() -> None:
    cases = corpus()
    assert len(cases) >= 300, len(cases)
    assert len({label for label, _, _ in cases}) > 0.9 * len(cases)


def test_no_bad_input_gets_a_5xx_or_loses_stored_spans(server: BackgroundServer) -> None:
    known = make_request([make_span(trace_id=KNOWN) for _ in range(12)])
    r = httpx.post(f"{server.url}/v1/traces", content=_pb(known), headers={"Content-Type": PB})
    assert r.status_code == 200
    wait_for_trace(server.url, KNOWN.hex(), 12)
    failures = []
    with httpx.Client(base_url=server.url, timeout=60) as client:
        for label, route, kwargs in corpus():
            method, path = route.split(" ", 1)
            try:
                answer = client.request(method, path, **kwargs)
            except httpx.HTTPError as exc:  # a closed connection would be as bad as a 500
                failures.append(f"{label}: {type(exc).__name__}")
                continue
            if answer.status_code >= 500:
                failures.append(f"{label}: {answer.status_code} {answer.text[:200]}")
            elif answer.status_code >= 400:
                error = answer.json().get("error")
                if not error:
                    failures.append(f"{label}: {answer.status_code} without a reason")
    assert not failures, "\n".join(failures)
    deadline = time.monotonic() + 30
    while httpx.get(f"{server.url}/readyz").json()["spool_pending_bytes"]:
        assert time.monotonic() < deadline, "the spool did not drain"
        time.sleep(0.1)
    detail = wait_for_trace(server.url, KNOWN.hex(), 12)
    assert detail["span_count"] == 12
    ready = httpx.get(f"{server.url}/readyz").json()
    assert ready["ready"] and ready["requests_quarantined"] == 0, ready

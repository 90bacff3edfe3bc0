"""Issue #12: bounded property-based fuzzing (hypothesis) of OTLP bodies and the query API.

Three properties, with a few hundred cases in ``make test`` (100 for the query API, whose cases
are real requests):

- a mutated OTLP protobuf body is either refused with an ``IngestRejected`` (a 4xx) or parsed
  into spans the writer can flatten into its Arrow columns - never another exception (a 5xx, or
  a request acknowledged and then quarantined);
- the same for generated OTLP/JSON documents (random structure, types and values);
- every query route answers a 2xx or a 4xx with a reason, whatever its parameters.

``PLANSCOPE_FUZZ_EXAMPLES=20000`` runs the big count (docs/collector.md records the figure).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from planscope_collector import BackgroundServer, CollectorSettings
from planscope_collector._errors import IngestRejected
from planscope_collector._otlp import JSON, PROTOBUF, SpanColumns, parse_request

from tests.conftest import Migrated

from ._otlp_factory import make_request, make_span, to_otlp_json

EXAMPLES = int(os.environ.get("PLANSCOPE_FUZZ_EXAMPLES", "300"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,  # the same cases on every run: a failure is reproducible
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)

SEED = make_request(
    [make_span(attributes={"k": "v", "n": 3, "f": 1.5, "b": True, "l": [1, "a"]}) for _ in range(3)]
)
SEED.resource_spans[0].scope_spans[0].spans[0].events.add(name="e", time_unix_nano=5)
GOOD_PB = SEED.SerializeToString()
GOOD_JSON = json.loads(to_otlp_json(SEED))


def _flatten(request: Any) -> None:
    columns = SpanColumns()
    columns.add(request, None)  # what the writer does with an acknowledged request
    assert columns.to_arrow().num_rows == len(columns)


def _accepted_or_refused(body: bytes, kind: str) -> None:
    try:
        request = parse_request(body, kind)
    except IngestRejected:
        return
    # In a thread of its own, as in the writer: hypothesis's own frames would otherwise count
    # against the recursion limit of nesting that protobuf accepts (about 48 levels).
    errors: list[BaseException] = []

    def run() -> None:
        try:
            _flatten(request)
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]


mutation = st.tuples(
    st.sampled_from(["flip", "set", "insert", "delete", "truncate", "duplicate"]),
    st.integers(0, len(GOOD_PB) - 1),
    st.integers(0, 255),
)


def _mutate(body: bytes, ops: list[tuple[str, int, int]]) -> bytes:
    data = bytearray(body)
    for op, at, byte in ops:
        at %= max(len(data), 1)
        if op == "flip":
            data[at] ^= 1 << (byte % 8)
        elif op == "set":
            data[at] = byte
        elif op == "insert":
            data[at:at] = bytes([byte])
        elif op == "delete":
            del data[at]
        elif op == "truncate":
            del data[at:]
        else:
            data[at:at] = data[at : at + byte]
        if not data:
            break
    return bytes(data)


@FUZZ
@given(st.lists(mutation, min_size=1, max_size=6))
def test_mutated_protobuf_is_refused_or_stored_cleanly(ops: list[tuple[str, int, int]]) -> None:
    _accepted_or_refused(_mutate(GOOD_PB, ops), PROTOBUF)


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(1 << 70), max_value=1 << 70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.sampled_from(["ab" * 16, "cd" * 8, "0" * 32, "zz", "", "1e999", str(1 << 64)]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)
FIELDS = {
    "span": ["traceId", "spanId", "parentSpanId", "name", "kind", "startTimeUnixNano",
             "endTimeUnixNano", "attributes", "events", "links", "status", "traceState"],
    "attr": ["key", "value"],
    "value": ["stringValue", "intValue", "doubleValue", "boolValue", "bytesValue",
              "arrayValue", "kvlistValue"],
}  # fmt: skip


@st.composite
def otlp_json_docs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid OTLP/JSON document with some of its fields replaced by arbitrary JSON."""
    doc: dict[str, Any] = json.loads(json.dumps(GOOD_JSON))
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for _ in range(draw(st.integers(1, 4))):
        span = spans[draw(st.integers(0, len(spans) - 1))]
        where = draw(st.sampled_from(["span", "attr", "value", "top"]))
        if where == "top":  # last: the spans may be gone afterwards
            key = draw(st.sampled_from(["resourceSpans", "scopeSpans", "resource", "scope"]))
            target = doc if key == "resourceSpans" else doc["resourceSpans"][0]
            target[key] = draw(json_values)
            break
        if where == "span":
            span[draw(st.sampled_from(FIELDS["span"]))] = draw(json_values)
        elif (
            isinstance(span.get("attributes"), list)
            and span["attributes"]
            and isinstance(span["attributes"][0], dict)
        ):
            attr = span["attributes"][0]
            if where == "attr":
                attr[draw(st.sampled_from(FIELDS["attr"]))] = draw(json_values)
            else:
                attr["value"] = {draw(st.sampled_from(FIELDS["value"])): draw(json_values)}
    return doc


@FUZZ
@given(otlp_json_docs())
def test_generated_otlp_json_is_refused_or_stored_cleanly(doc: dict[str, Any]) -> None:
    _accepted_or_refused(json.dumps(doc, allow_nan=True).encode(), JSON)


@FUZZ
@given(json_values)
def test_arbitrary_json_bodies_are_refused_or_stored_cleanly(doc: Any) -> None:
    _accepted_or_refused(json.dumps(doc, allow_nan=True).encode(), JSON)


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, migrated: Migrated
) -> Iterator[BackgroundServer]:
    data = migrated.data_dir(tmp_path_factory.mktemp("fuzz") / "data")
    with BackgroundServer(CollectorSettings(data_dir=data, port=0, flush_interval=0.05)) as s:
        yield s


ROUTES = {
    "/api/traces": ["since", "until", "limit", "offset", "status", "service", "agent",
                    "variant", "outcome", "q", "project"],
    "/api/findings": ["since", "until", "limit", "offset", "kind", "severity", "trace_id"],
    "/api/stats/runs": ["since", "until", "bucket", "service", "agent"],
    "/api/stats/steps": ["since", "until", "limit", "service", "agent"],
    "/api/stats/variants": ["since", "until", "service", "agent"],
    "/api/alerts/events": ["since", "limit", "state", "rule_id"],
    "/api/alerts/rules": ["project"],
    "/api/traces/" + "ab" * 16: ["offset", "limit"],
}  # fmt: skip
param_values = st.one_of(
    st.integers(min_value=-(1 << 80), max_value=1 << 80).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=60),
    st.sampled_from(["inf", "-inf", "nan", "7e25", "1e308", str((1 << 63) - 1), "ok", "error"]),
)


@st.composite
def queries(draw: st.DrawFn) -> tuple[str, dict[str, str]]:
    path = draw(st.sampled_from(sorted(ROUTES)))
    names = draw(st.lists(st.sampled_from(ROUTES[path]), max_size=4, unique=True))
    return path, {name: draw(param_values) for name in names}


@settings(FUZZ, max_examples=max(EXAMPLES // 3, 20))  # a real request each: fewer
@given(queries())
def test_the_query_api_never_answers_5xx(
    server: BackgroundServer, query: tuple[str, dict[str, str]]
) -> None:
    path, params = query
    r = httpx.get(f"{server.url}{path}", params=params, timeout=60)
    assert r.status_code < 500, (path, params, r.status_code, r.text[:300])
    if r.status_code >= 400:
        assert r.json()["error"], r.text


@settings(FUZZ, max_examples=max(EXAMPLES // 5, 20))
@given(st.lists(mutation, min_size=1, max_size=6), st.sampled_from([PROTOBUF, JSON]))
def test_mutated_bodies_through_http_never_get_5xx(
    server: BackgroundServer, ops: list[tuple[str, int, int]], kind: str
) -> None:
    body = _mutate(GOOD_PB if kind == PROTOBUF else to_otlp_json(SEED), ops)
    r = httpx.post(f"{server.url}/v1/traces", content=body, headers={"Content-Type": kind})
    assert r.status_code < 500, r.text
    if r.status_code >= 400:
        assert r.json()["error"]

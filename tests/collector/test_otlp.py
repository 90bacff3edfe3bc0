from __future__ import annotations

import gzip

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
from planscope_collector._errors import BadPayload, PayloadTooLarge, UnsupportedMediaType
from planscope_collector._otlp import (
    JSON,
    PROTOBUF,
    any_value_str,
    decompress,
    media_type,
    parse_request,
)
from planscope_collector.storage import TRACE_COLUMNS

from tests.storage._spans import otlp_to_rows as flatten

from ._otlp_factory import make_request, make_span, to_otlp_json


def test_protobuf_and_json_decode_to_the_same_rows() -> None:
    tid, sid = bytes.fromhex("0af7651916cd43dd8448eb211c80319c"), bytes.fromhex("b7ad6b7169203331")
    span = make_span(tid, sid, attributes={"planscope.step.id": "fetch", "n": 3, "ok": True})
    request = make_request([span])
    from_pb = parse_request(request.SerializeToString(), PROTOBUF)
    from_json = parse_request(to_otlp_json(request), JSON)
    assert list(flatten(from_pb, None)) == list(flatten(from_json, None))


def test_flatten_uses_the_exporter_value_conventions() -> None:
    tid, sid = bytes.fromhex("0af7651916cd43dd8448eb211c80319c"), bytes.fromhex("b7ad6b7169203331")
    span = make_span(tid, sid, attributes={"i": 7, "b": False, "d": 1.5, "l": ["a", 2]}, error=True)
    (row,) = flatten(
        make_request([span], service="agent", resource={"planscope.project": "p1"}), None
    )
    record = dict(zip(TRACE_COLUMNS, row, strict=True))
    assert record["TraceId"] == "0af7651916cd43dd8448eb211c80319c"
    assert record["SpanId"] == "b7ad6b7169203331"
    assert record["ParentSpanId"] == ""
    assert record["SpanKind"] == "Internal"
    assert record["StatusCode"] == "Error"
    assert record["ServiceName"] == "agent"
    assert record["SpanAttributes"] == {"i": "7", "b": "false", "d": "1.5", "l": '["a",2]'}
    assert record["Duration"] == 1_000_000
    assert record["Project"] == "p1"


def test_api_key_project_overrides_resource_project() -> None:
    (row,) = flatten(make_request([make_span()], resource={"planscope.project": "p1"}), "key-proj")
    assert row[-1] == "key-proj"


@pytest.mark.parametrize(
    ("body", "kind", "message"),
    [
        (b"\xff\xff\xff", PROTOBUF, "not a valid OTLP protobuf"),
        (b"{not json", JSON, "not valid JSON"),
        (b"[1,2]", JSON, "must be an object"),
        (b'{"resourceSpans": 5}', JSON, "expected an array"),
        (
            b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz","spanId":"00"}]}]}]}',
            JSON,
            "is not hex",
        ),
        (
            b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd",'
            b'"spanId":"b7ad6b7169203331"}]}]}]}',
            JSON,
            "traceId must be 16",
        ),
    ],
)
def test_malformed_bodies_are_rejected_with_a_reason(body: bytes, kind: str, message: str) -> None:
    with pytest.raises(BadPayload, match=message):
        parse_request(body, kind)


def test_zero_span_id_is_rejected() -> None:
    request = make_request([make_span(span_id=bytes(8))])
    with pytest.raises(BadPayload, match=r"spans\[0\]: spanId"):
        parse_request(request.SerializeToString(), PROTOBUF)


def test_media_types() -> None:
    assert media_type("application/x-protobuf") == PROTOBUF
    assert media_type("Application/JSON; charset=utf-8") == JSON
    with pytest.raises(UnsupportedMediaType):
        media_type("text/plain")
    with pytest.raises(UnsupportedMediaType):
        media_type(None)


def test_gzip_limits_and_errors() -> None:
    data = b"x" * 10_000
    assert decompress(gzip.compress(data), "gzip", 10_000) == data
    with pytest.raises(PayloadTooLarge):
        decompress(gzip.compress(data), "gzip", 9_999)
    with pytest.raises(BadPayload, match="not valid gzip"):
        decompress(b"not gzip at all", "gzip", 10_000)
    with pytest.raises(BadPayload, match="truncated"):
        decompress(gzip.compress(data)[:20], "gzip", 10_000)
    with pytest.raises(UnsupportedMediaType):
        decompress(data, "br", 10_000)


def test_empty_request_is_valid() -> None:
    assert parse_request(b"", PROTOBUF) == ExportTraceServiceRequest()


def _kvlist(**items: AnyValue) -> AnyValue:
    return AnyValue(
        kvlist_value=KeyValueList(values=[KeyValue(key=k, value=v) for k, v in items.items()])
    )


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        # pdata's Value.AsString, which the clickhouseexporter stores: doubles as Go's
        # encoding/json formats them (exponent only below 1e-6 and from 1e21, no padding).
        (AnyValue(double_value=1.0), "1"),
        (AnyValue(double_value=0.1), "0.1"),
        (AnyValue(double_value=-0.0), "-0"),
        (AnyValue(double_value=1.5e-5), "0.000015"),
        (AnyValue(double_value=1e20), "100000000000000000000"),
        (AnyValue(double_value=1e21), "1e+21"),
        (AnyValue(double_value=2.5e-7), "2.5e-7"),
        (AnyValue(double_value=float("nan")), "json: unsupported value: NaN"),
        (AnyValue(double_value=float("-inf")), "json: unsupported value: -Inf"),
        (AnyValue(bytes_value=b"\x00\xff"), "AP8="),
        (AnyValue(int_value=-7), "-7"),
        (AnyValue(bool_value=False), "false"),
        (AnyValue(), ""),
        # Maps and lists: Go's json.Marshal (sorted keys, <>& escaped, bytes as base64).
        (
            _kvlist(b=AnyValue(double_value=2.0), a=AnyValue(string_value="<x&y>é")),
            '{"a":"\\u003cx\\u0026y\\u003eé","b":2}',
        ),
        (
            AnyValue(
                array_value=ArrayValue(
                    values=[
                        AnyValue(int_value=1),
                        AnyValue(bool_value=True),
                        AnyValue(),
                        AnyValue(bytes_value=b"hi"),
                        AnyValue(double_value=1e-7),
                    ]
                )
            ),
            '[1,true,null,"aGk=",1e-7]',
        ),
        (AnyValue(array_value=ArrayValue(values=[AnyValue(double_value=float("nan"))])), ""),
    ],
)
def test_attribute_values_are_rendered_as_the_exporter_renders_them(
    value: AnyValue, stored: str
) -> None:
    assert any_value_str(value) == stored


def test_a_value_kind_this_version_does_not_know_is_empty_not_a_recursion() -> None:
    """Found by tests/collector/test_fuzz.py: ``string_value_strindex`` (OTLP's profiles
    dictionary index) made ``any_value_str`` and ``_go_json`` call each other for ever, so the
    writer could not store an acknowledged request."""
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue
    from planscope_collector._otlp import any_value_str

    strindex = AnyValue(string_value_strindex=3)
    assert any_value_str(strindex) == ""
    nested = AnyValue()
    nested.array_value.values.append(strindex)
    nested.array_value.values.append(AnyValue(int_value=2))
    assert any_value_str(nested) == "[null,2]"

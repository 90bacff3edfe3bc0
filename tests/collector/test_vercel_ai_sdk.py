"""The Vercel AI SDK's telemetry in the span model (migration 0057): its spans say what they are
in ``ai.operationId``, so ``ai.toolCall`` is a tool call (``ai.toolCall.name`` / ``.args`` /
``.result``; failed when the tool threw), a provider call (``ai.<fn>.doGenerate`` /
``.doStream``) a model call whose answer is its ``ai.response.text`` (a plan when it states one),
and a call's outer span a run at the root. The real spans are the conformance suite's
(tests/conformance/data/vercel_ai.json, ``ai`` 6 through the Node OTel SDK); the streamed
call is written here in the shape the SDK's source gives it (``ai/dist/index.mjs``)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
from planscope_collector import BackgroundServer, observed

from tests.conftest import wait_for_trace

DATA = Path(__file__).resolve().parents[1] / "conformance" / "data"


def _post(url: str, body: bytes) -> None:
    r = httpx.post(
        f"{url}/v1/traces", content=body, headers={"content-type": "application/json"}, timeout=60
    )
    assert r.status_code == 200, r.text


def _rows(collector: BackgroundServer, sql: str, trace_id: str) -> list[dict[str, Any]]:
    collector.app.state.collector.writer.drain()
    return list(collector.app.state.collector.store.query(sql, {"t": trace_id}))


def test_the_sdks_tool_calls_model_calls_and_plan(collector: BackgroundServer) -> None:
    body = (DATA / "vercel_ai.json").read_bytes()
    loop = json.loads((DATA / "scenarios.json").read_text())["vercel_ai"]["loop"]
    sent = [
        s
        for r in json.loads(body)["resourceSpans"]
        for sc in r["scopeSpans"]
        for s in sc["spans"]
        if s["traceId"] == loop
    ]
    _post(collector.url, body)
    wait_for_trace(collector.url, loop, len(sent))
    calls = _rows(
        collector,
        "SELECT ToolName AS tool, Arguments AS args, Result AS result, StatusCode AS status, "
        "Source AS source FROM planscope_tool_calls WHERE TraceId = {t:String} ORDER BY Start",
        loop,
    )
    assert [(c["tool"], c["status"] == "Error") for c in calls] == [("lookup_order", False)] + [
        ("issue_refund", True)
    ] * 5
    assert {c["args"] for c in calls} == {'{"order_id":"42"}'}
    assert calls[0]["result"].startswith('{"order_id":"42"')  # a JSON string's text
    assert {c["source"] for c in calls} == {"vercel_ai"}
    kinds = _rows(
        collector,
        "SELECT SpanName AS name, SpanModelKind AS kind, count() AS n FROM otel_traces "
        "WHERE TraceId = {t:String} GROUP BY name, kind ORDER BY name, kind",
        loop,
    )
    found = {(k["name"], k["kind"]): k["n"] for k in kinds}
    assert found[("ai.generateText.doGenerate", "llm")] == 9
    assert found[("ai.generateText", "other")] == 3  # not at the root: binding decides
    # the planner's answer, its provider call's ai.response.text, is a plan as written
    steps = _rows(
        collector,
        "SELECT StepId AS id, Description AS description, Tool AS tool, Inferred AS inferred "
        "FROM planscope_plan_steps WHERE TraceId = {t:String} ORDER BY Start, Position",
        loop,
    )
    assert [(s["id"], s["tool"], s["inferred"]) for s in steps] == [
        ("lookup", "lookup_order", 1),
        ("refund", "issue_refund", 1),
    ]
    assert all(s["description"] for s in steps)


NOW_NS = time.time_ns()  # within the store's retention


def _span(span_id: str, parent: str, operation: str, **attributes: Any) -> dict[str, Any]:
    attrs = {"ai.operationId": operation, "operation.name": operation, **attributes}
    return {
        "traceId": "5" * 32,
        "spanId": span_id,
        **({"parentSpanId": parent} if parent else {}),
        "name": operation,
        "kind": 1,
        "startTimeUnixNano": str(NOW_NS),
        "endTimeUnixNano": str(NOW_NS + 10**9),
        "attributes": [{"key": k, "value": {"stringValue": str(v)}} for k, v in attrs.items()],
        "status": {},
    }


def test_a_streamed_call_at_the_root_is_a_run(collector: BackgroundServer) -> None:
    """An app whose only spans are the SDK's: ``streamText`` at the root is the run, its
    ``doStream`` a model call, a tool that returned a string a call whose result is that text."""
    spans = [
        _span("a" * 16, "", "ai.streamText", **{"ai.telemetry.functionId": "barista"}),
        _span(
            "b" * 16,
            "a" * 16,
            "ai.streamText.doStream",
            **{
                "gen_ai.system": "openai.chat",
                "gen_ai.request.model": "gpt-4o-mini",
                "ai.prompt.messages": '[{"role":"user","content":[{"type":"text","text":"Brew"}]}]',
                "ai.response.text": "",
                "ai.response.toolCalls": '[{"toolCallId":"c1","toolName":"brew","input":"{}"}]',
            },
        ),
        _span(
            "c" * 16,
            "a" * 16,
            "ai.toolCall",
            **{"ai.toolCall.name": "brew", "ai.toolCall.args": "{}", "ai.toolCall.result": '"ok"'},
        ),
    ]
    body = {
        "resourceSpans": [
            {"resource": {}, "scopeSpans": [{"scope": {"name": "ai"}, "spans": spans}]}
        ]
    }
    _post(collector.url, json.dumps(body).encode())
    wait_for_trace(collector.url, "5" * 32, 3)
    kinds = _rows(
        collector,
        "SELECT SpanName AS name, SpanModelKind AS kind FROM otel_traces "
        "WHERE TraceId = {t:String} ORDER BY name",
        "5" * 32,
    )
    assert [(k["name"], k["kind"]) for k in kinds] == [
        ("ai.streamText", "run"),
        ("ai.streamText.doStream", "llm"),
        ("ai.toolCall", "tool"),
    ]
    (call,) = _rows(
        collector,
        "SELECT ToolName AS tool, Result AS result FROM planscope_tool_calls "
        "WHERE TraceId = {t:String}",
        "5" * 32,
    )
    assert (call["tool"], call["result"]) == ("brew", "ok")


def test_the_sdks_prompt_and_answer_are_read() -> None:
    messages = json.dumps(
        [
            {"role": "system", "content": "Act."},
            {"role": "user", "content": [{"type": "text", "text": "Step refund: go"}]},
        ]
    )
    assert observed.user_request({"ai.prompt.messages": messages}) == "Step refund: go"
    assert observed.answer({"ai.response.text": "[1]"}, "llm", False) == "[1]"
    assert observed.answer({"ai.toolCall.args": '{"a": 1}'}, "tool", False) == '{"a": 1}'

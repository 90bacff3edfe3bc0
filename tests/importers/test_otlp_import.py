"""OTLP JSON files and OpenInference / OpenLLMetry spans → importer → real collector."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from planscope import semconv as A
from planscope_analyzer.importers import _conventions as C
from planscope_analyzer.importers import import_files, prepare
from planscope_collector import BackgroundServer

from tests.conftest import wait_for_trace

OLD = 1_600_000_000_000_000_000  # September 2020: far beyond any retention


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _span(
    trace: str,
    span: str,
    parent: str,
    name: str,
    start: int,
    end: int,
    attrs: dict[str, Any],
    error: bool = False,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": trace,
        "spanId": span,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(OLD + start * 10**9),
        "endTimeUnixNano": str(OLD + end * 10**9),
        "attributes": [_attr(k, v) for k, v in attrs.items()],
    }
    if parent:
        out["parentSpanId"] = parent
    if error:
        out["status"] = {"code": 2, "message": "boom"}
    return out


def _request(spans: list[dict[str, Any]], service: str = "thirdparty") -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [_attr("service.name", service)]},
                "scopeSpans": [{"scope": {"name": "test"}, "spans": spans}],
            }
        ]
    }


T1 = "11" * 16
T2 = "22" * 16
T3 = "33" * 16


def openinference_request() -> dict[str, Any]:
    k = A.OI_SPAN_KIND
    return _request(
        [
            _span(
                T1,
                "a1" * 8,
                "",
                "supervisor",
                0,
                10,
                {k: "AGENT", A.OI_INPUT_VALUE: "book a trip"},
                error=True,
            ),
            _span(
                T1,
                "a2" * 8,
                "a1" * 8,
                "planner",
                0,
                1,
                {k: "CHAIN", A.OI_OUTPUT_VALUE: "1. search"},
            ),
            _span(T1, "a3" * 8, "a1" * 8, "researcher", 1, 5, {k: "AGENT"}),
            _span(
                T1,
                "a4" * 8,
                "a3" * 8,
                "ChatOpenAI",
                1,
                2,
                {
                    k: "LLM",
                    A.OI_MODEL_NAME: "gpt-4o-mini",
                    A.OI_PROMPT_TOKENS: 120,
                    A.OI_COMPLETION_TOKENS: 30,
                },
            ),
            _span(
                T1,
                "a5" * 8,
                "a3" * 8,
                "web_search",
                2,
                4,
                {k: "TOOL", A.OI_TOOL_NAME: "web_search", A.OI_INPUT_VALUE: '{"q":"flights"}'},
                error=True,
            ),
            _span(T1, "a6" * 8, "a1" * 8, "researcher", 5, 9, {k: "AGENT"}),
        ]
    )


def openllmetry_request() -> dict[str, Any]:
    return _request(
        [
            _span(
                T2,
                "b1" * 8,
                "",
                "trip.workflow",
                0,
                6,
                {A.TL_SPAN_KIND: "workflow", A.TL_ENTITY_NAME: "trip"},
            ),
            _span(
                T2,
                "b2" * 8,
                "b1" * 8,
                "fetch.task",
                1,
                5,
                {
                    A.TL_SPAN_KIND: "task",
                    A.TL_ENTITY_NAME: "fetch",
                    A.TL_ENTITY_INPUT: '{"city":"Paris"}',
                },
            ),
            _span(
                T2,
                "b3" * 8,
                "b2" * 8,
                "openai.chat",
                2,
                3,
                {
                    A.GEN_AI_SYSTEM: "openai",
                    A.GEN_AI_REQUEST_MODEL: "gpt-4o",
                    A.GEN_AI_USAGE_PROMPT_TOKENS: 50,
                    A.GEN_AI_USAGE_COMPLETION_TOKENS: 7,
                },
            ),
        ]
    )


def test_openinference_spans_are_mapped(tmp_path: Path, collector: BackgroundServer) -> None:
    """Imported spans are sent as they are; the collector's span model maps them at ingest."""
    f = tmp_path / "oi.json"
    f.write_text(json.dumps(openinference_request()))
    [p] = import_files([f], collector=collector.url)
    assert p.format == "openinference"
    trace = wait_for_trace(collector.url, T1, 6)
    kinds = {(s["name"], s["planscope_kind"]) for s in trace["spans"]}
    # No plan is guessed from the name "planner": a CHAIN that is no graph node is "other".
    assert kinds == {
        ("supervisor", "run"),
        ("planner", None),
        ("researcher", "step"),
        ("ChatOpenAI", "llm"),
        ("web_search", "tool"),
    }
    assert trace["run"]["outcome"] == A.OUTCOME_FAILURE and trace["run"]["inferred"]
    assert trace["plans"] == []
    steps = sorted(
        (s for s in trace["spans"] if s["planscope_kind"] == "step"), key=lambda s: s["start_ns"]
    )
    assert [(s["model"]["step_id"], s["model"]["attempt"]) for s in steps] == [
        ("researcher", 1),
        ("researcher", 2),
    ]
    llm = next(s for s in trace["spans"] if s["planscope_kind"] == "llm")
    assert (llm["model"]["model"], llm["model"]["input_tokens"]) == ("gpt-4o-mini", 120)
    tool = next(s for s in trace["spans"] if s["planscope_kind"] == "tool")
    assert (tool["model"]["tool"], tool["model"]["status"]) == ("web_search", "error")
    assert trace["metrics"]["step_attempts"] == 2 and trace["metrics"]["retries"] == 1
    # Re-timed into the retention window, original time kept.
    assert trace["start_ns"] > OLD + 10**18 // 100
    root = next(s for s in trace["spans"] if s["planscope_kind"] == "run")
    assert int(root["attributes"][C.IMPORT_ORIGINAL_START]) == OLD
    assert root["duration_ns"] == 10 * 10**9


def test_openllmetry_json_lines(tmp_path: Path, collector: BackgroundServer) -> None:
    f = tmp_path / "tl.jsonl"
    native = _request(
        [
            _span(
                T3,
                "c1" * 8,
                "",
                "invoke_agent toy",
                0,
                1,
                {
                    A.SPAN_KIND: A.KIND_RUN,
                    A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT,
                    A.RUN_OUTCOME: A.OUTCOME_SUCCESS,
                },
            )
        ],
        service="toy",
    )
    f.write_text(json.dumps(openllmetry_request()) + "\n\n" + json.dumps(native) + "\n")
    [p] = import_files([f], fmt="otlp-json", collector=collector.url)
    assert p.trace_ids == [T2, T3] and p.span_count == 4
    trace = wait_for_trace(collector.url, T2, 3)
    kinds = {s["name"]: s["planscope_kind"] for s in trace["spans"]}
    assert kinds == {"trip.workflow": "run", "fetch.task": "step", "openai.chat": "llm"}
    llm = next(s for s in trace["spans"] if s["planscope_kind"] == "llm")
    assert llm["model"]["output_tokens"] == 7
    native_trace = wait_for_trace(collector.url, T3, 1)
    assert native_trace["run"]["outcome"] == A.OUTCOME_SUCCESS  # planscope spans pass through


def test_keep_time_and_project(tmp_path: Path) -> None:
    f = tmp_path / "oi.json"
    f.write_text(json.dumps(openinference_request()))
    p = prepare(f, "openinference", keep_time=True, project="p1")
    spans = p.requests[0].resource_spans[0].scope_spans[0].spans
    assert min(s.start_time_unix_nano for s in spans) == OLD
    keys = {kv.key for kv in p.requests[0].resource_spans[0].resource.attributes}
    assert A.PROJECT in keys

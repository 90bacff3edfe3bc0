"""A loop's error text reaches its finding when the framework's spans carry it only on the
failed tool call: smolagents under OpenInference's instrumentor (the conformance suite's real
recorded ``loop`` trace: a refund agent whose ``issue_refund`` tool fails every time) ends a
failed TOOL span in error with no description and records the exception as an event. The
loader carries that text into the failed calls, and the runaway finding counts and quotes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from planscope import semconv as A
from planscope_analyzer import Analyzer, load_traces
from planscope_collector import JSON, parse_request
from planscope_collector.storage import Store

from tests.conformance.agents._common import FAILING_TOOL
from tests.storage._spans import otlp_to_rows, spans_ipc

pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parents[1] / "conformance" / "data"
SOURCE = "openinference_smolagents"
ERROR = "payment gateway timeout"
"""What the conformance agents' failing tool raises (``_common.make_issue_refund``)."""


def _stored_loop(store: Store) -> str:
    trace_id: str = json.loads((DATA / "scenarios.json").read_text())[SOURCE]["loop"]
    body = (DATA / f"{SOURCE}.json").read_bytes()
    store.insert_spans(spans_ipc(otlp_to_rows(parse_request(body, JSON), "default")))
    return trace_id


def test_a_failed_tool_calls_exception_text_is_its_error_and_the_loops(store: Store) -> None:
    trace_id = _stored_loop(store)
    t = load_traces(store, "default", [trace_id])[trace_id]
    failed = [c for c in t.tools if c.tool == FAILING_TOOL and c.failed]
    assert len(failed) >= 3
    assert all(ERROR in c.message for c in failed)
    result = Analyzer(store, settle_seconds=0).analyze("default", [trace_id], write=False)
    (loop,) = [f for f in result.findings if f.kind == A.FINDING_RUNAWAY_LOOP]
    assert loop.detail["distinct_errors"] == 1
    assert "same_error" in loop.detail["signals"]
    assert ERROR in loop.detail["last_error"]
    assert "the same error every time" in loop.explanation
    assert ERROR in loop.explanation

"""A Logfire span's field the app named for what its work gave back (``span.set_attribute(
"result", ...)`` after the call): the real Logfire SDK (a local instance, nothing sent), its
spans stored in the real chDB store and loaded for real. A print shop proofs a poster job: the
app's ``logfire.span`` per step attempt, one ``poll {service}`` span per status request with
the request as fields and the answer set as ``result`` afterwards; the proofer never leaves
``rendering`` and the step gives up.

Logfire lists every attribute set on a span as a field in ``logfire.json_schema``: the answer
was read as one of the call's arguments (each request a different one, ``queued`` then
``rendering``), so twelve identical requests were no poll and its result was empty."""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai
from tests.analyzer.conftest import otlp_rows
from tests.corpus._relay import local_logfire
from tests.storage._spans import spans_ipc

pytestmark = pytest.mark.integration

POLLS = 12


class ProofStalled(RuntimeError):
    """The step gave up on the proofer."""


def _play(store: Store) -> str:
    """The poster job's trace, stored; its id."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    # each attempt's model call (the trace is an agent's): a plain GenAI chat span under the
    # step's Logfire span
    tracer = provider.get_tracer("print-shop-model")
    with (
        local_logfire("print-shop-test", provider) as lf,
        lf.span("proof job {job}", job="PJ-5521") as root,
    ):
        trace_id = format(root.get_span_context().trace_id, "032x")  # type: ignore[union-attr]
        with lf.span("step {step} attempt {attempt}", step="upload_art", attempt=1) as s:
            genai.chat(tracer, "Upload the art A-77.")
            with lf.span("call {service}", service="files", request={"art": "A-77"}) as c:
                c.set_attribute("result", json.dumps({"file": "F-9"}))
            s.set_attribute("status", "done")
        try:
            with lf.span("step {step} attempt {attempt}", step="proof", attempt=1):
                genai.chat(tracer, "Proof the file F-9 and wait for it.")
                for i in range(POLLS):
                    state = "queued" if i % 2 == 0 else "rendering"
                    with lf.span("call {service}", service="proofer", request={"file": "F-9"}) as c:
                        c.set_attribute("result", json.dumps({"file": "F-9", "state": state}))
                raise ProofStalled(f"proof of F-9 still rendering after {POLLS} requests")
        except ProofStalled:
            pass
    provider.force_flush()
    store.insert_spans(spans_ipc(otlp_rows(list(exporter.get_finished_spans()))))
    provider.shutdown()
    return trace_id


def test_a_result_field_is_the_calls_answer_not_an_argument(store: Store) -> None:
    t = _play(store)
    trace = load_traces(store, "default", [t])[t]
    polls = [c for c in trace.tools if "proofer" in c.arguments]
    assert len(polls) == POLLS
    # the request alone: the same each time
    assert {json.loads(c.arguments)["request"] for c in polls} == {'{"file":"F-9"}'}
    assert all("result" not in json.loads(c.arguments) for c in polls)
    assert len({c.args_key for c in polls}) == 1
    assert {json.loads(c.result)["state"] for c in polls} == {"queued", "rendering"}
    (upload,) = [c for c in trace.tools if "files" in c.arguments]
    assert json.loads(upload.result) == {"file": "F-9"}
    # twelve identical requests, then the step gave up: a stalled poll
    (finding,) = RunawayLoop().detect(trace)
    assert finding.detail["attempts"] == POLLS
    assert set(finding.evidence) >= {c.span_id for c in polls}

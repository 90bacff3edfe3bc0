"""The detectors still name the labelled step when a few runs are changed in ways that keep
their labels true (``tests.corpus.shapes``): a plan stated as YAML instead of JSON (its
arguments still trace a wrong value to its step), steps named only in what an executor's LLM
call is asked, tool spans named after their call method, errors in other words; a healthy
LangGraph run renamed to the GenAI conventions (every graph node an ``invoke_agent`` span, the
nodes that only wrap others folded away) has no finding at all.

The full tables are ``benchmarks/detector_shapes.py``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import planscope
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from planscope_analyzer import Analyzer
from planscope_collector.storage import Store

from tests.conftest import Migrated
from tests.corpus import play, read_labels
from tests.corpus.shapes import TRANSFORMS, reword, transformed
from tests.storage._spans import otlp_to_rows, spans_ipc

MAIN_KINDS = ("runaway_loop", "context_starved", "plan_propagation")
CASES = (
    ("plan_yaml", "dev", "restock", "wrong_date"),
    ("anonymous_steps", "dev", "etl", "loop_stage_varying"),
    ("anonymous_steps", "dev", "etl", "wrong_column"),
    ("tool_call_suffix", "dev", "travel", "loop_tool_in_step"),
    ("errors_reworded", "dev", "travel", "loop_step_varying"),
)
ONCALL = ("convention_genai", "sealed5", "oncall", "healthy")  # a spent split: no oncall in dev
"""Played in a child process: OpenLLMetry's LangChain instrumentor serves one oncall play per
process (tests/corpus/README.md), and test_corpus.py's LangGraph test has this one's."""


def test_a_reworded_error_keeps_its_values_and_stays_distinct() -> None:
    a, b = "timeout after 30s (retry later)", "timeout after 45s (retry later)"
    assert reword(a) == "deadline after 30s (try again later)"
    assert reword(a) != reword(b)
    assert reword("HTTP 503: warehouse LYS-3 unavailable") == (
        "HTTP 529: warehouse LYS-3 not reachable"
    )


def test_a_plan_in_a_tool_result_is_data_not_a_plan() -> None:
    flights = '[{"id": "FL1", "tool": "x"}, {"id": "FL2", "tool": "y"}]'
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.result": flights}
    tool = {"name": "execute_tool search", "attributes": attributes}
    chat = {"name": "chat", "attributes": {"gen_ai.output.messages": flights}}
    after = TRANSFORMS["plan_yaml"]([tool, chat])
    assert after[0]["attributes"]["gen_ai.tool.call.result"] == flights
    assert after[1]["attributes"]["gen_ai.output.messages"].startswith("steps:\n- id: FL1")


@pytest.mark.integration
def test_detectors_name_the_labelled_step_on_transformed_runs(store: Store) -> None:
    check(CASES, store)


@pytest.mark.integration
def test_a_langgraph_run_renamed_to_genai_names_has_no_finding(
    migrated: Migrated, tmp_path: Path
) -> None:
    code = (
        "import sys\n"
        "from planscope_collector.storage import open_store\n"
        "from tests.corpus.test_shapes import ONCALL, check\n"
        "store = open_store(sys.argv[1])\n"
        "store.migrate()\n"
        "check((ONCALL,), store)\n"
    )
    dsn = migrated.store_dsn(tmp_path / "chdb")
    out = subprocess.run(
        [sys.executable, "-c", code, dsn],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert out.returncode == 0, out.stderr[-3000:]


def check(cases: tuple[tuple[str, str, str, str], ...], store: Store) -> None:
    """Play ``cases`` (transformation, split, agent, scenario), store only their transformed
    spans, and assert the detectors name each labelled step (nothing at all on healthy runs)."""
    labels = read_labels()
    picked = [
        next(lab for lab in labels if (lab.split, lab.agent, lab.scenario) == case[1:])
        for case in cases
    ]
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        ids = play(picked, provider)
    finally:
        planscope.configure(tracer_provider=TracerProvider())
    spans = exporter.get_finished_spans()
    for (name, *_), lab in zip(cases, picked, strict=True):
        mine = [s for s in spans if s.context and f"{s.context.trace_id:032x}" == ids[lab.run]]
        changed, out = transformed(mine, name)
        assert changed == {ids[lab.run]}, (name, lab.run)  # the shape is really new
        store.insert_spans(spans_ipc(otlp_to_rows(encode_spans(out), "default")))
    findings = Analyzer(store).analyze("default", list(ids.values()), write=False).findings
    for (name, *_), lab in zip(cases, picked, strict=True):
        got = sorted((f.kind, f.step_id) for f in findings if f.trace_id == ids[lab.run])
        if lab.kind == "healthy":
            assert got == [], (name, lab, got)  # not even a data-quality finding
        else:
            assert [g for g in got if g[0] in MAIN_KINDS] == [(lab.kind, lab.step)], (name, lab)

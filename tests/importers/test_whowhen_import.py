"""Who&When logs (real files of the shared dataset) → importer → real collector → query API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from planscope import semconv as A
from planscope_analyzer.importers import _conventions as C
from planscope_analyzer.importers import import_files, parse_whowhen, prepare
from planscope_collector import BackgroundServer

from tests.conftest import wait_for_trace


def _spans(trace: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [s for s in trace["spans"] if s["planscope_kind"] == kind]


def test_magentic_one_round_trip(dataset: Path, collector: BackgroundServer) -> None:
    path = dataset / "hand_crafted_dev" / "19.json"  # has a re-plan
    conv = parse_whowhen(path.read_bytes(), str(path))
    [prepared] = import_files([path], collector=collector.url)
    trace = wait_for_trace(collector.url, prepared.trace_ids[0], prepared.span_count)

    run = trace["run"]
    assert run["outcome"] == A.OUTCOME_FAILURE
    assert run["objective"] == conv.question
    assert run["agent"] == "Orchestrator"
    versions = sorted(p["version"] for p in trace["plans"])
    assert versions == [1, 2]
    steps = _spans(trace, A.KIND_STEP)
    dispatches = [t for t in conv.turns if t.kind == "dispatch"]
    assert len(steps) == len(dispatches)
    first = min(steps, key=lambda s: int(s["attributes"][C.IMPORT_RECORD]))
    d0 = dispatches[0]
    attrs = first["attributes"]
    assert int(attrs[C.IMPORT_RECORD]) == d0.index
    assert attrs[A.STEP_EXECUTOR] == d0.target
    assert attrs[A.STEP_CONTEXT_KEYS] == ["instruction"]
    assert json.loads(attrs[A.INPUT]) == {"instruction": d0.content}
    planned = {s["id"] for p in trace["plans"] for s in p["steps"]}
    assert {s["attributes"][A.STEP_ID] for s in steps} <= planned  # every step is in a plan
    # Ledgers judged some steps as making no progress: those are failed steps.
    assert any(s["attributes"][A.STEP_STATUS] == A.STATUS_ERROR for s in steps)
    # Labels stay out of the spans.
    blob = json.dumps(trace)
    assert conv.labels is not None
    assert conv.labels.reason not in blob and "mistake" not in blob


def test_ag2_round_trip_with_code_execution(dataset: Path, collector: BackgroundServer) -> None:
    path = dataset / "algorithm_generated" / "1.json"
    conv = parse_whowhen(path.read_bytes(), str(path))
    [prepared] = import_files([path], collector=collector.url, project="imports")
    trace = wait_for_trace(
        collector.url, prepared.trace_ids[0], prepared.span_count, project="imports"
    )
    assert trace["run"]["variant"] == "ag2-captainagent"
    [plan] = trace["plans"]
    assert plan["version"] == 1
    steps = _spans(trace, A.KIND_STEP)
    experts = {t.speaker for t in conv.turns if t.kind in ("reply", "plan", "final")}
    assert {s["attributes"][A.STEP_EXECUTOR] for s in steps} == experts
    tools = _spans(trace, A.KIND_TOOL)
    assert len(tools) == sum(t.kind == "tool" for t in conv.turns)
    by_id = {s["span_id"]: s for s in trace["spans"]}
    for t in tools:  # code runs under the step of the expert who wrote the code
        assert by_id[t["parent_span_id"]]["planscope_kind"] in (A.KIND_STEP, A.KIND_RUN)
    records = sorted(int(s["attributes"][C.IMPORT_RECORD]) for s in steps + tools)
    assert records == list(range(len(conv.turns)))


def test_every_dataset_file_converts(dataset: Path) -> None:
    files = sorted(dataset.glob("*/*.json"))
    assert len(files) >= 140
    for f in files:
        p = prepare(f)
        assert p.format == "whowhen" and p.span_count > 1
        spans = p.requests[0].resource_spans[0].scope_spans[0].spans
        assert all(s.end_time_unix_nano >= s.start_time_unix_nano for s in spans)

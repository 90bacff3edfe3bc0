"""The AIOS-style scheduler variant: queueing, preemption, context switches, its faults and
their detection, through the real runtime, a real collector and the analyzer."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from planscope import semconv as A
from planscope_analyzer import Analyzer
from planscope_collector import BackgroundServer, CollectorSettings
from planscope_runners import load_labels, run_task
from planscope_runners.variants import scheduler
from planscope_runners.variants.scheduler import Kernel, run_many

from .conftest import Spans, attr


def _queue(spans: Spans) -> list[object]:
    return [s for s in spans.all() if s.name == A.SPAN_SCHEDULER_QUEUE]


def _switches(spans: Spans) -> list[object]:
    return [s for s in spans.all() if s.name == A.SPAN_SCHEDULER_CONTEXT_SWITCH]


def test_round_robin_preempts_and_restores_parallel_executors(spans: Spans) -> None:
    result = run_task("scheduler", "ops", "ops-audit-wide")
    assert result.success
    queued = _queue(spans)
    assert len(queued) >= result.counters.llm_calls  # every model call queued at least once
    llm_ids = {s.context.span_id for s in spans.of_kind(A.KIND_LLM)}
    assert all(s.parent.span_id in llm_ids for s in queued)  # type: ignore[attr-defined]
    assert {attr(s, A.SCHEDULER_REASON) for s in queued} == {"arrival", "preempted"}
    assert max(attr(s, A.SCHEDULER_QUEUE_LENGTH) for s in queued) >= 2
    assert all(attr(s, A.SCHEDULER_OVERTAKEN) == 0 for s in queued)  # fair: nobody overtakes
    ops = [attr(s, A.SCHEDULER_SWITCH_OP) for s in _switches(spans)]
    assert ops.count("save") == ops.count("restore") > 0
    restores = [s for s in _switches(spans) if attr(s, A.SCHEDULER_SWITCH_OP) == "restore"]
    assert all(
        attr(s, A.SCHEDULER_CONTEXT_HASH) == attr(s, A.SCHEDULER_SAVED_HASH) for s in restores
    )


def test_fifo_never_preempts_and_many_runs_share_one_kernel(spans: Spans) -> None:
    kernel = Kernel("fifo", slots=1)
    results = run_many(["ops-audit-small", "files-merge-3", "support-triage-pair"], kernel)
    assert [r.outcome for r in results] == ["success"] * 3
    assert len({r.trace_id for r in results}) == 3 and kernel.preemptions == 0
    assert _switches(spans) == []
    queued = _queue(spans)
    assert {attr(s, A.SCHEDULER_ID) for s in queued} == {kernel.id}
    assert {s.context.trace_id for s in queued} == {  # type: ignore[attr-defined]
        int(r.trace_id, 16) for r in results
    }


def test_a_gate_whose_requester_never_comes_opens_after_its_timeout(
    spans: Spans, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scheduler, "GATE_TIMEOUT_S", 0.3)
    kernel = Kernel("fifo")
    gated_at = time.time_ns()
    kernel.admit_together(["a-step-that-never-asks", "read_0"])
    (result,) = run_many(["ops-audit-small"], kernel)
    assert result.success
    first = min(_queue(spans), key=lambda s: s.start_time)  # type: ignore[attr-defined]
    assert attr(first, A.SCHEDULER_REQUESTER) == "planner"
    assert first.end_time - gated_at >= 0.29e9  # type: ignore[attr-defined]  # granted at the timeout


@pytest.mark.integration
def test_scheduler_faults_are_labelled_traced_and_detected(tmp_path: Path, data_dir: Path) -> None:
    labels_path = tmp_path / "labels.jsonl"
    settings = CollectorSettings(data_dir=data_dir, port=0, flush_interval=0.05)
    args = ["suite", "--runs", "10", "--fault-rate", "1", "--seed", "3", "--quiet"]
    more = ["--variants", "scheduler", "--endpoint", "", "--labels", str(labels_path)]
    with BackgroundServer(settings) as server:
        more[3] = server.url
        proc = subprocess.run(
            [sys.executable, "-m", "planscope", *args, *more],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        labels = load_labels(labels_path)
        ids = [label["trace_id"] for label in labels]
        store = server.app.state.collector.store
        deadline = time.monotonic() + 30
        runs: list[dict[str, object]] = []
        while time.monotonic() < deadline and len(runs) < len(ids):
            runs = store.query("SELECT DISTINCT TraceId FROM planscope_runs")
            time.sleep(0.2)
        time.sleep(0.5)
        findings = Analyzer(store).analyze("default", ids).findings
    found = {(f.trace_id, f.kind, f.step_id) for f in findings}
    expected = {
        (label["trace_id"], e["kind"], e["step_id"])
        for label in labels
        for e in label["expected_findings"]
        if e["kind"] in ("scheduler_starvation", "context_lost")
    }
    kinds = {k for _, k, _ in expected}
    assert kinds == {"scheduler_starvation", "context_lost"}, labels
    assert expected <= found
    flagged = {(t, k, s) for t, k, s in found if k in kinds}
    assert flagged == expected  # nothing flagged on the runs without these faults

"""Suites, their labels JSONL, and the ``planscope run`` / ``planscope suite`` commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from planscope._cli import main
from planscope_runners import FINDING_KINDS, load_labels, plan_suite, run_suite

LABEL_KEYS = {
    "trace_id",
    "run_id",
    "variant",
    "env",
    "task",
    "seed",
    "inert_faults",
    "blame",
    "faults",
    "expected_findings",
    "negative_findings",
    "healthy",
    "outcome",
    "outcome_reason",
    "metrics",
}


def test_suite_writes_one_label_per_run(tmp_path: Path, spans: object) -> None:
    path = tmp_path / "labels.jsonl"
    suite = run_suite(30, fault_rate=0.3, seed=3, labels_path=path)
    labels = load_labels(path)
    assert len(labels) == len(suite.runs) == 30
    assert all(set(label) == LABEL_KEYS for label in labels)
    assert all(len(label["trace_id"]) == 32 for label in labels)
    assert len({label["trace_id"] for label in labels}) == 30
    healthy = [label for label in labels if not label["faults"]]
    assert len(healthy) > len(labels) / 2
    assert all(label["outcome"] == "success" for label in healthy)
    for label in labels:
        for finding in label["expected_findings"] + label["negative_findings"]:
            assert finding["kind"] in FINDING_KINDS
    assert {label["variant"] for label in labels} == set(suite.by_variant())


def test_suite_plans_are_deterministic() -> None:
    assert plan_suite(50, 0.3, 7) == plan_suite(50, 0.3, 7)
    assert plan_suite(50, 0.3, 7) != plan_suite(50, 0.3, 8)
    with pytest.raises(ValueError):
        plan_suite(1, 1.5, 0)


def test_cli_run_scenario_and_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels = tmp_path / "run.jsonl"
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--scenario", "runaway-loop", "--labels", str(labels)])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "failure" in out and "expected finding: runaway_loop" in out
    (label,) = load_labels(labels)
    assert label["faults"][0]["knob"] == "loop_same_error"

    with pytest.raises(SystemExit) as exit_info:
        main(["suite", "--runs", "10", "--seed", "2", "--labels", str(tmp_path / "s.jsonl")])
    assert exit_info.value.code == 0
    captured = capsys.readouterr()
    assert "10/10 runs" in captured.err and "plan_and_act" in captured.out
    assert "SYNTHETIC: scripted models" in captured.out
    assert len((tmp_path / "s.jsonl").read_text().splitlines()) == 10

    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--task", "no-such-task"])
    assert exit_info.value.code == 2
    assert "unknown task" in capsys.readouterr().err
    _ = json  # labels are JSON lines


def test_a_files_workspace_never_outlives_its_environment() -> None:
    """Suites build environments only to list their tools; their temp dirs must not pile up."""
    import gc

    from planscope_runners.environments import make_env

    dropped = make_env("files")
    root = dropped.root
    assert root.is_dir()
    del dropped
    gc.collect()
    assert not root.exists()
    closed = make_env("files")
    closed.close()
    closed.close()
    assert not closed.root.exists()

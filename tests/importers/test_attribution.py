"""Attribution rules, the evaluation command and attribution of a stored trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from planscope._cli import main
from planscope_analyzer.attribution import (
    FindingRef,
    attribute,
    conversation_from_trace,
    evaluate,
    loop_signals,
    table,
)
from planscope_analyzer.importers import import_files, parse_whowhen
from planscope_collector import BackgroundServer

from .conftest import wait_for_trace

PLAN = (
    "You are given: (1) a task and advises from your manager with a specific plan.\n"
    "## Plan for solving the task\n1. compute\n"
)


def _ag2(history: list[tuple[str, str]], agent: str, step: int, reason: str = "") -> dict[str, Any]:
    return {
        "question": "How many widgets?",
        "mistake_agent": agent,
        "mistake_step": str(step),
        "mistake_reason": reason,
        "history": [{"name": n, "role": "user", "content": c} for n, c in history],
    }


FAILED_CODE = _ag2(
    [
        ("Lead_Expert", PLAN),
        ("Coder_Expert", "```python\nprint(widgets)\n```"),
        (
            "Computer_terminal",
            "exitcode: 1 (execution failed)\nNameError: name 'widgets' is not defined",
        ),
        ("Lead_Expert", "TERMINATE"),
    ],
    "Coder_Expert",
    1,
)
HEDGED = _ag2(
    [
        ("Lead_Expert", PLAN),
        ("Data_Expert", "Assuming the catalogue lists every widget, the answer is many."),
        ("Checker_Expert", "Looks right. TERMINATE"),
    ],
    "Data_Expert",
    1,
)
UNGROUNDED = _ag2(
    [
        ("Lead_Expert", PLAN),
        ("Checker_Expert", "Let us verify the count together."),
        ("Data_Expert", "The warehouse holds 1,250 widgets and 340 gadgets."),
        ("Checker_Expert", "TERMINATE"),
    ],
    "Checker_Expert",
    1,
    "The expert repeated the same step again and again.",
)  # a wrong guess
FALLBACK = _ag2(
    [
        ("Lead_Expert", PLAN),
        ("Checker_Expert", "Agreed, done. TERMINATE"),
    ],
    "Lead_Expert",
    0,
)


def _conv(doc: dict[str, Any]) -> Any:
    return parse_whowhen(json.dumps(doc).encode(), "x.json")


@pytest.mark.parametrize(
    ("doc", "who", "step", "rule"),
    [
        (FAILED_CODE, "Coder_Expert", 1, "failed-code"),
        (HEDGED, "Data_Expert", 1, "hedged-claim"),
        (UNGROUNDED, "Data_Expert", 2, "ungrounded-facts"),
        (FALLBACK, "Lead_Expert", 0, "plan-fallback"),
    ],
)
def test_group_chat_rules(doc: dict[str, Any], who: str, step: int, rule: str) -> None:
    a = attribute(_conv(doc))
    assert (a.component, a.step, a.rule) == (who, step, rule)
    assert a.evidence and a.explanation


def _magentic(extra: list[tuple[str, str]]) -> dict[str, Any]:
    ledger = {
        "is_request_satisfied": {"reason": "r", "answer": False},
        "is_in_loop": {"reason": "r", "answer": False},
        "is_progress_being_made": {"reason": "r", "answer": True},
    }
    hist = [
        ("human", "q?"),
        ("Orchestrator (thought)", "Initial plan:\n- search"),
        ("Orchestrator (thought)", "Updated Ledger:\n" + json.dumps(ledger)),
        ("Orchestrator (-> WebSurfer)", "search q"),
        ("WebSurfer", "found 7"),
    ]
    return {"question": "q?", "history": [{"role": r, "content": c} for r, c in hist + extra]}


def test_planner_rules() -> None:
    done = {"is_request_satisfied": {"reason": "found", "answer": True}}
    a = attribute(
        _conv(_magentic([("Orchestrator (thought)", "Updated Ledger:\n" + json.dumps(done))]))
    )
    assert (a.component, a.step, a.rule) == ("WebSurfer", 4, "accepted-result")
    stalled = {
        "is_in_loop": {"reason": "same page", "answer": True},
        "is_progress_being_made": {"reason": "stuck", "answer": False},
    }
    conv = _conv(
        _magentic(
            [
                ("Orchestrator (thought)", "Updated Ledger:\n" + json.dumps(stalled)),
                ("Orchestrator (thought)", "Stalled.... Replanning..."),
                ("Orchestrator (thought)", "New plan:\n- other"),
            ]
        )
    )
    a = attribute(conv)
    assert (a.component, a.step, a.rule) == ("Orchestrator", 6, "planner-replan")
    assert loop_signals(conv)


def test_findings_refine_only_the_fallback() -> None:
    f = [FindingRef("runaway_loop", "high", "Checker_Expert", 1, "looped")]
    assert attribute(_conv(FALLBACK), f).rule == "analyzer-finding"
    a = attribute(_conv(FAILED_CODE), f)
    assert a.rule == "failed-code" and a.findings_used == ("runaway_loop",)


def _fixture_dir(tmp_path: Path) -> Path:
    d = tmp_path / "labeled"
    d.mkdir()
    for n, doc in enumerate([FAILED_CODE, HEDGED, UNGROUNDED, FALLBACK], 1):
        (d / f"{n}.json").write_text(json.dumps(doc))
    return d


def test_evaluation_on_known_answers(tmp_path: Path) -> None:
    rows = evaluate([_fixture_dir(tmp_path)])
    overall = next(r for r in table(rows) if r["subset"] == "ALL" and r["half"] == "all")
    # 3 of 4 right on agent and step; the 4th blames Data_Expert at 2, label says Checker at 1.
    assert overall["n"] == 4 and overall["agent"] == "75.0%" and overall["step"] == "75.0%"
    assert overall["step±1"] == "100.0%"
    assert overall["repetition_labeled"] == 1 and overall["loop_flagged"] == "0/1"
    halves = {r["half"]: r for r in table(rows) if r["subset"] == "ALL"}
    assert (halves["even"]["agent"], halves["odd"]["agent"]) == ("100.0%", "50.0%")


def test_evaluate_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["attribute", "--evaluate", "--json", str(_fixture_dir(tmp_path))])
    assert done.value.code == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    overall = next(r for r in lines if r["subset"] == "ALL" and r["half"] == "all")
    assert (overall["agent"], overall["step"]) == ("75.0%", "75.0%")


def test_dataset_targets(dataset: Path) -> None:
    """The offline rules on the development set: agent >= 55 %, step (exact) >= 15 %."""
    rows = evaluate([dataset / "algorithm_generated", dataset / "hand_crafted_dev"])
    agent = sum(r.agent_ok for r in rows) / len(rows)
    step = sum(r.step_ok for r in rows) / len(rows)
    assert len(rows) == 140
    assert agent >= 0.55 and step >= 0.15, (agent, step)
    again = [attribute(parse_whowhen(r.path.read_bytes(), str(r.path))) for r in rows[:5]]
    assert again == [r.predicted for r in rows[:5]]  # deterministic


def test_attribute_stored_trace_and_missing_findings_endpoint(
    dataset: Path, collector: BackgroundServer, capsys: pytest.CaptureFixture[str]
) -> None:
    path = dataset / "hand_crafted_dev" / "19.json"
    offline = attribute(parse_whowhen(path.read_bytes(), str(path)))
    [p] = import_files([path], collector=collector.url)
    trace = wait_for_trace(collector.url, p.trace_ids[0], p.span_count)
    online = attribute(conversation_from_trace(trace))
    assert (online.component, online.step, online.rule) == (
        offline.component,
        offline.step,
        offline.rule,
    )
    with pytest.raises(SystemExit) as done:  # findings endpoint absent or empty: still works
        main(
            [
                "attribute",
                "--json",
                "--collector",
                collector.url,
                "--trace-id",
                p.trace_ids[0],
                str(path),
            ]
        )
    assert done.value.code == 0
    out = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert {(o["component"], o["step"]) for o in out} == {(offline.component, offline.step)}

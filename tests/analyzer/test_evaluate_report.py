"""``planscope evaluate``'s report never shows a perfect score for a detector that found
nothing: undefined precision/recall/F1 are ``n/a``, in the table and as ``None`` in JSON."""

from __future__ import annotations

from planscope_analyzer import Finding, score
from planscope_analyzer._evaluate import LABELED_KINDS


def test_nothing_found_and_nothing_to_find_is_not_a_perfect_score() -> None:
    loop = {"kind": "runaway_loop", "step_id": "fetch", "component": "executor"}
    labels = [{"trace_id": "t1", "expected_findings": [loop], "negative_findings": []}]
    report = score(labels, [])
    loops = report.to_dict()["scores"]["runaway_loop"]
    assert (loops["fn"], loops["precision"], loops["recall"], loops["f1"]) == (1, None, 0.0, None)
    scores = report.table().split("\n\n")[0].splitlines()  # the scores, before the confusion
    rows = {line.split(" | ")[0].lstrip("| "): line for line in scores}
    assert "| n/a | 0.000 | n/a |" in rows["runaway_loop"]
    # a kind with no label and no finding: every figure undefined, none reads 1.000
    other = next(k for k in LABELED_KINDS if k != "runaway_loop")
    assert rows[other].count("n/a") == 3 and "1.000" not in rows[other]


def test_a_write_conflict_matches_its_labelled_pair_in_either_order() -> None:
    label = {
        "kind": "write_conflict",
        "step_id": "b",
        "component": "planner",
        "detail": {"other": "a", "resource": "file:changelog"},
    }
    labels = [{"trace_id": "t1", "expected_findings": [label], "negative_findings": []}]

    def conflict(step: str, other: str) -> Finding:
        return Finding(
            "write_conflict", "high", "p", "t1", "r", "planner", step, (), "",
            detail={"other": other},
        )  # fmt: skip

    for found in (conflict("b", "a"), conflict("a", "b")):
        s = score(labels, [found]).scores["write_conflict"]
        assert (s.tp, s.fp, s.fn) == (1, 0, 0)
    # another pair of the same trace is not the labelled one
    s = score(labels, [conflict("c", "a")]).scores["write_conflict"]
    assert (s.tp, s.fp, s.fn) == (0, 1, 1)

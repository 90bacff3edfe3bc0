"""The analyzer-scale benchmark's store builder (benchmarks/analyzer_scale.py): copies of a
seed keep ids unique and each copy's parent and link ids pointing into the same copy."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.corpus import AGENTS
from tests.storage._spans import make_span, new_trace_id

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
try:
    import analyzer_scale
finally:
    sys.path.remove(str(BENCHMARKS))


def _seed() -> list[list[Any]]:
    rows = []
    for _ in range(2):
        trace = new_trace_id()
        root = make_span(trace_id=trace, name="run", events=[(5, "e", {})])
        child = make_span(trace_id=trace, name="step", parent=root[2])
        child[18], child[19] = [trace], [root[2]]  # a link to the root
        rows += [root, child]
    return rows


def test_copies_keep_ids_unique_and_links_within_their_copy() -> None:
    seed = _seed()
    copies = [analyzer_scale.replicate(seed, c, 10 * c) for c in range(3)]
    spans = [r[2] for rows in copies for r in rows]
    assert len(set(spans)) == len(spans) == 3 * len(seed)
    assert len({r[1] for rows in copies for r in rows}) == 3 * len({r[1] for r in seed})
    for c, rows in enumerate(copies):
        ids = {r[2] for r in rows}
        traces = {r[1] for r in rows}
        for before, after in zip(seed, rows, strict=True):
            assert (after[3] in ids) == bool(before[3])
            assert set(after[18]) <= traces and set(after[19]) <= ids
            assert after[0] == before[0] + 10 * c
            assert after[15] == [t + 10 * c for t in before[15]]


def test_framework_shape_plays_spent_runs_of_every_framework_agent() -> None:
    labels = analyzer_scale.framework_labels()
    agents = {lab.agent for lab in labels}
    assert agents == set(analyzer_scale.FRAMEWORK_AGENTS)
    assert {lab.split for lab in labels} == {analyzer_scale.FRAMEWORK_SPLIT}
    assert not agents & set(AGENTS)  # none through our SDK
    assert len(labels) == len(agents) * analyzer_scale.FRAMEWORK_RUNS_PER_AGENT
    assert len({lab.run for lab in labels}) == len(labels)
    assert {lab.kind for lab in labels} > {"healthy"}  # faults and traps alike

"""Run-scope retry budgets measure a run as ``/api/traces`` counts it: ``max_attempts_per_run``
compares the attempts of all the run's steps, ``max_attempts_per_step`` its worst step's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
from planscope_collector import BackgroundServer

from .conftest import api, run_agent, wait_until


def test_run_limits_compare_the_runs_attempts_and_its_worst_steps(
    make_collector: Callable[..., BackgroundServer],
) -> None:
    collector = make_collector()
    # One looping run: step 'health' is retried until the SDK's budget refuses attempt 5,
    # after other steps ran once.
    run_agent(collector.url, "loop_same_error")

    def finished() -> list[dict[str, Any]]:
        rows = httpx.get(f"{collector.url}/api/traces", timeout=30).json()["traces"]
        return [t for t in rows if t["outcome"]]  # the run span ends (and is sent) last

    (row,) = wait_until(finished, timeout=60, what="the run stored")
    metrics = httpx.get(f"{collector.url}/api/traces/{row['trace_id']}", timeout=30).json()[
        "metrics"
    ]
    run, worst = row["step_attempts"], metrics["worst_step_attempts"]
    assert run == metrics["step_attempts"] and run > worst >= 5, (row, metrics)

    def dry_run(**budget: int) -> dict[str, Any]:
        rule = {"kind": "retry_budget", "scope": "run", "budget": budget, "window": "1h"}
        r = api(collector.url).post("/test", json=rule)
        assert r.status_code == 200, r.text
        return dict(r.json())

    # The worst step alone is within a run limit of its own size: only the run's sum exceeds it.
    fired = dry_run(max_attempts_per_run=worst)
    (sample,) = fired["evidence"]["samples"]
    assert fired["would_fire"]
    assert (sample["trace_id"], sample["attempts"], sample["step_attempts"]) == (
        row["trace_id"],
        run,
        worst,
    )
    assert sample["exceeded"] == [f"max_attempts_per_run: {run} > {worst}"]
    assert not dry_run(max_attempts_per_run=run)["would_fire"]

    # The step limit compares the worst step's count, never the run's.
    assert not dry_run(max_attempts_per_step=worst)["would_fire"]
    (sample,) = dry_run(max_attempts_per_step=worst - 1)["evidence"]["samples"]
    assert sample["exceeded"] == [f"max_attempts_per_step: {worst} > {worst - 1}"]

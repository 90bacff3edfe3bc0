"""Aggregates for the overview, explorer and compare pages, computed client-side.

Inputs are rows of ``GET /api/traces`` (run fields per trace) and, where per-step numbers are
needed, :class:`RunView` objects of a bounded sample of runs (see ``docs/dashboard.md``).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from ._findings import Finding
from ._runview import RunView, step_status

NO_RUN = "(no run)"


def outcome_of(row: dict[str, Any]) -> str:
    """The run's outcome, ``(no run)`` for a trace without a planscope run span."""
    if not row.get("run_id"):
        return NO_RUN
    return str(row.get("outcome") or "unknown")


def filter_traces(
    rows: list[dict[str, Any]],
    *,
    agent: str | None = None,
    variant: str | None = None,
    outcome: str | None = None,
    search: str | None = None,
) -> list[dict[str, Any]]:
    """Client-side filters over list rows; ``search`` matches ids, agent, variant, root name.

    >>> filter_traces([{"trace_id": "ab", "agent": "x"}, {"trace_id": "cd"}], search="AB")
    [{'trace_id': 'ab', 'agent': 'x'}]
    """
    needle = (search or "").strip().lower()
    out = []
    for row in rows:
        if agent and row.get("agent") != agent:
            continue
        if variant and row.get("variant") != variant:
            continue
        if outcome and outcome_of(row) != outcome:
            continue
        if needle:
            hay = " ".join(
                str(row.get(k) or "")
                for k in ("trace_id", "run_id", "agent", "variant", "root_name", "root_service")
            ).lower()
            if needle not in hay:
                continue
        out.append(row)
    return out


def bucket_ns(span_ns: int) -> int:
    """A readable bucket width for a time range: ~40 buckets, rounded to a whole unit."""
    minute = 60 * 10**9
    for width in (
        10**9,
        10 * 10**9,
        minute,
        5 * minute,
        15 * minute,
        60 * minute,
        6 * 60 * minute,
        24 * 60 * minute,
    ):
        if span_ns / width <= 48:
            return width
    return 7 * 24 * 60 * minute


def runs_over_time(rows: list[dict[str, Any]], width_ns: int) -> list[dict[str, Any]]:
    """Counts per (bucket start ns, outcome)."""
    counts: dict[tuple[int, str], int] = {}
    for row in rows:
        bucket = int(row.get("start_ns") or 0) // width_ns * width_ns
        key = (bucket, outcome_of(row))
        counts[key] = counts.get(key, 0) + 1
    return [{"bucket_ns": b, "outcome": o, "runs": n} for (b, o), n in sorted(counts.items())]


def tokens_over_time(rows: list[dict[str, Any]], width_ns: int) -> list[dict[str, Any]]:
    """Input/output tokens and cost per bucket."""
    acc: dict[int, dict[str, Any]] = {}
    for row in rows:
        bucket = int(row.get("start_ns") or 0) // width_ns * width_ns
        slot = acc.setdefault(
            bucket, {"bucket_ns": bucket, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
        )
        slot["input_tokens"] += int(row.get("input_tokens") or 0)
        slot["output_tokens"] += int(row.get("output_tokens") or 0)
        slot["cost_usd"] += float(row.get("cost_usd") or 0.0)
    return [acc[b] for b in sorted(acc)]


@dataclass(frozen=True)
class Totals:
    runs: int
    successes: int
    failures: int
    tokens: int
    cost_usd: float
    p50_ms: float | None
    p95_ms: float | None

    @property
    def success_rate(self) -> float | None:
        decided = [self.successes, self.failures]
        return self.successes / self.runs if self.runs and sum(decided) else None


def totals(rows: list[dict[str, Any]]) -> Totals:
    """Headline numbers for a set of list rows."""
    runs = [r for r in rows if r.get("run_id")]
    durations = sorted(int(r.get("duration_ns") or 0) / 1e6 for r in runs)
    return Totals(
        runs=len(runs),
        successes=sum(1 for r in runs if r.get("outcome") == "success"),
        failures=sum(1 for r in runs if r.get("outcome") == "failure"),
        tokens=sum(
            int(r.get("input_tokens") or 0) + int(r.get("output_tokens") or 0) for r in rows
        ),
        cost_usd=sum(float(r.get("cost_usd") or 0.0) for r in rows),
        p50_ms=_percentile(durations, 0.5),
        p95_ms=_percentile(durations, 0.95),
    )


def _percentile(sorted_values: list[float], q: float) -> float | None:
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]


def attempts_beyond_first(view: RunView) -> int:
    """Retry-budget burn of one run: step attempts beyond the first, summed over steps."""
    return sum(max(0, len(items) - 1) for items in view.attempts.values())


def run_metrics(view: RunView) -> dict[str, Any]:
    """Per-run numbers that need the spans: attempts, retries, replans, failed steps."""
    failed = [sid for sid, items in view.attempts.items() if step_status(items) == "failed"]
    return {
        "attempts": sum(len(items) for items in view.attempts.values()),
        "retries": attempts_beyond_first(view),
        "replans": max(0, len(view.plans) - len({p.plan_id for p in view.plans})),
        "plan_versions": len(view.plans),
        "failed_steps": len(failed),
        "budget_exceeded": sum(
            1 for items in view.attempts.values() for a in items if a.budget_exceeded
        ),
    }


def step_failures(views: list[RunView]) -> list[dict[str, Any]]:
    """Per (agent, step id): runs, attempts, retries beyond the first, failed runs; worst first."""
    acc: dict[tuple[str, str], dict[str, Any]] = {}
    for view in views:
        agent = str((view.run or {}).get("agent") or "")
        for step_id, items in view.attempts.items():
            slot = acc.setdefault(
                (agent, step_id),
                {
                    "agent": agent,
                    "step": step_id,
                    "runs": 0,
                    "attempts": 0,
                    "retries": 0,
                    "failed_runs": 0,
                    "errors": 0,
                },
            )
            slot["runs"] += 1
            slot["attempts"] += len(items)
            slot["retries"] += max(0, len(items) - 1)
            slot["errors"] += sum(1 for a in items if a.status == "error")
            slot["failed_runs"] += step_status(items) == "failed"
    rows = list(acc.values())
    rows.sort(key=lambda r: (-r["failed_runs"], -r["retries"], -r["errors"], r["step"]))
    return rows


def agent_failures(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per agent: runs, failures and failure rate; worst first."""
    acc: dict[str, dict[str, Any]] = {}
    for row in rows:
        if not row.get("run_id"):
            continue
        agent = str(row.get("agent") or "")
        slot = acc.setdefault(agent, {"agent": agent, "runs": 0, "failures": 0})
        slot["runs"] += 1
        slot["failures"] += row.get("outcome") == "failure"
    out = list(acc.values())
    for slot in out:
        slot["failure_rate"] = round(slot["failures"] / slot["runs"], 3) if slot["runs"] else 0.0
    out.sort(key=lambda r: (-r["failures"], -r["failure_rate"], r["agent"]))
    return out


def retry_burn_over_time(views: list[RunView], width_ns: int) -> list[dict[str, Any]]:
    """Attempts beyond the first per time bucket (by run start)."""
    acc: dict[int, int] = {}
    for view in views:
        bucket = view.start_ns // width_ns * width_ns
        acc[bucket] = acc.get(bucket, 0) + attempts_beyond_first(view)
    return [{"bucket_ns": b, "retries": n} for b, n in sorted(acc.items())]


def findings_by_kind(findings: list[Finding]) -> list[dict[str, Any]]:
    """Count, wasted tokens and wasted seconds per finding kind."""
    acc: dict[str, dict[str, Any]] = {}
    for f in findings:
        slot = acc.setdefault(
            f.kind, {"kind": f.kind, "findings": 0, "wasted_tokens": 0, "wasted_s": 0.0}
        )
        slot["findings"] += 1
        slot["wasted_tokens"] += f.wasted_tokens or 0
        slot["wasted_s"] += f.wasted_seconds or 0.0
    return sorted(acc.values(), key=lambda r: (-r["findings"], r["kind"]))


def findings_over_time(findings: list[Finding], width_ns: int) -> list[dict[str, Any]]:
    """Count per (bucket, kind) for findings that carry a time."""
    acc: dict[tuple[int, str], int] = {}
    for f in findings:
        if f.time_ns is None:
            continue
        key = (f.time_ns // width_ns * width_ns, f.kind)
        acc[key] = acc.get(key, 0) + 1
    return [{"bucket_ns": b, "kind": k, "findings": n} for (b, k), n in sorted(acc.items())]


def variant_summary(
    rows: list[dict[str, Any]], metrics: dict[str, dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Per variant: runs, success rate, tokens/run, cost/run, p50/p95 latency, replans/run.

    ``metrics`` (trace id -> :func:`run_metrics`) adds replans and retries where known.
    """
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if row.get("run_id"):
            groups.setdefault(str(row.get("variant") or "(none)"), []).append(row)
    out = []
    for variant, items in sorted(groups.items()):
        t = totals(items)
        known = [metrics[r["trace_id"]] for r in items if metrics and r["trace_id"] in metrics]
        out.append(
            {
                "variant": variant,
                "runs": t.runs,
                "success_rate": round(t.success_rate, 3) if t.success_rate is not None else None,
                "tokens_per_run": round(t.tokens / t.runs, 1) if t.runs else 0,
                "cost_per_run_usd": round(t.cost_usd / t.runs, 6) if t.runs else 0,
                "p50_ms": round(t.p50_ms, 2) if t.p50_ms is not None else None,
                "p95_ms": round(t.p95_ms, 2) if t.p95_ms is not None else None,
                "replans_per_run": round(statistics.fmean(m["replans"] for m in known), 2)
                if known
                else None,
                "retries_per_run": round(statistics.fmean(m["retries"] for m in known), 2)
                if known
                else None,
                "sampled_runs": len(known),
            }
        )
    return out

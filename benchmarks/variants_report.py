"""Run every bundled task through every runtime variant with the scripted model and compare.

Reports, per variant: success rate, tokens, LLM calls, cost, wall time, plans and replans on
healthy runs; the extra tokens a one-step replan costs (``needs_replan``: DAG-scoped vs
whole-plan replanning); and wall time by task shape (does parallel DAG execution beat a
sequential executor only when the task is wide?).

Simulated latencies make wall time meaningful: each tool call sleeps ``--tool-latency`` and each
model call ``--model-latency`` + ``--per-token`` x output tokens.

    .venv/bin/python benchmarks/variants_report.py            # Markdown tables on stdout
    .venv/bin/python benchmarks/variants_report.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from planscope_runners import TASKS, VARIANTS, RunResult, ScriptedModel, make_env, run_task
from planscope_runners._faults import applicable_knobs

SHAPES = {"chain": "chain", "diamond": "chain", "wide": "wide", "fanout": "wide"}


def _run(variant: str, task_id: str, knobs: Sequence[str], args: argparse.Namespace) -> RunResult:
    task = TASKS[task_id]
    env = make_env(task.env, latency=args.tool_latency)
    planner = ScriptedModel(
        "scripted-planner", latency=args.model_latency, seconds_per_token=args.per_token
    )
    executor = ScriptedModel(
        "scripted-executor", latency=args.model_latency, seconds_per_token=args.per_token
    )
    try:
        return run_task(
            variant,
            env,
            task,
            knobs,
            planner=planner,
            executor=executor,
            seed=args.seed,
            max_workers=args.workers,
        )
    finally:
        env.close()


def _tokens(r: RunResult) -> int:
    return r.counters.input_tokens + r.counters.output_tokens


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tool-latency", type=float, default=0.005)
    parser.add_argument("--model-latency", type=float, default=0.01)
    parser.add_argument("--per-token", type=float, default=0.00002)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--json", help="also write the raw numbers here")
    args = parser.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    started = time.perf_counter()

    healthy: dict[str, list[RunResult]] = defaultdict(list)
    for variant in variants:
        for task_id in TASKS:
            healthy[variant].append(_run(variant, task_id, (), args))
        print(f"healthy runs done: {variant}", file=sys.stderr)

    replan: dict[str, list[tuple[RunResult, RunResult]]] = defaultdict(list)
    for variant in variants:
        base = {r.task: r for r in healthy[variant]}
        for task_id, task in TASKS.items():
            if "needs_replan" not in applicable_knobs(task, variant, make_env(task.env).tools()):
                continue
            replan[variant].append((base[task_id], _run(variant, task_id, ["needs_replan"], args)))

    rows: dict[str, dict[str, Any]] = {}
    for variant, runs in healthy.items():
        n = len(runs)
        rows[variant] = {
            "runs": n,
            "success_rate": sum(r.success for r in runs) / n,
            "tokens": statistics.mean(_tokens(r) for r in runs),
            "llm_calls": statistics.mean(r.counters.llm_calls for r in runs),
            "cost_usd": statistics.mean(r.counters.cost_usd for r in runs),
            "wall_ms": 1000 * statistics.mean(r.wall_time_s for r in runs),
            "plans": statistics.mean(r.counters.plans for r in runs),
            "replans": statistics.mean(r.counters.replans for r in runs),
        }
        by_shape: dict[str, list[float]] = defaultdict(list)
        for r in runs:
            by_shape[SHAPES[TASKS[r.task].shape]].append(r.wall_time_s * 1000)
        rows[variant]["wall_ms_chain"] = statistics.mean(by_shape["chain"])
        rows[variant]["wall_ms_wide"] = statistics.mean(by_shape["wide"])
        pairs = replan.get(variant, [])
        if pairs:
            rows[variant]["replan_success"] = sum(f.success for _, f in pairs) / len(pairs)
            rows[variant]["replan_extra_tokens"] = statistics.mean(
                _tokens(f) - _tokens(h) for h, f in pairs
            )
            rows[variant]["replan_extra_llm_calls"] = statistics.mean(
                f.counters.llm_calls - h.counters.llm_calls for h, f in pairs
            )

    print("### Healthy runs (31 tasks each)\n")
    print("| variant | success | tokens/run | LLM calls | cost/run | wall ms | plans | replans |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for v, row in rows.items():
        print(
            f"| {v} | {row['success_rate']:.0%} | {row['tokens']:.0f} | {row['llm_calls']:.1f} "
            f"| ${row['cost_usd']:.4f} | {row['wall_ms']:.0f} | {row['plans']:.2f} "
            f"| {row['replans']:.2f} |"
        )
    print("\n### One stale value that a replan fixes (`needs_replan`)\n")
    print("| variant | recovered | extra tokens | extra LLM calls |")
    print("|---|---:|---:|---:|")
    for v, row in rows.items():
        if "replan_extra_tokens" in row:
            print(
                f"| {v} | {row['replan_success']:.0%} | {row['replan_extra_tokens']:.0f} "
                f"| {row['replan_extra_llm_calls']:.1f} |"
            )
    print("\n### Wall time by task shape (ms, mean)\n")
    print("| variant | chain / diamond | wide / fan-out |")
    print("|---|---:|---:|")
    for v, row in rows.items():
        print(f"| {v} | {row['wall_ms_chain']:.0f} | {row['wall_ms_wide']:.0f} |")
    if "adapt" in healthy:
        print("\n### ADaPT: decompositions per task (healthy runs)\n")
        print("| actions in the task | tasks | decomposed | decompositions/run | LLM calls/run |")
        print("|---:|---:|---:|---:|---:|")
        by_size: dict[int, list[RunResult]] = defaultdict(list)
        for r in healthy["adapt"]:
            by_size[len(TASKS[r.task].steps)].append(r)
        for size, runs in sorted(by_size.items()):
            splits = [r.counters.plans - 1 for r in runs]
            print(
                f"| {size} | {len(runs)} | {sum(s > 0 for s in splits)} "
                f"| {statistics.mean(splits):.2f} "
                f"| {statistics.mean(r.counters.llm_calls for r in runs):.1f} |"
            )
    print(
        f"\n(tool latency {args.tool_latency * 1000:.0f} ms, model latency "
        f"{args.model_latency * 1000:.0f} ms + {args.per_token * 1e6:.0f} µs/token, "
        f"{args.workers} DAG workers; {time.perf_counter() - started:.0f} s)"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""CPU time of one alert evaluation (a ``run``-scope retry-budget rule) over a store that
``query_latency.py`` filled, with the framework traces' bindings uncached, cached cold (a new
``BindingCache``) and cached warm (one the rule filled before), alternating, median of 3.

    .venv/bin/python benchmarks/alert_binding_cpu.py --workdir /tmp/bc-ql
"""

from __future__ import annotations

import argparse
import statistics
import time

from planscope_analyzer.alerts import evaluate_rule, parse_rule
from planscope_collector.runmodel import BindingCache
from planscope_collector.storage import open_store


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workdir", required=True, help="query_latency.py's --workdir")
    p.add_argument("--project", default="bench")
    args = p.parse_args()
    store = open_store(f"chdb://{args.workdir}/data/store")
    for window in ("1h", "1d", "7d"):
        budget = {"max_attempts_per_run": 10}
        rule = parse_rule(
            {"kind": "retry_budget", "scope": "run", "window": window, "budget": budget}
        )
        warm = BindingCache()
        evaluate_rule(rule, args.project, store.query, bindings=warm)
        cpu: dict[str, list[float]] = {"uncached": [], "cold": [], "warm": []}
        for _ in range(3):
            for mode, cache in (("uncached", None), ("cold", BindingCache()), ("warm", warm)):
                started = time.process_time()
                evaluate_rule(rule, args.project, store.query, bindings=cache)
                cpu[mode].append((time.process_time() - started) * 1000)
        medians = ", ".join(f"{m} {statistics.median(v):,.0f}" for m, v in cpu.items())
        print(f"window {window}: CPU ms {medians}")


if __name__ == "__main__":
    main()

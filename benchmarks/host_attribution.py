"""Failure attribution on the host variant's labelled faults, next to the baselines.

A host suite (one fault per run) goes through a real collector; for every failed run whose
label names who to blame (``misroute``: the host agent, ``app_tool_failure``: the application
agent), the stored trace is rebuilt into a conversation (``conversation_from_trace``, where a
hand-off is the host's dispatch turn) and attributed by the shipped default and by each
baseline. Agent accuracy only (the label's step is a plan step, the methods answer a turn).

    .venv/bin/python benchmarks/host_attribution.py [seed] [runs]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from planscope_analyzer.attribution import BASELINES, attribute, conversation_from_trace
from planscope_collector import BackgroundServer, CollectorSettings
from planscope_runners import load_labels


def main(seed: int = 11, runs: int = 60) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="ps-host-attr-"))
    settings = CollectorSettings(data_dir=tmp / "data", port=0, flush_interval=0.05)
    with BackgroundServer(settings) as server:
        subprocess.run(
            [
                *(sys.executable, "-m", "planscope", "suite", "--runs", str(runs)),
                *("--fault-rate", "1", "--seed", str(seed), "--variants", "host"),
                *("--collector", server.url, "--labels", str(tmp / "labels.jsonl"), "--quiet"),
            ],
            check=True,
            capture_output=True,
        )
        labels = [
            label
            for label in load_labels(tmp / "labels.jsonl")
            if label["blame"] and label["outcome"] == "failure"
        ]
        hits = {"default": 0, **dict.fromkeys(BASELINES, 0)}
        by_cause: dict[str, list[int]] = {}
        for label in labels:
            trace: dict[str, object] = {}
            for _ in range(100):  # until the run's spans are stored
                r = httpx.get(f"{server.url}/api/traces/{label['trace_id']}")
                if r.status_code == 200 and any(
                    s["planscope_kind"] == "run" for s in r.json()["spans"]
                ):
                    trace = r.json()
                    break
                time.sleep(0.1)
            conv = conversation_from_trace(trace)
            want = label["blame"]["component"]
            ok = attribute(conv).component == want
            hits["default"] += ok
            cause = by_cause.setdefault(label["blame"]["cause"], [0, 0])
            cause[0] += ok
            cause[1] += 1
            for name, baseline in BASELINES.items():
                picked = baseline(conv)
                hits[name] += picked is not None and picked[0] == want
    n = len(labels)
    print(f"seed {seed}, {runs} host runs: {n} failed runs with a blame label")
    for name, hit in hits.items():
        print(f"  {name:24s} agent accuracy {hit}/{n} ({hit / max(n, 1):.0%})")
    print("  default by cause: " + ", ".join(f"{c} {h}/{t}" for c, (h, t) in by_cause.items()))


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))

"""Collector memory through the amplification cases of issue #12 (target: peak RSS <= 1 GiB).

``planscope serve`` runs as a subprocess on a fresh data dir; each case is sent once, and the
server's peak resident set (``VmHWM`` in ``/proc/<pid>/status``) and current RSS are read after
each. The cases are the issue's, plus the largest bodies the limits still accept:

- 30 MB of ``{}`` in OTLP/JSON (a ~30 KB gzip): refused before decoding (413);
- a 1 MiB resource attribute on 2,100 spans (a ~70 KB gzip protobuf): refused (413);
- a gzip bomb (80 MiB of zeros, ~80 KB): refused while inflating (413);
- JSON nested 100,000 deep: refused (400);
- OTLP/JSON just under ``max_json_values`` (about 1.9 million values, ~40 MB): accepted;
- a 16 MiB protobuf request of 8,000 spans with 2 KB attributes: accepted.

The server has to store the accepted ones too, so the figure includes the writer.

    .venv/bin/python benchmarks/amplification_rss.py [--json out.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import machine_facts, print_table, write_json
from collector_ingest import _free_port, readyz, start_server, stop_server, wait_started

from tests.collector._otlp_factory import make_request, make_span, to_otlp_json

PB = "application/x-protobuf"
JS = "application/json"


def _status(pid: int) -> dict[str, int]:
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                out[key] = int(value.split()[0]) * 1024
    return out


def cases() -> list[tuple[str, bytes, dict[str, str]]]:
    empties = b'{"resourceSpans":[' + b",".join([b"{}"] * 15_000_000) + b"]}"
    amplified = make_request([make_span() for _ in range(2100)], resource={"blob": "x" * (1 << 20)})
    deep = b'{"resourceSpans":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    one = json.loads(to_otlp_json(make_request([make_span(attributes={"a": 1, "b": "x"})])))
    span = one["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    # ~25 values per span in this shape; stay under the 2,000,000-value bound
    spans = []
    for i in range(75_000):
        copy = dict(span)
        copy["spanId"] = f"{i + 1:016x}"
        spans.append(copy)
    one["resourceSpans"][0]["scopeSpans"][0]["spans"] = spans
    big_json = json.dumps(one).encode()
    wide = make_request(
        [make_span(attributes={"payload": "y" * 2000}) for _ in range(8000)]
    ).SerializeToString()
    gz_js = {"Content-Type": JS, "Content-Encoding": "gzip"}
    gz_pb = {"Content-Type": PB, "Content-Encoding": "gzip"}
    return [
        ("30 MB of {} (gzip JSON)", gzip.compress(empties), gz_js),
        ("1 MiB resource x 2,100 spans", gzip.compress(amplified.SerializeToString()), gz_pb),
        ("gzip bomb 80 MiB", gzip.compress(b"\0" * (80 << 20)), gz_pb),
        ("JSON nested 100,000 deep", gzip.compress(deep), gz_js),
        (f"OTLP/JSON {len(big_json) >> 20} MiB, 75k spans", gzip.compress(big_json), gz_js),
        (f"protobuf {len(wide) >> 20} MiB, 8k spans", wide, {"Content-Type": PB}),
    ]


def main() -> None:
    import httpx

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json")
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="planscope-rss-"))
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start_server(data / "data", port, data / "server.log")
    rows: list[list[Any]] = []
    try:
        wait_started(url, proc)
        base = _status(proc.pid)
        rows.append(["(idle after start)", "", "", "", base["VmRSS"] >> 20, base["VmHWM"] >> 20])
        for label, body, headers in cases():
            started = time.monotonic()
            r = httpx.post(f"{url}/v1/traces", content=body, headers=headers, timeout=300)
            seconds = time.monotonic() - started
            deadline = time.monotonic() + 300
            while (readyz(url) or {}).get("spool_pending_bytes") and time.monotonic() < deadline:
                time.sleep(0.2)  # stored (the writer's memory counts too)
            mem = _status(proc.pid)
            rows.append(
                [label, len(body) >> 10, r.status_code, round(seconds, 2),
                 mem["VmRSS"] >> 20, mem["VmHWM"] >> 20]
            )  # fmt: skip
        # Many large bodies at once: decoding slots (max_concurrent_decodes) bound the memory.
        one = json.loads(to_otlp_json(make_request([make_span(attributes={"a": "x" * 50})])))
        span = one["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
        bodies = []
        for n in range(8):
            copy = json.loads(json.dumps(one))
            copy["resourceSpans"][0]["scopeSpans"][0]["spans"] = [
                {**span, "spanId": f"{n:04x}{i + 1:012x}"} for i in range(20_000)
            ]
            bodies.append(gzip.compress(json.dumps(copy).encode()))
        started = time.monotonic()
        with ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(lambda b: httpx.post(
                f"{url}/v1/traces", content=b, headers={"Content-Type": JS,
                "Content-Encoding": "gzip"}, timeout=600).status_code, bodies))  # fmt: skip
        seconds = time.monotonic() - started
        while (readyz(url) or {}).get("spool_pending_bytes"):
            time.sleep(0.2)
        mem = _status(proc.pid)
        rows.append(
            ["8 concurrent OTLP/JSON, 20k spans each", sum(map(len, bodies)) >> 10,
             "/".join(sorted(set(map(str, statuses)))), round(seconds, 2),
             mem["VmRSS"] >> 20, mem["VmHWM"] >> 20]
        )  # fmt: skip
        state = readyz(url) or {}
    finally:
        stop_server(proc)
    print_table(
        "Collector memory through the amplification cases (one server, cases in order)",
        ["case", "body KiB", "status", "answer s", "RSS MiB after", "peak RSS MiB"],
        rows,
    )
    print(f"spans written: {state.get('spans_written')}, quarantined: "
          f"{state.get('requests_quarantined')}")  # fmt: skip
    write_json(args.json, {"machine": machine_facts(), "rows": rows, "state": state})
    if os.environ.get("KEEP_DATA") != "1":
        import shutil

        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()

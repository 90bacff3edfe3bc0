"""Collector CPU and freshness at a trickle: idle, 1, 10, 100 spans/s.

1. ``planscope serve`` (subprocess, embedded chDB, extensions on, default settings) on a fresh
   data dir; 10 s to settle after ``/readyz`` says ready.
2. CPU window (``--seconds``): a thread POSTs OTLP/protobuf at ``rate`` spans/s, one span per
   request up to 10 requests/s, then 10 requests/s of ``rate / 10`` spans (an SDK exporting
   often; a ``BatchSpanProcessor`` with its 5 s delay sends fewer, larger requests). The server's
   utime + stime (its whole process tree, from /proc) over the window, as % of one core. Nothing
   else touches the server meanwhile.
3. Freshness (``--probes``, the same background rate): t0 = the 200 of a request holding a new
   trace (the spans are fsync'd in the spool), t1 = ``GET /api/traces/{id}`` first finds it
   (polled every 20 ms).

With ``--compare-with REV`` the server of that git revision runs too, per rate, alternating which
goes first.

    .venv/bin/python benchmarks/trickle_cpu.py [--rates 0 1 10 100] [--seconds 60] [--probes 5]
        [--compare-with main] [--json out.json]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx
from _common import machine_facts, median, print_table, write_json
from collector_ingest import (
    _free_port,
    cpu_seconds,
    export_source,
    start_server,
    stop_server,
    wait_started,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

HEADERS = {"Content-Type": "application/x-protobuf"}
SETTLE_SECONDS = 10.0


def body(spans: int) -> tuple[str, bytes]:
    """A request of ``spans`` LLM-call spans of one new trace: (trace id hex, protobuf)."""
    trace = os.urandom(16)
    now = time.time_ns()
    rs = ResourceSpans()
    rs.resource.attributes.append(KeyValue(key="service.name", value=AnyValue(string_value="t")))
    scope = ScopeSpans()
    for _ in range(spans):
        s = Span(trace_id=trace, span_id=os.urandom(8), name="chat bench-model",
                 start_time_unix_nano=now, end_time_unix_nano=now + 1_000_000)  # fmt: skip
        s.attributes.extend([
            KeyValue(key="gen_ai.operation.name", value=AnyValue(string_value="chat")),
            KeyValue(key="gen_ai.usage.input_tokens", value=AnyValue(int_value=120)),
        ])  # fmt: skip
        scope.spans.append(s)
    rs.scope_spans.append(scope)
    return trace.hex(), ExportTraceServiceRequest(resource_spans=[rs]).SerializeToString()


def trickle(url: str, rate: float, stop: threading.Event) -> None:
    """POST ``rate`` spans/s until ``stop`` (at most 10 requests/s)."""
    if rate <= 0:
        return
    per_second = min(rate, 10.0)
    spans = max(1, round(rate / per_second))
    with httpx.Client(base_url=url, timeout=30) as client:
        next_at = time.monotonic()
        while not stop.is_set():
            r = client.post("/v1/traces", content=body(spans)[1], headers=HEADERS)
            r.raise_for_status()
            next_at += 1 / per_second
            stop.wait(max(0.0, next_at - time.monotonic()))


def measure(source: Path | None, rate: float, seconds: float, probes: int) -> dict[str, Any]:
    data_dir = Path(tempfile.mkdtemp(prefix="ps-trickle-"))
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start_server(data_dir, port, data_dir / "server.log", source)
    stop = threading.Event()
    try:
        wait_started(url, proc)
        time.sleep(SETTLE_SECONDS)
        load = threading.Thread(target=trickle, args=(url, rate, stop), daemon=True)
        load.start()
        time.sleep(min(2.0, seconds / 10))  # the first inserts (table caches) are not steady state
        before, t0 = sum(cpu_seconds(proc.pid).values()), time.monotonic()
        time.sleep(seconds)
        cpu = sum(cpu_seconds(proc.pid).values()) - before
        wall = time.monotonic() - t0
        fresh: list[float] = []
        with httpx.Client(base_url=url, timeout=30) as client:
            for _ in range(probes):
                trace, request = body(1)
                client.post("/v1/traces", content=request, headers=HEADERS).raise_for_status()
                sent = time.monotonic()
                while client.get(f"/api/traces/{trace}").status_code != 200:
                    if time.monotonic() - sent > 60:
                        raise RuntimeError(f"trace {trace} not queryable after 60 s")
                    time.sleep(0.02)
                fresh.append(time.monotonic() - sent)
                time.sleep(0.5)
        stop.set()
        load.join()
    finally:
        stop.set()
        stop_server(proc)
        shutil.rmtree(data_dir, ignore_errors=True)
    return {
        "rate": rate,
        "cpu_pct": 100 * cpu / wall,
        "freshness_median_s": median(fresh) if fresh else None,
        "freshness_max_s": max(fresh) if fresh else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", type=float, nargs="+", default=[0, 1, 10, 100])
    parser.add_argument("--seconds", type=float, default=60.0, help="CPU window per rate")
    parser.add_argument("--probes", type=int, default=5, help="freshness samples per rate")
    parser.add_argument("--compare-with", help="also run the server of this git revision")
    parser.add_argument("--json")
    args = parser.parse_args()
    sources: dict[str, Path | None] = {"this checkout": None}
    if args.compare_with:
        sources[args.compare_with] = export_source(args.compare_with)
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in sources}
    for i, rate in enumerate(args.rates):
        order = list(sources) if i % 2 == 0 else list(reversed(sources))
        for name in order:
            results[name].append(measure(sources[name], rate, args.seconds, args.probes))
            print(name, results[name][-1], os.getloadavg(), flush=True)
    rows = []
    for rate_index, rate in enumerate(args.rates):
        for name in sources:
            r = results[name][rate_index]
            rows.append([rate, name, r["cpu_pct"], r["freshness_median_s"], r["freshness_max_s"]])
    print_table(
        f"Collector CPU at a trickle ({args.seconds:.0f} s per rate, {args.probes} probes)",
        ["spans/s", "server", "CPU % of a core", "freshness median s", "freshness max s"],
        rows,
    )
    print(f"load average {os.getloadavg()}")
    write_json(args.json, {"machine": machine_facts(), "args": vars(args), "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Alert freshness: from the span that exceeds a budget reaching the collector to the webhook.

1. A real collector (uvicorn, embedded chDB, default flush interval 2 s, alert interval 1 s)
   and a real webhook receiver (http.server) on loopback, in this process.
2. ``--rules`` retry-budget rules (scope step, ``max_attempts_per_step=3``, one step id each,
   window 3 s, no cooldown), so every pass evaluates them all.
3. Background load: a thread POSTs OTLP/protobuf batches of healthy runs (run span + 8 step
   attempts + 8 LLM calls + 8 tool calls per trace) at ``--load`` spans/s.
4. Each sample: wait until rule k is resolved, POST one trace whose step ``bench-k`` has 4
   attempts; t0 = the collector's 2xx (the span is in its fsync'd spool); t1 = the receiver gets
   the firing message of rule k. Latency = t1 - t0.

    .venv/bin/python benchmarks/alert_freshness.py [--samples 40] [--load 2000] [--json out.json]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.alerts.conftest

import httpx
from _common import machine_facts, median, percentile, print_table, write_json
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from planscope import semconv as A


def _kv(key: str, value: Any) -> KeyValue:
    v = AnyValue()
    if isinstance(value, int):
        v.int_value = value
    else:
        v.string_value = str(value)
    return KeyValue(key=key, value=v)


def _span(trace: bytes, parent: bytes, name: str, attrs: dict[str, Any]) -> Span:
    now = time.time_ns()
    s = Span(trace_id=trace, span_id=os.urandom(8), parent_span_id=parent, name=name,
             start_time_unix_nano=now, end_time_unix_nano=now + 1_000_000)  # fmt: skip
    s.attributes.extend(_kv(k, v) for k, v in attrs.items())
    return s


def trace_spans(step_ids: list[str], attempts: int = 1) -> list[Span]:
    """One run: a run span and, per step, ``attempts`` attempts each with an LLM and a tool call."""
    trace = os.urandom(16)
    run_id = trace.hex()
    run = _span(trace, b"", "invoke_agent bench", {
        A.SPAN_KIND: A.KIND_RUN, A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT,
        A.GEN_AI_AGENT_NAME: "bench-agent", A.RUN_ID: run_id,
    })  # fmt: skip
    spans = [run]
    for step_id in step_ids:
        for attempt in range(1, attempts + 1):
            s = _span(trace, run.span_id, f"execute_step {step_id}", {
                A.SPAN_KIND: A.KIND_STEP, A.RUN_ID: run_id, A.STEP_ID: step_id,
                A.STEP_ATTEMPT: attempt, A.PLAN_ID: "p", A.PLAN_VERSION: 1,
                A.STEP_STATUS: A.STATUS_OK,
            })  # fmt: skip
            spans.append(s)
            spans.append(_span(trace, s.span_id, "chat m", {
                A.SPAN_KIND: A.KIND_LLM, A.RUN_ID: run_id, A.STEP_ID: step_id,
                A.GEN_AI_REQUEST_MODEL: "m", A.GEN_AI_USAGE_INPUT_TOKENS: 300,
                A.GEN_AI_USAGE_OUTPUT_TOKENS: 50,
            }))  # fmt: skip
            spans.append(_span(trace, s.span_id, "execute_tool t", {
                A.SPAN_KIND: A.KIND_TOOL, A.RUN_ID: run_id, A.STEP_ID: step_id,
                A.GEN_AI_TOOL_NAME: "t",
            }))  # fmt: skip
    return spans


HEALTHY_STEPS = [f"ok{i}" for i in range(8)]  # 25 spans per healthy trace


def body(spans: list[Span]) -> bytes:
    rs = ResourceSpans()
    rs.resource.attributes.append(_kv(A.SERVICE_NAME, "bench"))
    ss = ScopeSpans()
    ss.spans.extend(spans)
    rs.scope_spans.append(ss)
    return ExportTraceServiceRequest(resource_spans=[rs]).SerializeToString()


HEADERS = {"Content-Type": "application/x-protobuf"}


def load_thread(url: str, rate: float, stop: threading.Event, sent: list[int]) -> None:
    """POST healthy traces at ``rate`` spans/s (batches every 0.1 s)."""
    client = httpx.Client(timeout=30)
    per_tick = rate / 10
    carry = 0.0
    while not stop.is_set():
        tick = time.monotonic()
        carry += per_tick
        spans: list[Span] = []
        while carry >= 25:  # one healthy trace = 25 spans
            spans.extend(trace_spans(HEALTHY_STEPS))
            carry -= 25
        if spans:
            client.post(url + "/v1/traces", content=body(spans), headers=HEADERS)
            sent[0] += len(spans)
        stop.wait(max(0.0, 0.1 - (time.monotonic() - tick)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--rules", type=int, default=10)
    parser.add_argument("--load", type=float, default=2000.0, help="background spans/s")
    parser.add_argument("--flush-interval", type=float, default=2.0)
    parser.add_argument("--json")
    args = parser.parse_args()

    from planscope_collector import BackgroundServer, CollectorSettings

    from tests.alerts.conftest import Receiver  # the tests' real http.server receiver

    receiver = Receiver(0).start()
    data_dir = Path(tempfile.mkdtemp(prefix="planscope-alerts-bench-"))
    settings = CollectorSettings(data_dir=data_dir, port=0, flush_interval=args.flush_interval)
    arrivals: dict[str, float] = {}

    class Timed(list[Any]):
        def append(self, message: Any) -> None:
            super().append(message)
            data = message.json()
            if data["state"] == "firing":
                arrivals[data["event_id"]] = time.monotonic()

    receiver.messages = Timed()
    latencies: list[float] = []
    stop = threading.Event()
    sent = [0]
    os.environ.setdefault("PLANSCOPE_ALERTS_ALLOW_TARGETS", "127.0.0.1")  # the receiver
    with BackgroundServer(settings) as server:
        client = httpx.Client(base_url=server.url, timeout=30)
        for k in range(args.rules):
            rule = {"id": f"bench-{k}", "kind": "retry_budget", "scope": "step",
                    "step_id": f"bench-{k}", "budget": {"max_attempts_per_step": 3},
                    "window": "3s", "cooldown": "0s",
                    "notify": [{"type": "webhook", "url": receiver.url}]}  # fmt: skip
            r = client.post("/api/alerts/rules", json=rule)
            assert r.status_code == 201, r.text
        loader = threading.Thread(target=load_thread, args=(server.url, args.load, stop, sent))
        loader.start()
        time.sleep(2.0)  # load reaches steady state
        started = time.monotonic()
        for i in range(args.samples):
            k = i % args.rules
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                states = client.get("/api/alerts/state").json()["rules"]
                if next(s for s in states if s["rule_id"] == f"bench-{k}")["state"] == "resolved":
                    break
                time.sleep(0.1)
            before = set(arrivals)
            request = body(trace_spans([f"bench-{k}"], attempts=4))
            r = client.post("/v1/traces", content=request, headers=HEADERS)
            t0 = time.monotonic()
            assert r.status_code == 200, r.text
            while time.monotonic() - t0 < 30:
                new = set(arrivals) - before
                if new:
                    latencies.append(arrivals[new.pop()] - t0)
                    break
                time.sleep(0.005)
            else:
                print(f"sample {i}: no webhook within 30 s", file=sys.stderr)
        elapsed = time.monotonic() - started
        stop.set()
        loader.join()
        state = client.get("/api/alerts/state").json()["engine"]
    receiver.stop()

    load_rate = sent[0] / (elapsed + 2.0)
    rows = [[len(latencies), f"{median(latencies):.3f}", f"{percentile(latencies, 95):.3f}",
             f"{max(latencies):.3f}", f"{load_rate:,.0f}", args.rules,
             state["last_pass_seconds"]]]  # fmt: skip
    print_table(
        "Alert freshness: span accepted -> webhook delivered (seconds)",
        ["samples", "p50", "p95", "max", "load spans/s", "rules", "last pass s"],
        rows,
    )
    write_json(args.json, {
        "machine": machine_facts(), "samples": len(latencies), "p50": median(latencies),
        "p95": percentile(latencies, 95), "max": max(latencies), "latencies": latencies,
        "load_spans_per_s": load_rate, "rules": args.rules,
        "flush_interval": args.flush_interval, "engine": state,
    })  # fmt: skip


if __name__ == "__main__":
    main()

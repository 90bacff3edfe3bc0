"""Sustained OTLP/HTTP protobuf ingest, end to end into the embedded chDB store.

1. Raw floor (this process, one core): ``ExportTraceServiceRequest.FromString`` +
   ``planscope_collector._otlp.flatten`` over the same bodies, spans/s.
2. ``planscope serve`` as a subprocess on a fresh data dir.
3. A separate load-generating process pre-encodes the workload (~28 spans per trace: run, plan
   with an 8-step plan JSON, planner LLM call, step attempts with tool and LLM calls, one failed
   attempt; ~500-byte input/output attributes; ~1000 spans per request, unique trace ids per
   request) and, once told to go, POSTs it over a few keep-alive httpx connections.
4. The clock stops when ``/readyz`` reports an empty spool and every span written; the server is
   stopped and the rows are counted in a fresh process through ``storage.open_store``.

Reports spans/s end to end (first send -> all persisted), spans/s accepted (first send -> last
200), POST latency p50/p99 (a 200 is sent only after fsync), and the raw floor.

    .venv/bin/python benchmarks/collector_ingest.py [--quick] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, machine_facts, median, percentile, print_table, write_json

# issue #16's end-to-end targets (persisted and queryable, load generator on the same machine)
TARGET_SPANS_PER_S = {"planscope": 30_000, "openinference": 25_000}
WITH_EXTENSIONS = True  # --without-extensions: measure ingest without the analyzer/alerts
SPOOL_MAX_BYTES: int | None = None  # --spool-max-bytes: a small cap keeps the spool full
ACCEPT_ONLY = False  # --accept-only: the request path's CPU, the writer held off until the end
SPANS_PER_TRACE = 28
PAYLOAD_BYTES = 500


# --- workload -------------------------------------------------------------------------------------
def _text(seed: int, size: int = PAYLOAD_BYTES) -> str:
    words = [
        "invoice",
        "customer",
        "refund",
        "ledger",
        "balance",
        "account",
        "payment",
        "schedule",
        "approve",
        "reconcile",
        "statement",
        "vendor",
        "tax",
        "currency",
        "discount",
        "overdue",
        "reminder",
        "escalate",
        "policy",
        "audit",
    ]
    out: list[str] = []
    n = 0
    i = seed
    while n < size:
        w = words[i % len(words)]
        out.append(w)
        n += len(w) + 1
        i = i * 1103515245 + 12345 & 0x7FFFFFFF
    return json.dumps({"text": " ".join(out)[: size - 12]})


def build_template(traces: int, service: str = "bench-agent") -> Any:
    """One ExportTraceServiceRequest of ``traces`` traces of 28 spans (ids patched per body)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status
    from planscope import semconv as A

    def kv(key: str, value: Any) -> KeyValue:
        v = AnyValue()
        if isinstance(value, bool):
            v.bool_value = value
        elif isinstance(value, int):
            v.int_value = value
        elif isinstance(value, float):
            v.double_value = value
        else:
            v.string_value = str(value)
        return KeyValue(key=key, value=v)

    now = time.time_ns()
    counter = [0]

    def span(
        trace_id: bytes,
        parent: bytes,
        name: str,
        start: int,
        duration: int,
        attrs: dict[str, Any],
        *,
        kind: Any = Span.SPAN_KIND_INTERNAL,
        error: str | None = None,
    ) -> Span:
        counter[0] += 1
        s = Span(
            trace_id=trace_id,
            span_id=counter[0].to_bytes(8, "big"),
            parent_span_id=parent,
            name=name,
            kind=kind,
            start_time_unix_nano=start,
            end_time_unix_nano=start + duration,
            status=Status(
                code=Status.STATUS_CODE_ERROR if error else Status.STATUS_CODE_UNSET,
                message=error or "",
            ),
        )
        s.attributes.extend(kv(k, v) for k, v in attrs.items() if v is not None)
        if error:
            ev = s.events.add()
            ev.time_unix_nano = start + duration
            ev.name = "exception"
            ev.attributes.extend(
                [
                    kv("exception.type", "TimeoutError"),
                    kv("exception.message", error),
                    kv("exception.stacktrace", "Traceback (most recent call last):\n" * 8),
                ]
            )
        return s

    spans: list[Span] = []
    tools = ["http_get", "sql_query", "send_email", "read_file"]
    for t in range(traces):
        tid = (t + 1).to_bytes(16, "big")
        run_id = f"run-{t:08d}"
        base = now + t * 1_000_000
        run = span(
            tid,
            b"",
            "invoke_agent billing-agent",
            base,
            900_000_000,
            {
                A.SPAN_KIND: A.KIND_RUN,
                A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT,
                A.GEN_AI_AGENT_NAME: "billing-agent",
                A.RUN_ID: run_id,
                A.GEN_AI_CONVERSATION_ID: run_id,
                A.RUN_OBJECTIVE: "pay invoice 42 and notify the customer",
                A.RUN_VARIANT: "plan-and-act",
                A.RUN_OUTCOME: A.OUTCOME_SUCCESS,
                A.RUN_BUDGET: '{"max_attempts_per_step":3,"max_replans":2,"enforce":false}',
                A.INPUT: _text(t),
                A.OUTPUT: _text(t + 1),
            },
        )
        steps = [
            {
                "id": f"s{i}",
                "description": f"step {i}: {_text(i, 60)}",
                "executor": f"worker-{i % 2}",
                "tool": tools[i % 4],
                "depends_on": [f"s{i - 1}"] if i else [],
                "requires": [f"key{i}"],
                "produces": [f"key{i + 1}"],
                "irreversible": i == 7,
            }
            for i in range(8)
        ]
        plan = span(
            tid,
            run.span_id,
            "plan billing-agent",
            base + 1_000,
            50_000_000,
            {
                A.SPAN_KIND: A.KIND_PLAN,
                A.GEN_AI_OPERATION_NAME: A.OP_PLAN,
                A.GEN_AI_AGENT_NAME: "billing-agent",
                A.RUN_ID: run_id,
                A.PLAN_ID: f"plan-{t}",
                A.PLAN_VERSION: 1,
                A.PLAN_STEP_COUNT: 8,
                A.PLAN_JSON: json.dumps({"id": f"plan-{t}", "version": 1, "steps": steps}),
                A.INPUT: _text(t + 2),
            },
        )
        planner_llm = span(
            tid,
            plan.span_id,
            "chat gpt-4o",
            base + 2_000,
            40_000_000,
            {
                A.SPAN_KIND: A.KIND_LLM,
                A.GEN_AI_OPERATION_NAME: A.OP_CHAT,
                A.GEN_AI_REQUEST_MODEL: "gpt-4o",
                A.LLM_ROLE: "planner",
                A.RUN_ID: run_id,
                A.GEN_AI_USAGE_INPUT_TOKENS: 812,
                A.GEN_AI_USAGE_OUTPUT_TOKENS: 402,
                A.LLM_COST_USD: 0.0061,
                A.INPUT: _text(t + 3),
                A.OUTPUT: _text(t + 4),
            },
            kind=Span.SPAN_KIND_CLIENT,
        )
        spans += [run, plan, planner_llm]
        at = base + 60_000_000
        for i in range(8):
            attempts = 2 if i == 3 else 1  # one failed attempt (a step span only), then success
            for attempt in range(1, attempts + 1):
                failed = attempts == 2 and attempt == 1
                step_attrs = {
                    A.SPAN_KIND: A.KIND_STEP,
                    A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_STEP,
                    A.RUN_ID: run_id,
                    A.STEP_ID: f"s{i}",
                    A.STEP_ATTEMPT: attempt,
                    A.STEP_EXECUTOR: f"worker-{i % 2}",
                    A.STEP_DEPTH: 0,
                    A.PLAN_ID: f"plan-{t}",
                    A.PLAN_VERSION: 1,
                    A.STEP_STATUS: A.STATUS_ERROR if failed else A.STATUS_OK,
                    A.STEP_INPUT_HASH: f"{t * 31 + i:016x}",
                    A.STEP_CONTEXT_KEYS: json.dumps([f"key{i}"]),
                    A.STEP_CONTEXT_TOKENS: 240 + i,
                    A.INPUT: _text(t * 8 + i),
                    A.OUTPUT: None if failed else _text(t * 8 + i + 1),
                    A.ERROR_TYPE: "TimeoutError" if failed else None,
                    A.STEP_ERROR_FINGERPRINT: "9f1c2d3e4a5b6c7d" if failed else None,
                }
                step = span(
                    tid,
                    run.span_id,
                    f"execute_step s{i}",
                    at,
                    80_000_000,
                    step_attrs,
                    error="TimeoutError: upstream timed out after 30s" if failed else None,
                )
                spans.append(step)
                at += 80_000_000
                if failed:
                    continue
                stamp = {
                    A.RUN_ID: run_id,
                    A.STEP_ID: f"s{i}",
                    A.STEP_ATTEMPT: attempt,
                    A.PLAN_ID: f"plan-{t}",
                    A.PLAN_VERSION: 1,
                }
                llm = span(
                    tid,
                    step.span_id,
                    "chat gpt-4o-mini",
                    at - 70_000_000,
                    30_000_000,
                    {
                        A.SPAN_KIND: A.KIND_LLM,
                        A.GEN_AI_OPERATION_NAME: A.OP_CHAT,
                        A.GEN_AI_REQUEST_MODEL: "gpt-4o-mini",
                        A.GEN_AI_PROVIDER_NAME: "openai",
                        A.LLM_ROLE: "executor",
                        **stamp,
                        A.GEN_AI_USAGE_INPUT_TOKENS: 512,
                        A.GEN_AI_USAGE_OUTPUT_TOKENS: 96,
                        A.LLM_COST_USD: 0.0002,
                        A.INPUT: _text(t + i + 5),
                        A.OUTPUT: _text(t + i + 6),
                    },
                    kind=Span.SPAN_KIND_CLIENT,
                )
                args = _text(t + i + 7)
                result = _text(t + i + 8)
                tool = span(
                    tid,
                    step.span_id,
                    f"execute_tool {tools[i % 4]}",
                    at - 30_000_000,
                    20_000_000,
                    {
                        A.SPAN_KIND: A.KIND_TOOL,
                        A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
                        A.GEN_AI_TOOL_NAME: tools[i % 4],
                        A.TOOL_RESOURCE: f"invoice/{t}",
                        A.TOOL_EFFECT: A.EFFECT_IRREVERSIBLE if i == 7 else A.EFFECT_READ,
                        A.TOOL_ARGS_HASH: f"{t * 17 + i:016x}",
                        **stamp,
                        A.INPUT: args,
                        A.GEN_AI_TOOL_CALL_ARGUMENTS: args,
                        A.OUTPUT: result,
                        A.GEN_AI_TOOL_CALL_RESULT: result,
                    },
                )
                spans += [llm, tool]
    assert len(spans) == traces * SPANS_PER_TRACE, len(spans)
    rs = ResourceSpans()
    rs.resource.attributes.extend([kv("service.name", service), kv("host.name", "bench-host")])
    ss = ScopeSpans()
    ss.scope.name = "planscope"
    ss.scope.version = "0.1.0"
    ss.spans.extend(spans)
    rs.scope_spans.append(ss)
    return ExportTraceServiceRequest(resource_spans=[rs])


WORKLOAD = "planscope"
"""``planscope`` (our SDK's spans) or ``openinference`` (the same traces as OpenInference
instrumentation shapes them: no planscope.*/gen_ai.* attributes; ``--workload``)."""

_OI_KIND = {"run": "CHAIN", "plan": "CHAIN", "step": "AGENT", "tool": "TOOL", "llm": "LLM"}
_OI_RENAME = {
    "gen_ai.usage.input_tokens": "llm.token_count.prompt",
    "gen_ai.usage.output_tokens": "llm.token_count.completion",
    "gen_ai.request.model": "llm.model_name",
    "gen_ai.tool.name": "tool.name",
    "gen_ai.tool.call.arguments": "tool.parameters",
    "planscope.input": "input.value",
    "planscope.output": "output.value",
    "gen_ai.agent.name": "agent.name",
}


def as_openinference(template: Any) -> None:
    """Rewrite the template's spans in place as OpenInference shapes them: the kind as
    ``openinference.span.kind``, usage/model/tool/payload under OpenInference's names, every
    other planscope.* / gen_ai.* attribute dropped (same span count and similar size)."""
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

    for s in template.resource_spans[0].scope_spans[0].spans:
        attrs = {kv.key: kv.value for kv in s.attributes}
        kind = attrs.get("planscope.span.kind")
        out = [KeyValue(key="openinference.span.kind", value=AnyValue(string_value=_OI_KIND.get(
            kind.string_value if kind is not None else "", "CHAIN")))]  # fmt: skip
        out += [KeyValue(key=_OI_RENAME[k], value=v) for k, v in attrs.items() if k in _OI_RENAME]
        if kind is not None and kind.string_value == "llm":
            out.append(KeyValue(key="llm.provider", value=AnyValue(string_value="openai")))
        del s.attributes[:]
        s.attributes.extend(out)


def encode_bodies(n_bodies: int, traces_per_body: int, salt: int) -> list[bytes]:
    """``n_bodies`` serialized requests, each with fresh trace ids (so none is a duplicate)."""
    template = build_template(traces_per_body)
    if WORKLOAD == "openinference":
        as_openinference(template)
    spans = template.resource_spans[0].scope_spans[0].spans
    bodies: list[bytes] = []
    for b in range(n_bodies):
        prefix = salt.to_bytes(4, "big") + b.to_bytes(4, "big")
        for s in spans:
            s.trace_id = prefix + s.trace_id[8:]
        bodies.append(template.SerializeToString())
    return bodies


# --- load generator (separate process) ----------------------------------------------------------
def loadgen(
    url: str,
    n_bodies: int,
    traces_per_body: int,
    concurrency: int,
    salt: int,
    ready: Any,
    go: Any,
    results: Any,
) -> None:
    import httpx

    bodies = encode_bodies(n_bodies, traces_per_body, salt)
    next_index = [0]
    lock = threading.Lock()
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    retries = [0]
    headers = {"Content-Type": "application/x-protobuf"}

    def worker() -> None:
        with httpx.Client(timeout=120.0) as client:
            while True:
                with lock:
                    i = next_index[0]
                    next_index[0] += 1
                if i >= len(bodies):
                    return
                while True:
                    t0 = time.monotonic()
                    r = client.post(url, content=bodies[i], headers=headers)
                    dt = time.monotonic() - t0
                    with lock:
                        statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
                        if r.status_code == 200:
                            latencies.append(dt)
                    if r.status_code == 200:
                        break
                    if r.status_code in (429, 503):
                        retries[0] += 1
                        time.sleep(float(r.headers.get("retry-after", "1")))
                        continue
                    raise RuntimeError(f"POST {i}: {r.status_code} {r.text[:200]}")

    ready.set()
    go.wait()
    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    t_first = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    t_last = time.monotonic()
    results.put(
        {
            "t_first_send": t_first,
            "t_last_ack": t_last,
            "latencies": latencies,
            "statuses": statuses,
            "retries": retries[0],
            "bytes": sum(len(b) for b in bodies),
            "posts": len(bodies),
        }
    )


# --- raw floor ----------------------------------------------------------------------------------
def raw_floor(bodies: list[bytes], repeats: int) -> dict[str, float]:
    """spans/s of FromString + flatten on this process's single thread (median over repeats)."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from planscope_collector._otlp import SpanColumns, span_count

    spans_per_body = span_count(ExportTraceServiceRequest.FromString(bodies[0]))
    parse_rates: list[float] = []
    both_rates: list[float] = []
    for _ in range(repeats):
        for body in bodies:
            t0 = time.perf_counter()
            req = ExportTraceServiceRequest.FromString(body)
            t1 = time.perf_counter()
            cols = SpanColumns()
            cols.add(req, None)
            t2 = time.perf_counter()
            assert len(cols) == spans_per_body
            parse_rates.append(spans_per_body / (t1 - t0))
            both_rates.append(spans_per_body / (t2 - t0))
    return {
        "parse_spans_per_s": median(parse_rates),
        "parse_flatten_spans_per_s": median(both_rates),
        "spans_per_body": spans_per_body,
        "body_bytes": len(bodies[0]),
    }


# --- writer stage breakdown (separate process: chDB opens one data dir per process) -------------
def writer_breakdown(bodies_per_segment: int, traces_per_body: int, repeats: int, out: Any) -> None:
    """Time each stage the collector's writer runs per spool segment, on one thread.

    FromString + ``SpanColumns.add`` with the GC paused, ``to_ipc()``, then
    ``Store.insert_spans`` (one ArrowStream block) into ``otel_traces``; the same block also into
    a ``Null`` copy (client + chDB decoding only) and into a MergeTree copy without views or map
    bloom filters. Fresh trace ids each repetition.
    """
    import gc

    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from planscope_collector._otlp import SpanColumns
    from planscope_collector.storage import open_store

    data_dir = Path(tempfile.mkdtemp(prefix="planscope-bench-writer-"))
    try:
        store = open_store(f"chdb://{data_dir}")
        store.migrate()
        # Copies of otel_traces under other names, reached by pointing a second Store at a
        # database that holds only them (insert_spans always targets `otel_traces`).
        for db, engine in (("bench_null", "Null"), ("bench_plain", "MergeTree ORDER BY tuple()")):
            store.command(f"CREATE DATABASE IF NOT EXISTS {db}")
            store.command(
                f"CREATE TABLE {db}.otel_traces AS {store.database}.otel_traces ENGINE = {engine}"
            )
        null_store = open_store(f"chdb://{data_dir}", database="bench_null")
        plain_store = open_store(f"chdb://{data_dir}", database="bench_plain")
        stages: dict[str, list[float]] = {
            k: []
            for k in (
                "columns_flatten",
                "columns_to_arrow",
                "columns_insert_null",
                "columns_insert_plain",
                "columns_insert_otel_traces",
            )
        }
        n_spans = 0

        def columns_path(bodies: list[bytes], token: str) -> tuple[float, ...]:
            t0 = time.perf_counter()
            cols = SpanColumns()
            gc.disable()
            try:
                for body in bodies:
                    cols.add(ExportTraceServiceRequest.FromString(body), None)
            finally:
                gc.enable()
            t1 = time.perf_counter()
            body = cols.to_ipc()
            t2 = time.perf_counter()
            null_store.insert_spans(body, dedup_token=token)
            t3 = time.perf_counter()
            plain_store.insert_spans(body, dedup_token=token)
            t4 = time.perf_counter()
            store.insert_spans(body, dedup_token=token)
            t5 = time.perf_counter()
            return t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4

        for rep in range(repeats + 1):  # the first repetition warms up and is dropped
            col_bodies = encode_bodies(bodies_per_segment, traces_per_body, salt=0xC000 + rep)
            n_spans = traces_per_body * SPANS_PER_TRACE * bodies_per_segment
            c = columns_path(col_bodies, f"cols:{rep}")
            if rep:
                for key, value in zip(stages, c, strict=True):
                    stages[key].append(value)
        for s in (null_store, plain_store, store):
            s.close()
        out.put({"spans_per_segment": n_spans, **{k: median(v) for k, v in stages.items()}})
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


# --- server control -----------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(
    data_dir: Path, port: int, log_path: Path, source: Path | None = None
) -> subprocess.Popen[bytes]:
    """``planscope serve``; with ``source``, the packages of that tree instead (without
    ``SERVER_ENV``, which is this checkout's alone)."""
    log = open(log_path, "wb")  # noqa: SIM115 - closed with the process
    args = ["serve", "--port", str(port), "--data-dir", str(data_dir), "--log-level", "warning"]
    tree = source or REPO  # serve's options moved from the SDK's _cli.py to the collector's cli.py
    clis = [tree / "sdk/planscope/_cli.py", tree / "collector/planscope_collector/cli.py"]
    if any("--grpc-port" in p.read_text() for p in clis if p.exists()):  # never compete for 4317
        args += ["--grpc-port", "off"]
    cmd = [sys.executable, "-m", "planscope", *args]
    if not WITH_EXTENSIONS:  # an ingest-only replica: extensions (analyzer, alerts) never run
        cmd += ["--role", "ingest"]
    env = dict(os.environ)
    if SPOOL_MAX_BYTES is not None:
        env["PLANSCOPE_SPOOL_MAX_BYTES"] = str(SPOOL_MAX_BYTES)
    if ACCEPT_ONLY:  # one segment that is sealed only when the server stops
        env["PLANSCOPE_SEGMENT_MAX_BYTES"] = str(1 << 40)
        env["PLANSCOPE_FLUSH_INTERVAL"] = "86400"
    if source is None:
        env.update(SERVER_ENV)
    else:  # PYTHONPATH wins over the editable install's finder
        env["PYTHONPATH"] = os.pathsep.join(str(source / p) for p in PACKAGES)
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=REPO, env=env)
    return proc


SERVER_ENV: dict[str, str] = {}
"""``--env``: variables for this checkout's server only (allocator settings against the same
code as the baseline)."""

PACKAGES = ("sdk", "collector", "analyzer", "runners", "dashboard")
"""The source folders of the other revision, all of them: its ``planscope`` CLI imports the
other packages' commands, which must match its SDK."""


def export_source(rev: str) -> Path:
    """The packages of git revision ``rev`` in a temp dir (no worktree, no repo change)."""
    target = Path(tempfile.mkdtemp(prefix="planscope-bench-src-"))
    listed = subprocess.run(
        ["git", "ls-tree", "--name-only", rev], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    folders = [p for p in PACKAGES if p in listed]
    archive = subprocess.run(
        ["git", "archive", rev, *folders], cwd=REPO, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def readyz(url: str) -> dict[str, Any] | None:
    import httpx

    try:
        r = httpx.get(f"{url}/readyz", timeout=10)
        return dict(r.json())
    except (httpx.HTTPError, ValueError):
        return None


def wait_started(url: str, proc: subprocess.Popen[bytes], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        state = readyz(url)
        if state and state.get("ready"):
            return
        time.sleep(0.1)
    raise RuntimeError("server did not become ready")


def stop_server(proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def count_rows(data_dir: Path) -> int:
    """Count otel_traces rows in a fresh process (chDB: one data dir per process)."""
    code = (
        "import sys\n"
        "from planscope_collector.storage import open_store\n"
        "store = open_store(sys.argv[1])\n"
        "rows = store.query('SELECT count() AS n FROM otel_traces')\n"
        "print(list(rows[0].values())[0])\n"
        "store.close()\n"
    )
    dsn = f"chdb://{(data_dir / 'store').resolve()}"
    out = subprocess.run(
        [sys.executable, "-c", code, dsn], capture_output=True, text=True, check=True, cwd=REPO
    )
    return int(out.stdout.strip().splitlines()[-1])


def _proc_tree(pid: int) -> list[int]:
    """``pid`` and its live descendants (the flatten worker), from /proc."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    tree, todo = [], [pid]
    while todo:
        p = todo.pop()
        tree.append(p)
        todo += parents.get(p, [])
    return tree


def cpu_seconds(pid: int) -> dict[int, float]:
    """utime + stime per process of the server's tree (load generator excluded)."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[int, float] = {}
    for p in _proc_tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[p] = (int(fields[11]) + int(fields[12])) / tick
    return out


def sys_and_faults(pid: int) -> tuple[float, int]:
    """System CPU seconds and minor page faults of the server's tree: the kernel's share of
    the CPU (fresh pages for allocations the allocator handed back) and its usual cause."""
    tick = os.sysconf("SC_CLK_TCK")
    stime, minflt = 0.0, 0
    for p in _proc_tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        stime += int(fields[12]) / tick
        minflt += int(fields[7])
    return stime, minflt


def peak_rss_mib(pid: int) -> dict[str, float]:
    """VmHWM (peak resident set) of the server process and of its children, MiB."""
    out: dict[str, float] = {}
    for p in _proc_tree(pid):
        try:
            status = Path(f"/proc/{p}/status").read_text()
        except OSError:
            continue
        kib = next(int(x.split()[1]) for x in status.splitlines() if x.startswith("VmHWM:"))
        out["server" if p == pid else f"child {p}"] = kib / 1024
    return out


# --- one run ------------------------------------------------------------------------------------
def run_once(
    spans_total: int,
    traces_per_body: int,
    concurrency: int,
    salt: int,
    keep: bool,
    source: Path | None = None,
) -> dict[str, Any]:
    spans_per_body = traces_per_body * SPANS_PER_TRACE
    n_bodies = max(1, round(spans_total / spans_per_body))
    total = n_bodies * spans_per_body
    data_dir = Path(tempfile.mkdtemp(prefix="planscope-bench-"))
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start_server(data_dir, port, data_dir / "server.log", source)
    ctx = mp.get_context("spawn")
    ready, go, results = ctx.Event(), ctx.Event(), ctx.Queue()
    gen = ctx.Process(
        target=loadgen,
        args=(f"{url}/v1/traces", n_bodies, traces_per_body, concurrency, salt, ready, go, results),
    )
    try:
        gen.start()
        wait_started(url, proc)
        if not ready.wait(timeout=300):
            raise RuntimeError("load generator did not get ready")
        cpu_before = cpu_seconds(proc.pid)
        sys_before = sys_and_faults(proc.pid)
        go.set()
        res = results.get(timeout=1800)
        gen.join()
        # --accept-only: measured at the last 200; the spans are stored when the server stops
        deadline = time.monotonic() + (0 if ACCEPT_ONLY else 1800)
        state: dict[str, Any] | None = readyz(url)
        while time.monotonic() < deadline:
            state = readyz(url)
            if state and state["spool_pending_bytes"] == 0 and state["spans_written"] >= total:
                break
            time.sleep(0.1)
        t_persisted = time.monotonic()
        cpu_after = cpu_seconds(proc.pid)
        sys_after = sys_and_faults(proc.pid)
        rss = peak_rss_mib(proc.pid)
        assert state is not None
        stop_server(proc)
        rows = count_rows(data_dir)
    finally:
        if proc.poll() is None:
            stop_server(proc)
        if gen.is_alive():
            gen.terminate()
        if not keep:
            shutil.rmtree(data_dir, ignore_errors=True)
    lat = sorted(res["latencies"])
    e2e = t_persisted - res["t_first_send"]
    accept = res["t_last_ack"] - res["t_first_send"]
    # A process that started during the run (a restarted worker) counts from zero.
    cpu = sum(t - cpu_before.get(p, 0.0) for p, t in cpu_after.items())
    return {
        "spans": total,
        "cpu_us_per_span": cpu / total * 1e6,
        "sys_us_per_span": (sys_after[0] - sys_before[0]) / total * 1e6,
        "minor_faults_per_span": (sys_after[1] - sys_before[1]) / total,
        "cpu_seconds_by_process": {
            ("server" if p == proc.pid else f"child {p}"): t - cpu_before.get(p, 0.0)
            for p, t in cpu_after.items()
        },
        "peak_rss_mib": rss,
        "posts": res["posts"],
        "spans_per_post": spans_per_body,
        "mb_sent": res["bytes"] / 1e6,
        "rows_counted": rows,
        "spans_written_readyz": state["spans_written"],
        "e2e_seconds": e2e,
        "e2e_spans_per_s": total / e2e,
        "accept_seconds": accept,
        "accept_spans_per_s": total / accept,
        "drain_after_last_ack_s": e2e - accept,
        "post_p50_ms": percentile(lat, 50) * 1000,
        "post_p99_ms": percentile(lat, 99) * 1000,
        "post_max_ms": lat[-1] * 1000 if lat else float("nan"),
        "statuses": res["statuses"],
        "retries_503": res["retries"],
        "data_dir": str(data_dir) if keep else None,
    }


def print_runs(title: str, runs: list[dict[str, Any]]) -> float:
    """Print one table of end-to-end runs and their medians; return the median e2e spans/s."""
    rows: list[list[Any]] = [
        [
            i + 1,
            r["spans"],
            r["e2e_seconds"],
            r["e2e_spans_per_s"],
            r["accept_spans_per_s"],
            r["drain_after_last_ack_s"],
            r["post_p50_ms"],
            r["post_p99_ms"],
            r["rows_counted"],
            r["retries_503"],
            r["cpu_us_per_span"],
            max(r["peak_rss_mib"].values()),
        ]
        for i, r in enumerate(runs)
    ]
    e2e = median([r["e2e_spans_per_s"] for r in runs])
    rows.append(
        [
            "median",
            "",
            median([r["e2e_seconds"] for r in runs]),
            e2e,
            median([r["accept_spans_per_s"] for r in runs]),
            median([r["drain_after_last_ack_s"] for r in runs]),
            median([r["post_p50_ms"] for r in runs]),
            median([r["post_p99_ms"] for r in runs]),
            "",
            "",
            median([r["cpu_us_per_span"] for r in runs]),
            "",
        ]
    )
    headers = ["run", "spans", "e2e s", "e2e spans/s", "accepted spans/s", "drain s"]
    headers += ["POST p50 ms", "POST p99 ms", "rows counted", "503s"]
    headers += ["CPU us/span (server+children)", "peak RSS MiB (one process)"]
    print_table(title, headers, rows)
    for i, r in enumerate(runs):
        split = ", ".join(
            f"{name} {seconds / r['spans'] * 1e6:.1f}"
            for name, seconds in r["cpu_seconds_by_process"].items()
        )
        rss = ", ".join(f"{name} {mib:.0f}" for name, mib in r["peak_rss_mib"].items())
        print(
            f"run {i + 1}: CPU us/span by process: {split} (system {r['sys_us_per_span']:.1f}, "
            f"{r['minor_faults_per_span']:.2f} minor faults/span); peak RSS MiB: {rss}"
        )
    return e2e


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="30k spans, one repetition")
    parser.add_argument("--spans", type=int, help="spans per repetition (default 300k / 30k)")
    parser.add_argument("--repeat", type=int, help="repetitions (median reported)")
    parser.add_argument("--concurrency", type=int, default=4, help="HTTP connections")
    parser.add_argument("--traces-per-body", type=int, default=36, help="28 spans each")
    parser.add_argument(
        "--bodies-per-segment",
        type=int,
        default=35,
        help="requests per spool segment in the writer breakdown (default 64 MiB segments hold "
        "35 of these 1.92 MB requests; the old 32 MiB held 18, 8 MiB 5)",
    )
    parser.add_argument(
        "--breakdown", action="store_true", help="writer stage table also with --quick"
    )
    parser.add_argument("--keep", action="store_true", help="keep the data dirs")
    parser.add_argument(
        "--compare-with",
        metavar="GIT_REV",
        help="also run the server of this git revision (sdk/ + collector/ via git archive), "
        "interleaved round by round, and report the e2e ratio",
    )
    parser.add_argument("--json", help="also write the figures to this JSON file")
    parser.add_argument(
        "--without-extensions",
        action="store_true",
        help="start the server without collector extensions (the analyzer and alerts services, "
        "which analyse every flushed trace on the same store)",
    )
    parser.add_argument(
        "--workload",
        choices=("planscope", "openinference"),
        default="planscope",
        help="the spans sent: planscope's SDK shapes, or the same traces as OpenInference "
        "instrumentation shapes them (the span model's mapping path)",
    )
    parser.add_argument(
        "--spool-max-bytes",
        type=int,
        help="the servers' spool cap (PLANSCOPE_SPOOL_MAX_BYTES): a cap the load outruns keeps "
        "the spool full (503s, retried by the load generator), to measure RSS that way",
    )
    parser.add_argument(
        "--accept-only",
        action="store_true",
        help="measure the request path alone (HTTP, validation, spool): the server's CPU up "
        "to the last 200, with one spool segment that the writer stores only when the server "
        "stops (the e2e columns then mean nothing; rows are still counted)",
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set NAME=VALUE in this checkout's server's environment only, not the baseline's "
        "(e.g. allocator settings, with --compare-with HEAD); repeatable",
    )
    args = parser.parse_args()
    for item in args.env:
        name, sep, value = item.partition("=")
        if not sep or not name:
            parser.error(f"--env wants NAME=VALUE, got {item!r}")
        SERVER_ENV[name] = value
    global WITH_EXTENSIONS, WORKLOAD, SPOOL_MAX_BYTES, ACCEPT_ONLY
    ACCEPT_ONLY = args.accept_only
    SPOOL_MAX_BYTES = args.spool_max_bytes
    WITH_EXTENSIONS = not args.without_extensions
    WORKLOAD = args.workload
    spans = args.spans or (30_000 if args.quick else 300_000)
    repeat = args.repeat or (1 if args.quick else 2)

    facts = machine_facts()
    print(f"collector_ingest: {spans:,} spans x {repeat} run(s), {args.concurrency} connections")
    print(f"machine: {facts}")
    if SERVER_ENV:
        print(f"this checkout's server also runs with {SERVER_ENV}")

    bodies = encode_bodies(4, args.traces_per_body, salt=0xFFFF)
    floor = raw_floor(bodies, repeats=1 if args.quick else 5)
    print_table(
        "Raw floor, this process, one core (median per request)",
        ["stage", "spans/s", "spans/request", "request bytes"],
        [
            [
                "FromString",
                floor["parse_spans_per_s"],
                floor["spans_per_body"],
                floor["body_bytes"],
            ],
            ["FromString + flatten", floor["parse_flatten_spans_per_s"], "", ""],
        ],
    )

    stages: dict[str, Any] = {}
    if args.breakdown or not args.quick:
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        proc = ctx.Process(
            target=writer_breakdown,
            args=(args.bodies_per_segment, args.traces_per_body, 1 if args.quick else 4, queue),
        )
        proc.start()
        stages = queue.get(timeout=600)
        proc.join()
        n_seg = stages["spans_per_segment"]
        stage_rows = []
        for name, keys in (
            ("columns: FromString + SpanColumns.add (GC paused)", ("columns_flatten",)),
            ("columns: to_ipc", ("columns_to_arrow",)),
            (
                "columns: ArrowStream -> Null engine (decode only)",
                ("columns_insert_null",),
            ),
            ("columns: ArrowStream -> MergeTree copy, no views/indexes", ("columns_insert_plain",)),
            ("columns: insert_spans -> otel_traces", ("columns_insert_otel_traces",)),
            (
                "columns: writer total",
                ("columns_flatten", "columns_to_arrow", "columns_insert_otel_traces"),
            ),
        ):
            seconds = sum(stages[k] for k in keys)
            stage_rows.append([name, seconds * 1000, n_seg / seconds])
        print_table(
            f"Writer stages per spool segment ({n_seg:,} spans), one thread, fresh chDB store "
            "(median of repetitions)",
            ["stage", "ms/segment", "spans/s"],
            stage_rows,
        )

    baseline_src = export_source(args.compare_with) if args.compare_with else None
    runs: list[dict[str, Any]] = []
    base_runs: list[dict[str, Any]] = []
    try:
        for r in range(repeat):
            # with --compare-with, each round runs both servers, alternating which goes first
            order = [None, baseline_src] if r % 2 == 0 else [baseline_src, None]
            for source in order if baseline_src is not None else [None]:
                result = run_once(
                    spans, args.traces_per_body, args.concurrency, r + 1, args.keep, source
                )
                (runs if source is None else base_runs).append(result)
                if result["rows_counted"] != result["spans"]:
                    print(f"WARNING: counted {result['rows_counted']} rows for {result['spans']}")
    finally:
        if baseline_src is not None:
            shutil.rmtree(baseline_src, ignore_errors=True)
    title = (
        f"End to end: planscope serve (subprocess) <- {args.concurrency} keep-alive connections "
        f"from a separate process; {runs[0]['spans_per_post']} spans/POST, "
        f"{runs[0]['mb_sent'] / runs[0]['posts']:.2f} MB/POST"
    )
    e2e = print_runs(title + " - this checkout", runs)
    if base_runs:
        base_e2e = print_runs(title + f" - baseline {args.compare_with}", base_runs)
        ratios = [
            a["e2e_spans_per_s"] / b["e2e_spans_per_s"]
            for a, b in zip(runs, base_runs, strict=True)
        ]
        cpu_ratios = [
            a["cpu_us_per_span"] / b["cpu_us_per_span"]
            for a, b in zip(runs, base_runs, strict=True)
        ]
        print(
            f"\nthis checkout / {args.compare_with}: CPU us per persisted span ratio per round "
            f"{[round(x, 2) for x in cpu_ratios]}, median {median(cpu_ratios):.2f} "
            f"({median([r['cpu_us_per_span'] for r in runs]):.1f} vs "
            f"{median([r['cpu_us_per_span'] for r in base_runs]):.1f} us)"
        )
        for key, label in (
            ("sys_us_per_span", "system CPU us per span"),
            ("minor_faults_per_span", "minor faults per span"),
        ):
            print(
                f"this checkout / {args.compare_with}: {label} "
                f"{[round(r[key], 2) for r in runs]} vs {[round(r[key], 2) for r in base_runs]}"
            )
        print(
            f"this checkout / {args.compare_with}: peak RSS MiB "
            f"{[round(max(r['peak_rss_mib'].values())) for r in runs]} vs "
            f"{[round(max(r['peak_rss_mib'].values())) for r in base_runs]}"
        )
        print(
            f"\nthis checkout / {args.compare_with}: e2e spans/s ratio per round "
            f"{[round(x, 2) for x in ratios]}, median {median(ratios):.2f} "
            f"({e2e:,.0f} vs {base_e2e:,.0f} spans/s)"
        )
    ok = all(r["rows_counted"] == r["spans"] for r in runs + base_runs)
    target = TARGET_SPANS_PER_S[WORKLOAD]
    verdict = "meets" if e2e >= target else "MISSES"
    print(
        f"\nend-to-end {e2e:,.0f} spans/s {verdict} the {target:,} spans/s target; "
        f"e2e / raw floor = {e2e / floor['parse_flatten_spans_per_s']:.2f}; "
        f"row counts {'match' if ok else 'DO NOT match'}"
    )
    write_json(
        args.json,
        {
            "benchmark": "collector_ingest",
            "machine": facts,
            "concurrency": args.concurrency,
            "raw_floor": floor,
            "writer_stages_seconds": stages,
            "runs": runs,
            "baseline": {"rev": args.compare_with, "runs": base_runs} if base_runs else None,
            "e2e_spans_per_s_median": e2e,
            "target_spans_per_s": target,
        },
    )
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())

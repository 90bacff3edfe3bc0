"""Aggregate query endpoints (/api/stats/...) and the trace list's filters and run columns,
through a real collector on the embedded store, with hand-built runs whose numbers are known."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from planscope import semconv as A
from planscope_collector import BackgroundServer

from tests.conftest import wait_for_trace

from ._otlp_factory import make_request, make_span

pytestmark = pytest.mark.integration

MS = 1_000_000
KEYS = {"key-a": "team-a", "key-b": "team-b"}
CONFORMANCE_DATA = Path(__file__).parents[1] / "conformance" / "data"


@dataclass
class Run:
    """One run: attempts per step id as statuses (``"ok"``, ``"error"``, ``"skipped"``)."""

    agent: str
    variant: str
    outcome: str
    steps: dict[str, list[str]]
    start: int
    duration_ms: int = 100
    plan_versions: int = 1
    llm_tokens: tuple[int, int] = (100, 20)
    cost: float = 0.01
    exceeded: set[tuple[str, int]] = field(default_factory=set)
    """(step id, attempt) of attempts that carry a retry-budget-exceeded event."""
    trace_id: bytes = field(default_factory=lambda: os.urandom(16))

    @property
    def tid(self) -> str:
        return self.trace_id.hex()

    @property
    def run_id(self) -> str:
        return "run-" + self.tid[:8]

    def spans(self) -> list[Span]:
        root_id = os.urandom(8)
        t = self.start
        common = {A.RUN_ID: self.run_id}
        spans = [
            make_span(
                self.trace_id,
                root_id,
                name=f"invoke_agent {self.agent}",
                start=t,
                duration=self.duration_ms * MS,
                attributes={
                    **common,
                    A.SPAN_KIND: A.KIND_RUN,
                    A.GEN_AI_OPERATION_NAME: A.OP_INVOKE_AGENT,
                    A.GEN_AI_AGENT_NAME: self.agent,
                    A.RUN_VARIANT: self.variant,
                    A.RUN_OUTCOME: self.outcome,
                },
            )
        ]
        for version in range(1, self.plan_versions + 1):
            spans.append(
                make_span(
                    self.trace_id,
                    parent=root_id,
                    name="plan",
                    start=t + version * MS,
                    attributes={
                        **common,
                        A.SPAN_KIND: A.KIND_PLAN,
                        A.PLAN_ID: "p",
                        A.PLAN_VERSION: version,
                        A.PLAN_JSON: '{"id": "p", "steps": []}',
                    },
                )
            )
        spans.append(
            make_span(
                self.trace_id,
                parent=root_id,
                name="chat",
                start=t + 5 * MS,
                attributes={
                    **common,
                    A.SPAN_KIND: A.KIND_LLM,
                    A.GEN_AI_USAGE_INPUT_TOKENS: self.llm_tokens[0],
                    A.GEN_AI_USAGE_OUTPUT_TOKENS: self.llm_tokens[1],
                    A.LLM_COST_USD: self.cost,
                },
            )
        )
        at = t + 10 * MS
        for step_id, statuses in self.steps.items():
            for number, status in enumerate(statuses, start=1):
                at += MS
                span = make_span(
                    self.trace_id,
                    parent=root_id,
                    name=f"execute_step {step_id}",
                    start=at,
                    error=status == "error",
                    attributes={
                        **common,
                        A.SPAN_KIND: A.KIND_STEP,
                        A.PLAN_ID: "p",
                        A.PLAN_VERSION: 1,
                        A.STEP_ID: step_id,
                        A.STEP_ATTEMPT: number,
                        A.STEP_STATUS: status,
                    },
                )
                if (step_id, number) in self.exceeded:
                    event = span.events.add()
                    event.name = A.EVENT_RETRY_BUDGET_EXCEEDED
                    event.time_unix_nano = at
                spans.append(span)
        return spans


def send(url: str, key: str, runs: list[Run]) -> None:
    spans = [s for r in runs for s in r.spans()]
    body = make_request(spans, service="svc-stats").SerializeToString()
    r = httpx.post(
        f"{url}/v1/traces",
        content=body,
        headers={"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {key}"},
    )
    assert r.status_code == 200, r.text


def wait_runs(url: str, key: str, count: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = get(url, key, "/api/stats/runs")
        if body["totals"]["runs"] >= count:
            steps = get(url, key, "/api/traces", limit=1000)["traces"]
            if sum(t["span_count"] for t in steps) and len(steps) >= count:
                return
        time.sleep(0.1)
    raise AssertionError(f"{count} runs were not stored in time")


def get(url: str, key: str | None, path: str, **params: Any) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    r = httpx.get(f"{url}{path}", params=params, headers=headers, timeout=30)
    assert r.status_code == 200, (path, params, r.status_code, r.text)
    return dict(r.json())


@pytest.fixture
def stats_server(make_collector: Callable[..., BackgroundServer]) -> tuple[str, dict[str, Run]]:
    """team-a: four runs of two agents and variants; team-b: one run that must never show."""
    server = make_collector(api_keys=KEYS, role="ingest")
    hour = 3600 * 10**9
    base = time.time_ns() - 3 * hour
    runs = {
        # planner: a loop on "fetch" (4 errors, the 5th refused by the budget), "parse" ok.
        "loop": Run(
            "planner",
            "dag",
            "failure",
            {"fetch": ["error", "error", "error", "error", "skipped"], "parse": ["ok"]},
            start=base,
            duration_ms=400,
            plan_versions=3,
            exceeded={("fetch", 5)},
            llm_tokens=(1000, 100),
            cost=0.5,
        ),
        # planner: "fetch" retried once then ok.
        "retried": Run(
            "planner",
            "dag",
            "success",
            {"fetch": ["error", "ok"], "parse": ["ok"]},
            start=base + 10 * MS,
            duration_ms=200,
        ),
        # solver (react): clean, one hour later.
        "clean": Run(
            "solver",
            "react",
            "success",
            {"act": ["ok"]},
            start=base + hour,
            duration_ms=100,
            llm_tokens=(50, 5),
            cost=0.001,
        ),
        # solver: the last attempt of "act" fails after one success is not a retry of it.
        "failed": Run(
            "solver",
            "react",
            "failure",
            {"act": ["ok", "error"]},
            start=base + 2 * hour,
            duration_ms=300,
        ),
    }
    send(server.url, "key-a", list(runs.values()))
    other = Run("planner", "dag", "failure", {"fetch": ["error"] * 7}, start=base + 5 * MS)
    send(server.url, "key-b", [other])
    runs["other"] = other
    wait_runs(server.url, "key-a", 4)
    wait_runs(server.url, "key-b", 1)
    return server.url, runs


def test_stats_endpoints_compute_known_numbers(stats_server: tuple[str, dict[str, Run]]) -> None:
    url, runs = stats_server
    body = get(url, "key-a", "/api/stats/runs", bucket=3600)
    t = body["totals"]
    assert (t["runs"], t["successes"], t["failures"]) == (4, 2, 2)
    assert t["success_rate"] == 0.5
    assert t["input_tokens"] == 1000 + 100 + 50 + 100
    assert t["output_tokens"] == 100 + 20 + 5 + 20
    assert t["cost_usd"] == pytest.approx(0.5 + 0.01 + 0.001 + 0.01)
    # attempts: loop 5+1, retried 2+1, clean 1, failed 2; beyond the first per step: 4, 1, 0, 1
    assert (t["step_attempts"], t["retries"]) == (12, 6)
    assert (t["replans"], t["budget_exceeded"]) == (2, 1)
    assert t["p95_duration_ns"] == 400 * MS
    empty = get(url, "key-a", "/api/stats/runs", agent="nobody")
    assert empty["totals"]["runs"] == 0 and empty["totals"]["p95_duration_ns"] is None
    assert empty["buckets"] == [] and empty["agents"] == []
    assert t["p50_duration_ns"] in (200 * MS, 300 * MS)
    # Buckets by hour and outcome: the first hour holds loop (failure) and retried (success).
    per = {(b["bucket_ns"], b["outcome"]): b for b in body["buckets"]}
    assert sum(b["runs"] for b in body["buckets"]) == 4
    assert len({b["bucket_ns"] for b in body["buckets"]}) >= 3
    first = min(b for b, _ in per)
    assert per[(first, "failure")]["retries"] == 4
    assert all(b["bucket_ns"] % (3600 * 10**9) == 0 for b in body["buckets"])
    assert {a["agent"]: a["failures"] for a in body["agents"]} == {"planner": 1, "solver": 1}

    # agent filter and time range
    planner = get(url, "key-a", "/api/stats/runs", agent="planner")["totals"]
    assert planner["runs"] == 2
    since = runs["clean"].start
    late = get(url, "key-a", "/api/stats/runs", since=since)["totals"]
    assert late["runs"] == 2 and late["input_tokens"] == 150
    window = get(url, "key-a", "/api/stats/runs", since=since, until=runs["failed"].start)
    assert window["totals"]["runs"] == 1
    assert get(url, "key-a", "/api/stats/runs", service="svc-stats")["totals"]["runs"] == 4
    assert get(url, "key-a", "/api/stats/runs", service="nope")["totals"]["runs"] == 0

    steps = get(url, "key-a", "/api/stats/steps")["steps"]
    by = {(s["agent"], s["step"]): s for s in steps}
    fetch = by[("planner", "fetch")]
    assert fetch == {
        "agent": "planner",
        "step": "fetch",
        "runs": 2,
        "attempts": 7,
        "retries": 5,
        "error_attempts": 5,
        "failed_runs": 1,
        "budget_exceeded": 1,
    }
    assert by[("solver", "act")]["failed_runs"] == 1
    assert by[("planner", "parse")]["failed_runs"] == 0
    assert steps[0]["step"] == "fetch"  # worst first
    assert len(get(url, "key-a", "/api/stats/steps", limit=1)["steps"]) == 1
    assert {s["agent"] for s in get(url, "key-a", "/api/stats/steps", agent="solver")["steps"]} == {
        "solver"
    }

    variants = {v["variant"]: v for v in get(url, "key-a", "/api/stats/variants")["variants"]}
    assert set(variants) == {"dag", "react"}
    dag = variants["dag"]
    assert (dag["runs"], dag["success_rate"], dag["replans"], dag["retries"]) == (2, 0.5, 2, 5)
    assert dag["retries_per_run"] == 2.5 and dag["replans_per_run"] == 1.0
    assert dag["tokens_per_run"] == (1100 + 120) / 2
    assert variants["react"]["p95_duration_ns"] == 300 * MS


def test_trace_list_filters_and_run_columns(stats_server: tuple[str, dict[str, Run]]) -> None:
    url, runs = stats_server
    rows = get(url, "key-a", "/api/traces", limit=50)["traces"]
    assert [r["trace_id"] for r in rows] == [
        runs[k].tid for k in ("failed", "clean", "retried", "loop")
    ]
    loop = next(r for r in rows if r["trace_id"] == runs["loop"].tid)
    assert (loop["step_attempts"], loop["retries"]) == (6, 4)
    assert (loop["plan_versions"], loop["replans"]) == (3, 2)

    def ids(**params: Any) -> set[str]:
        return {r["trace_id"] for r in get(url, "key-a", "/api/traces", **params)["traces"]}

    assert ids(agent="solver") == {runs["clean"].tid, runs["failed"].tid}
    assert ids(variant="dag", outcome="failure") == {runs["loop"].tid}
    assert ids(outcome="success") == {runs["clean"].tid, runs["retried"].tid}
    assert ids(outcome="(no run)") == set()
    assert ids(q=runs["retried"].tid[:12].upper()) == {runs["retried"].tid}
    assert ids(q=runs["loop"].run_id) == {runs["loop"].tid}
    assert ids(q="invoke_agent SOLVER") == {runs["clean"].tid, runs["failed"].tid}
    assert ids(since=runs["clean"].start, until=runs["failed"].start) == {runs["clean"].tid}
    page = get(url, "key-a", "/api/traces", limit=3)
    assert page["next_offset"] == 3
    assert len(get(url, "key-a", "/api/traces", limit=3, offset=3)["traces"]) == 1


HOSTILE = [
    "' OR 1=1 --",
    "x'); DROP TABLE otel_traces; --",
    "{project:String}",
    "%",
    "_",
    "\\",
    "team-b",
    "\u0000",
    "😀" * 40,
    "a" * 500,
]


def test_projects_are_isolated_and_hostile_values_are_data(
    stats_server: tuple[str, dict[str, Run]],
) -> None:
    url, runs = stats_server
    other = runs["other"].tid
    # team-a's key never sees team-b, even when asking for it.
    for path in ("/api/stats/runs", "/api/stats/steps", "/api/stats/variants", "/api/traces"):
        body = get(url, "key-a", path, project="team-b")
        assert other not in str(body)
    assert get(url, "key-a", "/api/stats/runs", project="team-b")["totals"]["runs"] == 4
    b = get(url, "key-b", "/api/stats/runs")["totals"]
    assert (b["runs"], b["step_attempts"], b["retries"]) == (1, 7, 6)
    assert [r["trace_id"] for r in get(url, "key-b", "/api/traces")["traces"]] == [other]
    # Without a key (or a wrong one) nothing is read.
    assert httpx.get(f"{url}/api/stats/runs").status_code == 401
    assert (
        httpx.get(f"{url}/api/stats/steps", headers={"Authorization": "Bearer nope"}).status_code
        == 401
    )
    # Hostile strings are values: no error, no match, nothing dropped.
    for value in HOSTILE:
        for path, name in (
            ("/api/stats/runs", "agent"),
            ("/api/stats/runs", "service"),
            ("/api/stats/steps", "agent"),
            ("/api/stats/variants", "service"),
            ("/api/traces", "q"),
            ("/api/traces", "agent"),
            ("/api/traces", "variant"),
            ("/api/traces", "outcome"),
        ):
            r = httpx.get(
                f"{url}{path}",
                params={name: value[:64] if name == "outcome" else value},
                headers={"Authorization": "Bearer key-a"},
            )
            assert r.status_code in (200, 400), (path, name, value, r.text)
            if r.status_code == 200 and value not in ("%", "_", "\\") and path == "/api/traces":
                assert r.json()["traces"] == [], (path, name, value)
    assert get(url, "key-a", "/api/stats/runs")["totals"]["runs"] == 4  # still there
    # Out-of-range numbers are refused by validation, never reach SQL.
    for path, params in (
        ("/api/stats/runs", {"bucket": 0}),
        ("/api/stats/runs", {"bucket": "1; DROP"}),
        ("/api/stats/runs", {"since": -1}),
        ("/api/stats/steps", {"limit": 100_000}),
        ("/api/stats/variants", {"until": "yesterday"}),
        ("/api/traces", {"q": "x" * 300}),
    ):
        r = httpx.get(f"{url}{path}", params=params, headers={"Authorization": "Bearer key-a"})
        assert r.status_code == 400 and r.json()["field"], (path, params, r.text)


def test_a_framework_trace_that_gains_spans_is_bound_again(collector: BackgroundServer) -> None:
    """Bindings are cached per trace (``Store.bindings``): a pydantic-ai trace recorded by the
    conformance suite, sent without its second executor attempt and then with it, must count
    in ``/api/stats/runs`` and in the trace list as its trace detail counts it after each part
    (the second read re-binds the grown trace rather than reusing the first binding)."""
    data = json.loads((CONFORMANCE_DATA / "pydantic_ai.json").read_text())
    scope = data["resourceSpans"][0]["scopeSpans"][0]
    spans = [s for rs in data["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    trace_id = Counter(s["traceId"] for s in spans).most_common()[-1][0]  # the healthy run
    mine = [s for s in spans if s["traceId"] == trace_id]
    shift = time.time_ns() - 60 * 10**9 - min(int(s["startTimeUnixNano"]) for s in mine)
    for s in mine:
        for key in ("startTimeUnixNano", "endTimeUnixNano"):
            s[key] = str(int(s[key]) + shift)
    executors = [i for i, s in enumerate(mine) if s["name"] == "invoke_agent executor"]
    assert len(executors) == 2, [s["name"] for s in mine]  # spans in the order they ended
    later = mine[executors[0] + 1 : executors[1] + 1]  # the second attempt and its children
    first = [s for s in mine if s not in later]
    counted = []
    for part in (first, later):
        request = {"resourceSpans": [{**data["resourceSpans"][0], "scopeSpans": [
            {**scope, "spans": part}]}]}  # fmt: skip
        r = httpx.post(f"{collector.url}/v1/traces", json=request, timeout=30)
        assert r.status_code == 200, r.text
        trace = wait_for_trace(collector.url, trace_id, len(first) + len(later) * (part is later))
        steps = Counter(
            s["model"]["step_id"] for s in trace["spans"] if s["planscope_kind"] == A.KIND_STEP
        )
        attempts = sum(steps.values())
        totals = httpx.get(f"{collector.url}/api/stats/runs", timeout=30).json()["totals"]
        rows = httpx.get(f"{collector.url}/api/traces", params={"q": trace_id}).json()["traces"]
        by_step = httpx.get(f"{collector.url}/api/stats/steps", timeout=30).json()["steps"]
        assert (totals["runs"], totals["step_attempts"]) == (1, attempts)
        assert [r["step_attempts"] for r in rows] == [attempts]
        assert {s["step"]: s["attempts"] for s in by_step} == steps
        counted.append(steps)
    assert counted[1] != counted[0], counted

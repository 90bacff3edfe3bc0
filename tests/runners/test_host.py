"""The UFO2-style host-agent variant: routing to application agents, hand-off spans,
multi-action steps, its faults and their labels, in process and through a real collector."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from planscope import semconv as A
from planscope_analyzer.attribution import candidates, conversation_from_trace
from planscope_collector import BackgroundServer, CollectorSettings
from planscope_runners import load_labels, run_task
from planscope_runners._apps import applications
from planscope_runners._faults import Fault
from planscope_runners.environments import make_env

from tests.conftest import poll

from .conftest import Spans, attr


def _handoffs(spans: Spans) -> list[Any]:
    return sorted(
        (s for s in spans.all() if s.name == A.SPAN_HANDOFF), key=lambda s: s.start_time or 0
    )


def test_host_routes_sub_tasks_to_application_agents_with_their_own_tools(spans: Spans) -> None:
    result = run_task("host", "ops", "ops-deploy-api")
    assert result.success
    (plan,) = spans.plans()
    apps = {a.agent: a for a in applications("ops", make_env("ops").tools())}
    assert {s["executor"] for s in plan["steps"]} <= set(apps)
    assert len({s["executor"] for s in plan["steps"]}) >= 2  # the request spans applications
    handoffs = _handoffs(spans)
    assert [attr(h, A.HANDOFF_SUBTASK) for h in handoffs] == [s["id"] for s in plan["steps"]]
    run_span = spans.run()
    for handoff in handoffs:
        assert handoff.parent.span_id == run_span.context.span_id
        assert attr(handoff, A.HANDOFF_FROM) == "host-agent"
        assert attr(handoff, A.HANDOFF_STATUS) == A.HANDOFF_COMPLETED
        receiver = apps[attr(handoff, A.HANDOFF_TO)]
        assert json.loads(attr(handoff, A.HANDOFF_TOOLS)) == list(receiver.tools)
        assert set(json.loads(attr(handoff, A.HANDOFF_NEEDS))) <= set(receiver.tools)
        (step,) = [s for s in spans.steps() if s.parent.span_id == handoff.context.span_id]
        assert attr(step, A.STEP_ID) == attr(handoff, A.HANDOFF_SUBTASK)
        assert attr(step, A.STEP_EXECUTOR) == receiver.agent
        tools = [t for t in spans.of_kind(A.KIND_TOOL) if t.parent.span_id == step.context.span_id]
        assert tools and {attr(t, A.GEN_AI_TOOL_NAME) for t in tools} <= set(receiver.tools)
    plans = spans.of_kind(A.KIND_PLAN)
    assert attr(plans[0], A.GEN_AI_AGENT_NAME) == "host-agent"


def test_a_multi_action_step_is_traced_as_one_model_call_with_a_batch(spans: Spans) -> None:
    result = run_task("host", "ops", "ops-audit-wide")
    assert result.success
    (step,) = spans.steps()  # six reads and the summary: one sub-task of the config agent
    tools = sorted(
        (t for t in spans.of_kind(A.KIND_TOOL) if t.parent.span_id == step.context.span_id),
        key=lambda t: t.start_time or 0,
    )
    batch = [t for t in tools if attr(t, A.TOOL_ACTION_BATCH) == 6]
    assert [attr(t, A.TOOL_ACTION_INDEX) for t in batch] == [1, 2, 3, 4, 5, 6]
    assert attr(tools[-1], A.TOOL_ACTION_BATCH) is None  # the summary waits for the reads
    calls = [c for c in spans.of_kind(A.KIND_LLM) if c.parent.span_id == step.context.span_id]
    assert [attr(c, A.LLM_TOOL_CALLS) for c in calls] == [6, 1, None]  # None: "done"
    # fewer model calls than one executor call per action (Plan-and-Act)
    baseline = run_task("plan_and_act", "ops", "ops-audit-wide")
    assert result.counters.llm_calls < baseline.counters.llm_calls


def test_a_failure_inside_a_batch_discards_the_rest_and_blames_the_app_agent(
    spans: Spans,
) -> None:
    result = run_task("host", "ops", "ops-audit-wide", [Fault("app_tool_failure", "read_1")])
    assert result.outcome == "failure"
    assert result.blame is not None
    assert (result.blame.component, result.blame.cause) == ("config-agent", "execution")
    first = spans.steps()[0]
    (event,) = [e for e in first.events if e.name == A.EVENT_ACTIONS_DISCARDED]
    assert (event.attributes or {})[A.ACTIONS_DISCARDED] == 4  # read_2 .. read_5 never ran
    assert result.counters.plans == 2  # the host re-planned once, then gave up
    label = result.label()
    assert label["blame"]["step_id"] == result.blame.step_id == attr(first, A.STEP_ID)
    assert not label["healthy"]


def test_misrouting_blames_the_host_and_the_wrong_agent_never_acts(spans: Spans) -> None:
    result = run_task("host", "support", "support-refund-ana", ["misroute"], seed=4)
    assert result.outcome == "failure"
    assert result.blame is not None and result.blame.component == "host-agent"
    assert result.blame.cause == "routing"
    failed = [h for h in _handoffs(spans) if attr(h, A.HANDOFF_STATUS) == A.HANDOFF_FAILED]
    assert len(failed) == 2  # routed wrongly in both plan versions
    for handoff in failed:
        needs = set(json.loads(attr(handoff, A.HANDOFF_NEEDS)))
        assert not needs <= set(json.loads(attr(handoff, A.HANDOFF_TOOLS)))
        assert attr(handoff, A.HANDOFF_SUBTASK) == result.blame.step_id
        steps = [s for s in spans.steps() if s.parent.span_id == handoff.context.span_id]
        tools = [
            t
            for t in spans.of_kind(A.KIND_TOOL)
            if t.parent.span_id in {s.context.span_id for s in steps}
        ]
        assert tools == []


@pytest.mark.integration
def test_host_suite_with_faults_through_a_real_collector(tmp_path: Path, data_dir: Path) -> None:
    labels_path = tmp_path / "labels.jsonl"
    settings = CollectorSettings(data_dir=data_dir, port=0, flush_interval=0.05)
    with BackgroundServer(settings) as server:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "planscope",
                "suite",
                "--runs",
                "6",
                "--fault-rate",
                "1",
                "--seed",
                "2",
                "--variants",
                "host",
                "--collector",
                server.url,
                "--labels",
                str(labels_path),
                "--quiet",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        labels = load_labels(labels_path)
        assert len(labels) == 6 and all(label["faults"] for label in labels)
        blamed = [label for label in labels if label["blame"]]
        assert blamed, labels
        label = blamed[0]
        trace = poll(
            f"{server.url}/api/traces/{label['trace_id']}",
            lambda t: (
                {"run", "plan", "step", "tool"} <= {s["planscope_kind"] for s in t["spans"]}
                and any(s["name"] == A.SPAN_HANDOFF for s in t["spans"])
            ),
            what="a run with its handoff",
        )
        spans = trace["spans"]
        handoffs = [s for s in spans if s["name"] == A.SPAN_HANDOFF]
        assert handoffs, spans
        subtasks = {s["attributes"][A.HANDOFF_SUBTASK] for s in handoffs}
        assert label["blame"]["step_id"] in subtasks
        steps = [s for s in spans if s["planscope_kind"] == "step"]
        ids = {s["span_id"] for s in handoffs}
        assert all(s["parent_span_id"] in ids for s in steps)
        # attribution reads each hand-off as the host's dispatch to the receiving agent, so
        # both the host's routing and the agent's execution are candidates for the blame
        conv = conversation_from_trace(trace)
        dispatches = [t for t in conv.turns if t.kind == "dispatch"]
        assert [t.target for t in dispatches] == [s["attributes"][A.HANDOFF_TO] for s in handoffs]
        assert {t.speaker for t in dispatches} == {"host-agent"}
        blamed = {c.agent for c in candidates(conv)}
        assert {"host-agent", label["blame"]["component"]} <= blamed
        # hand-offs are known machinery: analysis reports no data-quality issue for them
        while httpx.get(f"{server.url}/readyz").json()["spool_pending_bytes"]:
            time.sleep(0.1)
        assert httpx.post(f"{server.url}/api/analyze", json={}, timeout=60).status_code == 200
        found = httpx.get(f"{server.url}/api/findings").json()["findings"]
        assert found and all(f["kind"] != "data_quality" for f in found), found

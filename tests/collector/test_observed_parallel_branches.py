"""A DAG planner's parallel branches (LangGraph ``Send``s to one node, each running a ReAct
graph on its task) as ``observed.bind`` sees them: a banquet kitchen whose plan is read from the
planner's JSON answer (no format reader), each ``dispatch`` node answering a report of its task.

A dispatch node's report (a one-item list naming the task it ran) is no re-plan; a branch's
node visits (``agent`` / ``tools``) are one attempt however the other branch's interleave."""

from __future__ import annotations

import json

from planscope_collector.observed import SpanNode, bind

PLAN = json.dumps(
    [
        {"name": "buy_produce", "tool": "market_order", "args": {"covers": "120"}},
        {"name": "print_menu", "tool": "print_shop", "args": {"copies": "120"}},
        {"name": "book_van", "tool": "van_rental", "args": {"size": "3t"}},
    ]
)


def node(span_id: str, parent: str, kind: str, start: int, **kw: object) -> SpanNode:
    return SpanNode(span_id, parent, kind, str(kw.pop("name", span_id)), start_ns=start, **kw)  # type: ignore[arg-type]


def branch(
    b: str, task: str, tool: str, start: int, gap: int, calls: list[bool], told: str = ""
) -> list[SpanNode]:
    """One dispatch node visit of ``task``: agent and tools visits ``gap`` apart, one tool call
    per tools visit (failed or not), then the agent's verdict; its report as its answer."""
    told = told or f"Task {task}: call {tool}"
    report = json.dumps({"reports": [{"task": task, "verdict": "DONE"}]})
    end = start + gap * (2 * len(calls) + 1) + 1
    spans = [
        node(f"{b}d", "g", "step", start, name="dispatch", step_name="dispatch", answer=report,
             duration_ns=end - start),
        node(f"{b}w", f"{b}d", "other", start, name="worker"),
    ]  # fmt: skip
    t = start
    for i, failed in enumerate(calls):
        spans += [
            node(f"{b}a{i}", f"{b}w", "step", t, name="agent", step_name="agent"),
            node(f"{b}l{i}", f"{b}a{i}", "llm", t + 1, request=told),
            node(f"{b}t{i}", f"{b}w", "step", t + gap, name="tools", step_name="tools"),
            node(f"{b}c{i}", f"{b}t{i}", "tool", t + gap + 1, tool=tool, failed=failed),
        ]
        t += 2 * gap
    spans += [
        node(f"{b}v", f"{b}w", "step", t, name="agent", step_name="agent"),
        node(f"{b}vl", f"{b}v", "llm", t + 1, request=told),
    ]
    return spans


def kitchen(*branches: list[SpanNode]) -> list[SpanNode]:
    return [
        node("root", "", "other", 0, name="cater banquet Harlow"),
        node("g", "root", "other", 0, name="LangGraph"),
        node("p", "g", "step", 1, name="planner", step_name="planner"),
        node("pl", "p", "llm", 2, request="Cater the Harlow banquet.", answer=PLAN),
        *(s for spans in branches for s in spans),
    ]


def test_a_dispatch_nodes_report_is_no_replan() -> None:
    """The produce's dispatch node reports its task, which the van's task names (it waits for
    the produce): the van's attempt still binds to the plan's step."""
    spans = kitchen(
        branch("x", "buy_produce", "market_order", 10, 2, [False]),
        branch("y", "book_van", "van_rental", 100, 2, [True, True, True],
               told="Task book_van, after buy_produce: call van_rental"),
    )  # fmt: skip
    b = bind(spans, [])
    assert [p.span_id for p in b.read_plans] == ["pl"]
    assert {b.steps.get(s) for s in ("ya0", "yt0", "yt2")} == {"book_van"}


def test_interleaved_branches_node_visits_are_one_attempt_each() -> None:
    """Two branches started together, their visits interleaved: each branch is one attempt of
    its task (its tools visits and later agent turns wrapped into its first visit)."""
    spans = kitchen(
        branch("x", "print_menu", "print_shop", 10, 4, [False, False]),
        branch("y", "book_van", "van_rental", 12, 4, [True, True]),
    )
    b = bind(spans, [])
    attempts = {s: b.steps.get(s) for s in b.attempts}
    assert attempts == {"p": None, "xa0": "print_menu", "ya0": "book_van"}
    assert "ya0" in b.failed

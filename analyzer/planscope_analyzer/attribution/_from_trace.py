"""Rebuild a :class:`Conversation` from a stored trace (``GET /api/traces/{id}``), so a run that
is already in planscope — imported or instrumented — can be attributed.

Turn indices are the ``planscope.import.record`` of imported spans; for other traces they are
the spans' order (run excluded). A span's kind is the one the collector's span model gave it
(``planscope_kind``; docs/semantic-conventions.md), so a span from another instrumentation
sent live reads like planscope's own. Speakers are names the trace holds: the agent name, the
tool name, else the span's name.

>>> conv = conversation_from_trace({"trace_id": "t", "spans": [
...     {"span_id": "r", "name": "supervisor", "start_ns": 1, "planscope_kind": "run",
...      "attributes": {"openinference.span.kind": "AGENT", "input.value": "Population of X?"}},
...     {"span_id": "s", "parent_span_id": "r", "name": "researcher", "start_ns": 2,
...      "planscope_kind": "step",
...      "attributes": {"openinference.span.kind": "AGENT", "output.value": "12,345"}},
...     {"span_id": "t", "parent_span_id": "s", "name": "web_search", "start_ns": 3,
...      "status_code": "Error", "status_message": "timeout", "planscope_kind": "tool",
...      "attributes": {"openinference.span.kind": "TOOL"}}]})
>>> [(t.speaker, t.kind) for t in conv.turns], conv.question
([('researcher', 'reply'), ('web_search', 'tool')], 'Population of X?')
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from planscope import semconv as A

from ..importers import _conventions as C
from ..importers._conversation import FRAMEWORK_MAGENTIC, Conversation, Ledger, Turn, TurnKind
from ..importers._whowhen import is_final


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        try:
            doc = json.loads(value)
        except ValueError:
            return value
        value = doc
    if isinstance(value, dict) and len(value) == 1:
        return _text(next(iter(value.values())))
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _ledger(span: dict[str, Any]) -> Ledger | None:
    for e in span.get("events") or []:
        if e.get("name") == C.EVENT_LEDGER:
            a = e.get("attributes") or {}

            def flag(key: str, attrs: dict[str, Any] = a) -> bool | None:
                v = attrs.get(key)
                return None if v is None else str(v).lower() == "true"

            return Ledger(
                flag(C.LEDGER_SATISFIED),
                flag(C.LEDGER_IN_LOOP),
                flag(C.LEDGER_PROGRESS),
                a.get(C.LEDGER_NEXT_SPEAKER),
                None,
                {"is_progress_being_made": str(a.get(C.LEDGER_REASON, ""))},
            )
    return None


def span_kind(span: dict[str, Any]) -> str | None:
    """A stored span's planscope kind (run, plan, step, tool, llm), or ``None``: what the
    collector's span model made of it (``planscope_kind`` of ``GET /api/traces/{id}``), for
    planscope's spans and other conventions' alike.

    >>> span_kind({"planscope_kind": "tool", "attributes": {}})
    'tool'
    """
    kind = span.get("planscope_kind") or (span.get("attributes") or {}).get(A.SPAN_KIND)
    return str(kind) if kind and kind != A.KIND_OTHER else None


def _output(a: dict[str, Any]) -> str:
    return _text(
        a.get(A.OUTPUT)
        or a.get(A.OI_OUTPUT_VALUE)
        or a.get(A.TL_ENTITY_OUTPUT)
        or a.get(A.LF_OBSERVATION_OUTPUT)
    )


def _agent_name(span: dict[str, Any]) -> str | None:
    a = span.get("attributes") or {}
    name = (
        a.get(A.GEN_AI_AGENT_NAME)
        or a.get(A.STEP_EXECUTOR)
        or a.get(A.OI_AGENT_NAME)
        or a.get(A.TL_ENTITY_NAME)
    )
    return str(name) if name else None


def _handoff_turn(index: int, a: dict[str, Any]) -> Turn:
    """A host agent's routing (``agent.handoff``) as its dispatch to the receiving agent: the
    host speaks, so attribution can blame its routing; the receiver's steps are its replies."""
    host, receiver = str(a[A.HANDOFF_FROM]), str(a.get(A.HANDOFF_TO) or "")
    content = (
        f"route sub-task {_text(a.get(A.HANDOFF_SUBTASK))} to {receiver}: it calls for "
        f"{_text(a.get(A.HANDOFF_NEEDS))}; {receiver} has {_text(a.get(A.HANDOFF_TOOLS))}"
    )
    return Turn(index, host, host, "dispatch", content, receiver or None)


def conversation_from_trace(trace: dict[str, Any]) -> Conversation:
    """A conversation from a trace's spans (the query API's JSON)."""
    spans = sorted(trace.get("spans") or [], key=lambda s: int(s.get("start_ns") or 0))
    kinds = {id(s): span_kind(s) for s in spans}
    run = next((s for s in spans if kinds[id(s)] == A.KIND_RUN), None)
    by_id = {str(s.get("span_id")): s for s in spans}

    def enclosing_agent(span: dict[str, Any]) -> str | None:
        """The agent of the nearest run or step span above ``span`` (an LLM call's owner)."""
        seen: set[str] = set()
        cur = by_id.get(str(span.get("parent_span_id") or ""))
        while cur is not None and str(cur.get("span_id")) not in seen:
            seen.add(str(cur.get("span_id")))
            if kinds[id(cur)] in (A.KIND_RUN, A.KIND_STEP):
                return _agent_name(cur) or str(cur.get("name") or "") or None
            cur = by_id.get(str(cur.get("parent_span_id") or ""))
        return None

    relayed = {s.get("parent_span_id") for s in spans if s.get("status_code") == "Error"}
    run_attrs = (run or {}).get("attributes") or {}
    framework = str(run_attrs.get(C.IMPORT_FRAMEWORK) or run_attrs.get(A.RUN_VARIANT) or "trace")
    # A name that exists in the trace: the run's agent, else its service, else its span name.
    planner = str(
        (_agent_name(run) if run else None)
        or (run or {}).get("service")
        or (run or {}).get("name")
        or next((s.get("service") for s in spans if s.get("service")), None)
        or "agent"
    )
    turns: dict[int, Turn] = {}
    counter = 0
    for s in spans:
        if s is run:
            continue
        a = s.get("attributes") or {}
        kind = kinds[id(s)]
        if s.get("name") == A.SPAN_HANDOFF and a.get(A.HANDOFF_FROM):
            turns[counter] = _handoff_turn(counter, a)
            counter += 1
            continue
        if not kind:
            continue
        rec = a.get(C.IMPORT_RECORD)
        index = int(rec) if rec is not None and str(rec).lstrip("-").isdigit() else counter
        counter = max(counter, index) + 1
        foreign = not a.get(A.SPAN_KIND)  # classified by the span model, not by our SDK
        agent = str(
            _agent_name(s)
            or (enclosing_agent(s) if kind == A.KIND_LLM else None)
            or (s.get("name") if foreign and kind == A.KIND_STEP else None)
            or planner
        )
        role = str(a.get(C.IMPORT_ROLE) or agent)
        out = _output(a)
        if kind == A.KIND_PLAN and not out:
            out = _text(a.get(A.PLAN_JSON))
        failed = s.get("status_code") == "Error"
        if failed and kind != A.KIND_TOOL and rec is None and s.get("span_id") not in relayed:
            # A live span's own failure, unless it only relays a failed child's (whose turn
            # follows it and shows the error where it happened).
            out = (out + "\nerror: " + str(s.get("status_message") or "failed")).strip()
        tk: TurnKind
        target = None
        ledger = None
        content = out
        speaker = agent
        if kind == A.KIND_PLAN:
            tk = "plan"
        elif kind == A.KIND_STEP:
            if framework == FRAMEWORK_MAGENTIC:
                tk, speaker, target, content = "dispatch", planner, agent, _text(a.get(A.INPUT))
            else:
                tk = "reply"
        elif kind == A.KIND_TOOL:
            tk = "tool"
            if rec is None:  # a live trace names the calling agent; the tool is the speaker
                speaker = str(
                    a.get(A.GEN_AI_TOOL_NAME) or a.get(A.OI_TOOL_NAME) or s.get("name") or agent
                )
            if failed and not out.lower().startswith("exitcode"):
                content = "exitcode: 1 (execution failed)\n" + (
                    out or str(s.get("status_message") or "")
                )
        elif kind == A.KIND_LLM and a.get(A.LLM_ROLE) == "planner":
            ledger = _ledger(s)
            tk = "ledger" if ledger is not None else "thought"
        else:
            tk = "reply"
        if rec is not None and tk in ("reply", "thought") and is_final(role, content):
            tk = "final"  # an imported log's last word, read with the importer's rule
        turn = Turn(index, speaker, role, tk, content, target, ledger)
        have = turns.get(index)
        if have is None:
            turns[index] = turn
        elif tk == "plan" and have.kind != "plan":
            # One history turn both posted the plan and acted (AG2's first expert): it is a
            # plan turn, spoken by the agent that acted in it, not by the plan's owner label.
            turns[index] = replace(turn, speaker=have.speaker, role=have.role)
        elif have.kind == "plan" and tk != "plan":
            turns[index] = replace(have, speaker=speaker, role=role)
    task_at = run_attrs.get(C.IMPORT_RECORD)
    if run is not None and str(task_at).isdigit() and int(str(task_at)) not in turns:
        # An imported log's task turns (what the run was given) are its run span's input.
        given = _text(run_attrs.get(A.INPUT)) or _text(run_attrs.get(A.RUN_OBJECTIVE))
        turns[int(str(task_at))] = Turn(int(str(task_at)), planner, "task", "task", given)
    ordered = tuple(turns[i] for i in sorted(turns))
    return Conversation(
        source=str(trace.get("trace_id", "trace")),
        framework=framework,
        question=_text(
            run_attrs.get(A.RUN_OBJECTIVE)
            or run_attrs.get(A.OI_INPUT_VALUE)
            or run_attrs.get(A.TL_ENTITY_INPUT)
            or run_attrs.get(A.LF_OBSERVATION_INPUT)
        ),
        source_id=None,
        turns=ordered,
        planner=planner,
        tool_speakers=frozenset(t.speaker for t in ordered if t.kind == "tool"),
        final_answer=_output(run_attrs) or None,
    )

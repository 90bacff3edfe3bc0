"""Rebuild a :class:`Conversation` from a stored trace (``GET /api/traces/{id}``), so a run that
is already in planscope — imported or instrumented — can be attributed.

Turn indices are the ``planscope.import.record`` of imported spans; for other traces they are
the spans' order (run excluded).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from planscope import semconv as A

from ..importers import _conventions as C
from ..importers._conversation import FRAMEWORK_MAGENTIC, Conversation, Ledger, Turn, TurnKind


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


def conversation_from_trace(trace: dict[str, Any]) -> Conversation:
    """A conversation from a trace's spans (the query API's JSON)."""
    spans = sorted(trace.get("spans") or [], key=lambda s: int(s.get("start_ns") or 0))
    run = next(
        (
            s
            for s in spans
            if s.get("planscope_kind") == A.KIND_RUN
            or (s.get("attributes") or {}).get(A.SPAN_KIND) == A.KIND_RUN
        ),
        None,
    )
    run_attrs = (run or {}).get("attributes") or {}
    framework = str(run_attrs.get(C.IMPORT_FRAMEWORK) or run_attrs.get(A.RUN_VARIANT) or "trace")
    # A name that exists in the trace: the run's agent, else its service, else its span name.
    planner = str(
        run_attrs.get(A.GEN_AI_AGENT_NAME)
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
        kind = s.get("planscope_kind") or a.get(A.SPAN_KIND)
        if not kind:
            continue
        rec = a.get(C.IMPORT_RECORD)
        index = int(rec) if rec is not None and str(rec).lstrip("-").isdigit() else counter
        counter = max(counter, index) + 1
        agent = str(a.get(A.GEN_AI_AGENT_NAME) or a.get(A.STEP_EXECUTOR) or planner)
        role = str(a.get(C.IMPORT_ROLE) or agent)
        out = _text(a.get(A.OUTPUT))
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
                speaker = str(a.get(A.GEN_AI_TOOL_NAME) or s.get("name") or agent)
            if s.get("status_code") == "Error" and not out.lower().startswith("exitcode"):
                content = "exitcode: 1 (execution failed)\n" + out
        elif kind == A.KIND_LLM and a.get(A.LLM_ROLE) == "planner":
            ledger = _ledger(s)
            tk = "ledger" if ledger is not None else "thought"
        else:
            tk = "reply"
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
    ordered = tuple(turns[i] for i in sorted(turns))
    return Conversation(
        source=str(trace.get("trace_id", "trace")),
        framework=framework,
        question=str(run_attrs.get(A.RUN_OBJECTIVE, "")),
        source_id=None,
        turns=ordered,
        planner=planner,
        tool_speakers=frozenset(t.speaker for t in ordered if t.kind == "tool"),
        final_answer=_text(run_attrs.get(A.OUTPUT)) or None,
    )

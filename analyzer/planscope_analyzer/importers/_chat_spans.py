"""Turn a :class:`Conversation` (a multi-agent chat log) into planscope spans.

Mapping (docs/importers.md has the full table):

* the whole log is one ``run`` span (objective = the question, outcome = ``failure`` for
  Who&When logs, which are all failed runs; labels never become attributes);
* each plan (Magentic-One "Initial plan"/"New plan", AG2's manager plan in turn 0) is a ``plan``
  span with a growing version; its JSON lists the steps dispatched while it was in force;
* each executor action is a ``step`` span: Magentic-One's ``Orchestrator (-> X)`` instruction is
  the step's input and its only context key (``instruction``), X's reply its output; AG2 expert
  turns are steps executed by the expert, with the conversation so far as context;
* code-execution outputs are ``tool`` spans under the step that wrote the code;
* planner thoughts (ledgers, "Next speaker", "Stalled.... Replanning...") are ``llm`` spans with
  ``planscope.llm.role = planner``; ledgers also carry an event with their flags.

Every span carries ``planscope.import.record``, the history index, so attribution can name steps.
Logs have no clock: turn ``i`` is placed at ``start + i`` seconds, which keeps order and makes the
run end "now" (within the collector's retention).
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import PurePath

from planscope import semconv as A
from planscope.fingerprints import fingerprint, normalise_message, stable_hash

from . import _conventions as C
from ._conversation import FRAMEWORK_MAGENTIC, Conversation, Turn
from ._spans import (
    SPAN_KIND_CLIENT,
    STATUS_ERROR,
    STATUS_OK,
    AttrValue,
    EventRecord,
    SpanRecord,
    json_text,
    stable_id,
)
from ._whowhen import exit_code

TURN_NS = 1_000_000_000
"""Synthetic duration of one history turn."""
MAX_PAYLOAD_BYTES = 8192
"""Cap on captured text per attribute, as the SDK's default ``capture_max_bytes``."""
NO_PROGRESS = "NoProgress"
"""``error.type`` of a step the planner's next ledger judged as making no progress."""
CODE_FAILED = "CodeExecutionFailed"
"""``error.type`` of code whose execution exited non-zero."""
_CODE = re.compile(r"```")


def _cap(text: str) -> tuple[str, bool]:
    raw = text.encode("utf-8")
    if len(raw) <= MAX_PAYLOAD_BYTES:
        return text, False
    return raw[:MAX_PAYLOAD_BYTES].decode("utf-8", errors="ignore"), True


@dataclass
class _Builder:
    conv: Conversation
    trace_id: bytes
    base_ns: int
    spans: list[SpanRecord] = field(default_factory=list)
    run: SpanRecord | None = None
    plan_id: str = ""
    plan_version: int = 0
    plan_span: SpanRecord | None = None
    plan_steps: dict[int, list[dict[str, object]]] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)

    def at(self, index: int) -> int:
        return self.base_ns + (index + 1) * TURN_NS

    def span(
        self,
        name: str,
        kind: str,
        start: int,
        end: int,
        turn: Turn | None,
        parent: SpanRecord | None,
    ) -> SpanRecord:
        sid = stable_id(self.trace_id.hex(), name, str(len(self.spans)), size=8)
        s = SpanRecord(
            self.trace_id, sid, name, start, end, parent_span_id=parent.span_id if parent else b""
        )
        s.set(A.SPAN_KIND, kind).set(A.GEN_AI_OPERATION_NAME, A.OPERATION_FOR_KIND[kind])
        s.set(A.RUN_ID, self.trace_id.hex())
        s.set(C.IMPORT_FORMAT, "whowhen").set(C.IMPORT_SOURCE, PurePath(self.conv.source).name)
        if turn is not None:
            s.set(C.IMPORT_RECORD, turn.index).set(C.IMPORT_ROLE, turn.role)
        self.spans.append(s)
        return s

    def stamp_plan(self, s: SpanRecord) -> None:
        if self.plan_version:
            s.set(A.PLAN_ID, self.plan_id).set(A.PLAN_VERSION, self.plan_version)

    def payload(self, s: SpanRecord, key: str, value: object) -> None:
        text, cut = _cap(value if isinstance(value, str) else json_text(value))
        s.set(key, text)
        if cut:
            s.set(A.TRUNCATED, True)


def conversation_spans(conv: Conversation, *, end_ns: int | None = None) -> list[SpanRecord]:
    """All spans of one imported log, the run span first; deterministic for a given ``end_ns``.

    >>> from ._whowhen import parse_whowhen
    >>> conv = parse_whowhen(b'{"question": "q", "history": [{"role": "human", "content": "q"},'
    ...     b'{"role": "Orchestrator (-> A)", "content": "do"}, {"role": "A", "content": "ok"}]}',
    ...     "x.json")
    >>> [s.name for s in conversation_spans(conv, end_ns=10**18)]
    ['invoke_agent Orchestrator', 'execute_step A-ac0b52a2ae6ef999', 'chat']
    """
    key = f"{conv.framework}:{conv.source_id or ''}:{conv.question}:{len(conv.turns)}"
    trace_id = stable_id(key, PurePath(conv.source).name, size=16)
    n = len(conv.turns)
    end = end_ns if end_ns is not None else time.time_ns()
    b = _Builder(conv, trace_id, end - (n + 1) * TURN_NS)
    b.plan_id = stable_id(trace_id.hex(), "plan", size=16).hex()
    agent = conv.planner
    run = b.span(f"{A.OP_INVOKE_AGENT} {agent}", A.KIND_RUN, b.base_ns, end, None, None)
    b.run = run
    run.set(A.GEN_AI_AGENT_NAME, agent).set(A.GEN_AI_CONVERSATION_ID, trace_id.hex())
    run.set(A.RUN_OBJECTIVE, _cap(conv.question)[0]).set(A.RUN_VARIANT, conv.framework)
    run.set(A.RUN_OUTCOME, A.OUTCOME_FAILURE)
    run.set(A.RUN_OUTCOME_REASON, "imported failed run: the final answer was judged incorrect")
    run.set(C.IMPORT_FRAMEWORK, conv.framework).set(C.IMPORT_SOURCE_ID, conv.source_id)
    run.status_code, run.status_message = STATUS_ERROR, "run failed"
    if conv.final_answer:
        b.payload(run, A.OUTPUT, conv.final_answer)
    task = "\n\n".join(t.content for t in conv.turns if t.kind == "task")
    if task:  # what the run was given (a system prompt, the user's first message)
        b.payload(run, A.INPUT, task)
    run.events.append(
        EventRecord(
            A.EVENT_OUTCOME_CHECK,
            end,
            {
                A.RUN_OUTCOME: A.OUTCOME_FAILURE,
                A.OUTCOME_CHECK_NAME: "imported-label",
                A.RUN_OUTCOME_REASON: "the run's final answer was judged incorrect",
            },
        )
    )
    if conv.framework == FRAMEWORK_MAGENTIC:
        _magentic(b)
    else:
        _ag2(b)
    _finish_plans(b)
    return b.spans


def _new_plan(b: _Builder, turn: Turn, planner: str, text: str, reason: str | None) -> None:
    b.plan_version += 1
    s = b.span(
        f"{A.OP_PLAN} {planner}",
        A.KIND_PLAN,
        b.at(turn.index),
        b.at(turn.index) + TURN_NS,
        turn,
        b.run,
    )
    s.set(A.GEN_AI_AGENT_NAME, planner).set(A.PLAN_ID, b.plan_id)
    s.set(A.PLAN_VERSION, b.plan_version).set(A.PLAN_APPROVAL, A.APPROVAL_NOT_REQUIRED)
    if b.plan_version > 1:
        s.set(A.PLAN_PARENT_VERSION, b.plan_version - 1).set(A.PLAN_REPLAN_REASON, reason)
    b.payload(s, A.OUTPUT, text)
    b.plan_span = s
    b.plan_steps[b.plan_version] = []


def _finish_plans(b: _Builder) -> None:
    for s in b.spans:
        if s.attributes.get(A.SPAN_KIND) != A.KIND_PLAN:
            continue
        version = int(s.attributes[A.PLAN_VERSION])
        steps = b.plan_steps.get(version, [])
        s.set(A.PLAN_STEP_COUNT, len(steps))
        plan = {
            "id": b.plan_id,
            "version": version,
            "scope": None,
            "objective": _cap(b.conv.question)[0][:2000],
            "replan_reason": s.attributes.get(A.PLAN_REPLAN_REASON),
            "steps": steps,
        }
        s.set(A.PLAN_JSON, json_text(plan))


def _add_step(b: _Builder, step_id: str, executor: str, description: str, given: list[str]) -> int:
    """Record the step in the plan in force (once per plan version); return the attempt.

    A log says what each turn was given, never what it needed: the step's ``requires`` is what
    the importer hands it (``given``), so no detector reads the importer's own scaffolding as a
    starved executor."""
    if b.plan_version == 0:  # an executor acted before any plan: an implicit empty plan
        b.plan_version = 1
        b.plan_steps[1] = []
    steps = b.plan_steps[b.plan_version]
    if all(st["id"] != step_id for st in steps):
        steps.append(
            {
                "id": step_id,
                "description": description[:500],
                "executor": executor,
                "tool": None,
                "depends_on": [steps[-1]["id"]] if steps else [],
                "requires": given,
                "produces": [],
                "irreversible": False,
            }
        )
    b.attempts[step_id] = b.attempts.get(step_id, 0) + 1
    return b.attempts[step_id]


def _step_span(
    b: _Builder,
    turn: Turn,
    end_index: int,
    step_id: str,
    executor: str,
    context: dict[str, str],
    description: str,
) -> SpanRecord:
    attempt = _add_step(b, step_id, executor, description, sorted(context))
    s = b.span(
        f"{A.OP_EXECUTE_STEP} {step_id}",
        A.KIND_STEP,
        b.at(turn.index),
        b.at(end_index) + TURN_NS,
        turn,
        b.run,
    )
    b.stamp_plan(s)
    s.set(A.STEP_ID, step_id).set(A.STEP_ATTEMPT, attempt).set(A.STEP_EXECUTOR, executor)
    s.set(A.GEN_AI_AGENT_NAME, executor).set(A.STEP_DEPTH, 0)
    s.set(A.STEP_CONTEXT_KEYS, json_text(sorted(context)))
    s.set(A.STEP_CONTEXT_TOKENS, math.ceil(sum(len(v) for v in context.values()) / 4))
    s.set(A.STEP_INPUT_HASH, stable_hash(context))
    b.payload(s, A.INPUT, context)
    s.set(A.STEP_STATUS, A.STATUS_OK)
    s.status_code = STATUS_OK
    return s


def _fail(s: SpanRecord, error_type: str, message: str) -> None:
    s.set(A.STEP_STATUS, A.STATUS_ERROR).set(A.ERROR_TYPE, error_type)
    s.set(A.STEP_ERROR_FINGERPRINT, fingerprint(error_type, message))
    s.status_code, s.status_message = STATUS_ERROR, f"{error_type}: {message[:200]}"


def _planner_llm(b: _Builder, turn: Turn) -> SpanRecord:
    s = b.span(A.OP_CHAT, A.KIND_LLM, b.at(turn.index), b.at(turn.index) + TURN_NS, turn, b.run)
    s.kind = SPAN_KIND_CLIENT
    s.set(A.LLM_ROLE, "planner").set(A.GEN_AI_AGENT_NAME, turn.speaker)
    b.stamp_plan(s)
    b.payload(s, A.OUTPUT, turn.content)
    return s


def _child_llm(b: _Builder, turn: Turn, step: SpanRecord, role: str) -> SpanRecord:
    s = b.span(A.OP_CHAT, A.KIND_LLM, b.at(turn.index), b.at(turn.index) + TURN_NS, turn, step)
    s.kind = SPAN_KIND_CLIENT
    s.set(A.LLM_ROLE, role).set(A.GEN_AI_AGENT_NAME, turn.speaker)
    for k in (A.PLAN_ID, A.PLAN_VERSION, A.STEP_ID, A.STEP_ATTEMPT):
        if k in step.attributes:
            s.set(k, step.attributes[k])
    b.payload(s, A.OUTPUT, turn.content)
    return s


def _tool_span(b: _Builder, turn: Turn, step: SpanRecord | None, code: str) -> SpanRecord:
    parent = step or b.run
    s = b.span(
        f"{A.OP_EXECUTE_TOOL} code_execution",
        A.KIND_TOOL,
        b.at(turn.index),
        b.at(turn.index) + TURN_NS,
        turn,
        parent,
    )
    s.set(A.GEN_AI_TOOL_NAME, "code_execution").set(A.TOOL_EFFECT, A.EFFECT_WRITE)
    s.set(A.GEN_AI_AGENT_NAME, turn.speaker).set(A.TOOL_ARGS_HASH, stable_hash({"code": code}))
    b.payload(s, A.INPUT, {"code": code})
    b.payload(s, A.GEN_AI_TOOL_CALL_RESULT, turn.content)
    b.payload(s, A.OUTPUT, turn.content)
    if step is not None:
        for k in (A.PLAN_ID, A.PLAN_VERSION, A.STEP_ID, A.STEP_ATTEMPT):
            if k in step.attributes:
                s.set(k, step.attributes[k])
    else:
        b.stamp_plan(s)
    code_rc = exit_code(turn.content)
    if code_rc not in (None, 0):
        s.set(A.ERROR_TYPE, CODE_FAILED)
        s.status_code, s.status_message = STATUS_ERROR, _last_line(turn.content)[:200]
    elif code_rc == 0:
        s.status_code = STATUS_OK
    return s


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "agent"


def _instruction_step_id(executor: str, instruction: str) -> str:
    """Same executor + same instruction (up to numbers/whitespace) = the same step, re-attempted."""
    norm = normalise_message(instruction.lower())
    return f"{_slug(executor)}-{hashlib.sha256(norm.encode()).hexdigest()[:16]}"


def _magentic(b: _Builder) -> None:
    turns = b.conv.turns
    open_step: SpanRecord | None = None
    pending_reason: str | None = None
    for i, t in enumerate(turns):
        if t.kind == "task":
            if b.run is not None:
                b.run.set(C.IMPORT_RECORD, t.index)
        elif t.kind == "plan":
            _new_plan(b, t, t.speaker, t.content, pending_reason or "planner stalled")
            pending_reason = None
        elif t.kind == "dispatch":
            executor = t.target or "executor"
            reply_idx = next(
                (u.index for u in turns[i + 1 :] if u.kind == "reply" or u.kind == "dispatch"),
                t.index,
            )
            reply = turns[reply_idx] if turns[reply_idx].kind == "reply" else None
            sid = _instruction_step_id(executor, t.content)
            open_step = _step_span(
                b,
                t,
                reply_idx if reply else t.index,
                sid,
                executor,
                {"instruction": t.content},
                t.content,
            )
            if reply is not None:
                b.payload(open_step, A.OUTPUT, reply.content)
        elif t.kind == "reply":
            if open_step is not None and open_step.attributes.get(A.STEP_EXECUTOR) == t.speaker:
                rc = exit_code(t.content)
                if rc not in (None, 0):
                    _fail(open_step, CODE_FAILED, _last_line(t.content))
                _child_llm(b, t, open_step, "executor")
            else:  # an executor spoke without an instruction: a step of its own
                s = _step_span(
                    b, t, t.index, f"{_slug(t.speaker)}-unprompted", t.speaker, {}, "(unprompted)"
                )
                b.payload(s, A.OUTPUT, t.content)
                _child_llm(b, t, s, "executor")
        elif t.kind == "ledger":
            s = _planner_llm(b, t)
            led = t.ledger
            if led is not None:
                attrs: dict[str, AttrValue] = {}
                for key, value in (
                    (C.LEDGER_IN_LOOP, led.is_in_loop),
                    (C.LEDGER_PROGRESS, led.is_progress_being_made),
                    (C.LEDGER_SATISFIED, led.is_request_satisfied),
                    (C.LEDGER_NEXT_SPEAKER, led.next_speaker),
                ):
                    if value is not None:
                        attrs[key] = value
                reason = led.reasons.get("is_progress_being_made") or ""
                if reason:
                    attrs[C.LEDGER_REASON] = _cap(reason)[0]
                s.events.append(EventRecord(C.EVENT_LEDGER, s.start_ns, attrs))
                if (
                    led.is_progress_being_made is False
                    and open_step is not None
                    and open_step.attributes.get(A.STEP_STATUS) == A.STATUS_OK
                ):
                    _fail(open_step, NO_PROGRESS, "the planner saw no progress")
                if led.is_in_loop or led.is_progress_being_made is False:
                    pending_reason = reason or "no progress"
            open_step = None
        else:  # thought / final
            s = _planner_llm(b, t)
            if "replan" in t.content.lower() and b.run is not None:
                b.run.events.append(
                    EventRecord(
                        A.EVENT_REPLAN_REQUESTED,
                        s.start_ns,
                        {
                            A.PLAN_REPLAN_REASON: pending_reason or t.content.splitlines()[0][:200],
                            A.PLAN_ID: b.plan_id,
                            A.PLAN_VERSION: b.plan_version,
                        },
                    )
                )


def _ag2(b: _Builder) -> None:
    turns = b.conv.turns
    last_step: SpanRecord | None = None
    last_code = ""
    for i, t in enumerate(turns):
        if t.kind == "plan":
            _new_plan(b, t, b.conv.planner, t.content, None)
            # The expert who received the plan also speaks in this turn: its first step.
            last_step = _step_span(
                b,
                t,
                t.index,
                f"h{t.index}",
                t.speaker,
                {"task": b.conv.question, "plan": t.content},
                "receive the plan",
            )
            b.payload(last_step, A.OUTPUT, t.content)
            last_code = _code_of(t.content)
        elif t.kind == "task":
            if b.run is not None:
                b.run.set(C.IMPORT_RECORD, t.index)
        elif t.kind == "tool":
            # An execution output answers the step before it, with or without code in it: a
            # tool span outside every step would be the importer's guess reported as drift.
            code = last_code if last_step is not None else ""
            tool = _tool_span(b, t, last_step, code)
            if last_step is not None and code and tool.status_code == STATUS_ERROR:
                _fail(last_step, CODE_FAILED, _last_line(t.content))
            last_code = ""
        else:  # reply or final
            history = "\n".join(u.content for u in turns[:i])
            last_step = _step_span(
                b,
                t,
                t.index,
                f"h{t.index}",
                t.speaker,
                {"conversation": history},
                t.content.strip().split("\n")[0],
            )
            b.payload(last_step, A.OUTPUT, t.content)
            last_code = _code_of(t.content)


def _code_of(text: str) -> str:
    parts = _CODE.split(text)
    return "\n".join(parts[1::2]).strip() if len(parts) > 2 else ""

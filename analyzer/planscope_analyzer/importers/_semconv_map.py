"""Map OpenInference and OpenLLMetry (Traceloop) spans onto planscope's run/plan/step/tool/llm
model, in place, by adding planscope attributes (the originals stay).

Rules (docs/importers.md explains them):

* the root agent-like span (OpenInference ``AGENT``/``CHAIN``, Traceloop ``workflow``/``agent``)
  is the ``run``; with no agent-like root, the top-most ``AGENT`` is;
* agent-like spans below the run are ``step`` spans executed by that agent (sub-agents,
  LangGraph nodes directly under the graph, Traceloop ``task``); one whose name mentions
  ``plan`` is a ``plan`` span instead (a new version each time);
* ``TOOL``/``RETRIEVER``/``RERANKER`` and Traceloop ``tool`` are ``tool`` spans (retrievers read);
* ``LLM`` and spans with ``gen_ai.system``/``llm.request.type`` are ``llm`` spans;
* payloads, model, token counts are copied to the GenAI/planscope names; tool and LLM spans
  inside a step are stamped with the step's id/attempt and the plan in force; attempts are
  counted per (run, step id) in start order; an ERROR status gives ``step.status = error`` and a
  failed ``run.outcome``.

>>> from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
>>> map_semconv([ExportTraceServiceRequest()])
0
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from planscope import semconv as A
from planscope.fingerprints import fingerprint

from . import _conventions as C
from ._otlp_files import all_spans
from ._spans import STATUS_ERROR, AttrValue, any_value

_AGENTISH_OI = {"AGENT", "CHAIN"}
_AGENTISH_TL = {"workflow", "agent", "task"}
_TOOL_OI = {"TOOL", "RETRIEVER", "RERANKER"}
_READ_OI = {"RETRIEVER", "RERANKER"}


def _get(span: Any, key: str) -> str | None:
    for kv in span.attributes:
        if kv.key == key:
            which = kv.value.WhichOneof("value")
            return None if which is None else str(getattr(kv.value, which))
    return None


def _set(span: Any, key: str, value: AttrValue | None, *, overwrite: bool = False) -> None:
    if value is None:
        return
    for kv in span.attributes:
        if kv.key == key:
            if overwrite:
                kv.value.CopyFrom(any_value(value))
            return
    span.attributes.append(KeyValue(key=key, value=any_value(value)))


def source_kind(span: Any) -> str | None:
    """``openinference:AGENT`` / ``traceloop:task`` / ``genai:llm`` or ``None`` if unmapped."""
    oi = _get(span, C.OI_SPAN_KIND)
    if oi:
        return f"openinference:{oi.upper()}"
    tl = _get(span, C.TL_SPAN_KIND)
    if tl:
        return f"traceloop:{tl.lower()}"
    if _get(span, C.TL_REQUEST_TYPE) or _get(span, C.GEN_AI_SYSTEM):
        return "genai:llm"
    return None


def _agentish(sk: str | None) -> bool:
    if sk is None:
        return False
    fam, kind = sk.split(":", 1)
    return (fam == "openinference" and kind in _AGENTISH_OI) or (
        fam == "traceloop" and kind in _AGENTISH_TL
    )


def _is_tool(sk: str | None) -> bool:
    return sk is not None and (sk.split(":", 1)[1] in _TOOL_OI or sk == "traceloop:tool")


def _is_llm(sk: str | None) -> bool:
    return sk in ("openinference:LLM", "genai:llm")


def _name(span: Any) -> str:
    return (
        _get(span, C.TL_ENTITY_NAME)
        or _get(span, C.OI_AGENT_NAME)
        or _get(span, A.GEN_AI_AGENT_NAME)
        or span.name
        or "agent"
    )


def map_semconv(requests: list[ExportTraceServiceRequest]) -> int:
    """Add planscope attributes to OpenInference/OpenLLMetry spans; returns how many were mapped.

    Spans that already carry ``planscope.span.kind`` are left as they are.
    """
    spans = all_spans(requests)
    by_trace: dict[bytes, list[Any]] = defaultdict(list)
    for s in spans:
        by_trace[s.trace_id].append(s)
    mapped = 0
    for trace_spans in by_trace.values():
        mapped += _map_trace(trace_spans)
    return mapped


def _map_trace(spans: list[Any]) -> int:
    if any(_get(s, A.SPAN_KIND) for s in spans):
        return 0  # already planscope-instrumented
    by_id = {s.span_id: s for s in spans}
    kinds = {s.span_id: source_kind(s) for s in spans}
    if not any(kinds.values()):
        return 0

    def parent(s: Any) -> Any | None:
        return by_id.get(s.parent_span_id) if s.parent_span_id else None

    def ancestors(s: Any) -> list[Any]:
        out, p, guard = [], parent(s), 0
        while p is not None and guard < 10_000:
            out.append(p)
            p, guard = parent(p), guard + 1
        return out

    ordered = sorted(spans, key=lambda s: (s.start_time_unix_nano, len(ancestors(s))))
    run = next((s for s in ordered if parent(s) is None and _agentish(kinds[s.span_id])), None)
    if run is None:
        run = next((s for s in ordered if kinds[s.span_id] == "openinference:AGENT"), None)
    ps: dict[bytes, str] = {}
    if run is not None:
        ps[run.span_id] = A.KIND_RUN
    for s in ordered:
        sid, sk = s.span_id, kinds[s.span_id]
        if sid in ps or sk is None:
            continue
        anc = ancestors(s)
        in_run = run is not None and any(a.span_id == run.span_id for a in anc)
        if _is_tool(sk):
            ps[sid] = A.KIND_TOOL
        elif _is_llm(sk):
            ps[sid] = A.KIND_LLM
        elif _agentish(sk) and in_run:
            # A step is the first agent-like level below the run (or below a plan).
            outer = [a for a in anc if ps.get(a.span_id) in (A.KIND_STEP,)]
            if outer and sk == "openinference:CHAIN":
                continue  # an inner chain of a step: just structure
            ps[sid] = A.KIND_PLAN if "plan" in _name(s).lower() else A.KIND_STEP
    run_id = run.trace_id.hex() if run is not None else None
    attempts: dict[str, int] = defaultdict(int)
    plan_version = 0
    plan_id = hashlib.sha256(b"plan" + (run.span_id if run else b"")).hexdigest()[:32]
    current_plan: tuple[str, int] | None = None
    step_of: dict[bytes, Any] = {}
    for s in ordered:
        kind = ps.get(s.span_id)
        sk = kinds[s.span_id]
        anc = ancestors(s)
        if kind is None:
            continue
        _set(s, A.SPAN_KIND, kind)
        _set(s, A.GEN_AI_OPERATION_NAME, A.OPERATION_FOR_KIND[kind])
        _set(s, C.IMPORT_SOURCE_KIND, sk)
        _set(s, C.IMPORT_FORMAT, "openinference")
        if run_id and (s is run or any(a is run for a in anc)):
            _set(s, A.RUN_ID, run_id)
        _payloads(s)
        failed = s.status.code == STATUS_ERROR
        if kind == A.KIND_RUN:
            _set(s, A.GEN_AI_AGENT_NAME, _name(s))
            _set(s, A.GEN_AI_CONVERSATION_ID, _get(s, C.OI_SESSION_ID) or run_id)
            _set(
                s,
                A.RUN_OBJECTIVE,
                (_get(s, C.OI_INPUT) or _get(s, C.TL_ENTITY_INPUT) or "")[:4000] or None,
            )
            _set(s, A.RUN_OUTCOME, A.OUTCOME_FAILURE if failed else A.OUTCOME_UNKNOWN)
            if failed:
                _set(s, A.RUN_OUTCOME_REASON, s.status.message or "the root span failed")
        elif kind == A.KIND_PLAN:
            plan_version += 1
            current_plan = (plan_id, plan_version)
            _set(s, A.GEN_AI_AGENT_NAME, _name(s))
            _set(s, A.PLAN_ID, plan_id)
            _set(s, A.PLAN_VERSION, plan_version)
            if plan_version > 1:
                _set(s, A.PLAN_PARENT_VERSION, plan_version - 1)
        elif kind == A.KIND_STEP:
            step_id = _name(s)
            attempts[step_id] += 1
            step_of[s.span_id] = s
            _set(s, A.STEP_ID, step_id)
            _set(s, A.STEP_ATTEMPT, attempts[step_id])
            _set(s, A.STEP_EXECUTOR, _name(s))
            _set(s, A.GEN_AI_AGENT_NAME, _name(s))
            _set(s, A.STEP_DEPTH, sum(1 for a in anc if ps.get(a.span_id) == A.KIND_STEP))
            _set(s, A.STEP_STATUS, A.STATUS_ERROR if failed else A.STATUS_OK)
            if current_plan:
                _set(s, A.PLAN_ID, current_plan[0])
                _set(s, A.PLAN_VERSION, current_plan[1])
            if failed:
                etype = _error_type(s)
                _set(s, A.ERROR_TYPE, etype)
                _set(
                    s,
                    A.STEP_ERROR_FINGERPRINT,
                    fingerprint(etype, s.status.message),
                )
        else:
            step = next((step_of[a.span_id] for a in anc if a.span_id in step_of), None)
            if step is not None:
                for key in (A.STEP_ID, A.STEP_ATTEMPT, A.PLAN_ID, A.PLAN_VERSION):
                    value = _get(step, key)
                    if value is not None:
                        _set(
                            s, key, int(value) if key in (A.STEP_ATTEMPT, A.PLAN_VERSION) else value
                        )
            if kind == A.KIND_TOOL:
                _set(s, A.GEN_AI_TOOL_NAME, _get(s, C.OI_TOOL_NAME) or _name(s))
                if sk and sk.split(":", 1)[1] in _READ_OI:
                    _set(s, A.TOOL_EFFECT, A.EFFECT_READ)
                args = _get(s, C.OI_TOOL_PARAMETERS) or _get(s, C.OI_INPUT)
                _set(s, A.GEN_AI_TOOL_CALL_ARGUMENTS, args)
                if args is not None:
                    _set(s, A.TOOL_ARGS_HASH, hashlib.sha256(args.encode()).hexdigest()[:16])
                if failed:
                    _set(s, A.ERROR_TYPE, _error_type(s))
            else:
                _set(s, A.GEN_AI_REQUEST_MODEL, _get(s, C.OI_MODEL))
                _set(
                    s,
                    A.GEN_AI_PROVIDER_NAME,
                    _get(s, C.OI_PROVIDER) or _get(s, C.OI_SYSTEM) or _get(s, C.GEN_AI_SYSTEM),
                )
                for ours, theirs in (
                    (A.GEN_AI_USAGE_INPUT_TOKENS, (C.OI_PROMPT_TOKENS, C.GEN_AI_PROMPT_TOKENS_OLD)),
                    (
                        A.GEN_AI_USAGE_OUTPUT_TOKENS,
                        (C.OI_COMPLETION_TOKENS, C.GEN_AI_COMPLETION_TOKENS_OLD),
                    ),
                ):
                    raw = next((v for v in (_get(s, k) for k in theirs) if v is not None), None)
                    if raw is not None and raw.lstrip("-").isdigit():
                        _set(s, ours, int(raw))
                _set(
                    s,
                    A.LLM_ROLE,
                    "planner" if any(ps.get(a.span_id) == A.KIND_PLAN for a in anc) else "executor",
                )
    return len(ps)


def _payloads(s: Any) -> None:
    _set(s, A.INPUT, _get(s, C.OI_INPUT) or _get(s, C.TL_ENTITY_INPUT))
    _set(s, A.OUTPUT, _get(s, C.OI_OUTPUT) or _get(s, C.TL_ENTITY_OUTPUT))


def _error_type(s: Any) -> str:
    for e in s.events:
        if e.name == "exception":
            t = _get(e, "exception.type")
            if t:
                return t
    return "Error"

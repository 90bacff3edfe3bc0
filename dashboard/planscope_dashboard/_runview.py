"""A run, as the run-detail page sees it: pure functions from ``GET /api/traces/{id}`` JSON.

``build_run_view`` indexes the spans once (plans by version, attempts by step, actions by
attempt, executor lanes); the DAG, timeline, planned-vs-executed diff and the "why did the agent
do that?" chain are computed from it without Streamlit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from planscope import semconv as A

# Execution status of a plan step (DAG node colours are keyed by these).
OK = "ok"
FAILED = "failed"
RETRIED = "retried"
SKIPPED = "skipped"
NOT_EXECUTED = "not executed"
STEP_STATUSES = (OK, RETRIED, FAILED, SKIPPED, NOT_EXECUTED)

PLANNER_LANE = "planner"
RUN_LANE = "run"
UNASSIGNED_LANE = "(no executor)"
NO_STEP_LANE = "(outside any step)"


@dataclass
class SpanInfo:
    """One span, flattened for tables and the timeline."""

    span_id: str
    parent_id: str | None
    name: str
    kind: str
    start_ns: int
    end_ns: int
    status: str  # "ok" | "error"
    status_message: str
    attributes: dict[str, Any]
    events: list[dict[str, Any]]
    step_id: str | None = None
    attempt: int | None = None
    plan_id: str | None = None
    plan_version: int | None = None
    lane: str = UNASSIGNED_LANE
    step_span_id: str | None = None
    """For tool/llm spans: the enclosing step attempt's span."""
    step_status: str | None = None
    """For step spans: the attempt's status as the API's run model gives it."""

    @property
    def duration_ns(self) -> int:
        return max(0, self.end_ns - self.start_ns)

    @property
    def tokens(self) -> int:
        return _int(self.attributes.get(A.GEN_AI_USAGE_INPUT_TOKENS)) + _int(
            self.attributes.get(A.GEN_AI_USAGE_OUTPUT_TOKENS)
        )


@dataclass
class Attempt:
    """One attempt at one plan step (one step span)."""

    span_id: str
    step_id: str
    number: int
    status: str  # ok | error | skipped (the SDK's step status)
    start_ns: int
    end_ns: int
    executor: str | None
    plan_id: str | None
    plan_version: int | None
    context_keys: list[str] | None
    context_tokens: int | None
    self_assessment: str | None
    error_type: str | None
    error_message: str
    fingerprint: str | None
    input_hash: str | None
    budget_exceeded: bool
    actions: list[str] = field(default_factory=list)
    """Span ids of the tool and LLM calls made inside this attempt."""

    @property
    def succeeded(self) -> bool:
        return self.status == "ok" and self.self_assessment != "failure"


@dataclass
class PlanVersion:
    """One recorded plan (a plan span): version ``version`` of plan ``plan_id``."""

    plan_id: str
    version: int
    span_id: str
    start_ns: int
    steps: list[dict[str, Any]]
    scope: str | None
    replan_reason: str | None
    approval: str | None
    objective: str | None
    parent_version: int | None
    planner_calls: list[str] = field(default_factory=list)
    approval_note: str | None = None
    """Who decided the approval and why (from the plan span's approval event)."""

    @property
    def key(self) -> str:
        return f"{self.plan_id}@v{self.version}"

    def step(self, step_id: str) -> dict[str, Any] | None:
        return next((s for s in self.steps if s.get("id") == step_id), None)


def _approval_note(events: list[dict[str, Any]]) -> str | None:
    """``by <reviewer>: <reason>`` from a plan span's approval event, if it has one.

    >>> _approval_note([{"name": "planscope.approval.denied", "attributes": {
    ...     "planscope.approval.reviewer": "ana", "planscope.approval.reason": "too risky"}}])
    'by ana: too risky'
    """
    for e in events:
        if e.get("name") in (A.EVENT_APPROVAL_GRANTED, A.EVENT_APPROVAL_DENIED):
            a = e.get("attributes") or {}
            who, why = _opt_str(a.get(A.APPROVAL_REVIEWER)), _opt_str(a.get(A.APPROVAL_REASON))
            by = f"by {who}" if who else None
            if by and why:
                return f"{by}: {why}"
            return by or why
    return None


@dataclass
class RunView:
    """Everything the run-detail page needs, indexed."""

    trace_id: str
    run: dict[str, Any] | None
    start_ns: int
    end_ns: int
    spans: dict[str, SpanInfo]
    order: list[str]
    """Span ids by start time."""
    plans: list[PlanVersion]
    attempts: dict[str, list[Attempt]]
    """Step id -> attempts, by attempt number."""
    lanes: list[str]
    unplanned_actions: list[str]
    """Tool/LLM spans (executor actions) that are in no step and in no plan span."""
    metrics: dict[str, Any] | None = None
    """The run model's numbers as the API answers them (``metrics`` of the trace)."""

    @property
    def duration_ns(self) -> int:
        return max(0, self.end_ns - self.start_ns)

    def plan(self, key: str | None) -> PlanVersion | None:
        """The plan version with this key (``id@vN``), else the latest."""
        for plan in self.plans:
            if plan.key == key:
                return plan
        return self.plans[-1] if self.plans else None

    def attempt_of(self, span_id: str) -> Attempt | None:
        span = self.spans.get(span_id)
        if span is None or span.step_id is None:
            return None
        target = span_id if span.kind == A.KIND_STEP else span.step_span_id
        for attempt in self.attempts.get(span.step_id, []):
            if attempt.span_id == target:
                return attempt
        return None


def _int(value: Any) -> int:
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return 0


def _opt_int(value: Any) -> int | None:
    try:
        return None if value is None or value == "" else int(float(value))
    except (TypeError, ValueError):
        return None


def _str_list(value: Any) -> list[str] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if isinstance(value, list):
        return [str(v) for v in value]
    return None


def _plan_steps(doc: Any) -> list[dict[str, Any]]:
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
        return []
    steps = []
    for raw in doc["steps"]:
        if not isinstance(raw, dict) or raw.get("id") in (None, ""):
            continue
        step = dict(raw)
        step["id"] = str(raw["id"])
        for key in ("depends_on", "requires", "produces"):
            step[key] = _str_list(raw.get(key)) or []
        steps.append(step)
    return steps


def build_run_view(trace: dict[str, Any]) -> RunView:
    """Index one trace (the JSON of ``GET /api/traces/{id}``).

    >>> view = build_run_view({"trace_id": "t", "spans": [], "run": None})
    >>> (view.plans, view.attempts)
    ([], {})
    """
    spans: dict[str, SpanInfo] = {}
    for raw in trace.get("spans", []):
        attrs = raw.get("attributes") or {}
        # What the collector's span model made of the span (any convention): its step,
        # attempt and status, bound to an observed plan's step where the trace shows which.
        model = raw.get("model") or {}
        start = _int(raw.get("start_ns"))
        end = _int(raw.get("end_ns")) or start + _int(raw.get("duration_ns"))
        info = SpanInfo(
            span_id=str(raw.get("span_id")),
            parent_id=raw.get("parent_span_id") or None,
            name=str(raw.get("name") or ""),
            kind=str(raw.get("planscope_kind") or attrs.get(A.SPAN_KIND) or "other"),
            start_ns=start,
            end_ns=max(start, end),
            status="error" if raw.get("status_code") == "Error" else "ok",
            status_message=str(raw.get("status_message") or ""),
            attributes=attrs,
            events=list(raw.get("events") or []),
            step_id=_opt_str(attrs.get(A.STEP_ID)) or _opt_str(model.get("step_id")),
            attempt=_opt_int(attrs.get(A.STEP_ATTEMPT)) or _opt_int(model.get("attempt")),
            plan_id=_opt_str(attrs.get(A.PLAN_ID)),
            plan_version=_opt_int(attrs.get(A.PLAN_VERSION)),
            step_status=_opt_str(model.get("status")),
        )
        spans[info.span_id] = info
    order = sorted(spans, key=lambda s: (spans[s].start_ns, s))

    # Enclosing step / plan span of every span (walk up the parent chain once, memoised).
    enclosing: dict[str, tuple[str | None, str | None]] = {}

    def owner(span_id: str) -> tuple[str | None, str | None]:
        chain = []
        current: str | None = span_id
        found: tuple[str | None, str | None] = (None, None)
        while current is not None and current in spans:
            if current in enclosing:
                found = enclosing[current]
                break
            span = spans[current]
            if span.kind == A.KIND_STEP:
                found = (current, None)
                break
            if span.kind == A.KIND_PLAN:
                found = (None, current)
                break
            chain.append(current)
            current = span.parent_id
            if len(chain) > 10_000:  # a parent cycle in bad data
                break
        for item in chain:
            enclosing[item] = found
        return found

    plans: list[PlanVersion] = []
    for sid in order:
        span = spans[sid]
        if span.kind != A.KIND_PLAN:
            continue
        doc = span.attributes.get(A.PLAN_JSON)
        doc = doc if isinstance(doc, dict) else {}
        attrs = span.attributes
        plan_id = _opt_str(attrs.get(A.PLAN_ID)) or _opt_str(doc.get("id")) or "plan"
        version = _opt_int(attrs.get(A.PLAN_VERSION)) or _opt_int(doc.get("version")) or 1
        plans.append(
            PlanVersion(
                plan_id=plan_id,
                version=version,
                span_id=sid,
                start_ns=span.start_ns,
                steps=_plan_steps(doc),
                scope=_opt_str(attrs.get(A.PLAN_SCOPE)) or _opt_str(doc.get("scope")),
                replan_reason=_opt_str(attrs.get(A.PLAN_REPLAN_REASON))
                or _opt_str(doc.get("replan_reason")),
                approval=_opt_str(attrs.get(A.PLAN_APPROVAL)),
                objective=_opt_str(doc.get("objective")),
                parent_version=_opt_int(attrs.get(A.PLAN_PARENT_VERSION)),
                approval_note=_approval_note(span.events),
            )
        )
    # Plans the collector's span model observed in another convention's spans (a planner's
    # output): the API lists them in ``plans`` with ``inferred`` and their steps.
    for doc in trace.get("plans") or []:
        if not isinstance(doc, dict) or not doc.get("inferred"):
            continue
        sid = str(doc.get("span_id") or "")
        if sid not in spans or sid in {p.span_id for p in plans}:
            continue
        plans.append(
            PlanVersion(
                plan_id=_opt_str(doc.get("id")) or "plan",
                version=_opt_int(doc.get("version")) or len(plans) + 1,
                span_id=sid,
                start_ns=spans[sid].start_ns,
                steps=_plan_steps(doc),
                scope=None,
                replan_reason=None,
                approval=None,
                objective=None,
                parent_version=None,
            )
        )
    plan_by_span = {p.span_id: p for p in plans}

    # Executor of each step attempt; lanes for every span.
    attempts: dict[str, list[Attempt]] = {}
    by_span_attempt: dict[str, Attempt] = {}
    for sid in order:
        span = spans[sid]
        if span.kind != A.KIND_STEP:
            continue
        attrs = span.attributes
        step_id = span.step_id or span.name.removeprefix("execute_step ").strip() or sid
        span.step_id = step_id
        executor = _opt_str(attrs.get(A.STEP_EXECUTOR))
        if executor is None:
            planned = _planned_executor(plans, span.plan_id, span.plan_version, step_id)
            executor = planned
        error_type = _opt_str(attrs.get(A.ERROR_TYPE))
        attempt = Attempt(
            span_id=sid,
            step_id=step_id,
            number=span.attempt or len(attempts.get(step_id, [])) + 1,
            status=_opt_str(attrs.get(A.STEP_STATUS))
            or span.step_status
            or ("error" if span.status == "error" else "ok"),
            start_ns=span.start_ns,
            end_ns=span.end_ns,
            executor=executor,
            plan_id=span.plan_id,
            plan_version=span.plan_version,
            context_keys=_str_list(attrs.get(A.STEP_CONTEXT_KEYS)),
            context_tokens=_opt_int(attrs.get(A.STEP_CONTEXT_TOKENS)),
            self_assessment=_opt_str(attrs.get(A.STEP_SELF_ASSESSMENT)),
            error_type=error_type,
            error_message=span.status_message,
            fingerprint=_opt_str(attrs.get(A.STEP_ERROR_FINGERPRINT)),
            input_hash=_opt_str(attrs.get(A.STEP_INPUT_HASH)),
            budget_exceeded=any(
                e.get("name") == A.EVENT_RETRY_BUDGET_EXCEEDED for e in span.events
            ),
        )
        attempts.setdefault(step_id, []).append(attempt)
        by_span_attempt[sid] = attempt
        span.lane = executor or UNASSIGNED_LANE
    for items in attempts.values():
        items.sort(key=lambda a: (a.number, a.start_ns))

    lanes_seen: list[str] = []
    unplanned: list[str] = []
    for sid in order:
        span = spans[sid]
        if span.kind == A.KIND_STEP:
            pass
        elif span.kind == A.KIND_RUN:
            span.lane = RUN_LANE
        elif span.kind == A.KIND_PLAN:
            span.lane = PLANNER_LANE
        else:
            step_sid, plan_sid = owner(span.parent_id) if span.parent_id else (None, None)
            if step_sid is not None:
                attempt = by_span_attempt[step_sid]
                span.step_span_id = step_sid
                span.step_id = span.step_id or attempt.step_id
                span.attempt = span.attempt or attempt.number
                span.plan_id = span.plan_id or attempt.plan_id
                span.plan_version = span.plan_version or attempt.plan_version
                span.lane = attempt.executor or UNASSIGNED_LANE
                if span.kind in (A.KIND_TOOL, A.KIND_LLM):
                    attempt.actions.append(sid)
            elif plan_sid is not None:
                span.lane = PLANNER_LANE
                if span.kind == A.KIND_LLM:
                    plan_by_span[plan_sid].planner_calls.append(sid)
            elif span.attributes.get(A.LLM_ROLE) == "planner":
                span.lane = PLANNER_LANE
            else:
                span.lane = (
                    NO_STEP_LANE
                    if span.kind in (A.KIND_TOOL, A.KIND_LLM)
                    else (
                        str(
                            span.attributes.get(A.GEN_AI_AGENT_NAME)
                            or span.attributes.get(A.HANDOFF_FROM)  # a host's routing
                            or "other"
                        )
                    )
                )
                if span.kind in (A.KIND_TOOL, A.KIND_LLM):
                    unplanned.append(sid)
        if span.lane not in lanes_seen:
            lanes_seen.append(span.lane)
    fixed = [RUN_LANE, PLANNER_LANE]
    lanes = [lane for lane in fixed if lane in lanes_seen] + [
        lane for lane in lanes_seen if lane not in fixed
    ]

    start = min((s.start_ns for s in spans.values()), default=_int(trace.get("start_ns")))
    end = max((s.end_ns for s in spans.values()), default=_int(trace.get("end_ns")))
    plans.sort(key=lambda p: (p.start_ns, p.plan_id, p.version))
    return RunView(
        trace_id=str(trace.get("trace_id") or ""),
        run=trace.get("run"),
        start_ns=start,
        end_ns=end,
        spans=spans,
        order=order,
        plans=plans,
        attempts=attempts,
        lanes=lanes,
        unplanned_actions=unplanned,
        metrics=trace.get("metrics"),
    )


def _opt_str(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _planned_executor(
    plans: list[PlanVersion], plan_id: str | None, version: int | None, step_id: str
) -> str | None:
    for plan in reversed(plans):
        if (plan_id is None or plan.plan_id == plan_id) and (
            version is None or plan.version == version
        ):
            step = plan.step(step_id)
            if step is not None and step.get("executor"):
                return str(step["executor"])
    return None


# -- status -----------------------------------------------------------------------------------


def step_status(attempts: list[Attempt]) -> str:
    """Execution status of one plan step from its attempts.

    ok: one attempt, succeeded; retried: succeeded after more than one attempt; failed: the last
    attempt that ran failed (error, or the executor self-assessed failure); skipped: every attempt
    was refused by the budget; not executed: no attempt.

    >>> step_status([])
    'not executed'
    """
    if not attempts:
        return NOT_EXECUTED
    ran = [a for a in attempts if a.status != "skipped"]
    if not ran:
        return SKIPPED
    if ran[-1].succeeded:
        return RETRIED if len(ran) > 1 else OK
    return FAILED


def focus_step(
    view: RunView, step_ids: list[str], finding_steps: list[str] | None = None
) -> str | None:
    """The step a run page opens on: the first finding's step, else the first failed step (in
    execution order), else the first retried one, else the first step.

    >>> focus_step(build_run_view({"spans": []}), ["a", "b"], ["b"])
    'b'
    """
    for step_id in finding_steps or []:
        if step_id in step_ids:
            return step_id

    def first_start(step_id: str) -> int:
        return min((a.start_ns for a in view.attempts.get(step_id, [])), default=0)

    for wanted in (FAILED, RETRIED):
        hits = [s for s in step_ids if step_status(view.attempts.get(s, [])) == wanted]
        if hits:
            return min(hits, key=first_start)
    return step_ids[0] if step_ids else None


def failing_action(view: RunView, step_id: str | None) -> str | None:
    """The action the why-chain starts from: in the step's last failed attempt, its first tool or
    LLM call that failed, else its last call (None when no attempt of the step failed).

    >>> failing_action(build_run_view({"spans": []}), "fetch") is None
    True
    """
    failed = [a for a in view.attempts.get(step_id or "", []) if a.status != "skipped"]
    failed = [a for a in failed if not a.succeeded]
    if not failed:
        return None
    actions = failed[-1].actions
    errors = [sid for sid in actions if view.spans[sid].status == "error"]
    if errors:
        return errors[0]
    return actions[-1] if actions else None


def attempts_until(view: RunView, plan: PlanVersion | None) -> dict[str, list[Attempt]]:
    """Attempts made up to the end of ``plan`` (under it or an earlier version of its plan id).

    Stepping through plan versions then shows the run as it was when each version was in force.
    Attempts with no plan stamp count everywhere.
    """
    if plan is None:
        return view.attempts
    later = {
        p.version for p in view.plans if p.plan_id == plan.plan_id and p.version > plan.version
    }
    result: dict[str, list[Attempt]] = {}
    for step_id, items in view.attempts.items():
        kept = [
            a
            for a in items
            if a.plan_version is None or a.plan_id != plan.plan_id or a.plan_version not in later
        ]
        if kept:
            result[step_id] = kept
    return result


# -- planned vs executed ------------------------------------------------------------------------


@dataclass(frozen=True)
class DiffRow:
    """One line of the planned-vs-executed overlay."""

    step_id: str
    planned: bool
    planned_position: int | None
    executed_position: int | None
    attempts: int
    status: str
    notes: tuple[str, ...]


def plan_diff(view: RunView, plan: PlanVersion | None) -> list[DiffRow]:
    """Compare one plan version with what ran.

    Notes: ``skipped`` (planned, never attempted), ``extra`` (executed, not in this plan),
    ``repeated`` (more than one attempt), ``reordered`` (ran in a different order than planned
    relative to the other executed steps), ``started before dependency X finished``,
    ``tool X instead of Y``.
    """
    attempts = attempts_until(view, plan)
    planned_steps = plan.steps if plan else []
    planned_ids = [s["id"] for s in planned_steps]
    first_start = {sid: items[0].start_ns for sid, items in attempts.items()}
    executed_ids = sorted(first_start, key=lambda s: (first_start[s], s))
    executed_pos = {sid: i + 1 for i, sid in enumerate(executed_ids)}
    planned_pos = {sid: i + 1 for i, sid in enumerate(planned_ids)}
    # Relative order among the steps that are both planned and executed.
    both_planned = [s for s in planned_ids if s in executed_pos]
    both_executed = [s for s in executed_ids if s in planned_pos]
    rel_planned = {s: i for i, s in enumerate(both_planned)}
    rel_executed = {s: i for i, s in enumerate(both_executed)}
    last_end = {sid: max(a.end_ns for a in items) for sid, items in attempts.items()}

    rows: list[DiffRow] = []
    for step in planned_steps:
        sid = step["id"]
        items = attempts.get(sid, [])
        notes: list[str] = []
        if not items:
            notes.append("skipped: planned, never attempted")
        else:
            if len(items) > 1:
                notes.append(f"repeated: {len(items)} attempts")
            if rel_planned.get(sid) != rel_executed.get(sid):
                notes.append("reordered")
            for dep in step.get("depends_on", []):
                if dep in last_end and items[0].start_ns < last_end[dep]:
                    notes.append(f"started before dependency {dep} finished")
            want = step.get("tool")
            used = {
                str(view.spans[a].attributes.get(A.GEN_AI_TOOL_NAME))
                for att in items
                for a in att.actions
                if view.spans[a].kind == A.KIND_TOOL
            }
            if want and used and str(want) not in used:
                notes.append(f"tool {', '.join(sorted(used))} instead of {want}")
        rows.append(
            DiffRow(
                step_id=sid,
                planned=True,
                planned_position=planned_pos[sid],
                executed_position=executed_pos.get(sid),
                attempts=len(items),
                status=step_status(items),
                notes=tuple(notes),
            )
        )
    for sid in executed_ids:
        if sid in planned_pos:
            continue
        items = attempts[sid]
        in_other = any(p.step(sid) is not None for p in view.plans)
        note = (
            "extra: in another plan version"
            if in_other
            else "extra: no plan step (drift)"
            if view.plans
            else "no plan (a plan-less run)"
        )
        rows.append(
            DiffRow(
                step_id=sid,
                planned=False,
                planned_position=None,
                executed_position=executed_pos[sid],
                attempts=len(items),
                status=step_status(items),
                notes=(note,),
            )
        )
    for sid in view.unplanned_actions:
        span = view.spans[sid]
        rows.append(
            DiffRow(
                step_id=f"({span.name})",
                planned=False,
                planned_position=None,
                executed_position=None,
                attempts=1,
                status=span.status,
                notes=(f"extra: executor action outside any step (span {sid})",),
            )
        )
    return rows


# -- "why did the agent do that?" ---------------------------------------------------------------


@dataclass(frozen=True)
class WhyLink:
    """One hop from an action back to the planner: role, span, title and the facts to show."""

    role: str
    span_id: str | None
    title: str
    facts: dict[str, Any]


def why_chain(view: RunView, span_id: str) -> list[WhyLink]:
    """From any span back to its plan step and the planner span that wrote that plan version.

    >>> why_chain(build_run_view({"spans": []}), "nope")
    []
    """
    span = view.spans.get(span_id)
    if span is None:
        return []
    links: list[WhyLink] = []
    if span.kind in (A.KIND_TOOL, A.KIND_LLM) or span.kind == "other":
        facts: dict[str, Any] = {"span": span.name, "status": span.status}
        if span.kind == A.KIND_TOOL:
            facts["tool"] = span.attributes.get(A.GEN_AI_TOOL_NAME)
            facts["effect"] = span.attributes.get(A.TOOL_EFFECT)
            facts["resource"] = span.attributes.get(A.TOOL_RESOURCE)
        if span.kind == A.KIND_LLM:
            facts["model"] = span.attributes.get(A.GEN_AI_REQUEST_MODEL)
            facts["role"] = span.attributes.get(A.LLM_ROLE)
            facts["tokens"] = span.tokens
        links.append(WhyLink("action", span_id, span.name, _compact(facts)))
    attempt = view.attempt_of(span_id)
    plan: PlanVersion | None = None
    if attempt is not None:
        links.append(
            WhyLink(
                "step attempt",
                attempt.span_id,
                f"step {attempt.step_id}, attempt {attempt.number}",
                _compact(
                    {
                        "status": attempt.status,
                        "executor": attempt.executor,
                        "error": attempt.error_message or None,
                        "plan version": attempt.plan_version,
                        "context keys given": attempt.context_keys,
                    }
                ),
            )
        )
        plan = _plan_for(view, attempt.plan_id, attempt.plan_version)
        if plan is None:
            links.append(_no_plan_step(view, "no plan recorded for this attempt"))
            return links
        step = plan.step(attempt.step_id)
        links.append(
            WhyLink(
                "plan step",
                plan.span_id,
                f"plan step {attempt.step_id} of {plan.key}",
                step
                if step is not None
                else {"missing": f"{attempt.step_id} is not in {plan.key}"},
            )
        )
    elif span.kind == A.KIND_PLAN:
        plan = next((p for p in view.plans if p.span_id == span_id), None)
    else:
        # planner LLM calls and other spans under a plan span
        current = span.parent_id
        while current and current in view.spans and plan is None:
            plan = next((p for p in view.plans if p.span_id == current), None)
            current = view.spans[current].parent_id
        if plan is None and span.kind in (A.KIND_TOOL, A.KIND_LLM):
            links.append(_no_plan_step(view, "no enclosing step"))
            return links
    if plan is not None:
        planner_span = view.spans.get(plan.span_id)
        links.append(
            WhyLink(
                "planner",
                plan.span_id,
                f"planner span that produced {plan.key}",
                _compact(
                    {
                        "span": planner_span.name if planner_span else None,
                        "scope": plan.scope,
                        "replan reason": plan.replan_reason,
                        "replaces version": plan.parent_version,
                        "approval": plan.approval,
                        "planner LLM calls": plan.planner_calls or None,
                    }
                ),
            )
        )
    return links


def _no_plan_step(view: RunView, what: str) -> WhyLink:
    """The "plan step" link of an action no plan step explains: plan drift in a run that has a
    plan; in a plan-less run (ReAct, a foreign agent) there is nothing to drift from."""
    if not view.plans:
        return WhyLink("plan step", None, "the run has no plan (a plan-less agent)", {})
    return WhyLink(
        "plan step", None, what, {"finding": "plan drift: an executor action with no plan step"}
    )


def _plan_for(view: RunView, plan_id: str | None, version: int | None) -> PlanVersion | None:
    if version is None and plan_id is None:
        return None
    matches = [
        p
        for p in view.plans
        if (plan_id is None or p.plan_id == plan_id) and (version is None or p.version == version)
    ]
    return matches[-1] if matches else None


def _compact(facts: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in facts.items() if v is not None and v != ""}


# -- step panel -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ContextCheck:
    """Required context keys vs the keys the executor actually got, for one attempt."""

    required: tuple[str, ...]
    given: tuple[str, ...] | None
    missing: tuple[str, ...]
    extra: tuple[str, ...]


def context_check(plan_step: dict[str, Any] | None, attempt: Attempt) -> ContextCheck:
    """Which required keys the executor did not get (``given`` None: not recorded).

    >>> a = Attempt("s", "x", 1, "ok", 0, 1, None, None, None, ["a"], 3, None, None, "", None,
    ...             None, False)
    >>> context_check({"requires": ["a", "b"]}, a).missing
    ('b',)
    """
    required = tuple(str(k) for k in (plan_step or {}).get("requires", []) or [])
    if attempt.context_keys is None:
        return ContextCheck(required, None, (), ())
    given = tuple(attempt.context_keys)
    return ContextCheck(
        required=required,
        given=given,
        missing=tuple(k for k in required if k not in given),
        extra=tuple(k for k in given if k not in required),
    )


def step_rows(view: RunView) -> list[dict[str, Any]]:
    """One summary row per step id (for tables): attempts, status, errors, tokens, time."""
    rows = []
    for step_id, items in view.attempts.items():
        tokens = sum(view.spans[s].tokens for a in items for s in a.actions)
        rows.append(
            {
                "step": step_id,
                "status": step_status(items),
                "attempts": len(items),
                "errors": sum(1 for a in items if a.status == "error"),
                "executor": items[-1].executor or "",
                "tokens": tokens,
                "duration_ms": round(sum(a.end_ns - a.start_ns for a in items) / 1e6, 2),
                "budget exceeded": any(a.budget_exceeded for a in items),
            }
        )
    return rows

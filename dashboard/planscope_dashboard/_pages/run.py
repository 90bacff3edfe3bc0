"""Run detail: the plan DAG per version, planned vs executed, timeline, step panel, findings,
and "why did the agent do that?".

Nothing from span attributes is rendered as Markdown or HTML here: values go to ``st.text``,
``st.code``, ``st.json`` and ``st.dataframe``; widget labels built from data are escaped.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st
from planscope import semconv as A
from planscope.client import ClientSettings, NotFound

from .. import _charts as C
from .. import _state as S
from .._dag import layout_dag
from .._findings import Finding
from .._runview import (
    Attempt,
    PlanVersion,
    RunView,
    attempts_until,
    context_check,
    failing_action,
    focus_step,
    plan_diff,
    step_rows,
    step_status,
    why_chain,
)
from .._safe import cap, md_escape, pretty
from .._timeline import timeline_rows
from . import traces
from ._common import analysis_unavailable, fmt_ms, ms, no_traces, rows_table

BIG_TRACE = 2000
"""Above this many spans the timeline starts with step spans only (all kinds one click away)."""
RECENT_RUNS = 25
"""Runs listed when no run is chosen."""


def render(settings: ClientSettings, filters: S.Filters) -> None:
    st.header("Run detail")
    legacy = S.qp_get("trace_id")
    if legacy:  # the name alert links used before 0.2; kept so old links still open the run
        S.qp_set("trace_id", None)
        S.qp_set("trace", legacy)
    trace_id = S.qp_get("trace").strip().lower()
    if not trace_id:
        _pick_run(settings, filters)
        return
    try:
        with st.spinner("Loading the run's spans…"):
            view = S.run_view(settings, trace_id)
    except NotFound as exc:
        st.warning(md_escape(f"Trace not found: {exc}"))
        _pick_run(settings, filters)
        return
    available, found = S.trace_findings(settings, view.trace_id)

    _summary(view, found, available)
    plan = _plan_selector(view)
    finding_steps = {f.step_id for f in found if f.step_id}
    evidence = {sid for f in found for sid in f.evidence_span_ids}

    st.subheader("Plan")
    step_ids = _step_ids(view, plan)
    selected_step = S.qp_get("step") or focus_step(
        view, step_ids, [f.step_id for f in found if f.step_id]
    )
    if plan is None:
        st.info(
            "This run recorded no plan (for example a ReAct loop or an agent without "
            "@planscope plans): every step below is unplanned."
        )
    else:
        _plan_header(plan)
        layout = layout_dag(view, plan, highlight=finding_steps)
        event = st.plotly_chart(
            C.dag_figure(layout, selected=selected_step),
            key=f"dag_{plan.key}",
            on_select="rerun",
            selection_mode="points",
            config={"displaylogo": False},
        )
        clicked = _clicked(event)
        if clicked and clicked != selected_step:
            S.navigate(step=clicked, span=None)
        st.caption(
            "Node colour = execution status up to this plan version; xN = attempts; diamond = "
            "irreversible; pink ring = named by a finding; navy ring = the step below. Hover a "
            "node for its full id and details; click it to open its step panel."
        )
        with st.expander("Planned vs executed"):
            _diff(view, plan)

    st.subheader("Timeline")
    _timeline(view, evidence)

    st.subheader("Step")
    panel_step = _step_panel(view, plan, step_ids, selected_step)

    st.subheader("Findings")
    _findings(view, found, available)

    st.subheader("Why did the agent do that?")
    _why(view, panel_step)

    with st.expander(f"All spans ({len(view.spans)})"):
        rows_table(
            [
                {
                    "start_ms": ms(s.start_ns - view.start_ns),
                    "duration_ms": ms(s.duration_ns),
                    "kind": s.kind,
                    "name": s.name,
                    "lane": s.lane,
                    "step": s.step_id or "",
                    "attempt": s.attempt,
                    "status": s.status,
                    "span_id": s.span_id,
                }
                for s in (view.spans[i] for i in view.order)
            ]
        )


def _pick_run(settings: ClientSettings, filters: S.Filters) -> None:
    """No run chosen: the newest runs of the range (select one), or a pasted trace id."""
    rows, _ = S.recent_traces(settings, filters.service, filters.since_ns, RECENT_RUNS)
    if filters.agent:
        rows = [r for r in rows if r.get("agent") == filters.agent]
    if rows:
        st.caption(f"The {len(rows)} newest runs of the time range; select one to open it.")
        import pandas as pd

        event = st.dataframe(
            pd.DataFrame([traces.row(r, None, {}, False) for r in rows]).drop(
                columns=["findings", "attempts", "retries", "replans"]
            ),
            hide_index=True,
            width="stretch",
            on_select="rerun",
            selection_mode="single-row",
            key="recent_runs",
            column_config=traces.COLUMNS,
        )
        chosen = getattr(getattr(event, "selection", None), "rows", None) or []
        if chosen:
            S.navigate(trace=rows[chosen[0]]["trace_id"], version=None, step=None, span=None)
    else:
        no_traces(settings)
    value = st.text_input(
        "…or paste a trace id", key="run_trace_input", placeholder="32 hex characters"
    )
    if value.strip():
        S.navigate(trace=value.strip().lower(), version=None, step=None, span=None)


def _summary(view: RunView, found: list[Finding], available: bool) -> None:
    run = view.run or {}
    st.text(f"trace {view.trace_id}" + (f" · run {run.get('run_id')}" if run else ""))
    if run.get("objective"):
        st.text(f"Objective: {cap(str(run['objective']), 500)}")
    # The run model's numbers as the API answers them (the trace list shows the same).
    m = view.metrics or {}
    tokens = (m.get("input_tokens") or 0) + (m.get("output_tokens") or 0)
    cols = st.columns(7)
    cols[0].metric("Outcome", _plain(run.get("outcome") or "no run"))
    cols[1].metric("Duration", fmt_ms(view.duration_ns / 1e6))
    cols[2].metric("Spans", len(view.spans))
    cols[3].metric("Step attempts", m.get("step_attempts") or 0)
    cols[4].metric("Plan versions", m.get("plan_versions") or 0)
    cols[5].metric("Tokens", f"{tokens:,}")
    cols[6].metric("Findings", len(found) if available else "-")
    facts = [
        ("agent", run.get("agent")),
        ("variant", run.get("variant")),
        ("outcome reason", run.get("outcome_reason")),
        ("retry budget", json.dumps(run.get("budget")) if run.get("budget") else None),
    ]
    shown = [{"field": k, "value": cap(str(v), 500)} for k, v in facts if v not in (None, "")]
    if shown:
        rows_table(shown)


def _plain(value: str) -> str:
    """Metric values are short labels we control; anything else is cut and de-marked."""
    return md_escape(cap(value, 30))


def _plan_selector(view: RunView) -> PlanVersion | None:
    if not view.plans:
        return None
    keys = [p.key for p in view.plans]
    current = S.qp_get("version")
    if current not in keys:
        current = keys[-1]
    by_key = {p.key: p for p in view.plans}

    def label(key: str) -> str:
        p = by_key[key]
        text = f"v{p.version}"
        if len(view.plans) > 1 and len({q.plan_id for q in view.plans}) > 1:
            text += f" of {cap(p.plan_id, 24)}"
        if p.scope:
            text += f" · scope {cap(p.scope, 30)}"
        if p.replan_reason:
            text += f" · {cap(p.replan_reason, 60)}"
        elif p.version == 1:
            text += " · initial plan"
        return text

    if len(keys) == 1:
        return view.plans[0]
    index = keys.index(current)
    c1, c2, c3 = st.columns([1, 6, 1])
    if c1.button("◀ earlier", disabled=index == 0, key="plan_prev"):
        S.navigate(version=keys[index - 1])
    if c3.button("later ▶", disabled=index == len(keys) - 1, key="plan_next"):
        S.navigate(version=keys[index + 1] if index + 1 < len(keys) - 1 else None)
    st.session_state["plan_version"] = current

    def changed() -> None:
        value = st.session_state["plan_version"]
        S.qp_set("version", None if value == keys[-1] else value)

    chosen = c2.selectbox(
        f"Plan version ({len(keys)} recorded; replans step through here)",
        keys,
        key="plan_version",
        format_func=label,
        on_change=changed,
    )
    return by_key[str(chosen)]


def _plan_header(plan: PlanVersion) -> None:
    bits = [f"{plan.key}", f"{len(plan.steps)} steps"]
    if plan.approval:
        bits.append(f"approval {plan.approval}")
        if plan.approval_note:
            bits.append(cap(plan.approval_note, 300))
    if plan.scope:
        bits.append(f"scope {plan.scope}")
    st.text(" · ".join(bits))
    if plan.replan_reason:
        st.text(f"Replan reason: {cap(plan.replan_reason, 500)}")


def _clicked(event: Any) -> str | None:
    try:
        points = event.selection.points
    except AttributeError:
        try:
            points = event["selection"]["points"]
        except (TypeError, KeyError):
            return None
    for point in points or []:
        data = point.get("customdata") if isinstance(point, dict) else None
        if isinstance(data, list):
            data = data[0] if data else None
        if data:
            return str(data)
    return None


def _diff(view: RunView, plan: PlanVersion) -> None:
    rows = plan_diff(view, plan)
    rows_table(
        [
            {
                "step": r.step_id,
                "planned": r.planned,
                "planned #": r.planned_position,
                "executed #": r.executed_position,
                "attempts": r.attempts,
                "status": r.status,
                "notes": "; ".join(r.notes),
            }
            for r in rows
        ]
    )
    flagged = sum(1 for r in rows if r.notes)
    st.caption(
        f"{flagged} of {len(rows)} steps differ from {plan.key}: skipped = planned but never "
        "attempted; extra = executed with no step in this version; repeated = more than one "
        "attempt; reordered = ran in a different order than planned."
    )


def _timeline(view: RunView, evidence: set[str]) -> None:
    kinds_all = [A.KIND_RUN, A.KIND_PLAN, A.KIND_STEP, A.KIND_TOOL, A.KIND_LLM, "other"]
    default = [A.KIND_PLAN, A.KIND_STEP] if len(view.spans) > BIG_TRACE else kinds_all
    present = {s.kind if s.kind in kinds_all else "other" for s in view.spans.values()}
    options = [k for k in kinds_all if k in present]
    shown = st.multiselect(
        "Span kinds",
        options,
        default=[k for k in default if k in options],
        key="timeline_kinds",
    )
    kinds = set(shown)
    if "other" in kinds:
        kinds |= {s.kind for s in view.spans.values() if s.kind not in kinds_all}
    rows = timeline_rows(view, highlight=evidence, kinds=kinds)
    if not rows:
        st.info("Pick at least one span kind to draw.")
        return
    lanes = [lane for lane in view.lanes if any(r.lane == lane for r in rows)]
    selected_span = S.qp_get("span") or None
    event = st.plotly_chart(
        C.timeline_figure(rows, lanes, selected=selected_span),
        key="timeline",
        on_select="rerun",
        selection_mode="points",
        config={"displaylogo": False},
    )
    clicked = _clicked(event)
    if clicked and clicked != selected_span:
        span = view.spans.get(clicked)
        S.navigate(span=clicked, step=span.step_id if span and span.step_id else None)
    st.caption(
        f"{len(rows)} spans in {len(lanes)} lanes (one per executor; parallel executors "
        "overlap). Pink outline = evidence of a finding. Click a bar to trace it back to its "
        "plan step."
    )


def _step_ids(view: RunView, plan: PlanVersion | None) -> list[str]:
    """The plan version's steps, then steps executed outside it."""
    ids: list[str] = [s["id"] for s in plan.steps] if plan else []
    return ids + [sid for sid in view.attempts if sid not in ids]


def _step_panel(
    view: RunView, plan: PlanVersion | None, ids: list[str], selected: str | None
) -> str | None:
    """The step panel; returns the step shown."""
    if not ids:
        st.info("No plan steps and no step spans in this run.")
        return None
    if selected not in ids:
        selected = ids[0]
    st.session_state["step_select"] = selected

    def changed() -> None:
        S.qp_set("step", st.session_state["step_select"])
        S.qp_set("span", None)

    step_id = str(
        st.selectbox(
            "Plan step",
            ids,
            key="step_select",
            on_change=changed,
            format_func=lambda s: (
                f"{s} — {step_status(view.attempts.get(s, []))}, "
                f"{len(view.attempts.get(s, []))} attempt(s)"
            ),
        )
    )
    plan_step = None
    if plan:
        plan_step = plan.step(step_id)
    if plan_step is None:
        plan_step = next((p.step(step_id) for p in reversed(view.plans) if p.step(step_id)), None)
    attempts = view.attempts.get(step_id, [])
    left, right = st.columns(2)
    with left:
        st.text("What the plan required")
        if plan_step is None:
            st.warning("This step is in no recorded plan version: plan drift.")
        else:
            st.json(plan_step, expanded=True)
    with right:
        st.text("Context the executor actually got (per attempt)")
        if not attempts:
            st.info("Never attempted.")
        else:
            checks = []
            for a in attempts:
                check = context_check(plan_step, a)
                checks.append(
                    {
                        "attempt": a.number,
                        "given keys": ", ".join(check.given)
                        if check.given is not None
                        else "(not recorded)",
                        "missing required": ", ".join(check.missing),
                        "not required": ", ".join(check.extra),
                        "context tokens": a.context_tokens,
                    }
                )
            rows_table(checks)
            missing = {k for a in attempts for k in context_check(plan_step, a).missing}
            if missing:
                st.warning(
                    "The executor did not get required context: "
                    + md_escape(", ".join(sorted(missing)))
                )
    if not attempts:
        return step_id
    st.text(f"Attempts of {step_id}")
    rows_table(
        [
            {
                "attempt": a.number,
                "status": a.status,
                "self assessment": a.self_assessment or "",
                "error type": a.error_type or "",
                "error": cap(a.error_message, 300),
                "fingerprint": a.fingerprint or "",
                "input hash": a.input_hash or "",
                "plan version": a.plan_version,
                "executor": a.executor or "",
                "duration_ms": ms(a.end_ns - a.start_ns),
                "budget exceeded": a.budget_exceeded,
                "span_id": a.span_id,
            }
            for a in attempts
        ]
    )
    numbers = [a.number for a in attempts]
    chosen = st.selectbox("Attempt", numbers, index=len(numbers) - 1, key=f"attempt_{step_id}")
    attempt = next(a for a in attempts if a.number == chosen)
    _attempt_detail(view, attempt)
    return step_id


def _attempt_detail(view: RunView, attempt: Attempt) -> None:
    span = view.spans[attempt.span_id]
    if attempt.error_message:
        st.text("Error")
        st.code(cap(attempt.error_message, 2000), language=None)
    c1, c2 = st.columns(2)
    with c1:
        st.text("Input (planscope.input)")
        st.code(pretty(span.attributes.get(A.INPUT, "(not captured)")), language="json")
    with c2:
        st.text("Output (planscope.output)")
        st.code(pretty(span.attributes.get(A.OUTPUT, "(not captured)")), language="json")
    tools = [view.spans[s] for s in attempt.actions if view.spans[s].kind == A.KIND_TOOL]
    llms = [view.spans[s] for s in attempt.actions if view.spans[s].kind == A.KIND_LLM]
    if tools:
        st.text(f"Tool calls ({len(tools)})")
        rows_table(
            [
                {
                    "tool": t.attributes.get(A.GEN_AI_TOOL_NAME, t.name),
                    "status": t.status,
                    "effect": t.attributes.get(A.TOOL_EFFECT, ""),
                    "resource": t.attributes.get(A.TOOL_RESOURCE, ""),
                    "args hash": t.attributes.get(A.TOOL_ARGS_HASH, ""),
                    "arguments": cap(
                        str(
                            t.attributes.get(A.GEN_AI_TOOL_CALL_ARGUMENTS)
                            or t.attributes.get(A.INPUT)
                            or ""
                        ),
                        400,
                    ),
                    "result": cap(
                        str(
                            t.attributes.get(A.GEN_AI_TOOL_CALL_RESULT)
                            or t.attributes.get(A.OUTPUT)
                            or ""
                        ),
                        400,
                    ),
                    "error": cap(t.status_message, 300),
                    "duration_ms": ms(t.duration_ns),
                    "span_id": t.span_id,
                }
                for t in tools
            ]
        )
    if llms:
        st.text(f"LLM calls ({len(llms)})")
        rows_table(
            [
                {
                    "model": m.attributes.get(A.GEN_AI_REQUEST_MODEL, ""),
                    "role": m.attributes.get(A.LLM_ROLE, ""),
                    "input tokens": m.attributes.get(A.GEN_AI_USAGE_INPUT_TOKENS),
                    "output tokens": m.attributes.get(A.GEN_AI_USAGE_OUTPUT_TOKENS),
                    "cost USD": m.attributes.get(A.LLM_COST_USD),
                    "duration_ms": ms(m.duration_ns),
                    "span_id": m.span_id,
                }
                for m in llms
            ]
        )


def _findings(view: RunView, found: list[Finding], available: bool) -> None:
    if not available:
        analysis_unavailable()
        return
    if not found:
        st.success("The analyzers found nothing wrong in this run.")
        return
    rows_table(
        [
            {
                "severity": f.severity,
                "kind": f.kind,
                "step": f.step_id or "",
                "component": f.component or "",
                "wasted tokens": f.wasted_tokens,
                "wasted s": round(f.wasted_seconds, 3) if f.wasted_seconds is not None else None,
                "evidence spans": len(f.evidence_span_ids),
                "explanation": cap(f.explanation, 300),
            }
            for f in found
        ]
    )
    index = st.selectbox(
        "Finding",
        list(range(len(found))),
        format_func=lambda i: (
            f"{found[i].severity} · {found[i].kind} · "
            f"{found[i].step_id or found[i].component or ''}"
        ),
        key="finding_select",
    )
    finding = found[int(index)]
    st.text("Explanation")
    st.code(cap(finding.explanation, 4000), language=None, wrap_lines=True)
    facts = {
        "component": finding.component,
        "step": finding.step_id,
        "wasted tokens": finding.wasted_tokens,
        "wasted seconds": finding.wasted_seconds,
        "wasted cost USD": finding.wasted_cost_usd,
        "detail": finding.detail or None,
    }
    st.json(_jsonable({k: v for k, v in facts.items() if v is not None}), expanded=False)
    evidence = [view.spans[s] for s in finding.evidence_span_ids if s in view.spans]
    if evidence:
        st.text("Evidence spans (outlined in pink on the DAG and the timeline)")
        rows_table(
            [
                {
                    "start_ms": ms(s.start_ns - view.start_ns),
                    "name": s.name,
                    "step": s.step_id or "",
                    "attempt": s.attempt,
                    "status": s.status,
                    "error": cap(s.status_message, 200),
                    "span_id": s.span_id,
                }
                for s in evidence
            ]
        )
        c1, c2 = st.columns([4, 1])
        target = c1.selectbox(
            "Evidence span",
            [s.span_id for s in evidence],
            key="evidence_select",
            format_func=lambda sid: f"{view.spans[sid].name} ({sid})",
        )
        c2.write("")
        if c2.button("Trace it back", key="evidence_go"):
            S.navigate(span=str(target), step=view.spans[str(target)].step_id)
    missing = [s for s in finding.evidence_span_ids if s not in view.spans]
    if missing:
        st.caption(f"{len(missing)} evidence span id(s) are not in this trace.")


def _why(view: RunView, selected_step: str | None) -> None:
    span_id = S.qp_get("span") or None
    candidates: list[str] = []
    if selected_step:
        for a in view.attempts.get(selected_step, []):
            candidates += a.actions
    if not candidates:
        candidates = [s for s in view.order if view.spans[s].kind in (A.KIND_TOOL, A.KIND_LLM)][
            :500
        ]
    if span_id and span_id in view.spans and span_id not in candidates:
        candidates.insert(0, span_id)
    if not candidates:
        st.info("This run has no tool or LLM calls to explain.")
        return
    if span_id not in candidates:
        span_id = failing_action(view, selected_step) or candidates[0]
    st.session_state["why_span"] = span_id

    def changed() -> None:
        S.qp_set("span", st.session_state["why_span"])

    chosen = st.selectbox(
        "Executor action (tool or LLM call; click a timeline bar to pick any span)",
        candidates,
        key="why_span",
        on_change=changed,
        format_func=lambda sid: _action_label(view, sid),
    )
    chain = why_chain(view, str(chosen))
    for i, link in enumerate(chain):
        arrow = "↳ " * min(i, 1)
        st.text(
            f"{arrow}{link.role}: {link.title}" + (f"  [{link.span_id}]" if link.span_id else "")
        )
        st.json(_jsonable(link.facts), expanded=True)
    with st.expander("Raw attributes of the selected span"):
        span = view.spans[str(chosen)]
        st.json(
            _jsonable({"name": span.name, "attributes": span.attributes, "events": span.events})
        )


def _action_label(view: RunView, sid: str) -> str:
    span = view.spans[sid]
    where = f"{span.step_id}#{span.attempt}" if span.step_id else span.lane
    return f"{ms(span.start_ns - view.start_ns):>9.2f} ms · {span.name} · {where} · {span.status}"


def _jsonable(value: Any) -> Any:
    """Cap long strings inside a JSON value (st.json renders them as text)."""
    if isinstance(value, str):
        return cap(value, 2000)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value[:200]]
    return value


__all__ = ["attempts_until", "render", "step_rows"]

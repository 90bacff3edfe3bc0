"""Alerts: firing state, rules (create, edit and dry-run a retry-budget rule) and history.

Reads and writes the collector's alerts API (``/api/alerts/...``). A collector without it (404)
gets an empty state. Rule fields, summaries and evidence are data: shown with ``st.text``,
``st.json`` and ``st.dataframe``, never as Markdown or HTML.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlencode

import streamlit as st
from planscope import api
from planscope.client import ClientSettings, Rejected, Unavailable

from .. import _state as S
from .._safe import cap, md_escape
from ._common import rows_table

ALERTS_UNAVAILABLE = (
    "Alerts aren't available on this collector (its /api/alerts/rules answers 404). They run "
    "inside the collector with the analyzer: install `planscope[server]` with the analyzer and "
    "restart `planscope serve`."
)
SCOPES = ["step", "run", "agent", "tool"]
NEW_RULE = ""
RULE_META = ("version", "source", "updated_at", "state")
"""Keys the API adds to a rule; a rule sent back must not carry them (unknown fields)."""
BUDGET_LIMITS = (
    ("max_attempts_per_step", "Max attempts per step"),
    ("max_attempts_per_run", "Max attempts per run"),
    ("max_replans", "Max replans"),
    ("max_tokens", "Max tokens"),
)


def _when(seconds: Any) -> datetime | None:
    try:
        return datetime.fromtimestamp(float(seconds), tz=timezone.utc) if seconds else None
    except (TypeError, ValueError, OverflowError):
        return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


RUN_LINK = st.column_config.LinkColumn("run", display_text="open run")
"""The column that opens an alert's evidence run in this dashboard."""


def _run_url(event: dict[str, Any] | None) -> str | None:
    """This dashboard's page of the first run an event's evidence names (its step too), the
    same page the webhook's links open; None when the event names no run."""
    evidence = _dict((event or {}).get("evidence"))
    samples = [s for s in evidence.get("samples") or [] if isinstance(s, dict)]
    ids = [str(s.get("trace_id")) for s in samples] or [
        str(t) for t in evidence.get("trace_ids") or []
    ]
    if not ids or not api.is_trace_id(ids[0]):
        return None
    step = str(samples[0].get("step_id") or "") if samples else ""
    return f"?{urlencode({'page': 'run', 'trace': ids[0], **({'step': step} if step else {})})}"


def render(settings: ClientSettings, filters: S.Filters) -> None:
    st.header("Alerts")
    flash = st.session_state.pop("alert_flash", None)
    if flash:
        st.success(md_escape(flash))
    client = S.client_for(settings)
    try:
        rules = client.alert_rules()
    except Unavailable:
        st.info(ALERTS_UNAVAILABLE)
        return
    state = client.alert_state()
    states = [s for s in state.get("rules") or [] if isinstance(s, dict)]
    firing = [s for s in states if s.get("state") == "firing"]
    a, b, c = st.columns(3)
    a.metric("Rules", len(rules))
    b.metric("Firing", len(firing))
    engine = _dict(state.get("engine"))
    c.metric("Pending deliveries", int(engine.get("pending_deliveries") or 0))
    file_status = _dict(state.get("file"))
    if file_status.get("error"):
        st.warning("The rules file was not loaded:")
        st.text(cap(str(file_status["error"]), 2000))

    st.subheader("Firing now")
    if firing:
        opened = {
            str(e.get("event_id")): e
            for e in client.alert_events(state="firing", limit=200)
            if isinstance(e, dict)
        }
        rows_table(
            [
                {
                    "rule": s.get("rule_id"),
                    "run": _run_url(opened.get(str(s.get("event_id")))),
                    "name": s.get("name"),
                    "kind": s.get("kind"),
                    "since": _when(s.get("since")),
                    "value": s.get("value"),
                    "threshold": s.get("threshold"),
                    "summary": s.get("summary"),
                }
                for s in firing
            ],
            column_config={"run": RUN_LINK},
        )
    else:
        st.success("No rule is firing.")

    st.subheader("Rules")
    if rules:
        by_state = {s.get("rule_id"): s for s in states}
        rows_table(
            [
                {
                    "rule": r.get("id"),
                    "name": r.get("name"),
                    "kind": r.get("kind"),
                    "scope": r.get("scope"),
                    "enabled": r.get("enabled"),
                    "window": r.get("window"),
                    "state": r.get("state"),
                    "version": r.get("version"),
                    "source": r.get("source"),
                    "last evaluated": _when((by_state.get(r.get("id")) or {}).get("evaluated_at")),
                    "error": (by_state.get(r.get("id")) or {}).get("error"),
                }
                for r in rules
            ]
        )
    else:
        st.info("No alert rules yet: create a retry-budget rule below.")
    _editor(settings, rules)
    _test(settings, rules)
    _history(settings, rules)


def _editor(settings: ClientSettings, rules: list[dict[str, Any]]) -> None:
    st.subheader("Create or edit a retry-budget rule")
    budget_rules = {str(r["id"]): r for r in rules if r.get("kind") == "retry_budget"}
    chosen = st.selectbox(
        "Rule",
        [NEW_RULE, *budget_rules],
        format_func=lambda v: v or "new rule",
        key="alert_edit_rule",
    )
    current = budget_rules.get(str(chosen), {})
    budget = _dict(current.get("budget"))
    sfx = str(chosen or "new")  # widget keys per rule: switching rules resets the form
    with st.form(f"alert_rule_form_{sfx}"):
        c1, c2 = st.columns(2)
        rule_id = c1.text_input(
            "Rule id",
            value=str(current.get("id") or ""),
            disabled=bool(current),
            key=f"ar_id_{sfx}",
        )
        name = c2.text_input("Name", value=str(current.get("name") or ""), key=f"ar_name_{sfx}")
        c1, c2, c3, c4 = st.columns(4)
        scope_now = str(current.get("scope") or "step")
        scope = c1.selectbox(
            "Scope",
            SCOPES,
            index=SCOPES.index(scope_now) if scope_now in SCOPES else 0,
            key=f"ar_scope_{sfx}",
        )
        window = c2.text_input(
            "Window", value=str(current.get("window") or "15m"), key=f"ar_window_{sfx}"
        )
        cooldown = c3.text_input(
            "Cooldown", value=str(current.get("cooldown") or "5m"), key=f"ar_cooldown_{sfx}"
        )
        enabled = c4.checkbox(
            "Enabled", value=bool(current.get("enabled", True)), key=f"ar_enabled_{sfx}"
        )
        c1, c2, c3 = st.columns(3)
        agent = c1.text_input(
            "Agent (empty: any)", value=str(current.get("agent") or ""), key=f"ar_agent_{sfx}"
        )
        step_id = c2.text_input(
            "Step id (empty: any)", value=str(current.get("step_id") or ""), key=f"ar_step_{sfx}"
        )
        share = c3.number_input(
            "Threshold share (0: off)",
            min_value=0.0,
            max_value=1.0,
            step=0.01,
            value=float(current.get("threshold_share") or 0.0),
            key=f"ar_share_{sfx}",
        )
        limits: dict[str, int] = {}
        cols = st.columns(len(BUDGET_LIMITS))
        for col, (key, label) in zip(cols, BUDGET_LIMITS, strict=True):
            default = (
                budget.get(key) if key in budget else (3 if key == "max_attempts_per_step" else 0)
            )
            limits[key] = int(
                col.number_input(
                    f"{label} (0: none)",
                    min_value=0,
                    step=1,
                    value=int(default or 0),
                    key=f"ar_{key}_{sfx}",
                )
            )
        submitted = st.form_submit_button("Save rule", key=f"ar_save_{sfx}")
    if not submitted:
        return
    rule: dict[str, Any] = {
        k: v for k, v in current.items() if k not in RULE_META and v is not None
    }
    rule.update(
        {
            "kind": "retry_budget",
            "name": name.strip(),
            "scope": scope,
            "window": window.strip(),
            "cooldown": cooldown.strip(),
            "enabled": enabled,
            "budget": {
                **{k: v for k, v in budget.items() if k not in dict(BUDGET_LIMITS)},
                **{k: v for k, v in limits.items() if v > 0},
            },
        }
    )
    for key, value in (("agent", agent.strip()), ("step_id", step_id.strip())):
        if value:
            rule[key] = value
        else:
            rule.pop(key, None)
    if share > 0:
        rule["threshold_share"] = float(share)
    else:
        rule.pop("threshold_share", None)
    if current:
        rule["id"] = current["id"]
    elif rule_id.strip():
        rule["id"] = rule_id.strip()
    try:
        saved = S.client_for(settings).save_alert_rule(rule, replace=bool(current))
    except Rejected as exc:
        st.error(md_escape(f"The collector refused the rule: {exc}"))
        for problem in exc.problems:
            st.text(cap(problem, 1000))
        return
    st.session_state["alert_flash"] = (
        f"Saved rule {saved.get('id')} (version {saved.get('version')})."
    )
    st.rerun()


def _test(settings: ClientSettings, rules: list[dict[str, Any]]) -> None:
    if not rules:
        return
    st.subheader("Test a rule")
    st.caption("A dry run over the current data: no event is recorded, nothing is sent.")
    c1, c2 = st.columns([3, 1])
    target = c1.selectbox(
        "Rule to test", [str(r["id"]) for r in rules if r.get("id")], key="alert_test_rule"
    )
    c2.write("")
    if c2.button("Test rule", key="alert_test_btn"):
        st.session_state["alert_test"] = (
            target,
            S.client_for(settings).test_alert_rule(str(target)),
        )
    stored = st.session_state.get("alert_test")
    if not stored or stored[0] != target:
        return
    result: dict[str, Any] = stored[1]
    a, b, c = st.columns(3)
    a.metric("Would fire", "yes" if result.get("would_fire") else "no")
    a_value = result.get("value")
    b.metric("Value", "-" if a_value is None else md_escape(a_value))
    threshold = result.get("threshold")
    c.metric("Threshold", "-" if threshold is None else md_escape(threshold))
    if result.get("summary"):
        st.text(cap(str(result["summary"]), 2000))
    if result.get("evidence"):
        with st.expander("Evidence"):
            st.json(result["evidence"], expanded=False)


def _history(settings: ClientSettings, rules: list[dict[str, Any]]) -> None:
    st.subheader("History")
    ids = ["", *[str(r["id"]) for r in rules if r.get("id")]]
    rule_id = S.bound_select(st, "Rule", ids, "arule", "", lambda v: v or "all rules")
    events = S.client_for(settings).alert_events(rule_id=rule_id or None, limit=200)
    if not events:
        st.info("No alert has fired or resolved yet.")
        return
    rows_table(
        [
            {
                "at": _when(e.get("at")),
                "rule": e.get("rule_id"),
                "run": _run_url(e),
                "version": e.get("rule_version"),
                "state": e.get("state"),
                "value": e.get("value"),
                "threshold": e.get("threshold"),
                "summary": e.get("summary"),
                "delivery": (e.get("delivery") or {}).get("state"),
                "delivery error": (e.get("delivery") or {}).get("last_error"),
            }
            for e in events
        ],
        column_config={"run": RUN_LINK},
    )

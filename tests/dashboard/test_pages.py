"""Page logic with Streamlit's AppTest against a real collector filled by the reference runtime."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import poll

from ._synthetic import INJECTION, agent_runtime, large_run, wait_stored
from .conftest import APP_FILE, Filled

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _collector_env(filled: Filled, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANSCOPE_ENDPOINT", filled.url)
    monkeypatch.delenv("PLANSCOPE_API_KEY", raising=False)


def run_app(**params: str) -> AppTest:
    at = AppTest.from_file(str(APP_FILE), default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def texts(at: AppTest) -> list[str]:
    """Everything rendered as literal text: st.text, st.code, st.json, dataframe cells."""
    out = [t.value for t in at.text] + [c.value for c in at.code] + [j.value for j in at.json]
    for frame in at.dataframe:
        out += [str(v) for v in frame.value.astype(str).to_numpy().ravel()]
    return out


def markdown_like(at: AppTest) -> list[str]:
    """Everything Streamlit renders as Markdown: bodies, alerts, headers, widget labels."""
    out: list[str] = []
    for group in (at.markdown, at.caption, at.info, at.warning, at.error, at.success):
        out += [str(e.value) for e in group]
    out += [str(e.value) for e in at.header] + [str(e.value) for e in at.subheader]
    out += [str(m.label) for m in at.metric] + [str(m.value) for m in at.metric]
    for widgets in (at.selectbox, at.multiselect, at.text_input, at.radio, at.button):
        out += [str(w.label) for w in widgets]
    out += [str(e.label) for e in at.expander]
    # A backslash-escaped character is literal in Markdown: drop those before looking.
    return [re.sub(r"\\.", "", value) for value in out]


def unescaped(markdown: str) -> str:
    """Markdown text as shown (backslash escapes removed)."""
    return re.sub(r"\\(.)", r"\1", markdown)


def plotly_specs(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(e.proto.spec) for e in at.get("plotly_chart")]


def analyzed(url: str) -> bool:
    """Ask the analyzer (if the collector has one) to analyse everything now."""
    r = httpx.post(f"{url}/api/analyze", json={}, timeout=60)
    return r.status_code == 200


def test_overview_counts_runs_and_draws_charts(filled: Filled) -> None:
    at = run_app(page="overview", range="24h")
    assert not at.error, [e.value for e in at.error]
    runs = next(m for m in at.metric if m.label == "Runs")
    assert int(runs.value) == len(filled.labels) + 1  # the suite's runs + the hostile run
    assert len(at.get("plotly_chart")) >= 4
    steps = [f for f in at.dataframe if "step" in f.value.columns]
    assert steps, "top failing plan steps table is missing"
    loop = filled.labelled("runaway_loop")["expected_findings"][0]
    failing = steps[0].value
    assert loop["step_id"] in set(failing["step"])
    assert set(at.query_params) >= {"page", "range"}


def test_filters_persist_across_pages(filled: Filled) -> None:
    at = run_app(page="overview", range="6h", agent="planscope-reference-agent")
    at.sidebar.radio[0].set_value("traces").run()
    assert not at.exception
    assert at.query_params["page"] == "traces"
    assert at.query_params["range"] == "6h"
    assert at.query_params["agent"] == "planscope-reference-agent"
    table = at.dataframe[0].value
    assert "hostile" not in " ".join(table["agent"].astype(str))


def test_trace_explorer_search_page_and_open(filled: Filled) -> None:
    at = run_app(page="traces")
    table = at.dataframe[0].value
    assert len(table) == min(25, len(filled.labels) + 1)
    for column in ("outcome", "variant", "findings", "attempts", "tokens", "duration_ms"):
        assert column in table.columns
    target = filled.labelled("runaway_loop")
    at = run_app(page="traces", q=target["trace_id"][:14])
    table = at.dataframe[0].value
    assert list(table["trace_id"]) == [target["trace_id"]]
    assert int(table["attempts"][0]) > int(table["retries"][0]) >= 3
    at.button(key="open_run_btn").click().run()
    assert at.query_params["page"] == "run"
    assert at.query_params["trace"] == target["trace_id"]
    assert any(t.startswith(f"trace {target['trace_id']}") for t in texts(at))


def test_run_detail_of_a_looping_run(filled: Filled) -> None:
    label = filled.labelled("runaway_loop")
    loop = next(f for f in label["expected_findings"] if f["kind"] == "runaway_loop")
    has_findings = analyzed(filled.url)
    at = run_app(page="run", trace=label["trace_id"], step=loop["step_id"])
    assert not at.error, [e.value for e in at.error]
    specs = plotly_specs(at)
    dag = specs[0]
    node_ids = {c for trace in dag["data"] for c in (trace.get("customdata") or [])}
    assert loop["step_id"] in node_ids
    failed = next(t for t in dag["data"] if t.get("name") == "failed")
    assert loop["step_id"] in failed["customdata"]
    label_text = failed["text"][failed["customdata"].index(loop["step_id"])]
    assert label_text.endswith("x5"), label_text
    timeline = specs[1]
    assert {t["type"] for t in timeline["data"]} == {"bar"}
    attempts = next(f.value for f in at.dataframe if "fingerprint" in f.value.columns)
    assert list(attempts["status"]) == ["error"] * 4 + ["skipped"]
    same = "fingerprint" if loop["detail"].get("signal") == "same_error" else "input hash"
    assert len(set(attempts[same][:4])) == 1, attempts
    chain = [t for t in texts(at) if t.startswith(("action:", "↳"))]
    assert any("plan step" in t for t in chain) and any("planner" in t for t in chain)
    if has_findings:
        findings = next(f.value for f in at.dataframe if "explanation" in f.value.columns)
        assert "runaway_loop" in set(findings["kind"])


def test_run_detail_steps_through_plan_versions(filled: Filled) -> None:
    replanned = next(
        (lb for lb in filled.labels if lb["metrics"]["replans"] > 0 and lb["variant"] != "react"),
        None,
    )
    if replanned is None:
        pytest.skip("this suite draw has no replanned run")
    at = run_app(page="run", trace=replanned["trace_id"])
    versions = at.selectbox(key="plan_version")
    assert len(versions.options) == replanned["metrics"]["plans"]
    first = versions.options[0]
    at.button(key="plan_prev").click().run()
    assert not at.exception
    assert at.query_params.get("version") is not None
    at = run_app(page="run", trace=replanned["trace_id"], version=at.query_params["version"])
    assert at.selectbox(key="plan_version").value is not None
    assert first


def test_attribute_injection_is_shown_literally(filled: Filled) -> None:
    at = run_app(page="run", trace=filled.hostile_trace)
    literal = "\n".join(texts(at))
    assert INJECTION in literal
    assert "javascript:alert(1)" in literal
    for value in markdown_like(at):
        assert "<script" not in value, value
        assert "](javascript" not in value, value
        assert "<img" not in value, value
    for spec in plotly_specs(at):
        # What Plotly renders (customdata is never rendered: it only carries selections).
        shown = json.dumps(
            [
                {k: v for k, v in trace.items() if k in ("text", "hovertext", "name", "x", "y")}
                for trace in spec["data"]
            ]
            + [spec.get("layout", {})]
        )
        assert "<script" not in shown and "<img" not in shown
        assert "&lt;script&gt;" in shown
    # The explorer and overview show the hostile agent name as data too.
    for page in ("traces", "overview", "compare"):
        view = run_app(page=page)
        for value in markdown_like(view):
            assert "<script" not in value and "](javascript" not in value, (page, value)


def test_findings_page_and_empty_states(filled: Filled) -> None:
    at = run_app(page="findings")
    has_analyzer = analyzed(filled.url)
    if not has_analyzer:
        assert any("Analysis isn't available" in i.value for i in at.info)
    else:
        at = run_app(page="findings")
        assert at.dataframe or at.info
    empty = run_app(page="overview", range="15m", service="no-such-service")
    assert any("No traces yet" in i.value for i in empty.info)
    assert any("/v1/traces" in c.value for c in empty.code)
    missing = run_app(page="run", trace="0" * 32)
    assert any("not found" in w.value for w in missing.warning)


def test_compare_variants_and_runs(filled: Filled) -> None:
    at = run_app(page="compare")
    summary = at.dataframe[0].value
    assert set(summary["variant"]) >= {lb["variant"] for lb in filled.labels}
    assert summary["success_rate"].between(0, 1).all()
    two = [lb["trace_id"] for lb in filled.labels[:2]]
    at = run_app(page="compare", cmp=",".join(two))
    side = next(f.value for f in at.dataframe if "trace_id" in f.value.columns)
    assert list(side["trace_id"]) == two


def test_unreachable_collector_is_an_error_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANSCOPE_ENDPOINT", "http://127.0.0.1:9")
    at = run_app(page="traces")
    assert any("cannot reach the collector" in e.value for e in at.error)


def test_run_detail_of_agents_no_span_encloses(filled: Filled) -> None:
    """Agents with no application span over them are the attempts of a run no span stands for
    (``observed.agent_roots``), their tool calls said only as events (``observed.event_calls``):
    the run page shows that run, the agents as attempts and the calls as their actions."""
    trace_id, spans = agent_runtime(filled.url)
    wait_stored(filled.url, trace_id, spans)
    at = run_app(page="run", trace=trace_id)
    assert not at.error, [e.value for e in at.error]
    attempts = next(f.value for f in at.dataframe if "fingerprint" in f.value.columns)
    assert list(attempts["attempt"]) == [1, 2, 3, 4]
    assert list(attempts["status"]) == ["error"] * 4
    assert any(t.startswith("action: execute_tool health_check") for t in texts(at))
    metric = {m.label: m.value for m in at.metric}
    assert metric["Outcome"] == "failure" and metric["Step attempts"] == "5"


def test_run_detail_of_a_5000_span_run_renders(filled: Filled) -> None:
    """The run page of a 5,000-span run renders whole (time: benchmarks/dashboard_render.py)."""
    big = large_run(5000)
    big.send(filled.url)
    wait_stored(filled.url, big.trace_id, len(big.spans))
    run_app(page="run", trace=filled.labels[0]["trace_id"])  # imports warm; big trace cold
    at = AppTest.from_file(str(APP_FILE), default_timeout=60)
    at.query_params["page"] = "run"
    at.query_params["trace"] = big.trace_id
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    spans = next(m for m in at.metric if m.label == "Spans")
    assert int(spans.value) == len(big.spans) >= 5000


def _without(monkeypatch: pytest.MonkeyPatch, *prefixes: str) -> None:
    """Make the real collector answer 404 for these API prefixes (a collector without that
    extension, like `serve --role ingest`)."""
    import streamlit as st
    from planscope.client import CollectorClient

    original = CollectorClient._request

    def request(self: Any, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        if path.startswith(prefixes):
            path = "/api/missing" + path
        return original(self, method, path, *args, **kwargs)

    monkeypatch.setattr(CollectorClient, "_request", request)
    st.cache_data.clear()
    st.cache_resource.clear()


def test_pages_read_server_side_aggregates(filled: Filled) -> None:
    import streamlit as st

    st.cache_data.clear()
    stats = httpx.get(f"{filled.url}/api/stats/runs", params={"bucket": 3600}).json()
    at = run_app(page="overview")
    metric = {m.label: m.value for m in at.metric}
    assert int(metric["Runs"]) == stats["totals"]["runs"] >= len(filled.labels) + 1
    assert int(metric["Attempts beyond the first"]) == stats["totals"]["retries"]
    steps = next(f.value for f in at.dataframe if "step" in f.value.columns)
    assert list(steps.columns)[:3] == ["step", "failed attempts", "failed runs"]  # sort key shown
    assert list(steps["failed attempts"]) == sorted(steps["failed attempts"], reverse=True)
    # From the numbers to the runs behind them.
    failures = stats["totals"]["failures"]
    assert at.button(key="ov_open_failed").label == f"Open the {failures:,} failed runs"
    at.button(key="ov_open_failed").click().run()
    assert (at.query_params["page"], at.query_params["outcome"]) == ("traces", "failure")
    # The explorer pages and filters in the collector.
    loop = filled.labelled("runaway_loop")
    at = run_app(page="traces", outcome="failure")
    table = at.dataframe[0].value
    assert set(table["outcome"]) == {"failure"}
    assert loop["trace_id"] in set(table["trace_id"]) or len(table) == 25
    at = run_app(page="traces", variant=loop["variant"], q=loop["trace_id"][:10].upper())
    assert list(at.dataframe[0].value["trace_id"]) == [loop["trace_id"]]
    # Compare: every run counted, retries and replans per run known for every variant.
    at = run_app(page="compare")
    summary = at.dataframe[0].value
    assert summary["runs"].sum() == stats["totals"]["runs"]
    assert summary["retries_per_run"].notna().all()


def test_alerts_page_create_test_edit_and_history(filled: Filled) -> None:
    if httpx.get(f"{filled.url}/api/alerts/rules").status_code == 404:
        pytest.skip("this installation has no alerts extension")
    at = run_app(page="alerts")
    assert not at.error, [e.value for e in at.error]
    # Create a retry-budget rule with the form.
    at.text_input(key="ar_id_new").input("loop-budget")
    at.text_input(key="ar_name_new").input("steps over 3 attempts")
    at.text_input(key="ar_window_new").input("1d")
    at.number_input(key="ar_max_attempts_per_step_new").set_value(3)
    at.button(key="ar_save_new").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Saved rule loop-budget (version 1)" in unescaped(s.value) for s in at.success)
    rule = httpx.get(f"{filled.url}/api/alerts/rules/loop-budget").json()
    assert rule["budget"]["max_attempts_per_step"] == 3 and rule["scope"] == "step"
    assert rule["budget"].get("max_replans") is None
    assert "loop-budget" in set(
        next(f.value for f in at.dataframe if "rule" in f.value.columns)["rule"]
    )
    # Dry run: the suite's runaway loop has a step with 5 attempts.
    at.selectbox(key="alert_test_rule").select("loop-budget")
    at.button(key="alert_test_btn").click().run()
    would = next(m for m in at.metric if m.label == "Would fire")
    assert would.value == "yes"
    # Edit: a new version, the budget kept unless changed.
    at.selectbox(key="alert_edit_rule").select("loop-budget").run()
    at.text_input(key="ar_name_loop-budget").input("renamed")
    at.button(key="ar_save_loop-budget").click().run()
    assert any("version 2" in unescaped(s.value) for s in at.success)
    rule = httpx.get(f"{filled.url}/api/alerts/rules/loop-budget").json()
    assert (rule["name"], rule["version"], rule["budget"]["max_attempts_per_step"]) == (
        "renamed",
        2,
        3,
    )
    # An invalid rule: the collector's problems are shown, nothing is stored.
    at = run_app(page="alerts")
    at.text_input(key="ar_id_new").input("broken")
    at.text_input(key="ar_window_new").input("soon")
    at.button(key="ar_save_new").click().run()
    assert any("refused the rule" in e.value for e in at.error)
    assert any("window" in t for t in texts(at))
    assert httpx.get(f"{filled.url}/api/alerts/rules/broken").status_code == 404
    # The engine fires the rule; state and history show it.
    poll(
        f"{filled.url}/api/alerts/events",
        lambda b: any(
            e["rule_id"] == "loop-budget" and e["state"] == "firing" for e in b["events"]
        ),
        what="the loop-budget rule firing",
    )
    at = run_app(page="alerts", arule="loop-budget")
    assert int(next(m for m in at.metric if m.label == "Firing").value) >= 1
    history = next(f.value for f in at.dataframe if "delivery" in f.value.columns)
    assert "firing" in set(history["state"])
    # Every firing names its evidence run: a link to that run's page in this dashboard.
    fired = history[history["state"] == "firing"]
    assert all(str(u).startswith("?page=run&trace=") for u in fired["run"]), list(fired["run"])
    now = next(f.value for f in at.dataframe if "since" in f.value.columns)
    assert all(str(u).startswith("?page=run&trace=") for u in now["run"]), list(now["run"])
    # Rule text from the API is data, never markup.
    hostile = {
        "id": "hostile-rule",
        "kind": "retry_budget",
        "scope": "step",
        "name": INJECTION,
        "description": "[x](javascript:alert(1))",
        "budget": {"max_attempts_per_step": 50},
    }
    assert httpx.post(f"{filled.url}/api/alerts/rules", json=hostile).status_code == 201
    at = run_app(page="alerts")
    assert INJECTION in "\n".join(texts(at))
    for value in markdown_like(at):
        assert "<script" not in value and "](javascript" not in value, value


def test_alerts_page_without_the_alerts_api(
    filled: Filled, monkeypatch: pytest.MonkeyPatch
) -> None:
    _without(monkeypatch, "/api/alerts")
    at = run_app(page="alerts")
    assert not at.error
    assert any("Alerts aren't available" in i.value for i in at.info)


def test_an_alert_link_opens_the_run_on_its_step(filled: Filled) -> None:
    from urllib.parse import parse_qsl, urlsplit

    from planscope_analyzer.alerts import AlertSettings

    label = filled.labelled("runaway_loop")
    loop = next(f for f in label["expected_findings"] if f["kind"] == "runaway_loop")
    link = AlertSettings().trace_link(label["trace_id"], step_id=loop["step_id"])
    at = run_app(**dict(parse_qsl(urlsplit(link).query)))
    assert any(t.startswith(f"trace {label['trace_id']}") for t in texts(at))
    assert at.selectbox(key="step_select").value == loop["step_id"]
    # Links from before the rename (``trace_id=``) still open the run.
    old = run_app(page="run", trace_id=label["trace_id"])
    assert old.query_params["trace"] == label["trace_id"]
    assert any(t.startswith(f"trace {label['trace_id']}") for t in texts(old))


def test_run_detail_opens_on_the_failing_step_and_action(filled: Filled) -> None:
    label = filled.labelled("runaway_loop")
    loop = next(f for f in label["expected_findings"] if f["kind"] == "runaway_loop")
    at = run_app(page="run", trace=label["trace_id"])  # no step in the link
    assert at.selectbox(key="step_select").value == loop["step_id"]
    chain = [t for t in texts(at) if t.startswith(("action:", "↳"))]
    assert chain and chain[0].startswith("action:"), chain
    attempts = next(f.value for f in at.dataframe if "fingerprint" in f.value.columns)
    last_failed = attempts[attempts["status"] == "error"]["attempt"].max()
    why = at.selectbox(key="why_span")
    assert f"{loop['step_id']}#{last_failed}" in why.format_func(why.value)


def test_run_detail_without_a_trace_lists_recent_runs(filled: Filled) -> None:
    at = run_app(page="run")
    table = next(f.value for f in at.dataframe if "trace_id" in f.value.columns)
    assert len(table) >= 10 and set(table["trace_id"]) & {lb["trace_id"] for lb in filled.labels}


def test_scheduler_page_draws_the_queue_and_waits_per_run(filled: Filled) -> None:
    scheduled = [lb for lb in filled.labels if lb["variant"] == "scheduler"]
    assert scheduled, "the suite draw has no scheduler run"
    at = run_app(page="scheduler", range="24h")
    assert not at.error, [e.value for e in at.error]
    requests = next(m for m in at.metric if m.label == "Requests")
    assert int(requests.value) >= scheduled[0]["metrics"]["llm_calls"]
    queue, waits = plotly_specs(at)[:2]
    levels = queue["data"][0]["y"]
    assert levels[-1] == 0 and max(levels) >= 1  # every wait ends in a grant
    assert waits["data"][0]["type"] == "box"
    runs = next(f.value for f in at.dataframe if "max_wait_ms" in f.value.columns)
    assert set(runs["trace"]) <= {lb["trace_id"] for lb in scheduled}


def test_host_run_shows_its_application_agents_and_hand_offs(filled: Filled) -> None:
    label = next(lb for lb in filled.labels if lb["variant"] == "host")
    at = run_app(page="run", trace=label["trace_id"])
    assert not at.error, [e.value for e in at.error]
    dag, timeline = plotly_specs(at)[:2]
    hovers = " ".join(h for t in dag["data"] for h in (t.get("hovertext") or []))
    assert "executor: " in hovers and "-agent" in hovers  # the DAG shows who got each sub-task
    lanes = {y for t in timeline["data"] for y in (t.get("y") or [])}
    assert "host-agent" in lanes and any(
        str(y).endswith("-agent") and y != "host-agent" for y in lanes
    )
    bars = " ".join(
        str(x) for t in timeline["data"] for x in (t.get("hovertext") or t.get("text") or [])
    )
    assert "hand-off → " in bars


def test_approvals_page_rejects_with_a_reason(filled: Filled) -> None:
    at = run_app(page="approvals")
    assert any("No plan is waiting" in m for m in markdown_like(at))
    body = {
        "run_id": "run-approve-1",
        "plan_id": "plan-approve-1",
        "plan_version": 1,
        "objective": INJECTION,
        "plan": {"steps": [{"id": "wipe", "description": INJECTION, "irreversible": True}]},
    }
    filed = httpx.post(f"{filled.url}/api/approvals", json=body).json()
    at = run_app(page="approvals")
    assert any(INJECTION in t for t in texts(at))  # plan text shown literally
    assert all("<img" not in m for m in markdown_like(at))
    at.button(key=f"FormSubmitter:decide_{filed['id']}-Reject").click().run()
    assert any("needs a reason" in str(e.value) for e in at.error)  # nothing sent
    assert httpx.get(f"{filled.url}/api/approvals/{filed['id']}").json()["status"] == "pending"
    at.text_input(key=f"reason_{filed['id']}").input("irreversible wipe of shared data")
    at.button(key=f"FormSubmitter:decide_{filed['id']}-Reject").click().run()
    assert not at.exception
    decided = httpx.get(f"{filled.url}/api/approvals/{filed['id']}").json()
    assert decided["status"] == "rejected"
    assert (decided["reason"], decided["reviewer"]) == (
        "irreversible wipe of shared data",
        "dashboard",
    )

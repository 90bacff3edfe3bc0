"""Data quality's unclassified spans on an SDK run: a tool server's own spans under a tool call
and an application's span grouping calls are structure it understands, not gaps."""

from __future__ import annotations

from planscope_analyzer import TraceData
from planscope_analyzer._model import RawSpan
from planscope_analyzer.detectors.data_quality import DataQuality

from .test_plan_propagation import _observed_run


def _declared(extra: list[tuple[str, str, str]]) -> TraceData:
    """A declared billing run (run, plan, three steps with a tool call each) with its raw spans
    and ``extra`` untyped spans (span id, parent id, name)."""
    t = _observed_run("Bill account AC-3", "", {s: "{}" for s in ("fetch", "convert", "pay")})
    t.runs = [r._replace(inferred=False) for r in t.runs]
    t.plans = [p._replace(inferred=False) for p in t.plans]
    t.attempts = [a._replace(inferred=False, parent_span_id="r") for a in t.attempts]
    spans = [(r.span_id, r.parent_span_id, "invoke_agent") for r in t.runs]
    spans += [(p.span_id, p.parent_span_id, "plan") for p in t.plans]
    spans += [(a.span_id, a.parent_span_id, "execute_step") for a in t.attempts]
    spans += [(c.span_id, c.parent_span_id, "execute_tool") for c in t.tools]
    t.raw = [RawSpan(s, p, n, "Ok", "", 0, 1, "", "") for s, p, n in spans + extra]
    return t


def test_a_tool_servers_spans_and_an_apps_grouping_span_are_not_unclassified() -> None:
    trace = _declared(
        [
            ("srv", "t-pay", "POST /charges"),  # the billing server's handler, under the call
            ("db", "srv", "SELECT ledger"),  # and its own work below
            ("grp", "r", "settle batch"),  # the app's span around a step
        ]
    )
    trace.attempts = [
        a._replace(parent_span_id="grp") if a.step_id == "pay" else a for a in trace.attempts
    ]
    trace.raw = [r._replace(parent_span_id="grp") if r.span_id == "a-pay" else r for r in trace.raw]
    assert DataQuality().detect(trace) == []


def test_a_stray_span_beside_the_steps_is_still_unclassified() -> None:
    (finding,) = DataQuality().detect(_declared([("x", "a-fetch", "render invoice")]))
    assert finding.detail["issue"] == "unclassified_spans" and finding.evidence == ("x",)

"""A re-plan that restates the results of the steps already done, keyed by their step names,
beside the steps still to do: a museum lending a painting, plain GenAI spans from the real OTel
SDK, stored in the real chDB store and loaded for real. The planner answers a playbook-like YAML
play (``vars`` the settled steps' results, ``tasks`` a list of ``- name:``, one module key with
its arguments, ``register: <step>``) or the same as JSON (``settled`` / ``tasks``); one
executor run per step attempt is handed its step, earlier results filled in (their ids, not
their step names). The shipper refuses the crate twice under each of three plan versions.

Before: a re-plan's first list that formed a plan was taken, and the settled results (a mapping
of mappings keyed by step name, before the list of steps) formed one: their step names were no
step any later attempt carried, but their ``ref`` values were (filled in to the next step's
arguments), and the names kept the plan's names. So the re-plans' steps were the steps already
done, the shipper's attempts under them bound to no step of their plan, and the loop across the
re-plans was found at no step."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import Span, Status, StatusCode, Tracer
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

PROMPT = "Lend 'Harbour at Dusk' (inv. 1931.4) to the Kunsthalle for 2027-10-01, courier-led."
STEPS: dict[str, tuple[str, dict[str, Any]]] = {
    "crate_painting": ("build_crate", {"object": "1931.4", "climate": "45% RH"}),
    "condition_report": ("write_report", {"object": "1931.4", "crate": "@crate_painting"}),
    "book_shipper": ("book_fine_art_shipper", {"crate": "@crate_painting", "shipper": "Hasenkamp"}),
    "insure_loan": ("insure_object", {"object": "1931.4", "report": "@condition_report"}),
    "notify_lender": ("mail_registrar", {"shipment": "@book_shipper"}),
}
RESULTS = {
    "crate_painting": {"ref": "CR-0884", "size": "142x118x40 cm"},
    "condition_report": {"ref": "COND-2231", "grade": "stable"},
}
SHIPPERS = ("Hasenkamp", "Momart", "Crown Fine Art")


def _answer(form: str, revision: int) -> str:
    """The plan of ``revision``: every step, or on a re-plan the settled results and the steps
    still to do (the shipper that revision names)."""
    todo = list(STEPS) if revision == 1 else ["book_shipper", "insure_loan", "notify_lender"]
    steps = []
    for step in todo:
        tool, args = STEPS[step]
        if step == "book_shipper":
            args = {**args, "shipper": SHIPPERS[revision - 1]}
        steps.append((step, tool, args))
    if form == "json":
        doc: dict[str, Any] = {"revision": revision}
        if revision > 1:
            doc["settled"] = RESULTS
        doc["tasks"] = [{"register": s, "module": t, "params": a} for s, t, a in steps]
        return json.dumps(doc, indent=1)
    lines = [f"- name: Loan of inv. 1931.4 (revision {revision})", "  hosts: registrar"]
    if revision > 1:
        lines.append("  vars:")
        for step, result in RESULTS.items():
            lines.append(f"    {step}:")
            lines += [f"      {k}: {v}" for k, v in result.items()]
    lines.append("  tasks:")
    for step, tool, args in steps:
        lines += [f"  - name: {step.replace('_', ' ')}", f"    {tool}:"]
        lines += [
            f"      {k}: '{{{{ {v[1:]} }}}}'" if v.startswith("@") else f"      {k}: {v}"
            for k, v in args.items()
        ]
        lines.append(f"    register: {step}")
    return "\n".join(lines)


def _attempt(tracer: Tracer, step: str, attempt: int, shipper: str = "", error: str = "") -> None:
    """One executor run handed ``step``, earlier results filled in by their ids."""
    tool, args = STEPS[step]
    args = {
        k: RESULTS[v[1:]]["ref"] if isinstance(v, str) and v[1:] in RESULTS else v
        for k, v in args.items()
    }
    if shipper:
        args["shipper"] = shipper
    asked = f"Task: {step} (attempt {attempt})\n{json.dumps(args)}"
    genai.attempt(tracer, "loan_runner", ("museum.desk", "loans"), asked, tool, args, error)


def _loan(store: Store, form: str) -> str:
    """The loan: the shipper refuses twice under each of three plan versions; the trace id."""

    def play(tracer: Tracer, root: Span) -> None:
        genai.plan(tracer, "loan_planner", PROMPT, _answer(form, 1))
        _attempt(tracer, "crate_painting", 1)
        _attempt(tracer, "condition_report", 1)
        for revision, shipper in enumerate(SHIPPERS, start=1):
            if revision > 1:
                genai.plan(
                    tracer,
                    "loan_planner",
                    f"{PROMPT}\nRevision: {revision}",
                    _answer(form, revision),
                )
            for n in (1, 2):
                _attempt(
                    tracer,
                    "book_shipper",
                    n,
                    shipper,
                    f"{shipper}: no climate truck ({n + revision})",
                )
        root.set_status(Status(StatusCode.ERROR, "no shipper for the loan"))

    return genai.played(store, "loans-app", "painting loan", play)


@pytest.mark.parametrize("form", ["yaml", "json"])
def test_settled_results_are_no_replan(store: Store, form: str) -> None:
    t = _loan(store, form)
    trace = load_traces(store, "default", [t])[t]
    by_version = {
        v: [s.step_id for s in trace.plan_steps if s.plan_version == v]
        for v in sorted({s.plan_version for s in trace.plan_steps})
    }
    assert list(by_version.values()) == [
        list(STEPS),
        *[["book_shipper", "insure_loan", "notify_lender"]] * 2,
    ]
    shipper = [a for a in trace.attempts if a.step_id == "book_shipper"]
    assert [a.plan_version for a in shipper] == [1, 1, 2, 2, 3, 3]
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "book_shipper"
    assert finding.detail["plan_versions"] == [1, 2, 3]

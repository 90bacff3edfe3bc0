"""A plan whose items each state the same keys (``call=``, ``status=``) read from structure on a
re-plan: a university lab ordering a reagent, plain GenAI spans from the real OTel SDK, stored in
the real chDB store and loaded for real. The planner answers one item a line (its name, then
logfmt-style ``key=value`` pairs, ``call=`` the tool); a re-plan answers every item again, the
done ones with ``status=done result=...``. One executor run per step attempt (the app names the
step on it, ``lab.step``) is handed its item's line, earlier results filled in.

Read from structure (the names later executor runs carry), a re-plan whose later attempts were
all of one step took the key every item states (``call``), carried by those attempts and
written before the step's own name, as the plan's one step: the loop across the re-plans was
found at ``call``, not at the step."""

from __future__ import annotations

import pytest
from opentelemetry.trace import Span, Status, StatusCode, Tracer
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

PROMPT = "Order 5 L of Tris buffer (ACS grade) for the Kowalski lab, cost centre LAB-2207."

ITEMS = {
    "find_vendor": "call=search_vendors reagent=Tris grade=ACS",
    "order_reagent": "call=place_order vendor=@find_vendor reagent=Tris litres=5 centre={centre}",
    "book_courier": "call=book_courier vendor=@find_vendor building=Hartley dock=2",
    "notify_lab": "call=send_mail to=kowalski-lab order=@order_reagent courier=@book_courier",
}
CENTRES = ("LAB-2207", "LAB-2270", "LAB-7022")
VENDOR = "V-SIG-17"


def _plan_text(revision: int, centre: str) -> str:
    lines = [f"# order plan, revision {revision}"]
    for item, pairs in ITEMS.items():
        line = f"{item} {pairs.format(centre=centre)}"
        if revision > 1 and item == "find_vendor":
            line += f" status=done result={VENDOR}"
        lines.append(line)
    return "\n".join(lines)


def _plan(tracer: Tracer, revision: int, centre: str) -> None:
    asked = PROMPT
    if revision > 1:  # a re-plan is told what is done and what went wrong
        asked += f"\nDone: find_vendor -> {VENDOR}. order_reagent refused cost centre."
    genai.plan(tracer, "order_planner", asked, _plan_text(revision, centre))


def _attempt(tracer: Tracer, item: str, centre: str, error: str = "") -> None:
    """One executor run on ``item``, handed its line; one tool call, failing with ``error``."""
    line = f"{item} {ITEMS[item].format(centre=centre)}".replace("@find_vendor", VENDOR)
    tool = line.split("call=")[1].split()[0]
    asked = f"Carry out this item of the order plan:\n{line}"
    args = {"item": item, "centre": centre}
    genai.attempt(tracer, "lab_runner", ("lab.step", item), asked, tool, args, error)


def _lab(store: Store) -> str:
    """The order, its reagent refused in every plan version; the trace id."""
    errors = iter(
        f"finance system: {text}"
        for text in (
            "ledger closing, try again",
            "cost centre frozen, use LAB-2270",
            "batch 41 posting, try again",
            "cost centre frozen, use LAB-7022",
            "budget holder on leave, try again",
            "order refused for good",
        )
    )

    def play(tracer: Tracer, root: Span) -> None:
        for revision, centre in enumerate(CENTRES, 1):
            _plan(tracer, revision, centre)
            if revision == 1:
                _attempt(tracer, "find_vendor", centre)
            _attempt(tracer, "order_reagent", centre, next(errors))
            _attempt(tracer, "order_reagent", centre, next(errors))
        root.set_status(Status(StatusCode.ERROR, "order refused for good"))

    return genai.played(store, "lab-orders", "reagent order", play)


def test_a_key_every_item_states_is_no_step_of_a_replan(store: Store) -> None:
    t = _lab(store)
    trace = load_traces(store, "default", [t])[t]
    versions = [
        [s.step_id for s in trace.plan_steps if s.plan_version == p.version] for p in trace.plans
    ]
    assert len(versions) == 3
    assert versions[0][:2] == ["find_vendor", "order_reagent"]
    for later in versions[1:]:  # not the key every item states
        assert "call" not in later and "order_reagent" in later
    failed = {a.step_id for a in trace.attempts if a.status == "error"}
    assert failed == {"order_reagent"}
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "order_reagent"
    assert finding.detail["plan_versions"] == [1, 2, 3]

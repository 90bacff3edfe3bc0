"""A plan in a format no reader knows, read from structure, whose sentences' small words stand
before the step names: a university library borrowing a rare atlas for a reading room, plain
GenAI spans from the real OTel SDK, stored in the real chDB store and loaded for real. The
planner answers a title line (``Loan of the Mercator atlas to the Hale reading room``), then
one ``Task: <name>`` block a step with a line of prose; one executor run per step attempt (the
app names the step on it, ``library.task``) is handed its block.

Read from structure (the names later executor runs carry, in the order the answer writes
them), the title's ``of`` (carried by the first task's attempts: "the holding of the atlas")
and ``to`` (carried by the last's: "bring the atlas to ...") were taken for steps before any
task's name, and every name after them, carried by the same attempts, for that step's detail:
the loop at the last task was found at ``to``."""

from __future__ import annotations

import pytest
from opentelemetry.trace import Span, Status, StatusCode, Tracer
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

PROMPT = "Borrow the Mercator atlas for the Hale reading room, shelfmark MAP-1595."

TASKS = {
    "check_catalogue": ("search_union_catalogue", "find the holding of the atlas"),
    "request_loan": ("send_ill_request", "ask the holder for the atlas under MAP-1595"),
    "book_courier": ("book_art_courier", "bring the atlas to the reading room"),
}

PLAN = "Loan of the Mercator atlas to the Hale reading room\n" + "".join(
    f"\nTask: {task}\n  {prose} (call {tool})\n" for task, (tool, prose) in TASKS.items()
)


def _attempt(tracer: Tracer, task: str, tries: int, error: str = "") -> None:
    """One executor run on ``task``, handed its block; one tool call, failing with ``error``."""
    tool, prose = TASKS[task]
    asked = f"Task: {task} (try {tries})\n{prose}\nCall {tool}."
    genai.attempt(tracer, "loan_clerk", ("library.task", task), asked, tool, {"task": task}, error)


def _loan(store: Store) -> str:
    """The loan, its courier refused on every try; the trace id."""

    def play(tracer: Tracer, root: Span) -> None:
        genai.plan(tracer, "loan_planner", PROMPT, PLAN)
        _attempt(tracer, "check_catalogue", 1)
        _attempt(tracer, "request_loan", 1)
        for tries, error in enumerate(
            ("courier van full", "crate not ready", "insurer has not signed", "refused"), 1
        ):
            _attempt(tracer, "book_courier", tries, f"courier desk: {error}")
        root.set_status(Status(StatusCode.ERROR, "no courier for the atlas"))

    return genai.played(store, "library-loans", "atlas loan", play)


def test_a_sentences_function_words_are_no_step_names(store: Store) -> None:
    t = _loan(store)
    trace = load_traces(store, "default", [t])[t]
    assert len(trace.plans) == 1
    assert [s.step_id for s in trace.plan_steps] == list(TASKS)
    assert [s.tool for s in trace.plan_steps] == [tool for tool, _ in TASKS.values()]
    failed = {a.step_id for a in trace.attempts if a.status == "error"}
    assert failed == {"book_courier"}
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "book_courier"

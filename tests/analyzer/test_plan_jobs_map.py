"""A plan stated as a CI-style workflow, a mapping of jobs keyed by their ids, read from
structure: a wedding planner booking a reception, plain GenAI spans from the real OTel SDK,
stored in the real chDB store and loaded for real. The planner answers a fenced YAML document
(``jobs:`` over one mapping per job: ``needs``, ``uses`` its action, ``with`` its arguments,
``${{ jobs.<id>.outputs.result }}`` an earlier job's result), or the same jobs as a JSON list;
one executor run per job attempt is handed its job, ``needs`` and all, earlier results filled in.

Before: the YAML paragraph reader took only lists (``- key:`` lines) and no fenced document (its
closing fence failed every parse), so no plan was read from the workflow; and a job named
beside an earlier one by an executor handed a later job's ``needs`` was no step (a word carried
with an earlier step's name), so the jobs' actions (``uses``, each carried by its job's attempts
alone) were read as the steps."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest
from opentelemetry.trace import Span, Status, StatusCode, Tracer
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

PROMPT = "Book the Ashworth-Okafor reception for 2027-09-18 in Leeds, 80 guests."
JOBS: dict[str, dict[str, object]] = {
    "find_venue": {"uses": "venue-finder", "with": {"city": "Leeds", "guests": 80}},
    "hold_date": {
        "needs": ["find_venue"],
        "uses": "date-holder",
        "with": {"venue": "${{ jobs.find_venue.outputs.result }}", "date": "2027-09-18"},
    },
    "book_caterer": {
        "needs": ["find_venue", "hold_date"],
        "uses": "caterer-desk",
        "with": {
            "venue": "${{ jobs.find_venue.outputs.result }}",
            "hold": "${{ jobs.hold_date.outputs.result }}",
            "covers": 80,
        },
    },
    "send_invites": {
        "needs": ["hold_date", "book_caterer"],
        "uses": "guest-mailer",
        "with": {"hold": "${{ jobs.hold_date.outputs.result }}", "list": "guests-ao"},
    },
}
TOOLS = {
    "find_venue": "search_venues",
    "hold_date": "hold_venue_date",
    "book_caterer": "book_catering",
    "send_invites": "mail_guests",
}
"""The operation each job's action (``uses``) runs, the tool the executor calls."""
RESULTS = {"find_venue": "VEN-311", "hold_date": "HOLD-0918"}


def _yaml(jobs: dict[str, dict[str, object]], indent: str) -> list[str]:
    """The jobs as block YAML (flow lists, quoted expressions), each key ``indent`` deep."""
    lines: list[str] = []
    for job, spec in jobs.items():
        lines.append(f"{indent}{job}:")
        for key, value in spec.items():
            if isinstance(value, dict):
                lines.append(f"{indent}  {key}:")
                lines += [f"{indent}    {k}: {json.dumps(v)}" for k, v in value.items()]
            elif isinstance(value, list):
                lines.append(f"{indent}  {key}: [{', '.join(value)}]")
            else:
                lines.append(f"{indent}  {key}: {value}")
    return lines


def _answer(form: str) -> str:
    if form == "json":
        return json.dumps([{"id": job, **spec} for job, spec in JOBS.items()], indent=1)
    head = ["name: reception", "on: workflow_dispatch", "jobs:"]
    return "Here is the workflow.\n\n```yaml\n" + "\n".join(head + _yaml(JOBS, "  ")) + "\n```"


def _attempt(tracer: Tracer, job: str, error: str = "") -> None:
    """One executor run handed ``job`` (its results filled in), one call of its tool."""
    spec = JOBS[job]
    block = "\n".join(_yaml({job: spec}, ""))
    for done, result in RESULTS.items():
        block = block.replace(f"${{{{ jobs.{done}.outputs.result }}}}", result)
    asked = f"Run this job of the reception workflow:\n{block}"
    args = cast(dict[str, Any], spec["with"])
    tool = TOOLS[job]
    genai.attempt(tracer, "wedding_runner", ("wedding.shard", "eu"), asked, tool, args, error)


def _reception(store: Store, form: str) -> str:
    """The booking, the caterer refused four times in a row; the trace id."""

    def play(tracer: Tracer, root: Span) -> None:
        genai.plan(tracer, "wedding_planner", PROMPT, _answer(form))
        _attempt(tracer, "find_venue")
        _attempt(tracer, "hold_date")
        for n in range(4):
            _attempt(tracer, "book_caterer", f"catering desk: kitchen rota {n + 3} is full")
        root.set_status(Status(StatusCode.ERROR, "no caterer for the reception"))

    return genai.played(store, "wedding-app", "reception booking", play)


@pytest.mark.parametrize("form", ["yaml", "json"])
def test_a_jobs_map_is_read_by_its_job_ids(store: Store, form: str) -> None:
    t = _reception(store, form)
    trace = load_traces(store, "default", [t])[t]
    assert [s.step_id for s in trace.plan_steps] == list(JOBS)
    assert [a.step_id for a in trace.attempts if a.step_id in JOBS] == [
        "find_venue",
        "hold_date",
        *["book_caterer"] * 4,
    ]
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "book_caterer"

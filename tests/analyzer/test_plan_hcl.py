"""A plan written as HCL blocks (HashiCorp configuration language: a labelled block a step,
``action`` / ``inputs`` / ``depends_on`` attributes, a traversal ``task.<name>.<attr>`` an
earlier step's result; a re-plan keeps the finished steps as blocks nothing refers to): a dental
lab's crown order, plain GenAI spans from the real OTel SDK, stored in the real chDB store and
loaded for real. The planner's answer is a fenced HCL block after a header block; one executor
run per step attempt (the app names the step on it, ``lab.step``) makes its tool calls.

Read from structure (the names later executor runs carry), a plan whose first step is the only
one ever tried had no step to read: its runaway loop was found at no step."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import Status, StatusCode, Tracer
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector import _hcl
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

PROMPT = "Make crown order CR-7781 (tooth 36, zirconia, shade A2) for Dr Osei's clinic."

PLAN = """The order as HCL:

```hcl
order "CR-7781" {
  revision = 1
}

task "scan_model" {
  description = "Scan the impression of tooth 36."
  action      = "scanner_run"
  inputs = {
    impression = "IMP-7781"
    tooth      = 36
  }
}

task "mill_crown" {
  description = "Mill the crown in zirconia, shade A2."
  action      = "mill_job"
  inputs      = { scan = task.scan_model.file, material = "zirconia", shade = "A2" }
  depends_on  = [task.scan_model]
}

task "ship_crown" {
  action = "courier_book"
  inputs = {
    parcel = task.mill_crown.id
    clinic = "Osei Dental"  // the clinic's name as the courier lists it
  }
}
```
"""

REPLAN = """```hcl
order "CR-7781" {
  revision = 2
  because  = "mill M2 is down: use mill M4"
}

finished "scan_model" {
  result = "SCAN-36-0041"
}

task "mill_crown" {
  action = "mill_job"
  inputs = { scan = task.scan_model.file, material = "zirconia", mill = "M4" }
}

task "ship_crown" {
  action     = "courier_book"
  inputs     = { parcel = task.mill_crown.id, clinic = "Osei Dental" }
  depends_on = [task.mill_crown]
}
```"""


def _plan(tracer: Tracer, answer: str) -> None:
    genai.plan(tracer, "lab_planner", PROMPT, answer)


def _attempt(tracer: Tracer, step: str, tool: str, args: dict[str, Any], error: str = "") -> None:
    """One executor run on ``step``: one tool call, failing with ``error`` when given."""
    asked = f"Do the task {step}: call {tool}."
    genai.attempt(tracer, "lab_tech", ("lab.step", step), asked, tool, args, error)


def _lab(store: Store, play: Any) -> str:
    return genai.played(store, "dental-lab", "crown order", play)


def test_a_loop_at_the_first_step_of_an_hcl_plan_is_that_steps(store: Store) -> None:
    # the scanner fails five times with other errors, the app runs the task again each time
    # and gives up: no other step of the plan is ever tried
    errors = [f"scanner head {n} recalibrating" for n in (2, 5, 1, 4)] + ["scanner offline"]

    def play(tracer: Tracer, root: Any) -> None:
        _plan(tracer, PLAN)
        for i, error in enumerate(errors):
            args = {"impression": "IMP-7781", "tooth": 36, "pass": i + 1}
            _attempt(tracer, "scan_model", "scanner_run", args, error)
        root.set_status(Status(StatusCode.ERROR, errors[-1]))

    t = _lab(store, play)
    trace = load_traces(store, "default", [t])[t]
    (plan,) = trace.plans
    steps = json.loads(plan.json)
    # the header block is no step: nothing refers to an order
    assert [s["id"] for s in steps] == ["scan_model", "mill_crown", "ship_crown"]
    assert [s["tool"] for s in steps] == ["scanner_run", "mill_job", "courier_book"]
    # literals as values, references as written
    assert steps[0]["args"] == {"impression": "IMP-7781", "tooth": 36}
    assert steps[1]["args"] == {
        "scan": "task.scan_model.file",
        "material": "zirconia",
        "shade": "A2",
    }
    assert [s["depends_on"] for s in steps] == [[], ["scan_model"], ["mill_crown"]]
    assert {a.step_id for a in trace.attempts if a.status == "error"} == {"scan_model"}
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "scan_model"


def test_a_replan_of_the_blocks_left_is_the_plans_next_version(store: Store) -> None:
    # the mill is down; the re-plan keeps the finished scan as a block nothing refers to (its
    # result still referred to by the address it had) and the two tasks left work: no loop
    def play(tracer: Tracer, root: Any) -> None:
        _plan(tracer, PLAN)
        _attempt(tracer, "scan_model", "scanner_run", {"impression": "IMP-7781", "tooth": 36})
        mill = {"scan": "SCAN-36-0041", "material": "zirconia", "shade": "A2"}
        _attempt(tracer, "mill_crown", "mill_job", mill, "mill M2 is down")
        _plan(tracer, REPLAN)
        _attempt(tracer, "mill_crown", "mill_job", {**mill, "mill": "M4"})
        _attempt(tracer, "ship_crown", "courier_book", {"parcel": "MJ-552", "clinic": "Osei"})

    t = _lab(store, play)
    trace = load_traces(store, "default", [t])[t]
    versions = [
        [s.step_id for s in trace.plan_steps if s.plan_version == p.version] for p in trace.plans
    ]
    assert versions == [["scan_model", "mill_crown", "ship_crown"], ["mill_crown", "ship_crown"]]
    replanned = json.loads(trace.plans[1].json)
    # a finished step's address is its result, no step of this version to depend on
    assert replanned[0]["args"] == {
        "scan": "task.scan_model.file",
        "material": "zirconia",
        "mill": "M4",
    }
    assert [s["depends_on"] for s in replanned] == [[], ["mill_crown"]]
    assert [a.step_id for a in trace.attempts if a.step_id in {"mill_crown", "ship_crown"}] == [
        "mill_crown",
        "mill_crown",
        "ship_crown",
    ]
    assert RunawayLoop().detect(trace) == []


def test_terraform_resources_and_blocks_nothing_refers_to() -> None:
    # Terraform's two-label resources: ``<type>.<name>`` refers to a resource block, its type
    # the step's tool; comments, a function call and a conditional kept as written
    config = """
resource "postgres_database" "orders" {
  name = "orders"   # the schema's own database
}
/* the app's role */
resource "postgres_role" "app" {
  login    = true
  password = sensitive(var.password)
  limit    = var.small ? 5 : 20
  grants   = [postgres_database.orders.name]
}
"""
    db, role = _hcl.steps(config)
    assert (db.name, db.tool, db.args, db.needs) == (
        "orders",
        "postgres_database",
        {"name": "orders"},
        (),
    )
    assert role.tool == "postgres_role" and role.needs == ("orders",)
    assert role.args["grants"] == ["postgres_database.orders.name"]
    assert role.args["password"] == "sensitive(var.password)"
    assert role.args["limit"] == "var.small ? 5 : 20"
    # blocks that pass nothing on are no plan by this syntax; neither is prose or JSON
    assert _hcl.steps('task "a" {\n  action = "x"\n}\ntask "b" {\n  action = "y"\n}') == []
    assert _hcl.steps('{"steps": [{"id": "a"}]}') == _hcl.steps("Mill it {today}.") == []
    assert [s.name for s in _hcl.steps(PLAN)] == ["scan_model", "mill_crown", "ship_crown"]
    # a heredoc is a string; an unterminated heredoc or comment ends the reading at once
    heredoc = 'task "a" {\n  note = <<EOT\n  two\n lines\nEOT\n}\ntask "b" {\n  x = task.a\n}'
    assert _hcl.steps(heredoc)[0].args == {"note": "  two\n lines"}
    opened = 'task "a" {\n  x = 1\n}\n' + "y = <<EOT\n/* " * 20_000
    assert _hcl.steps(opened) == []

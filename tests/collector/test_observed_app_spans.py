"""An app's own spans around its planner and executor (``planscope_collector.observed.bind``):
a planner span whose name counts its runs (each re-plan another span), and the app's own check
after the last step. A greenhouse crew: sow, water, then the app inspects the trays."""

from __future__ import annotations

from planscope_collector.observed import ObservedStep, SpanNode, bind

SYSTEM = "Answer a plan: a [plan] section, then a [job <name>] section per job."


def node(span_id: str, parent: str, kind: str, start: int, **kw: object) -> SpanNode:
    return SpanNode(span_id, parent, kind, str(kw.pop("name", span_id)), start_ns=start, **kw)  # type: ignore[arg-type]


def draft(n: int, start: int, answer: str) -> list[SpanNode]:
    """The app's planner span ``draft v{n}`` and its model call answering ``answer``."""
    return [
        node(f"d{n}", "root", "step", start, step_name=f"draft v{n}", inferred=True),
        node(f"d{n}l", f"d{n}", "llm", start + 1, request=SYSTEM, answer=answer),
    ]


def job(span_id: str, name: str, start: int, tool: str, *, failed: bool = False) -> list[SpanNode]:
    """The app's ``job {name}`` span: the executor's model call, then its tool call."""
    return [
        node(span_id, "root", "step", start, step_name=f"job {name}", inferred=True, failed=failed),
        node(f"{span_id}l", span_id, "llm", start + 1, request=f"Job {name}: call {tool}"),
        node(f"{span_id}t", span_id, "tool", start + 2, tool=tool, failed=failed),
    ]


def test_a_planner_span_that_counts_its_runs_re_plans_and_is_no_executor() -> None:
    # the re-planner's span (``draft v2``) is the planner's again, not a worker carrying "plan"
    first = "[plan]\nrevision = 1\n[job sow]\ntool = sow_tray\n[job water]\ntool = irrigate"
    again = "[plan]\nrevision = 2\nbecause = water: dry valve\n[job water]\ntool = irrigate"
    spans = [
        node("root", "", "run", 0),
        *draft(1, 1, first),
        *job("s", "sow", 10, "sow_tray"),
        *job("w1", "water", 20, "irrigate", failed=True),
        *draft(2, 30, again),
        *job("w2", "water", 40, "irrigate", failed=True),
    ]
    b = bind(spans, [])
    assert [[s.step_id for s in p.steps] for p in b.read_plans] == [["sow", "water"], ["water"]]
    assert b.steps == {"s": "sow", "w1": "water", "w2": "water"}


def test_the_apps_own_check_after_a_worker_that_ran_its_tools_is_no_attempt_of_its_step() -> None:
    # the worker called the model and its tools itself: the inspection after it, calling a tool
    # no plan step names, is the app's, not the worker's tool node
    plan = [
        ObservedStep("plan", "sow", "sow_tray", 0),
        ObservedStep("plan", "water", "irrigate", 1),
    ]
    spans = [
        node("root", "", "run", 0),
        node("plan", "root", "llm", 1),
        *job("s", "sow", 10, "sow_tray"),
        *job("w", "water", 20, "irrigate"),
        node("i", "root", "step", 30, step_name="inspect trays", inferred=True, failed=True),
        node("it", "i", "tool", 31, tool="read_sensor", failed=True),
    ]
    b = bind(spans, plan)
    assert b.steps == {"s": "sow", "w": "water"}


def test_a_workflow_visit_that_asks_the_model_and_polls_after_a_worker_stays_its_steps() -> None:
    # every visit of the crew's workflow is one span name; the visits after the watering one
    # ask the model and poll the valve (a tool no plan step names): the agent's next turns on
    # the step, not an app's check, though the visit before them ran its tools itself
    plan = [
        ObservedStep("plan", "sow", "sow_tray", 0),
        ObservedStep("plan", "water", "irrigate", 1),
    ]

    def turn(span_id: str, start: int, tool: str, ask: str) -> list[SpanNode]:
        """One visit of the crew's workflow: its model turn, then the tool call it chose."""
        return [
            node(span_id, "root", "step", start, name="crew turn", step_name="crew turn"),
            node(f"{span_id}l", span_id, "llm", start + 1, request=ask),
            node(f"{span_id}t", span_id, "tool", start + 2, tool=tool),
        ]

    spans = [
        node("root", "", "run", 0),
        node("plan", "root", "llm", 1),
        *turn("s", 10, "sow_tray", "Sow the trays."),
        *turn("w", 20, "irrigate", "Water the trays."),
        *turn("p1", 30, "valve_status", "Is it done yet?"),
        *turn("p2", 40, "valve_status", "Is it done yet?"),
    ]
    b = bind(spans, plan)
    assert b.steps == {"s": "sow", "w": "water", "p1": "water", "p2": "water"}

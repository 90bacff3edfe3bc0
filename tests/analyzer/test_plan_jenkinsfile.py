"""A plan written as a declarative Jenkinsfile (a ``stage('<name>')`` a step, its ``steps``
block's call with Groovy named parameters, ``"${<stage>.<field>}"`` an earlier stage's result,
a re-plan's ``environment { }`` block of settled results): a cider mill pressing a grower's
apples, spans from the real OTel SDK stored in the real chDB store and loaded for real.

Three ways of recording it: plain GenAI spans (the planner's chat answers the Jenkinsfile, one
executor run per stage attempt names its stage); the spans MLflow's LlamaIndex autologging
writes (the planner's chat call's output LlamaIndex's ``ChatResponse``, its text in content
``blocks``, as ``llama_index.core``'s own ``model_dump`` writes it); and an agent run the app
wraps in a span of its own per stage attempt, which the app fails when the run's answer says
the stage failed (the run itself ends OK, as LlamaIndex's ``FunctionAgent.run`` does).

No reader read a Jenkinsfile and the structure path found no plan in it: the loops were found
at no stage."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llama_index.core.llms import ChatMessage, ChatResponse
from opentelemetry.trace import Status, StatusCode, Tracer
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector import _jenkinsfile
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

PROMPT = "Press grower G-77's 900 kg of Dabinett apples into cider and bottle it."

PLAN = """Here is the Jenkinsfile:

```groovy
// order G-77: Dabinett
pipeline {
  agent any
  stages {
    stage('weigh_in') {
      steps {
        weighbridge(grower: 'G-77', variety: 'Dabinett', kg: 900)
      }
    }
    stage('press') {
      steps {
        echo 'pressing'
        rackPress(lot: "${weigh_in.lot}", racks: 12, organic: true)
      }
    }
    stage('bottle') { steps { bottlingLine(juice: "${press.tank}", bottles: 1200, size: '500ml') } }
  }
}
```
"""

REPLAN = """// revision 2: press: rework (use racks=10)
pipeline {
  agent any
  environment {
    WEIGH_IN_RESULT = 'LOT-4471'
  }
  stages {
    stage('press') { steps { rackPress(lot: "${env.WEIGH_IN_RESULT}", racks: 10) } }
    stage('bottle') { steps { bottlingLine(juice: "${press.tank}", bottles: 1200) } }
  }
}"""

MLFLOW = "mlflow.tracing.provider"


def _mlflow(span_type: str, inputs: Any, outputs: Any) -> dict[str, str]:
    """A span's attributes as MLflow writes them: every value JSON-encoded."""
    return {
        "mlflow.spanType": json.dumps(span_type),
        "mlflow.spanInputs": json.dumps(inputs),
        "mlflow.spanOutputs": json.dumps(outputs),
    }


def _attempt(tracer: Tracer, step: str, tool: str, args: dict[str, Any], error: str = "") -> None:
    genai.attempt(tracer, "cellarhand", ("mill.step", step), f"Run {tool}.", tool, args, error)


def test_a_loop_at_a_jenkinsfile_stage_is_that_stages(store: Store) -> None:
    # the rack press jams four times with other faults, the app runs the stage again each time
    # and gives up: bottling is never tried
    faults = ["rack 3 jammed", "hydraulic pressure low", "rack 7 jammed", "cloth torn"]

    def play(tracer: Tracer, root: Any) -> None:
        genai.plan(tracer, "mill_planner", PROMPT, PLAN)
        _attempt(tracer, "weigh_in", "weighbridge", {"grower": "G-77", "kg": 900})
        for fault in faults:
            _attempt(tracer, "press", "rackPress", {"lot": "LOT-4471", "racks": 12}, fault)
        root.set_status(Status(StatusCode.ERROR, faults[-1]))

    t = genai.played(store, "cider-mill", "press order G-77", play)
    trace = load_traces(store, "default", [t])[t]
    (plan,) = trace.plans
    steps = json.loads(plan.json)
    assert [s["id"] for s in steps] == ["weigh_in", "press", "bottle"]
    # the stage's first step call that is its work (``echo`` only prints)
    assert [s["tool"] for s in steps] == ["weighbridge", "rackPress", "bottlingLine"]
    assert steps[0]["args"] == {"grower": "G-77", "variety": "Dabinett", "kg": 900}
    assert steps[1]["args"] == {"lot": "${weigh_in.lot}", "racks": 12, "organic": True}
    assert [s["depends_on"] for s in steps] == [[], ["weigh_in"], ["press"]]
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "press"


def test_a_replans_environment_holds_settled_results_not_stages(store: Store) -> None:
    def play(tracer: Tracer, root: Any) -> None:
        genai.plan(tracer, "mill_planner", PROMPT, PLAN)
        _attempt(tracer, "weigh_in", "weighbridge", {"grower": "G-77", "kg": 900})
        _attempt(tracer, "press", "rackPress", {"racks": 12}, "rework: twelve racks overfill")
        genai.plan(tracer, "mill_planner", PROMPT, REPLAN)
        _attempt(tracer, "press", "rackPress", {"lot": "LOT-4471", "racks": 10})
        _attempt(tracer, "bottle", "bottlingLine", {"juice": "TANK-2", "bottles": 1200})

    t = genai.played(store, "cider-mill", "press order G-77", play)
    trace = load_traces(store, "default", [t])[t]
    versions = [
        [s.step_id for s in trace.plan_steps if s.plan_version == p.version] for p in trace.plans
    ]
    assert versions == [["weigh_in", "press", "bottle"], ["press", "bottle"]]
    # an environment variable is no earlier stage
    assert [s["depends_on"] for s in json.loads(trace.plans[1].json)] == [[], ["press"]]
    assert not RunawayLoop().detect(trace)


def test_what_is_no_jenkinsfile_plan_is_not_read() -> None:
    assert _jenkinsfile.steps("stage('a') { steps { f() } }") == []  # no pipeline
    assert _jenkinsfile.steps("pipeline {\n  agent any\n}") == []  # no stage
    assert _jenkinsfile.steps('{"stages": [{"stage": "a"}]}') == []
    same = "pipeline {\n stages {\n  stage('a') { steps { f() } }\n  stage('a') { steps { g() } }"
    assert _jenkinsfile.steps(same + "\n }\n}") == []  # a stage named twice
    assert _jenkinsfile.steps("pipeline {\n stages {\n  stage('a') { steps { f(x: 'y) } }") == []
    # stages nested in a stage's parallel block are the steps, the stage holding them none
    nested = (
        "pipeline {\n stages {\n  stage('both') {\n   parallel {\n"
        "    stage('left') { steps { f(n: 1) } }\n    stage('right') { steps { g(n: 2) } }\n"
        "   }\n  }\n  stage('after') { steps { sh 'make all' } }\n }\n}"
    )
    read = _jenkinsfile.steps(nested)
    assert [(s.name, s.tool, s.args) for s in read] == [
        ("left", "f", {"n": 1}),
        ("right", "g", {"n": 2}),
        ("after", "sh", {}),
    ]


def test_mlflow_llamaindex_planner_and_attempts_the_app_fails(store: Store) -> None:
    # as MLflow's LlamaIndex autologging records an app: the planner's chat call a CHAT_MODEL
    # span whose output is LlamaIndex's ChatResponse; each stage attempt the app's own CHAIN
    # span around an AGENT span (FunctionAgent.run, ending OK whatever it answered); the app
    # fails its stage span (no message) when the run's answer says the stage failed; MLflow
    # records nothing under the agent run
    answer = ChatResponse(message=ChatMessage(role="assistant", content=PLAN), raw={"id": "c1"})
    faults = ["rack 3 jammed", "hydraulic pressure low", "rack 7 jammed", "cloth torn"]

    def stage(tracer: Tracer, name: str, n: int, said: str, failed: bool) -> None:
        order = f"Stage {name} (attempt {n})"
        with tracer.start_as_current_span(
            f"stage {name} attempt {n}",
            attributes=_mlflow("CHAIN", {"order": order}, {"result": said}),
        ) as span:
            run = _mlflow("AGENT", {"user_msg": order}, {"result": {"response": said}})
            with tracer.start_as_current_span("FunctionAgent.run", attributes=run):
                pass
            if failed:
                span.set_status(Status(StatusCode.ERROR))

    def play(tracer: Tracer, root: Any) -> None:
        root.set_attributes(_mlflow("AGENT", {"order": "G-77"}, None))
        chat = {
            **_mlflow("CHAT_MODEL", {"messages": [PROMPT]}, answer.model_dump(mode="json")),
            "mlflow.message.format": json.dumps("llamaindex"),
        }
        with tracer.start_as_current_span("OpenAI.achat", attributes=chat):
            pass
        stage(tracer, "weigh_in", 1, "SUCCESS LOT-4471", False)
        for n, fault in enumerate(faults, 1):
            stage(tracer, "press", n, f"UNSTABLE {fault}", True)
        root.set_status(Status(StatusCode.ERROR, faults[-1]))

    t = genai.played(store, MLFLOW, "press order G-77", play)
    trace = load_traces(store, "default", [t])[t]
    (plan,) = trace.plans
    assert [s["id"] for s in json.loads(plan.json)] == ["weigh_in", "press", "bottle"]
    assert [(a.step_id, a.failed) for a in trace.attempts] == [("weigh_in", False)] + [
        ("press", True)
    ] * 4
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "press"

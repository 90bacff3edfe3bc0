"""A plan whose steps have short ids (``t1``, ``t2``) the app's attempt spans name, its
arguments one per ``<br>`` line, the model reached through the Google Gen AI SDK under MLflow's
Gemini autologging: a greenhouse's irrigation job, its spans as MLflow's tracing writes them
(``mlflow.spanType``, ``mlflow.spanInputs`` holding the ``generate_content`` request: the
model, the ``contents`` and the config), from the real OTel SDK, stored in the real chDB store
and loaded for real. The plan is a Markdown list whose items break their lines with ``<br>``
(as GitHub's Markdown renders them), in no format a reader reads: the generic path reads it.

Found on sealed-81 (a Mermaid flowchart, MLflow's Gemini autologging): on ``eebeda12`` the
executor calls' requests were not read (a Gemini request holds its turns under ``contents``,
not ``messages``), so the attempts carried only the tools they called and the steps were named
by the tools' bare names (``['spray', 'dose', 'water']``); and no argument of a ``<br>``-broken
item was read (no ``args`` for ``t2``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import Status, StatusCode, Tracer
from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

BRIEF = "Irrigate greenhouse 3 for job GH-12 before the heat: bay B2, zone 4."
PLAN = (
    "Irrigation plan for GH-12:\n\n"
    "- t1 · soak the seed trays<br>tool: mist.spray<br>bay=B2<br>minutes=20\n"
    "- t2 · dose the nutrients<br>tool: doser.dose<br>bay=B2<br>ppm=850\n"
    "- t3 · water the beds<br>tool: pump.water<br>zone=4<br>litres=120\n"
)
CONFIG = {"system_instruction": "You are the greenhouse's executor.", "temperature": 0.0}


def _generate(tracer: Tracer, contents: Any, text: str = "") -> None:
    """``Models.generate_content`` as MLflow's Gemini autologging records it: the request (a
    string, or ``Content`` turns of a role and parts) and the response's candidates."""
    response = {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}}]}
    attributes = {
        "mlflow.spanType": json.dumps("LLM"),
        "mlflow.message.format": json.dumps("gemini"),
        A.MLFLOW_SPAN_INPUTS: json.dumps(
            {"model": "gemini-2.5-flash", "contents": contents, "config": CONFIG}
        ),
        A.MLFLOW_SPAN_OUTPUTS: json.dumps(response),
    }
    with tracer.start_as_current_span("Models.generate_content", attributes=attributes):
        pass


def _task(tracer: Tracer, step: str, n: int, tool: str, args: dict[str, Any], error: str) -> None:
    """The app's span for one try of a step (``task t3 try 2``): the executor's call, told its
    task, then the tool the app ran for it."""
    told = f"Task {step} (try {n}): run {tool} {json.dumps(args)}"
    turn = [{"role": "user", "parts": [{"text": told, "function_call": None}]}]
    with tracer.start_as_current_span(
        f"task {step} try {n}", attributes={"mlflow.spanType": json.dumps("CHAIN")}
    ) as task:
        _generate(tracer, turn)
        tool_attributes = {
            "mlflow.spanType": json.dumps("TOOL"),
            A.MLFLOW_SPAN_INPUTS: json.dumps(args),
        }
        with tracer.start_as_current_span(tool, attributes=tool_attributes) as call:
            if error:
                call.set_status(Status(StatusCode.ERROR, error))
        if error:
            task.set_status(Status(StatusCode.ERROR, error))


def test_short_step_ids_the_attempts_were_told_name_the_steps(store: Store) -> None:
    errors = [f"pump pressure {n} bar under the minimum" for n in (0.4, 0.7, 0.3, 0.6)]

    def play(tracer: Tracer, root: Any) -> None:
        with tracer.start_as_current_span(
            "plan revision 1", attributes={"mlflow.spanType": json.dumps("CHAIN")}
        ):
            _generate(tracer, BRIEF, PLAN)
        _task(tracer, "t1", 1, "mist.spray", {"bay": "B2", "minutes": 20}, "")
        _task(tracer, "t2", 1, "doser.dose", {"bay": "B2", "ppm": 850}, "")
        for n, error in enumerate(errors, 1):
            _task(tracer, "t3", n, "pump.water", {"zone": 4, "litres": 120}, error)
        root.set_status(Status(StatusCode.ERROR, errors[-1]))

    t = genai.played(store, "greenhouse", "irrigation job GH-12", play)
    trace = load_traces(store, "default", [t])[t]
    assert [s.step_id for s in trace.plan_steps] == ["t1", "t2", "t3"]
    assert [a.step_id for a in trace.attempts if a.status == "error"] == ["t3"] * 4
    # (its last argument, before the answer's JSON-escaped line end, is not read: see the docs)
    assert json.loads(trace.plans[0].json)[1]["args"]["bay"] == "B2"
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "t3"

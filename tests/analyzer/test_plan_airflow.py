"""A plan written as an Apache Airflow DAG file (``var = PythonOperator(task_id=...,
python_callable=..., op_kwargs={...})`` in a ``with DAG(...)`` block, an earlier task's output as
``{{ ti.xcom_pull(task_ids='...') }}``, the order by ``>>``), handed back as a structured output
(the planner's answer is a JSON object whose ``pipeline`` field holds the file): a bakery's
wholesale order, plain GenAI spans from the real OTel SDK, stored in the real chDB store and
loaded for real. One executor run per task attempt (the app names the step on it,
``bakery.step``) makes one tool call.

On the branch's start no reader read an Airflow DAG, and none was offered the field's text:
the structure path read the plan (the callables and the words of the answer as steps). And a
tool error the executor's framework caught (the call's span status only says the tool failed,
the error's text is its result, what the model read) named nothing: the wrong value the
planner put into the DAG was not traced."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import Status, StatusCode, Tracer
from planscope import semconv as A
from planscope_analyzer import load_traces
from planscope_analyzer.detectors.plan_propagation import PlanPropagation
from planscope_analyzer.detectors.runaway_loop import RunawayLoop
from planscope_collector import _airflow
from planscope_collector.storage import Store

from tests.analyzer import _genai_play as genai

pytestmark = pytest.mark.integration

PROMPT = "Deliver 120 sourdough loaves to Harbour Deli (account HD-5521) on 2027-04-14."


def _dag(account: str) -> str:
    return f"""from airflow import DAG
from airflow.operators.python import PythonOperator

with DAG(dag_id="order_hd", schedule=None, params={{"day": "2027-04-14"}}) as dag:
    dough = PythonOperator(
        task_id="dough",
        python_callable=mix_dough,
        op_kwargs={{"loaves": 120, "recipe": "sourdough"}},
        doc_md="step 1: mix the dough",
    )
    bake = PythonOperator(
        task_id="bake",
        python_callable=book_oven,
        op_kwargs={{"batch": "{{{{ ti.xcom_pull(task_ids='dough')['batch_id'] }}}}"}},
        doc_md="step 2: bake the batch",
    )
    bill = PythonOperator(
        task_id="bill",
        python_callable=bill_customer,
        op_kwargs={{"account": "{account}", "loaves": 120}},
        doc_md="step 3: bill the deli",
    )
    van = PythonOperator(
        task_id="van",
        python_callable=book_delivery,
        op_kwargs={{"day": "{{{{ params.day }}}}", "to": "Harbour Deli"}},
    )
    dough >> bake >> [bill, van]
"""


def _attempt(tracer: Tracer, step: str, tool: str, args: dict[str, Any], error: str = "") -> None:
    """One executor run on ``step``: one tool call. A failed call is caught by the executor's
    framework: its span's status says only that the tool failed, the error's text is the
    call's result (what the model read); the run itself ends well."""
    with tracer.start_as_current_span(
        "invoke_agent baker",
        attributes={
            **genai.AGENT,
            "bakery.step": step,
        },
    ):
        genai.chat(tracer, f"Run {step} with {tool}.")
        with tracer.start_as_current_span(
            f"execute_tool {tool}",
            attributes={
                A.GEN_AI_OPERATION_NAME: A.OP_EXECUTE_TOOL,
                A.GEN_AI_TOOL_NAME: tool,
                A.GEN_AI_TOOL_CALL_ARGUMENTS: json.dumps(args),
                A.GEN_AI_TOOL_CALL_RESULT: error or "done",
            },
            record_exception=False,
        ) as call:
            if error:
                call.set_status(Status(StatusCode.ERROR, "tool raised"))


def _planned(tracer: Tracer, account: str) -> None:
    answer = json.dumps({"pipeline": _dag(account), "summary": "four tasks"})
    genai.plan(tracer, "order_planner", PROMPT, answer)


def _bakery(store: Store, play: Any) -> str:
    return genai.played(store, "bakery", "wholesale order HD", play)


def test_a_loop_at_an_airflow_task_is_the_task_id(store: Store) -> None:
    # the oven booking fails five times with other errors, the app runs the task again
    errors = [f"oven {n} is still cooling" for n in (2, 4, 1, 3)] + ["ovens offline"]

    def play(tracer: Tracer, root: Any) -> None:
        _planned(tracer, "HD-5521")
        _attempt(tracer, "dough", "mix_dough", {"loaves": 120, "recipe": "sourdough"})
        for i, error in enumerate(errors):
            _attempt(tracer, "bake", "book_oven", {"batch": "B-77", "try": i}, error)
        root.set_status(Status(StatusCode.ERROR, errors[-1]))

    t = _bakery(store, play)
    trace = load_traces(store, "default", [t])[t]
    (plan,) = trace.plans
    steps = json.loads(plan.json)
    assert [s["id"] for s in steps] == ["dough", "bake", "bill", "van"]
    assert [s["tool"] for s in steps] == [
        "mix_dough",
        "book_oven",
        "bill_customer",
        "book_delivery",
    ]
    # a param is the DAG's literal; a pulled output is a need, as is the >> order
    assert steps[3]["args"] == {"day": "2027-04-14", "to": "Harbour Deli"}
    assert [s["depends_on"] for s in steps] == [[], ["dough"], ["bake"], ["bake"]]
    assert steps[0]["description"] == "step 1: mix the dough"
    (finding,) = RunawayLoop().detect(trace)
    assert finding.step_id == "bake"


def test_a_wrong_value_named_only_in_a_caught_tool_error_entered_at_its_task(
    store: Store,
) -> None:
    # the planner swapped two digits of the account; the billing service refuses it for good,
    # and says so only in the text the executor's framework handed the model
    def play(tracer: Tracer, root: Any) -> None:
        _planned(tracer, "HD-5512")
        _attempt(tracer, "dough", "mix_dough", {"loaves": 120, "recipe": "sourdough"})
        _attempt(tracer, "bake", "book_oven", {"batch": "B-77"})
        _attempt(
            tracer,
            "bill",
            "bill_customer",
            {"account": "HD-5512", "loaves": 120},
            "LedgerError: no customer account HD-5512 on file",
        )
        root.set_status(Status(StatusCode.ERROR, "order HD not delivered"))

    t = _bakery(store, play)
    trace = load_traces(store, "default", [t])[t]
    (finding,) = PlanPropagation().detect(trace)
    assert finding.step_id == "bill"
    assert finding.detail["values"] == ["HD-5512"]


def test_what_is_no_airflow_dag_is_not_read() -> None:
    # operators but no DAG, a DAG with no task, two tasks sharing an id, not Python
    assert _airflow.steps("a = PythonOperator(task_id='a', python_callable=f)") == []
    assert _airflow.steps("with DAG(dag_id='x') as dag:\n    pass  # task_id") == []
    two = "with DAG('x') as d:\n  a = BashOperator(task_id='a')\n  b = BashOperator(task_id='a')"
    assert _airflow.steps(two) == []
    assert _airflow.steps("DAG task_id: fetch then load") == []
    # a fenced block of a chat answer; chain() and << orders; op_args by position
    read = _airflow.steps(
        "Here is the DAG:\n```python\ndag = DAG('x')\n"
        "a = PythonOperator(task_id='a', python_callable=f, op_args=[1, 'x'], dag=dag)\n"
        "b = PythonOperator(task_id='b', python_callable=g, dag=dag)\n"
        "c = PythonOperator(task_id='c', python_callable=h, dag=dag)\n"
        "chain(a, b)\nc << b\n```"
    )
    assert [(s.name, s.tool, s.needs, s.args) for s in read] == [
        ("a", "f", (), {"0": 1, "1": "x"}),
        ("b", "g", ("a",), {}),
        ("c", "h", ("b",), {}),
    ]

"""Plan propagation on plans the span model observed (another convention's planner output):
no ``requires``/``produces``, so the blame follows the wrong value through tool arguments."""

from __future__ import annotations

import gc
import json

from planscope_analyzer import TraceData
from planscope_analyzer._model import Attempt, Plan, PlanStep, Run, ToolCall
from planscope_analyzer.detectors.plan_propagation import PlanPropagation, _unescaped

STEPS = (("fetch", "get_invoice"), ("convert", "fx_rate"), ("pay", "ledger_pay"))
ARGS = {
    "fetch": '{"invoice": "INV-7", "currency": "EUR"}',
    "convert": '{"amount": "12.50", "to": "EUR"}',
    "pay": '{"invoice": "INV-7", "currency": "EUR"}',
}
"""What each step's tool got: the currency EUR from the first step on."""


def _observed_run(objective: str, error: str, args: dict[str, str]) -> TraceData:
    """A plan-observed run whose last step fails with ``error``; ``args``: step -> JSON args."""
    t = TraceData("p", "t")
    t.runs = [Run("r", "", "t", "", "failure", error, {}, 0, 100, "Error", objective, True)]
    t.plans = [Plan("pl", "r", "", 1, "", "", len(STEPS), True, 1, inferred=True)]
    t.plan_steps = [
        PlanStep("pl", "", 1, i, sid, sid, "", tool, (), (), (), False)
        for i, (sid, tool) in enumerate(STEPS)
    ]
    for i, (sid, tool) in enumerate(STEPS, 1):
        failed = sid == STEPS[-1][0]
        t.attempts.append(
            Attempt(
                f"a-{sid}",
                "r",
                "",
                1,
                sid,
                1,
                "error" if failed else "ok",
                "",
                "",
                "",
                (),
                0,
                "",
                0,
                "",
                10 * i,
                10 * i + 9,
                message=error if failed else "",
                inferred=True,
            )
        )
        t.tools.append(
            ToolCall(
                f"t-{sid}",
                f"a-{sid}",
                sid,
                1,
                "",
                1,
                tool,
                "",
                "",
                "",
                "",
                "Error" if failed else "Ok",
                10 * i + 1,
                5,
                arguments=args[sid],
            )
        )
    return t


def test_wrong_value_blamed_where_it_entered_on_an_observed_plan() -> None:
    trace = _observed_run(
        "Pay invoice INV-7 in USD",
        "ledger refused: currency EUR not accepted",
        ARGS,
    )
    (finding,) = PlanPropagation().detect(trace)
    assert finding.step_id == "fetch"
    assert finding.detail["values"] == ["EUR"] and finding.detail["failing_step"] == "pay"
    assert "t-fetch" in finding.evidence


def test_a_value_the_objective_names_is_not_the_planners_fault() -> None:
    trace = _observed_run(
        "Pay invoice INV-7 in EUR",
        "ledger refused: currency EUR not accepted",
        ARGS,
    )
    # the user asked for EUR and the ledger refuses it: the planner handed over what it was told
    assert PlanPropagation().detect(trace) == []


# An order run: every step succeeds, the final check names the wrong quantity or date.
ORDER_ARGS = {
    "fetch": '{"sku": "SKU-4411", "page": 1}',
    "convert": '{"sku": "SKU-4411", "quantity": 80, "lines": 1}',
    "pay": '{"po": "PO-1f2e3", "date": "2026-03-20T08:00"}',
}
ORDER_PLAN = (
    '{"steps": [{"name": "fetch", "args": {"sku": "SKU-4411"}},'
    ' {"name": "convert", "args": {"quantity": 80}},'
    ' {"name": "pay", "args": {"date": "2026-03-20T08:00"}}]}'
)


def _checked_run(reason: str, plan_json: str = ORDER_PLAN) -> TraceData:
    trace = _observed_run("Order 40 units of SKU-4411 by 2026-03-18", "", ORDER_ARGS)
    trace.runs = [trace.runs[0]._replace(outcome_reason=reason)]
    trace.attempts = [a._replace(status="ok", message="") for a in trace.attempts]
    trace.tools = [c._replace(status_code="Ok") for c in trace.tools]
    trace.plans = [trace.plans[0]._replace(json=plan_json)]
    return trace


def test_a_number_or_date_the_planner_wrote_is_traced_to_its_first_carrier() -> None:
    # the PO id is named too, but the planner never wrote it (a tool produced it)
    quantity = _checked_run("restock check failed: PO-1f2e3 orders 80 units")
    (finding,) = PlanPropagation().detect(quantity)
    assert (finding.step_id, finding.detail["values"]) == ("convert", ["80"])
    date = _checked_run("restock check failed: PO-1f2e3 delivered 2026-03-20")
    (finding,) = PlanPropagation().detect(date)
    assert (finding.step_id, finding.detail["values"]) == ("pay", ["2026-03-20"])


def test_a_number_the_planner_did_not_write_is_not_traced() -> None:
    # "1" is an argument of two steps but not in the plan: the wrong-value pattern does not
    # fire on it, and the every-step-succeeded fallback blames the first step instead
    trace = _checked_run("check failed: 1 line missing", plan_json='{"steps": []}')
    (finding,) = PlanPropagation().detect(trace)
    assert finding.detail["pattern"] == "faithful_execution_failed"


def _watched_run(watch_start: int) -> TraceData:
    """Every plan step succeeds; a separate agent run no plan step names (a post-run watch)
    starts at ``watch_start`` and its tool sees the outage the run failed on."""
    outage = "watch: currency EUR service down"
    trace = _observed_run("Pay invoice INV-7 in USD", outage, ARGS)
    trace.attempts = [a._replace(status="ok", message="") for a in trace.attempts]
    trace.tools = [c._replace(status_code="Ok") for c in trace.tools]
    watch = trace.attempts[0]._replace(
        span_id="a-watch",
        step_id="watch",
        status="error",
        start_ns=watch_start,
        end_ns=200,
        message=outage,
    )
    trace.attempts.append(watch)
    trace.tools.append(
        trace.tools[0]._replace(
            span_id="t-watch", parent_span_id="a-watch", step_id="watch", tool="error_rate",
            status_code="Error", start_ns=watch_start + 1, arguments='{"currency": "EUR"}',
        )
    )  # fmt: skip
    return trace


def test_a_failure_a_separate_agent_run_sees_after_the_plan_is_not_the_planners() -> None:
    assert PlanPropagation().detect(_watched_run(watch_start=50)) == []


def test_work_outside_the_plan_that_overlaps_its_steps_does_not_excuse_it() -> None:
    # the watch started before the last plan step ended: not "after the agent finished"
    (finding,) = PlanPropagation().detect(_watched_run(watch_start=25))
    assert finding.step_id == "fetch" and finding.detail["values"] == ["EUR"]


# A report run: the first step pulls a figure for a region, the second divides by it.
REPORT_ARGS = {
    "fetch": '{"region": "EU-West", "month": "2026-10"}',
    "convert": '{"expression": "(12 - 0) / 0 * 100"}',
    "pay": '{"space": "ANALYTICS"}',
}
REPORT_PLAN = (
    '{"steps": [{"id": "fetch", "args": {"region": "EU-West", "month": "2026-10"}},'
    ' {"id": "convert", "args": {"expression": "({fetch} - 12) / 12"}}]}'
)


def _report_run(objective: str) -> TraceData:
    """``convert`` fails on a division by zero; the 0 is what ``fetch`` returned."""
    error = "error: division by zero in (12 - 0) / 0 * 100 (permanent)"
    trace = _observed_run(objective, error, REPORT_ARGS)
    trace.plans = [trace.plans[0]._replace(json=REPORT_PLAN)]
    # convert is the failing step here, pay never ran
    trace.attempts = [
        a._replace(status="error", message=error) if a.step_id == "convert" else a
        for a in trace.attempts
        if a.step_id != "pay"
    ]
    results = {"fetch": '{"state": "DONE", "value": 0}', "convert": ""}
    status = {"fetch": "Ok", "convert": "Error"}
    trace.tools = [
        c._replace(status_code=status[c.step_id], result=results[c.step_id])
        for c in trace.tools
        if c.step_id != "pay"
    ]
    return trace


def test_a_failure_on_an_earlier_steps_output_is_blamed_where_the_plan_value_entered() -> None:
    (finding,) = PlanPropagation().detect(_report_run("Report figures of region EU for 2026-10"))
    assert finding.step_id == "fetch"
    assert finding.detail["pattern"] == "wrong_value_through_outputs"
    assert finding.detail["values"] == ["0"] and finding.detail["entered"] == ["EU-West"]
    assert {"t-fetch", "t-convert", "a-convert"} <= set(finding.evidence)
    assert "'fetch' returned" in finding.explanation


def test_an_output_from_arguments_the_objective_states_is_not_the_planners() -> None:
    # the user asked for EU-West: fetch got what it was told, the zero is the world's
    assert PlanPropagation().detect(_report_run("Report figures of region EU-West, 2026-10")) == []


def _audited_run(asked: str, check_tool: str = "") -> TraceData:
    """Every plan step succeeds; then an auditor agent run no plan step names fails on its own
    verdict after being asked ``asked`` (after calling a tool, when ``check_tool`` says its
    status)."""
    trace = _checked_run("Guardrail tripwire triggered: matches_audited_figure")
    trace.runs = [trace.runs[0]._replace(objective="Order 40 units of SKU-4411 by 2026-03-18")]
    audit = trace.attempts[0]._replace(
        span_id="a-audit", step_id="auditor", status="error", start_ns=50, end_ns=60,
        message="Guardrail tripwire triggered: matches_audited_figure",
    )  # fmt: skip
    trace.attempts.append(audit)
    trace.asked = {"a-audit": asked}
    if check_tool:
        trace.tools.append(
            trace.tools[0]._replace(
                span_id="t-audit", parent_span_id="a-audit", step_id="auditor",
                tool="ledger", status_code=check_tool, start_ns=51, arguments="{}",
            )
        )  # fmt: skip
    return trace


def test_a_checks_verdict_after_success_on_a_plan_value_is_blamed_where_it_entered() -> None:
    trace = _audited_run("Audit this order: SKU-4411, 80 units, PO-1f2e3")
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["values"]) == ("convert", ["80"])
    assert finding.detail["pattern"] == "check_after_success"
    assert finding.detail["check"] == "auditor" and "a-audit" in finding.evidence


def test_a_check_that_names_only_what_the_objective_states_is_not_the_planners() -> None:
    # the audit names the SKU the user asked for and a PO id a tool made: nothing of the plan's
    assert PlanPropagation().detect(_audited_run("Audit this order: SKU-4411, PO-1f2e3")) == []


def test_a_check_that_called_tools_may_have_heard_it_from_the_world() -> None:
    for status in ("Error", "Ok"):  # the ledger said so, or answered what the check judged on
        trace = _audited_run("Audit this order: SKU-4411, 80 units", check_tool=status)
        assert PlanPropagation().detect(trace) == [], status


def test_a_number_is_traced_to_the_argument_the_failure_names() -> None:
    # 60 is the window's minutes (first) and the replica count (later): the failure says which
    trace = _checked_run("release check failed: api runs 60 replicas")
    trace.tools = [
        c._replace(arguments={"fetch": '{"minutes": 60}', "convert": '{"replicas": 60}'}.get(
            c.step_id, c.arguments))
        for c in trace.tools
    ]  # fmt: skip
    trace.plans = [
        trace.plans[0]._replace(
            json='{"steps": [{"args": {"minutes": 60}}, {"args": {"replicas": 60}}]}'
        )
    ]
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["values"]) == ("convert", ["60"])


# A check after success: every plan step succeeds, then a tool called outside any step fails.
CHECK_PLAN = (
    '{"steps": [{"id": "fetch", "args": {"invoice": "INV-7", "currency": "EUR"}},'
    ' {"id": "convert", "args": {"amount": "{fetch}", "limit": 50}},'
    ' {"id": "pay", "args": {"invoice": "INV-7", "currency": "EUR"}}]}'
)
CHECK_ARGS = {
    "fetch": '{"invoice": "INV-7", "currency": "EUR"}',
    "convert": '{"amount": "12.5", "limit": 50}',
    "pay": '{"invoice": "INV-7", "currency": "EUR"}',
}


def _check_after_success(
    objective: str,
    arguments: str,
    error: str,
    confirmed_first: bool = False,
    answered: bool = False,
) -> TraceData:
    """Every step succeeds (``fetch`` returns the amount 12.5, ``convert`` judges it against a
    limit the planner wrote); then the app's own check, a tool outside any step, fails with
    ``error`` (after succeeding once with the same inputs when ``confirmed_first``), or, when
    ``answered``, succeeds answering ``error``, which the app reports as the run's failure."""
    trace = _observed_run(objective, error, CHECK_ARGS)
    trace.plans = [trace.plans[0]._replace(json=CHECK_PLAN)]
    trace.attempts = [a._replace(status="ok", message="") for a in trace.attempts]
    results = {"fetch": '{"value": 12.5}', "convert": '{"value": "none"}', "pay": '{"ok": true}'}
    trace.tools = [c._replace(status_code="Ok", result=results[c.step_id]) for c in trace.tools]
    check = trace.tools[0]._replace(
        span_id="t-check", parent_span_id="root", step_id="", tool="balance",
        status_code="Error", start_ns=60, arguments=arguments, result="",
    )  # fmt: skip
    if answered:
        check = check._replace(status_code="Ok", result=json.dumps(error))
    if confirmed_first:
        trace.tools.append(check._replace(span_id="t-check-0", status_code="Ok", start_ns=50))
    trace.tools.append(check)
    return trace


def test_a_check_of_the_objectives_value_blames_the_step_handed_another() -> None:
    # the check looks at the USD account the objective asks for; fetch was handed EUR
    trace = _check_after_success(
        "Pay invoice INV-7 in USD", '{"currency": "USD"}', "error: USD account still unpaid"
    )
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["pattern"]) == ("fetch", "check_contradicted_input")
    assert finding.detail["tie"] == "currency" and finding.detail["values"] == ["EUR"]
    assert {"t-check", "t-fetch"} <= set(finding.evidence)


def test_a_check_that_finds_the_plans_measurement_unchanged_blames_who_judged_it() -> None:
    # the failure quotes 12.5, which fetch returned and convert judged against the planner's 50
    trace = _check_after_success(
        "Pay invoice INV-7", '{"invoice": "INV-7"}', "error: INV-7 still open (12.5 due)"
    )
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["pattern"]) == ("convert", "check_measurement_judged")
    assert finding.detail["tie"] == ["12.5"] and finding.detail["values"] == ["50"]


def test_a_check_that_saw_the_world_change_is_not_the_planners() -> None:
    # the same two failures, but the check had confirmed the work once before it failed
    for objective, arguments, error in (
        ("Pay invoice INV-7 in USD", '{"currency": "USD"}', "error: USD account still unpaid"),
        ("Pay invoice INV-7", '{"invoice": "INV-7"}', "error: INV-7 still open (12.5 due)"),
    ):
        trace = _check_after_success(objective, arguments, error, confirmed_first=True)
        assert PlanPropagation().detect(trace) == [], error


def test_a_check_that_names_only_its_own_inputs_is_not_the_planners() -> None:
    # the bank reversed the payment: the failure names the invoice the check was asked about
    trace = _check_after_success(
        "Pay invoice INV-7", '{"invoice": "INV-7"}', "error: INV-7 reversed by the bank"
    )
    assert PlanPropagation().detect(trace) == []


def test_a_value_an_earlier_step_returned_entered_there_not_where_it_was_used() -> None:
    # fetch asked for a window from the planner's wrong day; the window it got back was booked
    # by pay, and the outcome check names it: it entered the run where fetch got it back
    args = {
        "fetch": '{"from_day": "2026-12-06"}',
        "convert": '{"amount": "12.50"}',
        "pay": '{"day": "2026-12-03", "invoice": "INV-7"}',
    }
    trace = _observed_run("Book a slot before 2026-06-12", "", args)
    reason = "the slot on 2026-12-03 is not before 2026-06-12"
    trace.runs = [trace.runs[0]._replace(outcome_reason=reason)]
    trace.plans = [trace.plans[0]._replace(json='{"steps": []}')]
    trace.attempts = [a._replace(status="ok", message="") for a in trace.attempts]
    results = {"fetch": '{"window": {"day": "2026-12-03"}}', "convert": "12.5", "pay": '"BK-1"'}
    trace.tools = [c._replace(status_code="Ok", result=results[c.step_id]) for c in trace.tools]
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["values"]) == ("fetch", ["2026-12-03"])
    assert finding.detail["entered_at_tool_call"] == "t-fetch"
    assert {"t-fetch", "t-pay"} <= set(finding.evidence)
    assert "returned by tool 'get_invoice', then an argument of tool 'ledger_pay'" in (
        finding.explanation
    )


def test_a_check_that_answered_the_failure_is_judged_like_one_that_failed() -> None:
    # the check did not fail: it answered the bank's news, which the app reported as the run's
    # failure; it names only the check's input: the world's, as when the check fails
    trace = _check_after_success(
        "Pay invoice INV-7",
        '{"invoice": "INV-7"}',
        "INV-7 reversed by the bank overnight",
        answered=True,
    )
    assert PlanPropagation().detect(trace) == []
    # its own evidence still ties it to a plan value: the objective's USD, the plan's EUR
    trace = _check_after_success(
        "Pay invoice INV-7 in USD",
        '{"currency": "USD"}',
        "USD account still unpaid",
        answered=True,
    )
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["pattern"]) == ("fetch", "check_contradicted_input")


def test_a_planner_value_that_also_gave_another_output_did_not_make_the_zero() -> None:
    # the same query with the planner's region returned 12 for another month: the zero is the
    # world's figure for this month, not the region's doing
    trace = _report_run("Report figures of region EU for 2026-10")
    fetch = next(c for c in trace.tools if c.step_id == "fetch")
    other = fetch._replace(
        span_id="t-fetch-2", start_ns=fetch.start_ns + 1, result='{"state": "DONE", "value": 12}',
        arguments='{"region": "EU-West", "month": "2025-10"}',
    )  # fmt: skip
    trace.tools.append(other)
    assert PlanPropagation().detect(trace) == []


def test_arguments_recorded_as_a_python_literal_keep_their_names() -> None:
    # an instrumentation that records a call's inputs as a repr inside its own envelope
    trace = _check_after_success(
        "Pay invoice INV-7 in USD", '{"currency": "USD"}', "error: USD account still unpaid"
    )
    trace.tools = [
        c._replace(arguments=json.dumps({"input_str": repr(json.loads(c.arguments)), "tags": []}))
        for c in trace.tools
    ]
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["tie"]) == ("fetch", "currency")


# Lineage through whole values, argument names and a check's figure (docs/analyzers.md).
IBAN = "DE44 5001 0517 5407 3249 31"
PAY_PLAN = (
    '{"steps": [{"id": "fetch", "args": {"address": "14 Alder Lane", "region": "southwest"}},'
    ' {"id": "convert", "args": {"estimate": "<from fetch>", "deductible": 250}},'
    f' {{"id": "pay", "args": {{"account": "{IBAN}", "amount": "<from convert>"}}}}]}}'
)
PAY_ARGS = {
    "fetch": '{"address": "14 Alder Lane", "region": "southwest"}',
    "convert": '{"estimate": "12100", "deductible": 250}',
    "pay": f'{{"account": "{IBAN}", "amount": "11850.0"}}',
}
PAY_RESULTS = {"fetch": '{"value": 12100}', "convert": '{"value": 11850.0}', "pay": ""}


def _payout_run(error: str, objective: str = "Settle claim CLM-7 at 14 Alder Lane") -> TraceData:
    """fetch (an inspection) returns an estimate, convert computes the payout with the
    planner's deductible, pay transfers it to the planner's account and fails with ``error``."""
    trace = _observed_run(objective, error, PAY_ARGS)
    trace.plans = [trace.plans[0]._replace(json=PAY_PLAN)]
    trace.tools = [c._replace(result=PAY_RESULTS[c.step_id]) for c in trace.tools]
    return trace


def test_a_value_of_several_words_is_named_whole() -> None:
    (finding,) = PlanPropagation().detect(_payout_run(f"payee account {IBAN} is closed"))
    assert (finding.step_id, finding.detail["values"]) == ("pay", [IBAN])
    assert finding.detail["pattern"] == "wrong_value"


def test_a_value_of_several_words_the_objective_states_whole_is_not_the_planners() -> None:
    objective = f"Settle claim CLM-7 at 14 Alder Lane, paying account {IBAN}"
    assert PlanPropagation().detect(_payout_run(f"payee account {IBAN} is closed", objective)) == []


def test_an_expression_the_run_built_names_what_it_computed_not_a_plan_value() -> None:
    # the failing step's expression is named whole, but no planner wrote it
    trace = _report_run("Report figures of region EU-West, 2026-10")
    trace.tools = [
        c._replace(arguments='{"expression": "(0 - 0) / 0 * 100"}') if c.step_id == "convert" else c
        for c in trace.tools
    ]
    assert PlanPropagation().detect(trace) == []


def _audited_payout(reason: str, deductible: str = "250", estimate: str = "12100") -> TraceData:
    """Every step succeeds; the outcome check names the paid figure."""
    trace = _payout_run("", "Settle claim CLM-7 at 14 Alder Lane, account DE89 3704 0130 00")
    trace.runs = [trace.runs[0]._replace(outcome_reason=reason)]
    trace.attempts = [a._replace(status="ok", message="") for a in trace.attempts]
    args = {"convert": f'{{"estimate": "{estimate}", "deductible": {deductible}}}'}
    paid = float(estimate) - float(deductible)
    results = {"fetch": f'{{"value": {estimate}}}', "convert": f'{{"value": {paid}}}'}
    trace.tools = [
        c._replace(
            status_code="Ok",
            arguments=args.get(c.step_id, c.arguments),
            result=results.get(c.step_id, '{"value": "TRF-7"}'),
        )
        for c in trace.tools
    ]
    trace.plans = [trace.plans[0]._replace(json=PAY_PLAN.replace("250", deductible))]
    return trace


def test_a_checks_figure_that_a_step_returned_is_traced_where_the_plan_value_entered() -> None:
    trace = _audited_payout("payout 11850.00 differs from the policy's allowance 11100.00")
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["pattern"]) == (
        "convert",
        "wrong_value_through_outputs",
    )
    assert finding.detail["values"] == ["11850"] and finding.detail["entered"] == ["250"]
    assert "outcome check failed" in finding.explanation


def test_a_figure_passed_on_unchanged_is_judged_at_the_last_step_that_returned_it() -> None:
    # a deductible of 0: the payout equals the estimate, and "00" of the objective's account
    # number is a code, not the number 0
    trace = _audited_payout("payout 14350.00 differs from the allowance 13350.00", "0", "14350")
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["entered"]) == ("convert", ["0"])


def test_a_failure_naming_an_argument_follows_the_plans_reference() -> None:
    # the inspection found nothing ("null"); the payout fails naming its argument, not the value
    trace = _payout_run("no inspection estimate on file for CLM-7")
    trace.tools = [
        c._replace(arguments='{"estimate": "null", "deductible": 250}')
        if c.step_id == "convert"
        else c._replace(result='{"value": null}')
        if c.step_id == "fetch"
        else c
        for c in trace.tools
        if c.step_id != "pay"
    ]
    trace.attempts = [
        a._replace(status="error", message="no inspection estimate on file for CLM-7")
        if a.step_id == "convert"
        else a
        for a in trace.attempts
        if a.step_id != "pay"
    ]
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["entered"]) == ("fetch", ["southwest"])
    assert finding.detail["failing_step"] == "convert" and "'estimate'" in finding.explanation
    # without the plan's reference nothing says where the argument's value came from
    trace.plans = [trace.plans[0]._replace(json=PAY_PLAN.replace("<from fetch>", "later"))]
    trace._memo.clear()
    assert PlanPropagation().detect(trace) == []


def test_numbers_and_dates_written_for_people_are_the_same_values() -> None:
    trace = _audited_payout("payout $11,850.00 differs from the policy's allowance $11,100.00")
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["entered"]) == ("convert", ["250"])
    (finding,) = PlanPropagation().detect(_checked_run("delivery booked for March 20, 2026: late"))
    assert (finding.step_id, finding.detail["values"]) == ("pay", ["2026-03-20"])
    # day- or month-first slashes are ambiguous: not read as a date
    ambiguous = PlanPropagation().detect(_checked_run("delivery booked for 03/20/2026: late"))
    assert [f.detail["pattern"] for f in ambiguous] == ["faithful_execution_failed"]


# A plan of sentences (LangGraph's Plan-and-Execute shape): the planner writes its values into
# free-text steps, a re-plan writes an earlier step's result into the steps still to do.
SENTENCES = [
    "Look up the parcel of order O-5512 at the sorting hub.",
    "Weigh the parcel found at the hub.",
    "Ship the parcel found at the hub to depot DEP-9.",
]
RESENT = ["Weigh parcel PC-7.", "Ship parcel PC-7 to depot DEP-9."]


def _shipped_run() -> TraceData:
    """The lookup returns parcel PC-7, a re-plan writes it in; shipping fails on the depot the
    planner wrote, which the objective does not state."""
    args = {
        "fetch": '{"order": "O-5512"}',
        "convert": '{"parcel": "PC-7"}',
        "pay": '{"parcel": "PC-7", "depot": "DEP-9"}',
    }
    trace = _observed_run(
        "Ship order O-5512 to depot DEP-4", "depot refused: PC-7 cannot go to DEP-9", args
    )
    first = trace.plans[0]._replace(json=json.dumps({"steps": SENTENCES}))
    replan = first._replace(span_id="pl2", version=2, start_ns=20, json=json.dumps(RESENT))
    trace.plans = [first, replan]
    trace.tools = [
        c._replace(result='{"parcel": "PC-7"}') if c.step_id == "fetch" else c for c in trace.tools
    ]
    return trace


def test_a_value_written_into_a_plans_sentence_is_the_planners() -> None:
    # the depot is a value the planner wrote into its sentence: its first carrier is where it
    # entered; the parcel id the re-plan wrote in was relayed from the lookup, no planner value
    (finding,) = PlanPropagation().detect(_shipped_run())
    assert (finding.step_id, finding.detail["values"]) == ("pay", ["DEP-9"])


def test_a_short_code_the_planner_wrote_is_traced_like_a_longer_one() -> None:
    # the request asks for seat 4A; the planner wrote 7C into its sentences: a code of two
    # characters (a letter and a digit) is as specific as a longer one
    args = {
        "fetch": '{"seat": "7C", "passenger": "P-31"}',
        "convert": '{"fare": "FR-2"}',
        "pay": '{"seat": "7C", "passenger": "P-31"}',
    }
    trace = _observed_run(
        "Check passenger P-31 in on seat 4A", "check-in refused: seat 7C is taken", args
    )
    plan = ["Hold seat 7C for P-31.", "Price fare FR-2.", "Check P-31 in on seat 7C."]
    trace.plans = [trace.plans[0]._replace(json=json.dumps({"steps": plan}))]
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["values"]) == ("fetch", ["7C"])
    # two letters, or a lone letter, are no code
    trace = _observed_run("Check P-31 in", "check-in refused: ok", {**args, "fetch": '{"a": "ok"}'})
    assert PlanPropagation().detect(trace) == []


def _cheese_run(objective: str) -> TraceData:
    """The planner wrote the cheese into its first sentence; the executor took it whole as an
    argument, and the dairy refuses it at the last step."""
    args = {
        "fetch": '{"cheese": "smoked gouda", "crate": "CR-4"}',
        "convert": '{"crate": "CR-4"}',
        "pay": '{"crate": "CR-4"}',
    }
    error = "dairy refused: no smoked gouda left for crate CR-4"
    trace = _observed_run(objective, error, args)
    plan = ["Reserve smoked gouda for crate CR-4 at the dairy.", "Weigh crate CR-4.", "Send CR-4."]
    trace.plans = [trace.plans[0]._replace(json=json.dumps({"steps": plan}))]
    return trace


def test_a_name_of_several_words_a_sentence_holds_whole_is_the_planners() -> None:
    # an argument of several words that a plan's sentence holds whole was written by the
    # planner (the executor took it from there): named whole by the failure, it is a suspect
    (finding,) = PlanPropagation().detect(_cheese_run("Fill crate CR-4 with aged cheddar"))
    assert (finding.step_id, finding.detail["values"]) == ("fetch", ["smoked gouda"])
    # the objective's own cheese is no suspect
    assert PlanPropagation().detect(_cheese_run("Fill crate CR-4 with smoked gouda")) == []


def test_a_checks_failure_naming_a_value_the_planner_handed_a_step_blames_that_step() -> None:
    # the check is asked about the invoice only; its verdict names the currency the planner
    # wrote and fetch was handed, which the objective does not state
    error = "error: INV-7 was paid in EUR, the supplier bills in CHF"
    trace = _check_after_success("Pay invoice INV-7", '{"invoice": "INV-7"}', error)
    (finding,) = PlanPropagation().detect(trace)
    assert (finding.step_id, finding.detail["pattern"]) == ("fetch", "check_names_plan_value")
    assert finding.detail["values"] == ["EUR"]
    # the same verdict after the check had confirmed the work: the world changed
    trace = _check_after_success(
        "Pay invoice INV-7", '{"invoice": "INV-7"}', error, confirmed_first=True
    )
    assert PlanPropagation().detect(trace) == []
    # a verdict naming the objective's currency, or only the check's input, is the world's
    for objective, error in (
        ("Pay invoice INV-7 in EUR", "error: INV-7 was paid in EUR, the supplier bills in CHF"),
        ("Pay invoice INV-7", "error: INV-7 was reversed by the bank"),
    ):
        trace = _check_after_success(objective, '{"invoice": "INV-7"}', error)
        assert PlanPropagation().detect(trace) == [], objective


def _app_audit(confirmed_first: bool = False) -> TraceData:
    """The app's own audit after the plan: a span outside it whose one tool call reads the
    paid invoice well (EUR) and which fails comparing it with the supplier's currency (CHF,
    stated nowhere the call returned or the objective says)."""
    error = "INV-7 was paid in EUR; the supplier's form says CHF"
    trace = _check_after_success("Pay invoice INV-7", '{"invoice": "INV-7"}', error)
    audit = trace.attempts[-1]._replace(
        span_id="a-audit", step_id="audit", status="error", message=error, start_ns=60, end_ns=70
    )
    trace.attempts.append(audit)
    read = '{"invoice": "INV-7", "currency": "EUR"}'
    trace.tools = [
        c._replace(parent_span_id="a-audit", status_code="Ok", result=read)
        if c.span_id.startswith("t-check")
        else c
        for c in trace.tools
    ]
    if confirmed_first:  # the same read under an audit that passed, before this one
        trace.attempts.append(audit._replace(span_id="a-audit-0", status="ok", message=""))
        trace.tools.append(
            trace.tools[-1]._replace(span_id="t-check-0", parent_span_id="a-audit-0", start_ns=50)
        )
    return trace


def test_an_apps_failed_audit_of_a_call_that_returned_well_judges_the_plans_value() -> None:
    # the call itself failed nothing and does not hold CHF: the audit around it failed on it
    (finding,) = PlanPropagation().detect(_app_audit())
    assert (finding.step_id, finding.detail["pattern"]) == ("fetch", "check_names_plan_value")
    assert finding.detail["values"] == ["EUR"]
    # the same read passed an audit first: the world changed after it
    assert PlanPropagation().detect(_app_audit(confirmed_first=True)) == []


def _loan_run(retried: bool = False) -> TraceData:
    """A library's loan desk: a manager hands each plan step to a clerk agent (one attempt
    span per step, which the framework ends well whatever the clerk's tool said). The plan
    wrote the reader's card wrong; ``request_loan``'s call is refused, the clerk reports the
    refusal as its answer, and the manager's own answer tool (no plan step's) repeats it as the
    run's failure. ``retried``: a later call of the step's tool got the loan after all."""
    refusal = "request_loan: card LC-49017 is not registered at this library"
    t = TraceData("p", "t")
    objective = "Borrow The Tide Atlas for the reader; tell them when it arrives."
    t.runs = [Run("r", "", "t", "", "failure", refusal, {}, 0, 100, "Error", objective, True)]
    plan = {"steps": [
        {"id": "find_copy", "tool": "catalog_search", "args": {"title": "The Tide Atlas"}},
        {"id": "request_loan", "tool": "loan_request", "args": {"card": "LC-49017"}},
        {"id": "notify_reader", "tool": "send_mail", "args": {"card": "LC-49017"}},
    ]}  # fmt: skip
    t.plans = [Plan("pl", "r", "", 1, "", "", 3, True, 1, inferred=True, json=json.dumps(plan))]
    t.plan_steps = [
        PlanStep("pl", "", 1, i, s["id"], "", "", s["tool"], (), (), (), False)
        for i, s in enumerate(plan["steps"])
    ]
    t.attempts = [
        Attempt(f"a-{sid}", "r", "", 1, sid, 1, "ok", "", "", "clerk", (), 0, "", 0, "",
                10 * i, 10 * i + 9, inferred=True)
        for i, sid in enumerate(("find_copy", "request_loan"), 1)
    ]  # fmt: skip
    calls = [
        ("find_copy", "catalog_search", '{"title": "Tide Atlas"}', "Ok", '{"copy": "CP-3"}', 11),
        ("request_loan", "loan_request", '{"copy": "CP-3", "card": "LC-49017"}', "Error", "", 21),
    ]
    if retried:
        calls.append((*calls[-1][:3], "Ok", '{"loan": "LN-8"}', 25))
    t.tools = [
        ToolCall(f"t-{n}", f"a-{sid}", sid, 1, "", 1, tool, "", "", "", "", status, start, 1,
                 arguments=args, result=result)
        for n, (sid, tool, args, status, result, start) in enumerate(calls)
    ]  # fmt: skip
    answer = json.dumps({"answer": f"ABORTED {refusal}"})
    t.tools.append(
        ToolCall("t-answer", "r", "", 0, "", 0, "answer", "", "", "", "", "Ok", 40, 1,
                 arguments=answer, result=f"ABORTED {refusal}")
    )  # fmt: skip
    return t


def test_a_steps_tool_refused_for_good_is_no_success_whatever_its_agent_span_says() -> None:
    # the manager's answer repeating the refusal after the last step is no check of the world:
    # the step's own tool was refused on the planner's card, where the wrong value entered
    (finding,) = PlanPropagation().detect(_loan_run())
    assert (finding.step_id, finding.detail["pattern"]) == ("request_loan", "wrong_value")
    assert finding.detail["values"] == ["LC-49017"]
    # the step's tool got the loan on a later call: the failure reported after is the world's
    assert PlanPropagation().detect(_loan_run(retried=True)) == []


# A cold chain (docs/analyzers.md, "Small numeric values on sealed-38"): the planner's
# temperature limit finds a box, whose number the plan hands on by reference; the allocation
# refuses the box by its number. The lookup's result is not recorded.
COLD_PLAN = (
    '{"steps": [{"id": "fetch", "args": {"max_temp_c": "8"}},'
    ' {"id": "convert", "args": {"unit": "<from fetch>", "order": "VX-31"}}]}'
)
COLD_ARGS = {
    "fetch": '{"max_temp_c": 8}',
    "convert": '{"unit": "55120", "order": "VX-31"}',
    "pay": "{}",
}
COLD_ERROR = "cold box 55120 is rated 8C; order VX-31 ships at 4C or colder"


def _cold_run(objective: str, plan: str = COLD_PLAN) -> TraceData:
    """``convert`` fails naming the box ``fetch`` found; ``pay`` never ran."""
    trace = _observed_run(objective, COLD_ERROR, COLD_ARGS)
    trace.plans = [trace.plans[0]._replace(json=plan)]
    trace.attempts = [
        a._replace(status="error", message=COLD_ERROR) if a.step_id == "convert" else a
        for a in trace.attempts
        if a.step_id != "pay"
    ]
    trace.tools = [
        c._replace(status_code="Error" if c.step_id == "convert" else "Ok")
        for c in trace.tools
        if c.step_id != "pay"
    ]
    return trace


def test_a_failure_naming_an_arguments_value_follows_the_plans_reference() -> None:
    (finding,) = PlanPropagation().detect(_cold_run("Ship vaccine order VX-31 to clinic Nord"))
    assert (finding.step_id, finding.detail["entered"]) == ("fetch", ["8"])
    assert finding.detail["values"] == ["55120"] and "'unit'" in finding.explanation
    # without the plan's reference nothing says where the box came from
    unreferenced = COLD_PLAN.replace("<from fetch>", "later")
    assert PlanPropagation().detect(_cold_run("Ship order VX-31", unreferenced)) == []


def test_a_number_the_objective_states_for_another_key_is_not_stated_for_this_one() -> None:
    # the order's 8 boxes are no temperature limit of 8
    order = 'Ship vaccine order VX-31.\nOrder: {"order": "VX-31", "boxes": 8}'
    (finding,) = PlanPropagation().detect(_cold_run(order))
    assert (finding.step_id, finding.detail["entered"]) == ("fetch", ["8"])
    # stated under the argument's own key, or in the prose, it is the objective's
    assert PlanPropagation().detect(_cold_run(order.replace("boxes", "max temp C"))) == []
    assert PlanPropagation().detect(_cold_run(order + "\nKeep it at 8 degrees.")) == []


def test_a_declared_objectives_value_a_note_overrides_is_not_stated() -> None:
    # a declared (SDK) objective with a form and a note that changes one of its values: which
    # one was asked for it does not say, so the failure naming the note's value is the plan's,
    # blamed at the step whose call first carried it (not at the run's first step)
    trace = _observed_run(
        "Ship order O-5.\nOrder form: warehouse=WH-12; carrier=parcelco\n"
        "Clerk's note: warehouse=WH-21",
        "dispatch refused: warehouse WH-21 holds no stock of O-5",
        {
            "fetch": '{"order": "O-5"}',
            "convert": '{"order": "O-5", "warehouse": "WH-21"}',
            "pay": '{"order": "O-5", "warehouse": "WH-21"}',
        },
    )
    trace.runs = [trace.runs[0]._replace(inferred=False)]
    (finding,) = PlanPropagation().detect(trace)
    assert finding.step_id == "convert" and finding.detail["values"] == ["WH-21"]


def test_reading_an_escaped_input_leaves_no_reference_cycle() -> None:
    """A pass runs with cyclic collection paused (``_engine._gc_paused``): reading a recorded
    call's JSON whose texts are written out (``_unescaped``) must leave nothing for the cyclic
    collector, or every such input stays in memory until the pass's next collection."""
    recorded = '{"args": ["Ship to Leeds.\\nNotes: {\\"city\\": \\"York\\"}"], "n": 2}'
    gc.collect()
    gc.disable()
    try:
        for _ in range(50):
            assert "Notes:" in _unescaped(recorded)
        assert gc.collect() == 0
    finally:
        gc.enable()

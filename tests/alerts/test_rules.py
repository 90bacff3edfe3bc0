"""Rule validation, the rules file, signatures and payloads (no store needed)."""

from __future__ import annotations

import re
from pathlib import Path

import planscope.semconv as A
import pytest
from planscope import RetryBudget
from planscope_analyzer.alerts import (
    AlertEvent,
    AlertMessage,
    RuleValidationError,
    load_rules_file,
    parse_duration,
    parse_rule,
    sign,
    slack_payload,
    verify,
    webhook_payload,
)
from planscope_analyzer.alerts._evaluate import sql_texts
from planscope_analyzer.alerts._rules import SEVERITIES
from planscope_collector.runmodel import GROUPING_RUN_SOURCE

STEP = {"kind": "retry_budget", "scope": "step", "budget": {"max_attempts_per_step": 3}}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({**STEP, "colour": "red"}, "colour: unknown field"),
        ({**STEP, "budget": {"max_attempts_per_step": -1}}, "max_attempts_per_step must be >= 0"),
        ({**STEP, "budget": {"max_attempts": 3}}, "unknown RetryBudget key(s) ['max_attempts']"),
        ({**STEP, "window": "15 minutes"}, "window: a duration like '30s'"),
        ({**STEP, "window": "0s"}, "window: a window must be at least 1s"),
        ({**STEP, "window": "30d"}, "between 0 and 7d"),
        ({"kind": "budget"}, "kind: unknown kind 'budget'; expected one of"),
        ({"scope": "step"}, "kind: missing"),
        ({**STEP, "scope": "team"}, "scope: Input should be 'step', 'run', 'agent' or 'tool'"),
        ({**STEP, "budget": {"max_tokens": 10}}, "max_attempts_per_step, which is not set"),
        ({**STEP, "threshold_share": 1.5}, "threshold_share: Input should be less than or equal"),
        ({"kind": "burn_rate"}, "set max_tokens_per_minute or max_cost_usd_per_minute"),
        ({"kind": "finding_count", "min_severity": "urgent"}, "min_severity: Input should be"),
        ({**STEP, "notify": [{"type": "pager"}]}, "notify.0.type: unknown type 'pager'"),
        ({**STEP, "notify": [{"type": "webhook", "url": "ftp://x"}]}, "notify.0.url"),
        ({**STEP, "id": "Bad Id!"}, "id: a rule id is 1-64 characters"),
    ],
)
def test_invalid_rules_are_refused_with_a_clear_message(data: dict, message: str) -> None:
    with pytest.raises(RuleValidationError) as info:
        parse_rule(data)
    assert message in str(info.value)


def test_budget_is_the_sdk_retry_budget() -> None:
    rule = parse_rule({**STEP, "budget": RetryBudget(max_attempts_per_step=2, enforce=False)})
    assert rule.retry_budget() == RetryBudget(max_attempts_per_step=2, enforce=False)
    assert rule.budget == RetryBudget(max_attempts_per_step=2, enforce=False).to_dict()
    share = parse_rule(
        {"kind": "retry_budget", "scope": "agent", "agent": "x", "threshold_share": 0.05,
         "budget": {"max_attempts_per_step": 3}, "window": "15m"}
    )  # fmt: skip
    assert share.window_seconds == 900 and share.threshold_share == 0.05


def test_durations() -> None:
    assert parse_duration("500ms") == 0.5
    assert parse_duration("2h") == 7200
    assert parse_duration(45) == 45
    with pytest.raises(ValueError):
        parse_duration("-1s")


def test_rules_file_reports_every_problem_with_its_place(tmp_path: Path) -> None:
    path = tmp_path / "alerts.yaml"
    path.write_text(
        "project: team-a\n"
        "rules:\n"
        "  - {id: ok, kind: burn_rate, max_tokens_per_minute: 1000}\n"
        "  - {id: bad, kind: retry_budget, scope: step, budget: {max_attempts_per_step: -2}}\n"
        "  - {id: ok, kind: burn_rate, max_tokens_per_minute: 5}\n"
        "  - {kind: finding_count}\n"
    )
    with pytest.raises(RuleValidationError) as info:
        load_rules_file(path)
    problems = info.value.problems
    assert any("rules[1].budget" in p and ">= 0" in p for p in problems)
    assert any("rules[2].id: duplicate id 'ok'" in p for p in problems)
    assert any("rules[3].id: required" in p for p in problems)
    assert str(path) in str(info.value)
    path.write_text("rules: [\n")
    with pytest.raises(RuleValidationError, match="not valid YAML"):
        load_rules_file(path)
    path.write_text("project: p\nrules:\n  - {id: a, kind: burn_rate, max_tokens_per_minute: 1}\n")
    assert [r.id for r in load_rules_file(path).rules["p"]] == ["a"]


def test_hmac_signature_verifies_and_detects_tampering() -> None:
    body = b'{"state":"firing"}'
    signature = sign("k", body, 1_700_000_000)
    assert re.fullmatch(r"sha256=[0-9a-f]{64}", signature)
    assert verify("k", body, "1700000000", signature, now=1_700_000_010)
    assert not verify("k", body + b" ", "1700000000", signature, now=1_700_000_010)
    assert not verify("other", body, "1700000000", signature, now=1_700_000_010)
    assert not verify("k", body, "1700000000", signature, now=1_700_009_999)  # replayed late


def test_payloads() -> None:
    event = AlertEvent(
        "p", "r", 2, "e1", "firing", 1.0, 5.0, 3.0, "5 > 3",
        {"trace_links": ["http://d/?page=run&trace=ab"]}, "http://d/?page=run&trace=ab",
    )  # fmt: skip
    message = AlertMessage(event, "loops", "retry_budget")
    hook = webhook_payload(message)
    assert hook["state"] == "firing" and hook["rule_version"] == 2 and hook["value"] == 5.0
    slack = slack_payload(message)
    assert set(slack) == {"text", "blocks"} and "FIRING loops" in slack["text"]
    assert "<http://d/?page=run&amp;trace=ab|trace ab>" in str(slack["blocks"])  # Slack unescapes


def test_sql_literals_are_planscope_names() -> None:
    """String literals in the evaluation SQL are values defined in planscope.semconv (or the
    run model's, for the runs it finds across spans)."""
    literals = {lit for sql in sql_texts() for lit in re.findall(r"'([^']*)'", sql)} - {""}
    defined = {v for k, v in vars(A).items() if k.isupper() and isinstance(v, str)}
    defined.add(GROUPING_RUN_SOURCE)
    assert literals <= defined, literals - defined
    assert A.STATUS_SKIPPED in literals


def test_severities_match_the_analyzer() -> None:
    model = pytest.importorskip("planscope_analyzer._model")
    assert tuple(model.SEVERITIES) == SEVERITIES

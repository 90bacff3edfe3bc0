"""Alerts on retry budgets, finding counts and token burn rate (docs/alerts.md).

Rules are validated here (pydantic at the wire/config boundary), stored versioned in ClickHouse
(``alert_rules``), evaluated continuously inside the collector (a timer plus every flush of new
data), and their state changes are recorded in ``alert_events`` and delivered to webhooks,
Slack-compatible receivers and the log, with retries that survive restarts.

>>> from planscope_analyzer.alerts import parse_rule
>>> parse_rule({"id": "loops", "kind": "retry_budget", "scope": "step",
...             "budget": {"max_attempts_per_step": 3}}).kind
'retry_budget'
"""

from ._delivery import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    AlertMessage,
    LogNotifier,
    Notifier,
    SlackNotifier,
    WebhookNotifier,
    sign,
    slack_escape,
    slack_payload,
    verify,
    webhook_payload,
)
from ._errors import AlertError, DeliveryError, RuleValidationError
from ._evaluate import Evaluation, evaluate_rule
from ._repo import AlertEvent, ChannelDelivery, StoredRule
from ._rules import (
    AlertRule,
    BurnRateRule,
    FindingCountRule,
    LogChannel,
    RetryBudgetRule,
    RulesFile,
    SlackChannel,
    WebhookChannel,
    load_rules_file,
    parse_duration,
    parse_rule,
    parse_rules_document,
)
from ._settings import AlertSettings
from ._targets import AllowList, check_target

__all__ = [
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "AlertError",
    "AlertEvent",
    "AlertMessage",
    "AlertRule",
    "AlertSettings",
    "AllowList",
    "BurnRateRule",
    "ChannelDelivery",
    "DeliveryError",
    "Evaluation",
    "FindingCountRule",
    "LogChannel",
    "LogNotifier",
    "Notifier",
    "RetryBudgetRule",
    "RuleValidationError",
    "RulesFile",
    "SlackChannel",
    "SlackNotifier",
    "StoredRule",
    "WebhookChannel",
    "WebhookNotifier",
    "check_target",
    "evaluate_rule",
    "load_rules_file",
    "parse_duration",
    "parse_rule",
    "parse_rules_document",
    "sign",
    "slack_escape",
    "slack_payload",
    "verify",
    "webhook_payload",
]

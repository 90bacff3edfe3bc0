"""Alert rules: the wire/config schema (pydantic), durations, and the YAML rules file.

A rule is one of three kinds, told apart by ``kind``:

- ``retry_budget``: attempts, replans, tokens or cost beyond a :class:`planscope.RetryBudget`
  (the same class the SDK enforces at run time), per plan step, run, agent or tool, optionally
  as a share of the population over a time window;
- ``finding_count``: analyzer findings of a kind / minimum severity in a window;
- ``burn_rate``: LLM tokens (or cost) per minute over a window.

>>> rule = parse_rule({"id": "loops", "kind": "retry_budget", "scope": "step",
...                    "budget": {"max_attempts_per_step": 3}, "window": "15m"})
>>> rule.retry_budget().max_attempts_per_step, rule.window_seconds
(3, 900.0)
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from planscope import ConfigurationError, RetryBudget
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from ._errors import RuleValidationError
from ._targets import header_problem

__all__ = [
    "SEVERITIES",
    "AlertRule",
    "BurnRateRule",
    "Channel",
    "FindingCountRule",
    "LogChannel",
    "RetryBudgetRule",
    "RulesFile",
    "SlackChannel",
    "WebhookChannel",
    "load_rules_file",
    "parse_duration",
    "parse_rule",
    "parse_rules_document",
    "redacted",
]

SEVERITIES = ("low", "medium", "high", "critical")
"""Finding severities, least to most urgent (the analyzer's ``_model.SEVERITIES``; tested)."""

REDACTED = "***"
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
MAX_WINDOW_SECONDS = 7 * 86400.0


def parse_duration(value: str | float | int) -> float:
    """Seconds in a duration: ``"500ms"``, ``"30s"``, ``"15m"``, ``"1h"``, ``"1d"`` or a number.

    >>> parse_duration("15m"), parse_duration(2)
    (900.0, 2.0)
    """
    if isinstance(value, bool):
        raise ValueError(f"a duration like '30s', '15m' or '1h' is required, got {value!r}")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        match = _DURATION_RE.match(str(value))
        if match is None:
            raise ValueError(
                f"a duration like '30s', '15m', '1h' or '1d' is required, got {value!r}"
            )
        seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if seconds < 0 or seconds > MAX_WINDOW_SECONDS:
        raise ValueError(f"a duration must be between 0 and 7d, got {value!r}")
    return seconds


def _duration_text(value: Any) -> str:
    seconds = parse_duration(value)
    return value.strip() if isinstance(value, str) else f"{seconds:g}s"


def _window_text(value: Any) -> str:
    text = _duration_text(value)
    if parse_duration(text) < 1:
        raise ValueError(f"a window must be at least 1s, got {value!r}")
    return text


Duration = Annotated[str, BeforeValidator(_duration_text)]
"""A duration, kept as written (``"15m"``); numbers are seconds."""
Window = Annotated[str, BeforeValidator(_window_text)]


def _check_id(value: str) -> str:
    if not _ID_RE.match(value):
        raise ValueError(
            "a rule id is 1-64 characters of a-z, 0-9, '_', '.', '-' starting with a letter or "
            f"digit, got {value!r}"
        )
    return value


RuleId = Annotated[str, AfterValidator(_check_id)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class WebhookChannel(_Strict):
    """POST the event as JSON; optional HMAC-SHA256 signature (``X-Planscope-Signature``)."""

    type: Literal["webhook"] = "webhook"
    url: str = Field(pattern=r"^https?://", description="http(s) URL of the receiver")
    secret: str | None = Field(None, min_length=1, description="shared HMAC secret (stored)")
    secret_env: str | None = Field(
        None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="env var holding the secret"
    )
    headers: dict[str, str] = Field(default_factory=dict, max_length=32)
    timeout: float = Field(5.0, gt=0, le=60)

    @field_validator("headers")
    @classmethod
    def _allowed_headers(cls, value: dict[str, str]) -> dict[str, str]:
        problems = [p for name in value if (p := header_problem(name)) is not None]
        if problems:
            raise ValueError("; ".join(problems))
        return value


class SlackChannel(_Strict):
    """POST a Slack-compatible ``{"text", "blocks"}`` payload (Slack incoming webhook)."""

    type: Literal["slack"]
    url: str = Field(pattern=r"^https?://")
    secret: str | None = Field(None, min_length=1)
    secret_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    timeout: float = Field(5.0, gt=0, le=60)


class LogChannel(_Strict):
    """Write the event to the ``planscope.alerts`` logger."""

    type: Literal["log"] = "log"
    level: Literal["info", "warning", "error"] = "warning"


Channel = Annotated[WebhookChannel | SlackChannel | LogChannel, Field(discriminator="type")]


class _RuleBase(_Strict):
    id: RuleId | None = Field(None, description="stable id; generated from the name if absent")
    name: str = Field("", max_length=200)
    description: str = Field("", max_length=2000)
    enabled: bool = True
    window: Window = Field("5m", description="how far back the rule looks")
    cooldown: Duration = Field(
        "5m", description="no second firing message for the rule within this time of the last"
    )
    min_count: int = Field(1, ge=1, description="at least this many violations to fire")
    notify: tuple[Channel, ...] = Field(default_factory=lambda: (LogChannel(),))

    @property
    def window_seconds(self) -> float:
        return parse_duration(self.window)

    @property
    def cooldown_seconds(self) -> float:
        return parse_duration(self.cooldown)

    @property
    def title(self) -> str:
        return self.name or self.id or "unnamed rule"


class RetryBudgetRule(_RuleBase):
    """Budget violations per ``scope``; ``budget`` is a :class:`planscope.RetryBudget` (JSON form).

    Scopes and the limits they check:

    - ``step``: each (run, plan step) against ``max_attempts_per_step``;
    - ``tool``: each (run, step, tool) - calls of the tool - against ``max_attempts_per_step``;
    - ``run``: each run against every limit set (any step over ``max_attempts_per_step``,
      ``max_attempts_per_run``, ``max_replans``, ``max_tokens``, ``max_cost_usd``);
    - ``agent``: like ``run``, with ``threshold_share`` computed per agent.

    >>> RetryBudgetRule(kind="retry_budget", id="r", scope="agent", agent="support",
    ...                 threshold_share=0.05, budget={"max_attempts_per_step": 3},
    ...                 window="15m").scope
    'agent'
    """

    kind: Literal["retry_budget"]
    scope: Literal["step", "run", "agent", "tool"]
    budget: dict[str, Any] = Field(
        default_factory=dict, description="RetryBudget JSON: max_attempts_per_step, ..."
    )
    max_cost_usd: float | None = Field(None, ge=0, description="cost per run (run/agent scope)")
    threshold_share: float | None = Field(
        None, gt=0, le=1, description="fire when more than this share of the population violates"
    )
    agent: str | None = None
    tool: str | None = None
    step_id: str | None = None
    service: str | None = None

    @field_validator("budget", mode="before")
    @classmethod
    def _budget(cls, value: Any) -> dict[str, Any]:
        if isinstance(value, RetryBudget):
            return value.to_dict()
        try:
            return RetryBudget.from_dict(value).to_dict()
        except ConfigurationError as exc:
            raise ValueError(str(exc)) from None

    @model_validator(mode="after")
    def _limits_fit_scope(self) -> RetryBudgetRule:
        budget = self.retry_budget()
        per_run = {
            "max_attempts_per_run": budget.max_attempts_per_run,
            "max_replans": budget.max_replans,
            "max_tokens": budget.max_tokens,
            "max_cost_usd": self.max_cost_usd,
        }
        if self.scope in ("step", "tool"):
            if budget.max_attempts_per_step is None:
                raise ValueError(
                    f"scope {self.scope!r} checks budget.max_attempts_per_step, which is not set"
                )
            extra = sorted(k for k, v in per_run.items() if v is not None)
            if extra:
                raise ValueError(
                    f"scope {self.scope!r} checks max_attempts_per_step only; {extra} apply to "
                    "scope 'run' or 'agent'"
                )
        elif budget.max_attempts_per_step is None and all(v is None for v in per_run.values()):
            raise ValueError(
                f"scope {self.scope!r} needs at least one limit: budget.max_attempts_per_step, "
                "max_attempts_per_run, max_replans, max_tokens or max_cost_usd"
            )
        if self.tool is not None and self.scope != "tool":
            raise ValueError("'tool' filters scope 'tool' only")
        return self

    def retry_budget(self) -> RetryBudget:
        """The budget as the SDK's class."""
        return RetryBudget.from_dict(self.budget)


class FindingCountRule(_RuleBase):
    """At least ``min_count`` analyzer findings (of ``finding_kind``, at ``min_severity`` or more).

    >>> FindingCountRule(id="f", kind="finding_count", finding_kind="runaway_loop",
    ...                  min_severity="high", min_count=3).severities()
    ('high', 'critical')
    """

    kind: Literal["finding_count"]
    finding_kind: str | None = None
    min_severity: Literal["low", "medium", "high", "critical"] | None = None

    def severities(self) -> tuple[str, ...]:
        start = SEVERITIES.index(self.min_severity) if self.min_severity else 0
        return SEVERITIES[start:]


class BurnRateRule(_RuleBase):
    """LLM tokens (input + output) or cost per minute, averaged over ``window``.

    >>> BurnRateRule(id="b", kind="burn_rate", max_tokens_per_minute=50000).window
    '5m'
    """

    kind: Literal["burn_rate"]
    max_tokens_per_minute: float | None = Field(None, ge=0)
    max_cost_usd_per_minute: float | None = Field(None, ge=0)
    agent: str | None = None
    model: str | None = None
    service: str | None = None

    @model_validator(mode="after")
    def _one_limit(self) -> BurnRateRule:
        if self.max_tokens_per_minute is None and self.max_cost_usd_per_minute is None:
            raise ValueError("set max_tokens_per_minute or max_cost_usd_per_minute")
        return self


AlertRule = Annotated[
    RetryBudgetRule | FindingCountRule | BurnRateRule, Field(discriminator="kind")
]
"""Any rule; ``kind`` selects the model."""

_RULE_ADAPTER: TypeAdapter[RetryBudgetRule | FindingCountRule | BurnRateRule] = TypeAdapter(
    AlertRule
)


def _format_errors(exc: ValidationError, prefix: str = "") -> list[str]:
    problems = []
    for error in exc.errors(include_url=False):
        loc = [str(p) for p in error["loc"]]
        # drop the discriminator tags pydantic inserts ("retry_budget", "webhook", ...)
        loc = loc[1:] if loc and loc[0] in _KINDS else loc
        path = re.sub(r"\.(webhook|slack|log)(?=\.|$)", "", ".".join(loc))
        message = str(error["msg"]).removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown field"
        elif error["type"] == "union_tag_invalid":
            ctx = error.get("ctx") or {}
            tag, expected = ctx.get("discriminator", "kind").strip("'"), ctx.get("expected_tags")
            path = f"{path}.{tag}" if path else tag
            message = f"unknown {tag} {ctx.get('tag')!r}; expected one of {expected}"
        where = f"{prefix}{path}" if path else prefix.rstrip(".") or "rule"
        problems.append(f"{where}: {message}")
    return problems


_KINDS = ("retry_budget", "finding_count", "burn_rate")


def parse_rule(data: Any, *, where: str = "") -> RetryBudgetRule | FindingCountRule | BurnRateRule:
    """Validate one rule (a mapping, e.g. parsed JSON/YAML); raises RuleValidationError.

    >>> parse_rule({"kind": "burn_rate", "max_tokens_per_minute": -1})
    Traceback (most recent call last):
    ...
    planscope_analyzer.alerts._errors.RuleValidationError: invalid rule: max_tokens_per_minute: \
Input should be greater than or equal to 0
    """
    if not isinstance(data, Mapping):
        raise RuleValidationError(f"{where or 'rule'}: a rule must be a mapping, got {data!r}")
    if "kind" not in data:
        problems = [f"{where}kind: missing; one of {list(_KINDS)}"]
        raise RuleValidationError("invalid rule: " + "; ".join(problems), problems)
    try:
        return _RULE_ADAPTER.validate_python(dict(data))
    except ValidationError as exc:
        problems = _format_errors(exc, where)
        raise RuleValidationError("invalid rule: " + "; ".join(problems), problems) from None


def with_id(rule: RetryBudgetRule | FindingCountRule | BurnRateRule) -> Any:
    """The rule with an id (a slug of its name plus a random suffix when it has none)."""
    if rule.id:
        return rule
    slug = re.sub(r"[^a-z0-9]+", "-", rule.name.lower()).strip("-")[:48] or rule.kind
    return rule.model_copy(update={"id": f"{slug}-{secrets.token_hex(3)}"})


def redact_url(url: str, *, slack: bool = False) -> str:
    """``url`` with what may be a credential replaced by ``***``: the password, every query
    value, and for Slack the path after ``/services/`` (the whole token is the path).

    >>> redact_url("https://u:pw@hooks.example/h?token=abc&x=1")
    'https://u:***@hooks.example/h?token=***&x=***'
    >>> redact_url("https://hooks.slack.com/services/T0/B0/XyZ", slack=True)
    'https://hooks.slack.com/services/***'
    """
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = f"{parts.username or ''}:{REDACTED}@{netloc.rpartition('@')[2]}"
    query = "&".join(
        f"{k}={REDACTED}" if v else k for k, v in parse_qsl(parts.query, keep_blank_values=True)
    )
    path = parts.path
    if slack:
        head, sep, _ = path.partition("/services/")
        path = f"{head}{sep}{REDACTED}" if sep else (f"/{REDACTED}" if path.strip("/") else path)
    return urlunsplit((parts.scheme, netloc, path, query, ""))


def redacted(rule: Any) -> dict[str, Any]:
    """The rule as JSON-ready data with secrets replaced by ``***``: channel secrets, header
    values, and the credential parts of URLs (:func:`redact_url`)."""
    data: dict[str, Any] = rule.model_dump(mode="json")
    for channel in data.get("notify", []):
        if channel.get("secret"):
            channel["secret"] = REDACTED
        if channel.get("url"):
            channel["url"] = redact_url(channel["url"], slack=channel.get("type") == "slack")
        if channel.get("headers"):
            channel["headers"] = dict.fromkeys(channel["headers"], REDACTED)
    return data


def keep_secrets(new: Any, old: Any) -> Any:
    """``new`` with what :func:`redacted` hid taken from the stored channel at the same position:
    a ``***`` secret or header value, and a URL equal to the stored one's redacted form."""
    channels = list(new.notify)
    changed = False
    for i, channel in enumerate(channels):
        previous = old.notify[i] if i < len(old.notify) else None
        update: dict[str, Any] = {}
        if getattr(channel, "secret", None) == REDACTED:
            secret = getattr(previous, "secret", None)
            if secret is None:
                raise RuleValidationError(
                    f"notify.{i}.secret: '***' keeps a stored secret, but there is none to keep"
                )
            update["secret"] = secret
        url = getattr(channel, "url", None)
        old_url = getattr(previous, "url", None)
        if url and old_url and REDACTED in url:
            if url != redact_url(old_url, slack=getattr(previous, "type", "") == "slack"):
                raise RuleValidationError(
                    f"notify.{i}.url: '***' keeps the stored URL's secrets, but the rest differs"
                )
            update["url"] = old_url
        headers = getattr(channel, "headers", None)
        if headers and REDACTED in headers.values():
            stored = getattr(previous, "headers", {}) or {}
            missing = [k for k, v in headers.items() if v == REDACTED and k not in stored]
            if missing:
                raise RuleValidationError(
                    f"notify.{i}.headers: '***' keeps stored values, but {missing} has none"
                )
            update["headers"] = {k: stored[k] if v == REDACTED else v for k, v in headers.items()}
        if update:
            channels[i] = channel.model_copy(update=update)
            changed = True
    return new.model_copy(update={"notify": tuple(channels)}) if changed else new


@dataclass(frozen=True)
class RulesFile:
    """The parsed rules file: project -> rules (every rule has an id).

    >>> RulesFile({"default": ()}).count
    0
    """

    rules: Mapping[str, Sequence[Any]]

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.rules.values())


def parse_rules_document(docs: Sequence[Any], source: str = "rules") -> RulesFile:
    """Validate YAML documents: ``{project: NAME, rules: [...]}`` or a bare list of rules.

    Every problem in every rule is reported at once; ids are required and unique per project.

    >>> parse_rules_document([{"project": "p", "rules": [
    ...     {"id": "a", "kind": "burn_rate", "max_tokens_per_minute": 1000}]}]).count
    1
    """
    problems: list[str] = []
    found: dict[str, list[Any]] = {}
    for d, doc in enumerate(docs):
        at = f"{source}" if len(docs) == 1 else f"{source} (document {d + 1})"
        if doc is None:
            continue
        if isinstance(doc, list):
            doc = {"rules": doc}
        if not isinstance(doc, Mapping):
            problems.append(f"{at}: expected a mapping with 'rules' or a list of rules")
            continue
        unknown = sorted(set(doc) - {"project", "rules"})
        if unknown:
            problems.append(f"{at}: unknown top-level field(s) {unknown}; use project, rules")
        project = doc.get("project", "default")
        if not isinstance(project, str) or not project:
            problems.append(f"{at}: project must be a non-empty string")
            continue
        items = doc.get("rules") or []
        if not isinstance(items, list):
            problems.append(f"{at}: rules must be a list")
            continue
        seen: set[str] = {r.id for r in found.get(project, [])}
        for i, item in enumerate(items):
            where = f"{at}: rules[{i}]."
            try:
                rule = parse_rule(item, where=where)
            except RuleValidationError as exc:
                problems.extend(exc.problems)
                continue
            if not rule.id:
                problems.append(f"{where}id: required in a rules file")
            elif rule.id in seen:
                problems.append(f"{where}id: duplicate id {rule.id!r} in project {project!r}")
            else:
                seen.add(rule.id)
                found.setdefault(project, []).append(rule)
    if problems:
        raise RuleValidationError(
            f"invalid alert rules in {source}:\n  " + "\n  ".join(problems), problems
        )
    return RulesFile({k: tuple(v) for k, v in found.items()})


def load_rules_file(path: Path) -> RulesFile:
    """Read and validate a YAML rules file; raises RuleValidationError naming the file.

    >>> load_rules_file(Path("/nonexistent.yaml"))
    Traceback (most recent call last):
    ...
    planscope_analyzer.alerts._errors.RuleValidationError: cannot read alert rules file \
/nonexistent.yaml: No such file or directory
    """
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RuleValidationError(f"cannot read alert rules file {path}: {exc.strerror}") from None
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        raise RuleValidationError(f"alert rules file {path} is not valid YAML: {exc}") from None
    return parse_rules_document(docs, str(path))

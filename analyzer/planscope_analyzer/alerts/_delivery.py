"""Deliveries: notifiers (webhook, Slack, log), HMAC signatures, and the delivery thread.

Delivery is at-least-once per channel. An event is persisted as ``pending`` before any attempt;
every attempt's outcome is persisted (attempts, last error, next attempt); a receiver that is
down keeps the event pending and it is retried with capped exponential back-off, across collector
restarts. Events of one rule are delivered in order (a ``resolved`` never overtakes its
``firing``). Receivers deduplicate by ``X-Planscope-Event-Id``.

Signature (when the channel has a secret)::

    X-Planscope-Timestamp: 1718000000
    X-Planscope-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>." + raw body)>

>>> sig = sign("s3cret", b'{"a":1}', 1718000000)
>>> verify("s3cret", b'{"a":1}', "1718000000", sig, now=1718000001)
True
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol
from urllib.parse import urlsplit

from ._errors import DeliveryError
from ._repo import DELIVERED, FAILED, FIRING, PENDING, AlertEvent, ChannelDelivery, EventLog
from ._rules import LogChannel, SlackChannel, WebhookChannel
from ._targets import AllowList, check_target, header_problem

__all__ = [
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "AlertMessage",
    "Dispatcher",
    "LogNotifier",
    "Notifier",
    "SlackNotifier",
    "WebhookNotifier",
    "sign",
    "slack_escape",
    "slack_payload",
    "verify",
    "webhook_payload",
]

log = logging.getLogger("planscope.alerts")

SIGNATURE_HEADER = "X-Planscope-Signature"
TIMESTAMP_HEADER = "X-Planscope-Timestamp"
EVENT_ID_HEADER = "X-Planscope-Event-Id"


def sign(secret: str, body: bytes, timestamp: int) -> str:
    """The signature header value for ``body`` sent at ``timestamp`` (unix seconds)."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(
    secret: str,
    body: bytes,
    timestamp: str,
    signature: str,
    *,
    tolerance: float = 300.0,
    now: float | None = None,
) -> bool:
    """Receiver side: True when the signature matches and the timestamp is recent.

    >>> verify("s3cret", b"{}", "1", sign("other", b"{}", 1), now=1)
    False
    """
    try:
        ts = int(timestamp)
    except (TypeError, ValueError):
        return False
    if abs((time.time() if now is None else now) - ts) > tolerance:
        return False
    return hmac.compare_digest(sign(secret, body, ts), signature or "")


@dataclass(frozen=True)
class AlertMessage:
    """What a notifier sends: the event plus the rule's title and kind."""

    event: AlertEvent
    rule_name: str
    rule_kind: str


class Notifier(Protocol):
    """A channel; ``send`` raises :class:`DeliveryError` when the message did not arrive."""

    label: str

    def send(self, message: AlertMessage) -> None: ...


def webhook_payload(message: AlertMessage) -> dict[str, Any]:
    """The generic webhook JSON body.

    >>> e = AlertEvent("p", "r", 1, "e1", "firing", 0.0, 3.0, 1.0, "3 exceeded", {}, "http://d")
    >>> sorted(webhook_payload(AlertMessage(e, "loops", "retry_budget")))[:4]
    ['at', 'event_id', 'evidence', 'kind']
    """
    e = message.event
    return {
        "version": 1,
        "event_id": e.event_id,
        "state": e.state,
        "project": e.project,
        "rule_id": e.rule_id,
        "rule_version": e.rule_version,
        "rule_name": message.rule_name,
        "kind": message.rule_kind,
        "at": e.at,
        "summary": e.summary,
        "value": e.value,
        "threshold": e.threshold,
        "evidence": e.evidence,
        "link": e.link,
        "trace_links": e.evidence.get("trace_links", []),
    }


def slack_escape(text: str) -> str:
    """Escape ``&``, ``<`` and ``>`` as Slack's mrkdwn requires, so that names and summaries
    written by agents cannot mention ``<!channel>`` or disguise a link as ``<url|text>``.

    >>> slack_escape("<!channel> <http://evil|docs> & co")
    '&lt;!channel&gt; &lt;http://evil|docs&gt; &amp; co'
    """
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_payload(message: AlertMessage) -> dict[str, Any]:
    """A Slack incoming-webhook body: ``text`` (fallback) and ``blocks``; every value that
    comes from rules or traces is escaped (:func:`slack_escape`).

    >>> e = AlertEvent("p", "r", 1, "e1", "resolved", 0.0, 0.0, 1.0, "ok now", {}, "")
    >>> slack_payload(AlertMessage(e, "loops", "retry_budget"))["text"]
    ':white_check_mark: RESOLVED loops (p): ok now'
    """
    e = message.event
    icon = ":rotating_light:" if e.state == FIRING else ":white_check_mark:"
    esc = slack_escape
    text = f"{icon} {e.state.upper()} {esc(message.rule_name)} ({esc(e.project)}): {esc(e.summary)}"
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": text}},
        {
            "type": "section",
            "fields": [
                {"type": "mrkdwn", "text": f"*Value*\n{e.value:g}"},
                {"type": "mrkdwn", "text": f"*Threshold*\n{e.threshold:g}"},
                {"type": "mrkdwn", "text": f"*Rule*\n`{esc(e.rule_id)}` v{e.rule_version}"},
                {"type": "mrkdwn", "text": f"*Kind*\n{esc(message.rule_kind)}"},
            ],
        },
    ]
    links = e.evidence.get("trace_links", [])[:5]
    if links:
        lines = "\n".join(
            f"<{esc(str(u)).replace('|', '%7C')}|trace {esc(str(u).rsplit('=', 1)[-1][:12])}>"
            for u in links
        )
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": lines}})
    footer = {"type": "mrkdwn", "text": f"event {esc(e.event_id)}"}
    blocks.append({"type": "context", "elements": [footer]})
    return {"text": text, "blocks": blocks}


def _label_url(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"  # no credentials, no query tokens


class _HttpNotifier:
    kind = "webhook"

    def __init__(
        self,
        url: str,
        *,
        secret: str | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 5.0,
        allow: AllowList | None = None,
    ) -> None:
        self.url = url
        self.secret = secret
        # Rules are validated when saved; this drops what a rule stored earlier might carry.
        self.headers = {k: v for k, v in (headers or {}).items() if header_problem(k) is None}
        self.timeout = timeout
        self.allow = allow or AllowList()
        self.label = f"{self.kind}:{_label_url(url)}"

    def body(self, message: AlertMessage) -> dict[str, Any]:
        return webhook_payload(message)

    def send(self, message: AlertMessage) -> None:
        import httpx

        body = json.dumps(self.body(message), sort_keys=True, default=str).encode()
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "planscope-alerts/1",
            EVENT_ID_HEADER: message.event.event_id,
            **self.headers,
        }
        if self.secret:
            ts = int(time.time())
            headers[TIMESTAMP_HEADER] = str(ts)
            headers[SIGNATURE_HEADER] = sign(self.secret, body, ts)
        # Checked at every delivery, and sent to the checked address: DNS may answer
        # differently now than when the rule was saved (rebinding).
        target = check_target(self.url, self.allow)
        headers["Host"] = target.host if ":" not in target.host else f"[{target.host}]"
        port = urlsplit(self.url).port
        if port is not None:
            headers["Host"] += f":{port}"
        try:
            # No redirects: one could point anywhere. TLS checks the URL's host name.
            with httpx.Client(
                timeout=self.timeout, follow_redirects=False, auth=target.auth
            ) as client:
                response = client.post(
                    target.url,
                    content=body,
                    headers=headers,
                    extensions={"sni_hostname": target.host},
                )
        except httpx.HTTPError as exc:
            # The exception text may carry the URL (tokens): name only its kind.
            raise DeliveryError(f"{type(exc).__name__} reaching {_label_url(self.url)}") from None
        if response.status_code >= 300:
            # Never the receiver's body: it would come back through /api/alerts/events, a way to
            # read internal services.
            raise DeliveryError(f"HTTP {response.status_code}")


class WebhookNotifier(_HttpNotifier):
    """POST :func:`webhook_payload` as JSON, signed when a secret is set.

    >>> WebhookNotifier("http://127.0.0.1:9/hook?token=x").label
    'webhook:http://127.0.0.1:9/hook'
    """


class SlackNotifier(_HttpNotifier):
    """POST :func:`slack_payload` (Slack incoming webhooks and compatible receivers)."""

    kind = "slack"

    def body(self, message: AlertMessage) -> dict[str, Any]:
        return slack_payload(message)


class LogNotifier:
    """Log the event on the ``planscope.alerts`` logger (never fails)."""

    def __init__(self, level: str = "warning") -> None:
        self.level = getattr(logging, level.upper())
        self.label = "log"

    def send(self, message: AlertMessage) -> None:
        e = message.event
        level = self.level if e.state == FIRING else logging.INFO
        log.log(level, "alert %s %s [%s/%s]: %s %s", e.state.upper(), message.rule_name,
                e.project, e.rule_id, e.summary, e.link)  # fmt: skip


def notifier_for(channel: Any, allow: AllowList | None = None) -> Notifier:
    """Build the notifier of a rule's channel (secrets from ``secret_env`` at send time);
    ``allow`` is the operator's allow-list of non-public targets."""
    if isinstance(channel, LogChannel):
        return LogNotifier(channel.level)
    if isinstance(channel, WebhookChannel | SlackChannel):
        secret = channel.secret
        if secret is None and channel.secret_env:
            secret = os.environ.get(channel.secret_env)
        headers = channel.headers if isinstance(channel, WebhookChannel) else {}
        cls = WebhookNotifier if isinstance(channel, WebhookChannel) else SlackNotifier
        return cls(
            channel.url, secret=secret, headers=headers, timeout=channel.timeout, allow=allow
        )
    raise TypeError(f"unknown channel {channel!r}")


@dataclass(frozen=True)
class RetryPolicy:
    """Back-off between attempts: ``base * 2**(n-1)`` capped at ``max_delay``; give up after
    ``give_up_after`` seconds (the event becomes ``failed``)."""

    base: float = 1.0
    max_delay: float = 60.0
    give_up_after: float = 86400.0

    def delay(self, attempts: int) -> float:
        return float(min(self.base * (2 ** max(0, attempts - 1)), self.max_delay))


Resolver = Callable[[AlertEvent], tuple[AlertMessage, Sequence[Notifier]]]


class Dispatcher:
    """The delivery thread: sends pending events, persists every outcome, retries with back-off.

    Never blocks its callers: :meth:`submit` only queues and wakes the thread.
    """

    def __init__(self, events: EventLog, resolve: Resolver, policy: RetryPolicy) -> None:
        self._events = events
        self._resolve = resolve
        self.policy = policy
        self._pending: dict[str, AlertEvent] = {}
        self._unsaved: dict[str, AlertEvent] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._loaded = False
        self._thread = threading.Thread(
            target=self._run, name="planscope-alerts-delivery", daemon=True
        )
        self.sent = 0

    def start(self) -> None:
        # httpx logs every request's full URL at INFO, and webhook URLs carry tokens (Slack's
        # are secrets as a whole): keep that log out of the collector's unless asked for.
        for name in ("httpx", "httpcore"):
            logger = logging.getLogger(name)
            if logger.level == logging.NOTSET:
                logger.setLevel(logging.WARNING)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout)

    def submit(self, events: Sequence[AlertEvent]) -> None:
        """Queue new pending events (already persisted by the caller)."""
        with self._lock:
            for e in events:
                if e.delivery_state == PENDING:
                    self._pending[e.event_id] = e
        self._wake.set()

    def pending(self) -> list[AlertEvent]:
        with self._lock:
            return sorted(self._pending.values(), key=lambda e: e.at)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if not self._loaded:
                    self.submit(self._events.pending())  # survivors of a restart
                    self._loaded = True
                self._flush_unsaved()
                delay = self._deliver_due()
            except Exception as exc:  # store down, etc.: keep everything, try again
                log.warning("alert delivery loop: %s", exc)
                delay = 1.0
            self._wake.wait(max(0.01, min(delay, 1.0)))
            self._wake.clear()

    def _flush_unsaved(self) -> None:
        with self._lock:
            batch = list(self._unsaved.values())
        if batch:
            self._events.write(batch)
            with self._lock:
                for e in batch:
                    if self._unsaved.get(e.event_id) is e:
                        del self._unsaved[e.event_id]

    def _deliver_due(self) -> float:
        now = time.time()
        blocked: set[tuple[str, str]] = set()
        next_due = 1.0
        for event in self.pending():
            key = (event.project, event.rule_id)
            if key in blocked:
                continue  # an earlier event of this rule is still pending: keep the order
            if event.next_attempt_at > now:
                blocked.add(key)
                next_due = min(next_due, event.next_attempt_at - now)
                continue
            updated = self._attempt(event)
            with self._lock:
                if updated.delivery_state == PENDING:
                    self._pending[updated.event_id] = updated
                    blocked.add(key)
                    next_due = min(next_due, max(0.0, updated.next_attempt_at - time.time()))
                else:
                    self._pending.pop(updated.event_id, None)
                self._unsaved[updated.event_id] = updated
            self._flush_unsaved()
            if self._stop.is_set():
                break
        return next_due

    def _attempt(self, event: AlertEvent) -> AlertEvent:
        message, notifiers = self._resolve(event)
        done = {d.channel: d for d in event.deliveries}
        results: list[ChannelDelivery] = []
        errors: list[str] = []
        for notifier in notifiers:
            previous = done.get(notifier.label, ChannelDelivery(notifier.label))
            if previous.state == DELIVERED:
                results.append(previous)
                continue
            try:
                notifier.send(message)
            except Exception as exc:
                error = str(exc) or type(exc).__name__
                errors.append(f"{notifier.label}: {error}")
                results.append(replace(previous, attempts=previous.attempts + 1, last_error=error))
            else:
                self.sent += 1
                results.append(
                    replace(previous, state=DELIVERED, attempts=previous.attempts + 1,
                            delivered_at=time.time())
                )  # fmt: skip
        attempts = event.attempts + 1
        now = time.time()
        if not errors:
            state, next_at, last_error = DELIVERED, 0.0, event.last_error
        elif now - event.at > self.policy.give_up_after:
            state, next_at, last_error = FAILED, 0.0, "; ".join(errors)
            log.error("alert %s: giving up after %d attempts: %s", event.event_id, attempts,
                      last_error)  # fmt: skip
        else:
            state, last_error = PENDING, "; ".join(errors)
            next_at = now + self.policy.delay(attempts)
            log.warning("alert %s delivery failed (attempt %d, next in %.1fs): %s",
                        event.event_id, attempts, next_at - now, last_error)  # fmt: skip
        return replace(
            event,
            delivery_state=state,
            attempts=attempts,
            last_error=last_error,
            next_attempt_at=next_at,
            deliveries=tuple(results),
            updated_at=max(now, event.updated_at + 0.001),
        )

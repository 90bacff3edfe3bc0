"""Issue #12, items 9 and 10: webhooks cannot reach internal services or leak their answers,
Slack text cannot ping or disguise links, and secrets stay out of answers and logs.

The receivers here run on loopback, so the operator's allow-list (``127.0.0.1``, set by the
fixtures' environment) is what lets the legitimate deliveries through; the tests that check the
refusal clear it, as a deployment without an allow-list would have it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from planscope_analyzer.alerts import (
    AlertEvent,
    AlertMessage,
    AllowList,
    DeliveryError,
    SlackNotifier,
    WebhookNotifier,
    check_target,
    slack_payload,
)
from planscope_collector import BackgroundServer

from .conftest import Receiver, api

EVENT = AlertEvent("p", "r", 1, "e1", "firing", 0.0, 5.0, 3.0, "5 > 3", {}, "http://d/?t=1")
MESSAGE = AlertMessage(EVENT, "loops", "retry_budget")

INTERNAL = [
    "http://127.0.0.1:8123/",
    "http://localhost/",
    "http://127.1/",
    "http://0x7f000001/",
    "http://2130706433/",
    "http://017700000001/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://0.0.0.0:22/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fe80::1]/",
    "http://10.1.2.3/",
    "http://192.168.0.1/",
    "http://172.16.0.1/",
    "http://[fd00::1]/",
    "http://100.64.0.1/",
]


def test_non_public_targets_are_refused_when_saved(
    make_collector: Callable[..., BackgroundServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 9: rules were accepted for metadata addresses, loopback in every spelling, 0.0.0.0."""
    monkeypatch.setenv("PLANSCOPE_ALERTS_ALLOW_TARGETS", "")
    client = api(make_collector().url)
    rule = {"id": "r", "kind": "burn_rate", "max_tokens_per_minute": 1}
    for url in INTERNAL:
        for kind in ("webhook", "slack"):
            r = client.post("/rules", json={**rule, "notify": [{"type": kind, "url": url}]})
            assert r.status_code == 422, (url, r.text)
            assert "only public addresses" in r.json()["error"]
    assert client.get("/rules").json()["rules"] == []


def test_every_spelling_of_an_internal_address_is_refused_at_delivery_too() -> None:
    for url in INTERNAL:
        with pytest.raises(DeliveryError, match="address; only public"):
            check_target(url, AllowList())
    public = check_target("http://93.184.215.14:8080/h?x=1", AllowList())
    assert public.url == "http://93.184.215.14:8080/h?x=1"


def test_dns_rebinding_is_checked_at_delivery_and_the_checked_address_is_used(
    receiver: Receiver,
) -> None:
    """A name that resolved to a public address when the rule was saved may point inside later:
    every delivery resolves and checks again, and connects to the address it checked."""
    url = f"http://localhost:{receiver.port}/hook"
    with pytest.raises(DeliveryError, match="loopback"):
        WebhookNotifier(url, allow=AllowList()).send(MESSAGE)
    assert receiver.messages == []
    WebhookNotifier(url, allow=AllowList.parse("127.0.0.1")).send(MESSAGE)
    (got,) = receiver.messages
    assert got.headers["Host"] == f"localhost:{receiver.port}"  # the URL's host, not the IP


def test_hop_by_hop_and_host_headers_are_refused(
    make_collector: Callable[..., BackgroundServer], receiver: Receiver
) -> None:
    """Item 9: arbitrary headers (Host, ...) were forwarded."""
    client = api(make_collector().url)
    rule = {"id": "r", "kind": "burn_rate", "max_tokens_per_minute": 1}
    for name in ("Host", "Connection", "Transfer-Encoding", "X-Planscope-Signature"):
        hook = {"type": "webhook", "url": receiver.url, "headers": {name: "x"}}
        r = client.post("/rules", json={**rule, "notify": [hook]})
        assert r.status_code == 422 and name in r.text, r.text
    notifier = WebhookNotifier(
        receiver.url,
        headers={"Host": "metadata.internal", "X-Team": "a"},
        allow=AllowList.parse("127.0.0.1"),
    )
    notifier.send(MESSAGE)
    (got,) = receiver.messages
    assert got.headers["Host"] == f"127.0.0.1:{receiver.port}" and got.headers["X-Team"] == "a"


def test_a_failed_delivery_does_not_echo_the_receivers_answer(receiver: Receiver) -> None:
    """Item 9: the first 200 characters of an internal target's non-2xx answer came back
    through GET /api/alerts/events: a read oracle."""
    receiver.status = 500
    with pytest.raises(DeliveryError) as info:
        WebhookNotifier(receiver.url, allow=AllowList.parse("127.0.0.1")).send(MESSAGE)
    assert str(info.value) == "HTTP 500"


def test_slack_text_is_escaped() -> None:
    """Item 9: agent and tool names went into Slack text unescaped."""
    event = AlertEvent(
        "p<!here>", "r", 1, "e1", "firing", 0.0, 5.0, 3.0,
        "tool <http://evil.example|docs> & <!channel>",
        {"trace_links": ["http://d/?page=run&trace=ab>x"]}, "",
    )  # fmt: skip
    payload = slack_payload(AlertMessage(event, "<!channel> loops", "retry_budget"))
    text = str(payload)
    assert "<!channel>" not in text and "<!here>" not in text and "<http://evil" not in text
    assert "&lt;!channel&gt; loops" in payload["text"]
    assert "&lt;http://evil.example|docs&gt; &amp; &lt;!channel&gt;" in payload["text"]
    assert "<http://d/?page=run&amp;trace=ab&gt;x|" in text  # our own link, kept a link


def test_secrets_are_redacted_in_answers_and_kept_on_update(
    make_collector: Callable[..., BackgroundServer], receiver: Receiver
) -> None:
    """Item 9: GET /api/alerts/rules returned webhook headers, URL tokens and passwords."""
    server = make_collector()
    client = api(server.url)
    hook_url = f"http://ops:hunter2@127.0.0.1:{receiver.port}/hook?token=tok-123"
    rule = {
        "id": "r",
        "kind": "burn_rate",
        "max_tokens_per_minute": 1,
        "notify": [
            {"type": "webhook", "url": hook_url, "headers": {"Authorization": "Bearer abc"}},
            {"type": "slack", "url": f"http://127.0.0.1:{receiver.port}/services/T0/B0/XyZ"},
        ],
    }
    created = client.post("/rules", json=rule)
    assert created.status_code == 201, created.text
    for body in (created.json(), client.get("/rules").json()["rules"][0]):
        text = str(body)
        assert "hunter2" not in text and "tok-123" not in text and "abc" not in text
        assert "XyZ" not in text
        hook, slack = body["notify"]
        assert hook["url"] == f"http://ops:***@127.0.0.1:{receiver.port}/hook?token=***"
        assert hook["headers"] == {"Authorization": "***"}
        assert slack["url"].endswith("/services/***")
    history = client.get("/rules/r/history").json()
    assert "hunter2" not in str(history) and "tok-123" not in str(history)
    # Sending the redacted rule back (a dashboard edit) keeps the stored secrets.
    edited = {**created.json(), "max_tokens_per_minute": 2}
    for key in ("version", "source", "updated_at", "state"):
        edited.pop(key)
    r = client.put("/rules/r", json=edited)
    assert r.status_code == 200, r.text
    assert r.json()["version"] == 2
    stored = client.get("/rules/r").json()
    assert stored["notify"][0]["url"] == hook["url"]  # still redacted in the answer
    assert stored["max_tokens_per_minute"] == 2
    alerts = next(e for e in server.app.state.collector.extensions if hasattr(e, "engine"))
    kept = alerts.engine.rules.get("default", "r").rule.notify
    assert kept[0].url == hook_url and kept[0].headers == {"Authorization": "Bearer abc"}
    assert kept[1].url.endswith("/services/T0/B0/XyZ")


def test_httpx_does_not_log_webhook_urls(
    make_collector: Callable[..., BackgroundServer],
    receiver: Receiver,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Item 10: httpx's INFO log printed full webhook URLs with tokens on every delivery."""
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(logging.NOTSET)
    caplog.set_level(logging.INFO)
    make_collector()  # its alert delivery thread quiets httpx
    SlackNotifier(f"{receiver.url}?token=sekrit-tok", allow=AllowList.parse("127.0.0.1")).send(
        MESSAGE
    )
    assert len(receiver.messages) == 1
    assert "sekrit-tok" not in caplog.text

"""A receiver that is down: the event stays pending (persisted), survives a collector restart,
and is delivered exactly once when the receiver comes back."""

from __future__ import annotations

from collections.abc import Callable

from planscope_collector import BackgroundServer

from .conftest import Receiver, api, free_port, run_agent, wait_until


def test_dead_receiver_gets_the_pending_event_after_restart(
    make_collector: Callable[..., BackgroundServer],
) -> None:
    port = free_port()  # nothing listens here yet: connection refused
    down = Receiver(port)
    rule = {
        "id": "loops",
        "kind": "retry_budget",
        "scope": "run",
        "budget": {"max_attempts_per_step": 3},
        "window": "10m",
        "notify": [{"type": "slack", "url": down.url}],
    }
    collector = make_collector()
    client = api(collector.url)
    assert client.post("/rules", json=rule).status_code == 201
    run_agent(collector.url, "loop_same_error")

    def failed_twice() -> dict | None:
        events = client.get("/events").json()["events"]
        if events and events[0]["delivery"]["attempts"] >= 2:
            return dict(events[0])
        return None

    event = wait_until(failed_twice, what="two failed delivery attempts")
    assert event["state"] == "firing"
    assert event["delivery"]["state"] == "pending"
    assert "Connect" in event["delivery"]["last_error"], event["delivery"]
    assert event["delivery"]["channels"][0]["state"] == "pending"

    collector.stop()  # the collector goes away with the event undelivered
    receiver = Receiver(port).start()
    try:
        collector = make_collector()  # same data dir: the pending event is reloaded
        client = api(collector.url)
        message = receiver.wait_for(1, timeout=15)[0].json()
        assert message["text"].startswith(":rotating_light: FIRING loops")  # Slack payload
        assert message["blocks"][0]["type"] == "section"
        assert any("trace" in str(b) for b in message["blocks"])
        delivered = wait_until(
            lambda: (
                (e := client.get("/events").json()["events"])
                and e[0]["delivery"]["state"] == "delivered"
                and e
            ),
            what="delivered state",
        )
        assert len(delivered) == 1  # still firing after the restart: no second firing event
        assert delivered[0]["event_id"] == event["event_id"]
        assert delivered[0]["delivery"]["attempts"] >= 3
        run_agent(collector.url, "loop_same_error")  # more storm: still one message
        wait_until(
            lambda: client.get("/state").json()["rules"][0]["evaluated_at"],
            what="an evaluation after the restart",
        )
        import time

        time.sleep(1.0)
        assert len(receiver.messages) == 1
        assert client.get("/state").json()["rules"][0]["state"] == "firing"
    finally:
        receiver.stop()

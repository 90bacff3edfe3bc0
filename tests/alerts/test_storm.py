"""A loop storm through a real collector: exactly one firing and one resolved webhook message."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from planscope._cli import build_parser
from planscope_analyzer.alerts import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify
from planscope_collector import BackgroundServer

from .conftest import Receiver, api, run_agent, wait_until

SECRET = "s3cret-shared"


def test_storm_fires_once_and_resolves_once(
    make_collector: Callable[..., BackgroundServer], receiver: Receiver, capsys: object
) -> None:
    collector = make_collector()
    client = api(collector.url)

    # The storm: three looping runs (each retries step 'health' until the SDK's budget refuses
    # attempt 5), exported by the real SDK and OTLP exporter from a subprocess.
    storm_started = time.time()
    run_agent(collector.url, *["loop_same_error"] * 3)
    probe = {
        "kind": "retry_budget",
        "scope": "step",
        "budget": {"max_attempts_per_step": 3},
        "window": "1h",
    }
    wait_until(
        lambda: len(client.post("/test", json=probe).json()["evidence"]["trace_ids"]) == 3,
        timeout=60,
        what="the storm visible to the evaluator",
    )
    # The rule's window is over span time; it is sized from how long the storm took to be
    # stored (+3 s), so a slow, loaded machine lengthens the test instead of failing it.
    window = math.ceil(time.time() - storm_started) + 3
    rule = {
        "id": "step-loops",
        "name": "step retry loops",
        "kind": "retry_budget",
        "scope": "step",
        "budget": {"max_attempts_per_step": 3},
        "window": f"{window}s",
        "cooldown": "1m",
        "notify": [
            {"type": "webhook", "url": receiver.url, "secret": SECRET},
            {"type": "log"},
        ],
    }
    r = client.post("/rules", json=rule)
    assert r.status_code == 201, r.text
    assert r.json()["notify"][0]["secret"] == "***"  # never echoed

    firing = receiver.wait_for(1, timeout=15)[0]
    body = firing.json()
    assert body["state"] == "firing" and body["rule_id"] == "step-loops"
    assert verify(SECRET, firing.body, firing.headers[TIMESTAMP_HEADER],
                  firing.headers[SIGNATURE_HEADER])  # fmt: skip
    assert not verify("wrong", firing.body, firing.headers[TIMESTAMP_HEADER],
                      firing.headers[SIGNATURE_HEADER])  # fmt: skip
    samples = body["evidence"]["samples"]
    assert all(s["step_id"] and s["run_id"] for s in samples)  # the looping plan steps
    assert len({s["trace_id"] for s in samples}) == 3  # the whole storm was stored first
    assert all(s["attempts"] == 5 and s["exceeded"] == ["max_attempts_per_step: 5 > 3"]
               for s in samples)  # fmt: skip
    assert body["value"] == len(samples) and body["threshold"] == 1
    assert body["link"].startswith("http://dash.test:8501/?page=run&trace=")
    assert body["link"].split("=")[-1] in body["evidence"]["trace_ids"]

    # While the storm's spans are in the window the rule stays firing: no second message.
    # When the window has passed over the storm, exactly one resolved message.
    resolved = receiver.wait_for(2, timeout=window + 15)[1].json()
    assert resolved["state"] == "resolved" and resolved["rule_id"] == "step-loops"
    assert time.time() - storm_started >= window
    time.sleep(1.0)  # several more evaluation passes (interval 0.1 s)
    assert [m.json()["state"] for m in receiver.messages] == ["firing", "resolved"]

    events = client.get("/events", params={"rule_id": "step-loops"}).json()["events"]
    assert [e["state"] for e in events] == ["resolved", "firing"]
    for e in events:
        assert e["delivery"]["state"] == "delivered"
        assert e["delivery"]["attempts"] == 1
        assert {c["channel"] for c in e["delivery"]["channels"]} == {
            f"webhook:{receiver.url}",
            "log",
        }
    state = client.get("/state").json()
    assert state["rules"][0]["state"] == "resolved"

    # Dry runs: the same storm through an agent-share rule (unsaved), a wide window.
    run_agent(collector.url, "")
    share_rule = {
        "kind": "retry_budget",
        "scope": "agent",
        "agent": "planscope-reference-agent",
        "budget": {"max_attempts_per_step": 3},
        "threshold_share": 0.5,
        "window": "1m",
    }
    dry = wait_until(
        lambda: (
            (d := client.post("/test", json=share_rule).json())["evidence"]["groups"]
            and d["evidence"]["groups"][0]["units"] >= 4
            and d
        ),
        what="healthy run in the window",
    )
    assert dry["would_fire"] is True, dry
    assert dry["evidence"]["groups"][0]["violating"] == 3
    assert dry["value"] == 0.75
    dry = client.post("/test", json={**share_rule, "threshold_share": 0.8}).json()
    assert dry["would_fire"] is False
    assert len(receiver.messages) == 2  # dry runs never deliver

    # The CLI (found through planscope's plug-in registry) goes through the same HTTP API.
    def alerts_cli(argv: list[str]) -> int:
        args = build_parser().parse_args(["alerts", *argv])
        return int(args.func(args))

    assert alerts_cli(["list", "--collector", collector.url]) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "step-loops" in out and "resolved" in out
    assert alerts_cli(["test", "step-loops", "--collector", collector.url]) == 0
    assert "would not fire" in capsys.readouterr().out  # type: ignore[attr-defined]

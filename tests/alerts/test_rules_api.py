"""Rules through the HTTP API and the rules file: versions, refusals that change nothing."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from planscope_collector import BackgroundServer

from .conftest import api

GOOD_FILE = """
project: default
rules:
  - id: file-loops
    kind: retry_budget
    scope: agent
    agent: planscope-reference-agent
    budget: {max_attempts_per_step: 3}
    threshold_share: 0.05
    window: 15m
  - id: burn
    kind: burn_rate
    max_tokens_per_minute: 50000
"""


def test_api_refuses_invalid_rules_and_keeps_what_is_stored(
    make_collector: Callable[..., BackgroundServer],
) -> None:
    collector = make_collector()
    client = api(collector.url)
    good = {
        "id": "r1",
        "kind": "retry_budget",
        "scope": "run",
        "budget": {"max_tokens": 9000},
        "notify": [{"type": "webhook", "url": "http://127.0.0.1:9/h", "secret": "k"}],
    }
    assert client.post("/rules", json=good).status_code == 201
    before = client.get("/rules").json()

    for bad in (
        {**good, "id": "r2", "budget": {"max_tokens": -5}},
        {**good, "id": "r2", "window": "soon"},
        {**good, "id": "r2", "kind": "vibes"},
        {**good, "id": "r2", "unexpected": 1},
    ):
        r = client.post("/rules", json=bad)
        assert r.status_code == 422, r.text
        assert r.json()["problems"] and r.json()["error"].startswith("invalid rule")
    r = client.put("/rules/r1", json={**good, "budget": {"max_tokens": -1}})
    assert r.status_code == 422 and "max_tokens must be >= 0" in r.json()["error"]
    assert client.post("/rules", content=b"{not json").status_code == 422
    assert client.post("/rules", json=good).status_code == 409  # no silent overwrite
    assert client.put("/rules/nope", json={**good, "id": "nope"}).status_code == 404
    assert client.put("/rules/nope", json=good).status_code == 422  # ids disagree
    assert client.get("/rules").json() == before  # nothing stored changed

    # Edits are versions; the stored secret survives a PUT of the redacted form.
    edited = {**good, "budget": {"max_tokens": 12000}}
    edited["notify"] = [{"type": "webhook", "url": "http://127.0.0.1:9/h", "secret": "***"}]
    r = client.put("/rules/r1", json=edited)
    assert r.status_code == 200 and r.json()["version"] == 2
    assert client.put("/rules/r1", json=edited).json()["version"] == 2  # unchanged: same version
    alerts = next(e for e in collector.app.state.collector.extensions if hasattr(e, "engine"))
    assert alerts.engine.rules.get("default", "r1").rule.notify[0].secret == "k"
    assert client.delete("/rules/r1").json() == {"deleted": "r1", "version": 3}
    history = client.get("/rules/r1/history").json()["versions"]
    assert [(v["version"], v["deleted"], v["budget"]["max_tokens"]) for v in history] == [
        (1, False, 9000), (2, False, 12000), (3, True, 12000)
    ]  # fmt: skip
    assert client.get("/rules").json() == {"rules": []}
    # Projects are separate.
    assert client.post("/rules", params={"project": "b"}, json=good).status_code == 201
    assert client.get("/rules").json() == {"rules": []}
    assert [r["id"] for r in client.get("/rules", params={"project": "b"}).json()["rules"]] == [
        "r1"
    ]

    # Finding counts read the analyzer's findings table (rows inserted here, read with FINAL).
    store = collector.app.state.collector.store
    now_ms = int(time.time() * 1000)
    row = ["default", "ab" * 16, "run-1", "runaway_loop", "k1", "high", "check_health",
           "health", ["s1"], "loop", 10, 0.0, 0, "{}", "runaway_loop@1", now_ms * 10**6, now_ms,
           0]  # fmt: skip
    columns = [
        "Project",
        "TraceId",
        "RunId",
        "Kind",
        "FindingKey",
        "Severity",
        "Component",
        "StepId",
        "EvidenceSpanIds",
        "Explanation",
        "WastedTokens",
        "WastedCostUsd",
        "WastedNs",
        "Detail",
        "DetectorVersion",
        "TraceStart",
        "AnalyzedAt",
        "IsDeleted",
    ]
    store.insert_rows("findings", [row], columns)
    findings_rule = {"kind": "finding_count", "finding_kind": "runaway_loop",
                     "min_severity": "high", "window": "10m"}  # fmt: skip
    dry = client.post("/test", json=findings_rule).json()
    assert dry["would_fire"] is True and dry["value"] == 1
    assert dry["evidence"]["samples"][0]["step_id"] == "health"
    assert (
        client.post("/test", json={**findings_rule, "min_severity": "critical"}).json()[
            "would_fire"
        ]
        is False
    )
    tombstone = [*row[:-2], now_ms + 1, 1]
    store.insert_rows("findings", [tombstone], columns)
    assert client.post("/test", json=findings_rule).json()["would_fire"] is False


def test_rules_file_loaded_at_start_and_an_invalid_file_changes_nothing(
    make_collector: Callable[..., BackgroundServer],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "alerts.yaml"
    path.write_text(GOOD_FILE)
    monkeypatch.setenv("PLANSCOPE_ALERTS_FILE", str(path))
    collector = make_collector()
    client = api(collector.url)
    rules = client.get("/rules").json()["rules"]
    assert [(r["id"], r["source"], r["version"]) for r in rules] == [
        ("burn", "file", 1), ("file-loops", "file", 1)
    ]  # fmt: skip
    state = client.get("/state").json()
    assert state["file"]["loaded"] is True and state["file"]["error"] is None

    # Restart with a broken file: a clear error, and the stored rules stay as they were.
    path.write_text(GOOD_FILE.replace("max_tokens_per_minute: 50000", "max_tokens_per_minute: -3")
                    + "    colour: red\n")  # fmt: skip
    collector = make_collector()
    client = api(collector.url)
    state = client.get("/state").json()
    assert state["file"]["loaded"] is False
    error = state["file"]["error"]
    assert str(path) in error and "rules[1].max_tokens_per_minute" in error
    assert "rules[1].colour: unknown field" in error
    assert client.get("/rules").json()["rules"] == rules

    # Restart with one rule removed and one edited: the file owns what it declared.
    path.write_text(GOOD_FILE.split("  - id: burn")[0].replace("0.05", "0.1"))
    collector = make_collector()
    client = api(collector.url)
    after = client.get("/rules").json()["rules"]
    assert [(r["id"], r["version"], r["threshold_share"]) for r in after] == [
        ("file-loops", 2, 0.1)
    ]

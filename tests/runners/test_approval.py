"""Plan approval by a person, end to end: ``planscope run --approve ask`` in a real
pseudo-terminal (pexpect) and ``--approve queue`` through a real collector's approval routes,
with the decision recorded on the plan span."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from planscope import semconv as A
from planscope_collector import BackgroundServer, CollectorSettings

from tests.conftest import Migrated, poll

pytestmark = pytest.mark.integration
pexpect = pytest.importorskip("pexpect", reason="pexpect is missing (pip install 'planscope[dev]')")

EDITOR = """\
import json, sys
path = sys.argv[1]
plan = json.load(open(path))
for step in plan["steps"]:
    if step["id"] == "summary":
        step["description"] = "write the reviewed audit summary"
json.dump(plan, open(path, "w"))
"""


RUN = ["-m", "planscope", "run", "--task", "ops-audit-small"]
KEY_A, KEY_B = "key-a", "key-b"
AUTH = {"Authorization": f"Bearer {KEY_A}"}
"""Every client uses the collector's API keys: the runner's exporter and approval queue (through
PLANSCOPE_API_KEY) and the test's reads, as a reviewer's dashboard would."""


@pytest.fixture(scope="module")
def collector(tmp_path_factory: pytest.TempPathFactory, migrated: Migrated) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("approvals")
    settings = CollectorSettings(
        data_dir=migrated.data_dir(tmp / "data"),
        port=0,
        flush_interval=0.05,
        api_keys={KEY_A: "team-a", KEY_B: "team-b"},
    )
    with BackgroundServer(settings) as server:
        yield server.url


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PLANSCOPE_API_KEY": KEY_A, **extra}


def _plan_spans(url: str, trace_id: str, count: int = 1) -> list[dict[str, Any]]:
    def plans(trace: dict[str, Any]) -> list[dict[str, Any]]:
        return [s for s in trace["spans"] if s["planscope_kind"] == "plan"]

    trace = poll(
        f"{url}/api/traces/{trace_id}",
        lambda t: len(plans(t)) >= count and any(s["name"] for s in plans(t)),
        headers=AUTH,
        what=f"plan spans of {trace_id}",
    )
    return plans(trace)


def _plan_json(attrs: dict[str, Any]) -> dict[str, Any]:
    value = attrs[A.PLAN_JSON]  # the query API parses JSON attributes
    return dict(json.loads(value) if isinstance(value, str) else value)


def _trace_id(output: str) -> str:
    found = re.search(r"trace ([0-9a-f]{32})", output)
    assert found, output
    return found.group(1)


def _spawn(url: str, tmp_path: Path) -> Any:
    editor = tmp_path / "editor.py"
    editor.write_text(EDITOR)
    return pexpect.spawn(
        sys.executable,
        [*RUN, "--approve", "ask", "--collector", url],
        env=_env(EDITOR=f"{sys.executable} {editor}"),
        encoding="utf-8",
        timeout=60,
        # poll(), not select(): the suite's process holds far more than 1024 descriptors by now
        use_poll=True,
    )


def test_terminal_edit_in_the_editor_is_recorded_on_the_plan_span(
    collector: str, tmp_path: Path
) -> None:
    child = _spawn(collector, tmp_path)
    child.expect("summary: write the audit summary for sre")
    child.expect(r"\[a\]pprove / \[e\]dit / \[r\]eject: ")
    child.sendline("x")  # not an answer: asked again
    child.expect("Answer a, e or r")
    child.sendline("e")
    child.expect("summary: write the reviewed audit summary")
    child.expect("Why the edit")
    child.sendline("clearer wording")
    child.expect(pexpect.EOF)
    output = child.before
    child.close()
    assert child.exitstatus == 0, output
    assert "plan_and_act / ops-audit-small: success" in output
    (plan,) = _plan_spans(collector, _trace_id(output))
    attrs = plan["attributes"]
    assert attrs[A.PLAN_APPROVAL] == A.APPROVAL_EDITED
    steps = {s["id"]: s for s in _plan_json(attrs)["steps"]}
    assert steps["summary"]["description"] == "write the reviewed audit summary"
    (event,) = [e for e in plan["events"] if e["name"] == A.EVENT_APPROVAL_GRANTED]
    assert event["attributes"][A.APPROVAL_REASON] == "clearer wording"
    assert event["attributes"][A.APPROVAL_REVIEWER] == "terminal"


def test_terminal_reject_with_a_reason_runs_nothing(collector: str, tmp_path: Path) -> None:
    child = _spawn(collector, tmp_path)
    child.expect(r"\[r\]eject: ")
    child.sendline("r")
    child.expect("Reason for rejecting: ")
    child.sendline("")  # a rejection needs a reason: asked again
    child.expect("Reason for rejecting: ")
    child.sendline("writes to the audit key are frozen")
    child.expect(pexpect.EOF)
    output = child.before
    child.close()
    assert "failure (plan rejected by the reviewer: writes to the audit key are frozen)" in output
    assert "0 tool calls" in output
    (plan,) = _plan_spans(collector, _trace_id(output))
    assert plan["attributes"][A.PLAN_APPROVAL] == A.APPROVAL_REJECTED
    (event,) = [e for e in plan["events"] if e["name"] == A.EVENT_APPROVAL_DENIED]
    assert event["attributes"][A.APPROVAL_REASON] == "writes to the audit key are frozen"


def _queued_run(url: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, *RUN, "--approve", "queue", "--collector", url, *extra],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _pending(url: str, run_marker: str | None = None) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = httpx.get(f"{url}/api/approvals", params={"status": "pending"}, headers=AUTH).json()
        if found["approvals"]:
            return dict(found["approvals"][0])
        time.sleep(0.1)
    raise AssertionError("no pending approval was filed")


def test_queue_waits_for_a_decision_through_the_collector(collector: str) -> None:
    proc = _queued_run(collector, "--approve-timeout", "60")
    try:
        pending = _pending(collector)
        assert pending["plan"]["steps"][0]["id"] == "read_0"
        assert pending["objective"].startswith("Audit config keys")
        path = f"{collector}/api/approvals/{pending['id']}/decision"
        refused = httpx.post(path, json={"decision": "reject", "reason": " "}, headers=AUTH)
        assert refused.status_code == 400 and "reason" in refused.json()["error"]
        edited = json.loads(json.dumps(pending["plan"]))
        edited["steps"][-1]["description"] = "summary checked by ops"
        ok = httpx.post(
            path,
            json={"decision": "edit", "plan": edited, "reason": "wording", "reviewer": "ana"},
            headers=AUTH,
        )
        assert ok.status_code == 200, ok.text
        again = httpx.post(path, json={"decision": "approve"}, headers=AUTH)
        assert again.status_code == 409  # the first decision wins
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert f"plan filed for approval {pending['id']}" in err
    (plan,) = _plan_spans(collector, _trace_id(out))
    assert plan["attributes"][A.PLAN_APPROVAL] == A.APPROVAL_EDITED
    assert _plan_json(plan["attributes"])["steps"][-1]["description"] == "summary checked by ops"
    decided = httpx.get(f"{collector}/api/approvals/{pending['id']}", headers=AUTH).json()
    assert (decided["status"], decided["reviewer"], decided["reason"]) == (
        "edited",
        "ana",
        "wording",
    )
    assert decided["trace_id"] == _trace_id(out)


def test_queue_timeout_applies_the_default_policy(collector: str) -> None:
    proc = _queued_run(collector, "--approve-timeout", "1", "--approve-default", "reject")
    out, err = proc.communicate(timeout=60)
    assert "plan rejected by the reviewer: no decision within 1s" in out, (out, err)
    found = httpx.get(
        f"{collector}/api/approvals", params={"status": "rejected"}, headers=AUTH
    ).json()
    assert any(a["reviewer"] == "policy:timeout" for a in found["approvals"])


def test_approval_routes_refuse_bad_input_with_a_reason(collector: str) -> None:
    assert httpx.get(f"{collector}/api/approvals/nothex", headers=AUTH).status_code == 400
    assert httpx.get(f"{collector}/api/approvals/{'0' * 32}", headers=AUTH).status_code == 404
    bad = httpx.post(
        f"{collector}/api/approvals",
        json={"run_id": "r", "plan_id": "p", "plan_version": 1, "plan": {"steps": []}},
        headers=AUTH,
    )
    assert bad.status_code == 400 and "steps" in bad.json()["error"]
    unknown = httpx.post(
        f"{collector}/api/approvals",
        json={"run_id": "r", "plan_id": "p", "plan_version": 1, "plan": {"steps": [{"id": "a"}]}}
        | {"extra": 1},
        headers=AUTH,
    )
    assert unknown.status_code == 400 and unknown.json()["field"] == "extra"


def test_approvals_are_scoped_to_the_api_keys_project(collector: str) -> None:
    body = {"run_id": "r", "plan_id": "p", "plan_version": 1, "plan": {"steps": [{"id": "a"}]}}
    assert httpx.post(f"{collector}/api/approvals", json=body).status_code == 401
    other = {"Authorization": f"Bearer {KEY_B}"}
    filed = httpx.post(f"{collector}/api/approvals", json=body, headers=AUTH)
    assert filed.status_code == 201
    path = f"{collector}/api/approvals/{filed.json()['id']}"
    assert httpx.get(path, headers=other).status_code == 404
    listed = httpx.get(f"{collector}/api/approvals", headers=other).json()["approvals"]
    assert listed == []
    decision = {"decision": "approve"}
    assert httpx.post(f"{path}/decision", json=decision, headers=other).status_code == 404
    assert httpx.post(f"{path}/decision", json=decision, headers=AUTH).status_code == 200


def test_terminal_without_an_answer_rejects_and_nothing_runs(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, *RUN, "--approve", "ask"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "plan rejected by the reviewer: no answer at the terminal (input closed)" in proc.stdout
    assert "0 tool calls" in proc.stdout

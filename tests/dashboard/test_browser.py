"""End to end in a real headless Chromium: collector + real runs + ``planscope dashboard``.

Debian's /usr/bin/chromium driven by playwright's Python API (never a browser download). Saves a
screenshot of each page to a temporary folder, or to docs/screenshots/ when asked
(``PLANSCOPE_UPDATE_SCREENSHOTS=1``, ``make screenshots``): a test run never changes tracked files.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import poll

from ._synthetic import INJECTION, imported_run, wait_stored
from .conftest import Filled

pytestmark = pytest.mark.integration

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = (
    Path(__file__).parents[2] / "docs" / "screenshots"
    if os.environ.get("PLANSCOPE_UPDATE_SCREENSHOTS") == "1"
    else Path(tempfile.gettempdir()) / "planscope-screenshots"
)
PAGE_TIMEOUT_MS = 90_000

if not CHROMIUM.exists():
    pytest.skip(
        f"{CHROMIUM} is missing: run `make browser` (Debian's chromium) for the browser tests",
        allow_module_level=True,
    )
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (python) is missing")


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(c) for c in path.read_text().split()] if path.exists() else []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def dashboard(filled: Filled) -> Iterator[str]:
    """``planscope dashboard`` as a subprocess on a free loopback port; stopped with SIGINT."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "PLANSCOPE_API_KEY"}
    env["PYTHONFAULTHANDLER"] = "1"  # a hang at teardown dumps every thread's stack (SIGABRT)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "planscope",
            "dashboard",
            "--collector",
            filled.url,
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/_stcore/health", timeout=2).text == "ok":
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                out = proc.stdout.read() if proc.stdout else ""
                raise AssertionError(f"the dashboard did not start: {out}")
            time.sleep(0.2)
        yield url
    finally:
        proc.send_signal(signal.SIGINT)  # what Ctrl-C sends
        try:
            code = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            for pid in [*_children(proc.pid), proc.pid]:  # Streamlit, then our wrapper
                os.kill(pid, signal.SIGABRT)
                time.sleep(1)
            proc.kill()
            out = proc.communicate()[0]
            raise AssertionError(f"planscope dashboard did not stop on SIGINT:\n{out}") from None
        assert code == 0, f"planscope dashboard exited with {code} on SIGINT"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def open_page(browser: Any, url: str) -> tuple[Any, float]:
    """Load ``url``; wait until the script finished and charts are drawn. Returns (page, s)."""
    page = browser.new_page(viewport={"width": 1500, "height": 1000})
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.dialogs = dialogs  # type: ignore[attr-defined]
    started = time.perf_counter()
    page.goto(url)
    page.wait_for_selector(
        "[data-testid=stApp][data-test-script-state=notRunning]", timeout=PAGE_TIMEOUT_MS
    )
    if page.locator("[data-testid=stPlotlyChart]").count():
        page.wait_for_selector("[data-testid=stPlotlyChart] .main-svg", timeout=PAGE_TIMEOUT_MS)
    return page, time.perf_counter() - started


def selectbox_values(page: Any) -> dict[str, str]:
    """Label -> shown value of every selectbox (the value lives in the widget's input)."""
    pairs = page.evaluate(
        "() => Array.from(document.querySelectorAll('[data-testid=stSelectbox]')).map(c =>"
        " [c.querySelector('label') ? c.querySelector('label').innerText : '',"
        "  c.querySelector('input') ? c.querySelector('input').value : ''])"
    )
    return {str(label).split(" (")[0]: str(value) for label, value in pairs}


def screenshot(page: Any, name: str) -> None:
    """The whole page: Streamlit scrolls inside its main block, so grow the viewport to fit."""
    height = page.evaluate(
        "() => { const m = document.querySelector('[data-testid=stMain]');"
        " const c = m && m.firstElementChild;"
        " return Math.max(m ? m.scrollHeight : 0, c ? c.scrollHeight : 0); }"
    )
    page.set_viewport_size({"width": 1500, "height": min(int(height) + 40, 6000)})
    page.wait_for_timeout(800)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def analyze(url: str) -> bool:
    return httpx.post(f"{url}/api/analyze", json={}, timeout=60).status_code == 200


def test_looping_run_in_a_real_browser(filled: Filled, dashboard: str, browser: Any) -> None:
    loops = [
        lb
        for lb in filled.labels
        if any(f["kind"] == "runaway_loop" for f in lb["expected_findings"])
        and lb["variant"] != "react"
    ]
    label = next((lb for lb in loops if lb["variant"] == "dag"), loops[0])
    loop = next(f for f in label["expected_findings"] if f["kind"] == "runaway_loop")
    has_findings = analyze(filled.url)
    page, seconds = open_page(
        browser, f"{dashboard}/?page=run&trace={label['trace_id']}&step={loop['step_id']}"
    )
    print(f"\nrun detail in Chromium: {seconds:.2f} s")
    assert page.get_by_text(f"trace {label['trace_id']}").count() == 1
    # The DAG: the looping step is a node labelled with its attempts (Plotly draws async).
    node = f"{loop['step_id']} x5"
    try:
        page.wait_for_function(
            "t => Array.from(document.querySelectorAll('[data-testid=stPlotlyChart] svg text'))"
            ".some(e => e.textContent === t)",
            arg=node,
            timeout=PAGE_TIMEOUT_MS,
        )
    except sync_api.Error:
        screenshot(page, "run-detail-failed")
        raise
    labels = page.evaluate(
        "() => Array.from(document.querySelectorAll('[data-testid=stPlotlyChart]'))[0]"
        ".querySelectorAll('svg text').length"
    )
    assert labels > 0
    # The step panel: the step and its attempts.
    chosen = selectbox_values(page)
    assert chosen["Plan step"] == f"{loop['step_id']} — failed, 5 attempt(s)"
    assert chosen["Attempt"] == "5"
    assert page.get_by_text(f"Attempts of {loop['step_id']}").count() == 1
    if has_findings:
        assert "runaway_loop" in chosen["Finding"], chosen
    else:
        assert page.get_by_text("Analysis isn't available on this collector").count() >= 1
    assert not page.dialogs  # type: ignore[attr-defined]
    screenshot(page, "run-detail")
    page.close()


def test_every_page_renders_and_injection_stays_text(
    filled: Filled, dashboard: str, browser: Any
) -> None:
    alerts = httpx.get(f"{filled.url}/api/alerts/rules").status_code == 200
    if alerts:
        rules = [
            {
                "id": "step-loops",
                "kind": "retry_budget",
                "scope": "step",
                "name": "a plan step over 3 attempts",
                "window": "1d",
                "budget": {"max_attempts_per_step": 3},
            },
            {
                "id": "hostile-name",
                "kind": "retry_budget",
                "scope": "run",
                "name": INJECTION,
                "window": "1d",
                "budget": {"max_replans": 50},
            },
        ]
        for rule in rules:
            httpx.post(f"{filled.url}/api/alerts/rules", json=rule)
        poll(
            f"{filled.url}/api/alerts/events",
            lambda b: any(e["rule_id"] == "step-loops" for e in b["events"]),
            what="the step-loops rule firing",
        )
    for name in ("overview", "traces", "findings", "compare", "alerts", "approvals", "scheduler"):
        page, _ = open_page(browser, f"{dashboard}/?page={name}")
        assert page.locator("[data-testid=stException]").count() == 0, name
        assert page.locator("[data-testid=stAlertContentError]").count() == 0, name
        if name == "alerts":
            if alerts:
                # Tables are drawn on a canvas: the rule ids show in the test selector. Wait
                # for it: under load the script state can read "not running" before the run
                # that draws the page has started.
                page.get_by_text("Rule to test").first.wait_for(timeout=PAGE_TIMEOUT_MS)
                values = selectbox_values(page)
                assert values.get("Rule to test") in {"step-loops", "hostile-name"}, values
                assert page.get_by_text("Firing now").count() == 1
                assert page.locator("script", has_text="alert('xss')").count() == 0
            else:
                assert page.get_by_text("Alerts aren't available").count() == 1
        screenshot(page, name)
        page.close()
    page, _ = open_page(browser, f"{dashboard}/?page=run&trace={filled.hostile_trace}")
    assert page.get_by_text(INJECTION, exact=False).count() >= 1
    assert page.locator("script", has_text="alert('xss')").count() == 0
    assert page.locator("img[src=x]").count() == 0
    assert page.locator("a[href^='javascript']").count() == 0
    assert not page.dialogs  # type: ignore[attr-defined]
    page.close()


OVERLAPS_JS = """
chart => {
  const boxes = sel => Array.from(chart.querySelectorAll(sel)).map(e => {
    const r = e.getBoundingClientRect();
    return {t: e.textContent, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom};
  }).filter(b => b.x1 > b.x0);
  const labels = boxes('.scatterlayer .textpoint text');
  const nodes = boxes('.scatterlayer .points path.point');
  const hit = (a, b) => a.x0 < b.x1 - 1 && b.x0 < a.x1 - 1 && a.y0 < b.y1 - 1 && b.y0 < a.y1 - 1;
  const out = [];
  labels.forEach((a, i) => labels.slice(i + 1).forEach(b => {
    if (hit(a, b)) out.push([a.t, b.t]);
  }));
  labels.forEach(a => nodes.forEach(n => { if (hit(a, n)) out.push([a.t, 'node']); }));
  return {labels: labels.length, nodes: nodes.length, overlaps: out};
}
"""


@pytest.mark.parametrize("which", ["imported", "replanned"])
def test_plan_graph_labels_never_overlap(
    filled: Filled, dashboard: str, browser: Any, which: str
) -> None:
    if which == "imported":
        run = imported_run(40)
        run.send(filled.url)
        wait_stored(filled.url, run.trace_id, len(run.spans))
        trace_id, steps = run.trace_id, 40
    else:
        replanned = [
            lb for lb in filled.labels if lb["variant"] == "dag" and lb["metrics"]["replans"] > 0
        ] or [lb for lb in filled.labels if lb["metrics"]["replans"] > 0]
        if not replanned:
            pytest.skip("this suite draw has no replanned run")
        trace_id, steps = replanned[0]["trace_id"], 2
    page, _ = open_page(browser, f"{dashboard}/?page=run&trace={trace_id}")
    chart = page.locator("[data-testid=stPlotlyChart]").first
    chart.locator(".scatterlayer .points path.point").first.wait_for(timeout=PAGE_TIMEOUT_MS)
    found = chart.evaluate(OVERLAPS_JS)
    screenshot(page, f"dag-{which}")
    assert found["nodes"] >= steps, found
    assert found["overlaps"] == [], found["overlaps"][:10]
    page.close()


def _svg_texts(page: Any) -> list[str]:
    return list(
        page.evaluate(
            "() => Array.from(document.querySelectorAll('[data-testid=stPlotlyChart] svg text'))"
            ".map(e => e.textContent)"
        )
    )


def test_host_agent_run_shows_hand_offs_and_application_lanes(
    filled: Filled, dashboard: str, browser: Any
) -> None:
    label = next(lb for lb in filled.labels if lb["variant"] == "host")
    page, _ = open_page(browser, f"{dashboard}/?page=run&trace={label['trace_id']}")
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('[data-testid=stPlotlyChart] svg text'))"
        ".some(e => e.textContent === 'host-agent')",
        timeout=PAGE_TIMEOUT_MS,
    )
    lanes = _svg_texts(page)
    assert any(t.endswith("-agent") and t != "host-agent" for t in lanes), lanes
    assert page.locator("[data-testid=stException]").count() == 0
    screenshot(page, "run-detail-host")
    page.close()


def test_a_plan_waits_for_its_rejection_in_the_approval_queue(
    filled: Filled, dashboard: str, browser: Any
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PLANSCOPE_API_KEY"}
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "planscope", "run", "--task", "files-merge-2"),
            *("--approve", "queue", "--approve-timeout", "120", "--collector", filled.url),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not httpx.get(f"{filled.url}/api/approvals?status=pending").json()["approvals"]:
            assert time.monotonic() < deadline and proc.poll() is None, "no plan was filed"
            time.sleep(0.2)
        page, _ = open_page(browser, f"{dashboard}/?page=approvals")
        page.get_by_text("merge").first.wait_for(timeout=PAGE_TIMEOUT_MS)
        page.get_by_label("Reason (required to reject)").fill("merge target is frozen")
        page.get_by_role("button", name="Reject").click()
        page.get_by_text("rejected").first.wait_for(timeout=PAGE_TIMEOUT_MS)
        screenshot(page, "approvals")
        page.close()
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert "plan rejected by the reviewer: merge target is frozen" in out, (out, err)

"""The ``planscope`` command behaves the same everywhere: help and defaults on every option, one
name per concept (old names still work, with a warning), and errors as one
``planscope: error: ...`` line with a non-zero exit, never a traceback."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from planscope import __version__
from planscope._cli import build_parser
from planscope_collector import BackgroundServer, CollectorSettings

from tests.conftest import Migrated


def planscope(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "planscope", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def in_process(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    """``planscope ARGS`` run in this process (seconds faster than a fresh interpreter); an
    exception that escapes ``main`` fails the test like a traceback would."""
    from planscope._cli import main

    with pytest.raises(SystemExit) as exit_:
        main(list(args))
    out = capsys.readouterr()
    return subprocess.CompletedProcess(args, int(exit_.value.code or 0), out.out, out.err)


def failed_cleanly(out: subprocess.CompletedProcess[str], *words: str) -> None:
    assert out.returncode != 0, out.stdout
    assert "Traceback" not in out.stderr, out.stderr
    line = next(x for x in out.stderr.splitlines() if x.startswith("planscope: error: "))
    for word in words:
        assert word in line, line


def parsers(
    parser: argparse.ArgumentParser, path: str = "planscope"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from parsers(child, f"{path} {name}")


def test_every_option_of_every_subcommand_has_help() -> None:
    missing = [
        f"{path} {action.option_strings or action.dest}"
        for path, parser in parsers(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction | argparse._HelpAction)
        and not action.help
    ]
    assert not missing, missing
    by_path = dict(parsers(build_parser()))
    serve = by_path["planscope serve"].format_help()
    # the defaults the collector really applies (not "none", not "keep forever"), and the
    # environment variable that applies when the flag is not given
    for text in ("default: 127.0.0.1, env PLANSCOPE_HOST", "default: 4318", "default: 30,"):
        assert text in " ".join(serve.split()), serve
    assert "default: 30," in by_path["planscope migrate"].format_help()


def test_settings_flags_leave_the_environment_in_charge_unless_given() -> None:
    from planscope_collector.cli import settings_from_args

    serve = dict(parsers(build_parser()))["planscope serve"]
    env = {"PLANSCOPE_PORT": "4999", "PLANSCOPE_TTL_DAYS": "7"}
    with pytest.MonkeyPatch.context() as mp:
        for name, value in env.items():
            mp.setenv(name, value)
        default = settings_from_args(serve.parse_args([]))
        given = settings_from_args(serve.parse_args(["--port", "5000"]))
    assert (default.port, default.ttl_days, given.port) == (4999, 7, 5000)


def test_version() -> None:
    out = planscope("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"planscope {__version__}"


@pytest.fixture(scope="module")
def collector(
    tmp_path_factory: pytest.TempPathFactory, migrated: Migrated
) -> Iterator[BackgroundServer]:
    data = migrated.data_dir(tmp_path_factory.mktemp("cli") / "data")
    with BackgroundServer(CollectorSettings(data_dir=data, port=0, flush_interval=0.05)) as s:
        yield s


@pytest.mark.integration
def test_analyze_of_an_unknown_trace_is_an_error_and_old_names_still_work(
    collector: BackgroundServer,
) -> None:
    unknown = "ab" * 16
    failed_cleanly(
        planscope("analyze", "--collector", collector.url, "--trace-id", unknown), unknown
    )
    # The deprecated spellings: --trace and PLANSCOPE_COLLECTOR_URL.
    env = {"PLANSCOPE_COLLECTOR_URL": collector.url, "PLANSCOPE_ENDPOINT": ""}
    old = planscope("analyze", "--trace", unknown, env=env)
    failed_cleanly(old, unknown)
    assert "--trace is deprecated" in old.stderr
    assert "PLANSCOPE_COLLECTOR_URL is deprecated" in old.stderr


@pytest.mark.integration
def test_migrate_on_a_data_dir_in_use(collector: BackgroundServer) -> None:
    data_dir = str(collector.settings.data_dir)
    failed_cleanly(planscope("migrate", "--data-dir", data_dir), "in use")


def test_run_with_a_fault_that_does_not_apply() -> None:
    out = planscope(
        "run", "--task", "files-merge-3", "--variant", "react", "--faults", "write_conflict"
    )
    failed_cleanly(out, "write_conflict", "react")


def test_dashboard_on_a_busy_port_fails_before_announcing_a_url() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = planscope("dashboard", "--port", str(port))
    failed_cleanly(out, str(port))
    assert "http://" not in out.stderr.replace(f"127.0.0.1:{port}", "")


def test_dashboard_stops_on_sigint_even_when_started_with_sigint_ignored() -> None:
    # A job started in the background of a script inherits SIGINT ignored (so did this suite's
    # CI, which hung at teardown): `kill -INT` must still stop the dashboard and its Streamlit.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    launch = (
        "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
        "os.execv(sys.executable, [sys.executable, '-m', 'planscope', 'dashboard', "
        f"'--collector', 'http://127.0.0.1:9', '--port', '{port}'])"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", launch],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # a Streamlit left running is killed with its group below
    )
    try:
        deadline = time.monotonic() + 90
        while not _answers(f"http://127.0.0.1:{port}/_stcore/health"):
            assert proc.poll() is None and time.monotonic() < deadline, "no dashboard"
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out = proc.communicate()[0]
    assert code == 0, out
    assert "Stopping..." in out, out  # Streamlit itself was stopped, not left running


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).text == "ok"
    except httpx.HTTPError:
        return False


@pytest.mark.integration
def test_alerts_add_of_an_existing_rule_names_replace(
    collector: BackgroundServer, tmp_path: Path
) -> None:
    rule = tmp_path / "rule.yaml"
    rule.write_text(
        "id: cli-steps\nkind: retry_budget\nscope: step\nwindow: 1h\n"
        "budget: {max_attempts_per_step: 3}\n"
    )
    add = ("alerts", "add", str(rule), "--collector", collector.url)
    assert planscope(*add).returncode == 0
    again = planscope(*add)
    assert again.returncode == 1 and "--replace" in again.stderr
    replaced = planscope(*add, "--replace")
    assert replaced.returncode == 0 and "version 1" in replaced.stdout  # unchanged: no bump


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("run", "--slots", "0"), ("--slots", "at least 1")),
        (("suite", "--runs", "-3"), ("--runs",)),
        (("demo", "--port", "-1"), ("--port", "0..65535")),
        (("dashboard", "--port", "99999"), ("--port",)),
        (("serve", "--ttl-days", "0"), ("--ttl-days",)),
        (("evaluate", "--fault-rate", "2"), ("--fault-rate", "0..1")),
        (("alerts", "events", "--limit", "many"), ("--limit", "'many'")),
        (("nope",), ("'nope'",)),
    ],
)
def test_bad_numbers_and_names_are_usage_errors(
    args: tuple[str, ...], words: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    failed_cleanly(in_process(capsys, *args), *words)


def test_bad_files_and_unreachable_collectors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "missing.json")
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    # port 9 (discard) on loopback: nothing listens there
    down = "http://127.0.0.1:9"
    for args, words in (
        (("evaluate", "--labels", missing, "--collector", down), (missing,)),
        (("serve", "--keys-file", missing, "--port", "0"), (missing,)),
        (("serve", "--data-dir", str(a_file), "--port", "0"), ("not a directory",)),
        (("migrate", "--data-dir", str(a_file)), ("not a directory",)),
        (("run", "--task", "files-merge-3", "--collector", down), ("cannot reach", down)),
        (("suite", "--runs", "2", "--collector", down), ("cannot reach", down)),
        (("analyze", "--collector", down), ("cannot reach",)),
        (("alerts", "list", "--collector", down), ("cannot reach",)),
        (("attribute", "--trace-id", "ab" * 16, "--collector", down), ("cannot reach",)),
    ):
        failed_cleanly(in_process(capsys, *args), *words)


def test_serve_on_a_busy_port_fails_before_starting(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        out = planscope("serve", "--port", port, "--grpc-port", "off", "--data-dir", str(tmp_path))
    failed_cleanly(out, port, "--port")
    assert "Application startup" not in out.stderr
    assert not (tmp_path / "store").exists()  # nothing was opened


@pytest.mark.integration
def test_refusals_name_the_reason(
    collector: BackgroundServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = collector.url
    failed_cleanly(in_process(capsys, "analyze", "--collector", url, "--trace-id", "xyz"), "32 hex")
    for action in ("rm", "test"):
        out = in_process(capsys, "alerts", action, "nope", "--collector", url)
        failed_cleanly(out, "no rule 'nope'")

"""``planscope dashboard``: run the Streamlit app headless against a collector's query API."""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from planscope import PlanscopeError
from planscope import environment_variables as ENV
from planscope.cli import client_settings, collector_options, port

APP_FILE = Path(__file__).with_name("app.py")


def register(subparsers: Any) -> None:
    """Add the ``dashboard`` subcommand (called by ``planscope``'s plugin discovery)."""
    p = subparsers.add_parser(
        "dashboard", help="run the web dashboard (Streamlit) against a collector"
    )
    collector_options(p)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument("--port", type=port, default=8501, help="port to listen on")
    p.set_defaults(func=run)


def command(args: argparse.Namespace) -> tuple[list[str], dict[str, str]]:
    """The ``streamlit run`` command line and environment for these arguments.

    >>> cmd, env = command(argparse.Namespace(collector="http://c:1", api_key=None,
    ...                    project=None, host="127.0.0.1", port=8600))
    >>> cmd[1:4], env["PLANSCOPE_ENDPOINT"]
    (['-m', 'streamlit', 'run'], 'http://c:1')
    """
    settings = client_settings(args)
    env = dict(os.environ)
    env[ENV.PLANSCOPE_ENDPOINT] = settings.base_url
    env.pop(ENV.PLANSCOPE_COLLECTOR_URL, None)
    for name, value in (
        (ENV.PLANSCOPE_API_KEY, settings.api_key),
        (ENV.PLANSCOPE_PROJECT, settings.project),
    ):
        if value:
            env[name] = value
        else:
            env.pop(name, None)
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(APP_FILE),
        "--server.headless=true",
        f"--server.address={args.host}",
        f"--server.port={args.port}",
        "--browser.gatherUsageStats=false",
        "--server.fileWatcherType=none",
        "--global.developmentMode=false",
        "--client.toolbarMode=minimal",
        "--theme.base=light",
    ]
    return cmd, env


def run(args: argparse.Namespace) -> int:
    """Run Streamlit in a child process; SIGINT (Ctrl-C) or SIGTERM stops it cleanly."""
    try:
        import streamlit  # noqa: F401
    except ImportError:
        raise PlanscopeError(
            "this command needs the 'dashboard' extra: pip install 'planscope[dashboard]'"
        ) from None
    _check_port(args.host, args.port)
    cmd, env = command(args)
    print(
        f"planscope dashboard on http://{args.host}:{args.port} "
        f"(collector {env[ENV.PLANSCOPE_ENDPOINT]})",
        file=sys.stderr,
    )
    proc = subprocess.Popen(cmd, env=env)

    def forward(signum: int, frame: object) -> None:
        if proc.poll() is None:
            proc.send_signal(signum)

    # Our own handlers, as Streamlit and uvicorn install theirs: a process started in the
    # background of a script inherits SIGINT ignored, and Python would then never raise
    # KeyboardInterrupt, leaving the dashboard deaf to `kill -INT`.
    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        return _exit_code(proc.wait())
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _check_port(host: str, port: int) -> None:
    """Fail before announcing a URL that would not be ours (Streamlit would only log it)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Streamlit's server does
        try:
            s.bind((host, port))
        except OSError as exc:
            raise PlanscopeError(
                f"cannot listen on {host}:{port} ({exc.strerror}); pick another --port"
            ) from None


def _exit_code(code: int) -> int:
    # Stopped by our own signal forwarding: a clean exit.
    return 0 if code in (0, -signal.SIGINT, -signal.SIGTERM, 130) else code

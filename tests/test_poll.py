"""The tests' one way to wait for a server (``tests.conftest.poll``), against a real loopback
HTTP server that answers as slowly as a loaded machine does."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.conftest import poll


class _Slow(BaseHTTPRequestHandler):
    """Answers ``{"n": <request number>}``, the first request after 5.5 s (past httpx's
    default timeout of 5 s, which made every polling helper flaky under load)."""

    served = 0

    def do_GET(self) -> None:
        _Slow.served += 1
        if _Slow.served == 1:
            time.sleep(5.5)
        body = json.dumps({"n": _Slow.served}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def slow() -> Iterator[str]:
    _Slow.served = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_a_slow_answer_is_waited_for_and_a_condition_never_met_fails(slow: str) -> None:
    assert poll(slow, lambda body: body["n"] >= 2) == {"n": 2}
    with pytest.raises(AssertionError, match=r"answer 1000: not within 0\.2 s"):
        poll(slow, lambda body: body["n"] >= 1000, timeout=0.2, what="answer 1000")

"""An ASGI app under uvicorn in a thread on a free loopback port: the one server the corpus's
fake model APIs (:mod:`._fake_anthropic`, :mod:`._fake_gemini`, :mod:`._fake_responses`) run
in, each adding only its routes and the SDK's ``base_url``.

>>> from fastapi import FastAPI
>>> with Loopback(FastAPI(), "doc") as server:
...     server.origin.startswith("http://127.0.0.1:")
True
"""

from __future__ import annotations

import threading
import time
from typing import Any, Self

import uvicorn


class Loopback:
    """``app`` served on 127.0.0.1 while the ``with`` block runs (``name`` names its thread)."""

    def __init__(self, app: Any, name: str) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
        self._name = name
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name=name, daemon=True)

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:{port}``, once started."""
        port = self._server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __enter__(self) -> Self:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the {self._name} server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)

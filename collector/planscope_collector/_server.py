"""Running the collector: ``planscope serve`` and an in-process server for demos and tests."""

from __future__ import annotations

import logging
import socket
import threading
import time

import uvicorn

from ._app import create_app
from ._settings import CollectorSettings


def serve(settings: CollectorSettings, log_level: str = "info") -> None:
    """Run the collector in the foreground until SIGINT/SIGTERM, then drain and stop."""
    logging.basicConfig(
        level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level=log_level,
        timeout_graceful_shutdown=10,
    )


class BackgroundServer:
    """A real uvicorn collector in a thread, on a loopback port (``port=0`` picks a free one).

    >>> from pathlib import Path; import tempfile
    >>> with BackgroundServer(CollectorSettings(data_dir=Path(tempfile.mkdtemp()), port=0)) as s:
    ...     s.url.startswith("http://127.0.0.1:")
    True
    """

    def __init__(self, settings: CollectorSettings, log_level: str = "warning") -> None:
        port = settings.port or _free_port(settings.host)
        self.settings = settings.model_copy(update={"port": port})
        self.app = create_app(self.settings)
        config = uvicorn.Config(
            self.app, host=self.settings.host, port=port, log_level=log_level, lifespan="on"
        )
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self.server.run, name="planscope-collector", daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://{self.settings.host}:{self.settings.port}"

    def start(self, timeout: float = 60.0) -> BackgroundServer:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("collector failed to start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=60)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])

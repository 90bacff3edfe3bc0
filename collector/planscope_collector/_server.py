"""Running the collector: ``planscope serve`` and an in-process server for demos and tests."""

from __future__ import annotations

import ctypes
import logging
import os
import socket
import threading
import time

import uvicorn

from ._app import create_app
from ._errors import CollectorError, ServerNotStarted
from ._settings import CollectorSettings

EMBEDDED_ALLOCATOR = "percpu_arena:disabled,narenas:1"
"""jemalloc options of the embedded engine in ``planscope serve`` (chDB reads
``JE_MALLOC_CONF`` when it loads; one set by the user wins). One arena instead of one per CPU,
so memory freed on one CPU is reused on the other: ~25 % fewer page faults per ingested span,
the same peak RSS (docs/storage.md, "Memory")."""


def _keep_request_buffers() -> None:
    """glibc's malloc serves the request path's megabyte buffers (bodies, the exactness check's
    serialization) from its heap and keeps freed ones, instead of mapping fresh pages for each
    one (a page fault per 4 KiB): its dynamic threshold left that to chance (docs/benchmarks.md,
    "The request path's CPU"). chDB allocates with its own jemalloc (``EMBEDDED_ALLOCATOR``)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return
    mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD
    mallopt(-1, 128 << 20)  # M_TRIM_THRESHOLD


def serve(settings: CollectorSettings, log_level: str = "info") -> None:
    """Run the collector in the foreground until SIGINT/SIGTERM, then drain and stop."""
    os.environ.setdefault("JE_MALLOC_CONF", EMBEDDED_ALLOCATOR)  # before the store loads chDB
    _keep_request_buffers()
    logging.basicConfig(
        level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    # Fail before the store is opened and uvicorn logs its start, saying what to do.
    if settings.port:
        _check_port_free(settings.host, settings.port, "OTLP/HTTP and the API", "--port N")
    if settings.grpc_port and settings.role != "analyze":
        _check_port_free(
            settings.host,
            settings.grpc_port,
            "OTLP/gRPC",
            "--grpc-port N (0 = any free port) or turn gRPC off with --grpc-port off",
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

    In-process servers (demos, tests, benchmarks) speak OTLP/gRPC only when asked
    (``grpc=True``), so they never compete for port 4317; ``grpc_port=0`` picks a free one.

    >>> from pathlib import Path; import tempfile
    >>> with BackgroundServer(CollectorSettings(data_dir=Path(tempfile.mkdtemp()), port=0)) as s:
    ...     s.url.startswith("http://127.0.0.1:")
    True
    """

    def __init__(
        self,
        settings: CollectorSettings,
        log_level: str = "warning",
        *,
        grpc: bool = False,
        start_timeout: float = 60.0,
    ) -> None:
        self.start_timeout = start_timeout
        """How long :meth:`start` (and ``with``) waits for the server before giving up."""
        port = settings.port or _free_port(settings.host)
        grpc_port = settings.grpc_port if grpc else None
        self.settings = settings.model_copy(update={"port": port, "grpc_port": grpc_port})
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

    @property
    def grpc_target(self) -> str:
        """``host:port`` of the OTLP/gRPC receiver (started with ``grpc=True``)."""
        receiver = getattr(self.app.state, "grpc", None)
        if receiver is None:
            raise RuntimeError("this server was started without OTLP/gRPC")
        return f"{self.settings.host}:{receiver.port}"

    def start(self, timeout: float | None = None) -> BackgroundServer:
        self._thread.start()
        limit = self.start_timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while not self.server.started:
            if not self._thread.is_alive():
                raise ServerNotStarted("collector failed to start: its server stopped starting")
            if time.monotonic() > deadline:
                # stopped before raising: a thread left starting (the store opening, migrations)
                # while the interpreter exits can crash it in the store's native code
                self.stop()
                raise ServerNotStarted(
                    f"collector failed to start within {limit:g} s (a busy machine? "
                    "a slow disk under the data directory?)"
                )
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=60)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _check_port_free(host: str, port: int, what: str, fix: str) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn's socket does
        try:
            s.bind((host, port))
        except OSError as exc:
            raise CollectorError(
                f"cannot listen for {what} on {host}:{port} ({exc.strerror}); pick another "
                f"port with {fix}"
            ) from None


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])

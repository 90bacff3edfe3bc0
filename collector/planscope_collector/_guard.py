"""The ASGI middleware in front of every route: bounded requests, and the key before the body.

In this order, before any route runs:

1. at most ``max_concurrent_requests`` at once: more get 503 + ``Retry-After`` right away
   (nothing queues unboundedly; ``/healthz`` is exempt so liveness never fails under load);
2. with API keys, the ``Authorization`` header names a known key (401 otherwise) - checked
   before a byte of the body is read, on every route but ``/healthz`` and ``/readyz`` (which
   then answers only whether the collector is ready);
3. the body: ``Content-Length`` above the route's cap is 413 before reading; while it streams
   the count is checked again (413), and it must arrive within ``upload_timeout_seconds``
   (408). The route then reads the buffered body.

A route's own scope checks (``admin`` for rule changes) come after, in the route.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

import anyio

from ._auth import Authenticator
from ._errors import IngestRejected, PayloadTooLarge, RequestTimeout

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

OPEN_PATHS = frozenset({"/healthz", "/readyz"})
"""Answered without a key; ``/readyz`` then says only ready or not."""


@dataclass(frozen=True)
class RequestLimits:
    """The bounds the guard enforces (from ``CollectorSettings``)."""

    max_body_bytes: int
    max_api_body_bytes: int
    max_concurrent_requests: int
    upload_timeout_seconds: float
    retry_after_seconds: int


class RequestGuard:
    """Wraps the app (``RequestGuard(app, auth=..., limits=...)``); see the module docstring."""

    def __init__(self, app: ASGIApp, *, auth: Authenticator, limits: RequestLimits) -> None:
        self.app = app
        self.auth = auth
        self.limits = limits
        self.active = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] == "/healthz":
            await self.app(scope, receive, send)
            return
        limits = self.limits
        if self.active >= limits.max_concurrent_requests:
            await _answer(
                send,
                503,
                f"more than {limits.max_concurrent_requests} requests at once; retry later",
                {"retry-after": str(limits.retry_after_seconds)},
            )
            return
        self.active += 1
        try:
            await self._guarded(scope, receive, send)
        finally:
            self.active -= 1

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            if self.auth.enabled and scope["path"] not in OPEN_PATHS:
                self.auth.key_for(headers.get("authorization"))
            cap = (
                self.limits.max_body_bytes
                if scope["path"].startswith("/v1/")
                else self.limits.max_api_body_bytes
            )
            declared = headers.get("content-length", "")
            if declared.isdigit() and int(declared) > cap:
                raise PayloadTooLarge(f"body of {declared} bytes exceeds the {cap}-byte limit")
            body = await self._read(receive, cap)
        except IngestRejected as exc:
            await _answer(send, exc.status_code, exc.reason)
            return
        if body is None:  # the client went away mid-upload: nothing to answer, nothing accepted
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _read(self, receive: Receive, cap: int) -> bytes | None:
        chunks: list[bytes] = []
        size = 0
        try:
            with anyio.fail_after(self.limits.upload_timeout_seconds):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return None
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > cap:
                        raise PayloadTooLarge(f"body exceeds the {cap}-byte limit")
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        return b"".join(chunks)
        except TimeoutError:
            raise RequestTimeout(
                f"the body did not arrive within {self.limits.upload_timeout_seconds:g}s"
            ) from None


async def _answer(
    send: Send, status: int, reason: str, extra: dict[str, str] | None = None
) -> None:
    body = json.dumps({"error": reason}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in (extra or {}).items()]
    if status in (408, 413):  # the rest of the body is not read: the connection cannot be reused
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

"""The collector's HTTP surface: OTLP ingest, health, and the query API for dashboard and CLI."""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
import planscope
from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from planscope import api
from starlette.exceptions import HTTPException

from ._approvals import router as approvals_router
from ._auth import Authenticator
from ._errors import IngestRejected, NotIngesting, SpoolFull, Unauthorized
from ._guard import RequestGuard, RequestLimits
from ._ingest import IngestLimits, RecentBatches, accept
from ._otlp import _MAX_NANOS, PROTOBUF, ParseLimits
from ._query import TraceQueries
from ._settings import CollectorSettings, redact_url
from ._spool import Spool
from ._stats import router as stats_router
from ._writer import Writer
from .extensions import Extension, api_error, load_extensions, project_of
from .storage import Store, StoreError, StoreUnavailable, open_store

log = logging.getLogger("planscope.collector")


class Collector:
    """The collector's parts, wired together; ``create_app`` puts HTTP in front of them.

    Usable without HTTP in tests and benchmarks:

    >>> from pathlib import Path
    >>> import tempfile
    >>> c = Collector(CollectorSettings(data_dir=Path(tempfile.mkdtemp())))
    >>> c.start(); c.stop()
    """

    def __init__(self, settings: CollectorSettings, store: Store | None = None) -> None:
        self.settings = settings
        self._given_store = store
        self.auth = Authenticator(settings.api_keys)
        self.limits = IngestLimits(
            settings.max_decompressed_bytes,
            settings.spool_max_bytes,
            settings.retry_after_seconds,
            ParseLimits(settings.max_json_values, settings.max_resource_expansion_bytes),
        )
        self.recent = RecentBatches(settings.dedup_window_seconds)
        self.decode_slots = threading.BoundedSemaphore(settings.max_concurrent_decodes)
        self.spool: Spool | None = None
        self.writer: Writer | None = None
        self.extensions: list[Extension] = []

    @property
    def store(self) -> Store:
        """The open store; raises ``StoreUnavailable`` while it cannot be reached."""
        store = self.writer.store if self.writer is not None else None
        if store is None:
            raise StoreUnavailable("the store has not been reached yet")
        return store

    def _connect(self) -> Store:
        store = self._given_store or open_store(self.settings.dsn)
        if self.settings.migrate_on_start:
            store.migrate(ttl_days=self.settings.ttl_days)
        return store

    def start(self) -> None:
        self.spool = Spool(
            self.settings.spool_dir, segment_max_bytes=self.settings.segment_max_bytes
        )
        self.writer = Writer(
            self.spool,
            self._connect,
            flush_interval=self.settings.flush_interval,
            on_flush=self._on_flush,
        )
        try:
            self.writer.store = self._connect()
        except StoreError as exc:
            # Ingest still works: requests are spooled and the writer keeps trying the store.
            log.warning("store unavailable at start (%s); accepting into the spool", exc)
        self._seed_recent(self.spool)
        self.writer.start()
        if self.settings.role != "ingest":  # ingest-only replicas leave analysis to others
            for extension in self.extensions:
                extension.start()
        log.info(
            "collector started: store=%s spool=%s",
            redact_url(self.settings.dsn),
            self.settings.spool_dir,
        )

    def _seed_recent(self, spool: Spool) -> None:
        window = self.settings.dedup_window_seconds
        if not window:
            return
        if self.writer is not None and self.writer.store is not None:
            try:
                hashes = self.writer.store.known_batch_hashes(window)
                self.recent.seed(bytes.fromhex(h) for h in hashes)
            except StoreError as exc:
                log.warning("could not load recent batch digests: %s", exc)
        for segment in spool.seal():
            self.recent.seed(record.digest for record in segment.records())

    def _call_extensions(self, hook: str, *args: Any) -> None:
        """Call ``hook`` on every extension that has it; one that fails is logged, not fatal."""
        for extension in self.extensions:
            method = getattr(extension, hook, None)
            if method is None:
                continue
            try:
                method(*args)
            except Exception:
                log.exception("extension %s failed", hook)

    def _on_flush(self, trace_ids: set[tuple[str, str]]) -> None:
        if self.settings.role != "ingest":  # ingest-only replicas leave analysis to others
            self._call_extensions("on_flush", trace_ids)

    def enrich_trace(self, project: str, trace_id: str, detail: dict[str, Any]) -> None:
        """Let extensions add to a trace's detail (the analyzer adds its ``findings``)."""
        self._call_extensions("enrich_trace", project, trace_id, detail)

    def analysis_done(self, projects: set[str]) -> None:
        """Called by the analyzer after a pass: extensions with ``on_analyzed`` react (alerts)."""
        self._call_extensions("on_analyzed", projects)

    def stop(self) -> None:
        if self.settings.role != "ingest":  # only started extensions are stopped
            self._call_extensions("stop")
        if self.writer is not None:
            self.writer.stop()
            if self.writer.store is not None:
                self.writer.store.close()
        if self.spool is not None:
            self.spool.close()

    def ingest(
        self,
        body: bytes,
        content_type: str | None,
        content_encoding: str | None,
        project: str | None,
    ) -> int:
        """Accept one OTLP request; returns the number of spans. Raises on refusal."""
        assert self.spool is not None, "collector is not started"
        if self.settings.role == "analyze":
            raise NotIngesting(
                "this collector runs with --role analyze; send spans to an ingest one"
            )
        result = accept(
            self.spool,
            self.recent,
            self.limits,
            body=body,
            content_type=content_type,
            content_encoding=content_encoding,
            project=project,
            decode_slots=self.decode_slots,
        )
        return result.spans

    def ready(self) -> dict[str, Any]:
        assert self.spool is not None and self.writer is not None
        store = self.writer.store
        # Never queue behind the writer's insert (up to a second for a large segment): a store
        # that is busy inserting is up, and the writer's stats report its failures.
        store_ok = (
            store is not None and self.writer.stats.store_available and store.ping(wait=False)
        )
        stats = self.writer.stats
        return {
            "ready": store_ok and self.spool.pending_bytes < self.settings.spool_max_bytes,
            "store": "up" if store_ok else "down",
            "spool_pending_bytes": self.spool.pending_bytes,
            "spool_max_bytes": self.settings.spool_max_bytes,
            "spans_written": stats.spans_written,
            "requests_quarantined": self.spool.quarantine.count(),
            "last_error": stats.last_error,
        }


def _error(status: int, reason: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return api_error(status, reason, headers=headers)


def _invalid_request(exc: RequestValidationError) -> JSONResponse:
    """FastAPI's validation errors (422 with a ``detail`` list) in the API's one error shape:
    a 400 naming the parameter and what is wrong with it."""
    problems, fields = [], []
    for err in exc.errors():
        loc = [str(part) for part in err.get("loc", ())]
        # ("query", "limit") -> "limit"; a body that is not JSON -> "body"
        field = ".".join(p for p in loc[1:] if not p.isdigit()) or (loc[0] if loc else "request")
        fields.append(field)
        problems.append(f"{field}: {err.get('msg', 'invalid')}")
    return api_error(
        400,
        "; ".join(problems) or "invalid request",
        field=fields[0] if fields else None,
        problems=problems if len(problems) > 1 else None,
    )


def _openapi_errors(app: FastAPI) -> None:
    """The schema at /openapi.json describes the errors the API really answers: FastAPI lists
    its own 422 ``HTTPValidationError`` on every route; ours are 400s of one ``Error`` shape."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = build()
        error = {"$ref": "#/components/schemas/Error"}
        for path in schema.get("paths", {}).values():
            for operation in path.values():
                responses = operation.get("responses", {})
                if responses.pop("422", None) is not None:
                    responses["400"] = {
                        "description": "Bad request",
                        "content": {"application/json": {"schema": error}},
                    }
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        components.pop("HTTPValidationError", None)
        components.pop("ValidationError", None)
        components["Error"] = {
            "type": "object",
            "required": ["error"],
            "properties": {
                "error": {"type": "string", "description": "what is wrong, for a person"},
                "field": {"type": "string", "description": "the parameter at fault"},
                "problems": {"type": "array", "items": {"type": "string"}},
            },
        }
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def create_app(settings: CollectorSettings, store: Store | None = None) -> FastAPI:
    """The FastAPI app of ``planscope serve``.

    >>> from pathlib import Path
    >>> app = create_app(CollectorSettings(data_dir=Path("/tmp/planscope-doc")))
    >>> sorted(p for r in app.routes if (p := getattr(r, "path", "")).startswith("/v1"))
    ['/v1/traces']
    """
    collector = Collector(settings, store)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(collector.start)
        receiver = None
        try:
            if settings.grpc_port is not None and settings.role != "analyze":
                from ._grpc import GrpcReceiver  # same accept path as /v1/traces

                receiver = GrpcReceiver(collector)
                receiver.start()
            app.state.grpc = receiver
            yield
        finally:
            if receiver is not None:
                await anyio.to_thread.run_sync(receiver.stop)
            await anyio.to_thread.run_sync(collector.stop)

    # No Swagger UI / ReDoc pages: FastAPI loads them from a CDN, blank offline. The schema
    # stays at /openapi.json for any OpenAPI viewer.
    app = FastAPI(
        title="planscope collector",
        version=planscope.__version__,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        **_no_self_telemetry(),
    )
    _openapi_errors(app)
    app.state.collector = collector
    app.add_middleware(
        RequestGuard,
        auth=collector.auth,
        limits=RequestLimits(
            settings.max_body_bytes,
            settings.max_api_body_bytes,
            settings.max_concurrent_requests,
            settings.upload_timeout_seconds,
            settings.retry_after_seconds,
        ),
    )
    collector.extensions = load_extensions(collector)
    for extension in collector.extensions:
        if extension.router is not None:
            app.include_router(extension.router)
    app.include_router(stats_router)
    app.include_router(approvals_router)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _invalid_request(exc)

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> JSONResponse:
        # Starlette's own answers (unknown route 404, 405) in the same shape
        return api_error(exc.status_code, str(exc.detail), headers=dict(exc.headers or {}))

    @app.exception_handler(IngestRejected)
    async def _rejected(request: Request, exc: IngestRejected) -> JSONResponse:
        retry = (
            {"Retry-After": str(settings.retry_after_seconds)} if exc.status_code == 503 else None
        )
        return _error(exc.status_code, exc.reason, retry)

    @app.exception_handler(SpoolFull)
    async def _full(request: Request, exc: SpoolFull) -> JSONResponse:
        return _error(503, str(exc), {"Retry-After": str(exc.retry_after_seconds)})

    @app.exception_handler(StoreError)
    async def _store_error(request: Request, exc: StoreError) -> JSONResponse:
        # The store's text names paths, hosts and SQL: logged for the operator, not answered.
        log.warning("store error answering %s: %s", request.url.path, exc)
        return _error(503, "store unavailable; retry later", {"Retry-After": "5"})

    @app.post("/v1/traces")
    async def ingest(request: Request) -> Response:
        project = collector.auth.project_for(request.headers.get("authorization"), "ingest")
        body = await request.body()  # size, time and key already checked by RequestGuard
        try:
            await anyio.to_thread.run_sync(
                collector.ingest,
                body,
                request.headers.get("content-type"),
                request.headers.get("content-encoding"),
                project,
            )
        except OSError as exc:  # the disk refused the spool write: nothing was accepted
            log.error("spool write failed: %s", exc)
            return _error(
                503, "spool write failed", {"Retry-After": str(settings.retry_after_seconds)}
            )
        if request.headers.get("content-type", "").startswith(PROTOBUF):
            return Response(ExportTraceServiceResponse().SerializeToString(), media_type=PROTOBUF)
        return JSONResponse({})

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz(request: Request) -> JSONResponse:
        state = await anyio.to_thread.run_sync(collector.ready)
        status = 200 if state["ready"] else 503
        if collector.auth.enabled:  # details (errors, counters of every tenant) need a key
            try:
                collector.auth.key_for(request.headers.get("authorization"))
            except Unauthorized:
                return JSONResponse({"ready": state["ready"]}, status_code=status)
        return JSONResponse(state, status_code=status)

    @app.get("/metrics")
    async def metrics() -> Response:
        state = await anyio.to_thread.run_sync(collector.ready)
        lines = []
        for name, help_text, value in (
            ("ready", "1 when the collector accepts and stores spans", state["ready"]),
            ("store_up", "1 when the store answers", state["store"] == "up"),
            ("spool_pending_bytes", "accepted bytes not yet stored", state["spool_pending_bytes"]),
            ("spans_written_total", "spans stored since start", state["spans_written"]),
            (
                "requests_quarantined",
                "requests the store refused for good, kept for replay",
                state["requests_quarantined"],
            ),
        ):
            lines += [
                f"# HELP planscope_{name} {help_text}",
                f"# TYPE planscope_{name} {'counter' if name.endswith('_total') else 'gauge'}",
                f"planscope_{name} {int(value)}",
            ]
        return Response("\n".join(lines) + "\n", media_type="text/plain; version=0.0.4")

    @app.get("/api/traces", response_model=api.TracesPage)
    async def list_traces(
        proj: Annotated[str, Depends(project_of)],
        service: str | None = None,
        status: Annotated[str | None, Query(pattern="^(ok|error)$")] = None,
        since: Annotated[
            int | None, Query(description="start time, unix ns", ge=0, le=_MAX_NANOS)
        ] = None,
        until: Annotated[
            int | None, Query(description="end time, unix ns", ge=0, le=_MAX_NANOS)
        ] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 50,
        offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
        agent: Annotated[str | None, Query(max_length=512)] = None,
        variant: Annotated[str | None, Query(max_length=512)] = None,
        outcome: Annotated[str | None, Query(max_length=64)] = None,
        q: Annotated[str | None, Query(max_length=256, description="substring of ids")] = None,
    ) -> dict[str, Any]:
        queries = TraceQueries(collector.store)
        return await anyio.to_thread.run_sync(
            lambda: queries.list_traces(
                proj,
                service,
                status,
                since,
                until,
                limit,
                offset,
                agent=agent,
                variant=variant,
                outcome=outcome,
                q=q,
            )
        )

    @app.get("/api/traces/{trace_id}")
    async def get_trace(
        trace_id: str,
        proj: Annotated[str, Depends(project_of)],
        offset: Annotated[int, Query(ge=0, le=1 << 31, description="first span of the page")] = 0,
        limit: Annotated[int | None, Query(ge=1, description="spans per page")] = None,
    ) -> JSONResponse:
        tid = trace_id.lower()
        if not api.is_trace_id(tid):
            return api_error(400, "trace id must be 32 hex characters", field="trace_id")
        page = min(limit or settings.max_trace_spans, settings.max_trace_spans)
        q = TraceQueries(collector.store)
        detail = await anyio.to_thread.run_sync(lambda: q.get_trace(proj, tid, offset, page))
        if detail is None:
            return _error(404, f"trace {tid} not found")
        await anyio.to_thread.run_sync(lambda: collector.enrich_trace(proj, tid, detail))
        return JSONResponse(detail)

    return app


def _no_self_telemetry() -> dict[str, Any]:
    """Keep FastAPI's built-in OpenTelemetry off.

    Newer FastAPI versions trace every request into the global tracer provider. In a process
    that also runs an instrumented agent (the demo, tests) each export to /v1/traces would then
    produce spans that are exported to /v1/traces again: a feedback loop. The collector reports
    its health through /readyz and its logs instead.
    """
    if "telemetry" not in inspect.signature(FastAPI.__init__).parameters:
        return {}
    return {
        "telemetry": {"tracing": False, "metrics": False, "logs": False, "operation_spans": False}
    }

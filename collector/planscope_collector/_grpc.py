"""OTLP over gRPC (port 4317): the OTel Collector, Go, Java and Node SDKs default to it.

The receiver is a thin front on the same accept path as ``POST /v1/traces``: the request's
bytes (already un-gzipped by gRPC) go through :meth:`Collector.ingest` unchanged, so parsing,
validation, limits, de-duplication and the fsync'd spool are the very same code, and the OK is
sent only after the spool append returned. gRPC hands the handler the raw message (no
deserializer): the one parse happens in the accept path, as for OTLP/HTTP protobuf.

Refusals map to the status codes the OTLP specification asks for: bad input is
``INVALID_ARGUMENT`` with the reason (not retried by exporters), a missing or unknown key
``UNAUTHENTICATED``, a full spool ``UNAVAILABLE`` with a ``google.rpc.RetryInfo`` trailer (the
gRPC form of 503 + Retry-After, which the OTel exporters honour).
"""

from __future__ import annotations

import logging
from concurrent import futures
from typing import TYPE_CHECKING, Any

import grpc
from google.protobuf.duration_pb2 import Duration
from google.rpc.error_details_pb2 import RetryInfo
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from ._errors import IngestRejected, SpoolFull
from ._otlp import PROTOBUF

if TYPE_CHECKING:
    from ._app import Collector

log = logging.getLogger("planscope.collector.grpc")

_SERVICE = trace_service_pb2.DESCRIPTOR.services_by_name["TraceService"]
_OK = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
# HTTP status of a refusal -> gRPC code (OTLP spec); other 4xx are INVALID_ARGUMENT, 5xx/429
# UNAVAILABLE with RetryInfo.
_GRPC_CODES = {401: grpc.StatusCode.UNAUTHENTICATED, 413: grpc.StatusCode.RESOURCE_EXHAUSTED}


class GrpcReceiver:
    """A gRPC server for ``opentelemetry.proto.collector.trace.v1.TraceService/Export``.

    Started by ``planscope serve`` next to the HTTP app (``--grpc-port``, 4317 by default):

    >>> from pathlib import Path; import tempfile
    >>> from planscope_collector import BackgroundServer, CollectorSettings
    >>> settings = CollectorSettings(data_dir=Path(tempfile.mkdtemp()), port=0, grpc_port=0)
    >>> with BackgroundServer(settings, grpc=True) as s:
    ...     s.grpc_target.startswith("127.0.0.1:")
    True
    """

    def __init__(self, collector: Collector) -> None:
        self.collector = collector
        settings = collector.settings
        # gRPC enforces the size of the (decompressed) message itself and answers
        # RESOURCE_EXHAUSTED beyond it; the HTTP path's post-gzip cap is the same number.
        limit = settings.max_decompressed_bytes
        self._server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="planscope-grpc"),
            options=[
                ("grpc.max_receive_message_length", limit),
                ("grpc.max_send_message_length", 1 << 20),
                # A second server on the same port must fail, not silently share the traffic.
                ("grpc.so_reuseport", 0),
            ],
        )
        handler = grpc.unary_unary_rpc_method_handler(self._export)  # raw bytes in and out
        self._server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(_SERVICE.full_name, {"Export": handler}),)
        )
        address = f"{settings.host}:{settings.grpc_port}"
        try:
            self.port = self._server.add_insecure_port(address)
        except RuntimeError as exc:  # grpcio's "Failed to bind"
            raise OSError(
                f"cannot listen for OTLP/gRPC on {address} ({exc}); pick another port with "
                "--grpc-port N (0 = any free port) or turn gRPC off with --grpc-port off"
            ) from None

    def start(self) -> None:
        self._server.start()
        log.info("OTLP/gRPC listening on %s:%d", self.collector.settings.host, self.port)

    def stop(self, grace: float = 5.0) -> None:
        """Stop taking calls; calls in flight get ``grace`` seconds to finish their append."""
        self._server.stop(grace).wait()

    def _export(self, body: bytes, context: grpc.ServicerContext) -> bytes:
        collector = self.collector
        try:
            project = collector.auth.project_for(_metadata(context, "authorization"), "ingest")
            collector.ingest(body, PROTOBUF, None, project)
        except SpoolFull as exc:
            _abort_retry_later(context, str(exc), exc.retry_after_seconds)
        except IngestRejected as exc:  # the HTTP status of the refusal decides the gRPC code
            if exc.status_code >= 500 or exc.status_code == 429:
                _abort_retry_later(context, exc.reason, collector.settings.retry_after_seconds)
            context.abort(
                _GRPC_CODES.get(exc.status_code, grpc.StatusCode.INVALID_ARGUMENT), exc.reason
            )
        except OSError as exc:  # the disk refused the spool write: nothing was accepted
            log.error("spool write failed: %s", exc)
            _abort_retry_later(
                context, "spool write failed", collector.settings.retry_after_seconds
            )
        return _OK


def _metadata(context: grpc.ServicerContext, key: str) -> str | None:
    for item in context.invocation_metadata() or ():
        if item.key == key:  # gRPC lower-cases metadata keys
            value: Any = item.value
            return value if isinstance(value, str) else None
    return None


def _abort_retry_later(context: grpc.ServicerContext, reason: str, seconds: int) -> None:
    info = RetryInfo(retry_delay=Duration(seconds=seconds))
    context.set_trailing_metadata((("google.rpc.retryinfo-bin", info.SerializeToString()),))
    context.abort(grpc.StatusCode.UNAVAILABLE, reason)

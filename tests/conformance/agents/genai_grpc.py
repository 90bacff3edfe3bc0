"""The GenAI-conventions agent of :mod:`.genai_semconv` as a service exporting over
OTLP/gRPC (the suite points ``CONFORMANCE_OTLP`` at the collector's gRPC port)."""

from __future__ import annotations

from .genai_semconv import run

__all__ = ["run"]

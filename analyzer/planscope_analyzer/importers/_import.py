"""Prepare files for import (detect, parse, validate, convert, re-time: all before sending) and
send them to a collector over OTLP/HTTP.

>>> prepare(Path("missing.json"))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
planscope_analyzer.importers._errors.ImportFailed: missing.json: cannot read: No such file...
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from planscope import semconv as A
from planscope.client import ClientError, ClientSettings, CollectorClient

from ._chat_spans import conversation_spans
from ._conversation import Conversation
from ._errors import ImportFailed, MalformedInput, SendFailed, UnknownFormat
from ._otlp_files import all_spans, looks_like_otlp, parse_otlp_json, retime, split_documents
from ._spans import any_value, to_request
from ._tooluse import looks_like_tool_use, parse_tool_use
from ._whowhen import looks_like_whowhen, parse_whowhen

Format = Literal["auto", "whowhen", "tool-use", "otlp-json", "openinference"]
FORMATS: tuple[str, ...] = ("auto", "whowhen", "tool-use", "otlp-json", "openinference")


@dataclass
class Prepared:
    """A file converted and validated, ready to send; nothing has been sent yet."""

    path: Path
    format: str
    requests: list[ExportTraceServiceRequest]
    trace_ids: list[str]
    span_count: int
    conversations: list[Conversation] = field(default_factory=list)
    trace_spans: list[int] = field(default_factory=list)
    """Spans per trace of ``trace_ids`` (imported conversations: one trace each)."""
    notes: list[str] = field(default_factory=list)


def detect_format(data: bytes, source: str) -> str:
    """``whowhen``, ``tool-use`` or ``otlp-json`` from the content, else ``UnknownFormat``."""
    if not data.strip():
        raise MalformedInput(source, None, "the file is empty")
    try:
        docs = split_documents(data, source)
    except MalformedInput as exc:
        raise UnknownFormat(f"{source}: unknown format ({exc.reason})") from None
    label, first = docs[0]
    if label is None and looks_like_whowhen(first):
        return "whowhen"
    if label is None and looks_like_tool_use(first):
        return "tool-use"
    if looks_like_otlp(first):
        return "otlp-json"
    raise UnknownFormat(
        f"{source}: unknown format: {label or 'the document'} is neither a Who&When log "
        "(an object with a 'history' list), a tool-use conversation (a list of chat messages "
        "with 'role', or an object with 'messages') nor an OTLP ExportTraceServiceRequest "
        "(an object with 'resourceSpans')"
    )


def prepare(
    path: Path,
    fmt: str = "auto",
    *,
    project: str | None = None,
    end_ns: int | None = None,
    keep_time: bool = False,
) -> Prepared:
    """Read, validate and convert one file; raises ``ImportFailed`` (subclasses) naming it."""
    source = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImportFailed(f"{source}: cannot read: {exc.strerror or exc}") from None
    if fmt not in FORMATS:
        raise UnknownFormat(f"{source}: unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    actual = detect_format(data, source) if fmt == "auto" else fmt
    if actual in ("whowhen", "tool-use"):
        convs = (
            [parse_whowhen(data, source)] if actual == "whowhen" else parse_tool_use(data, source)
        )
        resource: dict[str, str | int | float | bool] = {A.SERVICE_NAME: convs[0].framework}
        if project:
            resource[A.PROJECT] = project
        # One trace per conversation (a τ-bench file holds many runs).
        per_run = [conversation_spans(c, end_ns=end_ns) for c in convs]
        return Prepared(
            path,
            actual,
            [to_request(spans, resource) for spans in per_run],
            [spans[0].trace_id.hex() for spans in per_run],
            sum(len(spans) for spans in per_run),
            conversations=convs,
            trace_spans=[len(spans) for spans in per_run],
        )
    requests = parse_otlp_json(data, source)
    # Spans go as they are: the collector's span model (planscope_collector.runmodel, migration
    # 0011) maps every convention at ingest, for imported and live spans alike.
    foreign = sum(1 for s in all_spans(requests) if _is_foreign(s))
    if actual == "openinference" and foreign == 0:
        raise MalformedInput(
            source,
            None,
            "no OpenInference/OpenLLMetry span found "
            "(openinference.span.kind or traceloop.span.kind)",
        )
    if not keep_time:
        retime(requests, end_ns=end_ns)
    if project:
        for r in requests:
            for rs in r.resource_spans:
                if not any(kv.key == A.PROJECT for kv in rs.resource.attributes):
                    rs.resource.attributes.append(KeyValue(key=A.PROJECT, value=any_value(project)))
    spans = all_spans(requests)
    if not spans:
        raise MalformedInput(source, None, "the file holds no spans")
    trace_ids = list(dict.fromkeys(s.trace_id.hex() for s in spans))
    return Prepared(
        path, "openinference" if foreign else "otlp-json", requests, trace_ids, len(spans)
    )


def _is_foreign(span: object) -> bool:
    """The span follows OpenInference or OpenLLMetry (format detection only; no mapping)."""
    keys = {kv.key for kv in getattr(span, "attributes", ())}
    return bool(keys & {A.OI_SPAN_KIND, A.TL_SPAN_KIND})


def send(prepared: Prepared, client: CollectorClient) -> None:
    """POST every request of a prepared file to the collector's ``/v1/traces``."""
    for i, request in enumerate(prepared.requests):
        try:
            client.export_traces(request.SerializeToString())
        except ClientError as exc:
            raise SendFailed(
                f"{prepared.path}: request {i + 1}/{len(prepared.requests)}: {exc}"
            ) from None


def import_files(
    paths: Sequence[Path],
    fmt: str = "auto",
    *,
    collector: str | None = None,
    api_key: str | None = None,
    project: str | None = None,
    keep_time: bool = False,
) -> list[Prepared]:
    """Import files: every file is validated and converted first, then all are sent.

    A broken file stops the import before anything is sent.

    >>> import_files([Path("nope.json")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    planscope_analyzer.importers._errors.ImportFailed: nope.json: cannot read: No such...
    """
    prepared = [prepare(p, fmt, project=project, keep_time=keep_time) for p in paths]
    settings = ClientSettings.from_env(base_url=collector, api_key=api_key, timeout=30.0)
    with CollectorClient(settings, user_agent="planscope-cli/import") as client:
        for p in prepared:
            send(p, client)
    return prepared


def summary(p: Prepared) -> dict[str, object]:
    """A JSON-able line describing an imported file."""
    return {
        "file": str(p.path),
        "format": p.format,
        "traces": p.trace_ids,
        "spans": p.span_count,
    }


def dumps_summary(p: Prepared) -> str:
    return json.dumps(summary(p), separators=(",", ":"))

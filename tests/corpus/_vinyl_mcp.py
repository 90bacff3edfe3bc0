"""The pressing plant's MCP server for :mod:`tests.corpus.vinyl`: a ``FastMCP`` server whose
``@mcp.tool()`` functions are the plant's services, run by the app as a separate process over
stdio (``python _vinyl_mcp.py``, one process per job, as an MCP client launches a local server).

Run as a script, not as ``-m tests.corpus...``: importing the corpus package imports every agent
(seconds); this file imports only ``mcp`` and OpenTelemetry, so ``vinyl`` can import its order and
codecs from here but nothing here imports the corpus.

Tracing, as a server author who reads OpenInference's MCP docs writes it: the process
instruments with ``MCPInstrumentor`` **before** importing ``mcp`` (its wrappers are post-import
hooks; FastMCP binds ``stdio_server`` by name at import), which only carries the client's trace
context in each request's ``_meta`` into the handler; the server's own spans are a plain
OpenTelemetry tracer's (``tools/call {tool}``, kind SERVER, ``press.*`` attributes), exported
as OTLP JSON lines (protobuf's JSON mapping of one ``ExportTraceServiceRequest`` a line) to the
file named by ``VINYL_SPANS``, as a collector's file exporter would hold them; the app re-reads
the file after the job (:func:`read_spans`). The job's scenario comes in ``VINYL_JOB`` (the
world's faults; no model, no network).

A service that fails **raises** a :class:`Defect` (a pressing-plant defect code): FastMCP turns
it into a ``CallToolResult`` with ``isError=True`` and ``Error executing tool {tool}: {text}``
as its content; the text is ``<CODE> <what happened>`` and, for some codes, ``>> key=value``:
``NON-FILL ... >> slot=HH:MM`` (call again at that slot), ``WARP`` (the step is to be run again
later), ``RE-CUT ... >> use key=value`` (the plan has to change), ``SCRAP`` (refused for good).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Sequence
from typing import Any

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

SERVER_TRACER = "vinyl-press-server"
SERVICE = "pressing-plant-mcp"
ORDER: dict[str, Any] = {
    "record": "Tidal Static",
    "label": "Halyard Records",
    "catalogue": "HAL-014",
    "master": "HAL-014-M1",
    "speed": 33,
    "weight": 180,
    "colour": "oxblood",
    "copies": 500,
    "ship_by": "2027-04-16",
    "account": "HAL-52718",
    "deposit": 2150.0,
    "distributor": "orders@northridge-distro.example",
}
PLANTS = {33: "PL-KESTREL", 45: "PL-OSPREY", 78: "PL-SHELLAC"}
"""The directory's free plant whose lathe cuts each speed (rpm)."""


class Defect(RuntimeError):
    """A service's refusal as a pressing defect code; its text is what the client reads."""

    code = "SCRAP"

    def __init__(self, text: str, hint: str = "") -> None:
        super().__init__(f"{self.code} {text}" + (f" >> {hint}" if hint else ""))


class NonFill(Defect):
    """The press cycle did not fill: the service takes the call again at the slot named."""

    code = "NON-FILL"


class Warp(Defect):
    """A warped batch: the step is to be run again later."""

    code = "WARP"


class ReCut(Defect):
    """The lacquer has to be cut again: the service names another value to use."""

    code = "RE-CUT"


class Scrap(Defect):
    """Refused for good."""


DEFECTS: dict[str, type[Defect]] = {
    "non-fill": NonFill,
    "warp": Warp,
    "re-cut": ReCut,
    "scrap": Scrap,
}


# --- the server's spans, as OTLP JSON lines ------------------------------------------------
class JsonLinesExporter(SpanExporter):
    """Each batch of finished spans as one OTLP ``ExportTraceServiceRequest`` in protobuf's
    JSON mapping, a line, appended (and flushed) to ``path``."""

    def __init__(self, path: str) -> None:
        self.path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        line = json.dumps(json_format.MessageToDict(encode_spans(spans)))
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(v) for v in value.array_value.values)
    return getattr(value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {p.key: _value(p.value) for p in pairs}


def read_spans(line: str) -> list[ReadableSpan]:
    """The spans of one OTLP JSON line, as the SDK's finished spans (the parent from another
    process marked remote).

    >>> read_spans(json.dumps({"resourceSpans": []}))
    []
    """
    request = json_format.ParseDict(json.loads(line), ExportTraceServiceRequest())
    out = []
    for resource_spans in request.resource_spans:
        resource = Resource(_attributes(resource_spans.resource.attributes))
        for scope_spans in resource_spans.scope_spans:
            scope = InstrumentationScope(scope_spans.scope.name, scope_spans.scope.version or None)
            for span in scope_spans.spans:
                trace_id = int.from_bytes(span.trace_id, "big")
                sampled = TraceFlags(TraceFlags.SAMPLED)
                parent = (
                    SpanContext(trace_id, int.from_bytes(span.parent_span_id, "big"), True, sampled)
                    if span.parent_span_id
                    else None
                )
                out.append(
                    ReadableSpan(
                        name=span.name,
                        context=SpanContext(
                            trace_id, int.from_bytes(span.span_id, "big"), False, sampled
                        ),
                        parent=parent,
                        resource=resource,
                        attributes=_attributes(span.attributes),
                        events=[
                            Event(e.name, _attributes(e.attributes), e.time_unix_nano)
                            for e in span.events
                        ],
                        # OTLP counts kinds from UNSPECIFIED = 0, the SDK from INTERNAL = 0
                        kind=SpanKind(max(span.kind - 1, 0)),
                        status=Status(StatusCode(span.status.code), span.status.message or None),
                        start_time=span.start_time_unix_nano,
                        end_time=span.end_time_unix_nano,
                        instrumentation_scope=scope,
                    )
                )
    return out


# --- the plant -----------------------------------------------------------------------------
class Plant:
    """The directory, the lathes, the presses, the bank and the mail of one job."""

    def __init__(self, job: dict[str, Any]) -> None:
        self.scenario = str(job["scenario"])
        self.seed = int(job["seed"])
        self.params: dict[str, Any] = dict(job["params"])
        self.errors = [dict(e) for e in self.params.get("errors", ())]
        self.lathes: dict[str, int] = {}
        self.tests: dict[str, dict[str, Any]] = {}
        self.runs: dict[str, dict[str, Any]] = {}
        self.watched = 0

    def fault(self, tool: str) -> None:
        """Raise the scenario's next defect when ``tool`` is the one it targets."""
        if self.errors and tool == self.params.get("service"):
            error = self.errors.pop(0)
            hint = error.get("slot") and f"slot={error['slot']}"
            if "use" in error:
                hint = "use " + " ".join(f"{k}={v}" for k, v in error["use"].items())
            raise DEFECTS[error["defect"]](error["text"], hint or "")

    def search_plants(self, speed: int, weight: int, page: int | None = None) -> dict[str, Any]:
        self.fault("search_plants")
        page = page or 1
        if page < int(self.params.get("pages", 1)):
            booked = [
                {"plant": f"PL-{page}{n}", "speed": speed, "booked_until": f"2027-0{n + 4}-01"}
                for n in (1, 2, 3)
            ]
            return {"plants": [], "fully_booked": booked, "next_page": page + 1}
        plant = PLANTS.get(speed, f"PL-{speed}RPM")
        self.lathes[plant] = speed
        return {"plants": [{"plant": plant, "speed": speed, "weights": [140, weight]}]}

    def order_test_pressing(
        self, plant: str, master: str, slot: str | None = None
    ) -> dict[str, Any]:
        self.fault("order_test_pressing")
        speed = self.lathes.get(plant, 0)
        if speed != ORDER["speed"]:
            raise Scrap(
                f"{plant}'s lathe cuts {speed} rpm lacquers only; the sides of {master} run 19 "
                f"minutes and need {ORDER['speed']} rpm"
            )
        order = f"TP-{self.seed}-{len(self.tests) + 1}"
        self.tests[order] = {"plant": plant, "checks": 0}
        if "poll" in self.scenario:
            return {"order": order, "state": "pressing"}
        return {"id": order, "state": "approved"}

    def test_pressing_status(self, order: str) -> dict[str, Any]:
        asked = self.tests[order]
        asked["checks"] += 1
        stuck = self.scenario == "loop_poll_stuck"
        if stuck or asked["checks"] < int(self.params.get("polls", 0)):
            return {"order": order, "state": "pressing"}
        return {"id": order, "state": "approved"}

    def book_pressing_run(
        self, plant: str, copies: int, colour: str, ship_by: str, slot: str | None = None
    ) -> dict[str, Any]:
        self.fault("book_pressing_run")
        other = self.params.get("colour_to")
        if other and colour == ORDER["colour"]:
            raise ReCut(
                f"{plant} has no {colour} compound until the next delivery", f"use colour={other}"
            )
        run = f"RUN-{plant[3:6]}-{len(self.runs) + 1}"
        self.runs[run] = {"copies": copies, "colour": colour, "ship_by": ship_by, "state": "booked"}
        return {"id": run, "copies": copies, "colour": colour, "ship_by": ship_by}

    def pay_deposit(self, account: str, amount: float, reference: str) -> dict[str, Any]:
        self.fault("pay_deposit")
        if account != ORDER["account"]:
            raise Scrap(f"the plant's bank finds no account {account} to draw {amount} from")
        return {"id": f"DEP-{self.seed}", "amount": amount}

    def notify_distributor(
        self, distributor: str, run: str, test_pressing: str, slot: str | None = None
    ) -> dict[str, Any]:
        self.fault("notify_distributor")
        return {"id": f"NT-{run}", "to": distributor, "sent": slot or "now"}

    def run_status(self, run: str) -> dict[str, Any]:
        self.watched += 1
        booked = self.runs[run]
        days = int(self.params.get("polls", 1))
        # the check's call, then the watch's: the last of the watch's finds the run cancelled
        if self.scenario.startswith("external_") and self.watched > days + 1:
            booked["state"] = "cancelled: the plant's boiler failed, presses down for weeks"
        return {"id": run} | booked


def _tool(tracer: Any, method: Callable[..., dict[str, Any]]) -> Callable[..., Any]:
    """``method`` as an MCP tool function (its signature kept for FastMCP's schema) under a
    ``tools/call {tool}`` SERVER span of the plain tracer."""

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> dict[str, Any]:
        name = method.__name__
        with tracer.start_as_current_span(
            f"tools/call {name}", kind=SpanKind.SERVER, record_exception=False
        ) as span:
            span.set_attribute("press.tool", name)
            span.set_attribute("press.arguments", json.dumps(kwargs, sort_keys=True))
            try:
                result = method(*args, **kwargs)
            except Defect as exc:
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, str(exc)))
                span.set_attribute("press.defect", exc.code)
                raise
            span.set_attribute("press.result", json.dumps(result, sort_keys=True))
            return result

    return call


TOOLS = {
    "search_plants": "Pressing plants with a free lathe for a speed and weight, a page at a time.",
    "order_test_pressing": "Order test pressings of a master from a plant.",
    "test_pressing_status": "Whether a test pressing order has been approved.",
    "book_pressing_run": "Book a plant's pressing run of copies in a colour, shipped by a day.",
    "pay_deposit": "Pay the pressing deposit from the label's account.",
    "notify_distributor": "Send the distributor the run and test-pressing numbers.",
    "run_status": "A booked pressing run's state.",
}
"""The plant's services (the ``Plant`` methods served) and their descriptions."""


def main() -> None:
    """Serve one job's plant over stdio until the client closes it."""
    from openinference.instrumentation.mcp import MCPInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource({"service.name": SERVICE}))
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(os.environ["VINYL_SPANS"])))
    MCPInstrumentor().instrument(tracer_provider=provider)  # before mcp is imported

    from mcp.server.fastmcp import FastMCP

    world = Plant(json.loads(os.environ["VINYL_JOB"]))
    tracer = provider.get_tracer(SERVER_TRACER)
    mcp = FastMCP("pressing-plant", log_level="WARNING")
    for name, description in TOOLS.items():
        mcp.tool(description=description)(_tool(tracer, getattr(world, name)))
    mcp.run("stdio")


if __name__ == "__main__":
    main()

"""The river's services for the regatta agent, as an MCP server (the official ``mcp`` SDK's
``FastMCP``) served over **streamable HTTP** on a loopback port, in the play's own process.

Every tool raises :class:`RaceControl` for a fault; FastMCP answers the call with
``CallToolResult(isError=True)`` whose text is ``Error executing tool {tool}: FLAG <colour>:
<text> [<hint>]``. The colours: ``yellow`` call again at the hinted time, ``red`` run the step
again, ``blue`` a new plan with the hinted ``key=value``, ``black`` final.

What the world does in one run is :data:`WORLD`, reset by the play before each run from the
label's params (``service`` + ``errors``: the faults that service raises, one per call, in
order; ``pages``; ``polls``: pending answers before the closure is granted, ``-1`` never;
``storm``: the watch sees the regatta abandoned).

>>> WORLD.reset({"pages": 3})
>>> WORLD.pages
3
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from mcp.server.fastmcp import FastMCP
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanKind, Status, StatusCode

SERVER_TRACER = "regatta-river-server"

# The river authority's ledger: the club's one account and the course that suits the regatta.
ACCOUNT = "ARA-40317"
COURSE = "CRS-TYNE-6"


class RaceControl(Exception):
    """A flag raised by a river service (its message is what the client reads)."""

    def __init__(self, colour: str, text: str, hint: str = "") -> None:
        super().__init__(f"FLAG {colour}: {text}" + (f" [{hint}]" if hint else ""))


@dataclass
class World:
    """What the river does in the run being played (reset per run)."""

    service: str = ""
    errors: list[dict[str, Any]] = field(default_factory=list)
    pages: int = 1
    polls: int = 2
    storm: bool = False
    calls: dict[str, int] = field(default_factory=dict)
    applications: dict[str, str] = field(default_factory=dict)
    closure_days: dict[str, str] = field(default_factory=dict)

    def reset(self, params: dict[str, Any]) -> None:
        """Start a run with the scenario's params."""
        self.service = str(params.get("service", ""))
        self.errors = list(params.get("errors", []))
        self.pages = int(params.get("pages", 1))
        self.polls = int(params.get("polls", 2))
        self.storm = bool(params.get("storm", False))
        self.calls = {}
        self.applications = {}
        self.closure_days = {}

    def fault(self, tool: str) -> None:
        """Raise the next scripted fault of ``tool``, if any is left."""
        if tool != self.service or not self.errors:
            return
        error = self.errors.pop(0)
        raise RaceControl(error["flag"], error["text"], error.get("hint", ""))

    def count(self, tool: str) -> int:
        """How many times ``tool`` has been called in this run, this call included."""
        self.calls[tool] = self.calls.get(tool, 0) + 1
        return self.calls[tool]


WORLD = World()


def _ref(prefix: str, *parts: object) -> str:
    # stable references: the same call in the same run gets the same number
    return f"{prefix}-{sum(ord(c) for c in '|'.join(map(str, parts))) % 9000 + 1000}"


def build_server(provider: TracerProvider) -> FastMCP:
    """The river authority's MCP server; its tool handlers write SERVER spans on ``provider``
    (they join the caller's trace through the MCP instrumentor's ``_meta`` context)."""
    server = FastMCP(
        "river-authority", log_level="WARNING", stateless_http=True, json_response=True
    )
    tracer = provider.get_tracer(SERVER_TRACER)

    def served(tool: str, arguments: dict[str, Any], body: Any) -> str:
        with tracer.start_as_current_span(f"tools/call {tool}", kind=SpanKind.SERVER) as span:
            span.set_attribute("river.tool", tool)
            span.set_attribute("river.arguments", json.dumps(arguments, sort_keys=True))
            try:
                WORLD.fault(tool)
                out = str(body())
            except RaceControl as e:
                span.set_status(Status(StatusCode.ERROR, str(e)))
                raise
            span.set_attribute("river.result", out)
            return out

    @server.tool()
    def search_courses(region: str, lanes: int, page: int = 1) -> str:
        """One page of the region's course register: courses with their lanes and whether they
        are free on the season's weekends."""

        def body() -> str:
            last = page >= WORLD.pages
            courses = [
                {"course": f"CRS-{region.upper()}-{page}{i}", "lanes": 4, "free": i == 1}
                for i in range(2)
            ]
            if last:
                courses.append(
                    {"course": f"CRS-{region.upper()}-{lanes}", "lanes": lanes, "free": True}
                )
            return json.dumps({"courses": courses, "next_page": None if last else page + 1})

        return served("search_courses", {"region": region, "lanes": lanes, "page": page}, body)

    @server.tool()
    def apply_for_closure(course: str, day: str, at: str = "") -> str:
        """Apply to the navigation authority to close the course to boats on the race day."""

        def body() -> str:
            if not course.startswith("CRS-"):
                raise RaceControl("black", f"no course called {course!r} on the register")
            application = _ref("APP", course, day)
            WORLD.applications[application] = day
            return application

        return served("apply_for_closure", {"course": course, "day": day, "at": at}, body)

    @server.tool()
    def closure_status(application: str) -> str:
        """Where a closure application stands: pending, or granted with its reference."""

        def body() -> str:
            n = WORLD.count("closure_status")
            if WORLD.polls < 0 or n <= WORLD.polls:
                return f"pending: {application} is with the harbour master (check {n})"
            closure = _ref("CL", application)
            WORLD.closure_days[closure] = WORLD.applications.get(application, "")
            return f"granted: {closure}"

        return served("closure_status", {"application": application}, body)

    @server.tool()
    def pay_course_fee(course: str, account: str, at: str = "") -> str:
        """Pay the course hire fee from a club account."""

        def body() -> str:
            if account != ACCOUNT:
                raise RaceControl("black", f"account {account} is not on the authority's ledger")
            if not course.startswith("CRS-"):
                raise RaceControl("black", f"no fee is set for {course!r}")
            return _ref("RCPT", course, account)

        return served("pay_course_fee", {"course": course, "account": account, "at": at}, body)

    @server.tool()
    def hire_launches(closure: str, yard: str, at: str = "") -> str:
        """Hire umpire launches from a boatyard for a granted closure."""

        def body() -> str:
            if not closure.startswith("CL-"):
                raise RaceControl(
                    "black", f"launches are only hired against a closure, not {closure!r}"
                )
            return _ref("LH", closure, yard)

        return served("hire_launches", {"closure": closure, "yard": yard, "at": at}, body)

    @server.tool()
    def send_notice(closure: str, launches: str, receipt: str, at: str = "") -> str:
        """Send the competing clubs the regatta notice."""

        def body() -> str:
            for value, prefix in ((closure, "CL-"), (launches, "LH-"), (receipt, "RCPT-")):
                if not value.startswith(prefix):
                    raise RaceControl("black", f"the notice cannot quote {value!r}")
            return _ref("NT", closure, launches, receipt)

        arguments = {"closure": closure, "launches": launches, "receipt": receipt, "at": at}
        return served("send_notice", arguments, body)

    @server.tool()
    def closure_details(closure: str) -> str:
        """The day a closure was granted for."""

        def body() -> str:
            return json.dumps({"closure": closure, "day": WORLD.closure_days.get(closure, "")})

        return served("closure_details", {"closure": closure}, body)

    @server.tool()
    def river_status(course: str) -> str:
        """The river authority's current word on a course."""

        def body() -> str:
            n = WORLD.count("river_status")
            if WORLD.storm and n >= 2:
                return f"abandoned: storm surge on {course}, the closure is withdrawn"
            return f"open: {course} is fit for racing"

        return served("river_status", {"course": course}, body)

    return server


class RiverServer:
    """The MCP server under uvicorn in a thread on a free loopback port.

    >>> RiverServer.__name__
    'RiverServer'
    """

    def __init__(self, provider: TracerProvider) -> None:
        config = uvicorn.Config(
            build_server(provider).streamable_http_app(),
            host="127.0.0.1",
            port=0,
            log_level="warning",
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="river-mcp", daemon=True)

    @property
    def url(self) -> str:
        """The streamable-HTTP endpoint."""
        port = self._server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/mcp"

    def __enter__(self) -> RiverServer:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the river MCP server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

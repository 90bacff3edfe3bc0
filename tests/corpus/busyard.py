"""A school district's transport office re-routing its buses for a term, written as a LangGraph
user writes a **supervisor** app today: ``langgraph-supervisor``'s ``create_supervisor`` over
three ``create_react_agent`` workers (a ``route_planner`` without tools, a ``depot_clerk`` and a
``fleet_clerk`` with ``@tool`` functions), langchain-openai's ``ChatOpenAI`` on the conformance
suite's fake OpenAI server (``ModelServer(respond=...)``), traced by **LangSmith's
OpenTelemetry export** and nothing else (no instrumentor).

How a user turns the export on (read from the installed langsmith 0.15.1): the environment
``LANGSMITH_TRACING=true`` (LangChain's tracer callback on every run), ``LANGSMITH_OTEL_ENABLED=
true`` and ``LANGSMITH_OTEL_ONLY=true`` (tracing mode ``otel``: runs go to OpenTelemetry only,
nothing to LangSmith's API). The ``Client`` made for the tracer takes the process's **global**
tracer provider when one is set (else it builds its own OTLP exporter to LangSmith and sets it
global), and writes its spans through ``get_tracer("langsmith")`` of it from its background
tracing thread once a run's events are batched: a span per LangChain run (the graph, each node,
each model call and tool), started and ended at the run's recorded times, a run's parent span
its parent run's (a root run's the OpenTelemetry span current when it started: the app's root
span here). The play sets the global provider to the corpus relay (``_relay.global_provider``)
and the environment while it plays, clears langsmith's cached settings and client, configures
a client of one tracing thread (``ONE_TRACING_THREAD``: with more, langsmith loses spans), and
puts all back after.

What the spans carry (``langsmith`` scope, all INTERNAL): ``langsmith.span.kind`` (the run type:
``chain``, ``llm``, ``tool``), ``langsmith.trace.name``, ``gen_ai.operation.name`` (``chat`` for
``llm`` runs, ``execute_tool`` for ``tool`` runs, else the run type), ``gen_ai.system``,
``gen_ai.request.model``, usage, ``gen_ai.tool.name`` on tool runs, ``langsmith.metadata.*``
(LangGraph's ``langgraph_node``, ``langgraph_step``, the run's ``thread_id`` ...), and the run's
whole inputs and outputs as JSON in ``gen_ai.prompt`` / ``gen_ai.completion``; a run that raised
has status ERROR and an exception event with the error text. The app's own spans (scope
``busyard``, through a tracer of the play's provider): a root span per term, a ``check driver
roster`` span and a ``watch route {route}`` span after the job.

The planner answers a **run sheet** (``RUN SHEET v<n> for <term>``, then one line a leg:
``leg <n> | <name> | <worker>.<tool> | <json args> | <goal>``, ``"[leg k]"`` leg k's result;
on a re-sheet the legs done as ``leg <n> | <name> | DONE => <value>``, leg numbers kept). The
supervisor model hands one leg at a time to a worker (its message ``ASSIGN leg <n> (attempt a)
<tool> <json args>`` with the handoff call ``transfer_to_<worker>``), the worker answers one
line ``leg <n> <CLEAR|REPEAT|DIVERT|DENIED|STALLED> => <value> ; <note>``; the supervisor assigns
the leg again after ``REPEAT``, sends the planner back to work after ``DIVERT`` (``RESHEET after
leg <n>: <note>``) and ends the term (``TERM FAILED`` / ``TERM READY``) otherwise.

The yard's services **raise radio ten-codes** (``Busy`` ``10-6 ... [after HH:MM]``, the worker
calls again with ``after``; ``OutOfService`` ``10-7``, the leg assigned again; ``Divert``
``10-22 ... [use key=value]``, a new run sheet; ``Denied`` ``10-99``, final). LangGraph's
``ToolNode`` re-raises a tool's exception by default in this release (only argument errors go
back to the model), so the workers are given ``ToolNode(tools, handle_tool_errors=True)``, as a
user must for the model to read the error: a ``ToolMessage(status="error")`` whose content is
``Error: <ExceptionClass>('<text>')\\n Please fix your mistakes.``

Sealed-46 split only (see README.md). The job: find a route with the seats needed in the zone
(a paged route register), get the council's road permit (a polled application), book drivers
from a depot for the term, charge the transport budget, notify the school's families. The
planner trusts the dispatcher's note over the term form: a scenario's wrong value comes from the
note. No scenario starves a worker of context (this source records none as such): no starvation
label.
"""

from __future__ import annotations

import json
import os
import re
import warnings
import zlib
from dataclasses import dataclass, field
from typing import Any

import langsmith
from langchain_core.tools import BaseTool, tool
from langchain_core.tracers.langchain import wait_for_all_tracers
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph_supervisor import create_supervisor
from langsmith import schemas as ls_schemas
from langsmith import utils as ls_utils
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Span, Status, StatusCode, Tracer

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from ._relay import global_provider

TRACER = "busyard"
EXPORT = "langsmith"
"""The scope of LangSmith's OpenTelemetry spans."""
OTEL_EXPORT = {
    "LANGSMITH_TRACING": "true",
    "LANGSMITH_OTEL_ENABLED": "true",
    "LANGSMITH_OTEL_ONLY": "true",
    "LANGSMITH_PROJECT": "busyard-terms",
}
"""The environment a user sets for LangSmith's OpenTelemetry export only."""
MAX_ATTEMPTS = 7
MAX_SHEETS = 5
MAX_BUSY = 8
"""``10-6`` answers in one worker run before the worker gives up."""
MAX_POLLS = 12
RECURSION_LIMIT = 400
FORM: dict[str, Any] = {
    "term": "T2-2027",
    "school": "Larkfield Primary",
    "zone": "Eastbrook",
    "seats": 48,
    "term_start": "2027-04-19",
    "drivers": 6,
    "depot": "Millbank",
    "account": "TRN-50318",
    "cost": 24600,
}
PLANNER = (
    "You are the transport office's route planner. Answer a run sheet: a first line "
    "'RUN SHEET v<n> for <term>', then one line a leg: 'leg <n> | <name> | <worker>.<tool> | "
    "<json args> | <goal>', with \"[leg k]\" for leg k's result; legs already done as "
    "'leg <n> | <name> | DONE => <value>'."
)
SUPERVISOR = (
    "You supervise the transport office's term re-routing. Ask route_planner for a run sheet, "
    "then assign one leg at a time to its worker ('ASSIGN leg <n> (attempt a) <tool> <json "
    "args>' and the handoff), assign it again after REPEAT, ask route_planner for a new sheet "
    "after DIVERT ('RESHEET after leg <n>: <note>'), and end with 'TERM READY <json results>' "
    "or 'TERM FAILED leg <n>: <note>'."
)
WORKER = (
    "You are the {name} of the school transport office. Carry out the leg assigned to you with "
    "your tools, then answer one line: 'leg <n> <CLEAR|REPEAT|DIVERT|DENIED|STALLED> => <value> "
    "; <note>'."
)
WORKERS = {
    "depot_clerk": ("find_routes", "request_permit", "permit_status"),
    "fleet_clerk": ("book_drivers", "charge_budget", "notify_families"),
}
SHEET_LINE = re.compile(r"^leg (\d+) \| (\w+) \| (.*)$")
REPORT = re.compile(r"^leg (\d+) (CLEAR|REPEAT|DIVERT|DENIED|STALLED) => (.*?) ; (.*)$", re.S)
ASSIGN = re.compile(r"^ASSIGN leg (\d+) \(attempt (\d+)\) (\w+) (\{.*\})$", re.S)
TEN_CODE = re.compile(r"(10-\d+) (.*?)(?: \[(.*?)\])?['\"]\)", re.S)
"""A ten-code in ToolNode's error text (``Error: Busy('10-6 ... [after 07:45]')``; the repr
quotes with ``"`` when the text holds an apostrophe)."""


# --- the yard's services ------------------------------------------------------------------
class RadioCall(Exception):
    """A service's ten-code answer; its text, with the hint in brackets, is what the model reads."""

    code = ""

    def __init__(self, text: str, hint: str = "") -> None:
        super().__init__(f"{self.code} {text}" + (f" [{hint}]" if hint else ""))


class Busy(RadioCall):
    code = "10-6"


class OutOfService(RadioCall):
    code = "10-7"


class Divert(RadioCall):
    code = "10-22"


class Denied(RadioCall):
    code = "10-99"


def radio(fault: dict[str, str]) -> RadioCall:
    """The ten-code a scenario's fault raises.

    >>> str(radio({"code": "10-6", "text": "gate jammed", "hint": "07:45"}))
    '10-6 gate jammed [after 07:45]'
    """
    code, text, hint = fault["code"], fault["text"], fault.get("hint", "")
    if code == "10-6":
        return Busy(text, f"after {hint}")
    if code == "10-7":
        return OutOfService(text)
    if code == "10-22":
        return Divert(text, f"use {hint}")
    return Denied(text)


@dataclass
class Yard:
    """The transport office's services for one term: what the scenario makes each one do."""

    params: dict[str, Any]
    faults: list[dict[str, str]] = field(default_factory=list)
    polls: int = 0
    watched: int = 0
    rosters: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.params.get("errors", [])]

    def fault(self, service: str) -> None:
        if service == self.params.get("service") and self.faults:
            raise radio(self.faults.pop(0))

    def tools(self) -> dict[str, BaseTool]:
        """The services as LangChain ``@tool`` functions, by name."""

        @tool
        def find_routes(zone: str, min_seats: int, page: int = 1) -> dict[str, Any]:
            """Search the district's route register for a free bus route in a zone (paged)."""
            self.fault("find_routes")
            pages = int(self.params.get("pages", 2))
            code = zone[:3].upper()
            if page < pages:
                taken = [{"route": f"RT-{code}-{page}{i}", "free": False} for i in range(3)]
                return {"routes": taken, "next_page": page + 1}
            route = {"route": f"RT-{code}-{page}4", "zone": zone, "seats": min_seats + 5}
            return {"routes": [route | {"free": True}], "next_page": None}

        @tool
        def request_permit(route: str, school: str) -> dict[str, Any]:
            """Apply to the council for a road permit to run a school route."""
            self.fault("request_permit")
            if not route.startswith(f"RT-{FORM['zone'][:3].upper()}-"):
                raise Denied(f"route {route} runs outside the {FORM['zone']} school zone")
            return {"application": f"RP-{zlib.crc32(route.encode()) % 9000 + 1000}"}

        @tool
        def permit_status(application: str) -> dict[str, Any]:
            """Read a road-permit application's state."""
            self.polls += 1
            if self.params.get("stuck") or self.polls <= int(self.params.get("polls", 1)):
                return {"application": application, "state": "under review"}
            return {"application": application, "state": "approved", "permit": f"{application}-A"}

        @tool
        def book_drivers(
            route: str, term_start: str, drivers: int, depot: str, after: str = ""
        ) -> dict[str, Any]:
            """Book drivers from a depot for a route from the term's first day."""
            self.fault("book_drivers")
            roster = f"DR-{depot[:2].upper()}{len(self.rosters) + 411}"
            self.rosters[roster] = {"roster": roster, "route": route, "term_start": term_start}
            return {"roster": roster, "term_start": term_start, "drivers": drivers}

        @tool
        def charge_budget(account: str, amount: int, reference: str, after: str = "") -> str:
            """Charge the term's route cost to a transport budget account."""
            self.fault("charge_budget")
            if account != FORM["account"]:
                raise Denied(f"account {account} carries no transport line for {reference}")
            return f"CH-{amount // 100}-{reference[-4:]}"

        @tool
        def notify_families(
            school: str, route: str, roster: str, permit: str, after: str = ""
        ) -> dict[str, Any]:
            """Send the school's families the new route and pick-up times."""
            self.fault("notify_families")
            return {"notice": f"FN-{school.split()[0].upper()}-{roster[-3:]}", "families": 212}

        found = [find_routes, request_permit, permit_status, book_drivers, charge_budget]
        return {t.name: t for t in [*found, notify_families]}

    def roster(self, roster: str) -> dict[str, Any]:
        """The app's own read of a roster (the check and the watch)."""
        self.watched += 1
        state = dict(self.rosters[roster]) | {"state": "rostered"}
        if "weeks_watched" in self.params and self.watched > int(self.params["weeks_watched"]):
            state["state"] = "suspended: the council closed Wharf Bridge on the route for repairs"
        return state


# --- the scripted model -------------------------------------------------------------------
@dataclass
class Leg:
    """One line of a run sheet."""

    n: int
    name: str
    worker: str = ""
    tool: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    goal: str = ""
    done: str | None = None


def parse_sheet(text: str) -> list[Leg]:
    """A run sheet's legs in order.

    >>> (leg,) = parse_sheet('leg 1 | a | depot_clerk.f | {"x": "[leg 0]"} | go')
    >>> leg.worker, leg.tool, leg.args, leg.goal
    ('depot_clerk', 'f', {'x': '[leg 0]'}, 'go')
    >>> parse_sheet("leg 2 | b | DONE => RT-1")[0].done
    'RT-1'
    """
    legs = []
    for line in text.splitlines():
        m = SHEET_LINE.match(line.strip())
        if not m:
            continue
        n, name, rest = int(m[1]), m[2], m[3]
        if rest.startswith("DONE => "):
            legs.append(Leg(n, name, done=rest.removeprefix("DONE => ")))
            continue
        who, args, goal = rest.split(" | ", 2)
        worker, tool_name = who.split(".")
        legs.append(Leg(n, name, worker, tool_name, json.loads(args), goal))
    return legs


def resolve(args: dict[str, Any], results: dict[int, str]) -> dict[str, Any]:
    """A leg's arguments, each ``"[leg k]"`` replaced by leg k's result.

    >>> resolve({"route": "[leg 1]", "seats": 48}, {1: "RT-EAS-24"})
    {'route': 'RT-EAS-24', 'seats': 48}
    """
    out = {}
    for k, v in args.items():
        ref = re.fullmatch(r"\[leg (\d+)\]", v) if isinstance(v, str) else None
        out[k] = results.get(int(ref[1]), "") if ref else v
    return out


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def _handoff(content: str, agent: str, n: int) -> dict[str, Any]:
    return _calling(content, f"transfer_to_{agent}", {}, f"call_sv{n}")


def _calling(content: str, name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(args)}
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def _planner(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The run sheet: from the term form and the dispatcher's note of the brief (the note
    trusted over the form), every ``use key=value`` of a re-sheet applied, the legs done kept."""
    brief = next(_text(m) for m in messages if m["role"] == "user")
    facts = dict(FORM) | json.loads(re.search(r"^Term form: (.*)$", brief, re.M)[1])  # type: ignore[index]
    note = re.search(r"^Dispatcher's note: (.*)$", brief, re.M)
    facts |= json.loads(note[1]) if note else {}
    resheets = [_text(m) for m in messages if _text(m).startswith("RESHEET after")]
    for snag in resheets:
        for k, v in re.findall(r"use (\w+)=([\w-]+)", snag):
            facts[k] = v
    done = {
        int(m[1]): m[3] for m in map(REPORT.match, map(_text, messages)) if m and m[2] == "CLEAR"
    }
    legs = [
        ("survey_routes", "depot_clerk.find_routes",
         {"zone": facts["zone"], "min_seats": facts["seats"]},
         f"Find a free route of {facts['seats']} seats in {facts['zone']}."),
        ("secure_permit", "depot_clerk.request_permit",
         {"route": "[leg 1]", "school": facts["school"]}, "Get the council's road permit."),
        ("book_drivers", "fleet_clerk.book_drivers",
         {"route": "[leg 1]", "term_start": facts["term_start"], "drivers": facts["drivers"],
          "depot": facts["depot"]}, f"Book {facts['drivers']} drivers from {facts['depot']}."),
        ("charge_route", "fleet_clerk.charge_budget",
         {"account": facts["account"], "amount": facts["cost"], "reference": facts["term"]},
         f"Charge {facts['cost']} to {facts['account']}."),
        ("notify_families", "fleet_clerk.notify_families",
         {"school": facts["school"], "route": "[leg 1]", "roster": "[leg 3]",
          "permit": "[leg 2]"}, "Tell the families the new route."),
    ]  # fmt: skip
    out = [f"RUN SHEET v{len(resheets) + 1} for {facts['term']}"]
    for n, (name, who, args, goal) in enumerate(legs, 1):
        if n in done:
            out.append(f"leg {n} | {name} | DONE => {done[n]}")
        else:
            out.append(f"leg {n} | {name} | {who} | {json.dumps(args)} | {goal}")
    return {"role": "assistant", "content": "\n".join(out)}


def _supervisor(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The supervisor's next move, read from the conversation: a sheet first, then the next leg,
    the same leg again, a new sheet or the end."""
    texts = [_text(m) for m in messages]
    sheets = [i for i, t in enumerate(texts) if t.startswith("RUN SHEET")]
    n_turn = len(texts)
    if not sheets:
        return _handoff("Draft the term's run sheet.", "route_planner", n_turn)
    legs = parse_sheet(texts[sheets[-1]])
    results = {leg.n: leg.done for leg in legs if leg.done is not None}
    since = texts[sheets[-1] :]
    reports = [m for m in map(REPORT.match, since) if m]
    for m in reports:
        if m[2] == "CLEAR":
            results[int(m[1])] = m[3]
    if reports and reports[-1][2] != "CLEAR":
        n, verdict, note = int(reports[-1][1]), reports[-1][2], reports[-1][4]
        attempts = sum(1 for m in map(ASSIGN.match, since) if m and int(m[1]) == n)
        if verdict == "REPEAT" and attempts < MAX_ATTEMPTS:
            return _assign(next(leg for leg in legs if leg.n == n), attempts + 1, results, n_turn)
        if verdict == "DIVERT" and len(sheets) < MAX_SHEETS:
            return _handoff(f"RESHEET after leg {n}: {note}", "route_planner", n_turn)
        return {"role": "assistant", "content": f"TERM FAILED leg {n}: {verdict.lower()}, {note}"}
    todo = [leg for leg in legs if leg.n not in results]
    if not todo:
        return {"role": "assistant", "content": f"TERM READY {json.dumps(results)}"}
    return _assign(todo[0], 1, results, n_turn)


def _assign(leg: Leg, attempt: int, results: dict[int, str], n_turn: int) -> dict[str, Any]:
    args = json.dumps(resolve(leg.args, results))
    content = f"ASSIGN leg {leg.n} (attempt {attempt}) {leg.tool} {args}"
    return _handoff(content, leg.worker, n_turn)


def _worker(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The worker's next move for the leg last assigned: call the tool, call again after the
    time a ``10-6`` names, read the next page, poll the permit, end with the report line."""
    start = max(i for i, m in enumerate(messages) if ASSIGN.match(_text(m)))
    order = ASSIGN.match(_text(messages[start]))
    assert order
    n, attempt, tool_name, given = int(order[1]), order[2], order[3], json.loads(order[4])
    mine = messages[start + 1 :]
    calls = [c for m in mine if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    outputs = {m["tool_call_id"]: _text(m) for m in mine if m["role"] == "tool"}
    if not calls:
        return _calling("", tool_name, given, f"call_w{n}a{attempt}_0")
    last = calls[-1]
    name, args = last["function"]["name"], json.loads(last["function"]["arguments"])
    output = outputs.get(last["id"], "")
    call_id = f"call_w{n}a{attempt}_{len(calls)}"  # unique in the term, as a model's ids are

    def report(verdict: str, value: str = "-", note: str = "") -> dict[str, Any]:
        return {"role": "assistant", "content": f"leg {n} {verdict} => {value} ; {note}"}

    if output.startswith("Error"):
        radio_call = TEN_CODE.search(output)
        if not radio_call:
            return report("DENIED", note=output.splitlines()[0][:200])
        code, text, hint = radio_call.groups()
        if code == "10-6":
            busy = sum(outputs.get(c["id"], "").find("10-6 ") >= 0 for c in calls)
            if busy >= MAX_BUSY:
                return report("STALLED", note=f"still 10-6 after {busy} calls: {text}")
            return _calling("", name, args | {"after": hint.removeprefix("after ")}, call_id)
        if code == "10-7":
            return report("REPEAT", note=text)
        if code == "10-22":
            return report("DIVERT", note=f"{text} ({hint})")
        return report("DENIED", note=text)
    answer: Any = json.loads(output) if output.startswith("{") else output
    if name == "find_routes":
        free = [r["route"] for r in answer["routes"] if r.get("free")]
        if free:
            return report("CLEAR", free[0], f"free route on page {args.get('page', 1)}")
        return _calling("", name, args | {"page": answer["next_page"]}, call_id)
    if name in ("request_permit", "permit_status"):
        if answer.get("state") == "approved":
            return report("CLEAR", answer["permit"], "permit approved")
        polls = sum(c["function"]["name"] == "permit_status" for c in calls)
        if polls >= MAX_POLLS:
            return report("STALLED", note=f"permit still under review after {polls} reads")
        return _calling("", "permit_status", {"application": answer["application"]}, call_id)
    value = answer if isinstance(answer, str) else next(iter(answer.values()))
    return report("CLEAR", str(value), f"{name} done")


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one ``POST /v1/chat/completions``.

    >>> asked = {"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": f"Term form: {json.dumps(FORM)}"}]}
    >>> '"route": "[leg 1]"' in respond(asked)["choices"][0]["message"]["content"]
    True
    """
    messages = body["messages"]
    system = _text(messages[0])
    if system == PLANNER:
        return completion(body, _planner(messages))
    if system == SUPERVISOR:
        return completion(body, _supervisor(messages))
    if system in {WORKER.format(name=w.replace("_", " ")) for w in WORKERS}:
        return completion(body, _worker(messages))
    return completion(body, {"role": "assistant", "content": "The yard has nothing to say."})


# --- the app ------------------------------------------------------------------------------
class TermFailed(RuntimeError):
    """The term's re-routing failed (or its route was suspended after it was done)."""


class Term:
    """One term's re-routing: the supervisor graph under the app's root span, then the check
    and the watch."""

    def __init__(self, label: Label, llm: ChatOpenAI, tracer: Tracer) -> None:
        self.label = label
        self.tracer = tracer
        self.yard = Yard(dict(label.params))
        self.ref = f"{FORM['term']}/{label.seed}"
        tools = self.yard.tools()
        planner = create_react_agent(llm, tools=[], prompt=PLANNER, name="route_planner")
        workers = [
            create_react_agent(
                llm,
                tools=ToolNode([tools[t] for t in names], handle_tool_errors=True),
                prompt=WORKER.format(name=name.replace("_", " ")),
                name=name,
            )
            for name, names in WORKERS.items()
        ]
        self.graph = create_supervisor(
            [planner, *workers], model=llm, prompt=SUPERVISOR, supervisor_name="transport_office"
        ).compile(name="term_rerouting")

    def brief(self) -> str:
        note = {
            k: self.label.params[k]
            for k in ("zone", "term_start", "account")
            if k in self.label.params
        }
        lines = [
            f"Re-route {FORM['school']}'s buses for term {FORM['term']} ({self.ref}).",
            f"Term form: {json.dumps(FORM)}",
        ]
        if note:
            lines.append(f"Dispatcher's note: {json.dumps(note)}")
        return "\n".join(lines)

    def carry_out(self) -> dict[int, str]:
        """Run the supervisor graph; the legs' results, or ``TermFailed``."""
        state = self.graph.invoke(
            {"messages": [{"role": "user", "content": self.brief()}]},
            config={
                "recursion_limit": RECURSION_LIMIT,
                "metadata": {"thread_id": self.ref},
            },
        )
        last = _text({"content": state["messages"][-1].content})
        if not last.startswith("TERM READY "):
            raise TermFailed(last)
        return {int(k): v for k, v in json.loads(last.removeprefix("TERM READY ")).items()}

    def check(self, roster: str) -> None:
        """The app's check: the roster starts on the term form's first day."""
        with self.tracer.start_as_current_span(
            "check driver roster", attributes={"busyard.roster": roster}
        ) as span:
            start = self.yard.roster(roster)["term_start"]
            if start != FORM["term_start"]:
                message = f"roster {roster} starts {start}; the term form says {FORM['term_start']}"
                span.set_attribute("error.type", "term_start_mismatch")
                span.set_status(Status(StatusCode.ERROR, message))
                raise TermFailed(message)

    def watch(self, route: str, roster: str) -> None:
        """The app's watch of the rostered route, a read a school week until the last polled."""
        with self.tracer.start_as_current_span(
            f"watch route {route}", attributes={"busyard.roster": roster}
        ) as span:
            for _ in range(int(self.label.params.get("weeks_watched", 1)) + 1):
                state = self.yard.roster(roster)["state"]
                if state != "rostered":
                    span.set_attribute("error.type", "route_suspended")
                    span.set_status(Status(StatusCode.ERROR, state))
                    raise TermFailed(f"{route}: {state}")

    def run(self) -> str:
        """Re-route the term under the app's root span; the OTel trace id."""
        with self.tracer.start_as_current_span(
            f"reroute term {self.ref}",
            attributes={"busyard.term": self.ref, "busyard.school": FORM["school"]},
            record_exception=False,
            set_status_on_exception=False,
        ) as root:
            trace_id = format(root.get_span_context().trace_id, "032x")
            try:
                results = self.carry_out()
                self.check(results[3])
                self.watch(results[1], results[3])
            except TermFailed as exc:
                _failed(root, exc)
            else:
                root.set_attribute("busyard.outcome", "rerouted")
            wait_for_all_tracers()  # LangSmith's spans are written before the root ends
        return trace_id


def _failed(span: Span, exc: TermFailed) -> None:
    span.record_exception(exc)
    span.set_attribute("error.type", f"{type(exc).__module__}.{type(exc).__qualname__}")
    span.set_attribute("busyard.outcome", "failed")
    span.set_status(Status(StatusCode.ERROR, str(exc)))


ONE_TRACING_THREAD = ls_schemas.BatchIngestConfig(
    use_multipart_endpoint=True,
    size_limit=100,
    scale_up_nthreads_limit=0,
    scale_up_qsize_trigger=200,
    scale_down_nempty_trigger=4,
)
"""LangSmith's default batch settings but no extra tracing threads. langsmith 0.15.1 adds
threads once 200 run operations wait (a loaded machine), and its OpenTelemetry exporter, shared
by them, drops a run's end it handles before the run's start (``No span found for run``): that
span is never ended, so never exported. One thread keeps a run's start before its end."""


def _reset_langsmith() -> None:
    """Forget langsmith's cached settings and client (read again from the environment)."""
    ls_utils.get_env_var.cache_clear()  # type: ignore[attr-defined]  # lru_cache under @overload
    ls_utils.get_tracer_project.cache_clear()
    langsmith.configure(client=None)


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the busyard scenarios with LangSmith's OpenTelemetry export and the app's spans on
    ``provider``; run name -> trace id."""
    if not labels:
        return {}
    before = {k: os.environ.get(k) for k in OTEL_EXPORT}
    tracer = provider.get_tracer(TRACER)
    out = {}
    with global_provider(provider):
        os.environ.update(OTEL_EXPORT)
        _reset_langsmith()
        langsmith.configure(
            client=langsmith.Client(
                info=ls_schemas.LangSmithInfo(batch_ingest_config=ONE_TRACING_THREAD)
            )
        )
        try:
            with ModelServer(respond=respond) as server, warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # create_react_agent's move
                llm = ChatOpenAI(
                    model=MODEL,
                    base_url=server.base_url("corpus-busyard"),
                    api_key="test",
                    temperature=0,
                )
                for label in labels:
                    out[label.run] = Term(label, llm, tracer).run()
        finally:
            wait_for_all_tracers()
            for k, v in before.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            _reset_langsmith()
    return out

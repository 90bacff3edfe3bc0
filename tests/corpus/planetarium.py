"""A city planetarium's education desk booking a school group's visit, written by hand on the
**Google Gen AI SDK with streaming** (``google-genai``, no agent framework: a non-streamed
``generate_content`` for the planner, ``generate_content_stream`` with function declarations and
automatic function calling off for the executor, the app assembling text and function calls from
the streamed chunks and sending the ``function_response`` parts back itself), traced by
**OpenLLMetry's Google Generative AI instrumentor** (``opentelemetry-instrumentation-
google-generativeai``, ``GoogleGenerativeAiInstrumentor().instrument(tracer_provider=...)``,
uninstrumented after the play) plus the app's own plain OpenTelemetry spans (scope
``planetarium-desk``: a root per visit, a span per runbook draft, per action attempt and per
service call, a check and a watch). The model: a scripted model behind the corpus's fake Gemini
API (:mod:`tests.corpus._fake_gemini`, its streamed route). No planscope code.

Sealed-73 split only (see README.md). The job: find a show on the visit's theme for the dome in
the programme catalogue (read page by page), hold the dome slot for the group, then at once
calibrate the dome's projectors for the show (a job, polled) and book the guest astronomer's
train, invoice the school's account, mail the teacher. As a team that draws its runbooks in
PlantUML writes it:

* the planner answers a **PlantUML activity diagram** (``@startuml`` ... ``@enduml``, ``start``,
  one action ``:<name> = <service>(key="value", ...);`` a step with a ``note right:`` saying
  why, ``if ($<name>.<field>) then (yes)`` ... ``endif`` around an action that only some shows
  need, ``fork`` / ``fork again`` / ``end fork`` around independent actions, ``stop``;
  ``$<name>.<field>`` an earlier action's result). The app reads it with a small hand-written
  reader and runs it itself: actions in the diagram's order (a fork's branches one after the
  other), a condition on an earlier result. After a ``REPLAN`` answer the planner is asked
  again with the settled actions' results and every setback; it answers a new diagram, titled
  with its revision, its comments (``' settled <name>: {json}``) carrying the settled results,
  holding only the actions still to do;
* each action attempt is one executor conversation, a ``generate_content_stream`` call per turn,
  its services as ``types.FunctionDeclaration``\\ s; the app runs the calls the model asks for
  and answers ``{"result": ...}`` or ``{"error": "<fault>"}``. The model ends with a **status
  line** ``<DONE|AGAIN|REPLAN|FAILED|STALLED> <json result> # <note>``;
* the services raise :class:`DomeFault` ``[kind] text``: ``[cloud-cover] ...; clear from HH:MM``
  (the model calls again ``after`` that time, in the same conversation), ``[eclipse]`` (the app
  runs the action again, up to eight attempts), ``[retrograde] ... (use key=value)`` (the app
  asks for a new diagram, up to five), ``[supernova]`` (final). The executor follows the
  catalogue's ``next_page`` and polls an aligning calibration, answering ``STALLED`` after
  :data:`MAX_POLLS` reads.

The planner trusts the schools coordinator's notes over the school's request: a scenario's wrong
value comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from google import genai
from google.genai import types
from opentelemetry.instrumentation.google_generativeai import GoogleGenerativeAiInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer

from ._fake_gemini import MODEL, GeminiServer, Parts, function_call, function_calls, texts
from ._labels import Label

TRACER = "planetarium-desk"
JOB: dict[str, Any] = {
    "school": "Hillcrest Primary, Year 6",
    "theme": "eclipses",
    "audience": "KS2",
    "dome": "Main Dome",
    "date": "2027-03-18",
    "slot": "10:30",
    "seats": 58,
    "astronomer": "Dr Amara Osei",
    "origin": "Leeds",
    "account": "SCH-55120",
    "amount": 377.0,
    "teacher": "j.whitlock@hillcrest.sch.example",
}
NOTED = ("dome", "date", "account")
"""The request fields the schools coordinator's notes may correct."""
SEATS = {"Main Dome": 120, "Star Theatre": 40, "Digital Studio": 30}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_POLLS = 12
"""Calibration reads in one conversation before the executor answers the job stalled."""
MAX_TURNS = 30
"""Model turns in one conversation before the app gives the action up."""
PLANNER = (
    "You are the education desk's runbook writer. Answer a PlantUML activity diagram: one "
    ':name = service(key="value", ...); action per step with a note right: saying why, '
    "fork / fork again / end fork around independent actions, if ($name.field) then (yes) ... "
    "endif around an action only some shows need; $name.field is an earlier action's result."
)
EXECUTOR = (
    "You are the education desk's booking clerk. Carry out the one action you are given with "
    "the services, then answer one line: DONE <json result> # <note>, or AGAIN, REPLAN, FAILED "
    "or STALLED {} # <why>."
)
STATUSES = ("DONE", "AGAIN", "REPLAN", "FAILED", "STALLED")


class DomeFault(RuntimeError):
    """A service's refusal, ``[kind] text``."""


class VisitFailed(RuntimeError):
    """The visit could not be booked (or fell through after it was)."""


# --- the runbook diagram ------------------------------------------------------------------
@dataclass
class Action:
    """One action of the diagram: its service, its arguments (``$name.field`` an earlier
    result), why (its note), the condition it runs under and the fork branch it sits in."""

    name: str
    service: str
    args: dict[str, Any]
    why: str = ""
    when: str = ""
    branch: str = ""


def _literal(value: Any) -> str:
    return json.dumps(value)


def diagram(
    title: str, groups: list[list[list[Action]]], settled: dict[str, Any], setbacks: list[str]
) -> str:
    """A runbook as a PlantUML activity diagram: ``groups`` in order, a group of one branch a
    plain sequence, of more a fork.

    >>> a = Action("bookDome", "book_dome", {"show": "$findShow.show_id", "seats": 58}, "hold it")
    >>> print(diagram("Visit V-1, revision 2", [[[a]]], {"findShow": {"show_id": "S-1"}}, []))
    @startuml
    title Visit V-1, revision 2
    ' settled findShow: {"show_id": "S-1"}
    start
    :bookDome = book_dome(show="$findShow.show_id", seats=58);
    note right: hold it
    stop
    @enduml
    """
    lines = ["@startuml", f"title {title}"]
    lines += [f"' settled {name}: {json.dumps(result)}" for name, result in settled.items()]
    lines += [f"' because: {s}" for s in setbacks]
    lines.append("start")

    def emit(action: Action, indent: str) -> None:
        call = ", ".join(f"{k}={_literal(v)}" for k, v in action.args.items())
        inner = indent
        if action.when:
            lines.append(f"{indent}if ({action.when}) then (yes)")
            inner = indent + "  "
        lines.append(f"{inner}:{action.name} = {action.service}({call});")
        if action.why:
            lines.append(f"{inner}note right: {action.why}")
        if action.when:
            lines.append(f"{indent}endif")

    for group in groups:
        branches = [b for b in group if b]
        if len(branches) == 1:
            for action in branches[0]:
                emit(action, "")
            continue
        for n, branch in enumerate(branches):
            lines.append("fork" if n == 0 else "fork again")
            for action in branch:
                emit(action, "  ")
        if branches:
            lines.append("end fork")
    lines += ["stop", "@enduml"]
    return "\n".join(lines)


_ACTION = re.compile(r"^:(\w+) = (\w+)\((.*)\);$")
_ARG = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^,\s]+)')


def read_diagram(text: str) -> list[Action]:
    """The actions of a PlantUML activity diagram in the order the app runs them.

    >>> text = '''@startuml
    ... start
    ... :findShow = find_show(theme="eclipses", page=1);
    ... note right: a show
    ... fork
    ...   if ($findShow.fulldome) then (yes)
    ...     :calibrate = calibrate_projector(show="$findShow.show_id");
    ...   endif
    ... fork again
    ...   :bookTravel = book_travel(origin="Leeds");
    ... end fork
    ... stop
    ... @enduml'''
    >>> [(a.name, a.args, a.why, a.when, a.branch) for a in read_diagram(text)]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('findShow', {'theme': 'eclipses', 'page': 1}, 'a show', '', ''),
     ('calibrate', {'show': '$findShow.show_id'}, '', '$findShow.fulldome', 'fork 1 branch 1'),
     ('bookTravel', {'origin': 'Leeds'}, '', '', 'fork 1 branch 2')]
    """
    actions: list[Action] = []
    conditions: list[str] = []
    forks = 0
    branch = 0
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("'"):
            continue
        if found := re.match(r"^if \((.*)\) then(?: \(.*\))?$", line):
            conditions.append(found[1].strip())
        elif line == "endif":
            conditions.pop() if conditions else None
        elif line == "fork":
            forks, branch, inside = forks + 1, 1, True
        elif line == "fork again":
            branch += 1
        elif line in ("end fork", "end merge"):
            inside = False
        elif line.startswith("note ") and ":" in line and actions:
            actions[-1].why = line.partition(":")[2].strip()
        elif found := _ACTION.match(line):
            args = {k: json.loads(v) for k, v in _ARG.findall(found[3])}
            where = f"fork {forks} branch {branch}" if inside else ""
            when = " and ".join(conditions)
            actions.append(Action(found[1], found[2], args, "", when, where))
    return actions


def lookup(reference: str, done: dict[str, dict[str, Any]]) -> Any:
    """The value ``$name.field`` names, or the reference itself when that action is not done.

    >>> lookup("$findShow.show_id", {"findShow": {"show_id": "SHW-7"}})
    'SHW-7'
    """
    name, _, key = reference.removeprefix("$").partition(".")
    result = done.get(name)
    if result is None:
        return reference
    return result.get(key, reference) if key else result


def resolve(args: dict[str, Any], done: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """An action's arguments with each ``$name.field`` filled in from the done actions.

    >>> resolve({"show": "$findShow.show_id", "seats": 58}, {"findShow": {"show_id": "SHW-7"}})
    {'show': 'SHW-7', 'seats': 58}
    """
    out: dict[str, Any] = {}
    for k, v in args.items():
        if isinstance(v, str) and re.fullmatch(r"\$\w+(\.\w+)?", v):
            out[k] = lookup(v, done)
        elif isinstance(v, str):
            out[k] = re.sub(r"\$\w+\.\w+", lambda m: str(lookup(m[0], done)), v)
        else:
            out[k] = v
    return out


# --- the scripted model -------------------------------------------------------------------
def uses(setbacks: list[str]) -> dict[str, str]:
    """The values the setbacks say to use, the later over the earlier.

    >>> uses(["bookDome: [retrograde] press preview (use slot=13:15)"])
    {'slot': '13:15'}
    """
    return {m[1]: m[2] for s in setbacks if (m := re.search(r"\(use (\w+)=([^)]+)\)", s))}


def _plan(brief: str) -> str:
    """The planner's diagram: the request's facts, the coordinator's notes trusted over them,
    every value a setback says to use; the settled actions left out."""
    lines = dict(re.findall(r"^(\w[\w' ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Request"]) | json.loads(lines.get("Coordinator's notes", "{}"))
    setbacks = re.findall(r"^Setback: (.*)$", brief, re.MULTILINE)
    facts |= uses(setbacks)
    settled: dict[str, Any] = json.loads(lines.get("Settled", "{}"))
    revision = int(lines.get("Revision", "1"))
    find = Action(
        "findShow",
        "find_show",
        {"theme": facts["theme"], "audience": facts["audience"], "dome": facts["dome"]},
        f"a {facts['audience']} show on {facts['theme']} for the {facts['dome']}",
    )
    dome = Action(
        "bookDome",
        "book_dome",
        {
            "show": "$findShow.show_id",
            "date": facts["date"],
            "slot": facts["slot"],
            "seats": facts["seats"],
        },
        f"hold the dome for {facts['seats']} on {facts['date']} at {facts['slot']}",
    )
    calibrate = Action(
        "calibrate",
        "calibrate_projector",
        {"booking": "$bookDome.booking_id", "show": "$findShow.show_id"},
        "align the fulldome projectors for the show",
        "$findShow.fulldome",
    )
    travel = Action(
        "bookTravel",
        "book_travel",
        {"astronomer": facts["astronomer"], "origin": facts["origin"], "date": "$bookDome.date"},
        f"the guest astronomer's train from {facts['origin']}",
    )
    invoice = Action(
        "invoiceSchool",
        "invoice_school",
        {"account": facts["account"], "booking": "$bookDome.booking_id", "amount": facts["amount"]},
        f"invoice the school's account {facts['account']}",
    )
    notify = Action(
        "notifyTeacher", "notify_teacher",
        {"email": facts["teacher"], "booking": "$bookDome.booking_id",
         "invoice": "$invoiceSchool.invoice"},
        "send the teacher the booking and the invoice",
    )  # fmt: skip
    groups = [[[find]], [[dome]], [[calibrate], [travel]], [[invoice]], [[notify]]]
    groups = [[[a for a in b if a.name not in settled] for b in g] for g in groups]
    title = f"Visit {lines.get('Visit', '')} runbook, revision {revision}"
    return diagram(title, groups, settled, setbacks)


def _say(status: str, result: dict[str, Any] | None = None, note: str = "") -> Parts:
    return [{"text": f"{status} {json.dumps(result or {})} # {note}"}]


def _executor(contents: list[dict[str, Any]]) -> Parts:
    """The clerk's next turn: make the action's call, call again ``after`` a cloud-cover,
    follow ``next_page``, read an aligning calibration, answer the status line."""
    order = texts((contents[0] if contents else {}).get("parts") or [])
    found = re.search(r"^Call: (\w+) (\{.*\})$", order, re.MULTILINE)
    if not found:
        return _say("FAILED", note="no call in the order")
    calls = function_calls(contents)
    if not calls:
        return function_call(found[1], json.loads(found[2]))
    last = calls[-1]
    if "error" in last.response:
        error = str(last.response["error"])
        kind = re.match(r"\[([\w-]+)\]", error)
        if kind and kind[1] == "cloud-cover":
            after = re.search(r"clear from (\d\d:\d\d)", error)
            return function_call(last.name, last.args | {"after": after[1] if after else "later"})
        status = {"eclipse": "AGAIN", "retrograde": "REPLAN"}.get(kind[1] if kind else "", "FAILED")
        return _say(status, note=error)
    result = dict(last.response.get("result") or {})
    if result.get("next_page"):
        return function_call(last.name, last.args | {"page": result["next_page"]})
    if result.get("state") == "aligning":
        reads = sum(c.name == "calibration_status" for c in calls)
        if reads >= MAX_POLLS:
            note = f"calibration {result['job']} still aligning after {reads} reads"
            return _say("STALLED", note=note)
        return function_call("calibration_status", {"job": result["job"]})
    return _say("DONE", result, str(result.pop("note", "")))


def respond(body: dict[str, Any]) -> Parts:
    """The scripted model's turn for one request body.

    >>> body = {"systemInstruction": {"parts": [{"text": PLANNER}]},
    ...     "contents": [{"role": "user", "parts": [{"text": "Request: " + json.dumps(JOB)}]}]}
    >>> print(respond(body)[0]["text"].splitlines()[5])
    :bookDome = book_dome(show="$findShow.show_id", date="2027-03-18", slot="10:30", seats=58);
    """
    system = texts((body.get("systemInstruction") or {}).get("parts") or [])
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
    if system.startswith("You are the education desk's runbook writer"):
        return [{"text": _plan(texts((contents[0] if contents else {}).get("parts") or []))}]
    return _executor(contents)


# --- the services -------------------------------------------------------------------------
@dataclass
class Desk:
    """The programme catalogue, the dome diary, the projection booth, the travel desk, finance
    and the mail of one visit."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    shows: dict[str, str] = field(default_factory=dict)
    bookings: dict[str, dict[str, Any]] = field(default_factory=dict)
    jobs: dict[str, int] = field(default_factory=dict)
    invoices: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, service: str) -> None:
        """Raise the scenario's next fault when ``service`` is the one it targets."""
        if not self.faults or service != self.params.get("tool"):
            return
        f = self.faults.pop(0)
        text = f"[{f['kind']}] {f['text']}"
        if f["kind"] == "cloud-cover":
            raise DomeFault(f"{text}; clear from {f['hint']}")
        if f["kind"] == "retrograde":
            raise DomeFault(f"{text} (use {f['hint']})")
        raise DomeFault(text)

    def find_show(self, theme: str, audience: str, dome: str, page: int = 1) -> dict[str, Any]:
        self.fault("find_show")
        if page < int(self.params.get("pages", 1)):
            taken = [f"SHW-{page}{n}{self.label.seed % 100:02d}" for n in (1, 2)]
            return {"shows": [], "not_for_dome": taken, "next_page": page + 1}
        show = f"SHW-{self.label.seed % 10000:04d}"
        self.shows[show] = dome
        return {
            "show_id": show,
            "title": f"Shadows of the Moon ({audience})",
            "dome": dome,
            "fulldome": dome == "Main Dome",
            "minutes": 45,
        }

    def book_dome(
        self, show: str, date: str, slot: str, seats: int, after: str = ""
    ) -> dict[str, Any]:
        self.fault("book_dome")
        moved = self.params.get("slot_to")
        if moved and slot == JOB["slot"]:
            raise DomeFault(
                f"[retrograde] the {date} {slot} slot is closed for a press preview "
                f"(use slot={moved})"
            )
        dome = self.shows.get(show, "")
        if seats > SEATS.get(dome, 0):
            raise DomeFault(
                f"[supernova] {show} plays in the {dome or 'unknown'} auditorium, which seats "
                f"{SEATS.get(dome, 0)}; a group of {seats} cannot be held there"
            )
        booking = f"DB-{self.label.seed}-{len(self.bookings) + 1}"
        self.bookings[booking] = {"show": show, "dome": dome, "date": date, "slot": slot}
        return {"booking_id": booking, "dome": dome, "date": date, "slot": slot, "seats": seats}

    def calibrate_projector(self, booking: str, show: str) -> dict[str, Any]:
        self.fault("calibrate_projector")
        job = f"CAL-{self.label.seed}-{len(self.jobs) + 1}"
        self.jobs[job] = 0
        if "polls" in self.params or self.params.get("stuck"):
            return {"job": job, "state": "aligning"}
        return {"calibration": job, "state": "ready", "booking": booking}

    def calibration_status(self, job: str) -> dict[str, Any]:
        self.jobs[job] = self.jobs.get(job, 0) + 1
        if self.params.get("stuck") or self.jobs[job] < int(self.params.get("polls", 0)):
            return {"job": job, "state": "aligning", "blend_error_px": 3 + self.jobs[job] % 4}
        return {"calibration": job, "state": "ready"}

    def book_travel(
        self, astronomer: str, origin: str, date: str, after: str = ""
    ) -> dict[str, Any]:
        self.fault("book_travel")
        return {
            "ticket": f"TRN-{self.label.seed % 1000:03d}{origin[:2].upper()}",
            "origin": origin,
            "date": date,
            "departs": after or "06:41",
        }

    def invoice_school(
        self, account: str, booking: str, amount: float, after: str = ""
    ) -> dict[str, Any]:
        self.fault("invoice_school")
        if account != JOB["account"] and account not in self.params.get("accounts", ()):
            raise DomeFault(f"[supernova] finance holds no school account {account}")
        invoice = f"INV-{self.label.seed}-{len(self.invoices) + 1}"
        self.invoices.append({"invoice": invoice, "account": account, "booking": booking})
        return {"invoice": invoice, "account": account, "amount": amount}

    def notify_teacher(
        self, email: str, booking: str, invoice: str, after: str = ""
    ) -> dict[str, Any]:
        self.fault("notify_teacher")
        return {"message": f"MSG-{booking}", "to": email, "sent": after or "now"}

    def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Run the service ``name`` with the model's arguments."""
        services: dict[str, Callable[..., dict[str, Any]]] = {
            "find_show": self.find_show,
            "book_dome": self.book_dome,
            "calibrate_projector": self.calibrate_projector,
            "calibration_status": self.calibration_status,
            "book_travel": self.book_travel,
            "invoice_school": self.invoice_school,
            "notify_teacher": self.notify_teacher,
        }
        if name not in services:
            raise DomeFault(f"[supernova] no service {name}")
        return services[name](**args)


def _declare(name: str, description: str, **params: str) -> types.FunctionDeclaration:
    """A service's declaration: ``params`` name -> JSON type; ``after`` and ``page`` optional."""
    optional = {"after", "page"}
    return types.FunctionDeclaration(
        name=name,
        description=description,
        parameters_json_schema={
            "type": "object",
            "properties": {k: {"type": t} for k, t in params.items()},
            "required": [k for k in params if k not in optional],
        },
    )


SERVICES = types.Tool(
    function_declarations=[
        _declare(
            "find_show", "Shows in the programme catalogue for a theme, audience and dome, a "
            "page at a time.", theme="string", audience="string", dome="string", page="integer",
        ),
        _declare(
            "book_dome", "Hold a dome slot for a show on a date for a number of seats.",
            show="string", date="string", slot="string", seats="integer", after="string",
        ),
        _declare(
            "calibrate_projector", "Start aligning the dome's projectors for a booked show.",
            booking="string", show="string",
        ),
        _declare("calibration_status", "Whether a calibration job is ready.", job="string"),
        _declare(
            "book_travel", "Book a guest astronomer's train to the planetarium for a date.",
            astronomer="string", origin="string", date="string", after="string",
        ),
        _declare(
            "invoice_school", "Invoice a school's account for a booking.",
            account="string", booking="string", amount="number", after="string",
        ),
        _declare(
            "notify_teacher", "Mail the teacher the booking and the invoice.",
            email="string", booking="string", invoice="string", after="string",
        ),
    ]
)  # fmt: skip


# --- the app ------------------------------------------------------------------------------
def _stream(chunks: Iterator[types.GenerateContentResponse]) -> tuple[str, list[types.Part]]:
    """A streamed turn put together: its text and its function-call parts."""
    text: list[str] = []
    calls: list[types.Part] = []
    for chunk in chunks:
        for candidate in (chunk.candidates or [])[:1]:
            for part in (candidate.content.parts if candidate.content else None) or []:
                if part.text:
                    text.append(part.text)
                if part.function_call:
                    calls.append(types.Part(function_call=part.function_call))
    return "".join(text), calls


class Visit:
    """One school visit: runbook drafts and action attempts under the app's root span, then its
    check and watch."""

    def __init__(self, label: Label, client: genai.Client, tracer: Tracer) -> None:
        self.label = label
        self.desk = Desk(label)
        self.client = client
        self.tracer = tracer
        self.visit = f"V-{label.seed}"
        self.revision = 0

    def brief(self, done: dict[str, dict[str, Any]], setbacks: list[str]) -> str:
        notes = {k: self.label.params[k] for k in NOTED if k in self.label.params}
        lines = [
            f"Objective: book {JOB['school']}'s planetarium visit.",
            f"Visit: {self.visit}",
            f"Request: {json.dumps(JOB)}",
        ]
        if notes:
            lines.append(f"Coordinator's notes: {json.dumps(notes)}")
        if self.revision:
            lines += [f"Revision: {self.revision + 1}", f"Settled: {json.dumps(done)}"]
            lines += [f"Setback: {s}" for s in setbacks]
        return "\n".join(lines)

    def draft(self, done: dict[str, dict[str, Any]], setbacks: list[str]) -> list[Action]:
        """Ask the planner for the runbook diagram (again, with the settled actions)."""
        brief = self.brief(done, setbacks)
        self.revision += 1
        with self.tracer.start_as_current_span("runbook draft") as span:
            span.set_attribute("runbook.revision", self.revision)
            if setbacks:
                span.set_attribute("runbook.setback", setbacks[-1])
            response = self.client.models.generate_content(
                model=MODEL,
                contents=brief,
                config=types.GenerateContentConfig(system_instruction=PLANNER),
            )
            text = response.text or ""
            span.set_attribute("runbook.plantuml", text)
            actions = read_diagram(text)
            span.set_attribute("runbook.actions", [a.name for a in actions])
            if not actions:
                span.set_status(Status(StatusCode.ERROR, "no actions in the diagram"))
                raise VisitFailed(f"the runbook has no actions: {text[:200]}")
            return actions

    def service(self, part: types.Part) -> types.Part:
        """Run one function call the model asked for under the app's service span; the
        ``function_response`` part to send back."""
        call = part.function_call
        name, args = (call.name or "", dict(call.args or {})) if call else ("", {})
        with self.tracer.start_as_current_span(f"service {name}") as span:
            span.set_attribute("service.name", name)
            span.set_attribute("service.args", json.dumps(args, sort_keys=True))
            try:
                result = self.desk.call(name, args)
            except (DomeFault, TypeError) as exc:
                span.set_attribute("service.error", str(exc))
                span.set_status(Status(StatusCode.ERROR, str(exc)))
                return types.Part.from_function_response(name=name, response={"error": str(exc)})
            span.set_attribute("service.result", json.dumps(result, sort_keys=True))
            return types.Part.from_function_response(name=name, response={"result": result})

    def attempt(
        self, action: Action, attempt: int, done: dict[str, dict[str, Any]]
    ) -> tuple[str, dict[str, Any], str]:
        """One executor conversation for an action under the app's action span: its status,
        result and note."""
        args = resolve(action.args, done)
        order = (
            f"Action {action.name} (attempt {attempt}) of runbook revision {self.revision}\n"
            f"Why: {action.why}\nCall: {action.service} {json.dumps(args)}"
        )
        config = types.GenerateContentConfig(
            system_instruction=EXECUTOR,
            tools=[SERVICES],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        contents: list[types.Content] = [
            types.Content(role="user", parts=[types.Part.from_text(text=order)])
        ]
        with self.tracer.start_as_current_span(f"action {action.name}") as span:
            span.set_attribute("action.name", action.name)
            span.set_attribute("action.service", action.service)
            span.set_attribute("action.attempt", attempt)
            span.set_attribute("action.call", json.dumps(args))
            if action.branch:
                span.set_attribute("action.branch", action.branch)
            said = ""
            for _ in range(MAX_TURNS):
                text, calls = _stream(
                    self.client.models.generate_content_stream(
                        model=MODEL, contents=contents, config=config
                    )
                )
                parts = ([types.Part.from_text(text=text)] if text else []) + calls
                contents.append(types.Content(role="model", parts=parts))
                if not calls:
                    said = text.strip()
                    break
                replies = [self.service(c) for c in calls]
                contents.append(types.Content(role="user", parts=replies))
            found = re.match(r"^(\w+) (\{.*\}) # ?(.*)$", said, re.DOTALL)
            status, result, note = "STALLED", {}, f"no status line: {said[:200]}"
            if found and found[1] in STATUSES:
                status, result, note = found[1], json.loads(found[2]), found[3].strip()
            span.set_attribute("action.status", status)
            if status == "DONE":
                span.set_attribute("action.result", json.dumps(result, sort_keys=True))
            else:
                span.set_status(Status(StatusCode.ERROR, f"{status}: {note}"))
            return status, result, note

    def carry_out(self) -> dict[str, dict[str, Any]]:
        """Run the diagram's actions in order (again after ``AGAIN``), skip an action whose
        condition is false, draft again after ``REPLAN``; the actions' results."""
        done: dict[str, dict[str, Any]] = {}
        setbacks: list[str] = []
        actions = self.draft(done, setbacks)
        while actions:
            action = actions.pop(0)
            if action.when and not all(
                lookup(c.strip(), done) is True for c in action.when.split(" and ")
            ):
                continue
            for attempt in range(1, MAX_ATTEMPTS + 1):
                status, result, note = self.attempt(action, attempt, done)
                if status != "AGAIN":
                    break
            if status == "DONE":
                done[action.name] = result
            elif status == "REPLAN" and self.revision < MAX_PLANS:
                setbacks.append(f"{action.name}: {note}")
                actions = self.draft(done, setbacks)
            else:
                raise VisitFailed(f"{action.name}: {status}: {note}")
        return done

    def check(self) -> None:
        """The app's check: the dome is held on the day the school asked for."""
        with self.tracer.start_as_current_span("check dome booking") as span:
            booking, held = list(self.desk.bookings.items())[-1]
            span.set_attribute("booking.id", booking)
            span.set_attribute("booking.date", held["date"])
            span.set_attribute("request.date", JOB["date"])
            if held["date"] != JOB["date"]:
                span.set_status(Status(StatusCode.ERROR, "booking date differs from the request"))
                raise VisitFailed(
                    f"dome booking {booking} is for {held['date']}, the school asked for "
                    f"{JOB['date']}"
                )

    def watch(self, booking: str) -> None:
        """The app's watch of the visit in the schools diary: a read a day until the visit."""
        with self.tracer.start_as_current_span("watch visit day") as span:
            span.set_attribute("booking.id", booking)
            reads = int(self.label.params.get("reads", 2))
            for read in range(1, reads + 2):
                if self.label.scenario.startswith("external_") and read > reads:
                    span.add_event("diary", {"read": read, "state": "school closed"})
                    span.set_status(Status(StatusCode.ERROR, "school closed"))
                    raise VisitFailed(
                        f"{JOB['school']} closed for snow on {JOB['date']}: the visit "
                        f"{booking} is off"
                    )
                span.add_event("diary", {"read": read, "state": "confirmed"})

    def run(self) -> str:
        """Book the visit under the app's root span; the OTel trace id."""
        with self.tracer.start_as_current_span(
            f"school visit {self.visit}", record_exception=False, set_status_on_exception=False
        ) as root:
            root.set_attribute("visit.id", self.visit)
            root.set_attribute("visit.school", JOB["school"])
            trace_id = format(root.get_span_context().trace_id, "032x")
            try:
                done = self.carry_out()
                self.check()
                self.watch(str(done["bookDome"]["booking_id"]))
            except VisitFailed as exc:
                root.record_exception(exc)
                root.set_status(Status(StatusCode.ERROR, str(exc)))
                root.set_attribute("visit.outcome", "failed")
            else:
                root.set_attribute("visit.outcome", "booked")
        return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the planetarium scenarios with the instrumentor's and the app's spans on
    ``provider``; run name -> trace id. The instrumentor is removed afterwards."""
    if not labels:
        return {}
    instrumentor = GoogleGenerativeAiInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer(TRACER)
    try:
        with GeminiServer(respond) as server:
            client = genai.Client(
                api_key="test", http_options=types.HttpOptions(base_url=server.base_url)
            )
            return {label.run: Visit(label, client, tracer).run() for label in labels}
    finally:
        instrumentor.uninstrument()

"""A railway society chartering a steam railtour, written by hand on the OpenAI **Responses
API** (``openai``, no agent framework): a planner call with structured output
(``client.responses.parse(..., text_format=RailPlan)``, read back as ``output_parsed``), then
per leg attempt an executor loop with function tools (``tools=[{"type": "function", ...,
"strict": True}]``): the app runs each ``function_call`` output item itself and sends a
``{"type": "function_call_output", "call_id": ..., "output": ...}`` item back, until the model
answers a message. The conversation is carried by **resending the input list** (the
response's ``output`` items appended to it, then the outputs), as the function-calling guide
shows, not by ``previous_response_id``: nothing is stored server-side and every request is
whole. Re-runs and re-plans are decided by the app from the executor's answer.

Traced by OpenInference's OpenAI instrumentor
(``OpenAIInstrumentor().instrument(tracer_provider=...)``, which records Responses API calls:
one LLM span per ``responses.create`` / ``responses.parse``) plus the app's own spans through a
**plain OpenTelemetry tracer** with the app's own attribute names (``railtour.*``; no
OpenInference attribute set by hand), as a user who already has OTel dashboards of their own
writes them: a root span per charter, a span per plan, per leg attempt and per tool run, the
check and watch spans after. The model: a scripted model behind the small fake Responses API of
:mod:`tests.corpus._fake_responses`, reached by the SDK over HTTP (one ``429`` with
``retry-after-ms`` at the first plan of every third charter, which the SDK retries itself). No
planscope code.

Sealed-38 split only (see README.md). The job: a railway society charters a steam railtour
over a heritage main line. Find a steam locomotive whose route availability the line takes in
the locomotive register (read page by page), request a train path for the day from the
timetable office (a polled request), reserve a rake of coaches at a depot, pay the hire fee
from the society's account, mail the members the tour notice. As an OpenAI user writes it:

* the plan is ``{"summary", "legs": [{"leg", "aim", "call", "args": [{"key", "value"}]}]}``; a
  value ``"^<leg>"`` takes the result of that earlier leg; after a ``replan`` answer the
  planner is asked again with the legs run and every issue so far;
* the services **raise** a :class:`Signal` (an aspect of the line's signals); the loop catches
  it and answers the text ``<ASPECT> signal on <tool>: <text>`` with a hint after `` -- ``:
  ``YELLOW ... -- call again after HH:MM`` (the model calls again with ``after``, inside its
  loop), ``RED`` (the model answers ``retry``: the app runs the leg again), ``DIVERTED ... --
  use key=value`` (``replan``: the app plans again), ``BLOCKED`` (``failed``: the charter
  fails);
* the executor follows the register's ``next_page`` and polls a pending path request, giving
  up (``stalled``) after :data:`MAX_POLLS` checks; it ends every loop with one JSON message
  ``{"status": done|retry|replan|failed|stalled, "result": ..., "note": ...}``.

The planner trusts the society secretary's notes over the booking form: a scenario's wrong
value comes from a note. This agent has no scenario of an executor starved of context (no
starvation label).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import wrapt
from openai import OpenAI
from openai.resources.responses import Responses
from openai.types.responses import FunctionToolParam, ResponseFunctionToolCall
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer
from pydantic import BaseModel

from ._fake_responses import MODEL, Item, ResponsesServer, function_call, message
from ._labels import Label

TRACER = "railtour"
ORDER: dict[str, Any] = {
    "tour": "The Fellsman Explorer",
    "society": "Wharfedale Railway Society",
    "route": "Settle-Carlisle",
    "date": "2027-06-12",
    "max_ra": 8,
    "depot": "Carnforth",
    "coaches": 9,
    "account": "WRS-38214",
    "hire": 14250.0,
    "mailing_list": "members@wharfedale-rs.example",
}
LOCOMOTIVES = {7: "45690", 8: "60163", 9: "71000", 10: "92203"}
"""The register's free locomotive of each route availability (the strongest the limit takes)."""
MAX_LEG_ATTEMPTS = 8
MAX_PLANS = 5
MAX_YELLOW = 8
"""``YELLOW`` answers in one executor loop before the model gives up."""
MAX_POLLS = 12
MAX_TURNS = 40
"""Model calls in one executor loop (the app's guard on the function-calling loop)."""
PLANNER = "You plan a railway society's steam railtour charter as legs, in the format given."
EXECUTOR = (
    "You are the society's tour manager. Run the one leg you are given with the tools, then "
    'answer one JSON object: {"status": "done|retry|replan|failed|stalled", "result": "...", '
    '"note": "..."}.'
)
STATUSES = ("done", "retry", "replan", "failed", "stalled")


class Arg(BaseModel):
    """One argument of a leg's call: a value, or ``^<leg>`` for an earlier leg's result."""

    key: str
    value: str


class Leg(BaseModel):
    """One leg of the plan: the tool the executor calls and its arguments."""

    leg: str
    aim: str
    call: str
    args: list[Arg]


class RailPlan(BaseModel):
    """The planner's structured output (the ``text_format``)."""

    summary: str
    legs: list[Leg]


def _tool(name: str, description: str, **props: str) -> FunctionToolParam:
    """A strict function tool; a property whose type ends in ``?`` may be null (strict mode
    wants every property required)."""
    properties = {
        k: {"type": [v.rstrip("?"), "null"] if v.endswith("?") else v} for k, v in props.items()
    }
    return {
        "type": "function",
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": list(props),
            "additionalProperties": False,
        },
        "strict": True,
    }


TOOLS = [
    _tool(
        "search_locomotives",
        "Free steam locomotives in the register up to a route availability, a page at a time.",
        max_ra="integer",
        page="integer?",
    ),
    _tool(
        "request_train_path",
        "Ask the timetable office for a path over a route on a day for a locomotive.",
        loco="string",
        route="string",
        date="string",
        after="string?",
    ),
    _tool("path_status", "Whether the timetable office has offered a path.", request="string"),
    _tool(
        "reserve_coaches",
        "Reserve a rake of coaches at a depot for a locomotive on a day.",
        loco="string",
        depot="string",
        coaches="integer",
        date="string",
        after="string?",
    ),
    _tool(
        "pay_hire_fee",
        "Pay the tour's hire fee from the society's account.",
        account="string",
        amount="number",
        reference="string",
    ),
    _tool(
        "email_passengers",
        "Mail the members the tour notice with the path and the rake.",
        mailing_list="string",
        path="string",
        rake="string",
        after="string?",
    ),
]


# --- the scripted model -------------------------------------------------------------------
def _content(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "".join(str(c.get("text", "")) for c in content or [])


@dataclass
class Call:
    """A ``function_call`` item of the input, with the ``function_call_output`` sent for it."""

    name: str
    args: dict[str, Any]
    output: str = ""


def _calls(items: list[dict[str, Any]]) -> list[Call]:
    """The input's calls in order, each paired by ``call_id`` with its output."""
    calls = {
        i["call_id"]: Call(i["name"], json.loads(i["arguments"]))
        for i in items
        if i.get("type") == "function_call"
    }
    for i in items:
        if i.get("type") == "function_call_output":
            calls[i["call_id"]].output = str(i["output"])
    return list(calls.values())


def _typed(body: dict[str, Any], name: str, args: dict[str, str]) -> dict[str, Any]:
    """The plan's string arguments as the types the tool's schema says, every property the
    plan leaves out given as null (strict tools take every property)."""
    (tool,) = [t for t in body.get("tools") or [] if t.get("name") == name]
    cast = {"integer": int, "number": float}
    out: dict[str, Any] = {}
    for key, schema in tool["parameters"]["properties"].items():
        kind = schema["type"][0] if isinstance(schema["type"], list) else schema["type"]
        out[key] = cast.get(kind, str)(args[key]) if key in args else None
    return out


def _answer(status: str, result: str = "", note: str = "") -> list[Item]:
    return [message(json.dumps({"status": status, "result": result, "note": note}))]


SIGNAL = re.compile(r"^(YELLOW|RED|DIVERTED|BLOCKED) signal on \w+: (.*?)(?: -- (.*))?$")


def _execute(body: dict[str, Any]) -> list[Item]:
    """The tour manager's next output for its leg: call the tool, call again after the time a
    ``YELLOW`` names, follow ``next_page``, poll a pending path, end with a JSON answer."""
    items = body["input"]
    order = dict(re.findall(r"^(\w+): (.*)$", _content(items[0]), re.MULTILINE))
    name = order["Call"]
    args = _typed(body, name, json.loads(order["Args"]))
    calls = _calls(items)
    if not calls:
        return [function_call(name, args)]
    last = calls[-1]
    signal = SIGNAL.match(last.output)
    if signal:
        aspect, text, hint = signal.group(1), signal.group(2), signal.group(3) or ""
        if aspect == "YELLOW":
            yellows = sum(c.output.startswith("YELLOW") for c in calls)
            if yellows >= MAX_YELLOW:
                return _answer("stalled", note=f"still at caution after {yellows} calls: {text}")
            after = hint.rsplit(" ", 1)[-1]
            return [function_call(last.name, last.args | {"after": after})]
        if aspect == "RED":
            return _answer("retry", note=text)
        if aspect == "DIVERTED":
            return _answer("replan", note=f"{text} ({hint})")
        return _answer("failed", note=text)
    said = json.loads(last.output)
    if said.get("next_page"):
        return [function_call(name, args | {"page": said["next_page"]})]
    if said.get("state") == "pending":
        polls = sum(c.name == "path_status" for c in calls)
        if polls >= MAX_POLLS:
            return _answer("stalled", note=f"path {said['request']} pending after {polls} checks")
        return [function_call("path_status", {"request": said["request"]})]
    if "locomotives" in said:
        return _answer("done", said["locomotives"][0]["number"], "locomotive found")
    return _answer("done", said["id"], f"{name} answered")


def uses(issues: list[str]) -> list[tuple[str, str]]:
    """The ``(key, value)`` pairs the issues say to use, in order.

    >>> uses(["book_coaches: the rake is stopped (use depot=Crewe)"])
    [('depot', 'Crewe')]
    """
    return [(m.group(1), m.group(2)) for i in issues if (m := re.search(r"use (\w+)=([^)\s]+)", i))]


def _plan(brief: str) -> dict[str, Any]:
    """The planner's plan: the booking form's facts, the secretary's notes trusted over them;
    every value an issue says to use is used (the later over the earlier); legs run left out."""
    lines = dict(re.findall(r"^(\w[\w' ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Booking form"]) | json.loads(lines.get("Secretary's notes", "{}"))
    run: dict[str, str] = json.loads(lines.get("Legs run", "{}"))
    swaps = dict(uses(re.findall(r"^Issue: (.*)$", brief, re.MULTILINE)))

    def val(key: str, value: Any) -> dict[str, str]:
        return {"key": key, "value": str(swaps.get(key, value))}

    def ref(key: str, leg: str) -> dict[str, str]:
        return {"key": key, "value": f"^{leg}"}

    legs = [
        ("find_loco", f"Find a free steam locomotive of RA{facts['max_ra']} or less.",
         "search_locomotives", [val("max_ra", facts["max_ra"])]),
        ("request_path", f"Get a path over the {facts['route']} on {facts['date']}.",
         "request_train_path",
         [ref("loco", "find_loco"), val("route", facts["route"]), val("date", facts["date"])]),
        ("book_coaches", f"Reserve {facts['coaches']} coaches for the day.", "reserve_coaches",
         [ref("loco", "find_loco"), val("depot", facts["depot"]),
          val("coaches", facts["coaches"]), val("date", facts["date"])]),
        ("pay_hire", f"Pay the {facts['hire']} GBP hire fee.", "pay_hire_fee",
         [val("account", facts["account"]), val("amount", facts["hire"]),
          val("reference", facts["tour"])]),
        ("notify", "Mail the members the tour notice.", "email_passengers",
         [val("mailing_list", facts["mailing_list"]), ref("path", "request_path"),
          ref("rake", "book_coaches")]),
    ]  # fmt: skip
    noted = " (the secretary's notes over the form)" if "Secretary's notes" in lines else ""
    return {
        "summary": f"Run {facts['tour']} over the {facts['route']}{noted}.",
        "legs": [
            {"leg": leg, "aim": aim, "call": call, "args": args}
            for leg, aim, call, args in legs
            if leg not in run
        ],
    }


def respond(body: dict[str, Any]) -> list[Item]:
    """The scripted model's output items for one ``POST /v1/responses``.

    >>> asked = {"instructions": PLANNER, "input": f"Booking form: {json.dumps(ORDER)}"}
    >>> plan = json.loads(respond(asked)[0]["content"][0]["text"])
    >>> plan["legs"][1]["args"][0]
    {'key': 'loco', 'value': '^find_loco'}
    >>> respond({"instructions": "?", "input": "hi"})[0]["content"][0]["text"]
    'Not a railtour matter.'
    """
    instructions = str(body.get("instructions") or "")
    if PLANNER in instructions:
        return [message(json.dumps(_plan(str(body["input"]))))]
    if EXECUTOR in instructions:
        return _execute(body)
    return [message("Not a railtour matter.")]


# --- the world ----------------------------------------------------------------------------
class Signal(RuntimeError):
    """A service's refusal, as an aspect of the line's signals; ``hint`` is what follows the
    text in the tool's output."""

    aspect = "BLOCKED"

    @property
    def hint(self) -> str:
        return ""


class Yellow(Signal):
    """Caution: the service takes the call again after a time."""

    aspect = "YELLOW"

    def __init__(self, text: str, after: str) -> None:
        super().__init__(text)
        self.after = after

    @property
    def hint(self) -> str:
        return f" -- call again after {self.after}"


class Red(Signal):
    """Danger: the service cannot take the call now; the leg is to be run again later."""

    aspect = "RED"


class Diverted(Signal):
    """The service names another value to use: the plan has to change."""

    aspect = "DIVERTED"

    def __init__(self, text: str, use: dict[str, str]) -> None:
        super().__init__(text)
        self.use = use

    @property
    def hint(self) -> str:
        return " -- use " + " ".join(f"{k}={v}" for k, v in self.use.items())


class Blocked(Signal):
    """The service refuses for good."""


ASPECTS: dict[str, type[Signal]] = {
    "yellow": Yellow,
    "red": Red,
    "diverted": Diverted,
    "blocked": Blocked,
}


class CharterFailed(RuntimeError):
    """The railtour could not be run (or failed after it was set up)."""


@dataclass
class Railway:
    """The register, the timetable office, the depots, the bank and the mail of one charter."""

    label: Label
    errors: list[dict[str, Any]] = field(default_factory=list)
    locos: dict[str, int] = field(default_factory=dict)
    requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    rakes: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.errors = [dict(e) for e in self.label.params.get("errors", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, tool: str) -> None:
        """Raise the scenario's next signal when ``tool`` is the one it targets."""
        if self.errors and tool == self.params.get("service"):
            error = self.errors.pop(0)
            raise ASPECTS[error.pop("aspect")](error.pop("text"), **error)

    def search_locomotives(self, max_ra: int, page: int | None = None) -> dict[str, Any]:
        self.fault("search_locomotives")
        page = page or 1
        if page < int(self.params.get("pages", 1)):
            hired = [{"number": f"4{page}{n}07", "ra": max_ra, "free": False} for n in (1, 2, 3)]
            return {"locomotives": [], "on_hire_elsewhere": hired, "next_page": page + 1}
        number = LOCOMOTIVES.get(max_ra, f"{max_ra}0000")
        self.locos[number] = max_ra
        return {"locomotives": [{"number": number, "ra": max_ra, "shed": "Carnforth"}]}

    def request_train_path(
        self, loco: str, route: str, date: str, after: str | None = None
    ) -> dict[str, Any]:
        self.fault("request_train_path")
        ra = self.locos.get(loco, 99)
        if ra > ORDER["max_ra"]:
            raise Blocked(
                f"locomotive {loco} is RA{ra}; the {route} is cleared for RA{ORDER['max_ra']} "
                "engines only"
            )
        request = f"PR-{self.label.seed}-{len(self.requests) + 1}"
        self.requests[request] = {"route": route, "date": date, "polls": 0}
        if "poll" in self.label.scenario:
            return {"request": request, "state": "pending"}
        return {"id": f"1Z{len(self.requests):02d}-{date}", "state": "offered", "date": date}

    def path_status(self, request: str) -> dict[str, Any]:
        asked = self.requests[request]
        asked["polls"] += 1
        stuck = self.label.scenario == "loop_poll_stuck"
        if stuck or asked["polls"] < int(self.params.get("polls", 0)):
            return {"request": request, "state": "pending"}
        return {"id": f"1Z{len(self.requests):02d}-{asked['date']}", "state": "offered"}

    def reserve_coaches(
        self, loco: str, depot: str, coaches: int, date: str, after: str | None = None
    ) -> dict[str, Any]:
        self.fault("reserve_coaches")
        other = self.params.get("depot_to")
        if other and depot == ORDER["depot"]:
            raise Diverted(
                f"the {depot} rake is stopped for its brake examination", {"depot": other}
            )
        rake = f"RK-{depot[:3].upper()}-{len(self.rakes) + 1}"
        self.rakes[rake] = {"loco": loco, "depot": depot, "coaches": coaches, "date": date}
        return {"id": rake, "coaches": coaches, "depot": depot}

    def pay_hire_fee(self, account: str, amount: float, reference: str) -> dict[str, Any]:
        self.fault("pay_hire_fee")
        if account != ORDER["account"]:
            raise Blocked(f"the society's bank holds no account {account}")
        return {"id": f"HF-{self.label.seed}", "amount": amount}

    def email_passengers(
        self, mailing_list: str, path: str, rake: str, after: str | None = None
    ) -> dict[str, Any]:
        self.fault("email_passengers")
        return {"id": f"TN-{path}", "to": mailing_list, "sent": after or "now"}


# --- the app ------------------------------------------------------------------------------
def resolve(leg: Leg, run: dict[str, str]) -> dict[str, str]:
    """A leg's arguments by key, each ``^<leg>`` replaced by that leg's result.

    >>> resolve(Leg(leg="b", aim="", call="f", args=[Arg(key="loco", value="^a"),
    ...     Arg(key="date", value="2027")]), {"a": "60163"})
    {'loco': '60163', 'date': '2027'}
    """
    return {
        a.key: run.get(a.value[1:], "") if a.value.startswith("^") else a.value for a in leg.args
    }


class Charter:
    """One railtour: plans, leg attempts and tool runs under the app's root span, then the
    app's check and watch."""

    def __init__(self, label: Label, client: OpenAI, tracer: Tracer) -> None:
        self.label = label
        self.world = Railway(label)
        self.client = client
        self.tracer = tracer
        self.plans = 0

    def brief(self) -> str:
        notes = {
            k: self.label.params[k] for k in ("max_ra", "date", "account") if k in self.label.params
        }
        lines = [
            f"Charter {ORDER['tour']} for the {ORDER['society']} (job EX-{self.label.seed}).",
            f"Booking form: {json.dumps(ORDER)}",
        ]
        if notes:
            lines.append(f"Secretary's notes: {json.dumps(notes)}")
        return "\n".join(lines)

    def plan(self, run: dict[str, str], issues: list[str]) -> list[Leg]:
        """Ask the planner (again, with the legs run and every issue so far)."""
        self.plans += 1
        brief = self.brief()
        if run or issues:
            brief += f"\nLegs run: {json.dumps(run)}"
            brief += "".join(f"\nIssue: {i}" for i in issues)
        with self.tracer.start_as_current_span(f"plan v{self.plans}") as span:
            span.set_attribute("railtour.plan.version", self.plans)
            span.set_attribute("railtour.plan.issues", issues)
            response = self.client.responses.parse(
                model=MODEL, instructions=PLANNER, input=brief, text_format=RailPlan
            )
            plan = response.output_parsed
            if plan is None:
                raise CharterFailed(f"the planner answered no plan: {response.output_text}")
            span.set_attribute("railtour.plan.legs", [leg.leg for leg in plan.legs])
            return plan.legs

    def run_tool(self, call: ResponseFunctionToolCall) -> str:
        """Run one ``function_call`` under a span of its own; the ``output`` text to send."""
        with self.tracer.start_as_current_span(call.name, record_exception=False) as span:
            span.set_attribute("railtour.tool", call.name)
            span.set_attribute("railtour.call_id", call.call_id)
            span.set_attribute("railtour.arguments", call.arguments)
            try:
                result = getattr(self.world, call.name)(**json.loads(call.arguments))
            except Signal as exc:
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, str(exc)))
                span.set_attribute("railtour.signal", exc.aspect)
                return f"{exc.aspect} signal on {call.name}: {exc}{exc.hint}"
            output = json.dumps(result)
            span.set_attribute("railtour.output", output)
            return output

    def attempt(self, leg: Leg, attempt: int, run: dict[str, str]) -> dict[str, str]:
        """One executor loop for a leg under a span of its own; its JSON answer."""
        args = resolve(leg, run)
        order = (
            f"Leg {leg.leg}, try {attempt}: {leg.aim}\nCall: {leg.call}\nArgs: {json.dumps(args)}"
        )
        with self.tracer.start_as_current_span(f"leg {leg.leg}") as span:
            span.set_attribute("railtour.leg", leg.leg)
            span.set_attribute("railtour.attempt", attempt)
            span.set_attribute("railtour.call", leg.call)
            span.set_attribute("railtour.args", json.dumps(args))
            items: list[Any] = [{"role": "user", "content": order}]
            said = ""
            for _ in range(MAX_TURNS):
                response = self.client.responses.create(
                    model=MODEL, instructions=EXECUTOR, tools=TOOLS, input=items
                )
                items += response.output
                said = response.output_text
                calls = [i for i in response.output if i.type == "function_call"]
                if not calls:
                    break
                for call in calls:
                    items.append(
                        {
                            "type": "function_call_output",
                            "call_id": call.call_id,
                            "output": self.run_tool(call),
                        }
                    )
            try:
                answer = {k: str(v) for k, v in json.loads(said).items()}
            except ValueError:
                answer = {}
            if answer.get("status") not in STATUSES:
                answer = {"status": "stalled", "result": "", "note": f"no answer: {said[:200]}"}
            span.set_attribute("railtour.status", answer["status"])
            span.set_attribute("railtour.result", answer.get("result", ""))
            if answer["status"] != "done":
                span.set_status(Status(StatusCode.ERROR, answer.get("note", "")))
            return answer

    def carry_out(self) -> None:
        """Plan, run each leg (again after ``retry``), plan again after ``replan``."""
        run: dict[str, str] = {}
        issues: list[str] = []
        legs = self.plan(run, issues)
        while legs:
            leg = legs[0]
            for attempt in range(1, MAX_LEG_ATTEMPTS + 1):
                answer = self.attempt(leg, attempt, run)
                if answer["status"] != "retry":
                    break
            status, note = answer["status"], answer.get("note", "")
            if status == "done":
                run[leg.leg] = answer["result"]
                legs = legs[1:]
            elif status == "replan" and self.plans < MAX_PLANS:
                issues.append(f"{leg.leg}: {note}")
                legs = self.plan(run, issues)
            else:
                raise CharterFailed(f"{leg.leg}: {status}: {note}")

    def check(self) -> None:
        """The app's check: the path runs on the booking form's day."""
        with self.tracer.start_as_current_span("check path date") as span:
            path = list(self.world.requests.values())[-1]
            span.set_attribute("railtour.path.date", path["date"])
            span.set_attribute("railtour.form.date", ORDER["date"])
            if path["date"] != ORDER["date"]:
                raise CharterFailed(
                    f"the path runs on {path['date']}, the booking form's day is {ORDER['date']}"
                )

    def watch(self) -> None:
        """The app's watch of the line before the tour: an event a day."""
        with self.tracer.start_as_current_span(f"watch line {ORDER['route']}") as span:
            days = int(self.label.params.get("polls", 1))
            for day in range(1, days + 2):
                if self.label.scenario.startswith("external_") and day > days:
                    span.add_event("line", {"day": day, "state": "closed"})
                    raise CharterFailed("a lineside fire at Ribblehead closed the line")
                span.add_event("line", {"day": day, "state": "open"})

    def run(self) -> str:
        """Charter the railtour under the app's root span; the OTel trace id."""
        with self.tracer.start_as_current_span(
            f"charter {ORDER['tour']}", record_exception=False, set_status_on_exception=False
        ) as root:
            root.set_attribute("railtour.job", f"EX-{self.label.seed}")
            root.set_attribute("railtour.route", ORDER["route"])
            trace_id = format(root.get_span_context().trace_id, "032x")
            try:
                self.carry_out()
                self.check()
                self.watch()
            except CharterFailed as exc:
                root.record_exception(exc)
                root.set_status(Status(StatusCode.ERROR, str(exc)))
                root.set_attribute("railtour.outcome", "failed")
            else:
                root.set_attribute("railtour.outcome", "ran")
        return trace_id


def _limited(body: dict[str, Any]) -> bool:
    """A rate limit at the first plan of every third charter (the SDK waits and retries)."""
    said = body.get("input")
    job = re.search(r"job EX-(\d+)", said) if isinstance(said, str) else None
    return job is not None and int(job.group(1)) % 3 == 1 and "Legs run:" not in str(said)


def _bare(method: Any) -> Any:
    """``method`` without the wrapt wrappers instrumentors put around it."""
    while isinstance(method, wrapt.BaseObjectProxy):
        method = method.__wrapped__
    return method


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the railtour scenarios with the instrumentor's and the app's spans on ``provider``;
    run name -> trace id."""
    if not labels:
        return {}
    # OpenLLMetry's OpenAI instrumentor (harvest's play) leaves its wrappers on the Responses
    # methods after its uninstrument (0.62.4 unwraps them by a dotted name its unwrap does not
    # resolve): they are taken off while this app plays, under OpenInference's instrumentor
    # alone, and put back after, so that the other agents' runs stay as they were
    found = {name: Responses.__dict__[name] for name in ("create", "parse")}
    for name, method in found.items():
        setattr(Responses, name, _bare(method))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer(TRACER)
    try:
        with ResponsesServer(respond, limited=_limited) as server:
            client = OpenAI(base_url=server.base_url, api_key="test", max_retries=2)
            return {label.run: Charter(label, client, tracer).run() for label in labels}
    finally:
        instrumentor.uninstrument()
        for name, method in found.items():
            setattr(Responses, name, method)

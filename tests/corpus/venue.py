"""A conference venue-booking agent on Haystack, traced by OpenInference's Haystack
instrumentor (``openinference-instrumentation-haystack``): Haystack's own
``OpenAIChatGenerator`` against a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)``). No planscope code.

Sealed-10 split only (see README.md). The task: an organiser's event brief comes in; find a
venue in the city for the attendees (a platform search read page by page), hold it for the
dates (the venue confirms the hold later: polled), order the catering, pay the deposit from the
organiser's billing account, send the invitations to the mailing list. As a Haystack user would
write it:

* the app opens one OTel span per event (``book {event}``) and records the outcome;
* the planner is a Haystack ``Pipeline`` (a ``ChatPromptBuilder`` into an
  ``OpenAIChatGenerator``) answering the plan as a **markdown table** (``| # | step | goal |
  tool | inputs |``, inputs as ``key=value`` pairs separated by ``;``); an input ``{{ step }}``
  is a Jinja reference to that earlier row's result, rendered by the app. Asked again after a
  failure, it answers a new version of the table with only the rows not done, numbered on from
  the done ones;
* the executor is a Haystack ``Agent`` run per row attempt, its message ``Row {n} [{step}]:
  goal`` and ``Use {tool} with {inputs}``; the venue platform's services are Haystack
  components given to it as ``ComponentTool`` tools, and it ends its run by calling a ``report``
  tool (the agent's exit condition) with an ``outcome`` (done / later / replan / refused /
  gave_up), a ``result`` and a ``note``;
* the platform answers errors with errno-style tags the model reads from Haystack's ``Failed
  to invoke Tool`` message: ``[EAGAIN]`` (the model calls again in the same run with a longer
  ``timeout_s``), ``[EBUSY]`` (``later``: the app re-runs the row, up to 8 attempts),
  ``[ESTALE]`` (``replan``: the app asks the planner for a new table of the rows not done, up
  to 4 versions), anything else (``[EINVAL]``, ``[EPERM]``, ``[ECANCELED]``) final;
* after the last row the app checks the booking against the brief (``verify booking``) and
  watches the event's status (``watch event``), both plain OTel spans.

The planner trusts the organiser's notes over the brief: the scenario's wrong value comes from
a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass, field
from typing import Any

import jinja2
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import RUNAWAY, Label

# Haystack sends usage statistics when imported unless told not to
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
from haystack import Pipeline, component
from haystack.components.agents import Agent
from haystack.components.builders import ChatPromptBuilder
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.tools import ComponentTool, Tool, create_tool_from_function
from haystack.utils import Secret

BRIEF: dict[str, Any] = {
    "title": "Midlands Data Summit",
    "city": "leicester",
    "attendees": 240,
    "start": "2027-03-11",
    "end": "2027-03-12",
    "menu": "buffet-veg",
    "billing": "BA-55120",
    "mailing_list": "ML-midlands-data",
}
PRICE_PER_COVER = 45
VENUE_FEE = 4000
APPROVAL_LIMIT = 20000
"""The billing account's approval limit for one deposit."""
MAX_ROW_ATTEMPTS = 8
MAX_PLAN_VERSIONS = 4
MAX_STATUS_CHECKS = 12
MAX_AGENT_STEPS = 24
RETRY, LATER, STALE = "EAGAIN", "EBUSY", "ESTALE"
ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*(\w+)\s*\|\s*(.*?)\s*\|\s*(\w+)\s*\|\s*(.*?)\s*\|$")


class PlatformError(RuntimeError):
    """An error answer of the venue platform or a service behind it: ``[TAG] text``."""

    def __init__(self, tag: str, text: str):
        super().__init__(f"[{tag}] {text}")


# --- the plan table -------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    """One row of the planner's table."""

    number: int
    step: str
    goal: str
    tool: str
    inputs: dict[str, str]


def parse_table(text: str) -> list[Row]:
    """The rows of a plan table (header and rule lines skipped).

    >>> parse_table("| # | step | goal | tool | inputs |\\n|---|---|---|---|---|\\n"
    ...             "| 3 | pay | Pay | deposit_payment | hold={{ hold }}; billing=BA-1 |")[0].inputs
    {'hold': '{{ hold }}', 'billing': 'BA-1'}
    """
    rows = []
    for line in text.splitlines():
        m = ROW.match(line.strip())
        if not m:
            continue
        pairs = (p.split("=", 1) for p in m.group(5).split(";") if "=" in p)
        inputs = {k.strip(): v.strip() for k, v in pairs}
        rows.append(Row(int(m.group(1)), m.group(2), m.group(3), m.group(4), inputs))
    return rows


def _table(
    version: int, event: str, rows: list[tuple[str, str, str, dict[str, Any]]], first: int
) -> str:
    lines = [
        f"Plan v{version} for {event}:",
        "",
        "| # | step | goal | tool | inputs |",
        "|---|------|------|------|--------|",
    ]
    for n, (step, goal, tool, inputs) in enumerate(rows, first):
        cells = "; ".join(f"{k}={v}" for k, v in inputs.items())
        lines.append(f"| {n} | {step} | {goal} | {tool} | {cells} |")
    return "\n".join(lines)


# --- the scripted model (answers on the conformance suite's fake OpenAI server) -------------
def _section(text: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", text, re.MULTILINE)
    return m.group(1) if m else ""


def _planner(brief: str) -> dict[str, Any]:
    """The planner's table: the brief's facts, the notes trusted over them, the menu or billing
    account a problem names, only the rows not done (numbered on from the done ones)."""
    facts = json.loads(_section(brief, "Brief")) | json.loads(_section(brief, "Notes") or "{}")
    done = json.loads(_section(brief, "Done") or "[]")
    problem = _section(brief, "Problem")
    version = int(_section(brief, "Version") or 1)
    menu = re.search(r"now serves menu ([\w-]+)", problem)
    billing = re.search(r"bill to (BA-\d+)", problem)
    rows = [
        ("find_venue", f"Find a venue in {facts['city']} for {facts['attendees']}",
         "venue_search", {"city": facts["city"], "capacity": facts["attendees"]}),
        ("hold_dates", f"Hold the venue from {facts['start']} to {facts['end']}",
         "venue_hold", {"venue": "{{ find_venue }}", "start": facts["start"],
                        "end": facts["end"]}),
        ("order_catering", "Order catering for every attendee",
         "catering_order",
         {"hold": "{{ hold_dates }}", "covers": facts.get("covers", facts["attendees"]),
          "menu": menu.group(1) if menu else facts["menu"]}),
        ("pay_deposit", "Pay the venue and catering deposit",
         "deposit_payment",
         {"hold": "{{ hold_dates }}", "catering": "{{ order_catering }}",
          "billing": billing.group(1) if billing else facts["billing"]}),
        ("send_invites", "Send the invitations to the mailing list",
         "invite_sender", {"hold": "{{ hold_dates }}", "mailing_list": facts["mailing_list"]}),
    ]  # fmt: skip
    todo = [r for r in rows if r[0] not in done]
    text = _table(version, facts["event"], todo, len(done) + 1)
    return {"role": "assistant", "content": text}


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"call_{name}_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _inputs(text: str) -> dict[str, Any]:
    """A row's ``key=value`` inputs as tool arguments (whole numbers as numbers)."""
    pairs = (p.split("=", 1) for p in text.split(";") if "=" in p)
    return {k.strip(): int(v) if v.strip().isdigit() else v.strip() for k, v in pairs}


def _executor(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The executor's turn: make the call the row names, call again after ``EAGAIN`` with a
    longer timeout, follow ``next_page``, poll a hold until it is confirmed, report."""
    use = re.search(r"^Use (\w+) with (.*)$", task, re.MULTILINE)
    assert use, task
    tool_name, args = use.group(1), _inputs(use.group(2))
    results = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
    n = len(results)
    if not results:
        return _call(n, tool_name, args)
    last = results[-1]
    tag = re.search(r"Error: \[([A-Z]+)\] (.*)$", last, re.DOTALL)
    if tag:
        if tag.group(1) == RETRY:
            retries = sum(f"[{RETRY}]" in r for r in results)
            return _call(n, tool_name, args | {"timeout_s": 30 * 2**retries})
        outcome = {LATER: "later", STALE: "replan"}.get(tag.group(1), "refused")
        return _call(n, "report", {"outcome": outcome, "note": f"[{tag.group(1)}] {tag.group(2)}"})
    seen = json.loads(last)
    if "next_page" in seen:
        return _call(n, tool_name, args | {"page": seen["next_page"]})
    if seen.get("status") == "PENDING":
        checks = sum(
            call["function"]["name"] == "hold_status"
            for m in messages
            for call in m.get("tool_calls") or ()
        )
        if checks >= MAX_STATUS_CHECKS:
            note = f"hold {seen['hold']} still PENDING after {checks} status checks"
            return _call(n, "report", {"outcome": "gave_up", "note": note})
        return _call(n, "hold_status", {"hold": seen["hold"]})
    return _call(n, "report", {"outcome": "done", "result": str(seen["value"])})


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the planner's table for a
    brief, the executor's next tool call otherwise.

    >>> msg = respond({"messages": [{"role": "user", "content": "Use f with a=1; b=x"}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"a": 1, "b": "x"}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if task.startswith("Brief: "):
        return completion(body, _planner(task))
    return completion(body, _executor(messages, task))


# --- the world ------------------------------------------------------------------------------
@dataclass
class World:
    """The venue platform: venue search, holds, catering, deposits and invitations."""

    label: Label
    event: str
    step: str = ""
    errors: list[str] = field(default_factory=list)
    venues: dict[str, str] = field(default_factory=dict)
    """Venue -> its city."""
    holds: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Hold -> its venue, dates and status polls."""
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)
    billing: set[str] = field(default_factory=lambda: {BRIEF["billing"]})
    """Billing accounts open for the organiser."""
    menus: set[str] = field(default_factory=lambda: {BRIEF["menu"]})
    """Menus the caterer serves."""
    deposits: dict[str, int] = field(default_factory=dict)
    invited: str = ""

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        if "new_menu" in self.label.params:
            self.menus = {self.label.params["new_menu"]}

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self) -> None:
        """Raise the scenario's next error when the call belongs to the row it targets."""
        if not self.errors or self.step != self.params.get("step"):
            return
        text = self.errors.pop(0)
        if not self.errors and self.label.kind == RUNAWAY:
            raise PlatformError("ECANCELED", f"{text}; request dropped")
        how = self.params.get("raise")
        if how == "again":
            raise PlatformError(RETRY, text)
        if how == "replans" and len(self.errors) % 2 == 0:
            account = f"BA-{56000 + 13 * len(self.errors)}"
            self.billing.add(account)
            raise PlatformError(STALE, f"{text}; billing account frozen, bill to {account}")
        raise PlatformError(LATER, text)


@component
class VenueSearch:
    """Search the venue platform for venues in a city with room for the attendees, a page of
    results at a time."""

    def __init__(self, world: World):
        self.world = world

    @component.output_types(result=dict)
    def run(self, city: str, capacity: int, page: int = 1, timeout_s: int = 30) -> dict[str, Any]:
        """
        :param city: the city
        :param capacity: the seats needed
        :param page: the result page
        :param timeout_s: how long to wait for the platform
        """
        self.world.fault()
        pages = int(self.world.params.get("pages", 1))
        code = city[:3].upper()
        if page < pages:
            full = [f"V-{code}-{page}{n}" for n in range(3)]
            return {"result": {"venues": full, "booked_out": True, "next_page": page + 1}}
        venue = f"V-{code}-{pages}7"
        self.world.venues[venue] = city
        return {"result": {"value": venue, "city": city, "seats": capacity + 60}}


@component
class VenueHold:
    """Ask a venue to hold its main hall for the event's dates; the venue confirms later."""

    def __init__(self, world: World):
        self.world = world

    @component.output_types(result=dict)
    def run(self, venue: str, start: str, end: str, timeout_s: int = 30) -> dict[str, Any]:
        """
        :param venue: the venue
        :param start: the first day (ISO date)
        :param end: the last day (ISO date)
        :param timeout_s: how long to wait for the venue
        """
        self.world.fault()
        if venue not in self.world.venues:
            raise PlatformError("EINVAL", f"no venue {venue} on the platform")
        hold = f"H-{self.world.label.seed}-{len(self.world.holds)}"
        self.world.holds[hold] = {"venue": venue, "start": start, "end": end, "polls": 0}
        return {"result": {"hold": hold, "status": "PENDING"}}


@component
class HoldStatus:
    """The state of a hold request; the hold once the venue confirms it."""

    def __init__(self, world: World):
        self.world = world

    @component.output_types(result=dict)
    def run(self, hold: str) -> dict[str, Any]:
        """
        :param hold: the hold request
        """
        entry = self.world.holds[hold]
        entry["polls"] += 1
        if self.world.label.scenario == "loop_poll_stuck" or entry["polls"] < int(
            self.world.params.get("polls", 1)
        ):
            return {"result": {"hold": hold, "status": "PENDING"}}
        return {"result": {"hold": hold, "status": "CONFIRMED", "value": hold}}


@component
class CateringOrder:
    """Order catering for a held venue from the platform's caterer in the venue's city."""

    def __init__(self, world: World):
        self.world = world

    @component.output_types(result=dict)
    def run(self, hold: str, covers: int, menu: str, timeout_s: int = 30) -> dict[str, Any]:
        """
        :param hold: the venue hold
        :param covers: the number of covers
        :param menu: the menu
        :param timeout_s: how long to wait for the caterer
        """
        self.world.fault()
        if hold not in self.world.holds:
            raise PlatformError("EINVAL", f"no hold {hold}")
        city = self.world.venues[self.world.holds[hold]["venue"]]
        if city != BRIEF["city"]:
            raise PlatformError(
                "EINVAL", f"the caterer delivers within {BRIEF['city']} only; {hold} is in {city}"
            )
        if menu not in self.world.menus:
            (served,) = self.world.menus
            raise PlatformError(STALE, f"menu {menu} withdrawn; the caterer now serves menu "
                                       f"{served}")  # fmt: skip
        order = f"CAT-{self.world.label.seed}-{len(self.world.orders)}"
        self.world.orders[order] = {"hold": hold, "covers": covers, "menu": menu}
        return {"result": {"value": order, "covers": covers, "price": covers * PRICE_PER_COVER}}


@component
class DepositPayment:
    """Pay the deposit for a held venue and its catering from a billing account."""

    def __init__(self, world: World):
        self.world = world

    @component.output_types(result=dict)
    def run(self, hold: str, catering: str, billing: str, timeout_s: int = 30) -> dict[str, Any]:
        """
        :param hold: the venue hold
        :param catering: the catering order
        :param billing: the organiser's billing account
        :param timeout_s: how long to wait for the payment service
        """
        self.world.fault()
        if billing not in self.world.billing:
            raise PlatformError("EPERM", f"no billing account {billing} for this organiser")
        amount = VENUE_FEE + self.world.orders[catering]["covers"] * PRICE_PER_COVER
        if amount > APPROVAL_LIMIT:
            raise PlatformError(
                "EPERM",
                f"deposit {amount} exceeds the approval limit {APPROVAL_LIMIT} of {billing}",
            )
        self.world.deposits[hold] = amount
        return {"result": {"value": f"DEP-{self.world.label.seed}", "amount": amount}}


@component
class InviteSender:
    """Send the event's invitations to a mailing list."""

    def __init__(self, world: World):
        self.world = world

    @component.output_types(result=dict)
    def run(self, hold: str, mailing_list: str, timeout_s: int = 30) -> dict[str, Any]:
        """
        :param hold: the venue hold (the invitation carries its venue and dates)
        :param mailing_list: the mailing list
        :param timeout_s: how long to wait for the mailer
        """
        self.world.fault()
        if hold not in self.world.deposits:
            raise PlatformError("EPERM", f"hold {hold} has no deposit paid")
        self.world.invited = f"INV-{self.world.label.seed}"
        return {"result": {"value": self.world.invited, "list": mailing_list}}


def report(outcome: str, result: str = "", note: str = "") -> str:
    """Report how the row went; this ends the run.

    :param outcome: done, later (try the row again later), replan, refused or gave_up
    :param result: the row's result (an id) when done
    :param note: what went wrong, if anything
    """
    return json.dumps({"outcome": outcome, "result": result, "note": note})


def make_tools(world: World) -> list[Tool]:
    """The venue platform's services, bound to one event's world, and the report tool."""
    services = (VenueSearch, VenueHold, HoldStatus, CateringOrder, DepositPayment, InviteSender)
    tools: list[Tool] = [
        ComponentTool(cls(world), outputs_to_string={"source": "result"}) for cls in services
    ]
    return [*tools, create_tool_from_function(report)]


# --- the app --------------------------------------------------------------------------------
class Failed(Exception):
    """The event was not booked and announced (the reason is the message)."""


PLANNER_PROMPT = [
    ChatMessage.from_system(
        "You plan conference bookings on the venue platform. Answer a markdown table with "
        "the columns #, step, goal, tool, inputs (key=value pairs separated by ;). Refer to an "
        "earlier row's result as {{ '{{' }} step {{ '}}' }}. Trust the organiser's notes."
    ),
    ChatMessage.from_user(
        "Brief: {{ brief }}\nNotes: {{ notes }}\nDone: {{ done }}\nProblem: {{ problem }}\n"
        "Version: {{ version }}"
    ),
]


class Organiser:
    """One event, from its brief to the watched event day."""

    def __init__(self, label: Label, base_url: str):
        self.label = label
        self.world = World(label, event=f"EVT-{label.seed % 9000 + 1000}")
        self.planner = Pipeline()
        self.planner.add_component(
            "prompt",
            ChatPromptBuilder(
                template=PLANNER_PROMPT,
                required_variables=["brief", "notes", "done", "problem", "version"],
            ),
        )
        self.planner.add_component("llm", self._model(base_url))
        self.planner.connect("prompt.prompt", "llm.messages")
        self.executor = Agent(
            chat_generator=self._model(base_url),
            tools=make_tools(self.world),
            system_prompt="You carry out one row of an event plan with the venue platform's "
            "tools, then call report.",
            exit_conditions=["report"],
            max_agent_steps=MAX_AGENT_STEPS,
        )
        self.results: dict[str, str] = {}

    @staticmethod
    def _model(base_url: str) -> OpenAIChatGenerator:
        return OpenAIChatGenerator(
            api_key=Secret.from_token("test"), model=MODEL, api_base_url=base_url, max_retries=0
        )

    def plan(self, problem: str, version: int) -> list[Row]:
        notes = {
            k: self.label.params[k]
            for k in ("city", "start", "end", "covers", "billing")
            if k in self.label.params
        }
        out = self.planner.run(
            {
                "prompt": {
                    "brief": json.dumps({"event": self.world.event} | BRIEF),
                    "notes": json.dumps(notes),
                    "done": json.dumps(list(self.results)),
                    "problem": problem,
                    "version": version,
                }
            }
        )
        return parse_table(out["llm"]["replies"][0].text or "")

    def attempt(self, row: Row) -> dict[str, str]:
        """One executor run of a row, its ``{{ step }}`` inputs rendered from done rows; the
        arguments of its ``report`` call."""
        inputs = "; ".join(
            f"{k}={jinja2.Template(v).render(self.results)}" for k, v in row.inputs.items()
        )
        task = f"Row {row.number} [{row.step}]: {row.goal}\nUse {row.tool} with {inputs}"
        self.world.step = row.step
        out = self.executor.run(messages=[ChatMessage.from_user(task)])
        call = out["last_message"].tool_call_result.origin
        assert call.tool_name == "report", out["exit_reason"]
        return {k: str(v) for k, v in call.arguments.items()}

    def work(self) -> None:
        problem = ""
        for version in range(1, MAX_PLAN_VERSIONS + 1):
            rows = self.plan(problem, version)
            problem = ""
            for row in rows:
                for attempt in range(1, MAX_ROW_ATTEMPTS + 1):
                    got = self.attempt(row)
                    outcome, note = got["outcome"], got.get("note", "")
                    if outcome == "done":
                        self.results[row.step] = got["result"]
                        break
                    if outcome == "later" and attempt < MAX_ROW_ATTEMPTS:
                        continue
                    if outcome == "replan" and version < MAX_PLAN_VERSIONS:
                        problem = f"{row.step}: {note}"
                        break
                    raise Failed(f"{row.step}: {outcome}: {note}")
                if problem:
                    break
            if not problem:
                return
        raise Failed(problem)

    def check(self, tracer: otel_trace.Tracer) -> None:
        """The app's own checks once the invitations are out: the held venue and dates and the
        catering against the brief, then the event's status."""
        with tracer.start_as_current_span("verify booking") as span:
            hold = self.world.holds[self.results["hold_dates"]]
            order = self.world.orders[self.results["order_catering"]]
            span.set_attribute("event.hold", self.results["hold_dates"])
            span.set_attribute("event.dates", f"{hold['start']}..{hold['end']}")
            span.set_attribute("brief.dates", f"{BRIEF['start']}..{BRIEF['end']}")
            span.set_attribute("event.covers", int(order["covers"]))
            if (hold["start"], hold["end"]) != (BRIEF["start"], BRIEF["end"]):
                reason = (
                    f"venue held {hold['start']} to {hold['end']}, the brief says "
                    f"{BRIEF['start']} to {BRIEF['end']} (deposit "
                    f"{self.world.deposits[self.results['hold_dates']]} paid)"
                )
                span.set_status(Status(StatusCode.ERROR, reason))
                raise Failed(reason)
        with tracer.start_as_current_span("watch event") as span:
            states = ("CONFIRMED", "SETUP", "DOORS_OPEN", "IN_PROGRESS", "CLOSED")
            for poll, state in enumerate(states, 1):
                if self.label.scenario == "external_strike" and poll > int(
                    self.label.params["polls"]
                ):
                    reason = "event cancelled by the venue: venue staff on strike"
                    span.set_status(Status(StatusCode.ERROR, reason))
                    raise Failed(reason)
                span.add_event("event", {"poll": poll, "state": state})

    def run(self, tracer: otel_trace.Tracer) -> str:
        with tracer.start_as_current_span(f"book {self.world.event}") as root:
            root.set_attribute("event.id", self.world.event)
            try:
                self.work()
                self.check(tracer)
                root.set_attribute("event.outcome", "held")
            except Failed as e:
                root.set_attribute("event.outcome", "failed")
                root.set_status(Status(StatusCode.ERROR, str(e)))
            return format(root.get_span_context().trace_id, "032x")


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the venue scenarios with OpenInference's Haystack instrumentor on ``provider``."""
    out: dict[str, str] = {}
    if not labels:
        return out
    from openinference.instrumentation.haystack import HaystackInstrumentor

    instrumentor = HaystackInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    # the agent logs an error for every failed tool call; the spans carry them
    tool_log = logging.getLogger("haystack.components.agents.tool_calling")
    level = tool_log.level
    tool_log.setLevel(logging.CRITICAL)
    try:
        with ModelServer(respond=respond) as server:
            tracer = provider.get_tracer("venue-app")
            for label in labels:
                out[label.run] = Organiser(label, server.base_url("corpus-venue")).run(tracer)
    finally:
        tool_log.setLevel(level)
        instrumentor.uninstrument()
    return out

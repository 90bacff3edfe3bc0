"""A hot-air balloon operator flying a festival's passenger flight, written as an AutoGen user
writes plan-then-execute today: a real AutoGen AgentChat **``SelectorGroupChat``** (the team
AutoGen's docs build their own planning example on: a planning agent that hands each task to a
named team member, a ``selector_func`` choosing who speaks next) of a ``flight_planner``
``AssistantAgent`` and two tool-using ``AssistantAgent`` executors whose tools are
``FunctionTool``s over plain Python functions, ended by ``TextMentionTermination`` /
``MaxMessageTermination``. Traced by **OpenInference's autogen-agentchat instrumentor**
(``AutogenAgentChatInstrumentor().instrument(tracer_provider=...)``: it wraps the team's
``run_stream``, each agent's ``on_messages_stream``, the assistant's tool calls and the
``OpenAIChatCompletionClient``'s ``create``; its quickstart adds no OpenAI instrumentor, which
would record each model call twice) plus the app's own spans through a tracer of the same
provider (a root span per flight, a check and a watch). AutoGen's own runtime tracing stays off:
the instrumentor's docs never turn it on, and the team's runtime is given no tracer provider.
The model: a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)``). No planscope code.

Sealed-43 split only (see README.md). The flight: find a launch field for the basket's
passengers in the county's field registry (read page by page), get the airspace permit (a polled
request), book the chase crew for the flight date, charge the pilot's account the fare, send
the passengers the boarding notice.

* the planner's model answers a **flight card**, one leg a line,
  ``L<n> <step> @<agent> :: <tool> key=<json> key=^L<k> ... :: <goal>`` (``^L<k>``: leg k's
  result), then a clearance ``CLEARED L<n> <step> @<agent> (attempt <a>): <tool> <json args>``
  the ``selector_func`` reads to pick the executor; after a debrief it clears the next leg, the
  same leg again (``go-around``), writes the next card revision (``divert``: the legs landed as
  ``L<n> <step> :: landed => <value>``, every ``use X instead of Y`` applied), or closes the
  flight (``FLIGHT CLOSED`` / ``FLIGHT SCRUBBED``, the termination texts);
* an executor's model answers ``DEBRIEF L<n> <step> | <landed|go-around|divert|grounded|holding>
  | <value or reason>``;
* the services raise :class:`TowerCall` in air-traffic phraseology; AutoGen's workbench hands
  the model the exception's text as the tool result (``FunctionExecutionResult(is_error=True)``,
  no prefix): ``HOLD SHORT UNTIL
  HH:MM: ...`` (the model calls again with ``slot`` that time), ``GO AROUND: ...`` (the leg is
  flown again), ``DIVERT: use X instead of Y: ...`` (a new card), ``GROUNDED: ...`` (final).

The planner trusts the pilot's notes over the flight order: a scenario's wrong value comes from a
note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from warnings import catch_warnings, filterwarnings

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.base import ChatAgent, Team
from autogen_agentchat.conditions import MaxMessageTermination, TextMentionTermination
from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage
from autogen_agentchat.teams import SelectorGroupChat
from autogen_core.models import ModelInfo
from autogen_core.tools import FunctionTool
from autogen_ext.models.openai import OpenAIChatCompletionClient
from openinference.instrumentation.autogen_agentchat import AutogenAgentChatInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label

FLIGHT: dict[str, Any] = {
    "flight": "SKY-2207",
    "festival": "Ashcombe Balloon Fiesta",
    "county": "Somerset",
    "passengers": 8,
    "date": "2027-08-14",
    "crew": "Red chase crew",
    "account": "PIL-55210",
    "fare": 1840.0,
    "email": "bookings@skylark-flights.example",
}
TRACER = "balloon-app"
PLANNER = "flight_planner"
MAX_LEG_ATTEMPTS = 8
"""Clearances of one leg under one card before the planner scrubs the flight."""
MAX_CARDS = 5
MAX_HOLDS = 8
"""``HOLD SHORT`` answers in one executor turn before the model gives up."""
MAX_POLLS = 12
MAX_MESSAGES = 120
LEG = re.compile(r"^L(\d+) (\w+) @(\w+) :: (\w+)((?: \w+=(?:\^L\d+|\"[^\"]*\"|\S+))*) :: (.*)$")
LANDED = re.compile(r"^L(\d+) (\w+) :: landed => (.*)$")
ARG = re.compile(r"(\w+)=(\^L\d+|\"[^\"]*\"|\S+)")
CLEARED = re.compile(r"^CLEARED L(\d+) (\w+) @(\w+) \(attempt (\d+)\): (\w+) (\{.*\})$", re.M)
DEBRIEF = re.compile(
    r"^DEBRIEF L(\d+) (\w+) \| (landed|go-around|divert|grounded|holding) \| (.*)$"
)
TOWER = re.compile(r"^(HOLD SHORT UNTIL (\d\d:\d\d)|GO AROUND|DIVERT|GROUNDED): (.*)$", re.S)
INSTEAD = re.compile(r"use (.+?) instead of (.+?)(?::|$)")
PLANNER_PROMPT = (
    "You are the flight planner of a balloon operator. Write the flight card, clear one leg at "
    "a time to the team member who flies it, and close or scrub the flight."
)
EXECUTOR_PROMPT = (
    "You are the {name} of a balloon operator. Fly the leg you are cleared for with your tools "
    "and answer one DEBRIEF line."
)


class TowerCall(RuntimeError):
    """A service's refusal in air-traffic phraseology: ``<PHRASE>: <text>``."""


# --- the plan: the flight card --------------------------------------------------------------
@dataclass(frozen=True)
class Leg:
    """One card line; an argument ``("ref", k)`` is leg k's result."""

    no: int
    step: str
    agent: str
    tool: str
    args: dict[str, tuple[str, Any]]
    goal: str


def parse_card(text: str) -> tuple[list[Leg], dict[int, str]]:
    """The open legs of a flight card and the results its landed legs carry.

    >>> legs, landed = parse_card('L1 find_field :: landed => FLD-1\\n'
    ...     'L2 file_permit @field_scout :: airspace_permit field=^L1 passengers=8 :: get it')
    >>> landed, legs[0].args
    ({1: 'FLD-1'}, {'field': ('ref', 1), 'passengers': ('value', 8)})
    """
    legs, landed = [], {}
    for line in text.splitlines():
        if m := LANDED.match(line):
            landed[int(m.group(1))] = m.group(3)
        elif m := LEG.match(line):
            args = {
                k: ("ref", int(v[2:])) if v.startswith("^L") else ("value", json.loads(v))
                for k, v in ARG.findall(m.group(5))
            }
            legs.append(Leg(int(m.group(1)), m.group(2), m.group(3), m.group(4), args, m.group(6)))
    return legs, landed


# --- the scripted model ---------------------------------------------------------------------
def _given(task: str) -> dict[str, Any]:
    """The flight order and the pilot's notes trusted over it."""
    order = json.loads(re.search(r"Flight order: (\{.*?\})", task).group(1))  # type: ignore[union-attr]
    notes = re.search(r"Pilot's notes: (\{.*?\})", task)
    return order | (json.loads(notes.group(1)) if notes else {})


def _card(task: str, rev: int, landed: dict[int, str], swaps: list[tuple[str, str]]) -> str:
    """Flight card ``rev``: the landed legs kept with their results, every swap applied."""
    f = _given(task)
    q = json.dumps
    legs = [
        (1, "find_field", "field_scout", f"field_registry county={q(f['county'])} "
         f"passengers={f['passengers']}", "find a launch field for the basket"),
        (2, "file_permit", "field_scout", f"airspace_permit field=^L1 passengers="
         f"{f['passengers']}", "get the airspace permit for the field"),
        (3, "book_chase", "crew_clerk", f"chase_booking field=^L1 permit=^L2 date={q(f['date'])} "
         f"crew={q(f['crew'])}", "book the chase crew for the flight date"),
        (4, "charge_pilot", "crew_clerk", f"charge_account account={q(f['account'])} "
         f"amount={f['fare']} booking=^L3", "charge the pilot's account the fare"),
        (5, "notify_passengers", "crew_clerk", f"passenger_notice email={q(f['email'])} "
         "booking=^L3 charge=^L4", "send the passengers the boarding notice"),
    ]  # fmt: skip
    lines = [f"FLIGHT CARD rev {rev} for {f['flight']}"]
    for no, step, agent, call, goal in legs:
        if no in landed:
            lines.append(f"L{no} {step} :: landed => {landed[no]}")
            continue
        for new, old in swaps:
            call = call.replace(q(old), q(new))
        lines.append(f"L{no} {step} @{agent} :: {call} :: {goal}")
    return "\n".join(lines)


def _clear(leg: Leg, landed: dict[int, str], attempt: int) -> str:
    args = {k: landed[v] if how == "ref" else v for k, (how, v) in leg.args.items()}
    return (
        f"CLEARED L{leg.no} {leg.step} @{leg.agent} (attempt {attempt}): {leg.tool} "
        f"{json.dumps(args)}"
    )


def _planner(messages: list[dict[str, Any]]) -> str:
    """The planner's turn: the first card, or the answer to the last debrief."""
    texts = [str(m.get("content") or "") for m in messages]
    task = next(t for t in texts if "Flight order:" in t)
    cards = [i for i, t in enumerate(texts) if t.startswith("FLIGHT CARD rev ")]
    if not cards:
        card = _card(task, 1, {}, [])
        legs, _ = parse_card(card)
        return f"{card}\n\n{_clear(legs[0], {}, 1)}"
    debriefs = [(i, m) for i, t in enumerate(texts) if (m := DEBRIEF.match(t.strip()))]
    landed = {int(m.group(1)): m.group(4) for _, m in debriefs if m.group(3) == "landed"}
    rev = len(cards)
    legs, _ = parse_card(texts[cards[-1]])
    _, last = debriefs[-1]
    no, step, state, said = int(last.group(1)), last.group(2), last.group(3), last.group(4)
    leg = next(x for x in legs if x.no == no)
    if state == "landed":
        todo = [x for x in legs if x.no not in landed]
        if not todo:
            return f"FLIGHT CLOSED: every leg of card rev {rev} landed"
        return _clear(todo[0], landed, 1)
    if state == "go-around":
        tries = sum(int(m.group(1)) == no for i, m in debriefs if i > cards[-1])
        if tries >= MAX_LEG_ATTEMPTS:
            return f"FLIGHT SCRUBBED: {step} went around {tries} times: {said}"
        return _clear(leg, landed, tries + 1)
    if state == "divert" and rev < MAX_CARDS:
        swaps = [
            (s.group(1), s.group(2))
            for _, m in debriefs
            if m.group(3) == "divert" and (s := INSTEAD.search(m.group(4)))
        ]
        card = _card(task, rev + 1, landed, swaps)
        todo = [x for x in parse_card(card)[0] if x.no not in landed]
        return f"{card}\n\n{_clear(todo[0], landed, 1)}"
    return f"FLIGHT SCRUBBED: {step} {state}: {said}"


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {"id": f"call_{name}_{n}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _executor(name: str, messages: list[dict[str, Any]]) -> str | dict[str, Any]:
    """An executor's turn: call the cleared tool, again at the slot a HOLD SHORT names, follow
    ``next_page``, poll a pending permit, then debrief."""
    at = max(
        i
        for i, m in enumerate(messages)
        if (c := CLEARED.search(str(m.get("content") or ""))) and c.group(3) == name
    )
    cleared = [c for c in CLEARED.finditer(str(messages[at]["content"]))][-1]
    no, step, tool = cleared.group(1), cleared.group(2), cleared.group(5)
    args = json.loads(cleared.group(6))
    results = [str(m.get("content") or "") for m in messages[at:] if m.get("role") == "tool"]
    n = len(results)
    debrief = f"DEBRIEF L{no} {step} | "
    if not results:
        return _call(n, tool, args)
    if tower := TOWER.match(results[-1]):
        phrase, slot, text = tower.groups()
        if slot:
            holds = sum(r.startswith("HOLD SHORT") for r in results)
            if holds > MAX_HOLDS:
                return f"{debrief}holding | still held short after {holds} calls: {text}"
            return _call(n, tool, args | {"slot": slot})
        state = {"GO AROUND": "go-around", "DIVERT": "divert"}.get(phrase, "grounded")
        return f"{debrief}{state} | {text}"
    seen = json.loads(results[-1])
    if "next_page" in seen:
        return _call(n, tool, args | {"page": seen["next_page"]})
    if seen.get("state") == "pending":
        checks = sum('"pending"' in r for r in results) - 1
        if checks >= MAX_POLLS:
            return f"{debrief}holding | permit {seen['request']} still pending after {checks}"
        return _call(n, "permit_status", {"request": seen["request"]})
    return f"{debrief}landed | {seen['value']}"


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion: the planner's card or clearance, an executor's
    next tool call or debrief.

    >>> msg = respond({"messages": [{"role": "system", "content": "You are the crew_clerk"},
    ...     {"role": "user", "content": 'CLEARED L4 charge_pilot @crew_clerk (attempt 1): '
    ...      'charge_account {"account": "PIL-1"}'}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"account": "PIL-1"}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = str(messages[0].get("content") or "") if messages else ""
    if system.startswith("You are the flight planner"):
        return completion(body, {"role": "assistant", "content": _planner(messages)})
    name = system.removeprefix("You are the ").split(" ", 1)[0]
    answer = _executor(name, messages)
    if isinstance(answer, str):
        return completion(body, {"role": "assistant", "content": answer})
    return completion(body, answer)


# --- the world ------------------------------------------------------------------------------
@dataclass
class Airfield:
    """The county's field registry, the airspace authority, the chase crews, the pilot's
    account and the passenger mail of one flight."""

    label: Label
    errors: list[dict[str, str]] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)
    """Launch field -> its county."""
    permits: dict[str, int] = field(default_factory=dict)
    """Permit request -> status checks so far."""
    chases: dict[str, dict[str, Any]] = field(default_factory=dict)
    charges: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.errors = [dict(e) for e in self.label.params.get("errors", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, service: str, **carried: Any) -> None:
        """Raise the scenario's next error when ``service`` is the one it targets (an ``{old}``
        in a DIVERT's hint is the account the call carried)."""
        if not self.errors or service != self.params.get("service"):
            return
        e = self.errors.pop(0)
        phrase = {"HOLD": f"HOLD SHORT UNTIL {e.get('hint')}", "GOAROUND": "GO AROUND"}.get(
            e["kind"], e["kind"]
        )
        if e["kind"] == "DIVERT":
            raise TowerCall(f"DIVERT: {e['hint'].format(old=carried.get('account'))}: {e['text']}")
        raise TowerCall(f"{phrase}: {e['text']}")


def services(world: Airfield) -> dict[str, list[Callable[..., Awaitable[str]]]]:
    """Each executor's tools, as plain async functions."""

    async def field_registry(county: str, passengers: int, page: int = 1, slot: str = "") -> str:
        """Search the county's launch-field registry for a field taking the basket."""
        world.fault("field_registry")
        pages = int(world.params.get("pages", 1))
        if page < pages:
            taken = [f"FLD-{county[:3].upper()}-{page}{n}" for n in range(3)]
            return json.dumps({"fields": [], "booked": taken, "next_page": page + 1})
        launch = f"FLD-{county[:3].upper()}-{world.label.seed}"
        world.fields[launch] = county
        return json.dumps({"value": launch, "county": county, "max_passengers": passengers + 2})

    async def airspace_permit(field: str, passengers: int, slot: str = "") -> str:
        """Ask the airspace authority for the flight's permit."""
        world.fault("airspace_permit")
        county = world.fields.get(field, "unknown")
        if county != FLIGHT["county"]:
            raise TowerCall(
                f"GROUNDED: field {field} lies in {county}, outside the festival's control zone "
                f"over {FLIGHT['county']}"
            )
        request = f"ASP-{world.label.seed}-{len(world.permits) + 1}"
        world.permits[request] = 0
        if "poll" in world.label.scenario:
            return json.dumps({"request": request, "state": "pending"})
        return json.dumps({"value": request, "state": "granted"})

    async def permit_status(request: str) -> str:
        """Check a permit request."""
        world.permits[request] += 1
        stuck = world.label.scenario == "loop_poll_stuck"
        if stuck or world.permits[request] < int(world.params.get("polls", 0)):
            return json.dumps({"request": request, "state": "pending"})
        return json.dumps({"value": request, "state": "granted"})

    async def chase_booking(field: str, permit: str, date: str, crew: str, slot: str = "") -> str:
        """Book a chase crew to follow the balloon on the flight date."""
        world.fault("chase_booking")
        other = world.params.get("crew_to")
        if other and crew == FLIGHT["crew"]:
            raise TowerCall(
                f"DIVERT: use {other} instead of {crew}: {crew}'s retrieve trailer failed "
                "its axle inspection"
            )
        chase = f"CH-{date.replace('-', '')}-{len(world.chases) + 1}"
        world.chases[chase] = {"field": field, "date": date, "crew": crew}
        return json.dumps({"value": chase, "crew": crew, "date": date, "meet": slot or "05:15"})

    async def charge_account(account: str, amount: float, booking: str, slot: str = "") -> str:
        """Charge the pilot's account the flight's fare."""
        world.fault("charge_account", account=account)
        if account != FLIGHT["account"]:
            raise TowerCall(f"GROUNDED: no pilot account {account} on the operator's books")
        world.charges[booking] = amount
        return json.dumps({"value": f"CHG-{world.label.seed}", "amount": amount})

    async def passenger_notice(email: str, booking: str, charge: str, slot: str = "") -> str:
        """Send the passengers their boarding notice."""
        world.fault("passenger_notice")
        return json.dumps({"value": f"NTC-{booking}", "to": email, "at": slot or "now"})

    return {
        "field_scout": [field_registry, airspace_permit, permit_status],
        "crew_clerk": [chase_booking, charge_account, passenger_notice],
    }


# --- the app --------------------------------------------------------------------------------
class Scrubbed(RuntimeError):
    """The flight did not happen as ordered, or came to grief after the team was done."""


def select(thread: Sequence[BaseAgentEvent | BaseChatMessage]) -> str | None:
    """The team's ``selector_func``: the planner after the task or a debrief, the executor a
    clearance names after the planner."""
    said = [m for m in thread if isinstance(m, BaseChatMessage)]
    last = said[-1] if said else None
    if last is None or last.source != PLANNER:
        return PLANNER
    cleared = CLEARED.findall(last.to_model_text())
    return cleared[-1][2] if cleared else PLANNER


async def fly(label: Label, base_url: str, tracer: Tracer) -> str:
    """One flight as a ``SelectorGroupChat`` under the app's root span; the trace id."""
    world = Airfield(label)
    info: ModelInfo = {"vision": False, "function_calling": True, "json_output": False,
            "family": "unknown", "structured_output": False}  # fmt: skip
    client = OpenAIChatCompletionClient(
        model=MODEL, base_url=base_url, api_key="test", model_info=info, max_retries=0
    )
    notes = {k: label.params[k] for k in ("county", "date", "account") if k in label.params}
    task = f"Fly {FLIGHT['festival']} flight (ticket T-{label.seed}). Flight order: " + json.dumps(
        FLIGHT
    )
    if notes:
        task += f" Pilot's notes: {json.dumps(notes)}"
    with tracer.start_as_current_span(f"balloon flight {FLIGHT['flight']}") as root:
        root.set_attributes({"openinference.span.kind": "CHAIN", "input.value": task})
        try:
            agents: list[ChatAgent | Team] = [
                AssistantAgent(PLANNER, client, system_message=PLANNER_PROMPT,
                               description="writes the flight card and clears each leg")
            ]  # fmt: skip
            for name, functions in services(world).items():
                tools = [FunctionTool(f, description=f.__doc__ or f.__name__) for f in functions]
                agents.append(
                    AssistantAgent(
                        name,
                        client,
                        tools=[*tools],
                        max_tool_iterations=40,
                        system_message=EXECUTOR_PROMPT.format(name=name),
                        description=f"the {name}: " + ", ".join(t.name for t in tools),
                    )
                )
            team = SelectorGroupChat(
                agents,
                model_client=client,
                selector_func=select,
                termination_condition=TextMentionTermination("FLIGHT CLOSED", sources=[PLANNER])
                | TextMentionTermination("FLIGHT SCRUBBED", sources=[PLANNER])
                | MaxMessageTermination(MAX_MESSAGES),
            )
            result = await team.run(task=task)
            said = [m for m in result.messages if isinstance(m, BaseChatMessage)]
            final = said[-1].to_model_text() if said else ""
            if "FLIGHT CLOSED" not in final:
                raise Scrubbed(final or str(result.stop_reason))
            check(world, tracer)
            watch(label, tracer)
            root.set_attribute("output.value", "flown")
        except Scrubbed as e:
            root.record_exception(e)
            root.set_status(Status(StatusCode.ERROR, str(e)))
            root.set_attribute("output.value", f"scrubbed: {e}")
        finally:
            await client.close()
        return f"{root.get_span_context().trace_id:032x}"


def check(world: Airfield, tracer: Tracer) -> None:
    """The app's check after the team: the chase crew is booked on the order's flight date."""
    with tracer.start_as_current_span("check chase date") as span:
        chase = list(world.chases.values())[-1]
        span.set_attributes({"openinference.span.kind": "CHAIN", "input.value": json.dumps(chase)})
        if chase["date"] != FLIGHT["date"]:
            span.set_status(Status(StatusCode.ERROR, "date mismatch"))
            raise Scrubbed(
                f"the chase crew is booked for {chase['date']}, the flight is on {FLIGHT['date']}"
            )
        span.set_attribute("output.value", "chase date matches the flight order")


def watch(label: Label, tracer: Tracer) -> None:
    """The app's watch of the flight itself: a weather check an hour before launch."""
    with tracer.start_as_current_span("watch flight") as span:
        span.set_attributes({"openinference.span.kind": "CHAIN", "input.value": FLIGHT["flight"]})
        hours = int(label.params.get("polls", 1))
        for hour in range(1, hours + 2):
            if label.scenario.startswith("external_") and hour > hours:
                span.add_event("weather", {"hour": hour, "state": "thunderstorm"})
                span.set_status(Status(StatusCode.ERROR, "thunderstorm"))
                raise Scrubbed("a thunderstorm cell over the launch field; the fiesta grounds all")
            span.add_event("weather", {"hour": hour, "state": "calm"})
        span.set_attribute("output.value", "landed safely")


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the balloon scenarios under OpenInference's autogen-agentchat instrumentor on
    ``provider`` (uninstrumented after); run name -> trace id."""
    if not labels:
        return {}
    instrumentor = AutogenAgentChatInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer(TRACER)
    try:
        with ModelServer(respond=respond) as server, catch_warnings():
            # the fake server's dated model name is not in autogen-ext's model map
            filterwarnings("ignore", "Resolved model mismatch", UserWarning)
            base = server.base_url("corpus-balloon")
            return {lab.run: asyncio.run(fly(lab, base, tracer)) for lab in labels}
    finally:
        instrumentor.uninstrument()

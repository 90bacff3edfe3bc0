"""A household-moving agent traced by the Langfuse Python SDK (OpenTelemetry-based
observations: ``start_as_current_observation(as_type=...)``, ``@observe(as_type="tool")`` and
the ``langfuse.openai`` drop-in wrapper's generations, with ``langfuse.observation.*``
attributes), against a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)``). No planscope code.

Sealed-13 split only (see README.md). The task: a customer ordered a move; find a licensed
mover in the customer's city (a directory read page by page), request the city's curbside
parking permit for the truck (granted later: polled), book the mover's crew, charge the
deposit to the customer's card, send the customer the move notice. As a Langfuse user would
write it:

* the app opens one ``agent`` observation per order (``move {order}``) and records the
  outcome as its output (``level="ERROR"`` and a status message when it failed);
* the planner is a ``chain`` observation (``move_planner``) around one generation answering an
  **XML plan**: ``<plan>`` of ``<step id=... tool=... goal=...>`` elements whose ``<arg>``
  children carry a value or ``from="step id"`` (an earlier step's result, filled in by the
  app). Asked again after a failure, it answers a new plan that opens with ``<done id=...>``
  elements for the steps already done, then the steps not done;
* the executor is an ``agent`` observation (``move_executor``) per step attempt: its message
  a ``<task>`` element naming the step and the call with its arguments filled in, the services
  ``@observe(as_type="tool")`` functions it calls when the model asks (a failed call is an
  ``ERROR`` tool observation; its text goes back to the model), its final answer a
  ``<result status="done|retry|replan|refused|stalled" value="...">note</result>`` element;
* the services answer errors as ``code=<kind>; text``: ``throttle`` (call again in the same
  run for a later ``not_before`` slot), ``queued`` (``retry``: the app re-runs the step, up to 8
  attempts), ``conflict`` (``replan``: the app asks for a new plan, up to 4 plans),
  ``denied`` / ``missing`` / ``withdrawn`` (final);
* after the last step the app checks the permit against the moving day (``verify permit``, a
  ``guardrail`` observation) and watches the move to delivery (``watch move``, a ``span``).

The Langfuse client is the process's one (``public_key`` ``pk-lf-corpus``), its tracer
provider a relay to the play's provider; Langfuse's own span processor is kept off every
provider, so nothing is exported to a Langfuse host (its base URL is an unused loopback port).

The planner trusts the sales call's notes over the customer's order: the scenario's wrong
value comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from xml.etree import ElementTree

from langfuse import Langfuse, observe
from openai import OpenAI
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.util.types import Attributes

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import RUNAWAY, Label

ORDER: dict[str, Any] = {
    "address": "27 Alder St",
    "city": "emeryville",
    "day": "2027-06-21",
    "rooms": 3,
    "card": "CARD-4741",
    "email": "r.lindqvist@example.org",
}
PRICE_PER_ROOM = 640
MAX_STEP_ATTEMPTS = 8
MAX_PLANS = 4
MAX_STATUS_CHECKS = 12
PUBLIC_KEY = "pk-lf-corpus"
ERROR = re.compile(r"code=([\w-]+); (.*)$", re.DOTALL)


class MoveError(RuntimeError):
    """A service's error answer: ``code={kind}; {text}``."""

    def __init__(self, kind: str, text: str):
        super().__init__(f"code={kind}; {text}")


# --- the plan: XML ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One ``<step>`` of the planner's XML plan; an argument ``("from", id)`` is an earlier
    step's result."""

    id: str
    goal: str
    tool: str
    args: dict[str, tuple[str, str]]


def parse_plan(text: str) -> tuple[list[Step], dict[str, str]]:
    """The steps of an XML plan and the results it already knows (``<done id=...>``).

    >>> steps, done = parse_plan('<plan><done id="find_mover">MVR-1</done><step '
    ...     'id="book" tool="crew" goal="Book"><arg name="mover" from="find_mover"/>'
    ...     '<arg name="rooms">3</arg></step></plan>')
    >>> done, steps[0].tool, steps[0].args
    ({'find_mover': 'MVR-1'}, 'crew', {'mover': ('from', 'find_mover'), 'rooms': ('value', '3')})
    """
    root = ElementTree.fromstring(text)
    done = {e.attrib["id"]: e.text or "" for e in root.iter("done")}
    steps = [
        Step(
            e.attrib["id"],
            e.attrib.get("goal", ""),
            e.attrib["tool"],
            {
                a.attrib["name"]: ("from", a.attrib["from"])
                if "from" in a.attrib
                else ("value", a.text or "")
                for a in e.iter("arg")
            },
        )
        for e in root.iter("step")
    ]
    return steps, done


def _plan_xml(order: str, version: int, steps: list[tuple[str, str, str, dict[str, Any]]],
              done: dict[str, str]) -> str:  # fmt: skip
    plan = ElementTree.Element("plan", order=order, version=str(version))
    for sid, _, _, _ in steps:
        if sid in done:
            ElementTree.SubElement(plan, "done", id=sid).text = done[sid]
    for sid, goal, name, args in steps:
        if sid in done:
            continue
        step = ElementTree.SubElement(plan, "step", id=sid, tool=name, goal=goal)
        for k, v in args.items():
            if isinstance(v, str) and v.startswith("@"):
                ElementTree.SubElement(step, "arg", name=k, attrib={"from": v[1:]})
            else:
                ElementTree.SubElement(step, "arg", name=k).text = str(v)
    ElementTree.indent(plan)
    return ElementTree.tostring(plan, encoding="unicode")


# --- the scripted model (answers on the conformance suite's fake OpenAI server) -------------
def _section(text: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", text, re.MULTILINE)
    return m.group(1) if m else ""


def _planner(brief: str) -> dict[str, Any]:
    """The planner's XML plan: the customer's order, the notes trusted over it, the day or
    card a problem names, the done steps."""
    facts = json.loads(_section(brief, "Order")) | json.loads(_section(brief, "Notes") or "{}")
    done = json.loads(_section(brief, "Done") or "{}")
    problem = _section(brief, "Problem")
    version = int(_section(brief, "Version") or 1)
    day = re.search(r"next free day is (\d{4}-\d\d-\d\d)", problem)
    card = re.search(r"charge (CARD-\d+) instead", problem)
    steps = [
        ("find_mover", f"Find a licensed mover in {facts['city']} for a {facts['rooms']}-room "
         "home", "mover_directory", {"city": facts["city"], "rooms": facts["rooms"]}),
        ("request_permit", "Request the city's curbside parking permit for the truck",
         "street_permit", {"mover": "@find_mover", "address": ORDER["address"],
                           "day": day.group(1) if day else facts["day"]}),
        ("book_crew", f"Book the mover's crew at {facts['address']}", "crew_booking",
         {"mover": "@find_mover", "permit": "@request_permit", "address": facts["address"]}),
        ("pay_deposit", "Charge the move's deposit to the customer's card", "deposit_charge",
         {"booking": "@book_crew", "card": card.group(1) if card else facts["card"]}),
        ("notify_customer", "Send the customer the move notice", "customer_notice",
         {"booking": "@book_crew", "email": facts["email"]}),
    ]  # fmt: skip
    return {"role": "assistant", "content": _plan_xml(facts["order"], version, steps, done)}


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"call_{name}_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _say(status: str, value: str = "", note: str = "") -> dict[str, Any]:
    result = ElementTree.Element("result", status=status, value=value)
    result.text = note
    return {"role": "assistant", "content": ElementTree.tostring(result, encoding="unicode")}


def _executor(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The executor's turn: run the call the task names, call again after a ``throttle`` error
    for a later slot, follow ``next_page``, poll a permit until it is granted, answer the
    result element."""
    call = ElementTree.fromstring(task).find("call")
    assert call is not None, task
    name = call.attrib["tool"]
    args: dict[str, Any] = {
        a.attrib["name"]: int(t) if (t := a.text or "").isdigit() else t for a in call.iter("arg")
    }
    results = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
    n = len(results)
    if not results:
        return _call(n, name, args)
    last = results[-1]
    error = ERROR.match(last)
    if error:
        if error.group(1) == "throttle":
            throttled = sum(r.startswith("code=throttle;") for r in results)
            return _call(n, name, args | {"not_before": f"{9 + 2 * throttled:02d}:00"})
        status = {"queued": "retry", "conflict": "replan"}.get(error.group(1), "refused")
        return _say(status, note=f"{error.group(1)}: {error.group(2)}")
    seen = json.loads(last)
    if "next_page" in seen:
        return _call(n, name, args | {"page": seen["next_page"]})
    if seen.get("status") == "PENDING":
        checks = sum(
            c["function"]["name"] == "permit_status"
            for m in messages
            for c in m.get("tool_calls") or ()
        )
        if checks >= MAX_STATUS_CHECKS:
            return _say("stalled", note=f"permit {seen['permit']} still PENDING after {checks}")
        return _call(n, "permit_status", {"permit": seen["permit"]})
    return _say("done", value=str(seen["value"]))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the planner's plan for an
    order, the executor's next tool call or result element otherwise.

    >>> msg = respond({"messages": [{"role": "user", "content":
    ...     '<task step="s"><call tool="f"><arg name="a">1</arg></call></task>'}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"a": 1}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if task.startswith("Order: "):
        return completion(body, _planner(task))
    return completion(body, _executor(messages, task))


# --- the world ------------------------------------------------------------------------------
@dataclass
class World:
    """The services: mover directory, the city's permits, movers' crews, the card processor,
    the customer portal."""

    label: Label
    order: str
    step: str = ""
    errors: list[str] = field(default_factory=list)
    movers: dict[str, str] = field(default_factory=dict)
    """Mover -> the city it is licensed in."""
    permits: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Permit -> mover, address, day and status checks."""
    bookings: dict[str, dict[str, Any]] = field(default_factory=dict)
    cards: set[str] = field(default_factory=lambda: {ORDER["card"]})
    """Cards on file for this customer."""
    day: str = ORDER["day"]
    """The day the city lets the truck park (the moving day)."""
    deposits: dict[str, int] = field(default_factory=dict)
    notice: str = ""

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        self.day = self.label.params.get("new_day", ORDER["day"])

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self) -> None:
        """Raise the scenario's next error when the call belongs to the step it targets."""
        if not self.errors or self.step != self.params.get("step"):
            return
        text = self.errors.pop(0)
        if not self.errors and self.label.kind == RUNAWAY:
            raise MoveError("withdrawn", f"{text}; request withdrawn")
        how = self.params.get("raise")
        if how == "again":
            raise MoveError("throttle", text)
        if how == "replans" and len(self.errors) % 2 == 0:
            card = f"CARD-{5100 + 37 * len(self.errors)}"
            self.cards.add(card)
            raise MoveError("conflict", f"{text}; card on hold, charge {card} instead")
        raise MoveError("queued", text)


class Services:
    """The services, each an ``@observe(as_type="tool")`` function bound to one order's
    world; ``schemas`` are the OpenAI tool definitions the executor offers the model."""

    def __init__(self, world: World):
        self.world = world
        self.tools = {
            name: observe(as_type="tool", name=name)(getattr(self, name))
            for name in (
                "mover_directory",
                "street_permit",
                "permit_status",
                "crew_booking",
                "deposit_charge",
                "customer_notice",
            )
        }

    @staticmethod
    def schemas(names: Sequence[str]) -> list[dict[str, Any]]:
        """OpenAI function definitions (free-form arguments) for the named tools."""
        return [
            {
                "type": "function",
                "function": {
                    "name": name,
                    "parameters": {"type": "object", "additionalProperties": True},
                },
            }
            for name in names
        ]

    def mover_directory(
        self, city: str, rooms: int, page: int = 1, not_before: str = "09:00"
    ) -> str:
        self.world.fault()
        pages = int(self.world.params.get("pages", 1))
        code = city[:3].upper()
        if page < pages:
            booked = [f"MVR-{code}-{page}{n}" for n in range(3)]
            return json.dumps({"movers": booked, "fully_booked": True, "next_page": page + 1})
        mover = f"MVR-{code}-{pages}4"
        self.world.movers[mover] = city
        return json.dumps({"value": mover, "city": city, "rooms": rooms})

    def street_permit(self, mover: str, address: str, day: str, not_before: str = "09:00") -> str:
        self.world.fault()
        if mover not in self.world.movers:
            raise MoveError("missing", f"no licensed mover {mover}")
        if day != self.world.day and day == ORDER["day"]:
            raise MoveError(
                "conflict", f"street closed for works on {day}; next free day is {self.world.day}"
            )
        permit = f"PKP-{self.world.label.seed}-{len(self.world.permits)}"
        self.world.permits[permit] = {"mover": mover, "day": day, "checks": 0}
        return json.dumps({"permit": permit, "status": "PENDING"})

    def permit_status(self, permit: str) -> str:
        entry = self.world.permits[permit]
        entry["checks"] += 1
        if self.world.label.scenario == "loop_poll_stuck" or entry["checks"] < int(
            self.world.params.get("polls", 1)
        ):
            return json.dumps({"permit": permit, "status": "PENDING"})
        return json.dumps({"permit": permit, "status": "GRANTED", "value": permit})

    def crew_booking(self, mover: str, permit: str, address: str, not_before: str = "09:00") -> str:
        self.world.fault()
        city = self.world.movers.get(mover)
        if city != ORDER["city"]:
            raise MoveError(
                "denied",
                f"{mover} is licensed in {city}; {address} is in {ORDER['city']} "
                "(outside its license)",
            )
        booking = f"CREW-{self.world.label.seed}-{len(self.world.bookings)}"
        self.world.bookings[booking] = {"mover": mover, "permit": permit, "address": address}
        return json.dumps({"value": booking, "arrival": "08:00"})

    def deposit_charge(self, booking: str, card: str, not_before: str = "09:00") -> str:
        self.world.fault()
        if card not in self.world.cards:
            raise MoveError("missing", f"no card {card} on file for this customer")
        entry = self.world.bookings[booking]
        if entry["address"] != ORDER["address"]:
            raise MoveError("denied", f"{entry['address']} is not the address on the quote")
        amount = PRICE_PER_ROOM * int(ORDER["rooms"])
        self.world.deposits[booking] = amount
        return json.dumps({"value": f"DEP-{self.world.label.seed}", "amount": amount})

    def customer_notice(self, booking: str, email: str, not_before: str = "09:00") -> str:
        self.world.fault()
        if booking not in self.world.deposits:
            raise MoveError("denied", f"booking {booking} has no deposit")
        self.world.notice = f"MSG-{self.world.label.seed}"
        return json.dumps({"value": self.world.notice, "email": email})


# --- the app --------------------------------------------------------------------------------
class Failed(Exception):
    """The move was not booked, paid and its customer told, or failed after (the reason is the
    message)."""


class MoveDesk:
    """One order, from the customer's order to the delivery."""

    def __init__(self, label: Label, langfuse: Langfuse, client: OpenAI):
        self.label = label
        self.langfuse = langfuse
        self.client = client
        self.world = World(label, order=f"MV-{label.seed % 9000 + 1000}")
        self.services = Services(self.world)
        self.done: dict[str, str] = {}

    def _chat(self, name: str, messages: list[dict[str, Any]], tools: Sequence[str] = ()) -> Any:
        # ``name`` is the langfuse.openai wrapper's: the generation's name
        request: dict[str, Any] = {"model": MODEL, "messages": messages, "name": name}
        if tools:
            request["tools"] = Services.schemas(tools)
        return self.client.chat.completions.create(**request).choices[0].message

    def plan(self, problem: str, version: int) -> list[Step]:
        notes = {
            k: self.label.params[k]
            for k in ("city", "day", "address", "card")
            if k in self.label.params
        }
        brief = (
            f"Order: {json.dumps({'order': self.world.order} | ORDER)}\n"
            f"Notes: {json.dumps(notes)}\nDone: {json.dumps(self.done)}\n"
            f"Problem: {problem}\nVersion: {version}"
        )
        with self.langfuse.start_as_current_observation(
            as_type="chain", name="move_planner", input=brief
        ) as span:
            messages = [
                {
                    "role": "system",
                    "content": "You plan household moves. Answer an XML <plan> of <step id "
                    "tool goal> elements with <arg name> values or from='step id'; list done "
                    "steps as <done id>. Trust the sales call's notes.",
                },
                {"role": "user", "content": brief},
            ]
            text = str(self._chat("plan", messages).content)
            span.update(output=text)
        steps, done = parse_plan(text)
        self.done.update(done)
        return steps

    def attempt(self, step: Step, attempt: int) -> tuple[str, str, str]:
        """One executor run of a step, its ``from`` arguments filled in from the done steps;
        the status, value and note."""
        task = ElementTree.Element("task", step=step.id, goal=step.goal)
        call = ElementTree.SubElement(task, "call", tool=step.tool)
        for name, (how, value) in step.args.items():
            arg = ElementTree.SubElement(call, "arg", name=name)
            arg.text = self.done[value] if how == "from" else value
        text = ElementTree.tostring(task, encoding="unicode")
        self.world.step = step.id
        with self.langfuse.start_as_current_observation(
            as_type="agent",
            name="move_executor",
            input=text,
            metadata={"step": step.id, "attempt": attempt},
        ) as span:
            messages: list[dict[str, Any]] = [
                {
                    "role": "system",
                    "content": "You carry out one step of a move plan with the services, then "
                    'answer <result status="done|retry|replan|refused|stalled" value="...">'
                    "note</result>.",
                },
                {"role": "user", "content": text},
            ]
            tools = [step.tool, "permit_status"]
            while True:
                message = self._chat("execute", messages, tools)
                if not message.tool_calls:
                    break
                messages.append(message.model_dump(exclude_none=True))
                for tc in message.tool_calls:
                    messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": tc.id,
                            "content": self._run_tool(
                                tc.function.name, json.loads(tc.function.arguments)
                            ),
                        }
                    )
            result = ElementTree.fromstring(str(message.content))
            status = result.attrib["status"]
            span.update(output=message.content, level="DEFAULT" if status == "done" else "WARNING")
        return status, result.attrib.get("value", ""), result.text or ""

    def _run_tool(self, name: str, args: dict[str, Any]) -> str:
        try:
            return str(self.services.tools[name](**args))
        except MoveError as e:  # the error goes back to the model; the tool observation is ERROR
            return str(e)

    def work(self) -> None:
        problem = ""
        for version in range(1, MAX_PLANS + 1):
            steps = self.plan(problem, version)
            problem = ""
            for step in steps:
                for attempt in range(1, MAX_STEP_ATTEMPTS + 1):
                    status, value, note = self.attempt(step, attempt)
                    if status == "done":
                        self.done[step.id] = value
                        break
                    if status == "retry" and attempt < MAX_STEP_ATTEMPTS:
                        continue
                    if status == "replan" and version < MAX_PLANS:
                        problem = f"{step.id}: {note}"
                        break
                    raise Failed(f"{step.id}: {status}: {note}")
                if problem:
                    break
            if not problem:
                return
        raise Failed(problem)

    def check(self) -> None:
        """The app's own checks once the customer is told: the permit's day against the day the
        city lets the truck park, then the move to delivery."""
        permit = self.world.permits[self.done["request_permit"]]
        with self.langfuse.start_as_current_observation(
            as_type="guardrail",
            name="verify permit",
            input={"booking": self.done["book_crew"], "permit": self.done["request_permit"]},
        ) as span:
            seen = {"permit_day": permit["day"], "city_day": self.world.day}
            if permit["day"] != self.world.day:
                reason = (
                    f"the permit {self.done['request_permit']} is for {permit['day']}, the "
                    f"truck may park on {self.world.day} (deposit "
                    f"{self.world.deposits[self.done['book_crew']]} charged)"
                )
                span.update(output=seen, level="ERROR", status_message=reason)
                raise Failed(reason)
            span.update(output=seen)
        with self.langfuse.start_as_current_observation(as_type="span", name="watch move") as span:
            states = ("CREW_ARRIVED", "LOADED", "IN_TRANSIT", "UNLOADED", "DELIVERED")
            for poll, state in enumerate(states, 1):
                if self.label.scenario == "external_storm" and poll > int(
                    self.label.params["polls"]
                ):
                    reason = "truck stopped: the highway is closed by a storm; carrier reschedules"
                    span.update(level="ERROR", status_message=reason)
                    raise Failed(reason)
                self.langfuse.create_event(name="move state", input={"poll": poll, "state": state})
            span.update(output={"state": states[-1]})

    def run(self) -> str:
        with self.langfuse.start_as_current_observation(
            as_type="agent", name=f"move {self.world.order}", input=ORDER
        ) as root:
            try:
                self.work()
                self.check()
                root.update(output={"outcome": "delivered"})
            except Failed as e:
                root.update(output={"outcome": "failed"}, level="ERROR", status_message=str(e))
            return str(root.trace_id)


# --- Langfuse's tracer provider: a relay to the play's provider --------------------------------
class _Dropped(SpanExporter):
    """Langfuse's exporter: exports nothing (no Langfuse host is ever contacted)."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


class _Relay(TracerProvider):
    """The Langfuse client's tracer provider: spans go to the play's provider while a play is
    under way; outside one (the ``langfuse.openai`` wrapper stays on the openai module once
    imported) a call gets a non-recording span in the current context, so another agent's
    parenting is unchanged. Langfuse's own span processor is kept here, on no provider."""

    target: otel_trace.TracerProvider | None = None

    def add_span_processor(self, processor: SpanProcessor) -> None:
        self.kept = processor

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def get_tracer(
        self,
        instrumenting_module_name: str,
        instrumenting_library_version: str | None = None,
        schema_url: str | None = None,
        attributes: Attributes | None = None,
    ) -> otel_trace.Tracer:
        return _RelayTracer(instrumenting_module_name, instrumenting_library_version)


class _RelayTracer(otel_trace.Tracer):
    def __init__(self, name: str, version: str | None):
        self.name, self.version = name, version

    def _target(self) -> otel_trace.Tracer | None:
        if _Relay.target is None:
            return None
        return _Relay.target.get_tracer(self.name, self.version)

    def start_span(self, *args: Any, **kwargs: Any) -> otel_trace.Span:
        if tracer := self._target():
            return tracer.start_span(*args, **kwargs)
        return otel_trace.NonRecordingSpan(otel_trace.get_current_span().get_span_context())

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Any:
        if tracer := self._target():
            return tracer.start_as_current_span(*args, **kwargs)
        return otel_trace.use_span(self.start_span(), end_on_exit=False)


_RELAY = _Relay()


def _langfuse() -> Langfuse:
    """The process's Langfuse client on the relay (made once; Langfuse keeps one per key)."""
    return Langfuse(
        public_key=PUBLIC_KEY,
        secret_key="sk-lf-corpus",
        base_url="http://127.0.0.1:9",
        tracer_provider=_RELAY,
        span_exporter=_Dropped(),
        environment="corpus",
    )


def play(labels: list[Label], provider: otel_trace.TracerProvider) -> dict[str, str]:
    """Run the moving scenarios with the Langfuse SDK's observations on ``provider``.

    Importing ``langfuse.openai`` wraps the openai module's chat completions for good: a
    process that played moving traces every later OpenAI call through Langfuse (non-recording
    outside a moving play).
    """
    if not labels:
        return {}
    from langfuse.openai import OpenAI as Wrapped  # wraps the openai module on import

    langfuse = _langfuse()
    quiet = logging.getLogger("langfuse")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)
    _Relay.target = provider
    try:
        with ModelServer(respond=respond) as server:
            client = Wrapped(
                api_key="test", base_url=server.base_url("corpus-moving"), max_retries=0
            )
            try:
                return {label.run: MoveDesk(label, langfuse, client).run() for label in labels}
            finally:
                client.close()
    finally:
        _Relay.target = None
        quiet.setLevel(level)

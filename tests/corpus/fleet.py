"""A delivery-fleet servicing agent on Semantic Kernel, traced by Semantic Kernel's own
OpenTelemetry diagnostics (``SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE``:
``invoke_agent``, ``chat`` and ``execute_tool`` spans with ``gen_ai.*`` attributes,
written through opentelemetry-api's global tracer provider; no instrumentor): Semantic Kernel's
``OpenAIChatCompletion`` against a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)``). No planscope code.

Sealed-11 split only (see README.md). The task: a van's service is due; find a workshop in the
van's region that services its make (a directory read page by page), order the parts for the
service to that workshop (the supplier ships later: polled), book the van into a bay, charge
the job to the fleet card, notify the van's driver. As a Semantic Kernel user would write it:

* the app opens one OTel span per work order (``service {work order}``) and records the
  outcome;
* the planner is a ``ChatCompletionAgent`` (``service_planner``) answering the plan as a prose
  block of **"Step N — slug: goal" lines**, each followed by a ``Call {function} with key="value",
  ...`` sentence; ``<slug>`` is a placeholder for that earlier step's result, filled in by the
  app. Asked again after a failure, it answers a revised work order with every step again, the
  done ones marked ``(done: result)``;
* the executor is a ``ChatCompletionAgent`` (``workshop_clerk``) run per step attempt, its
  message ``Step N — slug: goal`` and ``Call ...``, the fleet services a plugin of
  ``@kernel_function`` methods it calls through ``FunctionChoiceBehavior.Auto``, its final
  answer a ``Disposition: ...`` line (done / requeue / revise / rejected / abandoned, the
  result, a note);
* the fleet services answer errors as **message ids with a severity letter**, read by the model
  from Semantic Kernel's ``An error occurred while invoking the function`` result: ``...T``
  (transient: call again in the same run with a longer ``wait_s``), ``...W`` (``requeue``: the
  app re-runs the step, up to 8 attempts), ``...R`` (``revise``: the app asks for a revised work
  order, up to 4 revisions), ``...E`` (final);
* after the last step the app checks the job sheet against the van's spec (``verify job
  sheet``) and watches the van back on the road (``watch van``), both plain OTel spans.

The planner trusts the fleet manager's notes over the van's record: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import RUNAWAY, Label
from ._relay import global_provider

# Semantic Kernel reads its diagnostics settings when imported
os.environ.setdefault("SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE", "true")
from openai import AsyncOpenAI
from semantic_kernel.agents import ChatCompletionAgent
from semantic_kernel.connectors.ai import FunctionChoiceBehavior
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
from semantic_kernel.functions import kernel_function

VAN: dict[str, Any] = {
    "registration": "YK71-FVX",
    "make": "transit",
    "region": "yorkshire",
    "part": "BRK-4417",
    "quantity": 4,
    "card": "FC-802214",
    "driver": "+44-7700-900412",
}
LABOUR = 180
PART_PRICE = 65
MAX_STEP_ATTEMPTS = 8
MAX_REVISIONS = 4
MAX_STATUS_CHECKS = 12
MAX_TOOL_CALLS = 30
STEP = re.compile(r"^Step (\d+) — (\w+): (.*?)(?: \(done: (.*)\))?$")
CALL = re.compile(r"^Call (\w+) with (.*)$", re.MULTILINE)
ARG = re.compile(r'(\w+)="([^"]*)"')
PLACEHOLDER = re.compile(r"<(\w+)>")


class FleetError(RuntimeError):
    """An error answer of a fleet service: ``{id} {text}``, the id's last letter its
    severity (T transient, W wait, R revise, E error)."""

    def __init__(self, msgid: str, text: str):
        super().__init__(f"{msgid} {text}")


# --- the plan: "Step N — slug: goal" prose --------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One step of the planner's work order."""

    number: int
    slug: str
    goal: str
    function: str
    args: dict[str, str]
    done: str = ""


def parse_steps(text: str) -> list[Step]:
    """The steps of a work order (a ``Step N — slug: goal`` line, then its ``Call`` line).

    >>> parse_steps('Step 2 — book_bay: Book the van in\\nCall bay_booking with van="V-1", '
    ...             'workshop="<find_workshop>"')[0].args
    {'van': 'V-1', 'workshop': '<find_workshop>'}
    """
    steps: list[Step] = []
    head: re.Match[str] | None = None
    for line in text.splitlines():
        line = line.strip()
        if m := STEP.match(line):
            head = m
        elif (c := CALL.match(line)) and head:
            args = dict(ARG.findall(c.group(2)))
            steps.append(Step(int(head[1]), head[2], head[3], c.group(1), args, head[4] or ""))
            head = None
    return steps


def _work_order(order: str, revision: int, steps: list[tuple[str, str, str, dict[str, Any]]],
                done: dict[str, str]) -> str:  # fmt: skip
    lines = [f"Work order {order}, revision {revision}.", ""]
    for n, (slug, goal, function, args) in enumerate(steps, 1):
        mark = f" (done: {done[slug]})" if slug in done else ""
        call = ", ".join(f'{k}="{v}"' for k, v in args.items())
        lines += [f"Step {n} — {slug}: {goal}{mark}", f"Call {function} with {call}", ""]
    return "\n".join(lines).rstrip()


# --- the scripted model (answers on the conformance suite's fake OpenAI server) -------------
def _section(text: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", text, re.MULTILINE)
    return m.group(1) if m else ""


def _planner(brief: str) -> dict[str, Any]:
    """The planner's work order: the van's record, the notes trusted over it, the part or card
    a problem names, every step with the done ones marked."""
    facts = json.loads(_section(brief, "Van")) | json.loads(_section(brief, "Notes") or "{}")
    done = json.loads(_section(brief, "Done") or "{}")
    problem = _section(brief, "Problem")
    revision = int(_section(brief, "Revision") or 1)
    part = re.search(r"superseded by ([A-Z]+-\d+)", problem)
    card = re.search(r"charge (FC-\d+) instead", problem)
    steps = [
        ("find_workshop", f"Find a workshop in {facts['region']} that services the {facts['make']}",
         "workshop_directory", {"region": facts["region"], "make": facts["make"]}),
        ("order_parts", f"Order {facts['quantity']} of the service parts to that workshop",
         "parts_order", {"workshop": "<find_workshop>",
                         "part": part.group(1) if part else facts["part"],
                         "quantity": facts["quantity"]}),
        ("book_bay", f"Book {facts['registration']} into a bay once the parts are in",
         "bay_booking", {"workshop": "<find_workshop>", "parts": "<order_parts>",
                         "van": facts["registration"]}),
        ("charge_card", "Charge the job to the fleet card",
         "fleet_card_charge", {"booking": "<book_bay>", "card": card.group(1) if card
                               else facts["card"]}),
        ("notify_driver", "Tell the driver where and when to drop the van",
         "driver_notice", {"booking": "<book_bay>", "driver": facts["driver"]}),
    ]  # fmt: skip
    return {"role": "assistant", "content": _work_order(facts["order"], revision, steps, done)}


def _call(n: int, name: str, args: dict[str, Any], tools: list[str]) -> dict[str, Any]:
    """A call of the offered tool named ``name`` (Semantic Kernel offers ``Plugin-name``)."""
    offered = next((t for t in tools if t.rsplit("-", 1)[-1] == name), name)
    call = {
        "id": f"call_{name}_{n}",
        "type": "function",
        "function": {"name": offered, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _say(outcome: str, result: str = "", note: str = "") -> dict[str, Any]:
    text = f"Disposition: {outcome}. Result: {result or 'none'}. Note: {note or 'none'}."
    return {"role": "assistant", "content": text}


def _args(text: str) -> dict[str, Any]:
    return {k: int(v) if v.isdigit() else v for k, v in ARG.findall(text)}


def _executor(messages: list[dict[str, Any]], task: str, tools: list[str]) -> dict[str, Any]:
    """The clerk's turn: make the call the step names, call again after a ``T`` message with a
    longer wait, follow ``next_page``, poll a parts order until it is delivered, answer the
    disposition."""
    use = CALL.search(task)
    assert use, task
    function, args = use.group(1), _args(use.group(2))
    results = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
    n = len(results)
    if not results:
        return _call(n, function, args, tools)
    last = results[-1]
    msg = re.search(r"\b(FLT\d{3}([TWRE])) (.*)$", last, re.DOTALL)
    if msg:
        if msg.group(2) == "T":
            waits = sum(bool(re.search(r"FLT\d{3}T ", r)) for r in results)
            return _call(n, function, args | {"wait_s": 20 * 2**waits}, tools)
        outcome = {"W": "requeue", "R": "revise"}.get(msg.group(2), "rejected")
        return _say(outcome, note=f"{msg.group(1)} {msg.group(3)}")
    seen = json.loads(last)
    if "next_page" in seen:
        return _call(n, function, args | {"page": seen["next_page"]}, tools)
    if seen.get("status") == "BACKORDERED":
        checks = sum(
            call["function"]["name"].endswith("parts_status")
            for m in messages
            for call in m.get("tool_calls") or ()
        )
        if checks >= MAX_STATUS_CHECKS:
            note = f"parts order {seen['order']} still BACKORDERED after {checks} checks"
            return _say("abandoned", note=note)
        return _call(n, "parts_status", {"order": seen["order"]}, tools)
    return _say("done", result=str(seen["value"]))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the planner's work order for
    a van record, the clerk's next function call or disposition otherwise.

    >>> msg = respond({"messages": [{"role": "user", "content": 'Call f with a="1", b="x"'}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"a": 1, "b": "x"}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if task.startswith("Van: "):
        return completion(body, _planner(task))
    tools = [t["function"]["name"] for t in body.get("tools") or () if "function" in t]
    return completion(body, _executor(messages, task, tools))


# --- the world ------------------------------------------------------------------------------
@dataclass
class World:
    """The fleet services: workshop directory, parts supplier, bays, fleet card, driver app."""

    label: Label
    order: str
    step: str = ""
    errors: list[str] = field(default_factory=list)
    workshops: dict[str, str] = field(default_factory=dict)
    """Workshop -> its region."""
    parts: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Parts order -> workshop, part, quantity and status checks."""
    bookings: dict[str, dict[str, Any]] = field(default_factory=dict)
    cards: set[str] = field(default_factory=lambda: {VAN["card"]})
    """Fleet cards open for this fleet."""
    current_part: str = VAN["part"]
    """The supplier's current number for the service part."""
    charges: dict[str, int] = field(default_factory=dict)
    notice: str = ""

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        self.current_part = self.label.params.get("new_part", VAN["part"])

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self) -> None:
        """Raise the scenario's next error when the call belongs to the step it targets."""
        if not self.errors or self.step != self.params.get("step"):
            return
        text = self.errors.pop(0)
        if not self.errors and self.label.kind == RUNAWAY:
            raise FleetError("FLT590E", f"{text}; job withdrawn")
        how = self.params.get("raise")
        if how == "again":
            raise FleetError("FLT210T", text)
        if how == "revisions" and len(self.errors) % 2 == 0:
            card = f"FC-{803000 + 17 * len(self.errors)}"
            self.cards.add(card)
            raise FleetError("FLT460R", f"{text}; card suspended, charge {card} instead")
        raise FleetError("FLT330W", text)


class FleetPlugin:
    """The fleet services, bound to one work order's world."""

    def __init__(self, world: World):
        self.world = world

    @kernel_function(description="Search the workshop directory for workshops in a region that "
                     "service a make, a page of results at a time.")  # fmt: skip
    def workshop_directory(
        self,
        region: Annotated[str, "the region"],
        make: Annotated[str, "the vehicle make"],
        page: Annotated[int, "the result page"] = 1,
        wait_s: Annotated[int, "how long to wait for the directory"] = 20,
    ) -> str:
        self.world.fault()
        pages = int(self.world.params.get("pages", 1))
        code = region[:3].upper()
        if page < pages:
            full = [f"W-{code}-{page}{n}" for n in range(3)]
            return json.dumps({"workshops": full, "no_bays": True, "next_page": page + 1})
        workshop = f"W-{code}-{pages}4"
        self.world.workshops[workshop] = region
        return json.dumps({"value": workshop, "region": region, "make": make})

    @kernel_function(description="Order parts from the supplier, delivered to a workshop; the "
                     "supplier ships later.")  # fmt: skip
    def parts_order(
        self,
        workshop: Annotated[str, "the workshop"],
        part: Annotated[str, "the part number"],
        quantity: Annotated[int, "how many"],
        wait_s: Annotated[int, "how long to wait for the supplier"] = 20,
    ) -> str:
        self.world.fault()
        if workshop not in self.world.workshops:
            raise FleetError("FLT404E", f"no workshop {workshop} in the directory")
        if part != self.world.current_part and part == VAN["part"]:
            raise FleetError("FLT460R", f"part {part} superseded by {self.world.current_part}")
        order = f"PO-{self.world.label.seed}-{len(self.world.parts)}"
        self.world.parts[order] = {"workshop": workshop, "part": part, "quantity": quantity,
                                   "checks": 0}  # fmt: skip
        return json.dumps({"order": order, "status": "BACKORDERED"})

    @kernel_function(description="The state of a parts order; the order once delivered.")
    def parts_status(self, order: Annotated[str, "the parts order"]) -> str:
        entry = self.world.parts[order]
        entry["checks"] += 1
        if self.world.label.scenario == "loop_poll_stuck" or entry["checks"] < int(
            self.world.params.get("polls", 1)
        ):
            return json.dumps({"order": order, "status": "BACKORDERED"})
        return json.dumps({"order": order, "status": "DELIVERED", "value": order})

    @kernel_function(description="Book a van into a workshop bay for a service with its parts.")
    def bay_booking(
        self,
        workshop: Annotated[str, "the workshop"],
        parts: Annotated[str, "the delivered parts order"],
        van: Annotated[str, "the van's registration"],
        wait_s: Annotated[int, "how long to wait for the workshop"] = 20,
    ) -> str:
        self.world.fault()
        region = self.world.workshops.get(workshop)
        if region != VAN["region"]:
            raise FleetError(
                "FLT412E",
                f"{workshop} is in {region}; the van is based in {VAN['region']} (out of range)",
            )
        booking = f"BAY-{self.world.label.seed}-{len(self.world.bookings)}"
        self.world.bookings[booking] = {"workshop": workshop, "parts": parts, "van": van}
        return json.dumps({"value": booking, "slot": "2027-05-18T08:00"})

    @kernel_function(description="Charge a booked service to a fleet card.")
    def fleet_card_charge(
        self,
        booking: Annotated[str, "the bay booking"],
        card: Annotated[str, "the fleet card"],
        wait_s: Annotated[int, "how long to wait for the card processor"] = 20,
    ) -> str:
        self.world.fault()
        if card not in self.world.cards:
            raise FleetError("FLT403E", f"no fleet card {card} for this fleet")
        entry = self.world.bookings[booking]
        if entry["van"] != VAN["registration"]:
            raise FleetError("FLT403E", f"van {entry['van']} is not on the fleet card {card}")
        quantity = int(self.world.parts[entry["parts"]]["quantity"])
        amount = LABOUR + quantity * PART_PRICE
        self.world.charges[booking] = amount
        return json.dumps({"value": f"CHG-{self.world.label.seed}", "amount": amount})

    @kernel_function(description="Send the van's driver the booking's drop-off notice.")
    def driver_notice(
        self,
        booking: Annotated[str, "the bay booking"],
        driver: Annotated[str, "the driver's phone"],
        wait_s: Annotated[int, "how long to wait for the driver app"] = 20,
    ) -> str:
        self.world.fault()
        if booking not in self.world.charges:
            raise FleetError("FLT403E", f"booking {booking} is not paid")
        self.world.notice = f"NTC-{self.world.label.seed}"
        return json.dumps({"value": self.world.notice, "driver": driver})


# --- the app --------------------------------------------------------------------------------
class Failed(Exception):
    """The van was not booked in and its driver told (the reason is the message)."""


DISPOSITION = re.compile(r"Disposition: (\w+)\. Result: (.*?)\. Note: (.*)\.$", re.DOTALL)


class FleetDesk:
    """One work order, from the van's record to the van back on the road."""

    def __init__(self, label: Label, client: AsyncOpenAI):
        self.label = label
        self.world = World(label, order=f"WO-{label.seed % 9000 + 1000}")
        service = OpenAIChatCompletion(ai_model_id=MODEL, async_client=client)
        self.planner = ChatCompletionAgent(
            service=service,
            name="service_planner",
            instructions="You plan van services for the fleet. Answer the work order as "
            '"Step N — slug: goal" lines, each followed by "Call function with key="value", '
            "...\". Write <slug> for an earlier step's result. Trust the fleet manager's notes.",
        )
        behaviour = FunctionChoiceBehavior.Auto()
        behaviour.maximum_auto_invoke_attempts = MAX_TOOL_CALLS
        self.clerk = ChatCompletionAgent(
            service=service,
            name="workshop_clerk",
            instructions="You carry out one step of a work order with the fleet services, "
            "then answer 'Disposition: done|requeue|revise|rejected|abandoned. Result: ... "
            "Note: ...'.",
            plugins=[FleetPlugin(self.world)],
            function_choice_behavior=behaviour,
        )
        self.results: dict[str, str] = {}

    async def plan(self, problem: str, revision: int) -> list[Step]:
        notes = {
            k: self.label.params[k]
            for k in ("region", "part", "registration", "card")
            if k in self.label.params
        }
        brief = (
            f"Van: {json.dumps({'order': self.world.order} | VAN)}\n"
            f"Notes: {json.dumps(notes)}\nDone: {json.dumps(self.results)}\n"
            f"Problem: {problem}\nRevision: {revision}"
        )
        reply = await self.planner.get_response(messages=brief)
        return parse_steps(str(reply.message.content))

    async def attempt(self, step: Step) -> tuple[str, str, str]:
        """One clerk run of a step, its ``<slug>`` placeholders filled in from done steps; the
        disposition's outcome, result and note."""
        filled = {k: PLACEHOLDER.sub(lambda m: self.results[m[1]], v) for k, v in step.args.items()}
        args = ", ".join(f'{k}="{v}"' for k, v in filled.items())
        task = f"Step {step.number} — {step.slug}: {step.goal}\nCall {step.function} with {args}"
        self.world.step = step.slug
        reply = await self.clerk.get_response(messages=task)
        m = DISPOSITION.search(str(reply.message.content))
        assert m, reply.message.content
        return m[1], m[2], m[3]

    async def work(self) -> None:
        problem = ""
        for revision in range(1, MAX_REVISIONS + 1):
            steps = await self.plan(problem, revision)
            problem = ""
            for step in steps:
                if step.done:
                    continue
                for attempt in range(1, MAX_STEP_ATTEMPTS + 1):
                    outcome, result, note = await self.attempt(step)
                    if outcome == "done":
                        self.results[step.slug] = result
                        break
                    if outcome == "requeue" and attempt < MAX_STEP_ATTEMPTS:
                        continue
                    if outcome == "revise" and revision < MAX_REVISIONS:
                        problem = f"{step.slug}: {note}"
                        break
                    raise Failed(f"{step.slug}: {outcome}: {note}")
                if problem:
                    break
            if not problem:
                return
        raise Failed(problem)

    def check(self, tracer: otel_trace.Tracer) -> None:
        """The app's own checks once the driver is told: the job sheet's parts against the
        van's spec, then the van back on the road."""
        with tracer.start_as_current_span("verify job sheet") as span:
            parts = self.world.parts[self.results["order_parts"]]
            span.set_attribute("fleet.booking", self.results["book_bay"])
            span.set_attribute("fleet.part", str(parts["part"]))
            span.set_attribute("spec.part", self.world.current_part)
            if parts["part"] != self.world.current_part:
                reason = (
                    f"job sheet fits part {parts['part']}, the van's spec says "
                    f"{self.world.current_part} (charged "
                    f"{self.world.charges[self.results['book_bay']]})"
                )
                span.set_status(Status(StatusCode.ERROR, reason))
                raise Failed(reason)
        with tracer.start_as_current_span("watch van") as span:
            states = ("BOOKED", "IN_BAY", "SERVICED", "RELEASED", "ON_ROUTE")
            for poll, state in enumerate(states, 1):
                if self.label.scenario == "external_recall" and poll > int(
                    self.label.params["polls"]
                ):
                    reason = "van grounded: the manufacturer recalled the make's steering racks"
                    span.set_status(Status(StatusCode.ERROR, reason))
                    raise Failed(reason)
                span.add_event("van", {"poll": poll, "state": state})

    async def run(self, tracer: otel_trace.Tracer) -> str:
        with tracer.start_as_current_span(f"service {self.world.order}") as root:
            root.set_attribute("fleet.work_order", self.world.order)
            try:
                await self.work()
                self.check(tracer)
                root.set_attribute("fleet.outcome", "on_route")
            except Failed as e:
                root.set_attribute("fleet.outcome", "failed")
                root.set_status(Status(StatusCode.ERROR, str(e)))
            return format(root.get_span_context().trace_id, "032x")


async def _play(
    labels: Sequence[Label], base_url: str, tracer: otel_trace.Tracer
) -> dict[str, str]:
    client = AsyncOpenAI(api_key="test", base_url=base_url, max_retries=0)
    try:
        return {label.run: await FleetDesk(label, client).run(tracer) for label in labels}
    finally:
        await client.close()


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the fleet scenarios with Semantic Kernel's own diagnostics on ``provider``.

    Sets the process's global tracer provider (once, for good) to a relay that passes Semantic
    Kernel's spans to ``provider`` while a play is under way and drops them otherwise: a process
    that plays fleet cannot give the global provider to anything else.
    """
    if not labels:
        return {}
    # the kernel logs every failed function call; the spans carry them
    kernel_log = logging.getLogger("semantic_kernel")
    level = kernel_log.level
    kernel_log.setLevel(logging.CRITICAL)
    try:
        with global_provider(provider), ModelServer(respond=respond) as server:
            tracer = provider.get_tracer("fleet-app")
            return asyncio.run(_play(labels, server.base_url("corpus-fleet"), tracer))
    finally:
        kernel_log.setLevel(level)

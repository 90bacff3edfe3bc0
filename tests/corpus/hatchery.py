"""A salmon hatchery's shipment desk on smolagents, traced by MLflow's smolagents autologging
(``mlflow.smolagents.autolog()`` from the lightweight ``mlflow-tracing`` SDK) and the app's own
``mlflow.start_span`` spans: real ``ToolCallingAgent``\\ s on smolagents' ``OpenAIServerModel``
against a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)``). No planscope code.

Sealed-70 split only (see README.md). The task: ship a batch of eyed salmon ova to the river
trust's restocking programme; find a batch of the river's strain with enough eggs in the
broodstock register (read page by page), have the fish-health lab screen it (a case, polled),
reserve a tank slot in the nursery hall, book the live-fish lorry for the stocking day, charge
the trust's account, tell the trust's stocking officer. The hatchery's services sit behind a
GraphQL gateway, so the team asks its model for the plan as a GraphQL document:

* the app opens one MLflow ``AGENT`` span per shipment (``ship {shipment}``); a failed shipment
  raises inside it, so MLflow records the exception and the ``ERROR`` status;
* a ``shipment_planner`` ``ToolCallingAgent`` (no tools) answers through ``final_answer`` a
  **GraphQL mutation document**: one ``mutation PlanShipment { ... }`` of aliased fields, one per
  step, each after a ``# step n: purpose`` comment, e.g. ``reserveTank: bookTank(hall: "B",
  batch: $batch, weeks: 6) { slotId @export(as: "slot") }``; a ``$variable`` is the value an
  earlier field exported. The app parses it with a small hand-written parser (no GraphQL
  server) and runs each field as one step, the field name in snake case being the tool. Asked
  again after a setback, the planner answers a new mutation whose variable definitions carry
  the settled exports as defaults (``mutation PlanShipment($batch: ID = "EB-...")``) and whose
  fields are the steps still to do, their step numbers kept;
* a ``shipment_runner`` ``ToolCallingAgent`` run per field attempt (under the app's ``step
  {alias} attempt {n}`` span), its task the call with the variables filled in; it answers a
  **GraphQL response** as JSON: ``{"data": {alias: {field: value}}}`` or ``{"errors":
  [{"message", "path", "extensions": {"code"}}]}``;
* the services raise :class:`GatewayError`, a GraphQL error object as JSON whose
  ``extensions.code`` says what it is: ``BACKOFF`` (``retryAfter``: the model calls again
  ``after`` that time, in the same run), ``UNAVAILABLE`` (the runner answers the error, the app
  runs the field again, up to 8 attempts), ``STALE_PLAN`` (``use``: a new mutation, up to 5
  plans), ``FORBIDDEN`` (final); the model reads them from smolagents' ``Error executing tool``
  messages;
* after the last field the app checks the lorry against the trust's stocking consent (``check
  stocking consent``, a ``GUARDRAIL`` span) and watches the release site (``watch release``,
  readings as span events).

MLflow's tracer provider is the museum agent's (one per process, OTLP to a loopback sink, a
relay to the play's provider); smolagents autologging is turned off when the play returns.
MLflow's smolagents integration patches ``MultiStepAgent.run``, ``ToolCallingAgent.step``,
``Tool.__call__`` and the model classes' ``__call__``; smolagents' agents call the model's
``generate``, so no model-call span is recorded (the agent run's span carries the task and the
answer); and once a tool call inside an agent run raises, MLflow marks that autologging session
failed and the rest of the run's calls go untraced. The planner trusts the hatchery manager's
notes over the order sheet: the scenario's wrong value comes from a note. This source records no
context data (no starvation label).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

import mlflow
import mlflow.smolagents
from mlflow.entities import SpanEvent, SpanType
from opentelemetry.sdk.trace import TracerProvider
from smolagents import LogLevel, OpenAIServerModel, Tool, ToolCallingAgent, tool

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .lab import _answer, _call, _text
from .museum import _mlflow_provider, _Relay

ORDER: dict[str, Any] = {
    "river": "River Tay",
    "strain": "Tay spring run",
    "eggs": 60000,
    "hall": "B",
    "weeks": 6,
    "day": "2027-04-13",
    "depot": "Perth livestock yard",
    "account": "RT-58213",
    "amount": 4200,
    "officer": "stocking@taytrust.example",
}
RIVERS = {"River Tay": "TAY", "River Dee": "DEE", "River Spey": "SPY"}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_READS = 12
"""Screening reads in one run before the runner reports the case stalled."""
PLANNER = "Objective: "
"""How the planner's task opens (the runner's never does)."""


class GatewayError(RuntimeError):
    """A service's refusal through the GraphQL gateway: the error object as JSON."""

    def __init__(self, code: str, message: str, **extensions: Any):
        super().__init__(
            json.dumps({"message": message, "extensions": {"code": code} | extensions})
        )


# --- the plan: a GraphQL mutation document ---------------------------------------------------
_TOKEN = re.compile(
    r'\s+|,|(?P<comment>#[^\n]*)|(?P<string>"(?:[^"\\]|\\.)*")|(?P<number>-?\d+(?:\.\d+)?)'
    r"|(?P<name>[A-Za-z_]\w*)|(?P<punct>[{}()\[\]:$@=!])"
)


@dataclass
class Var:
    """A ``$name`` argument: an earlier field's export."""

    name: str


@dataclass
class Step:
    """One aliased field of the mutation: a step of the plan."""

    number: int
    purpose: str
    alias: str
    name: str
    args: dict[str, Any]
    select: str
    export: str = ""

    @property
    def tool(self) -> str:
        """The field's name in snake case (``bookTank`` -> ``book_tank``)."""
        return re.sub(r"(?<!^)([A-Z])", r"_\1", self.name).lower()


@dataclass
class Mutation:
    name: str
    defaults: dict[str, Any]
    """Variable definitions' defaults: the settled exports."""
    steps: list[Step]


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"unexpected {text[pos : pos + 20]!r} at {pos}")
        pos = m.end()
        if m.lastgroup:
            out.append((m.lastgroup, m.group(m.lastgroup)))
    return out


class _Parser:
    """A recursive-descent parser for the one mutation the planner writes: variable
    definitions with defaults, aliased fields with arguments, one selected scalar per field
    with an optional ``@export(as: ...)``; ``# step n: purpose`` comments name the steps."""

    def __init__(self, text: str):
        self.toks = _tokens(text)
        self.i = 0
        self.comment = ""

    def peek(self) -> tuple[str, str]:
        while self.i < len(self.toks) and self.toks[self.i][0] == "comment":
            self.comment = self.toks[self.i][1]
            self.i += 1
        return self.toks[self.i] if self.i < len(self.toks) else ("end", "")

    def take(self, value: str | None = None) -> str:
        text = self.peek()[1]
        if value is not None and text != value:
            raise ValueError(f"expected {value!r}, got {text!r}")
        self.i += 1
        return text

    def value(self) -> Any:
        kind, text = self.peek()
        if text == "$":
            self.take()
            return Var(self.take())
        self.take()
        if kind == "string":
            return json.loads(text)
        if kind == "number":
            return float(text) if "." in text else int(text)
        return {"true": True, "false": False, "null": None}.get(text, text)

    def arguments(self) -> dict[str, Any]:
        args: dict[str, Any] = {}
        if self.peek()[1] == "(":
            self.take("(")
            while self.peek()[1] != ")":
                key = self.take()
                self.take(":")
                args[key] = self.value()
            self.take(")")
        return args

    def directives(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        while self.peek()[1] == "@":
            self.take("@")
            name = self.take()
            out[name] = self.arguments()
        return out

    def mutation(self) -> Mutation:
        self.take("mutation")
        name = self.take() if self.peek()[0] == "name" else ""
        defaults: dict[str, Any] = {}
        if self.peek()[1] == "(":
            self.take("(")
            while self.peek()[1] != ")":
                self.take("$")
                var = self.take()
                self.take(":")
                self.take()  # the type's name
                if self.peek()[1] == "!":
                    self.take("!")
                if self.peek()[1] == "=":
                    self.take("=")
                    defaults[var] = self.value()
            self.take(")")
        self.take("{")
        steps: list[Step] = []
        while self.peek()[1] != "}":
            alias = self.take()  # the ``# step n`` comment before it was read by peek
            head = re.match(r"#\s*step (\d+):\s*(.*)", self.comment)
            self.take(":")
            fname = self.take()
            args = self.arguments()
            self.take("{")
            select = self.take()
            export = self.directives().get("export", {}).get("as", "")
            self.take("}")
            number = int(head.group(1)) if head else len(steps) + 1
            purpose = head.group(2).strip() if head else ""
            steps.append(Step(number, purpose, alias, fname, args, select, export))
            self.comment = ""
        self.take("}")
        return Mutation(name, defaults, steps)


def parse_mutation(text: str) -> Mutation:
    """The plan's steps, from the planner's GraphQL mutation document.

    >>> m = parse_mutation('''mutation PlanShipment($batch: ID = "EB-TAY-1") {
    ...   # step 3: reserve a tank
    ...   reserveTank: bookTank(hall: "B", batch: $batch, weeks: 6) { slotId @export(as: "slot") }
    ... }''')
    >>> m.defaults, m.steps[0].number, m.steps[0].tool, m.steps[0].args["batch"], m.steps[0].export
    ({'batch': 'EB-TAY-1'}, 3, 'book_tank', Var(name='batch'), 'slot')
    """
    start = text.find("mutation")
    if start < 0:
        raise ValueError("no mutation in the plan")
    return _Parser(text[start:]).mutation()


def _gql(value: Any) -> str:
    if isinstance(value, Var):
        return f"${value.name}"
    return json.dumps(value)


def write_mutation(name: str, defaults: dict[str, str], steps: list[Step]) -> str:
    """A mutation document (what the scripted planner answers)."""
    head = f"mutation {name}"
    if defaults:
        head += "(" + ", ".join(f"${k}: ID = {json.dumps(v)}" for k, v in defaults.items()) + ")"
    lines = [head + " {"]
    for s in steps:
        args = ", ".join(f"{k}: {_gql(v)}" for k, v in s.args.items())
        export = f' @export(as: "{s.export}")' if s.export else ""
        lines += [
            f"  # step {s.number}: {s.purpose}",
            f"  {s.alias}: {s.name}({args}) {{ {s.select}{export} }}",
        ]
    return "\n".join([*lines, "}"])


# --- the scripted model -------------------------------------------------------------------
def _plan(brief: str) -> str:
    """The planner's mutation: the order sheet's facts, the manager's notes trusted over them;
    after a setback with a ``use`` value that value; settled exports as variable defaults, the
    settled steps left out, the step numbers kept."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Order sheet"]) | json.loads(lines.get("Manager's notes", "{}"))
    settled: dict[str, str] = json.loads(lines.get("Settled", "{}"))
    use = re.search(r'"use": \{"(\w+)": "([^"]+)"\}', lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)
    b, c, t, lo = Var("batch"), Var("certificate"), Var("slot"), Var("lorry")
    steps = [
        Step(1, f"find a batch of {facts['strain']} eyed ova in the broodstock register",
             "findBatch", "broodstockRegister",
             {"river": facts["river"], "strain": facts["strain"], "eggs": facts["eggs"]},
             "batchId", "batch"),
        Step(2, "have the fish-health lab screen the batch", "screenBatch", "requestScreening",
             {"batch": b}, "certificate", "certificate"),
        Step(3, f"reserve a tank in nursery hall {facts['hall']}", "reserveTank", "bookTank",
             {"hall": facts["hall"], "batch": b, "weeks": facts["weeks"]}, "slotId", "slot"),
        Step(4, f"book the live-fish lorry for {facts['day']}", "bookLorry", "bookLorry",
             {"batch": b, "certificate": c, "tank": t, "day": facts["day"],
              "depot": facts["depot"]}, "bookingRef", "lorry"),
        Step(5, "charge the river trust's account", "chargeTrust", "chargeAccount",
             {"account": facts["account"], "booking": lo, "amount": facts["amount"]},
             "paymentId", "payment"),
        Step(6, "tell the trust's stocking officer", "notifyTrust", "notifyTrust",
             {"to": facts["officer"], "batch": b, "lorry": lo, "day": facts["day"]},
             "messageId"),
    ]  # fmt: skip
    todo = [s for s in steps if not s.export or s.export not in settled]
    return write_mutation("PlanShipment", settled, todo)


def _runner(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The runner's turn: make the call, call again ``after`` a BACKOFF, follow ``nextPage``,
    read a pending screening, answer the GraphQL response."""
    call = re.search(r"^Call: (\w+) (.*)$", task, re.MULTILINE)
    alias = re.search(r"^Field: (\w+) \{ (\w+) \}", task, re.MULTILINE)
    assert call and alias, task
    name, args = call.group(1), json.loads(call.group(2))
    path, select = alias.group(1), alias.group(2)
    # smolagents merges consecutive user messages: the newest error or observation is the
    # last block of the last message
    last = _text(messages[-1].get("content"))
    error_at, seen_at = last.rfind("Error:\n"), last.rfind("Observation:\n")
    if error_at > seen_at:
        found = re.search(r"GatewayError: (\{.*)", last[error_at:])
        error, _ = json.JSONDecoder().raw_decode(found.group(1)) if found else ({}, 0)
        ext = error.get("extensions") or {}
        if ext.get("code") == "BACKOFF":
            return _call(name, args | {"after": ext["retryAfter"]})
        if not error:
            error = {"message": last[error_at:].strip(), "extensions": {"code": "INTERNAL"}}
        return _answer(json.dumps({"errors": [error | {"path": [path]}]}))
    if seen_at >= 0:
        raw = last[seen_at:].removeprefix("Observation:").strip()
        seen, _ = json.JSONDecoder().raw_decode(raw)
        if seen.get("nextPage"):
            return _call(name, args | {"page": seen["nextPage"]})
        if seen.get("state") == "PENDING":
            reads = sum(
                "screening_status" in json.dumps(m.get("tool_calls") or m.get("content"))
                for m in messages
                if m.get("role") == "assistant"
            )
            if reads >= MAX_READS:
                stalled = {
                    "message": f"case {seen['case']} still PENDING after {reads} reads",
                    "path": [path],
                    "extensions": {"code": "STALLED"},
                }
                return _answer(json.dumps({"errors": [stalled]}))
            return _call("screening_status", {"case": seen["case"]})
        return _answer(json.dumps({"data": {path: {select: seen[select]}}}))
    return _call(name, args)


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the mutation for the
    planner's task, the runner's next turn otherwise.

    >>> task = 'New task:\\nField: notifyTrust { messageId }\\nCall: notify_trust {"to": "x"}'
    >>> msg = respond({"messages": [{"role": "user", "content": task}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["name"]
    'notify_trust'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if PLANNER in task:
        return completion(body, _answer(_plan(task)))
    return completion(body, _runner(messages, task))


# --- the hatchery's services ------------------------------------------------------------------
@dataclass
class World:
    """The broodstock register, fish-health lab, nursery hall, haulier, trust ledger and mail
    of one shipment."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    batches: dict[str, str] = field(default_factory=dict)
    """Batch -> its river stock."""
    cases: dict[str, int] = field(default_factory=dict)
    lorries: list[dict[str, str]] = field(default_factory=list)
    payments: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, name: str) -> None:
        """Raise the scenario's next fault when ``name`` is the service it targets."""
        if not self.faults or name != self.params.get("tool"):
            return
        f = self.faults.pop(0)
        if f["code"] == "BACKOFF":
            raise GatewayError("BACKOFF", f["text"], retryAfter=f["hint"])
        if f["code"] == "STALE_PLAN":
            key, _, value = f["hint"].partition("=")
            raise GatewayError("STALE_PLAN", f["text"], use={key: value})
        raise GatewayError(f["code"], f["text"])


def make_tools(world: World) -> list[Tool]:
    """The gateway's services, bound to one shipment's world."""

    @tool
    def broodstock_register(river: str, strain: str, eggs: int, page: int = 1) -> str:
        """Egg batches of a river's strain with at least a number of eyed ova, a page at a time.

        Args:
            river: the river whose broodstock the batch comes from
            strain: the strain
            eggs: the eyed ova needed
            page: the register's page
        """
        world.fault("broodstock_register")
        code = RIVERS.get(river, river[:3].upper())
        if page < int(world.params.get("pages", 1)):
            short = [{"batchId": f"EB-{code}-{page}{n}", "eggs": eggs // (n + 2)} for n in (1, 2)]
            return json.dumps({"batches": short, "nextPage": page + 1})
        batch = f"EB-{code}-{world.label.seed}"
        world.batches[batch] = river
        return json.dumps({"batchId": batch, "river": river, "eggs": eggs + 1800})

    @tool
    def request_screening(batch: str) -> str:
        """Open a fish-health screening case for a batch.

        Args:
            batch: the egg batch
        """
        world.fault("request_screening")
        case = f"FH-{world.label.seed}-{len(world.cases) + 1}"
        world.cases[case] = 0
        return json.dumps({"case": case, "batch": batch, "state": "PENDING"})

    @tool
    def screening_status(case: str) -> str:
        """A screening case's state; its health certificate once cleared.

        Args:
            case: the screening case
        """
        world.cases[case] += 1
        if world.params.get("stuck") or world.cases[case] < int(world.params.get("polls", 1)):
            return json.dumps({"case": case, "state": "PENDING"})
        return json.dumps({"case": case, "state": "CLEARED", "certificate": f"HC-{case[3:]}"})

    @tool
    def book_tank(hall: str, batch: str, weeks: int, after: str = "") -> str:
        """Reserve a tank slot in a nursery hall for a batch.

        Args:
            hall: the nursery hall
            batch: the egg batch
            weeks: how many weeks the batch stays
            after: call again after this time (HH:MM), when told to back off
        """
        world.fault("book_tank")
        moved = world.params.get("hall_to")
        if moved and hall == ORDER["hall"]:
            raise GatewayError(
                "STALE_PLAN", f"hall {hall} is full until May", use={"hall": str(moved)}
            )
        stock = world.batches.get(batch, "")
        if stock != ORDER["river"]:
            raise GatewayError(
                "FORBIDDEN",
                f"hall {hall} is licensed for {ORDER['river']} stock only; batch {batch} is "
                f"{stock or 'unknown'} stock",
            )
        return json.dumps({"slotId": f"T{hall}-{world.label.seed % 40 + 1:02d}", "weeks": weeks})

    @tool
    def book_lorry(
        batch: str, certificate: str, tank: str, day: str, depot: str, after: str = ""
    ) -> str:
        """Book a live-fish lorry from a haulier's depot to carry a batch on a day.

        Args:
            batch: the egg batch
            certificate: the batch's health certificate
            tank: the tank slot the fish leave from
            day: the stocking day (YYYY-MM-DD)
            depot: the haulier's depot
            after: call again after this time (HH:MM), when told to back off
        """
        world.fault("book_lorry")
        if depot != ORDER["depot"] and depot not in world.params.get("depots", ()):
            raise GatewayError("FORBIDDEN", f"no live-fish haulier at {depot}")
        ref = f"LF-{world.label.seed}-{len(world.lorries) + 1}"
        world.lorries.append({"ref": ref, "day": day, "batch": batch, "depot": depot})
        return json.dumps(
            {"bookingRef": ref, "day": day, "depot": depot, "loads": after or "05:30"}
        )

    @tool
    def charge_account(account: str, booking: str, amount: int, after: str = "") -> str:
        """Charge a river trust's account for a shipment.

        Args:
            account: the trust's account
            booking: the lorry booking the charge is for
            amount: the amount in GBP
            after: call again after this time (HH:MM), when told to back off
        """
        world.fault("charge_account")
        if account != ORDER["account"]:
            raise GatewayError("FORBIDDEN", f"the trust's ledger holds no account {account}")
        world.payments.append(booking)
        return json.dumps({"paymentId": f"PAY-{world.label.seed}-{len(world.payments)}"})

    @tool
    def notify_trust(to: str, batch: str, lorry: str, day: str, after: str = "") -> str:
        """Mail the trust's stocking officer the batch, the lorry and the day.

        Args:
            to: the officer's address
            batch: the egg batch
            lorry: the lorry booking
            day: the stocking day
            after: call again after this time (HH:MM), when told to back off
        """
        world.fault("notify_trust")
        return json.dumps({"messageId": f"MSG-{lorry}-{day[-2:]}", "to": to})

    return [
        broodstock_register,
        request_screening,
        screening_status,
        book_tank,
        book_lorry,
        charge_account,
        notify_trust,
    ]


# --- the app --------------------------------------------------------------------------------
class ShipmentFailed(Exception):
    """The batch was not shipped and released (the reason is the message)."""


class Rerun(Exception):
    """The runner answered an ``UNAVAILABLE`` error: run the field again."""


class Replan(Exception):
    """The runner answered a ``STALE_PLAN`` error: ask for a new mutation."""


class ShipmentDesk:
    """One shipment, from the order sheet to the watched release."""

    def __init__(self, label: Label, model: OpenAIServerModel):
        self.label = label
        self.shipment = f"SH-{label.seed % 10000:04d}"
        self.world = World(label)
        self.planner = ToolCallingAgent(
            tools=[], model=model, name="shipment_planner", verbosity_level=LogLevel.OFF
        )
        self.runner = ToolCallingAgent(
            tools=make_tools(self.world),
            model=model,
            name="shipment_runner",
            max_steps=20,
            verbosity_level=LogLevel.OFF,
        )
        self.exports: dict[str, str] = {}

    def brief(self, revision: int, setback: str) -> str:
        notes = {
            k: self.label.params[k] for k in ("river", "day", "account") if k in self.label.params
        }
        lines = [
            f"{PLANNER}ship eyed ova for order {self.shipment} to the river trust.",
            f"Order sheet: {json.dumps(ORDER)}",
        ]
        if notes:
            lines.append(f"Manager's notes: {json.dumps(notes)}")
        if revision > 1:
            lines += [
                f"Revision: {revision}",
                f"Settled: {json.dumps(self.exports)}",
                f"Setback: {setback}",
            ]
        return "\n".join(lines)

    def plan(self, revision: int, setback: str) -> Mutation:
        with mlflow.start_span(name=f"plan revision {revision}", span_type=SpanType.CHAIN) as span:
            brief = self.brief(revision, setback)
            span.set_inputs({"brief": brief})
            document = str(self.planner.run(brief, reset=True))
            span.set_outputs({"mutation": document})
            mutation = parse_mutation(document)
            span.set_attribute("hatchery.plan.steps", [s.alias for s in mutation.steps])
        self.exports |= {k: str(v) for k, v in mutation.defaults.items()}
        return mutation

    def attempt(self, step: Step, attempt: int) -> None:
        """One runner run of a field, its variables filled from the exports."""
        args = {k: self.exports[v.name] if isinstance(v, Var) else v for k, v in step.args.items()}
        task = (
            f"Step {step.number}: {step.purpose} (attempt {attempt})\n"
            f"Field: {step.alias} {{ {step.select} }}\n"
            f"Call: {step.tool} {json.dumps(args)}"
        )
        with mlflow.start_span(
            name=f"step {step.alias} attempt {attempt}", span_type=SpanType.CHAIN
        ) as span:
            span.set_inputs({"task": task})
            answer = json.loads(str(self.runner.run(task, reset=True)))
            span.set_outputs(answer)
            if "data" in answer:
                if step.export:
                    self.exports[step.export] = str(answer["data"][step.alias][step.select])
                return
            (error,) = answer["errors"]
            span.set_status("ERROR")
            code = error.get("extensions", {}).get("code")
            span.set_attribute("hatchery.error.code", str(code))
        text = f"{step.alias}: {json.dumps(error)}"
        if code == "UNAVAILABLE":
            raise Rerun(text)
        if code == "STALE_PLAN":
            raise Replan(text)
        raise ShipmentFailed(text)

    def work(self) -> None:
        setback = ""
        for revision in range(1, MAX_PLANS + 1):
            mutation = self.plan(revision, setback)
            setback = ""
            for step in mutation.steps:
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    try:
                        self.attempt(step, attempt)
                        break
                    except Rerun as e:
                        if attempt == MAX_ATTEMPTS:
                            raise ShipmentFailed(str(e)) from e
                    except Replan as e:
                        setback = str(e)
                        break
                if setback:
                    break
            if not setback:
                return
        raise ShipmentFailed(f"no plan holds after {MAX_PLANS}: {setback}")

    def check(self) -> None:
        """The app's own checks once the trust is told: the lorry against the stocking
        consent, then the release site up to the day."""
        lorry = self.world.lorries[-1]
        with mlflow.start_span(name="check stocking consent", span_type=SpanType.GUARDRAIL) as span:
            span.set_inputs({"lorry": lorry["ref"], "consent_day": ORDER["day"]})
            span.set_outputs({"lorry_day": lorry["day"]})
            if lorry["day"] != ORDER["day"]:
                raise ShipmentFailed(
                    f"lorry {lorry['ref']} carries batch {lorry['batch']} on {lorry['day']}; the "
                    f"trust's stocking consent is for {ORDER['day']}"
                )
        with mlflow.start_span(name="watch release") as span:
            span.set_inputs({"river": ORDER["river"], "lorry": lorry["ref"]})
            for read, gauge in enumerate((0.62, 0.64, 0.61, 0.66), 1):
                if self.label.scenario == "external_spate" and read > int(
                    self.label.params["reads"]
                ):
                    raise ShipmentFailed(
                        f"a spate on the {ORDER['river']} (gauge 2.9 m) closes the release site; "
                        f"the trust postpones stocking"
                    )
                span.add_event(
                    # SpanEvent is a concrete dataclass; mypy reads its base's abstract from_proto
                    SpanEvent("river gauge", attributes={"read": read, "metres": gauge})  # type: ignore[abstract]
                )
            span.set_outputs({"state": "released"})

    def run(self) -> str:
        try:
            with mlflow.start_span(name=f"ship {self.shipment}", span_type=SpanType.AGENT) as root:
                # MLflow's trace id is "tr-" and the OpenTelemetry trace id in hex
                trace_id = root.trace_id.removeprefix("tr-")
                root.set_inputs(ORDER | {"shipment": self.shipment})
                self.work()
                self.check()
                root.set_outputs({"outcome": "released", "exports": self.exports})
        except ShipmentFailed:  # MLflow recorded the exception and the root's ERROR status
            pass
        return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the hatchery scenarios under MLflow's smolagents autologging, its spans relayed to
    ``provider``; autologging is turned off when the play returns."""
    if not labels:
        return {}
    _mlflow_provider()
    quiet = logging.getLogger("mlflow")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    _Relay.target = provider
    mlflow.smolagents.autolog(silent=True)
    try:
        with ModelServer(respond=respond) as server:
            model = OpenAIServerModel(
                MODEL, api_base=server.base_url("corpus-hatchery"), api_key="test"
            )
            return {label.run: ShipmentDesk(label, model).run() for label in labels}
    finally:
        mlflow.smolagents.autolog(disable=True, silent=True)
        _Relay.target = None
        quiet.setLevel(level)

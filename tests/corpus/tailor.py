"""A bespoke tailor's order desk making a wedding suit with the **openai** client by hand: a
planner call whose **structured output** is a pydantic ``Plan``
(``client.chat.completions.parse(response_format=Plan)``), an executor conversation with
function calling per step attempt, traced by **OpenInference's OpenAI instrumentor**
(``OpenAIInstrumentor().instrument(tracer_provider=...)``: an LLM span per completion) under
one root span of the app's own per order; the model is a scripted model on the conformance
suite's fake OpenAI server (``ModelServer(respond=...)``). No planscope code.

Sealed-84 split only (see README.md). The brief asked for Instructor (``client.create(
response_model=Plan)`` in its tool-calling mode) under OpenInference's Instructor instrumentor;
every Instructor release that takes the openai 3.x line wants ``jiter<0.15`` (1.17.0 included)
while the pinned openai 3.57.0 wants ``jiter>=0.16``: pip resolves it only by moving openai
back to 3.3.0, an existing pin, so the brief's fallback is used: OpenAI's own structured outputs
under OpenInference's OpenAI instrumentor (both pinned already; no new package).

The task: a customer's wedding suit; find a bolt of the cloth the customer chose in the mill's
stock list (read page by page), book the pattern cutter's slot, have the baste fitting signed off
(polled), book the courier that delivers the finished suit on the delivery day, invoice the
customer's account, mail the customer:

* the app opens one span per order (``wedding suit order {order}``, scope ``tailor``); a failed
  order records the exception on it and sets its ``ERROR`` status; the watch of the courier's
  delivery adds ``courier tracking`` events to it;
* the planner call answers a ``Plan``: ``steps`` each with an ``id``, a ``purpose``, the
  ``tool``, its ``arguments`` as a list of ``{name, value}`` pairs (a value ``@<id>`` is an earlier
  step's output) and the ids it ``waits_for``; the app reads it with a small reader of its own.
  After a setback the planner is asked again (``response_format=RevisedPlan``) with the settled
  steps and the setback, and answers a ``RevisedPlan`` that also holds the ``settled`` steps (id,
  tool, output) and only the steps still to do;
* each step attempt is one executor conversation (``tools=`` the workroom's seven functions, the
  app running each call and answering its result as a ``tool`` message) whose last answer is a
  JSON report: ``{"status": "done", "output": {...}}`` or ``{"status": "dropped" | "revise" |
  "refused" | "stalled", "error": ...}``;
* the services answer faults as JSON error objects ``{"error": <kind>, "detail": <text>}``:
  ``busy`` with a ``retry_after`` time (the executor calls again ``after`` that time, in the same
  conversation), ``dropped`` (the app runs the step again, up to 8 attempts), ``revise`` with
  ``(use key=value)`` (a new plan, up to 5), ``refused`` (final); a baste fitting still awaiting
  alterations after 12 reads is reported ``stalled``, final;
* after the last step the app checks the courier booking's day against the order's delivery
  day, then watches the delivery.

The planner trusts the head cutter's notes over the order: the scenario's wrong value comes from
a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from openai import OpenAI
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer
from pydantic import BaseModel

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label

TRACER = "tailor"
ORDER: dict[str, Any] = {
    "order": "WS-2027-0612",
    "customer": "Tobias Reyne",
    "wedding": "2027-06-12",
    "mill": "Calder Vale Mill",
    "cloth": "Solaro 2-ply, tan herringbone",
    "metres": 3.4,
    "cutter": "Mr. Okafor",
    "pattern": "two-button peak lapel, 40R",
    "chest_cm": 102,
    "waist_cm": 86,
    "branch": "Mayfair branch",
    "day": "2027-06-09",
    "account": "RE-48213",
    "amount": 3850.0,
    "email": "tobias.reyne@example.org",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_READS = 12
"""Fitting reads in one executor conversation before the executor reports it stalled."""
MAX_TURNS = 24
OUTPUTS = {
    "cloth": "lot",
    "cut": "cut_id",
    "fitting": "fitting_ref",
    "courier": "booking",
    "invoice": "invoice_id",
    "notice": "message_id",
}
"""Each step's output field, in the order the steps run."""
PLANNER = "You are the order desk's planner."
EXECUTOR = "You are the workroom's executor."


# --- the plan: structured output ------------------------------------------------------------
class Argument(BaseModel):
    """One argument of a step's tool call; a value ``@<id>`` is that earlier step's output."""

    name: str
    value: str


class PlanStep(BaseModel):
    id: str
    purpose: str
    tool: str
    arguments: list[Argument]
    waits_for: list[str]


class Plan(BaseModel):
    """The planner's plan for one order."""

    order: str
    steps: list[PlanStep]


class SettledStep(BaseModel):
    id: str
    tool: str
    output: str


class RevisedPlan(BaseModel):
    """The planner's plan after a setback: the settled steps, then the steps still to do."""

    order: str
    revision: int
    settled: list[SettledStep]
    steps: list[PlanStep]


@dataclass(frozen=True)
class Ref:
    """An argument taken from an earlier step's output."""

    step: str


@dataclass
class Task:
    """One step of the plan as the app runs it."""

    id: str
    purpose: str
    tool: str
    args: dict[str, Any]
    waits_for: list[str]


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def read_plan(plan: Plan | RevisedPlan, tools: set[str]) -> tuple[dict[str, str], list[Task]]:
    """The settled outputs and the steps to do, from the planner's structured output: values
    ``@<id>`` become references, numbers numbers; a step may wait only for a settled or an
    earlier step, and call only a tool the workroom has.

    >>> settled, tasks = read_plan(RevisedPlan(order="WS-1", revision=2, settled=[
    ...     SettledStep(id="cloth", tool="find_cloth", output="CV-1")], steps=[PlanStep(
    ...     id="cut", purpose="cut", tool="book_cutter", waits_for=["cloth"], arguments=[
    ...     Argument(name="lot", value="@cloth"), Argument(name="chest_cm", value="102")])]),
    ...     {"book_cutter"})
    >>> settled, tasks[0].args
    ({'cloth': 'CV-1'}, {'lot': Ref(step='cloth'), 'chest_cm': 102})
    """
    settled = {s.id: s.output for s in plan.settled} if isinstance(plan, RevisedPlan) else {}
    known = set(settled)
    tasks: list[Task] = []
    for step in plan.steps:
        if step.tool not in tools:
            raise ValueError(f"step {step.id} calls no tool of the workroom: {step.tool}")
        args: dict[str, Any] = {}
        for arg in step.arguments:
            value: Any = arg.value
            if value.startswith("@"):
                value = Ref(value[1:])
                if value.step not in known:
                    raise ValueError(f"step {step.id} takes {arg.value}, no earlier step")
            elif _NUMBER.fullmatch(value):
                value = float(value) if "." in value else int(value)
            args[arg.name] = value
        missing = [w for w in step.waits_for if w not in known]
        if missing:
            raise ValueError(f"step {step.id} waits for unknown steps {missing}")
        tasks.append(Task(step.id, step.purpose, step.tool, args, list(step.waits_for)))
        known.add(step.id)
    return settled, tasks


# --- the scripted model -------------------------------------------------------------------
def _call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _plan(brief: str, revised: bool) -> str:
    """The planner's structured answer: the order's facts, the head cutter's notes trusted over
    them; after a setback with a ``use`` value that value; the settled steps listed and left out
    of the steps."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Order"]) | json.loads(lines.get("Head cutter's notes", "{}"))
    settled: dict[str, str] = json.loads(lines.get("Settled", "{}"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)

    def step(id: str, purpose: str, tool: str, waits: list[str], **args: Any) -> dict[str, Any]:
        pairs = [{"name": k, "value": str(v)} for k, v in args.items()]
        return {"id": id, "purpose": purpose, "tool": tool, "arguments": pairs, "waits_for": waits}

    steps = [
        step("cloth", f"find {facts['metres']} m of {facts['cloth']} at {facts['mill']}",
             "find_cloth", [], mill=facts["mill"], cloth=facts["cloth"], metres=facts["metres"]),
        step("cut", f"book {facts['cutter']} to cut the {facts['pattern']} pattern",
             "book_cutter", ["cloth"], lot="@cloth", cutter=facts["cutter"],
             pattern=facts["pattern"], chest_cm=facts["chest_cm"], waist_cm=facts["waist_cm"]),
        step("fitting", "have the baste fitting signed off", "start_fitting", ["cut"],
             cut="@cut", customer=facts["customer"]),
        step("courier", f"book the courier from the {facts['branch']} for {facts['day']}",
             "book_courier", ["fitting"], fitting="@fitting", branch=facts["branch"],
             day=facts["day"]),
        step("invoice", f"invoice {facts['order']} to the customer's account",
             "invoice_account", ["courier"], order=facts["order"], account=facts["account"],
             amount=facts["amount"], courier="@courier"),
        step("notice", "mail the customer the delivery", "mail_customer", ["courier"],
             to=facts["email"], courier="@courier", day=facts["day"]),
    ]  # fmt: skip
    todo = [s for s in steps if s["id"] not in settled]
    if not revised:
        return json.dumps({"order": facts["order"], "steps": todo})
    tools = {s["id"]: s["tool"] for s in steps}
    done = [{"id": k, "tool": tools[k], "output": v} for k, v in settled.items()]
    revision = int(lines.get("Revision", "2"))
    return json.dumps(
        {"order": facts["order"], "revision": revision, "settled": done, "steps": todo}
    )


def _executor(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The executor's turn: make the call, call again ``after`` a busy answer, follow
    ``next_page``, read a fitting awaiting alterations, answer the report."""
    task = next(str(m.get("content")) for m in messages if m.get("role") == "user")
    found = re.search(r"^Call: (\w+) (.*)$", task, re.MULTILINE)
    assert found, task
    name, args = found.group(1), json.loads(found.group(2))
    turn = len(messages)
    calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    pending: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            pending[c["id"]] = (fn["name"], json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool" and m.get("tool_call_id") in pending:
            calls.append((*pending.pop(m["tool_call_id"]), json.loads(str(m.get("content")))))
    if not calls:
        return _call(name, args, turn)
    last, called, seen = calls[-1]
    if "error" in seen:
        if seen["error"] == "busy":
            return _call(last, called | {"after": seen["retry_after"]}, turn)
        return _answer(json.dumps({"status": seen["error"], "error": seen["detail"]}))
    if seen.get("next_page"):
        return _call(last, called | {"page": seen["next_page"]}, turn)
    if seen.get("state") == "AWAITING_ALTERATIONS":
        reads = sum(c[0] == "fitting_status" for c in calls)
        if reads >= MAX_READS:
            note = f"fitting {seen['fitting_id']} still awaiting alterations after {reads} reads"
            return _answer(json.dumps({"status": "stalled", "error": note}))
        return _call("fitting_status", {"fitting_id": seen["fitting_id"]}, turn)
    return _answer(json.dumps({"status": "done", "output": seen}))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the planner's structured
    answer (its request carries a ``response_format``) or the executor's turn.

    >>> brief = "Order: " + json.dumps(ORDER)
    >>> msg = respond({"response_format": {"json_schema": {"name": "Plan"}}, "messages": [
    ...     {"role": "system", "content": PLANNER}, {"role": "user", "content": brief}]})
    >>> [s["tool"] for s in json.loads(msg["choices"][0]["message"]["content"])["steps"]][:3]
    ['find_cloth', 'book_cutter', 'start_fitting']
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
    if schema:
        brief = next(str(m.get("content")) for m in messages if m.get("role") == "user")
        return completion(body, _answer(_plan(brief, schema == "RevisedPlan")))
    return completion(body, _executor(messages))


# --- the workroom's services ------------------------------------------------------------------
class Fault(Exception):
    """A service's fault, answered to the model as a JSON error object."""

    def __init__(self, kind: str, detail: str, retry_after: str = ""):
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail, self.retry_after = kind, detail, retry_after

    def answer(self) -> dict[str, str]:
        out = {"error": self.kind, "detail": self.detail}
        if self.retry_after:
            out["retry_after"] = self.retry_after
        return out


@dataclass
class World:
    """One order's world: the scenario's faults and what the services hold."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    lots: dict[str, str] = field(default_factory=dict)
    fittings: dict[str, int] = field(default_factory=dict)
    couriers: list[dict[str, str]] = field(default_factory=list)
    invoices: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]

    @property
    def params(self) -> Any:
        return self.label.params

    def fault(self, tool: str) -> None:
        """Raise the scenario's next fault for ``tool``, if any is left."""
        if self.params.get("tool") != tool or not self.faults:
            return
        f = self.faults.pop(0)
        hint = f.get("hint", "")
        if f["kind"] == "busy":
            raise Fault("busy", f"{f['text']}; try again after {hint}", hint)
        if f["kind"] == "revise":
            raise Fault("revise", f"{f['text']} (use {hint})")
        raise Fault(f["kind"], f["text"])


def _schema(description: str, **params: tuple[str, str]) -> dict[str, Any]:
    """A function tool's definition: ``name=(json type, description)``; ``after``, ``page``
    and ``desk_ref`` optional."""
    optional = {"after", "page", "desk_ref"}
    return {
        "type": "function",
        "function": {
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {k: {"type": t, "description": d} for k, (t, d) in params.items()},
                "required": [k for k in params if k not in optional],
            },
        },
    }


_REF = ("string", "the desk's reference for this call")
_AFTER = ("string", "call again after this time (HH:MM), when told the service is busy")
TOOLS: dict[str, dict[str, Any]] = {
    "find_cloth": _schema(
        "Bolts of a cloth at a mill with at least the metres needed, a stock-list page at a time.",
        mill=("string", "the mill"), cloth=("string", "the cloth"),
        metres=("number", "metres needed"), page=("integer", "the stock list's page"),
        desk_ref=_REF,
    ),
    "book_cutter": _schema(
        "Book a pattern cutter's slot to cut a suit from a cloth lot.",
        lot=("string", "the cloth lot"), cutter=("string", "the cutter"),
        pattern=("string", "the pattern"), chest_cm=("number", "chest"),
        waist_cm=("number", "waist"), after=_AFTER, desk_ref=_REF,
    ),
    "start_fitting": _schema(
        "Book the customer's baste fitting of a cut suit.",
        cut=("string", "the cut"), customer=("string", "the customer"), desk_ref=_REF,
    ),
    "fitting_status": _schema(
        "A baste fitting's state; its sign-off reference once signed off.",
        fitting_id=("string", "the fitting"),
    ),
    "book_courier": _schema(
        "Book the courier delivering the finished suit from a branch on a day.",
        fitting=("string", "the fitting's sign-off"), branch=("string", "the courier's branch"),
        day=("string", "the delivery day (YYYY-MM-DD)"), after=_AFTER, desk_ref=_REF,
    ),
    "invoice_account": _schema(
        "Invoice an order to the customer's account.",
        order=("string", "the order"), account=("string", "the customer's account"),
        amount=("number", "GBP"), courier=("string", "the courier booking"), after=_AFTER,
        desk_ref=_REF,
    ),
    "mail_customer": _schema(
        "Mail the customer the delivery and its day.",
        to=("string", "the customer's address"), courier=("string", "the courier booking"),
        day=("string", "the delivery day"), after=_AFTER, desk_ref=_REF,
    ),
}  # fmt: skip
for _name, _tool in TOOLS.items():
    _tool["function"]["name"] = _name


def make_services(world: World) -> dict[str, Callable[..., dict[str, Any]]]:
    """The workroom's services, bound to one order's world."""
    seed = world.label.seed

    def find_cloth(
        mill: str, cloth: str, metres: float, page: int = 1, desk_ref: str = ""
    ) -> dict[str, Any]:
        world.fault("find_cloth")
        code = "".join(w[0] for w in mill.split()).upper()
        if page < int(world.params.get("pages", 1)):
            ends = [
                {"lot": f"{code}-{page}{n}", "metres": round(metres / (n + 1), 1)} for n in (1, 2)
            ]
            return {"bolts": ends, "next_page": page + 1}
        lot = f"{code}-{seed}"
        world.lots[lot] = mill
        return {"lot": lot, "mill": mill, "cloth": cloth, "metres": metres + 0.6}

    def book_cutter(
        lot: str, cutter: str, pattern: str, chest_cm: float, waist_cm: float,
        after: str = "", desk_ref: str = "",
    ) -> dict[str, Any]:  # fmt: skip
        world.fault("book_cutter")
        moved = world.params.get("cutter_to")
        if moved and cutter == ORDER["cutter"]:
            raise Fault(
                "revise", f"{cutter} is away at the cloth fair this week (use cutter={moved})"
            )
        mill = world.lots.get(lot, "")
        if mill != ORDER["mill"]:
            raise Fault(
                "refused",
                f"{cutter}'s slot for {ORDER['order']} is for the customer's {ORDER['mill']} "
                f"cloth; lot {lot} is from {mill or 'no known mill'}",
            )
        return {
            "cut_id": f"CUT-{seed}-{cutter.split()[-1][:3].upper()}",
            "cut_at": after or "10:30",
        }

    def start_fitting(cut: str, customer: str, desk_ref: str = "") -> dict[str, Any]:
        world.fault("start_fitting")
        fitting = f"BF-{seed}-{len(world.fittings) + 1}"
        world.fittings[fitting] = 0
        if world.params.get("stuck") or "polls" in world.params:
            return {"fitting_id": fitting, "state": "AWAITING_ALTERATIONS", "cut": cut}
        return {"fitting_id": fitting, "state": "SIGNED_OFF", "fitting_ref": f"SO-{fitting[3:]}"}

    def fitting_status(fitting_id: str) -> dict[str, Any]:
        world.fittings[fitting_id] += 1
        reads = world.fittings[fitting_id]
        if world.params.get("stuck") or reads < int(world.params.get("polls", 0)):
            return {
                "fitting_id": fitting_id,
                "state": "AWAITING_ALTERATIONS",
                "alteration": f"sleeve pitch, pass {reads}",
                "checked_at": f"{9 + reads // 4:02d}:{reads % 4 * 15:02d}",
            }
        return {
            "fitting_id": fitting_id,
            "state": "SIGNED_OFF",
            "fitting_ref": f"SO-{fitting_id[3:]}",
        }

    def book_courier(
        fitting: str, branch: str, day: str, after: str = "", desk_ref: str = ""
    ) -> dict[str, Any]:
        world.fault("book_courier")
        if branch != ORDER["branch"] and branch not in world.params.get("branches", ()):
            raise Fault("refused", f"the courier has no suit round from the {branch}")
        booking = f"CR-{seed}-{len(world.couriers) + 1}"
        world.couriers.append({"booking": booking, "day": day, "branch": branch})
        return {"booking": booking, "day": day, "branch": branch, "collects": after or "08:00"}

    def invoice_account(
        order: str, account: str, amount: float, courier: str, after: str = "", desk_ref: str = ""
    ) -> dict[str, Any]:
        world.fault("invoice_account")
        if account != ORDER["account"]:
            raise Fault("refused", f"the shop's ledger holds no customer account {account}")
        world.invoices.append(courier)
        return {"invoice_id": f"INV-{seed}-{len(world.invoices)}", "order": order}

    def mail_customer(
        to: str, courier: str, day: str, after: str = "", desk_ref: str = ""
    ) -> dict[str, Any]:
        world.fault("mail_customer")
        return {"message_id": f"MSG-{courier}-{day[-2:]}", "to": to}

    return {
        "find_cloth": find_cloth,
        "book_cutter": book_cutter,
        "start_fitting": start_fitting,
        "fitting_status": fitting_status,
        "book_courier": book_courier,
        "invoice_account": invoice_account,
        "mail_customer": mail_customer,
    }


# --- the app --------------------------------------------------------------------------------
class OrderFailed(Exception):
    """The suit was not delivered to the customer (the reason is the message)."""


class Rerun(Exception):
    """The step's call was dropped: run the step again."""


class Replan(Exception):
    """The step failed on the plan's data: ask for a new plan."""


class SuitOrder:
    """One wedding-suit order, from the brief to the watched delivery."""

    def __init__(self, label: Label, client: OpenAI, tracer: Tracer):
        self.label = label
        self.client = client
        self.tracer = tracer
        self.world = World(label)
        self.services = make_services(self.world)
        self.outputs: dict[str, str] = {}
        """Settled step -> its output."""

    def brief(self, revision: int, setback: str) -> str:
        notes = {
            k: self.label.params[k] for k in ("mill", "day", "account") if k in self.label.params
        }
        lines = [
            f"Objective: make and deliver the wedding suit on order {ORDER['order']}.",
            f"Order: {json.dumps(ORDER)}",
        ]
        if notes:
            lines.append(f"Head cutter's notes: {json.dumps(notes)}")
        if revision > 1:
            lines += [
                f"Revision: {revision}",
                f"Settled: {json.dumps(self.outputs)}",
                f"Setback: {setback}",
            ]
        return "\n".join(lines)

    def plan(self, revision: int, setback: str) -> list[Task]:
        """Ask the planner; the steps to do, read from its structured output."""
        model: type[Plan | RevisedPlan] = Plan if revision == 1 else RevisedPlan
        instructions = (
            f"{PLANNER} Answer the order's plan: steps with an id, a purpose, the workroom tool, "
            "its arguments as name/value pairs (@<id> for an earlier step's output) and the ids "
            "it waits for."
        )
        if revision > 1:
            instructions += " List the settled steps with their outputs; plan only the rest."
        out = self.client.chat.completions.parse(
            model=MODEL,
            messages=[
                {"role": "system", "content": instructions},
                {"role": "user", "content": self.brief(revision, setback)},
            ],
            response_format=model,
        )
        parsed = out.choices[0].message.parsed
        if not isinstance(parsed, Plan | RevisedPlan):
            raise OrderFailed(f"the planner gave no plan at revision {revision}")
        settled, tasks = read_plan(parsed, set(TOOLS))
        self.outputs |= settled
        return tasks

    def value(self, arg: Any) -> Any:
        return self.outputs[arg.step] if isinstance(arg, Ref) else arg

    def run_tool(self, name: str, arguments: str) -> dict[str, Any]:
        try:
            return self.services[name](**json.loads(arguments or "{}"))
        except Fault as fault:
            return fault.answer()

    def attempt(self, task: Task, revision: int, attempt: int) -> None:
        """One executor conversation for one attempt at a step."""
        args = {k: self.value(v) for k, v in task.args.items()}
        args["desk_ref"] = f"{ORDER['order']}/{task.id}/{revision}.{attempt}"
        messages: list[Any] = [
            {
                "role": "system",
                "content": f"{EXECUTOR} Run the one step you are given with the workroom's "
                'tools, then answer a JSON report {"status": ..., "output": ..., "error": ...}.',
            },
            {
                "role": "user",
                "content": f"Step {task.id} (attempt {attempt}): {task.purpose}\n"
                f"Call: {task.tool} {json.dumps(args)}",
            },
        ]
        report: dict[str, Any] = {}
        for _ in range(MAX_TURNS):
            reply = self.client.chat.completions.create(
                model=MODEL,
                messages=messages,
                tools=list(TOOLS.values()),  # type: ignore[arg-type]
            )
            message = reply.choices[0].message
            if not message.tool_calls:
                report = json.loads(message.content or "{}")
                break
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                fn = call.function  # type: ignore[union-attr]
                result = self.run_tool(fn.name, fn.arguments)
                messages.append(
                    {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
                )
        status = report.get("status", "stalled")
        if status == "done":
            self.outputs[task.id] = str(report["output"][OUTPUTS[task.id]])
            return
        text = f"{task.id} ({task.tool}) {status}: {report.get('error', 'no report')}"
        if status == "dropped":
            raise Rerun(text)
        if status == "revise":
            raise Replan(text)
        raise OrderFailed(text)

    def work(self) -> None:
        setback = ""
        for revision in range(1, MAX_PLANS + 1):
            tasks = self.plan(revision, setback)
            setback = ""
            for task in tasks:
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    try:
                        self.attempt(task, revision, attempt)
                        break
                    except Rerun as e:
                        if attempt == MAX_ATTEMPTS:
                            raise OrderFailed(str(e)) from e
                    except Replan as e:
                        setback = str(e)
                        break
                if setback:
                    break
            if not setback:
                return
        raise OrderFailed(f"no plan holds after {MAX_PLANS} revisions: {setback}")

    def check(self, root: Any) -> None:
        """The app's own checks once the customer is mailed: the courier's day against the
        order's delivery day, then the courier's tracking up to the delivery."""
        courier = self.world.couriers[-1]
        if courier["day"] != ORDER["day"]:
            raise OrderFailed(
                f"courier {courier['booking']} delivers on {courier['day']}; order "
                f"{ORDER['order']} is due with {ORDER['customer']} on {ORDER['day']} for the "
                f"wedding on {ORDER['wedding']}"
            )
        places = ("Mayfair dispatch", "Park Lane", "Hammersmith", "Chiswick")
        for read, place in enumerate(places, 1):
            if self.label.scenario == "external_flood" and read > int(self.label.params["reads"]):
                raise OrderFailed(
                    f"the Thames floods the wedding venue's marquee lawn near {place}; "
                    f"{ORDER['customer']} postpones the wedding and cancels the delivery"
                )
            root.add_event("courier tracking", {"read": read, "at": place})

    def run(self) -> str:
        """The order under the app's root span; the OTel trace id."""
        with self.tracer.start_as_current_span(
            f"wedding suit order {ORDER['order']}",
            record_exception=False,
            set_status_on_exception=False,
        ) as root:
            root.set_attribute("tailor.order", ORDER["order"])
            root.set_attribute("tailor.customer", ORDER["customer"])
            trace_id = format(root.get_span_context().trace_id, "032x")
            try:
                self.work()
                self.check(root)
            except OrderFailed as exc:
                root.record_exception(exc)
                root.set_status(Status(StatusCode.ERROR, str(exc)))
        return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the tailor scenarios with OpenInference's OpenAI instrumentor and the app's root
    spans on ``provider``; run name -> trace id. The instrumentor is uninstrumented when the
    play returns."""
    if not labels:
        return {}
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer(TRACER)
    try:
        with ModelServer(respond=respond) as server:
            client = OpenAI(
                base_url=server.base_url("corpus-tailor"), api_key="test", max_retries=0
            )
            return {label.run: SuitOrder(label, client, tracer).run() for label in labels}
    finally:
        instrumentor.uninstrument()

"""An oak-barrel cooperage filling a distillery's cask order with an **Agno** ``Team``, traced by
**MLflow's Agno autologging** (``mlflow.agno.autolog()`` from the lightweight ``mlflow-tracing``
SDK) and the app's own ``mlflow.start_span`` spans: a team leader in Agno's default coordinate
mode delegating to two member ``Agent``\\ s (a ``planner`` and a ``cooper`` with plain-function
tools), all on Agno's ``OpenAIChat`` against a scripted model on the conformance suite's fake
OpenAI server (``ModelServer(respond=...)``). No planscope code.

Sealed-74 split only (see README.md). The task: a distillery's purchase order for new oak casks;
select a lot of staves of the forest and grain the distillery specifies from the timber yard's
stock list (read page by page), toast the barrel in a toasting-kiln slot, have the barrel
pressure-tested for leaks (a test, polled), book the haulier's pickup for the delivery day,
charge the order to the distillery's account, tell the distillery's cask manager. The
cooperage's data team runs its other pipelines on Nextflow, so it asks the model for the plan
as a Nextflow DSL2 workflow:

* the app opens one MLflow ``AGENT`` span per order (``cask order {po}``); a failed order raises
  inside it, so MLflow records the exception and the ``ERROR`` status;
* one team run for the plan (under the app's ``plan revision {n}`` span): the leader delegates
  the brief to the ``planner`` member, which answers a **Nextflow DSL2 workflow**: an
  ``include { ... } from './modules/cooperage'`` line and a ``workflow { ... }`` block, each
  line a process call ``staves = SELECT_STAVES(forest: 'Troncais', grain: 'tight', count: 32)``
  after a ``// step n: purpose`` comment, a later call taking an earlier output as
  ``staves.out.lot_id``; the leader answers the member's workflow. The app reads the block with
  a small hand-written reader (no Nextflow) and runs each call as one step, the process name in
  lower case being the tool. Asked again after a setback, the planner answers a new workflow
  whose ``params.<step>_<field> = '...'`` lines hold the settled outputs, referred to as
  ``params.<step>_<field>``, and whose calls are the steps still to do, their numbers kept;
* one team run per step attempt (under the app's ``process {step} attempt {n}`` span): the
  leader delegates the call, its references filled in, to the ``cooper`` member, which calls the
  cooperage's services and answers a **task record** (``status: COMPLETED|FAILED``, ``exit:``,
  ``output: {json}`` or ``error: ...``), which the leader answers back;
* the services fail with **Nextflow-style exit statuses** (:class:`ProcessFailed`, ``exit status
  <n>: text``), which Agno hands the model as the tool's result: ``75`` (tempfail, ``retry after
  HH:MM``: the cooper calls again ``after`` that time, in the same run), ``143`` (the task was
  killed: the app runs the process again, as ``errorStrategy 'retry'`` with up to 8 attempts),
  ``65`` with ``(use key=value)`` (a new workflow, up to 5), ``77`` (final); a leak test still
  running after 12 reads is reported as exit ``124``, final;
* after the last step the app checks the pickup against the purchase order (``check pickup
  against order``, a ``GUARDRAIL`` span) and watches the pickup (``watch pickup {booking}``,
  tracking reads as span events).

MLflow's tracer provider is the museum agent's (one per process, OTLP to a loopback sink, a
relay to the play's provider); MLflow's Agno autologging, which for Agno 2 and later drives
OpenInference's Agno instrumentor on MLflow's own tracer (its spans parented under the active
MLflow span), is turned off when the play returns. The planner trusts the head cooper's notes
over the purchase order: the scenario's wrong value comes from a note. This source records no
context data (no starvation label).
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mlflow
import mlflow.agno
from agno.agent import Agent
from agno.models.openai import OpenAIChat
from agno.team import Team
from mlflow.entities import SpanEvent, SpanType
from opentelemetry.sdk.trace import TracerProvider

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .museum import _mlflow_provider, _Relay

ORDER: dict[str, Any] = {
    "po": "PO-GA-4471",
    "distillery": "Glen Arrach Distillery",
    "forest": "Troncais",
    "grain": "tight",
    "staves": 32,
    "kiln": "kiln 2",
    "toast": "medium_plus",
    "kpa": 48,
    "depot": "Craigellachie depot",
    "day": "2027-05-14",
    "account": "GA-61840",
    "amount": 1840.0,
    "contact": "casks@glenarrach.example",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_READS = 12
"""Leak-test reads in one cooper run before the cooper reports the test stalled."""
PLANNER = "Objective: "
"""How the brief opens (a step's task never does)."""
OUTPUTS = {
    "staves": "lot_id",
    "toast": "charge_id",
    "leak": "certificate",
    "pickup": "booking",
    "payment": "payment_id",
    "notice": "message_id",
}
"""Each step's output field, in the order the steps run."""


class ProcessFailed(RuntimeError):
    """A service's failure, ``exit status <n>: text``."""

    def __init__(self, status: int, text: str):
        super().__init__(f"exit status {status}: {text}")


# --- the plan: a Nextflow DSL2 workflow ------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """An argument taken from an earlier step: ``staves.out.lot_id`` or ``params.staves_lot_id``."""

    text: str


@dataclass
class Call:
    """One process call of the workflow block: a step of the plan."""

    number: int
    purpose: str
    step: str
    process: str
    args: dict[str, Any]

    @property
    def tool(self) -> str:
        return self.process.lower()


@dataclass
class Workflow:
    params: dict[str, str]
    """``params.<name> = '...'`` lines: the settled outputs."""
    calls: list[Call]


_CALL = re.compile(r"^(\w+)\s*=\s*([A-Z][A-Z0-9_]*)\s*\((.*)\)\s*$")
_ARG = re.compile(
    r"\s*(\w+)\s*:\s*(?:'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"|(-?\d+(?:\.\d+)?)"
    r"|(\w+\.out\.\w+|params\.\w+))\s*(?:,|$)"
)


def _args(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    pos = 0
    while pos < len(text.strip()):
        m = _ARG.match(text, pos)
        if not m:
            raise ValueError(f"cannot read the arguments at {text[pos : pos + 30]!r}")
        key, single, double, number, ref = m.groups()
        if ref is not None:
            out[key] = Ref(ref)
        elif number is not None:
            out[key] = float(number) if "." in number else int(number)
        else:
            out[key] = single if single is not None else double
        pos = m.end()
    return out


def read_workflow(text: str) -> Workflow:
    """The plan's steps, from the planner's Nextflow script: ``params.*`` lines, then the calls
    of the ``workflow { ... }`` block (``// step n: purpose`` comments name them).

    >>> w = read_workflow('''params.staves_lot_id = 'SL-TRO-1'
    ... workflow {
    ...     // step 2: toast the barrel
    ...     toast = TOAST_BARREL(lot: params.staves_lot_id, level: 'medium_plus', hours: 2.5)
    ... }''')
    >>> w.params, w.calls[0].number, w.calls[0].tool, w.calls[0].args
    ({'staves_lot_id': 'SL-TRO-1'}, 2, 'toast_barrel', \
{'lot': Ref(text='params.staves_lot_id'), 'level': 'medium_plus', 'hours': 2.5})
    """
    params = dict(re.findall(r"^\s*params\.(\w+)\s*=\s*'([^']*)'\s*$", text, re.MULTILINE))
    block = re.search(r"^\s*workflow\s*\{\s*$(.*?)^\s*\}\s*$", text, re.MULTILINE | re.DOTALL)
    if not block:
        raise ValueError("no workflow block in the plan")
    calls: list[Call] = []
    number, purpose = 0, ""
    for line in block.group(1).splitlines():
        line = line.strip()
        head = re.match(r"//\s*step (\d+):\s*(.*)", line)
        if head:
            number, purpose = int(head.group(1)), head.group(2).strip()
            continue
        call = _CALL.match(line)
        if call:
            number = number if purpose else len(calls) + 1
            calls.append(Call(number, purpose, call[1], call[2], _args(call[3])))
            purpose = ""
    return Workflow(params, calls)


def _nf(value: Any) -> str:
    if isinstance(value, Ref):
        return value.text
    if isinstance(value, str):
        return "'" + value.replace("'", "\\'") + "'"
    return json.dumps(value)


def write_workflow(po: str, revision: int, params: dict[str, str], calls: list[Call]) -> str:
    """The Nextflow script the scripted planner answers."""
    lines = [
        "#!/usr/bin/env nextflow",
        "nextflow.enable.dsl = 2",
        "",
        f"// cask order {po}, revision {revision}",
        *(f"params.{k} = {_nf(v)}" for k, v in params.items()),
        "include { " + "; ".join(c.process for c in calls) + " } from './modules/cooperage'",
        "",
        "workflow {",
    ]
    for c in calls:
        args = ", ".join(f"{k}: {_nf(v)}" for k, v in c.args.items())
        lines += [f"    // step {c.number}: {c.purpose}", f"    {c.step} = {c.process}({args})"]
    return "\n".join([*lines, "}"])


# --- the scripted model -------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _plan(brief: str) -> str:
    """The planner's workflow: the purchase order's facts, the head cooper's notes trusted over
    them; after a setback with a ``use`` value that value; the settled outputs as ``params``,
    the settled steps left out, the step numbers kept."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Purchase order"]) | json.loads(lines.get("Head cooper's notes", "{}"))
    settled: dict[str, str] = json.loads(lines.get("Settled", "{}"))
    revision = int(lines.get("Revision", "1"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)

    def out(step: str) -> Ref:
        name = f"{step}_{OUTPUTS[step]}"
        return Ref(f"params.{name}" if step in settled else f"{step}.out.{OUTPUTS[step]}")

    calls = [
        Call(1, f"select {facts['grain']}-grain {facts['forest']} staves from the timber yard",
             "staves", "SELECT_STAVES",
             {"forest": facts["forest"], "grain": facts["grain"], "count": facts["staves"]}),
        Call(2, f"toast the barrel {facts['toast']} in {facts['kiln']}", "toast",
             "TOAST_BARREL", {"lot": out("staves"), "level": facts["toast"],
                              "kiln": facts["kiln"]}),
        Call(3, "pressure-test the barrel for leaks", "leak", "LEAK_TEST",
             {"lot": out("staves"), "charge": out("toast"), "kpa": facts["kpa"]}),
        Call(4, f"book the haulier's pickup for {facts['day']}", "pickup", "BOOK_PICKUP",
             {"certificate": out("leak"), "depot": facts["depot"], "day": facts["day"]}),
        Call(5, f"charge {facts['po']} to the distillery's account", "payment", "CHARGE_ORDER",
             {"po": facts["po"], "account": facts["account"], "amount": facts["amount"],
              "pickup": out("pickup")}),
        Call(6, "tell the distillery's cask manager", "notice", "NOTIFY_DISTILLERY",
             {"to": facts["contact"], "pickup": out("pickup"), "day": facts["day"]}),
    ]  # fmt: skip
    params = {f"{s}_{OUTPUTS[s]}": v for s, v in settled.items()}
    todo = [c for c in calls if c.step not in settled]
    return write_workflow(facts["po"], revision, params, todo)


def _record(status: str, exit: int, **fields: Any) -> str:
    """The cooper's task record."""
    lines = [f"status: {status}", f"exit: {exit}"]
    lines += [f"{k}: {json.dumps(v) if k == 'output' else v}" for k, v in fields.items()]
    return "\n".join(lines)


def _cooper(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The cooper's turn: make the call, call again ``after`` a tempfail, follow ``next_page``,
    read a running leak test, answer the task record."""
    found = re.search(r"^Call: (\w+) (.*)$", task, re.MULTILINE)
    assert found, task
    name, args = found.group(1), json.loads(found.group(2))
    turn = len(messages)
    calls: list[tuple[str, dict[str, Any], str]] = []
    pending: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            pending[c["id"]] = (fn["name"], json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool" and m.get("tool_call_id") in pending:
            calls.append((*pending.pop(m["tool_call_id"]), _text(m.get("content"))))
    if not calls:
        return _call(name, args, turn)
    last, called, came_back = calls[-1]
    failed = re.match(r"exit status (\d+): (.*)", came_back, re.DOTALL)
    if failed:
        status, text = int(failed.group(1)), failed.group(2).strip()
        after = re.search(r"retry after (\d\d:\d\d)", text)
        if status == 75 and after:
            return _call(last, called | {"after": after.group(1)}, turn)
        return _answer(_record("FAILED", status, error=text))
    seen = json.loads(came_back)
    if seen.get("next_page"):
        return _call(last, called | {"page": seen["next_page"]}, turn)
    if seen.get("state") == "RUNNING":
        reads = sum(c[0] == "leak_test_status" for c in calls)
        if reads >= MAX_READS:
            note = f"leak test {seen['test_id']} still RUNNING after {reads} reads"
            return _answer(_record("FAILED", 124, error=note))
        return _call("leak_test_status", {"test_id": seen["test_id"]}, turn)
    return _answer(_record("COMPLETED", 0, output=seen))


def _leader(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The team leader: delegate the brief to the planner and a step to the cooper, then answer
    the member's reply as it came."""
    last = messages[-1]
    if last.get("role") == "tool":
        return _answer(_text(last.get("content")))
    member = "planner" if task.startswith(PLANNER) else "cooper"
    return _call("delegate_task_to_member", {"member_id": member, "task": task}, len(messages))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the leader's delegation or
    answer, the planner's workflow, or the cooper's next turn.

    >>> brief = "Objective: fill the order.\\nPurchase order: " + json.dumps(ORDER)
    >>> msg = respond({"messages": [{"role": "user", "content": brief}]})
    >>> text = msg["choices"][0]["message"]["content"]
    >>> [line.strip() for line in text.splitlines() if line.strip().startswith("leak =")]
    ['leak = LEAK_TEST(lot: staves.out.lot_id, charge: toast.out.charge_id, kpa: 48)']
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    tools = {str((t.get("function") or {}).get("name")) for t in body.get("tools") or []}
    if "delegate_task_to_member" in tools:
        return completion(body, _leader(messages, task))
    if task.startswith(PLANNER):
        return completion(body, _answer(_plan(task)))
    return completion(body, _cooper(messages, task))


# --- the cooperage's services -----------------------------------------------------------------
@dataclass
class World:
    """The timber yard, toasting kilns, test bay, haulier, distillery ledger and mail of one
    order."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    lots: dict[str, str] = field(default_factory=dict)
    """Stave lot -> its forest."""
    tests: dict[str, int] = field(default_factory=dict)
    pickups: list[dict[str, str]] = field(default_factory=list)
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
        status = int(f["exit"])
        if status == 75:
            raise ProcessFailed(75, f"{f['text']}; retry after {f['hint']}")
        if status == 65:
            raise ProcessFailed(65, f"{f['text']} (use {f['hint']})")
        raise ProcessFailed(status, f["text"])


def make_tools(world: World) -> list[Callable[..., str]]:
    """The cooperage's services, bound to one order's world."""
    seed = world.label.seed

    def select_staves(forest: str, grain: str, count: int, page: int = 1) -> str:
        """Stave lots of a forest's oak and grain with at least a number of staves in the timber
        yard's stock list, a page at a time.

        Args:
            forest: the forest the oak comes from
            grain: the grain (tight, medium, wide)
            count: the staves needed
            page: the stock list's page
        """
        world.fault("select_staves")
        code = forest[:3].upper()
        if page < int(world.params.get("pages", 1)):
            short = [{"lot_id": f"SL-{code}-{page}{n}", "staves": count // (n + 2)} for n in (1, 2)]
            return json.dumps({"lots": short, "next_page": page + 1})
        lot = f"SL-{code}-{seed}"
        world.lots[lot] = forest
        return json.dumps({"lot_id": lot, "forest": forest, "grain": grain, "staves": count + 4})

    def toast_barrel(lot: str, level: str, kiln: str, after: str = "") -> str:
        """Book a toasting-kiln slot and toast the barrel raised from a stave lot.

        Args:
            lot: the stave lot
            level: the toast level (light, medium, medium_plus, heavy)
            kiln: the toasting kiln
            after: call again after this time (HH:MM), when told to retry
        """
        world.fault("toast_barrel")
        moved = world.params.get("kiln_to")
        if moved and kiln == ORDER["kiln"]:
            raise ProcessFailed(65, f"{kiln} is down for relining this week (use kiln={moved})")
        forest = world.lots.get(lot, "")
        if forest != ORDER["forest"]:
            raise ProcessFailed(
                77,
                f"{kiln}'s charge for {ORDER['po']} runs the distillery's {ORDER['forest']} "
                f"programme; lot {lot} is {forest or 'unknown'} oak",
            )
        charge = f"TC-{seed}-{kiln[-1]}"
        return json.dumps(
            {"charge_id": charge, "kiln": kiln, "level": level, "out_at": after or "15:40"}
        )

    def leak_test(lot: str, charge: str, kpa: int) -> str:
        """Start a pressure test of a toasted barrel for leaks.

        Args:
            lot: the stave lot
            charge: the kiln charge the barrel was toasted in
            kpa: the test pressure
        """
        world.fault("leak_test")
        test = f"LT-{seed}-{len(world.tests) + 1}"
        world.tests[test] = 0
        if world.params.get("stuck") or "polls" in world.params:
            return json.dumps({"test_id": test, "state": "RUNNING", "kpa": kpa})
        return json.dumps({"test_id": test, "state": "PASSED", "certificate": f"PT-{test[3:]}"})

    def leak_test_status(test_id: str) -> str:
        """A pressure test's state; its certificate once passed.

        Args:
            test_id: the pressure test
        """
        world.tests[test_id] += 1
        if world.params.get("stuck") or world.tests[test_id] < int(world.params.get("polls", 0)):
            return json.dumps({"test_id": test_id, "state": "RUNNING"})
        return json.dumps(
            {"test_id": test_id, "state": "PASSED", "certificate": f"PT-{test_id[3:]}"}
        )

    def book_pickup(certificate: str, depot: str, day: str, after: str = "") -> str:
        """Book a haulier's pickup of the tested barrel from a depot's round on a day.

        Args:
            certificate: the barrel's pressure-test certificate
            depot: the haulier's depot
            day: the pickup day (YYYY-MM-DD)
            after: call again after this time (HH:MM), when told to retry
        """
        world.fault("book_pickup")
        if depot != ORDER["depot"] and depot not in world.params.get("depots", ()):
            raise ProcessFailed(77, f"no haulier runs a cask round from {depot}")
        booking = f"HP-{seed}-{len(world.pickups) + 1}"
        world.pickups.append({"booking": booking, "day": day, "depot": depot})
        return json.dumps(
            {"booking": booking, "day": day, "depot": depot, "loads": after or "07:00"}
        )

    def charge_order(po: str, account: str, amount: float, pickup: str, after: str = "") -> str:
        """Charge a purchase order to the distillery's account.

        Args:
            po: the distillery's purchase order
            account: the distillery's account with the cooperage
            amount: the amount in GBP
            pickup: the pickup booking the charge is for
            after: call again after this time (HH:MM), when told to retry
        """
        world.fault("charge_order")
        if account != ORDER["account"]:
            raise ProcessFailed(77, f"the distillery's ledger holds no account {account}")
        world.payments.append(pickup)
        return json.dumps({"payment_id": f"PAY-{seed}-{len(world.payments)}", "po": po})

    def notify_distillery(to: str, pickup: str, day: str, after: str = "") -> str:
        """Mail the distillery's cask manager the pickup and its day.

        Args:
            to: the cask manager's address
            pickup: the pickup booking
            day: the pickup day
            after: call again after this time (HH:MM), when told to retry
        """
        world.fault("notify_distillery")
        return json.dumps({"message_id": f"MSG-{pickup}-{day[-2:]}", "to": to})

    return [
        select_staves,
        toast_barrel,
        leak_test,
        leak_test_status,
        book_pickup,
        charge_order,
        notify_distillery,
    ]


# --- the app --------------------------------------------------------------------------------
class OrderFailed(Exception):
    """The casks were not shipped to the distillery (the reason is the message)."""


class Rerun(Exception):
    """The cooper's task was killed (exit 143): run the process again."""


class Replan(Exception):
    """The cooper's task failed on the plan's data (exit 65): ask for a new workflow."""


class CaskOrder:
    """One purchase order, from the brief to the watched pickup."""

    def __init__(self, label: Label, model: OpenAIChat):
        self.label = label
        self.world = World(label)
        planner = Agent(
            name="planner",
            id="planner",
            role="Writes the order's plan as a Nextflow DSL2 workflow.",
            model=model,
            instructions="Answer the order's plan as a Nextflow DSL2 workflow block.",
            telemetry=False,
        )
        cooper = Agent(
            name="cooper",
            id="cooper",
            role="Runs one process of the workflow with the cooperage's services.",
            model=model,
            tools=make_tools(self.world),
            instructions="Run the one process call you are given, then answer its task record.",
            tool_call_limit=24,
            telemetry=False,
        )
        self.team = Team(
            name="cooperage",
            members=[planner, cooper],
            model=model,
            instructions="Hand the plan to the planner and each process to the cooper.",
            telemetry=False,
        )
        self.outputs: dict[str, str] = {}
        """Settled step -> its output."""
        self.params: dict[str, str] = {}

    def brief(self, revision: int, setback: str) -> str:
        notes = {
            k: self.label.params[k] for k in ("forest", "day", "account") if k in self.label.params
        }
        lines = [
            f"{PLANNER}make and ship the casks on purchase order {ORDER['po']}.",
            f"Purchase order: {json.dumps(ORDER)}",
        ]
        if notes:
            lines.append(f"Head cooper's notes: {json.dumps(notes)}")
        if revision > 1:
            lines += [
                f"Revision: {revision}",
                f"Settled: {json.dumps(self.outputs)}",
                f"Setback: {setback}",
            ]
        return "\n".join(lines)

    def ask(self, message: str) -> str:
        """One team run; its answer.

        OpenInference's Agno wrapper, which MLflow's Agno autologging drives, leaves the team
        run's context attached when ``Team.run`` returns (its team-context token is detached after
        the span's own), so the next span would be parented under a finished team run: the run
        goes in a copy of the context.
        """
        return str(contextvars.copy_context().run(self.team.run, message).content)

    def plan(self, revision: int, setback: str) -> Workflow:
        with mlflow.start_span(name=f"plan revision {revision}", span_type=SpanType.CHAIN) as span:
            brief = self.brief(revision, setback)
            span.set_inputs({"brief": brief})
            script = self.ask(brief)
            span.set_outputs({"workflow": script})
            workflow = read_workflow(script)
            span.set_attribute("cooperage.plan.steps", [c.step for c in workflow.calls])
        self.params |= workflow.params
        return workflow

    def value(self, arg: Any) -> Any:
        """An argument with its reference filled in."""
        if not isinstance(arg, Ref):
            return arg
        if arg.text.startswith("params."):
            return self.params[arg.text.removeprefix("params.")]
        return self.outputs[arg.text.partition(".")[0]]

    def attempt(self, call: Call, attempt: int) -> None:
        """One team run of a process call, its references filled in."""
        args = {k: self.value(v) for k, v in call.args.items()}
        task = (
            f"Process {call.number}: {call.step} = {call.process} (attempt {attempt})\n"
            f"Purpose: {call.purpose}\n"
            f"Call: {call.tool} {json.dumps(args)}"
        )
        with mlflow.start_span(
            name=f"process {call.step} attempt {attempt}", span_type=SpanType.CHAIN
        ) as span:
            span.set_inputs({"task": task})
            record = dict(re.findall(r"^(\w+): (.*)$", self.ask(task), re.MULTILINE))
            span.set_outputs(record)
            if record.get("status") == "COMPLETED":
                self.outputs[call.step] = str(json.loads(record["output"])[OUTPUTS[call.step]])
                return
            span.set_status("ERROR")
            status = int(record.get("exit", "1"))
            span.set_attribute("cooperage.exit_status", status)
        text = f"{call.step} ({call.process}) exit status {status}: {record.get('error', '')}"
        if status == 143:
            raise Rerun(text)
        if status == 65:
            raise Replan(text)
        raise OrderFailed(text)

    def work(self) -> None:
        setback = ""
        for revision in range(1, MAX_PLANS + 1):
            workflow = self.plan(revision, setback)
            setback = ""
            for call in workflow.calls:
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    try:
                        self.attempt(call, attempt)
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
        raise OrderFailed(f"no workflow holds after {MAX_PLANS}: {setback}")

    def check(self) -> None:
        """The app's own checks once the distillery is told: the pickup against the purchase
        order, then the pickup's tracking up to the delivery."""
        pickup = self.world.pickups[-1]
        with mlflow.start_span(
            name="check pickup against order", span_type=SpanType.GUARDRAIL
        ) as span:
            span.set_inputs({"pickup": pickup["booking"], "order_day": ORDER["day"]})
            span.set_outputs({"pickup_day": pickup["day"]})
            if pickup["day"] != ORDER["day"]:
                raise OrderFailed(
                    f"pickup {pickup['booking']} collects on {pickup['day']}; purchase order "
                    f"{ORDER['po']} is due at the distillery on {ORDER['day']}"
                )
        with mlflow.start_span(name=f"watch pickup {pickup['booking']}") as span:
            span.set_inputs({"pickup": pickup["booking"], "depot": pickup["depot"]})
            for read, place in enumerate(("yard gate", "Keith", "Huntly", "Rothes"), 1):
                if self.label.scenario == "external_storm" and read > int(
                    self.label.params["reads"]
                ):
                    raise OrderFailed(
                        f"a snowstorm closes the A95 near {place}; the haulier turns back and "
                        f"{ORDER['distillery']} postpones the delivery"
                    )
                span.add_event(
                    # SpanEvent is a concrete dataclass; mypy reads its base's abstract from_proto
                    SpanEvent("tracking", attributes={"read": read, "at": place})  # type: ignore[abstract]
                )
            span.set_outputs({"state": "delivered"})

    def run(self) -> str:
        try:
            with mlflow.start_span(
                name=f"cask order {ORDER['po']}", span_type=SpanType.AGENT
            ) as root:
                # MLflow's trace id is "tr-" and the OpenTelemetry trace id in hex
                trace_id = root.trace_id.removeprefix("tr-")
                root.set_inputs(ORDER | {"run": self.label.run})
                self.work()
                self.check()
                root.set_outputs({"outcome": "delivered", "outputs": self.outputs})
        except OrderFailed:  # MLflow recorded the exception and the root's ERROR status
            pass
        return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the cooperage scenarios under MLflow's Agno autologging, its spans relayed to
    ``provider``; autologging is turned off when the play returns."""
    if not labels:
        return {}
    _mlflow_provider()
    quiet = logging.getLogger("mlflow")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    agno_log = logging.getLogger("agno")
    _Relay.target = provider
    mlflow.agno.autolog(silent=True)
    try:
        with ModelServer(respond=respond) as server:
            # Agno logs every failing tool call with its traceback (the spans carry them);
            # after uvicorn's logging set-up, which re-enables existing loggers
            agno_log.disabled = True
            model = OpenAIChat(
                id=MODEL, base_url=server.base_url("corpus-cooperage"), api_key="test"
            )
            return {label.run: CaskOrder(label, model).run() for label in labels}
    finally:
        mlflow.agno.autolog(disable=True, silent=True)
        agno_log.disabled = False
        _Relay.target = None
        quiet.setLevel(level)

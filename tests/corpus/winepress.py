"""A winery's crush desk booking a grower's harvest intake with **Pydantic AI**, traced by
**MLflow's Pydantic AI autologging** (``mlflow.pydantic_ai.autolog()`` from the lightweight
``mlflow-tracing`` SDK) and the app's own ``mlflow.start_span`` spans: a ``planner`` ``Agent``
with a structured ``output_type`` (its ``bpmn`` field holds the plan) and a ``cellarhand``
``Agent`` whose tools are plain ``@agent.tool_plain`` functions, both on pydantic-ai's
``OpenAIChatModel`` against a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)``). No planscope code.

Sealed-75 split only (see README.md). The task: a grower's harvest intake; pick the grower's
vineyard block of the variety booked from the block register (read page by page), reserve a
press slot, run a sugar (Brix) test on the must sample (a test, polled), book the truck from
the vineyard's gate for the pick day, charge the grower's account, mail the cellar master. The
winery's operations run on a Camunda/Zeebe engine, so the app asks the model for the plan as a
**BPMN 2.0 XML process**:

* the app opens one MLflow ``AGENT`` span per intake (``harvest intake {intake}``); a failed
  intake raises inside it, so MLflow records the exception and the ``ERROR`` status;
* one planner run for the plan (under the app's ``plan revision {n}`` span): the planner's
  structured output (``ProcessPlan.bpmn``) is a ``<bpmn:definitions>`` document whose
  ``<bpmn:process>`` holds a start event, one ``<bpmn:serviceTask id="block" name="Step 1: ...">``
  per step (its ``<zeebe:taskDefinition type="select_block"/>`` names the tool, its
  ``<zeebe:input source="=..." target="..."/>`` lines the inputs as FEEL: string and number
  literals, or an earlier step's output as ``=block.block_id``), an end event and
  ``<bpmn:sequenceFlow sourceRef=... targetRef=...>`` for the order. The app reads it with a
  small hand-written reader (``xml.etree``, no engine). Asked again after a setback, the planner
  answers a new process whose process-level ``<zeebe:property name="block.block_id" value=...>``
  lines hold the settled outputs and whose service tasks are the steps still to do, their
  numbers kept;
* one cellarhand run per step attempt (under the app's ``task {step} attempt {n}`` span): the
  cellarhand calls the winery's services and answers a **job record** (``job: COMPLETED|FAILED``,
  ``code:``, ``output: {json}`` or ``error: ...``);
* the services fail with **Zeebe-style job errors** (:class:`JobError`, ``CODE: text``), which
  the tool hands the model as a ``ModelRetry``: ``BUSY`` (``retry at HH:MM``: the cellarhand calls
  again ``after`` that time, in the same run), ``JOB_TIMEOUT`` (the app runs the task again, up
  to 8 attempts), ``BPMN_ERROR`` with ``(use key=value)`` (a new process, up to 5), ``INCIDENT``
  (final); a Brix test still sampling after 12 reads is reported as an ``INCIDENT``;
* after the last step the app checks the truck against the intake (``check truck against
  intake``, a ``GUARDRAIL`` span) and watches the truck (``watch truck {booking}``, tracking
  reads as span events).

MLflow's tracer provider is the museum agent's (one per process, OTLP to a loopback sink, a
relay to the play's provider); MLflow's Pydantic AI autologging (which patches ``Agent``'s
``__init__``, ``run_sync`` and pydantic-ai's ``Instrumentation`` capability) is turned off when
the play returns. The planner trusts the grower's notes over the intake booking: the scenario's
wrong value comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

import mlflow
import mlflow.pydantic_ai
from mlflow.entities import SpanEvent, SpanType
from opentelemetry.sdk.trace import TracerProvider
from pydantic import BaseModel, Field
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .museum import _mlflow_provider, _Relay

INTAKE: dict[str, Any] = {
    "intake": "CR-2027-0917",
    "grower": "Hollis Ridge Vineyards",
    "variety": "Pinot Noir",
    "tonnes": 6.5,
    "press": "press 2",
    "program": "whole_cluster",
    "brix": 23.5,
    "gate": "Hollis Ridge north gate",
    "day": "2027-09-17",
    "account": "HR-40217",
    "amount": 2860.0,
    "contact": "cellar@winepress.example",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_READS = 12
"""Brix-test reads in one cellarhand run before the cellarhand reports the test stalled."""
PLANNER = "Objective: "
"""How the brief opens (a step's task never does)."""
OUTPUTS = {
    "block": "block_id",
    "press": "slot_id",
    "brix": "reading_id",
    "truck": "booking",
    "charge": "payment_id",
    "notice": "message_id",
}
"""Each step's output field, in the order the steps run."""
NS = {
    "bpmn": "http://www.omg.org/spec/BPMN/20100524/MODEL",
    "zeebe": "http://camunda.org/schema/zeebe/1.0",
}
for _prefix, _uri in NS.items():
    ET.register_namespace(_prefix, _uri)


class JobError(RuntimeError):
    """A service's failure, ``CODE: text``."""

    def __init__(self, code: str, text: str):
        super().__init__(f"{code}: {text}")


# --- the plan: a BPMN 2.0 process ---------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """An input taken from an earlier step: the FEEL path ``block.block_id``."""

    text: str


@dataclass
class Task:
    """One service task of the process: a step of the plan."""

    number: int
    purpose: str
    step: str
    tool: str
    args: dict[str, Any]


@dataclass
class Process:
    settled: dict[str, str]
    """Process-level ``zeebe:property`` lines: the settled outputs, by FEEL path."""
    tasks: list[Task]


def _q(prefix: str, tag: str) -> str:
    return f"{{{NS[prefix]}}}{tag}"


def _feel(source: str) -> Any:
    """A ``zeebe:input`` source: ``="text"``, ``=12.5`` or ``=step.field``."""
    expr = source.removeprefix("=").strip()
    if expr.startswith('"'):
        return json.loads(expr)
    if re.fullmatch(r"-?\d+", expr):
        return int(expr)
    if re.fullmatch(r"-?\d+\.\d+", expr):
        return float(expr)
    if re.fullmatch(r"[a-z_]\w*\.\w+", expr):
        return Ref(expr)
    raise ValueError(f"cannot read the FEEL expression {source!r}")


def read_process(text: str) -> Process:
    """The plan's steps, from the planner's BPMN XML: the settled properties, then the service
    tasks in the order the sequence flows take from the start event.

    >>> p = read_process(write_process("CR-1", 2, {"block.block_id": "VB-1"}, [Task(2,
    ...     "reserve the press", "press", "reserve_press",
    ...     {"block": Ref("block.block_id"), "press": "press 2", "tonnes": 6.5})]))
    >>> p.settled, p.tasks[0].number, p.tasks[0].tool, p.tasks[0].args
    ({'block.block_id': 'VB-1'}, 2, 'reserve_press', \
{'block': Ref(text='block.block_id'), 'press': 'press 2', 'tonnes': 6.5})
    """
    root = ET.fromstring(text)
    process = root if root.tag == _q("bpmn", "process") else root.find("bpmn:process", NS)
    if process is None:
        raise ValueError("no bpmn:process in the plan")
    settled = {
        str(p.get("name")): str(p.get("value"))
        for p in process.findall("bpmn:extensionElements/zeebe:properties/zeebe:property", NS)
    }
    tasks = {str(t.get("id")): t for t in process.findall("bpmn:serviceTask", NS)}
    flows = {
        str(f.get("sourceRef")): str(f.get("targetRef"))
        for f in process.findall("bpmn:sequenceFlow", NS)
    }
    start = process.find("bpmn:startEvent", NS)
    if start is None:
        raise ValueError("no start event in the process")
    out: list[Task] = []
    node = flows.get(str(start.get("id")))
    while node in tasks:
        t = tasks[node]
        head = re.match(r"Step (\d+):\s*(.*)", str(t.get("name") or ""))
        number, purpose = (int(head[1]), head[2]) if head else (len(out) + 1, str(t.get("name")))
        kind = t.find("bpmn:extensionElements/zeebe:taskDefinition", NS)
        if kind is None:
            raise ValueError(f"service task {node} names no job type")
        args = {
            str(i.get("target")): _feel(str(i.get("source")))
            for i in t.findall("bpmn:extensionElements/zeebe:ioMapping/zeebe:input", NS)
        }
        out.append(Task(number, purpose, node, str(kind.get("type")), args))
        node = flows.get(node)
    return Process(settled, out)


def _source(value: Any) -> str:
    if isinstance(value, Ref):
        return "=" + value.text
    return "=" + json.dumps(value)


def write_process(intake: str, revision: int, settled: dict[str, str], tasks: list[Task]) -> str:
    """The BPMN XML the scripted planner answers."""
    root = ET.Element(
        _q("bpmn", "definitions"),
        {"id": f"Definitions_{intake}", "targetNamespace": "http://bpmn.io/schema/bpmn"},
    )
    pid = f"intake_{intake.replace('-', '_')}_r{revision}"
    process = ET.SubElement(
        root, _q("bpmn", "process"), {"id": pid, "name": f"harvest intake {intake}",
                                      "isExecutable": "true"}
    )  # fmt: skip
    if settled:
        props = ET.SubElement(
            ET.SubElement(process, _q("bpmn", "extensionElements")), _q("zeebe", "properties")
        )
        for k, v in settled.items():
            ET.SubElement(props, _q("zeebe", "property"), {"name": k, "value": v})
    ET.SubElement(process, _q("bpmn", "startEvent"), {"id": "start", "name": "fruit booked"})
    for t in tasks:
        name = f"Step {t.number}: {t.purpose}"
        node = ET.SubElement(process, _q("bpmn", "serviceTask"), {"id": t.step, "name": name})
        ext = ET.SubElement(node, _q("bpmn", "extensionElements"))
        ET.SubElement(ext, _q("zeebe", "taskDefinition"), {"type": t.tool})
        io = ET.SubElement(ext, _q("zeebe", "ioMapping"))
        for k, v in t.args.items():
            ET.SubElement(io, _q("zeebe", "input"), {"source": _source(v), "target": k})
    ET.SubElement(process, _q("bpmn", "endEvent"), {"id": "end", "name": "fruit on the pad"})
    order = ["start", *(t.step for t in tasks), "end"]
    for n, (a, b) in enumerate(itertools.pairwise(order), 1):
        ET.SubElement(
            process, _q("bpmn", "sequenceFlow"), {"id": f"flow_{n}", "sourceRef": a, "targetRef": b}
        )  # fmt: skip
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


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
    """The planner's process: the intake's facts, the grower's notes trusted over them; after a
    setback with a ``use`` value that value; the settled outputs as properties, the settled
    steps left out, the step numbers kept."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Intake booking"]) | json.loads(lines.get("Grower's notes", "{}"))
    settled: dict[str, str] = json.loads(lines.get("Settled", "{}"))
    revision = int(lines.get("Revision", "1"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)

    def out(step: str) -> Ref:
        return Ref(f"{step}.{OUTPUTS[step]}")

    tasks = [
        Task(1, f"pick the grower's {facts['variety']} block from the block register", "block",
             "select_block", {"grower": facts["grower"], "variety": facts["variety"],
                              "tonnes": facts["tonnes"]}),
        Task(2, f"reserve a {facts['program']} slot on {facts['press']}", "press",
             "reserve_press", {"block": out("block"), "press": facts["press"],
                               "program": facts["program"]}),
        Task(3, "test the must sample's sugar (Brix)", "brix", "brix_test",
             {"block": out("block"), "slot": out("press"), "target": facts["brix"]}),
        Task(4, f"book the truck from the vineyard for {facts['day']}", "truck", "book_truck",
             {"reading": out("brix"), "gate": facts["gate"], "day": facts["day"]}),
        Task(5, f"charge intake {facts['intake']} to the grower's account", "charge",
             "charge_grower", {"intake": facts["intake"], "account": facts["account"],
                               "amount": facts["amount"], "truck": out("truck")}),
        Task(6, "mail the cellar master", "notice", "mail_cellar_master",
             {"to": facts["contact"], "truck": out("truck"), "day": facts["day"]}),
    ]  # fmt: skip
    props = {f"{s}.{OUTPUTS[s]}": v for s, v in settled.items()}
    todo = [t for t in tasks if t.step not in settled]
    return write_process(facts["intake"], revision, props, todo)


def _record(job: str, code: str, **fields: Any) -> str:
    """The cellarhand's job record."""
    lines = [f"job: {job}", f"code: {code}"]
    lines += [f"{k}: {json.dumps(v) if k == 'output' else v}" for k, v in fields.items()]
    return "\n".join(lines)


def _cellarhand(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The cellarhand's turn: make the call, call again ``after`` a BUSY, follow ``next_page``,
    read a sampling Brix test, answer the job record."""
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
    seen = json.loads(came_back) if came_back.startswith("{") else {"error": came_back}
    # pydantic-ai hands a tool's ModelRetry back as {"error": text}
    came_back = str(seen["error"]) if set(seen) == {"error"} else came_back
    failed = re.match(r"(BUSY|JOB_TIMEOUT|BPMN_ERROR|INCIDENT): (.*)", came_back, re.DOTALL)
    if failed:
        code = failed.group(1)
        text = failed.group(2).split("\n\nFix the errors")[0].strip()
        after = re.search(r"retry at (\d\d:\d\d)", text)
        if code == "BUSY" and after:
            return _call(last, called | {"after": after.group(1)}, turn)
        return _answer(_record("FAILED", code, error=text))
    if seen.get("next_page"):
        return _call(last, called | {"page": seen["next_page"]}, turn)
    if seen.get("state") == "SAMPLING":
        reads = sum(c[0] == "brix_test_status" for c in calls)
        if reads >= MAX_READS:
            note = f"Brix test {seen['test_id']} still SAMPLING after {reads} reads"
            return _answer(_record("FAILED", "INCIDENT", error=note))
        return _call("brix_test_status", {"test_id": seen["test_id"]}, turn)
    return _answer(_record("COMPLETED", "OK", output=seen))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the planner's structured
    output (a ``final_result`` call carrying the BPMN) or the cellarhand's next turn.

    >>> brief = "Objective: take the fruit in.\\nIntake booking: " + json.dumps(INTAKE)
    >>> msg = respond({"messages": [{"role": "user", "content": brief}],
    ...     "tools": [{"type": "function", "function": {"name": "final_result"}}]})
    >>> call = msg["choices"][0]["message"]["tool_calls"][0]["function"]
    >>> plan = read_process(json.loads(call["arguments"])["bpmn"])
    >>> [t.step for t in plan.tasks], plan.tasks[2].args["slot"]
    (['block', 'press', 'brix', 'truck', 'charge', 'notice'], Ref(text='press.slot_id'))
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    tools = {str((t.get("function") or {}).get("name")) for t in body.get("tools") or []}
    if task.startswith(PLANNER) and "final_result" in tools:
        return completion(body, _call("final_result", {"bpmn": _plan(task)}, len(messages)))
    return completion(body, _cellarhand(messages, task))


# --- the winery's services ------------------------------------------------------------------
@dataclass
class World:
    """The block register, press hall, lab, trucking, grower ledger and mail of one intake."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    blocks: dict[str, str] = field(default_factory=dict)
    """Vineyard block -> its variety."""
    tests: dict[str, int] = field(default_factory=dict)
    trucks: list[dict[str, str]] = field(default_factory=list)
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
        if f["code"] == "BUSY":
            raise JobError("BUSY", f"{f['text']}; retry at {f['hint']}")
        if f["code"] == "BPMN_ERROR":
            raise JobError("BPMN_ERROR", f"{f['text']} (use {f['hint']})")
        raise JobError(f["code"], f["text"])


def make_cellarhand(world: World, model: OpenAIChatModel) -> Agent[None, str]:
    """The executor agent with the winery's services as tools, bound to one intake's world. A
    service's job error goes back to the model as a ``ModelRetry`` (its text as it came)."""
    seed = world.label.seed
    cellarhand: Agent[None, str] = Agent(
        model,
        name="cellarhand",
        output_type=str,
        instructions="Run the one service task you are given, then answer its job record.",
        retries=32,
    )

    def service(name: str) -> None:
        try:
            world.fault(name)
        except JobError as e:
            raise ModelRetry(str(e)) from e

    @cellarhand.tool_plain
    def select_block(grower: str, variety: str, tonnes: float, page: int = 1) -> str:
        """Vineyard blocks of a grower's variety with at least a tonnage to pick, from the block
        register, a page at a time.

        Args:
            grower: the grower
            variety: the grape variety
            tonnes: the tonnes booked
            page: the register's page
        """
        service("select_block")
        code = re.sub(r"[^A-Z]", "", variety.title())[:2]
        if page < int(world.params.get("pages", 1)):
            short = [
                {"block_id": f"VB-{code}-{page}{n}", "tonnes": tonnes / (n + 2)} for n in (1, 2)
            ]
            return json.dumps({"blocks": short, "next_page": page + 1})
        block = f"VB-{code}-{seed}"
        world.blocks[block] = variety
        return json.dumps(
            {"block_id": block, "grower": grower, "variety": variety, "tonnes": tonnes + 0.4}
        )

    @cellarhand.tool_plain
    def reserve_press(block: str, press: str, program: str, after: str = "") -> str:
        """Reserve a press slot for a vineyard block's fruit.

        Args:
            block: the vineyard block
            press: the press
            program: the press program (whole_cluster, destemmed, saignee)
            after: call again after this time (HH:MM), when told to retry
        """
        service("reserve_press")
        moved = world.params.get("press_to")
        if moved and press == INTAKE["press"]:
            raise ModelRetry(
                f"BPMN_ERROR: {press} is down for a membrane change (use press={moved})"
            )
        variety = world.blocks.get(block, "")
        if variety != INTAKE["variety"]:
            raise ModelRetry(
                f"INCIDENT: {press}'s slot for intake {INTAKE['intake']} runs the grower's "
                f"{INTAKE['variety']} programme; block {block} is {variety or 'unknown'}"
            )
        return json.dumps(
            {"slot_id": f"PS-{seed}-{press[-1]}", "press": press, "starts": after or "05:30"}
        )

    @cellarhand.tool_plain
    def brix_test(block: str, slot: str, target: float) -> str:
        """Start a sugar (Brix) test on the block's must sample.

        Args:
            block: the vineyard block
            slot: the press slot the fruit goes to
            target: the Brix the intake booked
        """
        service("brix_test")
        test = f"BX-{seed}-{len(world.tests) + 1}"
        world.tests[test] = 0
        if world.params.get("stuck") or "polls" in world.params:
            return json.dumps({"test_id": test, "state": "SAMPLING", "target": target})
        return json.dumps({"test_id": test, "state": "READ", "reading_id": f"RD-{test[3:]}"})

    @cellarhand.tool_plain
    def brix_test_status(test_id: str) -> str:
        """A Brix test's state; its reading once read.

        Args:
            test_id: the Brix test
        """
        world.tests[test_id] += 1
        if world.params.get("stuck") or world.tests[test_id] < int(world.params.get("polls", 0)):
            return json.dumps({"test_id": test_id, "state": "SAMPLING"})
        return json.dumps({"test_id": test_id, "state": "READ", "reading_id": f"RD-{test_id[3:]}"})

    @cellarhand.tool_plain
    def book_truck(reading: str, gate: str, day: str, after: str = "") -> str:
        """Book a truck to bring the picked fruit from a vineyard gate on a day.

        Args:
            reading: the must sample's Brix reading
            gate: the vineyard gate the truck loads at
            day: the pick day (YYYY-MM-DD)
            after: call again after this time (HH:MM), when told to retry
        """
        service("book_truck")
        if gate != INTAKE["gate"] and gate not in world.params.get("gates", ()):
            raise ModelRetry(f"INCIDENT: no truck runs to {gate}")
        booking = f"TR-{seed}-{len(world.trucks) + 1}"
        world.trucks.append({"booking": booking, "day": day, "gate": gate})
        return json.dumps({"booking": booking, "day": day, "gate": gate, "loads": after or "06:00"})

    @cellarhand.tool_plain
    def charge_grower(intake: str, account: str, amount: float, truck: str, after: str = "") -> str:
        """Charge an intake's crush fee to the grower's account.

        Args:
            intake: the intake booking
            account: the grower's account with the winery
            amount: the amount in USD
            truck: the truck booking the fee covers
            after: call again after this time (HH:MM), when told to retry
        """
        service("charge_grower")
        if account != INTAKE["account"]:
            raise ModelRetry(f"INCIDENT: the grower ledger holds no account {account}")
        world.payments.append(truck)
        return json.dumps({"payment_id": f"PAY-{seed}-{len(world.payments)}", "intake": intake})

    @cellarhand.tool_plain
    def mail_cellar_master(to: str, truck: str, day: str, after: str = "") -> str:
        """Mail the cellar master the truck and its day.

        Args:
            to: the cellar master's address
            truck: the truck booking
            day: the pick day
            after: call again after this time (HH:MM), when told to retry
        """
        service("mail_cellar_master")
        return json.dumps({"message_id": f"MSG-{truck}-{day[-2:]}", "to": to})

    return cellarhand


# --- the app --------------------------------------------------------------------------------
class ProcessPlan(BaseModel):
    """The planner's structured output."""

    bpmn: str = Field(description="the intake's plan as a BPMN 2.0 XML process (Zeebe tasks)")


class IntakeFailed(Exception):
    """The fruit did not reach the crush pad (the reason is the message)."""


class Rerun(Exception):
    """The cellarhand's job timed out: run the task again."""


class Replan(Exception):
    """The job failed on the plan's data (BPMN_ERROR): ask for a new process."""


class HarvestIntake:
    """One grower's intake, from the brief to the watched truck."""

    def __init__(self, label: Label, model: OpenAIChatModel):
        self.label = label
        self.world = World(label)
        self.planner: Agent[None, ProcessPlan] = Agent(
            model,
            name="planner",
            output_type=ProcessPlan,
            instructions="Answer the intake's plan as a BPMN 2.0 process with Zeebe service tasks.",
        )
        self.cellarhand = make_cellarhand(self.world, model)
        self.outputs: dict[str, str] = {}
        """Settled step -> its output."""
        self.settled: dict[str, str] = {}

    def brief(self, revision: int, setback: str) -> str:
        notes = {
            k: self.label.params[k] for k in ("variety", "day", "account") if k in self.label.params
        }
        lines = [
            f"{PLANNER}bring in the fruit on intake {INTAKE['intake']}.",
            f"Intake booking: {json.dumps(INTAKE)}",
        ]
        if notes:
            lines.append(f"Grower's notes: {json.dumps(notes)}")
        if revision > 1:
            lines += [
                f"Revision: {revision}",
                f"Settled: {json.dumps(self.outputs)}",
                f"Setback: {setback}",
            ]
        return "\n".join(lines)

    def plan(self, revision: int, setback: str) -> Process:
        with mlflow.start_span(name=f"plan revision {revision}", span_type=SpanType.CHAIN) as span:
            brief = self.brief(revision, setback)
            span.set_inputs({"brief": brief})
            bpmn = self.planner.run_sync(brief).output.bpmn
            span.set_outputs({"bpmn": bpmn})
            process = read_process(bpmn)
            span.set_attribute("winepress.plan.steps", [t.step for t in process.tasks])
        self.settled |= process.settled
        return process

    def value(self, arg: Any) -> Any:
        """An input with its FEEL path filled in."""
        if not isinstance(arg, Ref):
            return arg
        if arg.text in self.settled:
            return self.settled[arg.text]
        return self.outputs[arg.text.partition(".")[0]]

    def attempt(self, task: Task, attempt: int) -> None:
        """One cellarhand run of a service task, its inputs filled in."""
        args = {k: self.value(v) for k, v in task.args.items()}
        brief = (
            f"Task {task.number}: {task.step} ({task.tool}) attempt {attempt}\n"
            f"Purpose: {task.purpose}\n"
            f"Call: {task.tool} {json.dumps(args)}"
        )
        with mlflow.start_span(
            name=f"task {task.step} attempt {attempt}", span_type=SpanType.CHAIN
        ) as span:
            span.set_inputs({"task": brief})
            answer = self.cellarhand.run_sync(brief).output
            record = dict(re.findall(r"^(\w+): (.*)$", answer, re.MULTILINE))
            span.set_outputs(record)
            if record.get("job") == "COMPLETED":
                self.outputs[task.step] = str(json.loads(record["output"])[OUTPUTS[task.step]])
                return
            span.set_status("ERROR")
            code = record.get("code", "INCIDENT")
            span.set_attribute("winepress.job_error", code)
        text = f"{task.step} ({task.tool}) {code}: {record.get('error', '')}"
        if code == "JOB_TIMEOUT":
            raise Rerun(text)
        if code == "BPMN_ERROR":
            raise Replan(text)
        raise IntakeFailed(text)

    def work(self) -> None:
        setback = ""
        for revision in range(1, MAX_PLANS + 1):
            process = self.plan(revision, setback)
            setback = ""
            for task in process.tasks:
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    try:
                        self.attempt(task, attempt)
                        break
                    except Rerun as e:
                        if attempt == MAX_ATTEMPTS:
                            raise IntakeFailed(str(e)) from e
                    except Replan as e:
                        setback = str(e)
                        break
                if setback:
                    break
            if not setback:
                return
        raise IntakeFailed(f"no process holds after {MAX_PLANS}: {setback}")

    def check(self) -> None:
        """The app's own checks once the cellar master is mailed: the truck against the intake
        booking, then the truck's tracking up to the crush pad."""
        truck = self.world.trucks[-1]
        with mlflow.start_span(
            name="check truck against intake", span_type=SpanType.GUARDRAIL
        ) as span:
            span.set_inputs({"truck": truck["booking"], "pick_day": INTAKE["day"]})
            span.set_outputs({"truck_day": truck["day"]})
            if truck["day"] != INTAKE["day"]:
                raise IntakeFailed(
                    f"truck {truck['booking']} loads on {truck['day']}; intake "
                    f"{INTAKE['intake']} is picked on {INTAKE['day']}"
                )
        with mlflow.start_span(name=f"watch truck {truck['booking']}") as span:
            span.set_inputs({"truck": truck["booking"], "gate": truck["gate"]})
            places = ("vineyard gate", "Oakville Cross", "Rutherford", "crush pad")
            for read, place in enumerate(places, 1):
                if self.label.scenario == "external_washout" and read > int(
                    self.label.params["reads"]
                ):
                    raise IntakeFailed(
                        f"a washout closes the Silverado Trail near {place}; the truck turns "
                        f"back and {INTAKE['grower']} sells the fruit to another winery"
                    )
                span.add_event(
                    # SpanEvent is a concrete dataclass; mypy reads its base's abstract from_proto
                    SpanEvent("tracking", attributes={"read": read, "at": place})  # type: ignore[abstract]
                )
            span.set_outputs({"state": "on the crush pad"})

    def run(self) -> str:
        try:
            with mlflow.start_span(
                name=f"harvest intake {INTAKE['intake']}", span_type=SpanType.AGENT
            ) as root:
                # MLflow's trace id is "tr-" and the OpenTelemetry trace id in hex
                trace_id = root.trace_id.removeprefix("tr-")
                root.set_inputs(INTAKE | {"run": self.label.run})
                self.work()
                self.check()
                root.set_outputs({"outcome": "crushed", "outputs": self.outputs})
        except IntakeFailed:  # MLflow recorded the exception and the root's ERROR status
            pass
        return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the winepress scenarios under MLflow's Pydantic AI autologging, its spans relayed to
    ``provider``; autologging is turned off when the play returns."""
    if not labels:
        return {}
    _mlflow_provider()
    quiet = logging.getLogger("mlflow")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    _Relay.target = provider
    mlflow.pydantic_ai.autolog(silent=True)
    try:
        with ModelServer(respond=respond) as server:
            endpoint = OpenAIProvider(base_url=server.base_url("corpus-winepress"), api_key="test")
            model = OpenAIChatModel(MODEL, provider=endpoint)
            return {label.run: HarvestIntake(label, model).run() for label in labels}
    finally:
        mlflow.pydantic_ai.autolog(disable=True, silent=True)
        _Relay.target = None
        quiet.setLevel(level)

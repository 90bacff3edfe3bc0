"""A wholesale bakery's order desk filling a hotel's weekend bread order with **AutoGen
AgentChat** (``autogen-agentchat`` 0.7.5), traced by **MLflow's AutoGen autologging**
(``mlflow.autogen.autolog()`` from the lightweight ``mlflow-tracing`` SDK) and the app's own
``mlflow.start_span`` / ``mlflow.trace`` spans: a ``planner`` ``AssistantAgent`` (no tools) whose
answer is the plan, and a ``baker`` ``AssistantAgent`` with ``FunctionTool``\\ s over the bakery's
services (plain async functions) run once per task attempt, both on autogen-ext's
``OpenAIChatCompletionClient`` against a scripted model on the conformance suite's fake OpenAI
server (``ModelServer(respond=...)``). No planscope code.

Sealed-78 split only (see README.md). The task: a hotel's weekend bread order; pick a flour lot
of the mill and grade the hotel's baker specifies from the mill's stock list (read page by
page), book an oven slot, have the dough's proof checked (a check, polled), book a refrigerated
van for the delivery day, invoice the hotel's account, mail the hotel's head chef. The desk
keeps its work in todo.txt files, so it asks the planner for the plan as a **todo.txt file**:

* the app opens one MLflow ``AGENT`` span per order (``bread order {po}``); a failed order raises
  inside it, so MLflow records the exception and the ``ERROR`` status;
* one planner run per plan (under the app's ``plan revision {n}`` span): the planner answers a
  todo.txt file, one task a line: ``(A) Pick T65 flour from Moulin de Vaux +PO-HB-2207 @mill
  id:flour tool:select_flour arg.mill:Moulin_de_Vaux arg.grade:T65 arg.kilos:120``, a later
  task taking an earlier task's output as ``arg.lot:=flour.lot_id`` and ordered by ``dep:flour``
  (``_`` for spaces in values). The app reads it with a small hand-written reader. Asked again
  after a setback, the planner answers the whole file again with the settled tasks marked done
  (``x 2027-06-04 ...``) and their outputs as ``out.<field>:<value>`` tags;
* one baker run per task attempt (under the app's ``task {id} attempt {n}`` span): the baker
  calls the bakery's services (each an ``mlflow.trace`` ``TOOL`` span of the app) and answers a
  **ticket** (``result: done|failed``, ``code:``, ``output: {json}`` or ``error: ...``);
* the services fail with **desk codes** (:class:`DeskError`, ``[CODE] text``), which AgentChat
  hands the model as the tool's error result: ``BUSY`` (``retry after HH:MM``: the baker calls
  again ``after`` that time, in the same run), ``ABORTED`` (the app runs the task again, up to 8
  attempts), ``CHANGE`` with ``(use key=value)`` (a new plan, up to 5), ``REFUSED`` (final); a
  proof check still running after 12 reads is reported as ``STALLED``, final;
* after the last task the app checks the van against the order (``check van against order``, a
  ``GUARDRAIL`` span) and watches the van (``watch van {booking}``, tracking reads as span
  events).

MLflow's tracer provider is the museum agent's (one per process, OTLP to a loopback sink, a relay
to the play's provider); MLflow's AutoGen autologging (on 0.7.5 it patches ``run`` and
``on_messages`` of ``BaseChatAgent``'s direct subclasses, ``AssistantAgent`` among them, as
``AGENT`` spans ``{agent}.run``, and every ``ChatCompletionClient``'s ``create`` as ``LLM`` spans
``OpenAIChatCompletionClient.create``) is turned off when the play returns. The planner trusts the
hotel baker's notes over the order: the scenario's wrong value comes from a note. This source
records no context data (no starvation label).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from warnings import catch_warnings, filterwarnings

import mlflow
import mlflow.autogen
from autogen_agentchat.agents import AssistantAgent
from autogen_core.models import ModelInfo
from autogen_core.tools import BaseTool, FunctionTool
from autogen_ext.models.openai import OpenAIChatCompletionClient
from mlflow.entities import SpanEvent, SpanType
from opentelemetry.sdk.trace import TracerProvider

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .museum import _mlflow_provider, _Relay

ORDER: dict[str, Any] = {
    "po": "PO-HB-2207",
    "hotel": "Hotel Beaumont",
    "mill": "Moulin de Vaux",
    "grade": "T65",
    "kilos": 120,
    "oven": "oven 2",
    "loaves": 340,
    "depot": "Rungis depot",
    "day": "2027-06-05",
    "account": "HB-30517",
    "amount": 642.5,
    "contact": "chef@hotelbeaumont.example",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_READS = 12
"""Proof reads in one baker run before the baker reports the check stalled."""
PLANNER = "Objective: "
"""How the brief opens (a task's ticket request never does)."""
DONE_DATE = "2027-06-04"
OUTPUTS = {
    "flour": "lot_id",
    "oven": "slot_id",
    "proof": "proof_id",
    "van": "booking",
    "invoice": "invoice_id",
    "mail": "message_id",
}
"""Each task's output field, in the order the tasks run."""


class DeskError(RuntimeError):
    """A service's failure, ``[CODE] text``."""

    def __init__(self, code: str, text: str):
        super().__init__(f"[{code}] {text}")


# --- the plan: a todo.txt file ----------------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """An argument taken from an earlier task's output: ``=flour.lot_id``."""

    task: str
    field: str


@dataclass
class Task:
    """One line of the todo.txt file: a step of the plan."""

    id: str
    tool: str
    description: str
    priority: str = ""
    done: bool = False
    project: str = ""
    context: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    deps: list[str] = field(default_factory=list)


def _value(text: str) -> Any:
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"-?\d+\.\d+", text):
        return float(text)
    return text.replace("_", " ")


def _token(value: Any) -> str:
    if isinstance(value, Ref):
        return f"={value.task}.{value.field}"
    return str(value).replace(" ", "_")


def read_todo(text: str) -> list[Task]:
    """The plan's tasks, from the planner's todo.txt file (blank lines and ``#`` lines skipped).

    >>> tasks = read_todo('''x 2027-06-04 (A) Pick flour +PO-1 @mill id:flour tool:select_flour \
out.lot_id:FL-1
    ... (B) Book oven 2 +PO-1 @oven id:oven tool:book_oven arg.lot:=flour.lot_id \
arg.oven:oven_2 dep:flour''')
    >>> [(t.id, t.done, t.priority) for t in tasks], tasks[0].outputs
    ([('flour', True, 'A'), ('oven', False, 'B')], {'lot_id': 'FL-1'})
    >>> tasks[1].args, tasks[1].deps, tasks[1].description
    ({'lot': Ref(task='flour', field='lot_id'), 'oven': 'oven 2'}, ['flour'], 'Book oven 2')
    """
    tasks: list[Task] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        done = False
        head = re.match(r"x (\d{4}-\d\d-\d\d )?", line)
        if head:
            done, line = True, line[head.end() :]
        priority = ""
        pri = re.match(r"\(([A-Z])\) ", line)
        if pri:
            priority, line = pri.group(1), line[pri.end() :]
        words, tags = [], {}
        task = Task(id="", tool="", description="", priority=priority, done=done)
        for word in line.split():
            tag = re.fullmatch(r"([\w.]+):(\S+)", word)
            if word.startswith("+") and len(word) > 1:
                task.project = word[1:]
            elif word.startswith("@") and len(word) > 1:
                task.context = word[1:]
            elif tag and not re.fullmatch(r"\d+", tag.group(1)):
                key, value = tag.groups()
                if key.startswith("arg."):
                    ref = re.fullmatch(r"=(\w+)\.(\w+)", value)
                    arg = key.removeprefix("arg.")
                    task.args[arg] = Ref(*ref.groups()) if ref else _value(value)
                elif key.startswith("out."):
                    task.outputs[key.removeprefix("out.")] = str(_value(value))
                elif key == "dep":
                    task.deps += value.split(",")
                else:
                    tags[key] = value
            else:
                words.append(word)
        if "id" not in tags or "tool" not in tags:
            raise ValueError(f"a task without id: or tool: {raw!r}")
        task.id, task.tool, task.description = tags["id"], tags["tool"], " ".join(words)
        tasks.append(task)
    return tasks


def write_todo(tasks: list[Task]) -> str:
    """The todo.txt file the scripted planner answers."""
    lines = []
    for t in tasks:
        words = [f"x {DONE_DATE}"] if t.done else []
        words += [f"({t.priority})", t.description, f"+{t.project}", f"@{t.context}"]
        words += [f"id:{t.id}", f"tool:{t.tool}"]
        words += [f"arg.{k}:{_token(v)}" for k, v in t.args.items()]
        words += [f"out.{k}:{_token(v)}" for k, v in t.outputs.items()]
        words += [f"dep:{d}" for d in t.deps]
        lines.append(" ".join(words))
    return "\n".join(lines)


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
    """The planner's todo.txt: the order's facts, the hotel baker's notes trusted over them;
    after a setback with a ``use`` value that value; the settled tasks marked done with their
    outputs."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Order"]) | json.loads(lines.get("Hotel baker's notes", "{}"))
    settled: dict[str, str] = json.loads(lines.get("Settled", "{}"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)
    po = facts["po"]

    def out(task: str) -> Ref:
        return Ref(task, OUTPUTS[task])

    tasks = [
        Task("flour", "select_flour", f"Pick {facts['grade']} flour from {facts['mill']}", "A",
             context="mill", args={"mill": facts["mill"], "grade": facts["grade"],
                                   "kilos": facts["kilos"]}),
        Task("oven", "book_oven", f"Book a slot in {facts['oven']}", "A", context="ovens",
             args={"lot": out("flour"), "oven": facts["oven"], "loaves": facts["loaves"]},
             deps=["flour"]),
        Task("proof", "proof_check", "Check the proof of the dough", "B", context="ovens",
             args={"lot": out("flour"), "slot": out("oven")}, deps=["oven"]),
        Task("van", "book_van", f"Book a refrigerated van for {facts['day']}", "B",
             context="dispatch", args={"proof": out("proof"), "depot": facts["depot"],
                                       "day": facts["day"]}, deps=["proof"]),
        Task("invoice", "invoice_account", f"Invoice {po} to the hotel's account", "C",
             context="office", args={"po": po, "account": facts["account"],
                                     "amount": facts["amount"], "van": out("van")},
             deps=["van"]),
        Task("mail", "mail_chef", "Mail the hotel's head chef", "C", context="office",
             args={"to": facts["contact"], "van": out("van"), "day": facts["day"]},
             deps=["invoice"]),
    ]  # fmt: skip
    for t in tasks:
        t.project = po
        if t.id in settled:
            t.done, t.outputs = True, {OUTPUTS[t.id]: settled[t.id]}
    return write_todo(tasks)


def _ticket(result: str, code: str, **fields: Any) -> str:
    """The baker's ticket."""
    lines = [f"result: {result}", f"code: {code}"]
    lines += [f"{k}: {json.dumps(v) if k == 'output' else v}" for k, v in fields.items()]
    return "\n".join(lines)


def _baker(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The baker's turn: make the call, call again ``after`` a BUSY, follow ``next_page``, read
    a running proof check, answer the ticket."""
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
    failed = re.search(r"\[([A-Z]+)\] (.*)", came_back, re.DOTALL)
    if failed:
        code, text = failed.group(1), failed.group(2).strip()
        after = re.search(r"retry after (\d\d:\d\d)", text)
        if code == "BUSY" and after:
            return _call(last, called | {"after": after.group(1)}, turn)
        return _answer(_ticket("failed", code, error=text))
    seen = json.loads(came_back)
    if seen.get("next_page"):
        return _call(last, called | {"page": seen["next_page"]}, turn)
    if seen.get("state") == "RISING":
        reads = sum(c[0] == "proof_status" for c in calls)
        if reads >= MAX_READS:
            note = f"proof check {seen['proof_id']} still RISING after {reads} reads"
            return _answer(_ticket("failed", "STALLED", error=note))
        return _call("proof_status", {"proof_id": seen["proof_id"]}, turn)
    return _answer(_ticket("done", "OK", output=seen))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the planner's todo.txt or the
    baker's next turn.

    >>> brief = "Objective: fill the order.\\nOrder: " + json.dumps(ORDER)
    >>> msg = respond({"messages": [{"role": "user", "content": brief}]})
    >>> text = msg["choices"][0]["message"]["content"]
    >>> [line for line in text.splitlines() if "id:proof" in line]
    ['(B) Check the proof of the dough +PO-HB-2207 @ovens id:proof tool:proof_check \
arg.lot:=flour.lot_id arg.slot:=oven.slot_id dep:oven']
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if task.startswith(PLANNER):
        return completion(body, _answer(_plan(task)))
    return completion(body, _baker(messages, task))


# --- the bakery's services ----------------------------------------------------------------
@dataclass
class World:
    """The mill's stock list, the ovens, the proofing room, dispatch, the hotel ledger and mail
    of one order."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    lots: dict[str, str] = field(default_factory=dict)
    """Flour lot -> its mill."""
    proofs: dict[str, int] = field(default_factory=dict)
    vans: list[dict[str, str]] = field(default_factory=list)
    invoices: list[str] = field(default_factory=list)

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
            raise DeskError("BUSY", f"{f['text']}; retry after {f['hint']}")
        if f["code"] == "CHANGE":
            raise DeskError("CHANGE", f"{f['text']} (use {f['hint']})")
        raise DeskError(f["code"], f["text"])


def make_tools(world: World) -> list[Callable[..., Any]]:
    """The bakery's services, bound to one order's world, each traced as an MLflow TOOL span."""
    seed = world.label.seed
    tool = mlflow.trace(span_type=SpanType.TOOL)

    @tool
    async def select_flour(mill: str, grade: str, kilos: int, page: int = 1) -> str:
        """Flour lots of a mill and grade with at least a weight in kilos in the mill's stock
        list, a page at a time."""
        world.fault("select_flour")
        code = "".join(w[0] for w in mill.split()).upper()
        if page < int(world.params.get("pages", 1)):
            short = [{"lot_id": f"FL-{code}-{page}{n}", "kilos": kilos // (n + 2)} for n in (1, 2)]
            return json.dumps({"lots": short, "next_page": page + 1})
        lot = f"FL-{code}-{seed}"
        world.lots[lot] = mill
        return json.dumps({"lot_id": lot, "mill": mill, "grade": grade, "kilos": kilos + 15})

    @tool
    async def book_oven(lot: str, oven: str, loaves: int, after: str = "") -> str:
        """Book a deck-oven slot to bake the hotel's loaves from a flour lot (after: call again
        after this time HH:MM when told to retry)."""
        world.fault("book_oven")
        moved = world.params.get("oven_to")
        if moved and oven == ORDER["oven"]:
            raise DeskError(
                "CHANGE", f"{oven} is down for a new sole this weekend (use oven={moved})"
            )
        mill = world.lots.get(lot, "")
        if mill != ORDER["mill"]:
            raise DeskError(
                "REFUSED",
                f"{oven}'s programme for {ORDER['po']} is set for {ORDER['mill']} "
                f"{ORDER['grade']}; lot {lot} is {mill or 'unknown'} flour",
            )
        slot = f"OS-{seed}-{oven[-1]}"
        return json.dumps({"slot_id": slot, "oven": oven, "loaves": loaves, "at": after or "04:30"})

    @tool
    async def proof_check(lot: str, slot: str) -> str:
        """Start the proofing room's check of the dough for an oven slot."""
        world.fault("proof_check")
        proof = f"PR-{seed}-{len(world.proofs) + 1}"
        world.proofs[proof] = 0
        if world.params.get("stuck") or "polls" in world.params:
            return json.dumps({"proof_id": proof, "state": "RISING", "slot": slot})
        return json.dumps({"proof_id": proof, "state": "READY", "slot": slot})

    @tool
    async def proof_status(proof_id: str) -> str:
        """A proof check's state: RISING, then READY."""
        world.proofs[proof_id] += 1
        if world.params.get("stuck") or world.proofs[proof_id] < int(world.params.get("polls", 0)):
            return json.dumps({"proof_id": proof_id, "state": "RISING"})
        return json.dumps({"proof_id": proof_id, "state": "READY"})

    @tool
    async def book_van(proof: str, depot: str, day: str, after: str = "") -> str:
        """Book a refrigerated van from a depot on a day (YYYY-MM-DD) for the proofed bake
        (after: call again after this time HH:MM when told to retry)."""
        world.fault("book_van")
        if depot != ORDER["depot"] and depot not in world.params.get("depots", ()):
            raise DeskError("REFUSED", f"no refrigerated van runs from {depot}")
        booking = f"RV-{seed}-{len(world.vans) + 1}"
        world.vans.append({"booking": booking, "day": day, "depot": depot})
        return json.dumps(
            {"booking": booking, "day": day, "depot": depot, "loads": after or "05:45"}
        )

    @tool
    async def invoice_account(
        po: str, account: str, amount: float, van: str, after: str = ""
    ) -> str:
        """Invoice an order to the hotel's account in EUR (after: call again after this time
        HH:MM when told to retry)."""
        world.fault("invoice_account")
        if account != ORDER["account"]:
            raise DeskError("REFUSED", f"the hotel ledger holds no account {account}")
        world.invoices.append(van)
        return json.dumps({"invoice_id": f"INV-{seed}-{len(world.invoices)}", "po": po})

    @tool
    async def mail_chef(to: str, van: str, day: str, after: str = "") -> str:
        """Mail the hotel's head chef the van and its day (after: call again after this time
        HH:MM when told to retry)."""
        world.fault("mail_chef")
        return json.dumps({"message_id": f"MSG-{van}-{day[-2:]}", "to": to})

    return [select_flour, book_oven, proof_check, proof_status, book_van, invoice_account,
            mail_chef]  # fmt: skip


# --- the app --------------------------------------------------------------------------------
class OrderFailed(Exception):
    """The bread was not delivered to the hotel (the reason is the message)."""


class Rerun(Exception):
    """The baker's task was aborted: run the task again."""


class Replan(Exception):
    """The baker's task failed on the plan's data (CHANGE): ask for a new plan."""


INFO: ModelInfo = {"vision": False, "function_calling": True, "json_output": False,
                   "family": "unknown", "structured_output": False}  # fmt: skip


class BreadOrder:
    """One hotel order, from the brief to the watched van."""

    def __init__(self, label: Label, client: OpenAIChatCompletionClient):
        self.label = label
        self.world = World(label)
        self.client = client
        self.tools: list[BaseTool[Any, Any]] = [
            FunctionTool(f, description=(f.__doc__ or f.__name__).split("\n\n")[0])
            for f in make_tools(self.world)
        ]
        self.outputs: dict[str, str] = {}
        """Settled task -> its output."""

    def brief(self, revision: int, setback: str) -> str:
        notes = {
            k: self.label.params[k] for k in ("mill", "day", "account") if k in self.label.params
        }
        lines = [
            f"{PLANNER}bake and deliver the bread on order {ORDER['po']} as a todo.txt file.",
            f"Order: {json.dumps(ORDER)}",
        ]
        if notes:
            lines.append(f"Hotel baker's notes: {json.dumps(notes)}")
        if revision > 1:
            lines += [
                f"Revision: {revision}",
                f"Settled: {json.dumps(self.outputs)}",
                f"Setback: {setback}",
            ]
        return "\n".join(lines)

    async def plan(self, revision: int, setback: str) -> list[Task]:
        with mlflow.start_span(name=f"plan revision {revision}", span_type=SpanType.CHAIN) as span:
            brief = self.brief(revision, setback)
            span.set_inputs({"brief": brief})
            planner = AssistantAgent(
                "planner",
                self.client,
                description="Writes the order's plan as a todo.txt file.",
                system_message="Answer the order's plan as a todo.txt file, one task a line.",
            )
            result = await planner.run(task=brief)
            todo = str(getattr(result.messages[-1], "content", ""))
            span.set_outputs({"todo.txt": todo})
            tasks = read_todo(todo)
            span.set_attribute("bakehouse.plan.open_tasks", [t.id for t in tasks if not t.done])
        for t in tasks:
            if t.done and t.outputs:
                self.outputs.setdefault(t.id, next(iter(t.outputs.values())))
        return tasks

    def value(self, arg: Any) -> Any:
        """An argument with its reference filled in."""
        return self.outputs[arg.task] if isinstance(arg, Ref) else arg

    async def attempt(self, task: Task, attempt: int) -> None:
        """One baker run of a task, its references filled in."""
        args = {k: self.value(v) for k, v in task.args.items()}
        ticket = (
            f"Task {task.id} (attempt {attempt}): {task.description}\n"
            f"Call: {task.tool} {json.dumps(args)}"
        )
        with mlflow.start_span(
            name=f"task {task.id} attempt {attempt}", span_type=SpanType.CHAIN
        ) as span:
            span.set_inputs({"task": ticket})
            baker = AssistantAgent(
                "baker",
                self.client,
                tools=[*self.tools],
                max_tool_iterations=24,
                description="Runs one task of the plan with the bakery's services.",
                system_message="Run the one call you are given, then answer its ticket.",
            )
            result = await baker.run(task=ticket)
            answer = str(getattr(result.messages[-1], "content", ""))
            record = dict(re.findall(r"^(\w+): (.*)$", answer, re.MULTILINE))
            span.set_outputs(record)
            if record.get("result") == "done":
                self.outputs[task.id] = str(json.loads(record["output"])[OUTPUTS[task.id]])
                return
            span.set_status("ERROR")
            code = record.get("code", "REFUSED")
            span.set_attribute("bakehouse.code", code)
        text = f"{task.id} ({task.tool}) [{code}] {record.get('error', '')}"
        if code == "ABORTED":
            raise Rerun(text)
        if code == "CHANGE":
            raise Replan(text)
        raise OrderFailed(text)

    async def work(self) -> None:
        setback = ""
        for revision in range(1, MAX_PLANS + 1):
            tasks = await self.plan(revision, setback)
            setback = ""
            for task in tasks:
                if task.done:
                    continue
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    try:
                        await self.attempt(task, attempt)
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
        raise OrderFailed(f"no plan holds after {MAX_PLANS}: {setback}")

    def check(self) -> None:
        """The app's own checks once the chef is mailed: the van against the order, then the
        van's tracking up to the hotel's kitchen door."""
        van = self.world.vans[-1]
        with mlflow.start_span(
            name="check van against order", span_type=SpanType.GUARDRAIL
        ) as span:
            span.set_inputs({"van": van["booking"], "order_day": ORDER["day"]})
            span.set_outputs({"van_day": van["day"]})
            if van["day"] != ORDER["day"]:
                raise OrderFailed(
                    f"van {van['booking']} delivers on {van['day']}; order {ORDER['po']} is "
                    f"due at {ORDER['hotel']} on {ORDER['day']}"
                )
        with mlflow.start_span(name=f"watch van {van['booking']}") as span:
            span.set_inputs({"van": van["booking"], "depot": van["depot"]})
            for read, place in enumerate(
                ("loading bay", "A6 Wissous", "Porte d'Italie", "rue de Rivoli"), 1
            ):
                if self.label.scenario == "external_closure" and read > int(
                    self.label.params["reads"]
                ):
                    raise OrderFailed(
                        f"a water main bursts under {place}; the police close the road and "
                        f"{ORDER['hotel']} cancels the weekend's bread"
                    )
                span.add_event(
                    # SpanEvent is a concrete dataclass; mypy reads its base's abstract from_proto
                    SpanEvent("tracking", attributes={"read": read, "at": place})  # type: ignore[abstract]
                )
            span.set_outputs({"state": "delivered"})

    async def run(self) -> str:
        try:
            with mlflow.start_span(
                name=f"bread order {ORDER['po']}", span_type=SpanType.AGENT
            ) as root:
                # MLflow's trace id is "tr-" and the OpenTelemetry trace id in hex
                trace_id = root.trace_id.removeprefix("tr-")
                root.set_inputs(ORDER | {"run": self.label.run})
                await self.work()
                self.check()
                root.set_outputs({"outcome": "delivered", "outputs": self.outputs})
        except OrderFailed:  # MLflow recorded the exception and the root's ERROR status
            pass
        return trace_id


async def _play_one(label: Label, base_url: str) -> str:
    client = OpenAIChatCompletionClient(
        model=MODEL, base_url=base_url, api_key="test", model_info=INFO, max_retries=0
    )
    try:
        return await BreadOrder(label, client).run()
    finally:
        await client.close()


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the bakehouse scenarios under MLflow's AutoGen autologging, its spans relayed to
    ``provider``; autologging is turned off when the play returns."""
    if not labels:
        return {}
    _mlflow_provider()
    quiet = logging.getLogger("mlflow")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    _Relay.target = provider
    mlflow.autogen.autolog(silent=True)
    try:
        with ModelServer(respond=respond) as server, catch_warnings():
            # the fake server's dated model name is not in autogen-ext's model map
            filterwarnings("ignore", "Resolved model mismatch", UserWarning)
            base = server.base_url("corpus-bakehouse")
            return {label.run: asyncio.run(_play_one(label, base)) for label in labels}
    finally:
        mlflow.autogen.autolog(disable=True, silent=True)
        _Relay.target = None
        quiet.setLevel(level)

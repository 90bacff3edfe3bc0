"""A hardware wholesaler's trade counter filling a building site's order, written as a real
**LangGraph** app (a ``StateGraph`` of the counter's own design: a planner node, an executor
subgraph run per task attempt, routing by the app) on langchain-openai's ``ChatOpenAI`` and
``@tool`` functions, traced by **MLflow's LangChain autologging** (``mlflow.langchain.autolog()``
from the ``mlflow-tracing`` package) plus the app's own ``mlflow.start_span`` spans, against a
scripted model on the conformance suite's fake OpenAI server (``ModelServer(respond=...)``). No
planscope code.

Sealed-66 split only (see README.md). The task: a groundworks contractor's order for its site;
find the threaded bar in stock at the trade counter's branch (a paged stock search), have the
branch's workshop cut and thread it (a workshop job, polled), book the yard's van to the site
for the delivery day, charge the order to the customer's trade account, tell the site manager.
As a LangGraph user writes a planner-executor app:

* the outer graph ``trade_counter``: nodes ``planner`` (one model call answering the plan),
  ``dispatch`` (the next open task, or the check), ``execute`` (one ``counter_hand`` subgraph run
  per task attempt), ``judge`` (the app: next task, run again, plan again or give up), ``check``
  (the app's own check of the van booking) and ``watch`` (the app watches the delivery);
* ``counter_hand``: a ``StateGraph(MessagesState)`` of a ``model`` node (``ChatOpenAI`` with the
  tools bound) and LangGraph's ``ToolNode`` (``tools_condition`` between them), its tool errors
  handed back to the model as the tool's result by the counter's own handler;
* the plan is an **Ansible-playbook-style YAML task list** (one play, ``tasks`` of ``- name:``,
  one module key naming the tool with its arguments as a mapping, ``register:``, an optional
  ``when:``; ``"{{ var.field }}"`` / ``"{{ var }}"`` an earlier task's registered result), parsed
  with PyYAML; a re-plan answers a new playbook whose ``vars`` hold the settled tasks' results
  and whose tasks are the ones still to do;
* the counter's ERP answers faults ``CP-nnnn [KIND] text``: ``BUSY`` (the model calls again
  ``after`` the time named, in the same run), ``REQUEUE`` (the hand reports ``rerun``: the app
  runs the task again, up to eight attempts), ``SUBSTITUTE`` with ``(use key=value)`` (``replan``:
  the app asks for a new playbook, up to five), ``VOID`` (final);
* the root ``order {order}`` span (MLflow ``AGENT``) records the outcome and, when the order
  failed, the exception raised through it.

MLflow's tracer provider is museum's (one per process: MLflow's OTLP processor to a loopback
sink, then a relay to the play's provider). The planner trusts the counter's notes over the
order card: the scenario's wrong value comes from a note. This source records no context data
(no starvation label).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any, TypedDict

import mlflow
import mlflow.langchain
import yaml
from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from mlflow.entities import SpanEvent, SpanStatus, SpanStatusCode, SpanType
from opentelemetry.sdk.trace import TracerProvider

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .museum import _mlflow_provider, _Relay

ORDER: dict[str, Any] = {
    "order": "SO-58213",
    "customer": "Pennine Groundworks Ltd",
    "site": "Calder Wharf, plot 7",
    "branch": "Kirkstall",
    "sku": "TB-M16-A4-1000",
    "qty": 40,
    "cut_mm": 450,
    "thread": "M16 both ends",
    "vehicle": "7.5t dropside",
    "day": "2027-03-16",
    "account": "TA-30572",
    "amount": "1188.00",
    "contact": "site.manager@calderwharf.example",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_READS = 12
"""Workshop job reads in one run before the counter hand reports the job stalled."""
PLANNER = "You are the trade counter's order planner: answer an Ansible-style playbook in YAML."
RUNNER = "You are a counter hand: run the task's module with your tools, then report."
CODES = {"BUSY": "CP-1107", "REQUEUE": "CP-2203", "SUBSTITUTE": "CP-3409", "VOID": "CP-4403"}
_REF = re.compile(r"\{\{\s*(\w+)(?:\.(\w+))?\s*\}\}")


class CounterFault(RuntimeError):
    """The ERP's refusal, ``CP-nnnn [KIND] text``."""

    def __init__(self, kind: str, text: str) -> None:
        super().__init__(f"{CODES[kind]} [{kind}] {text}")


class OrderFailed(Exception):
    """The order could not be filled (the reason is the message)."""


# --- the scripted model -------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def playbook(revision: int, settled: dict[str, Any], tasks: list[dict[str, Any]]) -> str:
    """A playbook's YAML text: one play, the settled results as ``vars``.

    >>> print(playbook(2, {"stock_pick": {"ref": "L1"}}, [{"name": "n", "m": {"a": "{{ x }}"},
    ...     "register": "r"}]).strip())
    - name: Trade order SO-58213 for Calder Wharf, plot 7 (revision 2)
      hosts: trade_counter
      gather_facts: false
      vars:
        stock_pick:
          ref: L1
      tasks:
      - name: n
        m:
          a: '{{ x }}'
        register: r
    """
    play: dict[str, Any] = {
        "name": f"Trade order {ORDER['order']} for {ORDER['site']} (revision {revision})",
        "hosts": "trade_counter",
        "gather_facts": False,
    }
    if settled:
        play["vars"] = settled
    play["tasks"] = tasks
    return yaml.safe_dump([play], sort_keys=False, width=200)


def _plan(brief: str) -> str:
    """The planner's answer: the order card's facts, the counter's notes trusted over them;
    after a ``(use key=value)`` setback that value; the settled tasks left out."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Order card"]) | json.loads(lines.get("Counter notes", "{}"))
    settled: dict[str, Any] = json.loads(lines.get("Settled", "{}"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)
    tasks = [
        (f"Pick {facts['qty']} x {facts['sku']} from the {facts['branch']} racks", "stock_search",
         {"sku": facts["sku"], "qty": facts["qty"], "branch": facts["branch"]}, "stock_pick", ""),
        (f"Cut to {facts['cut_mm']} mm and thread {facts['thread']}", "workshop_job",
         {"lot": "{{ stock_pick.lot }}", "cut_mm": facts["cut_mm"], "thread": facts["thread"]},
         "cut_job", ""),
        (f"Book the {facts['vehicle']} to {facts['site']} on {facts['day']}", "book_van",
         {"site": facts["site"], "day": facts["day"], "vehicle": facts["vehicle"],
          "load": "{{ cut_job }}"}, "van_slot", ""),
        (f"Charge {facts['amount']} to trade account {facts['account']}", "charge_trade_account",
         {"account": facts["account"], "amount": facts["amount"], "order": facts["order"],
          "delivery": "{{ van_slot }}"}, "account_charge", ""),
        ("Tell the site manager when the van comes", "notify_site",
         {"contact": facts["contact"], "day": facts["day"], "slot": "{{ van_slot.slot }}",
          "delivery": "{{ van_slot }}"}, "site_notice", "van_slot is defined"),
    ]  # fmt: skip
    out = []
    for name, module, args, register, when in tasks:
        if register in settled:
            continue
        task: dict[str, Any] = {"name": name, module: args, "register": register}
        if when:
            task["when"] = when
        out.append(task)
    return playbook(int(lines.get("Revision", "1")), settled, out)


def _hand(messages: list[dict[str, Any]], order: str) -> dict[str, Any]:
    """The counter hand's next turn: run the module, call again ``after`` a busy answer,
    follow ``next_page``, read a queued workshop job, report."""
    task = yaml.safe_load(order.split("\n", 1)[1])[0]
    ((module, args),) = [(k, v) for k, v in task.items() if k not in ("name", "register", "when")]
    turn = len(messages)
    calls: list[tuple[str, dict[str, Any], str]] = []
    pending: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            pending[c["id"]] = (fn["name"], json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool" and m.get("tool_call_id") in pending:
            calls.append((*pending.pop(m["tool_call_id"]), _text(m.get("content"))))

    def report(
        outcome: str, result: dict[str, Any] | None = None, note: str = ""
    ) -> dict[str, Any]:
        text = f"outcome: {outcome}\nresult: {json.dumps(result or {})}\nnote: {json.dumps(note)}"
        return {"role": "assistant", "content": text}

    if not calls:
        return _call(module, args, turn)
    name, called, came_back = calls[-1]
    fault = re.match(r"ERP refused: CP-\d+ \[(\w+)\] (.*)", came_back, re.DOTALL)
    if fault:
        kind, text = fault.groups()
        if kind == "BUSY":
            after = re.search(r"after (\d\d:\d\d)", text)
            return _call(name, called | {"after": after.group(1) if after else "later"}, turn)
        outcome = {"REQUEUE": "rerun", "SUBSTITUTE": "replan"}.get(kind, "failed")
        return report(outcome, note=came_back.removeprefix("ERP refused: "))
    answer = json.loads(came_back)
    if answer.get("next_page"):
        return _call(name, called | {"page": answer["next_page"]}, turn)
    if answer.get("state") == "queued":
        reads = sum(c[0] == "job_status" for c in calls)
        if reads >= MAX_READS:
            return report("stalled", note=f"job {answer['job']} still queued after {reads} reads")
        return _call("job_status", {"job": answer["job"]}, turn)
    return report("done", answer, answer.get("note", ""))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> brief = "Order card: " + json.dumps(ORDER)
    >>> msg = respond({"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": brief}]})
    >>> yaml.safe_load(msg["choices"][0]["message"]["content"])[0]["tasks"][1]["workshop_job"]
    {'lot': '{{ stock_pick.lot }}', 'cut_mm': 450, 'thread': 'M16 both ends'}
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if PLANNER in system:
        return completion(body, {"role": "assistant", "content": _plan(user)})
    return completion(body, _hand(messages, user))


# --- the counter's services ---------------------------------------------------------------
@dataclass
class Services:
    """The stock ledger, workshop, van yard, trade ledger and site messages of one order."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    lots: dict[str, str] = field(default_factory=dict)
    jobs: dict[str, int] = field(default_factory=dict)
    vans: list[dict[str, str]] = field(default_factory=list)
    charges: list[dict[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, tool: str) -> None:
        """Raise the scenario's next fault when ``tool`` is the one it targets."""
        if not self.faults or tool != self.params.get("tool"):
            return
        f = self.faults.pop(0)
        if f["kind"] == "BUSY":
            raise CounterFault("BUSY", f"{f['text']}; try again after {f['hint']}")
        if f["kind"] == "SUBSTITUTE":
            raise CounterFault("SUBSTITUTE", f"{f['text']} (use {f['hint']})")
        raise CounterFault(f["kind"], f["text"])


def _services(config: RunnableConfig) -> Services:
    world = (config.get("configurable") or {})["services"]
    assert isinstance(world, Services)
    return world


@tool
def stock_search(sku: str, qty: int, branch: str, config: RunnableConfig, page: int = 1) -> str:
    """Lots of a SKU with enough free stock at a branch, a page of the stock ledger at a time."""
    world = _services(config)
    world.fault("stock_search")
    code = branch[:3].upper()
    if page < int(world.params.get("pages", 1)):
        short = [f"LOT-{code}-{page * 100 + n}" for n in (7, 12)]
        return json.dumps({"lots": [], "short": short, "next_page": page + 1})
    lot = f"LOT-{code}-{world.label.seed % 9000 + 1000}"
    world.lots[lot] = branch
    return json.dumps({"ref": lot, "lot": lot, "branch": branch, "free": qty + 6, "bin": "B14"})


@tool
def workshop_job(lot: str, cut_mm: int, thread: str, config: RunnableConfig) -> str:
    """Queue a cutting and threading job on a lot in the branch workshop."""
    world = _services(config)
    world.fault("workshop_job")
    held = world.lots.get(lot, "")
    if held != ORDER["branch"]:
        raise CounterFault(
            "VOID",
            f"the {ORDER['branch']} workshop cuts from its own racks; lot {lot} is held at "
            f"{held or 'no'} branch",
        )
    job = f"WS-{world.label.seed}-{len(world.jobs) + 1}"
    world.jobs[job] = 0
    if "polls" in world.params or world.label.scenario == "loop_poll_stuck":
        return json.dumps({"job": job, "state": "queued"})
    return json.dumps({"ref": job, "job": job, "state": "done", "bundles": 2})


@tool
def job_status(job: str, config: RunnableConfig) -> str:
    """Where a workshop job is: queued, or done and bundled."""
    world = _services(config)
    world.jobs[job] += 1
    if world.label.scenario == "loop_poll_stuck" or world.jobs[job] < int(
        world.params.get("polls", 0)
    ):
        return json.dumps({"job": job, "state": "queued"})
    return json.dumps({"ref": job, "job": job, "state": "done", "bundles": 2})


@tool
def book_van(
    site: str, day: str, vehicle: str, load: str, config: RunnableConfig, after: str = ""
) -> str:
    """Book a yard van to a site on a delivery day."""
    world = _services(config)
    world.fault("book_van")
    swap = world.params.get("vehicle_to")
    if swap and vehicle == ORDER["vehicle"]:
        raise CounterFault("SUBSTITUTE", f"every {vehicle} is out on {day} (use vehicle={swap})")
    van = f"VAN-{world.label.seed % 80 + 10}-{day[-2:]}"
    world.vans.append({"van": van, "site": site, "day": day, "vehicle": vehicle, "load": load})
    return json.dumps({"ref": van, "slot": after or "07:30", "day": day, "vehicle": vehicle})


@tool
def charge_trade_account(
    account: str, amount: str, order: str, delivery: str, config: RunnableConfig, after: str = ""
) -> str:
    """Charge an order to a customer's trade account."""
    world = _services(config)
    world.fault("charge_trade_account")
    if account != ORDER["account"] and account not in world.params.get("accounts", ()):
        raise CounterFault("VOID", f"the trade ledger holds no account {account}")
    charge = f"CH-{world.label.seed}-{len(world.charges) + 1}"
    world.charges.append({"account": account, "amount": amount, "order": order})
    return json.dumps({"ref": charge, "account": account, "amount": amount})


@tool
def notify_site(
    contact: str, day: str, slot: str, delivery: str, config: RunnableConfig, after: str = ""
) -> str:
    """Message the site manager the delivery's day and slot."""
    _services(config).fault("notify_site")
    return json.dumps({"ref": f"MSG-{delivery}-{slot.replace(':', '')}", "to": contact})


TOOLS = [stock_search, workshop_job, job_status, book_van, charge_trade_account, notify_site]


def fault_message(error: CounterFault) -> str:
    """The tool result the model gets for an ERP refusal (ToolNode catches only these)."""
    return f"ERP refused: {error}"


# --- the graphs ---------------------------------------------------------------------------
def counter_hand(llm: ChatOpenAI) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The executor: the model with the tools bound, and LangGraph's ``ToolNode``."""
    bound = llm.bind_tools(TOOLS)

    def model(state: MessagesState) -> dict[str, list[AnyMessage]]:
        return {"messages": [bound.invoke([SystemMessage(RUNNER), *state["messages"]])]}

    g = StateGraph(MessagesState)
    g.add_node("model", model)
    g.add_node("tools", ToolNode(TOOLS, handle_tool_errors=fault_message))
    g.add_edge(START, "model")
    g.add_conditional_edges("model", tools_condition)
    g.add_edge("tools", "model")
    return g.compile(name="counter_hand")


class Desk(TypedDict, total=False):
    """The outer graph's state: the playbooks, results and the task under way."""

    playbooks: list[str]
    done: dict[str, dict[str, Any]]
    task: dict[str, Any]
    attempt: int
    outcome: str
    setback: str


def resolve(value: Any, done: dict[str, dict[str, Any]]) -> Any:
    """A task argument with its ``{{ var.field }}`` references filled in.

    >>> resolve("{{ a.lot }} / {{ a }}", {"a": {"ref": "R1", "lot": "L9"}})
    'L9 / R1'
    """
    if not isinstance(value, str):
        return value

    def one(m: re.Match[str]) -> str:
        result = done.get(m[1])
        return str(result.get(m[2] or "ref", m[0])) if result else m[0]

    return _REF.sub(one, value)


def _module(task: dict[str, Any]) -> str:
    (module,) = [k for k in task if k not in ("name", "register", "when")]
    return module


@dataclass
class Counter:
    """One order's trade counter: the world, the model and the graphs."""

    label: Label
    llm: ChatOpenAI
    hand: CompiledStateGraph[Any, Any, Any, Any]
    world: Services = field(init=False)

    def __post_init__(self) -> None:
        self.world = Services(self.label)

    def brief(self, state: Desk) -> str:
        notes = {
            k: self.label.params[k] for k in ("branch", "day", "account") if k in self.label.params
        }
        lines = [
            f"Objective: fill trade order {ORDER['order']} for {ORDER['customer']}.",
            f"Order card: {json.dumps(ORDER)}",
        ]
        if notes:
            lines.append(f"Counter notes: {json.dumps(notes)}")
        if state.get("playbooks"):
            lines += [
                f"Revision: {len(state['playbooks']) + 1}",
                f"Settled: {json.dumps(state.get('done', {}))}",
                f"Setback: {state.get('setback', '')}",
            ]
        return "\n".join(lines)

    # the outer graph's nodes
    def planner(self, state: Desk) -> Desk:
        revision = len(state.get("playbooks", [])) + 1
        with mlflow.start_span(name="order planner", span_type=SpanType.CHAIN) as span:
            brief = self.brief(state)
            span.set_attributes({"ferrule.order": ORDER["order"], "ferrule.revision": revision})
            span.set_inputs({"brief": brief})
            text = _text(self.llm.invoke([SystemMessage(PLANNER), HumanMessage(brief)]).content)
            span.set_outputs({"playbook": text})
        return {"playbooks": [*state.get("playbooks", []), text]}

    def dispatch(self, state: Desk) -> Desk:
        done = state.get("done", {})
        (play,) = yaml.safe_load(state["playbooks"][-1])
        for task in play["tasks"]:
            when = str(task.get("when", ""))
            if when.endswith(" is defined") and when.split()[0] not in done:
                continue  # Ansible's when: the task is skipped
            if task["register"] not in done:
                return {"task": task, "attempt": 1, "outcome": "run"}
        return {"task": {}, "outcome": "check"}

    def execute(self, state: Desk) -> Desk:
        task, attempt, done = state["task"], state["attempt"], state.get("done", {})
        module = _module(task)
        filled = task | {module: {k: resolve(v, done) for k, v in task[module].items()}}
        order = f"Task: {task['register']} (attempt {attempt})\n" + yaml.safe_dump(
            [filled], sort_keys=False, width=200
        )
        with mlflow.start_span(name=f"task {task['register']}", span_type=SpanType.AGENT) as span:
            span.set_attributes({"ferrule.task": task["register"], "ferrule.attempt": attempt})
            span.set_inputs({"task": order})
            out = self.hand.invoke(
                {"messages": [HumanMessage(order)]},
                config={"recursion_limit": 100, "configurable": {"services": self.world}},
            )
            answer = yaml.safe_load(_text(out["messages"][-1].content))
            span.set_outputs(answer)
            if answer["outcome"] != "done":
                # a SpanStatus (code and description), as set_status's docstring allows; its
                # annotation names only the code
                status = SpanStatus(SpanStatusCode.ERROR, str(answer["note"]))
                span.set_status(status)  # type: ignore[arg-type]
        if answer["outcome"] == "done":
            return {"done": done | {task["register"]: answer["result"]}, "outcome": "done"}
        return {
            "outcome": str(answer["outcome"]),
            "setback": f"{task['register']}: {answer['note']}",
        }

    def judge(self, state: Desk) -> Desk:
        """The app decides: next task, the task again, a new playbook, or the order fails."""
        outcome, attempt = state["outcome"], state["attempt"]
        if outcome == "rerun" and attempt < MAX_ATTEMPTS:
            return {"attempt": attempt + 1}
        if outcome == "replan" and len(state["playbooks"]) < MAX_PLANS:
            return {}
        if outcome != "done":
            raise OrderFailed(state["setback"])
        return {}

    def check(self, state: Desk) -> Desk:
        """The app's own check: the van is booked to the site for the order's day."""
        with mlflow.start_span(name="check van booking", span_type=SpanType.GUARDRAIL) as span:
            booked = self.world.vans[-1]
            span.set_inputs({"order": ORDER["order"], "day": ORDER["day"], "site": ORDER["site"]})
            span.set_outputs(booked)
            if booked["day"] != ORDER["day"] or booked["site"] != ORDER["site"]:
                raise OrderFailed(
                    f"{booked['van']} booked for {booked['day']}, the order is due {ORDER['day']}"
                )
        return {"outcome": "checked"}

    def watch(self, state: Desk) -> Desk:
        """The app watches the van until the site signs for the load."""
        van = state["done"]["van_slot"]["ref"]
        with mlflow.start_span(name=f"watch delivery {van}") as span:
            params = self.label.params
            for read, status in enumerate(("loading", "en route", "on site", "signed for"), 1):
                if self.label.scenario.startswith("external_") and read > int(params["reads"]):
                    reason = (
                        f"an HSE prohibition notice shut the {ORDER['site']} gate at read {read}"
                    )
                    span.add_event(_van_status({"status": "turned back"}))
                    raise OrderFailed(reason)
                span.add_event(_van_status({"status": status, "read": read}))
            span.set_outputs({"status": "signed for"})
        return {"outcome": "delivered"}

    def graph(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        g = StateGraph(Desk)
        g.add_node("planner", self.planner)
        g.add_node("dispatch", self.dispatch)
        g.add_node("execute", self.execute)
        g.add_node("judge", self.judge)
        g.add_node("check", self.check)
        g.add_node("watch", self.watch)
        g.add_edge(START, "planner")
        g.add_edge("planner", "dispatch")
        g.add_conditional_edges("dispatch", _after_dispatch, ["execute", "check"])
        g.add_edge("execute", "judge")
        g.add_conditional_edges("judge", _after_judge, ["dispatch", "execute", "planner"])
        g.add_edge("check", "watch")
        g.add_edge("watch", END)
        return g.compile(name="trade_counter")

    def run(self) -> str:
        """The order, under the app's root span; its trace id."""
        try:
            with mlflow.start_span(
                name=f"order {ORDER['order']}", span_type=SpanType.AGENT
            ) as root:
                # MLflow's trace id is "tr-" and the OpenTelemetry trace id in hex
                trace_id = root.trace_id.removeprefix("tr-")
                root.set_inputs(ORDER)
                root.set_attributes({"ferrule.run": self.label.run})
                self.graph().invoke({}, config={"recursion_limit": 400})
                root.set_outputs({"outcome": "delivered"})
        except OrderFailed:  # MLflow recorded the exception and the root's ERROR status
            pass
        return trace_id


def _van_status(attributes: dict[str, Any]) -> SpanEvent:
    return SpanEvent("van status", attributes=attributes)  # type: ignore[abstract]


def _after_dispatch(state: Desk) -> str:
    return "execute" if state["outcome"] == "run" else "check"


def _after_judge(state: Desk) -> str:
    return {"done": "dispatch", "rerun": "execute", "replan": "planner"}[state["outcome"]]


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the ferrule scenarios under MLflow's LangChain autologging, its spans relayed to
    ``provider``; run name -> trace id. Autologging is turned off again when the play returns."""
    if not labels:
        return {}
    _mlflow_provider()
    quiet = logging.getLogger("mlflow")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    _Relay.target = provider
    mlflow.langchain.autolog(silent=True)
    try:
        with ModelServer(respond=respond) as server:
            llm = ChatOpenAI(
                model=MODEL,
                base_url=server.base_url("corpus-ferrule"),
                api_key="test",
                max_retries=0,
                temperature=0,
            )
            hand = counter_hand(llm)
            return {label.run: Counter(label, llm, hand).run() for label in labels}
    finally:
        mlflow.langchain.autolog(disable=True, silent=True)
        _Relay.target = None
        quiet.setLevel(level)

"""A chandlery filling a hotel chain's wholesale candle order, written as a LlamaIndex user writes
a planner-executor agent: a ``Workflow`` (``@step``s, events, ``StartEvent`` / ``StopEvent``)
whose planner asks the LLM for a structured plan (``astructured_predict`` into a pydantic
``Plan`` of named sub-tasks, the shape of LlamaIndex's structured planner: ``name``, ``input``,
``expected_output``, ``dependencies``), a ``FunctionAgent`` with ``FunctionTool``s run once per
sub-task attempt, and a re-plan step. Traced by OpenInference's LlamaIndex instrumentor
(``openinference-instrumentation-llama-index``) and the app's own root span per order, against a
scripted model on the conformance suite's fake OpenAI server. No planscope code.

Sealed-27 split only (see README.md). The order: find a lot of the specified wax in the wax
merchant's catalogue (read page by page), have a scented pillar burn-tested (the lab's result
comes later: polled), book the pouring line for the day, book freight to the retailer's depot,
invoice the retailer's account. The workflow:

* ``plan`` (``StartEvent``): ``llm.astructured_predict(Plan, PLANNER, ...)`` from the order sheet
  and the sales desk's notes (trusted over the sheet: a scenario's wrong value comes from a
  note); the first sub-task goes out as a ``RunSubTask`` event;
* ``execute`` (``RunSubTask``): the executor ``FunctionAgent`` runs the sub-task's input with the
  results of the sub-tasks it depends on; its last line says ``Done:`` / ``Later:`` /
  ``Amend:`` / ``Failed:``; a tool that raises is handed back to the model as the tool's output
  (LlamaIndex's own handling);
* ``review`` (``SubTaskDone``): the next sub-task, the same one again (``Later``), a ``Replan``
  (``Amend``) or the ``StopEvent``;
* ``replan`` (``Replan``): ``astructured_predict(Plan, REPLANNER, ...)``: the remaining
  sub-tasks, amended.

The LLM is llama-index-llms-litellm's ``LiteLLM`` (``openai/<model>`` at the fake server's
``api_base``): llama-index-llms-openai wants ``openai<3`` in every release, which the
conformance pins cannot install beside ``openai==3.57.0``. The trade's counterparts reply
``<party> — <verdict> — <text>``: ``engaged`` (call again, ``try slot N`` when they say so),
``next round`` (the sub-task again later), ``amend`` (``amend to <new> from <old>``: a new plan)
or ``declined``. After the workflow the app checks the retailer's delivery window and tracks
the shipment (tools called directly), all under one root span per order (``fill wholesale
order``). LlamaIndex records no context data (no starvation label).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

# litellm reads its model price map from the network at import unless told to use its own copy
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.prompts import PromptTemplate
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context, Event, StartEvent, StopEvent, Workflow, step
from llama_index.llms.litellm import LiteLLM
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from pydantic import BaseModel, Field

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .analyst import _call, _say, _text

TRACER = "chandler"
"""The app's tracer (its one root span per order)."""
JOB = {
    "order": "WO-7731",
    "retailer": "Halden Hotels",
    "wax": "soy 464",
    "scent": "fig and cedar",
    "pillars": "600",
    "day": "2027-09-14",
    "depot": "Leeds DC2",
    "account": "HH-40917",
}
SUB_TASKS = (
    (
        "source_wax",
        "Find a lot of {wax} wax for {pillars} pillars in the wax merchant's catalogue.",
        "the lot number",
        (),
    ),
    (
        "burn_test",
        "Send a pillar of the wax lot scented {scent} to the burn lab and wait for its result.",
        "a passed burn test",
        ("source_wax",),
    ),
    (
        "pour_candles",
        "Book the pouring line for {pillars} pillars of the wax lot on {day}.",
        "a line booking",
        ("source_wax", "burn_test"),
    ),
    (
        "book_freight",
        "Book freight of the poured pillars to the {retailer} depot {depot}.",
        "a consignment number",
        ("pour_candles",),
    ),
    (
        "invoice_retailer",
        "Invoice {retailer} account {account} for order {order}.",
        "an invoice number",
        ("book_freight",),
    ),
)
PLANNER = PromptTemplate(
    "You plan wholesale orders for Marrow Lane Chandlery. Break the order into sub-tasks, each "
    "with a short snake_case name, an input for the executor naming every value it needs, the "
    "expected output and the names of the sub-tasks it depends on. The sales desk's notes "
    "correct the order sheet.\n"
    "Order sheet: {sheet}\n"
    "Sales desk notes: {notes}\n"
)
REPLANNER = PromptTemplate(
    "You plan wholesale orders for Marrow Lane Chandlery. A sub-task could not be done as "
    "planned. Return only the sub-tasks still to do, amended to what the problem says; keep "
    "their names.\n"
    "Order sheet: {sheet}\n"
    "Completed sub-tasks: {completed}\n"
    "Remaining sub-tasks: {remaining}\n"
    "Problem with {name}: {problem}\n"
)
EXECUTOR = (
    "You are the chandlery's order clerk. Carry out the one sub-task you are given with the "
    "tools. End with one line: 'Done: <result>', 'Later: <why>' when it must wait for another "
    "round, 'Amend: <why>' when the plan must change, or 'Failed: <why>'."
)
MAX_POLLS = 10
MAX_ROUNDS = 8
MAX_REPLANS = 5
_REPLY = re.compile(r"(.+?) — (engaged|next round|amend|declined) — (.*)")


# --- the plan: LlamaIndex's structured planner shape --------------------------------------------
class SubTask(BaseModel):
    """One sub-task of the plan."""

    name: str = Field(description="a short snake_case name of the sub-task")
    input: str = Field(description="what the executor is asked to do, with every value it needs")
    expected_output: str = Field(description="what the sub-task should produce")
    dependencies: list[str] = Field(description="names of the sub-tasks that must be done first")


class Plan(BaseModel):
    """The sub-tasks that fill the order, in order."""

    sub_tasks: list[SubTask]


# --- the scripted model -----------------------------------------------------------------------
def _plan(prompt: str) -> dict[str, Any]:
    """The planner's ``Plan``: the sheet's values, the notes' over them."""
    fields = dict(re.findall(r"^(Order sheet|Sales desk notes): (\{.*\})$", prompt, re.MULTILINE))
    facts = json.loads(fields["Order sheet"]) | json.loads(fields["Sales desk notes"])
    return {
        "sub_tasks": [
            {"name": n, "input": i.format(**facts), "expected_output": e, "dependencies": list(d)}
            for n, i, e, d in SUB_TASKS
        ]
    }


def _replan(prompt: str) -> dict[str, Any]:
    """The re-planner's ``Plan``: the remaining sub-tasks with the amended value written in."""
    (listed,) = re.findall(r"^Remaining sub-tasks: (.*)$", prompt, re.MULTILINE)
    remaining = json.loads(listed)
    moved = re.search(r"amend to (\S+) from (\S+?)\.?$", prompt, re.MULTILINE)
    if moved:
        for sub in remaining:
            sub["input"] = sub["input"].replace(moved[2], moved[1])
    return {"sub_tasks": remaining}


_CALLS = (
    (r"Find a lot of (?P<blend>.+) wax for (?P<pillars>\d+) pillars", "find_wax_lot"),
    (r"wax lot scented (?P<scent>.+) to the burn lab", "submit_burn_test"),
    (
        r"pouring line for (?P<pillars>\d+) pillars of the wax lot on (?P<day>\S+)\.",
        "book_pour_line",
    ),
    (r"to the .+ depot (?P<depot>.+)\.$", "book_freight"),
    (r"Invoice .+ account (?P<account>\S+) for order (?P<order>\S+)\.", "send_invoice"),
)
_FROM = {  # an argument taken from an earlier sub-task's result
    "submit_burn_test": {"lot": ("source_wax", "lot")},
    "book_pour_line": {"lot": ("source_wax", "lot")},
    "book_freight": {"booking": ("pour_candles", "booking")},
    "send_invoice": {"consignment": ("book_freight", "consignment")},
}


def _first_call(prompt: str) -> dict[str, Any]:
    task = re.search(r"^Sub-task \w+: (.*)$", prompt, re.MULTILINE)
    results = {
        k: json.loads(v) for k, v in re.findall(r"^- (\w+): (\{.*\})$", prompt, re.MULTILINE)
    }
    for pattern, name in _CALLS:
        if task and (found := re.search(pattern, task[1])):
            args: dict[str, Any] = found.groupdict()
            if "pillars" in args:
                args["pillars"] = int(args["pillars"])
            for arg, (sub, key) in _FROM.get(name, {}).items():
                args[arg] = results[sub][key]
            return _call(name, args, 0)
    return _say(f"Failed: no tool for {task[1] if task else prompt!r}")


def _act(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The executor's next turn for one sub-task."""
    prompt = next(_text(m.get("content")) for m in messages if m.get("role") == "user")
    calls = [c for m in messages for c in m.get("tool_calls") or []]
    if not calls:
        return _first_call(prompt)
    last = calls[-1]["function"]
    name, args = last["name"], json.loads(last["arguments"])
    said = _text(messages[-1].get("content"))
    reply = _REPLY.fullmatch(said)
    if reply and reply[2] == "engaged":
        slot = re.search(r"try slot (\d+)", said)
        return _call(name, args | {"slot": int(slot[1])} if slot else args, len(calls))
    if reply:
        answer = {"next round": "Later", "amend": "Amend", "declined": "Failed"}[reply[2]]
        return _say(f"{answer}: {said}")
    result = json.loads(said)
    if result.get("next_page"):
        return _call(name, args | {"page": result["next_page"]}, len(calls))
    if result.get("state") == "burning":
        if sum(c["function"]["name"] == "burn_test_result" for c in calls) >= MAX_POLLS:
            return _say(f"Failed: burn lab — declined — still burning after {MAX_POLLS} checks")
        return _call("burn_test_result", {"test": result["test"]}, len(calls))
    return _say(f"Done: {said}")


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> sheet = json.dumps(JOB)
    >>> msg = respond({"tools": [{"function": {"name": "Plan"}}], "messages": [
    ...     {"role": "user", "content": PLANNER.format(sheet=sheet, notes="{}")}]})
    >>> call = msg["choices"][0]["message"]["tool_calls"][0]["function"]
    >>> json.loads(call["arguments"])["sub_tasks"][0]["input"]
    "Find a lot of soy 464 wax for 600 pillars in the wax merchant's catalogue."
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    tools = {t["function"]["name"] for t in body.get("tools") or []}
    if "Plan" in tools:  # astructured_predict: the plan as a call of the Plan function
        prompt = _text(messages[-1].get("content"))
        plan = _replan(prompt) if "Remaining sub-tasks: " in prompt else _plan(prompt)
        return completion(body, _call("Plan", plan, 0))
    return completion(body, _act(messages))


# --- the world --------------------------------------------------------------------------------
class Declined(RuntimeError):
    """A counterpart's reply: ``<party> — <verdict> — <text>``."""


_PARTIES = {
    "find_wax_lot": "wax merchant",
    "submit_burn_test": "burn lab",
    "book_pour_line": "pouring shed",
    "book_freight": "haulier",
    "send_invoice": "Halden accounts",
}


@dataclass
class World:
    """The wax merchant, burn lab, pouring shed, haulier and retailer of one order."""

    label: Label
    errors: list[str] = field(default_factory=list)
    lots: dict[str, str] = field(default_factory=dict)
    polls: dict[str, int] = field(default_factory=dict)
    poured: str = ""
    invoiced: bool = False

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        self.window = JOB["day"]

    def fault(self, name: str, old: str = "") -> None:
        """Raise the scenario's next reply when this call is one it targets."""
        if self.errors and self.label.params.get("tool") == name:
            raise Declined(f"{_PARTIES[name]} — " + self.errors.pop(0).format(old=old))

    def tools(self) -> list[FunctionTool]:
        params = self.label.params
        seed = self.label.seed

        def find_wax_lot(blend: str, pillars: int, page: int = 1) -> str:
            """Find a lot of a wax blend for a number of pillars in the wax merchant's
            catalogue, a page at a time."""
            self.fault("find_wax_lot")
            if page < int(params.get("pages", 1)):
                return json.dumps({"lots": [], "next_page": page + 1})
            lot = f"L-{seed % 887}"
            self.lots[lot] = blend
            return json.dumps({"lot": lot, "blend": blend, "kg": pillars // 2})

        def submit_burn_test(lot: str, scent: str, slot: int = 0) -> str:
            """Send a scented pillar of a wax lot to the burn lab; the result comes later."""
            self.fault("submit_burn_test")
            if scent != JOB["scent"]:
                raise Declined(
                    f"burn lab — declined — {scent} is not on {JOB['retailer']}' approved list"
                )
            test = f"BT-{seed % 613}"
            self.polls[test] = 0
            return json.dumps({"test": test, "lot": lot, "state": "burning"})

        def burn_test_result(test: str) -> str:
            """The burn lab's result for a test, once the pillar has burned down."""
            self.polls[test] += 1
            stuck = self.label.scenario == "loop_poll_stuck"
            if stuck or self.polls[test] < int(params.get("polls", 1)):
                return json.dumps({"test": test, "state": "burning"})
            return json.dumps({"test": test, "state": "passed", "soot": "low"})

        def book_pour_line(lot: str, pillars: int, day: str, slot: int = 0) -> str:
            """Book the pouring line for a number of pillars of a wax lot on a day."""
            self.fault("book_pour_line", day)
            if self.lots.get(lot) != JOB["wax"]:
                raise Declined(
                    f"pouring shed — declined — {JOB['retailer']}' spec calls for {JOB['wax']};"
                    f" lot {lot} is {self.lots.get(lot)}"
                )
            moved = params.get("line_day")
            if moved and day != moved:
                self.window = str(moved)
                raise Declined(
                    f"pouring shed — amend — line 2 is down that day; amend to {moved} from {day}"
                )
            self.poured = day
            return json.dumps({"booking": f"PL-{day}", "pillars": pillars})

        def book_freight(booking: str, depot: str, slot: int = 0) -> str:
            """Book freight of a pour booking's pillars to a retailer's depot."""
            self.fault("book_freight")
            return json.dumps({"consignment": f"CN-{seed % 431}", "depot": depot})

        def send_invoice(account: str, order: str, consignment: str) -> str:
            """Invoice a retailer's account for an order once its consignment is booked."""
            self.fault("send_invoice", account)
            if account != JOB["account"]:
                raise Declined(
                    f"Halden accounts — declined — {account} is not an account of {JOB['retailer']}"
                )
            self.invoiced = True
            return json.dumps({"invoice": f"INV-{seed % 997}", "order": order})

        funcs = (find_wax_lot, submit_burn_test, burn_test_result, book_pour_line, book_freight)
        return [FunctionTool.from_defaults(f) for f in (*funcs, send_invoice)]

    def checks(self) -> list[FunctionTool]:
        """The app's checks after the workflow: the delivery window, then the shipment."""

        def check_delivery_window(order: str) -> str:
            """Whether the pillars are poured for the retailer's delivery window."""
            if self.poured != self.window:
                raise Declined(
                    f"{JOB['retailer']} — declined — the window for {order} is set for"
                    f" {self.window} but the pillars are poured on {self.poured}"
                )
            return json.dumps({"order": order, "day": self.poured})

        def track_shipment(order: str) -> str:
            """Where an order's consignment is."""
            self.polls[order] = self.polls.get(order, 0) + 1
            melted = self.label.scenario == "external_heatwave"
            if melted and self.polls[order] > int(self.label.params["polls"]):
                raise Declined(
                    f"haulier — declined — a heatwave softened the pallets of {order} at"
                    f" {JOB['depot']}"
                )
            return json.dumps({"order": order, "state": "in transit"})

        return [
            FunctionTool.from_defaults(check_delivery_window),
            FunctionTool.from_defaults(track_shipment),
        ]


# --- the workflow -----------------------------------------------------------------------------
class RunSubTask(Event):
    sub_task: SubTask


class SubTaskDone(Event):
    sub_task: SubTask
    answer: str


class Replan(Event):
    sub_task: SubTask
    problem: str


class OrderWorkflow(Workflow):
    """Plan the order, run each sub-task through the executor agent, re-plan on an amendment."""

    def __init__(self, llm: LiteLLM, tools: list[FunctionTool], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.llm = llm
        self.executor = FunctionAgent(tools=tools, llm=llm, system_prompt=EXECUTOR)

    @step
    async def plan(self, ctx: Context, ev: StartEvent) -> RunSubTask:
        plan = await self.llm.astructured_predict(
            Plan, PLANNER, sheet=json.dumps(ev.sheet), notes=json.dumps(ev.notes)
        )
        await ctx.store.set("sheet", ev.sheet)
        await ctx.store.set("remaining", plan.sub_tasks[1:])
        await ctx.store.set("results", {})
        await ctx.store.set("rounds", {})
        await ctx.store.set("replans", 0)
        return RunSubTask(sub_task=plan.sub_tasks[0])

    @step
    async def execute(self, ctx: Context, ev: RunSubTask) -> SubTaskDone:
        results = await ctx.store.get("results")
        sub = ev.sub_task
        lines = [f"Sub-task {sub.name}: {sub.input}", f"Expected output: {sub.expected_output}"]
        if sub.dependencies:
            lines.append("Results of earlier sub-tasks:")
            lines += [f"- {d}: {json.dumps(results[d])}" for d in sub.dependencies if d in results]
        answer = await self.executor.run(user_msg="\n".join(lines))
        return SubTaskDone(sub_task=sub, answer=str(answer).strip())

    @step
    async def review(self, ctx: Context, ev: SubTaskDone) -> RunSubTask | Replan | StopEvent:
        sub, answer = ev.sub_task, ev.answer
        if answer.startswith("Done: "):
            results = await ctx.store.get("results")
            results[sub.name] = json.loads(answer.removeprefix("Done: "))
            await ctx.store.set("results", results)
            remaining = await ctx.store.get("remaining")
            if not remaining:
                return StopEvent(result=f"Order filled in {len(results)} sub-tasks.")
            await ctx.store.set("remaining", remaining[1:])
            return RunSubTask(sub_task=remaining[0])
        if answer.startswith("Later: "):
            rounds = await ctx.store.get("rounds")
            rounds[sub.name] = rounds.get(sub.name, 0) + 1
            await ctx.store.set("rounds", rounds)
            if rounds[sub.name] < MAX_ROUNDS:
                return RunSubTask(sub_task=sub)
        if answer.startswith("Amend: "):
            return Replan(sub_task=sub, problem=answer.removeprefix("Amend: "))
        return StopEvent(result=f"Could not fill the order: {sub.name}: {answer}")

    @step
    async def replan(self, ctx: Context, ev: Replan) -> RunSubTask | StopEvent:
        replans = await ctx.store.get("replans") + 1
        await ctx.store.set("replans", replans)
        if replans > MAX_REPLANS:
            return StopEvent(result=f"Could not fill the order: {ev.sub_task.name}: {ev.problem}")
        remaining = [ev.sub_task, *await ctx.store.get("remaining")]
        plan = await self.llm.astructured_predict(
            Plan,
            REPLANNER,
            sheet=json.dumps(await ctx.store.get("sheet")),
            completed=json.dumps(await ctx.store.get("results")),
            remaining=json.dumps([s.model_dump() for s in remaining]),
            name=ev.sub_task.name,
            problem=ev.problem,
        )
        await ctx.store.set("remaining", plan.sub_tasks[1:])
        return RunSubTask(sub_task=plan.sub_tasks[0])


class Chandler:
    """One wholesale order, from the order sheet to the tracked shipment."""

    def __init__(self, label: Label, llm: LiteLLM, provider: TracerProvider) -> None:
        self.label = label
        self.world = World(label)
        self.llm = llm
        self.tracer = provider.get_tracer(TRACER)

    async def fill(self) -> str:
        notes = {k: self.label.params[k] for k in JOB if k in self.label.params}
        with self.tracer.start_as_current_span("fill wholesale order") as root:
            workflow = OrderWorkflow(self.llm, self.world.tools(), timeout=300)
            said = str(await workflow.run(sheet=JOB, notes=notes))
            failure = "" if self.world.invoiced else said
            if not failure:
                window, track = self.world.checks()
                try:
                    await window.acall(order=JOB["order"])
                    for _ in range(3):
                        await track.acall(order=JOB["order"])
                except Declined as error:
                    failure = str(error)
            if failure:
                root.set_status(Status(StatusCode.ERROR, failure))
            return format(root.get_span_context().trace_id, "032x")


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the wholesale-order scenarios against the scripted model; run name -> trace id."""
    out: dict[str, str] = {}
    if not labels:
        return out
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    instrumentor = LlamaIndexInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer(respond=respond) as server:
            llm = LiteLLM(
                model=f"openai/{MODEL}", api_base=server.base_url("corpus-chandler"), api_key="test"
            )
            for label in labels:
                out[label.run] = asyncio.run(Chandler(label, llm, provider).fill())
    finally:
        instrumentor.uninstrument()
    return out

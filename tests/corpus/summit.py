"""A summit agent: an expedition agency outfits a climbing team for a Himalayan peak, as a
LangGraph user writes a **DAG planner with parallel execution** today (the spirit of LangGraph's
map-reduce and LLMCompiler how-tos: a plan of tasks with dependencies, every ready task fanned
out with ``Send``), traced only by OpenInference's LangChain instrumentor (as a Phoenix user
traces it) and the app's own spans, against a scripted model on the conformance suite's fake
OpenAI server (``ModelServer(respond=...)``). No planscope code.

Sealed-35 split only (see README.md). The job: find a guide licensed for the peak's range in
the guides' roster (read page by page), apply for the climbing permit (issued later: polled),
rent the high-altitude kit, charter the helicopter to base camp (the guide and the permit
needed), charge the expedition's deposit (the flight and the kit needed), send the team the
departure bulletin. The graph:

* ``planner``: ``ChatOpenAI(...).with_structured_output(ExpeditionPlan,
  method="function_calling")``: a versioned plan of tasks, each an ``idx``, a ``name``, what it
  ``does``, its ``tool``, its ``args`` (``"$<idx>"`` for an earlier task's result, as
  LLMCompiler writes it) and the ``after`` list of the tasks it waits for. A new version (after
  a task was rerouted) lists only the tasks not done, numbered on from the last index;
* the scheduler (the conditional edge after ``planner`` and ``join``) sends **every task whose
  dependencies are done at once**, each to ``run_task`` with ``Send`` (the guide, the permit
  and the kit run in parallel); ``run_task`` runs a prebuilt ReAct agent (``create_react_agent``
  named ``outfitter``, a ``ToolNode`` with ``handle_tool_errors=(Bounce,)``) on the task with
  the results written in, and reduces its verdict into the state (``reports`` with
  ``operator.add``, ``results`` merged by index);
* ``join`` (app code) reads the wave's verdicts: ``DONE(value)``, ``AGAIN(...)`` (the task runs
  again in the next wave, up to 8 attempts), ``REROUTE(...)`` (a new plan version, up to 5),
  ``REFUSED(...)`` / ``GAVE_UP(...)`` (the job fails), or the end when every task is done.

The services answer errors as **SMTP reply lines** (a reply code and an enhanced status code):
``451 4.4.x ...; try again at HH:MM`` (the outfitter calls again at that time inside its run),
other ``4xx`` (``AGAIN``), ``551 5.1.6 ...; forward <arg>=<value>`` (``REROUTE``: the planner
takes the value), other ``5xx`` (final). The ``ToolNode`` hands the model
``Error: Bounce('...')`` (the TOOL span records the exception). After the graph the app checks
the flight against the permit's window and watches the ascent; one root span per job
(``outfit expedition {code}``) holds the graph and those checks. The planner trusts the
agency's notes over the booking: the scenario's wrong value comes from a note. No context data
(no starvation label).
"""

from __future__ import annotations

import json
import operator
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import BaseTool, tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph.types import Send
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer
from pydantic import BaseModel, Field

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .analyst import _call, _say, _text

ORDER = {
    "expedition": "AD-27S",
    "peak": "Ama Dablam",
    "range": "Khumbu",
    "climbers": "4",
    "kit": "8000m",
    "operator": "Fishtail Air",
    "date": "2027-04-18",
    "account": "EXP-52817",
    "email": "team@ad27s.example.org",
}
TASKS = (
    ("find_guide", "Find a guide licensed for the {range} range", "guide_roster",
     {"range": "{range}"}, ()),
    ("apply_permit", "Apply for the climbing permit for {peak}", "permit_office",
     {"peak": "{peak}", "climbers": "{climbers}"}, ()),
    ("rent_gear", "Rent {kit} kit for {climbers} climbers", "gear_depot",
     {"kit": "{kit}", "climbers": "{climbers}"}, ()),
    ("book_flight", "Charter the helicopter to base camp", "heli_charter",
     {"guide": "$find_guide", "permit": "$apply_permit", "operator": "{operator}",
      "date": "{date}"}, ("find_guide", "apply_permit")),
    ("charge_deposit", "Charge the expedition deposit", "deposit_charge",
     {"flight": "$book_flight", "gear": "$rent_gear", "account": "{account}"},
     ("book_flight", "rent_gear")),
    ("notify_team", "Send the team the departure bulletin", "team_bulletin",
     {"flight": "$book_flight", "receipt": "$charge_deposit", "email": "{email}"},
     ("charge_deposit",)),
)  # fmt: skip
"""The planner's tasks: name, what it does, tool, args (``$name``: that task's result), after."""
PLANNER = "You plan expedition outfitting for a Himalayan climbing agency."
EXECUTOR = "You are the agency's outfitter. Carry out the one task you are given with the tools."
TRACER = "summit"
"""The app's tracer (its root span per job, the check and the watch)."""
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_POLLS = 12
BOUNCE = re.compile(r"Bounce\(['\"](\d)(\d\d) (\d\.\d+\.\d+) (.*?)['\"]\)", re.DOTALL)
VERDICT = re.compile(r"(DONE|AGAIN|REROUTE|REFUSED|GAVE_UP)\((.*)\)$", re.DOTALL)


# --- the plan -----------------------------------------------------------------------------------
class PlanTask(BaseModel):
    """One task of the plan."""

    idx: int = Field(description="the task's index, unique across the job's plan versions")
    name: str = Field(description="a short snake_case name")
    does: str = Field(description="what the task does, in one sentence")
    tool: str = Field(description="the one tool the task calls")
    args: dict[str, str] = Field(
        description="the call's arguments; \"$<idx>\" is that task's result"
    )
    after: list[int] = Field(default_factory=list, description="indices it waits for")


class ExpeditionPlan(BaseModel):
    """A version of the outfitting plan: the tasks still to do, with their dependencies."""

    version: int
    reason: str = Field(default="", description="why this version replaces the last one")
    tasks: list[PlanTask]


def _plan(brief: str) -> dict[str, Any]:
    """The planner's answer: the booking with the agency's notes over it, a value a reroute
    forwarded, the done tasks left out and the rest numbered on."""
    fields = dict(re.findall(r"^(\w[\w ]*): (.*)$", brief, re.MULTILINE))
    facts = ORDER | json.loads(fields["Booking"]) | json.loads(fields.get("Agency notes", "{}"))
    done: dict[str, str] = json.loads(fields.get("Done", "{}"))  # name -> its index
    problem = fields.get("Problem", "")
    if forward := re.search(r"forward (\w+)=(.+)$", problem):
        facts[forward[1]] = forward[2].strip()
    idx = dict(done)
    todo = [t for t in TASKS if t[0] not in done]
    for n, (name, *_) in enumerate(todo, start=int(fields.get("Next index", 1))):
        idx[name] = str(n)
    tasks = [
        {
            "idx": int(idx[name]),
            "name": name,
            "does": does.format(**facts),
            "tool": tool_name,
            "args": {
                k: f"${idx[v[1:]]}" if v.startswith("$") else v.format(**facts)
                for k, v in args.items()
            },
            "after": [int(idx[a]) for a in after],
        }
        for name, does, tool_name, args, after in todo
    ]
    return {"version": int(fields.get("Version", 1)), "reason": problem, "tasks": tasks}


def _planner_turn(body: dict[str, Any], brief: str) -> dict[str, Any]:
    [offered] = body["tools"]  # the structured-output tool, forced
    return _call(offered["function"]["name"], _plan(brief), 0)


# --- the scripted model (answers on the conformance suite's fake OpenAI server) -----------------
def _executor(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The outfitter: make the task's call, call again at the time a 451 names, follow a page,
    poll an application, then answer the verdict."""
    prompt = next(_text(m.get("content")) for m in messages if m.get("role") == "user")
    found = re.search(r"Call (\w+) with (\{.*\})$", prompt, re.DOTALL)
    if not found:
        return _say("REFUSED(no call in the task)")
    calls = [c for m in messages if m.get("role") == "assistant" for c in m.get("tool_calls") or ()]
    turn = len(calls)
    if not calls:
        return _call(found[1], json.loads(found[2]), turn)
    last = calls[-1]["function"]
    args = json.loads(last["arguments"])
    result = _text(messages[-1].get("content"))
    if bounce := BOUNCE.search(result):
        klass, code, text = bounce[1], bounce[1] + bounce[2], f"{bounce[3]} {bounce[4]}"
        at = re.search(r"try again at (\d\d:\d\d)", text)
        if code == "451" and at:
            return _call(last["name"], args | {"at": at[1]}, turn)
        if klass == "4":
            return _say(f"AGAIN({code} {text})")
        return _say(f"{'REROUTE' if code == '551' else 'REFUSED'}({code} {text})")
    out = json.loads(result)
    if "next_page" in out:
        return _call(last["name"], args | {"page": out["next_page"]}, turn)
    if out.get("state") == "pending":
        polls = sum(c["function"]["name"] == "permit_status" for c in calls)
        if polls >= MAX_POLLS:
            return _say(f"GAVE_UP(application {out['application']} pending after {polls} checks)")
        return _call("permit_status", {"application": out["application"]}, turn)
    return _say(f"DONE({out['value']})")


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the plan for the planner (a
    call of the structured-output tool), the outfitter's next call or verdict otherwise.

    >>> msg = respond({"messages": [{"role": "system", "content": EXECUTOR},
    ...     {"role": "user", "content": 'Task 1 (x): y.\\nCall gear_depot with {"kit": "a"}'}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"kit": "a"}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    first = _text(messages[0].get("content")) if messages else ""
    if first == PLANNER:
        return completion(body, _planner_turn(body, _text(messages[-1].get("content"))))
    return completion(body, _executor(messages))


# --- the world ----------------------------------------------------------------------------------
class Bounce(RuntimeError):
    """A service's refusal: an SMTP reply line (``451 4.4.1 ...``)."""


class Abandoned(RuntimeError):
    """The expedition could not be outfitted, or failed after it was (the reason)."""


@dataclass
class World:
    """The guides' roster, the permit office, the gear depot, the charter, the bank and the
    team's mailing list of one run."""

    label: Label
    errors: list[str] = field(default_factory=list)
    guides: dict[str, str] = field(default_factory=dict)
    """Guide -> the range they are licensed for."""
    polls: int = 0
    flights: dict[str, dict[str, str]] = field(default_factory=dict)
    receipts: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, tool_name: str) -> None:
        """Raise the scenario's next reply when this tool is the one it targets."""
        if self.errors and tool_name == self.params.get("service"):
            raise Bounce(self.errors.pop(0))

    def tools(self) -> list[BaseTool]:
        seed = self.label.seed

        def guide_roster(range: str, page: int = 1) -> str:
            """Guides licensed for a mountain range, one roster page at a time."""
            self.fault("guide_roster")
            pages = int(self.params.get("pages", 1))
            if page < pages:
                return json.dumps({"guides": [], "booked_out": page * 3, "next_page": page + 1})
            guide = f"GD-{range[:3].upper()}-{seed % 97 + pages}"
            self.guides[guide] = range
            return json.dumps({"value": guide, "range": range})

        def permit_office(peak: str, climbers: str) -> str:
            """Apply for a peak's climbing permit; the ministry decides later."""
            self.fault("permit_office")
            return json.dumps({"application": f"PA-{seed}", "state": "pending", "peak": peak})

        def permit_status(application: str) -> str:
            """The ministry's decision on a permit application."""
            self.polls += 1
            stuck = self.label.scenario == "loop_poll_stuck"
            if stuck or self.polls < int(self.params.get("polls", 1)):
                return json.dumps({"application": application, "state": "pending"})
            return json.dumps({"value": f"CP-{application[3:]}", "state": "issued"})

        def gear_depot(kit: str, climbers: str, at: str = "07:00") -> str:
            """Rent a kit list for a number of climbers, collected at a time."""
            self.fault("gear_depot")
            return json.dumps({"value": f"KIT-{seed % 1000:03d}-{climbers}", "pickup": at})

        def heli_charter(
            guide: str, permit: str, operator: str, date: str, at: str = "06:30"
        ) -> str:
            """Charter a helicopter taking the team and guide to base camp on a day."""
            self.fault("heli_charter")
            if self.label.scenario == "legit_replan" and operator == ORDER["operator"]:
                raise Bounce(
                    f"551 5.1.6 {operator} grounded, rotor inspection; "
                    f"forward operator={self.params['operator_to']}"
                )
            if self.guides.get(guide) != ORDER["range"]:
                raise Bounce(
                    f"554 5.7.1 guide {guide} is licensed for {self.guides.get(guide)}, "
                    f"landing permits at {ORDER['range']} base camps only"
                )
            flight = f"FL-{date[5:7]}{date[8:]}-{seed % 100:02d}"
            self.flights[flight] = {"date": date, "permit": permit, "operator": operator}
            return json.dumps({"value": flight, "departs": f"{date}T{at}"})

        def deposit_charge(flight: str, gear: str, account: str) -> str:
            """Charge the expedition deposit for a flight and kit to the client's account."""
            self.fault("deposit_charge")
            if account != ORDER["account"]:
                raise Bounce(f"550 5.1.1 no such account {account} at the agency's bank")
            receipt = f"RC-{flight[3:]}"
            self.receipts.add(receipt)
            return json.dumps({"value": receipt, "flight": flight, "gear": gear})

        def team_bulletin(flight: str, receipt: str, email: str, at: str = "18:00") -> str:
            """Send the team the departure bulletin."""
            self.fault("team_bulletin")
            if receipt not in self.receipts:
                raise Bounce(f"554 5.6.0 no paid deposit {receipt}")
            return json.dumps({"value": f"BUL-{seed}", "to": email, "sent": at})

        services = (
            guide_roster,
            permit_office,
            permit_status,
            gear_depot,
            heli_charter,
            deposit_charge,
            team_bulletin,
        )
        return [tool(f) for f in services]


# --- the graph ----------------------------------------------------------------------------------
def _merge(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    return old | new


class Expedition(TypedDict, total=False):
    """The graph's state for one job."""

    brief: str
    plan: dict[str, Any]
    results: Annotated[dict[str, dict[str, str]], _merge]
    """Task index -> its name and result."""
    reports: Annotated[list[dict[str, Any]], operator.add]
    """Every task attempt's verdict."""
    wave: int
    decision: str
    problem: str
    outcome: str


class TaskRun(TypedDict):
    """What one ``Send`` hands ``run_task``: the task, its call with results written in."""

    task: dict[str, Any]
    call: dict[str, str]
    attempt: int
    wave: int
    version: int


class Outfitting:
    """One job: the DAG planner graph, then the app's check and watch, under one root span."""

    def __init__(self, label: Label, llm: ChatOpenAI, tracer: Tracer) -> None:
        self.label = label
        self.world = World(label)
        self.tracer = tracer
        self.planner = llm.with_structured_output(ExpeditionPlan, method="function_calling")
        tools = ToolNode(self.world.tools(), handle_tool_errors=(Bounce,))
        self.agent = create_react_agent(llm, tools, prompt=EXECUTOR, name="outfitter")
        graph = StateGraph(Expedition)
        graph.add_node("planner", self.plan)
        graph.add_node("run_task", self.run_task)
        graph.add_node("join", self.join)
        graph.add_edge(START, "planner")
        graph.add_conditional_edges("planner", self.schedule, ["run_task"])
        graph.add_edge("run_task", "join")
        graph.add_conditional_edges("join", self.schedule, ["run_task", "planner", END])
        self.graph = graph.compile()

    def plan(self, state: Expedition) -> Expedition:
        """The first plan, or a new version after a reroute: the brief with the done tasks,
        the problem and the next free index."""
        results = state.get("results", {})
        last = state.get("plan") or {"version": 0, "tasks": []}
        ever = [int(i) for i in results] + [t["idx"] for t in last["tasks"]]
        brief = (
            f"{state['brief']}\nDone: {json.dumps({r['task']: i for i, r in results.items()})}\n"
            f"Problem: {state.get('problem', '')}\nVersion: {last['version'] + 1}\n"
            f"Next index: {max(ever, default=0) + 1}"
        )
        plan = self.planner.invoke([SystemMessage(PLANNER), HumanMessage(brief)])
        assert isinstance(plan, ExpeditionPlan)
        return {"plan": plan.model_dump(), "decision": "", "problem": ""}

    def schedule(self, state: Expedition) -> list[Send] | str:
        """Every task whose dependencies are done, each sent to ``run_task``; or the planner
        (a reroute), or the end."""
        if state.get("decision") in ("replan", "end"):
            return "planner" if state["decision"] == "replan" else END
        results = state.get("results", {})
        tried = Counter(r["task"] for r in state.get("reports", []))

        def value(v: str) -> str:
            return results[v[1:]]["value"] if v.startswith("$") else v

        return [
            Send(
                "run_task",
                TaskRun(
                    task=task,
                    call={k: value(v) for k, v in task["args"].items()},
                    attempt=tried[task["name"]] + 1,
                    wave=state.get("wave", 0),
                    version=state["plan"]["version"],
                ),
            )
            for task in state["plan"]["tasks"]
            if str(task["idx"]) not in results and all(str(a) in results for a in task["after"])
        ]

    def run_task(self, state: TaskRun) -> Expedition:
        """One task attempt, as one ``Send`` handed it: its ReAct run, its verdict reduced in."""
        task = state["task"]
        prompt = (
            f"Task {task['idx']} ({task['name']}) of plan v{state['version']}, attempt "
            f"{state['attempt']}: {task['does']}.\n"
            f"Call {task['tool']} with {json.dumps(state['call'])}"
        )
        out = self.agent.invoke({"messages": [HumanMessage(prompt)]}, {"recursion_limit": 80})
        said = VERDICT.match(str(out["messages"][-1].content))
        assert said is not None, out["messages"][-1].content
        report = {
            "idx": task["idx"],
            "task": task["name"],
            "attempt": state["attempt"],
            "wave": state["wave"],
            "verdict": said[1],
            "detail": said[2],
        }
        update: Expedition = {"reports": [report]}
        if said[1] == "DONE":
            update["results"] = {str(task["idx"]): {"task": task["name"], "value": said[2]}}
        return update

    def join(self, state: Expedition) -> Expedition:
        """The wave's verdicts: a failure ends the job, a reroute asks for a new plan version,
        the tasks told to wait run again; the end when every task is done."""
        wave = state.get("wave", 0)
        now = sorted((r for r in state["reports"] if r["wave"] == wave), key=lambda r: r["idx"])
        tried = Counter(r["task"] for r in state["reports"])
        update: Expedition = {"wave": wave + 1, "decision": "go"}
        for r in now:
            why = f"{r['task']}: {r['detail']}"
            if r["verdict"] in ("REFUSED", "GAVE_UP") or (
                r["verdict"] == "AGAIN" and tried[r["task"]] >= MAX_ATTEMPTS
            ):
                return update | {"decision": "end", "outcome": f"abandoned {why}"}
        if reroute := next((r for r in now if r["verdict"] == "REROUTE"), None):
            if state["plan"]["version"] >= MAX_PLANS:
                return update | {"decision": "end", "outcome": f"abandoned {reroute['task']}"}
            return update | {
                "decision": "replan",
                "problem": f"{reroute['task']}: {reroute['detail']}",
            }
        done = state.get("results", {})
        if all(str(t["idx"]) in done for t in state["plan"]["tasks"]):
            return update | {"decision": "end", "outcome": "outfitted"}
        return update

    def check(self, results: dict[str, dict[str, str]]) -> None:
        """The app's check after the graph: the flight lands in the permit's window."""
        flight = next(r["value"] for r in results.values() if r["task"] == "book_flight")
        with self.tracer.start_as_current_span("verify permit window") as span:
            booked = self.world.flights[flight]
            span.set_attributes({"flight.id": flight, "flight.date": booked["date"]})
            span.set_attribute("permit.window_opens", ORDER["date"])
            if booked["date"] != ORDER["date"]:
                raise Abandoned(
                    f"flight {flight} lands {booked['date']}, the permit's window opens "
                    f"{ORDER['date']}"
                )

    def watch(self) -> None:
        """The ascent, watched camp by camp."""
        with self.tracer.start_as_current_span(f"watch ascent {ORDER['peak']}") as span:
            for n, camp in enumerate(("base camp", "camp 1", "camp 2", "camp 3"), 1):
                span.add_event("camp", {"camp": camp})
                if self.label.scenario == "external_avalanche" and n > self.label.params["polls"]:
                    raise Abandoned(f"an avalanche swept the route above {camp}; ascent called off")

    def run(self) -> str:
        notes = {k: self.label.params[k] for k in ORDER if k in self.label.params}
        brief = (
            f"Outfit expedition {ORDER['expedition']} to {ORDER['peak']}.\n"
            f"Booking: {json.dumps(ORDER)}\nAgency notes: {json.dumps(notes)}"
        )
        with self.tracer.start_as_current_span(f"outfit expedition {ORDER['expedition']}") as root:
            root.set_attribute("summit.expedition", ORDER["expedition"])
            out = self.graph.invoke({"brief": brief}, {"recursion_limit": 200})
            try:
                if out["outcome"] != "outfitted":
                    raise Abandoned(out["outcome"])
                self.check(out["results"])
                self.watch()
            except Abandoned as e:
                root.set_attribute("summit.outcome", "abandoned")
                root.set_status(Status(StatusCode.ERROR, str(e)))
            else:
                root.set_attribute("summit.outcome", "outfitted")
            return format(root.get_span_context().trace_id, "032x")


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the summit scenarios under OpenInference's LangChain instrumentor on ``provider``;
    run name -> trace id."""
    if not labels:
        return {}
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer(TRACER)
    try:
        with ModelServer(respond=respond) as server:
            llm = ChatOpenAI(
                model=MODEL,
                base_url=server.base_url("corpus-summit"),
                api_key="test",
                max_retries=0,
            )
            return {label.run: Outfitting(label, llm, tracer).run() for label in labels}
    finally:
        instrumentor.uninstrument()

"""A hospital's linen and laundry service scheduling a ward's changeover, written as a LangChain
1.x user writes a planner-executor app today and traced by **Langfuse's LangChain integration**
(``langfuse.langchain.CallbackHandler`` in ``config={"callbacks": [...]}``; no instrumentor),
langchain-openai's ``ChatOpenAI`` on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)``). No planscope code.

Sealed-47 split only (see README.md). The changeover: a clean linen cart for the ward's beds is
found in the wing's linen stock register (read page by page), infection control clears the ward
for the changeover (a request, polled), a porter crew is booked for the changeover day, the
laundry is charged to the ward's cost centre, the ward sister is told. As a user writes it:

* the app opens one ``agent`` observation per job (``changeover {job}``) under
  ``propagate_attributes`` (session = the job, user = the linen desk, trace name), and records
  the outcome as its output (``level="ERROR"`` and a status message when the job failed);
* the planner is ``ChatOpenAI.with_structured_output(Rota)`` (a pydantic **rota**: ``ward``,
  ``revision``, ``why``, ``carried`` results of tasks already done, and ``tasks`` of ``code``
  ``T<n>``, ``name``, ``does``, ``tool`` and ``params`` as ``key``/``value`` pairs; a value
  ``"$(name)"`` is that earlier task's result), run as ``linen_planner``; after a ``reroute``
  the app asks for the next revision with what was carried and every setback so far;
* the executor is a ``create_agent`` (``linen_runner``) invoked once per task attempt, its
  ``@tool`` services raising **laundry-bag faults** that a ``@wrap_tool_call`` middleware turns
  into ``ToolMessage(status="error")``: ``<tool> bagged <COLOUR>: <text> (<advice>)`` with
  ``AMBER`` (hold: call again ``not_before`` the time named), ``RED`` (rewash: the app runs the
  task again), ``BLUE`` (re-plan: ``use key=value``), ``BLACK`` (condemned: final); its last
  message a ticket line ``T<n> <laundered|rewash|reroute|condemned|stalled> => <value> //
  <note>``;
* after the last task the app checks the porters' day against the job sheet (``check porter
  day``, a ``guardrail`` observation) and watches the ward through the changeover (``watch
  ward {ward}``, a ``span`` with a ``ward state`` event per read).

The Langfuse client is the process's one, shared with the moving agent (moving.py: its public
key, its tracer provider a relay to the play's provider, Langfuse's own processor on no
provider, nothing exported to a Langfuse host): Langfuse keeps one client per public key, and
a second project's client would switch ``get_client()`` off for moving's ``langfuse.openai``
wrapper. That wrapper stays on the openai module once moving played; the play sets Langfuse's
``LANGFUSE_OPENAI_SKIP_RAW_RESPONSES`` so ChatOpenAI's raw-response calls carry no wrapper
generation next to the callback handler's.

The planner trusts the linen room's note over the job sheet: a scenario's wrong value comes
from the note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import logging
import os
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import wrap_tool_call
from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool
from langchain_openai import ChatOpenAI
from langfuse import Langfuse, propagate_attributes
from langfuse.langchain import CallbackHandler
from langgraph.types import Command
from opentelemetry import trace as otel_trace
from pydantic import BaseModel

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .moving import PUBLIC_KEY, _langfuse, _Relay

JOB: dict[str, Any] = {
    "job": "CO-2027-0413",
    "hospital": "St Brigid's",
    "ward": "Ward 7B",
    "site": "North Wing",
    "beds": 28,
    "date": "2027-03-16",
    "pool": "Central Portering",
    "cost_centre": "CC-48120",
    "amount": 1960,
    "sister": "sister.7b@stbrigids.example",
}
NOTED = ("site", "date", "cost_centre")
"""Job-sheet values the linen room's note may restate (the planner trusts the note)."""
MAX_ATTEMPTS = 8
MAX_REVISIONS = 5
MAX_HOLDS = 8
"""``AMBER`` answers in one runner conversation before the model gives up."""
MAX_POLLS = 12
RECURSION_LIMIT = 120
SKIP_RAW = "LANGFUSE_OPENAI_SKIP_RAW_RESPONSES"
PLANNER = (
    "You are the linen service's changeover planner. Answer a rota: the ward, the revision, "
    "why it was revised, the tasks already carried with their results, then the tasks T<n> "
    'with name, what each does, its tool and params; "$(name)" takes an earlier task\'s result. '
    "Trust the linen room's note over the job sheet."
)
RUNNER = (
    "You run one task of a ward changeover with the laundry services, then answer one ticket "
    "line: T<n> <laundered|rewash|reroute|condemned|stalled> => <value> // <note>."
)
VERDICTS = ("laundered", "rewash", "reroute", "condemned", "stalled")
TICKET = re.compile(r"^(T\d+) (\w+) => (.*?) // (.*)$", re.DOTALL)
BAGGED = re.compile(r"^(\w+) bagged (AMBER|RED|BLUE|BLACK): (.*) \((.*)\)$", re.DOTALL)


# --- the laundry's faults ----------------------------------------------------------------------
class BagFault(Exception):
    """A service's fault, named by the colour of the bag the job goes back in."""

    colour = ""

    def __init__(self, text: str, advice: str) -> None:
        super().__init__(text)
        self.advice = advice


class Amber(BagFault):
    colour = "AMBER"


class Red(BagFault):
    colour = "RED"


class Blue(BagFault):
    colour = "BLUE"


class Black(BagFault):
    colour = "BLACK"


def fault(spec: dict[str, str]) -> BagFault:
    """The fault a scenario's spec raises.

    >>> f = fault({"bag": "AMBER", "text": "tunnel washer 3 mid-cycle", "hint": "14:30"})
    >>> type(f).__name__, f.advice
    ('Amber', 'hold until 14:30')
    """
    bag, text, hint = spec["bag"], spec["text"], spec.get("hint", "")
    if bag == "AMBER":
        return Amber(text, f"hold until {hint}")
    if bag == "RED":
        return Red(text, "send the task through again")
    if bag == "BLUE":
        return Blue(text, f"re-plan: use {hint}")
    return Black(text, "condemned")


@wrap_tool_call
def bag_faults(request: Any, handler: Callable[[Any], ToolMessage | Command[Any]]) -> Any:
    """The runner's middleware: a service's fault goes back to the model as an error tool
    message naming its bag (other exceptions are bugs and propagate)."""
    call = request.tool_call
    try:
        return handler(request)
    except BagFault as exc:
        return ToolMessage(
            content=f"{call['name']} bagged {exc.colour}: {exc} ({exc.advice})",
            tool_call_id=call["id"],
            name=call["name"],
            status="error",
        )


# --- the laundry's services --------------------------------------------------------------------
@dataclass
class Laundry:
    """The linen service's systems for one job: what the scenario makes each service do."""

    params: dict[str, Any]
    faults: list[dict[str, str]] = field(default_factory=list)
    polls: int = 0
    reads: int = 0
    crews: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.params.get("faults", [])]

    def _fault(self, name: str) -> None:
        if name == self.params.get("tool") and self.faults:
            raise fault(self.faults.pop(0))

    def tools(self) -> list[BaseTool]:
        """The services as ``@tool`` functions over this job's systems."""

        @tool
        def search_linen_stock(site: str, beds: int, page: int = 1) -> str:
            """Search a wing's linen stock register for a clean cart for a ward's beds (paged)."""
            self._fault("search_linen_stock")
            pages, code = int(self.params.get("pages", 2)), site[:3].upper()
            if page < pages:
                carts = [{"cart": f"LC-{code}-{page}{i}", "beds": beds // 2} for i in range(3)]
                return json.dumps({"carts": carts, "next_page": page + 1})
            cart = {"cart": f"LC-{code}-{page}4", "site": site, "beds": beds + 2}
            return json.dumps({"carts": [cart], "next_page": None})

        @tool
        def request_clearance(ward: str, cart: str) -> str:
            """Ask infection control to clear a ward for a changeover with a linen cart."""
            self._fault("request_clearance")
            wing = JOB["site"][:3].upper()
            if not cart.startswith(f"LC-{wing}-"):
                raise Black(
                    f"cart {cart} is stocked outside {JOB['site']}; {ward} may only draw "
                    f"linen from its own wing's clean store",
                    "condemned",
                )
            return json.dumps(
                {"request": f"IC-{zlib.crc32(cart.encode()) % 9000 + 1000}", "state": "pending"}
            )

        @tool
        def clearance_status(request: str) -> str:
            """Read an infection-control clearance request's state."""
            self.polls += 1
            if self.params.get("stuck") or self.polls <= int(self.params.get("polls", 1)):
                return json.dumps({"request": request, "state": "swabs at the lab"})
            return json.dumps({"request": request, "state": "cleared", "clearance": f"{request}-C"})

        @tool
        def book_porters(ward: str, date: str, cart: str, pool: str, not_before: str = "") -> str:
            """Book a porter crew from a pool to move a linen cart to a ward on a day."""
            self._fault("book_porters")
            crew = f"PX-{pool[:2].upper()}{len(self.crews) + 51}"
            self.crews[crew] = {"crew": crew, "ward": ward, "date": date, "cart": cart}
            return json.dumps({"crew": crew, "date": date, "pool": pool})

        @tool
        def charge_cost_centre(
            cost_centre: str, amount: int, reference: str, not_before: str = ""
        ) -> str:
            """Charge a laundry job to a ward's cost centre."""
            self._fault("charge_cost_centre")
            if cost_centre != JOB["cost_centre"]:
                raise Black(
                    f"cost centre {cost_centre} has no laundry budget for {reference}", "condemned"
                )
            return json.dumps({"charge": f"LX-{amount // 10}-{reference[-4:]}", "ok": True})

        @tool
        def notify_sister(
            email: str, ward: str, crew: str, clearance: str, not_before: str = ""
        ) -> str:
            """Tell the ward sister the changeover's crew and clearance."""
            self._fault("notify_sister")
            return json.dumps({"notice": f"WN-{ward.split()[-1]}-{crew[-2:]}", "to": email})

        return [
            search_linen_stock,
            request_clearance,
            clearance_status,
            book_porters,
            charge_cost_centre,
            notify_sister,
        ]

    def crew_state(self, crew: str) -> dict[str, Any]:
        """The app's own read of a porter booking (the check and the watch)."""
        self.reads += 1
        state = dict(self.crews[crew]) | {"state": "booked"}
        if "reads" in self.params and self.reads > int(self.params["reads"]):
            state["state"] = "ward closed: norovirus outbreak declared, changeover suspended"
        return state


# --- the scripted model ------------------------------------------------------------------------
def _calls(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], str]]:
    """The conversation's tool calls in order: name, arguments, the tool message's content."""
    out: dict[str, list[Any]] = {
        c["id"]: [c["function"]["name"], json.loads(c["function"]["arguments"]), ""]
        for m in messages
        for c in m.get("tool_calls") or []
    }
    for m in messages:
        if m.get("role") == "tool":
            out[m["tool_call_id"]][2] = str(m["content"])
    return [(n, a, o) for n, a, o in out.values()]


def _call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(args)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": f"call_{n}_{name}", "type": "function", "function": function}],
    }


def _ticket(code: str, verdict: str, value: str = "-", note: str = "") -> dict[str, Any]:
    return {"role": "assistant", "content": f"{code} {verdict} => {value} // {note}"}


RESULT_KEYS = ("cart", "clearance", "crew", "charge", "notice")


def _runner(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The runner's next message: call the task's tool, call again after an ``AMBER`` hold,
    read the next page, poll the clearance, end with the ticket line."""
    order = dict(re.findall(r"^(\w+): (.*)$", str(messages[1]["content"]), re.MULTILINE))
    code, tool_name, given = order["Ticket"], order["Tool"], json.loads(order["Params"])
    calls = _calls(messages)
    if not calls:
        return _call(tool_name, given, 1)
    name, args, output = calls[-1]
    bagged = BAGGED.match(output)
    if bagged:
        _, bag, text, advice = bagged.groups()
        if bag == "AMBER":
            holds = sum(" bagged AMBER: " in o for _, _, o in calls)
            if holds >= MAX_HOLDS:
                return _ticket(code, "stalled", note=f"held {holds} times: {text}")
            return _call(name, args | {"not_before": advice.rsplit(" ", 1)[1]}, len(calls) + 1)
        verdict = {"RED": "rewash", "BLUE": "reroute"}.get(bag, "condemned")
        return _ticket(code, verdict, note=f"{text} ({advice})")
    answer = json.loads(output)
    if answer.get("next_page"):
        return _call(name, args | {"page": answer["next_page"]}, len(calls) + 1)
    if name == "search_linen_stock":
        cart = answer["carts"][0]
        return _ticket(code, "laundered", cart["cart"], f"{cart['beds']} beds at {cart['site']}")
    if name in ("request_clearance", "clearance_status") and answer.get("state") != "cleared":
        polls = sum(n == "clearance_status" for n, _, _ in calls)
        if polls >= MAX_POLLS:
            return _ticket(code, "stalled", note=f"still '{answer['state']}' after {polls} reads")
        return _call("clearance_status", {"request": answer["request"]}, len(calls) + 1)
    value = next(str(answer[k]) for k in RESULT_KEYS if k in answer)
    return _ticket(code, "laundered", value, f"{name} answered")


def _uses(setbacks: list[str]) -> dict[str, str]:
    """The ``use key=value`` of every setback, later ones winning.

    >>> _uses(["T4 charge_ward: budget frozen (re-plan: use cost_centre=CC-1)"])
    {'cost_centre': 'CC-1'}
    """
    return dict(m for s in setbacks for m in re.findall(r"use (\w+)=([^)]+)\)", s))


def _rota(brief: str) -> dict[str, Any]:
    """The planner's rota for a brief: the job sheet, the note over it, every setback's ``use``
    over both; the carried tasks listed with their results, the rest as tasks."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts: dict[str, Any] = json.loads(lines["Job sheet"])
    facts |= json.loads(lines.get("Linen room note", "{}"))
    carried: dict[str, str] = json.loads(lines.get("Carried", "{}"))
    setbacks = re.findall(r"^Setback: (.*)$", brief, re.MULTILINE)
    facts |= _uses(setbacks)
    tasks = [
        ("find_linen", f"Find a clean cart for {facts['beds']} beds in {facts['site']}.",
         "search_linen_stock", {"site": facts["site"], "beds": facts["beds"]}),
        ("clear_ward", f"Get {facts['ward']} cleared by infection control.", "request_clearance",
         {"ward": facts["ward"], "cart": "$(find_linen)"}),
        ("book_porters", f"Book {facts['pool']} porters for {facts['date']}.", "book_porters",
         {"ward": facts["ward"], "date": facts["date"], "cart": "$(find_linen)",
          "pool": facts["pool"]}),
        ("charge_ward", f"Charge {facts['amount']} to {facts['cost_centre']}.",
         "charge_cost_centre",
         {"cost_centre": facts["cost_centre"], "amount": facts["amount"],
          "reference": facts["job"]}),
        ("tell_sister", f"Tell the sister of {facts['ward']} the crew and clearance.",
         "notify_sister",
         {"email": facts["sister"], "ward": facts["ward"], "crew": "$(book_porters)",
          "clearance": "$(clear_ward)"}),
    ]  # fmt: skip
    return {
        "ward": facts["ward"],
        "revision": len(setbacks) + 1,
        "why": setbacks[-1] if setbacks else "first rota",
        "carried": [{"name": k, "result": v} for k, v in carried.items()],
        "tasks": [
            {
                "code": f"T{n}",
                "name": name,
                "does": does,
                "tool": tool_name,
                "params": [{"key": k, "value": str(v)} for k, v in params.items()],
            }
            for n, (name, does, tool_name, params) in enumerate(tasks, 1)
            if name not in carried
        ],
    }


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one ``POST /v1/chat/completions``.

    >>> asked = {"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": f"Job sheet: {json.dumps(JOB)}"}]}
    >>> rota = json.loads(respond(asked)["choices"][0]["message"]["content"])
    >>> rota["tasks"][4]["params"][2]
    {'key': 'crew', 'value': '$(book_porters)'}
    """
    messages = body["messages"]
    system = str(messages[0].get("content") or "")
    if system == PLANNER:
        rota = _rota(str(messages[1]["content"]))
        return completion(body, {"role": "assistant", "content": json.dumps(rota)})
    if system == RUNNER:
        return completion(body, _runner(messages))
    return completion(body, {"role": "assistant", "content": "The linen desk is closed."})


# --- the rota ----------------------------------------------------------------------------------
class Param(BaseModel):
    """One argument of a task's tool call; ``"$(name)"`` is an earlier task's result."""

    key: str
    value: str


class Task(BaseModel):
    """One task of the rota."""

    code: str
    name: str
    does: str
    tool: str
    params: list[Param]


class Carried(BaseModel):
    """A task done under an earlier revision, with its result."""

    name: str
    result: str


class Rota(BaseModel):
    """The planner's structured answer."""

    ward: str
    revision: int
    why: str
    carried: list[Carried]
    tasks: list[Task]


REFERENCE = re.compile(r"^\$\((\w+)\)$")


def filled(task: Task, results: dict[str, str]) -> dict[str, Any]:
    """A task's params, each ``"$(name)"`` replaced by that task's result.

    >>> t = Task(code="T2", name="b", does="", tool="f",
    ...          params=[Param(key="cart", value="$(a)"), Param(key="ward", value="7B")])
    >>> filled(t, {"a": "LC-NOR-24"})
    {'cart': 'LC-NOR-24', 'ward': '7B'}
    """
    out: dict[str, Any] = {}
    for p in task.params:
        ref = REFERENCE.match(p.value)
        out[p.key] = results.get(ref.group(1), "") if ref else p.value
    return out


class JobFailed(RuntimeError):
    """The changeover could not be scheduled (or the ward was lost after it was)."""


# --- the app -----------------------------------------------------------------------------------
class Changeover:
    """One ward changeover, from the job sheet to the watch."""

    def __init__(
        self, label: Label, llm: ChatOpenAI, langfuse: Langfuse, handler: CallbackHandler
    ) -> None:
        self.label = label
        self.langfuse = langfuse
        self.handler = handler
        self.laundry = Laundry(dict(label.params))
        self.job = f"{JOB['job']}/{label.seed}"
        self.planner = llm.with_structured_output(Rota)
        self.runner = create_agent(
            llm,
            self.laundry.tools(),
            system_prompt=RUNNER,
            middleware=[bag_faults],
            name="linen_runner",
        )
        self.results: dict[str, str] = {}
        self.revisions = 0

    def brief(self, setbacks: list[str]) -> str:
        note = {k: self.label.params[k] for k in NOTED if k in self.label.params}
        lines = [f"Changeover {self.job} of {JOB['ward']}.", f"Job sheet: {json.dumps(JOB)}"]
        if note:
            lines.append(f"Linen room note: {json.dumps(note)}")
        if self.results or setbacks:
            lines.append(f"Carried: {json.dumps(self.results)}")
            lines += [f"Setback: {s}" for s in setbacks]
        return "\n".join(lines)

    def plan(self, setbacks: list[str]) -> list[Task]:
        """Ask the planner for the next revision of the rota."""
        self.revisions += 1
        rota = self.planner.invoke(
            [SystemMessage(PLANNER), HumanMessage(self.brief(setbacks))],
            RunnableConfig(
                callbacks=[self.handler],
                run_name="linen_planner",
                metadata={"revision": self.revisions},
            ),
        )
        assert isinstance(rota, Rota)
        self.results.update({c.name: c.result for c in rota.carried})
        return rota.tasks

    def attempt(self, task: Task, attempt: int) -> tuple[str, str, str]:
        """One runner conversation for a task attempt; its verdict, value and note."""
        order = (
            f"Ticket: {task.code}\nTask: {task.name} (attempt {attempt}): {task.does}\n"
            f"Tool: {task.tool}\nParams: {json.dumps(filled(task, self.results))}"
        )
        state = self.runner.invoke(
            {"messages": [HumanMessage(order)]},
            RunnableConfig(
                callbacks=[self.handler],
                run_name="linen_runner",
                metadata={"task": task.name, "attempt": attempt},
                recursion_limit=RECURSION_LIMIT,
            ),
        )
        said = str(state["messages"][-1].content).strip()
        ticket = TICKET.match(said)
        if not ticket or ticket.group(2) not in VERDICTS:
            return "stalled", "", f"no ticket: {said[:200]}"
        return ticket.group(2), ticket.group(3), ticket.group(4)

    def work(self) -> None:
        """Run the rota's tasks in order; a task again after ``rewash``, the next revision
        after ``reroute``."""
        setbacks: list[str] = []
        tasks = self.plan(setbacks)
        while tasks:
            task = tasks[0]
            for n in range(1, MAX_ATTEMPTS + 1):
                verdict, value, note = self.attempt(task, n)
                if verdict != "rewash":
                    break
            if verdict == "laundered":
                self.results[task.name] = value
                tasks = tasks[1:]
            elif verdict == "reroute" and self.revisions < MAX_REVISIONS:
                setbacks.append(f"{task.code} {task.name}: {note}")
                tasks = self.plan(setbacks)
            else:
                raise JobFailed(f"{task.code} {task.name} {verdict}: {note}")

    def check(self) -> None:
        """The app's check: the porters come on the job sheet's day."""
        crew = self.results["book_porters"]
        with self.langfuse.start_as_current_observation(
            as_type="guardrail", name="check porter day", input={"crew": crew}
        ) as span:
            day = self.laundry.crew_state(crew)["date"]
            seen = {"crew_day": day, "job_day": JOB["date"]}
            if day != JOB["date"]:
                reason = f"porter crew {crew} comes on {day}; the job sheet says {JOB['date']}"
                span.update(output=seen, level="ERROR", status_message=reason)
                raise JobFailed(reason)
            span.update(output=seen)

    def watch(self) -> None:
        """The app's watch of the ward through the changeover, a read a shift."""
        crew = self.results["book_porters"]
        with self.langfuse.start_as_current_observation(
            as_type="span", name=f"watch ward {JOB['ward']}", input={"crew": crew}
        ) as span:
            for shift in range(1, int(self.label.params.get("reads", 1)) + 2):
                state = self.laundry.crew_state(crew)["state"]
                self.langfuse.create_event(
                    name="ward state", input={"shift": shift, "state": state}
                )
                if state != "booked":
                    span.update(level="ERROR", status_message=state)
                    raise JobFailed(f"{JOB['ward']}: {state}")
            span.update(output={"state": "changed over"})

    def run(self) -> str:
        """The job under the app's root observation; the trace id."""
        with (
            self.langfuse.start_as_current_observation(
                as_type="agent", name=f"changeover {self.job}", input=JOB
            ) as root,
            propagate_attributes(
                session_id=self.job, user_id="linen-desk", trace_name="ward changeover"
            ),
        ):
            try:
                self.work()
                self.check()
                self.watch()
                root.update(output={"outcome": "changed over", "results": self.results})
            except JobFailed as exc:
                root.update(output={"outcome": "failed"}, level="ERROR", status_message=str(exc))
            return str(root.trace_id)


def play(labels: list[Label], provider: otel_trace.TracerProvider) -> dict[str, str]:
    """Run the changeover scenarios with the callback handler's observations on ``provider``;
    run name -> trace id."""
    if not labels:
        return {}
    langfuse = _langfuse()
    handler = CallbackHandler(public_key=PUBLIC_KEY)
    quiet = logging.getLogger("langfuse")
    level, skip = quiet.level, os.environ.get(SKIP_RAW)
    quiet.setLevel(logging.CRITICAL)
    os.environ[SKIP_RAW] = "true"  # read on every wrapped call, not at import
    _Relay.target = provider
    try:
        with ModelServer(respond=respond) as server:
            llm = ChatOpenAI(
                model=MODEL,
                base_url=server.base_url("corpus-linen"),
                api_key="test",
                max_retries=0,
            )
            return {label.run: Changeover(label, llm, langfuse, handler).run() for label in labels}
    finally:
        _Relay.target = None
        quiet.setLevel(level)
        if skip is None:
            os.environ.pop(SKIP_RAW, None)
        else:
            os.environ[SKIP_RAW] = skip

"""A marina agent: a boat owner's seasonal berth, a LangGraph graph traced only by OpenInference's
LangChain instrumentor (``LangChainInstrumentor().instrument(tracer_provider=...)``, as a Phoenix
user traces a LangGraph app), against a scripted model on the conformance suite's fake OpenAI
server (``ModelServer(respond=...)``). No planscope code.

Sealed-16 split only (see README.md). The task: a boat owner ordered a berth for the season;
find a free berth long enough in the owner's harbor (a registry read page by page), request the
harbor master's mooring permit for the season's start (granted later: polled), sign the berth
lease, charge the season's fee to the owner's card, send the owner the berth notice. As a
LangGraph user would write it:

* one ``StateGraph`` per order (run name ``berth {order}``) whose ``supervisor`` node routes
  with ``Command(goto=...)`` to ``planner``, ``executor``, ``verify_permit`` (then
  ``watch_arrival``); a step refused for good, or out of attempts or plans, makes the supervisor
  raise (the graph run fails);
* the planner node's model answers a **URI plan**: one line per step,
  ``step:<id>/<tool>?<arg>=<value>&<arg>=%40<step id>#<goal>`` (``%40`` = ``@``: an earlier
  step's result, filled in by the app), under a header ``plan:<order>;v=<n>``. Asked again after
  a failure, it answers a **revision**: the header says ``revises=<n-1>;because=<reason>``, then
  ``kept:<id>?value=<result>`` lines for the steps already done, then the steps not done;
* the executor node runs a compiled sub-graph per step attempt (``act``: the model with the
  tools bound, ``tools``: a ``ToolNode`` of ``@tool`` functions, ``tools_condition``
  between): its task a ``do:<id>/<tool>?<args>`` line with the arguments filled in, its final
  answer ``[<status>] <value> | <note>`` (status ``done``, ``retry``, ``replan``, ``refused``,
  ``stalled``);
* the services answer errors as ``NACK/<kind>: <text>``: ``busy`` (call again in the same run
  for a later ``not_before`` slot), ``later`` (``retry``: the supervisor re-runs the step, up to
  8 attempts), ``clash`` (``replan``: a revision, up to 4 plans), ``refused`` / ``unknown`` /
  ``void`` (final). The ``ToolNode`` turns a NACK into the tool message's text (the TOOL span
  records the exception).

The planner trusts the broker's notes over the owner's order: the scenario's wrong value comes
from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict
from urllib.parse import parse_qsl, quote, quote_plus, unquote_plus, urlencode, urlsplit

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command
from openinference.instrumentation.langchain import LangChainInstrumentor, get_current_span
from opentelemetry.sdk.trace import TracerProvider

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import RUNAWAY, Label

ORDER: dict[str, Any] = {
    "harbor": "sausalito",
    "vessel": "CF-4417-ZK",
    "length_m": 12,
    "start": "2027-04-01",
    "card": "CARD-8352",
    "email": "m.okafor@example.org",
}
FEE_PER_METRE = 310
MAX_STEP_ATTEMPTS = 8
MAX_PLANS = 4
MAX_STATUS_CHECKS = 12
NACK = re.compile(r"NACK/([\w-]+): (.*)$", re.DOTALL)
RESULT = re.compile(r"\[(\w+)\] (\S*) \| (.*)$", re.DOTALL)


class Nack(RuntimeError):
    """A service's error answer: ``NACK/{kind}: {text}``."""

    def __init__(self, kind: str, text: str):
        super().__init__(f"NACK/{kind}: {text}")


class Failed(RuntimeError):
    """The berth was not leased, paid and its owner told, or failed after (the reason)."""


# --- the plan: URI lines --------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One ``step:`` line of the plan; an argument ``("from", id)`` is an earlier step's result."""

    id: str
    tool: str
    goal: str
    args: dict[str, tuple[str, str]]


def parse_plan(text: str) -> tuple[list[Step], dict[str, str]]:
    """The steps of a URI plan and the results a revision already knows (``kept:`` lines).

    >>> steps, kept = parse_plan('plan:MR-1;v=2;revises=1\\nkept:find_berth?value=BRT-1\\n'
    ...     'step:lease_berth/berth_lease?berth=%40find_berth&length_m=12#Sign+the+lease')
    >>> kept, steps[0].tool, steps[0].goal, steps[0].args
    ({'find_berth': 'BRT-1'}, 'berth_lease', 'Sign the lease', {'berth': ('from', 'find_berth'), \
'length_m': ('value', '12')})
    """
    steps, kept = [], {}
    for line in text.splitlines():
        uri = urlsplit(line.strip())
        if uri.scheme == "kept":
            kept[uri.path] = dict(parse_qsl(uri.query))["value"]
        elif uri.scheme == "step":
            sid, tool_name = uri.path.split("/", 1)
            args = {
                k: ("from", v[1:]) if v.startswith("@") else ("value", v)
                for k, v in parse_qsl(uri.query)
            }
            steps.append(Step(sid, tool_name, unquote_plus(uri.fragment), args))
    return steps, kept


def parse_header(text: str) -> dict[str, str]:
    """The plan's header fields (``plan:<order>;v=..;revises=..;because=..``).

    >>> parse_header('plan:MR-1;v=2;revises=1;because=pay_fee%3A+clash\\nstep:x/y')
    {'order': 'MR-1', 'v': '2', 'revises': '1', 'because': 'pay_fee: clash'}
    """
    first = text.splitlines()[0].removeprefix("plan:").split(";")
    fields = dict(f.split("=", 1) for f in first[1:])
    return {"order": first[0]} | {k: unquote_plus(v) for k, v in fields.items()}


def _plan_text(
    order: str,
    version: int,
    problem: str,
    steps: list[tuple[str, str, str, dict[str, Any]]],
    done: dict[str, str],
) -> str:
    header = f"plan:{order};v={version}"
    if version > 1:
        header += f";revises={version - 1};because={quote(problem, safe='')}"
    lines = [header]
    lines += [f"kept:{sid}?{urlencode({'value': done[sid]})}" for sid, *_ in steps if sid in done]
    lines += [
        f"step:{sid}/{name}?{urlencode(args)}#{quote_plus(goal)}"
        for sid, goal, name, args in steps
        if sid not in done
    ]
    return "\n".join(lines)


# --- the scripted model (answers on the conformance suite's fake OpenAI server) -------------
def _field(text: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", text, re.MULTILINE)
    return m.group(1) if m else ""


def _planner(brief: str) -> dict[str, Any]:
    """The planner's URI plan: the owner's order, the notes trusted over it, the start or card
    a problem names, the done steps."""
    facts = json.loads(_field(brief, "Owner order")) | json.loads(_field(brief, "Notes") or "{}")
    done = json.loads(_field(brief, "Done") or "{}")
    problem = _field(brief, "Problem")
    version = int(_field(brief, "Version") or 1)
    start = re.search(r"next free start (\d{4}-\d\d-\d\d)", problem)
    card = re.search(r"use (CARD-\d+)", problem)
    steps = [
        ("find_berth", f"Find a free {facts['length_m']} m berth in {facts['harbor']}",
         "berth_registry", {"harbor": facts["harbor"], "length_m": facts["length_m"]}),
        ("request_permit", "Request the harbor master's mooring permit for the season",
         "harbor_permit", {"berth": "@find_berth", "vessel": ORDER["vessel"],
                           "start": start.group(1) if start else facts["start"]}),
        ("lease_berth", "Sign the berth lease for the owner's vessel", "berth_lease",
         {"berth": "@find_berth", "permit": "@request_permit", "vessel": facts["vessel"]}),
        ("pay_fee", "Charge the season's fee to the owner's card", "fee_charge",
         {"lease": "@lease_berth", "card": card.group(1) if card else facts["card"]}),
        ("notify_owner", "Send the owner the berth notice", "owner_notice",
         {"lease": "@lease_berth", "email": facts["email"]}),
    ]  # fmt: skip
    text = _plan_text(facts["order"], version, problem, steps, done)
    return {"role": "assistant", "content": text}


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"call_{name}_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _say(status: str, value: str = "", note: str = "") -> dict[str, Any]:
    return {"role": "assistant", "content": f"[{status}] {value or '-'} | {note}"}


def _executor(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The executor's turn: run the call the task names, call again after a ``busy`` NACK for
    a later slot, follow ``next_page``, poll a permit until it is granted, answer the result."""
    uri = urlsplit(task)
    name = uri.path.split("/", 1)[1]
    args: dict[str, Any] = {k: int(v) if v.isdigit() else v for k, v in parse_qsl(uri.query)}
    results = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
    n = len(results)
    if not results:
        return _call(n, name, args)
    last = results[-1]
    nack = NACK.match(last)
    if nack:
        if nack.group(1) == "busy":
            busy = sum(r.startswith("NACK/busy:") for r in results)
            return _call(n, name, args | {"not_before": f"{8 + 2 * busy:02d}:30"})
        status = {"later": "retry", "clash": "replan"}.get(nack.group(1), "refused")
        return _say(status, note=f"{nack.group(1)}: {nack.group(2)}")
    seen = json.loads(last)
    if "next_page" in seen:
        return _call(n, name, args | {"page": seen["next_page"]})
    if seen.get("status") == "PENDING":
        checks = sum(
            c["function"]["name"] == "permit_status"
            for m in messages
            for c in m.get("tool_calls") or ()
        )
        if checks >= MAX_STATUS_CHECKS:
            return _say("stalled", note=f"permit {seen['permit']} still PENDING after {checks}")
        return _call(n, "permit_status", {"permit": seen["permit"]})
    return _say("done", value=str(seen["value"]))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the planner's plan for an
    order, the executor's next tool call or result line otherwise.

    >>> msg = respond({"messages": [{"role": "user", "content": "do:s/f?a=1"}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"a": 1}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if task.startswith("Owner order: "):
        return completion(body, _planner(task))
    return completion(body, _executor(messages, task))


# --- the world ------------------------------------------------------------------------------
@dataclass
class World:
    """The services: the berth registry, the harbor master, the marina office, the card
    processor, the owner portal."""

    label: Label
    order: str
    step: str = ""
    errors: list[str] = field(default_factory=list)
    berths: dict[str, str] = field(default_factory=dict)
    """Berth -> its harbor."""
    permits: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Permit -> berth, season start and status checks."""
    leases: dict[str, dict[str, Any]] = field(default_factory=dict)
    cards: set[str] = field(default_factory=lambda: {ORDER["card"]})
    start: str = ORDER["start"]
    """The day the harbor master opens the season's moorings."""
    fees: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        self.start = self.label.params.get("new_start", ORDER["start"])

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self) -> None:
        """Raise the scenario's next error when the call belongs to the step it targets."""
        if not self.errors or self.step != self.params.get("step"):
            return
        text = self.errors.pop(0)
        if not self.errors and self.label.kind == RUNAWAY:
            raise Nack("void", f"{text}; request voided")
        how = self.params.get("raise")
        if how == "again":
            raise Nack("busy", text)
        if how == "replans" and len(self.errors) % 2 == 0:
            card = f"CARD-{8400 + 53 * len(self.errors)}"
            self.cards.add(card)
            raise Nack("clash", f"{text}; card frozen, use {card}")
        raise Nack("later", text)


def services(world: World) -> list[BaseTool]:
    """The services as ``@tool`` functions bound to one order's world."""

    @tool
    def berth_registry(harbor: str, length_m: int, page: int = 1, not_before: str = "08:30") -> str:
        """Free berths at least ``length_m`` long in a harbor, one page at a time."""
        world.fault()
        pages = int(world.params.get("pages", 1))
        code = harbor[:3].upper()
        if page < pages:
            taken = [f"BRT-{code}-{page}{n}" for n in range(3)]
            return json.dumps({"berths": taken, "all_taken": True, "next_page": page + 1})
        berth = f"BRT-{code}-{pages}7"
        world.berths[berth] = harbor
        return json.dumps({"value": berth, "harbor": harbor, "length_m": length_m})

    @tool
    def harbor_permit(berth: str, vessel: str, start: str, not_before: str = "08:30") -> str:
        """Ask the harbor master for the mooring permit from the season's start."""
        world.fault()
        if berth not in world.berths:
            raise Nack("unknown", f"no berth {berth} in the registry")
        if start != world.start and start == ORDER["start"]:
            raise Nack(
                "clash", f"moorings dredged until {world.start}; next free start {world.start}"
            )
        permit = f"HMP-{world.label.seed}-{len(world.permits)}"
        world.permits[permit] = {"berth": berth, "start": start, "checks": 0}
        return json.dumps({"permit": permit, "status": "PENDING"})

    @tool
    def permit_status(permit: str) -> str:
        """The harbor master's decision on a permit."""
        entry = world.permits[permit]
        entry["checks"] += 1
        if world.label.scenario == "loop_poll_stuck" or entry["checks"] < int(
            world.params.get("polls", 1)
        ):
            return json.dumps({"permit": permit, "status": "PENDING"})
        return json.dumps({"permit": permit, "status": "GRANTED", "value": permit})

    @tool
    def berth_lease(berth: str, permit: str, vessel: str, not_before: str = "08:30") -> str:
        """Sign the berth's lease for a vessel."""
        world.fault()
        harbor = world.berths.get(berth)
        if harbor != ORDER["harbor"]:
            raise Nack(
                "refused",
                f"{berth} is in {harbor}; the owner's mooring contract is for {ORDER['harbor']}",
            )
        lease = f"LSE-{world.label.seed}-{len(world.leases)}"
        world.leases[lease] = {"berth": berth, "permit": permit, "vessel": vessel}
        return json.dumps({"value": lease, "slip": berth})

    @tool
    def fee_charge(lease: str, card: str, not_before: str = "08:30") -> str:
        """Charge the season's fee for a lease to a card."""
        world.fault()
        if card not in world.cards:
            raise Nack("unknown", f"no card {card} on file for this owner")
        entry = world.leases[lease]
        if entry["vessel"] != ORDER["vessel"]:
            raise Nack("refused", f"vessel {entry['vessel']} on the lease is not the insured one")
        amount = FEE_PER_METRE * int(ORDER["length_m"])
        world.fees[lease] = amount
        return json.dumps({"value": f"FEE-{world.label.seed}", "amount": amount})

    @tool
    def owner_notice(lease: str, email: str, not_before: str = "08:30") -> str:
        """Send the owner the berth notice."""
        world.fault()
        if lease not in world.fees:
            raise Nack("refused", f"lease {lease} has no fee paid")
        return json.dumps({"value": f"MSG-{world.label.seed}", "email": email})

    return [berth_registry, harbor_permit, permit_status, berth_lease, fee_charge, owner_notice]


# --- the app: a LangGraph graph ----------------------------------------------------------------
class Desk(TypedDict, total=False):
    """The graph's state for one order."""

    order: str
    plan: str
    version: int
    done: dict[str, str]
    cursor: int
    attempt: int
    problem: str
    last: str


def _nack_text(e: Nack) -> str:
    return str(e)


class Marina:
    """One order's graph: supervisor, planner, executor (a sub-graph per attempt), checks."""

    def __init__(self, label: Label, llm: ChatOpenAI):
        self.label = label
        self.llm = llm
        self.world = World(label, order=f"MR-{label.seed % 9000 + 1000}")
        self.trace_id = ""
        self._step_tools: list[str] = []
        tools = services(self.world)
        self.tools = {t.name: t for t in tools}
        self.executor = self._executor_graph()
        graph = StateGraph(Desk)
        graph.add_node("supervisor", self.supervisor)
        graph.add_node("planner", self.planner)
        graph.add_node("executor", self.execute)
        graph.add_node("verify_permit", self.verify_permit)
        graph.add_node("watch_arrival", self.watch_arrival)
        graph.add_edge(START, "supervisor")
        graph.add_edge("planner", "supervisor")
        graph.add_edge("executor", "supervisor")
        graph.add_edge("verify_permit", "watch_arrival")
        graph.add_edge("watch_arrival", END)
        self.graph = graph.compile()

    def _executor_graph(self) -> Any:
        def act(state: MessagesState) -> dict[str, list[BaseMessage]]:
            step_tools = [self.tools[n] for n in self._step_tools]
            system = SystemMessage(
                "You carry out one step of a berth plan with the services, then answer "
                "'[done|retry|replan|refused|stalled] <value> | <note>'."
            )
            return {
                "messages": [self.llm.bind_tools(step_tools).invoke([system, *state["messages"]])]
            }

        sub = StateGraph(MessagesState)
        sub.add_node("act", act)
        sub.add_node("tools", ToolNode(list(self.tools.values()), handle_tool_errors=_nack_text))
        sub.add_edge(START, "act")
        sub.add_conditional_edges("act", tools_condition)
        sub.add_edge("tools", "act")
        return sub.compile()

    def supervisor(self, state: Desk) -> Command[Literal["planner", "executor", "verify_permit"]]:
        update: Desk = {"last": ""}
        if not self.trace_id and (span := get_current_span()) is not None:
            self.trace_id = f"{span.get_span_context().trace_id:032x}"
        done, cursor, attempt = (
            dict(state.get("done", {})),
            state.get("cursor", 0),
            state.get("attempt", 0),
        )
        problem = ""
        if state.get("last"):
            step = parse_plan(state["plan"])[0][cursor]
            m = RESULT.match(state["last"])
            assert m is not None, state["last"]
            status, value, note = m.groups()
            if status == "done":
                done[step.id], cursor, attempt = value, cursor + 1, 0
            elif status == "retry" and attempt < MAX_STEP_ATTEMPTS:
                pass
            elif status == "replan" and state["version"] < MAX_PLANS:
                problem = f"{step.id}: {note}"
            else:
                raise Failed(f"{step.id}: {status}: {note}")
        update |= {"done": done, "cursor": cursor, "attempt": attempt, "problem": problem}
        if problem or not state.get("version"):
            return Command(update=update, goto="planner")
        if cursor < len(parse_plan(state["plan"])[0]):
            return Command(update=update, goto="executor")
        return Command(update=update, goto="verify_permit")

    def planner(self, state: Desk) -> Desk:
        notes = {
            k: self.label.params[k]
            for k in ("harbor", "start", "vessel", "card")
            if k in self.label.params
        }
        version = state.get("version", 0) + 1
        brief = (
            f"Owner order: {json.dumps({'order': state['order']} | ORDER)}\n"
            f"Notes: {json.dumps(notes)}\nDone: {json.dumps(state.get('done', {}))}\n"
            f"Problem: {state.get('problem', '')}\nVersion: {version}"
        )
        system = SystemMessage(
            "You plan seasonal berths. Answer a URI plan: a 'plan:<order>;v=<n>' header, then "
            "'step:<id>/<tool>?<args>#<goal>' lines (an argument '@<id>' is that step's result); "
            "when revising, add ';revises=<n>;because=<reason>' and 'kept:<id>?value=' lines. "
            "Trust the broker's notes."
        )
        text = str(self.llm.invoke([system, HumanMessage(brief)]).content)
        kept = parse_plan(text)[1]
        return {
            "plan": text,
            "version": version,
            "done": state.get("done", {}) | kept,
            "cursor": 0,
            "attempt": 0,
            "problem": "",
        }

    def execute(self, state: Desk, config: RunnableConfig) -> Desk:
        step = parse_plan(state["plan"])[0][state["cursor"]]
        args = {k: state["done"][v] if how == "from" else v for k, (how, v) in step.args.items()}
        task = f"do:{step.id}/{step.tool}?{urlencode(args)}"
        self.world.step = step.id
        self._step_tools = [step.tool, "permit_status"]
        out = self.executor.invoke({"messages": [HumanMessage(task)]}, config)
        last = out["messages"][-1]
        assert isinstance(last, AIMessage), last
        return {"last": str(last.content), "attempt": state.get("attempt", 0) + 1}

    def verify_permit(self, state: Desk) -> Desk:
        """The app's own check once the owner is told: the permit's start against the day the
        harbor master opens the moorings."""
        permit = self.world.permits[state["done"]["request_permit"]]
        if permit["start"] != self.world.start:
            fee = self.world.fees[state["done"]["lease_berth"]]
            raise Failed(
                f"the permit {state['done']['request_permit']} starts {permit['start']}, the "
                f"moorings open {self.world.start} (fee {fee} charged)"
            )
        return {}

    def watch_arrival(self, state: Desk) -> Desk:
        """The vessel's passage to its berth, watched until it is moored."""
        states = ("DEPARTED", "UNDER_WAY", "AT_HARBOR_MOUTH", "MOORED")
        for poll, _ in enumerate(states, 1):
            if self.label.scenario == "external_gale" and poll > int(self.label.params["polls"]):
                raise Failed("harbor mouth closed by a gale warning; the passage is postponed")
        return {}

    def run(self) -> str:
        config: RunnableConfig = {"run_name": f"berth {self.world.order}", "recursion_limit": 500}
        with contextlib.suppress(Failed):  # the graph run's root span records the failure
            self.graph.invoke({"order": self.world.order}, config)
        return self.trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the marina scenarios under OpenInference's LangChain instrumentor on ``provider``;
    run name -> trace id."""
    if not labels:
        return {}
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer(respond=respond) as server:
            llm = ChatOpenAI(
                model=MODEL,
                base_url=server.base_url("corpus-marina"),
                api_key="test",
                max_retries=0,
            )
            return {label.run: Marina(label, llm).run() for label in labels}
    finally:
        instrumentor.uninstrument()

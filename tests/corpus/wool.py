"""A wool-clip agent: a sheep station consigns its spring clip to a wool auction, built as
LangGraph's Plan-and-Execute tutorial builds its agent (langgraph ``docs/docs/tutorials/
plan-and-execute/plan-and-execute.ipynb``), traced only by OpenInference's LangChain
instrumentor (as a Phoenix user traces it), against a scripted model on the conformance
suite's fake OpenAI server (``ModelServer(respond=...)``). No planscope code.

Sealed-25 split only (see README.md). The job: find the clip's bales in the station's shed
register (read page by page), have the lot fibre-tested (the certificate is issued later:
polled), book a carrier truck to the wool store, enter the lot in the sale, pay the broker's
levy. As the tutorial builds it:

* ``planner``: ``ChatOpenAI(...).with_structured_output(Plan)``, ``Plan(steps: list[str])``:
  free-text sentences; a result not known yet is named by a phrase ("the lot found in the shed
  register");
* ``agent``: a prebuilt ReAct agent (``create_react_agent``) run once per step on "For the
  following plan: 1. ... You are tasked with executing step 1, {step}."; its ``@tool`` services
  raise :class:`WoolDesk` and its ``ToolNode`` (``handle_tool_errors=True``) hands the error
  text back to the model; ``past_steps`` gets (step, the agent's last answer);
* ``replan``: ``with_structured_output(Act)``, ``Act.action: Response | Plan``: the steps still
  to do (results written into their sentences, a held-over step issued again, a step the desk
  re-catalogued rewritten) or the final response; ``planner -> agent -> replan -> (agent | END)``.

The desks answer ``<desk> desk -> <verdict>: <text>``: ``re-offer`` (call again now),
``hold over`` (the step is issued again), ``re-catalogue`` (``take <new> instead of <old>``:
the step is rewritten), ``passed in`` (refused for good). After the graph, the app checks the
lot's catalogue entry against the mill's contract and watches the sale; one root span per job
(``consign clip``) holds the graph and those checks. The planner trusts the station's notes
over the job sheet: the scenario's wrong value comes from a note. No context data.
"""

from __future__ import annotations

import ast
import json
import operator
import random
import re
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.prompts import ChatPromptTemplate
from langchain_core.tools import BaseTool, tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from pydantic import BaseModel, Field

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .analyst import _call, _say, _text

JOB = {
    "clip": "GR-S27",
    "store": "WS-GEELONG",
    "day": "2027-10-14",
    "sale": "S-31",
    "account": "LV-40213",
}
STEPS = (
    "Find the bales of clip mark {clip} in the Glenrock shed register.",
    "Order a fibre test of the lot found in the shed register from the testing house.",
    "Book a carrier truck for the lot found in the shed register to store {store} on {day}.",
    "Enter the lot found in the shed register in sale {sale} with the fibre test certificate.",
    "Pay the broker's levy for the lot found in the shed register from account {account}.",
)
FILLS = {"lot": "the lot found in the shed register", "certificate": "the fibre test certificate"}
"""What a done step's result replaces in the sentences still to do (``lot X`` for the phrase)."""
PLANNER = "You plan wool-clip consignments for Glenrock station."
EXECUTOR = "You are Glenrock station's wool clerk. Carry out the step with the desk tools."
TRACER = "wool-consign"
"""The app's tracer (its one root span per job)."""
MAX_REOFFERS = 8
MAX_POLLS = 12


# --- the tutorial's schemas and prompts -------------------------------------------------------
class Plan(BaseModel):
    """The consignment steps still to do."""

    steps: list[str] = Field(description="one sentence per step, in the order to do them")


class Response(BaseModel):
    """The final word to the station."""

    response: str


class Act(BaseModel):
    """What to do next."""

    action: Response | Plan = Field(
        description="Response when the consignment is finished or cannot go on, else Plan"
    )


PLAN_PROMPT = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            PLANNER + " Write one plain sentence per step; name a result not known yet by "
            "what produces it. Trust the station's notes over the job sheet.",
        ),
        ("placeholder", "{messages}"),
    ]
)
REPLAN_PROMPT = ChatPromptTemplate.from_template(
    "You revise wool-clip consignment plans.\n\nObjective:\n{input}\n\nPlan so far:\n{plan}\n\n"
    "Steps done, with the clerk's report:\n{past_steps}\n\nAnswer the steps still to do, with "
    "what the reports tell written into them, or the response to the station when nothing is "
    "left or nothing more can be done."
)


# --- the scripted model -----------------------------------------------------------------------
def _section(text: str, title: str) -> Any:
    return ast.literal_eval(text.split(f"{title}\n", 1)[1].split("\n\n", 1)[0])


def _planner(brief: str) -> dict[str, Any]:
    facts = JOB | json.loads(brief.split("Station notes: ", 1)[1].split("\n", 1)[0])
    return {"steps": [s.format(**facts) for s in STEPS]}


def _replanner(text: str) -> dict[str, Any]:
    """Read the clerk's last report: next steps, the same step again, a rewrite or the end."""
    plan, past = (
        _section(text, "Plan so far:"),
        _section(text, "Steps done, with the clerk's report:"),
    )
    said = past[-1][1]
    if said.startswith("Done: "):
        noun, value = said.removeprefix("Done: ").split(" ", 1)
        rest = [s.replace(FILLS[noun], f"{noun} {value}") if noun in FILLS else s for s in plan[1:]]
        if rest:
            return {"action": {"steps": rest}}
        return {"action": {"response": f"Consigned: the clip is catalogued ({said})"}}
    if said.startswith("Hold over: "):
        return {"action": {"steps": plan}}
    swap = re.search(r"take (\S+) instead of (\S+)", said)
    if said.startswith("Re-catalogue: ") and swap:
        return {"action": {"steps": [plan[0].replace(swap[2], swap[1]), *plan[1:]]}}
    return {"action": {"response": f"Could not consign the clip: {said}"}}


_CALLS = (
    (r"Find the bales of clip mark ([\w-]+)", "find_bales", ("clip_mark",)),
    (r"Order a fibre test of lot ([\w-]+)", "order_fibre_test", ("lot",)),
    (r"Book a carrier truck for lot ([\w-]+) to store ([\w-]+) on ([\d-]+)", "book_carrier",
     ("lot", "store", "day")),
    (r"Enter lot ([\w-]+) in sale ([\w-]+) with certificate ([\w-]+)",
     "enter_in_sale", ("lot", "sale", "certificate")),
    (r"Pay the broker's levy for lot ([\w-]+) from account ([\w-]+)", "pay_levy",
     ("lot", "account")),
)  # fmt: skip
VERDICT = re.compile(r"desk -> (re-offer|hold over|re-catalogue|passed in): (.*?)['\"]\)")


def _executor(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The clerk: call the step's tool, again after a re-offer, follow a page, poll a test."""
    task = _text(messages[1].get("content")).rsplit("executing step 1, ", 1)[1]
    calls = [m for m in messages if m.get("role") == "assistant" and m.get("tool_calls")]
    turn = len(calls)
    if not calls:
        for pattern, name, params in _CALLS:
            if m := re.match(pattern, task):
                return _call(name, dict(zip(params, m.groups(), strict=True)), turn)
        return _say(f"Passed in: no desk does '{task}'")
    last_call = calls[-1]["tool_calls"][0]["function"]
    result = _text(messages[-1].get("content"))
    if v := VERDICT.search(result):
        verdict, why = v.groups()
        reoffers = sum("desk -> re-offer" in _text(m.get("content")) for m in messages)
        if verdict == "re-offer" and reoffers < MAX_REOFFERS:
            return _call(last_call["name"], json.loads(last_call["arguments"]), turn)
        return _say(f"{verdict.capitalize()}: {why}")
    out = json.loads(result)
    if "next_page" in out:
        args = json.loads(last_call["arguments"]) | {"page": out["next_page"]}
        return _call(last_call["name"], args, turn)
    if out.get("status") == "pending":
        if turn > MAX_POLLS:
            return _say(f"Gave up: fibre test {out['test']} still pending after {MAX_POLLS} checks")
        return _call("test_status", {"test": out["test"]}, turn)
    return _say(f"Done: {out['kind']} {out['value']}")


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> msg = respond({"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": 'Job sheet\\nStation notes: {}'}]})
    >>> json.loads(msg["choices"][0]["message"]["content"])["steps"][0]
    'Find the bales of clip mark GR-S27 in the Glenrock shed register.'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    first = _text(messages[0].get("content")) if messages else ""
    if first.startswith(PLANNER):
        return completion(body, _say(json.dumps(_planner(_text(messages[-1].get("content"))))))
    if first.startswith("You revise"):
        return completion(body, _say(json.dumps(_replanner(first))))
    return completion(body, _executor(messages))


# --- the world --------------------------------------------------------------------------------
class WoolDesk(RuntimeError):
    """A desk's refusal: ``<desk> desk -> <verdict>: <text>``."""


@dataclass
class World:
    """The shed register, testing house, carriers, sale catalogue and levy ledger of one run."""

    label: Label
    errors: list[str] = field(default_factory=list)
    polls: int = 0
    watches: int = 0
    moved: set[str] = field(default_factory=set)
    catalogue: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        rng = random.Random(f"wool-world/{self.label.seed}")
        self.lot, self.test = f"L-{rng.randint(1000, 9999)}", f"FT-{rng.randint(100, 999)}"

    def fault(self, desk: str, tool_name: str, old: str = "") -> None:
        """Raise the scenario's next refusal when this tool is the one it targets."""
        if self.errors and tool_name == self.label.params.get("tool"):
            verdict, text = self.errors.pop(0).split(": ", 1)
            if verdict == "re-catalogue":  # the scenario's text ends "take <new>"
                self.moved.add(text.rsplit(" ", 1)[1])
                text += f" instead of {old}"
            raise WoolDesk(f"{desk} desk -> {verdict}: {text}")

    def tools(self) -> list[BaseTool]:
        def find_bales(clip_mark: str, page: str = "") -> str:
            """The lot holding a clip's bales in the station's shed register, a page at a time."""
            self.fault("shed register", "find_bales")
            at, pages = int(page or 1), int(self.label.params.get("pages", 1))
            if at < pages:
                return json.dumps({"bales": [], "next_page": str(at + 1)})
            lot = self.lot if clip_mark == JOB["clip"] else f"L-{len(clip_mark) * 877}"
            return json.dumps({"kind": "lot", "value": lot})

        def order_fibre_test(lot: str) -> str:
            """Order a fibre (micron and yield) test of a lot; the certificate comes later."""
            self.fault("testing house", "order_fibre_test")
            return json.dumps({"test": self.test, "status": "pending"})

        def test_status(test: str) -> str:
            """Whether a fibre test is certified yet."""
            self.polls += 1
            stuck = self.label.scenario == "loop_poll_stuck"
            if stuck or self.polls < int(self.label.params.get("polls", 1)):
                return json.dumps({"test": test, "status": "pending"})
            return json.dumps({"kind": "certificate", "value": f"{test}-C"})

        def book_carrier(lot: str, store: str, day: str) -> str:
            """Book a carrier truck taking a lot from the station to a wool store on a day."""
            self.fault("carrier", "book_carrier", day)
            self.catalogue[f"store/{lot}"] = store
            return json.dumps({"kind": "booking", "value": f"CB-{lot[2:]}-{day[5:7]}{day[8:]}"})

        def enter_in_sale(lot: str, sale: str, certificate: str) -> str:
            """Enter a tested lot in a wool sale's catalogue."""
            self.fault("sale catalogue", "enter_in_sale")
            if lot != self.lot:
                raise WoolDesk(f"sale catalogue desk -> passed in: {lot} is not Glenrock wool")
            if (store := self.catalogue.get(f"store/{lot}")) != JOB["store"]:
                raise WoolDesk(
                    f"sale catalogue desk -> passed in: {sale} sells from {JOB['store']}, "
                    f"{lot} goes to {store}"
                )
            self.catalogue[lot] = sale
            return json.dumps({"kind": "entry", "value": f"{sale}/{lot}"})

        def pay_levy(lot: str, account: str) -> str:
            """Pay the broker's levy for a catalogued lot from the station's levy account."""
            self.fault("levy ledger", "pay_levy", account)
            if account != JOB["account"] and account not in self.moved:
                raise WoolDesk(f"levy ledger desk -> passed in: {account} is not Glenrock's")
            return json.dumps({"kind": "receipt", "value": f"R-{lot[2:]}{account[-3:]}"})

        services = (
            find_bales,
            order_fibre_test,
            test_status,
            book_carrier,
            enter_in_sale,
            pay_levy,
        )
        return [tool(f) for f in services]

    def checks(self) -> list[BaseTool]:
        """The app's own checks after the graph: the mill's contract, then the sale."""

        def check_catalogue(lot: str) -> str:
            """The sale a lot is catalogued in, against the mill's contract."""
            if self.catalogue.get(lot) != JOB["sale"]:
                raise WoolDesk(
                    f"contract desk -> passed in: {lot} is catalogued in "
                    f"{self.catalogue.get(lot)}, the mill bought from {JOB['sale']}"
                )
            return json.dumps({"lot": lot, "sale": JOB["sale"]})

        def sale_status(sale: str) -> str:
            """Whether the sale is going ahead."""
            self.watches += 1
            if self.label.scenario == "external_strike" and self.watches > int(
                self.label.params["polls"]
            ):
                raise WoolDesk(
                    f"exchange desk -> passed in: {sale} cancelled, wool stores on strike"
                )
            return json.dumps({"sale": sale, "state": "scheduled"})

        return [tool(check_catalogue), tool(sale_status)]


# --- the graph --------------------------------------------------------------------------------
class PlanExecute(TypedDict, total=False):
    input: str
    plan: list[str]
    past_steps: Annotated[list[tuple[str, str]], operator.add]
    response: str


class Consignment:
    """One job: the tutorial's graph, then the app's checks, under one root span."""

    def __init__(self, label: Label, llm: ChatOpenAI, provider: TracerProvider) -> None:
        self.label = label
        self.world = World(label)
        self.tracer = provider.get_tracer(TRACER)
        self.planner = PLAN_PROMPT | llm.with_structured_output(Plan)
        self.replanner = REPLAN_PROMPT | llm.with_structured_output(Act)
        tools = ToolNode(self.world.tools(), handle_tool_errors=True)
        self.agent = create_react_agent(llm, tools, prompt=EXECUTOR)

    def plan_step(self, state: PlanExecute) -> PlanExecute:
        plan = self.planner.invoke({"messages": [("user", state["input"])]})
        assert isinstance(plan, Plan)
        return {"plan": plan.steps}

    def execute_step(self, state: PlanExecute) -> PlanExecute:
        plan = state["plan"]
        listed = "\n".join(f"{i + 1}. {step}" for i, step in enumerate(plan))
        task = (
            f"For the following plan:\n{listed}\n\nYou are tasked with executing step 1, {plan[0]}"
        )
        out = self.agent.invoke({"messages": [("user", task)]})
        return {"past_steps": [(plan[0], str(out["messages"][-1].content))]}

    def replan_step(self, state: PlanExecute) -> PlanExecute:
        act = self.replanner.invoke(dict(state))
        assert isinstance(act, Act)
        if isinstance(act.action, Response):
            return {"response": act.action.response}
        return {"plan": act.action.steps}

    def graph(self) -> Any:
        def should_end(state: PlanExecute) -> Literal["agent", "__end__"]:
            return "__end__" if state.get("response") else "agent"

        workflow = StateGraph(PlanExecute)
        workflow.add_node("planner", self.plan_step)
        workflow.add_node("agent", self.execute_step)
        workflow.add_node("replan", self.replan_step)
        workflow.add_edge(START, "planner")
        workflow.add_edge("planner", "agent")
        workflow.add_edge("agent", "replan")
        workflow.add_conditional_edges("replan", should_end, ["agent", END])
        return workflow.compile()

    def run(self) -> str:
        notes = {k: self.label.params[k] for k in JOB if k in self.label.params}
        job = (
            f"Consign Glenrock's spring clip {JOB['clip']} to wool sale {JOB['sale']} at store "
            f"{JOB['store']}: truck on {JOB['day']}, levy from {JOB['account']}.\n"
            f"Station notes: {json.dumps(notes)}"
        )
        with self.tracer.start_as_current_span("consign clip") as root:
            out = self.graph().invoke({"input": job}, {"recursion_limit": 200})
            try:
                if not out["response"].startswith("Consigned"):
                    raise WoolDesk(out["response"])
                check, watch = self.world.checks()
                check.invoke({"lot": self.world.lot})
                for _ in range(4):
                    watch.invoke({"sale": JOB["sale"]})
            except WoolDesk as e:
                root.set_status(Status(StatusCode.ERROR, str(e)))
            return format(root.get_span_context().trace_id, "032x")


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the wool scenarios under OpenInference's LangChain instrumentor on ``provider``;
    run name -> trace id."""
    if not labels:
        return {}
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer(respond=respond) as server:
            llm = ChatOpenAI(
                model=MODEL, base_url=server.base_url("corpus-wool"), api_key="test", max_retries=0
            )
            return {label.run: Consignment(label, llm, provider).run() for label in labels}
    finally:
        instrumentor.uninstrument()

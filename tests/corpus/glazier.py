"""A parish restoring a stained-glass window, built as LangGraph's Plan-and-Execute tutorial
builds its agent (langgraph ``docs/docs/tutorials/plan-and-execute``), traced by OpenLLMetry's
LangChain instrumentor (``opentelemetry-instrumentation-langchain``), langchain-openai's
ChatOpenAI on the conformance suite's fake OpenAI server. No planscope code.

Sealed-26 split only (see README.md). The job: window N3 of St Aldhelm's is found in the
diocesan survey register (read page by page), a faculty to restore it is applied for (granted
later: polled), matching glass is ordered, the scaffold crew booked, the conservator's deposit
paid. The graph, as the tutorial writes it:

* ``planner``: ``with_structured_output(Plan)``, ``Plan(steps: list[str])``: free-text sentences
  built from the job sheet and the parish notes (trusted over the sheet: a scenario's wrong value
  comes from a note);
* ``agent``: a prebuilt ReAct agent (``create_react_agent``, its ``ToolNode`` handing a raised
  tool error back to the model) run once per step on "For the following plan: ... You are tasked
  with executing step 1, {step}."; ``past_steps`` collects (step, answer);
* ``replan``: ``with_structured_output(Act)``, ``Act.action: Response | Plan``: the steps still
  to do (a step put off is issued again, a "plan again" rewrites the value it names) or the
  response; ``planner -> agent -> replan -> (agent | END)``.

After the graph the app checks the conservator's bench day against the scaffold and watches the
reinstated window (tools called directly), all under one root span per job (``restore window``).
Offices refuse as ``<office> :: <verdict> :: <text>``, the verdict one of ``not now`` (call
again), ``come back later`` (the step again later), ``plan again`` (``use X instead of Y``) or
``no``. This source records no context data (no starvation label).
"""

from __future__ import annotations

import ast
import json
import operator
import re
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from langchain_core.prompts import ChatPromptTemplate
from langchain_core.tools import BaseTool, tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from pydantic import BaseModel, Field

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .analyst import _say, _text

TRACER = "glazier"
JOB = {
    "window": "N3",
    "church": "St Aldhelm's",
    "glass": "ruby flashed",
    "day": "2027-05-18",
    "account": "PCC-5521",
}
STEPS = (
    "Find window {window} of {church} in the diocesan survey register.",
    "Apply to the diocesan registry for a faculty to restore window {window}.",
    "Order {glass} glass from the glassworks for window {window}.",
    "Book the scaffold crew at {church} for {day}.",
    "Pay the conservator's deposit for window {window} from account {account}.",
)
MAX_POLLS = 10
PLANNER = (
    "For the given objective, come up with a simple step by step plan for the parish. Each "
    "step one sentence naming the window, church, glass, day or account it concerns."
)
REPLANNER = """For the given objective, come up with a simple step by step plan.
Your objective was this:
{input}

Your original plan was this:
{plan}

You have currently done the follow steps:
{past_steps}

Update your plan accordingly. If no more steps are needed and you can return to the user, then \
respond with that. Otherwise, fill out the plan. Only add steps to the plan that still NEED to be \
done. Do not return previously done steps as part of the plan."""
_REFUSAL = re.compile(r"([a-z ]+) :: (not now|come back later|plan again|no) :: ([^\"'\n]*)")


class Plan(BaseModel):
    """The restoration plan."""

    steps: list[str] = Field(description="the steps still to do, one sentence each, in order")


class Response(BaseModel):
    """The answer to the parish."""

    response: str


class Act(BaseModel):
    """What to do next."""

    action: Response | Plan = Field(
        description="Response to answer the parish; Plan when steps are still to be done"
    )


# --- the scripted model ----------------------------------------------------------------------
_CALLS = (
    (r"Find window (?P<window>\S+) of (?P<church>.+) in the diocesan", "survey_lookup"),
    (r"faculty to restore window (?P<window>\S+)\.", "apply_faculty"),
    (r"Order (?P<glass>.+) glass from the glassworks for window (?P<window>\S+)\.", "order_glass"),
    (r"Book the scaffold crew at (?P<church>.+) for (?P<day>\S+)\.", "book_scaffold"),
    (r"deposit for window (?P<window>\S+) from account (?P<account>\S+)\.", "pay_deposit"),
)


def _call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(args)}
    call = {"id": f"call_{n}", "type": "function", "function": function}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _react(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The ReAct executor's next turn for one step."""
    prompt = next(_text(m.get("content")) for m in messages if m.get("role") == "user")
    step = prompt.rsplit("executing step 1, ", 1)[-1].strip().removesuffix(".")
    calls = [c for m in messages for c in m.get("tool_calls") or []]
    if not calls:
        for pattern, name in _CALLS:
            if found := re.search(pattern, step):
                return _call(name, found.groupdict(), 0)
        return _say(f"Not done: no tool for {step!r}")
    last = calls[-1]["function"]
    name, args = last["name"], json.loads(last["arguments"])
    said = _text(messages[-1].get("content"))
    refused = _REFUSAL.search(said)
    if refused and refused.group(2) == "not now":
        return _call(name, args, len(calls))
    if refused:
        return _say(f"Not done: {refused.group(0)}")
    result = json.loads(said)
    if result.get("next_page"):
        return _call(name, args | {"page": result["next_page"]}, len(calls))
    if result.get("state") == "pending":
        if sum(c["function"]["name"] == "faculty_status" for c in calls) >= MAX_POLLS:
            return _say(f"Not done: registry :: no :: still pending after {MAX_POLLS} checks")
        return _call("faculty_status", {"application": result["application"]}, len(calls))
    return _say(f"Done: {said}")


def _replan(prompt: str) -> dict[str, Any]:
    """The replanner's Act: the rest of the plan, the failing step again, or the response."""
    plan = ast.literal_eval(prompt.split("original plan was this:\n", 1)[1].split("\n\n")[0])
    past = ast.literal_eval(prompt.split("follow steps:\n", 1)[1].split("\n\n")[0])
    said = past[-1][1]
    if said.startswith("Done: "):
        if len(plan) > 1:
            return {"action": {"steps": plan[1:]}}
        return {"action": {"response": f"Restoration arranged in {len(past)} steps."}}
    refused = _REFUSAL.search(said)
    verdict = refused.group(2) if refused else "no"
    if verdict == "come back later":
        return {"action": {"steps": plan}}
    moved = re.search(r"use (\S+) instead of (\S+)$", said)
    if verdict == "plan again" and moved:
        return {"action": {"steps": [s.replace(moved[2], moved[1]) for s in plan]}}
    return {"action": {"response": f"Could not restore the window: {said}"}}


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> msg = respond({"response_format": {"json_schema": {"name": "Plan"}}, "messages": [
    ...     {"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": "Job sheet: " + json.dumps(JOB)}]})
    >>> json.loads(msg["choices"][0]["message"]["content"])["steps"][0]
    "Find window N3 of St Aldhelm's in the diocesan survey register."
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if schema == "Plan":
        fields = dict(re.findall(r"^([\w ]+): (\{.*\})$", user, re.MULTILINE))
        facts = json.loads(fields["Job sheet"]) | json.loads(fields.get("Parish notes", "{}"))
        return completion(body, _say(json.dumps({"steps": [s.format(**facts) for s in STEPS]})))
    if schema == "Act":
        return completion(body, _say(json.dumps(_replan(user))))
    return completion(body, _react(messages))


# --- the world -------------------------------------------------------------------------------
class Refused(RuntimeError):
    """An office's refusal: ``<office> :: <verdict> :: <text>``."""


_OFFICES = {
    "survey_lookup": "survey office",
    "apply_faculty": "registry",
    "order_glass": "glassworks",
    "book_scaffold": "scaffold yard",
    "pay_deposit": "treasurer",
}


@dataclass
class World:
    """The survey register, registry, glassworks, scaffold yard and treasurer of one run."""

    label: Label
    errors: list[str] = field(default_factory=list)
    polls: dict[str, int] = field(default_factory=dict)
    booked: str = ""
    paid: bool = False

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        self.bench_day = JOB["day"]

    def fault(self, name: str, old: str = "") -> None:
        """Raise the scenario's next refusal when this call is one it targets."""
        if self.errors and self.label.params.get("tool") == name:
            raise Refused(f"{_OFFICES[name]} :: " + self.errors.pop(0).format(old=old))

    def tools(self) -> list[BaseTool]:
        params = self.label.params

        def survey_lookup(window: str, church: str, page: str = "") -> str:
            """A window's record in the diocesan survey register, a page at a time."""
            self.fault("survey_lookup")
            at = int(page[1:]) if page else 1
            if at < int(params.get("pages", 1)):
                return json.dumps({"records": [], "next_page": f"p{at + 1}"})
            glazing = "figurative" if window == JOB["window"] else "plain quarry"
            return json.dumps({"window": window, "church": church, "glazing": glazing})

        def apply_faculty(window: str) -> str:
            """Apply for a faculty to restore a window; granted later."""
            self.fault("apply_faculty")
            application = f"FA-{self.label.seed % 977}"
            self.polls[application] = 0
            return json.dumps({"application": application, "state": "pending"})

        def faculty_status(application: str) -> str:
            """Whether a faculty application is granted yet."""
            self.polls[application] += 1
            stuck = self.label.scenario == "loop_poll_stuck"
            if stuck or self.polls[application] < int(params.get("polls", 1)):
                return json.dumps({"application": application, "state": "pending"})
            return json.dumps({"application": application, "state": "granted"})

        def order_glass(glass: str, window: str) -> str:
            """Order glass from the glassworks to match a window."""
            self.fault("order_glass")
            if window != JOB["window"]:
                raise Refused(f"glassworks :: no :: window {window} is plain quarry glazing")
            if glass != JOB["glass"]:
                raise Refused(f"glassworks :: no :: the cartoon of {window} has no {glass} glass")
            return json.dumps({"order": f"GW-{self.label.seed % 613}", "sheets": 6})

        def book_scaffold(church: str, day: str) -> str:
            """Book the scaffold crew at a church for a day."""
            self.fault("book_scaffold", day)
            moved = params.get("crew_day")
            if moved and day != moved:
                self.bench_day = str(moved)
                raise Refused(f"scaffold yard :: plan again :: use {moved} instead of {day}")
            self.booked = day
            return json.dumps({"booking": f"SC-{day}", "church": church})

        def pay_deposit(window: str, account: str) -> str:
            """Pay the conservator's deposit for a window from a parish account."""
            self.fault("pay_deposit", account)
            if account != JOB["account"]:
                raise Refused(f"treasurer :: no :: {account} is not an account of this parish")
            self.paid = True
            return json.dumps({"receipt": f"R-{self.label.seed % 499}", "window": window})

        funcs = (survey_lookup, apply_faculty, faculty_status, order_glass, book_scaffold)
        return [tool(f) for f in (*funcs, pay_deposit)]

    def checks(self) -> list[BaseTool]:
        """The app's checks after the graph: the conservator's bench day, then the watch."""

        def check_bench_day(window: str) -> str:
            """Whether the scaffold stands on the conservator's bench day."""
            if self.booked != self.bench_day:
                raise Refused(
                    f"conservator :: no :: the bench for {window} is set for {self.bench_day}"
                    f" but the scaffold stands from {self.booked}"
                )
            return json.dumps({"window": window, "day": self.booked})

        def watch_window(window: str) -> str:
            """Whether the reinstated window holds."""
            self.polls[window] = self.polls.get(window, 0) + 1
            frost = self.label.scenario == "external_frost"
            if frost and self.polls[window] > int(self.label.params["polls"]):
                raise Refused(f"churchwarden :: no :: frost cracked the new leading of {window}")
            return json.dumps({"window": window, "state": "sound"})

        return [tool(check_bench_day), tool(watch_window)]


# --- the graph -------------------------------------------------------------------------------
class PlanExecute(TypedDict, total=False):
    input: str
    plan: list[str]
    past_steps: Annotated[list[tuple[str, str]], operator.add]
    response: str


class Glazier:
    """One window restoration, from the job sheet to the watched window."""

    def __init__(self, label: Label, llm: ChatOpenAI, provider: TracerProvider) -> None:
        self.label = label
        self.world = World(label)
        tools = self.world.tools()
        self.tracer = provider.get_tracer(TRACER)
        self.executor = create_react_agent(llm, ToolNode(tools, handle_tool_errors=True))
        planner_prompt = ChatPromptTemplate.from_messages(
            [("system", PLANNER), ("placeholder", "{messages}")]
        )
        self.planner = planner_prompt | llm.with_structured_output(Plan)
        replanner_prompt = ChatPromptTemplate.from_template(REPLANNER)
        self.replanner = replanner_prompt | llm.with_structured_output(Act)

    def brief(self) -> str:
        notes = {k: self.label.params[k] for k in JOB if k in self.label.params}
        lines = [
            f"Objective: restore window {JOB['window']} of {JOB['church']}.",
            f"Job sheet: {json.dumps(JOB)}",
        ]
        if notes:
            lines.append(f"Parish notes: {json.dumps(notes)}")
        return "\n".join(lines)

    def plan_step(self, state: PlanExecute) -> PlanExecute:
        plan = self.planner.invoke({"messages": [("user", state["input"])]})
        assert isinstance(plan, Plan)
        return {"plan": plan.steps}

    def execute_step(self, state: PlanExecute) -> PlanExecute:
        plan = state["plan"]
        plan_str = "\n".join(f"{i + 1}. {step}" for i, step in enumerate(plan))
        task = plan[0]
        task_formatted = (
            f"For the following plan:\n{plan_str}\n\nYou are tasked with executing step 1, {task}."
        )
        answer = self.executor.invoke(
            {"messages": [("user", task_formatted)]}, {"recursion_limit": 100}
        )
        return {"past_steps": [(task, str(answer["messages"][-1].content))]}

    def replan_step(self, state: PlanExecute) -> PlanExecute:
        output = self.replanner.invoke(dict(state))
        assert isinstance(output, Act)
        if isinstance(output.action, Response):
            return {"response": output.action.response}
        return {"plan": output.action.steps}

    def graph(self) -> Any:
        def should_end(state: PlanExecute) -> str:
            return END if state.get("response") else "agent"

        graph = StateGraph(PlanExecute)
        graph.add_node("planner", self.plan_step)
        graph.add_node("agent", self.execute_step)
        graph.add_node("replan", self.replan_step)
        graph.add_edge(START, "planner")
        graph.add_edge("planner", "agent")
        graph.add_edge("agent", "replan")
        graph.add_conditional_edges("replan", should_end, ["agent", END])
        return graph.compile()

    def run(self) -> str:
        with self.tracer.start_as_current_span("restore window") as root:
            final = self.graph().invoke({"input": self.brief()}, {"recursion_limit": 200})
            failure = "" if self.world.paid else str(final.get("response", ""))
            if not failure:
                bench, watch = self.world.checks()
                try:
                    bench.invoke({"window": JOB["window"]})
                    for _ in range(3):
                        watch.invoke({"window": JOB["window"]})
                except Refused as error:
                    failure = str(error)
            if failure:
                root.set_status(Status(StatusCode.ERROR, failure))
            return format(root.get_span_context().trace_id, "032x")


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the window-restoration scenarios against the scripted model; run name -> trace id."""
    out: dict[str, str] = {}
    if not labels:
        return out
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    instrumentor = LangchainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer(respond=respond) as server:
            llm = ChatOpenAI(
                model=MODEL, base_url=server.base_url("corpus-glazier"), api_key="test"
            )
            for label in labels:
                out[label.run] = Glazier(label, llm, provider).run()
    finally:
        instrumentor.uninstrument()
    return out

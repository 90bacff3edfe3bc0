"""An on-call incident-remediation agent: a real LangGraph graph (langchain-openai's ChatOpenAI
on the conformance suite's fake OpenAI-compatible server, ``tests/conformance/fake_openai.py``)
traced by OpenLLMetry's LangChain instrumentor (``opentelemetry-instrumentation-langchain``).
No planscope code.

Sealed-5 split only (see README.md). The task: an alert fires for the ``checkout`` service on
host ``web-04`` in ``eu-west-1``; find the incident, read the host's error rate, diagnose,
remediate (a restart job, polled until it ends), close the incident. The graph, as a LangGraph
user would write it:

* ``planner`` node: one LLM call answering the plan as JSON (``{"steps": [{"id", "goal",
  "tool", "args"}]}``; an argument ``"{step}"`` stands for an earlier step's result), built from
  the page and the team's runbook notes (the scenario's wrong value comes from a stale note);
* ``executor`` node: the LLM with the tools bound, prompted ``Step {id}: {goal}`` and the call
  to make; ``tools`` node: LangGraph's ``ToolNode``, which hands a tool's error back to the
  model; the executor and the tools alternate until the model answers ``done: ...`` or
  ``giving up (...)``;
* ``judge`` node: the app's bookkeeping: the next step, a re-run of a step the model gave up on
  "(retry later)", a re-plan of the steps not done after "(replan)", or the end;
* ``verify`` node: the app's final health check of the service and a watch of the incident
  (tools called directly, traced as tools).

The model is :func:`tests.corpus.analyst.respond`'s executor (a pure function of the request:
call the tool it is told to, call again with a new timeout after a transient error, follow
``next_page``, poll a RUNNING job) with this agent's planner. This source records no context
data (no starvation label).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypedDict, cast

from langchain_core.messages import AnyMessage, HumanMessage, RemoveMessage, SystemMessage
from langchain_core.tools import BaseTool, tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages
from langgraph.prebuilt import ToolNode
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .analyst import _executor, _say, _text

SERVICE, HOST, REGION, THRESHOLD = "checkout", "web-04", "eu-west-1", 2.0
MAX_STEP_ATTEMPTS = 8
MAX_PLAN_VERSIONS = 4
PLANNER = "You are the on-call planner. Answer the remediation plan as JSON."
EXECUTOR = "You are the on-call executor. Do the step with your tools."


# --- the scripted model ----------------------------------------------------------------------
def _plan(brief: str) -> dict[str, Any]:
    """The planner's answer: the page's facts, the runbook's notes trusted over them."""
    fields = dict(re.findall(r"^(\w[\w ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(fields["Facts"]) | json.loads(fields.get("Runbook notes", "{}"))
    done = set(json.loads(fields.get("Completed", "[]")))
    moved = re.search(r"use host ([a-z0-9-]+)", fields.get("Failure", ""))
    if moved:
        facts["host"] = moved.group(1)
    service, host, region = facts["service"], facts["host"], facts["region"]
    steps = [
        ("find_alert", f"Find the open incident of {service}", "query_alerts",
         {"service": service}),
        ("fetch_metrics", f"Error rate of {host} over the last 15 minutes", "get_metrics",
         {"host": host, "metric": "error_rate", "window_min": 15}),
        ("diagnose", f"Diagnose {host}", "run_diagnostic",
         {"host": host, "error_rate": "{fetch_metrics}", "threshold": facts["threshold"]}),
        ("remediate", f"Remediate {host} in {region}", "remediate_host",
         {"host": host, "region": region, "action": "{diagnose}"}),
        ("close_incident", "Close the incident", "resolve_incident",
         {"incident": "{find_alert}", "note": f"{host} remediated ({{diagnose}})"}),
    ]  # fmt: skip
    return {
        "steps": [
            {"id": i, "goal": g, "tool": t, "args": a} for i, g, t, a in steps if i not in done
        ]
    }


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> msg = respond({"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": 'Facts: {"service": "s", "host": "h", "region": "r",'
    ...      ' "threshold": 2.0}'}]})
    >>> [s["id"] for s in json.loads(msg["choices"][0]["message"]["content"])["steps"]][:2]
    ['find_alert', 'fetch_metrics']
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = _text(messages[0].get("content")) if messages else ""
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if system.startswith(PLANNER):
        return completion(body, _say(json.dumps(_plan(user))))
    return completion(body, _executor(messages))


# --- the world ----------------------------------------------------------------------------
class Failed(RuntimeError):
    """A tool error (its text ends with what kind of error it is, see ``_labels.py``)."""


@dataclass
class World:
    """The alerting service, metrics, hosts and incident tracker of one run, and its faults."""

    label: Label
    step: str = ""
    errors: list[str] = field(default_factory=list)
    polls: dict[str, int] = field(default_factory=dict)
    fixed: set[tuple[str, str]] = field(default_factory=set)
    trace_id: str = ""
    """The OTel trace the tools ran in (read off the current span: the run's name for it)."""

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        rng = random.Random(f"oncall-world/{self.label.seed}")
        self.rate = round(rng.uniform(4.0, 15.0), 1)
        self.incident = f"INC-{rng.randint(1000, 9999)}"

    @property
    def scenario(self) -> str:
        return self.label.scenario

    def fault(self, tool_name: str) -> None:
        """Raise the scenario's next error when this call is one it targets."""
        if not self.trace_id:
            context = otel_trace.get_current_span().get_span_context()
            self.trace_id = format(context.trace_id, "032x") if context.trace_id else ""
        target = self.label.params.get("step", "remediate")
        if self.errors and self.step == target and tool_name != "job_status":
            raise Failed("error: " + self.errors.pop(0))

    def healthy_hosts(self) -> set[tuple[str, str]]:
        moved = self.label.params.get("moved_to")
        return {(str(moved) if moved else HOST, REGION)}

    def tools(self) -> list[BaseTool]:
        def query_alerts(service: str, page: str = "", timeout_s: int = 30) -> str:
            """Open alerts of a service; results come a page at a time."""
            self.fault("query_alerts")
            pages = int(self.label.params.get("pages", 1))
            at = int(page[1:]) if page else 1
            if at < pages:
                return json.dumps({"alerts": [], "next_page": f"p{at + 1}"})
            if service != SERVICE:
                return json.dumps({"value": f"INC-{len(service) * 311}", "state": "RESOLVED"})
            return json.dumps({"value": self.incident, "state": "OPEN"})

        def get_metrics(host: str, metric: str, window_min: int, timeout_s: int = 30) -> str:
            """A host's metric averaged over a window, in percent."""
            self.fault("get_metrics")
            known = {HOST, str(self.label.params.get("moved_to", HOST))}
            return json.dumps({"value": self.rate if host in known else "no data"})

        def run_diagnostic(
            host: str, error_rate: str, threshold: float, timeout_s: int = 30
        ) -> str:
            """Diagnose a host from its error rate: the action to take."""
            self.fault("run_diagnostic")
            try:
                rate = float(error_rate)
            except ValueError:
                raise Failed(f"error: no samples for host {host} (permanent)") from None
            return json.dumps({"value": "restart" if rate >= threshold else "none"})

        def remediate_host(host: str, region: str, action: str, timeout_s: int = 30) -> str:
            """Start a remediation job on a host (``none``: nothing to do)."""
            self.fault("remediate_host")
            moved = self.label.params.get("moved_to")
            if moved and host == HOST:
                raise Failed(f"error: {HOST} is being drained, use host {moved} (replan)")
            if action == "none":
                return json.dumps({"value": "no action"})
            job = f"job-{self.label.seed}-{len(self.polls)}"
            self.polls[job] = 0
            self.fixed.add((host, region))
            return json.dumps({"job_id": job, "state": "RUNNING"})

        def job_status(job_id: str) -> str:
            """The state of a remediation job."""
            self.polls[job_id] += 1
            if self.scenario == "loop_poll_stuck" or self.polls[job_id] < int(
                self.label.params.get("polls", 1)
            ):
                return json.dumps({"job_id": job_id, "state": "RUNNING"})
            return json.dumps({"value": "restarted", "state": "DONE"})

        def resolve_incident(incident: str, note: str, timeout_s: int = 30) -> str:
            """Close an incident with a note."""
            self.fault("resolve_incident")
            if incident != self.incident:
                raise Failed(f"error: incident {incident} is already resolved (permanent)")
            return json.dumps({"value": "closed"})

        return [
            tool(f)
            for f in (
                query_alerts,
                get_metrics,
                run_diagnostic,
                remediate_host,
                job_status,
                resolve_incident,
            )
        ]

    def check_tools(self) -> dict[str, BaseTool]:
        """The app's own checks after the plan: service health, then the incident watch."""

        def check_health(service: str, region: str) -> str:
            """The service's error rate now, in a region."""
            if not self.fixed & self.healthy_hosts():
                raise Failed(f"error: {service} still failing in {region} ({self.rate}% errors)")
            return json.dumps({"value": 0.2})

        def incident_status(incident: str) -> str:
            """Whether a closed incident stays closed."""
            self.polls[incident] = self.polls.get(incident, 0) + 1
            refire = self.scenario == "external_refire"
            if refire and self.polls[incident] > int(self.label.params["polls"]):
                raise Failed(
                    f"error: {incident} re-opened: alert re-fired after the payments-api deploy"
                )
            return json.dumps({"incident": incident, "state": "CLOSED"})

        return {"check_health": tool(check_health), "incident_status": tool(incident_status)}


# --- the graph -------------------------------------------------------------------------------
class State(TypedDict, total=False):
    plan: list[dict[str, Any]]
    current: int
    attempts: int
    version: int
    done: dict[str, str]
    failure: str
    outcome: str
    messages: Annotated[list[AnyMessage | RemoveMessage], add_messages]


def _tool_error(error: Failed) -> str:
    """What the model reads when a tool raised: the tool's own error text."""
    return str(error)


class OnCall:
    """One incident, from the page to the watched close."""

    def __init__(self, label: Label, llm: ChatOpenAI) -> None:
        self.label = label
        self.world = World(label)
        tools = self.world.tools()
        self.llm = llm
        self.executor_llm = llm.bind_tools(tools)
        self.tool_node = ToolNode(tools, handle_tool_errors=_tool_error)

    def brief(self, done: dict[str, str], failure: str) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("service", "host", "region", "threshold")
            if k in self.label.params
        }
        page = {"service": SERVICE, "host": HOST, "region": REGION, "threshold": THRESHOLD}
        lines = [
            f"Objective: Remediate the {SERVICE} error-rate alert on {HOST} ({REGION}) and "
            "close its incident.",
            f"Facts: {json.dumps(page)}",
        ]
        if notes:
            lines.append(f"Runbook notes: {json.dumps(notes)}")
        if done:
            lines.append(f"Completed: {json.dumps(sorted(done))}")
        if failure:
            lines.append(f"Failure: {failure}")
        return "\n".join(lines)

    def step_messages(
        self, step: dict[str, Any], done: dict[str, str]
    ) -> list[AnyMessage | RemoveMessage]:
        args = json.loads(
            re.sub(
                r"\{(\w+)\}", lambda m: done.get(m.group(1), m.group(0)), json.dumps(step["args"])
            )
        )
        prompt = f"Step {step['id']}: {step['goal']}\nCall {step['tool']} with {json.dumps(args)}"
        reset = RemoveMessage(id=REMOVE_ALL_MESSAGES)
        return [reset, SystemMessage(EXECUTOR), HumanMessage(prompt)]

    def planner(self, state: State) -> State:
        done = state.get("done", {})
        answer = self.llm.invoke(
            [SystemMessage(PLANNER), HumanMessage(self.brief(done, state.get("failure", "")))]
        )
        plan = json.loads(str(answer.content))["steps"]
        return {
            "plan": plan,
            "current": 0,
            "attempts": 1,
            "version": state.get("version", 0) + 1,
            "done": done,
            "failure": "",
            "messages": self.step_messages(plan[0], done),
        }

    def executor(self, state: State) -> State:
        self.world.step = state["plan"][state["current"]]["id"]
        return {"messages": [self.executor_llm.invoke(state["messages"])]}

    def judge(self, state: State) -> State:
        """The app's bookkeeping after the model answered for a step."""
        step, said = state["plan"][state["current"]], str(state["messages"][-1].content)
        done = dict(state["done"])
        if said.startswith("done: "):
            done[step["id"]] = str(json.loads(said.removeprefix("done: "))["value"])
            nxt = state["current"] + 1
            if nxt == len(state["plan"]):
                return {"done": done, "outcome": "verify"}
            return {
                "done": done,
                "current": nxt,
                "attempts": 1,
                "messages": self.step_messages(state["plan"][nxt], done),
            }
        kind = re.match(r"giving up(?: \(([a-z ]+)\))?", said)
        reason = kind.group(1) if kind and kind.group(1) else "permanent"
        if reason == "retry later" and state["attempts"] < MAX_STEP_ATTEMPTS:
            return {"attempts": state["attempts"] + 1, "messages": self.step_messages(step, done)}
        if reason == "replan" and state["version"] < MAX_PLAN_VERSIONS:
            return {"failure": f"{step['id']}: {said}", "outcome": "replan"}
        return {"outcome": "failed"}

    def verify(self, state: State) -> State:
        checks = self.world.check_tools()
        try:
            checks["check_health"].invoke({"service": SERVICE, "region": REGION})
            for _ in range(4):
                checks["incident_status"].invoke({"incident": self.world.incident})
        except Failed:
            return {"outcome": "failed"}
        return {"outcome": "resolved"}

    def graph(self) -> Any:
        def route(state: State) -> Literal["tools", "judge"]:
            last = state["messages"][-1]
            return "tools" if getattr(last, "tool_calls", None) else "judge"

        def after_judge(state: State) -> Literal["executor", "planner", "verify", "__end__"]:
            outcome = state.get("outcome", "")
            if outcome in ("replan", "verify"):
                return "planner" if outcome == "replan" else "verify"
            # LangGraph reads the edges off this Literal; END is typed as a plain str
            return cast(Literal["__end__"], END) if outcome == "failed" else "executor"

        graph = StateGraph(State)
        graph.add_node("planner", self.planner)
        graph.add_node("executor", self.executor)
        graph.add_node("tools", self.tool_node)
        graph.add_node("judge", self.judge)
        graph.add_node("verify", self.verify)
        graph.add_edge(START, "planner")
        graph.add_edge("planner", "executor")
        graph.add_conditional_edges("executor", route)
        graph.add_edge("tools", "executor")
        graph.add_conditional_edges("judge", after_judge)
        graph.add_edge("verify", END)
        return graph.compile()

    def run(self) -> str:
        self.graph().invoke({}, {"recursion_limit": 2000})
        return self.world.trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the on-call scenarios against the scripted model; run name -> trace id."""
    out: dict[str, str] = {}
    if not labels:
        return out
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    instrumentor = LangchainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer(respond=respond) as server:
            llm = ChatOpenAI(
                model=MODEL,
                base_url=server.base_url("corpus-oncall"),
                api_key="test",
            )
            for label in labels:
                out[label.run] = OnCall(label, llm).run()
    finally:
        instrumentor.uninstrument()
    return out

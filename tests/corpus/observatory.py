"""An observatory's night desk booking a visiting astronomer's observing run, written as a
LlamaIndex user writes a multi-agent app today: one ``AgentWorkflow`` of ``FunctionAgent``s that
hand off to each other (``can_handoff_to``), a ``night_planner`` that writes the plan into the
workflow's state (a ``write_plan`` tool editing ``ctx.store``) and dispatches each step by a
handoff to an executor agent (``scheduler``, ``bursar``, ``liaison``), which runs it with its
``FunctionTool``s, records the outcome (``report_step``) and hands back. Traced by OpenLLMetry's
LlamaIndex instrumentor (``opentelemetry-instrumentation-llamaindex``) and the app's own root
span per run, against a scripted model on the conformance suite's fake OpenAI server. No
planscope code.

Sealed-29 split only (see README.md). The run: find an instrument unit of the requested kind at
the site in the observatory's catalogue (read page by page), secure telescope time from the
time-allocation committee (its decision comes later: polled), book the night on the unit, charge
the hours to the astronomer's grant, send the astronomer the schedule. The workflow, one run per
observing run:

* ``night_planner`` (root agent): from the proposal sheet and the programme office's notes
  (trusted over the sheet: a scenario's wrong value comes from a note) it calls ``write_plan``
  with the steps (``step``, ``goal``, ``agent``, ``service``, ``params``; ``"ref:step.key"`` for
  an earlier step's result), then hands each step off to its agent, the call in the handoff's
  ``reason`` with the earlier results filled in; on a report it hands off the next step, the
  same step again (``retry``), writes a new plan of the steps left (``replan``, the value the
  facility named written in) or ends the run with its answer;
* an executor agent calls the step's service (again at the window a facility names, page by
  page, or polling a request), then ``report_step(step, outcome, result, note)`` with
  ``done`` / ``retry`` / ``replan`` / ``failed`` and hands back to the planner.

The LLM is llama-index-llms-litellm's ``LiteLLM`` (``openai/<model>`` at the fake server's
``api_base``; llama-index-llms-openai wants ``openai<3``). Facilities reply
``<facility> [<verdict>] <text>``: ``hold`` (call again, at ``window N`` when they say so),
``defer`` (the step again later), ``revise`` (``use <new> instead of <old>``: a new plan) or
``denied``; a service that raises is handed back to the model by the ``AgentWorkflow`` as the
tool's output. After the workflow the app verifies the night against the astronomer's dark-time
window and watches the observation, all under one root span per run (``observing run``).
LlamaIndex records no context data (no starvation label).
"""

# no ``from __future__ import annotations``: FunctionTool builds each tool's schema from its
# signature, and the plan tools' ``Context`` and ``list[PlanStep]`` must be real types for it
import asyncio
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

# litellm reads its model price map from the network at import unless told to use its own copy
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context
from llama_index.llms.litellm import LiteLLM
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from pydantic import BaseModel, Field

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .analyst import _say, _text

TRACER = "observatory"
"""The app's tracer (its root span per run and its checks after the workflow)."""
PLANNER = "night_planner"
JOB: dict[str, Any] = {
    "proposal": "P27B-114",
    "observer": "Dr. Ines Varga",
    "site": "La Palma",
    "instrument": "echelle spectrograph",
    "target": "HD 189733",
    "hours": 6,
    "night": "2027-08-19",
    "grant": "ERC-771204",
}
STEPS = (  # step, goal, agent, service, params
    (
        "find_instrument",
        "Find an {instrument} unit at {site} in the instrument catalogue.",
        "scheduler",
        "find_instrument",
        {"site": "{site}", "kind": "{instrument}"},
    ),
    (
        "secure_time",
        "Get {hours} hours on the unit for {target} from the time-allocation committee.",
        "scheduler",
        "request_time",
        {"unit": "ref:find_instrument.unit", "target": "{target}", "hours": "{hours}"},
    ),
    (
        "book_night",
        "Book the unit for the night of {night}.",
        "scheduler",
        "book_night",
        {"unit": "ref:find_instrument.unit", "night": "{night}", "award": "ref:secure_time.award"},
    ),
    (
        "charge_grant",
        "Charge the {hours} hours to grant {grant}.",
        "bursar",
        "charge_grant",
        {"grant": "{grant}", "booking": "ref:book_night.booking", "hours": "{hours}"},
    ),
    (
        "notify_observer",
        "Send {observer} the schedule of the booked night.",
        "liaison",
        "send_schedule",
        {"observer": "{observer}", "booking": "ref:book_night.booking"},
    ),
)
PLANNER_PROMPT = (
    "You are the night desk's planner at the Roque Observatory. Write the plan of the observing "
    "run with write_plan (each step: a snake_case step name, its goal, the agent that runs it, "
    "the service it calls and the call's params; 'ref:<step>.<key>' for an earlier step's "
    "result), then hand each step off to its agent with the call in the reason. The programme "
    "office's notes correct the proposal sheet. On a report: hand off the next step, the same "
    "step again when it must wait, a new plan of the steps left when a facility asks for one, "
    "or end with the outcome of the run."
)
EXECUTOR_PROMPT = (
    "You are the observatory's {name}. Run the step the planner handed you with your services, "
    "then record it with report_step (outcome done, retry, replan or failed) and hand back to "
    f"the {PLANNER}."
)
MAX_POLLS = 12
MAX_ROUNDS = 8
MAX_REPLANS = 5
_REPLY = re.compile(r"(.+?) \[(hold|defer|revise|denied)\] (.*)", re.DOTALL)
_OUTCOME = {"defer": "retry", "revise": "replan", "denied": "failed"}


# --- the plan ---------------------------------------------------------------------------------
class PlanStep(BaseModel):
    """One step of the observing run's plan."""

    step: str = Field(description="a short snake_case name of the step")
    goal: str = Field(description="what the step achieves")
    agent: str = Field(description="the agent that runs it: scheduler, bursar or liaison")
    service: str = Field(description="the service the agent calls")
    params: dict[str, Any] = Field(description="the call's params; 'ref:<step>.<key>' for results")


async def write_plan(ctx: Context, steps: list[PlanStep]) -> str:
    """Record the plan of the observing run (the steps still to do, in order) in the workflow's
    state; a new plan replaces the steps left of the old one."""
    plan = [PlanStep.model_validate(s).model_dump() for s in steps]
    async with ctx.store.edit_state() as state:
        state["state"]["plan"] = plan
        state["state"]["revision"] = state["state"].get("revision", 0) + 1
    return f"Plan recorded: {', '.join(s['step'] for s in plan)}."


async def report_step(ctx: Context, step: str, outcome: str, result: str, note: str) -> str:
    """Record the outcome of a step (done, retry, replan or failed) and its result or note."""
    async with ctx.store.edit_state() as state:
        state["state"]["reports"].append(
            {"step": step, "outcome": outcome, "result": result, "note": note}
        )
        if outcome == "done":
            state["state"]["results"][step] = json.loads(result)
    return f"Recorded {step}: {outcome}."


# --- the scripted model -----------------------------------------------------------------------
def _calls(messages: list[dict[str, Any]]) -> list[tuple[int, str, dict[str, Any]]]:
    """Every tool call in the conversation: (message index, name, arguments)."""
    return [
        (i, c["function"]["name"], json.loads(c["function"]["arguments"] or "{}"))
        for i, m in enumerate(messages)
        for c in m.get("tool_calls") or []
    ]


def _call(name: str, args: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    call = {"id": f"call_{len(messages)}_{name}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _first_plan(sheet: str) -> list[dict[str, Any]]:
    """The planner's steps: the sheet's values, the notes' over them."""
    fields = dict(re.findall(r"^(Proposal sheet|Programme office notes): (\{.*\})$", sheet, re.M))
    facts = json.loads(fields["Proposal sheet"]) | json.loads(fields["Programme office notes"])
    values = {k: str(v) for k, v in facts.items()}
    return [
        {
            "step": step,
            "goal": goal.format(**values),
            "agent": agent,
            "service": service,
            "params": {k: _value(k, v, values) for k, v in params.items()},
        }
        for step, goal, agent, service, params in STEPS
    ]


def _value(key: str, value: str, facts: dict[str, str]) -> Any:
    if value.startswith("ref:"):
        return value
    return int(value.format(**facts)) if key == "hours" else value.format(**facts)


def _filled(params: dict[str, Any], results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A step's params with the earlier steps' results written in."""
    out = {}
    for key, value in params.items():
        if isinstance(value, str) and value.startswith("ref:"):
            step, name = value.removeprefix("ref:").split(".")
            value = results[step][name]
        out[key] = value
    return out


def _planner(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The planner's next turn: a plan, a handoff of a step, or the run's outcome."""
    calls = _calls(messages)
    plans = [(i, a["steps"]) for i, n, a in calls if n == "write_plan"]
    if not plans:
        sheet = next(_text(m.get("content")) for m in messages if m.get("role") == "user")
        return _call("write_plan", {"steps": _first_plan(sheet)}, messages)
    reports = [a for _, n, a in calls if n == "report_step"]
    results = {r["step"]: json.loads(r["result"]) for r in reports if r["outcome"] == "done"}
    at, plan = plans[-1]
    last = reports[-1] if reports and calls[-1][0] > at else None
    outcome = last["outcome"] if last else "done"
    rounds = (
        sum(r["step"] == last["step"] and r["outcome"] == "retry" for r in reports) if last else 0
    )
    if (
        outcome == "failed"
        or (outcome == "replan" and len(plans) > MAX_REPLANS)
        or (outcome == "retry" and rounds >= MAX_ROUNDS)
    ):
        assert last
        return _say(f"The observing run could not be booked: {last['step']}: {last['note']}")
    if last and outcome == "replan":  # the steps left, the facility's value for the planned one
        left = [s for s in plan if s["step"] not in results]
        if moved := re.search(r"use (.+?) instead of (.+?)$", last["note"]):
            for s in left:
                s["params"] = {k: moved[1] if v == moved[2] else v for k, v in s["params"].items()}
                s["goal"] = s["goal"].replace(moved[2], moved[1])
        return _call("write_plan", {"steps": left}, messages)
    todo = [s for s in plan if s["step"] not in results]
    if not todo:
        booking = results["book_night"]["booking"]
        return _say(f"Observing run booked: {booking}, charged and sent to the observer.")
    step = todo[0]
    call = json.dumps(_filled(step["params"], results))
    reason = f"Step {step['step']}: {step['goal']} Call {step['service']} with {call}"
    return _call("handoff", {"to_agent": step["agent"], "reason": reason}, messages)


def _executor(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """An executor's next turn for the step last handed to it."""
    calls = _calls(messages)
    at, _, handed = next(
        c for c in reversed(calls) if c[1] == "handoff" and c[2]["to_agent"] != PLANNER
    )
    found = re.fullmatch(r"Step (\w+): .*? Call (\w+) with (\{.*\})", handed["reason"], re.DOTALL)
    assert found, handed["reason"]
    step, service, args = found[1], found[2], json.loads(found[3])
    mine = [c for c in calls if c[0] > at]
    if not mine:
        return _call(service, args, messages)
    name, last = mine[-1][1], mine[-1][2]
    if name == "report_step":
        reason = f"{step} {last['outcome']}"
        return _call("handoff", {"to_agent": PLANNER, "reason": reason}, messages)
    said = _text(messages[-1].get("content"))

    def report(outcome: str, result: str = "", note: str = "") -> dict[str, Any]:
        args = {"step": step, "outcome": outcome, "result": result, "note": note}
        return _call("report_step", args, messages)

    reply = _REPLY.fullmatch(said)
    if reply and reply[2] == "hold":
        window = re.search(r"window (\d+)", said)
        return _call(name, last | {"window": int(window[1])} if window else last, messages)
    if reply:
        return report(_OUTCOME[reply[2]], note=said)
    result = json.loads(said)
    if result.get("next_page"):
        return _call(name, last | {"page": result["next_page"]}, messages)
    if result.get("state") == "in review":
        if sum(c[1] == "time_request_status" for c in mine) >= MAX_POLLS:
            return report("failed", note=f"TAC [denied] still in review after {MAX_POLLS} checks")
        return _call("time_request_status", {"request": result["request"]}, messages)
    return report("done", result=said)


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> sheet = "Proposal sheet: " + json.dumps(JOB) + "\\nProgramme office notes: {}"
    >>> msg = respond({"tools": [{"function": {"name": "write_plan"}}],
    ...     "messages": [{"role": "user", "content": sheet}]})
    >>> call = msg["choices"][0]["message"]["tool_calls"][0]["function"]
    >>> json.loads(call["arguments"])["steps"][2]["params"]["night"]
    '2027-08-19'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    tools = {t["function"]["name"] for t in body.get("tools") or []}
    act = _planner if "write_plan" in tools else _executor
    return completion(body, act(messages))


# --- the world --------------------------------------------------------------------------------
class FacilityReply(RuntimeError):
    """A facility's refusal: ``<facility> [<verdict>] <text>``."""


_FACILITIES = {
    "find_instrument": "instrument catalogue",
    "request_time": "TAC",
    "book_night": "dome scheduling",
    "charge_grant": "grants office",
    "send_schedule": "visitor office",
}
_UNITS = {"La Palma": "LP-ES2", "Calar Alto": "CA-ES1", "Tenerife": "TF-ES3"}


@dataclass
class World:
    """The catalogue, committee, dome scheduling, grants office and visitor office of one run."""

    label: Label
    errors: list[str] = field(default_factory=list)
    polls: dict[str, int] = field(default_factory=dict)
    booked: str = ""
    sent: bool = False

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        self.window = JOB["night"]

    def fault(self, name: str, old: str = "") -> None:
        """Raise the scenario's next reply when this call is one it targets."""
        if self.errors and self.label.params.get("service") == name:
            raise FacilityReply(f"{_FACILITIES[name]} " + self.errors.pop(0).format(old=old))

    def tools(self) -> dict[str, list[FunctionTool]]:
        """Each executor agent's services."""
        params = self.label.params
        seed = self.label.seed

        def find_instrument(site: str, kind: str, page: int = 1) -> str:
            """Find an instrument unit of a kind at a site in the catalogue, a page at a time."""
            self.fault("find_instrument")
            if page < int(params.get("pages", 1)):
                return json.dumps({"units": [], "page": page, "next_page": page + 1})
            return json.dumps({"unit": _UNITS.get(site, "XX-ES0"), "site": site, "kind": kind})

        def request_time(unit: str, target: str, hours: int) -> str:
            """Ask the time-allocation committee for hours on a unit; its decision comes
            later."""
            self.fault("request_time")
            if target != JOB["target"]:
                raise FacilityReply(
                    f"TAC [denied] {target} is not a target of proposal {JOB['proposal']}"
                )
            request = f"TR-{seed % 739}"
            self.polls[request] = 0
            return json.dumps({"request": request, "unit": unit, "state": "in review"})

        def time_request_status(request: str) -> str:
            """The committee's decision on a time request."""
            self.polls[request] += 1
            stuck = self.label.scenario == "loop_poll_stuck"
            if stuck or self.polls[request] < int(params.get("polls", 1)):
                return json.dumps({"request": request, "state": "in review"})
            return json.dumps({"request": request, "state": "granted", "award": f"AW-{seed % 97}"})

        def book_night(unit: str, night: str, award: str, window: int = 0) -> str:
            """Book a unit for a night under a time award."""
            self.fault("book_night", night)
            if unit != _UNITS[JOB["site"]]:
                raise FacilityReply(
                    f"dome scheduling [denied] award {award} is for {JOB['site']}; unit {unit}"
                    " is not on that mountain"
                )
            moved = params.get("dome_night")
            if moved and night != moved:
                self.window = str(moved)
                raise FacilityReply(
                    "dome scheduling [revise] the aluminising crew holds the dome that night;"
                    f" use {moved} instead of {night}"
                )
            self.booked = night
            return json.dumps({"booking": f"NB-{night}-{unit}", "night": night})

        def charge_grant(grant: str, booking: str, hours: int, window: int = 0) -> str:
            """Charge a booking's hours to a grant."""
            self.fault("charge_grant", grant)
            if grant != JOB["grant"]:
                raise FacilityReply(
                    f"grants office [denied] {grant} is not a grant held by {JOB['observer']}"
                )
            return json.dumps({"charge": f"CH-{seed % 557}", "hours": hours})

        def send_schedule(observer: str, booking: str, window: int = 0) -> str:
            """Send an observer the schedule of a booking."""
            self.fault("send_schedule")
            self.sent = True
            return json.dumps({"sent": booking, "to": observer})

        return {
            "scheduler": [
                FunctionTool.from_defaults(f)
                for f in (find_instrument, request_time, time_request_status, book_night)
            ],
            "bursar": [FunctionTool.from_defaults(charge_grant)],
            "liaison": [FunctionTool.from_defaults(send_schedule)],
        }


def workflow(llm: LiteLLM, world: World) -> AgentWorkflow:
    """The planner and its three executors, handing off to each other."""
    services = world.tools()
    report = FunctionTool.from_defaults(report_step)
    planner = FunctionAgent(
        name=PLANNER,
        description="Plans the observing run and hands each step to its agent.",
        system_prompt=PLANNER_PROMPT,
        llm=llm,
        tools=[FunctionTool.from_defaults(write_plan)],
        can_handoff_to=list(services),
    )
    executors = [
        FunctionAgent(
            name=name,
            description="Runs the planner's steps that call "
            + ", ".join(str(t.metadata.name) for t in tools),
            system_prompt=EXECUTOR_PROMPT.format(name=name),
            llm=llm,
            tools=[*tools, report],
            can_handoff_to=[PLANNER],
        )
        for name, tools in services.items()
    ]
    return AgentWorkflow(
        agents=[planner, *executors],
        root_agent=PLANNER,
        initial_state={"plan": [], "revision": 0, "results": {}, "reports": []},
        timeout=300,
    )


class Observatory:
    """One observing run, from the proposal sheet to the watched observation."""

    def __init__(self, label: Label, llm: LiteLLM, provider: TracerProvider) -> None:
        self.label = label
        self.world = World(label)
        self.llm = llm
        self.tracer = provider.get_tracer(TRACER)

    async def book(self) -> str:
        notes = {k: self.label.params[k] for k in JOB if k in self.label.params}
        sheet = f"Proposal sheet: {json.dumps(JOB)}\nProgramme office notes: {json.dumps(notes)}"
        with self.tracer.start_as_current_span("observing run") as root:
            root.set_attribute("proposal", JOB["proposal"])
            handler = workflow(self.llm, self.world).run(user_msg=sheet, max_iterations=400)
            answer = str(await handler)
            failure = "" if self.world.sent else answer
            if not failure:
                failure = self.verify() or self.watch()
            root.set_attribute("outcome", "failed" if failure else "booked")
            if failure:
                root.set_status(Status(StatusCode.ERROR, failure))
            return format(root.get_span_context().trace_id, "032x")

    def verify(self) -> str:
        """The booked night against the astronomer's dark-time window; the failure or ''."""
        with self.tracer.start_as_current_span("verify night") as span:
            span.set_attribute("night", self.world.booked)
            if self.world.booked == self.world.window:
                return ""
            said = f"booked {self.world.booked}; the dark-time window is {self.world.window}"
            span.set_status(Status(StatusCode.ERROR, said))
            return said

    def watch(self) -> str:
        """The observation watched through the night; the failure or ''."""
        ash = self.label.scenario == "external_ash"
        with self.tracer.start_as_current_span("watch observation") as span:
            for check in range(1, 4):
                if ash and check > int(self.label.params["polls"]):
                    said = f"an ash plume closed the dome at check {check}"
                    span.set_status(Status(StatusCode.ERROR, said))
                    return said
                span.add_event("dome open", {"check": check})
            return ""


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the observing-run scenarios against the scripted model; run name -> trace id.

    OpenLLMetry's core instrumentor adds its span and event handlers to LlamaIndex's root
    dispatcher and its ``uninstrument`` leaves them there: the handlers the dispatcher had before
    are put back after the play, so no later LlamaIndex run reaches this play's provider.
    """
    out: dict[str, str] = {}
    if not labels:
        return out
    from opentelemetry.instrumentation.llamaindex import LlamaIndexInstrumentor

    dispatcher = get_dispatcher()
    spans, events = list(dispatcher.span_handlers), list(dispatcher.event_handlers)
    instrumentor = LlamaIndexInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer(respond=respond) as server:
            llm = LiteLLM(
                model=f"openai/{MODEL}",
                api_base=server.base_url("corpus-observatory"),
                api_key="test",
            )
            for label in labels:
                out[label.run] = asyncio.run(Observatory(label, llm, provider).book())
    finally:
        instrumentor.uninstrument()
        dispatcher.span_handlers[:] = spans
        dispatcher.event_handlers[:] = events
    return out

"""A marble quarry's dispatch office on the real OpenAI Agents SDK with **handoffs** and an
**agent as a tool**, traced by OpenLLMetry's openai-agents instrumentor
(``OpenAIAgentsInstrumentor().instrument(tracer_provider=...)``, content captured as
``TRACELOOP_TRACE_CONTENT``'s default), plus the app's own root span per job (a plain
OpenTelemetry tracer), against a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)``). No planscope code.

Sealed-31 split only (see README.md). The job: a sculptor commissioned a block of marble; send
it. Find a block of the stone and weight in the yard's inventory (read page by page), book the
loading crane for the haul day, get the heavy-haul road permit (the highways office decides
later: polled), charge the deposit to the studio's account, send the studio the delivery
notice. Written as the SDK's multi-agent docs write a triage agent:

* one ``Runner.run(dispatcher, brief, max_turns=MAX_TURNS)`` per job, in one SDK
  ``trace("marble dispatch")``, under the app's ``dispatch block {job}`` span;
* the ``dispatcher`` holds the plan: it calls the ``block_planner`` agent as a tool
  (``Agent.as_tool("draft_plan", ...)``; the planner's ``output_type`` is a :class:`HaulPlan`,
  the tool's output its JSON) and hands each step off to the step's desk (``handoff(desk,
  input_type=WorkOrder, on_handoff=...)``: the step, its goal, the service and its inputs with
  the earlier results written in); the desk calls its ``function_tool`` services and hands back
  (``handoff(dispatcher, input_type=DeskReport, tool_name_override="report_to_dispatcher")``:
  ``done`` / ``later`` / ``reroute`` / ``stop`` / ``gave_up``); the dispatcher hands a
  ``later`` step off again (up to :data:`MAX_ATTEMPTS`), asks the planner again after a
  ``reroute`` (up to :data:`MAX_PLANS` plans, told what is done and what went wrong) and ends
  with a :class:`DispatchOutcome`;
* the services raise :class:`Signal` errors; the tools' ``failure_error_function``
  (:func:`signal_for_model`) hands the model a JSON object ``{"failed": true, "signal",
  "detail"}``: ``amber`` (busy: the desk calls again at the slot the detail names), ``hold``
  (the desk reports ``later``), ``detour`` (``reroute``: the detail ends ``take X in place of
  Y``), ``red`` (final);
* after the run the app checks the crane booking against the commission (``verify dispatch``)
  and watches the haul (``watch haul {block}``, an event per state).

During a play the SDK runs on a trace provider of its own with no processor but OpenLLMetry's
(nothing goes to OpenAI's platform; OpenLLMetry's ``uninstrument`` leaves its processor behind),
and the previous trace provider is put back afterwards.

The planner trusts the yard foreman's notes over the commission: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from agents import (
    Agent,
    Handoff,
    OpenAIChatCompletionsModel,
    RunContextWrapper,
    Runner,
    RunResult,
    RunResultStreaming,
    Tool,
    function_tool,
    handoff,
    trace,
)
from agents.exceptions import MaxTurnsExceeded
from agents.tracing import get_trace_provider, set_trace_provider
from agents.tracing.provider import DefaultTraceProvider
from openai import AsyncOpenAI
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from pydantic import BaseModel

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label

TRACER = "quarry"
COMMISSION: dict[str, Any] = {
    "job": "QD-3318",
    "stone": "Statuario",
    "tonnes": 15.8,
    "haul_day": "2027-04-09",
    "route": "SS1 Aurelia to Pietrasanta",
    "crane": "G1",
    "account": "ST-60482",
    "deposit": 4200.0,
    "studio_email": "yard@studio-venturi.example",
}
AXLE_LIMIT_T = 17.0
"""The heaviest block the haul route's permit allows."""
MAX_TURNS = 90
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_AMBER = 8
"""Busy answers in one desk turn before the desk gives up."""
MAX_POLLS = 12
"""Pending permit checks before the permit desk gives up."""
DISPATCHER = "You are the quarry's dispatcher. Draft the plan, hand each step to its desk."
PLANNER = "You plan how a commissioned marble block leaves the quarry. Answer the plan."
DESK = "You are the quarry's {desk}. Do the work order with your services, then report back."
SIGNALS = ("amber", "hold", "detour", "red")


# --- the plan, the orders, the reports -------------------------------------------------------
class Entry(BaseModel):
    name: str
    value: str


class PlanStep(BaseModel):
    step: str
    goal: str
    desk: str
    service: str
    inputs: list[Entry]
    """A value ``@step`` stands for that earlier step's result."""


class HaulPlan(BaseModel):
    rationale: str
    steps: list[PlanStep]


class WorkOrder(BaseModel):
    step: str
    goal: str
    service: str
    inputs: list[Entry]


class DeskReport(BaseModel):
    step: str
    outcome: Literal["done", "later", "reroute", "stop", "gave_up"]
    result: str
    note: str


class DispatchOutcome(BaseModel):
    status: Literal["delivered", "failed"]
    failed_step: str
    reason: str


# --- the scripted model -----------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


@dataclass
class Call:
    """A tool call the conversation holds, with what came back."""

    name: str
    args: dict[str, Any]
    result: str = ""


def _calls(messages: list[dict[str, Any]]) -> list[Call]:
    """Every tool call in the conversation, in order, each with its tool message's content."""
    out: dict[str, Call] = {}
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            out[c["id"]] = Call(fn.get("name", ""), json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool" and m.get("tool_call_id") in out:
            out[m["tool_call_id"]].result = _text(m.get("content"))
    return list(out.values())


def _say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _plan(brief: str) -> dict[str, Any]:
    """The planner's answer: the commission's facts, the foreman's notes trusted over them;
    after a ``take X in place of Y`` problem every input that was Y (or an earlier result that
    was Y) becomes X; the steps done are left out."""
    lines = dict(re.findall(r"^(\w[\w' ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Commission"]) | json.loads(lines.get("Foreman's notes", "{}"))
    done: dict[str, str] = json.loads(lines.get("Done", "{}"))
    swap = re.search(r"take (\S+) in place of (\S+?)\.?$", lines.get("Problem", ""))
    steps = [
        ("find_block", f"Find a {facts['stone']} block of at least {facts['tonnes']} t.",
         "yard_desk", "search_blocks", {"stone": facts["stone"], "min_tonnes": facts["tonnes"]}),
        ("book_crane", f"Book a crane to load the block on {facts['haul_day']}.",
         "crane_desk", "book_crane",
         {"block": "@find_block", "crane": facts["crane"], "day": facts["haul_day"]}),
        ("haul_permit", f"Get the heavy-haul permit for {facts['route']}.", "permit_desk",
         "apply_haul_permit",
         {"block": "@find_block", "route": facts["route"], "day": facts["haul_day"]}),
        ("charge_deposit", f"Charge the {facts['deposit']} EUR deposit to the studio.",
         "accounts_desk", "charge_account",
         {"account": facts["account"], "amount": facts["deposit"], "job": facts["job"]}),
        ("notify_studio", "Send the studio the delivery notice.", "studio_desk",
         "send_delivery_notice",
         {"email": facts["studio_email"], "block": "@find_block", "day": facts["haul_day"],
          "permit": "@haul_permit"}),
    ]  # fmt: skip
    out = []
    for step, goal, desk, service, args in steps:
        if step in done:
            continue
        inputs = []
        for name, raw in args.items():
            value = str(raw)
            earlier = done.get(value[1:], "") if value.startswith("@") else ""
            if swap and swap.group(2) in (value, earlier):
                value = swap.group(1)
            inputs.append({"name": name, "value": value})
        out.append({"step": step, "goal": goal, "desk": desk, "service": service, "inputs": inputs})
    return {"rationale": f"Send {facts['job']} out step by step.", "steps": out}


def _dispatcher(messages: list[dict[str, Any]], brief: str) -> dict[str, Any]:
    """The dispatcher's next turn, read from the whole conversation: draft the plan, hand the
    next step off, hand a ``later`` step off again, re-plan after a ``reroute``, or end."""
    calls = _calls(messages)
    turn = len(messages)
    drafts = [i for i, c in enumerate(calls) if c.name == "draft_plan"]
    if not drafts:
        return _call("draft_plan", {"input": brief}, turn)
    reports = [c.args for c in calls if c.name == "report_to_dispatcher"]
    done = {r["step"]: r["result"] for r in reports if r["outcome"] == "done"}
    plan = [PlanStep(**s) for s in json.loads(calls[drafts[-1]].result)["steps"]]
    since = [c.args for c in calls[drafts[-1] :] if c.name == "report_to_dispatcher"]

    def dispatch(step: PlanStep) -> dict[str, Any]:
        inputs = [
            {"name": e.name, "value": done.get(e.value[1:], e.value)}
            if e.value.startswith("@")
            else e.model_dump()
            for e in step.inputs
        ]
        order = {"step": step.step, "goal": step.goal, "service": step.service, "inputs": inputs}
        return _call(f"transfer_to_{step.desk}", order, turn)

    def end(status: str, step: str = "", reason: str = "") -> dict[str, Any]:
        return _say(json.dumps({"status": status, "failed_step": step, "reason": reason}))

    last = since[-1] if since else None
    if last is None or last["outcome"] == "done":
        left = [s for s in plan if s.step not in done]
        return dispatch(left[0]) if left else end("delivered")
    step = next(s for s in plan if s.step == last["step"])
    if last["outcome"] == "later":
        if sum(r["step"] == step.step for r in since) < MAX_ATTEMPTS:
            return dispatch(step)
        return end("failed", step.step, f"still waiting after {MAX_ATTEMPTS} tries")
    if last["outcome"] == "reroute" and len(drafts) < MAX_PLANS:
        again = f"{brief}\nDone: {json.dumps(done)}\nProblem: {step.step}: {last['note']}"
        return _call("draft_plan", {"input": again}, turn)
    return end("failed", step.step, last["note"])


def _number(value: str) -> Any:
    try:
        return float(value)
    except ValueError:
        return value


def _desk(messages: list[dict[str, Any]], desk: str) -> dict[str, Any]:
    """A desk's next turn for the work order handed to it last: call the service, call again at
    the slot a busy answer names, follow ``next_page``, poll a pending application, report."""
    calls = _calls(messages)
    turn = len(messages)
    start = max(i for i, c in enumerate(calls) if c.name == f"transfer_to_{desk}")
    order = WorkOrder(**calls[start].args)
    args = {e.name: _number(e.value) for e in order.inputs}
    mine = [c for c in calls[start + 1 :] if c.name != "report_to_dispatcher"]

    def report(outcome: str, result: str = "", note: str = "") -> dict[str, Any]:
        said = {"step": order.step, "outcome": outcome, "result": result, "note": note}
        return _call("report_to_dispatcher", said, turn)

    if not mine:
        return _call(order.service, args, turn)
    answer = json.loads(mine[-1].result)
    if answer.get("failed"):
        signal, detail = answer["signal"], answer["detail"]
        if signal == "amber":
            busy = sum('"signal": "amber"' in c.result for c in mine)
            if busy >= MAX_AMBER:
                return report("gave_up", note=f"busy {busy} times: {detail}")
            slot = re.search(r"slot (\d+)", detail)
            return _call(order.service, args | {"slot": int(slot.group(1)) if slot else busy}, turn)
        outcome = {"hold": "later", "detour": "reroute", "red": "stop"}.get(signal, "stop")
        return report(outcome, note=detail)
    if answer.get("next_page"):
        return _call(order.service, args | {"page": answer["next_page"]}, turn)
    if answer.get("state") == "pending":
        checks = sum('"pending"' in c.result for c in mine)
        if checks > MAX_POLLS:
            return report(
                "gave_up", note=f"{answer['application']} pending after {MAX_POLLS} checks"
            )
        return _call("haul_permit_status", {"application": answer["application"]}, turn)
    if "blocks" in answer:
        fit = [b["id"] for b in answer["blocks"] if b["stone"] == args["stone"]]
        return report("done", fit[0]) if fit else report("stop", note="no block fits")
    return report("done", str(answer["id"]))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> msg = respond({"messages": [{"role": "system", "content": DISPATCHER},
    ...     {"role": "user", "content": "Commission: {}"}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["name"]
    'draft_plan'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = _text(messages[0].get("content")) if messages else ""
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    desk = re.match(r"You are the quarry's (\w+)\.", system)
    if system.startswith(PLANNER):
        message = _say(json.dumps(_plan(user)))
    elif system.startswith(DISPATCHER):
        message = _dispatcher(messages, user)
    elif desk:
        message = _desk(messages, desk.group(1))
    else:
        message = _say("I cannot help with that.")
    return completion(body, message)


# --- the world ----------------------------------------------------------------------------
class Signal(RuntimeError):
    """A quarry service's refusal: its ``signal`` (one of :data:`SIGNALS`) and what it said."""

    def __init__(self, signal: str, detail: str) -> None:
        super().__init__(detail)
        self.signal = signal


def signal_for_model(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """What the model reads when a service raised: the signal and its detail as JSON (the SDK's
    default hides every error's text).

    >>> signal_for_model(None, Signal("red", "no such account"))  # type: ignore[arg-type]
    '{"failed": true, "signal": "red", "detail": "no such account"}'
    """
    signal = error.signal if isinstance(error, Signal) else "red"
    return json.dumps({"failed": True, "signal": signal, "detail": str(error)})


class DispatchFailed(RuntimeError):
    """The block could not be sent (or its haul was stopped after it was)."""


@dataclass
class World:
    """The yard, the cranes, the highways office, the ledger and the studio of one job."""

    label: Label
    errors: list[tuple[str, str]] = field(default_factory=list)
    blocks: dict[str, float] = field(default_factory=dict)
    cranes: dict[str, dict[str, Any]] = field(default_factory=dict)
    applications: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.errors = [
            (signal, detail)
            for signal, detail in (e.split(": ", 1) for e in self.label.params.get("errors", ()))
        ]

    @property
    def scenario(self) -> str:
        return self.label.scenario

    def fault(self, service: str, **carried: Any) -> None:
        """Raise the scenario's next signal when ``service`` is the one it targets; an ``{old}``
        in it is the account the call carried."""
        if self.errors and service == self.label.params.get("service"):
            signal, detail = self.errors.pop(0)
            raise Signal(signal, detail.format(old=carried.get("account", "")))

    def tools(self) -> dict[str, list[Tool]]:
        """Each desk's services, as ``function_tool``s bound to this job's world."""

        @function_tool(failure_error_function=signal_for_model)
        def search_blocks(stone: str, min_tonnes: float, page: int = 1) -> str:
            """Blocks in the yard's inventory of a stone and at least a weight, a page at a time.

            Args:
                stone: the marble's name.
                min_tonnes: the lightest block wanted, in tonnes.
                page: the inventory page.
            """
            self.fault("search_blocks")
            pages = int(self.label.params.get("pages", 1))
            if page < pages:
                taken = [{"id": f"BLK-{page}{n}", "stone": "Bardiglio", "reserved": True}
                         for n in (1, 2)]  # fmt: skip
                return json.dumps({"blocks": [], "reserved": taken, "next_page": page + 1})
            block = f"BLK-{self.label.seed}-{int(min_tonnes * 10)}"
            self.blocks[block] = round(min_tonnes + 0.4, 1)
            return json.dumps(
                {"blocks": [{"id": block, "stone": stone, "tonnes": self.blocks[block]}]}
            )

        @function_tool(failure_error_function=signal_for_model)
        def book_crane(block: str, crane: str, day: str, slot: int = 0) -> str:
            """Book a crane to load a block onto the haulier's trailer.

            Args:
                block: the block's id.
                crane: the gantry crane, ``G1``...
                day: the loading day, ISO.
                slot: the quarter-hour slot of the day asked for (0: the first free).
            """
            self.fault("book_crane")
            down = self.label.params.get("crane_to")
            if down and crane == COMMISSION["crane"]:
                raise Signal(
                    "detour",
                    f"crane {crane} is down for its rope inspection on {day}; "
                    f"take {down} in place of {crane}",
                )
            if block not in self.blocks:
                raise Signal("red", f"no block {block} in the yard")
            booking = f"CR-{crane}-{day.replace('-', '')}-{slot:02d}"
            self.cranes[booking] = {"block": block, "crane": crane, "day": day}
            return json.dumps({"id": booking, "crane": crane, "day": day})

        @function_tool(failure_error_function=signal_for_model)
        def apply_haul_permit(block: str, route: str, day: str, slot: int = 0) -> str:
            """Apply to the highways office for a heavy-haul permit.

            Args:
                block: the block's id.
                route: the road the haul takes.
                day: the haul day, ISO.
                slot: the office's queue slot asked for (0: the next).
            """
            self.fault("apply_haul_permit")
            weight = self.blocks.get(block, 0.0)
            if weight > AXLE_LIMIT_T:
                raise Signal(
                    "red",
                    f"block {block} weighs {weight} t, over the {AXLE_LIMIT_T} t axle limit "
                    f"of {route}",
                )
            application = f"HP-{self.label.seed}-{len(self.applications) + 1}"
            self.applications[application] = 0
            if "poll" in self.scenario:
                return json.dumps({"application": application, "state": "pending"})
            return json.dumps({"id": application, "state": "granted", "day": day})

        @function_tool(failure_error_function=signal_for_model)
        def haul_permit_status(application: str) -> str:
            """Whether the highways office has decided a permit application.

            Args:
                application: the application's id.
            """
            self.applications[application] += 1
            if self.scenario == "loop_poll_stuck" or self.applications[application] < int(
                self.label.params.get("polls", 0)
            ):
                return json.dumps({"application": application, "state": "pending"})
            return json.dumps({"id": application, "state": "granted"})

        @function_tool(failure_error_function=signal_for_model)
        def charge_account(account: str, amount: float, job: str) -> str:
            """Charge a studio's account.

            Args:
                account: the studio's account.
                amount: the amount, EUR.
                job: the dispatch job charged for.
            """
            self.fault("charge_account", account=account)
            if account != COMMISSION["account"]:
                raise Signal("red", f"the ledger holds no studio account {account}")
            return json.dumps({"id": f"DP-{self.label.seed}", "amount": amount})

        @function_tool(failure_error_function=signal_for_model)
        def send_delivery_notice(
            email: str, block: str, day: str, permit: str, slot: int = 0
        ) -> str:
            """Email the studio the delivery notice.

            Args:
                email: the studio's address.
                block: the block's id.
                day: the haul day, ISO.
                permit: the haul permit's id.
                slot: the mail relay's send slot asked for (0: now).
            """
            self.fault("send_delivery_notice")
            return json.dumps({"id": f"DN-{block}", "to": email})

        return {
            "yard_desk": [search_blocks],
            "crane_desk": [book_crane],
            "permit_desk": [apply_haul_permit, haul_permit_status],
            "accounts_desk": [charge_account],
            "studio_desk": [send_delivery_notice],
        }

    def haul_states(self) -> list[str]:
        """What the watch sees of the haul: loading, on the road, then delivered (or stopped)."""
        road = ["on the road"] * int(self.label.params.get("polls", 1))
        lost = self.scenario.startswith("external_")
        return ["loading", *road, "road closed" if lost else "delivered"]


# --- the app ------------------------------------------------------------------------------
async def _plan_json(result: RunResult | RunResultStreaming) -> str:
    """The planner tool's output: the plan as JSON (not its Python repr)."""
    return result.final_output_as(HaulPlan).model_dump_json()


async def _handed(ctx: RunContextWrapper[Any], given: WorkOrder | DeskReport) -> None:
    """The SDK wants an ``on_handoff`` with every ``input_type``; the agent handed to reads the
    order or the report from the conversation, so nothing is kept here."""


class Dispatch:
    """One job: the dispatcher, the planner as its tool, the desks it hands off to."""

    def __init__(self, label: Label, model: OpenAIChatCompletionsModel) -> None:
        self.label = label
        self.world = World(label)
        planner = Agent(name="block_planner", instructions=PLANNER, model=model,
                        output_type=HaulPlan)  # fmt: skip
        self.dispatcher: Agent[Any] = Agent(
            name="dispatcher",
            instructions=DISPATCHER,
            model=model,
            output_type=DispatchOutcome,
            tools=[
                planner.as_tool(
                    "draft_plan",
                    "Draft (or re-draft) the plan for a commission.",
                    custom_output_extractor=_plan_json,
                )
            ],
        )
        back = handoff(
            self.dispatcher,
            tool_name_override="report_to_dispatcher",
            tool_description_override="Report the work order's outcome to the dispatcher.",
            input_type=DeskReport,
            on_handoff=_handed,
        )
        desks: list[Handoff[Any, Any]] = []
        for name, tools in self.world.tools().items():
            desk = Agent(name=name, instructions=DESK.format(desk=name), model=model, tools=tools,
                         handoffs=[back])  # fmt: skip
            desks.append(handoff(desk, input_type=WorkOrder, on_handoff=_handed))
        self.dispatcher.handoffs = list(desks)

    def brief(self) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("tonnes", "haul_day", "account")
            if k in self.label.params
        }
        lines = [f"Send commission {COMMISSION['job']}.", f"Commission: {json.dumps(COMMISSION)}"]
        if notes:
            lines.append(f"Foreman's notes: {json.dumps(notes)}")
        return "\n".join(lines)

    def verify(self, tracer: otel_trace.Tracer) -> None:
        """The app's check: the crane loads the block on the commission's haul day."""
        with tracer.start_as_current_span("verify dispatch") as span:
            (booking,) = self.world.cranes.values()
            span.set_attribute("crane.day", booking["day"])
            span.set_attribute("commission.day", COMMISSION["haul_day"])
            if booking["day"] != COMMISSION["haul_day"]:
                raise DispatchFailed(
                    f"crane loads on {booking['day']}, the studio expects {COMMISSION['haul_day']}"
                )

    def watch(self, tracer: otel_trace.Tracer) -> None:
        (booking,) = self.world.cranes.values()
        block = booking["block"]
        with tracer.start_as_current_span(f"watch haul {block}") as span:
            for state in self.world.haul_states():
                span.add_event("haul", {"block": block, "state": state})
                if state == "road closed":
                    raise DispatchFailed(f"haul of {block} stopped: landslide closes the SS1")

    async def run(self, tracer: otel_trace.Tracer) -> str:
        """Send the block under the app's span; the OTel trace id."""
        with tracer.start_as_current_span(
            f"dispatch block {COMMISSION['job']}",
            record_exception=False,
            set_status_on_exception=False,
        ) as root:
            root.set_attribute("job", COMMISSION["job"])
            trace_id = format(root.get_span_context().trace_id, "032x")
            try:
                with trace("marble dispatch", group_id=COMMISSION["job"]):
                    result = await Runner.run(self.dispatcher, self.brief(), max_turns=MAX_TURNS)
                outcome = result.final_output_as(DispatchOutcome)
                if outcome.status != "delivered":
                    raise DispatchFailed(f"{outcome.failed_step}: {outcome.reason}")
                self.verify(tracer)
                self.watch(tracer)
            except (DispatchFailed, MaxTurnsExceeded) as exc:
                root.record_exception(exc)
                root.set_status(Status(StatusCode.ERROR, str(exc)))
                root.set_attribute("outcome", "failed")
            else:
                root.set_attribute("outcome", "delivered")
        return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the quarry scenarios with OpenLLMetry's spans and the app's on ``provider``; run
    name -> trace id."""
    if not labels:
        return {}
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    # The SDK's trace provider is global and OpenLLMetry adds its processor to it for good: the
    # play runs on a fresh one (no processor of the SDK's: nothing goes to OpenAI's platform)
    # and puts the previous one back, so other agents' SDK runs never reach OpenLLMetry.
    previous = get_trace_provider()
    set_trace_provider(DefaultTraceProvider())
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer(TRACER)
    try:
        with ModelServer(respond=respond) as server:
            client = AsyncOpenAI(
                base_url=server.base_url("corpus-quarry"), api_key="test", max_retries=0
            )
            model = OpenAIChatCompletionsModel(model=MODEL, openai_client=client)

            async def all_runs() -> dict[str, str]:
                return {label.run: await Dispatch(label, model).run(tracer) for label in labels}

            return asyncio.run(all_runs())
    finally:
        instrumentor.uninstrument()
        set_trace_provider(previous)

"""A turret-clock restorer's workshop on pydantic-ai with **agent delegation**: a ``foreman``
agent whose tools run a ``clock_planner`` agent (a structured plan) and a ``fitter`` agent (one
run per step attempt, calling the workshop's services), each delegate run given
``usage=ctx.usage``; traced by pydantic-ai's own instrumentation (``Agent.instrument_all``
with ``InstrumentationSettings(tracer_provider=...)``, content included as by default)
converted by OpenInference's pydantic-ai span processor (``OpenInferenceSpanProcessor`` on the
provider before the exporter's processor), plus the app's own root span per job. The model:
pydantic-ai's ``OpenAIChatModel`` with an ``OpenAIProvider`` pointed at a scripted model on the
conformance suite's fake OpenAI server (``ModelServer(respond=...)``). No planscope code.

Sealed-33 split only (see README.md). The job: a parish's church clock needs a new great wheel.
Source a wheel of the clock's tooth count from the wheelwrights' catalogue (read page by page),
book a steeplejack rope team to lift the movement down on the lift day, get the diocese's
faculty for the work (a polled application), charge the parish restoration fund, send the
churchwardens the notice. As a pydantic-ai user writes delegation:

* the app opens one OTel span per job (``restore clock {job}``), runs the ``foreman`` once with
  :data:`LIMITS` (``UsageLimits``) and checks its :class:`JobOutcome`, then the lift day
  against the order (``verify lift day``) and the clock going again (``watch clock {church}``);
* the foreman's ``plan`` tool runs the ``clock_planner`` (``output_type=`` :class:`ClockPlan`:
  numbered tasks with ``slug``, ``goal``, ``service`` and ``inputs``, ``"=slug"`` for an
  earlier task's result) and hands the plan back as the tool's result; after a ``replan``
  report the foreman calls ``plan`` again with what is done and the problem;
* the foreman's ``carry_out`` tool runs the ``fitter`` for one task (``output_type=``
  :class:`TaskReport`); a service that raised :class:`Postponed` makes ``carry_out`` raise
  ``ModelRetry`` (the foreman carries the task out again), :class:`Superseded` becomes a
  ``replan`` report, :class:`Refused` is not caught (the job fails);
* the services' errors are **logfmt lines** (``status=busy msg="..." retry_at=14:20``); a
  ``busy`` service raises ``ModelRetry`` in the fitter's run (the fitter calls again at the time
  named); the fitter reads the catalogue's ``next_page`` and polls a pending faculty
  application, reporting ``gave_up`` after :data:`MAX_POLLS` checks.

The planner trusts the sexton's notes over the order: a scenario's wrong value comes from a
note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Literal

from openinference.instrumentation.pydantic_ai import OpenInferenceSpanProcessor
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from pydantic import BaseModel
from pydantic_ai import Agent, InstrumentationSettings, ModelRetry, RunContext
from pydantic_ai.exceptions import UnexpectedModelBehavior, UsageLimitExceeded
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.usage import UsageLimits

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label

TRACER = "turret"
ORDER: dict[str, Any] = {
    "job": "TC-5127",
    "church": "St Aldhelm, Wareham",
    "clock": "1872 flatbed, three trains",
    "teeth": 84,
    "lift_day": "2027-06-15",
    "crew": "Purbeck Ropes",
    "account": "PX-40719",
    "fee": 3850.0,
    "wardens": "wardens@st-aldhelm.example",
}
MAX_TASK_ATTEMPTS = 8
"""Times the foreman carries one task out (``carry_out``'s retries)."""
MAX_PLANS = 5
MAX_BUSY = 8
"""Busy answers in one fitter run (its tools' retries)."""
MAX_POLLS = 12
LIMITS = UsageLimits(request_limit=300, tool_calls_limit=250)
FOREMAN = "You are the foreman of a turret-clock workshop. Plan the job, then carry it out."
PLANNER = "You plan a turret-clock restoration job as numbered tasks."
FITTER = "You are a clock fitter. Carry out the one task you are given with the services."


# --- the plan and the reports -------------------------------------------------------------
class Task(BaseModel):
    n: int
    slug: str
    goal: str
    service: str
    inputs: dict[str, str]
    """An input ``"=slug"`` stands for that earlier task's result."""


class ClockPlan(BaseModel):
    summary: str
    tasks: list[Task]


class TaskReport(BaseModel):
    task: str
    outcome: Literal["done", "replan", "gave_up"]
    result: str
    note: str


class JobOutcome(BaseModel):
    status: Literal["restored", "failed"]
    task: str
    reason: str


# --- the scripted model -------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


@dataclass
class Call:
    """A tool call the conversation holds, with the text that came back for it."""

    name: str
    args: dict[str, Any]
    came_back: str = ""

    @property
    def answer(self) -> dict[str, Any]:
        """What came back as JSON: the tool's result, or ``{"error": ...}`` (pydantic-ai's
        retry prompt after a ``ModelRetry``)."""
        return dict(json.loads(self.came_back))


def _calls(messages: list[dict[str, Any]]) -> list[Call]:
    out: dict[str, Call] = {}
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            out[c["id"]] = Call(fn.get("name", ""), json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool" and m.get("tool_call_id") in out:
            out[m["tool_call_id"]].came_back = _text(m.get("content"))
    return list(out.values())


def _call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def logfmt(line: str) -> dict[str, str]:
    """A logfmt line's fields.

    >>> logfmt('status=busy msg="rope team aloft" retry_at=14:20')["retry_at"]
    '14:20'
    """
    return dict(p.split("=", 1) for p in shlex.split(line) if "=" in p)


def _plan(brief: str) -> dict[str, Any]:
    """The planner's answer: the order's facts, the sexton's notes trusted over them; after a
    ``use=X instead_of=Y`` problem every input that was Y (or an earlier result that was Y)
    becomes X; the tasks done are left out."""
    lines = dict(re.findall(r"^(\w[\w' ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Order"]) | json.loads(lines.get("Sexton's notes", "{}"))
    done: dict[str, str] = json.loads(lines.get("Done", "{}"))
    swap = logfmt(lines.get("Problem", "").partition(": ")[2])
    tasks = [
        ("source_wheel", f"Source a {facts['teeth']}-tooth great wheel.", "search_wheels",
         {"teeth": facts["teeth"]}),
        ("book_steeplejacks", f"Book a rope team to lift the movement on {facts['lift_day']}.",
         "book_rope_team",
         {"wheel": "=source_wheel", "crew": facts["crew"], "day": facts["lift_day"]}),
        ("get_faculty", f"Get the diocese's faculty for {facts['church']}.", "apply_faculty",
         {"wheel": "=source_wheel", "church": facts["church"], "day": facts["lift_day"]}),
        ("charge_fund", f"Charge the {facts['fee']} GBP fee to the restoration fund.",
         "charge_fund", {"account": facts["account"], "amount": facts["fee"], "job": facts["job"]}),
        ("notify_wardens", "Send the churchwardens the notice.", "send_notice",
         {"email": facts["wardens"], "wheel": "=source_wheel", "day": facts["lift_day"],
          "faculty": "=get_faculty"}),
    ]  # fmt: skip
    out = []
    for n, (slug, goal, service, args) in enumerate(tasks, 1):
        if slug in done:
            continue
        inputs = {}
        for name, raw in args.items():
            value = str(raw)
            earlier = done.get(value[1:], "") if value.startswith("=") else ""
            if swap.get("instead_of") in (value, earlier):
                value = swap["use"]
            inputs[name] = value
        out.append({"n": n, "slug": slug, "goal": goal, "service": service, "inputs": inputs})
    note = " (the sexton's notes taken over the order)" if "Sexton's notes" in lines else ""
    return {"summary": f"Restore the clock of {facts['church']}{note}.", "tasks": out}


def _final(body: dict[str, Any], args: dict[str, Any], turn: int) -> dict[str, Any]:
    """The structured answer: a call of the output tool pydantic-ai offers."""
    names = [str((t.get("function") or {}).get("name", "")) for t in body.get("tools") or []]
    (name,) = [n for n in names if n.startswith("final_result")]
    return _call(name, args, turn)


def _foreman(body: dict[str, Any], messages: list[dict[str, Any]], brief: str) -> dict[str, Any]:
    """The foreman's next turn: plan, carry the next task out, carry a postponed task out
    again, plan again after a ``replan`` report, or end."""
    calls = _calls(messages)
    turn = len(messages)
    plans = [i for i, c in enumerate(calls) if c.name == "plan"]
    if not plans:
        return _call("plan", {"brief": brief}, turn)
    reports = [c.answer for c in calls if c.name == "carry_out" and "error" not in c.answer]
    done = {r["task"]: r["result"] for r in reports if r["outcome"] == "done"}
    tasks = [Task(**t) for t in json.loads(calls[plans[-1]].came_back)["tasks"]]
    since = [c for c in calls[plans[-1] :] if c.name == "carry_out"]

    def carry_out(task: Task) -> dict[str, Any]:
        inputs = {k: done.get(v[1:], v) if v.startswith("=") else v for k, v in task.inputs.items()}
        order = {"task": task.slug, "goal": task.goal, "service": task.service, "inputs": inputs}
        return _call("carry_out", order, turn)

    def end(status: str, task: str = "", reason: str = "") -> dict[str, Any]:
        return _final(body, {"status": status, "task": task, "reason": reason}, turn)

    if not since:
        return carry_out(tasks[0])
    last = since[-1]
    task = next(t for t in tasks if t.slug == last.args["task"])
    report = last.answer
    if "error" in report:  # carry_out's ModelRetry: postponed, carry it out again
        return carry_out(task)
    if report["outcome"] == "done":
        left = [t for t in tasks if t.slug not in done]
        return carry_out(left[0]) if left else end("restored")
    if report["outcome"] == "replan" and len(plans) < MAX_PLANS:
        again = f"{brief}\nDone: {json.dumps(done)}\nProblem: {task.slug}: {report['note']}"
        return _call("plan", {"brief": again}, turn)
    return end("failed", task.slug, report["note"])


def _number(value: str) -> Any:
    try:
        return int(value)
    except ValueError:
        try:
            return float(value)
        except ValueError:
            return value


def _fitter(body: dict[str, Any], messages: list[dict[str, Any]], order: str) -> dict[str, Any]:
    """The fitter's next turn for its task: call the service, call again at the time a busy
    answer names, follow ``next_page``, poll a pending application, report."""
    fields = dict(re.findall(r"^(\w+): (.*)$", order, re.MULTILINE))
    slug, service = fields["Task"], fields["Service"]
    args = {k: _number(str(v)) for k, v in json.loads(fields["Inputs"]).items()}
    calls = [c for c in _calls(messages) if not c.name.startswith("final_result")]
    turn = len(messages)

    def report(outcome: str, result: str = "", note: str = "") -> dict[str, Any]:
        said = {"task": slug, "outcome": outcome, "result": result, "note": note}
        return _final(body, said, turn)

    if not calls:
        return _call(service, args, turn)
    last = calls[-1]
    answer = last.answer
    if "error" in answer:  # a busy service's ModelRetry
        said = logfmt(str(answer["error"]))
        busy = sum("status=busy" in c.came_back for c in calls)
        if busy >= MAX_BUSY:
            return report("gave_up", note=f"busy {busy} times: {said.get('msg', '')}")
        return _call(last.name, last.args | {"at": said.get("retry_at", "")}, turn)
    if answer.get("next_page"):
        return _call(service, args | {"page": answer["next_page"]}, turn)
    if answer.get("state") == "pending":
        checks = sum(c.name == "faculty_status" for c in calls)
        if checks >= MAX_POLLS:
            note = f"faculty {answer['application']} pending after {checks} checks"
            return report("gave_up", note=note)
        return _call("faculty_status", {"application": answer["application"]}, turn)
    if "wheels" in answer:
        return report("done", answer["wheels"][0]["id"])
    return report("done", str(answer["id"]))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> msg = respond({"messages": [{"role": "system", "content": FOREMAN},
    ...     {"role": "user", "content": "Order: {}"}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["name"]
    'plan'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if PLANNER in system:
        message = _final(body, _plan(user), len(messages))
    elif FOREMAN in system:
        message = _foreman(body, messages, user)
    elif FITTER in system:
        message = _fitter(body, messages, user)
    else:
        message = {"role": "assistant", "content": "Not a workshop matter."}
    return completion(body, message)


# --- the world ----------------------------------------------------------------------------
class Postponed(RuntimeError):
    """A service cannot take the task now: the foreman carries it out again."""


class Superseded(RuntimeError):
    """The world changed under the plan (``use=X instead_of=Y``): the foreman plans again."""


class Refused(RuntimeError):
    """A final refusal: the job cannot go on."""


class JobFailed(RuntimeError):
    """The clock could not be restored (or stopped again after it was)."""


@dataclass
class Workshop:
    """The catalogue, the rope teams, the diocese, the fund and the wardens of one job."""

    label: Label
    errors: list[str] = field(default_factory=list)
    wheels: dict[str, int] = field(default_factory=dict)
    lifts: dict[str, dict[str, Any]] = field(default_factory=dict)
    applications: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, service: str, **carried: Any) -> None:
        """Raise the scenario's next error when ``service`` is the one it targets (an
        ``{old}`` in it is the account the call carried): ``busy`` as ``ModelRetry``."""
        if not self.errors or service != self.params.get("service"):
            return
        line = self.errors.pop(0).format(old=carried.get("account", ""))
        status = logfmt(line)["status"]
        raise {"busy": ModelRetry, "postponed": Postponed, "superseded": Superseded}.get(
            status, Refused
        )(line)


def search_wheels(ctx: RunContext[Workshop], teeth: int, page: int = 1) -> str:
    """Great wheels in the wheelwrights' catalogue with a tooth count, a page at a time."""
    world = ctx.deps
    world.fault("search_wheels")
    if page < int(world.params.get("pages", 1)):
        sold = [{"id": f"WH-{page}{n}", "teeth": teeth + 6 * n, "sold": True} for n in (1, 2)]
        return json.dumps({"wheels": [], "sold": sold, "next_page": page + 1})
    wheel = f"WH-{teeth}-{world.label.seed}"
    world.wheels[wheel] = teeth
    return json.dumps({"wheels": [{"id": wheel, "teeth": teeth, "metal": "gunmetal"}]})


def book_rope_team(ctx: RunContext[Workshop], wheel: str, crew: str, day: str, at: str = "") -> str:
    """Book a steeplejack rope team to lift the clock's movement down the tower."""
    world = ctx.deps
    world.fault("book_rope_team")
    other = world.params.get("crew_to")
    if other and crew == ORDER["crew"]:
        raise Superseded(
            f'status=superseded msg="{crew} grounded: their rope-access insurance lapsed" '
            f'use="{other}" instead_of="{crew}"'
        )
    lift = f"RL-{day.replace('-', '')}-{len(world.lifts) + 1}"
    world.lifts[lift] = {"wheel": wheel, "crew": crew, "day": day}
    return json.dumps({"id": lift, "crew": crew, "day": day, "at": at or "08:00"})


def apply_faculty(
    ctx: RunContext[Workshop], wheel: str, church: str, day: str, at: str = ""
) -> str:
    """Apply to the diocese for the faculty the work on a listed church needs."""
    world = ctx.deps
    world.fault("apply_faculty")
    teeth = world.wheels.get(wheel, 0)
    if teeth != ORDER["teeth"]:
        raise Refused(
            f'status=refused msg="a {teeth}-tooth wheel is not like for like with the '
            f'{ORDER["teeth"]}-tooth original" body=DAC'
        )
    application = f"FAC-{world.label.seed}-{len(world.applications) + 1}"
    world.applications[application] = 0
    if "poll" in world.label.scenario:
        return json.dumps({"application": application, "state": "pending"})
    return json.dumps({"id": application, "state": "granted"})


def faculty_status(ctx: RunContext[Workshop], application: str) -> str:
    """Whether the diocese has decided a faculty application."""
    world = ctx.deps
    world.applications[application] += 1
    if world.label.scenario == "loop_poll_stuck" or world.applications[application] < int(
        world.params.get("polls", 0)
    ):
        return json.dumps({"application": application, "state": "pending"})
    return json.dumps({"id": application, "state": "granted"})


def charge_fund(ctx: RunContext[Workshop], account: str, amount: float, job: str) -> str:
    """Charge the parish restoration fund."""
    world = ctx.deps
    world.fault("charge_fund", account=account)
    if account != ORDER["account"]:
        raise Refused(f'status=refused msg="the diocesan board holds no fund {account}"')
    return json.dumps({"id": f"CH-{world.label.seed}", "amount": amount})


def send_notice(
    ctx: RunContext[Workshop], email: str, wheel: str, day: str, faculty: str, at: str = ""
) -> str:
    """Email the churchwardens the notice of the work."""
    ctx.deps.fault("send_notice")
    return json.dumps({"id": f"NT-{wheel}", "to": email, "at": at or "now"})


SERVICES = (search_wheels, book_rope_team, apply_faculty, faculty_status, charge_fund, send_notice)


# --- the app ------------------------------------------------------------------------------
def build_agents(model: OpenAIChatModel) -> Agent[Workshop, JobOutcome]:
    """The foreman, its ``plan`` and ``carry_out`` tools delegating to the planner and the
    fitter."""
    planner = Agent(model, name="clock_planner", instructions=PLANNER, output_type=ClockPlan)
    fitter = Agent(
        model,
        name="fitter",
        instructions=FITTER,
        deps_type=Workshop,
        output_type=TaskReport,
        tools=SERVICES,
        retries=MAX_BUSY,
    )
    foreman = Agent(
        model, name="foreman", instructions=FOREMAN, deps_type=Workshop, output_type=JobOutcome
    )

    @foreman.tool
    async def plan(ctx: RunContext[Workshop], brief: str) -> ClockPlan:
        """Plan (or plan again) the job from its brief."""
        result = await planner.run(brief, usage=ctx.usage)
        return result.output

    @foreman.tool(retries=MAX_TASK_ATTEMPTS)
    async def carry_out(
        ctx: RunContext[Workshop], task: str, goal: str, service: str, inputs: dict[str, str]
    ) -> TaskReport:
        """Have a fitter carry out one task of the plan."""
        order = f"Task: {task}\nGoal: {goal}\nService: {service}\nInputs: {json.dumps(inputs)}"
        try:
            result = await fitter.run(order, deps=ctx.deps, usage=ctx.usage)
        except Postponed as e:
            raise ModelRetry(f"{task} postponed: {e}") from e
        except Superseded as e:
            return TaskReport(task=task, outcome="replan", result="", note=str(e))
        return result.output

    return foreman


class Job:
    """One clock: the foreman's run under the app's span, then the app's checks."""

    def __init__(self, label: Label, foreman: Agent[Workshop, JobOutcome]) -> None:
        self.label = label
        self.world = Workshop(label)
        self.foreman = foreman

    def brief(self) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("teeth", "lift_day", "account")
            if k in self.label.params
        }
        lines = [f"Restore the clock of {ORDER['church']}.", f"Order: {json.dumps(ORDER)}"]
        if notes:
            lines.append(f"Sexton's notes: {json.dumps(notes)}")
        return "\n".join(lines)

    def verify(self, tracer: otel_trace.Tracer) -> None:
        """The app's check: the movement comes down on the order's lift day."""
        with tracer.start_as_current_span("verify lift day") as span:
            lift = list(self.world.lifts.values())[-1]
            span.set_attribute("lift.day", lift["day"])
            span.set_attribute("order.lift_day", ORDER["lift_day"])
            if lift["day"] != ORDER["lift_day"]:
                raise JobFailed(
                    f"rope team lifts on {lift['day']}, the order's lift day is {ORDER['lift_day']}"
                )

    def watch(self, tracer: otel_trace.Tracer) -> None:
        """The app's watch of the clock once the wheel is in: an event a day."""
        with tracer.start_as_current_span(f"watch clock {ORDER['church']}") as span:
            days = int(self.label.params.get("polls", 1))
            for day in range(1, days + 2):
                if self.label.scenario.startswith("external_") and day > days:
                    span.add_event("clock", {"day": day, "state": "stopped"})
                    raise JobFailed("the oak bell frame cracked and jammed the striking train")
                span.add_event("clock", {"day": day, "state": "going"})

    async def run(self, tracer: otel_trace.Tracer) -> str:
        """Restore the clock under the app's span; the OTel trace id."""
        with tracer.start_as_current_span(
            f"restore clock {ORDER['job']}", record_exception=False, set_status_on_exception=False
        ) as root:
            root.set_attribute("turret.job", ORDER["job"])
            trace_id = format(root.get_span_context().trace_id, "032x")
            try:
                result = await self.foreman.run(self.brief(), deps=self.world, usage_limits=LIMITS)
                if result.output.status != "restored":
                    raise JobFailed(f"{result.output.task}: {result.output.reason}")
                self.verify(tracer)
                self.watch(tracer)
            except (JobFailed, Refused, UnexpectedModelBehavior, UsageLimitExceeded) as exc:
                root.record_exception(exc)
                root.set_status(Status(StatusCode.ERROR, str(exc)))
                root.set_attribute("turret.outcome", "failed")
            else:
                root.set_attribute("turret.outcome", "restored")
        return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the turret scenarios with pydantic-ai's spans (converted by OpenInference's span
    processor) and the app's going to ``provider``'s processors; run name -> trace id."""
    if not labels:
        return {}
    # A user's provider: OpenInference's processor first, then the exporter's (here the play's
    # processors). A provider of the play's own: the processor rewrites every span that ends on
    # its provider, so it must see no other agent's spans.
    traced = TracerProvider(resource=provider.resource, shutdown_on_exit=False)
    traced.add_span_processor(OpenInferenceSpanProcessor())
    traced.add_span_processor(provider._active_span_processor)
    Agent.instrument_all(InstrumentationSettings(tracer_provider=traced))
    tracer = traced.get_tracer(TRACER)
    try:
        with ModelServer(respond=respond) as server:
            endpoint = OpenAIProvider(base_url=server.base_url("corpus-turret"), api_key="test")
            model = OpenAIChatModel(MODEL, provider=endpoint)
            foreman = build_agents(model)

            async def all_runs() -> dict[str, str]:
                return {label.run: await Job(label, foreman).run(tracer) for label in labels}

            return asyncio.run(all_runs())
    finally:
        Agent.instrument_all(False)

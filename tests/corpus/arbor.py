"""An arbor agent: a city's street-tree crew removing a diseased tree, a Burr application
(``burr``: a state machine of ``plan`` / ``execute_step`` / ``replan`` / ``verify_closure`` /
``watch_street`` / ``give_up`` actions) traced by Burr's own OpenTelemetry integration
(``burr.integrations.opentelemetry.OpenTelemetryBridge`` as the application's hook: a span per
``app.run()`` and per action, and a span per ``@trace()``-decorated function called inside an
action, its inputs and ``return`` as attributes), the model called through the ``openai`` client
against a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)``). No planscope code, no span of the app's own.

Sealed-21 split only (see README.md). The task: the city ordered the removal of a street tree;
find a licensed arborist crew for the tree's ward (a directory read page by page), close the
street for the felling day (approved later: polled), schedule the felling, charge the city's
purchase order, send the residents the felling notice.

* the planner is asked for **structured output into a pydantic model**
  (``client.chat.completions.parse(response_format=WorkPlan)``, as the OpenAI client's docs
  show): ``steps`` of ``name`` (snake_case), ``description``, ``tool`` and ``arguments``, each
  argument a ``name`` with a literal ``value`` or a ``from_step`` naming the earlier step whose
  result it takes (the app fills it in). After a conflict the ``replan`` action asks again with
  the completed steps and the problem, and the new ``WorkPlan`` holds only the steps still to do;
* the executor is one model conversation per step attempt with the step's tools (the
  ``execute_step`` action); its final answer is a JSON ``StepReport``: ``status`` (``done``,
  ``retry``, ``replan``, ``failed``), ``result``, ``reason``;
* the services answer errors as JSON error objects, ``{"type": "error", "error": {"type":
  <kind>, "message": <text>}}``: ``overloaded_error`` (call again in the same conversation for a
  later slot), ``api_error`` (the app runs the step again, up to 8 attempts), ``conflict_error``
  (a re-plan, up to 4 plans), ``permission_error`` / ``not_found_error`` /
  ``invalid_request_error`` / ``cancelled_error`` (final).

The planner trusts the tree officer's survey notes over the city's order: the scenario's wrong
value comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from burr.core import Application, ApplicationBuilder, State, action, when
from burr.integrations.opentelemetry import OpenTelemetryBridge
from burr.visibility import TracerFactory, trace
from openai import OpenAI
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import get_current_span
from pydantic import BaseModel

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import RUNAWAY, Label

ORDER: dict[str, Any] = {
    "tree": "T-4471",
    "ward": "fenwick",
    "street": "larch-row",
    "species": "ash",
    "diameter_cm": 86,
    "fell_day": "2027-10-12",
    "po": "PO-3318",
    "email": "streets@example.org",
}
FEE_PER_CM = 45
MAX_STEP_ATTEMPTS = 8
MAX_PLANS = 4
MAX_STATUS_CHECKS = 12
TRACER = "burr.integrations.opentelemetry"
"""The instrumentation scope the bridge takes by default (``trace.get_tracer(__name__)``)."""


class JobFailed(RuntimeError):
    """The tree was not scheduled, paid for and its residents told, or failed after."""


# --- the plan: structured output --------------------------------------------------------------
class ToolArgument(BaseModel):
    """One argument of a step's tool call: a literal ``value`` or an earlier step's result."""

    name: str
    value: str
    from_step: str | None


class PlanStep(BaseModel):
    name: str
    description: str
    tool: str
    arguments: list[ToolArgument]


class WorkPlan(BaseModel):
    """The planner's structured output (every field required: OpenAI's strict mode)."""

    steps: list[PlanStep]


class StepReport(BaseModel):
    status: Literal["done", "retry", "replan", "failed"]
    result: str
    reason: str


def call_arguments(step: PlanStep, results: dict[str, str]) -> dict[str, Any]:
    """The tool call's arguments: literal values, earlier results filled in.

    >>> s = PlanStep(name="pay", description="", tool="charge", arguments=[
    ...     ToolArgument(name="job", value="", from_step="book"),
    ...     ToolArgument(name="po", value="PO-1", from_step=None)])
    >>> call_arguments(s, {"book": "FEL-7"})
    {'job': 'FEL-7', 'po': 'PO-1'}
    """
    return {a.name: results[a.from_step] if a.from_step else a.value for a in step.arguments}


# --- the scripted model -----------------------------------------------------------------------
def _field(text: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", text, re.MULTILINE)
    return m.group(1) if m else ""


def _arg(name: str, value: Any = "", from_step: str | None = None) -> dict[str, Any]:
    return {"name": name, "value": "" if from_step else str(value), "from_step": from_step}


def _planner(brief: str) -> dict[str, Any]:
    """The planner's plan: the city's order, the notes trusted over it, the day or purchase
    order a problem names; only the steps not completed."""
    facts = json.loads(_field(brief, "Order")) | json.loads(_field(brief, "Survey notes") or "{}")
    done = json.loads(_field(brief, "Completed steps") or "{}")
    problem = _field(brief, "Problem")
    day = re.search(r"next free day (\d{4}-\d\d-\d\d)", problem)
    po = re.search(r"use (PO-\d+)", problem)
    steps = [
        ("find_arborist", f"Find a licensed arborist crew for ward {facts['ward']}",
         "search_arborists", [_arg("ward", facts["ward"]),
                              _arg("diameter_cm", ORDER["diameter_cm"])]),
        ("close_road", f"Close {ORDER['street']} for the felling day", "request_road_closure",
         [_arg("street", ORDER["street"]),
          _arg("day", day.group(1) if day else facts["fell_day"])]),
        ("schedule_felling", f"Schedule the felling of {ORDER['tree']}", "book_felling",
         [_arg("crew", from_step="find_arborist"), _arg("closure", from_step="close_road"),
          _arg("species", facts["species"])]),
        ("charge_po", "Charge the felling to the city's purchase order",
         "charge_purchase_order",
         [_arg("felling", from_step="schedule_felling"),
          _arg("po", po.group(1) if po else facts["po"])]),
        ("notify_residents", "Send the residents the felling notice", "send_resident_notice",
         [_arg("felling", from_step="schedule_felling"), _arg("charge", from_step="charge_po"),
          _arg("email", facts["email"])]),
    ]  # fmt: skip
    plan = {
        "steps": [
            {"name": n, "description": d, "tool": t, "arguments": a}
            for n, d, t, a in steps
            if n not in done
        ]
    }
    return {"role": "assistant", "content": json.dumps(plan)}


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"call_{name}_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _report(status: str, result: str = "", reason: str = "") -> dict[str, Any]:
    report = {"status": status, "result": result, "reason": reason}
    return {"role": "assistant", "content": json.dumps(report)}


def _executor(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The executor's turn: make the call, call again after an ``overloaded_error`` for a later
    slot, follow ``next_page``, poll a road closure until approved, report."""
    m = re.search(r"Call `(\w+)` with these arguments: (\{.*\})$", task, re.MULTILINE)
    assert m is not None, task
    name, args = m.group(1), json.loads(m.group(2))
    results = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
    n = len(results)
    if not results:
        return _call(n, name, args)
    seen = json.loads(results[-1])
    if seen.get("type") == "error":
        kind, text = seen["error"]["type"], seen["error"]["message"]
        if kind == "overloaded_error":
            busy = sum('"overloaded_error"' in r for r in results)
            return _call(n, name, args | {"slot": f"{7 + busy:02d}:30"})
        status = {"api_error": "retry", "conflict_error": "replan"}.get(kind, "failed")
        return _report(status, reason=f"{kind}: {text}")
    if "next_page" in seen:
        return _call(n, name, args | {"page": seen["next_page"]})
    if seen.get("status") == "pending":
        checks = sum(r.count('"pending"') for r in results) - 1
        if checks >= MAX_STATUS_CHECKS:
            return _report("failed", reason=f"closure {seen['request']} pending after {checks}")
        return _call(n, "get_closure_status", {"request": seen["request"]})
    return _report("done", result=str(seen["id"]))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion: the planner's plan for an order, the executor's
    next tool call or report otherwise.

    >>> msg = respond({"messages": [{"role": "user",
    ...     "content": 'Call `f` with these arguments: {"a": "1"}'}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"a": "1"}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if task.startswith("Order: "):
        return completion(body, _planner(task))
    return completion(body, _executor(messages, task))


# --- the world --------------------------------------------------------------------------------
def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


@dataclass
class World:
    """The services: the arborist directory, the highways office, the felling calendar, the
    city's purchase ledger, the residents' mailer."""

    label: Label
    errors: list[str] = field(default_factory=list)
    crews: dict[str, str] = field(default_factory=dict)
    """Crew -> the ward it holds a license for."""
    closures: dict[str, dict[str, Any]] = field(default_factory=dict)
    fellings: dict[str, dict[str, Any]] = field(default_factory=dict)
    pos: set[str] = field(default_factory=lambda: {ORDER["po"]})
    free_day: str = ORDER["fell_day"]
    """The day the street can be closed."""
    charges: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        self.free_day = self.label.params.get("free_day", ORDER["fell_day"])

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, step: str) -> dict[str, Any] | None:
        """The scenario's next error when the call belongs to the step it targets."""
        if not self.errors or step != self.params.get("step"):
            return None
        text = self.errors.pop(0)
        if not self.errors and self.label.kind == RUNAWAY:
            return _error("cancelled_error", f"{text}; the request was cancelled")
        how = self.params.get("raise")
        if how == "again":
            return _error("overloaded_error", text)
        if how == "replans" and len(self.errors) % 2 == 0:
            po = f"PO-{3400 + 57 * len(self.errors)}"
            self.pos.add(po)
            return _error("conflict_error", f"{text}; purchase order exhausted, use {po}")
        return _error("api_error", text)


def services(world: World, step: str) -> dict[str, Callable[..., dict[str, Any]]]:
    """The services for one step's calls, each a ``@trace()`` span in the step's action."""

    @trace()
    def search_arborists(
        ward: str, diameter_cm: str, page: int = 1, slot: str = "07:30"
    ) -> dict[str, Any]:
        if fault := world.fault(step):
            return fault
        pages = int(world.params.get("pages", 1))
        if page < pages:
            crews = [f"ARB-{page}{n}" for n in range(3)]
            return {"crews": crews, "available": False, "next_page": page + 1}
        crew = f"ARB-{ward[:3].upper()}-{pages}"
        world.crews[crew] = ward
        return {"id": crew, "ward": ward, "max_diameter_cm": 120}

    @trace()
    def request_road_closure(street: str, day: str, slot: str = "07:30") -> dict[str, Any]:
        if fault := world.fault(step):
            return fault
        if day != world.free_day and day == ORDER["fell_day"]:
            return _error(
                "conflict_error",
                f"{street} is closed for resurfacing on {day}; next free day {world.free_day}",
            )
        request = f"RC-{world.label.seed}-{len(world.closures)}"
        world.closures[request] = {"day": day, "street": street, "checks": 0}
        return {"request": request, "status": "pending"}

    @trace()
    def get_closure_status(request: str) -> dict[str, Any]:
        entry = world.closures[request]
        entry["checks"] += 1
        if world.label.scenario == "loop_poll_stuck" or entry["checks"] < int(
            world.params.get("polls", 1)
        ):
            return {"request": request, "status": "pending"}
        return {"request": request, "status": "approved", "id": request}

    @trace()
    def book_felling(crew: str, closure: str, species: str, slot: str = "07:30") -> dict[str, Any]:
        if fault := world.fault(step):
            return fault
        ward = world.crews.get(crew)
        if ward != ORDER["ward"]:
            return _error(
                "permission_error",
                f"crew {crew} is licensed in {ward}; {ORDER['tree']} stands in {ORDER['ward']}",
            )
        felling = f"FEL-{world.label.seed}-{len(world.fellings)}"
        world.fellings[felling] = {"crew": crew, "closure": closure, "species": species}
        return {"id": felling, "crew": crew}

    @trace()
    def charge_purchase_order(felling: str, po: str, slot: str = "07:30") -> dict[str, Any]:
        if fault := world.fault(step):
            return fault
        if po not in world.pos:
            return _error("not_found_error", f"no purchase order {po} for the streets budget")
        species = world.fellings[felling]["species"]
        if species != ORDER["species"]:
            return _error(
                "permission_error",
                f"{po} covers the removal of one {ORDER['species']}, not a {species}",
            )
        world.charges[felling] = FEE_PER_CM * int(ORDER["diameter_cm"])
        return {"id": f"CHG-{world.label.seed}", "amount": world.charges[felling]}

    @trace()
    def send_resident_notice(
        felling: str, charge: str, email: str, slot: str = "07:30"
    ) -> dict[str, Any]:
        if fault := world.fault(step):
            return fault
        if felling not in world.charges:
            return _error("invalid_request_error", f"felling {felling} has no charge")
        return {"id": f"NTC-{world.label.seed}", "email": email}

    fns: list[Callable[..., dict[str, Any]]] = [
        search_arborists, request_road_closure, get_closure_status, book_felling,
        charge_purchase_order, send_resident_notice,
    ]  # fmt: skip
    return {f.__name__: f for f in fns}


def _schema(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


# --- the app: a Burr state machine --------------------------------------------------------------
@dataclass
class Job:
    """One removal order: what the actions share besides Burr's state."""

    label: Label
    client: OpenAI
    world: World
    id: str
    trace_id: str = ""


@trace(input_filterlist=["client"])
def ask_planner(client: OpenAI, brief: str) -> WorkPlan:
    out = client.chat.completions.parse(
        model=MODEL,
        messages=[
            {"role": "system", "content": "You plan street-tree removals for the city."},
            {"role": "user", "content": brief},
        ],
        response_format=WorkPlan,
    )
    plan = out.choices[0].message.parsed
    assert plan is not None
    return plan


# the bridge passes a list of dicts to OpenTelemetry as it is (OpenTelemetry drops it with a
# warning); the step's name says which conversation this is
@trace(input_filterlist=["client", "messages", "tools"])
def ask_executor(
    client: OpenAI, step: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> dict[str, Any]:
    out = client.chat.completions.create(
        model=MODEL,
        messages=messages,  # type: ignore[arg-type]
        tools=tools,  # type: ignore[arg-type]
    )
    return out.choices[0].message.model_dump(exclude_none=True)


def _brief(job: Job, results: dict[str, str], problem: str) -> str:
    notes = {
        k: job.label.params[k]
        for k in ("ward", "fell_day", "species", "po")
        if k in job.label.params
    }
    return (
        f"Order: {json.dumps({'job': job.id} | ORDER)}\nSurvey notes: {json.dumps(notes)}\n"
        f"Completed steps: {json.dumps(results)}\nProblem: {problem}\n"
        "Return only the steps still to do."
    )


@action(reads=[], writes=["plan", "plans", "results", "attempts"])
def plan(state: State, job: Job, __tracer: TracerFactory) -> State:
    job.trace_id = f"{get_current_span().get_span_context().trace_id:032x}"
    work = ask_planner(job.client, _brief(job, {}, ""))
    __tracer.log_attributes(job=job.id, steps=[s.name for s in work.steps])
    return state.update(plan=work.model_dump(), plans=1, results={}, attempts=0)


@action(
    reads=["plan", "results", "attempts", "plans"],
    writes=["results", "attempts", "route", "problem"],
)
def execute_step(state: State, job: Job, __tracer: TracerFactory) -> State:
    results = dict(state["results"])
    work = WorkPlan.model_validate(state["plan"])
    step = next(s for s in work.steps if s.name not in results)
    attempt = state["attempts"] + 1
    args = call_arguments(step, results)
    __tracer.log_attributes(step=step.name, attempt=attempt, tool=step.tool)
    task = (
        f"Step: {step.name}\n{step.description}\n"
        f"Call `{step.tool}` with these arguments: {json.dumps(args)}\n"
        "Answer with a JSON StepReport: status (done, retry, replan, failed), result, reason."
    )
    fns = services(job.world, step.name)
    tools = [_schema(step.tool), _schema("get_closure_status")]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You carry out one step of a street-tree removal plan."},
        {"role": "user", "content": task},
    ]
    while True:
        msg = ask_executor(job.client, step.name, messages, tools)
        if not msg.get("tool_calls"):
            break
        messages.append(msg)
        for call in msg["tool_calls"]:
            fn = call["function"]
            result = fns[fn["name"]](**json.loads(fn["arguments"]))
            messages.append(
                {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)}
            )
    report = StepReport.model_validate_json(msg["content"])
    __tracer.log_attributes(status=report.status, result=report.result, reason=report.reason)
    route = {"retry": "retry", "replan": "replan"}.get(report.status, "give_up")
    if report.status == "done":
        results[step.name], attempt = report.result, 0
        route = "next" if any(s.name not in results for s in work.steps) else "verify"
    elif (report.status == "retry" and attempt >= MAX_STEP_ATTEMPTS) or (
        report.status == "replan" and state["plans"] >= MAX_PLANS
    ):
        route = "give_up"
    problem = f"{step.name}: {report.reason}"
    return state.update(results=results, attempts=attempt, route=route, problem=problem)


@action(reads=["results", "problem", "plans"], writes=["plan", "plans", "attempts"])
def replan(state: State, job: Job, __tracer: TracerFactory) -> State:
    work = ask_planner(job.client, _brief(job, state["results"], state["problem"]))
    __tracer.log_attributes(plan=state["plans"] + 1, steps=[s.name for s in work.steps])
    return state.update(plan=work.model_dump(), plans=state["plans"] + 1, attempts=0)


@action(reads=["results"], writes=[])
def verify_closure(state: State, job: Job) -> State:
    """The city's own check once the residents are told: the street is closed on the day the
    highways office can close it."""
    day = job.world.closures[state["results"]["close_road"]]["day"]
    if day != job.world.free_day:
        raise JobFailed(
            f"{ORDER['street']} is closed on {day}, the felling day is {job.world.free_day}"
        )
    return state


@trace()
def street_status(street: str, check: int) -> dict[str, Any]:
    return {"street": street, "check": check, "closure": "in force"}


@action(reads=[], writes=[])
def watch_street(state: State, job: Job) -> State:
    """Three looks at the closed street before the felling day."""
    for check in range(1, 4):
        if job.label.scenario == "external_burst" and check > int(job.label.params["polls"]):
            raise JobFailed(
                f"a water main burst under {ORDER['street']}; the closure is revoked and the "
                "felling called off"
            )
        street_status(ORDER["street"], check)
    return state


@action(reads=["problem"], writes=[])
def give_up(state: State) -> State:
    raise JobFailed(state["problem"])


def build(job: Job, bridge: OpenTelemetryBridge) -> Application:
    """The removal's state machine, traced by ``bridge``."""
    return (
        ApplicationBuilder()
        .with_actions(
            plan=plan.bind(job=job),
            execute_step=execute_step.bind(job=job),
            replan=replan.bind(job=job),
            verify_closure=verify_closure.bind(job=job),
            watch_street=watch_street.bind(job=job),
            give_up=give_up,
        )
        .with_transitions(
            ("plan", "execute_step"),
            ("execute_step", "execute_step", when(route="next") | when(route="retry")),
            ("execute_step", "replan", when(route="replan")),
            ("execute_step", "verify_closure", when(route="verify")),
            ("execute_step", "give_up", when(route="give_up")),
            ("replan", "execute_step"),
            ("verify_closure", "watch_street"),
        )
        .with_state(route="", problem="")
        .with_entrypoint("plan")
        .with_identifiers(app_id=job.id)
        .with_hooks(bridge)
        .build()
    )


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the arbor scenarios as Burr applications traced by Burr's OpenTelemetry bridge on a
    tracer of ``provider`` (a hook of each application: nothing global to undo); run name ->
    trace id."""
    if not labels:
        return {}
    bridge = OpenTelemetryBridge(tracer=provider.get_tracer(TRACER))
    # Burr logs a banner and the traceback of every action that raises; the corpus plays quietly
    logger = logging.getLogger("burr")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    out = {}
    try:
        with ModelServer(respond=respond) as server:
            client = OpenAI(base_url=server.base_url("corpus-arbor"), api_key="test", max_retries=0)
            for label in labels:
                job = Job(label, client, World(label), f"TRM-{label.seed % 9000 + 1000}")
                with contextlib.suppress(JobFailed):  # its action span holds the error
                    build(job, bridge).run(halt_after=["watch_street", "give_up"])
                out[label.run] = job.trace_id
    finally:
        logger.setLevel(level)
    return out

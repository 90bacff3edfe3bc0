"""A home-solar installation agent on Microsoft Agent Framework, traced by the framework's own
OpenTelemetry instrumentation (``agent_framework.observability``, sensitive data on:
``invoke_agent``, ``chat`` and ``execute_tool`` spans with ``gen_ai.*`` attributes, written
through opentelemetry-api's global tracer provider; no instrumentor): the framework's
``OpenAIChatCompletionClient`` against a scripted model on the conformance suite's fake OpenAI
server (``ModelServer(respond=...)``). No planscope code.

Sealed-12 split only (see README.md). The task: a homeowner signed for a rooftop system; find a
certified installer in the home's county (a registry read page by page), apply to the utility
for the grid interconnection (approved later: polled), book the installation, draw the
installation's cost from the homeowner's solar loan, send the homeowner the install notice. As
an Agent Framework user would write it:

* the app opens one OTel span per project (``install {project}``) and records the outcome;
* the planner is an ``Agent`` (``solar_planner``) answering a **ReWOO plan**: per step a
  ``Plan N (slug): goal`` line and an evidence line ``#EN = tool[key="value", ...]``, where
  ``#Ek`` stands for an earlier step's result, filled in by the app. Asked again after a
  failure, it answers a new plan that opens with ``Known: #Ek = value`` lines for the done
  steps and keeps their numbers, then the steps not done;
* the worker is an ``Agent`` (``solar_worker``) run per step attempt, its message the step's
  ``Plan N (slug): goal`` line and ``Run tool[...]`` with the evidence filled in, the services
  ``@tool`` functions it calls (the framework's function-invocation loop, detailed errors on),
  its final answer an **outcome line** ``<done|retry|replan|refused|stalled> result=... ::
  note``;
* the services answer errors as **URN-typed problems**, ``[urn:solar:{type}] text``, read by
  the model from the framework's ``Error: Function failed. Exception: ...`` result:
  ``throttled`` (call again in the same run with a doubled ``timeout_s``), ``backlog``
  (``retry``: the app re-runs the step, up to 8 attempts), ``conflict`` (``replan``: the app
  asks for a new plan, up to 4 plans), ``denied`` / ``not-found`` / ``withdrawn`` (final);
* after the last step the app checks the interconnection approval against the home's meter
  (``verify interconnection``) and watches the system come online (``watch system``), both
  plain OTel spans.

The planner trusts the sales notes over the homeowner's record: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from agent_framework import Agent, tool
from agent_framework.observability import enable_instrumentation
from agent_framework.openai import OpenAIChatCompletionClient
from openai import AsyncOpenAI
from opentelemetry import trace as otel_trace
from opentelemetry.trace import Status, StatusCode

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import RUNAWAY, Label
from ._relay import global_provider

HOME: dict[str, Any] = {
    "address": "14 Larkspur Rd",
    "county": "travis",
    "meter": "MTR-55120",
    "kw": 8,
    "loan": "SL-620418",
    "email": "d.okafor@example.net",
}
PRICE_PER_KW = 2900
MAX_STEP_ATTEMPTS = 8
MAX_PLANS = 4
MAX_STATUS_CHECKS = 12
MAX_TOOL_ERRORS = 10
PLAN = re.compile(r"^Plan (\d+) \((\w+)\): (.*)$")
EVIDENCE = re.compile(r"^#E(\d+) = (\w+)\[(.*)\]$")
KNOWN = re.compile(r"^Known: #E(\d+) = (.*)$")
RUN = re.compile(r"^Run (\w+)\[(.*)\]$", re.MULTILINE)
ARG = re.compile(r'(\w+)=(?:"([^"]*)"|(#E\d+|\d+))')
REFERENCE = re.compile(r"#E(\d+)")
OUTCOME = re.compile(r"^<(\w+)> result=(.*?) :: (.*)$", re.DOTALL)
PROBLEM = re.compile(r"\[urn:solar:([\w-]+)\] (.*)$", re.DOTALL)


class SolarError(RuntimeError):
    """A service's problem answer: ``[urn:solar:{type}] {text}``."""

    def __init__(self, kind: str, text: str):
        super().__init__(f"[urn:solar:{kind}] {text}")


# --- the plan: ReWOO lines --------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One step of the planner's ReWOO plan."""

    number: int
    slug: str
    goal: str
    tool: str
    args: dict[str, str]


def _args(text: str) -> dict[str, str]:
    return {k: quoted or bare for k, quoted, bare in ARG.findall(text)}


def parse_plan(text: str) -> tuple[list[Step], dict[int, str]]:
    """The steps of a ReWOO plan (a ``Plan N (slug): goal`` line, then its ``#EN = tool[...]``
    line) and the evidence it already knows (``Known: #EN = value``).

    >>> steps, known = parse_plan('Known: #E1 = INST-1\\nPlan 2 (apply): Apply\\n'
    ...                           '#E2 = grid_application[installer=#E1, kw=8]')
    >>> known, steps[0].slug, steps[0].args
    ({1: 'INST-1'}, 'apply', {'installer': '#E1', 'kw': '8'})
    """
    steps: list[Step] = []
    known: dict[int, str] = {}
    head: re.Match[str] | None = None
    for line in text.splitlines():
        line = line.strip()
        if m := KNOWN.match(line):
            known[int(m[1])] = m[2]
        elif m := PLAN.match(line):
            head = m
        elif (e := EVIDENCE.match(line)) and head and e[1] == head[1]:
            steps.append(Step(int(head[1]), head[2], head[3], e[2], _args(e[3])))
            head = None
    return steps, known


def _plan_text(project: str, version: int, steps: list[tuple[str, str, str, dict[str, Any]]],
               done: dict[str, str]) -> str:  # fmt: skip
    lines = [f"Project {project}, plan {version}.", ""]
    lines += [f"Known: #E{n} = {done[s[0]]}" for n, s in enumerate(steps, 1) if s[0] in done]
    for n, (slug, goal, name, args) in enumerate(steps, 1):
        if slug in done:
            continue
        call = ", ".join(
            f"{k}={v}" if isinstance(v, int) or str(v).startswith("#E") else f'{k}="{v}"'
            for k, v in args.items()
        )
        lines += [f"Plan {n} ({slug}): {goal}", f"#E{n} = {name}[{call}]"]
    return "\n".join(lines)


# --- the scripted model (answers on the conformance suite's fake OpenAI server) -------------
def _section(text: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", text, re.MULTILINE)
    return m.group(1) if m else ""


def _planner(brief: str) -> dict[str, Any]:
    """The planner's ReWOO plan: the home's record, the notes trusted over it, the meter or
    loan a problem names, the done steps as known evidence."""
    facts = json.loads(_section(brief, "Home")) | json.loads(_section(brief, "Notes") or "{}")
    done = json.loads(_section(brief, "Done") or "{}")
    problem = _section(brief, "Problem")
    version = int(_section(brief, "Version") or 1)
    meter = re.search(r"replaced by (MTR-\d+)", problem)
    loan = re.search(r"draw from (SL-\d+) instead", problem)
    steps = [
        ("find_installer", f"Find a certified installer in {facts['county']} county for the "
         f"{facts['kw']} kW system", "installer_registry",
         {"county": facts["county"], "kw": facts["kw"]}),
        ("apply_interconnect", "Apply to the utility to connect the system to the home's meter",
         "grid_application", {"installer": "#E1",
                              "meter": meter.group(1) if meter else facts["meter"],
                              "kw": facts["kw"]}),
        ("book_install", f"Book the installation at {facts['address']}", "install_booking",
         {"installer": "#E1", "approval": "#E2", "address": facts["address"]}),
        ("draw_loan", "Draw the installation's cost from the homeowner's solar loan",
         "loan_drawdown", {"booking": "#E3", "loan": loan.group(1) if loan else facts["loan"]}),
        ("notify_owner", "Send the homeowner the install notice", "owner_notice",
         {"booking": "#E3", "email": facts["email"]}),
    ]  # fmt: skip
    return {"role": "assistant", "content": _plan_text(facts["project"], version, steps, done)}


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"call_{name}_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _say(outcome: str, result: str = "", note: str = "") -> dict[str, Any]:
    return {"role": "assistant", "content": f"<{outcome}> result={result or '-'} :: {note or '-'}"}


def _worker(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The worker's turn: run the tool the step names, call again after a ``throttled`` problem
    with a doubled timeout, follow ``next_page``, poll an application until it is approved,
    answer the outcome line."""
    run = RUN.search(task)
    assert run, task
    name = run.group(1)
    args: dict[str, Any] = {k: int(v) if v.isdigit() else v for k, v in _args(run[2]).items()}
    results = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
    n = len(results)
    if not results:
        return _call(n, name, args)
    last = results[-1]
    problem = PROBLEM.search(last)
    if problem:
        if problem.group(1) == "throttled":
            throttled = sum("[urn:solar:throttled]" in r for r in results)
            return _call(n, name, args | {"timeout_s": 15 * 2**throttled})
        outcome = {"backlog": "retry", "conflict": "replan"}.get(problem.group(1), "refused")
        return _say(outcome, note=f"{problem.group(1)}: {problem.group(2)}")
    seen = json.loads(last)
    if "next_page" in seen:
        return _call(n, name, args | {"page": seen["next_page"]})
    if seen.get("status") == "PENDING":
        checks = sum(
            call["function"]["name"] == "application_status"
            for m in messages
            for call in m.get("tool_calls") or ()
        )
        if checks >= MAX_STATUS_CHECKS:
            note = f"application {seen['application']} still PENDING after {checks} checks"
            return _say("stalled", note=note)
        return _call(n, "application_status", {"application": seen["application"]})
    return _say("done", result=str(seen["value"]))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the planner's plan for a
    home record, the worker's next tool call or outcome line otherwise.

    >>> msg = respond({"messages": [{"role": "user", "content": 'Run f[a=1, b="x"]'}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"a": 1, "b": "x"}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if task.startswith("Home: "):
        return completion(body, _planner(task))
    return completion(body, _worker(messages, task))


# --- the world ------------------------------------------------------------------------------
@dataclass
class World:
    """The services: installer registry, the utility, installers' calendars, the solar loan,
    the homeowner portal."""

    label: Label
    project: str
    step: str = ""
    errors: list[str] = field(default_factory=list)
    installers: dict[str, str] = field(default_factory=dict)
    """Installer -> its county."""
    applications: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Application -> installer, meter, kW and status checks."""
    approvals: dict[str, str] = field(default_factory=dict)
    """Approval -> its application."""
    bookings: dict[str, dict[str, Any]] = field(default_factory=dict)
    loans: set[str] = field(default_factory=lambda: {HOME["loan"]})
    """Solar loans open for this homeowner."""
    meter: str = HOME["meter"]
    """The utility's current meter at the home."""
    draws: dict[str, int] = field(default_factory=dict)
    notice: str = ""

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        self.meter = self.label.params.get("new_meter", HOME["meter"])

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self) -> None:
        """Raise the scenario's next problem when the call belongs to the step it targets."""
        if not self.errors or self.step != self.params.get("step"):
            return
        text = self.errors.pop(0)
        if not self.errors and self.label.kind == RUNAWAY:
            raise SolarError("withdrawn", f"{text}; request withdrawn")
        how = self.params.get("raise")
        if how == "again":
            raise SolarError("throttled", text)
        if how == "replans" and len(self.errors) % 2 == 0:
            loan = f"SL-{621000 + 23 * len(self.errors)}"
            self.loans.add(loan)
            raise SolarError("conflict", f"{text}; loan on hold, draw from {loan} instead")
        raise SolarError("backlog", text)


def services(world: World) -> list[Any]:
    """The services as Agent Framework tools bound to one project's world."""

    @tool(description="Search the registry of certified installers in a county for a system "
          "size, a page of results at a time.")  # fmt: skip
    def installer_registry(
        county: Annotated[str, "the county"],
        kw: Annotated[int, "the system size in kW"],
        page: Annotated[int, "the result page"] = 1,
        timeout_s: Annotated[int, "how long to wait for the registry"] = 15,
    ) -> str:
        world.fault()
        pages = int(world.params.get("pages", 1))
        code = county[:3].upper()
        if page < pages:
            booked = [f"INST-{code}-{page}{n}" for n in range(3)]
            return json.dumps({"installers": booked, "fully_booked": True, "next_page": page + 1})
        installer = f"INST-{code}-{pages}7"
        world.installers[installer] = county
        return json.dumps({"value": installer, "county": county, "kw": kw})

    @tool(description="Apply to the utility to interconnect a system at a meter; the utility "
          "decides later.")  # fmt: skip
    def grid_application(
        installer: Annotated[str, "the installer"],
        meter: Annotated[str, "the home's meter"],
        kw: Annotated[int, "the system size in kW"],
        timeout_s: Annotated[int, "how long to wait for the utility"] = 15,
    ) -> str:
        world.fault()
        if installer not in world.installers:
            raise SolarError("not-found", f"no certified installer {installer}")
        if meter != world.meter and meter == HOME["meter"]:
            raise SolarError("conflict", f"meter {meter} was replaced by {world.meter}")
        application = f"IX-{world.label.seed}-{len(world.applications)}"
        world.applications[application] = {"installer": installer, "meter": meter, "kw": kw,
                                           "checks": 0}  # fmt: skip
        return json.dumps({"application": application, "status": "PENDING"})

    @tool(description="The state of an interconnection application; its approval once given.")
    def application_status(application: Annotated[str, "the application"]) -> str:
        entry = world.applications[application]
        entry["checks"] += 1
        if world.label.scenario == "loop_poll_stuck" or entry["checks"] < int(
            world.params.get("polls", 1)
        ):
            return json.dumps({"application": application, "status": "PENDING"})
        approval = f"APR-{application[3:]}"
        world.approvals[approval] = application
        return json.dumps({"application": application, "status": "APPROVED", "value": approval})

    @tool(description="Book an installer's crew for an approved system at an address.")
    def install_booking(
        installer: Annotated[str, "the installer"],
        approval: Annotated[str, "the utility's approval"],
        address: Annotated[str, "the home's address"],
        timeout_s: Annotated[int, "how long to wait for the installer"] = 15,
    ) -> str:
        world.fault()
        county = world.installers.get(installer)
        if county != HOME["county"]:
            raise SolarError(
                "denied",
                f"{installer} is certified in {county} county; {address} is in "
                f"{HOME['county']} county (outside its service area)",
            )
        booking = f"JOB-{world.label.seed}-{len(world.bookings)}"
        world.bookings[booking] = {"installer": installer, "approval": approval, "address": address}
        return json.dumps({"value": booking, "crew_date": "2027-04-12"})

    @tool(description="Draw a booked installation's cost from a solar loan.")
    def loan_drawdown(
        booking: Annotated[str, "the installation booking"],
        loan: Annotated[str, "the solar loan"],
        timeout_s: Annotated[int, "how long to wait for the lender"] = 15,
    ) -> str:
        world.fault()
        if loan not in world.loans:
            raise SolarError("not-found", f"no solar loan {loan} for this homeowner")
        entry = world.bookings[booking]
        if entry["address"] != HOME["address"]:
            raise SolarError(
                "denied", f"{entry['address']} is not the property securing the loan {loan}"
            )
        application = world.applications[world.approvals[entry["approval"]]]
        amount = PRICE_PER_KW * int(application["kw"])
        world.draws[booking] = amount
        return json.dumps({"value": f"DRAW-{world.label.seed}", "amount": amount})

    @tool(description="Send the homeowner the installation notice through the portal.")
    def owner_notice(
        booking: Annotated[str, "the installation booking"],
        email: Annotated[str, "the homeowner's e-mail"],
        timeout_s: Annotated[int, "how long to wait for the portal"] = 15,
    ) -> str:
        world.fault()
        if booking not in world.draws:
            raise SolarError("denied", f"booking {booking} is not funded")
        world.notice = f"NOTE-{world.label.seed}"
        return json.dumps({"value": world.notice, "email": email})

    return [
        installer_registry,
        grid_application,
        application_status,
        install_booking,
        loan_drawdown,
        owner_notice,
    ]


# --- the app --------------------------------------------------------------------------------
class Failed(Exception):
    """The system was not booked, funded and its owner told, or failed after (the reason is
    the message)."""


class InstallDesk:
    """One project, from the homeowner's record to the system online."""

    def __init__(self, label: Label, client: AsyncOpenAI):
        self.label = label
        self.world = World(label, project=f"PV-{label.seed % 9000 + 1000}")
        chat = OpenAIChatCompletionClient(model=MODEL, async_client=client)
        chat.function_invocation_configuration["include_detailed_errors"] = True
        chat.function_invocation_configuration["max_consecutive_errors_per_request"] = (
            MAX_TOOL_ERRORS
        )
        chat.function_invocation_configuration["allow_concurrent_invocation"] = False
        self.planner = Agent(
            client=chat,
            name="solar_planner",
            instructions="You plan residential solar installations. Answer a ReWOO plan: per "
            'step "Plan N (slug): goal" and "#EN = tool[key=\\"value\\", ...]", #Ek for an '
            "earlier step's evidence; list done steps as 'Known: #Ek = value'. Trust the "
            "sales notes.",
        )
        self.worker = Agent(
            client=chat,
            name="solar_worker",
            instructions="You carry out one step of an installation plan with the services, "
            "then answer '<done|retry|replan|refused|stalled> result=... :: note'.",
            tools=services(self.world),
        )
        self.evidence: dict[int, str] = {}
        self.done: dict[str, str] = {}

    async def plan(self, problem: str, version: int) -> list[Step]:
        notes = {
            k: self.label.params[k]
            for k in ("county", "meter", "address", "loan")
            if k in self.label.params
        }
        brief = (
            f"Home: {json.dumps({'project': self.world.project} | HOME)}\n"
            f"Notes: {json.dumps(notes)}\nDone: {json.dumps(self.done)}\n"
            f"Problem: {problem}\nVersion: {version}"
        )
        reply = await self.planner.run(brief)
        steps, known = parse_plan(reply.text)
        self.evidence.update(known)
        return steps

    async def attempt(self, step: Step) -> tuple[str, str, str]:
        """One worker run of a step, its ``#Ek`` references filled in from the evidence; the
        outcome, result and note."""
        filled = {
            k: REFERENCE.sub(lambda m: self.evidence[int(m[1])], v) for k, v in step.args.items()
        }
        args = ", ".join(f"{k}={v}" if v.isdigit() else f'{k}="{v}"' for k, v in filled.items())
        task = f"Plan {step.number} ({step.slug}): {step.goal}\nRun {step.tool}[{args}]"
        self.world.step = step.slug
        reply = await self.worker.run(task)
        m = OUTCOME.search(reply.text)
        assert m, reply.text
        return m[1], m[2], m[3]

    async def work(self) -> None:
        problem = ""
        for version in range(1, MAX_PLANS + 1):
            steps = await self.plan(problem, version)
            problem = ""
            for step in steps:
                for attempt in range(1, MAX_STEP_ATTEMPTS + 1):
                    outcome, result, note = await self.attempt(step)
                    if outcome == "done":
                        self.evidence[step.number] = result
                        self.done[step.slug] = result
                        break
                    if outcome == "retry" and attempt < MAX_STEP_ATTEMPTS:
                        continue
                    if outcome == "replan" and version < MAX_PLANS:
                        problem = f"{step.slug}: {note}"
                        break
                    raise Failed(f"{step.slug}: {outcome}: {note}")
                if problem:
                    break
            if not problem:
                return
        raise Failed(problem)

    def check(self, tracer: otel_trace.Tracer) -> None:
        """The app's own checks once the owner is told: the approval's meter against the
        utility's meter at the home, then the system coming online."""
        with tracer.start_as_current_span("verify interconnection") as span:
            application = self.world.applications[
                self.world.approvals[self.done["apply_interconnect"]]
            ]
            span.set_attribute("solar.booking", self.done["book_install"])
            span.set_attribute("solar.approved_meter", str(application["meter"]))
            span.set_attribute("utility.meter", self.world.meter)
            if application["meter"] != self.world.meter:
                reason = (
                    f"the approval {self.done['apply_interconnect']} is for meter "
                    f"{application['meter']}, the home's meter is {self.world.meter} (drawn "
                    f"{self.world.draws[self.done['book_install']]})"
                )
                span.set_status(Status(StatusCode.ERROR, reason))
                raise Failed(reason)
        with tracer.start_as_current_span("watch system") as span:
            states = ("SCHEDULED", "INSTALLED", "INSPECTED", "PERMISSION_TO_OPERATE", "ONLINE")
            for poll, state in enumerate(states, 1):
                if self.label.scenario == "external_hail" and poll > int(
                    self.label.params["polls"]
                ):
                    reason = "system offline: a hailstorm broke the panels; insurance claim opened"
                    span.set_status(Status(StatusCode.ERROR, reason))
                    raise Failed(reason)
                span.add_event("system", {"poll": poll, "state": state})

    async def run(self, tracer: otel_trace.Tracer) -> str:
        with tracer.start_as_current_span(f"install {self.world.project}") as root:
            root.set_attribute("solar.project", self.world.project)
            try:
                await self.work()
                self.check(tracer)
                root.set_attribute("solar.outcome", "online")
            except Failed as e:
                root.set_attribute("solar.outcome", "failed")
                root.set_status(Status(StatusCode.ERROR, str(e)))
            return format(root.get_span_context().trace_id, "032x")


async def _play(
    labels: Sequence[Label], base_url: str, tracer: otel_trace.Tracer
) -> dict[str, str]:
    client = AsyncOpenAI(api_key="test", base_url=base_url, max_retries=0)
    try:
        return {label.run: await InstallDesk(label, client).run(tracer) for label in labels}
    finally:
        await client.close()


def play(labels: list[Label], provider: otel_trace.TracerProvider) -> dict[str, str]:
    """Run the solar scenarios with Agent Framework's own instrumentation on ``provider``.

    Sets the process's global tracer provider (once, for good) to a relay that passes the
    framework's spans to ``provider`` while a play is under way and drops them otherwise: a
    process that plays solar cannot give the global provider to anything else.
    """
    if not labels:
        return {}
    enable_instrumentation(enable_sensitive_data=True)
    # the framework logs every failed function call; the spans carry them
    framework_log = logging.getLogger("agent_framework")
    level = framework_log.level
    framework_log.setLevel(logging.CRITICAL)
    try:
        with global_provider(provider), ModelServer(respond=respond) as server:
            tracer = provider.get_tracer("solar-app")
            return asyncio.run(_play(labels, server.base_url("corpus-solar"), tracer))
    finally:
        framework_log.setLevel(level)

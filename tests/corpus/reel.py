"""A film production's locations office securing a street location for a shoot day, written as a
Google Agent Development Kit (``google-adk``) user writes a planner-executor agent: a custom
``BaseAgent`` orchestrator (the shape of ADK's custom-agent guide) that runs a planner
``LlmAgent`` whose ``output_schema`` is the plan, an executor ``LlmAgent`` with plain-function
``FunctionTool``s once per plan step attempt, and the planner again to revise the plan. Run through
ADK's ``InMemoryRunner`` (in-memory sessions) on ADK's ``LiteLlm`` model wrapper
(``openai/<model>`` at the conformance suite's fake OpenAI server, ADK's documented route to
OpenAI-compatible servers), a scripted model. Traced by **ADK's own OpenTelemetry tracing**
(its ``gcp.vertex.agent`` tracer on the process's global provider: ``invocation``,
``agent_run [name]``, ``call_llm`` and ``execute_tool {tool}`` spans; relayed to the play's
provider) and the app's own root span per shoot. No planscope code.

Sealed-30 split only (see README.md). The job: find a location of the setting the script needs
in the borough's film-office register (read page by page) that takes the crew, apply to the film
office for a permit for the shoot day (granted later: polled), book parking for the unit
vehicles on a street by the location, pay the permit fee from the production's account, send the
residents' letters. As an ADK user would write it:

* the app opens one OTel span per shoot (``secure location {shoot}``) and records the outcome;
* ``location_coordinator`` (a ``BaseAgent``) sets the planner's brief in the session state (an
  event's ``state_delta``) and runs ``location_planner``, an ``LlmAgent`` with
  ``output_schema=ShootPlan`` and ``output_key="plan"``: a JSON object whose ``steps`` carry
  ``step``, ``action``, ``service`` and ``inputs`` (``"ref:<step>.<field>"`` for an earlier
  step's result, filled in by the coordinator);
* per step attempt the coordinator yields the step's brief (content and ``state_delta``) and runs
  ``unit_runner``, an ``LlmAgent`` (``include_contents="none"``: the brief is its turn) with the
  services as ``FunctionTool``s, its instruction the brief (``{step_brief}``), its answer
  (``output_key="step_report"``) one line: ``COMPLETE <json>``, ``AGAIN <why>``, ``REVISE <why>``
  or ``ABANDON <why>``;
* the services answer errors as ADK's tool guide recommends, a dict ``{"status": "error",
  "error_code", "error_message"}`` (never raising): ``LINE_BUSY`` (call again in the same run at
  the slot named), ``COME_BACK`` (the coordinator runs the step again, up to 8 attempts),
  ``CHANGE_REQUIRED`` (``use X instead of Y``: the planner revises the rest of the plan, up to 4
  revisions) or ``DENIED`` (final);
* after the runner the app checks the call sheet against the permit (``verify call sheet``) and
  watches the street on the shoot day (``watch shoot day``), both plain OTel spans.

The planner trusts the location manager's notes over the production sheet: a scenario's wrong
value comes from a note. ADK records every LLM request in full, but nothing marks retrieved
context: no starvation label.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import warnings
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from pydantic import BaseModel, Field

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from ._relay import global_provider
from .analyst import _call, _say, _text

# litellm reads its model price map from the network at import unless told to use its own copy
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# LiteLlm talks to the fake server only: no Google client, no Vertex AI
os.environ.setdefault("GOOGLE_GENAI_USE_VERTEXAI", "0")

with warnings.catch_warnings():
    # google-cloud's Python-version and deprecation notices, raised while ADK imports
    warnings.simplefilter("ignore")
    from google.adk.agents import BaseAgent, LlmAgent
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.events import Event, EventActions
    from google.adk.models.lite_llm import LiteLlm
    from google.adk.runners import InMemoryRunner
    from google.adk.tools import FunctionTool
    from google.genai import types

TRACER = "reel-app"
"""The app's tracer (its root span per shoot and its checks)."""
APP = "reel_locations"
JOB: dict[str, Any] = {
    "shoot": "SM2-EP4-D17",
    "production": "Saltmarsh series 2",
    "borough": "hackney",
    "setting": "canal towpath",
    "crew": 58,
    "shoot_date": "2027-05-18",
    "vehicles": 9,
    "street": "Wharf Road",
    "account": "PR-30417",
}
STEPS: tuple[tuple[str, str, str, dict[str, Any]], ...] = (
    (
        "scout_location",
        "Find a {setting} location in {borough} that takes a crew of {crew}.",
        "find_location",
        {"borough": "{borough}", "setting": "{setting}", "crew": "{crew}"},
    ),
    (
        "apply_permit",
        "Apply to the {borough} film office for a permit to shoot there on {shoot_date}.",
        "apply_for_permit",
        {"location": "ref:scout_location.location", "shoot_date": "{shoot_date}", "crew": "{crew}"},
    ),
    (
        "book_unit_base",
        "Book parking for {vehicles} unit vehicles on {street} for {shoot_date}.",
        "book_unit_base",
        {
            "location": "ref:scout_location.location",
            "street": "{street}",
            "shoot_date": "{shoot_date}",
            "vehicles": "{vehicles}",
        },
    ),
    (
        "pay_fee",
        "Pay the permit fee from production account {account}.",
        "pay_permit_fee",
        {"permit": "ref:apply_permit.permit", "account": "{account}"},
    ),
    (
        "notify_residents",
        "Send the residents' letters for the shoot on {shoot_date}.",
        "send_resident_letters",
        {"location": "ref:scout_location.location", "shoot_date": "{shoot_date}"},
    ),
)
MAX_ATTEMPTS = 8
MAX_REVISIONS = 4
MAX_CHECKS = 12
WATCHES = 3
REF = re.compile(r"^ref:(\w+)\.(\w+)$")
MOVED = re.compile(r"use (\S+(?: Road| Street| Lane)?) instead of (\S+(?: Road| Street| Lane)?)")

PLANNER = (
    "You plan location days for the Saltmarsh locations office. Answer a plan of steps, each with "
    "a snake_case step name, the action, the one service that does it and its inputs; write "
    "ref:<step>.<field> for a value an earlier step returns. The location manager's notes "
    "correct the production sheet.\n\n{planning_brief}"
)
RUNNER = (
    "You are the unit's locations assistant. Carry out the one step below with the services. "
    "When a service is busy, call it again at the slot it names. End with one line: COMPLETE "
    "followed by the service's last answer as JSON, AGAIN <why> when the office says to come "
    "back, REVISE <why> when a change is required, or ABANDON <why>.\n\n{step_brief}"
)


# --- the plan: the planner's output_schema ---------------------------------------------------
class PlanStep(BaseModel):
    """One step of the location day."""

    step: str = Field(description="a short snake_case name of the step")
    action: str = Field(description="what the step does, in a sentence")
    service: str = Field(description="the one service that does it")
    inputs: dict[str, str | int] = Field(description="the service's inputs")


class ShootPlan(BaseModel):
    """The steps that secure the location, in order."""

    shoot: str
    steps: list[PlanStep]


# --- the scripted model ---------------------------------------------------------------------
def _facts(brief: str) -> dict[str, Any]:
    fields = dict(re.findall(r"^(Production sheet|Location notes): (\{.*\})$", brief, re.M))
    return dict(json.loads(fields["Production sheet"]) | json.loads(fields["Location notes"]))


def _plan(brief: str) -> dict[str, Any]:
    """The planner's answer: the first plan from the sheet and the notes, or a revision (the
    remaining steps with the value the problem names changed)."""
    remaining = re.search(r"^Remaining steps: (\[.*\])$", brief, re.M)
    if remaining:
        steps = json.loads(remaining[1])
        moved = MOVED.search(brief)
        if moved:
            new, old = moved[1], moved[2].rstrip(".;")
            for s in steps:
                s["inputs"] = {k: new if v == old else v for k, v in s["inputs"].items()}
                s["action"] = s["action"].replace(old, new)
        return {"shoot": JOB["shoot"], "steps": steps}
    facts = _facts(brief)

    def fill(value: str) -> str | int:
        filled = value.format(**facts)
        return int(filled) if filled.isdigit() else filled

    return {
        "shoot": facts["shoot"],
        "steps": [
            {
                "step": slug,
                "action": action.format(**facts),
                "service": service,
                "inputs": {k: fill(v) for k, v in inputs.items()},
            }
            for slug, action, service, inputs in STEPS
        ],
    }


def _run_step(brief: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The runner's next turn for one step attempt."""
    service = re.search(r"^Service: (\w+)$", brief, re.M)
    inputs = re.search(r"^Inputs: (\{.*\})$", brief, re.M)
    if not service or not inputs:
        return _say("ABANDON no service named in the step")
    calls = [c for m in messages for c in m.get("tool_calls") or []]
    if not calls:
        return _call(service[1], json.loads(inputs[1]), 0)
    last = calls[-1]["function"]
    name, args = last["name"], json.loads(last["arguments"])
    answer = json.loads(_text(messages[-1].get("content")))
    if answer.get("status") == "error":
        code, said = answer.get("error_code", ""), answer.get("error_message", "")
        slot = re.search(r"try slot (\d+)", said)
        if code == "LINE_BUSY" and slot:
            return _call(name, args | {"slot": int(slot[1])}, len(calls))
        verdict = {"COME_BACK": "AGAIN", "CHANGE_REQUIRED": "REVISE"}.get(code, "ABANDON")
        return _say(f"{verdict} {code}: {said}")
    if answer.get("next_page"):
        return _call(name, args | {"page": answer["next_page"]}, len(calls))
    if answer.get("state") == "pending":
        if sum(c["function"]["name"] == "check_permit" for c in calls) >= MAX_CHECKS:
            return _say(f"ABANDON the permit is still pending after {MAX_CHECKS} checks")
        return _call("check_permit", {"application": answer["application"]}, len(calls))
    answer.pop("status", None)
    return _say(f"COMPLETE {json.dumps(answer)}")


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body (ADK sends the agent's
    instruction as the system message; the planner's request carries its ``response_format``).

    >>> brief = f"Production sheet: {json.dumps(JOB)}\\nLocation notes: {{}}"
    >>> msg = respond({"response_format": {}, "messages": [
    ...     {"role": "system", "content": PLANNER.format(planning_brief=brief)}]})
    >>> json.loads(msg["choices"][0]["message"]["content"])["steps"][0]["inputs"]["crew"]
    58
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = next((_text(m.get("content")) for m in messages if m.get("role") == "system"), "")
    if body.get("response_format") is not None:
        return completion(body, _say(json.dumps(_plan(system))))
    return completion(body, _run_step(system, messages))


# --- the world ------------------------------------------------------------------------------
@dataclass
class World:
    """The film office, the parking office, the production's bank and the street of one shoot."""

    label: Label
    errors: list[str] = field(default_factory=list)
    checks: dict[str, int] = field(default_factory=dict)
    permit: dict[str, Any] = field(default_factory=dict)
    unit_base: str = ""
    letters: bool = False

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))

    def fault(self, name: str, old: str = "") -> dict[str, Any] | None:
        """The scenario's next error answer when this call is one it targets."""
        if not self.errors or self.label.params.get("service") != name:
            return None
        code, _, said = self.errors.pop(0).format(old=old).partition(": ")
        return _error(code, said)

    def tools(self) -> list[FunctionTool]:
        params = self.label.params
        seed = self.label.seed

        def find_location(borough: str, setting: str, crew: int, page: int = 1) -> dict[str, Any]:
            """Search the borough film office's register for locations of a setting that take
            a crew of a size, a page at a time."""
            if page < int(params.get("pages", 1)):
                return {"status": "success", "locations": [], "next_page": page + 1}
            return {
                "status": "success",
                "location": f"LOC-{borough[:3].upper()}-{seed % 743}",
                "setting": setting,
                "max_crew": crew + 12,
            }

        def apply_for_permit(
            location: str, shoot_date: str, crew: int, slot: int = 0
        ) -> dict[str, Any]:
            """Apply to the film office for a permit to film at a location on a day; the
            office decides later (check_permit)."""
            if error := self.fault("apply_for_permit"):
                return error
            if crew != JOB["crew"]:
                return _error(
                    "DENIED",
                    f"the production's public liability certificate covers a crew of"
                    f" {JOB['crew']}, not {crew}",
                )
            application = f"FA-{seed % 977}"
            self.checks[application] = 0
            self.permit = {"location": location, "shoot_date": shoot_date}
            return {"status": "success", "application": application, "state": "pending"}

        def check_permit(application: str) -> dict[str, Any]:
            """The film office's decision on a permit application."""
            self.checks[application] = self.checks.get(application, 0) + 1
            stuck = self.label.scenario == "loop_poll_stuck"
            if stuck or self.checks[application] < int(params.get("polls", 1)):
                return {"status": "success", "application": application, "state": "pending"}
            self.permit["permit"] = f"FP-{seed % 811}"
            return {
                "status": "success",
                "application": application,
                "state": "granted",
                "permit": self.permit["permit"],
                "shoot_date": self.permit["shoot_date"],
            }

        def book_unit_base(
            location: str, street: str, shoot_date: str, vehicles: int, slot: int = 0
        ) -> dict[str, Any]:
            """Book parking bays for the unit's vehicles on a street by the location."""
            if error := self.fault("book_unit_base", street):
                return error
            moved = params.get("street_to")
            if moved and street != moved:
                return _error(
                    "CHANGE_REQUIRED",
                    f"the bays on {street} are suspended on {shoot_date} for resurfacing; use"
                    f" {moved} instead of {street}",
                )
            self.unit_base = street
            return {"status": "success", "booking": f"UB-{seed % 389}", "bays": vehicles}

        def pay_permit_fee(permit: str, account: str) -> dict[str, Any]:
            """Pay a permit's fee from a production account."""
            if error := self.fault("pay_permit_fee", account):
                return error
            if account != JOB["account"]:
                return _error("DENIED", f"account {account} is not held by {JOB['production']}")
            return {"status": "success", "receipt": f"RC-{seed % 653}", "permit": permit}

        def send_resident_letters(location: str, shoot_date: str, slot: int = 0) -> dict[str, Any]:
            """Send the letters telling the location's residents of the shoot day."""
            if error := self.fault("send_resident_letters"):
                return error
            self.letters = True
            return {"status": "success", "letters": 40 + seed % 60, "shoot_date": shoot_date}

        funcs: tuple[Callable[..., dict[str, Any]], ...] = (
            find_location,
            apply_for_permit,
            check_permit,
            book_unit_base,
            pay_permit_fee,
            send_resident_letters,
        )
        return [FunctionTool(f) for f in funcs]

    def verify(self) -> None:
        """The call sheet's shoot day against the permit's (raises ``ShootLost``)."""
        if self.permit.get("shoot_date") != JOB["shoot_date"]:
            raise ShootLost(
                f"the call sheet has {JOB['shoot']} on {JOB['shoot_date']} but permit"
                f" {self.permit.get('permit')} is for {self.permit.get('shoot_date')}"
            )

    def watch(self, check: int) -> str:
        """The street on the shoot day (raises ``ShootLost`` when a main bursts)."""
        burst = self.label.scenario == "external_watermain"
        if burst and check > int(self.label.params["polls"]):
            raise ShootLost(
                f"a burst water main closed {self.unit_base} on {JOB['shoot_date']}; the unit"
                " cannot reach the location"
            )
        return "clear"


class ShootLost(RuntimeError):
    """The shoot day cannot go ahead."""


def _error(code: str, said: str) -> dict[str, Any]:
    return {"status": "error", "error_code": code, "error_message": said}


# --- the agents -----------------------------------------------------------------------------
def _filled(inputs: dict[str, Any], results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A step's inputs with every ``ref:<step>.<field>`` replaced by that earlier result."""
    out = {}
    for key, value in inputs.items():
        ref = REF.match(value) if isinstance(value, str) else None
        out[key] = results[ref[1]][ref[2]] if ref else value
    return out


class LocationCoordinator(BaseAgent):
    """Plan the location day, run each step through the runner agent, revise on a change."""

    planner: LlmAgent
    runner: LlmAgent
    sheet: dict[str, Any]
    notes: dict[str, Any]

    def _say(self, ctx: InvocationContext, text: str, **state: Any) -> Event:
        return Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            branch=ctx.branch,
            content=types.Content(role="model", parts=[types.Part(text=text)]),
            actions=EventActions(state_delta=state),
        )

    async def _plan(self, ctx: InvocationContext, brief: str) -> AsyncGenerator[Event, None]:
        yield self._say(ctx, "Planning the location day.", planning_brief=brief)
        async for event in self.planner.run_async(ctx):
            yield event

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        sheet = f"Production sheet: {json.dumps(self.sheet)}"
        brief = f"{sheet}\nLocation notes: {json.dumps(self.notes)}"
        async for event in self._plan(ctx, brief):
            yield event
        steps = list(ctx.session.state["plan"]["steps"])
        results: dict[str, dict[str, Any]] = {}
        attempts: dict[str, int] = {}
        revisions = 0
        while steps:
            step = steps[0]
            slug = step["step"]
            attempts[slug] = attempts.get(slug, 0) + 1
            inputs = _filled(step["inputs"], results)
            number = len(results) + 1
            text = (
                f"Step {number} of {number + len(steps) - 1} — {slug}: {step['action']}\n"
                f"Service: {step['service']}\nInputs: {json.dumps(inputs)}"
            )
            yield self._say(ctx, text, step_brief=text)
            async for event in self.runner.run_async(ctx):
                yield event
            report = str(ctx.session.state.get("step_report", "")).strip()
            verdict, _, said = report.partition(" ")
            if verdict == "COMPLETE":
                results[slug] = json.loads(said)
                steps.pop(0)
                continue
            if verdict == "AGAIN" and attempts[slug] < MAX_ATTEMPTS:
                continue
            if verdict == "REVISE" and revisions < MAX_REVISIONS:
                revisions += 1
                brief = (
                    f"{sheet}\nDone steps: {json.dumps(results)}\n"
                    f"Remaining steps: {json.dumps(steps)}\nProblem at {slug}: {said}"
                )
                async for event in self._plan(ctx, brief):
                    yield event
                steps = list(ctx.session.state["plan"]["steps"])
                continue
            yield self._say(ctx, f"NOT SECURED {slug}: {said}", outcome=f"{slug}: {said}")
            return
        yield self._say(ctx, f"SECURED in {len(results)} steps", outcome="secured", results=results)


def build(world: World, model: LiteLlm, notes: dict[str, Any]) -> LocationCoordinator:
    """The agent tree of one shoot."""
    planner = LlmAgent(
        name="location_planner",
        model=model,
        description="Plans the location day as a list of steps.",
        instruction=PLANNER,
        output_schema=ShootPlan,
        output_key="plan",
        include_contents="none",
    )
    runner = LlmAgent(
        name="unit_runner",
        model=model,
        description="Carries out one step of the location day with the services.",
        instruction=RUNNER,
        tools=list(world.tools()),
        output_key="step_report",
        include_contents="none",
    )
    return LocationCoordinator(
        name="location_coordinator",
        description="Secures a shoot's location step by step.",
        planner=planner,
        runner=runner,
        sub_agents=[planner, runner],
        sheet=JOB,
        notes=notes,
    )


@dataclass
class Reel:
    """One shoot's location day, from the production sheet to the street on the day."""

    label: Label
    model: LiteLlm
    provider: TracerProvider

    async def secure(self) -> str:
        world = World(self.label)
        notes = {k: self.label.params[k] for k in JOB if k in self.label.params}
        tracer = self.provider.get_tracer(TRACER)
        with tracer.start_as_current_span(f"secure location {JOB['shoot']}") as root:
            root.set_attribute("shoot", JOB["shoot"])
            root.set_attribute("borough", JOB["borough"])
            runner = InMemoryRunner(agent=build(world, self.model, notes), app_name=APP)
            session = await runner.session_service.create_session(app_name=APP, user_id="locations")
            ask = f"Secure the location for {JOB['shoot']} ({JOB['production']})."
            message = types.Content(role="user", parts=[types.Part(text=ask)])
            async for _ in runner.run_async(
                user_id="locations", session_id=session.id, new_message=message
            ):
                pass
            done = await runner.session_service.get_session(
                app_name=APP, user_id="locations", session_id=session.id
            )
            outcome = str(done.state.get("outcome", "") if done else "")
            failure = "" if outcome == "secured" else f"location not secured: {outcome}"
            if not failure:
                try:
                    with tracer.start_as_current_span("verify call sheet") as span:
                        span.set_attribute("shoot_date", JOB["shoot_date"])
                        world.verify()
                    with tracer.start_as_current_span("watch shoot day") as span:
                        for check in range(1, WATCHES + 1):
                            span.add_event("street", {"check": check, "state": world.watch(check)})
                except ShootLost as error:
                    failure = str(error)
            root.set_attribute("outcome", failure or "secured")
            if failure:
                root.set_status(Status(StatusCode.ERROR, failure))
            return format(root.get_span_context().trace_id, "032x")


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the location-day scenarios under ADK's own tracing on ``provider``; run name ->
    trace id. ADK traces through the global tracer provider: a relay (set once, for good)
    passes its spans to ``provider`` while this plays."""
    out: dict[str, str] = {}
    if not labels:
        return out
    # ADK logs a warning per tool parameter with a default (page, slot: "Default value is not
    # supported in function declaration schema for Google AI") and per output_schema agent
    logging.getLogger("google_adk").setLevel(logging.ERROR)
    with global_provider(provider), ModelServer(respond=respond) as server:
        model = LiteLlm(
            model=f"openai/{MODEL}", api_base=server.base_url("corpus-reel"), api_key="test"
        )
        for label in labels:
            out[label.run] = asyncio.run(Reel(label, model, provider).secure())
    return out

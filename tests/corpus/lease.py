"""A rental-leasing agent on Agno, traced by OpenInference's Agno instrumentor
(``openinference-instrumentation-agno``): Agno's own ``OpenAIChat`` model against a scripted
model on the conformance suite's fake OpenAI server (``ModelServer(respond=...)``). No planscope
code.

Sealed-8 split only (see README.md). The task: a rental application comes in; find a vacant
unit in the building the applicant asked for (a listing read page by page), screen the
applicant (a background check, polled until it clears), draft the lease, collect the deposit,
send the lease for e-signature. As an Agno user would write it:

* the app opens one OTel span per application (``lease {application}``) and records the
  outcome;
* a ``leasing_planner`` ``Agent`` builds the plan **through tool calls**: one ``add_step``
  call per step (``slug``, ``goal``, ``tool``, ``args``), then a short text answer; an
  argument ``"@slug"`` stands for that earlier step's result, substituted by the app; asked
  again after a failure, it adds only the steps not done;
* a ``leasing_executor`` ``Agent`` run per step attempt, its input ``Todo #n (slug): goal``
  and ``Run {tool} with {json}``, its answer a structured ``StepReport`` (``output_schema``:
  ``status`` done / retry_later / replan / rejected / gave_up, ``value``, ``detail``);
* the leasing office's services answer errors with gRPC-style codes the model reads:
  ``DEADLINE_EXCEEDED`` (raised as Agno's ``RetryAgentRun``: the model calls again with a
  longer ``timeout_s``), ``UNAVAILABLE`` (the model reports ``retry_later``, the app re-runs
  the step, up to 8 attempts), ``FAILED_PRECONDITION`` (``replan``: the app asks the planner
  again for the steps not done, up to 4 plan versions), ``INVALID_ARGUMENT`` (final);
* after the last step the app checks the lease against the listing and the application
  (``verify lease``) and watches the signature (``watch signature``), both plain OTel spans.

The planner trusts the leasing agent's notes over the application: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from agno.agent import Agent
from agno.exceptions import RetryAgentRun
from agno.models.openai import OpenAIChat
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from pydantic import BaseModel

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import RUNAWAY, Label

APPLICATION: dict[str, Any] = {
    "applicant": "AP-58213",
    "building": "harbor-view",
    "bedrooms": 2,
    "rent": 1580,
    "move_in": "2027-02-01",
    "email": "m.okafor@mailbox.example",
}
MAX_STEP_ATTEMPTS = 8
MAX_PLAN_VERSIONS = 4
MAX_STATUS_CHECKS = 12
MERCHANT = "MA-100"


class ApiError(RuntimeError):
    """An error answer of the leasing office's services: ``CODE: text``."""

    def __init__(self, code: str, text: str):
        super().__init__(f"{code}: {text}")


class StepReport(BaseModel):
    """The executor's structured answer for one step attempt."""

    status: Literal["done", "retry_later", "replan", "rejected", "gave_up"]
    value: str = ""
    detail: str = ""


# --- the scripted model (answers on the conformance suite's fake OpenAI server) -------------
def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"call_{name}_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _report(status: str, value: str = "", detail: str = "") -> dict[str, Any]:
    return _say(json.dumps({"status": status, "value": value, "detail": detail}))


def _planned_steps(brief: str) -> list[tuple[str, str, str, dict[str, Any]]]:
    """The steps the planner means to add: the application's facts, the notes trusted over
    them, the unit or merchant account a failure names, only the steps not done."""
    fields = dict(re.findall(r"^(\w[\w ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(fields["Application"]) | json.loads(fields.get("Agent notes", "{}"))
    done = set(json.loads(fields.get("Done", "[]")))
    failure = fields.get("Failure", "")
    unit = re.search(r"held unit (U-[\w-]+)", failure)
    merchant = re.search(r"merchant account (MA-\d+)", failure)
    steps = [
        ("find_unit", f"Find a vacant {facts['bedrooms']}-bedroom unit in {facts['building']}",
         "search_units", {"building": facts["building"], "bedrooms": facts["bedrooms"]}),
        ("screen_applicant", f"Screen applicant {facts['applicant']}",
         "request_screening", {"applicant": facts["applicant"]}),
        ("draft_lease", "Draft a 12-month lease",
         "create_lease",
         {"unit": unit.group(1) if unit else "@find_unit", "applicant": facts["applicant"],
          "screening": "@screen_applicant", "rent": facts["rent"],
          "move_in": facts["move_in"], "term_months": 12}),
        ("collect_deposit", "Charge the security deposit (one month's rent)",
         "charge_deposit",
         {"lease": "@draft_lease", "amount": facts["rent"],
          "merchant": merchant.group(1) if merchant else MERCHANT}),
        ("send_for_signature", "Send the lease to the applicant for e-signature",
         "send_lease", {"lease": "@draft_lease", "email": facts["email"]}),
    ]  # fmt: skip
    return [s for s in steps if s[0] not in done]


def _planner(messages: list[dict[str, Any]], brief: str) -> dict[str, Any]:
    """The planner's turn: the next ``add_step`` call, or its closing sentence."""
    steps = _planned_steps(brief)
    added = sum(1 for m in messages if m.get("role") == "tool")
    if added < len(steps):
        slug, goal, tool_name, args = steps[added]
        return _call(
            added, "add_step", {"slug": slug, "goal": goal, "tool": tool_name, "args": args}
        )
    return _say(f"Plan ready: {len(steps)} steps, starting with {steps[0][0]}.")


def _executor(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The executor's turn: make the call the task names, call again after a deadline with a
    longer timeout, follow ``next_page``, poll a screening until it is done, report."""
    run = re.search(r"^Run (\w+) with (.*)$", task, re.MULTILINE)
    assert run, task
    tool_name, call_args = run.group(1), json.loads(run.group(2))
    results = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
    if not results:
        return _call(0, tool_name, call_args)
    last = results[-1]
    code = re.match(r"([A-Z_]+): ", last)
    if code:
        kind = code.group(1)
        if kind == "DEADLINE_EXCEEDED":
            retries = sum(r.startswith("DEADLINE_EXCEEDED") for r in results)
            return _call(len(results), tool_name, call_args | {"timeout_s": 30 * 2**retries})
        status = {"UNAVAILABLE": "retry_later", "FAILED_PRECONDITION": "replan"}
        return _report(status.get(kind, "rejected"), detail=last)
    seen = json.loads(last)
    if "next_page" in seen:
        return _call(len(results), tool_name, call_args | {"page": seen["next_page"]})
    if seen.get("status") == "PENDING":
        checks = sum(
            call["function"]["name"] == "screening_status"
            for m in messages
            for call in m.get("tool_calls") or ()
        )
        if checks >= MAX_STATUS_CHECKS:
            why = f"screening {seen['check']} still PENDING after {checks} status checks"
            return _report("gave_up", detail=why)
        return _call(len(results), "screening_status", {"check": seen["check"]})
    return _report("done", value=str(seen["value"]))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the planner's next
    ``add_step`` call for a brief, the executor's next tool call or report otherwise.

    >>> msg = respond({"messages": [{"role": "user", "content": 'Run f with {"a": 1}'}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["name"]
    'f'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if "Objective: " in task:
        return completion(body, _planner(messages, task))
    return completion(body, _executor(messages, task))


# --- the world ------------------------------------------------------------------------------
@dataclass
class World:
    """The listings, screening bureau, lease register, payments and e-signature service."""

    label: Label
    application: str
    step: str = ""
    errors: list[str] = field(default_factory=list)
    units: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Unit -> its building and listed rent."""
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Screening check -> its applicant and status polls."""
    leases: dict[str, dict[str, Any]] = field(default_factory=dict)
    deposits: dict[str, int] = field(default_factory=dict)
    sent: str = ""

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self) -> None:
        """Raise the scenario's next error when the call belongs to the step it targets."""
        if not self.errors or self.step != self.params.get("step"):
            return
        text = self.errors.pop(0)
        if not self.errors and self.label.kind == RUNAWAY:
            raise ApiError("INVALID_ARGUMENT", f"{text}; request abandoned")
        how = self.params.get("raise")
        if how == "retry":
            raise RetryAgentRun(f"DEADLINE_EXCEEDED: {text}")
        if how == "replans" and len(self.errors) % 2 == 0:
            account = f"MA-{400 + len(self.errors)}"
            raise ApiError(
                "FAILED_PRECONDITION",
                f"{text}; merchant account rotated, use merchant account {account}",
            )
        raise ApiError("UNAVAILABLE", text)


def make_tools(world: World) -> list[Any]:
    """The leasing office's services, bound to one application's world."""

    def search_units(building: str, bedrooms: int, page: int = 1, timeout_s: int = 30) -> str:
        """List vacant units of a building, a page at a time.

        Args:
            building: the building's slug
            bedrooms: the number of bedrooms wanted
            page: the listing page
            timeout_s: how long to wait for the listing service
        """
        world.fault()
        pages = int(world.params.get("pages", 1))
        if page < pages:
            taken = {"unit": f"U-{building[:2]}{page}0{bedrooms}", "vacant": False}
            return json.dumps({"units": [taken], "next_page": page + 1})
        unit = f"U-{building[:2]}{pages}1{bedrooms}"
        world.units[unit] = {"building": building, "rent": APPLICATION["rent"]}
        return json.dumps({"value": unit})

    def request_screening(applicant: str, timeout_s: int = 30) -> str:
        """Ask the screening bureau for a credit and background check of an applicant.

        Args:
            applicant: the applicant's id
            timeout_s: how long to wait for the bureau
        """
        world.fault()
        check = f"SCR-{world.label.seed}-{len(world.checks)}"
        world.checks[check] = {"applicant": applicant, "polls": 0}
        return json.dumps({"check": check, "status": "PENDING"})

    def screening_status(check: str) -> str:
        """The state of a screening check; its report once cleared.

        Args:
            check: the screening check
        """
        entry = world.checks[check]
        entry["polls"] += 1
        if world.label.scenario == "loop_poll_stuck" or entry["polls"] < int(
            world.params.get("polls", 1)
        ):
            return json.dumps({"check": check, "status": "PENDING"})
        return json.dumps({"check": check, "status": "CLEARED", "value": check})

    def create_lease(
        unit: str,
        applicant: str,
        screening: str,
        rent: int,
        move_in: str,
        term_months: int,
        timeout_s: int = 30,
    ) -> str:
        """Draft a lease of a unit for a screened applicant.

        Args:
            unit: the unit
            applicant: the applicant's id
            screening: the applicant's cleared screening check
            rent: the monthly rent in dollars
            move_in: the move-in date (YYYY-MM-DD)
            term_months: the lease term
            timeout_s: how long to wait for the lease register
        """
        world.fault()
        held = world.params.get("held_unit")
        if held:
            world.units[held] = {"building": APPLICATION["building"], "rent": APPLICATION["rent"]}
        if held and unit != held:
            raise ApiError(
                "FAILED_PRECONDITION",
                f"unit {unit} was taken off the market by its owner; held unit {held} "
                "(same floor plan) is reserved for this application",
            )
        if applicant != APPLICATION["applicant"]:
            raise ApiError(
                "INVALID_ARGUMENT", f"no rental application on file for applicant {applicant}"
            )
        building = world.units.get(unit, {"building": APPLICATION["building"]})["building"]
        if building != APPLICATION["building"]:
            raise ApiError(
                "INVALID_ARGUMENT",
                f"unit {unit} is in {building}; application {world.application} is for "
                f"{APPLICATION['building']}",
            )
        lease = f"L-{world.label.seed}-{len(world.leases)}"
        world.leases[lease] = {"unit": unit, "rent": rent, "move_in": move_in}
        return json.dumps({"value": lease})

    def charge_deposit(lease: str, amount: int, merchant: str, timeout_s: int = 30) -> str:
        """Charge the applicant's security deposit for a lease.

        Args:
            lease: the lease
            amount: the deposit in dollars
            merchant: the office's merchant account
            timeout_s: how long to wait for the payment processor
        """
        world.fault()
        world.deposits[lease] = amount
        return json.dumps({"value": f"PAY-{world.label.seed}-{amount}"})

    def send_lease(lease: str, email: str, timeout_s: int = 30) -> str:
        """Send a lease to the applicant for e-signature.

        Args:
            lease: the lease
            email: the applicant's e-mail address
            timeout_s: how long to wait for the e-signature service
        """
        world.fault()
        if email != APPLICATION["email"]:
            raise ApiError("INVALID_ARGUMENT", f"mailbox {email} does not exist (hard bounce)")
        world.sent = lease
        return json.dumps({"value": f"ENV-{world.label.seed}"})

    return [
        search_units,
        request_screening,
        screening_status,
        create_lease,
        charge_deposit,
        send_lease,
    ]


# --- the app --------------------------------------------------------------------------------
class Failed(Exception):
    """The application did not end in a signed, valid lease (the reason is the message)."""


class RetryLater(Exception):
    """The executor reported ``retry_later``."""


class Replan(Exception):
    """The executor reported ``replan``."""


class LeasingDesk:
    """One rental application, from the request to the watched signature."""

    def __init__(self, label: Label, model: OpenAIChat):
        self.label = label
        self.world = World(label, application=f"RA-{label.seed % 9000 + 1000}")
        self.plan: list[dict[str, Any]] = []

        def add_step(slug: str, goal: str, tool: str, args: dict[str, Any]) -> str:
            """Add the next step to the plan.

            Args:
                slug: a short id for the step
                goal: what the step achieves
                tool: the tool the step calls
                args: the tool's arguments ("@slug" for an earlier step's result)
            """
            self.plan.append({"slug": slug, "goal": goal, "tool": tool, "args": args})
            return f"step {len(self.plan)} added: {slug}"

        self.planner = Agent(
            name="leasing_planner",
            model=model,
            tools=[add_step],
            instructions="Plan the application with one add_step call per step.",
            telemetry=False,
        )
        self.executor = Agent(
            name="leasing_executor",
            model=model,
            tools=make_tools(self.world),
            instructions="Carry out the one step you are given and report on it.",
            output_schema=StepReport,
            tool_call_limit=20,
            telemetry=False,
        )

    def brief(self, done: dict[str, str], failure: str) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("building", "applicant", "rent", "email")
            if k in self.label.params
        }
        lines = [
            f"Objective: Lease a unit for application {self.world.application} and get it signed.",
            f"Application: {json.dumps(APPLICATION)}",
        ]
        if notes:
            lines.append(f"Agent notes: {json.dumps(notes)}")
        if done:
            lines.append(f"Done: {json.dumps(sorted(done))}")
        if failure:
            lines.append(f"Failure: {failure}")
        return "\n".join(lines)

    def attempt(self, n: int, step: dict[str, Any], done: dict[str, str]) -> str:
        """One executor run of a step: its result, or its report as an exception."""
        args = {
            k: done.get(v[1:], v) if isinstance(v, str) and v.startswith("@") else v
            for k, v in step["args"].items()
        }
        task = (
            f"Todo #{n} ({step['slug']}): {step['goal']}\n"
            f"Run {step['tool']} with {json.dumps(args)}"
        )
        self.world.step = step["slug"]
        report = self.executor.run(task).content
        assert isinstance(report, StepReport), report
        if report.status == "done":
            return report.value
        if report.status == "retry_later":
            raise RetryLater(report.detail)
        if report.status == "replan":
            raise Replan(report.detail)
        raise Failed(f"{step['slug']}: {report.status}: {report.detail}")

    def work(self) -> None:
        done: dict[str, str] = {}
        failure = ""
        for version in range(1, MAX_PLAN_VERSIONS + 1):
            self.plan = []
            self.planner.run(self.brief(done, failure))
            failure = ""
            for n, step in enumerate(self.plan, 1):
                for attempt in range(1, MAX_STEP_ATTEMPTS + 1):
                    try:
                        done[step["slug"]] = self.attempt(n, step, done)
                        break
                    except RetryLater as e:
                        if attempt == MAX_STEP_ATTEMPTS:
                            raise Failed(f"{step['slug']}: {e}") from e
                    except Replan as e:
                        if version == MAX_PLAN_VERSIONS:
                            raise Failed(f"{step['slug']}: {e}") from e
                        failure = f"{step['slug']}: {e}"
                        break
                if failure:
                    break
            if not failure:
                return
        raise Failed(failure)

    def check(self, tracer: otel_trace.Tracer) -> None:
        """The app's own checks after sending: the lease's terms, then the signature."""
        with tracer.start_as_current_span("verify lease") as span:
            lease = self.world.leases.get(self.world.sent, {})
            listed = self.world.units.get(lease.get("unit", ""), {}).get("rent", 0)
            span.set_attribute("lease.id", self.world.sent)
            span.set_attribute("lease.rent", int(lease.get("rent", 0)))
            span.set_attribute("listing.rent", int(listed))
            if lease.get("rent") != listed:
                reason = f"lease rent {lease.get('rent')} differs from the listed rent {listed}"
                span.set_status(Status(StatusCode.ERROR, reason))
                raise Failed(reason)
        with tracer.start_as_current_span("watch signature") as span:
            for poll, state in enumerate(("SENT", "VIEWED", "SIGNED", "SIGNED", "SIGNED"), 1):
                if self.label.scenario == "external_void" and poll > int(
                    self.label.params["polls"]
                ):
                    reason = "lease voided: the city posted a vacate order for the building"
                    span.set_status(Status(StatusCode.ERROR, reason))
                    raise Failed(reason)
                span.add_event("envelope", {"poll": poll, "state": state})

    def run(self, tracer: otel_trace.Tracer) -> str:
        with tracer.start_as_current_span(f"lease {self.world.application}") as root:
            root.set_attribute("lease.application", self.world.application)
            try:
                self.work()
                self.check(tracer)
                root.set_attribute("lease.outcome", "signed")
            except Failed as e:
                root.set_attribute("lease.outcome", "failed")
                root.set_status(Status(StatusCode.ERROR, str(e)))
            return format(root.get_span_context().trace_id, "032x")


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the lease scenarios with OpenInference's Agno instrumentor on ``provider``."""
    out: dict[str, str] = {}
    if not labels:
        return out
    from openinference.instrumentation.agno import AgnoInstrumentor

    agno_log = logging.getLogger("agno")
    instrumentor = AgnoInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer(respond=respond) as server:
            # Agno logs every failing tool call with its traceback (the spans carry them);
            # after uvicorn's logging set-up, which re-enables existing loggers
            agno_log.disabled = True
            model = OpenAIChat(id=MODEL, base_url=server.base_url("corpus-lease"), api_key="test")
            tracer = provider.get_tracer("lease-app")
            for label in labels:
                out[label.run] = LeasingDesk(label, model).run(tracer)
    finally:
        instrumentor.uninstrument()
        agno_log.disabled = False
    return out

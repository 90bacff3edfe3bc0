"""An insurance-claim adjudication agent on the real pydantic-ai ``Agent``, traced by
pydantic-ai's own OpenTelemetry instrumentation (its ``Instrumentation`` capability),
its models scripted with pydantic-ai's ``FunctionModel``. No planscope code.

Sealed-6 split only (see README.md). The task: a water-damage claim comes in; pull the policy,
check the coverage, screen the policy's prior claims (a paged index), order a field inspection
(a job, polled until it completes with an estimate), compute the payout, pay the claimant. As a
pydantic-ai user would write it:

* the app opens one OTel span per claim (``adjudicate {claim}``) and records the outcome on it;
* a ``claims_planner`` agent answers the plan as a **numbered markdown list**: each item a
  ``**slug**: goal`` line with ``tool:`` and ``args:`` sub-items; an argument
  ``"<from slug>"`` stands for that earlier step's result, substituted by the app;
* a ``claims_executor`` agent run per step attempt, prompted ``## {n}. {slug}``, the goal and the
  call to make; its tools have their own error semantics: ``ModelRetry`` (transient: the model
  calls again with other arguments), ``Unavailable`` (the run fails, the app re-runs the step),
  ``Rerouted`` (the app asks the planner again for the steps not done), ``ClaimRejected``
  (final);
* after the last step the app audits the payout against the policy (``audit payout``) and
  watches the settlement (``watch settlement``), both plain OTel spans.

The planner trusts the intake notes over the claim file: the scenario's wrong value comes from
a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from pydantic_ai import Agent, InstrumentationSettings, ModelRetry, RunContext
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ._labels import RUNAWAY, Label

CLAIM: dict[str, Any] = {
    "holder": "Dana Whitfield",
    "policy": "POL-48213",
    "peril": "water damage",
    "loss_date": "2026-10-14",
    "address": "14 Alder Lane, Springfield",
    "region": "midwest",
    "deductible": 1000,
    "limit": 25000,
    "account": "DE89 3704 0044 0532 0130 00",
}
MAX_STEP_ATTEMPTS = 8
MAX_PLAN_VERSIONS = 4
MAX_STATUS_CHECKS = 12
PLANNER = "You plan the adjudication of an insurance claim as a numbered markdown list."
EXECUTOR = "You carry out one step of a claim's plan with your tools; answer RESULT: <value>."


class Unavailable(RuntimeError):
    """A service is down for now: the executor run fails and the app re-runs the step."""


class Rerouted(RuntimeError):
    """The world changed under the plan: the app asks the planner again."""


class ClaimRejected(RuntimeError):
    """A final error: the claim cannot go on."""


# --- the scripted models --------------------------------------------------------------------
def _user_prompt(messages: list[ModelMessage]) -> str:
    for msg in messages:
        if isinstance(msg, ModelRequest):
            for part in msg.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


def _plan(brief: str) -> str:
    """The planner's markdown: the claim file's facts, the intake notes trusted over them."""
    fields = dict(re.findall(r"^(\w[\w ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(fields["Claim file"]) | json.loads(fields.get("Intake notes", "{}"))
    done = set(json.loads(fields.get("Completed", "[]")))
    moved = re.search(r"migrated by the bank to ([A-Z0-9 ]+?);", fields.get("Failure", ""))
    if moved:
        facts["account"] = moved.group(1)
    steps = [
        ("lookup_policy", f"Pull policy {facts['policy']} of {facts['holder']}", "policy_lookup",
         {"policy_number": facts["policy"]}),
        ("check_coverage", f"Check that {facts['peril']} on {facts['loss_date']} is covered",
         "coverage_check", {"policy": "<from lookup_policy>", "peril": facts["peril"],
                            "loss_date": facts["loss_date"]}),
        ("screen_history", "Screen the policy's prior claims", "prior_claims",
         {"policy": "<from lookup_policy>"}),
        ("order_inspection", f"Inspect {facts['address']}", "schedule_inspection",
         {"address": facts["address"], "region": facts["region"]}),
        ("compute_payout", "Compute the payout", "payout_calculator",
         {"estimate": "<from order_inspection>", "deductible": facts["deductible"],
          "limit": facts["limit"]}),
        ("issue_payment", f"Pay {facts['holder']}", "make_payment",
         {"account": facts["account"], "amount": "<from compute_payout>",
          "reference": facts["claim"]}),
    ]  # fmt: skip
    lines = [f"Plan for claim {facts['claim']} ({facts['peril']}, {facts['holder']}):", ""]
    n = 0
    for slug, goal, tool_name, args in steps:
        if slug in done:
            continue
        n += 1
        lines += [
            f"{n}. **{slug}**: {goal}",
            f"   - tool: `{tool_name}`",
            f"   - args: `{json.dumps(args)}`",
        ]
    return "\n".join(lines)


def planner_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    r"""The scripted planner: a markdown plan from the brief in the user prompt.

    >>> brief = "Claim file: " + json.dumps(CLAIM | {"claim": "CLM-1"})
    >>> plan = _plan(brief + '\nIntake notes: {"deductible": 250}')
    >>> [(s["slug"], s["args"].get("deductible")) for s in _steps(plan)][3:5]
    [('order_inspection', None), ('compute_payout', 250)]
    """
    return ModelResponse(parts=[TextPart(_plan(_user_prompt(messages)))])


def _call(tool_name: str, args: dict[str, Any]) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(tool_name, args)])


def executor_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The scripted executor: make the call the prompt names, retry a transient error with a
    longer timeout, follow ``next_page``, poll an inspection until it completes, report."""
    prompt = _user_prompt(messages)
    tool_name = re.search(r"^Tool: `(\w+)`", prompt, re.MULTILINE)
    args_line = re.search(r"^Arguments: `(.*)`$", prompt, re.MULTILINE)
    assert tool_name and args_line, prompt
    args = json.loads(args_line.group(1))
    last = messages[-1].parts[-1] if isinstance(messages[-1], ModelRequest) else None
    if isinstance(last, RetryPromptPart | ToolReturnPart) and getattr(last, "outcome", "") in (
        "",
        "retried",
    ):
        retries = sum(
            isinstance(p, RetryPromptPart) or getattr(p, "outcome", "") == "retried"
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
        )
        return _call(tool_name.group(1), args | {"timeout_s": 30 * 2**retries})
    if isinstance(last, ToolReturnPart):
        content: dict[str, Any] = dict(last.content) if isinstance(last.content, dict) else {}
        if "next_page" in content:
            return _call(last.tool_name, args | {"page": content["next_page"]})
        if content.get("status") in ("SCHEDULED", "IN_PROGRESS"):
            checks = sum(
                isinstance(p, ToolCallPart) and p.tool_name == "inspection_status"
                for m in messages
                if isinstance(m, ModelResponse)
                for p in m.parts
            )
            if checks >= MAX_STATUS_CHECKS:
                return ModelResponse(
                    parts=[
                        TextPart(
                            f"GIVING UP: inspection {content['job']} still {content['status']} "
                            f"after {checks} status checks"
                        )
                    ]
                )
            return _call("inspection_status", {"job": content["job"]})
        return ModelResponse(parts=[TextPart(f"RESULT: {json.dumps(content.get('value'))}")])
    return _call(tool_name.group(1), args)


# --- the world ------------------------------------------------------------------------------
@dataclass
class World:
    """The policy system, coverage service, claims index, inspections and payments of a run."""

    label: Label
    claim: str
    estimate: int
    step: str = ""
    errors: list[str] = field(default_factory=list)
    polls: dict[str, int] = field(default_factory=dict)
    elsewhere: set[str] = field(default_factory=set)
    """Inspections booked with another region's adjusters."""
    paid: tuple[str, float] | None = None

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
            raise ClaimRejected(text)
        how = self.params.get("raise")
        if how == "retry":
            raise ModelRetry(text)
        if how == "replans" and len(self.errors) % 2 == 0:
            raise Rerouted(f"{text}; payments rail rerouted, re-plan the payment")
        raise Unavailable(text)


def policy_lookup(ctx: RunContext[World], policy_number: str, timeout_s: int = 30) -> dict:
    """The policy on file under a number."""
    ctx.deps.fault()
    if policy_number == CLAIM["policy"]:
        return {"value": policy_number, "holder": CLAIM["holder"], "status": "ACTIVE"}
    return {"value": policy_number, "holder": "R. Okafor", "status": "LAPSED"}


def coverage_check(
    ctx: RunContext[World], policy: str, peril: str, loss_date: str, timeout_s: int = 30
) -> dict:
    """Whether a peril on a date is covered by a policy."""
    ctx.deps.fault()
    if policy != CLAIM["policy"]:
        raise ClaimRejected(f"policy {policy} lapsed on 2026-03-01, before the loss on {loss_date}")
    return {"value": "covered", "peril": peril}


def prior_claims(ctx: RunContext[World], policy: str, page: int = 1, timeout_s: int = 30) -> dict:
    """The policy's prior claims, a page at a time."""
    ctx.deps.fault()
    pages = int(ctx.deps.params.get("pages", 1))
    if page < pages:
        old = {"claim": f"CLM-{1000 + page * 37}", "year": 2014 + page, "status": "closed"}
        return {"claims": [old], "next_page": page + 1}
    return {"value": "no open prior claims"}


def schedule_inspection(
    ctx: RunContext[World], address: str, region: str, timeout_s: int = 30
) -> dict:
    """Book a field inspection by the region's adjusters."""
    ctx.deps.fault()
    job = f"INSP-{ctx.deps.label.seed}-{len(ctx.deps.polls)}"
    ctx.deps.polls[job] = 0
    if region != CLAIM["region"]:
        ctx.deps.elsewhere.add(job)
    return {"job": job, "status": "SCHEDULED"}


def inspection_status(ctx: RunContext[World], job: str) -> dict:
    """The state of a field inspection; its estimate once complete."""
    world = ctx.deps
    world.polls[job] += 1
    if world.label.scenario == "loop_poll_stuck" or world.polls[job] < int(
        world.params.get("polls", 1)
    ):
        return {"job": job, "status": "IN_PROGRESS"}
    if job in world.elsewhere:
        note = f"no insured property at {CLAIM['address']} in this region"
        return {"job": job, "status": "COMPLETE", "value": None, "note": note}
    return {"job": job, "status": "COMPLETE", "value": world.estimate}


def payout_calculator(
    ctx: RunContext[World], estimate: str, deductible: float, limit: float, timeout_s: int = 30
) -> dict:
    """The payout for an estimate under a deductible and a limit."""
    ctx.deps.fault()
    try:
        amount = float(estimate)
    except ValueError:
        raise ClaimRejected(f"no inspection estimate on file for {ctx.deps.claim}") from None
    return {"value": round(min(amount - deductible, limit), 2)}


def make_payment(
    ctx: RunContext[World], account: str, amount: str, reference: str, timeout_s: int = 30
) -> dict:
    """Transfer an amount to the claimant's account."""
    world = ctx.deps
    world.fault()
    moved = world.params.get("moved_to")
    if moved and account == CLAIM["account"]:
        raise Rerouted(f"account {account} was migrated by the bank to {moved}; re-plan")
    if account not in (CLAIM["account"], moved):
        raise ClaimRejected(f"payee account {account} is closed")
    world.paid = (account, float(amount))
    return {"value": f"TRF-{world.label.seed}-{reference[-4:]}"}


TOOLS = (
    policy_lookup,
    coverage_check,
    prior_claims,
    schedule_inspection,
    inspection_status,
    payout_calculator,
    make_payment,
)


# --- the app --------------------------------------------------------------------------------
class Failed(Exception):
    """The claim could not be settled (the reason is the message)."""


def _steps(markdown: str) -> list[dict[str, Any]]:
    """The plan's numbered items: ``n``, ``slug``, ``goal``, ``tool``, ``args``."""
    pattern = r"^(\d+)\. \*\*(\w+)\*\*: (.*)\n\s+- tool: `(\w+)`\n\s+- args: `(.*)`$"
    return [
        {"n": int(n), "slug": slug, "goal": goal, "tool": tool_name, "args": json.loads(args)}
        for n, slug, goal, tool_name, args in re.findall(pattern, markdown, re.MULTILINE)
    ]


class Adjuster:
    """One claim, from intake to the watched settlement."""

    def __init__(self, label: Label, planner: Agent[None, str], executor: Agent[World, str]):
        self.label = label
        seed = label.seed
        self.world = World(
            label, claim=f"CLM-{seed % 9000 + 1000}", estimate=4000 + seed % 97 * 150
        )
        self.planner, self.executor = planner, executor

    def brief(self, done: dict[str, str], failure: str) -> str:
        notes: dict[str, Any] = {}
        params = self.label.params
        if "swap" in params:
            digits, i = list(CLAIM["policy"][4:]), int(params["swap"])
            digits[i], digits[i + 1] = digits[i + 1], digits[i]
            notes["policy"] = "POL-" + "".join(digits)
        for key in ("region", "deductible", "account"):
            if key in params:
                notes[key] = params[key]
        lines = [
            f"Objective: Settle claim {self.world.claim}: {CLAIM['peril']} at {CLAIM['address']}.",
            f"Claim file: {json.dumps(CLAIM | {'claim': self.world.claim})}",
        ]
        if notes:
            lines.append(f"Intake notes: {json.dumps(notes)}")
        if done:
            lines.append(f"Completed: {json.dumps(sorted(done))}")
        if failure:
            lines.append(f"Failure: {failure}")
        return "\n".join(lines)

    def attempt(self, step: dict[str, Any], done: dict[str, str]) -> str:
        """One executor run of a step: its result, or an exception."""
        args = json.loads(
            re.sub(
                r"<from (\w+)>",
                lambda m: done.get(m.group(1), m.group(0)),
                json.dumps(step["args"]),
            )
        )
        prompt = (
            f"## {step['n']}. {step['slug']}\n{step['goal']}\n\n"
            f"Tool: `{step['tool']}`\nArguments: `{json.dumps(args)}`"
        )
        self.world.step = step["slug"]
        said = self.executor.run_sync(prompt, deps=self.world).output
        if not said.startswith("RESULT: "):
            raise Failed(f"{step['slug']}: {said}")
        value = json.loads(said.removeprefix("RESULT: "))
        return "null" if value is None else str(value)

    def settle(self) -> None:
        done: dict[str, str] = {}
        failure = ""
        for version in range(1, MAX_PLAN_VERSIONS + 1):
            plan = _steps(self.planner.run_sync(self.brief(done, failure)).output)
            failure = ""
            for step in plan:
                for attempt in range(1, MAX_STEP_ATTEMPTS + 1):
                    try:
                        done[step["slug"]] = self.attempt(step, done)
                        break
                    except Unavailable as e:
                        if attempt == MAX_STEP_ATTEMPTS:
                            raise Failed(f"{step['slug']}: {e}") from e
                    except Rerouted as e:
                        if version == MAX_PLAN_VERSIONS:
                            raise Failed(f"{step['slug']}: {e}") from e
                        failure = f"{step['slug']}: {e}"
                        break
                    except (ClaimRejected, UnexpectedModelBehavior) as e:
                        raise Failed(f"{step['slug']}: {e}") from e
                if failure:
                    break
            if not failure:
                return
        raise Failed(failure)

    def audit(self, tracer: otel_trace.Tracer) -> None:
        """The app's own checks after payment: the payout, then the settlement."""
        with tracer.start_as_current_span("audit payout") as span:
            allowed = min(self.world.estimate - CLAIM["deductible"], CLAIM["limit"])
            paid = self.world.paid[1] if self.world.paid else 0.0
            span.set_attribute("claim.payout.allowed", allowed)
            span.set_attribute("claim.payout.paid", paid)
            if paid != allowed:
                reason = f"payout {paid:.2f} differs from the policy's allowance {allowed:.2f}"
                span.set_status(Status(StatusCode.ERROR, reason))
                raise Failed(reason)
        with tracer.start_as_current_span("watch settlement") as span:
            for poll in range(1, 5):
                if self.label.scenario == "external_reversal" and poll > int(
                    self.label.params["polls"]
                ):
                    reason = (
                        "transfer returned by the beneficiary bank: account frozen by court order"
                    )
                    span.set_status(Status(StatusCode.ERROR, reason))
                    raise Failed(reason)
                span.add_event("settlement", {"poll": poll, "state": "SETTLED"})

    def run(self, tracer: otel_trace.Tracer) -> str:
        with tracer.start_as_current_span(f"adjudicate {self.world.claim}") as root:
            root.set_attribute("claim.id", self.world.claim)
            try:
                self.settle()
                self.audit(tracer)
                root.set_attribute("claim.outcome", "settled")
            except Failed as e:
                root.set_attribute("claim.outcome", "failed")
                root.set_status(Status(StatusCode.ERROR, str(e)))
            return format(root.get_span_context().trace_id, "032x")


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the claims scenarios with pydantic-ai's instrumentation on ``provider``."""
    out: dict[str, str] = {}
    if not labels:
        return out
    instrumented = [Instrumentation(InstrumentationSettings(tracer_provider=provider))]
    planner: Agent[None, str] = Agent(
        FunctionModel(planner_model),
        name="claims_planner",
        instructions=PLANNER,
        capabilities=instrumented,
    )
    executor: Agent[World, str] = Agent(
        FunctionModel(executor_model),
        name="claims_executor",
        instructions=EXECUTOR,
        deps_type=World,
        tools=TOOLS,
        retries=MAX_STEP_ATTEMPTS,
        capabilities=instrumented,
    )
    tracer = provider.get_tracer("claims-app")
    for label in labels:
        out[label.run] = Adjuster(label, planner, executor).run(tracer)
    return out

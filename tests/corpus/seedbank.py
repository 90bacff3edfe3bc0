"""A seedbank agent: a botanic garden depositing seed of a wild plant at a national seed vault,
a hand-written planner-executor app whose spans are written by hand with the OpenTelemetry SDK
tracer exactly as the current GenAI semantic conventions say (open-telemetry/
semantic-conventions-genai, development status): ``invoke_agent {gen_ai.agent.name}`` spans
(kind INTERNAL, ``gen_ai.agent.name``, ``gen_ai.conversation.id``; no ``gen_ai.agent.id``,
which v0.1.0 removed from in-process agent spans), ``chat {gen_ai.request.model}`` inference
spans (kind CLIENT, ``gen_ai.provider.name``, ``gen_ai.system_instructions`` /
``gen_ai.input.messages`` / ``gen_ai.output.messages`` as JSON in the parts format, usage
tokens, ``gen_ai.response.finish_reasons``), ``execute_tool {gen_ai.tool.name}`` spans (kind
INTERNAL, ``gen_ai.tool.call.id`` / ``type`` / ``arguments`` / ``result``; a failed call with
``error.type`` and status ERROR, its text handed back to the model as the tool result). The
app adds a ``seed_deposit`` root per job and its own ``check_intake`` / ``await_arrival``
spans. The model is scripted in Python (no server). No planscope code.

Sealed-24 split only (see README.md). The job: collect seed of one taxon for the vault; select
an accession in the garden's seed catalogue (read page by page), obtain a phytosanitary
certificate for the shipping day (issued later: polled), book a cold-chain courier to the
vault's intake site, pay the deposit fee from the garden's depositor account, send the vault
the manifest. The app then checks the courier arrives on the vault's intake day and waits for
the vault's receipt.

* the planner answers JSON ``{"steps": [{"name", "action", "args"}]}``: ``name`` a short
  snake_case step name, ``action`` the tool, ``args`` the call's arguments where ``"$<name>"``
  stands for an earlier step's result (the app fills it in). After a problem the planner is
  invoked again (a new conversation: the job, the problem, the done steps' results) and
  answers **only the steps still to do**;
* the executor is one conversation per step attempt, ending in one line: ``DONE <result>``,
  ``RETRY <why>`` (the app runs the step again, up to 8 attempts), ``REPLAN <why>`` (up to 4
  plans) or ``GIVE UP <why>``;
* the garden's services raise; their refusals end in a hashtag the model reads: ``#busy`` (call
  again now), ``#later`` (run the step later), ``#revise`` (the plan must change), ``#final``.

The planner trusts the curator's notes over the job sheet: a scenario's wrong value comes
from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from ._labels import RUNAWAY, Label

JOB: dict[str, Any] = {
    "taxon": "Primula vulgaris",
    "seeds": 5000,
    "ship_day": "2027-03-09",
    "site": "VAULT-WAKEHURST",
    "account": "DEP-31877",
    "vault": "intake@seedvault.example",
}
FEE_PER_THOUSAND = 40
MAX_STEP_ATTEMPTS = 8
MAX_PLANS = 4
MAX_STATUS_CHECKS = 12
PROVIDER = "openai"
MODEL = "gpt-4.1-mini"
TRACER = "seedbank"
PLANNER_SAYS = "You plan seed deposits for a botanic garden. Answer JSON only."
EXECUTOR_SAYS = "You carry out one step of a seed deposit plan with the tools given."


class Refusal(Exception):
    """A service's refusal; the text ends in the hashtag the model reads."""

    tag = "final"

    def __init__(self, text: str) -> None:
        super().__init__(f"{text} #{self.tag}")


class DeskBusy(Refusal):
    tag = "busy"


class ComeBackLater(Refusal):
    tag = "later"


class PlanConflict(Refusal):
    tag = "revise"


class DepositFailed(RuntimeError):
    """The seed was not deposited, or went wrong after."""


def fill(args: dict[str, Any], results: dict[str, str]) -> dict[str, Any]:
    """The call's arguments with ``"$<step>"`` replaced by that step's result.

    >>> fill({"lot": "$select", "n": 3}, {"select": "ACC-1"})
    {'lot': 'ACC-1', 'n': 3}
    """
    return {
        k: results[v[1:]] if isinstance(v, str) and v.startswith("$") else v
        for k, v in args.items()
    }


# --- the scripted model: messages in the conventions' parts format ---------------------------
def _text(message: dict[str, Any]) -> str:
    return "".join(str(p.get("content", "")) for p in message["parts"] if p["type"] == "text")


def _say(text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "parts": [{"type": "text", "content": text}],
        "finish_reason": "stop",
    }


def plan_reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The planner's answer: the steps still to do, the curator's notes trusted over the job
    sheet, the day or account the problem names."""
    asked = _text(messages[-1])
    facts = json.loads(re.findall(r"^Job: (.*)$", asked, re.M)[0])
    facts |= json.loads(re.findall(r"^Curator's notes: (.*)$", asked, re.M)[0])
    done = json.loads((re.findall(r"^Done: (.*)$", asked, re.M) or ["{}"])[0])
    new_day = re.search(r"next inspection day (\d{4}-\d\d-\d\d)", asked)
    new_account = re.search(r"moved to (DEP-\d+)", asked)
    day = new_day.group(1) if new_day else facts["ship_day"]
    account = new_account.group(1) if new_account else facts["account"]
    steps = [
        ("select_accessions", "search_accessions",
         {"taxon": facts["taxon"], "seeds": facts["seeds"]}),
        ("get_phyto_certificate", "apply_certificate",
         {"accession": "$select_accessions", "ship_day": day}),
        ("book_cold_courier", "book_courier",
         {"certificate": "$get_phyto_certificate", "site": facts["site"], "ship_day": day}),
        ("pay_deposit_fee", "pay_fee", {"accession": "$select_accessions", "account": account}),
        ("notify_vault", "send_manifest",
         {"courier": "$book_cold_courier", "receipt": "$pay_deposit_fee", "to": facts["vault"]}),
    ]  # fmt: skip
    rest = [{"name": n, "action": a, "args": x} for n, a, x in steps if n not in done]
    return _say(json.dumps({"steps": rest}))


def execute_reply(messages: list[dict[str, Any]], turn: int) -> dict[str, Any]:
    """The executor's turn: make the step's call, call again when the desk is busy, read the
    next page, check a pending certificate until issued, answer one outcome line."""
    m = re.search(r"Call `(\w+)` with: (\{.*\})$", _text(messages[0]), re.M)
    assert m is not None, messages[0]
    name, args = m.group(1), json.loads(m.group(2))
    results = [
        p["response"] for msg in messages for p in msg["parts"] if p["type"] == "tool_call_response"
    ]

    def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        part = {
            "type": "tool_call",
            "id": f"call_{turn}_{len(results)}",
            "name": tool,
            "arguments": arguments,
        }
        return {"role": "assistant", "parts": [part], "finish_reason": "tool_call"}

    if not results:
        return call(name, args)
    last = results[-1]
    if isinstance(last, str):
        tag = last.rsplit("#", 1)[-1]
        if tag == "busy":
            return call(name, args)
        word = {"later": "RETRY", "revise": "REPLAN"}.get(tag, "GIVE UP")
        return _say(f"{word} {last.removesuffix(f' #{tag}')}")
    if "next_page" in last:
        return call(name, args | {"page": last["next_page"]})
    if last.get("status") == "pending":
        if (
            sum(isinstance(r, dict) and r.get("status") == "pending" for r in results)
            > MAX_STATUS_CHECKS
        ):
            return _say(f"GIVE UP certificate {last['application']} still pending")
        return call("certificate_status", {"application": last["application"]})
    return _say(f"DONE {last['ref']}")


# --- the world --------------------------------------------------------------------------------
@dataclass
class World:
    """The garden's seed catalogue, the plant health inspectorate, the courier, the vault's
    accounts and intake desk."""

    label: Label
    errors: list[str] = field(default_factory=list)
    accessions: dict[str, str] = field(default_factory=dict)
    """Accession -> its taxon."""
    certificates: dict[str, dict[str, Any]] = field(default_factory=dict)
    couriers: dict[str, dict[str, Any]] = field(default_factory=dict)
    accounts: set[str] = field(default_factory=lambda: {JOB["account"]})
    paid: dict[str, int] = field(default_factory=dict)
    intake_day: str = JOB["ship_day"]
    """The day the inspectorate inspects and the vault takes seed in."""

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        self.intake_day = self.label.params.get("intake_day", JOB["ship_day"])

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, step: str) -> None:
        """Raise the scenario's next refusal when the call belongs to the step it targets."""
        if not self.errors or step != self.params.get("step"):
            return
        text = self.errors.pop(0)
        if not self.errors and self.label.kind == RUNAWAY:
            raise Refusal(f"{text}; the request is closed")
        how = self.params.get("how")
        if how == "busy":
            raise DeskBusy(text)
        if how == "replans" and len(self.errors) % 2 == 0:
            account = f"DEP-{31900 + 17 * len(self.errors)}"
            self.accounts.add(account)
            raise PlanConflict(f"{text}; the depositor account moved to {account}")
        raise ComeBackLater(text)


def services(world: World, step: str) -> dict[str, Callable[..., dict[str, Any]]]:
    """The tools one step's executor may call."""

    def search_accessions(taxon: str, seeds: int, page: int = 1) -> dict[str, Any]:
        world.fault(step)
        pages = int(world.params.get("pages", 1))
        if page < pages:
            return {"accessions": [f"ACC-{page}{n}-spent" for n in range(4)], "next_page": page + 1}
        accession = f"ACC-{taxon.split()[1][:3].upper()}-{world.label.seed}"
        world.accessions[accession] = taxon
        return {"ref": accession, "taxon": taxon, "seeds": seeds}

    def apply_certificate(accession: str, ship_day: str) -> dict[str, Any]:
        world.fault(step)
        if ship_day == JOB["ship_day"] != world.intake_day:
            raise PlanConflict(
                f"no inspector on {ship_day} (quarantine audit); next inspection day "
                f"{world.intake_day}"
            )
        application = f"PC-{world.label.seed}-{len(world.certificates)}"
        world.certificates[application] = {"accession": accession, "day": ship_day, "checks": 0}
        return {"application": application, "status": "pending"}

    def certificate_status(application: str) -> dict[str, Any]:
        entry = world.certificates[application]
        entry["checks"] += 1
        if world.label.scenario == "loop_poll_stuck" or entry["checks"] < int(
            world.params.get("polls", 1)
        ):
            return {"application": application, "status": "pending"}
        return {"application": application, "status": "issued", "ref": application}

    def book_courier(certificate: str, site: str, ship_day: str) -> dict[str, Any]:
        world.fault(step)
        accession = world.certificates[certificate]["accession"]
        if world.accessions[accession] != JOB["taxon"]:
            raise Refusal(
                f"certificate {certificate} covers {world.accessions[accession]}, not the "
                "vault's call for this season"
            )
        booking = f"CC-{world.label.seed}-{len(world.couriers)}"
        world.couriers[booking] = {"site": site, "day": ship_day, "accession": accession}
        return {"ref": booking, "site": site, "arrives": ship_day}

    def pay_fee(accession: str, account: str) -> dict[str, Any]:
        world.fault(step)
        if account not in world.accounts:
            raise Refusal(f"no depositor account {account} at the vault")
        world.paid[accession] = FEE_PER_THOUSAND * int(JOB["seeds"]) // 1000
        return {"ref": f"RCPT-{world.label.seed}", "amount_gbp": world.paid[accession]}

    def send_manifest(courier: str, receipt: str, to: str) -> dict[str, Any]:
        world.fault(step)
        booking = world.couriers[courier]
        if booking["site"] != JOB["site"]:
            raise Refusal(f"courier {courier} delivers to {booking['site']}, not to our intake")
        if booking["accession"] not in world.paid:
            raise Refusal(f"accession {booking['accession']} is unpaid")
        return {"ref": f"MAN-{world.label.seed}", "to": to}

    fns: list[Callable[..., dict[str, Any]]] = [
        search_accessions, apply_certificate, certificate_status, book_courier, pay_fee,
        send_manifest,
    ]  # fmt: skip
    return {f.__name__: f for f in fns}


# --- the app: spans as the GenAI conventions say ---------------------------------------------
def _tokens(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


@dataclass
class Job:
    """One deposit."""

    label: Label
    tracer: Tracer
    world: World
    id: str
    turns: int = 0

    @contextmanager
    def agent(self, name: str, description: str, conversation: str) -> Iterator[Span]:
        with self.tracer.start_as_current_span(
            f"invoke_agent {name}",
            kind=SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.provider.name": PROVIDER,
                "gen_ai.agent.name": name,
                "gen_ai.agent.description": description,
                "gen_ai.conversation.id": conversation,
                "gen_ai.request.model": MODEL,
            },
        ) as span:
            yield span

    def chat(
        self, conversation: str, instructions: str, messages: list[dict[str, Any]], **extra: Any
    ) -> dict[str, Any]:
        """One model call (scripted) under a ``chat {model}`` span; the answer message."""
        self.turns += 1
        with self.tracer.start_as_current_span(
            f"chat {MODEL}",
            kind=SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": PROVIDER,
                "gen_ai.request.model": MODEL,
                "gen_ai.conversation.id": conversation,
                "gen_ai.system_instructions": json.dumps(
                    [{"type": "text", "content": instructions}]
                ),
                "gen_ai.input.messages": json.dumps(messages),
                **extra,
            },
        ) as span:
            if instructions == PLANNER_SAYS:
                out = plan_reply(messages)
            else:
                out = execute_reply(messages, self.turns)
            span.set_attributes(
                {
                    "gen_ai.response.id": f"chatcmpl-{self.label.seed}-{self.turns}",
                    "gen_ai.response.model": f"{MODEL}-2025-04-14",
                    "gen_ai.response.finish_reasons": [out["finish_reason"]],
                    "gen_ai.usage.input_tokens": _tokens(messages),
                    "gen_ai.usage.output_tokens": _tokens(out["parts"]),
                    "gen_ai.output.messages": json.dumps([out]),
                }
            )
            return out

    def tool(self, call: dict[str, Any], fns: dict[str, Callable[..., dict[str, Any]]]) -> Any:
        """Run one tool call under an ``execute_tool {name}`` span; the result handed back to
        the model (a refusal's text when the service refused)."""
        fn = fns[call["name"]]
        with self.tracer.start_as_current_span(
            f"execute_tool {call['name']}",
            kind=SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call["name"],
                "gen_ai.tool.call.id": call["id"],
                "gen_ai.tool.type": "function",
                "gen_ai.tool.call.arguments": json.dumps(call["arguments"]),
            },
        ) as span:
            try:
                result: Any = fn(**call["arguments"])
            except Refusal as exc:
                span.set_attribute("error.type", type(exc).__name__)
                span.set_status(Status(StatusCode.ERROR, str(exc)))
                result = str(exc)
            span.set_attribute("gen_ai.tool.call.result", json.dumps(result))
            return result

    def plan(self, revision: int, problem: str, results: dict[str, str]) -> list[dict[str, Any]]:
        """Invoke the planner; the steps it answers."""
        conversation = f"{self.id}-plan-{revision}"
        with self.agent("planner", "Plans a seed deposit as JSON steps", conversation):
            job = json.dumps({"job": self.id} | JOB)
            ask = f"Job: {job}\nCurator's notes: {json.dumps(self.notes())}\n"
            if problem:
                ask += (
                    f"Problem: {problem}\nDone: {json.dumps(results)}\nPlan the remaining steps.\n"
                )
            ask += 'Answer {"steps": [{"name", "action", "args"}]}; "$<name>" is a step\'s result.'
            messages = [{"role": "user", "parts": [{"type": "text", "content": ask}]}]
            out = self.chat(conversation, PLANNER_SAYS, messages, **{"gen_ai.output.type": "json"})
            return list(json.loads(_text(out))["steps"])

    def notes(self) -> dict[str, Any]:
        keys = ("taxon", "ship_day", "site", "account")
        return {k: self.label.params[k] for k in keys if k in self.label.params}

    def execute(self, step: dict[str, Any], attempt: int, results: dict[str, str]) -> str:
        """Invoke the executor for one attempt of ``step``; its outcome line."""
        conversation = f"{self.id}-{step['name']}-{attempt}"
        with self.agent("executor", "Carries out one plan step", conversation) as span:
            fns = services(self.world, step["name"])
            ask = (
                f"Step {step['name']} (attempt {attempt})\n"
                f"Call `{step['action']}` with: {json.dumps(fill(step['args'], results))}\n"
                "End with one line: DONE <result>, RETRY <why>, REPLAN <why> or GIVE UP <why>."
            )
            messages: list[dict[str, Any]] = [
                {"role": "user", "parts": [{"type": "text", "content": ask}]}
            ]
            while (out := self.chat(conversation, EXECUTOR_SAYS, messages))[
                "finish_reason"
            ] == "tool_call":
                messages.append({"role": "assistant", "parts": out["parts"]})
                answers = [
                    {"type": "tool_call_response", "id": p["id"], "response": self.tool(p, fns)}
                    for p in out["parts"]
                ]
                messages.append({"role": "tool", "parts": answers})
            line = _text(out)
            if line.startswith("GIVE UP"):
                span.set_attribute("error.type", "gave_up")
                span.set_status(Status(StatusCode.ERROR, line))
            return line

    def run(self) -> str:
        """Plan, run the steps (again, re-planned), check the intake day, await the receipt;
        the trace id."""
        with self.tracer.start_as_current_span(
            "seed_deposit", attributes={"deposit.job": self.id, "deposit.taxon": JOB["taxon"]}
        ) as root:
            trace_id = f"{root.get_span_context().trace_id:032x}"
            try:
                self._work()
            except DepositFailed as exc:
                root.set_attribute("error.type", type(exc).__name__)
                root.set_status(Status(StatusCode.ERROR, str(exc)))
        return trace_id

    def _work(self) -> None:
        results: dict[str, str] = {}
        steps, plans = self.plan(1, "", results), 1
        while steps:
            step = steps.pop(0)
            for attempt in range(1, MAX_STEP_ATTEMPTS + 1):
                line = self.execute(step, attempt, results)
                if not line.startswith("RETRY"):
                    break
            word, _, why = line.partition(" ")
            if word == "DONE":
                results[step["name"]] = why
            elif word == "REPLAN" and plans < MAX_PLANS:
                plans += 1
                steps = self.plan(plans, f"{step['name']}: {why}", results)
            else:
                raise DepositFailed(f"{step['name']}: {line}")
        self.check_intake(results["book_cold_courier"])
        self.await_arrival()

    def check_intake(self, booking: str) -> None:
        """The garden's own check once the manifest is sent: the courier arrives on the
        vault's intake day."""
        with self.tracer.start_as_current_span("check_intake") as span:
            day = self.world.couriers[booking]["day"]
            span.set_attributes({"courier.arrives": day, "vault.intake_day": self.world.intake_day})
            if day != self.world.intake_day:
                raise DepositFailed(
                    f"courier arrives {day}, the vault takes seed in {self.world.intake_day}"
                )

    def await_arrival(self) -> None:
        """The vault's intake desk reports on the consignment until its receipt."""
        with self.tracer.start_as_current_span("await_arrival") as span:
            for report in range(1, 4):
                if self.label.scenario == "external_freezer" and report > int(
                    self.label.params["polls"]
                ):
                    raise DepositFailed(
                        "the vault's drying room failed overnight; every consignment in intake "
                        "was destroyed"
                    )
                span.add_event("intake report", {"report": report, "state": "in transit"})


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the seedbank scenarios with their spans on ``provider``; run name -> trace id."""
    tracer = provider.get_tracer(TRACER)
    out = {}
    for label in labels:
        job = Job(label, tracer, World(label), f"SB-{label.seed % 9000 + 1000}")
        out[label.run] = job.run()
    return out

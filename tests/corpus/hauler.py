"""A municipal waste-collection depot re-routing its trucks after a road closure, written as a
**pydantic-graph** state machine whose nodes run pydantic-ai ``Agent``\\ s, traced by **Logfire**
(``logfire.configure(send_to_logfire=False, ...)``, ``logfire.instrument_pydantic_ai()``, the
graph's own ``run graph`` / ``run node`` spans, the app's ``logfire.span`` per job), against a
scripted model on the conformance suite's fake OpenAI server (``ModelServer(respond=...)``
behind pydantic-ai's ``OpenAIChatModel``). No planscope code.

Sealed-50 split only (see README.md). The task: a road closure cuts a collection round; find a
bypass route in the round's district (a paged closure register), get the highways permit for it
(a request, polled), assign a refuse truck from the depot for the collection day (a depot
departure slot), book the landfill ticket for the truck's load on the council's weighbridge
account, tell the crew. As a pydantic-ai user writes a planner-executor app on pydantic-graph:

* a state dataclass (:class:`Yard`) and ``BaseNode`` subclasses built with ``GraphBuilder``:
  ``Plan`` (the ``route_planner`` agent, ``output_type`` :class:`HaulPlan`), ``Dispatch`` (the
  next move, or the check), ``Haul`` (one ``crew_runner`` agent run per move attempt, its
  tools plain Python functions), ``Replan`` (after a setback, up to five plans), ``Check``
  (the app's own check of the truck roster) and ``Watch`` (the app watches the round);
* the plan's moves are **command lines**: ``<tool> --key value ...`` (shell quoting), an
  argument ``%slug%`` an earlier move's result, substituted by the app; a re-plan carries the
  settled moves' results and keeps counting the move numbers on;
* the depot's services raise :class:`DepotFault` texts ``«kind» text``: ``«kerbside-wait»``
  as pydantic-ai's ``ModelRetry`` (the model calls again ``--after`` the time named, in the same
  run), ``«tip-again»`` (the run fails, the app runs the move again, up to eight attempts),
  ``«reroute»`` (``(use key=value)``: the app asks for a new plan), ``«scrap»`` (final);
* one ``logfire.span`` per job (``reroute round {round}``) records the outcome and, when the
  job failed, the exception.

The planner trusts the dispatcher's notes over the job card: the scenario's wrong value comes
from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Literal

import logfire
from opentelemetry.sdk.trace import TracerProvider
from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_graph import BaseNode, End, Graph, GraphBuilder, GraphRunContext

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from ._relay import _ToPlay, global_provider

JOB: dict[str, Any] = {
    "round": "R-EAST-07",
    "closure": "Mill Lane bridge closed for repairs",
    "district": "Eastfield",
    "depot": "Cromer Road depot",
    "day": "2027-02-09",
    "site": "Hollow Farm landfill",
    "account": "WB-40718",
    "crew": "crew-east@depot.example",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_READS = 12
"""Permit reads in one run before the crew runner reports the permit stalled."""
MAX_WAITS = 8
PLANNER = "You are the depot's route planner: answer the moves as command lines."
RUNNER = "You are a crew runner: run the move's command with your tools, then report."


class DepotFault(RuntimeError):
    """A depot service's refusal, ``«kind» text``."""

    @property
    def kind(self) -> str:
        return str(self).partition("»")[0].lstrip("«")


class Move(BaseModel):
    number: int
    slug: str
    purpose: str
    command: str
    """``<tool> --key value ...``; an argument ``%slug%`` is that earlier move's result."""


class HaulPlan(BaseModel):
    revision: int
    closure: str
    settled: dict[str, str]
    """The results of the moves done under earlier plans."""
    moves: list[Move]


class MoveReport(BaseModel):
    verdict: Literal["done", "stalled"]
    value: str
    remark: str


# --- the scripted model -------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _final(body: dict[str, Any], args: dict[str, Any], turn: int) -> dict[str, Any]:
    """The structured answer: a call of the output tool pydantic-ai offers."""
    names = [str((t.get("function") or {}).get("name", "")) for t in body.get("tools") or []]
    (name,) = [n for n in names if n.startswith("final_result")]
    return _call(name, args, turn)


def command(tool: str, args: dict[str, Any]) -> str:
    """A move's command line.

    >>> command("assign_truck", {"route": "%find_bypass%", "depot": "Cromer Road depot"})
    "assign_truck --route %find_bypass% --depot 'Cromer Road depot'"
    """
    return " ".join([tool, *(f"--{k} {shlex.quote(str(v))}" for k, v in args.items())])


def parse_command(line: str) -> tuple[str, dict[str, str]]:
    """A command line's tool and arguments.

    >>> parse_command("assign_truck --route %find_bypass% --depot 'Cromer Road depot'")
    ('assign_truck', {'route': '%find_bypass%', 'depot': 'Cromer Road depot'})
    """
    tool, *words = shlex.split(line)
    return tool, {k.removeprefix("--"): v for k, v in zip(words[::2], words[1::2], strict=True)}


def _plan(brief: str) -> dict[str, Any]:
    """The planner's answer: the job card's facts, the dispatcher's notes trusted over them;
    after a ``(use key=value)`` setback that value; the settled moves left out, numbered on."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Job card"]) | json.loads(lines.get("Dispatcher's notes", "{}"))
    settled: dict[str, str] = json.loads(lines.get("Settled", "{}"))
    revision = int(lines.get("Revision", "1"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)
    moves = [
        ("find_bypass", f"Find a bypass for the {facts['closure']} in {facts['district']}.",
         "bypass_routes", {"district": facts["district"], "closure": facts["closure"]}),
        ("clear_permit", "Get the highways permit for the bypass.", "request_permit",
         {"route": "%find_bypass%"}),
        ("assign_truck", f"Assign a truck from {facts['depot']} for {facts['day']}.",
         "assign_truck", {"route": "%find_bypass%", "depot": facts["depot"], "day": facts["day"]}),
        ("book_tip", f"Book the tip at {facts['site']} on account {facts['account']}.",
         "book_landfill_ticket",
         {"truck": "%assign_truck%", "site": facts["site"], "account": facts["account"]}),
        ("notify_crew", "Send the crew the new round.", "notify_crew",
         {"crew": facts["crew"], "truck": "%assign_truck%", "route": "%find_bypass%",
          "permit": "%clear_permit%", "day": facts["day"]}),
    ]  # fmt: skip
    out = []
    for number, (slug, purpose, tool, args) in enumerate(moves, 1):
        if slug not in settled:
            out.append(
                {"number": number, "slug": slug, "purpose": purpose, "command": command(tool, args)}
            )
    return {"revision": revision, "closure": facts["closure"], "settled": settled, "moves": out}


def _runner(body: dict[str, Any], messages: list[dict[str, Any]], order: str) -> dict[str, Any]:
    """The crew runner's next turn: run the command, call again ``--after`` a kerbside wait,
    follow ``next_page``, read a queued permit, report."""
    tool, args = parse_command(re.findall(r"^Command: (.*)$", order, re.MULTILINE)[-1])
    turn = len(messages)
    calls: list[tuple[str, dict[str, Any], str]] = []
    pending: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            if not str(fn.get("name", "")).startswith("final_result"):
                pending[c["id"]] = (fn["name"], json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool" and m.get("tool_call_id") in pending:
            calls.append((*pending.pop(m["tool_call_id"]), _text(m.get("content"))))

    def report(verdict: str, value: str = "", remark: str = "") -> dict[str, Any]:
        return _final(body, {"verdict": verdict, "value": value, "remark": remark}, turn)

    if not calls:
        return _call(tool, args, turn)
    name, called, came_back = calls[-1]
    answer = json.loads(came_back)
    if "error" in answer:  # a ModelRetry, as pydantic-ai hands it back: ``{"error": text}``
        after = re.search(r"after (\d\d:\d\d)", str(answer["error"]))
        return _call(name, called | {"after": after.group(1) if after else "later"}, turn)
    if answer.get("next_page"):
        return _call(name, called | {"page": answer["next_page"]}, turn)
    if answer.get("state") == "queued":
        reads = sum(c[0] == "permit_state" for c in calls)
        if reads >= MAX_READS:
            return report("stalled", remark=f"permit {answer['permit']} queued after {reads} reads")
        return _call("permit_state", {"permit": answer["permit"]}, turn)
    return report("done", str(answer["ref"]), answer.get("note", ""))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> brief = "Job card: " + json.dumps(JOB)
    >>> msg = respond({"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": brief}], "tools": [{"function": {"name": "final_result"}}]})
    >>> args = json.loads(msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])
    >>> args["moves"][1]["command"]
    'request_permit --route %find_bypass%'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if PLANNER in system:
        return completion(body, _final(body, _plan(user), len(messages)))
    return completion(body, _runner(body, messages, user))


# --- the depot's services -----------------------------------------------------------------
@dataclass
class Services:
    """The closure register, highways, depot, weighbridge and crew radio of one job."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    permits: dict[str, int] = field(default_factory=dict)
    routes: dict[str, str] = field(default_factory=dict)
    assigned: list[dict[str, str]] = field(default_factory=list)
    tickets: list[dict[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, tool: str) -> None:
        """Raise the scenario's next fault when ``tool`` is the one it targets."""
        if not self.faults or tool != self.params.get("tool"):
            return
        f = self.faults.pop(0)
        text = f"«{f['kind']}» {f['text']}"
        if f["kind"] == "kerbside-wait":
            raise ModelRetry(f"{text}; call back after {f['hint']}")
        if f["kind"] == "reroute":
            raise DepotFault(f"{text} (use {f['hint']})")
        raise DepotFault(text)


def bypass_routes(ctx: RunContext[Services], district: str, closure: str, page: int = 1) -> str:
    """Open bypass routes around a closure in a collection district, a page at a time."""
    world = ctx.deps
    world.fault("bypass_routes")
    if page < int(world.params.get("pages", 1)):
        taken = [f"BY-{district[:3].upper()}-{page * 10 + n}" for n in (1, 2)]
        return json.dumps({"routes": [], "too_narrow": taken, "next_page": page + 1})
    route = f"BY-{district[:3].upper()}-{world.label.seed}"
    world.routes[route] = district
    return json.dumps({"ref": route, "district": district, "length_km": 4.2})


def request_permit(ctx: RunContext[Services], route: str) -> str:
    """Ask highways for a temporary permit to run refuse trucks on a route."""
    world = ctx.deps
    world.fault("request_permit")
    district = world.routes.get(route, "")
    if district != JOB["district"]:
        raise DepotFault(
            f"«scrap» highways will not permit {route}: it runs through {district or 'no'} "
            f"district, outside round {JOB['round']}'s collection area"
        )
    permit = f"HP-{world.label.seed}-{len(world.permits) + 1}"
    world.permits[permit] = 0
    if "polls" in world.params or world.label.scenario == "loop_poll_stuck":
        return json.dumps({"permit": permit, "state": "queued"})
    return json.dumps({"ref": permit, "state": "granted"})


def permit_state(ctx: RunContext[Services], permit: str) -> str:
    """Whether highways has granted a permit yet."""
    world = ctx.deps
    world.permits[permit] += 1
    if world.label.scenario == "loop_poll_stuck" or world.permits[permit] < int(
        world.params.get("polls", 0)
    ):
        return json.dumps({"permit": permit, "state": "queued"})
    return json.dumps({"ref": permit, "state": "granted"})


def assign_truck(
    ctx: RunContext[Services], route: str, depot: str, day: str, after: str = ""
) -> str:
    """Assign a refuse truck and a departure slot from a depot for a collection day."""
    world = ctx.deps
    world.fault("assign_truck")
    truck = f"RCV-{world.label.seed % 90 + 10}"
    world.assigned.append({"truck": truck, "route": route, "day": day})
    slot = after or "06:15"
    return json.dumps({"ref": truck, "slot": slot, "day": day, "note": f"bay {len(route) % 7}"})


def book_landfill_ticket(
    ctx: RunContext[Services], truck: str, site: str, account: str, after: str = ""
) -> str:
    """Book a weighbridge ticket for a truck's load at a landfill site, on an account."""
    world = ctx.deps
    world.fault("book_landfill_ticket")
    full = world.params.get("site_to")
    if full and site == JOB["site"]:
        raise DepotFault(f"«reroute» {site} cell 4 is full until March (use site={full})")
    moved = world.params.get("accounts", ())
    if account != JOB["account"] and account not in moved:
        raise DepotFault(f"«scrap» the weighbridge office holds no account {account}")
    ticket = f"LT-{world.label.seed}-{len(world.tickets) + 1}"
    world.tickets.append({"truck": truck, "site": site, "account": account})
    return json.dumps({"ref": ticket, "site": site})


def notify_crew(
    ctx: RunContext[Services], crew: str, truck: str, route: str, permit: str, day: str,
    after: str = "",
) -> str:  # fmt: skip
    """Radio the crew their new round."""
    ctx.deps.fault("notify_crew")
    return json.dumps({"ref": f"MSG-{truck}-{day[-2:]}", "to": crew})


TOOLS = (
    bypass_routes,
    request_permit,
    permit_state,
    assign_truck,
    book_landfill_ticket,
    notify_crew,
)


# --- the graph ----------------------------------------------------------------------------
@dataclass
class Yard:
    """The graph's state: one job's brief, plans, results and setbacks."""

    label: Label
    services: Services
    planner: Agent[None, HaulPlan]
    runner: Agent[Services, MoveReport]
    plans: list[HaulPlan] = field(default_factory=list)
    done: dict[str, str] = field(default_factory=dict)
    setback: str = ""

    def brief(self) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("district", "day", "account")
            if k in self.label.params
        }
        lines = [
            f"Objective: re-route collection round {JOB['round']} around the closure.",
            f"Job card: {json.dumps(JOB)}",
        ]
        if notes:
            lines.append(f"Dispatcher's notes: {json.dumps(notes)}")
        if self.plans:
            lines += [
                f"Revision: {len(self.plans) + 1}",
                f"Settled: {json.dumps(self.done)}",
                f"Setback: {self.setback}",
            ]
        return "\n".join(lines)


@dataclass
class Outcome:
    status: Literal["rerouted", "failed"]
    reason: str = ""


@dataclass
class Plan(BaseNode[Yard, None, Outcome]):
    """Ask the route planner for the moves (again, after a setback)."""

    async def run(self, ctx: GraphRunContext[Yard, None]) -> Dispatch:
        yard = ctx.state
        plan = (await yard.planner.run(yard.brief())).output
        yard.plans.append(plan)
        return Dispatch()


@dataclass
class Dispatch(BaseNode[Yard, None, Outcome]):
    """Hand out the plan's next open move, or go to the check."""

    async def run(self, ctx: GraphRunContext[Yard, None]) -> Haul | Check:
        left = [m for m in ctx.state.plans[-1].moves if m.slug not in ctx.state.done]
        return Haul(left[0], 1) if left else Check()


@dataclass
class Haul(BaseNode[Yard, None, Outcome]):
    """One crew-runner run of a move."""

    move: Move
    attempt: int

    async def run(
        self, ctx: GraphRunContext[Yard, None]
    ) -> Dispatch | Haul | Replan | End[Outcome]:
        yard, move = ctx.state, self.move
        line = re.sub(r"%(\w+)%", lambda m: shlex.quote(yard.done.get(m[1], m[0])), move.command)
        order = (
            f"Move {move.number}: {move.slug} (attempt {self.attempt})\n"
            f"Purpose: {move.purpose}\nCommand: {line}"
        )
        try:
            report = (await yard.runner.run(order, deps=yard.services)).output
        except DepotFault as e:
            if e.kind == "tip-again" and self.attempt < MAX_ATTEMPTS:
                return Haul(move, self.attempt + 1)
            if e.kind == "reroute":
                return Replan(f"move {move.number} {move.slug}: {e}")
            return End(Outcome("failed", f"{move.slug}: {e}"))
        except UnexpectedModelBehavior as e:
            return End(Outcome("failed", f"{move.slug}: {e}"))
        if report.verdict != "done":
            return End(Outcome("failed", f"{move.slug}: {report.remark}"))
        yard.done[move.slug] = report.value
        return Dispatch()


@dataclass
class Replan(BaseNode[Yard, None, Outcome]):
    """A setback the plan cannot absorb: plan again, up to ``MAX_PLANS`` plans."""

    why: str

    async def run(self, ctx: GraphRunContext[Yard, None]) -> Plan | End[Outcome]:
        if len(ctx.state.plans) >= MAX_PLANS:
            return End(Outcome("failed", f"no plan holds after {MAX_PLANS}: {self.why}"))
        ctx.state.setback = self.why
        return Plan()


@dataclass
class Check(BaseNode[Yard, None, Outcome]):
    """The app's own check: the truck is rostered for the round's collection day."""

    async def run(self, ctx: GraphRunContext[Yard, None]) -> Watch | End[Outcome]:
        with logfire.span("check truck roster", round=JOB["round"]) as span:
            roster = ctx.state.services.assigned[-1]
            span.set_attribute("roster", roster)
            if roster["day"] != JOB["day"]:
                reason = (
                    f"{roster['truck']} rostered for {roster['day']}, the round runs {JOB['day']}"
                )
                span.set_level("error")
                span.set_attribute("hauler.check", "failed")
                return End(Outcome("failed", reason))
            span.set_attribute("hauler.check", "passed")
        return Watch(ctx.state.done["find_bypass"])


@dataclass
class Watch(BaseNode[Yard, None, Outcome]):
    """The app watches the re-routed round until the first lift is done."""

    route: str

    async def run(self, ctx: GraphRunContext[Yard, None]) -> End[Outcome]:
        params = ctx.state.label.params
        with logfire.span("watch round {route}", route=self.route) as span:
            for read in range(1, 5):
                if ctx.state.label.scenario.startswith("external_") and read > int(params["reads"]):
                    reason = f"a burst water main closed {self.route} at read {read}"
                    span.set_level("error")
                    logfire.error(
                        "round {route} blocked: {reason}", route=self.route, reason=reason
                    )
                    return End(Outcome("failed", reason))
                logfire.info("round {route} {state}", route=self.route, state="running", read=read)
        return End(Outcome("rerouted"))


def build_graph() -> Graph:
    """The depot's state machine: plan, dispatch, haul, re-plan, check, watch; it starts at the
    node it is given (``Plan()``)."""
    g = GraphBuilder(name="depot_reroute", state_type=Yard, input_type=Plan, output_type=Outcome)
    g.add(
        g.edge_from(g.start_node).to(Plan),
        g.node(Plan),
        g.node(Dispatch),
        g.node(Haul),
        g.node(Replan),
        g.node(Check),
        g.node(Watch),
    )
    return g.build()


class JobFailed(Exception):
    """The round could not be re-routed (the reason is the message)."""


async def reroute(
    label: Label, planner: Agent[None, HaulPlan], runner: Agent[Services, MoveReport], graph: Graph
) -> str:
    """One job, under the app's own span; its trace id."""
    yard = Yard(label, Services(label), planner, runner)
    try:
        with logfire.span("reroute round {round}", round=JOB["round"], job=label.run) as root:
            trace_id = format(root.context.trace_id, "032x") if root.context else ""
            outcome: Outcome = await graph.run(state=yard, inputs=Plan())
            root.set_attribute("hauler.outcome", outcome.status)
            if outcome.status == "failed":
                raise JobFailed(outcome.reason)
    except JobFailed:
        pass  # recorded on the job's span by Logfire
    return trace_id


_PROCESSOR = _ToPlay()
_CONFIGURED: list[bool] = []


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the hauler scenarios with Logfire's spans handed to ``provider``'s processors; run
    name -> trace id."""
    if not labels:
        return {}
    with global_provider(provider):
        if not _CONFIGURED:
            # the global Logfire (pydantic-graph's spans go through it); the process's global
            # tracer provider is already the relay, so Logfire's own is not set globally
            logfire.configure(
                send_to_logfire=False,
                console=False,
                metrics=False,
                inspect_arguments=False,
                service_name="waste-depot",
                environment="corpus",
                additional_span_processors=[_PROCESSOR],
            )
            _CONFIGURED.append(True)
        previous = Agent._instrument_default
        _PROCESSOR.target = provider._active_span_processor
        try:
            logfire.instrument_pydantic_ai()
            with ModelServer(respond=respond) as server:
                endpoint = OpenAIProvider(base_url=server.base_url("corpus-hauler"), api_key="test")
                model = OpenAIChatModel(MODEL, provider=endpoint)
                planner = Agent(
                    model, name="route_planner", instructions=PLANNER, output_type=HaulPlan
                )
                runner = Agent(
                    model,
                    name="crew_runner",
                    instructions=RUNNER,
                    deps_type=Services,
                    output_type=MoveReport,
                    tools=TOOLS,
                    retries=MAX_WAITS,
                )
                graph = build_graph()

                async def all_runs() -> dict[str, str]:
                    return {
                        label.run: await reroute(label, planner, runner, graph) for label in labels
                    }

                return asyncio.run(all_runs())
        finally:
            _PROCESSOR.target = None
            Agent.instrument_all(previous)

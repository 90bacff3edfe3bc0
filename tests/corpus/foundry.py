"""A foundry agent: a bell foundry casting a parish's church bell, a planner and an executor
built as Strands Agents (``strands-agents``, its ``OpenAIModel`` provider) and traced by Strands'
own OpenTelemetry (its tracer on the process's global provider: ``invoke_agent``,
``execute_event_loop_cycle``, ``chat``, ``execute_tool`` spans), under the app's own
``foundry.order`` span, against a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)``). No planscope code.

Sealed-19 split only (see README.md). The task: a parish ordered a bell; find a bronze lot for
it (a catalogue read page by page), book the furnace for the pour day (confirmed later:
polled), schedule the casting, charge the deposit to the parish's account, send the parish the
casting notice.

* the planner agent answers a **LaTeX casting sheet**: ``\\begin{casting}{<order>}{<rev>}``,
  one ``\\step{<id>}{<tool>}{<arg>=<value>, <arg>=\\ref{<id>}}{<goal>}`` a step
  (``\\ref{id}``: an earlier step's result, filled in by the app), ``\\end{casting}``. Asked
  again after a clash it answers the next revision: ``\\amends{<rev-1>}{<reason>}``, then
  ``\\done{<id>}{<result>}`` for the steps already done, then the steps not done;
* the executor agent (the step's tools) runs one invocation per step attempt; its final answer
  ``\\outcome{<status>}{<value>}{<note>}`` (``ok``, ``again``, ``amend``, ``abort``, ``stuck``);
* the services raise Java-style exceptions, ``foundry.<Kind>Exception: <text>`` (Strands hands
  the model ``Error: ...`` tool results): ``FurnaceBusy`` (call again in the same invocation
  for a later slot), ``TryLater`` (the app runs the step again, up to 8 attempts), ``Clash`` (a
  revision, up to 4 sheets), ``Refused`` / ``NotFound`` / ``Cancelled`` (final).

The planner trusts the bellmaster's notes over the parish's order: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.instrumentation.threading import ThreadingInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer
from strands import Agent, tool
from strands.models.openai import OpenAIModel
from strands.types.tools import AgentTool

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import RUNAWAY, Label
from ._relay import global_provider

ORDER: dict[str, Any] = {
    "parish": "st-brendan",
    "alloy": "78/22",
    "weight_kg": 420,
    "pour_day": "2027-05-11",
    "account": "ACC-5518",
    "email": "vestry@stbrendan.example.org",
}
DEPOSIT_PER_KG = 30
MAX_STEP_ATTEMPTS = 8
MAX_SHEETS = 4
MAX_STATUS_CHECKS = 12
EXCEPTION = re.compile(r"foundry\.(\w+)Exception: (.*)$", re.DOTALL)
OUTCOME = re.compile(r"\\outcome\{(\w+)\}\{([^}]*)\}\{(.*)\}$", re.DOTALL)
STEP = re.compile(r"\\step\{(\w+)\}\{(\w+)\}\{((?:[^{}]|\{[^{}]*\})*)\}\{([^}]*)\}")
DONE = re.compile(r"\\done\{(\w+)\}\{([^}]*)\}")
REF = re.compile(r"\\ref\{(\w+)\}")


class FoundryError(RuntimeError):
    """A service's error: ``foundry.{kind}Exception: {text}``."""

    def __init__(self, kind: str, text: str):
        super().__init__(f"foundry.{kind}Exception: {text}")
        self.kind = kind


class Failed(RuntimeError):
    """The bell was not scheduled, paid and its parish told, or failed after (the reason)."""


# --- the plan: a LaTeX casting sheet ----------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One ``\\step`` of the sheet; an argument ``("ref", id)`` is an earlier step's result."""

    id: str
    tool: str
    goal: str
    args: dict[str, tuple[str, str]]

    @property
    def needs(self) -> set[str]:
        return {v for how, v in self.args.values() if how == "ref"}


def parse_sheet(text: str) -> tuple[list[Step], dict[str, str]]:
    """The steps of a casting sheet and the results its ``\\done`` lines keep.

    >>> steps, kept = parse_sheet('\\\\done{find_bronze}{BRZ-1}\\n'
    ...     '\\\\step{cast}{casting_schedule}{bronze=\\\\ref{find_bronze}, kg=420}{Cast it}')
    >>> kept, steps[0].tool, steps[0].goal, steps[0].args
    ({'find_bronze': 'BRZ-1'}, 'casting_schedule', 'Cast it', {'bronze': ('ref', \
'find_bronze'), 'kg': ('value', '420')})
    """
    steps = []
    for sid, name, argtext, goal in STEP.findall(text):
        args: dict[str, tuple[str, str]] = {}
        for pair in argtext.split(", "):
            key, value = pair.split("=", 1)
            ref = REF.fullmatch(value)
            args[key] = ("ref", ref.group(1)) if ref else ("value", value)
        steps.append(Step(sid, name, goal, args))
    return steps, dict(DONE.findall(text))


def _sheet(
    order: str,
    rev: int,
    problem: str,
    steps: list[tuple[str, str, str, dict[str, Any]]],
    done: dict[str, str],
) -> str:
    lines = [f"\\begin{{casting}}{{{order}}}{{{rev}}}"]
    if rev > 1:
        lines.append(f"\\amends{{{rev - 1}}}{{{problem}}}")
    lines += [f"\\done{{{sid}}}{{{done[sid]}}}" for sid, *_ in steps if sid in done]
    for sid, goal, name, args in steps:
        if sid not in done:
            argtext = ", ".join(f"{k}={v}" for k, v in args.items())
            lines.append(f"\\step{{{sid}}}{{{name}}}{{{argtext}}}{{{goal}}}")
    return "\n".join([*lines, "\\end{casting}"])


# --- the scripted model -----------------------------------------------------------------------
def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


def _field(text: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", text, re.MULTILINE)
    return m.group(1) if m else ""


def _planner(brief: str) -> dict[str, Any]:
    """The planner's sheet: the parish's order, the notes trusted over it, the day or account a
    clash names, the done steps."""
    facts = json.loads(_field(brief, "Casting order")) | json.loads(_field(brief, "Notes") or "{}")
    done = json.loads(_field(brief, "Done") or "{}")
    problem = _field(brief, "Problem")
    rev = int(_field(brief, "Revision") or 1)
    day = re.search(r"furnace free on (\d{4}-\d\d-\d\d)", problem)
    account = re.search(r"use (ACC-\d+)", problem)
    steps = [
        ("find_bronze", f"Find a {facts['alloy']} bronze lot for the bell", "bronze_catalogue",
         {"alloy": facts["alloy"], "kg": facts["weight_kg"]}),
        ("book_furnace", "Book the furnace for the pour day", "furnace_booking",
         {"day": day.group(1) if day else facts["pour_day"]}),
        ("schedule_casting", "Schedule the casting with the lot and the furnace",
         "casting_schedule",
         {"bronze": "\\ref{find_bronze}", "furnace": "\\ref{book_furnace}",
          "kg": facts["weight_kg"]}),
        ("pay_deposit", "Charge the deposit to the parish's account", "deposit_charge",
         {"casting": "\\ref{schedule_casting}",
          "account": account.group(1) if account else facts["account"]}),
        ("notify_parish", "Send the parish the casting notice", "parish_notice",
         {"casting": "\\ref{schedule_casting}", "deposit": "\\ref{pay_deposit}",
          "email": facts["email"]}),
    ]  # fmt: skip
    return {"role": "assistant", "content": _sheet(facts["order"], rev, problem, steps, done)}


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"call_{name}_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _say(status: str, value: str = "", note: str = "") -> dict[str, Any]:
    return {"role": "assistant", "content": f"\\outcome{{{status}}}{{{value or '-'}}}{{{note}}}"}


def _executor(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The executor's turn: call the step's tool, again after ``FurnaceBusy`` for a later slot,
    follow ``next_page``, poll a furnace booking until confirmed, answer the outcome."""
    m = re.match(r"\\call\{(\w+)\}\{(.*)\}$", task)
    assert m is not None, task
    name = m.group(1)
    args: dict[str, Any] = {}
    for pair in m.group(2).split(", "):
        key, value = pair.split("=", 1)
        args[key] = int(value) if value.isdigit() else value
    results = [_text(msg) for msg in messages if msg.get("role") == "tool"]
    n = len(results)
    if not results:
        return _call(n, name, args)
    last = results[-1]
    error = EXCEPTION.search(last)
    if error:
        if error.group(1) == "FurnaceBusy":
            busy = sum("FurnaceBusyException" in r for r in results)
            return _call(n, name, args | {"slot": f"{7 + busy:02d}:00"})
        status = {"TryLater": "again", "Clash": "amend"}.get(error.group(1), "abort")
        return _say(status, note=f"{error.group(1)}: {error.group(2)}")
    seen = json.loads(last)
    if "next_page" in seen:
        return _call(n, name, args | {"page": seen["next_page"]})
    if seen.get("status") == "PENCILLED":
        checks = sum(r.count('"PENCILLED"') for r in results) - 1
        if checks >= MAX_STATUS_CHECKS:
            return _say("stuck", note=f"furnace {seen['booking']} still PENCILLED after {checks}")
        return _call(n, "furnace_status", {"booking": seen["booking"]})
    return _say("ok", value=str(seen["value"]))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion: the planner's sheet for an order, the executor's
    next tool call or outcome otherwise.

    >>> msg = respond({"messages": [{"role": "user", "content": "\\\\call{f}{a=1}"}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"a": 1}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((_text(m) for m in messages if m.get("role") == "user"), "")
    if task.startswith("Casting order: "):
        return completion(body, _planner(task))
    return completion(body, _executor(messages, task))


# --- the world --------------------------------------------------------------------------------
@dataclass
class World:
    """The services: the bronze catalogue, the furnace, the casting floor, the parish's bank,
    the parish's mailbox."""

    label: Label
    errors: list[str] = field(default_factory=list)
    lots: dict[str, str] = field(default_factory=dict)
    """Bronze lot -> its alloy."""
    bookings: dict[str, dict[str, Any]] = field(default_factory=dict)
    castings: dict[str, dict[str, Any]] = field(default_factory=dict)
    accounts: set[str] = field(default_factory=lambda: {ORDER["account"]})
    free_day: str = ORDER["pour_day"]
    """The day the furnace is free for the parish's bell."""
    deposits: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        self.free_day = self.label.params.get("free_day", ORDER["pour_day"])

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, step: str) -> None:
        """Raise the scenario's next error when the call belongs to the step it targets."""
        if not self.errors or step != self.params.get("step"):
            return
        text = self.errors.pop(0)
        if not self.errors and self.label.kind == RUNAWAY:
            raise FoundryError("Cancelled", f"{text}; order withdrawn")
        how = self.params.get("raise")
        if how == "again":
            raise FoundryError("FurnaceBusy", text)
        if how == "replans" and len(self.errors) % 2 == 0:
            account = f"ACC-{5600 + 37 * len(self.errors)}"
            self.accounts.add(account)
            raise FoundryError("Clash", f"{text}; account frozen, use {account}")
        raise FoundryError("TryLater", text)


def services(world: World, step: str) -> dict[str, AgentTool]:
    """The services for one step's calls, as Strands tools."""

    @tool
    def bronze_catalogue(alloy: str, kg: int, page: int = 1, slot: str = "07:00") -> dict[str, Any]:
        """Find a bronze lot of the alloy and weight; a page of the catalogue."""
        world.fault(step)
        pages = int(world.params.get("pages", 1))
        if page < pages:
            return {"lots": [f"BRZ-{page}{n}" for n in range(3)], "reserved": True,
                    "next_page": page + 1}  # fmt: skip
        lot = f"BRZ-{alloy.replace('/', '')}-{pages}"
        world.lots[lot] = alloy
        return {"value": lot, "alloy": alloy, "kg": kg}

    @tool
    def furnace_booking(day: str, slot: str = "07:00") -> dict[str, Any]:
        """Pencil the furnace in for a pour day."""
        world.fault(step)
        if day != world.free_day and day == ORDER["pour_day"]:
            raise FoundryError(
                "Clash", f"furnace relined on {day}; furnace free on {world.free_day}"
            )
        booking = f"FRN-{world.label.seed}-{len(world.bookings)}"
        world.bookings[booking] = {"day": day, "checks": 0}
        return {"booking": booking, "status": "PENCILLED"}

    @tool
    def furnace_status(booking: str) -> dict[str, Any]:
        """The state of a furnace booking."""
        entry = world.bookings[booking]
        entry["checks"] += 1
        if world.label.scenario == "loop_poll_stuck" or entry["checks"] < int(
            world.params.get("polls", 1)
        ):
            return {"booking": booking, "status": "PENCILLED"}
        return {"booking": booking, "status": "CONFIRMED", "value": booking}

    @tool
    def casting_schedule(bronze: str, furnace: str, kg: int, slot: str = "07:00") -> dict[str, Any]:
        """Schedule the casting of the bell from a bronze lot in a booked furnace."""
        world.fault(step)
        alloy = world.lots.get(bronze)
        if alloy != ORDER["alloy"]:
            raise FoundryError(
                "Refused", f"lot {bronze} is {alloy} bronze; the parish's bell is {ORDER['alloy']}"
            )
        casting = f"CST-{world.label.seed}-{len(world.castings)}"
        world.castings[casting] = {"bronze": bronze, "furnace": furnace, "kg": kg}
        return {"value": casting, "bronze": bronze}

    @tool
    def deposit_charge(casting: str, account: str, slot: str = "07:00") -> dict[str, Any]:
        """Charge the casting's deposit to an account."""
        world.fault(step)
        if account not in world.accounts:
            raise FoundryError("NotFound", f"no account {account} for this parish")
        kg = int(world.castings[casting]["kg"])
        if kg != ORDER["weight_kg"]:
            raise FoundryError("Refused", f"a {kg} kg bell is not the parish's contract")
        world.deposits[casting] = DEPOSIT_PER_KG * kg
        return {"value": f"DEP-{world.label.seed}", "amount": world.deposits[casting]}

    @tool
    def parish_notice(
        casting: str, deposit: str, email: str, slot: str = "07:00"
    ) -> dict[str, Any]:
        """Send the parish the casting notice."""
        world.fault(step)
        if casting not in world.deposits:
            raise FoundryError("Refused", f"casting {casting} has no deposit paid")
        return {"value": f"MSG-{world.label.seed}", "email": email}

    tools: list[AgentTool] = [
        bronze_catalogue, furnace_booking, furnace_status, casting_schedule, deposit_charge,
        parish_notice,
    ]  # fmt: skip
    return {t.tool_name: t for t in tools}


# --- the app ----------------------------------------------------------------------------------
class Foundry:
    """One order: the planner agent's sheet, one executor agent per step attempt, re-runs,
    revisions, then the app's checks."""

    def __init__(self, label: Label, model: OpenAIModel, tracer: Tracer):
        self.label = label
        self.model = model
        self.tracer = tracer
        self.world = World(label)
        self.order = f"BF-{label.seed % 9000 + 1000}"

    def plan(self, rev: int, done: dict[str, str], problem: str) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("alloy", "pour_day", "weight_kg", "account")
            if k in self.label.params
        }
        brief = (
            f"Casting order: {json.dumps({'order': self.order} | ORDER)}\n"
            f"Notes: {json.dumps(notes)}\nDone: {json.dumps(done)}\n"
            f"Problem: {problem}\nRevision: {rev}"
        )
        planner = Agent(
            model=self.model,
            name="foundry_planner",
            system_prompt="You plan bell castings as a LaTeX casting sheet.",
            callback_handler=None,
            trace_attributes={"foundry.order": self.order, "foundry.revision": rev},
        )
        return str(planner(brief)).strip()

    def attempt(self, step: Step, done: dict[str, str], n: int) -> str:
        """One executor agent invocation for one step; its ``\\outcome`` answer."""
        argv = {k: done[v] if how == "ref" else v for k, (how, v) in step.args.items()}
        fns = services(self.world, step.id)
        executor = Agent(
            model=self.model,
            name="foundry_executor",
            system_prompt=f"You carry out one step of a bell casting: {step.goal}.",
            tools=[fns[step.tool], fns["furnace_status"]],
            callback_handler=None,
            trace_attributes={"foundry.step": step.id, "foundry.attempt": n},
        )
        task = f"\\call{{{step.tool}}}{{{', '.join(f'{k}={v}' for k, v in argv.items())}}}"
        return str(executor(task)).strip()

    def run_order(self) -> None:
        rev, problem = 1, ""
        done: dict[str, str] = {}
        attempts: dict[str, int] = {}
        sheet = self.plan(rev, done, problem)
        while True:
            steps, kept = parse_sheet(sheet)
            done |= kept
            step = next((s for s in steps if s.id not in done and s.needs <= done.keys()), None)
            if step is None:
                break
            attempts[step.id] = attempts.get(step.id, 0) + 1
            m = OUTCOME.match(self.attempt(step, done, attempts[step.id]))
            assert m is not None
            status, value, note = m.groups()
            if status == "ok":
                done[step.id], attempts[step.id] = value, 0
            elif status == "again" and attempts[step.id] < MAX_STEP_ATTEMPTS:
                pass
            elif status == "amend" and rev < MAX_SHEETS:
                rev += 1
                sheet = self.plan(rev, done, f"{step.id}: {note}")
            else:
                raise Failed(f"{step.id}: {status}: {note}")
        self.check(done)

    def check(self, done: dict[str, str]) -> None:
        """The app's own checks once the parish is told: the pour day against the day the
        furnace is free, then the power on the casting floor."""
        with self.tracer.start_as_current_span("foundry.check") as span:
            day = self.world.bookings[done["book_furnace"]]["day"]
            span.set_attributes({"foundry.pour_day": day, "foundry.free_day": self.world.free_day})
            if day != self.world.free_day:
                raise Failed(
                    f"the furnace is booked for {day}, it is free on {self.world.free_day}"
                )
            for poll in range(1, 4):
                if self.label.scenario == "external_outage" and poll > int(
                    self.label.params["polls"]
                ):
                    raise Failed("a grid outage stopped the furnace blowers; the pour is lost")

    def run(self) -> str:
        with self.tracer.start_as_current_span(f"foundry.order {self.order}") as span:
            span.set_attributes({"foundry.order": self.order, "foundry.parish": ORDER["parish"]})
            try:
                self.run_order()
            except Failed as e:
                span.record_exception(e)
                span.set_status(Status(StatusCode.ERROR, str(e)))
            return f"{span.get_span_context().trace_id:032x}"


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the foundry scenarios under Strands' own tracing on ``provider``; run name -> trace
    id. Strands traces through the global tracer provider: a relay (set once, for good) passes
    its spans to ``provider`` while this plays; Strands' threading instrumentation (it carries
    the context into the thread each agent invocation runs in) is undone after."""
    if not labels:
        return {}
    threading = ThreadingInstrumentor()
    threading.instrument()
    try:
        with global_provider(provider), ModelServer(respond=respond) as server:
            model = OpenAIModel(
                client_args={
                    "base_url": server.base_url("corpus-foundry"),
                    "api_key": "test",
                    "max_retries": 0,
                },
                model_id=MODEL,
            )
            tracer = provider.get_tracer("foundry-app")
            return {label.run: Foundry(label, model, tracer).run() for label in labels}
    finally:
        threading.uninstrument()

"""An organ agent: an organ builder restoring a concert hall's pipe organ, a planner and an
executor built as Griptape Agents (``griptape``, its ``OpenAiChatPromptDriver`` and tools) and
traced by Griptape's own ``OpenTelemetryObservabilityDriver`` (``Agent.run()``,
``OpenAiChatPromptDriver.try_run()``, ``<Tool>.try_run()`` spans under its ``main`` span), under
the app's own ``organ.job``, ``organ.plan`` and ``organ.step`` spans, against a scripted model on
the conformance suite's fake OpenAI server (``ModelServer(respond=...)``). No planscope code.

Sealed-20 split only (see README.md). The task: a hall ordered its organ's restoration; source
pipe metal for the new ranks (a stock list read page by page), book the voicing loft for the
install day (confirmed later: polled), schedule the voicing, invoice the deposit to the hall's
account, send the hall the works notice.

* the planner agent answers a **BibTeX work plan**: ``@plan{<job>, revision = {<n>}}``, then one
  ``@step{<id>, tool = {<tool>}, goal = {<goal>}, <arg> = {<value>}, <arg> = <id>}`` entry a
  step (a bare word, as a BibTeX string macro: an earlier step's result, filled in by the app).
  Asked again after a clash it answers the next revision: ``supersedes = {<n-1>}`` and
  ``reason = {...}`` in its ``@plan``, a ``@done{<id>, result = {<value>}}`` entry for each step
  already done, then the steps not done;
* the executor agent (the step's tool) runs one Griptape run per step attempt; its final answer
  ``@result{<tool>, status = {<status>}, value = {<value>}, note = {<note>}}`` (``ok``,
  ``again``, ``amend``, ``abort``, ``stuck``);
* the services fail with VMS-style condition messages, ``%<FACILITY>-<W|E|F>-<IDENT>, <text>``
  (Griptape hands the model the error text as the tool result): ``W`` (call again in the same
  run for a later slot), ``E-RETRY`` (the app runs the step again, up to 8 attempts),
  ``E-CLASH`` (a revision, up to 4 plans), ``F`` (final).

The planner trusts the voicer's notes over the hall's order: the scenario's wrong value comes
from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from griptape.artifacts import TextArtifact
from griptape.configs import Defaults
from griptape.drivers.observability.open_telemetry import OpenTelemetryObservabilityDriver
from griptape.drivers.prompt.openai import OpenAiChatPromptDriver
from griptape.observability import Observability
from griptape.structures import Agent
from griptape.tokenizers import SimpleTokenizer
from griptape.tools import BaseTool
from griptape.utils.decorators import activity
from opentelemetry import context as otel_context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer
from schema import Literal, Optional, Schema

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import RUNAWAY, Label

ORDER: dict[str, Any] = {
    "hall": "marlow-hall",
    "metal": "spotted-52",
    "ranks": 14,
    "install_day": "2027-09-14",
    "account": "ACC-7731",
    "email": "works@marlowhall.example.org",
}
DEPOSIT_PER_RANK = 900
MAX_STEP_ATTEMPTS = 8
MAX_PLANS = 4
MAX_STATUS_CHECKS = 12
CONDITION = re.compile(r"%([A-Z]+)-([WEF])-([A-Z]+), (.*)$", re.DOTALL)
ENTRY = re.compile(r"@(\w+)\{([\w-]+),\n(.*?)\n\}", re.DOTALL)
FIELD = re.compile(r"^  (\w+) = (?:\{(.*)\}|(\w+)),$", re.MULTILINE)


class Condition(RuntimeError):
    """A service's condition: ``%{facility}-{severity}-{ident}, {text}``."""

    def __init__(self, facility: str, severity: str, ident: str, text: str):
        super().__init__(f"%{facility}-{severity}-{ident}, {text}")


class Failed(RuntimeError):
    """The voicing was not scheduled, invoiced and the hall told, or failed after (the reason)."""


# --- the plan: BibTeX entries ------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One ``@step`` of the plan; an argument ``("ref", id)`` is an earlier step's result."""

    id: str
    tool: str
    goal: str
    args: dict[str, tuple[str, str]]

    @property
    def needs(self) -> set[str]:
        return {v for how, v in self.args.values() if how == "ref"}


def entry(kind: str, key: str, fields: dict[str, str]) -> str:
    """One BibTeX entry; a value ``=id`` is written bare (a macro: that step's result).

    >>> print(entry("step", "voice", {"tool": "Shop_schedule", "lot": "=find"}))
    @step{voice,
      tool = {Shop_schedule},
      lot = find,
    }
    """
    lines = [
        f"  {k} = {v[1:]}," if v.startswith("=") else f"  {k} = {{{v}}}," for k, v in fields.items()
    ]
    return "\n".join([f"@{kind}{{{key},", *lines, "}"])


def parse_plan(text: str) -> tuple[list[Step], dict[str, str]]:
    """The steps of a work plan and the results its ``@done`` entries keep.

    >>> steps, kept = parse_plan(entry("done", "find", {"result": "MTL-1"}) + "\\n"
    ...     + entry("step", "voice", {"tool": "Shop_schedule", "goal": "Voice", "lot": "=find",
    ...     "ranks": "14"}))
    >>> kept, steps[0].tool, steps[0].args
    ({'find': 'MTL-1'}, 'Shop_schedule', {'lot': ('ref', 'find'), 'ranks': ('value', '14')})
    """
    steps, kept = [], {}
    for kind, key, body in ENTRY.findall(text):
        fields = {
            k: ("value", v) if not bare else ("ref", bare) for k, v, bare in FIELD.findall(body)
        }
        if kind == "done":
            kept[key] = fields["result"][1]
        elif kind == "step":
            tool, goal = fields.pop("tool")[1], fields.pop("goal")[1]
            steps.append(Step(key, tool, goal, fields))
    return steps, kept


def _plan(
    job: str, rev: int, problem: str, steps: list[tuple[str, dict[str, Any]]], done: dict[str, str]
) -> str:
    head: dict[str, str] = {"revision": str(rev)}
    if rev > 1:
        head |= {"supersedes": str(rev - 1), "reason": problem}
    out = [entry("plan", job, head)]
    out += [entry("done", sid, {"result": done[sid]}) for sid, _ in steps if sid in done]
    out += [
        entry("step", sid, {k: str(v) for k, v in f.items()}) for sid, f in steps if sid not in done
    ]
    return "\n".join(out)


# --- the scripted model ------------------------------------------------------------------------
def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


def _field(text: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", text, re.MULTILINE)
    return m.group(1) if m else ""


def _planner(brief: str) -> dict[str, Any]:
    """The planner's work plan: the hall's order, the notes trusted over it, the day or account
    a clash names, the done steps."""
    facts = json.loads(_field(brief, "Works order")) | json.loads(_field(brief, "Notes") or "{}")
    done = json.loads(_field(brief, "Done") or "{}")
    problem = _field(brief, "Problem")
    rev = int(_field(brief, "Revision") or 1)
    day = re.search(r"loft free on (\d{4}-\d\d-\d\d)", problem)
    account = re.search(r"bill (ACC-\d+)", problem)
    steps = [
        ("source_metal", {"tool": "PipeMetal_stock", "goal": f"Source {facts['metal']} pipe metal",
                          "metal": facts["metal"]}),
        ("book_loft", {"tool": "VoicingLoft_book", "goal": "Book the voicing loft",
                       "day": day.group(1) if day else facts["install_day"]}),
        ("schedule_voicing", {"tool": "PipeShop_schedule", "goal": "Schedule the voicing",
                              "lot": "=source_metal", "loft": "=book_loft",
                              "ranks": facts["ranks"]}),
        ("invoice_deposit", {"tool": "Ledger_invoice", "goal": "Invoice the deposit",
                             "voicing": "=schedule_voicing",
                             "account": account.group(1) if account else facts["account"]}),
        ("notify_hall", {"tool": "HallMail_send", "goal": "Send the hall the works notice",
                         "voicing": "=schedule_voicing", "invoice": "=invoice_deposit",
                         "email": facts["email"]}),
    ]  # fmt: skip
    return {"role": "assistant", "content": _plan(facts["job"], rev, problem, steps, done)}


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"call_{name}_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _say(tool: str, status: str, value: str = "", note: str = "") -> dict[str, Any]:
    fields = {"status": status, "value": value or "-", "note": note}
    return {"role": "assistant", "content": entry("result", tool, fields)}


def _executor(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The executor's turn: call the step's tool, again after a ``W`` condition for a later
    slot, follow ``next_page``, poll a loft booking until confirmed, answer the result."""
    steps, _ = parse_plan(task)
    name = steps[0].tool
    args: dict[str, Any] = {k: int(v) if v.isdigit() else v for k, (_, v) in steps[0].args.items()}
    results = [_text(msg) for msg in messages if msg.get("role") == "tool"]
    n = len(results)
    if not results:
        return _call(n, name, args)
    last = results[-1]
    cond = CONDITION.search(last)
    if cond:
        _, severity, ident, text = cond.groups()
        if severity == "W":
            return _call(n, name, args | {"slot": f"{7 + sum('-W-' in r for r in results):02d}:00"})
        status = (
            {"RETRY": "again", "CLASH": "amend"}.get(ident, "abort") if severity == "E" else "abort"
        )
        return _say(name, status, note=f"{ident}: {text}")
    seen = json.loads(last)
    if "next_page" in seen:
        return _call(n, name, args | {"page": seen["next_page"]})
    if seen.get("status") == "TENTATIVE":
        checks = sum(r.count('"TENTATIVE"') for r in results) - 1
        if checks >= MAX_STATUS_CHECKS:
            return _say(
                name, "stuck", note=f"loft {seen['booking']} still TENTATIVE after {checks}"
            )
        return _call(n, "VoicingLoft_status", {"booking": seen["booking"]})
    return _say(name, "ok", value=str(seen["value"]))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion: the planner's work plan for an order, the
    executor's next tool call or result otherwise.

    >>> task = entry("step", "s", {"tool": "T_go", "goal": "g", "a": "1"})
    >>> msg = respond({"messages": [{"role": "user", "content": task}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"a": 1}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((_text(m) for m in messages if m.get("role") == "user"), "")
    if task.startswith("Works order: "):
        return completion(body, _planner(task))
    return completion(body, _executor(messages, task))


# --- the world ---------------------------------------------------------------------------------
@dataclass
class World:
    """The services: the pipe metal stock, the voicing loft, the pipe shop, the ledger, the
    hall's mailbox."""

    label: Label
    errors: list[str] = field(default_factory=list)
    lots: dict[str, str] = field(default_factory=dict)
    """Metal lot -> its pipe metal."""
    bookings: dict[str, dict[str, Any]] = field(default_factory=dict)
    voicings: dict[str, dict[str, Any]] = field(default_factory=dict)
    accounts: set[str] = field(default_factory=lambda: {ORDER["account"]})
    free_day: str = ORDER["install_day"]
    """The day the loft is free for the hall's organ."""
    invoices: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        self.free_day = self.label.params.get("free_day", ORDER["install_day"])

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, step: str, facility: str) -> None:
        """Raise the scenario's next condition when the call belongs to the step it targets."""
        if not self.errors or step != self.params.get("step"):
            return
        text = self.errors.pop(0)
        if not self.errors and self.label.kind == RUNAWAY:
            raise Condition(facility, "F", "CANCELLED", f"{text}; works order withdrawn")
        how = self.params.get("raise")
        if how == "again":
            raise Condition(facility, "W", "BUSY", text)
        if how == "replans" and len(self.errors) % 2 == 0:
            account = f"ACC-{7800 + 41 * len(self.errors)}"
            self.accounts.add(account)
            raise Condition(facility, "E", "CLASH", f"{text}; account closed, bill {account}")
        raise Condition(facility, "E", "RETRY", text)


def _reply(**values: Any) -> TextArtifact:
    return TextArtifact(json.dumps(values))


def _does(description: str, **fields: type) -> Any:
    """Griptape's ``@activity`` for a service: every field required but ``page`` and ``slot``."""
    keys = {
        Optional(k) if k in ("page", "slot") else Literal(k, description=f"the {k}"): kind
        for k, kind in fields.items()
    }
    return activity(config={"description": description, "schema": Schema(keys)})


def services(world: World, step: str) -> dict[str, BaseTool]:
    """The services for one step's calls, as Griptape tools (one activity each but the loft)."""

    class PipeMetal(BaseTool):
        @_does("A page of the pipe metal stock for an alloy.", metal=str, page=int, slot=str)
        def stock(self, metal: str, page: int = 1, slot: str = "07:00") -> TextArtifact:
            world.fault(step, "METAL")
            pages = int(world.params.get("pages", 1))
            if page < pages:
                return _reply(
                    lots=[f"MTL-{page}{n}" for n in range(3)], held=True, next_page=page + 1
                )
            lot = f"MTL-{metal.upper()}-{pages}"
            world.lots[lot] = metal
            return _reply(value=lot, metal=metal)

    class VoicingLoft(BaseTool):
        @_does("Pencil the voicing loft in for a day.", day=str, slot=str)
        def book(self, day: str, slot: str = "07:00") -> TextArtifact:
            world.fault(step, "LOFT")
            if day != world.free_day and day == ORDER["install_day"]:
                raise Condition(
                    "LOFT", "E", "CLASH", f"loft re-floored on {day}; loft free on {world.free_day}"
                )
            booking = f"LFT-{world.label.seed}-{len(world.bookings)}"
            world.bookings[booking] = {"day": day, "checks": 0}
            return _reply(booking=booking, status="TENTATIVE")

        @_does("The state of a loft booking.", booking=str)
        def status(self, booking: str) -> TextArtifact:
            entry = world.bookings[booking]
            entry["checks"] += 1
            stuck = world.label.scenario == "loop_poll_stuck"
            if stuck or entry["checks"] < int(world.params.get("polls", 1)):
                return _reply(booking=booking, status="TENTATIVE")
            return _reply(booking=booking, status="CONFIRMED", value=booking)

    class PipeShop(BaseTool):
        @_does(
            "Schedule the voicing of new ranks from a metal lot in a booked loft.",
            lot=str,
            loft=str,
            ranks=int,
            slot=str,
        )
        def schedule(self, lot: str, loft: str, ranks: int, slot: str = "07:00") -> TextArtifact:
            world.fault(step, "SHOP")
            metal = world.lots.get(lot)
            if metal != ORDER["metal"]:
                raise Condition(
                    "SHOP",
                    "F",
                    "WRONGMETAL",
                    f"lot {lot} is {metal}; the hall's ranks are {ORDER['metal']}",
                )
            voicing = f"VOI-{world.label.seed}-{len(world.voicings)}"
            world.voicings[voicing] = {"lot": lot, "loft": loft, "ranks": ranks}
            return _reply(value=voicing, lot=lot)

    class Ledger(BaseTool):
        @_does("Invoice the voicing's deposit to an account.", voicing=str, account=str, slot=str)
        def invoice(self, voicing: str, account: str, slot: str = "07:00") -> TextArtifact:
            world.fault(step, "LEDGER")
            if account not in world.accounts:
                raise Condition("LEDGER", "F", "NOSUCHACCT", f"no account {account} for this hall")
            ranks = int(world.voicings[voicing]["ranks"])
            if ranks != ORDER["ranks"]:
                raise Condition(
                    "LEDGER", "F", "NOCONTRACT", f"{ranks} ranks is not the hall's contract"
                )
            world.invoices[voicing] = DEPOSIT_PER_RANK * ranks
            return _reply(value=f"INV-{world.label.seed}", amount=world.invoices[voicing])

    class HallMail(BaseTool):
        @_does("Send the hall the works notice.", voicing=str, invoice=str, email=str, slot=str)
        def send(self, voicing: str, invoice: str, email: str, slot: str = "07:00") -> TextArtifact:
            world.fault(step, "MAIL")
            if voicing not in world.invoices:
                raise Condition("MAIL", "F", "UNPAID", f"voicing {voicing} has no deposit invoiced")
            return _reply(value=f"MSG-{world.label.seed}", email=email)

    tools = [PipeMetal(), VoicingLoft(), PipeShop(), Ledger(), HallMail()]
    return {type(t).__name__: t for t in tools}


# --- the app -----------------------------------------------------------------------------------
class Works:
    """One works order: the planner agent's plan, one executor agent run per step attempt,
    re-runs, revisions, then the app's checks."""

    def __init__(self, label: Label, driver: OpenAiChatPromptDriver, tracer: Tracer):
        self.label = label
        self.driver = driver
        self.tracer = tracer
        self.world = World(label)
        self.job = f"ORG-{label.seed % 9000 + 1000}"

    def plan(self, rev: int, done: dict[str, str], problem: str) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("metal", "install_day", "ranks", "account")
            if k in self.label.params
        }
        brief = (
            f"Works order: {json.dumps({'job': self.job} | ORDER)}\n"
            f"Notes: {json.dumps(notes)}\nDone: {json.dumps(done)}\n"
            f"Problem: {problem}\nRevision: {rev}"
        )
        with self.tracer.start_as_current_span("organ.plan") as span:
            text = Agent(prompt_driver=self.driver).run(brief).output.value.strip()
            span.set_attributes({"organ.plan.revision": rev, "organ.plan.text": text})
            return str(text)

    def attempt(self, step: Step, done: dict[str, str], n: int) -> str:
        """One executor agent run for one step; its ``@result`` answer."""
        argv = {k: done[v] if how == "ref" else v for k, (how, v) in step.args.items()}
        tools = services(self.world, step.id)
        used = [tools[step.tool.split("_")[0]]]
        task = entry("step", step.id, {"tool": step.tool, "goal": step.goal} | argv)
        with self.tracer.start_as_current_span(f"organ.step {step.id}") as span:
            span.set_attributes(
                {
                    "organ.step.id": step.id,
                    "organ.step.attempt": n,
                    "organ.step.args": json.dumps(argv),
                }
            )
            answer = str(
                Agent(prompt_driver=self.driver, tools=used, max_subtasks=30).run(task).output.value
            )
            span.set_attribute("organ.step.result", answer)
            return answer

    def run_job(self) -> None:
        rev, problem = 1, ""
        done: dict[str, str] = {}
        attempts: dict[str, int] = {}
        plan = self.plan(rev, done, problem)
        while True:
            steps, kept = parse_plan(plan)
            done |= kept
            step = next((s for s in steps if s.id not in done and s.needs <= done.keys()), None)
            if step is None:
                break
            attempts[step.id] = attempts.get(step.id, 0) + 1
            [(_, _, body)] = ENTRY.findall(self.attempt(step, done, attempts[step.id]))
            result = {k: v for k, v, _ in FIELD.findall(body)}
            status, value, note = result["status"], result["value"], result["note"]
            if status == "ok":
                done[step.id], attempts[step.id] = value, 0
            elif status == "again" and attempts[step.id] < MAX_STEP_ATTEMPTS:
                pass
            elif status == "amend" and rev < MAX_PLANS:
                rev += 1
                plan = self.plan(rev, done, f"{step.id}: {note}")
            else:
                raise Failed(f"{step.id}: {status}: {note}")
        self.check(done)

    def check(self, done: dict[str, str]) -> None:
        """The app's own checks once the hall is told: the install day against the day the loft
        is free, then the hall's humidity watch."""
        with self.tracer.start_as_current_span("organ.check") as span:
            day = self.world.bookings[done["book_loft"]]["day"]
            span.set_attributes({"organ.install_day": day, "organ.free_day": self.world.free_day})
            if day != self.world.free_day:
                raise Failed(f"the loft is booked for {day}, it is free on {self.world.free_day}")
            for reading in range(1, 4):
                if self.label.scenario == "external_outage" and reading > int(
                    self.label.params["polls"]
                ):
                    raise Failed("the hall's heating failed overnight; the new ranks split")

    def run(self, observability: OpenTelemetryObservabilityDriver) -> str:
        with self.tracer.start_as_current_span(f"organ.job {self.job}") as span:
            span.set_attributes({"organ.job": self.job, "organ.hall": ORDER["hall"]})
            try:
                with Observability(observability_driver=observability):
                    self.run_job()
            except Failed as e:
                span.record_exception(e)
                span.set_status(Status(StatusCode.ERROR, str(e)))
            return f"{span.get_span_context().trace_id:032x}"


class _ToPlay(SpanProcessor):
    """Hands the spans of Griptape's own tracer provider to the play's provider's processors."""

    def __init__(self, target: SpanProcessor):
        self.target = target

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        self.target.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        self.target.on_end(span)


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the organ scenarios under Griptape's own tracing; run name -> trace id. Griptape's
    driver builds its own tracer provider (service ``organ-works``) whose one processor relays
    to ``provider``'s; its ``Observability`` block is entered per run inside the app's span (its
    ``main`` span a child of it) and instruments threading only while it lasts."""
    if not labels:
        return {}
    # The SDK provider has no public getter for its processors (as grants' Logfire relay).
    relay = _ToPlay(provider._active_span_processor)
    observability = OpenTelemetryObservabilityDriver(
        service_name="organ-works", span_processor=relay
    )
    tracer = provider.get_tracer("organ-app")
    # Griptape logs every prompt and action to the console at INFO; the corpus plays quietly
    logger = logging.getLogger(Defaults.logging_config.logger_name)
    level = logger.level
    logger.setLevel(logging.WARNING)
    with ModelServer(respond=respond) as server:
        driver = OpenAiChatPromptDriver(
            model=MODEL,
            base_url=server.base_url("corpus-organ"),
            api_key="test",
            tokenizer=SimpleTokenizer(
                characters_per_token=4, max_input_tokens=128000, max_output_tokens=4096
            ),
        )
        try:
            return {label.run: Works(label, driver, tracer).run(observability) for label in labels}
        finally:
            logger.setLevel(level)

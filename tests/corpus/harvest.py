"""A harvest agent: a grower's grape harvest, an app calling the ``openai`` client traced by
OpenLLMetry's OpenAI instrumentor (``OpenAIInstrumentor().instrument(tracer_provider=...)``)
plus the app's own plain OpenTelemetry spans (``harvest.order``, ``harvest.plan``,
``harvest.step``, ``harvest.tool``, ``harvest.check``), against a scripted model on the
conformance suite's fake OpenAI server (``ModelServer(respond=...)``). No planscope code.

Sealed-17 split only (see README.md). The task: a grower ordered the harvest of a block; find a
picking crew for the block (a roster read page by page), book the winery's press for the pick
day (confirmed later: polled), schedule the pick, charge the deposit to the grower's card, send
the grower the pick notice. The first two steps need nothing from each other: the app runs
every step whose inputs are ready at once, on threads.

* the planner answers a **shell script plan**: a ``#!harvest <order> rev <n>`` line, then one
  command a step, ``<id> = <tool> --<arg> <value> --<arg> $<step id>  # <goal>`` (``$id``: an
  earlier step's result, filled in by the app). Asked again after a failure it answers a
  **revision**: ``rev <n> amends <n-1>: <reason>``, then ``export <id>=<result>`` lines for the
  steps already done, then the commands not done;
* the executor runs one model conversation per step attempt with the step's tools; its final
  answer ``<status>: <value> -- <note>`` (``ok``, ``again``, ``amend``, ``abort``, ``stuck``);
* the services answer errors as ``FAULT[<kind>] <text>``: ``hold`` (call again in the same
  conversation for a later window), ``transient`` (the app re-runs the step, up to 8 attempts),
  ``conflict`` (a revision, up to 4 plans), ``denied`` / ``missing`` / ``cancelled`` (final).

The planner trusts the field manager's notes over the grower's order: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from openai import OpenAI
from openai.resources.chat.completions import AsyncCompletions, Completions
from opentelemetry import context as otel_context
from opentelemetry.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.instrumentation.utils import unwrap
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import RUNAWAY, Label

ORDER: dict[str, Any] = {
    "block": "rutherford-7",
    "variety": "cabernet",
    "tons": 18,
    "pick_day": "2027-09-14",
    "card": "CARD-6621",
    "email": "g.alvarez@example.org",
}
DEPOSIT_PER_TON = 140
MAX_STEP_ATTEMPTS = 8
MAX_PLANS = 4
MAX_STATUS_CHECKS = 12
FAULT = re.compile(r"FAULT\[([\w-]+)\] (.*)$", re.DOTALL)
ANSWER = re.compile(r"(\w+): (\S*) -- (.*)$", re.DOTALL)


class Fault(RuntimeError):
    """A service's error answer: ``FAULT[{kind}] {text}``."""

    def __init__(self, kind: str, text: str):
        super().__init__(f"FAULT[{kind}] {text}")
        self.kind = kind


class Failed(RuntimeError):
    """The pick was not scheduled, paid and its grower told, or failed after (the reason)."""


# --- the plan: a shell script -----------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    """One command of the plan; an argument ``("from", id)`` is an earlier step's result."""

    id: str
    tool: str
    goal: str
    args: dict[str, tuple[str, str]]

    @property
    def needs(self) -> set[str]:
        return {v for how, v in self.args.values() if how == "from"}


def parse_plan(text: str) -> tuple[list[Step], dict[str, str]]:
    """The commands of a shell script plan and the results a revision exports.

    >>> steps, kept = parse_plan('#!harvest HV-1 rev 2\\nexport find_crew=CRW-1\\n'
    ...     'pick = pick_schedule --crew $find_crew --tons 18  # Schedule the pick')
    >>> kept, steps[0].tool, steps[0].goal, steps[0].args
    ({'find_crew': 'CRW-1'}, 'pick_schedule', 'Schedule the pick', {'crew': ('from', \
'find_crew'), 'tons': ('value', '18')})
    """
    steps, kept = [], {}
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if line.startswith("export "):
            sid, value = line.removeprefix("export ").split("=", 1)
            kept[sid] = shlex.split(value)[0]
        elif len(words) >= 3 and words[1] == "=":
            goal = line.split("#", 1)[1].strip() if "#" in line else ""
            pairs = zip(words[3::2], words[4::2], strict=True)
            args = {
                k.removeprefix("--"): ("from", v[1:]) if v.startswith("$") else ("value", v)
                for k, v in pairs
            }
            steps.append(Step(words[0], words[2], goal, args))
    return steps, kept


def _plan_text(
    order: str,
    rev: int,
    problem: str,
    steps: list[tuple[str, str, str, dict[str, Any]]],
    done: dict[str, str],
) -> str:
    lines = [f"#!harvest {order} rev {rev}"]
    if rev > 1:
        lines.append(f"# rev {rev} amends {rev - 1}: {problem}")
    lines += [f"export {sid}={shlex.quote(done[sid])}" for sid, *_ in steps if sid in done]
    for sid, goal, name, args in steps:
        if sid not in done:
            argv = " ".join(
                f"--{k} {v}" if str(v).startswith("$") else f"--{k} {shlex.quote(str(v))}"
                for k, v in args.items()
            )
            lines.append(f"{sid} = {name} {argv}  # {goal}")
    return "\n".join(lines)


# --- the scripted model -----------------------------------------------------------------------
def _field(text: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", text, re.MULTILINE)
    return m.group(1) if m else ""


def _planner(brief: str) -> dict[str, Any]:
    """The planner's script: the grower's order, the notes trusted over it, the day or card a
    problem names, the done steps."""
    facts = json.loads(_field(brief, "Grower order")) | json.loads(_field(brief, "Notes") or "{}")
    done = json.loads(_field(brief, "Done") or "{}")
    problem = _field(brief, "Problem")
    rev = int(_field(brief, "Revision") or 1)
    day = re.search(r"next open day (\d{4}-\d\d-\d\d)", problem)
    card = re.search(r"use (CARD-\d+)", problem)
    steps = [
        ("find_crew", f"Find a picking crew for {facts['block']}", "crew_roster",
         {"block": facts["block"], "tons": facts["tons"]}),
        ("book_press", "Book the winery's press for the pick day", "press_booking",
         {"variety": ORDER["variety"], "day": day.group(1) if day else facts["pick_day"]}),
        ("schedule_pick", "Schedule the pick with the crew and the press", "pick_schedule",
         {"crew": "$find_crew", "press": "$book_press", "variety": facts["variety"]}),
        ("pay_deposit", "Charge the deposit to the grower's card", "deposit_charge",
         {"pick": "$schedule_pick", "card": card.group(1) if card else facts["card"]}),
        ("notify_grower", "Send the grower the pick notice", "grower_notice",
         {"pick": "$schedule_pick", "deposit": "$pay_deposit", "email": facts["email"]}),
    ]  # fmt: skip
    return {"role": "assistant", "content": _plan_text(facts["order"], rev, problem, steps, done)}


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"call_{name}_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _say(status: str, value: str = "", note: str = "") -> dict[str, Any]:
    return {"role": "assistant", "content": f"{status}: {value or '-'} -- {note}"}


def _executor(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The executor's turn: run the command, call again after a ``hold`` fault for a later
    window, follow ``next_page``, poll a press booking until confirmed, answer the result."""
    words = shlex.split(task.removeprefix("run "))
    name = words[0]
    args: dict[str, Any] = {
        k.removeprefix("--"): int(v) if v.isdigit() else v
        for k, v in zip(words[1::2], words[2::2], strict=True)
    }
    results = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
    n = len(results)
    if not results:
        return _call(n, name, args)
    last = results[-1]
    fault = FAULT.match(last)
    if fault:
        if fault.group(1) == "hold":
            holds = sum(r.startswith("FAULT[hold]") for r in results)
            return _call(n, name, args | {"window": f"{6 + holds:02d}:00"})
        status = {"transient": "again", "conflict": "amend"}.get(fault.group(1), "abort")
        return _say(status, note=f"{fault.group(1)}: {fault.group(2)}")
    seen = json.loads(last)
    if "next_page" in seen:
        return _call(n, name, args | {"page": seen["next_page"]})
    if seen.get("status") == "TENTATIVE":
        checks = sum(r.count('"TENTATIVE"') for r in results) - 1
        if checks >= MAX_STATUS_CHECKS:
            return _say("stuck", note=f"press {seen['booking']} still TENTATIVE after {checks}")
        return _call(n, "press_status", {"booking": seen["booking"]})
    return _say("ok", value=str(seen["value"]))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion: the planner's script for an order, the executor's
    next tool call or answer otherwise.

    >>> msg = respond({"messages": [{"role": "user", "content": "run f --a 1"}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"a": 1}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if task.startswith("Grower order: "):
        return completion(body, _planner(task))
    return completion(body, _executor(messages, task))


# --- the world --------------------------------------------------------------------------------
@dataclass
class World:
    """The services: the crew roster, the winery's press, the pick scheduler, the card
    processor, the grower portal."""

    label: Label
    errors: list[str] = field(default_factory=list)
    crews: dict[str, str] = field(default_factory=dict)
    """Crew -> the block it works."""
    bookings: dict[str, dict[str, Any]] = field(default_factory=dict)
    picks: dict[str, dict[str, Any]] = field(default_factory=dict)
    cards: set[str] = field(default_factory=lambda: {ORDER["card"]})
    open_day: str = ORDER["pick_day"]
    """The day the press is free for the block's fruit."""
    deposits: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        self.open_day = self.label.params.get("open_day", ORDER["pick_day"])

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, step: str) -> None:
        """Raise the scenario's next error when the call belongs to the step it targets."""
        if not self.errors or step != self.params.get("step"):
            return
        text = self.errors.pop(0)
        if not self.errors and self.label.kind == RUNAWAY:
            raise Fault("cancelled", f"{text}; request cancelled")
        how = self.params.get("raise")
        if how == "again":
            raise Fault("hold", text)
        if how == "replans" and len(self.errors) % 2 == 0:
            card = f"CARD-{6700 + 41 * len(self.errors)}"
            self.cards.add(card)
            raise Fault("conflict", f"{text}; card blocked, use {card}")
        raise Fault("transient", text)


def services(world: World, step: str) -> dict[str, Callable[..., dict[str, Any]]]:
    """The services for one step's calls."""

    def crew_roster(block: str, tons: int, page: int = 1, window: str = "06:00") -> dict[str, Any]:
        world.fault(step)
        pages = int(world.params.get("pages", 1))
        if page < pages:
            return {
                "crews": [f"CRW-{page}{n}" for n in range(3)],
                "booked": True,
                "next_page": page + 1,
            }
        crew = f"CRW-{block.split('-')[0][:3].upper()}-{pages}"
        world.crews[crew] = block
        return {"value": crew, "block": block, "tons": tons}

    def press_booking(variety: str, day: str, window: str = "06:00") -> dict[str, Any]:
        world.fault(step)
        if day != world.open_day and day == ORDER["pick_day"]:
            raise Fault("conflict", f"press full on {day}; next open day {world.open_day}")
        booking = f"PRS-{world.label.seed}-{len(world.bookings)}"
        world.bookings[booking] = {"day": day, "variety": variety, "checks": 0}
        return {"booking": booking, "status": "TENTATIVE"}

    def press_status(booking: str) -> dict[str, Any]:
        entry = world.bookings[booking]
        entry["checks"] += 1
        if world.label.scenario == "loop_poll_stuck" or entry["checks"] < int(
            world.params.get("polls", 1)
        ):
            return {"booking": booking, "status": "TENTATIVE"}
        return {"booking": booking, "status": "CONFIRMED", "value": booking}

    def pick_schedule(crew: str, press: str, variety: str, window: str = "06:00") -> dict[str, Any]:
        world.fault(step)
        block = world.crews.get(crew)
        if block != ORDER["block"]:
            raise Fault(
                "denied", f"crew {crew} works {block}; the grower's block is {ORDER['block']}"
            )
        pick = f"PCK-{world.label.seed}-{len(world.picks)}"
        world.picks[pick] = {"crew": crew, "press": press, "variety": variety}
        return {"value": pick, "crew": crew}

    def deposit_charge(pick: str, card: str, window: str = "06:00") -> dict[str, Any]:
        world.fault(step)
        if card not in world.cards:
            raise Fault("missing", f"no card {card} on file for this grower")
        if world.picks[pick]["variety"] != ORDER["variety"]:
            raise Fault("denied", f"{world.picks[pick]['variety']} is not on the grower's contract")
        world.deposits[pick] = DEPOSIT_PER_TON * int(ORDER["tons"])
        return {"value": f"DEP-{world.label.seed}", "amount": world.deposits[pick]}

    def grower_notice(pick: str, deposit: str, email: str, window: str = "06:00") -> dict[str, Any]:
        world.fault(step)
        if pick not in world.deposits:
            raise Fault("denied", f"pick {pick} has no deposit paid")
        return {"value": f"MSG-{world.label.seed}", "email": email}

    fns: list[Callable[..., dict[str, Any]]] = [
        crew_roster, press_booking, press_status, pick_schedule, deposit_charge, grower_notice
    ]  # fmt: skip
    return {f.__name__: f for f in fns}


def _schema(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


# --- the app ----------------------------------------------------------------------------------
class Harvest:
    """One order: plan, run the ready steps in parallel, re-run, revise, then the app's checks."""

    def __init__(self, label: Label, client: OpenAI, tracer: Tracer):
        self.label = label
        self.client = client
        self.tracer = tracer
        self.world = World(label)
        self.order = f"HV-{label.seed % 9000 + 1000}"

    def plan(self, rev: int, done: dict[str, str], problem: str) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("block", "pick_day", "variety", "card")
            if k in self.label.params
        }
        brief = (
            f"Grower order: {json.dumps({'order': self.order} | ORDER)}\n"
            f"Notes: {json.dumps(notes)}\nDone: {json.dumps(done)}\n"
            f"Problem: {problem}\nRevision: {rev}"
        )
        with self.tracer.start_as_current_span("harvest.plan") as span:
            span.set_attribute("harvest.revision", rev)
            out = self.client.chat.completions.create(
                model=MODEL,
                messages=[
                    {"role": "system", "content": "You plan grape harvests as a shell script."},
                    {"role": "user", "content": brief},
                ],
            )
            text = out.choices[0].message.content or ""
            span.set_attribute("harvest.script", text)
            return text

    def attempt(self, step: Step, done: dict[str, str], n: int) -> str:
        """One executor conversation for one step; its ``<status>: <value> -- <note>`` answer."""
        argv = {k: done[v] if how == "from" else v for k, (how, v) in step.args.items()}
        task = f"run {step.tool} " + " ".join(f"--{k} {shlex.quote(v)}" for k, v in argv.items())
        fns = services(self.world, step.id)
        with self.tracer.start_as_current_span(f"harvest.step {step.id}") as span:
            span.set_attributes(
                {"harvest.step": step.id, "harvest.attempt": n, "harvest.command": task}
            )
            messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
            while True:
                out = self.client.chat.completions.create(
                    model=MODEL,
                    messages=messages,  # type: ignore[arg-type]
                    tools=[_schema(step.tool), _schema("press_status")],  # type: ignore[list-item]
                )
                msg = out.choices[0].message
                if not msg.tool_calls:
                    answer = msg.content or ""
                    span.set_attribute("harvest.answer", answer)
                    if not answer.startswith("ok:"):
                        span.set_status(Status(StatusCode.ERROR, answer))
                    return answer
                messages.append(msg.model_dump(exclude_none=True))
                for call in msg.tool_calls:
                    name = call.function.name  # type: ignore[union-attr]
                    with self.tracer.start_as_current_span(f"harvest.tool {name}") as tspan:
                        tspan.set_attribute("harvest.tool.args", call.function.arguments)  # type: ignore[union-attr]
                        try:
                            text = json.dumps(fns[name](**json.loads(call.function.arguments)))  # type: ignore[union-attr]
                        except Fault as e:
                            tspan.record_exception(e)
                            tspan.set_status(Status(StatusCode.ERROR, str(e)))
                            text = str(e)
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": text})

    def _in(self, parent: otel_context.Context, step: Step, done: dict[str, str], n: int) -> str:
        # a worker thread starts with an empty context: the step's span joins the order's trace
        token = otel_context.attach(parent)
        try:
            return self.attempt(step, done, n)
        finally:
            otel_context.detach(token)

    def run_order(self) -> None:
        rev, problem = 1, ""
        done: dict[str, str] = {}
        attempts: dict[str, int] = {}
        script = self.plan(rev, done, problem)
        parent = otel_context.get_current()
        with ThreadPoolExecutor(max_workers=2) as pool:
            while True:
                steps, kept = parse_plan(script)
                done |= kept
                ready = [s for s in steps if s.id not in done and s.needs <= done.keys()]
                if not ready:
                    break
                for s in ready:
                    attempts[s.id] = attempts.get(s.id, 0) + 1

                snapshot = dict(done)
                runs = [pool.submit(self._in, parent, s, snapshot, attempts[s.id]) for s in ready]
                problem = ""
                for s, answer in zip(ready, (r.result() for r in runs), strict=True):
                    m = ANSWER.match(answer)
                    assert m is not None, answer
                    status, value, note = m.groups()
                    if status == "ok":
                        done[s.id], attempts[s.id] = value, 0
                    elif status == "again" and attempts[s.id] < MAX_STEP_ATTEMPTS:
                        pass
                    elif status == "amend" and rev < MAX_PLANS:
                        problem = f"{s.id}: {note}"
                    else:
                        raise Failed(f"{s.id}: {status}: {note}")
                if problem:
                    rev += 1
                    script = self.plan(rev, done, problem)
        self.check(done)

    def check(self, done: dict[str, str]) -> None:
        """The app's own checks once the grower is told: the press day against the day the press
        is free, then the fruit's truck to the winery."""
        with self.tracer.start_as_current_span("harvest.check") as span:
            day = self.world.bookings[done["book_press"]]["day"]
            span.set_attributes({"harvest.press_day": day, "harvest.open_day": self.world.open_day})
            if day != self.world.open_day:
                raise Failed(f"the press is booked for {day}, it is free on {self.world.open_day}")
            for poll in range(1, 4):
                if self.label.scenario == "external_hail" and poll > int(
                    self.label.params["polls"]
                ):
                    raise Failed("hail closed the valley road; the fruit truck is turned back")

    def run(self) -> str:
        with self.tracer.start_as_current_span(f"harvest.order {self.order}") as span:
            span.set_attributes({"harvest.order": self.order, "harvest.block": ORDER["block"]})
            try:
                self.run_order()
            except Failed as e:
                span.record_exception(e)
                span.set_status(Status(StatusCode.ERROR, str(e)))
            return f"{span.get_span_context().trace_id:032x}"


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the harvest scenarios under OpenLLMetry's OpenAI instrumentor on ``provider``;
    run name -> trace id."""
    if not labels:
        return {}
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer(respond=respond) as server:
            client = OpenAI(
                base_url=server.base_url("corpus-harvest"), api_key="test", max_retries=0
            )
            tracer = provider.get_tracer("harvest-app")
            return {label.run: Harvest(label, client, tracer).run() for label in labels}
    finally:
        instrumentor.uninstrument()
        # 0.62.4's uninstrument names the method "Completions.create" on the module, which its
        # unwrap does not resolve: the wrappers stay on the clients (the async one too, which
        # AutoGen's model client uses); unwrap them on the classes
        unwrap(Completions, "create")
        unwrap(AsyncCompletions, "create")

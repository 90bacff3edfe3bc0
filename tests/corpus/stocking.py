"""A stocking agent: an angling trust stocking a river reach with hatchery trout, a hand-written
planner-executor app calling the model through LiteLLM (``litellm.completion``) traced by
LiteLLM's own OpenTelemetry callback (``litellm.integrations.opentelemetry.OpenTelemetry`` on the
play's tracer provider, in ``litellm.callbacks``; ``USE_OTEL_LITELLM_REQUEST_SPAN=true``, as
LiteLLM's docs say for several calls under one app span: a ``litellm_request`` span per call
with a ``raw_gen_ai_request`` child), plus the app's own plain OpenTelemetry spans where a
LiteLLM user adds them (``stocking_job``, ``plan``, ``task <key>``, ``verify_release_day``,
``watch_river``), against a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)``). No planscope code.

Sealed-22 split only (see README.md). The task: the trust ordered a reach stocked with brown
trout; reserve a lot of fish at a hatchery (a stock list read page by page), obtain the river
authority's release consent for the day (granted later: polled), book the hatchery's tanker,
pay the hatchery under the trust's stocking licence, tell the angling club.

* the planner is asked for **structured output into a pydantic model**, as LiteLLM's docs show
  (``litellm.completion(..., response_format=StockingPlan)``, the answer's content validated
  with ``StockingPlan.model_validate_json``): ``tasks`` of ``key`` (snake_case), ``goal``,
  ``tool`` and ``inputs``, each input an ``arg`` with a ``literal`` or a ``from_task`` naming
  the earlier task whose result it takes (the app fills it in). After a clash the app goes on
  with **the same planner conversation** (the plan it answered, then what went wrong and which
  tasks are done) and the planner answers the **whole plan again, revised**; the app skips the
  tasks already done by key;
* the executor is one LiteLLM conversation per task attempt with the task's tools; its final
  answer is a JSON ``TaskOutcome``: ``state`` (``complete``, ``try_again``, ``rethink``,
  ``abandon``), ``output``, ``note``;
* the services answer a refusal as a declined answer with advice,
  ``{"status": "declined", "advice": <advice>, "message": <text>}``: ``wait`` (call again in
  the same conversation for a later ``window``), ``try_later`` (the app runs the task again, up
  to 8 attempts), ``rethink`` (a revised plan, up to 4 plans), ``stop`` (final).

The planner trusts the bailiff's notes over the trust's order: the scenario's wrong value comes
from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer
from pydantic import BaseModel

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import RUNAWAY, Label

# LiteLLM fetches a price list from the internet when imported unless told to use its own copy
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm
from litellm.integrations.custom_logger import CustomLogger
from litellm.integrations.opentelemetry import OpenTelemetry, OpenTelemetryConfig

ORDER: dict[str, Any] = {
    "reach": "usk-reach-4",
    "species": "brown_trout",
    "fish": 2400,
    "release_day": "2027-04-08",
    "licence": "FSL-5521",
    "club": "secretary@uskanglers.example",
}
PRICE_PER_FISH = 3
MAX_TASK_ATTEMPTS = 8
MAX_PLANS = 4
MAX_STATUS_CHECKS = 12
TRACER = "litellm"
"""The instrumentation scope of LiteLLM's OpenTelemetry callback."""
APP_TRACER = "stocking-app"


class JobFailed(RuntimeError):
    """The reach was not stocked, paid for and the club told, or went wrong after."""


# --- the plan: structured output --------------------------------------------------------------
class TaskInput(BaseModel):
    """One argument of a task's tool call: a ``literal`` or an earlier task's result."""

    arg: str
    literal: str
    from_task: str | None


class PlannedTask(BaseModel):
    key: str
    goal: str
    tool: str
    inputs: list[TaskInput]


class StockingPlan(BaseModel):
    """The planner's structured output."""

    tasks: list[PlannedTask]


class TaskOutcome(BaseModel):
    state: Literal["complete", "try_again", "rethink", "abandon"]
    output: str
    note: str


def call_arguments(task: PlannedTask, outputs: dict[str, str]) -> dict[str, Any]:
    """The tool call's arguments: literals, earlier tasks' outputs filled in.

    >>> t = PlannedTask(key="pay", goal="", tool="pay_hatchery", inputs=[
    ...     TaskInput(arg="lot", literal="", from_task="reserve"),
    ...     TaskInput(arg="licence", literal="FSL-1", from_task=None)])
    >>> call_arguments(t, {"reserve": "LOT-7"})
    {'lot': 'LOT-7', 'licence': 'FSL-1'}
    """
    return {i.arg: outputs[i.from_task] if i.from_task else i.literal for i in task.inputs}


# --- the scripted model -----------------------------------------------------------------------
def _field(text: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", text, re.MULTILINE)
    return m.group(1) if m else ""


def _in(arg: str, literal: Any = "", from_task: str | None = None) -> dict[str, Any]:
    return {"arg": arg, "literal": "" if from_task else str(literal), "from_task": from_task}


def _planner(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The planner's whole plan: the order, the notes trusted over it, the day or licence the
    last problem names."""
    users = [str(m.get("content")) for m in messages if m.get("role") == "user"]
    facts = json.loads(_field(users[0], "Order")) | json.loads(_field(users[0], "Notes") or "{}")
    day = re.search(r"next open day (\d{4}-\d\d-\d\d)", users[-1])
    licence = re.search(r"renewed as (FSL-\d+)", users[-1])
    tasks = [
        ("reserve_fish", f"Reserve {facts['fish']} {facts['species']} at a hatchery",
         "search_hatchery_lots", [_in("species", facts["species"]), _in("fish", facts["fish"])]),
        ("obtain_consent", f"Obtain the release consent for {facts['reach']}",
         "apply_release_consent",
         [_in("reach", facts["reach"]), _in("day", day.group(1) if day else facts["release_day"]),
          _in("lot", from_task="reserve_fish")]),
        ("book_tanker", "Book the hatchery's tanker to the release point", "book_tanker",
         [_in("lot", from_task="reserve_fish"), _in("consent", from_task="obtain_consent")]),
        ("pay_hatchery", "Pay the hatchery under the stocking licence", "pay_hatchery",
         [_in("lot", from_task="reserve_fish"),
          _in("licence", licence.group(1) if licence else facts["licence"])]),
        ("notify_club", "Tell the angling club the release day", "notify_angling_club",
         [_in("tanker", from_task="book_tanker"), _in("payment", from_task="pay_hatchery"),
          _in("email", facts["club"])]),
    ]  # fmt: skip
    plan = {"tasks": [{"key": k, "goal": g, "tool": t, "inputs": i} for k, g, t, i in tasks]}
    return {"role": "assistant", "content": json.dumps(plan)}


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"call_{name}_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _outcome(state: str, output: str = "", note: str = "") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": json.dumps({"state": state, "output": output, "note": note}),
    }


def _executor(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The executor's turn: make the call, call again for a later window when told to wait,
    read the next page, check a pending consent until granted, answer the outcome."""
    m = re.search(r"Call `(\w+)` with: (\{.*\})$", task, re.MULTILINE)
    assert m is not None, task
    name, args = m.group(1), json.loads(m.group(2))
    results = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
    n = len(results)
    if not results:
        return _call(n, name, args)
    seen = json.loads(results[-1])
    if seen.get("status") == "declined":
        advice, text = seen["advice"], seen["message"]
        if advice == "wait":
            waits = sum('"wait"' in r for r in results)
            return _call(n, name, args | {"window": f"{8 + waits:02d}:00-{9 + waits:02d}:00"})
        state = {"try_later": "try_again", "rethink": "rethink"}.get(advice, "abandon")
        return _outcome(state, note=f"{advice}: {text}")
    if "more_from" in seen:
        return _call(n, name, args | {"from_lot": seen["more_from"]})
    if seen.get("status") == "under_review":
        checks = sum(r.count('"under_review"') for r in results) - 1
        if checks >= MAX_STATUS_CHECKS:
            return _outcome("abandon", note=f"consent {seen['application']} still under review")
        return _call(n, "consent_status", {"application": seen["application"]})
    return _outcome("complete", output=str(seen["ref"]))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion: the planner's plan when asked for a
    ``StockingPlan``, the executor's next tool call or outcome otherwise.

    >>> msg = respond({"messages": [{"role": "user", "content": 'Call `f` with: {"a": "1"}'}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"a": "1"}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    if body.get("response_format"):
        return completion(body, _planner(messages))
    task = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    return completion(body, _executor(messages, task))


# --- the world --------------------------------------------------------------------------------
def _declined(advice: str, message: str) -> dict[str, Any]:
    return {"status": "declined", "advice": advice, "message": message}


@dataclass
class World:
    """The services: the hatcheries' stock list, the river authority, the tanker, the
    hatchery's accounts, the angling club's mailbox."""

    label: Label
    errors: list[str] = field(default_factory=list)
    lots: dict[str, str] = field(default_factory=dict)
    """Lot -> its species."""
    consents: dict[str, dict[str, Any]] = field(default_factory=dict)
    tankers: dict[str, str] = field(default_factory=dict)
    licences: set[str] = field(default_factory=lambda: {ORDER["licence"]})
    payments: dict[str, int] = field(default_factory=dict)
    open_day: str = ORDER["release_day"]
    """The day the authority lets fish into the reach."""

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        self.open_day = self.label.params.get("open_day", ORDER["release_day"])

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, task: str) -> dict[str, Any] | None:
        """The scenario's next refusal when the call belongs to the task it targets."""
        if not self.errors or task != self.params.get("task"):
            return None
        text = self.errors.pop(0)
        if not self.errors and self.label.kind == RUNAWAY:
            return _declined("stop", f"{text}; the request was withdrawn")
        how = self.params.get("advice")
        if how == "wait":
            return _declined("wait", text)
        if how == "replans" and len(self.errors) % 2 == 0:
            licence = f"FSL-{5600 + 43 * len(self.errors)}"
            self.licences.add(licence)
            return _declined("rethink", f"{text}; the stocking licence was renewed as {licence}")
        return _declined("try_later", text)


def services(world: World, task: str) -> dict[str, Callable[..., dict[str, Any]]]:
    """The services for one task's calls."""

    def search_hatchery_lots(
        species: str, fish: str, from_lot: int = 0, window: str = ""
    ) -> dict[str, Any]:
        if fault := world.fault(task):
            return fault
        pages = int(world.params.get("pages", 1))
        if from_lot // 3 + 1 < pages:
            return {"lots": [f"L{from_lot + n}" for n in range(3)], "reserved": True,
                    "more_from": from_lot + 3}  # fmt: skip
        lot = f"LOT-{species[:2].upper()}-{pages}"
        world.lots[lot] = species
        return {"ref": lot, "species": species, "fish": int(fish)}

    def apply_release_consent(reach: str, day: str, lot: str, window: str = "") -> dict[str, Any]:
        if fault := world.fault(task):
            return fault
        if day != world.open_day and day == ORDER["release_day"]:
            return _declined(
                "rethink", f"{reach} is closed to releases on {day} (spawning survey); next open "
                f"day {world.open_day}",
            )  # fmt: skip
        if world.lots.get(lot) != ORDER["species"]:
            return _declined(
                "stop", f"{reach} may only be stocked with {ORDER['species']}; lot {lot} holds "
                f"{world.lots.get(lot)}",
            )  # fmt: skip
        application = f"RA-{world.label.seed}-{len(world.consents)}"
        world.consents[application] = {"reach": reach, "day": day, "checks": 0}
        return {"application": application, "status": "under_review"}

    def consent_status(application: str) -> dict[str, Any]:
        entry = world.consents[application]
        entry["checks"] += 1
        if world.label.scenario == "loop_poll_stuck" or entry["checks"] < int(
            world.params.get("polls", 1)
        ):
            return {"application": application, "status": "under_review"}
        return {"application": application, "status": "granted", "ref": application}

    def book_tanker(lot: str, consent: str, window: str = "") -> dict[str, Any]:
        if fault := world.fault(task):
            return fault
        reach = world.consents[consent]["reach"]
        if reach != ORDER["reach"]:
            return _declined("stop", f"the tanker has no access point on {reach}")
        tanker = f"TNK-{world.label.seed}-{len(world.tankers)}"
        world.tankers[tanker] = lot
        return {"ref": tanker, "lot": lot, "reach": reach}

    def pay_hatchery(lot: str, licence: str, window: str = "") -> dict[str, Any]:
        if fault := world.fault(task):
            return fault
        if licence not in world.licences:
            return _declined("stop", f"no stocking licence {licence} on the hatchery's books")
        world.payments[lot] = PRICE_PER_FISH * int(ORDER["fish"])
        return {"ref": f"PAY-{world.label.seed}", "amount": world.payments[lot]}

    def notify_angling_club(
        tanker: str, payment: str, email: str, window: str = ""
    ) -> dict[str, Any]:
        if fault := world.fault(task):
            return fault
        if world.tankers.get(tanker) not in world.payments:
            return _declined("stop", f"tanker {tanker} carries an unpaid lot")
        return {"ref": f"MSG-{world.label.seed}", "email": email}

    fns: list[Callable[..., dict[str, Any]]] = [
        search_hatchery_lots, apply_release_consent, consent_status, book_tanker, pay_hatchery,
        notify_angling_club,
    ]  # fmt: skip
    return {f.__name__: f for f in fns}


def _schema(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


# --- the app ----------------------------------------------------------------------------------
@dataclass
class Job:
    """One stocking order."""

    label: Label
    base_url: str
    tracer: Tracer
    world: World
    id: str

    def ask(self, messages: list[dict[str, Any]], **extra: Any) -> Any:
        return (
            litellm.completion(
                model=f"openai/{MODEL}",
                api_base=self.base_url,
                api_key="test",
                messages=messages,
                **extra,
            )
            .choices[0]
            .message
        )

    def brief(self) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("reach", "release_day", "species", "licence")
            if k in self.label.params
        }
        return f"Order: {json.dumps({'job': self.id} | ORDER)}\nNotes: {json.dumps(notes)}\n"

    def plan(self, chat: list[dict[str, Any]], revision: int, reason: str) -> StockingPlan:
        with self.tracer.start_as_current_span("plan") as span:
            span.set_attributes({"plan.revision": revision, "plan.reason": reason})
            msg = self.ask(chat, response_format=StockingPlan)
            chat.append({"role": "assistant", "content": msg.content})
            return StockingPlan.model_validate_json(msg.content)

    def attempt(self, task: PlannedTask, attempt: int, outputs: dict[str, str]) -> TaskOutcome:
        """One executor conversation for one attempt of ``task``."""
        with self.tracer.start_as_current_span(f"task {task.key}") as span:
            args = call_arguments(task, outputs)
            span.set_attributes(
                {"task.key": task.key, "task.attempt": attempt, "task.tool": task.tool}
            )
            fns = services(self.world, task.key)
            tools = [_schema(task.tool), _schema("consent_status")]
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": "You carry out one task of a river stocking plan."},
                {"role": "user", "content": (
                    f"Task: {task.key}\n{task.goal}\nCall `{task.tool}` with: {json.dumps(args)}\n"
                    "Answer with a JSON TaskOutcome: state (complete, try_again, rethink, "
                    "abandon), output, note.")},
            ]  # fmt: skip
            while (msg := self.ask(messages, tools=tools)).tool_calls:
                messages.append(msg.model_dump(exclude_none=True))
                for call in msg.tool_calls:
                    result = fns[call.function.name](**json.loads(call.function.arguments))
                    messages.append(
                        {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
                    )
            outcome = TaskOutcome.model_validate_json(msg.content)
            span.set_attributes(
                {
                    "task.state": outcome.state,
                    "task.output": outcome.output,
                    "task.note": outcome.note,
                }
            )
            if outcome.state == "abandon":
                span.set_status(Status(StatusCode.ERROR, outcome.note))
            return outcome

    def run(self) -> str:
        """Plan, run the tasks (again, re-planned), check the release day, watch the river;
        the trace id."""
        with self.tracer.start_as_current_span("stocking_job") as root:
            root.set_attribute("stocking.job", self.id)
            trace_id = f"{root.get_span_context().trace_id:032x}"
            try:
                self._work()
            except JobFailed as exc:
                root.set_status(Status(StatusCode.ERROR, str(exc)))
                root.set_attribute("stocking.outcome", "failed")
            else:
                root.set_attribute("stocking.outcome", "stocked")
        return trace_id

    def _work(self) -> None:
        chat: list[dict[str, Any]] = [
            {"role": "system", "content": "You plan river stockings for an angling trust."},
            {"role": "user", "content": self.brief()},
        ]
        plan, plans = self.plan(chat, 1, ""), 1
        outputs: dict[str, str] = {}
        while task := next((t for t in plan.tasks if t.key not in outputs), None):
            for attempt in range(1, MAX_TASK_ATTEMPTS + 1):
                outcome = self.attempt(task, attempt, outputs)
                if outcome.state != "try_again":
                    break
            problem = f"{task.key}: {outcome.note}"
            if outcome.state == "complete":
                outputs[task.key] = outcome.output
            elif outcome.state == "rethink" and plans < MAX_PLANS:
                plans += 1
                chat.append({"role": "user", "content": (
                    f"Task {problem}\nDone so far: {json.dumps(outputs)}\n"
                    "Send the whole plan again, revised.")})  # fmt: skip
                plan = self.plan(chat, plans, problem)
            else:
                raise JobFailed(problem)
        self.verify_release_day(outputs["obtain_consent"])
        self.watch_river()

    def verify_release_day(self, consent: str) -> None:
        """The trust's own check once the club is told: the fish go in on the reach's open day."""
        with self.tracer.start_as_current_span("verify_release_day") as span:
            day = self.world.consents[consent]["day"]
            span.set_attributes({"release.day": day, "release.open_day": self.world.open_day})
            if day != self.world.open_day:
                raise JobFailed(
                    f"consented release on {day}, the reach opens {self.world.open_day}"
                )

    def watch_river(self) -> None:
        """Three gauge readings on the reach before the release."""
        with self.tracer.start_as_current_span("watch_river") as span:
            for reading in range(1, 4):
                if self.label.scenario == "external_flood" and reading > int(
                    self.label.params["polls"]
                ):
                    raise JobFailed(
                        f"the {ORDER['reach']} gauge is in flood; the authority suspended all "
                        "releases"
                    )
                span.add_event("gauge", {"reading": reading, "level_m": 0.6 + reading / 100})


class _Settled(CustomLogger):
    """Counts the calls LiteLLM has finished logging: its callbacks run on worker threads after
    the call returns, one after another, so once this one has seen a call, the OpenTelemetry
    callback before it has ended that call's spans."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = 0
        self.changed = threading.Condition()

    def log_success_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        with self.changed:
            self.seen += 1
            self.changed.notify_all()

    def wait_for(self, calls: int) -> None:
        with self.changed:
            if not self.changed.wait_for(lambda: self.seen >= calls, timeout=60):
                raise RuntimeError(f"LiteLLM logged {self.seen} of {calls} calls in 60 s")


@contextmanager
def _litellm_traced(provider: TracerProvider) -> Iterator[_Settled]:
    """LiteLLM's OpenTelemetry callback on ``provider`` while the block runs; every callback
    list of LiteLLM's (where it copies ``litellm.callbacks`` to) and the environment as before
    afterwards, so no other agent's LiteLLM call (DSPy's) is traced by it."""
    saved = os.environ.get("USE_OTEL_LITELLM_REQUEST_SPAN")
    os.environ["USE_OTEL_LITELLM_REQUEST_SPAN"] = "true"
    logger = logging.getLogger("LiteLLM")  # it warns that the proxy server is not installed
    level = logger.level
    logger.setLevel(logging.ERROR)
    otel = OpenTelemetry(config=OpenTelemetryConfig(), tracer_provider=provider)
    settled = _Settled()
    ours = (otel, settled)
    callbacks = list(litellm.callbacks)
    litellm.callbacks = [*callbacks, *ours]
    try:
        yield settled
    finally:
        litellm.callbacks = callbacks
        for value in list(vars(litellm).values()):
            if isinstance(value, list):
                value[:] = [v for v in value if not any(v is o for o in ours)]
        logger.setLevel(level)
        if saved is None:
            os.environ.pop("USE_OTEL_LITELLM_REQUEST_SPAN", None)
        else:
            os.environ["USE_OTEL_LITELLM_REQUEST_SPAN"] = saved


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the stocking scenarios with LiteLLM's OpenTelemetry callback and the app's spans on
    ``provider``; run name -> trace id."""
    if not labels:
        return {}
    out = {}
    with _litellm_traced(provider) as settled, ModelServer(respond=respond) as server:
        tracer = provider.get_tracer(APP_TRACER)
        url = server.base_url("corpus-stocking")
        for label in labels:
            job = Job(label, url, tracer, World(label), f"STK-{label.seed % 9000 + 1000}")
            out[label.run] = job.run()
        settled.wait_for(len(server.log))
    return out

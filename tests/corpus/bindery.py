"""A conservation bindery rebinding a water-damaged parish register, written by hand on Mistral's
``mistralai`` SDK (no agent framework): a planner call with **structured output**
(``client.chat.parse(response_format=Worksheet)``, the plan a pydantic ``Worksheet``), then per
operation attempt an executor conversation (``client.chat.complete`` with ``tools``; the app runs
the functions the model calls and sends ``tool`` messages back until the model answers in
words); re-runs and re-plans decided by the app. Traced by OpenLLMetry's Mistral instrumentor
(``MistralAiInstrumentor().instrument(tracer_provider=...)``, prompts recorded as by default)
plus the app's own spans written as traceloop-sdk's decorators write them (``@workflow`` /
``@task`` / ``@agent`` / ``@tool``: ``traceloop.span.kind``, ``traceloop.entity.name``,
``traceloop.entity.input`` / ``output`` as ``{"args": [...], "kwargs": {...}}`` JSON), by hand:
traceloop-sdk itself would pull every OpenLLMetry instrumentor and an exporter. The model: a
scripted model behind the small fake chat completions API of :mod:`tests.corpus._fake_mistral`,
reached by the SDK over HTTP. No planscope code.

Sealed-41 split only (see README.md). The job: a county record office sends a parish register
for rebinding. Find a covering skin of the job's tannage in the tannery's catalogue (read page
by page), book a standing press on the bench day, have the skin's accelerated-ageing test run
(a polled test), bill the record office's account, email the archivist the notice. As a Mistral
SDK user writes it, messages as plain dicts the way Mistral's function-calling guide does:

* the planner's ``Worksheet`` is ``{"job", "revision", "operations": [{"no", "op", "purpose",
  "service", "inputs"}]}``, an input ``"=op"`` standing for that earlier operation's result
  (a spreadsheet reference); after a ``rethink`` outcome the planner is asked again with the
  operations finished and every problem so far, and answers the next revision;
* the bindery's services raise; the app's loop catches the error and returns it as the tool
  message **``ERR <KIND>|<hint>|<text>``** (a pipe-separated workshop record):
  ``HOLD|14:20|...`` (the model calls again with ``at`` the time named, inside its
  conversation), ``LATER||...`` (the model answers ``again``, the app runs the operation again),
  ``SWAP|use X for Y|...`` (``rethink``: the app plans again), ``STOP||...`` (``abandoned``:
  the job fails);
* the executor follows the catalogue's ``next_page`` and polls a queued ageing test, ending
  ``timed_out`` after :data:`MAX_POLLS` checks; it ends every conversation with a two-line
  answer ``Outcome: <finished|again|rethink|abandoned|timed_out>`` / ``Result: <value>``.

The planner trusts the binder's notes over the job ticket: a scenario's wrong value comes from a
note. This agent has no scenario of an executor starved of context (no starvation label).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from mistralai import Mistral, ToolTypedDict
from opentelemetry import trace
from opentelemetry.instrumentation.mistralai import MistralAiInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from pydantic import BaseModel

from ._fake_mistral import MODEL, Answer, MistralServer
from ._labels import Label

TRACER = "bindery"
WORKFLOW = "conserve_volume"
JOB: dict[str, Any] = {
    "job": "CB-4417",
    "client": "Wyvern County Record Office",
    "volume": "St Edith's parish register, 1754-1812",
    "leaves": 212,
    "tannage": "alum-tawed",
    "bench_day": "2027-05-18",
    "press": "Standing Press 2",
    "account": "WCRO-31746",
    "fee": 1860.0,
    "email": "archivist@wyvern-cro.example",
}
MAX_OP_ATTEMPTS = 8
MAX_PLANS = 5
MAX_HOLDS = 8
"""``HOLD`` records in one executor conversation before the model gives up."""
MAX_POLLS = 12
MAX_TURNS = 40
"""Model calls in one executor conversation (the app's guard on the function-calling loop)."""
PLANNER = "You plan a conservation bindery's jobs. Answer the job's worksheet."
EXECUTOR = (
    "You are the bindery's bench clerk. Carry out the one operation you are given with the "
    "tools, then answer two lines: 'Outcome: finished|again|rethink|abandoned|timed_out' and "
    "'Result: <value or reason>'."
)
REF = "="
"""A worksheet input ``"=op"`` stands for that earlier operation's result."""
OUTCOMES = ("finished", "again", "rethink", "abandoned", "timed_out")


class Operation(BaseModel):
    """One line of the worksheet: an operation calling one service."""

    no: int
    op: str
    purpose: str
    service: str
    inputs: dict[str, str | int | float]


class Worksheet(BaseModel):
    """The planner's structured output."""

    job: str
    revision: int
    operations: list[Operation]


def _function(name: str, description: str, **props: str) -> ToolTypedDict:
    """A tool definition; a property whose type ends in ``?`` is optional."""
    schema = {k: {"type": v.rstrip("?")} for k, v in props.items()}
    required = [k for k, v in props.items() if not v.endswith("?")]
    parameters = {"type": "object", "properties": schema, "required": required}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


TOOLS: list[ToolTypedDict] = [
    _function(
        "search_skins",
        "Covering skins of a tannage in the tannery's catalogue, a page at a time.",
        tannage="string",
        leaves="integer?",
        page="integer?",
    ),
    _function(
        "reserve_press",
        "Reserve a standing press on a bench day for a covering skin.",
        skin="string",
        press="string",
        day="string",
        at="string?",
    ),
    _function(
        "submit_ageing_test",
        "Send a skin to the conservation lab's accelerated-ageing test for a tannage.",
        skin="string",
        tannage="string",
        at="string?",
    ),
    _function("ageing_test_status", "Whether the lab has finished an ageing test.", test="string"),
    _function(
        "bill_account",
        "Bill the client's account for a job.",
        account="string",
        amount="number",
        job="string",
    ),
    _function(
        "email_archivist",
        "Email the client's archivist the job's notice.",
        email="string",
        booking="string",
        test="string",
        at="string?",
    ),
]


# --- the scripted model -------------------------------------------------------------------
@dataclass
class Call:
    """A function call the conversation holds, with its tool message."""

    name: str
    args: dict[str, Any]
    result: str = ""


def _calls(messages: list[dict[str, Any]]) -> list[Call]:
    out: dict[str, Call] = {}
    for m in messages:
        for c in m.get("tool_calls") or []:
            arguments = c["function"]["arguments"]
            args = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
            out[c["id"]] = Call(c["function"]["name"], args)
        if m.get("role") == "tool" and m.get("tool_call_id") in out:
            out[m["tool_call_id"]].result = str(m.get("content") or "")
    return list(out.values())


def swaps(problems: list[str]) -> list[tuple[str, str]]:
    """The ``(use, for)`` pairs the problems name, in order.

    >>> swaps(["book_press: SWAP|use Standing Press 4 for Standing Press 2|the platen cracked"])
    [('Standing Press 4', 'Standing Press 2')]
    """
    return [
        (m.group(1), m.group(2))
        for p in problems
        if (m := re.search(r"\|use (.+?) for (.+?)\|", p))
    ]


def _worksheet(brief: str) -> Worksheet:
    """The planner's worksheet: the job ticket's facts, the binder's notes trusted over them;
    every value a problem says to swap is swapped (one swap after another); the operations
    finished are left out, the others keep their numbers."""
    lines = dict(re.findall(r"^(\w[\w' ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Job ticket"]) | json.loads(lines.get("Binder's notes", "{}"))
    finished: dict[str, str] = json.loads(lines.get("Finished", "{}"))
    problems = re.findall(r"^Problem: (.*)$", brief, re.MULTILINE)
    ops = [
        ("find_skin", f"Find a covering skin, {facts['tannage']}, for {facts['leaves']} leaves.",
         "search_skins", {"tannage": facts["tannage"], "leaves": facts["leaves"]}),
        ("book_press", f"Book {facts['press']} on {facts['bench_day']}.", "reserve_press",
         {"skin": f"{REF}find_skin", "press": facts["press"], "day": facts["bench_day"]}),
        ("test_ageing", f"Have the lab age-test the skin as {facts['tannage']}.",
         "submit_ageing_test", {"skin": f"{REF}find_skin", "tannage": facts["tannage"]}),
        ("charge_fee", f"Bill the {facts['fee']} GBP fee.", "bill_account",
         {"account": facts["account"], "amount": facts["fee"], "job": facts["job"]}),
        ("send_notice", f"Email {facts['client']} the notice.", "email_archivist",
         {"email": facts["email"], "booking": f"{REF}book_press", "test": f"{REF}test_ageing"}),
    ]  # fmt: skip
    out = []
    for no, (op, purpose, service, inputs) in enumerate(ops, 1):
        if op in finished:
            continue
        for use, instead in swaps(problems):
            inputs = {k: use if str(v) == instead else v for k, v in inputs.items()}
        out.append(Operation(no=no, op=op, purpose=purpose, service=service, inputs=inputs))
    return Worksheet(job=facts["job"], revision=len(problems) + 1, operations=out)


def _outcome(word: str, value: str) -> Answer:
    return Answer(f"Outcome: {word}\nResult: {value}")


def _execute(messages: list[dict[str, Any]]) -> Answer:
    """The executor's next move in its conversation."""
    order = str(messages[1]["content"])
    service = re.search(r"^Service: (\w+)$", order, re.MULTILINE)
    inputs = re.search(r"^Inputs: (.*)$", order, re.MULTILINE)
    if not service or not inputs:
        return _outcome("abandoned", "the operation names no service")
    args = json.loads(inputs.group(1))
    calls = _calls(messages)
    if not calls:
        return Answer("Calling the service.", [(service.group(1), args)])
    last = calls[-1]
    if last.result.startswith("ERR "):
        kind, hint, text = last.result.removeprefix("ERR ").split("|", 2)
        if kind == "HOLD":
            holds = sum(c.result.startswith("ERR HOLD|") for c in calls)
            if holds >= MAX_HOLDS:
                return _outcome("abandoned", f"still on hold after {holds} calls: {text}")
            return Answer(f"On hold until {hint}.", [(last.name, {**last.args, "at": hint})])
        word = {"LATER": "again", "SWAP": "rethink"}.get(kind, "abandoned")
        return _outcome(word, f"{kind}|{hint}|{text}")
    answer = json.loads(last.result)
    if "next_page" in answer:
        return Answer("Next page.", [(last.name, {**last.args, "page": answer["next_page"]})])
    if answer.get("state") == "queued":
        checks = sum(c.name == "ageing_test_status" for c in calls)
        if checks >= MAX_POLLS:
            return _outcome("timed_out", f"test {answer['test']} queued after {checks} checks")
        return Answer("Checking the test.", [("ageing_test_status", {"test": answer["test"]})])
    if "skins" in answer:
        return _outcome("finished", answer["skins"][0]["id"])
    return _outcome("finished", str(answer["id"]))


def respond(body: dict[str, Any]) -> Answer:
    """The scripted model's answer to one chat completions request.

    >>> brief = f"Job ticket: {json.dumps(JOB)}"
    >>> said = respond({"messages": [{"role": "system", "content": PLANNER},
    ...                              {"role": "user", "content": brief}]})
    >>> json.loads(said.content)["operations"][0]["inputs"]
    {'tannage': 'alum-tawed', 'leaves': 212}
    >>> respond({"messages": [{"role": "system", "content": "?"}]}).content
    'Not a bindery matter.'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = str(messages[0].get("content")) if messages else ""
    if PLANNER in system:
        return Answer(_worksheet(str(messages[1]["content"])).model_dump_json())
    if EXECUTOR in system:
        return _execute(messages)
    return Answer("Not a bindery matter.")


# --- the world ----------------------------------------------------------------------------
class WorkshopError(RuntimeError):
    """A service's refusal: a workshop record ``<KIND>|<hint>|<text>``."""

    def __init__(self, kind: str, text: str, hint: str = "") -> None:
        super().__init__(f"{kind}|{hint}|{text}")


class JobFailed(RuntimeError):
    """The volume could not be rebound (or came to harm after it was)."""


@dataclass
class Bindery:
    """The tannery, the presses, the lab, the ledger and the mail of one job."""

    label: Label
    errors: list[dict[str, str]] = field(default_factory=list)
    skins: dict[str, str] = field(default_factory=dict)
    bookings: dict[str, dict[str, Any]] = field(default_factory=dict)
    tests: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.errors = [dict(e) for e in self.label.params.get("errors", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, service: str, **carried: Any) -> None:
        """Raise the scenario's next error when ``service`` is the one it targets (an ``{old}``
        in its hint is the account the call carried)."""
        if self.errors and service == self.params.get("service"):
            e = self.errors.pop(0)
            hint = e.get("hint", "").format(old=carried.get("account", ""))
            raise WorkshopError(e["kind"], e["text"], hint)

    def search_skins(self, tannage: str, leaves: int = 0, page: int = 1) -> dict[str, Any]:
        self.fault("search_skins")
        if page < int(self.params.get("pages", 1)):
            spoken = [
                {"id": f"SK-R{page}{n}", "tannage": tannage, "reserved": True} for n in (1, 2)
            ]
            return {"skins": [], "reserved": spoken, "next_page": page + 1}
        skin = f"SK-{tannage.split('-')[0][:4].upper()}-{self.label.seed}"
        self.skins[skin] = tannage
        return {"skins": [{"id": skin, "tannage": tannage, "area_sqft": 9.5}]}

    def reserve_press(self, skin: str, press: str, day: str, at: str = "") -> dict[str, Any]:
        self.fault("reserve_press")
        other = self.params.get("press_to")
        if other and press == JOB["press"]:
            raise WorkshopError(
                "SWAP",
                f"the platen of {press} cracked under the last nipping",
                f"use {other} for {press}",
            )
        booking = f"PR-{day.replace('-', '')}-{len(self.bookings) + 1}"
        self.bookings[booking] = {"skin": skin, "press": press, "day": day}
        return {"id": booking, "press": press, "day": day, "at": at or "08:30"}

    def submit_ageing_test(self, skin: str, tannage: str, at: str = "") -> dict[str, Any]:
        self.fault("submit_ageing_test")
        tanned = self.skins.get(skin, "unknown")
        if tanned != JOB["tannage"]:
            raise WorkshopError(
                "STOP",
                f"a {tanned} skin fails the record office's archival standard "
                f"({JOB['tannage']} only); the lab will not age-test it",
            )
        test = f"AT-{self.label.seed}-{len(self.tests) + 1}"
        self.tests[test] = 0
        if "poll" in self.label.scenario:
            return {"test": test, "state": "queued"}
        return {"id": test, "state": "passed"}

    def ageing_test_status(self, test: str) -> dict[str, Any]:
        self.tests[test] += 1
        stuck = self.label.scenario == "loop_poll_stuck"
        if stuck or self.tests[test] < int(self.params.get("polls", 0)):
            return {"test": test, "state": "queued"}
        return {"id": test, "state": "passed"}

    def bill_account(self, account: str, amount: float, job: str) -> dict[str, Any]:
        self.fault("bill_account", account=account)
        if account != JOB["account"]:
            raise WorkshopError("STOP", f"no account {account} on the bindery's ledger")
        return {"id": f"INV-{self.label.seed}", "amount": amount}

    def email_archivist(self, email: str, booking: str, test: str, at: str = "") -> dict[str, Any]:
        self.fault("email_archivist")
        return {"id": f"MSG-{booking}", "to": email, "at": at or "now"}


# --- the app ------------------------------------------------------------------------------
def resolve(inputs: dict[str, Any], finished: dict[str, str]) -> dict[str, Any]:
    """An operation's inputs with every ``"=op"`` replaced by that operation's result.

    >>> resolve({"skin": "=find_skin", "tannage": "alum-tawed"}, {"find_skin": "SK-ALUM-1"})
    {'skin': 'SK-ALUM-1', 'tannage': 'alum-tawed'}
    """
    return {
        k: finished.get(v.removeprefix(REF), v) if isinstance(v, str) and v.startswith(REF) else v
        for k, v in inputs.items()
    }


class Job:
    """One rebinding job: worksheets, operation attempts and service calls under the app's
    workflow span, then the app's check and watch."""

    def __init__(self, label: Label, client: Mistral, tracer: trace.Tracer) -> None:
        self.label = label
        self.world = Bindery(label)
        self.client = client
        self.tracer = tracer

    @contextmanager
    def entity(self, kind: str, name: str, **kwargs: Any) -> Iterator[trace.Span]:
        """A span as traceloop-sdk's ``@{kind}(name=...)`` decorator writes it around a call
        with ``kwargs``; a raised exception is recorded on it and goes on."""
        with self.tracer.start_as_current_span(f"{name}.{kind}") as span:
            span.set_attribute("traceloop.span.kind", kind)
            span.set_attribute("traceloop.entity.name", name)
            span.set_attribute("traceloop.workflow.name", WORKFLOW)
            span.set_attribute(
                "traceloop.entity.input", json.dumps({"args": [], "kwargs": kwargs}, default=str)
            )
            yield span

    def brief(self) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("tannage", "bench_day", "account")
            if k in self.label.params
        }
        lines = [
            f"Rebind {JOB['volume']} for job {JOB['job']} (docket B-{self.label.seed}).",
            f"Job ticket: {json.dumps(JOB)}",
        ]
        if notes:
            lines.append(f"Binder's notes: {json.dumps(notes)}")
        return "\n".join(lines)

    def plan(self, finished: dict[str, str], problems: list[str]) -> list[Operation]:
        """Ask the planner for a worksheet (again, with what is finished and every problem)."""
        brief = self.brief()
        if finished or problems:
            brief += f"\nFinished: {json.dumps(finished)}"
            brief += "".join(f"\nProblem: {p}" for p in problems)
        with self.entity("task", "draft_worksheet", brief=brief) as span:
            response = self.client.chat.parse(
                response_format=Worksheet,
                model=MODEL,
                messages=[
                    {"role": "system", "content": PLANNER},
                    {"role": "user", "content": brief},
                ],
                temperature=0,
            )
            message = response.choices[0].message if response.choices else None
            sheet = message.parsed if message else None
            if sheet is None:
                raise JobFailed("the planner answered no worksheet")
            span.set_attribute("traceloop.entity.output", sheet.model_dump_json())
            return sheet.operations

    def call(self, name: str, arguments: str) -> str:
        """Run one function the model called under a tool span; the tool message's content
        (the workshop record of a refusal, as the model is told to read it)."""
        args = json.loads(arguments)
        try:
            with self.entity("tool", name, **args) as span:
                result = json.dumps(getattr(self.world, name)(**args))
                span.set_attribute("traceloop.entity.output", result)
                return result
        except WorkshopError as exc:
            return f"ERR {exc}"

    def attempt(self, op: Operation, attempt: int, finished: dict[str, str]) -> tuple[str, str]:
        """One executor conversation for an operation under an agent span; its outcome and
        result."""
        inputs = resolve(op.inputs, finished)
        order = (
            f"Operation {op.no} {op.op} (attempt {attempt}): {op.purpose}\n"
            f"Service: {op.service}\nInputs: {json.dumps(inputs)}"
        )
        with self.entity(
            "agent", "bench_clerk", op=op.op, attempt=attempt, service=op.service, inputs=inputs
        ) as span:
            messages: list[Any] = [
                {"role": "system", "content": EXECUTOR},
                {"role": "user", "content": order},
            ]
            said = ""
            for _ in range(MAX_TURNS):
                response = self.client.chat.complete(
                    model=MODEL, messages=messages, tools=TOOLS, tool_choice="auto"
                )
                message = response.choices[0].message
                messages.append(message)
                if not message.tool_calls:
                    said = str(message.content or "")
                    break
                for tool_call in message.tool_calls:
                    arguments = tool_call.function.arguments
                    messages.append(
                        {
                            "role": "tool",
                            "name": tool_call.function.name,
                            "content": self.call(
                                tool_call.function.name,
                                arguments if isinstance(arguments, str) else json.dumps(arguments),
                            ),
                            "tool_call_id": tool_call.id,
                        }
                    )
            found = dict(re.findall(r"^(Outcome|Result): (.*)$", said, re.MULTILINE))
            outcome, result = found.get("Outcome", ""), found.get("Result", "")
            if outcome not in OUTCOMES:
                outcome, result = "timed_out", f"no outcome after {MAX_TURNS} turns"
            span.set_attribute("traceloop.entity.output", json.dumps(said))
            if outcome != "finished":
                span.set_status(Status(StatusCode.ERROR, said))
            return outcome, result

    def carry_out(self) -> None:
        """Plan, run each operation (again after ``again``), plan again after ``rethink``."""
        finished: dict[str, str] = {}
        problems: list[str] = []
        ops = self.plan(finished, problems)
        while ops:
            op = ops[0]
            for attempt in range(1, MAX_OP_ATTEMPTS + 1):
                outcome, result = self.attempt(op, attempt, finished)
                if outcome != "again":
                    break
            if outcome == "finished":
                finished[op.op] = result
                ops = ops[1:]
            elif outcome == "rethink" and len(problems) + 1 < MAX_PLANS:
                problems.append(f"{op.op}: {result}")
                ops = self.plan(finished, problems)
            else:
                raise JobFailed(f"{op.op}: {outcome}: {result}")

    def verify(self) -> None:
        """The app's check: the press is booked on the job ticket's bench day."""
        booking = list(self.world.bookings.values())[-1]
        with self.entity("task", "verify_bench_day", booking=booking) as span:
            if booking["day"] != JOB["bench_day"]:
                raise JobFailed(
                    f"the press is booked for {booking['day']}, the job ticket's bench day is "
                    f"{JOB['bench_day']}"
                )
            span.set_attribute("traceloop.entity.output", json.dumps("bench day matches"))

    def watch(self) -> None:
        """The app's watch of the rebound volume back in the strongroom: a check a week."""
        with self.entity("task", "watch_volume", volume=JOB["volume"]) as span:
            weeks = int(self.label.params.get("polls", 1))
            for week in range(1, weeks + 2):
                if self.label.scenario.startswith("external_") and week > weeks:
                    span.add_event("strongroom", {"week": week, "state": "mould"})
                    raise JobFailed("a burst pipe flooded the strongroom; mould bloom on the bay")
                span.add_event("strongroom", {"week": week, "state": "dry"})
            span.set_attribute("traceloop.entity.output", json.dumps("volume sound"))

    def run(self) -> str:
        """Rebind the volume under the app's workflow span; the OTel trace id."""
        with self.tracer.start_as_current_span(
            f"{WORKFLOW}.workflow", record_exception=False, set_status_on_exception=False
        ) as root:
            root.set_attribute("traceloop.span.kind", "workflow")
            root.set_attribute("traceloop.entity.name", WORKFLOW)
            root.set_attribute("traceloop.workflow.name", WORKFLOW)
            root.set_attribute(
                "traceloop.entity.input", json.dumps({"args": [self.brief()], "kwargs": {}})
            )
            trace_id = format(root.get_span_context().trace_id, "032x")
            try:
                self.carry_out()
                self.verify()
                self.watch()
            except JobFailed as exc:
                root.record_exception(exc)
                root.set_status(Status(StatusCode.ERROR, str(exc)))
                root.set_attribute("traceloop.entity.output", json.dumps(f"failed: {exc}"))
            else:
                root.set_attribute("traceloop.entity.output", json.dumps("rebound"))
        return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the bindery scenarios with the instrumentor's and the app's spans on ``provider``;
    run name -> trace id."""
    if not labels:
        return {}
    instrumentor = MistralAiInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer(TRACER)
    try:
        with MistralServer(respond) as server:
            client = Mistral(api_key="test", server_url=server.server_url("corpus-bindery"))
            return {label.run: Job(label, client, tracer).run() for label in labels}
    finally:
        instrumentor.uninstrument()

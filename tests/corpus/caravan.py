"""A touring-caravan hire depot sending a caravan to a hirer's campsite pitch, written by hand on
the ``openai`` client's **asynchronous** ``AsyncOpenAI`` (``client.chat.completions.create(...,
tools=[...])``, the app's own function-calling loop), traced by **MLflow's OpenAI autologging**
(``mlflow.openai.autolog()``) plus the app's own ``mlflow.start_span`` / ``@mlflow.trace`` spans,
against a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)``). No planscope code.

Sealed-69 split only (see README.md). The task: find a free van of the hire's berths in the
region's paged fleet register, then, at the same time, have the van's gas installation inspected
(a job, polled) and book the hirer's pitch at the campsite for the arrival day; book a delivery
driver to tow the van to the pitch, charge the hirer's card, e-mail the hirer. As a team that
runs AWS Step Functions elsewhere writes it:

* the planner is asked for an **AWS Step Functions state machine in Amazon States Language**
  (``StartAt``, ``States``; ``Task`` states with ``Resource: arn:aws:states:::lambda:invoke``,
  ``Parameters.FunctionName`` and ``Parameters.Payload``, ``"key.$": "$.State.field"`` an earlier
  state's result, ``ResultPath``, ``Retry``, ``Next`` / ``End``; a ``Parallel`` state whose
  ``Branches`` are each a ``StartAt`` / ``States`` machine), parsed with ``json`` and run by the
  app (no AWS): each branch of a ``Parallel`` state runs concurrently (``asyncio.gather``), a
  branch's task results go into the execution's one document (``$.<state>``);
* each task-state attempt is one executor conversation (an ``AGENT`` span ``task <State>``):
  the model calls the function with the payload, the app runs it (a ``TOOL`` span per call,
  ``@mlflow.trace``) and hands back its result or its **Lambda error**
  ``{"errorType", "errorMessage"}``; the model answers a task result
  ``{"status": "SUCCEEDED", "output": {...}}`` or ``{"status": "FAILED", "error", "cause"}``;
* the depot's functions fail as ``Depot.Busy`` (with ``retry_after``: the model calls again
  ``after`` that time, in the same conversation), ``Depot.Transient`` (the state's ``Retry``
  names it: the app runs the state again, up to its ``MaxAttempts``), ``Depot.Conflict ... (use
  key=value)`` (the app asks for a new state machine, up to five), ``Depot.Rejected`` (final); a
  poll the executor gives up on fails as ``States.Timeout``;
* after the last state the app checks the pitch booking against the hire sheet (``check pitch
  booking``, a ``GUARDRAIL`` span) and watches the delivery (``watch delivery {van}``).

MLflow exports over OTLP with its **GenAI semantic-convention translation** on
(``MLFLOW_ENABLE_OTEL_GENAI_SEMCONV=true`` while the play runs), as a user sending MLflow's
traces to an OpenTelemetry backend would; the play's provider receives each span as MLflow's
OTLP processor translated it. The planner trusts the desk's notes over the hire sheet: the
scenario's wrong value comes from a note. This source records no context data (no starvation
label).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import mlflow
import mlflow.openai
from mlflow.entities import SpanEvent, SpanStatus, SpanStatusCode, SpanType
from mlflow.tracing.processor.otel import OtelSpanProcessor
from openai import AsyncOpenAI
from opentelemetry import context as otel_context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .museum import _mlflow_provider

HIRE: dict[str, Any] = {
    "hire": "HR-2291",
    "hirer": "Ines Alvarez",
    "email": "ines.alvarez@mail.example",
    "region": "Cumbria",
    "berths": 4,
    "campsite": "Fell Foot Park",
    "arrive": "2027-05-14",
    "nights": 4,
    "depot": "Kendal depot",
    "card": "CARD-4417-2093",
}
DEPOTS = {
    "Cumbria": "Kendal depot",
    "Northumberland": "Hexham depot",
    "Dumfries": "Lockerbie depot",
}
DELIVERY_AREA = {"Fell Foot Park", "Waterside House", "Park Cliffe"}
"""The campsites the Kendal depot's drivers tow to."""
LAMBDA = "arn:aws:states:::lambda:invoke"
TRANSIENT_ATTEMPTS = 8
MAX_MACHINES = 5
MAX_READS = 12
"""Inspection reads in one conversation before the executor gives up (``States.Timeout``)."""
MAX_TURNS = 30
PLANNER = (
    "You write the depot's hire runs as AWS Step Functions state machines in Amazon States "
    "Language (JSON only): Task states invoking the depot's Lambda functions with a Payload, "
    "'key.$': '$.<State>.<field>' for an earlier state's result, a Parallel state for work that "
    "can run at the same time. Trust the desk's notes over the hire sheet."
)
EXECUTOR = (
    "You run one task state of a hire run: call the function with the payload, follow "
    "next_token, poll a PENDING inspection, call again after a Depot.Busy's retry_after. Then "
    'answer the task result as JSON: {"status": "SUCCEEDED", "output": {...}} or '
    '{"status": "FAILED", "error": "<errorType>", "cause": "<errorMessage>"}.'
)


# --- the state machine -------------------------------------------------------------------
def task(function: str, payload: dict[str, Any], state: str, after: str | None) -> dict[str, Any]:
    """A ``Task`` state invoking one of the depot's Lambda functions.

    >>> task("book_driver", {"van.$": "$.FindVan.van"}, "BookDriver", None)["Parameters"]
    {'FunctionName': 'book_driver', 'Payload': {'van.$': '$.FindVan.van'}}
    """
    out: dict[str, Any] = {
        "Type": "Task",
        "Resource": LAMBDA,
        "Parameters": {"FunctionName": function, "Payload": payload},
        "ResultPath": f"$.{state}",
        "Retry": [{"ErrorEquals": ["Depot.Transient"], "IntervalSeconds": 30, "BackoffRate": 2.0,
                   "MaxAttempts": TRANSIENT_ATTEMPTS - 1}],
    }  # fmt: skip
    return out | ({"Next": after} if after else {"End": True})


def resolve(payload: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    """A payload with its ``key.$`` JSONPath references (``$.State.field``) read from the
    execution's document.

    >>> resolve({"van.$": "$.FindVan.van", "day": "2027-05-14"}, {"FindVan": {"van": "VN-7"}})
    {'van': 'VN-7', 'day': '2027-05-14'}
    """
    out: dict[str, Any] = {}
    for key, value in payload.items():
        if key.endswith(".$"):
            found: Any = document
            for part in str(value).removeprefix("$.").split("."):
                found = found[part]
            out[key.removesuffix(".$")] = found
        else:
            out[key] = value
    return out


def _chain(states: dict[str, Any], start: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """A machine's states in the order ``Next`` links them."""
    name: str | None = start
    while name:
        state = states[name]
        yield name, state
        name = state.get("Next")


def task_states(machine: dict[str, Any]) -> list[str]:
    """The names of a machine's task states, branches included, in order.

    >>> task_states(_plan("Hire sheet: " + json.dumps(HIRE)))
    ['FindVan', 'GasCheck', 'BookPitch', 'BookDriver', 'ChargeCard', 'NotifyHirer']
    """
    out: list[str] = []
    for name, state in _chain(machine["States"], machine["StartAt"]):
        if state["Type"] == "Parallel":
            for branch in state["Branches"]:
                out += task_states(branch)
        else:
            out.append(name)
    return out


# --- the scripted model --------------------------------------------------------------------
def _call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _plan(brief: str) -> dict[str, Any]:
    """The planner's state machine: the hire sheet's facts, the desk's notes trusted over them;
    after a ``(use key=value)`` setback that value; completed states left out (their results
    stay in the execution's document, still referenced)."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Hire sheet"]) | json.loads(lines.get("Desk notes", "{}"))
    done: dict[str, Any] = json.loads(lines.get("Completed", "{}"))
    revision = int(lines.get("Revision", "1"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)
    van = {"van.$": "$.FindVan.van"}
    flow: list[tuple[str, str, dict[str, Any]] | list[tuple[str, str, dict[str, Any]]]] = [
        ("FindVan", "fleet_register", {"region": facts["region"], "berths": facts["berths"]}),
        [
            ("GasCheck", "gas_inspection", van),
            ("BookPitch", "book_pitch", van | {"campsite": facts["campsite"],
             "arrive": facts["arrive"], "nights": facts["nights"]}),
        ],
        ("BookDriver", "book_driver", van | {"pitch.$": "$.BookPitch.pitch",
         "day": facts["arrive"]}),
        ("ChargeCard", "charge_card", {"card": facts["card"], "hire": facts["hire"],
         "amount.$": "$.BookPitch.fee"}),
        ("NotifyHirer", "notify_hirer", van | {"email": facts["email"],
         "pitch.$": "$.BookPitch.pitch", "driver.$": "$.BookDriver.driver",
         "gas_certificate.$": "$.GasCheck.certificate"}),
    ]  # fmt: skip
    steps: list[tuple[str, dict[str, Any]]] = []
    for item in flow:
        if isinstance(item, list):
            branches = [
                {"StartAt": name, "States": {name: task(fn, payload, name, None)}}
                for name, fn, payload in item
                if name not in done
            ]
            if branches:
                steps.append(("Prepare", {"Type": "Parallel", "Branches": branches}))
        elif item[0] not in done:
            name, fn, payload = item
            steps.append((name, task(fn, payload, name, None)))
    states: dict[str, Any] = {}
    for i, (name, state) in enumerate(steps):
        if i + 1 < len(steps):
            state.pop("End", None)
            state["Next"] = steps[i + 1][0]
        else:
            state["End"] = True
        states[name] = state
    comment = f"Hire {facts['hire']} to {facts['campsite']}, revision {revision}"
    return {"Comment": comment, "StartAt": steps[0][0], "States": states}


def _executor(messages: list[dict[str, Any]], order: str) -> dict[str, Any]:
    """The executor's next turn: call the function, follow ``next_token``, poll a PENDING
    inspection, call again ``after`` a busy answer's time; then the task result."""
    function = re.findall(r"^Function: (.*)$", order, re.MULTILINE)[-1]
    payload = json.loads(re.findall(r"^Payload: (.*)$", order, re.MULTILINE)[-1])
    turn = len(messages)
    calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    pending: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            pending[c["id"]] = (fn["name"], json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool" and m.get("tool_call_id") in pending:
            calls.append((*pending.pop(m["tool_call_id"]), json.loads(str(m.get("content")))))

    def result(body: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": json.dumps(body)}

    if not calls:
        return _call(function, payload, turn)
    name, called, answer = calls[-1]
    if "errorType" in answer:
        if answer["errorType"] == "Depot.Busy":
            return _call(name, called | {"after": answer["retry_after"]}, turn)
        return result(
            {"status": "FAILED", "error": answer["errorType"], "cause": answer["errorMessage"]}
        )
    if answer.get("next_token"):
        return _call(name, called | {"next_token": answer["next_token"]}, turn)
    if answer.get("state") == "PENDING":
        reads = sum(c[0] == "inspection_status" for c in calls)
        if reads >= MAX_READS:
            cause = f"inspection {answer['inspection']} still PENDING after {reads} reads"
            return result({"status": "FAILED", "error": "States.Timeout", "cause": cause})
        return _call("inspection_status", {"inspection": answer["inspection"]}, turn)
    return result({"status": "SUCCEEDED", "output": answer})


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> msg = respond({"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": "Hire sheet: " + json.dumps(HIRE)}]})
    >>> machine = json.loads(msg["choices"][0]["message"]["content"])
    >>> machine["States"]["BookDriver"]["Parameters"]["Payload"]["pitch.$"]
    '$.BookPitch.pitch'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = " ".join(str(m.get("content")) for m in messages if m.get("role") == "system")
    user = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if PLANNER in system:
        text = json.dumps(_plan(user), indent=2)
        return completion(body, {"role": "assistant", "content": text})
    return completion(body, _executor(messages, user))


# --- the depot's functions ----------------------------------------------------------------
class DepotError(RuntimeError):
    """A depot function's Lambda error: ``errorType`` and ``errorMessage``."""

    def __init__(self, error_type: str, message: str, retry_after: str = ""):
        super().__init__(f"{error_type}: {message}")
        self.error_type, self.message, self.retry_after = error_type, message, retry_after

    def payload(self) -> dict[str, str]:
        out = {"errorType": self.error_type, "errorMessage": self.message}
        return out | ({"retry_after": self.retry_after} if self.retry_after else {})


@dataclass
class Depot:
    """The fleet register, gas engineers, campsites, drivers, card gateway and mail of one
    hire; each function an ``@mlflow.trace(span_type=SpanType.TOOL)`` function."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    vans: dict[str, str] = field(default_factory=dict)
    inspections: dict[str, int] = field(default_factory=dict)
    pitches: dict[str, dict[str, Any]] = field(default_factory=dict)
    drivers: list[dict[str, Any]] = field(default_factory=list)
    charges: list[dict[str, Any]] = field(default_factory=list)

    NAMES = (
        "fleet_register",
        "gas_inspection",
        "inspection_status",
        "book_pitch",
        "book_driver",
        "charge_card",
        "notify_hirer",
    )

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]
        self.functions = {
            name: mlflow.trace(getattr(self, name), name=name, span_type=SpanType.TOOL)
            for name in self.NAMES
        }

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def schemas(self, names: list[str]) -> list[dict[str, Any]]:
        """OpenAI function definitions for the named functions, from their signatures."""
        out = []
        for name in names:
            params = inspect.signature(getattr(self, name)).parameters.values()
            properties = {
                p.name: {"type": "integer" if p.annotation in (int, "int") else "string"}
                for p in params
            }
            required = [p.name for p in params if p.default is inspect.Parameter.empty]
            doc = inspect.getdoc(getattr(self, name)) or name
            out.append(
                {
                    "type": "function",
                    "function": {
                        "name": name,
                        "description": doc,
                        "parameters": {
                            "type": "object",
                            "properties": properties,
                            "required": required,
                        },
                    },
                }
            )
        return out

    def fault(self, function: str) -> None:
        """Raise the scenario's next fault when ``function`` is the one it targets."""
        if not self.faults or function != self.params.get("tool"):
            return
        f = self.faults.pop(0)
        if f["error"] == "Depot.Busy":
            hint = f"{f['text']}; retry after {f['retry_after']}"
            raise DepotError(f["error"], hint, f["retry_after"])
        if f["error"] == "Depot.Conflict":
            raise DepotError(f["error"], f"{f['text']} (use {f['use']})")
        raise DepotError(f["error"], f["text"])

    def fleet_register(self, region: str, berths: int, next_token: str = "") -> str:
        """Free touring caravans of a region's depots with at least the berths, a page at a
        time (next_token)."""
        self.fault("fleet_register")
        page = int(next_token.removeprefix("p") or 1)
        if page < int(self.params.get("pages", 1)):
            hired = [f"VN-{region[:2].upper()}{page * 10 + n}" for n in (1, 2)]
            return json.dumps({"vans": [], "on_hire": hired, "next_token": f"p{page + 1}"})
        van = f"VN-{region[:2].upper()}{self.label.seed % 1000}"
        self.vans[van] = DEPOTS.get(region, f"{region} depot")
        return json.dumps({"van": van, "depot": self.vans[van], "berths": berths, "length_m": 6.9})

    def gas_inspection(self, van: str) -> str:
        """Book a gas-safety inspection of a van's LPG installation."""
        self.fault("gas_inspection")
        inspection = f"GS-{self.label.seed}-{len(self.inspections) + 1}"
        self.inspections[inspection] = 0
        if "polls" in self.params or "stuck" in self.params:
            return json.dumps({"inspection": inspection, "van": van, "state": "PENDING"})
        return json.dumps({"inspection": inspection, "state": "PASSED", "certificate": inspection})

    def inspection_status(self, inspection: str) -> str:
        """Whether a gas-safety inspection has passed yet."""
        self.inspections[inspection] += 1
        if "stuck" in self.params or self.inspections[inspection] < int(
            self.params.get("polls", 0)
        ):
            return json.dumps({"inspection": inspection, "state": "PENDING"})
        return json.dumps({"inspection": inspection, "state": "PASSED", "certificate": inspection})

    def book_pitch(self, van: str, campsite: str, arrive: str, nights: int, after: str = "") -> str:
        """Book a caravan pitch at a campsite from an arrival day for some nights."""
        self.fault("book_pitch")
        full = self.params.get("campsite_to")
        if full and campsite == HIRE["campsite"]:
            raise DepotError(
                "Depot.Conflict",
                f"{campsite} has no pitch for a 6.9 m caravan that week (use campsite={full})",
            )
        pitch = f"PT-{campsite[:2].upper()}{len(self.pitches) + 14}"
        self.pitches[pitch] = {"campsite": campsite, "arrive": arrive, "nights": nights}
        fee = 38 * int(nights)
        return json.dumps({"pitch": pitch, "campsite": campsite, "arrive": arrive, "fee": fee})

    def book_driver(self, van: str, pitch: str, day: str, after: str = "") -> str:
        """Book a depot driver to tow a van to its pitch on a day."""
        self.fault("book_driver")
        depot = self.vans.get(van, "")
        if depot != HIRE["depot"]:
            raise DepotError(
                "Depot.Rejected",
                f"{van} is stationed at {depot or 'no known depot'}; "
                f"{HIRE['depot']}'s drivers only tow vans of their own yard",
            )
        campsite = self.pitches[pitch]["campsite"]
        if campsite not in DELIVERY_AREA:
            raise DepotError("Depot.Rejected", f"{campsite} is outside the delivery area")
        driver = f"DRV-{self.label.seed % 97 + 3}"
        self.drivers.append({"driver": driver, "van": van, "pitch": pitch, "day": day})
        return json.dumps({"driver": driver, "day": day, "slot": after or "09:30"})

    def charge_card(self, card: str, hire: str, amount: int, after: str = "") -> str:
        """Charge the hirer's card for a hire."""
        self.fault("charge_card")
        if card != HIRE["card"] and card not in self.params.get("cards", ()):
            raise DepotError("Depot.Rejected", f"no card {card} on file for hire {hire}")
        charge = f"CH-{self.label.seed}-{len(self.charges) + 1}"
        self.charges.append({"card": card, "amount": amount})
        return json.dumps({"charge": charge, "amount": amount, "currency": "GBP"})

    def notify_hirer(
        self, van: str, email: str, pitch: str, driver: str, gas_certificate: str, after: str = ""
    ) -> str:
        """E-mail the hirer the van, the pitch, the driver and the gas certificate."""
        self.fault("notify_hirer")
        return json.dumps({"message": f"MSG-{pitch}-{driver}", "to": email})


# --- the app ------------------------------------------------------------------------------
class HireFailed(Exception):
    """The hire could not be delivered (the reason is the message)."""


class Replan(Exception):
    """A state answered ``Depot.Conflict``: the machine needs a new revision."""


@dataclass
class HireDesk:
    """One hire: the planner, the state machine's execution, the check and the watch."""

    label: Label
    client: AsyncOpenAI
    depot: Depot = field(init=False)
    document: dict[str, Any] = field(default_factory=dict)
    """The execution's document: each completed state's result at ``$.<state>``."""

    def __post_init__(self) -> None:
        self.depot = Depot(self.label)

    async def _chat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> Any:
        request: dict[str, Any] = {"model": MODEL, "messages": messages, "temperature": 0}
        if tools:
            request["tools"] = tools
        response = await self.client.chat.completions.create(**request)
        return response.choices[0].message

    async def plan(self, revision: int, setback: str) -> dict[str, Any]:
        notes = {
            k: self.label.params[k] for k in ("region", "arrive", "card") if k in self.label.params
        }
        lines = [
            f"Objective: deliver hire {HIRE['hire']} to the hirer's pitch.",
            f"Hire sheet: {json.dumps(HIRE)}",
        ]
        if notes:
            lines.append(f"Desk notes: {json.dumps(notes)}")
        if revision > 1:
            lines += [
                f"Revision: {revision}",
                f"Completed: {json.dumps(self.document)}",
                f"Setback: {setback}",
            ]
        brief = "\n".join(lines)
        with mlflow.start_span(name="state machine planner", span_type=SpanType.CHAIN) as span:
            span.set_inputs({"brief": brief})
            span.set_attributes({"caravan.hire": HIRE["hire"], "caravan.revision": revision})
            messages = [{"role": "system", "content": PLANNER}, {"role": "user", "content": brief}]
            text = str((await self._chat(messages)).content)
            span.set_outputs({"definition": text})
        machine: dict[str, Any] = json.loads(text)
        return machine

    async def attempt(self, name: str, state: dict[str, Any], attempt: int) -> dict[str, Any]:
        """One executor conversation for a task state; its task result."""
        function = state["Parameters"]["FunctionName"]
        payload = resolve(state["Parameters"]["Payload"], self.document)
        order = (
            f"Task state {name} (attempt {attempt})\nResource: {state['Resource']}\n"
            f"Function: {function}\nPayload: {json.dumps(payload)}"
        )
        names = [function] + (["inspection_status"] if function == "gas_inspection" else [])
        with mlflow.start_span(name=f"task {name}", span_type=SpanType.AGENT) as span:
            span.set_inputs({"task": order})
            span.set_attributes({"caravan.state": name, "caravan.attempt": attempt})
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": EXECUTOR},
                {"role": "user", "content": order},
            ]
            for _ in range(MAX_TURNS):
                message = await self._chat(messages, self.depot.schemas(names))
                if not message.tool_calls:
                    break
                messages.append(message.model_dump(exclude_none=True))
                for call in message.tool_calls:
                    content = self._run(call.function.name, json.loads(call.function.arguments))
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
            answer: dict[str, Any] = json.loads(str(message.content))
            span.set_outputs(answer)
            if answer["status"] != "SUCCEEDED":
                # a SpanStatus (code and description), as set_status's docstring allows
                status = SpanStatus(SpanStatusCode.ERROR, f"{answer['error']}: {answer['cause']}")
                span.set_status(status)  # type: ignore[arg-type]
        return answer

    def _run(self, name: str, args: dict[str, Any]) -> str:
        try:
            return str(self.depot.functions[name](**args))
        except DepotError as e:  # MLflow recorded it on the TOOL span; the Lambda error goes back
            return json.dumps(e.payload())

    async def run_task(self, name: str, state: dict[str, Any]) -> None:
        """A task state's attempts under its ``Retry``; its output into the document."""
        retry = {e: r for r in state.get("Retry", ()) for e in r["ErrorEquals"]}
        attempt = 1
        while True:
            answer = await self.attempt(name, state, attempt)
            if answer["status"] == "SUCCEEDED":
                self.document[state["ResultPath"].removeprefix("$.")] = answer["output"]
                return
            error = answer["error"]
            if error in retry and attempt <= int(retry[error]["MaxAttempts"]):
                attempt += 1
                continue
            if error == "Depot.Conflict":
                raise Replan(f"{name}: {answer['cause']}")
            raise HireFailed(f"{name}: {error}: {answer['cause']}")

    async def run_machine(self, machine: dict[str, Any]) -> None:
        for name, state in _chain(machine["States"], machine["StartAt"]):
            if state["Type"] == "Parallel":
                with mlflow.start_span(name=f"parallel {name}", span_type=SpanType.CHAIN) as span:
                    span.set_inputs({"branches": [b["StartAt"] for b in state["Branches"]]})
                    outcomes = await asyncio.gather(
                        *(self.run_machine(branch) for branch in state["Branches"]),
                        return_exceptions=True,
                    )
                    for outcome in outcomes:  # a final failure first, then a re-plan
                        if isinstance(outcome, HireFailed):
                            raise outcome
                    for outcome in outcomes:
                        if isinstance(outcome, BaseException):
                            raise outcome
            else:
                await self.run_task(name, state)

    async def work(self) -> None:
        setback = ""
        for revision in range(1, MAX_MACHINES + 1):
            machine = await self.plan(revision, setback)
            try:
                await self.run_machine(machine)
                return
            except Replan as e:
                setback = str(e)
        raise HireFailed(f"no state machine holds after {MAX_MACHINES}: {setback}")

    def check(self) -> None:
        """The app's own checks after the last state: the pitch against the hire sheet, then
        the delivery watched to the pitch."""
        pitch = self.depot.pitches[self.document["BookPitch"]["pitch"]]
        with mlflow.start_span(name="check pitch booking", span_type=SpanType.GUARDRAIL) as span:
            seen = {"booked": pitch["arrive"], "hire": HIRE["arrive"]}
            span.set_inputs({"pitch": self.document["BookPitch"]["pitch"]})
            span.set_outputs(seen)
            if pitch["arrive"] != HIRE["arrive"]:
                raise HireFailed(
                    f"pitch booked from {pitch['arrive']}, hire {HIRE['hire']} arrives "
                    f"{HIRE['arrive']}"
                )
        van = self.document["FindVan"]["van"]
        with mlflow.start_span(name=f"watch delivery {van}") as span:
            span.set_inputs({"van": van, "driver": self.document["BookDriver"]["driver"]})
            states = ("HITCHED", "ON_ROAD", "AT_SITE", "PITCHED")
            for read, where in enumerate(states, 1):
                if self.label.scenario.startswith("external_") and read > int(
                    self.label.params["reads"]
                ):
                    raise HireFailed(f"a storm closed the access road to {pitch['campsite']}")
                # SpanEvent is a concrete dataclass; mypy reads its base's abstract from_proto
                span.add_event(SpanEvent("delivery", attributes={"read": read, "state": where}))  # type: ignore[abstract]
            span.set_outputs({"state": states[-1]})

    async def run(self) -> str:
        try:
            with mlflow.start_span(name=f"hire {HIRE['hire']}", span_type=SpanType.AGENT) as root:
                # MLflow's trace id is "tr-" and the OpenTelemetry trace id in hex
                trace_id = root.trace_id.removeprefix("tr-")
                root.set_inputs(HIRE)
                await self.work()
                self.check()
                root.set_outputs({"outcome": "pitched"})
        except HireFailed:  # MLflow recorded the exception and the root's ERROR status
            pass
        return trace_id


# --- MLflow's provider, its GenAI translation relayed to the play's provider ---------------
class _GenAiRelay(SpanProcessor):
    """After MLflow's OTLP span processor on MLflow's provider: hands each span, translated to
    the GenAI conventions as that processor exports it when ``MLFLOW_ENABLE_OTEL_GENAI_SEMCONV``
    is on, to the processors of the caravan play under way (dropped outside one)."""

    target: TracerProvider | None = None

    def __init__(self, exporter: OtelSpanProcessor):
        self.exporter = exporter

    def _processor(self) -> SpanProcessor | None:
        # the SDK has no public way to give a finished span to a provider's processors
        return None if self.target is None else self.target._active_span_processor

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        if processor := self._processor():
            processor.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        if processor := self._processor():
            on = os.environ.get("MLFLOW_ENABLE_OTEL_GENAI_SEMCONV") == "true"
            processor.on_end(self.exporter._translate_span(span) if on else span)


@functools.cache
def _relay() -> _GenAiRelay:
    """The caravan relay on museum's MLflow provider (one per process)."""
    provider = _mlflow_provider()
    processors = provider._active_span_processor._span_processors
    (exporter,) = [p for p in processors if isinstance(p, OtelSpanProcessor)]
    relay = _GenAiRelay(exporter)
    provider.add_span_processor(relay)
    return relay


@contextmanager
def _genai_semconv() -> Iterator[None]:
    saved = os.environ.get("MLFLOW_ENABLE_OTEL_GENAI_SEMCONV")
    os.environ["MLFLOW_ENABLE_OTEL_GENAI_SEMCONV"] = "true"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("MLFLOW_ENABLE_OTEL_GENAI_SEMCONV", None)
        else:
            os.environ["MLFLOW_ENABLE_OTEL_GENAI_SEMCONV"] = saved


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the caravan scenarios under MLflow's OpenAI autologging with MLflow's GenAI
    translation on, its spans relayed to ``provider``; run name -> trace id. Autologging and the
    translation are off again when the play returns."""
    if not labels:
        return {}
    relay = _relay()
    quiet = logging.getLogger("mlflow")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    relay.target = provider
    mlflow.openai.autolog(silent=True)
    try:
        with _genai_semconv(), ModelServer(respond=respond) as server:

            async def hires() -> dict[str, str]:
                client = AsyncOpenAI(
                    api_key="test", base_url=server.base_url("corpus-caravan"), max_retries=0
                )
                async with client:
                    return {label.run: await HireDesk(label, client).run() for label in labels}

            return asyncio.run(hires())
    finally:
        mlflow.openai.autolog(disable=True, silent=True)
        relay.target = None
        quiet.setLevel(level)

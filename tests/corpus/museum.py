"""A museum-loan agent traced only through MLflow Tracing (the lightweight ``mlflow-tracing``
SDK: ``mlflow.start_span(span_type=...)``, ``@mlflow.trace(span_type=SpanType.TOOL)``,
``set_inputs`` / ``set_outputs`` / ``set_attributes``, exceptions and ``set_status`` as MLflow
records them, the model calls as ``mlflow.openai.autolog()`` traces them), against a scripted
model on the conformance suite's fake OpenAI server (``ModelServer(respond=...)``). No planscope
code.

Sealed-15 split only (see README.md). The task: a museum lends a painting to another museum's
exhibition; find an accredited fine-art shipper for the borrower's country (a registry read page
by page), apply for the state indemnity that insures the loan (approved later: polled), book
the shipper's climate-controlled transport to the borrower's gallery, invoice the loan fee to the
borrower's account, send the borrower's registrar the loan confirmation. As an MLflow user would
write it:

* the app opens one ``AGENT`` span per loan (``loan {loan}``); a failed loan raises inside it,
  so MLflow records the exception and the span's ``ERROR`` status;
* the planner is a ``CHAIN`` span (``loan_planner``) around one autologged chat call answering
  an **RFC 822 stanza plan**: a header stanza (``Loan``, ``Revision``), then one stanza per step
  (``Step``, ``Tool``, ``Goal``, ``With-{arg}`` fields; ``result-of:{step}`` for an earlier
  step's result, filled in by the app). Asked again after a failure, it answers an
  **amendment**: a header stanza with the ``Reason``, then ``Amend: {step}`` stanzas carrying
  only the changed ``With-`` fields; the app applies them to the steps not done;
* the executor is an ``AGENT`` span (``loan_executor``) per step attempt (the step and attempt
  as span attributes): its message a ``Task`` stanza naming the step and the ``Call`` with its
  arguments filled in, the services ``@mlflow.trace(span_type=SpanType.TOOL)`` functions it
  calls when the model asks (a failed call is an ``ERROR`` tool span with MLflow's exception
  event; its text goes back to the model), its answer an ``Outcome`` stanza (``done`` /
  ``retry`` / ``amend`` / ``refused`` / ``stalled``, ``Value``, ``Note``); an attempt not done
  is set to ``ERROR``;
* the services answer errors as **sysexits**: ``sysexit 75 (EX_TEMPFAIL): text`` (call again
  in the same run for a later ``window``), ``69 (EX_UNAVAILABLE)`` (``retry``: the app re-runs
  the step, up to 8 attempts), ``78 (EX_CONFIG)`` (``amend``: the app asks for an amendment, up
  to 4 revisions), ``77 (EX_NOPERM)`` / ``67 (EX_NOUSER)`` / ``65 (EX_DATAERR)`` (final);
* after the last step the app checks the indemnity's cover against the loan agreement's
  valuation (``verify indemnity``, a ``GUARDRAIL`` span) and watches the shipment to the
  gallery wall (``watch shipment``, a span whose states are span events).

MLflow exports through OTLP, as its docs tell a user to (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``):
its own tracer provider holds MLflow's OTLP span processor (the endpoint a loopback sink that
accepts and drops every request: no MLflow server, no tracking store), and a relay processor
after it hands each span, as that processor exported it, to the play's provider.

The planner trusts the registrar's notes over the loan agreement: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import atexit
import functools
import inspect
import json
import logging
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import mlflow
import mlflow.openai
from mlflow.entities import SpanEvent, SpanStatus, SpanStatusCode, SpanType
from openai import OpenAI
from opentelemetry import context as otel_context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import RUNAWAY, Label

AGREEMENT: dict[str, Any] = {
    "object": "OBJ-1887-042",
    "borrower": "Kunsthal Nord",
    "country": "dk",
    "venue": "KHN-GAL3",
    "valuation": 4800000,
    "ship_date": "2027-03-08",
    "account": "ACC-7731",
    "registrar": "registrar@kunsthal-nord.example",
}
FEE_PERCENT = 2
MAX_STEP_ATTEMPTS = 8
MAX_REVISIONS = 4
MAX_STATUS_CHECKS = 12
ERROR = re.compile(r"sysexit (\d+) \((EX_\w+)\): (.*)$", re.DOTALL)
FROM = "result-of:"


class LoanError(RuntimeError):
    """A service's error answer: ``sysexit {code} ({name}): {text}``."""

    CODES = {
        "EX_DATAERR": 65,
        "EX_NOUSER": 67,
        "EX_UNAVAILABLE": 69,
        "EX_TEMPFAIL": 75,
        "EX_NOPERM": 77,
        "EX_CONFIG": 78,
    }

    def __init__(self, name: str, text: str):
        super().__init__(f"sysexit {self.CODES[name]} ({name}): {text}")


# --- the plan: RFC 822 stanzas ----------------------------------------------------------------
def stanzas(text: str) -> list[dict[str, str]]:
    """The ``Field: value`` stanzas of a text, split on blank lines.

    >>> stanzas("Loan: LN-1\\nRevision: 1\\n\\nStep: a\\nWith-x: 1")
    [{'Loan': 'LN-1', 'Revision': '1'}, {'Step': 'a', 'With-x': '1'}]
    """
    out = []
    for block in re.split(r"\n\s*\n", text.strip()):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if fields:
            out.append(fields)
    return out


def _stanza(fields: dict[str, Any]) -> str:
    return "\n".join(f"{k}: {v}" for k, v in fields.items())


@dataclass(frozen=True)
class Step:
    """One ``Step`` stanza of the plan; an argument ``result-of:{step}`` is an earlier step's
    result."""

    id: str
    goal: str
    tool: str
    args: dict[str, str]

    def amended(self, fields: dict[str, str]) -> Step:
        """The step with an ``Amend`` stanza's ``With-`` fields applied."""
        return Step(self.id, self.goal, self.tool, self.args | _with(fields))


def _with(fields: dict[str, str]) -> dict[str, str]:
    return {k.removeprefix("With-"): v for k, v in fields.items() if k.startswith("With-")}


def parse_plan(text: str) -> list[Step]:
    """The steps of a stanza plan.

    >>> parse_plan("Loan: LN-1\\n\\nStep: ship\\nTool: truck\\nGoal: Ship\\n"
    ...            "With-shipper: result-of:find\\nWith-date: 2027-03-08")[0].args
    {'shipper': 'result-of:find', 'date': '2027-03-08'}
    """
    return [
        Step(s["Step"], s.get("Goal", ""), s["Tool"], _with(s))
        for s in stanzas(text)
        if "Step" in s
    ]


def parse_amendment(text: str) -> dict[str, dict[str, str]]:
    """Step -> the ``With-`` fields an amendment changes.

    >>> parse_amendment("Loan: LN-1\\nRevision: 2\\n\\nAmend: pay\\nWith-account: ACC-1")
    {'pay': {'With-account': 'ACC-1'}}
    """
    return {s.pop("Amend"): s for s in stanzas(text) if "Amend" in s}


# --- the scripted model (answers on the conformance suite's fake OpenAI server) -------------
def _field(text: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", text, re.MULTILINE)
    return m.group(1) if m else ""


def _planner(brief: str) -> dict[str, Any]:
    """The planner's answer: the full stanza plan from the agreement and the notes trusted over
    it, or (revision 2 on) an amendment for the slot or account a problem names."""
    facts = json.loads(_field(brief, "Agreement")) | json.loads(_field(brief, "Notes") or "{}")
    revision = int(_field(brief, "Revision") or 1)
    header = {"Loan": facts["loan"], "Revision": revision}
    if revision > 1:
        problem = _field(brief, "Problem")
        parts = [_stanza(header | {"Reason": problem})]
        if slot := re.search(r"next slot is (\d{4}-\d\d-\d\d)", problem):
            parts.append(_stanza({"Amend": "book_transport", "With-ship_date": slot.group(1)}))
        if account := re.search(r"invoice (ACC-\d+) instead", problem):
            parts.append(_stanza({"Amend": "invoice_fee", "With-account": account.group(1)}))
        return {"role": "assistant", "content": "\n\n".join(parts)}
    steps = [
        {"Step": "find_shipper", "Tool": "shipper_registry",
         "Goal": f"Find an accredited fine-art shipper for loans into {facts['country']}",
         "With-country": facts["country"], "With-object": facts["object"]},
        {"Step": "request_indemnity", "Tool": "indemnity_application",
         "Goal": "Apply for the state indemnity covering the loan",
         "With-object": facts["object"], "With-valuation": facts["valuation"],
         "With-shipper": f"{FROM}find_shipper"},
        {"Step": "book_transport", "Tool": "transport_booking",
         "Goal": f"Book climate-controlled transport to {facts['borrower']}",
         "With-shipper": f"{FROM}find_shipper", "With-indemnity": f"{FROM}request_indemnity",
         "With-venue": facts["venue"], "With-ship_date": facts["ship_date"]},
        {"Step": "invoice_fee", "Tool": "fee_invoice",
         "Goal": "Invoice the loan fee to the borrower's account",
         "With-booking": f"{FROM}book_transport", "With-account": facts["account"]},
        {"Step": "confirm_loan", "Tool": "registrar_notice",
         "Goal": "Send the borrower's registrar the loan confirmation",
         "With-booking": f"{FROM}book_transport", "With-email": facts["registrar"]},
    ]  # fmt: skip
    content = "\n\n".join(_stanza(s) for s in [header, *steps])
    return {"role": "assistant", "content": content}


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"call_{name}_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _say(outcome: str, value: str = "", note: str = "") -> dict[str, Any]:
    content = _stanza({"Outcome": outcome, "Value": value, "Note": note})
    return {"role": "assistant", "content": content}


def _executor(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The executor's turn: run the call the task names, call again after ``EX_TEMPFAIL`` for a
    later window, follow ``next_page``, poll an indemnity application until it is approved,
    answer the outcome stanza."""
    fields = stanzas(task)[0]
    name = fields["Call"]
    args: dict[str, Any] = {k: int(v) if v.isdigit() else v for k, v in _with(fields).items()}
    results = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
    n = len(results)
    if not results:
        return _call(n, name, args)
    last = results[-1]
    error = ERROR.match(last)
    if error:
        kind = error.group(2)
        if kind == "EX_TEMPFAIL":
            tempfails = sum("(EX_TEMPFAIL)" in r for r in results)
            return _call(n, name, args | {"window": f"{10 + 3 * tempfails:02d}:00-18:00"})
        outcome = {"EX_UNAVAILABLE": "retry", "EX_CONFIG": "amend"}.get(kind, "refused")
        return _say(outcome, note=f"{kind}: {error.group(3)}")
    seen = json.loads(last)
    if "next_page" in seen:
        return _call(n, name, args | {"page": seen["next_page"]})
    if seen.get("state") == "UNDER_REVIEW":
        checks = sum(
            c["function"]["name"] == "indemnity_status"
            for m in messages
            for c in m.get("tool_calls") or ()
        )
        if checks >= MAX_STATUS_CHECKS:
            note = f"application {seen['application']} still UNDER_REVIEW after {checks} checks"
            return _say("stalled", note=note)
        return _call(n, "indemnity_status", {"application": seen["application"]})
    return _say("done", value=str(seen["value"]))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the planner's plan or
    amendment for a loan, the executor's next tool call or outcome stanza otherwise.

    >>> msg = respond({"messages": [{"role": "user", "content":
    ...     "Task: s\\nCall: f\\nWith-a: 1"}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"a": 1}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if task.startswith("Agreement: "):
        return completion(body, _planner(task))
    return completion(body, _executor(messages, task))


# --- the world ------------------------------------------------------------------------------
@dataclass
class World:
    """The services: the shipper registry, the state indemnity scheme, shippers' transport,
    the loans office's invoicing, the borrower's registrar."""

    label: Label
    loan: str
    step: str = ""
    errors: list[str] = field(default_factory=list)
    shippers: dict[str, str] = field(default_factory=dict)
    """Shipper -> the country it is accredited for."""
    applications: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Indemnity application -> object, valuation and status checks."""
    bookings: dict[str, dict[str, Any]] = field(default_factory=dict)
    accounts: set[str] = field(default_factory=lambda: {AGREEMENT["account"]})
    """The borrower's accounts with the loans office."""
    slot: str = AGREEMENT["ship_date"]
    """The first day a climate-controlled truck is free."""
    invoices: dict[str, int] = field(default_factory=dict)
    confirmation: str = ""

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        self.slot = self.label.params.get("new_slot", AGREEMENT["ship_date"])

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self) -> None:
        """Raise the scenario's next error when the call belongs to the step it targets."""
        if not self.errors or self.step != self.params.get("step"):
            return
        text = self.errors.pop(0)
        if not self.errors and self.label.kind == RUNAWAY:
            raise LoanError("EX_NOPERM", f"{text}; request withdrawn by the loans office")
        how = self.params.get("raise")
        if how == "again":
            raise LoanError("EX_TEMPFAIL", text)
        if how == "replans" and len(self.errors) % 2 == 0:
            account = f"ACC-{7800 + 41 * len(self.errors)}"
            self.accounts.add(account)
            raise LoanError("EX_CONFIG", f"{text}; account on hold, invoice {account} instead")
        raise LoanError("EX_UNAVAILABLE", text)


class Services:
    """The services, each an ``@mlflow.trace(span_type=SpanType.TOOL)`` function bound to one
    loan's world; ``schemas`` are the OpenAI tool definitions the executor offers the model."""

    NAMES = (
        "shipper_registry",
        "indemnity_application",
        "indemnity_status",
        "transport_booking",
        "fee_invoice",
        "registrar_notice",
    )

    def __init__(self, world: World):
        self.world = world
        self.tools = {
            name: mlflow.trace(getattr(self, name), name=name, span_type=SpanType.TOOL)
            for name in self.NAMES
        }

    def schemas(self, names: Sequence[str]) -> list[dict[str, Any]]:
        """OpenAI function definitions for the named tools, from their signatures."""
        out = []
        for name in names:
            params = inspect.signature(getattr(self, name)).parameters.values()
            properties = {
                p.name: {"type": "integer" if p.annotation in (int, "int") else "string"}
                for p in params
            }
            required = [p.name for p in params if p.default is inspect.Parameter.empty]
            out.append(
                {
                    "type": "function",
                    "function": {
                        "name": name,
                        "description": f"The {name.replace('_', ' ')} service.",
                        "parameters": {
                            "type": "object",
                            "properties": properties,
                            "required": required,
                        },
                    },
                }
            )
        return out

    def shipper_registry(
        self, country: str, object: str, page: int = 1, window: str = "09:00-18:00"
    ) -> str:
        self.world.fault()
        pages = int(self.world.params.get("pages", 1))
        code = country.upper()
        if page < pages:
            lapsed = [f"SHP-{code}-{page}{n}" for n in range(3)]
            return json.dumps(
                {"shippers": lapsed, "accreditation": "lapsed", "next_page": page + 1}
            )
        shipper = f"SHP-{code}-{pages}7"
        self.world.shippers[shipper] = country
        return json.dumps({"value": shipper, "country": country, "object": object})

    def indemnity_application(
        self, object: str, valuation: int, shipper: str, window: str = "09:00-18:00"
    ) -> str:
        self.world.fault()
        if shipper not in self.world.shippers:
            raise LoanError("EX_NOUSER", f"no accredited shipper {shipper}")
        application = f"GIS-{self.world.label.seed}-{len(self.world.applications)}"
        self.world.applications[application] = {
            "object": object,
            "valuation": int(valuation),
            "checks": 0,
        }
        return json.dumps({"application": application, "state": "UNDER_REVIEW"})

    def indemnity_status(self, application: str) -> str:
        entry = self.world.applications[application]
        entry["checks"] += 1
        if self.world.label.scenario == "loop_poll_stuck" or entry["checks"] < int(
            self.world.params.get("polls", 1)
        ):
            return json.dumps({"application": application, "state": "UNDER_REVIEW"})
        cover = f"IND-{application.removeprefix('GIS-')}"
        return json.dumps({"application": application, "state": "APPROVED", "value": cover})

    def transport_booking(
        self,
        shipper: str,
        indemnity: str,
        venue: str,
        ship_date: str,
        window: str = "09:00-18:00",
    ) -> str:
        self.world.fault()
        country = self.world.shippers.get(shipper)
        if country != AGREEMENT["country"]:
            raise LoanError(
                "EX_NOPERM",
                f"{shipper} is accredited for {country}; {venue} is in {AGREEMENT['country']} "
                "(no accreditation for the route)",
            )
        if ship_date != self.world.slot and ship_date == AGREEMENT["ship_date"]:
            raise LoanError(
                "EX_CONFIG",
                f"no climate-controlled truck free on {ship_date}; next slot is {self.world.slot}",
            )
        booking = f"TRN-{self.world.label.seed}-{len(self.world.bookings)}"
        self.world.bookings[booking] = {"shipper": shipper, "indemnity": indemnity, "venue": venue}
        return json.dumps({"value": booking, "ship_date": ship_date})

    def fee_invoice(self, booking: str, account: str, window: str = "09:00-18:00") -> str:
        self.world.fault()
        if account not in self.world.accounts:
            raise LoanError("EX_NOUSER", f"no account {account} for {AGREEMENT['borrower']}")
        entry = self.world.bookings[booking]
        if entry["venue"] != AGREEMENT["venue"]:
            raise LoanError(
                "EX_DATAERR", f"venue {entry['venue']} is not on the loan agreement {booking}"
            )
        fee = AGREEMENT["valuation"] * FEE_PERCENT // 100
        self.world.invoices[booking] = fee
        return json.dumps({"value": f"INV-{self.world.label.seed}", "fee": fee})

    def registrar_notice(self, booking: str, email: str, window: str = "09:00-18:00") -> str:
        self.world.fault()
        if booking not in self.world.invoices:
            raise LoanError("EX_DATAERR", f"booking {booking} has no fee invoice")
        self.world.confirmation = f"CNF-{self.world.label.seed}"
        return json.dumps({"value": self.world.confirmation, "email": email})


# --- the app --------------------------------------------------------------------------------
class Failed(Exception):
    """The loan was not shipped, invoiced and confirmed, or failed after (the reason is the
    message)."""


class LoansOffice:
    """One loan, from the agreement to the painting on the borrower's wall."""

    def __init__(self, label: Label, client: OpenAI):
        self.label = label
        self.client = client
        self.world = World(label, loan=f"LN-{label.seed % 9000 + 1000}")
        self.services = Services(self.world)
        self.done: dict[str, str] = {}

    def _chat(self, messages: list[dict[str, Any]], tools: Sequence[str] = ()) -> Any:
        request: dict[str, Any] = {"model": MODEL, "messages": messages}
        if tools:
            request["tools"] = self.services.schemas(tools)
        return self.client.chat.completions.create(**request).choices[0].message

    def plan(self, problem: str, revision: int) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("country", "valuation", "venue", "account")
            if k in self.label.params
        }
        brief = (
            f"Agreement: {json.dumps({'loan': self.world.loan} | AGREEMENT)}\n"
            f"Notes: {json.dumps(notes)}\nDone: {json.dumps(self.done)}\n"
            f"Problem: {problem}\nRevision: {revision}"
        )
        with mlflow.start_span(name="loan_planner", span_type=SpanType.CHAIN) as span:
            span.set_inputs({"brief": brief})
            span.set_attributes({"loan.id": self.world.loan, "plan.revision": revision})
            messages = [
                {
                    "role": "system",
                    "content": "You plan museum loans. Answer RFC 822 stanzas: a header (Loan, "
                    "Revision), then Step/Tool/Goal/With-<arg> stanzas, result-of:<step> for an "
                    "earlier result. After a problem answer only Amend: <step> stanzas with the "
                    "changed With- fields. Trust the registrar's notes.",
                },
                {"role": "user", "content": brief},
            ]
            text = str(self._chat(messages).content)
            span.set_outputs({"plan": text})
        return text

    def attempt(self, step: Step, attempt: int) -> tuple[str, str, str]:
        """One executor run of a step, its ``result-of`` arguments filled in from the done
        steps; the outcome, value and note."""
        args = {
            k: self.done[v.removeprefix(FROM)] if v.startswith(FROM) else v
            for k, v in step.args.items()
        }
        task = _stanza(
            {"Task": f"{step.id} (attempt {attempt})", "Goal": step.goal, "Call": step.tool}
            | {f"With-{k}": v for k, v in args.items()}
        )
        self.world.step = step.id
        with mlflow.start_span(name="loan_executor", span_type=SpanType.AGENT) as span:
            span.set_inputs({"task": task})
            span.set_attributes({"loan.step": step.id, "loan.attempt": attempt})
            messages: list[dict[str, Any]] = [
                {
                    "role": "system",
                    "content": "You carry out one step of a museum loan with the services, then "
                    "answer an Outcome stanza (Outcome: done|retry|amend|refused|stalled, Value, "
                    "Note).",
                },
                {"role": "user", "content": task},
            ]
            tools = [step.tool, "indemnity_status"]
            while True:
                message = self._chat(messages, tools)
                if not message.tool_calls:
                    break
                messages.append(message.model_dump(exclude_none=True))
                for tc in message.tool_calls:
                    messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": tc.id,
                            "content": self._run_tool(
                                tc.function.name, json.loads(tc.function.arguments)
                            ),
                        }
                    )
            answer = stanzas(str(message.content))[0]
            span.set_outputs({"outcome": str(message.content)})
            if answer["Outcome"] != "done":
                # a SpanStatus (code and description), as set_status's docstring allows; its
                # type hint names only the code
                status = SpanStatus(SpanStatusCode.ERROR, answer.get("Note", ""))
                span.set_status(status)  # type: ignore[arg-type]
        return answer["Outcome"], answer.get("Value", ""), answer.get("Note", "")

    def _run_tool(self, name: str, args: dict[str, Any]) -> str:
        try:
            return str(self.services.tools[name](**args))
        except LoanError as e:  # MLflow recorded it on the tool span; the text goes to the model
            return str(e)

    def work(self) -> None:
        steps = parse_plan(self.plan("", 1))
        for revision in range(1, MAX_REVISIONS + 1):
            problem = ""
            for step in steps:
                if step.id in self.done:
                    continue
                for attempt in range(1, MAX_STEP_ATTEMPTS + 1):
                    outcome, value, note = self.attempt(step, attempt)
                    if outcome == "done":
                        self.done[step.id] = value
                        break
                    if outcome == "retry" and attempt < MAX_STEP_ATTEMPTS:
                        continue
                    if outcome == "amend" and revision < MAX_REVISIONS:
                        problem = f"{step.id}: {note}"
                        break
                    raise Failed(f"{step.id}: {outcome}: {note}")
                if problem:
                    break
            if not problem:
                return
            amendment = parse_amendment(self.plan(problem, revision + 1))
            steps = [s.amended(amendment[s.id]) if s.id in amendment else s for s in steps]
        raise Failed(problem)

    def check(self) -> None:
        """The app's own checks once the registrar is told: the indemnity's cover against the
        agreed valuation, then the shipment to the gallery wall."""
        application = next(iter(self.world.applications.values()))
        with mlflow.start_span(name="verify indemnity", span_type=SpanType.GUARDRAIL) as span:
            span.set_inputs({"indemnity": self.done["request_indemnity"]})
            seen = {"covered": application["valuation"], "agreed": AGREEMENT["valuation"]}
            fee = self.world.invoices[self.done["book_transport"]]
            span.set_outputs(seen)
            if application["valuation"] != AGREEMENT["valuation"]:
                raise Failed(
                    f"indemnity {self.done['request_indemnity']} covers "
                    f"{application['valuation']}, the agreement values the painting at "
                    f"{AGREEMENT['valuation']} "
                    f"(fee {fee} invoiced)"
                )
        with mlflow.start_span(name="watch shipment") as span:
            span.set_inputs({"booking": self.done["book_transport"]})
            states = ("CRATED", "IN_TRANSIT", "AT_VENUE", "ACCLIMATISED", "INSTALLED")
            for poll, state in enumerate(states, 1):
                if self.label.scenario == "external_flood" and poll > int(
                    self.label.params["polls"]
                ):
                    raise Failed("gallery flooded by a burst main; the lender recalls the painting")
                span.add_event(
                    # SpanEvent is a concrete dataclass; mypy reads its base's abstract from_proto
                    SpanEvent("shipment state", attributes={"poll": poll, "state": state})  # type: ignore[abstract]
                )
            span.set_outputs({"state": states[-1]})

    def run(self) -> str:
        try:
            with mlflow.start_span(
                name=f"loan {self.world.loan}", span_type=SpanType.AGENT
            ) as root:
                # MLflow's trace id is "tr-" and the OpenTelemetry trace id in hex
                trace_id = root.trace_id.removeprefix("tr-")
                root.set_inputs(AGREEMENT)
                self.work()
                self.check()
                root.set_outputs({"outcome": "installed"})
        except Failed:  # MLflow recorded the exception and the root's ERROR status
            pass
        return trace_id


# --- MLflow's tracer provider: OTLP export, relayed to the play's provider ---------------------
class _Sink(BaseHTTPRequestHandler):
    """The OTLP endpoint MLflow exports to: accepts every request and drops it."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Relay(SpanProcessor):
    """After MLflow's OTLP span processor on MLflow's provider: hands each span, as MLflow
    exported it, to the processors of the play under way (dropped outside one)."""

    target: TracerProvider | None = None

    def _processor(self) -> SpanProcessor | None:
        # the SDK has no public way to give a finished span to a provider's processors
        return None if self.target is None else self.target._active_span_processor

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        if processor := self._processor():
            processor.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        if processor := self._processor():
            processor.on_end(span)


_RELAY = _Relay()


@contextmanager
def _otlp_env(endpoint: str) -> Iterator[None]:
    keys = {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": endpoint,
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
    }
    saved = {k: os.environ.get(k) for k in keys}
    os.environ.update(keys)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@functools.cache
def _mlflow_provider() -> TracerProvider:
    """MLflow's own tracer provider, made once per process: MLflow's OTLP span processor to a
    loopback sink, then the relay."""
    sink = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    # a tracking URI of its own (never written: OTLP is the only destination); the default
    # one would look for ./mlruns in the working directory
    tracking = tempfile.mkdtemp(prefix="corpus-museum-")
    atexit.register(shutil.rmtree, tracking, ignore_errors=True)  # empty: nothing else removes it
    mlflow.set_tracking_uri(Path(tracking).as_uri())
    with _otlp_env(f"http://127.0.0.1:{sink.server_port}/v1/traces"):
        provider = mlflow.tracing.get_bridged_tracer_provider()
    provider.add_span_processor(_RELAY)
    return provider


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the museum-loan scenarios under MLflow Tracing, its spans relayed to ``provider``.

    ``mlflow.openai.autolog()`` patches the openai client for the play and is disabled after
    it (a later OpenAI call in the process is not traced).
    """
    if not labels:
        return {}
    _mlflow_provider()
    quiet = logging.getLogger("mlflow")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    _Relay.target = provider
    mlflow.openai.autolog(silent=True)
    try:
        with ModelServer(respond=respond) as server:
            client = OpenAI(
                api_key="test", base_url=server.base_url("corpus-museum"), max_retries=0
            )
            try:
                return {label.run: LoansOffice(label, client).run() for label in labels}
            finally:
                client.close()
    finally:
        mlflow.openai.autolog(disable=True, silent=True)
        _Relay.target = None
        quiet.setLevel(level)

"""A university library's interlibrary-loan desk obtaining a rare manuscript's facsimile for a
researcher, written as an **AG2** user writes a planner-executor app on **AG2 1.2.1** (``ag2``,
the rewritten framework pinned for the mural agent), traced by **AG2's own OpenTelemetry
telemetry** (``TelemetryMiddleware``) on **MLflow's tracer provider** (``mlflow-tracing``) and
the app's own ``mlflow.start_span`` spans. The model: a scripted model on the conformance suite's
fake OpenAI server (``ModelServer(respond=...)``). No planscope code.

Sealed-82 split only (see README.md). Why not MLflow's AG2 autologging: ``mlflow.ag2`` is not in
the pinned ``mlflow-tracing`` 3.17.2 (its ``ml_package_versions`` names the ``ag2`` flavour as
the ``autogen`` module of ag2 0.10-0.14), and AG2 1.2.1 has no ``autogen`` module, no
``ConversableAgent``, ``UserProxyAgent``, ``register_function`` nor ``initiate_chat``: the AG2
autologging records nothing on 1.2.1, so the fallback is AG2's own telemetry given MLflow's
tracer provider (its spans join the MLflow trace under the app's active MLflow span). The
ConversableAgent shape in AG2 1.x's idiom: a planner ``Agent`` with no tools whose reply is the
plan (a re-plan continues its conversation, ``await reply.ask(...)``), and per step attempt one
fresh conversation of an executor ``Agent`` whose plain-function tools AG2 runs itself
(``await executor.ask(task)``: the caller and the tool runner in one), the app deciding re-runs
and re-plans.

The request: find the manuscript's holding in the union catalogue (read page by page), book the
rare-books courier's slot from the lending library, have the lending library's conservator clear
the volume for transit (a check, polled), reserve the reading room for the researcher's day,
charge the history department's account, mail the researcher.

* the app opens one MLflow ``AGENT`` span per request (``ill request {ill}``); a failed request
  raises inside it, so MLflow records the exception and the ``ERROR`` status;
* the planner (under the app's ``plan revision {n}`` span) answers a **CSV table** in a
  ````csv`` fenced block, header ``id,after,action,tool,args``: ``after`` the ``|``-separated
  earlier ids, ``args`` ``key=value;key=value`` (quoted per RFC 4180 at both levels, the title
  holding ``;`` and ``,``), an earlier step's output as ``key=$<id>.<field>``; the app reads it
  with Python's ``csv``. A re-plan answers a new table with a ``status`` column, the settled
  rows ``done``, the others ``todo``;
* one executor conversation per step attempt (under the app's ``step {id} attempt {n}`` span):
  the step's call, its references filled in and a ``request_id`` of the attempt's own
  (``ILL-2027-0418/<id>/<revision>.<attempt>``, ISO 18626's requesting agency request id); the
  executor calls the desk's services and answers
  one line ``[<id>] <supplied|interrupted|conditional|unfilled|pending>: <output json or text>``;
* the services raise **ISO 18626-style exceptions**: :class:`RetryPossible` (``retry after
  HH:MM: ...``: the executor calls again with ``after`` that time, in the same conversation),
  :class:`ServiceInterrupted` (the app runs the step again, up to 8 attempts),
  :class:`Conditional` (``... (use key=value)``: a new table, up to 5), :class:`Unfilled`
  (final); AG2 hands the model the formatted traceback as the tool's result and its telemetry
  ends the tool span in ERROR; a conservation check still in progress after 12 reads is answered
  ``pending``, final;
* after the last step the app checks the reading-room booking against the request (``check
  booking against request``, a ``GUARDRAIL`` span) and watches the facsimile's transit (``watch
  loan {booking}``, tracking reads as span events).

The planner trusts the subject librarian's notes over the request: a scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import httpx2
import mlflow
from ag2 import Agent
from ag2.config import OpenAIConfig
from ag2.middleware.builtin import TelemetryMiddleware
from mlflow.entities import SpanEvent, SpanType
from opentelemetry.sdk.trace import TracerProvider

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .museum import _mlflow_provider, _Relay

REQUEST: dict[str, Any] = {
    "ill": "ILL-2027-0418",
    "researcher": "Dr Ines Varga",
    "title": "Liber Floridus; Lambert of Saint-Omer, facsimile",
    "shelfmark": "MS 92",
    "library": "Ghent University Library",
    "courier": "Eurocourier rare-books van",
    "room": "Special Collections Reading Room",
    "day": "2027-06-08",
    "account": "HIST-30417",
    "amount": 385.0,
    "email": "i.varga@univ.example",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_WAITS = 8
"""``RetryPossible`` answers in one executor conversation before the model stops calling."""
MAX_READS = 12
"""Conservation-check reads in one conversation before the executor answers ``pending``."""
PLANNER = "ill_planner"
EXECUTOR = "ill_runner"
PLANNER_PROMPT = (
    "You are the interlibrary-loan planner of a university library. Answer the request's plan "
    "as a CSV table in a csv fenced block, and a new table with a status column when asked to "
    "re-plan."
)
EXECUTOR_PROMPT = (
    "You are the interlibrary-loan runner of a university library. Do the one step you are "
    "given with your tools and answer one verdict line."
)
OUTPUTS = {
    "holding": "holding_id",
    "courier": "slot_id",
    "conservation": "clearance",
    "reading_room": "booking",
    "charge": "charge_id",
    "notice": "message_id",
}
"""Each step's output field, in the order the steps run."""
VERDICT = re.compile(r"^\[(\w+)\] (supplied|interrupted|conditional|unfilled|pending): (.*)$")
ASKED = re.compile(r"^Call (\w+) with (\{.*\})$", re.M)
RAISED = re.compile(r"^(?:[\w.]+\.)?(RetryPossible|ServiceInterrupted|Conditional|Unfilled): (.*)$")
USE = re.compile(r"\(use (\w+)=([^)]+)\)")


class RetryPossible(RuntimeError):
    """Not now: ``retry after HH:MM: <text>`` (call again with ``after`` that time)."""


class ServiceInterrupted(RuntimeError):
    """The service dropped the request (the step is run again)."""


class Conditional(RuntimeError):
    """Supplied on a condition: ``<text> (use key=value)`` (the plan is redone with it)."""


class Unfilled(RuntimeError):
    """Refused for good."""


# --- the plan: a CSV table ------------------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """An argument taken from an earlier step's output: ``$holding.holding_id``."""

    step: str
    field: str


@dataclass
class Row:
    """One row of the plan's table: a step."""

    id: str
    after: list[str]
    action: str
    tool: str
    args: dict[str, Any]
    status: str = "todo"


def _value(text: str) -> Any:
    if m := re.fullmatch(r"\$(\w+)\.(\w+)", text):
        return Ref(m.group(1), m.group(2))
    if re.fullmatch(r"-?\d+\.\d+", text):
        return float(text)
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return text


def read_table(answer: str) -> list[Row]:
    """The rows of the ```csv block of the planner's answer.

    >>> rows = read_table('''Plan:
    ... ```csv
    ... id,after,action,tool,args,status
    ... holding,,find it,search_union_catalogue,\"""title=A; b, c\"";library=X\",done
    ... courier,holding,book it,book_courier,holding=$holding.holding_id;amount=3.5,todo
    ... ```''')
    >>> [(r.id, r.after, r.args, r.status) for r in rows]  # doctest: +NORMALIZE_WHITESPACE
    [('holding', [], {'title': 'A; b, c', 'library': 'X'}, 'done'),
     ('courier', ['holding'], {'holding': Ref(step='holding', field='holding_id'),
      'amount': 3.5}, 'todo')]
    """
    block = re.search(r"```csv\s*\n(.*?)```", answer, re.DOTALL)
    if not block:
        raise ValueError("no csv block in the plan")
    rows = []
    for rec in csv.DictReader(io.StringIO(block.group(1))):
        pairs = next(csv.reader([rec["args"]], delimiter=";")) if rec["args"] else []
        args = {k: _value(v) for k, _, v in (p.partition("=") for p in pairs)}
        after = [a for a in rec["after"].split("|") if a]
        rows.append(
            Row(rec["id"], after, rec["action"], rec["tool"], args, rec.get("status") or "todo")
        )
    return rows


def write_table(rows: list[Row], with_status: bool) -> str:
    """The planner's table (RFC 4180: ``csv`` quotes what needs it, at both levels)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["id", "after", "action", "tool", "args", *(["status"] if with_status else [])])
    for r in rows:
        inner = io.StringIO()
        parts = [
            f"{k}=${v.step}.{v.field}" if isinstance(v, Ref) else f"{k}={v}"
            for k, v in r.args.items()
        ]
        csv.writer(inner, delimiter=";", lineterminator="").writerow(parts)
        cells = [r.id, "|".join(r.after), r.action, r.tool, inner.getvalue()]
        w.writerow([*cells, *([r.status] if with_status else [])])
    return out.getvalue()


# --- the scripted model ---------------------------------------------------------------------
def _plan(brief: str, revision: int, settled: list[str], uses: list[tuple[str, str]]) -> str:
    """The planner's table: the request's facts, the subject librarian's notes trusted over
    them, every ``use`` a setback named applied; after a setback the settled rows ``done``."""
    facts = json.loads(re.search(r"^Request: (\{.*\})$", brief, re.M).group(1))  # type: ignore[union-attr]
    if notes := re.search(r"^Subject librarian's notes: (\{.*\})$", brief, re.M):
        facts |= json.loads(notes.group(1))
    for key, value in uses:
        facts[key] = value

    def out(step: str) -> Ref:
        return Ref(step, OUTPUTS[step])

    rows = [
        Row("holding", [], f"find {facts['shelfmark']} at {facts['library']} in the union "
            "catalogue", "search_union_catalogue",
            {"title": facts["title"], "shelfmark": facts["shelfmark"],
             "library": facts["library"]}),
        Row("courier", ["holding"], f"book the {facts['courier']} from the lending library",
            "book_courier", {"holding": out("holding"), "library": facts["library"],
                             "courier": facts["courier"]}),
        Row("conservation", ["holding", "courier"], "have the volume cleared for transit",
            "start_conservation_check", {"holding": out("holding"), "slot": out("courier")}),
        Row("reading_room", ["conservation"], f"reserve the {facts['room']} for {facts['day']}",
            "reserve_reading_room", {"clearance": out("conservation"), "room": facts["room"],
                                     "day": facts["day"]}),
        Row("charge", ["reading_room"], f"charge {facts['ill']} to the department's account",
            "charge_department", {"account": facts["account"], "amount": facts["amount"],
                                  "booking": out("reading_room")}),
        Row("notice", ["reading_room", "charge"], f"mail {facts['researcher']} the booking",
            "mail_researcher", {"to": facts["email"], "booking": out("reading_room"),
                                "day": facts["day"]}),
    ]  # fmt: skip
    for r in rows:
        r.status = "done" if r.id in settled else "todo"
    table = write_table(rows, with_status=revision > 1)
    return f"Plan revision {revision} for {facts['ill']}:\n\n```csv\n{table}```"


def _planner(messages: list[dict[str, Any]]) -> str:
    """The planner's turn: the first table, or the next after ``Settled: [...]`` and
    ``Setback: ...`` in a re-plan request."""
    said = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    settled: list[str] = []
    uses: list[tuple[str, str]] = []
    for text in said[1:]:
        if m := re.search(r"^Settled: (\[.*\])$", text, re.M):
            settled = json.loads(m.group(1))
        if u := USE.search(text):
            uses.append((u.group(1), u.group(2)))
    return _plan(said[0], len(said), settled, uses)


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {"id": f"call_{name}_{n}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _executor(messages: list[dict[str, Any]]) -> str | dict[str, Any]:
    """The runner's turn: make the call, again ``after`` the time a ``RetryPossible`` names,
    follow ``next_page``, read a conservation check in progress, then answer its verdict."""
    ask = next(str(m.get("content")) for m in messages if m.get("role") == "user")
    step = re.search(r"^Step (\w+)", ask, re.M).group(1)  # type: ignore[union-attr]
    asked = ASKED.search(ask)
    tool, args = asked.group(1), json.loads(asked.group(2))  # type: ignore[union-attr]
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    results: list[tuple[str, dict[str, Any], str]] = []
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            calls[c["id"]] = (fn["name"], json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool" and m.get("tool_call_id") in calls:
            results.append((*calls[m["tool_call_id"]], str(m.get("content") or "")))
    n = len(results)
    if not results:
        return _call(n, tool, args)
    last, called, came_back = results[-1]
    tail = came_back.strip().splitlines()[-1] if came_back.strip() else ""
    if raised := RAISED.match(tail):
        kind, text = raised.groups()
        if kind == "RetryPossible":
            waits = sum(bool(RAISED.match(r[2].strip().splitlines()[-1])) for r in results)
            if waits > MAX_WAITS:
                return f"[{step}] unfilled: still refused after {waits} calls: {text}"
            after = re.match(r"retry after (\d\d:\d\d)", text)
            return _call(n, last, called | {"after": after.group(1)})  # type: ignore[union-attr]
        verdict = {"ServiceInterrupted": "interrupted", "Conditional": "conditional"}
        return f"[{step}] {verdict.get(kind, 'unfilled')}: {text}"
    seen = json.loads(came_back)
    if seen.get("next_page"):
        return _call(n, last, called | {"page": seen["next_page"]})
    if seen.get("state") == "IN_PROGRESS":
        reads = sum(r[0] == "conservation_check_status" for r in results)
        if reads >= MAX_READS:
            return f"[{step}] pending: check {seen['check_id']} still IN_PROGRESS after {reads}"
        return _call(n, "conservation_check_status", {"check_id": seen["check_id"]})
    return f"[{step}] supplied: {json.dumps(seen)}"


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion: the planner's table, the runner's next tool call or
    verdict.

    >>> msg = respond({"messages": [{"role": "system", "content": "You are the interlibrary"
    ...     "-loan runner"}, {"role": "user", "content": 'Step charge, attempt 1.\\n'
    ...      'Call charge_department with {"account": "HIST-1"}'}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"account": "HIST-1"}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = str(messages[0].get("content") or "") if messages else ""
    if system.startswith("You are the interlibrary-loan planner"):
        return completion(body, {"role": "assistant", "content": _planner(messages)})
    answer = _executor(messages)
    if isinstance(answer, str):
        return completion(body, {"role": "assistant", "content": answer})
    return completion(body, answer)


# --- the world ------------------------------------------------------------------------------
@dataclass
class Desk:
    """The union catalogue, the courier, the conservator, the reading room, the department's
    ledger and the mail of one request."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    holdings: dict[str, str] = field(default_factory=dict)
    """Holding -> its library."""
    checks: dict[str, int] = field(default_factory=dict)
    bookings: list[dict[str, str]] = field(default_factory=list)
    charges: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, name: str) -> None:
        """Raise the scenario's next fault when ``name`` is the service it targets."""
        if not self.faults or name != self.params.get("tool"):
            return
        f = self.faults.pop(0)
        if f["kind"] == "retry":
            raise RetryPossible(f"retry after {f['hint']}: {f['text']}")
        if f["kind"] == "interrupted":
            raise ServiceInterrupted(f["text"])
        if f["kind"] == "conditional":
            raise Conditional(f"{f['text']} (use {f['hint']})")
        raise Unfilled(f["text"])


def services(desk: Desk) -> list[Callable[..., str]]:
    """The desk's services as plain Python functions, bound to one request's world."""
    seed = desk.label.seed

    def search_union_catalogue(
        title: str, shelfmark: str, library: str, request_id: str = "", page: int = 1
    ) -> str:
        """Search the union catalogue for a library's holding of a manuscript, a page at a
        time."""
        desk.fault("search_union_catalogue")
        if page < int(desk.params.get("pages", 1)):
            near = [f"{shelfmark}/{page}{n} (microfilm)" for n in (1, 2)]
            return json.dumps({"holdings": [], "near_matches": near, "next_page": page + 1})
        code = "".join(w[0] for w in library.split()).upper()
        holding = f"UC-{code}-{seed}"
        desk.holdings[holding] = library
        return json.dumps({"holding_id": holding, "library": library, "shelfmark": shelfmark})

    def book_courier(
        holding: str, library: str, courier: str, request_id: str = "", after: str = ""
    ) -> str:
        """Book the rare-books courier's slot collecting a holding from its library."""
        desk.fault("book_courier")
        held = desk.holdings.get(holding, "")
        if held != REQUEST["library"]:
            raise Unfilled(
                f"the {REQUEST['courier']}'s rare-books run for {REQUEST['ill']} collects from "
                f"{REQUEST['library']}; holding {holding} is at {held or 'no known library'}"
            )
        slot = f"CS-{seed}-{len(desk.bookings) + 1}"
        return json.dumps({"slot_id": slot, "courier": courier, "collects": after or "09:30"})

    def start_conservation_check(holding: str, slot: str, request_id: str = "") -> str:
        """Ask the lending library's conservator to clear the volume for transit."""
        desk.fault("start_conservation_check")
        check = f"CC-{seed}-{len(desk.checks) + 1}"
        desk.checks[check] = 0
        if desk.params.get("stuck") or "polls" in desk.params:
            return json.dumps({"check_id": check, "state": "IN_PROGRESS"})
        return json.dumps({"check_id": check, "state": "CLEARED", "clearance": f"CL-{check[3:]}"})

    def conservation_check_status(check_id: str) -> str:
        """A conservation check's state; its clearance once cleared."""
        desk.checks[check_id] += 1
        if desk.params.get("stuck") or desk.checks[check_id] < int(desk.params.get("polls", 0)):
            return json.dumps({"check_id": check_id, "state": "IN_PROGRESS"})
        return json.dumps(
            {"check_id": check_id, "state": "CLEARED", "clearance": f"CL-{check_id[3:]}"}
        )

    def reserve_reading_room(
        clearance: str, room: str, day: str, request_id: str = "", after: str = ""
    ) -> str:
        """Reserve a reading-room desk for the researcher on a day (YYYY-MM-DD)."""
        desk.fault("reserve_reading_room")
        other = desk.params.get("room_to")
        if other and room == REQUEST["room"]:
            raise Conditional(f"the {room} is closed for its fire inspection (use room={other})")
        booking = f"RR-{seed}-{len(desk.bookings) + 1}"
        desk.bookings.append({"booking": booking, "day": day, "room": room})
        return json.dumps({"booking": booking, "room": room, "day": day, "opens": after or "09:00"})

    def charge_department(
        account: str, amount: float, booking: str, request_id: str = "", after: str = ""
    ) -> str:
        """Charge the loan's fee to the department's account."""
        desk.fault("charge_department")
        if account != REQUEST["account"]:
            raise Unfilled(f"the library's ledger holds no department account {account}")
        desk.charges.append(booking)
        return json.dumps({"charge_id": f"CHG-{seed}-{len(desk.charges)}", "amount": amount})

    def mail_researcher(
        to: str, booking: str, day: str, request_id: str = "", after: str = ""
    ) -> str:
        """Mail the researcher the reading-room booking and its day."""
        desk.fault("mail_researcher")
        return json.dumps({"message_id": f"MSG-{booking}-{day[-2:]}", "to": to})

    return [
        search_union_catalogue,
        book_courier,
        start_conservation_check,
        conservation_check_status,
        reserve_reading_room,
        charge_department,
        mail_researcher,
    ]


# --- the app --------------------------------------------------------------------------------
class LoanFailed(Exception):
    """The facsimile did not reach the researcher as requested (the reason is the message)."""


class Rerun(Exception):
    """The service dropped the request: run the step again."""


class Replan(Exception):
    """Supplied on a condition: ask for a new table."""


def _telemetry(provider: TracerProvider, name: str) -> TelemetryMiddleware:
    return TelemetryMiddleware(
        tracer_provider=provider, agent_name=name, provider_name="openai", model_name=MODEL
    )


class LoanRequest:
    """One interlibrary-loan request, from the brief to the watched transit."""

    def __init__(self, label: Label, config: OpenAIConfig, provider: TracerProvider):
        self.label = label
        self.desk = Desk(label)
        self.planner = Agent(
            PLANNER, PLANNER_PROMPT, config=config, middleware=[_telemetry(provider, PLANNER)]
        )
        self.executor = Agent(
            EXECUTOR,
            EXECUTOR_PROMPT,
            config=config,
            tools=services(self.desk),
            middleware=[_telemetry(provider, EXECUTOR)],
        )
        self.outputs: dict[str, dict[str, Any]] = {}
        """Settled step -> its output."""
        self.reply: Any = None
        """The planner's last reply (a re-plan continues its conversation)."""

    def brief(self) -> str:
        notes = {
            k: self.label.params[k] for k in ("library", "day", "account") if k in self.label.params
        }
        lines = [
            f"Plan interlibrary loan {REQUEST['ill']} (ticket T-{self.label.seed}).",
            f"Request: {json.dumps(REQUEST)}",
        ]
        if notes:
            lines.append(f"Subject librarian's notes: {json.dumps(notes)}")
        return "\n".join(lines)

    async def plan(self, revision: int, setback: str) -> list[Row]:
        with mlflow.start_span(name=f"plan revision {revision}", span_type=SpanType.CHAIN) as span:
            if revision == 1:
                ask = self.brief()
                self.reply = await self.planner.ask(ask)
            else:
                ask = (
                    f"Re-plan {REQUEST['ill']}, revision {revision}.\n"
                    f"Settled: {json.dumps(list(self.outputs))}\nSetback: {setback}"
                )
                self.reply = await self.reply.ask(ask)
            span.set_inputs({"ask": ask})
            answer = self.reply.body or ""
            span.set_outputs({"plan": answer})
            rows = read_table(answer)
            span.set_attribute("manuscript.plan.steps", [r.id for r in rows if r.status != "done"])
        return rows

    def value(self, arg: Any) -> Any:
        """An argument with its reference filled in."""
        return self.outputs[arg.step][arg.field] if isinstance(arg, Ref) else arg

    async def attempt(self, row: Row, revision: int, attempt: int) -> None:
        """One executor conversation of a step, its references filled in."""
        args = {k: self.value(v) for k, v in row.args.items()}
        # ISO 18626's requesting agency request id: a new one for every attempt, as the desk's
        # broker wants (a re-sent request with an old id is dropped as a duplicate)
        args["request_id"] = f"{REQUEST['ill']}/{row.id}/{revision}.{attempt}"
        task = (
            f"Step {row.id}, attempt {attempt} (plan revision {revision}).\n"
            f"Call {row.tool} with {json.dumps(args)}\nPurpose: {row.action}\n"
            f"Answer one line: [{row.id}] supplied|interrupted|conditional|unfilled|pending: ..."
        )
        with mlflow.start_span(
            name=f"step {row.id} attempt {attempt}", span_type=SpanType.CHAIN
        ) as span:
            span.set_inputs({"task": task})
            said = ((await self.executor.ask(task)).body or "").strip()
            verdict = VERDICT.match(said)
            state, text = (verdict.group(2), verdict.group(3)) if verdict else ("unfilled", said)
            span.set_outputs({"verdict": said})
            span.set_attribute("manuscript.verdict", state)
            if state == "supplied":
                self.outputs[row.id] = json.loads(text)
                return
            span.set_status("ERROR")
        reason = f"{row.id} ({row.tool}) {state}: {text}"
        if state == "interrupted":
            raise Rerun(reason)
        if state == "conditional":
            raise Replan(reason)
        raise LoanFailed(reason)

    async def work(self) -> None:
        setback = ""
        for revision in range(1, MAX_PLANS + 1):
            rows = await self.plan(revision, setback)
            setback = ""
            for row in rows:
                if row.status == "done" or row.id in self.outputs:
                    continue
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    try:
                        await self.attempt(row, revision, attempt)
                        break
                    except Rerun as e:
                        if attempt == MAX_ATTEMPTS:
                            raise LoanFailed(str(e)) from e
                    except Replan as e:
                        setback = str(e)
                        break
                if setback:
                    break
            if not setback:
                return
        raise LoanFailed(f"no plan holds after {MAX_PLANS} revisions: {setback}")

    def check(self) -> None:
        """The app's checks once the researcher is mailed: the reading-room booking against the
        request, then the facsimile's transit up to the reading room."""
        booking = self.desk.bookings[-1]
        with mlflow.start_span(
            name="check booking against request", span_type=SpanType.GUARDRAIL
        ) as span:
            span.set_inputs({"booking": booking["booking"], "request_day": REQUEST["day"]})
            span.set_outputs({"booking_day": booking["day"]})
            if booking["day"] != REQUEST["day"]:
                raise LoanFailed(
                    f"reading-room booking {booking['booking']} is for {booking['day']}; "
                    f"{REQUEST['researcher']} requested {REQUEST['day']}"
                )
        with mlflow.start_span(name=f"watch loan {booking['booking']}") as span:
            span.set_inputs({"booking": booking["booking"], "room": booking["room"]})
            stops = ("Ghent stacks", "Lille", "Calais", "library loading bay")
            for read, place in enumerate(stops, 1):
                if self.label.scenario == "external_strike" and read > int(
                    self.label.params["reads"]
                ):
                    raise LoanFailed(
                        f"a port strike halts the courier at {place}; the lending library "
                        f"recalls the facsimile and {REQUEST['ill']} is cancelled"
                    )
                span.add_event(
                    # SpanEvent is a concrete dataclass; mypy reads its base's abstract from_proto
                    SpanEvent("tracking", attributes={"read": read, "at": place})  # type: ignore[abstract]
                )
            span.set_outputs({"state": "delivered"})

    async def run(self) -> str:
        trace_id = ""
        try:
            with mlflow.start_span(
                name=f"ill request {REQUEST['ill']}", span_type=SpanType.AGENT
            ) as root:
                # MLflow's trace id is "tr-" and the OpenTelemetry trace id in hex
                trace_id = root.trace_id.removeprefix("tr-")
                root.set_inputs(REQUEST | {"run": self.label.run})
                await self.work()
                self.check()
                root.set_outputs({"outcome": "delivered", "outputs": self.outputs})
        except LoanFailed:  # MLflow recorded the exception and the root's ERROR status
            pass
        return trace_id


async def _request(label: Label, base_url: str, provider: TracerProvider) -> str:
    # one HTTP client per request, closed when it ends (each ``ask`` builds its own OpenAI
    # client, whose own HTTP client would be closed only when collected, after the loop)
    http = httpx2.AsyncClient()
    config = OpenAIConfig(
        model=MODEL, base_url=base_url, api_key="test", max_retries=0, http_client=http
    )
    try:
        return await LoanRequest(label, config, provider).run()
    finally:
        await http.aclose()


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the manuscript scenarios under AG2's telemetry on MLflow's tracer provider, its spans
    relayed to ``provider``; run name -> trace id."""
    if not labels:
        return {}
    mlflow_provider = _mlflow_provider()
    quiet = logging.getLogger("mlflow")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    _Relay.target = provider
    # MLflow keeps its active span in a context of its own unless told to put it in
    # OpenTelemetry's too, where AG2's telemetry looks for its parent
    propagate = {"MLFLOW_TRACE_PROPAGATE_TO_OTEL_CONTEXT": "true"}
    try:
        with mock.patch.dict(os.environ, propagate), ModelServer(respond=respond) as server:
            base = server.base_url("corpus-manuscript")
            return {lab.run: asyncio.run(_request(lab, base, mlflow_provider)) for lab in labels}
    finally:
        _Relay.target = None
        quiet.setLevel(level)

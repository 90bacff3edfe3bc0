"""A county library's outreach desk running a bookmobile's week with **Strands Agents** (a
planner ``Agent`` with no tools, an executor ``Agent`` with ``@tool`` functions run once per step
attempt), on Strands' ``OpenAIModel`` against a scripted model on the conformance suite's fake
OpenAI server (``ModelServer(respond=...)``), traced by **MLflow's Strands autologging**
(``mlflow.strands.autolog()`` from the lightweight ``mlflow-tracing`` SDK) and the app's own
``mlflow.start_span`` spans. No planscope code.

Sealed-76 split only (see README.md). The task: the week's bookmobile round; plan the route from
the depot's stop list (read page by page), pull the requested titles from the branch's stock,
have the vehicle inspected (an inspection, polled), book a driver for the round's day, charge
the branch's outreach budget code, mail the branch manager. The desk keeps its runbooks in a
wiki, so it asks the model for the plan as a **Markdown table**:

* the app opens one MLflow ``AGENT`` span per week (``bookmobile week {week}``); a failed week
  raises inside it, so MLflow records the exception and the ``ERROR`` status;
* one planner invocation per plan (under the app's ``plan revision {n}`` span): its answer holds
  a table ``| # | step | tool | arguments | after |``, one row per step, arguments written
  ``key=value; key=value``, an earlier step's output ``{{step.field}}``, ``after`` the step
  numbers it waits for. Asked again after a setback, the planner repeats the settled outputs in
  an "Already done" bullet list (``- step.field = value``) above a table of the steps still to
  do, their numbers kept. The app reads the table with a small hand-written reader;
* one executor invocation per step attempt (under the app's ``step {step} attempt {n}`` span):
  the task names the tool and its arguments, references filled in; the executor calls the desk's
  services and answers a **step report** (``result: done|failed``, ``code:``, ``output: {json}``
  or ``error: ...``);
* the services fail with **desk codes** (:class:`DeskError`, ``[CODE] text``), which Strands
  hands the model as an error tool result: ``HOLD`` (``retry at HH:MM``: the executor calls
  again ``at`` that time, in the same invocation), ``RESTART`` (the app runs the step again, up
  to 8 attempts), ``REROUTE`` with ``(use key=value)`` (a new plan, up to 5), ``DENIED``
  (final); an inspection still open after 12 reads is reported as ``STALLED``, final;
* after the last step the app checks the driver booking against the week's round day (``check
  driver booking against round``, a ``GUARDRAIL`` span) and watches the round (``watch round
  {booking}``, stops as span events).

MLflow's tracer provider is the museum agent's (one per process, OTLP to a loopback sink, a
relay to the play's provider). MLflow's Strands autologging adds a span processor to the
process's global tracer provider, which hands each Strands span (``invoke_agent``,
``execute_event_loop_cycle``, ``chat``, ``execute_tool``) to MLflow's tracer: in the corpus the
global provider is the relay (:func:`._relay.global_provider`), so the play gives MLflow an SDK
provider of its own that the relay forwards Strands' spans to, and Strands' threading
instrumentation carries the active MLflow span into the thread each invocation runs in; both
are undone when the play returns. The planner trusts the outreach librarian's notes over the
week's order: the scenario's wrong value comes from a note. This source records no context data
(no starvation label).
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import mlflow
import mlflow.strands
from mlflow.entities import SpanEvent, SpanType
from opentelemetry.instrumentation.threading import ThreadingInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from strands import Agent, tool
from strands.models.openai import OpenAIModel
from strands.types.tools import AgentTool

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from ._relay import global_provider
from .museum import _mlflow_provider, _Relay

ORDER: dict[str, Any] = {
    "week": "BM-2027-W19",
    "branch": "Ashcombe Branch",
    "depot": "Ashcombe depot",
    "titles": 38,
    "vehicle": "BM-2",
    "day": "2027-05-11",
    "code": "OUT-4471-BM",
    "amount": 412.5,
    "manager": "manager@ashcombe.library.example",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_READS = 12
"""Inspection reads in one executor invocation before the executor reports it stalled."""
PLANNER = "Week: "
"""How the planner's brief opens (a step's task never does)."""
OUTPUTS = {
    "route": "route_id",
    "pull": "pull_id",
    "inspection": "certificate",
    "driver": "booking",
    "charge": "charge_id",
    "mail": "message_id",
}
"""Each step's output field, in the order the steps run."""
HEADER = "| # | step | tool | arguments | after |"


class DeskError(RuntimeError):
    """A service's failure, ``[CODE] text``."""

    def __init__(self, code: str, text: str):
        super().__init__(f"[{code}] {text}")


# --- the plan: a Markdown table ---------------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """An argument taken from an earlier step: ``{{route.route_id}}``."""

    step: str
    field: str


@dataclass
class Row:
    """One row of the plan's table: a step."""

    number: int
    step: str
    tool: str
    args: dict[str, Any]
    after: list[int]


@dataclass
class Plan:
    done: dict[str, str]
    """``- step.field = value`` bullets of "Already done": the settled outputs, by step."""
    rows: list[Row]


_REF = re.compile(r"^\{\{(\w+)\.(\w+)\}\}$")


def _value(text: str) -> Any:
    text = text.strip()
    ref = _REF.match(text)
    if ref:
        return Ref(ref.group(1), ref.group(2))
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"-?\d+\.\d+", text):
        return float(text)
    return text


def read_plan(text: str) -> Plan:
    """The plan's steps from the planner's answer: the "Already done" bullets, then the rows of
    the table under its header row.

    >>> p = read_plan('''Already done:
    ... - route.route_id = RT-1
    ...
    ... | # | step | tool | arguments | after |
    ... |---|------|------|-----------|-------|
    ... | 2 | pull | pull_stock | route={{route.route_id}}; titles=38 | 1 |''')
    >>> p.done, p.rows[0].number, p.rows[0].tool, p.rows[0].args, p.rows[0].after
    ({'route': 'RT-1'}, 2, 'pull_stock', {'route': Ref(step='route', field='route_id'), \
'titles': 38}, [1])
    """
    done = {
        m.group(1): m.group(3)
        for m in re.finditer(r"^\s*[-*]\s+(\w+)\.(\w+)\s*=\s*(\S.*?)\s*$", text, re.MULTILINE)
    }
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().startswith("| #")), None)
    if start is None:
        raise ValueError("no plan table in the answer")
    rows: list[Row] = []
    for line in lines[start + 1 :]:
        line = line.strip()
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        if set(cells[0]) <= set("-: "):
            continue
        number, step, name, argtext, after = cells
        args: dict[str, Any] = {}
        for pair in filter(None, (p.strip() for p in argtext.split(";"))):
            key, _, value = pair.partition("=")
            args[key.strip()] = _value(value)
        deps = [int(n) for n in re.findall(r"\d+", after)]
        rows.append(Row(int(number), step.strip("`"), name.strip("`"), args, deps))
    return Plan(done, rows)


def _cell(value: Any) -> str:
    if isinstance(value, Ref):
        return f"{{{{{value.step}.{value.field}}}}}"
    return str(value)


def write_plan(week: str, revision: int, done: dict[str, str], rows: list[Row]) -> str:
    """The Markdown answer the scripted planner gives."""
    lines = [f"Plan for bookmobile week {week} (revision {revision}):", ""]
    if done:
        lines += ["Already done:"]
        lines += [f"- {s}.{OUTPUTS[s]} = {v}" for s, v in done.items()]
        lines += [""]
    lines += [HEADER, "|---|------|------|-----------|-------|"]
    for r in rows:
        args = "; ".join(f"{k}={_cell(v)}" for k, v in r.args.items())
        after = ", ".join(str(n) for n in r.after)
        lines.append(f"| {r.number} | {r.step} | {r.tool} | {args} | {after} |")
    lines += ["", "Each step's output feeds the rows that name it."]
    return "\n".join(lines)


# --- the scripted model -----------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _plan(brief: str) -> str:
    """The planner's table: the week's order, the librarian's notes trusted over it; after a
    setback with a ``use`` value that value; the settled outputs in "Already done", the settled
    steps left out of the table, the step numbers kept."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Order"]) | json.loads(lines.get("Librarian's notes", "{}"))
    settled: dict[str, str] = json.loads(lines.get("Settled", "{}"))
    revision = int(lines.get("Revision", "1"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)

    def out(step: str) -> Ref:
        return Ref(step, OUTPUTS[step])

    rows = [
        Row(1, "route", "plan_route", {"depot": facts["depot"], "week": facts["week"]}, []),
        Row(2, "pull", "pull_stock",
            {"route": out("route"), "titles": facts["titles"], "branch": facts["branch"]}, [1]),
        Row(3, "inspection", "inspect_vehicle",
            {"vehicle": facts["vehicle"], "pull": out("pull")}, [2]),
        Row(4, "driver", "book_driver",
            {"certificate": out("inspection"), "depot": facts["depot"], "day": facts["day"]},
            [3]),
        Row(5, "charge", "charge_budget",
            {"code": facts["code"], "amount": facts["amount"], "booking": out("driver")}, [4]),
        Row(6, "mail", "mail_manager",
            {"to": facts["manager"], "booking": out("driver"), "day": facts["day"]}, [4, 5]),
    ]  # fmt: skip
    todo = [r for r in rows if r.step not in settled]
    return write_plan(facts["week"], revision, settled, todo)


def _report(result: str, code: str, **fields: Any) -> str:
    """The executor's step report."""
    lines = [f"result: {result}", f"code: {code}"]
    lines += [f"{k}: {json.dumps(v) if k == 'output' else v}" for k, v in fields.items()]
    return "\n".join(lines)


_FAILED = re.compile(r"\[([A-Z]+)\] (.*)", re.DOTALL)


def _executor(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The executor's turn: make the call, call again ``at`` the time a HOLD names, follow
    ``next_page``, read an open inspection, answer the step report."""
    found = re.search(r"^Call: (\w+) (.*)$", task, re.MULTILINE)
    assert found, task
    name, args = found.group(1), json.loads(found.group(2))
    turn = len(messages)
    calls: list[tuple[str, dict[str, Any], str]] = []
    pending: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            pending[c["id"]] = (fn["name"], json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool" and m.get("tool_call_id") in pending:
            calls.append((*pending.pop(m["tool_call_id"]), _text(m.get("content"))))
    if not calls:
        return _call(name, args, turn)
    last, called, came_back = calls[-1]
    failed = _FAILED.search(came_back)
    if failed:
        code, text = failed.group(1), failed.group(2).strip()
        at = re.search(r"retry at (\d\d:\d\d)", text)
        if code == "HOLD" and at:
            return _call(last, called | {"at": at.group(1)}, turn)
        return _answer(_report("failed", code, error=text))
    seen = json.loads(came_back)
    if seen.get("next_page"):
        return _call(last, called | {"page": seen["next_page"]}, turn)
    if seen.get("state") == "OPEN":
        reads = sum(c[0] == "inspection_status" for c in calls)
        if reads >= MAX_READS:
            note = f"inspection {seen['inspection_id']} still OPEN after {reads} reads"
            return _answer(_report("failed", "STALLED", error=note))
        return _call("inspection_status", {"inspection_id": seen["inspection_id"]}, turn)
    return _answer(_report("done", "OK", output=seen))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the planner's table, or the
    executor's next turn.

    >>> brief = "Week: run the bookmobile.\\nOrder: " + json.dumps(ORDER)
    >>> msg = respond({"messages": [{"role": "user", "content": brief}]})
    >>> text = msg["choices"][0]["message"]["content"]
    >>> [line for line in text.splitlines() if line.startswith("| 3 ")]
    ['| 3 | inspection | inspect_vehicle | vehicle=BM-2; pull={{pull.pull_id}} | 2 |']
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if task.startswith(PLANNER):
        return completion(body, _answer(_plan(task)))
    return completion(body, _executor(messages, task))


# --- the desk's services ----------------------------------------------------------------------
@dataclass
class World:
    """The depot's stop list, the branch's stock room, the fleet garage, the driver roster, the
    county's budget ledger and mail of one week."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    routes: dict[str, str] = field(default_factory=dict)
    """Route -> the depot it starts from."""
    inspections: dict[str, int] = field(default_factory=dict)
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
        if f["code"] == "HOLD":
            raise DeskError("HOLD", f"{f['text']}; retry at {f['hint']}")
        if f["code"] == "REROUTE":
            raise DeskError("REROUTE", f"{f['text']} (use {f['hint']})")
        raise DeskError(f["code"], f["text"])


def make_tools(world: World) -> dict[str, AgentTool]:
    """The desk's services, bound to one week's world, as Strands tools."""
    seed = world.label.seed

    @tool
    def plan_route(depot: str, week: str, page: int = 1) -> str:
        """The depot's stop list for a week's round, a page at a time; the route once complete.

        Args:
            depot: the depot the bookmobile leaves from
            week: the outreach week
            page: the stop list's page
        """
        world.fault("plan_route")
        code = depot[:3].upper()
        if page < int(world.params.get("pages", 1)):
            stops = [f"{code}-STOP-{page}{n}" for n in range(4)]
            return json.dumps({"stops": stops, "next_page": page + 1})
        route = f"RT-{code}-{seed}"
        world.routes[route] = depot
        return json.dumps({"route_id": route, "depot": depot, "week": week, "stops": 11})

    @tool
    def pull_stock(route: str, titles: int, branch: str, at: str = "") -> str:
        """Pull the requested titles from a branch's stock room for a route's crates.

        Args:
            route: the bookmobile route
            titles: the number of requested titles
            branch: the branch whose stock is pulled
            at: call again at this time (HH:MM), when told to retry
        """
        world.fault("pull_stock")
        moved = world.params.get("branch_to")
        if moved and branch == ORDER["branch"]:
            raise DeskError(
                "REROUTE", f"{branch}'s stock room is shut for stocktake (use branch={moved})"
            )
        depot = world.routes.get(route, "")
        if depot != ORDER["depot"]:
            raise DeskError(
                "DENIED",
                f"{ORDER['vehicle']}'s crates for {ORDER['week']} load at {ORDER['depot']}; "
                f"route {route} leaves from {depot or 'an unknown depot'}",
            )
        return json.dumps({"pull_id": f"PL-{seed}-{branch[:3].upper()}", "titles": titles})

    @tool
    def inspect_vehicle(vehicle: str, pull: str) -> str:
        """Open the fleet garage's inspection of the loaded bookmobile.

        Args:
            vehicle: the bookmobile
            pull: the stock pull loaded on it
        """
        world.fault("inspect_vehicle")
        inspection = f"IN-{seed}-{len(world.inspections) + 1}"
        world.inspections[inspection] = 0
        if world.params.get("stuck") or "polls" in world.params:
            return json.dumps({"inspection_id": inspection, "state": "OPEN", "vehicle": vehicle})
        return json.dumps(
            {"inspection_id": inspection, "state": "PASSED", "certificate": f"VC-{inspection[3:]}"}
        )

    @tool
    def inspection_status(inspection_id: str) -> str:
        """An inspection's state; its certificate once passed.

        Args:
            inspection_id: the inspection
        """
        world.inspections[inspection_id] += 1
        reads = world.inspections[inspection_id]
        if world.params.get("stuck") or reads < int(world.params.get("polls", 0)):
            return json.dumps({"inspection_id": inspection_id, "state": "OPEN"})
        return json.dumps(
            {
                "inspection_id": inspection_id,
                "state": "PASSED",
                "certificate": f"VC-{inspection_id[3:]}",
            }
        )

    @tool
    def book_driver(certificate: str, depot: str, day: str, at: str = "") -> str:
        """Book a driver from a depot's roster for the round day.

        Args:
            certificate: the vehicle's inspection certificate
            depot: the depot the driver starts from
            day: the round day (YYYY-MM-DD)
            at: call again at this time (HH:MM), when told to retry
        """
        world.fault("book_driver")
        if depot != ORDER["depot"] and depot not in world.params.get("depots", ()):
            raise DeskError("DENIED", f"no bookmobile driver is rostered at {depot}")
        booking = f"DR-{seed}-{len(world.bookings) + 1}"
        world.bookings.append({"booking": booking, "day": day, "depot": depot})
        return json.dumps({"booking": booking, "day": day, "depot": depot, "starts": at or "08:30"})

    @tool
    def charge_budget(code: str, amount: float, booking: str, at: str = "") -> str:
        """Charge the round to the branch's outreach budget code.

        Args:
            code: the budget code
            amount: the amount in GBP
            booking: the driver booking the charge is for
            at: call again at this time (HH:MM), when told to retry
        """
        world.fault("charge_budget")
        if code != ORDER["code"]:
            raise DeskError("DENIED", f"the county ledger holds no budget code {code}")
        world.charges.append(booking)
        return json.dumps({"charge_id": f"CH-{seed}-{len(world.charges)}", "code": code})

    @tool
    def mail_manager(to: str, booking: str, day: str, at: str = "") -> str:
        """Mail the branch manager the round's driver booking and day.

        Args:
            to: the branch manager's address
            booking: the driver booking
            day: the round day
            at: call again at this time (HH:MM), when told to retry
        """
        world.fault("mail_manager")
        return json.dumps({"message_id": f"MSG-{booking}-{day[-2:]}", "to": to})

    tools: list[AgentTool] = [
        plan_route, pull_stock, inspect_vehicle, inspection_status, book_driver, charge_budget,
        mail_manager,
    ]  # fmt: skip
    return {t.tool_name: t for t in tools}


# --- the app ----------------------------------------------------------------------------------
class WeekFailed(Exception):
    """The bookmobile's week did not run (the reason is the message)."""


class Rerun(Exception):
    """The step's call was restarted (RESTART): run the step again."""


class Replan(Exception):
    """The step failed on the plan's data (REROUTE): ask for a new plan."""


class BookmobileWeek:
    """One week's round, from the brief to the watched round."""

    def __init__(self, label: Label, model: OpenAIModel):
        self.label = label
        self.model = model
        self.world = World(label)
        self.tools = make_tools(self.world)
        self.outputs: dict[str, str] = {}
        """Settled step -> its output."""

    def brief(self, revision: int, setback: str) -> str:
        notes = {
            k: self.label.params[k] for k in ("depot", "day", "code") if k in self.label.params
        }
        lines = [
            f"{PLANNER}{ORDER['week']}: plan the bookmobile's round for {ORDER['branch']}.",
            f"Order: {json.dumps(ORDER)}",
        ]
        if notes:
            lines.append(f"Librarian's notes: {json.dumps(notes)}")
        if revision > 1:
            lines += [
                f"Revision: {revision}",
                f"Settled: {json.dumps(self.outputs)}",
                f"Setback: {setback}",
            ]
        return "\n".join(lines)

    def plan(self, revision: int, setback: str) -> Plan:
        with mlflow.start_span(name=f"plan revision {revision}", span_type=SpanType.CHAIN) as span:
            brief = self.brief(revision, setback)
            span.set_inputs({"brief": brief})
            planner = Agent(
                model=self.model,
                name="outreach_planner",
                system_prompt=(
                    "You plan a bookmobile's week for the library's outreach desk. Answer the "
                    f"plan as a Markdown table with the header {HEADER}."
                ),
                callback_handler=None,
                trace_attributes={
                    "bookmobile.week": ORDER["week"],
                    "bookmobile.revision": revision,
                },
            )
            answer = str(planner(brief)).strip()
            span.set_outputs({"plan": answer})
            plan = read_plan(answer)
            span.set_attribute("bookmobile.plan.steps", [r.step for r in plan.rows])
        return plan

    def value(self, arg: Any, done: dict[str, str]) -> Any:
        """An argument with its reference filled in."""
        if not isinstance(arg, Ref):
            return arg
        return done.get(arg.step, self.outputs.get(arg.step))

    def attempt(self, row: Row, attempt: int, done: dict[str, str]) -> None:
        """One executor invocation for a row, its references filled in."""
        args = {k: self.value(v, done) for k, v in row.args.items()}
        task = (
            f"Step {row.number}: {row.step} (attempt {attempt})\n"
            f"Call: {row.tool} {json.dumps(args)}\n"
            "Answer a step report: result, code, output or error."
        )
        tools: list[Any] = [self.tools[row.tool]]
        if row.tool == "inspect_vehicle":
            tools.append(self.tools["inspection_status"])
        with mlflow.start_span(
            name=f"step {row.step} attempt {attempt}", span_type=SpanType.CHAIN
        ) as span:
            span.set_inputs({"task": task})
            executor = Agent(
                model=self.model,
                name="outreach_executor",
                system_prompt="You carry out one step of the bookmobile's week with the desk's "
                "services, then answer its step report.",
                tools=tools,
                callback_handler=None,
                trace_attributes={"bookmobile.step": row.step, "bookmobile.attempt": attempt},
            )
            report = dict(re.findall(r"^(\w+): (.*)$", str(executor(task)), re.MULTILINE))
            span.set_outputs(report)
            if report.get("result") == "done":
                self.outputs[row.step] = str(json.loads(report["output"])[OUTPUTS[row.step]])
                return
            span.set_status("ERROR")
            code = report.get("code", "DENIED")
            span.set_attribute("bookmobile.desk_code", code)
        text = f"{row.step} ({row.tool}) [{code}] {report.get('error', '')}"
        if code == "RESTART":
            raise Rerun(text)
        if code == "REROUTE":
            raise Replan(text)
        raise WeekFailed(text)

    def work(self) -> None:
        setback = ""
        for revision in range(1, MAX_PLANS + 1):
            plan = self.plan(revision, setback)
            setback = ""
            for row in plan.rows:
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    try:
                        self.attempt(row, attempt, plan.done)
                        break
                    except Rerun as e:
                        if attempt == MAX_ATTEMPTS:
                            raise WeekFailed(str(e)) from e
                    except Replan as e:
                        setback = str(e)
                        break
                if setback:
                    break
            if not setback:
                return
        raise WeekFailed(f"no plan holds after {MAX_PLANS}: {setback}")

    def check(self) -> None:
        """The app's own checks once the manager is mailed: the driver booking against the
        round day, then the round's stops."""
        booking = self.world.bookings[-1]
        with mlflow.start_span(
            name="check driver booking against round", span_type=SpanType.GUARDRAIL
        ) as span:
            span.set_inputs({"booking": booking["booking"], "round_day": ORDER["day"]})
            span.set_outputs({"booking_day": booking["day"]})
            if booking["day"] != ORDER["day"]:
                raise WeekFailed(
                    f"driver booking {booking['booking']} is for {booking['day']}; week "
                    f"{ORDER['week']}'s round runs on {ORDER['day']}"
                )
        with mlflow.start_span(name=f"watch round {booking['booking']}") as span:
            span.set_inputs({"booking": booking["booking"], "depot": booking["depot"]})
            stops = ("Ashcombe Green", "Lower Fenwick", "Stoke Marden", "Hallow End")
            for read, stop in enumerate(stops, 1):
                if self.label.scenario == "external_flood" and read > int(
                    self.label.params["reads"]
                ):
                    raise WeekFailed(
                        f"flood water closes the lane at {stop}; the county calls the "
                        "bookmobile back to the depot and cancels the rest of the round"
                    )
                span.add_event(
                    # SpanEvent is a concrete dataclass; mypy reads its base's abstract from_proto
                    SpanEvent("stop", attributes={"read": read, "at": stop})  # type: ignore[abstract]
                )
            span.set_outputs({"state": "round complete"})

    def run(self) -> str:
        try:
            with mlflow.start_span(
                name=f"bookmobile week {ORDER['week']}", span_type=SpanType.AGENT
            ) as root:
                # MLflow's trace id is "tr-" and the OpenTelemetry trace id in hex
                trace_id = root.trace_id.removeprefix("tr-")
                root.set_inputs(ORDER | {"run": self.label.run})
                self.work()
                self.check()
                root.set_outputs({"outcome": "round complete", "outputs": self.outputs})
        except WeekFailed:  # MLflow recorded the exception and the root's ERROR status
            pass
        return trace_id


# the module, not the ``autolog`` function ``mlflow.strands`` exports under the same name
_MLFLOW_STRANDS = importlib.import_module("mlflow.strands.autolog")
_STRANDS_PROVIDER = TracerProvider()
"""The provider the relay hands Strands' spans to during a play; MLflow's Strands autologging
puts its span processor here (it hands each span to MLflow's tracer, nothing else)."""


@contextmanager
def _strands_autolog() -> Iterator[None]:
    """``mlflow.strands.autolog()`` for the block, its span processor on ``_STRANDS_PROVIDER``.

    MLflow's set-up looks up the process's global provider and adds its processor to it (or, with
    none set, sets a new SDK provider as the global one, for good); the corpus's global provider
    is the relay, which has no span processors, so the set-up and the tear-down see the provider
    the relay forwards to instead.
    """
    with mock.patch.object(_MLFLOW_STRANDS, "get_tracer_provider", return_value=_STRANDS_PROVIDER):
        mlflow.strands.autolog(silent=True)
    try:
        yield
    finally:
        with mock.patch.object(
            _MLFLOW_STRANDS, "get_tracer_provider", return_value=_STRANDS_PROVIDER
        ):
            mlflow.strands.autolog(disable=True, silent=True)


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the bookmobile scenarios under MLflow's Strands autologging, its spans relayed to
    ``provider``; autologging and Strands' threading instrumentation are undone when the play
    returns."""
    if not labels:
        return {}
    _mlflow_provider()
    quiet = logging.getLogger("mlflow")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    strands_log = logging.getLogger("strands")
    _Relay.target = provider
    threading = ThreadingInstrumentor()
    threading.instrument()
    try:
        # MLflow keeps its active span in a context of its own unless told to put it in
        # OpenTelemetry's too, where Strands' tracer looks for its parent
        propagate = {"MLFLOW_TRACE_PROPAGATE_TO_OTEL_CONTEXT": "true"}
        with (
            mock.patch.dict(os.environ, propagate),
            global_provider(_STRANDS_PROVIDER),
            _strands_autolog(),
            ModelServer(respond=respond) as server,
        ):
            # Strands logs every failing tool call with its traceback (the spans carry them)
            strands_log.disabled = True
            model = OpenAIModel(
                client_args={
                    "base_url": server.base_url("corpus-bookmobile"),
                    "api_key": "test",
                    "max_retries": 0,
                },
                model_id=MODEL,
            )
            return {label.run: BookmobileWeek(label, model).run() for label in labels}
    finally:
        threading.uninstrument()
        strands_log.disabled = False
        _Relay.target = None
        quiet.setLevel(level)

"""A veterinary hospital scheduling an animal's operation, written on **LangGraph's Functional
API** (``langgraph.func.entrypoint`` / ``task`` with an ``InMemorySaver`` checkpointer,
langchain-openai's ``ChatOpenAI`` for the planner and executor calls, LangChain ``@tool``\\ s the
executor model calls through ``bind_tools``), traced by **OpenInference's LangChain
instrumentor** (``LangChainInstrumentor().instrument(tracer_provider=...)``, as a Phoenix user
traces it) and the app's own plain OpenTelemetry spans (the root per case, the admission check,
the watch), against a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)``). No planscope code.

Sealed-51 split only (see README.md). The case: a dog needs knee surgery; find a surgeon for the
species and procedure on the hospital's rota (paged), order the pre-op blood panel from the lab
(a job, polled), book an operating theatre slot for the day, charge the estimate to the client's
account, text the owner. As a LangGraph user writes a planner-executor app with the Functional
API:

* the ``schedule_surgery`` entrypoint orchestrates: a ``plan`` task (one ``ChatOpenAI`` call
  answering a **CSV plan**: a header ``no,step,tool,goal,args,status,result``, one row a step,
  its ``args`` a URL query string whose ``@step`` values are that earlier step's result), then
  per step attempt an ``execute`` task (a tool-calling loop: the model bound to the hospital's
  tools, each tool call invoked and answered with a ``ToolMessage``, an error as an ``Error:``
  message with status ``error``), re-runs (up to eight attempts a step) and re-plans (up to five
  plans; a re-plan answers the whole sheet again, the done rows ``status`` ``done`` with their
  ``result``), then the ``check`` and ``watch`` tasks, each around a plain app span;
* the executor ends an attempt with a **report in header lines** (``outcome: done | retry |
  replan | refused | stalled``, ``result:``, ``note:``);
* the hospital's services raise :class:`ClinicError` texts with a **triage code**:
  ``[AMBER] ...; retry at HH:MM`` (the executor calls again ``retry_at`` that time, in the same
  attempt), ``[YELLOW]`` (the executor reports ``retry``: the app runs the step again),
  ``[BLUE] ... (use key=value)`` (``replan``: the planner takes the value), ``[BLACK]`` (final).

The planner trusts the front desk's notes over the consent form: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import entrypoint, task
from langgraph.pregel import Pregel
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .analyst import _call, _say, _text

CASE: dict[str, str] = {
    "patient": "Biscuit",
    "patient_id": "PT-20417",
    "species": "canine",
    "procedure": "TPLO right stifle",
    "site": "Riverside Veterinary Hospital",
    "theatre": "Theatre 2",
    "day": "2027-03-16",
    "account": "CL-58204",
    "estimate": "2480.00",
    "phone": "+44 7700 900417",
}
HEADER = ("no", "step", "tool", "goal", "args", "status", "result")
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_READS = 12
"""Lab reads in one attempt before the executor reports the panel stalled."""
MAX_TURNS = 30
PLANNER = "You are the surgical coordinator's planner. Answer the plan as CSV."
EXECUTOR = "You are the surgical coordinator. Carry out the one step with the tools, then report."
TRACER = "surgery-app"
"""The app's tracer (its root span per case, the check and the watch)."""
TRIAGE = re.compile(r"\[(AMBER|YELLOW|BLUE|BLACK)\] (.*)", re.DOTALL)


class ClinicError(RuntimeError):
    """A hospital service's refusal, ``[CODE] text``."""


# --- the plan as CSV ----------------------------------------------------------------------
def query(args: dict[str, str]) -> str:
    """A step's arguments as a URL query string (spaces, ``@`` and ``+`` left readable).

    >>> query({"surgeon": "@find_surgeon", "theatre": "Theatre 2"})
    'surgeon=@find_surgeon&theatre=Theatre 2'
    """
    return "&".join(f"{k}={quote(str(v), safe='@:+ /')}" for k, v in args.items())


def unquery(text: str) -> dict[str, str]:
    """A query string's arguments.

    >>> unquery("surgeon=@find_surgeon&theatre=Theatre 2")
    {'surgeon': '@find_surgeon', 'theatre': 'Theatre 2'}
    """
    pairs = (p.partition("=") for p in text.split("&") if p)
    return {k: unquote(v) for k, _, v in pairs}


def write_sheet(rows: list[dict[str, str]]) -> str:
    """The plan sheet as CSV, header first."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=HEADER, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def read_sheet(text: str) -> list[dict[str, str]]:
    """The rows of the planner's CSV answer (a Markdown code fence around it dropped).

    >>> read_sheet("```csv\\nno,step,tool,goal,args,status,result\\n1,a,t,g,x=1,todo,\\n```")
    [{'no': '1', 'step': 'a', 'tool': 't', 'goal': 'g', 'args': 'x=1', 'status': 'todo', \
'result': ''}]
    """
    body = re.sub(r"^```\w*\n|```\s*$", "", text.strip(), flags=re.MULTILINE)
    return [dict(row) for row in csv.DictReader(io.StringIO(body))]


# --- the scripted model -------------------------------------------------------------------
def _plan(brief: str) -> str:
    """The planner's CSV: the consent form's facts, the front desk's notes trusted over them;
    after a ``(use key=value)`` setback that value; done steps repeated with their results."""
    lines = dict(re.findall(r"^([\w ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Consent form"]) | json.loads(lines.get("Front desk notes", "{}"))
    done: dict[str, str] = json.loads(lines.get("Done", "{}"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)
    steps = [
        ("find_surgeon", "surgeon_rota", f"Find a {facts['species']} orthopaedic surgeon",
         {"species": facts["species"], "procedure": facts["procedure"], "site": facts["site"]}),
        ("order_bloods", "lab_order", "Order the pre-op blood panel",
         {"patient_id": facts["patient_id"], "species": facts["species"], "panel": "pre-op"}),
        ("book_theatre", "theatre_booking", f"Book {facts['theatre']} on {facts['day']}",
         {"patient_id": facts["patient_id"], "surgeon": "@find_surgeon",
          "bloods": "@order_bloods", "theatre": facts["theatre"], "day": facts["day"]}),
        ("charge_estimate", "charge_account", f"Charge the estimate to {facts['account']}",
         {"account": facts["account"], "amount": facts["estimate"],
          "booking": "@book_theatre"}),
        ("text_owner", "send_sms", "Text the owner the booking",
         {"to": facts["phone"],
          "text": f"{facts['patient']}'s surgery is booked for {facts['day']}, "
                  "booking @book_theatre"}),
    ]  # fmt: skip
    rows = [
        {
            "no": str(n),
            "step": slug,
            "tool": tool_name,
            "goal": goal,
            "args": query(args),
            "status": "done" if slug in done else "todo",
            "result": done.get(slug, ""),
        }
        for n, (slug, tool_name, goal, args) in enumerate(steps, 1)
    ]
    return f"```csv\n{write_sheet(rows)}```"


def _report(outcome: str, result: str = "", note: str = "") -> dict[str, Any]:
    return _say(f"outcome: {outcome}\nresult: {result}\nnote: {note}")


def _executor(messages: list[dict[str, Any]], order: str) -> dict[str, Any]:
    """The executor's next turn: make the step's call, call again ``retry_at`` an AMBER time,
    follow ``next_page``, read a running lab job, report."""
    name, raw = re.findall(r"^Call: (\w+) (.*)$", order, re.MULTILINE)[-1]
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
        return _call(name, json.loads(raw), turn)
    called_name, called, came_back = calls[-1]
    triage = TRIAGE.search(came_back) if came_back.startswith("Error") else None
    if triage:
        code, text = triage.groups()
        if code == "AMBER":
            at = re.search(r"retry at (\d\d:\d\d)", text)
            return _call(called_name, called | {"retry_at": at.group(1) if at else "later"}, turn)
        outcome = {"YELLOW": "retry", "BLUE": "replan"}.get(code, "refused")
        return _report(outcome, note=f"[{code}] {text}")
    answer = json.loads(came_back)
    if answer.get("next_page"):
        return _call(called_name, called | {"page": answer["next_page"]}, turn)
    if answer.get("state") == "running":
        reads = sum(c[0] == "lab_status" for c in calls)
        if reads >= MAX_READS:
            return _report("stalled", note=f"lab job {answer['job']} running after {reads} reads")
        return _call("lab_status", {"job": answer["job"]}, turn)
    return _report("done", str(answer["ref"]), str(answer.get("note", "")))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> brief = "Consent form: " + json.dumps(CASE)
    >>> msg = respond({"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": brief}]})
    >>> row = read_sheet(msg["choices"][0]["message"]["content"])[2]
    >>> row["tool"], unquery(row["args"])["surgeon"], unquery(row["args"])["theatre"]
    ('theatre_booking', '@find_surgeon', 'Theatre 2')
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if PLANNER in system:
        return completion(body, _say(_plan(user)))
    return completion(body, _executor(messages, user))


# --- the hospital's services --------------------------------------------------------------
@dataclass
class Hospital:
    """The rota, lab, theatre list, accounts and SMS gateway, reset for each case."""

    label: Label | None = None
    faults: list[dict[str, str]] = field(default_factory=list)
    surgeons: dict[str, str] = field(default_factory=dict)
    jobs: dict[str, int] = field(default_factory=dict)
    bookings: list[dict[str, str]] = field(default_factory=list)
    charges: list[dict[str, str]] = field(default_factory=list)

    def admit(self, label: Label) -> None:
        """A new case: the scenario's world."""
        self.label = label
        self.faults = [dict(f) for f in label.params.get("faults", ())]
        self.surgeons, self.jobs, self.bookings, self.charges = {}, {}, [], []

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params) if self.label else {}

    @property
    def seed(self) -> int:
        return self.label.seed if self.label else 0

    def fault(self, tool_name: str) -> None:
        """Raise the scenario's next fault when ``tool_name`` is the one it targets."""
        if not self.faults or tool_name != self.params.get("tool"):
            return
        f = self.faults.pop(0)
        text = f"[{f['kind']}] {f['text']}"
        if f["kind"] == "AMBER":
            raise ClinicError(f"{text}; retry at {f['hint']}")
        if f["kind"] == "BLUE":
            raise ClinicError(f"{text} (use {f['hint']})")
        raise ClinicError(text)


def hospital_tools(h: Hospital) -> list[BaseTool]:
    """The hospital's services as LangChain tools over ``h``."""

    @tool
    def surgeon_rota(species: str, procedure: str, site: str, page: int = 1) -> str:
        """Surgeons on the hospital's rota free for a species and procedure, a page at a time."""
        h.fault("surgeon_rota")
        if page < int(h.params.get("pages", 1)):
            full = [f"VS-{species[:3].upper()}-{page * 10 + n}" for n in (1, 2)]
            return json.dumps({"free": [], "fully_booked": full, "next_page": page + 1})
        surgeon = f"VS-{species[:3].upper()}-{h.seed}"
        h.surgeons[surgeon] = species
        return json.dumps({"ref": surgeon, "species": species, "site": site, "note": procedure})

    @tool
    def lab_order(patient_id: str, species: str, panel: str) -> str:
        """Order a blood panel for a patient from the in-house lab; answers the lab job."""
        h.fault("lab_order")
        job = f"LAB-{h.seed}-{len(h.jobs) + 1}"
        h.jobs[job] = 0
        if "polls" in h.params or "stuck" in h.params:
            return json.dumps({"job": job, "state": "running"})
        return json.dumps({"ref": f"PANEL-{job}", "state": "resulted", "note": "within range"})

    @tool
    def lab_status(job: str) -> str:
        """Whether a lab job has resulted yet."""
        h.jobs[job] += 1
        if "stuck" in h.params or h.jobs[job] < int(h.params.get("polls", 0)):
            return json.dumps({"job": job, "state": "running"})
        return json.dumps({"ref": f"PANEL-{job}", "state": "resulted", "note": "within range"})

    @tool
    def theatre_booking(
        patient_id: str, surgeon: str, bloods: str, theatre: str, day: str, retry_at: str = ""
    ) -> str:
        """Book an operating theatre slot for a patient with a surgeon on a day."""
        h.fault("theatre_booking")
        closed = h.params.get("theatre_to")
        if closed and theatre == CASE["theatre"]:
            raise ClinicError(
                f"[BLUE] {theatre} is closed for a deep clean after a positive swab "
                f"(use theatre={closed})"
            )
        species = h.surgeons.get(surgeon, "")
        if species != CASE["species"]:
            raise ClinicError(
                f"[BLACK] {surgeon} is credentialed for {species or 'no'} surgery; patient "
                f"{patient_id} is {CASE['species']}"
            )
        booking = f"TH-{h.seed}-{len(h.bookings) + 1}"
        h.bookings.append({"booking": booking, "theatre": theatre, "day": day, "surgeon": surgeon})
        slot = retry_at or "08:30"
        return json.dumps({"ref": booking, "theatre": theatre, "day": day, "note": f"slot {slot}"})

    @tool
    def charge_account(account: str, amount: str, booking: str, retry_at: str = "") -> str:
        """Charge an amount to a client's account against a booking."""
        h.fault("charge_account")
        if account != CASE["account"] and account not in h.params.get("accounts", ()):
            raise ClinicError(f"[BLACK] no client account {account} on the practice system")
        receipt = f"RC-{h.seed}-{len(h.charges) + 1}"
        h.charges.append({"account": account, "amount": amount, "booking": booking})
        return json.dumps({"ref": receipt, "amount": amount})

    @tool
    def send_sms(to: str, text: str, retry_at: str = "") -> str:
        """Text a client."""
        h.fault("send_sms")
        return json.dumps({"ref": f"SMS-{h.seed}-{len(text)}", "to": to})

    return [surgeon_rota, lab_order, lab_status, theatre_booking, charge_account, send_sms]


# --- the workflow -------------------------------------------------------------------------
def _outcome(text: str) -> dict[str, str]:
    """The executor's report lines, ``outcome`` / ``result`` / ``note``."""
    return dict(re.findall(r"^(outcome|result|note): ?(.*)$", text, re.MULTILINE))


def build_workflow(llm: ChatOpenAI, hospital: Hospital, tracer: Tracer) -> Pregel:
    """The ``schedule_surgery`` entrypoint and its tasks over one model, hospital and tracer."""
    tools = hospital_tools(hospital)
    by_name = {t.name: t for t in tools}
    worker = llm.bind_tools(tools)

    @task
    def plan(brief: str) -> list[dict[str, str]]:
        """Ask the planner for the CSV plan."""
        answer = llm.invoke([SystemMessage(PLANNER), HumanMessage(brief)])
        return read_sheet(_text(answer.content))

    @task
    def execute(order: str) -> dict[str, str]:
        """One attempt at a step: the model calls the tools until it reports."""
        messages: list[BaseMessage] = [SystemMessage(EXECUTOR), HumanMessage(order)]
        for _ in range(MAX_TURNS):
            reply = worker.invoke(messages)
            messages.append(reply)
            if not isinstance(reply, AIMessage) or not reply.tool_calls:
                return _outcome(_text(reply.content))
            for call in reply.tool_calls:
                try:
                    messages.append(by_name[call["name"]].invoke(call))
                except ClinicError as e:  # the model reads the error and decides
                    messages.append(
                        ToolMessage(f"Error: {e}", tool_call_id=call["id"], status="error")
                    )
        return {"outcome": "stalled", "note": f"no report after {MAX_TURNS} turns"}

    @task
    def check() -> dict[str, str]:
        """The app's admission check: the theatre booked on the consent form's day."""
        with tracer.start_as_current_span("check admission") as span:
            booking = hospital.bookings[-1]
            span.set_attribute("surgery.booking", json.dumps(booking))
            if booking["day"] != CASE["day"]:
                reason = (
                    f"{booking['booking']} is on {booking['day']}, the consent form says "
                    f"{CASE['day']}"
                )
                span.set_attribute("surgery.check", "failed")
                span.set_status(Status(StatusCode.ERROR, reason))
                return {"status": "failed", "reason": reason}
            span.set_attribute("surgery.check", "passed")
        return {"status": "passed"}

    @task
    def watch(theatre: str) -> dict[str, str]:
        """The app watches the theatre board until the patient is in pre-op."""
        params = hospital.params
        with tracer.start_as_current_span(f"watch patient {CASE['patient']}") as span:
            for read in range(1, 5):
                if "reads" in params and read > int(params["reads"]):
                    reason = f"the anaesthetic machine in {theatre} failed its leak test"
                    span.add_event("theatre board", {"read": read, "state": "suspended"})
                    span.set_status(Status(StatusCode.ERROR, reason))
                    return {"status": "failed", "reason": reason}
                span.add_event("theatre board", {"read": read, "state": "scheduled"})
        return {"status": "scheduled"}

    @entrypoint(checkpointer=InMemorySaver())
    def schedule_surgery(case: dict[str, Any]) -> dict[str, str]:
        """Plan, execute each step (again, or re-plan, after a setback), check, watch."""
        done: dict[str, str] = {}
        setback = ""
        for revision in range(1, MAX_PLANS + 1):
            brief = [
                "Objective: schedule the operation on the consent form.",
                f"Consent form: {json.dumps(case['form'])}",
            ]
            if case.get("notes"):
                brief.append(f"Front desk notes: {json.dumps(case['notes'])}")
            if revision > 1:
                brief += [f"Revision: {revision}", f"Done: {json.dumps(done)}"]
                brief.append(f"Setback: {setback}")
            rows = plan("\n".join(brief)).result()
            setback = ""
            for row in rows:
                if row["status"] == "done" or row["step"] in done:
                    continue
                args = {
                    k: re.sub(r"@(\w+)", lambda m: done.get(m[1], m[0]), v)
                    for k, v in unquery(row["args"]).items()
                }
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    order = (
                        f"Step {row['no']}: {row['step']} (attempt {attempt})\n"
                        f"Goal: {row['goal']}\nCall: {row['tool']} {json.dumps(args)}"
                    )
                    report = execute(order).result()
                    if report.get("outcome") != "retry":
                        break
                outcome = report.get("outcome")
                if outcome == "done":
                    done[row["step"]] = report.get("result", "")
                    continue
                if outcome == "replan":
                    setback = f"step {row['no']} {row['step']}: {report.get('note', '')}"
                    break
                return {"status": "failed", "reason": f"{row['step']}: {report.get('note', '')}"}
            if not setback:
                break
        else:
            return {"status": "failed", "reason": f"no plan holds after {MAX_PLANS}: {setback}"}
        checked = check().result()
        if checked["status"] != "passed":
            return checked
        return watch(hospital.bookings[-1]["theatre"]).result()

    return schedule_surgery


def schedule(label: Label, workflow: Pregel, hospital: Hospital, tracer: Tracer) -> str:
    """One case under the app's root span; its trace id."""
    hospital.admit(label)
    notes = {k: label.params[k] for k in ("species", "day", "account") if k in label.params}
    with tracer.start_as_current_span(f"schedule surgery {CASE['patient']}") as root:
        root.set_attribute("surgery.case", CASE["patient_id"])
        root.set_attribute("surgery.run", label.run)
        config: RunnableConfig = {"configurable": {"thread_id": label.run}}
        result = workflow.invoke({"form": CASE, "notes": notes}, config)
        root.set_attribute("surgery.outcome", result["status"])
        if result["status"] == "failed":
            root.set_status(Status(StatusCode.ERROR, result["reason"]))
        return format(root.get_span_context().trace_id, "032x")


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the surgery scenarios under OpenInference's LangChain instrumentor on ``provider``;
    run name -> trace id."""
    if not labels:
        return {}
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer(TRACER)
    try:
        with ModelServer(respond=respond) as server:
            llm = ChatOpenAI(
                model=MODEL,
                base_url=server.base_url("corpus-surgery"),
                api_key="test",
                max_retries=0,
            )
            hospital = Hospital()
            workflow = build_workflow(llm, hospital, tracer)
            return {label.run: schedule(label, workflow, hospital, tracer) for label in labels}
    finally:
        instrumentor.uninstrument()

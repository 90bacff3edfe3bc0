"""A veterinary referral clinic's surgery desk scheduling a dog's knee operation, written on the
**Anthropic Python SDK** by hand (``client.messages.create``: a planner call with no tools whose
text is the plan, then per step attempt an executor tool-use loop answering ``tool_use`` blocks
with ``tool_result`` blocks), traced by **MLflow's Anthropic autologging**
(``mlflow.anthropic.autolog()`` from the lightweight ``mlflow-tracing`` SDK: one ``CHAT_MODEL``
span per ``Messages.create``) and the app's own ``mlflow.start_span`` spans, against a scripted
model on the corpus's fake Anthropic Messages API (:mod:`tests.corpus._fake_anthropic`), reached
by the SDK over HTTP. No planscope code.

Sealed-80 split only (see README.md). The case: Bramble, a Labrador with a ruptured cranial
cruciate ligament, needs a TPLO; reserve the plate from the implant supplier's catalogue (read
page by page), book a theatre slot for the operation day, order the pre-op blood panel from the
lab (a job, polled), book the anaesthetist on call, invoice the owner's account, mail the
referring vet. The clinic's diary runs on CalDAV, so the desk asks the model for the plan as an
**iCalendar (RFC 5545) VCALENDAR of VTODO components**:

* the app opens one MLflow ``AGENT`` span per case (``surgery case {case}``); a failed case
  raises inside it, so MLflow records the exception and the ``ERROR`` status;
* one planner ``messages.create`` call (no tools) per plan revision, under the app's ``plan
  revision {n}`` span: the model answers a calendar (in a fenced block), one ``VTODO`` a step:
  ``UID:<step>``, ``SUMMARY:``, ``DESCRIPTION:``, ``X-TOOL:<service>``, the arguments as
  ``X-ARG-<KEY>:<value>`` (``;VALUE=INTEGER`` / ``;VALUE=FLOAT`` for numbers), an earlier step's
  output as ``X-ARG-<KEY>;VALUE=REF:<uid>.<field>``, the order as
  ``RELATED-TO;RELTYPE=DEPENDS-ON:<uid>``, content lines folded at 75 octets. The app reads it
  with a small hand-written reader (no icalendar package). Asked again after a setback, the
  planner answers a new calendar (``SEQUENCE`` raised) whose settled tasks are ``STATUS:COMPLETED``
  with their output as ``X-RESULT-<FIELD>:``, the others ``STATUS:NEEDS-ACTION``;
* per step attempt the app's ``task {uid} attempt {n}`` span holds the executor's tool-use loop:
  ``messages.create`` with ``tools=[...]``, each ``tool_use`` run under the app's ``TOOL`` span
  (named as the service) and answered with a ``tool_result`` block (``is_error: true`` on a
  failed service call); the executor ends with a **report** (``REQUEST-STATUS:<code>;<text>`` and
  ``X-OUTPUT:{json}``);
* the services fail with **iTIP request-status codes** (RFC 5546): ``5.1`` (service
  unavailable, ``retry at HH:MM``: the executor calls again ``at`` that time, in the same
  attempt), ``5.2`` (invalid calendar service: the app runs the task again, up to 8 attempts),
  ``4.0`` with ``(use key=value)`` (event conflict: a new calendar, up to 5), ``3.8`` (no
  authority: final); a blood panel still pending after 12 reads is reported as ``5.3``, final;
* after the last step the app checks the theatre slot against the referral (``check theatre
  day against referral``, a ``GUARDRAIL`` span) and watches the admission (``watch admission
  {slot}``, ward reads as span events).

MLflow's tracer provider is the museum agent's (one per process, OTLP to a loopback sink, a
relay to the play's provider); MLflow's Anthropic autologging is turned off when the play
returns. The planner trusts the surgeon's notes over the referral: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mlflow
import mlflow.anthropic
from anthropic import Anthropic
from anthropic.types import Message, MessageParam, ToolParam, ToolResultBlockParam, ToolUseBlock
from mlflow.entities import SpanEvent, SpanType
from opentelemetry.sdk.trace import TracerProvider

from ._fake_anthropic import MODEL, AnthropicServer, Blocks
from ._labels import Label
from .museum import _mlflow_provider, _Relay

CASE: dict[str, Any] = {
    "case": "HB-27-0611",
    "patient": "Bramble (Labrador, 32 kg)",
    "owner": "Mrs J. Okafor",
    "procedure": "TPLO, left stifle",
    "supplier": "Vetimplant Ltd",
    "plate": "3.5 mm TPLO",
    "weight_kg": 32,
    "theatre": "Theatre 1",
    "rota": "Hollybank on-call rota",
    "day": "2027-06-11",
    "account": "OK-30917",
    "amount": 2860.0,
    "referrer": "dr.hale@meadowvets.example",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_TURNS = 24
MAX_READS = 12
"""Blood-panel reads in one executor loop before the executor reports the panel stalled."""
PLANNER = (
    "You are the surgery desk's planner. Answer the case's plan as an iCalendar VCALENDAR of "
    "VTODO components, one a step, in a fenced block."
)
EXECUTOR = (
    "You are the surgery desk's executor. Make the one service call you are given with the "
    "clinic's tools, then answer a report: REQUEST-STATUS and X-OUTPUT lines."
)
OUTPUTS = {
    "implant": "implant_id",
    "theatre": "slot_id",
    "bloods": "report_id",
    "anaesthetist": "booking",
    "invoice": "invoice_id",
    "referral": "message_id",
}
"""Each step's output field, in the order the steps run."""


class ClinicError(RuntimeError):
    """A service's failure: an iTIP request status, ``<code>;<description>;<text>``."""

    def __init__(self, code: str, text: str):
        description = {
            "5.1": "Service unavailable",
            "5.2": "Invalid calendar service",
            "4.0": "Event conflict",
            "3.8": "No authority",
        }.get(code, "Request failed")
        super().__init__(f"{code};{description};{text}")


# --- the plan: an iCalendar of VTODOs -------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """An argument taken from an earlier step's output: ``<uid>.<field>``."""

    uid: str
    field: str


@dataclass
class Todo:
    """One VTODO of the calendar: a step of the plan."""

    uid: str
    summary: str
    tool: str
    args: dict[str, Any]
    depends: list[str] = field(default_factory=list)
    status: str = "NEEDS-ACTION"
    results: dict[str, str] = field(default_factory=dict)
    description: str = ""


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def _unescape(text: str) -> str:
    return re.sub(r"\\([\\;,nN])", lambda m: "\n" if m[1] in "nN" else m[1], text)


def fold(line: str) -> list[str]:
    """A content line folded at 75 octets (RFC 5545 3.1): continuation lines open with a space.

    >>> [len(x.encode()) for x in fold("DESCRIPTION:" + "x" * 150)]
    [75, 75, 14]
    """
    out: list[str] = []
    current, size, limit = "", 0, 75
    for ch in line:
        width = len(ch.encode())
        if size + width > limit:
            out.append(current)
            current, size, limit = " ", 1, 75
        current += ch
        size += width
    return [*out, current]


def unfold(text: str) -> list[str]:
    """The content lines of a calendar, folded lines joined (CRLF or LF, then a space or tab)."""
    return [x for x in re.sub(r"\r?\n[ \t]", "", text).splitlines() if x.strip()]


def _property(line: str) -> tuple[str, dict[str, str], str]:
    """``NAME;P=V;...:value`` -> name, parameters, value (a quoted parameter may hold ``:``)."""
    m = re.match(r'^([A-Za-z0-9-]+)((?:;[A-Za-z0-9-]+=(?:"[^"]*"|[^;:"]*))*):(.*)$', line)
    if not m:
        raise ValueError(f"not a content line: {line[:40]!r}")
    params = {
        k.upper(): v.strip('"') for k, v in re.findall(r';([A-Za-z0-9-]+)=("[^"]*"|[^;:"]*)', m[2])
    }
    return m[1].upper(), params, m[3]


def _key(name: str, prefix: str) -> str:
    return name.removeprefix(prefix).lower().replace("-", "_")


def read_calendar(text: str) -> list[Todo]:
    """The plan's steps, from the planner's answer: the VTODOs of its VCALENDAR, in order.

    >>> todos = read_calendar('''BEGIN:VCALENDAR
    ... BEGIN:VTODO
    ... UID:theatre
    ... SUMMARY:book Theatre 1 for the TPLO\\\\, left stifle
    ... X-TOOL:book_theatre
    ... X-ARG-IMPLANT;VALUE=REF:implant.implant_id
    ... X-ARG-WEIGHT-KG;VALUE=INTEGER:3
    ...  2
    ... RELATED-TO;RELTYPE=DEPENDS-ON:implant
    ... END:VTODO
    ... END:VCALENDAR''')
    >>> t = todos[0]
    >>> t.uid, t.summary, t.tool, t.args, t.depends
    ('theatre', 'book Theatre 1 for the TPLO, left stifle', 'book_theatre', \
{'implant': Ref(uid='implant', field='implant_id'), 'weight_kg': 32}, ['implant'])
    """
    start, end = text.find("BEGIN:VCALENDAR"), text.rfind("END:VCALENDAR")
    if start < 0 or end < 0:
        raise ValueError("no VCALENDAR in the plan")
    todos: list[Todo] = []
    todo: Todo | None = None
    for line in unfold(text[start:end]):
        name, params, value = _property(line)
        if name == "BEGIN" and value.upper() == "VTODO":
            todo = Todo("", "", "", {})
        elif name == "END" and value.upper() == "VTODO" and todo is not None:
            todos.append(todo)
            todo = None
        elif todo is None:
            continue
        elif name == "UID":
            todo.uid = value
        elif name == "SUMMARY":
            todo.summary = _unescape(value)
        elif name == "DESCRIPTION":
            todo.description = _unescape(value)
        elif name == "STATUS":
            todo.status = value.upper()
        elif name == "X-TOOL":
            todo.tool = value
        elif name == "RELATED-TO" and params.get("RELTYPE", "PARENT").upper() == "DEPENDS-ON":
            todo.depends.append(value)
        elif name.startswith("X-RESULT-"):
            todo.results[_key(name, "X-RESULT-")] = _unescape(value)
        elif name.startswith("X-ARG-"):
            kind = params.get("VALUE", "TEXT").upper()
            arg: Any
            if kind == "REF":
                uid, _, out = value.partition(".")
                arg = Ref(uid, out)
            elif kind == "INTEGER":
                arg = int(value)
            elif kind == "FLOAT":
                arg = float(value)
            else:
                arg = _unescape(value)
            todo.args[_key(name, "X-ARG-")] = arg
    return todos


def _arg_line(key: str, value: Any) -> str:
    name = "X-ARG-" + key.upper().replace("_", "-")
    if isinstance(value, Ref):
        return f"{name};VALUE=REF:{value.uid}.{value.field}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{name}:{_escape(str(value))}"
    return f"{name};VALUE={'FLOAT' if isinstance(value, float) else 'INTEGER'}:{value}"


def write_calendar(case: str, revision: int, todos: list[Todo]) -> str:
    """The iCalendar the scripted planner answers (CRLF line ends, folded at 75 octets)."""
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//Hollybank Veterinary Referrals//Surgery Desk//EN",
        f"X-WR-CALNAME:surgery case {case}",
    ]
    for t in todos:
        lines += [
            "BEGIN:VTODO",
            f"UID:{t.uid}",
            "DTSTAMP:20270601T080000Z",
            f"SEQUENCE:{revision - 1}",
            f"SUMMARY:{_escape(t.summary)}",
            f"DESCRIPTION:{_escape(t.description)}",
            f"STATUS:{t.status}",
            f"X-TOOL:{t.tool}",
            *(_arg_line(k, v) for k, v in t.args.items()),
            *(f"RELATED-TO;RELTYPE=DEPENDS-ON:{d}" for d in t.depends),
            *(f"X-RESULT-{k.upper().replace('_', '-')}:{_escape(v)}" for k, v in t.results.items()),
            "END:VTODO",
        ]
    lines.append("END:VCALENDAR")
    return "\r\n".join(part for line in lines for part in fold(line))


# --- the scripted model -----------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content or "")


def _use(name: str, args: dict[str, Any], turn: int) -> Blocks:
    return [{"type": "tool_use", "id": f"toolu_{name}_{turn:02d}", "name": name, "input": args}]


def _say(text: str) -> Blocks:
    return [{"type": "text", "text": text}]


def _plan(brief: str) -> str:
    """The planner's answer: the referral's facts, the surgeon's notes trusted over them; after
    a setback with a ``use`` value that value; the settled tasks ``COMPLETED`` with their
    results, the others to do."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Referral"]) | json.loads(lines.get("Surgeon's notes", "{}"))
    settled: dict[str, str] = json.loads(lines.get("Settled", "{}"))
    revision = int(lines.get("Revision", "1"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)

    def out(step: str) -> Ref:
        return Ref(step, OUTPUTS[step])

    todos = [
        Todo("implant", f"reserve a {facts['plate']} plate from {facts['supplier']}",
             "find_implant",
             {"supplier": facts["supplier"], "plate": facts["plate"],
              "weight_kg": facts["weight_kg"]},
             description="Search the supplier's implant catalogue page by page for a plate of "
                         "the size the surgeon planned and reserve it for the case."),
        Todo("theatre", f"book {facts['theatre']} on {facts['day']}", "book_theatre",
             {"implant": out("implant"), "theatre": facts["theatre"], "day": facts["day"],
              "procedure": facts["procedure"]}, ["implant"],
             description="Book an operating theatre slot with the reserved implant on the kit "
                         "list for the operation day."),
        Todo("bloods", "order the pre-op blood panel", "order_blood_panel",
             {"patient": facts["patient"], "slot": out("theatre")}, ["theatre"],
             description="Order the pre-anaesthetic haematology and biochemistry panel from "
                         "the lab and wait for its report."),
        Todo("anaesthetist", f"book the anaesthetist on call from the {facts['rota']}",
             "book_anaesthetist",
             {"report": out("bloods"), "slot": out("theatre"), "rota": facts["rota"],
              "day": facts["day"]}, ["bloods"],
             description="Book the anaesthetist on call for the slot, the blood report "
                         "attached for the anaesthetic plan."),
        Todo("invoice", f"invoice the estimate to {facts['owner']}'s account", "invoice_owner",
             {"case": facts["case"], "account": facts["account"], "amount": facts["amount"],
              "booking": out("anaesthetist")}, ["anaesthetist"],
             description="Invoice the operation's estimate to the owner's account."),
        Todo("referral", "mail the referring vet", "mail_referring_vet",
             {"to": facts["referrer"], "slot": out("theatre"), "day": facts["day"]},
             ["invoice"],
             description="Tell the referring practice the operation's day and slot."),
    ]  # fmt: skip
    for t in todos:
        if t.uid in settled:
            t.status = "COMPLETED"
            t.results = {OUTPUTS[t.uid]: settled[t.uid]}
    calendar = write_calendar(facts["case"], revision, todos)
    return f"Here is the surgery plan for case {facts['case']}:\n\n```ics\n{calendar}\n```"


def _report(code: str, **fields: Any) -> str:
    """The executor's report."""
    lines = [f"REQUEST-STATUS:{code}"]
    lines += [f"X-{k.upper()}:{json.dumps(v) if k == 'output' else v}" for k, v in fields.items()]
    return "\n".join(lines)


@dataclass
class _Seen:
    name: str
    args: dict[str, Any]
    result: str = ""
    is_error: bool = False


def _executor(messages: list[dict[str, Any]]) -> Blocks:
    """The executor's turn: make the call, call again ``at`` the time a 5.1 names, follow
    ``next_page``, read a pending blood panel, answer the report."""
    task = _text(messages[0].get("content")) if messages else ""
    found = re.search(r"^Call: (\w+) (.*)$", task, re.MULTILINE)
    assert found, task
    name, args = found.group(1), json.loads(found.group(2))
    turn = len(messages)
    seen: dict[str, _Seen] = {}
    for m in messages:
        content = m.get("content")
        for b in content if isinstance(content, list) else []:
            if b.get("type") == "tool_use":
                seen[b["id"]] = _Seen(b["name"], dict(b.get("input") or {}))
            elif b.get("type") == "tool_result" and b.get("tool_use_id") in seen:
                call = seen[b["tool_use_id"]]
                call.result = _text(b.get("content"))
                call.is_error = bool(b.get("is_error"))
    calls = list(seen.values())
    if not calls:
        return _use(name, args, turn)
    last = calls[-1]
    if last.is_error:
        after = re.search(r"retry at (\d\d:\d\d)", last.result)
        if last.result.startswith("5.1;") and after:
            return _use(last.name, last.args | {"at": after.group(1)}, turn)
        return _say(_report(last.result))
    result = json.loads(last.result)
    if result.get("next_page"):
        return _use(last.name, last.args | {"page": result["next_page"]}, turn)
    if result.get("state") == "PENDING":
        reads = sum(c.name == "blood_panel_status" for c in calls)
        if reads >= MAX_READS:
            note = f"blood panel {result['panel_id']} still PENDING after {reads} reads"
            return _say(_report(f"5.3;No scheduling support;{note}"))
        return _use("blood_panel_status", {"panel_id": result["panel_id"]}, turn)
    return _say(_report("2.0;Success", output=result))


def respond(body: dict[str, Any]) -> Blocks:
    """The scripted model's content blocks for one Messages API request: the planner's calendar
    (no tools) or the executor's next turn.

    >>> brief = "Plan surgery case HB-27-0611.\\nReferral: " + json.dumps(CASE)
    >>> (block,) = respond({"messages": [{"role": "user", "content": brief}]})
    >>> [t.tool for t in read_calendar(block["text"])][:3]
    ['find_implant', 'book_theatre', 'order_blood_panel']
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    if not body.get("tools"):
        return _say(_plan(_text(messages[0].get("content")) if messages else ""))
    return _executor(messages)


# --- the clinic's services ----------------------------------------------------------------------
@dataclass
class Clinic:
    """The implant supplier, theatre diary, lab, anaesthetists' rota, ledger and mail of one
    case."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    implants: dict[str, str] = field(default_factory=dict)
    """Implant -> its plate."""
    panels: dict[str, int] = field(default_factory=dict)
    slots: list[dict[str, str]] = field(default_factory=list)
    invoices: list[str] = field(default_factory=list)

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
        if f["code"] == "5.1":
            raise ClinicError("5.1", f"{f['text']}; retry at {f['hint']}")
        if f["code"] == "4.0":
            raise ClinicError("4.0", f"{f['text']} (use {f['hint']})")
        raise ClinicError(f["code"], f["text"])

    def find_implant(self, supplier: str, plate: str, weight_kg: int, page: int = 1) -> str:
        self.fault("find_implant")
        seed = self.label.seed
        if page < int(self.params.get("pages", 1)):
            sizes = ("2.4 mm", "2.7 mm", "3.5 mm broad")
            items = [
                {"sku": f"VI-{page}{n}", "plate": f"{sizes[n]} TPLO", "stock": 0} for n in (0, 1)
            ]
            return json.dumps({"items": items, "next_page": page + 1})
        implant = f"IMP-{seed}-{re.sub(r'[^0-9A-Za-z]', '', plate).upper()}"
        self.implants[implant] = plate
        return json.dumps({"implant_id": implant, "plate": plate, "supplier": supplier})

    def book_theatre(
        self, implant: str, theatre: str, day: str, procedure: str, at: str = ""
    ) -> str:
        self.fault("book_theatre")
        moved = self.params.get("theatre_to")
        if moved and theatre == CASE["theatre"]:
            raise ClinicError(
                "4.0", f"{theatre} is closed for its laminar-flow service (use theatre={moved})"
            )
        plate = self.implants.get(implant, "")
        if plate != CASE["plate"]:
            raise ClinicError(
                "3.8",
                f"the surgical plan for {CASE['patient']} ({CASE['procedure']}) calls for a "
                f"{CASE['plate']} plate; implant {implant} is {plate or 'unknown'}: the theatre "
                "kit list refuses it",
            )
        slot = f"TH-{self.label.seed}-{theatre[-1]}"
        self.slots.append({"slot_id": slot, "day": day, "theatre": theatre})
        return json.dumps({"slot_id": slot, "theatre": theatre, "day": day, "start": at or "08:30"})

    def order_blood_panel(self, patient: str, slot: str) -> str:
        self.fault("order_blood_panel")
        panel = f"BP-{self.label.seed}-{len(self.panels) + 1}"
        self.panels[panel] = 0
        if self.params.get("stuck") or "polls" in self.params:
            return json.dumps({"panel_id": panel, "state": "PENDING", "slot": slot})
        return json.dumps({"panel_id": panel, "state": "REPORTED", "report_id": f"LR-{panel[3:]}"})

    def blood_panel_status(self, panel_id: str) -> str:
        self.panels[panel_id] += 1
        if self.params.get("stuck") or self.panels[panel_id] < int(self.params.get("polls", 0)):
            return json.dumps({"panel_id": panel_id, "state": "PENDING"})
        return json.dumps(
            {"panel_id": panel_id, "state": "REPORTED", "report_id": f"LR-{panel_id[3:]}"}
        )

    def book_anaesthetist(self, report: str, slot: str, rota: str, day: str, at: str = "") -> str:
        self.fault("book_anaesthetist")
        if rota != CASE["rota"] and rota not in self.params.get("rotas", ()):
            raise ClinicError("3.8", f"no anaesthetist on the {rota} covers Hollybank")
        return json.dumps({"booking": f"AN-{self.label.seed}-{slot[-1]}", "rota": rota, "day": day})

    def invoice_owner(
        self, case: str, account: str, amount: float, booking: str, at: str = ""
    ) -> str:
        self.fault("invoice_owner")
        if account != CASE["account"]:
            raise ClinicError("3.8", f"the clinic's ledger holds no client account {account}")
        self.invoices.append(booking)
        return json.dumps(
            {"invoice_id": f"INV-{self.label.seed}-{len(self.invoices)}", "case": case}
        )

    def mail_referring_vet(self, to: str, slot: str, day: str, at: str = "") -> str:
        self.fault("mail_referring_vet")
        return json.dumps({"message_id": f"MSG-{slot}-{day[-2:]}", "to": to})


def _tool(name: str, description: str, **props: str) -> ToolParam:
    """A tool definition; a property whose type ends in ``?`` is optional."""
    schema = {k: {"type": v.rstrip("?")} for k, v in props.items()}
    required = [k for k, v in props.items() if not v.endswith("?")]
    return {
        "name": name,
        "description": description,
        "input_schema": {"type": "object", "properties": schema, "required": required},
    }


TOOLS: list[ToolParam] = [
    _tool(
        "find_implant",
        "Plates in the implant supplier's catalogue of a size for a patient's weight, a page "
        "at a time; reserves the plate found.",
        supplier="string",
        plate="string",
        weight_kg="integer",
        page="integer?",
    ),
    _tool(
        "book_theatre",
        "Book an operating theatre slot on a day with an implant on its kit list.",
        implant="string",
        theatre="string",
        day="string",
        procedure="string",
        at="string?",
    ),
    _tool(
        "order_blood_panel",
        "Order a pre-op blood panel from the lab for a patient's slot.",
        patient="string",
        slot="string",
    ),
    _tool(
        "blood_panel_status",
        "A blood panel's state; its report once reported.",
        panel_id="string",
    ),
    _tool(
        "book_anaesthetist",
        "Book the anaesthetist on call from a rota for a slot on a day.",
        report="string",
        slot="string",
        rota="string",
        day="string",
        at="string?",
    ),
    _tool(
        "invoice_owner",
        "Invoice a case's estimate to the owner's account.",
        case="string",
        account="string",
        amount="number",
        booking="string",
        at="string?",
    ),
    _tool(
        "mail_referring_vet",
        "Mail the referring vet the operation's slot and day.",
        to="string",
        slot="string",
        day="string",
        at="string?",
    ),
]


# --- the app ----------------------------------------------------------------------------------
class CaseFailed(Exception):
    """The operation was not scheduled (the reason is the message)."""


class Rerun(Exception):
    """The service answered 5.2: run the task again."""


class Replan(Exception):
    """The service answered 4.0 with a value to use: ask for a new calendar."""


class SurgeryCase:
    """One case, from the brief to the watched admission."""

    def __init__(self, label: Label, client: Anthropic):
        self.label = label
        self.clinic = Clinic(label)
        self.client = client
        self.outputs: dict[str, str] = {}
        """Settled step -> its output."""
        self.services: dict[str, Callable[..., str]] = {
            t["name"]: getattr(self.clinic, t["name"]) for t in TOOLS
        }

    def brief(self, revision: int, setback: str) -> str:
        notes = {
            k: self.label.params[k] for k in ("plate", "day", "account") if k in self.label.params
        }
        lines = [
            f"Plan surgery case {CASE['case']}: {CASE['procedure']} for {CASE['patient']}.",
            f"Referral: {json.dumps(CASE)}",
        ]
        if notes:
            lines.append(f"Surgeon's notes: {json.dumps(notes)}")
        if revision > 1:
            lines += [
                f"Revision: {revision}",
                f"Settled: {json.dumps(self.outputs)}",
                f"Setback: {setback}",
            ]
        return "\n".join(lines)

    def plan(self, revision: int, setback: str) -> list[Todo]:
        with mlflow.start_span(name=f"plan revision {revision}", span_type=SpanType.CHAIN) as span:
            brief = self.brief(revision, setback)
            span.set_inputs({"brief": brief})
            response = self.client.messages.create(
                model=MODEL,
                max_tokens=4096,
                system=PLANNER,
                messages=[{"role": "user", "content": brief}],
            )
            text = "".join(b.text for b in response.content if b.type == "text")
            span.set_outputs({"calendar": text})
            todos = read_calendar(text)
            span.set_attribute("infirmary.plan.todos", [t.uid for t in todos])
        for t in todos:
            if t.status == "COMPLETED" and t.uid not in self.outputs:
                self.outputs[t.uid] = t.results[OUTPUTS[t.uid]]
        return [t for t in todos if t.status != "COMPLETED"]

    def value(self, arg: Any) -> Any:
        """An argument with its reference filled in."""
        return self.outputs[arg.uid] if isinstance(arg, Ref) else arg

    def run_tool(self, block: ToolUseBlock) -> ToolResultBlockParam:
        """Run one ``tool_use`` under a TOOL span; its ``tool_result`` block."""
        with mlflow.start_span(name=block.name, span_type=SpanType.TOOL) as span:
            span.set_inputs(dict(block.input))
            try:
                result = self.services[block.name](**block.input)
            except ClinicError as exc:
                span.record_exception(exc)
                span.set_outputs({"error": str(exc)})
                return {
                    "type": "tool_result",
                    "tool_use_id": block.id,
                    "content": str(exc),
                    "is_error": True,
                }
            span.set_outputs(json.loads(result))
            return {"type": "tool_result", "tool_use_id": block.id, "content": result}

    def attempt(self, todo: Todo, attempt: int) -> None:
        """One executor tool-use loop for a task, its references filled in."""
        args = {k: self.value(v) for k, v in todo.args.items()}
        task = (
            f"Task {todo.uid} (attempt {attempt}): {todo.summary}\n"
            f"Call: {todo.tool} {json.dumps(args)}"
        )
        with mlflow.start_span(
            name=f"task {todo.uid} attempt {attempt}", span_type=SpanType.CHAIN
        ) as span:
            span.set_inputs({"task": task})
            messages: list[MessageParam] = [{"role": "user", "content": task}]
            response: Message | None = None
            for _ in range(MAX_TURNS):
                response = self.client.messages.create(
                    model=MODEL, max_tokens=1024, system=EXECUTOR, tools=TOOLS, messages=messages
                )
                if response.stop_reason != "tool_use":
                    break
                messages.append({"role": "assistant", "content": response.content})
                uses = [b for b in response.content if isinstance(b, ToolUseBlock)]
                messages.append({"role": "user", "content": [self.run_tool(b) for b in uses]})
            said = "".join(b.text for b in response.content if b.type == "text") if response else ""
            report = dict(re.findall(r"^([A-Z-]+):(.*)$", said, re.MULTILINE))
            status = report.get(
                "REQUEST-STATUS", f"5.3;No report;no report after {MAX_TURNS} turns"
            )
            span.set_outputs(report)
            code = status.partition(";")[0]
            if code == "2.0":
                self.outputs[todo.uid] = str(json.loads(report["X-OUTPUT"])[OUTPUTS[todo.uid]])
                return
            span.set_status("ERROR")
            span.set_attribute("infirmary.request_status", code)
        text = f"{todo.uid} ({todo.tool}) {status}"
        if code == "5.2":
            raise Rerun(text)
        if code == "4.0":
            raise Replan(text)
        raise CaseFailed(text)

    def work(self) -> None:
        setback = ""
        for revision in range(1, MAX_PLANS + 1):
            todos = self.plan(revision, setback)
            setback = ""
            for todo in todos:
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    try:
                        self.attempt(todo, attempt)
                        break
                    except Rerun as e:
                        if attempt == MAX_ATTEMPTS:
                            raise CaseFailed(str(e)) from e
                    except Replan as e:
                        setback = str(e)
                        break
                if setback:
                    break
            if not setback:
                return
        raise CaseFailed(f"no calendar holds after {MAX_PLANS}: {setback}")

    def check(self) -> None:
        """The app's own checks once the referring vet is told: the theatre slot against the
        referral, then the admission's ward reads up to the operation."""
        slot = self.clinic.slots[-1]
        with mlflow.start_span(
            name="check theatre day against referral", span_type=SpanType.GUARDRAIL
        ) as span:
            span.set_inputs({"slot": slot["slot_id"], "referral_day": CASE["day"]})
            span.set_outputs({"slot_day": slot["day"]})
            if slot["day"] != CASE["day"]:
                raise CaseFailed(
                    f"theatre slot {slot['slot_id']} is on {slot['day']}; the referral for "
                    f"{CASE['case']} books the operation for {CASE['day']}"
                )
        with mlflow.start_span(name=f"watch admission {slot['slot_id']}") as span:
            span.set_inputs({"slot": slot["slot_id"], "theatre": slot["theatre"]})
            reads = ("admitted", "fasted", "premedicated", "in theatre")
            for read, ward in enumerate(reads, 1):
                if self.label.scenario == "external_breakfast" and read > int(
                    self.label.params["reads"]
                ):
                    raise CaseFailed(
                        f"{CASE['patient']} ate a dropped breakfast on the ward before "
                        f"premedication; the surgeon postpones {CASE['procedure']}"
                    )
                span.add_event(
                    # SpanEvent is a concrete dataclass; mypy reads its base's abstract from_proto
                    SpanEvent("ward", attributes={"read": read, "state": ward})  # type: ignore[abstract]
                )
            span.set_outputs({"state": "in theatre"})

    def run(self) -> str:
        try:
            with mlflow.start_span(
                name=f"surgery case {CASE['case']}", span_type=SpanType.AGENT
            ) as root:
                # MLflow's trace id is "tr-" and the OpenTelemetry trace id in hex
                trace_id = root.trace_id.removeprefix("tr-")
                root.set_inputs(CASE | {"run": self.label.run})
                self.work()
                self.check()
                root.set_outputs({"outcome": "scheduled", "outputs": self.outputs})
        except CaseFailed:  # MLflow recorded the exception and the root's ERROR status
            pass
        return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the infirmary scenarios under MLflow's Anthropic autologging, its spans relayed to
    ``provider``; autologging is turned off when the play returns."""
    if not labels:
        return {}
    _mlflow_provider()
    quiet = logging.getLogger("mlflow")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    _Relay.target = provider
    mlflow.anthropic.autolog(silent=True)
    try:
        with AnthropicServer(respond) as server:
            client = Anthropic(
                base_url=server.base_url("corpus-infirmary"), api_key="test", max_retries=0
            )
            try:
                return {label.run: SurgeryCase(label, client).run() for label in labels}
            finally:
                client.close()
    finally:
        mlflow.anthropic.autolog(disable=True, silent=True)
        _Relay.target = None
        quiet.setLevel(level)

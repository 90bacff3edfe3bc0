"""A coastguard's lighthouse maintenance desk replacing the lamp's rotation motor on a rock light,
a hand-written planner-executor app on the **Groq Python SDK** (``Groq(base_url=...,
api_key=...)``, ``client.chat.completions.create(..., tools=[...])``, no agent framework),
traced by **OpenLLMetry's Groq instrumentor** (``GroqInstrumentor().instrument(tracer_provider=
...)``: a ``chat <model>`` CLIENT span per completion, content captured as its default), plus the
app's own plain OpenTelemetry spans (scope ``lighthouse-desk``: the work order's root, a span per
plan revision, a span per step attempt, a span per tool function the app runs for the model, a
check and a watch), against a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)``: Groq's API is OpenAI's chat completions under ``/openai/v1``, so
the SDK's base URL is the server's root and its client segment is ``openai``). No planscope
code.

Sealed-85 split only (see README.md). The job: work order ``CG-MS-2291`` replaces the worn
rotation motor of Muckle Skerry Light's lens pedestal: order an RM-240 motor from the supplier's
catalogue (read page by page), book the boat from Scalloway to the rock inside the day's tide
window, survey the landing (polled until the swell drops below the limit), book the technician,
pay the supplier's invoice from the coastguard's budget account, and issue the notice to mariners
that the light runs on its standby lamp during the window. The desk keeps its maintenance
calendar in Mermaid, so it asks for the plan as a **Mermaid gantt chart**:

* the planner is one ``chat.completions.create`` call (no tools) whose text answer holds a fenced
  ```` ```mermaid ```` block, ``gantt``: ``section``\\ s, one task a step, ``Order the RM-240
  rotation motor :motor, 2027-05-03, 4d`` (``Name :id, start, length``, a later task starting
  ``after`` an earlier one), the tool and its arguments on a ``%% call: <tool> {json}`` comment
  line under the task, an earlier task's output written ``"@motor.part_id"``. The app reads the
  block with a small hand-written reader (no Mermaid library) and runs the tasks in the order
  written. Asked again after a setback, the planner resends the whole chart with the settled
  tasks tagged ``done`` and their outputs on a ``%% result: <field>=<value>`` line, the task ids
  kept;
* per step attempt an executor conversation with function calling, written by hand: the step's
  tools as function schemas, the app runs each tool call itself and answers a ``tool`` message
  (``{"output": ...}``, or ``{"error": ..., "code": ...}`` with the service's hints when the call
  failed), until the model answers its **job card** (``outcome: done|rerun|replan|failed|
  stalled``, ``output: {json}`` or ``error: ...``). Every call carries the desk's job reference
  (``ref``: ``CG-MS-2291/<task>/<revision>.<attempt>``), so a step's attempts differ in their
  arguments;
* the services raise :class:`DeskError` with a code: ``TRY_LATER`` with ``retry_at`` (the
  executor calls again ``at`` that time, in the same conversation), ``LINK_LOST`` (the executor
  answers ``rerun``: the app runs the step again, up to 8 attempts), ``CLASH`` with ``(use
  key=value)`` (``replan``: a new chart, up to 5), ``REFUSED`` (final); a landing survey still
  rough after 12 reads is answered ``stalled``, final;
* after the last step the app checks the boat trip against the work order (``check boat trip
  against work order``) and watches the relit light (``watch light {light}``, the nightly
  reports as span events).

The planner trusts the lighthouse attendant's notes over the work order: the scenario's wrong
value comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

from groq import Groq
from groq.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam
from opentelemetry.instrumentation.groq import GroqInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Span, Status, StatusCode, Tracer

from tests.conformance.fake_openai import ModelServer, completion

from ._labels import Label

ORDER: dict[str, Any] = {
    "wo": "CG-MS-2291",
    "light": "Muckle Skerry Light",
    "rock": "Muckle Skerry",
    "supplier": "Trinity Marine Drives",
    "motor": "RM-240",
    "voltage": 24,
    "count": 1,
    "harbour": "Scalloway",
    "boat": "MV Fulmar",
    "day": "2027-05-12",
    "window": "09:40-13:10",
    "max_swell": 1.5,
    "technician": "Morag Tulloch",
    "account": "NLB-40317",
    "amount": 4870.0,
    "notices": "notices@hydrographic.example",
}
APP_TRACER = "lighthouse-desk"
MODEL = "llama-3.3-70b-versatile"
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_READS = 12
"""Landing-survey reads in one executor conversation before the executor answers stalled."""
MAX_TURNS = 24
PLANNER = (
    "You are the lighthouse maintenance desk's planner. Answer the work order's plan as a Mermaid "
    "gantt chart in a ```mermaid block: one task per step, `Name :id, start, length` (a later "
    'task starts `after <id>`), and under each task a comment line `%% call: <tool> {"arg": '
    "value}` with the tool to run and its arguments; write an earlier task's output as "
    '"@<id>.<field>". When asked again, resend the whole chart with the settled tasks tagged '
    "`done` and their outputs on a `%% result: <field>=<value>` line."
)
EXECUTOR = (
    "You are the lighthouse maintenance desk's executor. Run the one call you are given with the "
    "tools, then answer a job card: `outcome: done|rerun|replan|failed|stalled`, then `output: "
    "{json}` or `error: ...`."
)
OUTPUTS = {
    "motor": "part_id",
    "boat": "booking",
    "landing": "clearance",
    "tech": "job_id",
    "invoice": "payment_id",
    "notice": "notice_id",
}
"""Each step's output field, in the order the steps run."""


# --- the plan: a Mermaid gantt chart ----------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """An argument taken from an earlier task's output: ``"@motor.part_id"``."""

    task: str
    field: str


@dataclass
class Task:
    """One task of the gantt chart: a step of the plan."""

    id: str
    name: str
    section: str
    start: str
    length: str
    tags: list[str] = field(default_factory=list)
    tool: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    result: dict[str, str] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return "done" in self.tags


_TAGS = ("done", "active", "crit", "milestone")
_SKIP = ("title", "dateFormat", "axisFormat", "tickInterval", "excludes", "includes", "todayMarker")


def _ref(value: Any) -> Any:
    if isinstance(value, str) and re.fullmatch(r"@\w+\.\w+", value):
        task, _, out = value[1:].partition(".")
        return Ref(task, out)
    return value


def read_gantt(text: str) -> list[Task]:
    """The plan's tasks in the order written, from the first ```` ```mermaid ```` block of the
    planner's answer (a ``gantt``).

    >>> tasks = read_gantt('''Plan:
    ... ```mermaid
    ... gantt
    ...     dateFormat YYYY-MM-DD
    ...     section Parts
    ...     Order the motor :done, motor, 2027-05-03, 4d
    ...     %% result: part_id=RM-1
    ...     section Boat
    ...     Sail to the rock :boat, after motor, 1d
    ...     %% call: book_boat {"day": "2027-05-12", "cargo": "@motor.part_id"}
    ... ```''')
    >>> [(t.id, t.section, t.start, t.done, t.tool, t.args, t.result) for t in tasks]
    [('motor', 'Parts', '2027-05-03', True, '', {}, {'part_id': 'RM-1'}), ('boat', 'Boat', \
'after motor', False, 'book_boat', {'day': '2027-05-12', 'cargo': Ref(task='motor', \
field='part_id')}, {})]
    """
    block = re.search(r"```mermaid\s*\n(.*?)```", text, re.DOTALL)
    if not block:
        raise ValueError("no mermaid block in the plan")
    lines = [line.strip() for line in block.group(1).splitlines()]
    lines = [line for line in lines if line]
    if not lines or lines[0] != "gantt":
        raise ValueError("the mermaid block is not a gantt chart")
    tasks: list[Task] = []
    section = ""
    for line in lines[1:]:
        if line.startswith("%%"):
            comment = line[2:].strip()
            if not tasks:
                continue
            call = re.fullmatch(r"call:\s*(\w+)\s+(\{.*\})", comment)
            result = re.fullmatch(r"result:\s*(\w+)=(.*)", comment)
            if call:
                tasks[-1].tool = call.group(1)
                tasks[-1].args = {k: _ref(v) for k, v in json.loads(call.group(2)).items()}
            elif result:
                tasks[-1].result[result.group(1)] = result.group(2).strip()
            continue
        if line.split(" ", 1)[0] in _SKIP:
            continue
        if line.startswith("section "):
            section = line.removeprefix("section ").strip()
            continue
        name, colon, meta = line.partition(":")
        if not colon:
            raise ValueError(f"cannot read the gantt line {line!r}")
        items = [m.strip() for m in meta.split(",")]
        tags = [m for m in items if m in _TAGS]
        rest = [m for m in items if m not in _TAGS]
        if len(rest) == 3:
            task_id, start, length = rest
        elif len(rest) == 2:
            task_id, (start, length) = f"task{len(tasks) + 1}", rest
        else:
            raise ValueError(f"cannot read the gantt task {line!r}")
        tasks.append(Task(task_id, name.strip(), section, start, length, tags))
    known: set[str] = set()
    for t in tasks:  # a task starts after tasks written above it
        after = t.start.split()[1:] if t.start.startswith("after ") else []
        if any(a not in known for a in after):
            raise ValueError(f"task {t.id} starts after a task not written above it")
        known.add(t.id)
    return tasks


def write_gantt(wo: str, revision: int, tasks: list[Task]) -> str:
    """The planner's answer: a sentence, then the Mermaid gantt chart."""
    lines = [
        "gantt",
        f"    title {ORDER['light']} rotation motor, work order {wo}, revision {revision}",
        "    dateFormat YYYY-MM-DD",
        "    axisFormat %d %b",
    ]
    section = ""
    for t in tasks:
        if t.section != section:
            section = t.section
            lines.append(f"    section {section}")
        meta = ", ".join([*t.tags, t.id, t.start, t.length])
        lines.append(f"    {t.name} :{meta}")
        if t.done:
            lines += [f"    %% result: {k}={v}" for k, v in t.result.items()]
            continue
        args = {k: f"@{v.task}.{v.field}" if isinstance(v, Ref) else v for k, v in t.args.items()}
        lines.append(f"    %% call: {t.tool} {json.dumps(args)}")
    head = f"Here is the plan for {wo} (revision {revision}), one gantt task per step:"
    return head + "\n\n```mermaid\n" + "\n".join(lines) + "\n```"


# --- the scripted model -----------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _plan(brief: str) -> str:
    """The planner's chart: the work order's facts, the attendant's notes trusted over them;
    after a setback with a ``use`` value that value; the settled tasks tagged done."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Work order"]) | json.loads(lines.get("Attendant's notes", "{}"))
    settled: dict[str, str] = json.loads(lines.get("Settled", "{}"))
    revision = int(lines.get("Revision", "1"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)

    def out(task: str) -> Ref:
        return Ref(task, OUTPUTS[task])

    tasks = [
        Task("motor", f"Order the {facts['motor']} rotation motor", "Parts", "2027-05-03", "4d",
             tool="order_motor",
             args={"supplier": facts["supplier"], "model": facts["motor"],
                   "voltage": facts["voltage"], "count": facts["count"]}),
        Task("boat", f"Sail {facts['boat']} to {facts['rock']} on the tide", "Boat and landing",
             facts["day"], "1d", tool="book_boat",
             args={"boat": facts["boat"], "harbour": facts["harbour"], "rock": facts["rock"],
                   "day": facts["day"], "window": facts["window"], "cargo": out("motor")}),
        Task("landing", "Survey the landing for the swell", "Boat and landing", "after boat",
             "1d", tool="landing_survey",
             args={"rock": facts["rock"], "booking": out("boat"),
                   "max_swell": facts["max_swell"]}),
        Task("tech", f"Fit the motor with {facts['technician']}", "Fitting", "after landing",
             "1d", tool="book_technician",
             args={"technician": facts["technician"], "rock": facts["rock"], "day": facts["day"],
                   "part": out("motor"), "clearance": out("landing")}),
        Task("invoice", f"Pay the {facts['supplier']} invoice", "Paperwork", "after tech", "1d",
             tool="pay_invoice",
             args={"supplier": facts["supplier"], "account": facts["account"],
                   "amount": facts["amount"], "wo": facts["wo"], "job": out("tech")}),
        Task("notice", "Issue the notice to mariners", "Paperwork", "after tech", "1d",
             tool="issue_notice",
             args={"to": facts["notices"], "light": facts["light"], "day": facts["day"],
                   "window": facts["window"], "job": out("tech")}),
    ]  # fmt: skip
    for t in tasks:
        if t.id in settled:
            t.tags = ["done"]
            t.result = {OUTPUTS[t.id]: settled[t.id]}
    return write_gantt(facts["wo"], revision, tasks)


def _card(outcome: str, **fields: Any) -> dict[str, Any]:
    """The executor's job card."""
    lines = [f"outcome: {outcome}"]
    lines += [f"{k}: {json.dumps(v) if k == 'output' else v}" for k, v in fields.items()]
    return {"role": "assistant", "content": "\n".join(lines)}


def _call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _execute(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The executor's next turn: make the call, call again ``at`` a ``TRY_LATER``, follow
    ``next_page``, read a rough landing survey, answer the job card."""
    found = re.search(r"^Call: (\w+) (.*)$", task, re.MULTILINE)
    assert found, task
    name, args = found.group(1), json.loads(found.group(2))
    turn = len(messages)
    calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    pending: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            pending[c["id"]] = (fn["name"], json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool" and m.get("tool_call_id") in pending:
            called = pending.pop(m["tool_call_id"])
            calls.append((*called, json.loads(_text(m.get("content")))))
    if not calls:
        return _call(name, args, turn)
    last, called_with, said = calls[-1]
    if "error" in said:
        code, text = str(said.get("code")), str(said["error"])
        if code == "TRY_LATER":
            return _call(last, called_with | {"at": said["retry_at"]}, turn)
        outcome = {"LINK_LOST": "rerun", "CLASH": "replan"}.get(code, "failed")
        return _card(outcome, error=f"{code}: {text}")
    seen = said["output"]
    if seen.get("next_page"):
        return _call(last, called_with | {"page": seen["next_page"]}, turn)
    if seen.get("state") == "ROUGH":
        reads = sum(c[0] == "landing_status" for c in calls)
        if reads >= MAX_READS:
            note = f"landing survey {seen['survey_id']} still ROUGH after {reads} reads"
            return _card("stalled", error=note)
        return _call("landing_status", {"survey_id": seen["survey_id"]}, turn)
    return _card("done", output=seen)


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the planner's chart or the
    executor's next turn.

    >>> brief = "Work order: " + json.dumps(ORDER)
    >>> asked = {"messages": [{"role": "system", "content": PLANNER},
    ...                       {"role": "user", "content": brief}]}
    >>> chart = respond(asked)["choices"][0]["message"]["content"]
    >>> [t.args for t in read_gantt(chart) if t.id == "landing"]
    [{'rock': 'Muckle Skerry', 'booking': Ref(task='boat', field='booking'), 'max_swell': 1.5}]
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if system == PLANNER:
        return completion(body, {"role": "assistant", "content": _plan(user)})
    if system == EXECUTOR:
        return completion(body, _execute(messages, user))
    return completion(body, {"role": "assistant", "content": "Not a lighthouse matter."})


# --- the maintenance desk's services ----------------------------------------------------------
class DeskError(RuntimeError):
    """A service's failure: its code, text and hints."""

    def __init__(self, code: str, text: str, **hints: Any) -> None:
        super().__init__(f"{code}: {text}")
        self.code, self.text, self.hints = code, text, hints


@dataclass
class World:
    """The supplier, boat operator, landing survey, engineers' rota, ledger and hydrographic
    office of one work order."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    parts: dict[str, str] = field(default_factory=dict)
    """Motor part -> its model."""
    surveys: dict[str, int] = field(default_factory=dict)
    trips: list[dict[str, str]] = field(default_factory=list)
    jobs: list[str] = field(default_factory=list)
    payments: list[str] = field(default_factory=list)

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
        code = f["code"]
        if code == "TRY_LATER":
            raise DeskError(code, f"{f['text']}; try again at {f['hint']}", retry_at=f["hint"])
        if code == "CLASH":
            raise DeskError(code, f"{f['text']} (use {f['hint']})")
        raise DeskError(code, f["text"])

    def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Run the service ``name`` (its scenario's fault first)."""
        self.fault(name)
        result: dict[str, Any] = getattr(self, name)(**args)
        return result

    def order_motor(
        self, supplier: str, model: str, voltage: int, count: int, page: int = 1, ref: str = ""
    ) -> dict[str, Any]:
        """Rotation motors of a model and voltage in a supplier's catalogue, a page at a time;
        the order placed for one in stock."""
        seed = self.label.seed
        if page < int(self.params.get("pages", 1)):
            gone = [{"part_id": f"{model}-{page}{n}", "in_stock": 0} for n in (1, 2)]
            return {"motors": gone, "next_page": page + 1}
        part = f"{model}-{seed}"
        self.parts[part] = model
        return {"part_id": part, "model": model, "voltage": voltage, "ships": "2027-05-07"}

    def book_boat(
        self,
        boat: str,
        harbour: str,
        rock: str,
        day: str,
        window: str,
        cargo: str,
        at: str = "",
        ref: str = "",
    ) -> dict[str, Any]:
        """Book a boat from a harbour to a rock inside a tide window on a day, with its cargo."""
        moved = self.params.get("window_to")
        if moved and window == ORDER["window"]:
            raise DeskError(
                "CLASH",
                f"{rock}'s landing is taken {window} on {day} by the lifeboat's exercise "
                f"(use window={moved})",
            )
        booking = f"BT-{self.label.seed}-{len(self.trips) + 1}"
        self.trips.append({"booking": booking, "day": day, "window": window, "boat": boat})
        return {"booking": booking, "boat": boat, "day": day, "sails": at or window[:5]}

    def landing_survey(
        self, rock: str, booking: str, max_swell: float, ref: str = ""
    ) -> dict[str, Any]:
        """Start a survey of a rock's landing for a boat trip; its clearance once the swell is
        below the limit."""
        survey = f"LS-{self.label.seed}-{len(self.surveys) + 1}"
        self.surveys[survey] = 0
        if self.params.get("stuck") or "polls" in self.params:
            return {"survey_id": survey, "state": "ROUGH", "swell_m": max_swell + 0.9}
        return {"survey_id": survey, "state": "CLEAR", "clearance": f"LC-{survey[3:]}"}

    def landing_status(self, survey_id: str, ref: str = "") -> dict[str, Any]:
        """A landing survey's state; its clearance once clear."""
        self.surveys[survey_id] += 1
        reads = self.surveys[survey_id]
        if self.params.get("stuck") or reads < int(self.params.get("polls", 0)):
            return {"survey_id": survey_id, "state": "ROUGH", "swell_m": 2.1 + reads % 5 / 10}
        return {"survey_id": survey_id, "state": "CLEAR", "clearance": f"LC-{survey_id[3:]}"}

    def book_technician(
        self,
        technician: str,
        rock: str,
        day: str,
        part: str,
        clearance: str,
        at: str = "",
        ref: str = "",
    ) -> dict[str, Any]:
        """Book a technician to fit a motor part on a rock on a day, with the landing's
        clearance."""
        if technician != ORDER["technician"] and technician not in self.params.get("techs", ()):
            raise DeskError("REFUSED", f"no technician called {technician} on the rota")
        model = self.parts.get(part, "")
        if model != ORDER["motor"]:
            raise DeskError(
                "REFUSED",
                f"the work pack for {ORDER['light']}'s lens pedestal takes an {ORDER['motor']} "
                f"drive; motor {part} is {model or 'unknown'}",
            )
        job = f"JB-{self.label.seed}-{len(self.jobs) + 1}"
        self.jobs.append(job)
        return {"job_id": job, "technician": technician, "day": day, "on_rock": at or "10:05"}

    def pay_invoice(
        self,
        supplier: str,
        account: str,
        amount: float,
        wo: str,
        job: str,
        at: str = "",
        ref: str = "",
    ) -> dict[str, Any]:
        """Pay a supplier's invoice for a work order from the coastguard's budget account."""
        if account != ORDER["account"]:
            raise DeskError("REFUSED", f"the coastguard ledger holds no budget account {account}")
        self.payments.append(job)
        return {"payment_id": f"PY-{self.label.seed}-{len(self.payments)}", "wo": wo}

    def issue_notice(
        self, to: str, light: str, day: str, window: str, job: str, at: str = "", ref: str = ""
    ) -> dict[str, Any]:
        """Send the hydrographic office a notice to mariners: the light on its standby lamp for
        the window on a day."""
        return {"notice_id": f"NM-{job}-{day[-2:]}", "to": to}


_NUMBERS = {"voltage": "integer", "count": "integer", "page": "integer"}
_FLOATS = ("max_swell", "amount")


def _schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """A service's function schema from its signature (``at``, ``page`` and ``ref``
    optional)."""
    names = fn.__code__.co_varnames[1 : fn.__code__.co_argcount]
    props = {n: {"type": _NUMBERS.get(n, "number" if n in _FLOATS else "string")} for n in names}
    return {
        "type": "function",
        "function": {
            "name": fn.__name__,
            "description": " ".join((fn.__doc__ or "").split()),
            "parameters": {
                "type": "object",
                "properties": props,
                "required": [n for n in names if n not in ("at", "page", "ref")],
            },
        },
    }


TOOLS = {
    "order_motor": ("order_motor",),
    "book_boat": ("book_boat",),
    "landing_survey": ("landing_survey", "landing_status"),
    "book_technician": ("book_technician",),
    "pay_invoice": ("pay_invoice",),
    "issue_notice": ("issue_notice",),
}
"""The tools an executor gets for a task's tool."""


# --- the app ----------------------------------------------------------------------------------
class WorkOrderFailed(Exception):
    """The motor was not replaced (the reason is the message)."""


@dataclass
class MotorJob:
    """One work order, from the brief to the watched light."""

    label: Label
    client: Groq
    tracer: Tracer
    world: World
    outputs: dict[str, str] = field(default_factory=dict)
    """Settled task -> its output."""
    revision: int = 0

    def brief(self, setback: str) -> str:
        notes = {
            k: self.label.params[k] for k in ("motor", "day", "account") if k in self.label.params
        }
        lines = [
            f"Replace the lamp's rotation motor at {ORDER['light']} (work order {ORDER['wo']}).",
            f"Work order: {json.dumps(ORDER)}",
        ]
        if notes:
            lines.append(f"Attendant's notes: {json.dumps(notes)}")
        if self.revision > 1:
            lines += [
                f"Revision: {self.revision}",
                f"Settled: {json.dumps(self.outputs)}",
                f"Setback: {setback}",
            ]
        return "\n".join(lines)

    def plan(self, setback: str) -> list[Task]:
        self.revision += 1
        with self.tracer.start_as_current_span(f"plan revision {self.revision}") as span:
            span.set_attributes(
                {"lighthouse.plan.revision": self.revision, "lighthouse.plan.setback": setback}
            )
            response = self.client.chat.completions.create(
                model=MODEL,
                messages=[
                    {"role": "system", "content": PLANNER},
                    {"role": "user", "content": self.brief(setback)},
                ],
                temperature=0.0,
            )
            tasks = read_gantt(response.choices[0].message.content or "")
            span.set_attribute("lighthouse.plan.tasks", [t.id for t in tasks if not t.done])
        for t in tasks:
            if t.done and t.id not in self.outputs and t.result:
                self.outputs[t.id] = next(iter(t.result.values()))
        return tasks

    def args(self, task: Task, attempt: int) -> dict[str, Any]:
        """The task's arguments, references filled in, and the desk's job reference."""
        out = {k: self.outputs[v.task] if isinstance(v, Ref) else v for k, v in task.args.items()}
        return out | {"ref": f"{ORDER['wo']}/{task.id}/{self.revision}.{attempt}"}

    def run_tool(self, name: str, arguments: str, allowed: tuple[str, ...]) -> str:
        """Run one tool call the model asked for under the app's own span; its JSON answer."""
        with self.tracer.start_as_current_span(f"tool {name}") as span:
            span.set_attributes({"lighthouse.tool": name, "lighthouse.tool.arguments": arguments})
            try:
                if name not in allowed:
                    raise DeskError("REFUSED", f"no tool {name} for this task")
                said: dict[str, Any] = {"output": self.world.call(name, json.loads(arguments))}
            except DeskError as e:
                span.record_exception(e)
                span.set_status(Status(StatusCode.ERROR, str(e)))
                said = {"error": e.text, "code": e.code, **e.hints}
            out = json.dumps(said)
            span.set_attribute("lighthouse.tool.result", out)
            return out

    def attempt(self, task: Task, attempt: int) -> tuple[str, str]:
        """One executor conversation for a task: (outcome, output or error)."""
        call = self.args(task, attempt)
        allowed = TOOLS.get(task.tool, ())
        with self.tracer.start_as_current_span(f"step {task.id} attempt {attempt}") as span:
            span.set_attributes(
                {
                    "lighthouse.step": task.id,
                    "lighthouse.step.name": task.name,
                    "lighthouse.step.attempt": attempt,
                    "lighthouse.step.tool": task.tool,
                    "lighthouse.step.arguments": json.dumps(call),
                }
            )
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": EXECUTOR},
                {
                    "role": "user",
                    "content": f"Task {task.id} (attempt {attempt}): {task.name}\n"
                    f"Call: {task.tool} {json.dumps(call)}",
                },
            ]
            tools = [_schema(getattr(World, n)) for n in allowed]
            content: str | None = None
            for _ in range(MAX_TURNS):
                msg = (
                    self.client.chat.completions.create(
                        model=MODEL,
                        messages=cast("list[ChatCompletionMessageParam]", messages),
                        tools=cast("list[ChatCompletionToolParam]", tools),
                        temperature=0.0,
                    )
                    .choices[0]
                    .message
                )
                if not msg.tool_calls:
                    content = str(msg.content or "")
                    break
                messages.append(
                    {
                        "role": "assistant",
                        "content": msg.content,
                        "tool_calls": [
                            {
                                "id": c.id,
                                "type": "function",
                                "function": {
                                    "name": c.function.name,
                                    "arguments": c.function.arguments,
                                },
                            }
                            for c in msg.tool_calls
                        ],
                    }
                )
                for c in msg.tool_calls:
                    result = self.run_tool(c.function.name, c.function.arguments, allowed)
                    messages.append({"role": "tool", "tool_call_id": c.id, "content": result})
            card = dict(re.findall(r"^(\w+): (.*)$", content or "", re.MULTILINE))
            outcome = card.get("outcome", "stalled" if content is None else "failed")
            said = card.get("output") or card.get("error") or f"no job card in {MAX_TURNS} turns"
            span.set_attributes({"lighthouse.step.outcome": outcome, "lighthouse.step.card": said})
            if outcome != "done":
                span.set_status(Status(StatusCode.ERROR, f"{outcome}: {said}"))
            return outcome, said

    def work(self) -> None:
        """Plan, run each task (again, or after a new plan); raises :class:`WorkOrderFailed`."""
        setback = ""
        while True:
            tasks = self.plan(setback)
            setback = ""
            for task in tasks:
                if task.done or task.id in self.outputs:
                    continue
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    outcome, said = self.attempt(task, attempt)
                    if outcome != "rerun":
                        break
                if outcome == "done":
                    self.outputs[task.id] = str(json.loads(said)[OUTPUTS[task.id]])
                    continue
                if outcome == "replan" and self.revision < MAX_PLANS:
                    setback = f"task {task.id} ({task.tool}): {said}"
                    break
                raise WorkOrderFailed(f"task {task.id} ({task.tool}) {outcome}: {said}")
            if not setback:
                return

    def check(self) -> None:
        """The app's own check: the boat goes out to the rock on the work order's day."""
        trip = self.world.trips[-1]
        with self.tracer.start_as_current_span("check boat trip against work order") as span:
            span.set_attributes({f"lighthouse.trip.{k}": v for k, v in trip.items()})
            span.set_attribute("lighthouse.work_order.day", ORDER["day"])
            if trip["day"] != ORDER["day"]:
                reason = (
                    f"boat trip {trip['booking']} goes out on {trip['day']}; work order "
                    f"{ORDER['wo']} fits the motor on {ORDER['day']}"
                )
                span.set_status(Status(StatusCode.ERROR, reason))
                raise WorkOrderFailed(reason)

    def watch(self) -> None:
        """The app watches the relit light's first nights (the rock's nightly reports)."""
        with self.tracer.start_as_current_span(f"watch light {ORDER['light']}") as span:
            span.set_attribute("lighthouse.job", self.outputs["tech"])
            for night in range(1, 4):
                if self.label.scenario.startswith("external_") and night > int(
                    self.label.params["reads"]
                ):
                    reason = (
                        f"a south-westerly gale's sea floods {ORDER['rock']}'s engine room on "
                        f"night {night}; {ORDER['light']} is on its emergency light"
                    )
                    span.add_event("light failed", {"night": night, "reason": reason})
                    span.set_status(Status(StatusCode.ERROR, reason))
                    raise WorkOrderFailed(reason)
                span.add_event("nightly report", {"night": night, "character": "Fl(2) 20s"})

    def run(self) -> str:
        """The work order under the app's root span; its trace id."""
        with self.tracer.start_as_current_span(
            f"motor replacement {ORDER['wo']}",
            record_exception=False,
            set_status_on_exception=False,
        ) as root:
            root.set_attributes(
                {
                    "lighthouse.work_order": ORDER["wo"],
                    "lighthouse.light": ORDER["light"],
                    "lighthouse.run": self.label.run,
                }
            )
            try:
                self.work()
                self.check()
                self.watch()
                root.set_attribute("lighthouse.outcome", "replaced")
            except WorkOrderFailed as e:
                _failed(root, e)
            return format(root.get_span_context().trace_id, "032x")


def _failed(span: Span, e: WorkOrderFailed) -> None:
    span.set_attribute("lighthouse.outcome", "failed")
    span.record_exception(e)
    span.set_status(Status(StatusCode.ERROR, str(e)))


@contextmanager
def _instrumented(provider: TracerProvider) -> Iterator[None]:
    """OpenLLMetry's Groq instrumentor on ``provider`` while the block runs; the SDK's
    ``create`` put back after."""
    instrumentor = GroqInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield
    finally:
        instrumentor.uninstrument()


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the lighthouse scenarios with OpenLLMetry's Groq instrumentor and the app's spans on
    ``provider``; run name -> trace id."""
    if not labels:
        return {}
    out = {}
    with _instrumented(provider), ModelServer(respond=respond) as server:
        tracer = provider.get_tracer(APP_TRACER)
        # Groq's routes are OpenAI's under /openai/v1: the server's root is the base URL
        root = server.base_url("openai").removesuffix("/openai/v1")
        client = Groq(base_url=root, api_key="test", max_retries=0)
        for label in labels:
            out[label.run] = MotorJob(label, client, tracer, World(label)).run()
    return out

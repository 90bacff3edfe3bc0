"""A wine estate's harvest desk getting one parcel's grapes picked, pressed and a tank booked,
written on the **OpenAI Python SDK** by hand (``client.chat.completions.create``: a planner call
with no tools whose answer is the plan, then per step attempt an executor conversation with
function calling), traced by **OpenLLMetry's OpenAI instrumentor**
(``OpenAIInstrumentor().instrument(tracer_provider=...)``, ``TRACELOOP_TRACE_CONTENT=true``:
one ``openai.chat`` span per ``Completions.create``, prompts and answers as span attributes)
and the app's own spans from the plain OpenTelemetry API, against a scripted model on the
conformance suite's fake OpenAI server (``ModelServer(respond=...)``), reached by the SDK over
HTTP. No planscope code.

The brief asked for OpenLIT's auto-instrumentation; it cannot be installed beside the corpus's
pins: every openlit release from 1.27 to 1.45 requires ``openai<3`` (1.45: ``>=1.92,<3``) and
``anthropic<1`` (the corpus pins openai 3.57.0 and anthropic 2.17.0), and the one the resolver
falls back to, 1.26.0, wants ``opentelemetry-instrumentation<0.49`` (0.66b1 here, under every
other instrumentor) and gpustat with nvidia-ml-py. So the brief's fallback: the pinned OpenLLMetry
OpenAI instrumentor (0.62.4) with its content tracing on.

Sealed-83 split only (see README.md). The errand: Domaine des Trois Coteaux sold the Chardonnay
of its Clos des Argiles parcel to Maison Vercel as juice; get the parcel picked (a crew from the
picking roster, read page by page), book a press cycle, have the must analysed by the lab (a
job, polled), book a fermentation tank for the fill day, charge the buyer's account, mail the
buyer. The estate's systems are configured in protobuf, so the desk asks the model for the plan
as a **Protocol Buffers text-format** ``HarvestPlan`` message:

* the app opens one root span per job (``harvest job {contract}``); a failed job ends it with
  an ``ERROR`` status and the exception recorded;
* one planner ``chat.completions.create`` call (no tools) per plan revision, under the app's
  ``plan revision {n}`` span: the model answers the message in a fenced ``textproto`` block, one
  ``step { id: "pick" tool: "schedule_pick" arg { key: "parcel" value: "..." } ... }`` a step,
  ``after: "<id>"`` for the order, numbers as ``int_value`` / ``double_value``, an earlier
  step's output as ``arg { key: "lot" ref: "pick.lot_id" }``. The app reads it with a small
  hand-written text-format reader (no protobuf package). Asked again after a setback, the
  planner resends the whole message (``revision`` raised, the ``setback`` quoted) with the
  settled steps ``state: DONE`` and their ``result { key: ... value: ... }``;
* per step attempt the app's ``step {id} attempt {n}`` span holds the executor conversation:
  ``chat.completions.create`` with ``tools=[...]``, each tool call run under the app's
  ``tool {name}`` span and answered with a ``tool`` message; the executor ends with a
  text-format ``StepResult`` (``code: OK`` and ``output_json: "..."``, or a code and
  ``message``). Each attempt calls with a ``request_id`` of its own
  (``<contract>/<step>/<revision>.<attempt>``);
* the services fail with **gRPC status codes** (``<CODE>: <text>``): ``UNAVAILABLE`` (``retry
  after HH:MM``: the executor calls again ``after`` that time, in the same conversation),
  ``ABORTED`` (the app runs the step again, up to 8 attempts), ``FAILED_PRECONDITION`` with
  ``(use key=value)`` (a new plan, up to 5), anything else final; a must analysis still running
  after 12 reads is reported as ``DEADLINE_EXCEEDED``, final;
* after the last step the app checks the tank booking against the contract (``check tank
  against contract``) and watches the tank (``watch tank {booking}``, cellar readings as span
  events).

The planner trusts the vineyard manager's notes over the contract: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from openai import OpenAI
from openai.resources.chat.completions import AsyncCompletions, Completions
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam
from opentelemetry.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.instrumentation.utils import unwrap
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label

CONTRACT: dict[str, Any] = {
    "contract": "BC-2027-0914",
    "estate": "Domaine des Trois Coteaux",
    "buyer": "Maison Vercel",
    "parcel": "Clos des Argiles",
    "variety": "Chardonnay",
    "rows": "1-38",
    "pickers": 14,
    "press": "press 2",
    "program": "champagne_cycle",
    "tank": "tank 9",
    "day": "2027-09-14",
    "account": "MV-52706",
    "amount": 6420.0,
    "contact": "achats@maison-vercel.example",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_TURNS = 24
MAX_READS = 12
"""Must-analysis reads in one executor conversation before the executor reports the deadline."""
PLANNER = (
    "You are the harvest desk's planner. Answer the job's plan as an estate.harvest.v1."
    "HarvestPlan message in protobuf text format, in a fenced textproto block."
)
EXECUTOR = (
    "You are the harvest desk's executor. Make the one service call you are given with the "
    "estate's tools, then answer an estate.harvest.v1.StepResult in protobuf text format."
)
OUTPUTS = {
    "pick": "lot_id",
    "press": "cycle_id",
    "analysis": "report_id",
    "tank": "booking",
    "charge": "payment_id",
    "notice": "message_id",
}
"""Each step's output field, in the order the steps run."""


class ServiceError(RuntimeError):
    """A service's failure: a gRPC status code and its text, ``<CODE>: <text>``."""

    def __init__(self, code: str, text: str):
        self.code = code
        super().__init__(f"{code}: {text}")


# --- protobuf text format -------------------------------------------------------------------
_TOKEN = re.compile(
    r"\s+|#[^\n]*"
    r"|(?P<str>\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')"
    r"|(?P<num>[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?[fF]?)"
    r"|(?P<ident>[A-Za-z_][\w.]*)"
    r"|(?P<punct>[{}<>:;,\[\]])"
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\"}

Message = dict[str, list[Any]]
"""A text-format message: field name -> its values (every field read as repeated)."""


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"cannot read the text format at {text[pos : pos + 30]!r}")
        pos = m.end()
        if m.lastgroup:
            out.append((m.lastgroup, m.group(m.lastgroup)))
    return out


def _string(token: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m[1], m[1]), token[1:-1])


def parse_textproto(text: str) -> Message:
    """A message in protobuf text format, read without its schema: scalars as ``str``,
    ``int``, ``float`` or the enum / bool identifier as written, sub-messages as dicts.

    >>> parse_textproto('''# proto-message: estate.harvest.v1.HarvestPlan
    ... revision: 2
    ... step { id: "press" after: "pick" arg { key: "lot" ref: "pick.lot_id" } state: DONE }
    ... step < id: 'tank' arg: { key: "amount" double_value: 6420.0 } >''')
    {'revision': [2], 'step': [{'id': ['press'], 'after': ['pick'], 'arg': [{'key': ['lot'], \
'ref': ['pick.lot_id']}], 'state': ['DONE']}, {'id': ['tank'], 'arg': [{'key': ['amount'], \
'double_value': [6420.0]}]}]}
    """
    tokens = _tokens(text)
    pos = 0

    def message(close: str | None) -> Message:
        nonlocal pos
        out: Message = {}
        while pos < len(tokens):
            kind, value = tokens[pos]
            if kind == "punct" and value in "};>" and value == close:
                pos += 1
                return out
            if kind == "punct" and value in ",;":
                pos += 1
                continue
            if kind != "ident":
                raise ValueError(f"a field name expected, found {value!r}")
            name = value
            pos += 1
            if pos < len(tokens) and tokens[pos] == ("punct", ":"):
                pos += 1
            kind, value = tokens[pos]
            pos += 1
            item: Any
            if kind == "punct" and value in "{<":
                item = message("}" if value == "{" else ">")
            elif kind == "str":
                item = _string(value)
                while pos < len(tokens) and tokens[pos][0] == "str":  # adjacent strings join
                    item += _string(tokens[pos][1])
                    pos += 1
            elif kind == "num":
                number = value.rstrip("fF")
                item = int(number) if re.fullmatch(r"[-+]?\d+", number) else float(number)
            elif kind == "ident":
                item = value
            else:
                raise ValueError(f"a value expected for {name}, found {value!r}")
            out.setdefault(name, []).append(item)
        if close is not None:
            raise ValueError(f"message not closed with {close!r}")
        return out

    return message(None)


def _one(msg: Message, name: str, default: Any = "") -> Any:
    values = msg.get(name) or [default]
    return values[-1]


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


# --- the plan: a HarvestPlan message ------------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """An argument taken from an earlier step's output: ``<step>.<field>``."""

    step: str
    field: str


@dataclass
class Step:
    """One ``step`` of the plan."""

    id: str
    purpose: str
    tool: str
    args: dict[str, Any]
    after: list[str] = field(default_factory=list)
    state: str = "PENDING"
    result: dict[str, str] = field(default_factory=dict)


@dataclass
class Plan:
    contract: str
    revision: int
    steps: list[Step]
    setback: str = ""


def read_plan(text: str) -> Plan:
    """The plan from the planner's answer: the text-format message in its fenced block (or the
    whole answer).

    >>> plan = read_plan('''Here it is:
    ... ```textproto
    ... contract: "BC-1" revision: 1
    ... step {
    ...   id: "press"  after: "pick"  tool: "book_press"
    ...   arg { key: "lot" ref: "pick.lot_id" }
    ...   arg { key: "press" value: "press 2" }
    ...   arg { key: "bins" int_value: 46 }
    ... }
    ... ```''')
    >>> s = plan.steps[0]
    >>> s.id, s.tool, s.after, s.args, s.state
    ('press', 'book_press', ['pick'], {'lot': Ref(step='pick', field='lot_id'), \
'press': 'press 2', 'bins': 46}, 'PENDING')
    """
    fenced = re.search(r"```[\w-]*\n(.*?)```", text, re.DOTALL)
    msg = parse_textproto(fenced.group(1) if fenced else text)
    steps: list[Step] = []
    for s in msg.get("step", []):
        args: dict[str, Any] = {}
        for a in s.get("arg", []):
            key = str(_one(a, "key"))
            if "ref" in a:
                step, _, out = str(_one(a, "ref")).partition(".")
                args[key] = Ref(step, out)
            elif "int_value" in a:
                args[key] = int(_one(a, "int_value"))
            elif "double_value" in a:
                args[key] = float(_one(a, "double_value"))
            else:
                args[key] = str(_one(a, "value"))
        steps.append(
            Step(
                id=str(_one(s, "id")),
                purpose=str(_one(s, "purpose")),
                tool=str(_one(s, "tool")),
                args=args,
                after=[str(x) for x in s.get("after", [])],
                state=str(_one(s, "state", "PENDING")),
                result={str(_one(r, "key")): str(_one(r, "value")) for r in s.get("result", [])},
            )
        )
    return Plan(
        str(_one(msg, "contract")), int(_one(msg, "revision", 1)), steps, _one(msg, "setback")
    )


def _arg(key: str, value: Any) -> str:
    if isinstance(value, Ref):
        return f"arg {{ key: {_quote(key)} ref: {_quote(f'{value.step}.{value.field}')} }}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"arg {{ key: {_quote(key)} value: {_quote(str(value))} }}"
    kind = "double_value" if isinstance(value, float) else "int_value"
    return f"arg {{ key: {_quote(key)} {kind}: {value} }}"


def write_plan(plan: Plan) -> str:
    """The text-format HarvestPlan the scripted planner answers."""
    lines = [
        "# proto-file: estate/harvest/v1/plan.proto",
        "# proto-message: estate.harvest.v1.HarvestPlan",
        f"contract: {_quote(plan.contract)}",
        f"revision: {plan.revision}",
    ]
    if plan.setback:
        lines.append(f"setback: {_quote(plan.setback)}")
    for s in plan.steps:
        lines += ["step {", f"  id: {_quote(s.id)}", f"  purpose: {_quote(s.purpose)}"]
        lines += [f"  after: {_quote(a)}" for a in s.after]
        lines.append(f"  tool: {_quote(s.tool)}")
        lines += [f"  {_arg(k, v)}" for k, v in s.args.items()]
        if s.state != "PENDING":
            lines.append(f"  state: {s.state}")
        lines += [
            f"  result {{ key: {_quote(k)} value: {_quote(v)} }}" for k, v in s.result.items()
        ]
        lines.append("}")
    return "\n".join(lines)


# --- the scripted model -----------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn:02d}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _plan(brief: str) -> str:
    """The planner's answer: the contract's facts, the vineyard manager's notes trusted over
    them; after a setback with a ``use`` value that value; the settled steps ``DONE`` with their
    result, the others to do."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Contract"]) | json.loads(lines.get("Vineyard manager's notes", "{}"))
    settled: dict[str, str] = json.loads(lines.get("Settled", "{}"))
    revision = int(lines.get("Revision", "1"))
    setback = lines.get("Setback", "")
    use = re.search(r"\(use (\w+)=([^)]+)\)", setback)
    if use:
        facts[use.group(1)] = use.group(2)

    def out(step: str) -> Ref:
        return Ref(step, OUTPUTS[step])

    steps = [
        Step("pick", f"pick the {facts['variety']} of {facts['parcel']}, rows {facts['rows']}",
             "schedule_pick",
             {"parcel": facts["parcel"], "variety": facts["variety"], "rows": facts["rows"],
              "pickers": facts["pickers"]}),
        Step("press", f"press the lot in {facts['press']}, {facts['program']}", "book_press",
             {"lot": out("pick"), "press": facts["press"], "program": facts["program"]},
             ["pick"]),
        Step("analysis", "have the must analysed by the estate lab", "order_must_analysis",
             {"lot": out("pick"), "cycle": out("press")}, ["press"]),
        Step("tank", f"book {facts['tank']} for the fill on {facts['day']}", "book_tank",
             {"report": out("analysis"), "tank": facts["tank"], "day": facts["day"]},
             ["analysis"]),
        Step("charge", f"charge {facts['contract']} to {facts['buyer']}'s account",
             "charge_buyer",
             {"contract": facts["contract"], "account": facts["account"],
              "amount": facts["amount"], "booking": out("tank")}, ["tank"]),
        Step("notice", f"mail {facts['buyer']} the tank and fill day", "mail_buyer",
             {"to": facts["contact"], "booking": out("tank"), "day": facts["day"]}, ["charge"]),
    ]  # fmt: skip
    for s in steps:
        if s.id in settled:
            s.state = "DONE"
            s.result = {OUTPUTS[s.id]: settled[s.id]}
    plan = write_plan(Plan(facts["contract"], revision, steps, setback))
    return f"Harvest plan for {facts['contract']}:\n\n```textproto\n{plan}\n```"


def _result(code: str, **fields: str) -> str:
    """The executor's StepResult in text format."""
    return "\n".join([f"code: {code}", *(f"{k}: {_quote(v)}" for k, v in fields.items())])


@dataclass
class _Seen:
    name: str
    args: dict[str, Any]
    result: str = ""


def _executor(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The executor's turn: make the call, call again ``after`` the time an UNAVAILABLE names,
    follow ``next_page``, read a running must analysis, answer the StepResult."""
    task = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    found = re.search(r"^Call: (\w+) (.*)$", task, re.MULTILINE)
    assert found, task
    name, args = found.group(1), json.loads(found.group(2))
    turn = len(messages)
    seen: dict[str, _Seen] = {}
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            seen[c["id"]] = _Seen(fn["name"], json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool" and m.get("tool_call_id") in seen:
            seen[m["tool_call_id"]].result = _text(m.get("content"))
    calls = list(seen.values())
    if not calls:
        return _call(name, args, turn)
    last = calls[-1]
    failed = re.match(r"([A-Z_]+): (.*)", last.result, re.DOTALL)
    if failed:
        code, text = failed.groups()
        after = re.search(r"retry after (\d\d:\d\d)", text)
        if code == "UNAVAILABLE" and after:
            return _call(last.name, last.args | {"after": after.group(1)}, turn)
        return _say(_result(code, message=text))
    result = json.loads(last.result)
    if result.get("next_page"):
        return _call(last.name, last.args | {"page": result["next_page"]}, turn)
    if result.get("state") == "RUNNING":
        reads = sum(c.name == "must_analysis_status" for c in calls)
        if reads >= MAX_READS:
            note = f"must analysis {result['analysis_id']} still RUNNING after {reads} reads"
            return _say(_result("DEADLINE_EXCEEDED", message=note))
        return _call("must_analysis_status", {"analysis_id": result["analysis_id"]}, turn)
    return _say(_result("OK", output_json=json.dumps(result)))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the planner's plan (no
    tools) or the executor's next turn.

    >>> brief = "Plan harvest job BC-2027-0914.\\nContract: " + json.dumps(CONTRACT)
    >>> msg = respond({"messages": [{"role": "user", "content": brief}]})
    >>> [s.tool for s in read_plan(msg["choices"][0]["message"]["content"]).steps][:3]
    ['schedule_pick', 'book_press', 'order_must_analysis']
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    if not body.get("tools"):
        brief = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
        return completion(body, _say(_plan(brief)))
    return completion(body, _executor(messages))


# --- the estate's services ------------------------------------------------------------------------
@dataclass
class Estate:
    """The picking roster, press hall, lab, cellar, ledger and mail of one job."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    lots: dict[str, str] = field(default_factory=dict)
    """Harvest lot -> its parcel."""
    analyses: dict[str, int] = field(default_factory=dict)
    tanks: list[dict[str, str]] = field(default_factory=list)
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
        if f["code"] == "UNAVAILABLE":
            raise ServiceError("UNAVAILABLE", f"{f['text']}; retry after {f['hint']}")
        if f["code"] == "FAILED_PRECONDITION":
            raise ServiceError("FAILED_PRECONDITION", f"{f['text']} (use {f['hint']})")
        raise ServiceError(f["code"], f["text"])

    def schedule_pick(
        self, parcel: str, variety: str, rows: str, pickers: int, page: int = 1,
        request_id: str = "",
    ) -> str:  # fmt: skip
        self.fault("schedule_pick")
        seed = self.label.seed
        if page < int(self.params.get("pages", 1)):
            crews = [
                {"crew": f"crew {page}{n}", "pickers": pickers - n - 3, "free": False}
                for n in (1, 2)
            ]
            return json.dumps({"crews": crews, "next_page": page + 1})
        code = "".join(w[0] for w in parcel.split()).upper()
        lot = f"HL-{seed}-{code}"
        self.lots[lot] = parcel
        return json.dumps(
            {"lot_id": lot, "parcel": parcel, "variety": variety, "crew": "Équipe Roussel",
             "bins": 46, "picked_by": "11:30"}
        )  # fmt: skip

    def book_press(
        self, lot: str, press: str, program: str, after: str = "", request_id: str = ""
    ) -> str:
        self.fault("book_press")
        moved = self.params.get("press_to")
        if moved and press == CONTRACT["press"]:
            raise ServiceError(
                "FAILED_PRECONDITION",
                f"{press} is down for a membrane change this week (use press={moved})",
            )
        parcel = self.lots.get(lot, "")
        if parcel != CONTRACT["parcel"]:
            raise ServiceError(
                "PERMISSION_DENIED",
                f"{press}'s {CONTRACT['program']} for {CONTRACT['contract']} is reserved for "
                f"{CONTRACT['buyer']}'s {CONTRACT['parcel']} {CONTRACT['variety']}; lot {lot} "
                f"is from {parcel or 'an unknown parcel'}",
            )
        cycle = f"PC-{self.label.seed}-{press[-1]}"
        return json.dumps(
            {"cycle_id": cycle, "press": press, "program": program, "starts_at": after or "12:10"}
        )

    def order_must_analysis(self, lot: str, cycle: str, request_id: str = "") -> str:
        self.fault("order_must_analysis")
        job = f"MA-{self.label.seed}-{len(self.analyses) + 1}"
        self.analyses[job] = 0
        if self.params.get("stuck") or "polls" in self.params:
            return json.dumps({"analysis_id": job, "state": "RUNNING", "cycle": cycle})
        return json.dumps({"analysis_id": job, "state": "DONE", "report_id": f"LR-{job[3:]}"})

    def must_analysis_status(self, analysis_id: str) -> str:
        self.analyses[analysis_id] += 1
        reads = self.analyses[analysis_id]
        if self.params.get("stuck") or reads < int(self.params.get("polls", 0)):
            return json.dumps({"analysis_id": analysis_id, "state": "RUNNING"})
        return json.dumps(
            {"analysis_id": analysis_id, "state": "DONE", "report_id": f"LR-{analysis_id[3:]}",
             "brix": 21.4, "ph": 3.18, "ta_g_l": 7.9}
        )  # fmt: skip

    def book_tank(
        self, report: str, tank: str, day: str, after: str = "", request_id: str = ""
    ) -> str:
        self.fault("book_tank")
        if tank != CONTRACT["tank"] and tank not in self.params.get("tanks", ()):
            raise ServiceError("NOT_FOUND", f"the cellar has no free fermentation {tank}")
        booking = f"TK-{self.label.seed}-{len(self.tanks) + 1}"
        self.tanks.append({"booking": booking, "tank": tank, "day": day})
        return json.dumps(
            {"booking": booking, "tank": tank, "day": day, "fill_at": after or "16:00"}
        )

    def charge_buyer(
        self, contract: str, account: str, amount: float, booking: str, after: str = "",
        request_id: str = "",
    ) -> str:  # fmt: skip
        self.fault("charge_buyer")
        if account != CONTRACT["account"]:
            raise ServiceError("NOT_FOUND", f"the estate's ledger holds no buyer account {account}")
        self.payments.append(booking)
        return json.dumps(
            {"payment_id": f"PAY-{self.label.seed}-{len(self.payments)}", "contract": contract}
        )

    def mail_buyer(
        self, to: str, booking: str, day: str, after: str = "", request_id: str = ""
    ) -> str:
        self.fault("mail_buyer")
        return json.dumps({"message_id": f"MSG-{booking}-{day[-2:]}", "to": to})


def _tool(name: str, description: str, **props: str) -> ChatCompletionToolParam:
    """A function tool; a property whose type ends in ``?`` is optional."""
    schema = {k: {"type": v.rstrip("?")} for k, v in props.items()}
    required = [k for k, v in props.items() if not v.endswith("?")]
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": schema, "required": required},
        },
    }


TOOLS: list[ChatCompletionToolParam] = [
    _tool(
        "schedule_pick",
        "Schedule a picking crew for a parcel's rows from the picking roster, a page of crews "
        "at a time; the harvest lot once a crew is free.",
        parcel="string", variety="string", rows="string", pickers="integer", page="integer?",
        request_id="string?",
    ),
    _tool(
        "book_press",
        "Book a press cycle for a harvest lot with a pressing program.",
        lot="string", press="string", program="string", after="string?", request_id="string?",
    ),
    _tool(
        "order_must_analysis",
        "Order the lab's must analysis (sugar, acidity, pH) of a lot's press cycle.",
        lot="string", cycle="string", request_id="string?",
    ),
    _tool(
        "must_analysis_status",
        "A must analysis's state; its report once done.",
        analysis_id="string",
    ),
    _tool(
        "book_tank",
        "Book a fermentation tank in the cellar for the fill day, with the must report.",
        report="string", tank="string", day="string", after="string?", request_id="string?",
    ),
    _tool(
        "charge_buyer",
        "Charge a contract's amount to the buyer's account for a tank booking.",
        contract="string", account="string", amount="number", booking="string",
        after="string?", request_id="string?",
    ),
    _tool(
        "mail_buyer",
        "Mail the buyer the tank booking and the fill day.",
        to="string", booking="string", day="string", after="string?", request_id="string?",
    ),
]  # fmt: skip


# --- the app ----------------------------------------------------------------------------------
class JobFailed(Exception):
    """The parcel's juice did not reach the buyer's tank (the reason is the message)."""


class Rerun(Exception):
    """The service answered ABORTED: run the step again."""


class Replan(Exception):
    """The service answered FAILED_PRECONDITION with a value to use: ask for a new plan."""


class HarvestJob:
    """One job, from the brief to the watched tank."""

    def __init__(self, label: Label, client: OpenAI, tracer: Tracer):
        self.label = label
        self.estate = Estate(label)
        self.client = client
        self.tracer = tracer
        self.outputs: dict[str, str] = {}
        """Settled step -> its output."""
        self.services: dict[str, Callable[..., str]] = {
            t["function"]["name"]: getattr(self.estate, t["function"]["name"]) for t in TOOLS
        }

    def brief(self, revision: int, setback: str) -> str:
        notes = {
            k: self.label.params[k] for k in ("parcel", "day", "account") if k in self.label.params
        }
        lines = [
            f"Plan harvest job {CONTRACT['contract']}: pick, press and tank the "
            f"{CONTRACT['variety']} of {CONTRACT['parcel']} for {CONTRACT['buyer']}.",
            f"Contract: {json.dumps(CONTRACT)}",
        ]
        if notes:
            lines.append(f"Vineyard manager's notes: {json.dumps(notes)}")
        if revision > 1:
            lines += [
                f"Revision: {revision}",
                f"Settled: {json.dumps(self.outputs)}",
                f"Setback: {setback}",
            ]
        return "\n".join(lines)

    def plan(self, revision: int, setback: str) -> list[Step]:
        with self.tracer.start_as_current_span(f"plan revision {revision}") as span:
            span.set_attribute("vineyard.plan.revision", revision)
            if setback:
                span.set_attribute("vineyard.plan.setback", setback)
            response = self.client.chat.completions.create(
                model=MODEL,
                messages=[
                    {"role": "system", "content": PLANNER},
                    {"role": "user", "content": self.brief(revision, setback)},
                ],
            )
            plan = read_plan(response.choices[0].message.content or "")
            todo = [s for s in plan.steps if s.state != "DONE"]
            span.set_attribute("vineyard.plan.steps", [s.id for s in todo])
        for s in plan.steps:
            if s.state == "DONE" and s.id not in self.outputs:
                self.outputs[s.id] = s.result[OUTPUTS[s.id]]
        return todo

    def value(self, arg: Any) -> Any:
        """An argument with its reference filled in."""
        return self.outputs[arg.step] if isinstance(arg, Ref) else arg

    def run_tool(self, name: str, arguments: str) -> str:
        """Run one tool call under the app's span; the ``tool`` message's content."""
        with self.tracer.start_as_current_span(f"tool {name}") as span:
            span.set_attributes({"vineyard.tool.name": name, "vineyard.tool.arguments": arguments})
            try:
                result = self.services[name](**json.loads(arguments))
            except ServiceError as exc:
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, str(exc)))
                return str(exc)
            span.set_attribute("vineyard.tool.result", result)
            return result

    def attempt(self, step: Step, revision: int, attempt: int) -> None:
        """One executor conversation for a step, its references filled in."""
        request = f"{CONTRACT['contract']}/{step.id}/{revision}.{attempt}"
        args = {k: self.value(v) for k, v in step.args.items()} | {"request_id": request}
        task = (
            f"Step {step.id} (attempt {attempt}): {step.purpose}\n"
            f"Call: {step.tool} {json.dumps(args)}"
        )
        with self.tracer.start_as_current_span(f"step {step.id} attempt {attempt}") as span:
            span.set_attributes(
                {
                    "vineyard.step.id": step.id,
                    "vineyard.step.tool": step.tool,
                    "vineyard.step.attempt": attempt,
                    "vineyard.step.request_id": request,
                }
            )
            messages: list[ChatCompletionMessageParam] = [
                {"role": "system", "content": EXECUTOR},
                {"role": "user", "content": task},
            ]
            said = ""
            for _ in range(MAX_TURNS):
                response = self.client.chat.completions.create(
                    model=MODEL, messages=messages, tools=TOOLS
                )
                msg = response.choices[0].message
                if not msg.tool_calls:
                    said = msg.content or ""
                    break
                calls = [c for c in msg.tool_calls if c.type == "function"]
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
                            for c in calls
                        ],
                    }
                )
                for c in calls:
                    content = self.run_tool(c.function.name, c.function.arguments)
                    messages.append({"role": "tool", "tool_call_id": c.id, "content": content})
            result = parse_textproto(said) if said else {}
            code = str(_one(result, "code", "DEADLINE_EXCEEDED"))
            message = str(_one(result, "message", f"no StepResult after {MAX_TURNS} turns"))
            span.set_attribute("vineyard.step.code", code)
            if code == "OK":
                output = str(_one(result, "output_json"))
                span.set_attribute("vineyard.step.output", output)
                self.outputs[step.id] = str(json.loads(output)[OUTPUTS[step.id]])
                return
            span.set_status(Status(StatusCode.ERROR, f"{code}: {message}"))
        text = f"{step.id} ({step.tool}) {code}: {message}"
        if code == "ABORTED":
            raise Rerun(text)
        if code == "FAILED_PRECONDITION" and "(use " in message:
            raise Replan(text)
        raise JobFailed(text)

    def work(self) -> None:
        setback = ""
        for revision in range(1, MAX_PLANS + 1):
            steps = self.plan(revision, setback)
            setback = ""
            for step in steps:
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    try:
                        self.attempt(step, revision, attempt)
                        break
                    except Rerun as e:
                        if attempt == MAX_ATTEMPTS:
                            raise JobFailed(str(e)) from e
                    except Replan as e:
                        setback = str(e)
                        break
                if setback:
                    break
            if not setback:
                return
        raise JobFailed(f"no plan holds after {MAX_PLANS} revisions: {setback}")

    def check(self) -> None:
        """The app's own checks once the buyer is mailed: the tank booking against the
        contract, then the tank's cellar readings through the first days."""
        tank = self.estate.tanks[-1]
        with self.tracer.start_as_current_span("check tank against contract") as span:
            span.set_attributes(
                {
                    "vineyard.check.booking": tank["booking"],
                    "vineyard.check.booked_day": tank["day"],
                    "vineyard.check.contract_day": CONTRACT["day"],
                }
            )
            if tank["day"] != CONTRACT["day"]:
                error = JobFailed(
                    f"tank booking {tank['booking']} fills on {tank['day']}; contract "
                    f"{CONTRACT['contract']} has {CONTRACT['buyer']} take the juice on "
                    f"{CONTRACT['day']}"
                )
                span.set_status(Status(StatusCode.ERROR, str(error)))
                raise error
        with self.tracer.start_as_current_span(f"watch tank {tank['booking']}") as span:
            span.set_attributes({"vineyard.watch.tank": tank["tank"]})
            stages = (("filled", 14.5), ("settling", 12.0), ("racked", 12.5), ("inoculated", 16.0))
            for read, (stage, celsius) in enumerate(stages, 1):
                if self.label.scenario == "external_outage" and read > int(
                    self.label.params["reads"]
                ):
                    error = JobFailed(
                        f"a storm cuts the cellar's power at {CONTRACT['estate']}; "
                        f"{tank['tank']}'s cooling stops, the juice reaches 24 °C and "
                        f"{CONTRACT['buyer']} refuses it"
                    )
                    span.set_status(Status(StatusCode.ERROR, str(error)))
                    raise error
                span.add_event("cellar reading", {"read": read, "stage": stage, "celsius": celsius})

    def run(self) -> str:
        with self.tracer.start_as_current_span(
            f"harvest job {CONTRACT['contract']}",
            record_exception=False,
            set_status_on_exception=False,
        ) as root:
            root.set_attributes(
                {
                    "vineyard.contract": CONTRACT["contract"],
                    "vineyard.parcel": CONTRACT["parcel"],
                    "vineyard.buyer": CONTRACT["buyer"],
                    "vineyard.run": self.label.run,
                }
            )
            try:
                self.work()
                self.check()
                root.set_attribute("vineyard.outcome", "tank filled")
            except JobFailed as e:
                root.record_exception(e)
                root.set_status(Status(StatusCode.ERROR, str(e)))
                root.set_attribute("vineyard.outcome", "failed")
            return f"{root.get_span_context().trace_id:032x}"


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the vineyard scenarios under OpenLLMetry's OpenAI instrumentor (content tracing on)
    and the app's spans, both on ``provider``; run name -> trace id."""
    if not labels:
        return {}
    content = os.environ.get("TRACELOOP_TRACE_CONTENT")
    os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer(respond=respond) as server:
            client = OpenAI(
                base_url=server.base_url("corpus-vineyard"), api_key="test", max_retries=0
            )
            tracer = provider.get_tracer("vineyard.harvest_desk", "1.0.0")
            try:
                return {label.run: HarvestJob(label, client, tracer).run() for label in labels}
            finally:
                client.close()
    finally:
        instrumentor.uninstrument()
        # 0.62.4's uninstrument names the method "Completions.create" on the module, which its
        # unwrap does not resolve: the wrappers stay on the clients; unwrap them on the classes
        unwrap(Completions, "create")
        unwrap(AsyncCompletions, "create")
        if content is None:
            os.environ.pop("TRACELOOP_TRACE_CONTENT", None)
        else:
            os.environ["TRACELOOP_TRACE_CONTENT"] = content

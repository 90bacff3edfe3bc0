"""A university research vessel readying a sampling cruise, a hand-written planner-executor app
on the **Amazon Bedrock Converse API** (``boto3``'s ``bedrock-runtime`` client, no agent
framework) traced by **OpenLLMetry's Bedrock instrumentor** (``opentelemetry-instrumentation-
bedrock``, ``BedrockInstrumentor().instrument(tracer_provider=...)`` before the client is made:
it wraps the ``converse`` of every ``bedrock-runtime`` client created after; one ``chat
{model}`` span per call), uninstrumented after the play, plus the app's own plain OpenTelemetry
spans where a Bedrock user adds them (scope ``vessel-app``: the cruise's root, a plan span per
revision, a span per step attempt, a span per tool function the app runs for the model, a check
and a watch). The model: a scripted model behind the corpus's small fake Bedrock Runtime API
(:mod:`tests.corpus._fake_bedrock`), reached by boto3 over HTTP with dummy credentials.
No planscope code.

Sealed-61 split only (see README.md). The task: RV Kittiwake sails from Leith on a benthic
sampling cruise; find a berth deep enough for her draught in the harbour master's listing (read
page by page), get the Marine Directorate's sampling permit for the survey area (an
application, polled), book fuel bunkering for the sailing day, pay the port dues from the
cruise's grant, notify the science crew. As an infrastructure-minded team writes it:

* the planner answers the plan as **HCL blocks**, the way the team writes its Terraform: a
  ``cruise "<id>" { revision = n }`` block, then one ``step "<slug>" { goal, tool, args = {...},
  depends_on = [step.<slug>, ...] }`` block a step; an argument ``step.<slug>.result`` is that
  earlier step's result. After a setback the planner answers the plan again with a ``done
  "<slug>" { result = "..." }`` block for each done step and the steps still to do. The app
  parses the subset of HCL it uses with a small parser of its own (no HCL library);
* the executor is one Converse tool-use loop per step attempt, handed the step's block with the
  earlier results filled in and the step's tools; the app runs the ``toolUse`` blocks itself and
  sends ``toolResult`` blocks back (``status: "error"`` for a failure). It ends with an **HCL
  report**: ``outcome = "done|again|replan|failed|stalled"``, ``result = "..."``, ``note``;
* the harbour's services raise faults the app hands the model as the error ``toolResult``'s
  ``json`` (``errorCode``, ``message``): ``TideWait`` (call again at ``retryAt``, in the same
  loop), ``Swell`` (the app runs the step again, up to 8 attempts), ``Diversion`` (``(use
  key=value)``: a new plan, up to 5 plans), ``Refusal`` (final).

The planner trusts the chief scientist's notes over the cruise sheet: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import boto3
from botocore.config import Config
from opentelemetry.instrumentation.bedrock import BedrockInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer

from ._fake_bedrock import MODEL, REGION, BedrockServer, tool_use
from ._labels import Label

APP_TRACER = "vessel-app"
CRUISE: dict[str, Any] = {
    "cruise": "KW27-03",
    "vessel": "RV Kittiwake",
    "institution": "Northmoor University School of Ocean Sciences",
    "port": "Leith",
    "draught_m": 6.5,
    "area": "Firth of Forth outer banks",
    "method": "benthic grab",
    "sail_date": "2027-06-08",
    "fuel_t": 42,
    "supplier": "Leith Bunkering Co",
    "grant": "GR-55120",
    "dues": 2140.0,
    "crew": "science-crew@kittiwake.example",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_TURNS = 30
"""Model calls in one executor loop (the app's guard on the tool-use loop)."""
MAX_READS = 12
"""Permit-status reads in one loop before the executor reports the permit stalled."""
PLANNER = (
    "You plan a research vessel's cruise preparations. Answer HCL only: a cruise block, then "
    "one step block per step (goal, tool, args, depends_on); step.<slug>.result refers to an "
    "earlier step's result; keep done steps as done blocks."
)
EXECUTOR = (
    "You carry out one step of the cruise plan with your tools, then answer an HCL report: "
    'outcome = "done|again|replan|failed|stalled", result = "...", note = "...".'
)
OUTCOMES = ("done", "again", "replan", "failed", "stalled")


# --- the plan's format: a subset of HCL ---------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """``step.<slug>.result``: an earlier step's result."""

    step: str


@dataclass
class Block:
    """``type "label" { attributes }`` (nested blocks are not used by the plans)."""

    type: str
    label: str
    attrs: dict[str, Any] = field(default_factory=dict)


_TOKEN = re.compile(
    r'\s*(?:(?P<comment>(?:#|//)[^\n]*)|(?P<string>"(?:[^"\\]|\\.)*")'
    r"|(?P<number>-?\d+(?:\.\d+)?)|(?P<name>[A-Za-z_][\w.\-]*)|(?P<punct>[{}\[\]=,]))"
)


def _tokens(text: str) -> list[tuple[str, str]]:
    out, at = [], 0
    text = text.rstrip()
    while at < len(text):
        m = _TOKEN.match(text, at)
        if not m or m.end() == at:
            raise ValueError(f"unreadable HCL at {text[at : at + 30]!r}")
        at = m.end()
        kind = m.lastgroup or ""
        if kind != "comment":
            out.append((kind, m.group(kind)))
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.at = 0

    def peek(self, ahead: int = 0) -> tuple[str, str]:
        i = self.at + ahead
        return self.toks[i] if i < len(self.toks) else ("end", "")

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if value is not None and tok[1] != value:
            raise ValueError(f"expected {value!r}, got {tok[1]!r}")
        self.at += 1
        return tok

    def body(self, close: str | None) -> tuple[dict[str, Any], list[Block]]:
        """Attributes and blocks up to ``close`` (or the end)."""
        attrs: dict[str, Any] = {}
        blocks: list[Block] = []
        while self.peek()[1] != (close or "") and self.peek()[0] != "end":
            kind, name = self.take()
            if kind not in ("name", "string"):
                raise ValueError(f"expected a name, got {name!r}")
            key = json.loads(name) if kind == "string" else name
            if self.peek()[1] == "=":
                self.take("=")
                attrs[key] = self.value()
            else:
                label = json.loads(self.take()[1]) if self.peek()[0] == "string" else ""
                self.take("{")
                inner, _ = self.body("}")
                self.take("}")
                blocks.append(Block(key, label, inner))
            if self.peek()[1] == ",":
                self.take(",")
        return attrs, blocks

    def value(self) -> Any:
        kind, text = self.take()
        if kind == "string":
            return json.loads(text)
        if kind == "number":
            return float(text) if "." in text else int(text)
        if text == "[":
            items = []
            while self.peek()[1] != "]":
                items.append(self.value())
                if self.peek()[1] == ",":
                    self.take(",")
            self.take("]")
            return items
        if text == "{":
            attrs, _ = self.body("}")
            self.take("}")
            return attrs
        if kind == "name":
            if text in ("true", "false"):
                return text == "true"
            parts = text.split(".")
            if parts[0] == "step" and len(parts) >= 2:
                return Ref(parts[1])
        raise ValueError(f"unexpected {text!r} in HCL")


def parse_hcl(text: str) -> tuple[dict[str, Any], list[Block]]:
    """The top-level attributes and blocks of an HCL text (in a fenced block or bare).

    >>> attrs, blocks = parse_hcl('step "b" {\\n  tool = "f"\\n  args = { x = step.a.result, n = 2 }\\n}')
    >>> blocks[0].label, blocks[0].attrs["args"]
    ('b', {'x': Ref(step='a'), 'n': 2})
    """  # noqa: E501
    fenced = re.search(r"```(?:hcl|terraform)?\n(.*?)```", text, re.DOTALL)
    return _Parser(fenced.group(1) if fenced else text).body(None)


def _hcl_value(value: Any, results: dict[str, str] | None, indent: str) -> str:
    if isinstance(value, Ref):
        if results is not None and value.step in results:
            return json.dumps(results[value.step])
        return f"step.{value.step}.result"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        # a list names steps themselves (``depends_on = [step.find_berth]``), as Terraform does
        return (
            "["
            + ", ".join(
                f"step.{v.step}" if isinstance(v, Ref) else _hcl_value(v, results, indent)
                for v in value
            )
            + "]"
        )
    if isinstance(value, dict):
        width = max((len(k) for k in value), default=0)
        rows = [
            f"{indent}  {k.ljust(width)} = {_hcl_value(v, results, indent + '  ')}"
            for k, v in value.items()
        ]
        return "{\n" + "\n".join(rows) + f"\n{indent}}}"
    return json.dumps(value)


def render(block: Block, results: dict[str, str] | None = None) -> str:
    """A block as HCL; with ``results``, the earlier steps' results filled in.

    >>> print(render(Block("step", "b", {"tool": "f", "args": {"berth": Ref("a")}}), {"a": "B7"}))
    step "b" {
      tool = "f"
      args = {
        berth = "B7"
      }
    }
    """
    width = max((len(k) for k in block.attrs), default=0)
    rows = [f"  {k.ljust(width)} = {_hcl_value(v, results, '  ')}" for k, v in block.attrs.items()]
    return f"{block.type} {json.dumps(block.label)} {{\n" + "\n".join(rows) + "\n}"


# --- the tools as the model sees them ------------------------------------------------------
def _spec(name: str, description: str, optional: tuple[str, ...], **props: str) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {k: {"type": v} for k, v in props.items()},
        "required": [k for k in props if k not in optional],
    }
    return {"toolSpec": {"name": name, "description": description, "inputSchema": {"json": schema}}}


SPECS: dict[str, dict[str, Any]] = {
    "search_berths": _spec(
        "search_berths",
        "Berths in a port with at least a draught in metres, from the harbour master's listing, "
        "a page at a time.",
        ("page",),
        port="string",
        draught_m="number",
        page="integer",
    ),
    "apply_permit": _spec(
        "apply_permit",
        "Apply to the Marine Directorate for a sampling permit in an area, sailing from a berth.",
        (),
        area="string",
        method="string",
        berth="string",
    ),
    "permit_status": _spec(
        "permit_status",
        "Whether the Marine Directorate has decided a permit application.",
        (),
        application="string",
    ),
    "book_bunkering": _spec(
        "book_bunkering",
        "Book fuel bunkering at a berth for a sailing day from a supplier.",
        ("retry_at",),
        berth="string",
        date="string",
        tonnes="number",
        supplier="string",
        retry_at="string",
    ),
    "pay_port_dues": _spec(
        "pay_port_dues",
        "Pay a berth's port dues from a grant code.",
        ("retry_at",),
        berth="string",
        grant="string",
        amount="number",
        retry_at="string",
    ),
    "notify_science_crew": _spec(
        "notify_science_crew",
        "E-mail the science crew the sailing notice.",
        ("retry_at",),
        crew="string",
        berth="string",
        permit="string",
        bunkering="string",
        date="string",
        retry_at="string",
    ),
}
TOOLS = {
    "search_berths": ("search_berths",),
    "apply_permit": ("apply_permit", "permit_status"),
    "book_bunkering": ("book_bunkering",),
    "pay_port_dues": ("pay_port_dues",),
    "notify_science_crew": ("notify_science_crew",),
}
"""The tools an executor gets for each kind of step."""


# --- the scripted model -------------------------------------------------------------------
def _said(message: dict[str, Any]) -> str:
    return "".join(str(b.get("text", "")) for b in message.get("content") or [])


def _plan_text(brief: str) -> str:
    """The planner's answer: the cruise sheet, the chief scientist's notes trusted over it;
    after a ``(use key=value)`` setback that value; the done steps as ``done`` blocks."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Cruise sheet"]) | json.loads(
        lines.get("Chief scientist's notes", "{}")
    )
    done: dict[str, str] = json.loads(lines.get("Done", "{}"))
    revision = int(lines.get("Revision", "1"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)
    berth = Ref("find_berth")
    steps = [
        ("find_berth", f"Find a berth at {facts['port']} for {facts['draught_m']} m draught.",
         "search_berths", {"port": facts["port"], "draught_m": facts["draught_m"]}, []),
        ("get_permit", f"Get the sampling permit for {facts['area']}.", "apply_permit",
         {"area": facts["area"], "method": facts["method"], "berth": berth}, ["find_berth"]),
        ("book_fuel", f"Book {facts['fuel_t']} t of fuel for {facts['sail_date']}.",
         "book_bunkering", {"berth": berth, "date": facts["sail_date"],
                            "tonnes": facts["fuel_t"], "supplier": facts["supplier"]},
         ["find_berth"]),
        ("pay_dues", f"Pay the port dues from grant {facts['grant']}.", "pay_port_dues",
         {"berth": berth, "grant": facts["grant"], "amount": facts["dues"]}, ["find_berth"]),
        ("notify_crew", "Send the science crew the sailing notice.", "notify_science_crew",
         {"crew": facts["crew"], "berth": berth, "permit": Ref("get_permit"),
          "bunkering": Ref("book_fuel"), "date": facts["sail_date"]},
         ["get_permit", "book_fuel", "pay_dues"]),
    ]  # fmt: skip
    head: dict[str, Any] = {"revision": revision, "vessel": facts["vessel"]}
    if use or lines.get("Setback"):
        head["because"] = lines.get("Setback", "")
    blocks = [Block("cruise", str(facts["cruise"]), head)]
    blocks += [Block("done", slug, {"result": result}) for slug, result in done.items()]
    for slug, goal, tool, args, after in steps:
        if slug in done:
            continue
        attrs: dict[str, Any] = {"goal": goal, "tool": tool, "args": args}
        if after:
            attrs["depends_on"] = [Ref(a) for a in after]
        blocks.append(Block("step", slug, attrs))
    return "```hcl\n" + "\n\n".join(render(b) for b in blocks) + "\n```"


@dataclass
class Use:
    """A ``toolUse`` block of the conversation, with the ``toolResult`` sent for it."""

    name: str
    args: dict[str, Any]
    status: str = ""
    said: dict[str, Any] = field(default_factory=dict)


def _uses(messages: list[dict[str, Any]]) -> list[Use]:
    uses: dict[str, Use] = {}
    for m in messages:
        for block in m.get("content") or []:
            if "toolUse" in block:
                asked = block["toolUse"]
                uses[asked["toolUseId"]] = Use(asked["name"], dict(asked["input"]))
            if "toolResult" in block:
                result = block["toolResult"]
                use = uses[result["toolUseId"]]
                use.status = str(result.get("status", "success"))
                use.said = dict(result["content"][0]["json"])
    return [u for u in uses.values() if u.status]


def _report(outcome: str, result: str = "", note: str = "") -> list[dict[str, Any]]:
    report = {"outcome": outcome, "result": result, "note": note}
    return [{"text": "\n".join(f"{k.ljust(7)} = {json.dumps(v)}" for k, v in report.items())}]


def _executor(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The executor's next turn: make the step's call, call again at a ``TideWait``'s
    ``retryAt``, follow ``nextPage``, read a permit under review, answer the report."""
    messages = body.get("messages") or []
    _, (step,) = parse_hcl(_said(messages[0]).split("\n", 1)[1])
    tool, args = str(step.attrs["tool"]), dict(step.attrs["args"])
    uses = _uses(messages)
    if not uses:
        return [tool_use(tool, args, body)]
    last = uses[-1]
    if last.status == "error":
        code, message = last.said.get("errorCode"), str(last.said.get("message", ""))
        if code == "TideWait":
            return [tool_use(last.name, last.args | {"retry_at": last.said["retryAt"]}, body)]
        outcome = {"Swell": "again", "Diversion": "replan"}.get(str(code), "failed")
        return _report(outcome, note=f"{code}: {message}")
    if last.said.get("nextPage"):
        return [tool_use(last.name, last.args | {"page": last.said["nextPage"]}, body)]
    if last.said.get("state") == "under_review":
        reads = sum(u.name == "permit_status" for u in uses)
        application = str(last.said["application"])
        if reads >= MAX_READS:
            return _report("stalled", note=f"permit {application} under review after {reads} reads")
        return [tool_use("permit_status", {"application": application}, body)]
    return _report("done", str(last.said["id"]), str(last.said.get("note", "")))


def respond(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The scripted model's content blocks for one Converse request body.

    >>> brief = "Cruise sheet: " + json.dumps(CRUISE)
    >>> blocks = respond({"system": [{"text": PLANNER}],
    ...     "messages": [{"role": "user", "content": [{"text": brief}]}]})
    >>> [b.label for b in parse_hcl(blocks[0]["text"])[1]][:3]
    ['KW27-03', 'find_berth', 'get_permit']
    """
    system = " ".join(str(b.get("text", "")) for b in body.get("system") or [])
    if PLANNER in system:
        return [{"text": _plan_text(_said((body.get("messages") or [{}])[0]))}]
    return _executor(body)


# --- the harbour's services ---------------------------------------------------------------
class HarbourFault(RuntimeError):
    """A service's refusal; its class name is the ``errorCode`` the model is told."""

    def details(self) -> dict[str, Any]:
        return {"errorCode": type(self).__name__, "message": str(self)}


class TideWait(HarbourFault):
    """Not now: call again at ``retry_at``."""

    def __init__(self, message: str, retry_at: str) -> None:
        super().__init__(message)
        self.retry_at = retry_at

    def details(self) -> dict[str, Any]:
        return super().details() | {"retryAt": self.retry_at}


class Swell(HarbourFault):
    """Not this time: the step should be run again."""


class Diversion(HarbourFault):
    """The plan has to change: the message ends ``(use key=value)``."""


class Refusal(HarbourFault):
    """Refused for good."""


class CruiseFailed(RuntimeError):
    """The cruise could not be readied, or was stopped after (the reason is the message)."""


@dataclass
class Harbour:
    """The harbour master's listing, the Marine Directorate, the bunker suppliers, the grant
    office and the crew mail of one cruise."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    berths: dict[str, str] = field(default_factory=dict)
    applications: dict[str, int] = field(default_factory=dict)
    bunkerings: list[dict[str, Any]] = field(default_factory=list)
    payments: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, tool: str) -> None:
        """Raise the scenario's next fault when ``tool`` is the one it targets."""
        if not self.faults or tool != self.params.get("tool"):
            return
        f = self.faults.pop(0)
        if f["kind"] == "TideWait":
            raise TideWait(f["text"], f["hint"])
        if f["kind"] == "Swell":
            raise Swell(f["text"])
        if f["kind"] == "Diversion":
            raise Diversion(f"{f['text']} (use {f['hint']})")
        raise Refusal(f["text"])

    # the tools: keyword arguments as the model sends them; a dict back, or a HarbourFault
    def search_berths(self, port: str, draught_m: float, page: int = 1) -> dict[str, Any]:
        self.fault("search_berths")
        code = port[:3].upper()
        if page < int(self.params.get("pages", 1)):
            shallow = [f"{code}-B{page * 10 + n} ({draught_m - 1.5:.1f} m)" for n in (1, 2, 3)]
            return {"berths": [], "too_shallow": shallow, "nextPage": page + 1}
        berth = f"{code}-B{self.label.seed % 40 + 1}"
        self.berths[berth] = port
        return {"id": berth, "port": port, "depth_m": draught_m + 1.2, "note": "east quay"}

    def apply_permit(self, area: str, method: str, berth: str) -> dict[str, Any]:
        self.fault("apply_permit")
        port = self.berths.get(berth, "")
        if port != CRUISE["port"]:
            raise Refusal(
                f"the {area} sampling licence covers sailings from {CRUISE['port']} only; berth "
                f"{berth} is at {port or 'no known port'}"
            )
        application = f"MD-{self.label.seed}-{len(self.applications) + 1}"
        self.applications[application] = 0
        if "polls" in self.params or self.params.get("stuck"):
            return {"application": application, "state": "under_review"}
        return {"id": f"PERMIT-{application}", "state": "granted"}

    def permit_status(self, application: str) -> dict[str, Any]:
        self.applications[application] += 1
        if self.params.get("stuck") or self.applications[application] < int(
            self.params.get("polls", 0)
        ):
            return {"application": application, "state": "under_review"}
        return {"id": f"PERMIT-{application}", "state": "granted"}

    def book_bunkering(
        self, berth: str, date: str, tonnes: float, supplier: str, retry_at: str = ""
    ) -> dict[str, Any]:
        self.fault("book_bunkering")
        other = self.params.get("supplier_to")
        if other and supplier != other:
            raise Diversion(f"{supplier} has no barge free on {date} (use supplier={other})")
        booking = f"BNK-{self.label.seed % 900 + 100}"
        self.bunkerings.append(
            {"booking": booking, "berth": berth, "date": date, "supplier": supplier}
        )
        return {"id": booking, "date": date, "slot": retry_at or "06:00", "tonnes": tonnes}

    def pay_port_dues(
        self, berth: str, grant: str, amount: float, retry_at: str = ""
    ) -> dict[str, Any]:
        self.fault("pay_port_dues")
        if grant != CRUISE["grant"] and grant not in self.params.get("grants", ()):
            raise Refusal(f"the grant office holds no grant code {grant}")
        receipt = f"DUES-{self.label.seed}-{len(self.payments) + 1}"
        self.payments.append({"berth": berth, "grant": grant, "amount": amount})
        return {"id": receipt, "amount": amount}

    def notify_science_crew(
        self, crew: str, berth: str, permit: str, bunkering: str, date: str, retry_at: str = ""
    ) -> dict[str, Any]:
        self.fault("notify_science_crew")
        return {"id": f"MAIL-{berth}-{date[-2:]}", "to": crew}


# --- the app ------------------------------------------------------------------------------
def _report_of(text: str) -> tuple[str, str, str]:
    """The executor's HCL report: (outcome, result, note); ``failed`` when unreadable."""
    try:
        attrs, _ = parse_hcl(text)
    except ValueError:
        attrs = {}
    outcome = str(attrs.get("outcome", ""))
    if outcome not in OUTCOMES:
        return "failed", "", f"unreadable report: {text[:200]}"
    return outcome, str(attrs.get("result", "")), str(attrs.get("note", ""))


@dataclass
class Cruise:
    """One cruise to ready."""

    label: Label
    client: Any
    tracer: Tracer
    harbour: Harbour
    results: dict[str, str] = field(default_factory=dict)
    plans: int = 0

    def brief(self, setback: str) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("port", "sail_date", "grant")
            if k in self.label.params
        }
        lines = [
            f"Objective: ready {CRUISE['vessel']} for cruise {CRUISE['cruise']}.",
            f"Cruise sheet: {json.dumps(CRUISE)}",
        ]
        if notes:
            lines.append(f"Chief scientist's notes: {json.dumps(notes)}")
        if self.plans:
            lines += [
                f"Revision: {self.plans + 1}",
                f"Done: {json.dumps(self.results)}",
                f"Setback: {setback}",
            ]
        return "\n".join(lines)

    def plan(self, setback: str) -> list[Block]:
        """Ask the planner for the plan (again, after a setback); its step blocks."""
        with self.tracer.start_as_current_span(f"plan revision {self.plans + 1}") as span:
            span.set_attributes(
                {"cruise.plan.revision": self.plans + 1, "cruise.plan.setback": setback}
            )
            response = self.client.converse(
                modelId=MODEL,
                system=[{"text": PLANNER}],
                messages=[{"role": "user", "content": [{"text": self.brief(setback)}]}],
                inferenceConfig={"maxTokens": 2048, "temperature": 0},
            )
            self.plans += 1
            text = _said(response["output"]["message"])
            _, blocks = parse_hcl(text)
            steps = [b for b in blocks if b.type == "step"]
            span.set_attributes(
                {"cruise.plan.hcl": text, "cruise.plan.steps": [b.label for b in steps]}
            )
            return steps

    def run_tool(self, use: dict[str, Any], allowed: tuple[str, ...]) -> dict[str, Any]:
        """Run one ``toolUse`` under the app's own span; the ``toolResult`` block to send."""
        name = str(use["name"])
        with self.tracer.start_as_current_span(f"tool {name}") as span:
            span.set_attributes(
                {
                    "cruise.tool": name,
                    "cruise.tool.use_id": str(use["toolUseId"]),
                    "cruise.tool.input": json.dumps(use["input"]),
                }
            )
            result: dict[str, Any] = {"toolUseId": use["toolUseId"]}
            try:
                if name not in allowed:
                    raise Refusal(f"no tool {name} for this step")
                said = getattr(self.harbour, name)(**use["input"])
            except HarbourFault as e:
                # the model is told what went wrong; the span keeps the error
                span.record_exception(e)
                span.set_status(Status(StatusCode.ERROR, f"{type(e).__name__}: {e}"))
                said = e.details()
                result["status"] = "error"
            span.set_attribute("cruise.tool.output", json.dumps(said))
            result["content"] = [{"json": said}]
            return {"toolResult": result}

    def attempt(self, number: int, step: Block, attempt: int) -> tuple[str, str, str]:
        """One executor loop for a step under a span of its own: (outcome, result, note)."""
        block = render(step, self.results)
        with self.tracer.start_as_current_span(f"step {step.label} attempt {attempt}") as span:
            span.set_attributes(
                {
                    "cruise.step": step.label,
                    "cruise.step.number": number,
                    "cruise.step.attempt": attempt,
                    "cruise.step.block": block,
                }
            )
            allowed = TOOLS.get(str(step.attrs.get("tool")), ())
            messages: list[dict[str, Any]] = [
                {
                    "role": "user",
                    "content": [{"text": f"Step {number} (attempt {attempt}):\n{block}"}],
                }
            ]
            config = {"tools": [SPECS[n] for n in allowed]} if allowed else None
            said = ""
            for _ in range(MAX_TURNS):
                extra = {"toolConfig": config} if config else {}
                response = self.client.converse(
                    modelId=MODEL, system=[{"text": EXECUTOR}], messages=messages, **extra
                )
                message = response["output"]["message"]
                messages.append(message)
                if response["stopReason"] != "tool_use":
                    said = _said(message)
                    break
                uses = [b["toolUse"] for b in message["content"] if "toolUse" in b]
                messages.append(
                    {"role": "user", "content": [self.run_tool(u, allowed) for u in uses]}
                )
            else:
                said = 'outcome = "stalled"\nnote = "no report in the turn budget"'
            outcome, result, note = _report_of(said)
            span.set_attributes({"cruise.step.outcome": outcome, "cruise.step.result": result})
            if outcome != "done":
                span.set_status(Status(StatusCode.ERROR, f"{outcome}: {note}"))
            return outcome, result, note

    def ready(self) -> None:
        """Plan, run each step (again, or after a new plan), check, watch; raises
        :class:`CruiseFailed`."""
        steps = self.plan("")
        while True:
            open_steps = [s for s in steps if s.label not in self.results]
            if not open_steps:
                break
            step = open_steps[0]
            number = len(self.results) + 1
            for attempt in range(1, MAX_ATTEMPTS + 1):
                outcome, result, note = self.attempt(number, step, attempt)
                if outcome != "again":
                    break
            if outcome == "done":
                self.results[step.label] = result
            elif outcome == "replan" and self.plans < MAX_PLANS:
                steps = self.plan(f"step {step.label}: {note}")
            else:
                raise CruiseFailed(f"{step.label}: {outcome}: {note}")
        self.check()
        self.watch()

    def check(self) -> None:
        """The app's own check: the fuel is bunkered on the cruise sheet's sailing day."""
        with self.tracer.start_as_current_span("check bunkering") as span:
            booking = self.harbour.bunkerings[-1]
            span.set_attributes({f"cruise.bunkering.{k}": v for k, v in booking.items()})
            if booking["date"] != CRUISE["sail_date"]:
                reason = (
                    f"{booking['booking']} bunkers on {booking['date']}, "
                    f"{CRUISE['vessel']} sails {CRUISE['sail_date']}"
                )
                span.set_status(Status(StatusCode.ERROR, reason))
                raise CruiseFailed(reason)

    def watch(self) -> None:
        """The app watches the port's notices up to sailing (a few reads)."""
        port = CRUISE["port"]
        with self.tracer.start_as_current_span(f"watch port {port}") as span:
            for read in range(1, 4):
                if self.label.scenario.startswith("external_") and read > int(
                    self.label.params["reads"]
                ):
                    reason = f"a gale warning closed {port} to departures at read {read}"
                    span.add_event("port closed", {"read": read, "reason": reason})
                    span.set_status(Status(StatusCode.ERROR, reason))
                    raise CruiseFailed(reason)
                span.add_event("port notice", {"read": read, "state": "open"})

    def run(self) -> str:
        """The cruise under the app's root span; its trace id."""
        with self.tracer.start_as_current_span(
            f"cruise {CRUISE['cruise']}", record_exception=False, set_status_on_exception=False
        ) as root:
            root.set_attributes({"cruise.vessel": CRUISE["vessel"], "cruise.run": self.label.run})
            try:
                self.ready()
                root.set_attribute("cruise.outcome", "ready")
            except CruiseFailed as e:
                root.set_attribute("cruise.outcome", "failed")
                root.record_exception(e)
                root.set_status(Status(StatusCode.ERROR, str(e)))
            return format(root.get_span_context().trace_id, "032x")


AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "AKIAFAKEVESSEL000000",
    "AWS_SECRET_ACCESS_KEY": "fake-secret-for-the-loopback-bedrock",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_EC2_METADATA_DISABLED": "true",
}
"""Dummy credentials and region while the play runs (boto3 signs every request; the fake
server ignores the signature), no profile file read."""


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the vessel scenarios with OpenLLMetry's Bedrock instrumentor and the app's spans on
    ``provider``; run name -> trace id."""
    if not labels:
        return {}
    instrumentor = BedrockInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer(APP_TRACER)
    try:
        with mock.patch.dict(os.environ, AWS_ENV), BedrockServer(respond) as server:
            # a session of its own (boto3's default session keeps the credentials it first
            # found), made after instrument(): the instrumentor wraps clients as they are made
            client = boto3.session.Session().client(
                "bedrock-runtime",
                endpoint_url=server.endpoint_url,
                config=Config(retries={"mode": "standard", "max_attempts": 3}),
            )
            return {
                label.run: Cruise(label, client, tracer, Harbour(label)).run() for label in labels
            }
    finally:
        instrumentor.uninstrument()

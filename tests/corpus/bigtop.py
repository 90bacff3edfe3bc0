"""A travelling circus pitching its big top in a town, written by hand on the **Amazon Bedrock
Converse API** (``boto3``'s ``bedrock-runtime`` client, no agent framework): a planner call whose
plan is forced through a tool (``toolConfig`` with one ``post_running_order`` tool and
``toolChoice: {"tool": {"name": "post_running_order"}}``; the plan is the ``toolUse`` block's
``input``), then per act attempt an executor loop (``converse``, run the ``toolUse`` blocks,
send ``toolResult`` blocks back in a user message, ``status: "error"`` for a failure, until
``stopReason`` is ``end_turn``); re-runs and re-plans are decided by the app from the executor's
answer.

Why a forced tool rather than JSON text: forcing a tool is the Converse tool-use docs' way to
get JSON out of a model, the model cannot wrap the JSON in prose or a code fence, and the plan
arrives already parsed as the block's ``input`` document.

Traced by OpenInference's Bedrock instrumentor (``BedrockInstrumentor().instrument(
tracer_provider=...)`` before the client is made: it wraps the ``converse`` of every client
created after; one ``bedrock.converse`` LLM span per call, boto3's retries inside it) plus the
app's own spans through a **plain OpenTelemetry tracer** with the app's own attribute names
(``circus.*``, as a user with CloudWatch / X-Ray style dashboards of their own writes them): a
root span per tour stop (the running orders as ``running order`` events on it: the plan has no
span of its own, its model call is the instrumentor's), a span per act attempt and per tool
run, the check and watch spans after. The model: a scripted model behind the small fake Bedrock
Runtime API of :mod:`tests.corpus._fake_bedrock`, reached by boto3 over HTTP (``endpoint_url``,
dummy credentials and region in the environment while the play runs; one
``ThrottlingException`` at the first plan of every third stop, which boto3 retries itself).
No planscope code.

Sealed-40 split only (see README.md). The job: a circus pitches its big top in a town for a
show day. Find a showground for the tent's seats in the council's register (read page by
page), get the council's event licence for the day (a polled application), hire generators
from a plant depot, pay the ground rent from the circus's account, tell the ticket holders.
As a Bedrock user writes it:

* the plan (the ``post_running_order`` input) is ``{"show", "acts": [{"cue", "act",
  "purpose", "tool", "params"}]}``; a parameter ``"%act%"`` takes that earlier act's result;
  after a ``rework`` answer the planner is asked again with the acts done and every issue so
  far;
* the services **raise** a :class:`Hitch`; the loop catches it and answers a ``toolResult``
  with ``status: "error"`` and one ``json`` content block ``{"cue", "message", ...}``:
  ``standby`` with ``not_before`` (the model calls again with that time, inside its loop),
  ``delay`` (the model answers ``again``: the app runs the act again), ``reroute`` with
  ``instead`` (``rework``: the app plans again), ``curtain`` (final: the stop is called off);
* the executor follows the register's ``next_page`` and polls a pending licence, giving up
  (``stuck``) after :data:`MAX_POLLS` checks; it ends every loop with a short report: a
  ``## <status>`` heading (``ready``, ``again``, ``rework``, ``curtain``, ``stuck``) then
  ``result:`` and ``note:`` lines.

The planner trusts the tour manager's notes over the booking sheet: a scenario's wrong value
comes from a note. This agent has no scenario of an executor starved of context (no
starvation label).
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
from openinference.instrumentation.bedrock import BedrockInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Span, Status, StatusCode, Tracer

from ._fake_bedrock import MODEL, REGION, BedrockServer, tool_use
from ._labels import Label

TRACER = "bigtop"
ORDER: dict[str, Any] = {
    "show": "Cirque Lumiere autumn tour",
    "company": "Lumiere Travelling Circus",
    "town": "Kettlewick",
    "date": "2027-09-18",
    "seats": 1200,
    "kva": 250,
    "depot": "Leyburn",
    "account": "LTC-40917",
    "rent": 3800.0,
    "mailing_list": "tickets@lumiere-circus.example",
}
LICENCE_CAP = 1500
"""The most seats the town licenses under canvas."""
MAX_ACT_ATTEMPTS = 8
MAX_PLANS = 5
MAX_STANDBY = 8
"""``standby`` answers in one executor loop before the model gives up."""
MAX_POLLS = 12
MAX_TURNS = 40
"""Model calls in one executor loop (the app's guard on the tool-use loop)."""
PLANNER = "You plan a travelling circus's stop in a town as a running order of acts."
EXECUTOR = (
    "You are the circus's advance agent. Carry out the one act you are given with the tools, "
    "then report: a '## <ready|again|rework|curtain|stuck>' heading, then 'result:' and "
    "'note:' lines."
)
STATUSES = ("ready", "again", "rework", "curtain", "stuck")
PLAN_TOOL = "post_running_order"


def _spec(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"toolSpec": {"name": name, "description": description, "inputSchema": {"json": schema}}}


def _object(optional: tuple[str, ...] = (), **props: str) -> dict[str, Any]:
    """A JSON schema object of ``props`` (name -> JSON type), all required but ``optional``."""
    return {
        "type": "object",
        "properties": {k: {"type": v} for k, v in props.items()},
        "required": [k for k in props if k not in optional],
    }


PLAN_SPEC = _spec(
    PLAN_TOOL,
    "Post the running order of the stop: the acts in order, each one tool call.",
    {
        "type": "object",
        "properties": {
            "show": {"type": "string"},
            "acts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "cue": {"type": "integer"},
                        "act": {"type": "string"},
                        "purpose": {"type": "string"},
                        "tool": {"type": "string"},
                        "params": {
                            "type": "object",
                            "description": 'values, or "%act%" for that earlier act\'s result',
                        },
                    },
                    "required": ["cue", "act", "purpose", "tool", "params"],
                },
            },
        },
        "required": ["show", "acts"],
    },
)
TOOLS = [
    _spec(
        "search_grounds",
        "Showgrounds in a town that take a tent of so many seats, a page at a time.",
        _object(("page",), town="string", seats="integer", page="integer"),
    ),
    _spec(
        "apply_event_licence",
        "Apply to the council for the event licence of a ground on a day.",
        _object(
            ("not_before",), ground="string", date="string", seats="integer", not_before="string"
        ),
    ),
    _spec(
        "licence_status",
        "Whether the council has granted an event licence application.",
        _object(application="string"),
    ),
    _spec(
        "hire_generators",
        "Hire generators of a power for a ground on a day from a plant depot.",
        _object(
            ("not_before",),
            ground="string",
            kva="integer",
            depot="string",
            date="string",
            not_before="string",
        ),
    ),
    _spec(
        "pay_ground_rent",
        "Pay the ground rent from the circus's account.",
        _object(account="string", amount="number", reference="string"),
    ),
    _spec(
        "notify_ticket_holders",
        "Mail the ticket holders the show notice with the licence and the power hire.",
        _object(
            ("not_before",),
            mailing_list="string",
            licence="string",
            power="string",
            not_before="string",
        ),
    ),
]


# --- the scripted model -------------------------------------------------------------------
def _text(message: dict[str, Any]) -> str:
    return "".join(str(b.get("text", "")) for b in message.get("content") or [])


@dataclass
class Use:
    """A ``toolUse`` block of the conversation, with the ``toolResult`` sent for it."""

    name: str
    args: dict[str, Any]
    status: str = ""
    said: dict[str, Any] = field(default_factory=dict)


def _uses(messages: list[dict[str, Any]]) -> list[Use]:
    """The conversation's tool uses in order, each paired by ``toolUseId`` with its result."""
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
                use.said = next((c["json"] for c in result["content"] if "json" in c), {})
    return list(uses.values())


def _report(status: str, result: str = "", note: str = "") -> list[dict[str, Any]]:
    return [{"text": f"## {status}\nresult: {result}\nnote: {note}"}]


def _execute(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The advance agent's next blocks for its act: call the tool, call again at the time a
    ``standby`` names, follow ``next_page``, poll a pending licence, end with a report."""
    messages = body["messages"]
    order = dict(re.findall(r"^(\w+): (.*)$", _text(messages[0]), re.MULTILINE))
    name = order["Tool"]
    args = json.loads(order["Params"])
    uses = _uses(messages)
    if not uses:
        return [tool_use(name, args, body)]
    last = uses[-1]
    said = last.said
    if last.status == "error":
        cue, text = said.get("cue"), str(said.get("message", ""))
        if cue == "standby":
            standbys = sum(u.status == "error" and u.said.get("cue") == "standby" for u in uses)
            if standbys >= MAX_STANDBY:
                return _report("stuck", note=f"still on standby after {standbys} calls: {text}")
            return [tool_use(last.name, last.args | {"not_before": said["not_before"]}, body)]
        if cue == "delay":
            return _report("again", note=text)
        if cue == "reroute":
            instead = " ".join(f"{k}={v}" for k, v in said.get("instead", {}).items())
            return _report("rework", note=f"{text} (instead: {instead})")
        return _report("curtain", note=text)
    if said.get("next_page"):
        return [tool_use(name, args | {"page": said["next_page"]}, body)]
    if said.get("state") == "pending":
        polls = sum(u.name == "licence_status" for u in uses)
        if polls >= MAX_POLLS:
            return _report("stuck", note=f"{said['application']} pending after {polls} checks")
        return [tool_use("licence_status", {"application": said["application"]}, body)]
    if "grounds" in said:
        return _report("ready", said["grounds"][0]["ground"], "ground found")
    return _report("ready", said["id"], f"{name} answered")


def instead(issues: list[str]) -> list[tuple[str, str]]:
    """The ``(param, value)`` pairs the issues say to use instead, in order.

    >>> instead(["hire_power: the gensets are out (instead: depot=Skipton)"])
    [('depot', 'Skipton')]
    """
    return [
        (m.group(1), m.group(2)) for i in issues if (m := re.search(r"instead: (\w+)=([^)\s]+)", i))
    ]


def _plan(brief: str) -> dict[str, Any]:
    """The planner's running order: the booking sheet's facts, the tour manager's notes trusted
    over them; every value an issue says to use instead is used (the later over the earlier);
    acts done left out."""
    lines = dict(re.findall(r"^(\w[\w' ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Booking sheet"]) | json.loads(lines.get("Tour manager's notes", "{}"))
    done: dict[str, str] = json.loads(lines.get("Acts done", "{}"))
    swaps = dict(instead(re.findall(r"^Issue: (.*)$", brief, re.MULTILINE)))

    def val(key: str) -> Any:
        return swaps.get(key, facts[key])

    acts = [
        ("find_ground", f"Find a ground in {facts['town']} for {facts['seats']} seats.",
         "search_grounds", {"town": val("town"), "seats": val("seats")}),
        ("license_show", f"Get the event licence for {facts['date']}.", "apply_event_licence",
         {"ground": "%find_ground%", "date": val("date"), "seats": val("seats")}),
        ("hire_power", f"Hire {facts['kva']} kVA of generators.", "hire_generators",
         {"ground": "%find_ground%", "kva": val("kva"), "depot": val("depot"),
          "date": val("date")}),
        ("pay_rent", f"Pay the {facts['rent']} GBP ground rent.", "pay_ground_rent",
         {"account": val("account"), "amount": val("rent"), "reference": facts["show"]}),
        ("tell_audience", "Mail the ticket holders the show notice.", "notify_ticket_holders",
         {"mailing_list": val("mailing_list"), "licence": "%license_show%",
          "power": "%hire_power%"}),
    ]  # fmt: skip
    return {
        "show": f"{facts['show']} at {facts['town']} on {facts['date']}",
        "acts": [
            {"cue": cue, "act": act, "purpose": purpose, "tool": tool, "params": params}
            for cue, (act, purpose, tool, params) in enumerate(acts, 1)
            if act not in done
        ],
    }


def respond(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The scripted model's content blocks for one ``POST /model/{modelId}/converse``.

    >>> sheet = f"Booking sheet: {json.dumps(ORDER)}"
    >>> asked = {"system": [{"text": PLANNER}], "messages": [{"role": "user",
    ...     "content": [{"text": sheet}]}]}
    >>> plan = respond(asked)[0]["toolUse"]["input"]
    >>> plan["acts"][1]["params"]["ground"]
    '%find_ground%'
    >>> respond({"messages": [{"role": "user", "content": [{"text": "hi"}]}]})
    [{'text': 'Not a circus matter.'}]
    """
    system = "".join(str(b.get("text", "")) for b in body.get("system") or [])
    if PLANNER in system:
        brief = _text(body["messages"][0])
        return [tool_use(PLAN_TOOL, _plan(brief), body)]
    if EXECUTOR in system:
        return _execute(body)
    return [{"text": "Not a circus matter."}]


# --- the world ----------------------------------------------------------------------------
class Hitch(RuntimeError):
    """A service's refusal; ``cue`` names what to do, ``extra`` the fields sent beside it."""

    cue = "curtain"

    @property
    def extra(self) -> dict[str, Any]:
        return {}


class Standby(Hitch):
    """The service takes the call again from a time on."""

    cue = "standby"

    def __init__(self, text: str, not_before: str) -> None:
        super().__init__(text)
        self.not_before = not_before

    @property
    def extra(self) -> dict[str, Any]:
        return {"not_before": self.not_before}


class Delay(Hitch):
    """The service cannot take the call now; the act is to be carried out again later."""

    cue = "delay"


class Reroute(Hitch):
    """The service names another value to use: the running order has to change."""

    cue = "reroute"

    def __init__(self, text: str, instead: dict[str, str]) -> None:
        super().__init__(text)
        self.instead = instead

    @property
    def extra(self) -> dict[str, Any]:
        return {"instead": self.instead}


class Curtain(Hitch):
    """The service refuses for good."""


HITCHES: dict[str, type[Hitch]] = {
    "standby": Standby,
    "delay": Delay,
    "reroute": Reroute,
    "curtain": Curtain,
}


class StopCalledOff(RuntimeError):
    """The stop could not be pitched (or was called off after it was set up)."""


@dataclass
class Town:
    """The council's register and licensing, the plant depots, the bank and the mail of one
    stop."""

    label: Label
    hitches: list[dict[str, Any]] = field(default_factory=list)
    grounds: dict[str, int] = field(default_factory=dict)
    licences: dict[str, dict[str, Any]] = field(default_factory=dict)
    hires: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.hitches = [dict(h) for h in self.label.params.get("hitches", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def hitch(self, tool: str) -> None:
        """Raise the scenario's next hitch when ``tool`` is the one it targets."""
        if self.hitches and tool == self.params.get("service"):
            hitch = self.hitches.pop(0)
            raise HITCHES[hitch.pop("cue")](hitch.pop("text"), **hitch)

    def search_grounds(self, town: str, seats: int, page: int | None = None) -> dict[str, Any]:
        self.hitch("search_grounds")
        page = page or 1
        if page < int(self.params.get("pages", 1)):
            let = [{"ground": f"{town[:3].upper()}-P{page}{n}", "let": True} for n in (1, 2, 3)]
            return {"grounds": [], "already_let": let, "next_page": page + 1}
        ground = f"{town[:3].upper()}-{seats // 100:02d}"
        self.grounds[ground] = seats
        return {"grounds": [{"ground": ground, "seats": seats, "surface": "grass"}]}

    def apply_event_licence(
        self, ground: str, date: str, seats: int, not_before: str | None = None
    ) -> dict[str, Any]:
        self.hitch("apply_event_licence")
        pitched = self.grounds.get(ground, 99999)
        if pitched > LICENCE_CAP:
            raise Curtain(
                f"ground {ground} is laid out for {pitched} seats; the council licenses tented "
                f"shows of up to {LICENCE_CAP}"
            )
        application = f"EL-{self.label.seed}-{len(self.licences) + 1}"
        self.licences[application] = {"ground": ground, "date": date, "polls": 0}
        if "poll" in self.label.scenario:
            return {"application": application, "state": "pending"}
        return {"id": f"LIC-{application}", "state": "granted", "date": date}

    def licence_status(self, application: str) -> dict[str, Any]:
        asked = self.licences[application]
        asked["polls"] += 1
        stuck = self.label.scenario == "loop_poll_stuck"
        if stuck or asked["polls"] < int(self.params.get("polls", 0)):
            return {"application": application, "state": "pending"}
        return {"id": f"LIC-{application}", "state": "granted", "date": asked["date"]}

    def hire_generators(
        self, ground: str, kva: int, depot: str, date: str, not_before: str | None = None
    ) -> dict[str, Any]:
        self.hitch("hire_generators")
        other = self.params.get("depot_to")
        if other and depot == ORDER["depot"]:
            raise Reroute(f"the {depot} gensets are all out on a festival", {"depot": other})
        hire = f"GEN-{depot[:3].upper()}-{len(self.hires) + 1}"
        self.hires[hire] = {"ground": ground, "kva": kva, "depot": depot, "date": date}
        return {"id": hire, "kva": kva, "depot": depot}

    def pay_ground_rent(self, account: str, amount: float, reference: str) -> dict[str, Any]:
        self.hitch("pay_ground_rent")
        if account != ORDER["account"]:
            raise Curtain(f"no account {account} is held for the circus")
        return {"id": f"RENT-{self.label.seed}", "amount": amount}

    def notify_ticket_holders(
        self, mailing_list: str, licence: str, power: str, not_before: str | None = None
    ) -> dict[str, Any]:
        self.hitch("notify_ticket_holders")
        return {"id": f"NOTE-{licence}", "to": mailing_list, "sent": not_before or "now"}


# --- the app ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Act:
    """One act of the running order: the tool the executor calls with its params."""

    cue: int
    act: str
    purpose: str
    tool: str
    params: dict[str, Any]


def resolve(act: Act, done: dict[str, str]) -> dict[str, Any]:
    """An act's params, each ``"%act%"`` replaced by that act's result.

    >>> resolve(Act(2, "b", "", "f", {"ground": "%a%", "seats": 900}), {"a": "KET-09"})
    {'ground': 'KET-09', 'seats': 900}
    """
    ref = re.compile(r"^%(\w+)%$")
    return {
        k: done.get(m.group(1), "") if isinstance(v, str) and (m := ref.match(v)) else v
        for k, v in act.params.items()
    }


def _report_of(text: str) -> dict[str, str]:
    """The executor's report: ``status``, ``result``, ``note`` (``stuck`` when unreadable)."""
    heading = re.match(r"^## (\w+)", text)
    fields = dict(re.findall(r"^(result|note): ?(.*)$", text, re.MULTILINE))
    if not heading or heading.group(1) not in STATUSES:
        return {"status": "stuck", "result": "", "note": f"no report: {text[:200]}"}
    return {"status": heading.group(1), "result": "", "note": "", **fields}


class Stop:
    """One tour stop: running orders, act attempts and tool runs under the app's root span, then
    the app's check and watch."""

    def __init__(self, label: Label, client: Any, tracer: Tracer) -> None:
        self.label = label
        self.town = Town(label)
        self.client = client
        self.tracer = tracer
        self.plans = 0

    def brief(self) -> str:
        notes = {
            k: self.label.params[k] for k in ("seats", "date", "account") if k in self.label.params
        }
        lines = [
            f"Pitch {ORDER['show']} in {ORDER['town']} for {ORDER['company']} "
            f"(job CT-{self.label.seed}).",
            f"Booking sheet: {json.dumps(ORDER)}",
        ]
        if notes:
            lines.append(f"Tour manager's notes: {json.dumps(notes)}")
        return "\n".join(lines)

    def plan(self, root: Span, done: dict[str, str], issues: list[str]) -> list[Act]:
        """Ask the planner (again, with the acts done and every issue so far)."""
        self.plans += 1
        brief = self.brief()
        if done or issues:
            brief += f"\nActs done: {json.dumps(done)}"
            brief += "".join(f"\nIssue: {i}" for i in issues)
        response = self.client.converse(
            modelId=MODEL,
            system=[{"text": PLANNER}],
            messages=[{"role": "user", "content": [{"text": brief}]}],
            toolConfig={"tools": [PLAN_SPEC], "toolChoice": {"tool": {"name": PLAN_TOOL}}},
            inferenceConfig={"maxTokens": 2048, "temperature": 0},
        )
        blocks = response["output"]["message"]["content"]
        posted = [
            b["toolUse"]["input"] for b in blocks if b.get("toolUse", {}).get("name") == PLAN_TOOL
        ]
        if not posted:
            raise StopCalledOff(f"the planner posted no running order: {blocks}")
        acts = [Act(**a) for a in posted[0]["acts"]]
        root.add_event(
            "running order",
            {
                "circus.plan.version": self.plans,
                "circus.plan.acts": [a.act for a in acts],
                "circus.plan.issues": issues,
            },
        )
        return acts

    def run_tool(self, use: dict[str, Any]) -> dict[str, Any]:
        """Run one ``toolUse`` under a span of its own; the ``toolResult`` block to send."""
        with self.tracer.start_as_current_span(
            f"run {use['name']}", record_exception=False
        ) as span:
            span.set_attribute("circus.tool.name", use["name"])
            span.set_attribute("circus.tool.use_id", use["toolUseId"])
            span.set_attribute("circus.tool.input", json.dumps(use["input"]))
            result: dict[str, Any] = {"toolUseId": use["toolUseId"]}
            try:
                said = getattr(self.town, use["name"])(**use["input"])
            except Hitch as exc:
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, str(exc)))
                span.set_attribute("circus.tool.cue", exc.cue)
                said = {"cue": exc.cue, "message": str(exc), **exc.extra}
                result["status"] = "error"
            else:
                span.set_attribute("circus.tool.output", json.dumps(said))
            result["content"] = [{"json": said}]
            return {"toolResult": result}

    def attempt(self, act: Act, attempt: int, done: dict[str, str]) -> dict[str, str]:
        """One executor loop for an act under a span of its own; its report."""
        params = resolve(act, done)
        order = (
            f"Act {act.cue} {act.act}, attempt {attempt}: {act.purpose}\n"
            f"Tool: {act.tool}\nParams: {json.dumps(params)}"
        )
        with self.tracer.start_as_current_span(f"act {act.act}") as span:
            span.set_attribute("circus.act", act.act)
            span.set_attribute("circus.attempt", attempt)
            span.set_attribute("circus.tool", act.tool)
            span.set_attribute("circus.params", json.dumps(params))
            messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": order}]}]
            said = ""
            for _ in range(MAX_TURNS):
                response = self.client.converse(
                    modelId=MODEL,
                    system=[{"text": EXECUTOR}],
                    messages=messages,
                    toolConfig={"tools": TOOLS, "toolChoice": {"auto": {}}},
                )
                message = response["output"]["message"]
                messages.append(message)
                if response["stopReason"] != "tool_use":
                    said = _text(message)
                    break
                uses = [b["toolUse"] for b in message["content"] if "toolUse" in b]
                messages.append({"role": "user", "content": [self.run_tool(u) for u in uses]})
            report = _report_of(said)
            span.set_attribute("circus.verdict", report["status"])
            span.set_attribute("circus.result", report["result"])
            if report["status"] != "ready":
                span.set_status(Status(StatusCode.ERROR, report.get("note", "")))
            return report

    def carry_out(self, root: Span) -> None:
        """Plan, carry out each act (again after ``again``), plan again after ``rework``."""
        done: dict[str, str] = {}
        issues: list[str] = []
        acts = self.plan(root, done, issues)
        while acts:
            act = acts[0]
            for attempt in range(1, MAX_ACT_ATTEMPTS + 1):
                report = self.attempt(act, attempt, done)
                if report["status"] != "again":
                    break
            status, note = report["status"], report.get("note", "")
            if status == "ready":
                done[act.act] = report["result"]
                acts = acts[1:]
            elif status == "rework" and self.plans < MAX_PLANS:
                issues.append(f"{act.act}: {note}")
                acts = self.plan(root, done, issues)
            else:
                raise StopCalledOff(f"{act.act}: {status}: {note}")

    def check(self) -> None:
        """The app's check: the licence is for the booking sheet's show day."""
        with self.tracer.start_as_current_span("check licence date") as span:
            licence = list(self.town.licences.values())[-1]
            span.set_attribute("circus.licence.date", licence["date"])
            span.set_attribute("circus.sheet.date", ORDER["date"])
            if licence["date"] != ORDER["date"]:
                raise StopCalledOff(
                    f"the licence is for {licence['date']}, the show day is {ORDER['date']}"
                )

    def watch(self) -> None:
        """The app's watch of the ground's weather up to the show: a reading a day."""
        with self.tracer.start_as_current_span(f"watch weather {ORDER['town']}") as span:
            days = int(self.label.params.get("polls", 1))
            for day in range(1, days + 2):
                if self.label.scenario.startswith("external_") and day > days:
                    span.add_event("forecast", {"day": day, "wind_mph": 61})
                    raise StopCalledOff("a gale warning for the show day: the big top stays down")
                span.add_event("forecast", {"day": day, "wind_mph": 12 + day})

    def run(self) -> str:
        """Pitch the stop under the app's root span; the OTel trace id."""
        with self.tracer.start_as_current_span(
            f"tour stop {ORDER['town']}", record_exception=False, set_status_on_exception=False
        ) as root:
            root.set_attribute("circus.job", f"CT-{self.label.seed}")
            root.set_attribute("circus.town", ORDER["town"])
            trace_id = format(root.get_span_context().trace_id, "032x")
            try:
                self.carry_out(root)
                self.check()
                self.watch()
            except StopCalledOff as exc:
                root.record_exception(exc)
                root.set_status(Status(StatusCode.ERROR, str(exc)))
                root.set_attribute("circus.outcome", "called off")
            else:
                root.set_attribute("circus.outcome", "pitched")
        return trace_id


def _throttled(body: dict[str, Any]) -> bool:
    """A throttle at the first plan of every third stop (boto3 waits and retries)."""
    messages = body.get("messages") or []
    said = _text(messages[0]) if len(messages) == 1 else ""
    job = re.search(r"job CT-(\d+)", said)
    return job is not None and int(job.group(1)) % 3 == 1 and "Acts done:" not in said


AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "AKIAFAKEBIGTOP000000",
    "AWS_SECRET_ACCESS_KEY": "fake-secret-for-the-loopback-bedrock",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_EC2_METADATA_DISABLED": "true",
}
"""Dummy credentials and region while the play runs (boto3 signs every request; the fake
server ignores the signature), no profile file read."""


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the big-top scenarios with the instrumentor's and the app's spans on ``provider``;
    run name -> trace id."""
    if not labels:
        return {}
    instrumentor = BedrockInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer(TRACER)
    try:
        with mock.patch.dict(os.environ, AWS_ENV), BedrockServer(respond, _throttled) as server:
            # a session of its own: boto3's default session keeps the credentials it first found
            client = boto3.session.Session().client(
                "bedrock-runtime",
                endpoint_url=server.endpoint_url,
                config=Config(retries={"mode": "standard", "max_attempts": 3}),
            )
            return {label.run: Stop(label, client, tracer).run() for label in labels}
    finally:
        instrumentor.uninstrument()

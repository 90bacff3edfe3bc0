"""A city arts office commissioning a public fresco, written by hand as an ``openai`` user writes
a planner-executor app on **Chat Completions with function calling** (the synchronous
``OpenAI`` client) traced by the **official OpenTelemetry GenAI instrumentation**:
``opentelemetry-instrumentation-openai-v2`` (the python-contrib GenAI SIG's package, on
``opentelemetry-util-genai``), configured as its README says for message content on spans:
``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`` and
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only``, then
``OpenAIInstrumentor().instrument(tracer_provider=...)``. The model: the conformance suite's
fake OpenAI server (``ModelServer(respond=...)``).

What the instrumentor writes (read from the installed 2.4b0 on util-genai 1.1b0, the last
util-genai it imports cleanly): one CLIENT span ``chat {model}`` per ``chat.completions.create``,
written through util-genai's ``TelemetryHandler`` (scope ``opentelemetry.util.genai.handler``,
not the instrumentor's own name), with ``gen_ai.operation.name``, ``gen_ai.provider.name``,
``gen_ai.request.model``, ``gen_ai.response.*``, ``gen_ai.usage.*`` and, in ``span_only`` mode,
``gen_ai.input.messages`` / ``gen_ai.output.messages`` as JSON in the parts format (the system
prompt a ``system`` message of the input, the model's function calls ``tool_call`` parts, the
tool messages sent back ``tool_call_response`` parts; no tool definitions); no log event in that
mode. util-genai's ``is_experimental_mode()`` always answers true, so the latest conventions are
written whatever ``OTEL_SEMCONV_STABILITY_OPT_IN`` says; the app sets it as the README tells a
user to.

The app's own spans, written by hand beside the instrumentor as the GenAI semantic conventions
name them (scope ``fresco``): an app root span per commission, ``invoke_agent fresco_planner`` per
plan and ``invoke_agent fresco_crew`` per stage attempt (INTERNAL: in-process agents;
``gen_ai.operation.name``, ``gen_ai.agent.name`` / ``gen_ai.agent.description``,
``gen_ai.provider.name``, ``gen_ai.request.model``, ``gen_ai.conversation.id``, opt-in
``gen_ai.system_instructions`` / ``gen_ai.input.messages`` / ``gen_ai.output.messages``; a
stage that did not finish is an error with ``error.type`` the crew's outcome), ``execute_tool
{tool}`` per function call the app runs (INTERNAL; ``gen_ai.tool.name``, ``gen_ai.tool.type``,
``gen_ai.tool.call.id``, opt-in ``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``;
a service's error: status ERROR, ``error.type`` the exception's type, its exception event, no
result), and a ``check lift date`` and a ``watch fresco {wall}`` span after the job.

The planner answers a **TOML plan** (``[job]`` with ``draft``, ``[settled]`` with the results
of the stages done, then a ``[[stage]]`` table per stage with ``id``, ``aim``, ``service`` and
an ``input`` table; ``"&<id>"`` takes an earlier stage's result), read with ``tomllib``; then per
stage attempt the crew's **function-calling loop** (create, run the ``tool_calls``, append
``role: tool`` messages, until the model answers text: ``[<finished|repeat|resketch|abandoned|
stuck>] <value> :: <note>``). The app runs a stage again after ``repeat``, asks the planner for a
new draft after ``resketch`` (with the settled stages and every snag so far) and fails the
commission otherwise.

The arts desk's services **raise** ``DeskError``s (``WetPaint`` with a time to call again after,
``ScaffoldDown``, ``Resketch`` with a ``use key=value``, ``Refused``); the loop catches them and
answers the tool message ``[fresco-desk] <WET PAINT|SCAFFOLD DOWN|RESKETCH|REFUSED>: <text>;
advice: <advice>``.

Sealed-45 split only (see README.md). The job: find a free wall of the area the design needs in
the district's wall register (read page by page), get the heritage consent (a polled
application), hire a lift from a plant yard for the painting days, pay the artist's fee from the
arts fund, send the street's residents the notice. The planner trusts the curator's note over
the commission form: a scenario's wrong value comes from the note. No scenario starves an
executor of context (this source records none as such): no starvation label.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
import zlib
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from openai import OpenAI
from openai.types.chat import ChatCompletionFunctionToolParam
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label

TRACER = "fresco"
INSTRUMENTOR = "opentelemetry.util.genai.handler"
"""The scope of the instrumentor's spans: util-genai's handler writes them."""
CONTENT_ON_SPANS = {
    "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only",
}
"""The instrumentor's settings, as its README says for message content on spans."""
MAX_STAGE_ATTEMPTS = 8
MAX_DRAFTS = 5
MAX_WET = 8
"""``WET PAINT`` answers in one crew loop before the model gives up."""
MAX_POLLS = 12
MAX_TURNS = 40
"""Model calls in one crew loop (the app's guard on the function-calling loop)."""
FORM: dict[str, Any] = {
    "commission": "MC-2027-14",
    "design": "Tidewater Herons",
    "district": "Harbourside",
    "min_area_m2": 120,
    "start": "2027-05-10",
    "days": 9,
    "yard": "Eastfield",
    "fund": "ARTS-14735",
    "fee": 18500,
    "street": "Quay Lane",
}
PLANNER = (
    "You plan fresco commissions for the city arts office. Answer a TOML plan: [job] with draft, "
    "[settled] with the results of stages already done, then one [[stage]] table per stage with "
    'id, aim, service and an input table; "&<id>" takes an earlier stage\'s result.'
)
CREW = (
    "You are the fresco crew's coordinator. Carry out the one stage you are given with the arts "
    "desk's functions, then answer one line: [finished|repeat|resketch|abandoned|stuck] "
    "<value> :: <note>."
)
OUTCOMES = ("finished", "repeat", "resketch", "abandoned", "stuck")
ANSWER = re.compile(r"^\[(\w+)\] (.*?) :: (.*)$", re.DOTALL)
DESK = re.compile(r"^\[fresco-desk\] ([A-Z ]+): (.*); advice: (.*)$", re.DOTALL)


# --- the arts desk's services -------------------------------------------------------------
class DeskError(Exception):
    """A service's refusal; ``kind`` and ``advice`` go back to the model in the tool message."""

    kind = ""

    def __init__(self, text: str, advice: str) -> None:
        super().__init__(text)
        self.advice = advice


class WetPaint(DeskError):
    kind = "WET PAINT"


class ScaffoldDown(DeskError):
    kind = "SCAFFOLD DOWN"


class Resketch(DeskError):
    kind = "RESKETCH"


class Refused(DeskError):
    kind = "REFUSED"


def raised(fault: dict[str, str]) -> DeskError:
    """The error a scenario's fault raises.

    >>> e = raised({"kind": "WET PAINT", "text": "primer drying", "hint": "14:20"})
    >>> type(e).__name__, e.advice
    ('WetPaint', 'call again with after=14:20')
    """
    kind, text, hint = fault["kind"], fault["text"], fault.get("hint", "")
    if kind == "WET PAINT":
        return WetPaint(text, f"call again with after={hint}")
    if kind == "SCAFFOLD DOWN":
        return ScaffoldDown(text, "the stage may be tried again")
    if kind == "RESKETCH":
        return Resketch(text, f"draw up the plan again: use {hint}")
    return Refused(text, "none")


FUNCTIONS: dict[str, tuple[str, dict[str, str]]] = {
    "search_walls": (
        "Search the district's wall register for a free wall (paged).",
        {"district": "string", "min_area_m2": "integer", "page": "integer"},
    ),
    "apply_consent": (
        "Apply for heritage consent to paint a design on a wall.",
        {"wall": "string", "design": "string"},
    ),
    "consent_status": ("Read a consent application's state.", {"application": "string"}),
    "book_lift": (
        "Hire a lift from a plant yard for the painting days.",
        {"wall": "string", "start": "string", "days": "integer", "yard": "string",
         "after": "string"},
    ),
    "pay_fee": (
        "Pay the artist's fee from an arts fund.",
        {"fund": "string", "amount": "integer", "reference": "string", "after": "string"},
    ),
    "notify_residents": (
        "Send the street's residents the painting notice.",
        {"street": "string", "wall": "string", "booking": "string", "consent": "string",
         "after": "string"},
    ),
}  # fmt: skip
OPTIONAL = {"page", "after"}


def tools() -> list[ChatCompletionFunctionToolParam]:
    """The desk's services as OpenAI function tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": {
                    "type": "object",
                    "properties": {k: {"type": t} for k, t in props.items()},
                    "required": [k for k in props if k not in OPTIONAL],
                },
            },
        }
        for name, (description, props) in FUNCTIONS.items()
    ]


@dataclass
class Desk:
    """The arts desk for one commission: what the scenario makes each service do."""

    params: dict[str, Any]
    faults: list[dict[str, str]] = field(default_factory=list)
    polls: int = 0
    watched: int = 0
    lifts: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.params.get("errors", [])]

    def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Run one service; its JSON answer, or a ``DeskError`` raised."""
        if name == self.params.get("service") and self.faults:
            raise raised(self.faults.pop(0))
        answer: dict[str, Any] = getattr(self, name)(**args)
        return answer

    def search_walls(self, district: str, min_area_m2: int, page: int = 1) -> dict[str, Any]:
        pages = int(self.params.get("pages", 2))
        code = district[:3].upper()
        if page < pages:
            walls = [
                {"wall": f"W-{code}-{page}{i}", "district": district, "free": False}
                for i in range(3)
            ]
            return {"walls": walls, "next_page": page + 1}
        wall = {"wall": f"W-{code}-{page}7", "district": district, "area_m2": min_area_m2 + 14}
        return {"walls": [wall | {"free": True}], "next_page": None}

    def apply_consent(self, wall: str, design: str) -> dict[str, Any]:
        if not wall.startswith(f"W-{FORM['district'][:3].upper()}-"):
            raise Refused(
                f"wall {wall} lies outside the {FORM['district']} conservation ward this "
                "commission was granted for",
                "none",
            )
        return {"application": f"HC-{zlib.crc32(wall.encode()) % 9000 + 1000}", "state": "pending"}

    def consent_status(self, application: str) -> dict[str, Any]:
        self.polls += 1
        if self.params.get("stuck") or self.polls <= int(self.params.get("polls", 1)):
            return {"application": application, "state": "pending"}
        return {"application": application, "state": "granted", "consent": f"{application}-G"}

    def book_lift(
        self, wall: str, start: str, days: int, yard: str, after: str = ""
    ) -> dict[str, Any]:
        booking = f"LB-{yard[:2].upper()}{len(self.lifts) + 301}"
        self.lifts[booking] = {"booking": booking, "wall": wall, "start": start, "days": days}
        return {"booking": booking, "start": start, "yard": yard}

    def pay_fee(self, fund: str, amount: int, reference: str, after: str = "") -> dict[str, Any]:
        if fund != FORM["fund"]:
            raise Refused(f"fund {fund} holds no budget line for {reference}", "none")
        return {"payment": f"PY-{amount // 100}-{reference[-2:]}", "fund": fund}

    def notify_residents(
        self, street: str, wall: str, booking: str, consent: str, after: str = ""
    ) -> dict[str, Any]:
        return {"notice": f"RN-{street.split()[0].upper()}-{booking[-3:]}", "sent_to": 46}

    def lift_status(self, booking: str) -> dict[str, Any]:
        """The app's own read of a booking (the check and the watch)."""
        self.watched += 1
        state = dict(self.lifts[booking]) | {"state": "booked"}
        if "days_watched" in self.params and self.watched > int(self.params["days_watched"]):
            state["state"] = "withdrawn: the owner closed the wall after a structural survey"
        return state


# --- the scripted model -------------------------------------------------------------------
@dataclass
class Called:
    """A function call of the conversation, with the tool message sent back for it."""

    name: str
    args: dict[str, Any]
    output: str = ""


def _called(messages: list[dict[str, Any]]) -> list[Called]:
    calls = {
        c["id"]: Called(c["function"]["name"], json.loads(c["function"]["arguments"]))
        for m in messages
        for c in m.get("tool_calls") or []
    }
    for m in messages:
        if m.get("role") == "tool":
            calls[m["tool_call_id"]].output = str(m["content"])
    return list(calls.values())


def _say(outcome: str, value: str = "-", note: str = "") -> dict[str, Any]:
    return {"role": "assistant", "content": f"[{outcome}] {value} :: {note}"}


def _call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(args)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": f"call_m{n}", "type": "function", "function": function}],
    }


def _crew(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The crew's next message for its stage: call the service, call again after the time a
    ``WET PAINT`` names, read the next page, poll the consent, end with the outcome line."""
    order = dict(re.findall(r"^(\w+): (.*)$", messages[1]["content"], re.MULTILINE))
    service, given = order["Service"], json.loads(order["Input"])
    calls = _called(messages)
    if not calls:
        return _call(service, given, 1)
    last = calls[-1]
    fault = DESK.match(last.output)
    if fault:
        kind, text, advice = fault.groups()
        if kind == "WET PAINT":
            wet = sum(c.output.startswith("[fresco-desk] WET PAINT") for c in calls)
            if wet >= MAX_WET:
                return _say("stuck", note=f"still wet after {wet} calls: {text}")
            after = advice.rsplit("=", 1)[1]
            return _call(last.name, last.args | {"after": after}, len(calls) + 1)
        if kind == "SCAFFOLD DOWN":
            return _say("repeat", note=text)
        if kind == "RESKETCH":
            return _say("resketch", note=f"{text} ({advice.split(': ', 1)[1]})")
        return _say("abandoned", note=text)
    said = json.loads(last.output)
    if said.get("next_page"):
        return _call(service, given | {"page": said["next_page"]}, len(calls) + 1)
    if said.get("state") == "pending":
        polls = sum(c.name == "consent_status" for c in calls)
        if polls >= MAX_POLLS:
            return _say("stuck", note=f"consent {said['application']} pending after {polls} reads")
        return _call("consent_status", {"application": said["application"]}, len(calls) + 1)
    if "walls" in said:
        return _say("finished", said["walls"][-1]["wall"], "a free wall found")
    if said.get("state") == "granted":
        return _say("finished", said["consent"], "consent granted")
    key = next(k for k in ("booking", "payment", "notice") if k in said)
    return _say("finished", said[key], f"{service} answered")


def uses(snags: list[str]) -> dict[str, str]:
    """The values the snags say to use (a later snag over an earlier one).

    >>> uses(["hire_lift: no 14 m lift (use yard=Northgate)"])
    {'yard': 'Northgate'}
    """
    return dict(re.findall(r"use (\w+)=([^)\s]+)", " ".join(snags)))


def _toml(value: Any) -> str:
    return str(value) if isinstance(value, int) else json.dumps(value)


def _plan(brief: str) -> str:
    """The planner's TOML plan: the commission form's facts, the curator's note trusted over
    them, every value a snag names used; settled stages left out."""
    lines = dict(re.findall(r"^([A-Z][\w' ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Commission form"]) | json.loads(lines.get("Curator's note", "{}"))
    settled: dict[str, str] = json.loads(lines.get("Settled", "{}"))
    snags = re.findall(r"^Snag: (.*)$", brief, re.MULTILINE)
    facts |= uses(snags)
    stages = [
        ("scout_wall", f"Find a free wall of {facts['min_area_m2']} m2 in {facts['district']}.",
         "search_walls", {"district": facts["district"], "min_area_m2": facts["min_area_m2"]}),
        ("seek_consent", f"Get heritage consent for {facts['design']}.", "apply_consent",
         {"wall": "&scout_wall", "design": facts["design"]}),
        ("hire_lift", f"Hire a lift from {facts['yard']} from {facts['start']}.", "book_lift",
         {"wall": "&scout_wall", "start": facts["start"], "days": facts["days"],
          "yard": facts["yard"]}),
        ("pay_artist", f"Pay the artist {facts['fee']} from {facts['fund']}.", "pay_fee",
         {"fund": facts["fund"], "amount": facts["fee"], "reference": facts["commission"]}),
        ("notify_street", f"Tell {facts['street']} the painting days.", "notify_residents",
         {"street": facts["street"], "wall": "&scout_wall", "booking": "&hire_lift",
          "consent": "&seek_consent"}),
    ]  # fmt: skip
    out = ["[job]", f"commission = {_toml(facts['commission'])}", f"draft = {len(snags) + 1}"]
    if snags:
        out.append(f"reason = {_toml(snags[-1])}")
    out += ["", "[settled]", *(f"{k} = {_toml(v)}" for k, v in settled.items())]
    for sid, aim, service, given in stages:
        if sid in settled:
            continue
        out += ["", "[[stage]]", f"id = {_toml(sid)}", f"aim = {_toml(aim)}"]
        out += [f"service = {_toml(service)}", "[stage.input]"]
        out += [f"{k} = {_toml(v)}" for k, v in given.items()]
    return "\n".join(out) + "\n"


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one ``POST /v1/chat/completions``.

    >>> asked = {"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": f"Commission form: {json.dumps(FORM)}"}]}
    >>> 'booking = "&hire_lift"' in respond(asked)["choices"][0]["message"]["content"]
    True
    >>> respond({"messages": [{"role": "user", "content": "hi"}]})["choices"][0]["message"][
    ...     "content"]
    'The arts desk has nothing to say.'
    """
    messages = body["messages"]
    system = str(messages[0].get("content") or "")
    if system == PLANNER:
        return completion(body, {"role": "assistant", "content": _plan(messages[1]["content"])})
    if system == CREW:
        return completion(body, _crew(messages))
    return completion(body, {"role": "assistant", "content": "The arts desk has nothing to say."})


# --- the app ------------------------------------------------------------------------------
@dataclass
class Stage:
    """One ``[[stage]]`` table of the plan."""

    id: str
    aim: str
    service: str
    input: dict[str, Any] = field(default_factory=dict)


def parse_plan(text: str) -> list[Stage]:
    """The plan's stages in order.

    >>> parse_plan('[[stage]]\\nid = "a"\\naim = "g"\\nservice = "f"\\n[stage.input]\\nx = "&b"')
    [Stage(id='a', aim='g', service='f', input={'x': '&b'})]
    """
    return [Stage(**s) for s in tomllib.loads(text).get("stage", [])]


def resolve(stage: Stage, settled: dict[str, str]) -> dict[str, Any]:
    """A stage's input, each ``"&<id>"`` replaced by that stage's result.

    >>> resolve(Stage("b", "", "f", {"wall": "&a", "days": 9}), {"a": "W-HAR-27"})
    {'wall': 'W-HAR-27', 'days': 9}
    """
    return {
        k: settled.get(v[1:], "") if isinstance(v, str) and v.startswith("&") else v
        for k, v in stage.input.items()
    }


class CommissionFailed(RuntimeError):
    """The fresco could not be commissioned (or its wall was lost after it was)."""


def _messages(role: str, text: str) -> str:
    """One message in the conventions' parts format, as a JSON attribute value."""
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def _error_type(exc: BaseException) -> str:
    return f"{type(exc).__module__}.{type(exc).__qualname__}"


class Commission:
    """One commission: plans and stage attempts under the app's root span, then the check and
    the watch."""

    def __init__(self, label: Label, client: OpenAI, tracer: Tracer) -> None:
        self.label = label
        self.client = client
        self.tracer = tracer
        self.desk = Desk(dict(label.params))
        self.drafts = 0
        self.ref = f"{FORM['commission']}/{label.seed}"

    def brief(self) -> str:
        note = {
            k: self.label.params[k] for k in ("district", "start", "fund") if k in self.label.params
        }
        lines = [
            f"Commission {FORM['design']} for the {FORM['district']} arts trail ({self.ref}).",
            f"Commission form: {json.dumps(FORM)}",
        ]
        if note:
            lines.append(f"Curator's note: {json.dumps(note)}")
        return "\n".join(lines)

    def agent_span(
        self, name: str, description: str, conversation: str, instructions: str, asked: str
    ) -> AbstractContextManager[Span]:
        """An ``invoke_agent`` span as the GenAI conventions name it, the agent's system
        instructions and the user message it was given on it."""
        return self.tracer.start_as_current_span(
            f"invoke_agent {name}",
            kind=SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.provider.name": "openai",
                "gen_ai.agent.name": name,
                "gen_ai.agent.description": description,
                "gen_ai.request.model": MODEL,
                "gen_ai.conversation.id": conversation,
                "gen_ai.system_instructions": json.dumps(
                    [{"type": "text", "content": instructions}]
                ),
                "gen_ai.input.messages": _messages("user", asked),
            },
        )

    def plan(self, settled: dict[str, str], snags: list[str]) -> list[Stage]:
        """Ask the planner for a (new) draft, with the settled stages and every snag so far."""
        self.drafts += 1
        brief = self.brief()
        if settled or snags:
            brief += f"\nSettled: {json.dumps(settled)}" + "".join(f"\nSnag: {s}" for s in snags)
        with self.agent_span(
            "fresco_planner",
            "Draws up the commission's plan",
            f"{self.ref}/draft-{self.drafts}",
            PLANNER,
            brief,
        ) as span:
            response = self.client.chat.completions.create(
                model=MODEL,
                messages=[
                    {"role": "system", "content": PLANNER},
                    {"role": "user", "content": brief},
                ],
            )
            text = response.choices[0].message.content or ""
            span.set_attribute("gen_ai.output.messages", _messages("assistant", text))
            return parse_plan(text)

    def execute_tool(self, call_id: str, name: str, arguments: str) -> str:
        """Run one function call under an ``execute_tool`` span; the tool message's content."""
        with self.tracer.start_as_current_span(
            f"execute_tool {name}",
            kind=SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.type": "function",
                "gen_ai.tool.description": FUNCTIONS[name][0],
                "gen_ai.tool.call.id": call_id,
                "gen_ai.tool.call.arguments": arguments,
            },
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                answer = json.dumps(self.desk.call(name, json.loads(arguments)))
            except DeskError as exc:
                # the model reads the refusal and decides; the span says the call failed
                span.record_exception(exc)
                span.set_attribute("error.type", _error_type(exc))
                span.set_status(Status(StatusCode.ERROR, str(exc)))
                return f"[fresco-desk] {exc.kind}: {exc}; advice: {exc.advice}"
            span.set_attribute("gen_ai.tool.call.result", answer)
            return answer

    def attempt(self, stage: Stage, attempt: int, settled: dict[str, str]) -> tuple[str, str, str]:
        """One crew loop for a stage attempt; its outcome, value and note."""
        given = resolve(stage, settled)
        order = f"Stage {stage.id}, attempt {attempt}: {stage.aim}\nService: {stage.service}\n"
        order += f"Input: {json.dumps(given)}"
        with self.agent_span(
            "fresco_crew",
            "Carries out one stage of the plan",
            f"{self.ref}/{stage.id}/{attempt}",
            CREW,
            order,
        ) as span:
            span.set_attribute("fresco.stage", stage.id)
            span.set_attribute("fresco.attempt", attempt)
            messages: list[Any] = [
                {"role": "system", "content": CREW},
                {"role": "user", "content": order},
            ]
            said = ""
            for _ in range(MAX_TURNS):
                response = self.client.chat.completions.create(
                    model=MODEL, messages=messages, tools=tools()
                )
                message = response.choices[0].message
                said = message.content or ""
                if not message.tool_calls:
                    break
                messages.append(message.model_dump(exclude_none=True))
                for call in message.tool_calls:
                    if call.type == "function":
                        content = self.execute_tool(
                            call.id, call.function.name, call.function.arguments
                        )
                        messages.append(
                            {"role": "tool", "tool_call_id": call.id, "content": content}
                        )
            span.set_attribute("gen_ai.output.messages", _messages("assistant", said))
            parsed = ANSWER.match(said.strip())
            outcome, value, note = (
                parsed.groups() if parsed else ("stuck", "", f"no answer: {said[:200]}")
            )
            if outcome not in OUTCOMES:
                outcome = "stuck"
            if outcome != "finished":
                span.set_attribute("error.type", outcome)
                span.set_status(Status(StatusCode.ERROR, note))
            return outcome, value, note

    def carry_out(self) -> dict[str, str]:
        """Plan, run each stage (again after ``repeat``), a new draft after ``resketch``; the
        stages' results."""
        settled: dict[str, str] = {}
        snags: list[str] = []
        stages = self.plan(settled, snags)
        while stages:
            stage = stages[0]
            for n in range(1, MAX_STAGE_ATTEMPTS + 1):
                outcome, value, note = self.attempt(stage, n, settled)
                if outcome != "repeat":
                    break
            if outcome == "finished":
                settled[stage.id] = value
                stages = stages[1:]
            elif outcome == "resketch" and self.drafts < MAX_DRAFTS:
                snags.append(f"{stage.id}: {note}")
                stages = self.plan(settled, snags)
            else:
                raise CommissionFailed(f"{stage.id} {outcome}: {note}")
        return settled

    def check(self, booking: str) -> None:
        """The app's check: the lift is booked from the commission form's start."""
        with self.tracer.start_as_current_span(
            "check lift date", attributes={"fresco.booking": booking}
        ) as span:
            start = self.desk.lift_status(booking)["start"]
            if start != FORM["start"]:
                message = f"lift {booking} starts {start}; the commission form says {FORM['start']}"
                span.set_attribute("error.type", "start_mismatch")
                span.set_status(Status(StatusCode.ERROR, message))
                raise CommissionFailed(message)

    def watch(self, wall: str, booking: str) -> None:
        """The app's watch of the booked lift, a read a painting day until the last polled."""
        with self.tracer.start_as_current_span(
            f"watch fresco {wall}", attributes={"fresco.booking": booking}
        ) as span:
            for _ in range(int(self.label.params.get("days_watched", 1)) + 1):
                state = self.desk.lift_status(booking)["state"]
                if state != "booked":
                    span.set_attribute("error.type", "wall_withdrawn")
                    span.set_status(Status(StatusCode.ERROR, state))
                    raise CommissionFailed(f"{wall}: {state}")

    def run(self) -> str:
        """Commission the fresco under the app's root span; the OTel trace id."""
        with self.tracer.start_as_current_span(
            f"commission {self.ref}",
            attributes={"fresco.commission": self.ref, "fresco.design": FORM["design"]},
            record_exception=False,
            set_status_on_exception=False,
        ) as root:
            trace_id = format(root.get_span_context().trace_id, "032x")
            try:
                settled = self.carry_out()
                self.check(settled["hire_lift"])
                self.watch(settled["scout_wall"], settled["hire_lift"])
            except CommissionFailed as exc:
                _failed(root, exc)
            else:
                root.set_attribute("fresco.outcome", "painted")
        return trace_id


def _failed(span: Span, exc: CommissionFailed) -> None:
    span.record_exception(exc)
    span.set_attribute("error.type", _error_type(exc))
    span.set_attribute("fresco.outcome", "failed")
    span.set_status(Status(StatusCode.ERROR, str(exc)))


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the fresco scenarios with the instrumentor's and the app's spans on ``provider``;
    run name -> trace id."""
    if not labels:
        return {}
    before = {k: os.environ.get(k) for k in CONTENT_ON_SPANS}
    os.environ.update(CONTENT_ON_SPANS)  # read when the instrumentor is instrumented
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer(TRACER)
    out = {}
    try:
        with (
            ModelServer(respond=respond) as server,
            OpenAI(base_url=server.base_url("corpus-fresco"), api_key="test") as client,
        ):
            for label in labels:
                out[label.run] = Commission(label, client, tracer).run()
    finally:
        instrumentor.uninstrument()
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return out

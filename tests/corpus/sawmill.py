"""A timber mill's order run, a hand-written planner-executor app on the **OpenAI Python client**
(Chat Completions with tools, no agent framework) whose telemetry is written with the
**official ``opentelemetry-util-genai`` package** (1.1b0: ``TelemetryHandler`` on the play's
provider, ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY``), the way a team
writes GenAI telemetry by the semantic conventions when no instrumentor covers its client: an
``invoke_workflow`` span per order, ``invoke_agent`` spans for the planner and for the executor
(one per step attempt), a ``chat`` inference per model call (messages with their tool-call parts,
usage, errors through ``fail``), ``execute_tool`` per tool call; the app's check and watch are
plain OpenTelemetry spans (scope ``sawmill-app``). The scripted model answers on the
conformance suite's fake OpenAI server (``ModelServer(respond=...)``). No planscope code.

Sealed-65 split only (see README.md). The task: an order of kiln-dried oak for a joinery; find a
lot of the grade in the log yard's paged stock, dry it in a kiln (a charge, polled), book the
haulage to the customer's site for the delivery day, charge the customer's trade account, tell
the customer.

* the planner answers a **Gherkin feature**: one ``Scenario: <slug>`` per step, ``When I call
  <tool> with <key> "<value>"``, ``And with <key> "<value>"`` for more arguments, ``And <key> is
  the <field> of "<scenario>"`` for a field of an earlier step's result, ``Then ...`` the
  outcome expected. After a setback it answers a new feature (``@revision-n``) whose
  ``Background:`` lists the passed steps (``Given "<slug>" has passed``) and whose scenarios are
  the steps still to do;
* the executor (``mill_hand``) is one conversation per step attempt, handed the call with its
  references filled in; the app runs the tool calls the model asks for, and the model answers
  ``Outcome: passed|rerun|replan|failed|stalled`` / ``Result: {json}`` / ``Note: ...`` lines;
* the mill's services raise :class:`MillFault`\\ s the app hands the model as the tool's result,
  ``{"fault": kind, "detail": ...}``: ``stacked`` (with ``after``: call again after that time,
  in the same conversation), ``resaw`` (the app runs the step again, up to 8 attempts),
  ``regrade`` (with ``use``, ``key=value``: a new plan, up to 4 plans), ``condemned`` (final).

The planner trusts the head sawyer's notes over the order form: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import inspect
import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, cast

from openai import OpenAI
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer
from opentelemetry.util.genai.handler import TelemetryHandler
from opentelemetry.util.genai.types import (
    Error,
    FunctionToolDefinition,
    InputMessage,
    MessagePart,
    OutputMessage,
    Text,
    ToolCallRequest,
    ToolCallResponse,
)

from tests.conformance.fake_openai import ModelServer, completion

from ._labels import Label

ORDER: dict[str, str] = {
    "order": "ORD-58107",
    "customer": "Harrowgate Joinery",
    "species": "oak",
    "grade": "QP1",
    "volume_m3": "12",
    "yard": "Ettrick yard",
    "schedule": "oak-12pc",
    "vehicle": "8-wheel rigid",
    "site": "Harrowgate Joinery, Galashiels TD1 3HL",
    "day": "2027-04-14",
    "account": "TMB-30461",
    "amount": "8640.00",
    "email": "orders@harrowgatejoinery.example",
}
MODEL = "gpt-4.1-mini"
PROVIDER = "openai"
MAX_ATTEMPTS = 8
MAX_PLANS = 4
MAX_TURNS = 24
MAX_READS = 12
"""Kiln-charge reads in one conversation before the executor reports it stalled."""
APP_TRACER = "sawmill-app"
CONTENT_ON_SPANS = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"}
PLANNER = (
    "You plan a sawmill order as a Gherkin feature: one Scenario per step, 'When I call <tool> "
    "with <key> \"<value>\"', 'And with <key> \"<value>\"' for more arguments, 'And <key> is the "
    "<field> of \"<scenario>\"' for an earlier step's result, and a Then line."
)
EXECUTOR = (
    "You are a mill hand. Carry out one scenario of the order with your tools, then answer "
    "three lines: 'Outcome: passed|rerun|replan|failed|stalled', 'Result: {json}', 'Note: ...'."
)
OUTCOMES = ("passed", "rerun", "replan", "failed", "stalled")


class MillFault(RuntimeError):
    """A mill service's refusal; ``kind`` is what the model is told."""

    kind = "condemned"

    def __init__(self, detail: str, **extra: str) -> None:
        super().__init__(detail)
        self.extra = extra


class Stacked(MillFault):
    """Busy for now: call again ``after`` the time named."""

    kind = "stacked"


class Resaw(MillFault):
    """Not this time: the step should be run again."""

    kind = "resaw"


class Regrade(MillFault):
    """The plan has to change: ``use`` names the value (``key=value``)."""

    kind = "regrade"


class Condemned(MillFault):
    """Refused for good."""


class OrderFailed(RuntimeError):
    """The order could not be run, or went wrong after (the reason is the message)."""


# --- the plan's format ----------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    slug: str
    tool: str
    args: dict[str, str]
    refs: dict[str, tuple[str, str]]
    """argument -> (earlier scenario, field of its result)."""
    then: str = ""


_SCENARIO = re.compile(r"^Scenario: (\w+)$")
_WHEN = re.compile(r'^When I call (\w+)(?: with (\w+) "([^"]*)")?$')
_AND_WITH = re.compile(r'^And with (\w+) "([^"]*)"$')
_AND_REF = re.compile(r'^And (\w+) is the (\w+) of "(\w+)"$')


def parse_feature(text: str) -> list[Step]:
    """The steps of a Gherkin plan, in order; tags, ``Feature:``, ``Background:`` and ``Given``
    lines are read past.

    >>> plan = '''@revision-2
    ... Feature: Mill order ORD-1
    ...   Background:
    ...     Given "find_logs" has passed
    ...   Scenario: dry_lot
    ...     When I call book_kiln with schedule "oak-12pc"
    ...     And lot is the lot of "find_logs"
    ...     And with charge "small"
    ...     Then the lot is dried'''
    >>> (step,) = parse_feature(plan)
    >>> step.slug, step.tool, step.args
    ('dry_lot', 'book_kiln', {'schedule': 'oak-12pc', 'charge': 'small'})
    >>> step.refs, step.then
    ({'lot': ('find_logs', 'lot')}, 'the lot is dried')
    """
    steps: list[Step] = []
    for raw in text.splitlines():
        line = raw.strip()
        if m := _SCENARIO.match(line):
            steps.append(Step(m[1], "", {}, {}))
        elif not steps:
            continue
        elif m := _WHEN.match(line):
            steps[-1] = replace(steps[-1], tool=m[1])
            if m[2]:
                steps[-1].args[m[2]] = m[3]
        elif m := _AND_WITH.match(line):
            steps[-1].args[m[1]] = m[2]
        elif m := _AND_REF.match(line):
            steps[-1].refs[m[1]] = (m[3], m[2])
        elif line.startswith("Then "):
            steps[-1] = replace(steps[-1], then=line.removeprefix("Then "))
    return steps


def fill(step: Step, results: dict[str, dict[str, Any]]) -> dict[str, str]:
    """A step's call arguments, its references filled in from earlier steps' results.

    >>> s = Step("dry_lot", "book_kiln", {"schedule": "x"}, {"lot": ("find_logs", "lot")})
    >>> fill(s, {"find_logs": {"lot": "LOT-7"}})
    {'schedule': 'x', 'lot': 'LOT-7'}
    """
    args = dict(step.args)
    for name, (slug, key) in step.refs.items():
        args[name] = str(results[slug][key])
    return args


# --- the scripted model ---------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


_STEPS: list[tuple[str, str, list[str], dict[str, tuple[str, str]], str]] = [
    ("find_logs", "search_log_yard", ["species", "grade", "yard", "volume_m3"], {},
     "a lot of {grade} {species} is found in {yard}"),
    ("dry_lot", "book_kiln", ["schedule"],
     {"lot": ("find_logs", "lot"), "yard": ("find_logs", "yard")},
     "the lot is kiln-dried on schedule {schedule}"),
    ("book_haulage", "book_haulage", ["vehicle", "site", "day"], {"lot": ("find_logs", "lot")},
     "the {vehicle} delivers to the site on {day}"),
    ("take_payment", "charge_account", ["account", "amount", "order"], {},
     "the trade account {account} is charged {amount}"),
    ("notify_customer", "notify_customer", ["email", "order"],
     {"haulage": ("book_haulage", "booking"), "charge": ("dry_lot", "charge")},
     "the customer is told when the timber arrives"),
]  # fmt: skip
"""The planner's steps: slug, tool, literal arguments (from the order), references, outcome."""


def _feature(brief: str) -> str:
    """The planner's Gherkin feature: the order form, the head sawyer's notes trusted over it;
    after a ``use key=value`` setback that value; the passed steps in the Background."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Order form"]) | json.loads(lines.get("Sawyer's notes", "{}"))
    passed: dict[str, Any] = json.loads(lines.get("Passed", "{}"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)
    revision = int(lines.get("Revision", "1"))
    out = [f"@order-{facts['order']} @revision-{revision}", f"Feature: Mill order {facts['order']}"]
    out.append(f"  Cut, dry and deliver {facts['volume_m3']} m3 of {facts['species']} to")
    out.append(f"  {facts['customer']}.")
    if passed:
        out += ["", "  Background:"]
        out += [f'    Given "{slug}" has passed' for slug in passed]
    for slug, tool, literal, refs, then in _STEPS:
        if slug in passed:
            continue
        out += ["", f"  Scenario: {slug}"]
        first, *rest = literal
        out.append(f'    When I call {tool} with {first} "{facts[first]}"')
        out += [f'    And {name} is the {key} of "{src}"' for name, (src, key) in refs.items()]
        out += [f'    And with {name} "{facts[name]}"' for name in rest]
        out.append(f"    Then {then.format(**facts)}")
    return "\n".join(out) + "\n"


def _tool_call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _report(outcome: str, result: dict[str, Any] | None = None, note: str = "") -> dict[str, Any]:
    body = f"Outcome: {outcome}\nResult: {json.dumps(result or {})}\nNote: {note}"
    return {"role": "assistant", "content": body}


def _executor(messages: list[dict[str, Any]], order: str) -> dict[str, Any]:
    """The mill hand's next turn: call the step's tool, call again ``after`` a stacked service,
    follow ``next_page``, read a kiln charge until it is dry, answer the outcome lines."""
    (line,) = re.findall(r"^Call: (.*)$", order, re.MULTILINE)
    call = json.loads(line)
    turn = len(messages)
    asked: dict[str, tuple[str, dict[str, Any]]] = {}
    calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            asked[c["id"]] = (fn["name"], json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool" and m.get("tool_call_id") in asked:
            calls.append((*asked.pop(m["tool_call_id"]), json.loads(_text(m.get("content")))))
    if not calls:
        return _tool_call(call["tool"], call["args"], turn)
    name, called, answer = calls[-1]
    fault = answer.get("fault")
    if fault:
        if fault == "stacked":
            return _tool_call(name, called | {"after": answer["after"]}, turn)
        outcome = {"resaw": "rerun", "regrade": "replan"}.get(fault, "failed")
        use = f" (use {answer['use']})" if answer.get("use") else ""
        return _report(outcome, note=f"{fault}: {answer['detail']}{use}")
    if answer.get("next_page"):
        return _tool_call(name, called | {"page": str(answer["next_page"])}, turn)
    if answer.get("state") in ("loading", "drying"):
        reads = sum(c[0] == "kiln_status" for c in calls)
        if reads >= MAX_READS:
            return _report("stalled", note=f"kiln charge {answer['charge']} still drying")
        return _tool_call("kiln_status", {"charge": answer["charge"]}, turn)
    return _report("passed", answer, str(answer.pop("note", "")))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> brief = "Order form: " + json.dumps(ORDER)
    >>> msg = respond({"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": brief}]})
    >>> [s.slug for s in parse_feature(msg["choices"][0]["message"]["content"])][:3]
    ['find_logs', 'dry_lot', 'book_haulage']
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if PLANNER in system:
        return completion(body, {"role": "assistant", "content": _feature(user)})
    return completion(body, _executor(messages, user))


# --- the mill's services --------------------------------------------------------------------
@dataclass
class Mill:
    """The log yard, kilns, haulage desk, trade accounts and customer mail of one order."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    lots: dict[str, str] = field(default_factory=dict)
    charges: dict[str, int] = field(default_factory=dict)
    haulage: list[dict[str, str]] = field(default_factory=list)

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
        if f["kind"] == "stacked":
            raise Stacked(f["text"], after=f["hint"])
        if f["kind"] == "resaw":
            raise Resaw(f["text"])
        if f["kind"] == "regrade":
            raise Regrade(f["text"], use=f["hint"])
        raise Condemned(f["text"])

    # the tools: string arguments as the model sends them; a dict back, or a MillFault
    def search_log_yard(
        self, species: str, grade: str, yard: str, volume_m3: str, page: str = "1", after: str = ""
    ) -> dict[str, Any]:
        """Logs of a species and grade in a yard's stock, a page of stacks at a time."""
        self.fault("search_log_yard")
        code = yard[:3].upper()
        if int(page) < int(self.params.get("pages", 1)):
            short = [f"STK-{code}-{int(page) * 10 + n} ({grade} short)" for n in (1, 2)]
            return {"lots": [], "stacks_read": short, "next_page": int(page) + 1}
        lot = f"LOT-{code}-{self.label.seed % 1000}"
        self.lots[lot] = yard
        return {"lot": lot, "yard": yard, "species": species, "grade": grade, "m3": volume_m3}

    def book_kiln(self, lot: str, yard: str, schedule: str, after: str = "") -> dict[str, Any]:
        """Load a lot into a kiln on a drying schedule (the mill's kilns take Ettrick logs)."""
        self.fault("book_kiln")
        if yard != ORDER["yard"] or self.lots.get(lot) != ORDER["yard"]:
            raise Condemned(
                f"{lot} lies at {self.lots.get(lot, yard)}; the kilns' haul permit covers "
                f"{ORDER['yard']} only"
            )
        charge = f"KLN-{self.label.seed}-{len(self.charges) + 1}"
        self.charges[charge] = 0
        if "polls" in self.params or self.params.get("stuck"):
            return {"charge": charge, "state": "loading"}
        return {"charge": charge, "state": "dry", "moisture": "12%"}

    def kiln_status(self, charge: str, after: str = "") -> dict[str, Any]:
        """Whether a kiln charge has reached its target moisture."""
        self.charges[charge] += 1
        if self.params.get("stuck") or self.charges[charge] < int(self.params.get("polls", 0)):
            return {"charge": charge, "state": "drying", "moisture": "19%"}
        return {"charge": charge, "state": "dry", "moisture": "12%"}

    def book_haulage(
        self, lot: str, vehicle: str, site: str, day: str, after: str = ""
    ) -> dict[str, Any]:
        """Book a lorry to take a lot to a site on a day."""
        self.fault("book_haulage")
        other = self.params.get("vehicle_to")
        if other and vehicle != other:
            raise Regrade(
                f"no {vehicle} is free on {day}; the fleet has one {other} left",
                use=f"vehicle={other}",
            )
        booking = f"HAUL-{self.label.seed % 900 + 100}"
        self.haulage.append({"booking": booking, "day": day, "site": site, "vehicle": vehicle})
        return {"booking": booking, "day": day, "site": site, "loads_at": after or "07:30"}

    def charge_account(
        self, account: str, amount: str, order: str, after: str = ""
    ) -> dict[str, Any]:
        """Charge an order to a customer's trade account."""
        self.fault("charge_account")
        if account != ORDER["account"] and account not in self.params.get("accounts", ()):
            raise Condemned(f"no trade account {account} on the mill's ledger")
        return {"receipt": f"RCP-{self.label.seed}", "account": account, "amount": amount}

    def notify_customer(
        self, email: str, order: str, haulage: str, charge: str, after: str = ""
    ) -> dict[str, Any]:
        """E-mail the customer the delivery note."""
        self.fault("notify_customer")
        return {"message": f"MSG-{order}-{haulage}", "to": email}


def _schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """A tool's function schema from its signature (every argument a string)."""
    params = list(inspect.signature(fn).parameters.values())[1:]
    return {
        "type": "function",
        "function": {
            "name": fn.__name__,
            "description": (fn.__doc__ or "").strip(),
            "parameters": {
                "type": "object",
                "properties": {p.name: {"type": "string"} for p in params},
                "required": [p.name for p in params if p.default is inspect.Parameter.empty],
            },
        },
    }


TOOLS = {
    "search_log_yard": ("search_log_yard",),
    "book_kiln": ("book_kiln", "kiln_status"),
    "book_haulage": ("book_haulage",),
    "charge_account": ("charge_account",),
    "notify_customer": ("notify_customer",),
}
"""The tools a mill hand gets for each kind of step."""


# --- the app's GenAI telemetry --------------------------------------------------------------
def _parts(message: dict[str, Any]) -> list[MessagePart]:
    """One chat message's parts in the conventions' message format."""
    parts: list[MessagePart] = []
    if message.get("role") == "tool":
        return [ToolCallResponse(response=message.get("content"), id=message.get("tool_call_id"))]
    if message.get("content"):
        parts.append(Text(content=_text(message["content"])))
    for c in message.get("tool_calls") or []:
        fn = c["function"]
        parts.append(
            ToolCallRequest(arguments=json.loads(fn["arguments"]), name=fn["name"], id=c["id"])
        )
    return parts


def _inputs(messages: list[dict[str, Any]]) -> list[InputMessage]:
    return [
        InputMessage(role=m["role"], parts=_parts(m)) for m in messages if m["role"] != "system"
    ]


@dataclass
class Order:
    """One mill order to run."""

    label: Label
    client: OpenAI
    handler: TelemetryHandler
    tracer: Tracer
    mill: Mill
    server: tuple[str, int]
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    plans: int = 0

    def chat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """One model call recorded through the handler's inference; the answer message."""
        host, port = self.server
        inference = self.handler.inference(
            PROVIDER, request_model=MODEL, server_address=host, server_port=port
        )
        inference.system_instruction = [
            Text(content=_text(m["content"])) for m in messages if m["role"] == "system"
        ]
        inference.input_messages = _inputs(messages)
        if tools:
            inference.tool_definitions = [
                FunctionToolDefinition(
                    name=t["function"]["name"],
                    description=t["function"]["description"],
                    parameters=t["function"]["parameters"],
                )
                for t in tools
            ]
        try:
            response = self.client.chat.completions.create(
                model=MODEL,
                messages=cast("list[ChatCompletionMessageParam]", messages),
                tools=cast("list[ChatCompletionToolParam]", tools or []) or None,  # type: ignore[arg-type]
                temperature=0.0,
            )
        except Exception as e:
            inference.fail(e)
            raise
        choice = response.choices[0]
        message = choice.message.model_dump(
            exclude_none=True, include={"role", "content", "tool_calls"}
        )
        message.setdefault("content", None)
        inference.response_model_name = response.model
        inference.response_id = response.id
        inference.temperature = 0.0
        if response.usage:
            inference.input_tokens = response.usage.prompt_tokens
            inference.output_tokens = response.usage.completion_tokens
        inference.output_messages = [
            OutputMessage(
                role="assistant", parts=_parts(message), finish_reason=choice.finish_reason
            )
        ]
        inference.stop()
        return message

    def brief(self, setback: str) -> str:
        notes = {
            k: self.label.params[k] for k in ("yard", "day", "account") if k in self.label.params
        }
        lines = [
            f"Objective: run mill order {ORDER['order']} for {ORDER['customer']}.",
            f"Order form: {json.dumps(ORDER)}",
        ]
        if notes:
            lines.append(f"Sawyer's notes: {json.dumps(notes)}")
        if self.plans:
            lines += [
                f"Revision: {self.plans + 1}",
                f"Passed: {json.dumps(self.results)}",
                f"Setback: {setback}",
            ]
        return "\n".join(lines)

    def plan(self, setback: str) -> list[Step]:
        """One ``mill_planner`` run: the Gherkin feature, parsed."""
        agent = self.handler.invoke_local_agent(agent_name="mill_planner", request_model=MODEL)
        with agent:
            messages = [
                {"role": "system", "content": PLANNER},
                {"role": "user", "content": self.brief(setback)},
            ]
            agent.system_instruction = [Text(content=PLANNER)]
            agent.input_messages = _inputs(messages)
            agent.output_type = "text"
            answer = self.chat(messages)
            self.plans += 1
            feature = _text(answer.get("content"))
            agent.output_messages = [
                OutputMessage(role="assistant", parts=[Text(content=feature)], finish_reason="stop")
            ]
            agent.attributes["sawmill.plan.revision"] = self.plans
            return parse_feature(feature)

    def run_tool(self, call: dict[str, Any], allowed: tuple[str, ...]) -> str:
        """Run one tool call the model asked for under an ``execute_tool`` span; its JSON."""
        name = call["function"]["name"]
        method = getattr(Mill, name, None)
        tool = self.handler.tool(
            name,
            tool_call_id=call["id"],
            tool_type="function",
            tool_description=(method.__doc__ or "").strip() if method else None,
        )
        arguments = json.loads(call["function"]["arguments"] or "{}")
        if tool.should_capture_content_on_span:
            tool.arguments = arguments
        try:
            if name not in allowed:
                raise Condemned(f"no tool {name} for this step")
            answer = getattr(self.mill, name)(**arguments)
        except MillFault as e:
            # the model is told what went wrong; the span keeps the error
            answer = {"fault": e.kind, "detail": str(e), **e.extra}
            if tool.should_capture_content_on_span:
                tool.tool_result = answer
            tool.fail(e)
            return json.dumps(answer)
        if tool.should_capture_content_on_span:
            tool.tool_result = answer
        tool.stop()
        return json.dumps(answer)

    def attempt(self, step: Step, attempt: int) -> tuple[str, dict[str, Any], str]:
        """One ``mill_hand`` run for a step: (outcome, result, note)."""
        call = {"tool": step.tool, "args": fill(step, self.results)}
        agent = self.handler.invoke_local_agent(agent_name="mill_hand", request_model=MODEL)
        agent.attributes.update({"sawmill.scenario": step.slug, "sawmill.attempt": attempt})
        allowed = TOOLS.get(step.tool, ())
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": EXECUTOR},
            {
                "role": "user",
                "content": f"Scenario: {step.slug} (attempt {attempt})\nThen {step.then}\n"
                f"Call: {json.dumps(call)}",
            },
        ]
        agent.system_instruction = [Text(content=EXECUTOR)]
        agent.input_messages = _inputs(messages)
        tools = [_schema(getattr(Mill, n)) for n in allowed]
        content = ""
        try:
            for _ in range(MAX_TURNS):
                msg = self.chat(messages, tools)
                if not msg.get("tool_calls"):
                    content = _text(msg.get("content"))
                    break
                messages.append(msg)
                for c in msg["tool_calls"]:
                    told = self.run_tool(c, allowed)
                    messages.append({"role": "tool", "tool_call_id": c["id"], "content": told})
        except Exception as e:
            agent.fail(e)
            raise
        fields = dict(re.findall(r"^(Outcome|Result|Note): (.*)$", content, re.MULTILINE))
        outcome = fields.get("Outcome", "stalled" if not content else "failed")
        if outcome not in OUTCOMES:
            outcome = "failed"
        try:
            result = dict(json.loads(fields.get("Result", "{}")))
        except json.JSONDecodeError:
            outcome, result = "failed", {}
        note = fields.get("Note", "" if content else f"no outcome in {MAX_TURNS} turns")
        agent.output_messages = [
            OutputMessage(role="assistant", parts=[Text(content=content)], finish_reason="stop")
        ]
        agent.attributes["sawmill.outcome"] = outcome
        if outcome == "passed":
            agent.stop()
        else:
            agent.fail(Error(message=f"{outcome}: {note}", type=outcome))
        return outcome, result, note

    def work(self) -> None:
        """Plan, run each step (again, or after a new plan), check, watch; raises
        :class:`OrderFailed`."""
        steps = self.plan("")
        while True:
            open_steps = [s for s in steps if s.slug not in self.results]
            if not open_steps:
                break
            step = open_steps[0]
            for attempt in range(1, MAX_ATTEMPTS + 1):
                outcome, result, note = self.attempt(step, attempt)
                if outcome != "rerun":
                    break
            if outcome == "passed":
                self.results[step.slug] = result
            elif outcome == "replan" and self.plans < MAX_PLANS:
                steps = self.plan(f"scenario {step.slug}: {note}")
            else:
                raise OrderFailed(f"{step.slug}: {outcome}: {note}")
        self.check()
        self.watch()

    def check(self) -> None:
        """The app's own check: the lorry goes to the order's site on the order's day."""
        with self.tracer.start_as_current_span("check haulage booking") as span:
            booking = self.mill.haulage[-1]
            span.set_attributes({f"sawmill.haulage.{k}": v for k, v in booking.items()})
            wrong = [
                f"{k} {booking[k]!r}, the order form says {ORDER[k]!r}"
                for k in ("day", "site")
                if booking[k] != ORDER[k]
            ]
            span.set_attribute("sawmill.check.passed", not wrong)
            if wrong:
                reason = f"{booking['booking']}: " + "; ".join(wrong)
                span.set_status(Status(StatusCode.ERROR, reason))
                raise OrderFailed(reason)

    def watch(self) -> None:
        """The app watches the haulier's run sheet until delivery (a few reads)."""
        booking = self.results["book_haulage"]["booking"]
        with self.tracer.start_as_current_span(f"watch haulage {booking}") as span:
            span.set_attribute("sawmill.haulage.booking", booking)
            for read in range(1, 4):
                if self.label.scenario.startswith("external_") and read > int(
                    self.label.params["reads"]
                ):
                    reason = (
                        f"{booking} cancelled: the A7 is shut at Stow by a landslip (read {read})"
                    )
                    span.add_event("haulage cancelled", {"read": read, "reason": reason})
                    span.set_status(Status(StatusCode.ERROR, reason))
                    raise OrderFailed(reason)
                span.add_event("run sheet", {"read": read, "state": "scheduled"})

    def run(self) -> str:
        """The order under an ``invoke_workflow`` span; its trace id."""
        workflow = self.handler.workflow(f"mill order {ORDER['order']}")
        workflow.attributes.update({"sawmill.order": ORDER["order"], "sawmill.run": self.label.run})
        workflow.input_messages = [
            InputMessage(role="user", parts=[Text(content=json.dumps(ORDER))])
        ]
        trace_id = format(workflow.span.get_span_context().trace_id, "032x")
        try:
            self.work()
        except OrderFailed as e:
            workflow.attributes["sawmill.outcome"] = "failed"
            workflow.fail(e)
            return trace_id
        workflow.attributes["sawmill.outcome"] = "delivered"
        summary = json.dumps(self.results)
        workflow.output_messages = [
            OutputMessage(role="assistant", parts=[Text(content=summary)], finish_reason="stop")
        ]
        workflow.stop()
        return trace_id


@contextmanager
def _content_on_spans() -> Iterator[None]:
    """The util's content capture on spans while the block runs; the environment put back."""
    before = {k: os.environ.get(k) for k in CONTENT_ON_SPANS}
    os.environ.update(CONTENT_ON_SPANS)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the sawmill scenarios with the app's GenAI telemetry (``opentelemetry-util-genai``)
    and its own spans on ``provider``; run name -> trace id."""
    if not labels:
        return {}
    out = {}
    with _content_on_spans(), ModelServer(respond=respond) as server:
        handler = TelemetryHandler(tracer_provider=provider)
        tracer = provider.get_tracer(APP_TRACER)
        base = server.base_url("sawmill")
        host, port = re.findall(r"//([\d.]+):(\d+)/", base)[0]
        with OpenAI(base_url=base, api_key="test", max_retries=0) as client:
            for label in labels:
                order = Order(label, client, handler, tracer, Mill(label), (host, int(port)))
                out[label.run] = order.run()
    return out

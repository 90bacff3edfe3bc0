"""A ceramics studio firing an architectural tile commission, written by hand on the official
``anthropic`` SDK with tool use (no agent framework): a planner call that must answer through a
``submit_plan`` tool (``tool_choice`` forcing it, the plan as the tool's ``input``), then per
step attempt an executor conversation (the classic agentic loop: call, run the ``tool_use``
blocks the model asked for, send ``tool_result`` blocks back, until ``end_turn``); re-runs and
re-plans decided by the app. Traced by OpenInference's Anthropic instrumentor
(``AnthropicInstrumentor().instrument(tracer_provider=...)``, content recorded as by default)
plus the app's own spans through OpenInference's tracer as a Phoenix user adds them: an AGENT
root span per commission, a CHAIN span per step attempt, a TOOL span per tool run, CHAIN spans
for the app's check and watch. The model: a scripted model behind the small fake Messages API
of :mod:`tests.corpus._fake_anthropic`, reached by the SDK over HTTP. No planscope code.

Sealed-34 split only (see README.md). The job: a bath-house trust commissions glazed tiles.
Source a clay body of the commission's firing cone from the clay merchant's catalogue (read page
by page), book a kiln firing on the firing day, get the glaze lab's food-and-frost test of the
body (a polled test), take the trust's deposit, send the trust the confirmation. As an
Anthropic API user writes it:

* the planner's ``submit_plan`` input is ``{"summary", "steps": [{"slug", "goal", "tool",
  "args"}]}``, an argument ``"<- slug"`` standing for that earlier step's result; after a
  ``replan`` verdict the planner is asked again with the steps done and every problem so far;
* the studio's services answer errors as **bang-prefixed kiln words** in ``tool_result``
  blocks with ``is_error: true``: ``!cooling: ... (again at 14:20)`` (the model calls again at
  the time named, inside its conversation), ``!deferred: ...`` (the model ends its turn with a
  ``retry:`` verdict, the app runs the step again), ``!moved: ... (use X instead of Y)`` (a
  ``replan:`` verdict, the app plans again), ``!refused: ...`` (a ``failed:`` verdict: the
  commission fails);
* the executor follows the catalogue's ``next_page`` and polls a pending glaze test, ending
  with ``gave_up:`` after :data:`MAX_POLLS` checks; it ends every conversation with one
  verdict line (``done: <result>`` and the others above).

The planner trusts the glazer's notes over the order: a scenario's wrong value comes from a
note. This agent has no scenario of an executor starved of context (no starvation label).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, cast

from anthropic import Anthropic
from anthropic.types import Message, MessageParam, ToolParam, ToolResultBlockParam, ToolUseBlock
from openinference.instrumentation import OITracer, TraceConfig
from openinference.instrumentation.anthropic import AnthropicInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode

from ._fake_anthropic import MODEL, AnthropicServer, Blocks
from ._labels import Label

TRACER = "kiln"
ORDER: dict[str, Any] = {
    "commission": "CT-3318",
    "client": "Hallam Baths Trust",
    "tiles": 640,
    "cone": 6,
    "firing_day": "2027-03-09",
    "kiln": "Kiln 3",
    "account": "HB-58203",
    "deposit": 2140.0,
    "email": "clerk@hallam-baths.example",
}
MAX_STEP_ATTEMPTS = 8
MAX_PLANS = 5
MAX_COOLING = 8
"""``!cooling`` answers in one executor conversation before the model gives up."""
MAX_POLLS = 12
MAX_TURNS = 40
"""Model calls in one executor conversation (the app's guard on the agentic loop)."""
PLANNER = "You plan a ceramics studio's tile commission. Submit the plan with submit_plan."
EXECUTOR = (
    "You are the studio's firing clerk. Carry out the one step you are given with the tools, "
    "then end with one verdict line: done: <result> | retry: <why> | replan: <why> | "
    "failed: <why> | gave_up: <why>."
)
REF = "<- "
"""A plan argument ``"<- slug"`` stands for that earlier step's result."""

SUBMIT_PLAN: ToolParam = {
    "name": "submit_plan",
    "description": "Submit the commission's plan: ordered steps, each naming one studio tool.",
    "input_schema": {
        "type": "object",
        "properties": {
            "summary": {"type": "string"},
            "steps": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "slug": {"type": "string"},
                        "goal": {"type": "string"},
                        "tool": {"type": "string"},
                        "args": {"type": "object"},
                    },
                    "required": ["slug", "goal", "tool", "args"],
                },
            },
        },
        "required": ["summary", "steps"],
    },
}


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
        "search_clay_bodies",
        "Clay bodies in the merchant's catalogue for a firing cone, a page at a time.",
        cone="integer",
        page="integer?",
    ),
    _tool(
        "reserve_kiln",
        "Reserve a firing of a kiln on a day for a clay body.",
        clay="string",
        kiln="string",
        day="string",
        at="string?",
    ),
    _tool(
        "submit_glaze_test",
        "Send a clay body to the glaze lab for its food-and-frost test at a cone.",
        clay="string",
        cone="integer",
        at="string?",
    ),
    _tool("glaze_test_status", "Whether the glaze lab has finished a test.", test="string"),
    _tool(
        "charge_deposit",
        "Take the client's deposit for a commission from its account.",
        account="string",
        amount="number",
        commission="string",
    ),
    _tool(
        "send_confirmation",
        "Email the client the commission's confirmation.",
        email="string",
        firing="string",
        test="string",
        at="string?",
    ),
]


# --- the scripted model -------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(b.get("text", "")) for b in content if b.get("type") == "text")
    return str(content or "")


@dataclass
class Call:
    """A ``tool_use`` the conversation holds, with its ``tool_result``."""

    name: str
    args: dict[str, Any]
    result: str = ""
    is_error: bool = False


def _calls(messages: list[dict[str, Any]]) -> list[Call]:
    out: dict[str, Call] = {}
    for m in messages:
        for b in m["content"] if isinstance(m.get("content"), list) else []:
            if b.get("type") == "tool_use":
                out[b["id"]] = Call(b["name"], dict(b.get("input") or {}))
            elif b.get("type") == "tool_result" and b.get("tool_use_id") in out:
                call = out[b["tool_use_id"]]
                content = b.get("content")
                call.result = content if isinstance(content, str) else _text(content)
                call.is_error = bool(b.get("is_error"))
    return list(out.values())


def _use(name: str, args: dict[str, Any], turn: int, said: str = "") -> Blocks:
    """A ``tool_use`` block, after a ``text`` block when the model says something first."""
    key = hashlib.sha256(f"{name}/{turn}/{json.dumps(args)}".encode()).hexdigest()[:24]
    tool_use = {"type": "tool_use", "id": f"toolu_{key}", "name": name, "input": args}
    return [{"type": "text", "text": said}, tool_use] if said else [tool_use]


def swaps(problems: list[str]) -> list[tuple[str, str]]:
    """The ``(use, instead_of)`` pairs the problems name, in order.

    >>> swaps(["book_firing: !moved: cold (use Kiln 5 instead of Kiln 3)"])
    [('Kiln 5', 'Kiln 3')]
    """
    return [
        (m.group(1), m.group(2))
        for p in problems
        if (m := re.search(r"\(use (.+?) instead of (.+?)\)", p))
    ]


def _plan(brief: str) -> dict[str, Any]:
    """The planner's ``submit_plan`` input: the order's facts, the glazer's notes trusted over
    them; every value a problem says to swap is swapped (one swap after another); the steps
    done are left out."""
    lines = dict(re.findall(r"^(\w[\w' ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Order"]) | json.loads(lines.get("Glazer's notes", "{}"))
    done: dict[str, str] = json.loads(lines.get("Done", "{}"))
    problems = re.findall(r"^Problem: (.*)$", brief, re.MULTILINE)
    steps = [
        ("source_clay", f"Source a cone-{facts['cone']} clay body for {facts['tiles']} tiles.",
         "search_clay_bodies", {"cone": facts["cone"]}),
        ("book_firing", f"Book a firing on {facts['firing_day']}.", "reserve_kiln",
         {"clay": f"{REF}source_clay", "kiln": facts["kiln"], "day": facts["firing_day"]}),
        ("test_glaze", f"Have the glaze lab test the body at cone {facts['cone']}.",
         "submit_glaze_test", {"clay": f"{REF}source_clay", "cone": facts["cone"]}),
        ("take_deposit", f"Take the {facts['deposit']} GBP deposit.", "charge_deposit",
         {"account": facts["account"], "amount": facts["deposit"],
          "commission": facts["commission"]}),
        ("notify_client", f"Send {facts['client']} the confirmation.", "send_confirmation",
         {"email": facts["email"], "firing": f"{REF}book_firing", "test": f"{REF}test_glaze"}),
    ]  # fmt: skip
    out = []
    for slug, goal, tool, args in steps:
        if slug in done:
            continue
        for use, instead_of in swaps(problems):
            args = {k: use if str(v) == instead_of else v for k, v in args.items()}
        out.append({"slug": slug, "goal": goal, "tool": tool, "args": args})
    note = " (the glazer's notes taken over the order)" if "Glazer's notes" in lines else ""
    return {"summary": f"Fire {facts['tiles']} tiles for {facts['client']}{note}.", "steps": out}


def _verdict(word: str, text: str) -> Blocks:
    return [{"type": "text", "text": f"{word}: {text}"}]


def _execute(messages: list[dict[str, Any]]) -> Blocks:
    """The firing clerk's next turn for its step: call the tool, call again at the time a
    ``!cooling`` answer names, follow ``next_page``, poll a pending test, end with a verdict."""
    order = _text(messages[0]["content"])
    fields = dict(re.findall(r"^(\w+): (.*)$", order, re.MULTILINE))
    tool, args = fields["Tool"], json.loads(fields["Args"])
    calls = _calls(messages)
    turn = len(messages)
    if not calls:
        return _use(tool, args, turn, f"I'll call {tool} for this step.")
    last = calls[-1]
    if last.is_error:
        word, _, text = last.result.partition(": ")
        if word == "!cooling":
            cooled = sum(c.result.startswith("!cooling") for c in calls)
            if cooled >= MAX_COOLING:
                return _verdict("gave_up", f"still cooling after {cooled} calls: {text}")
            again = re.search(r"\(again at (\d\d:\d\d)\)", text)
            said = f"The service is cooling; calling again at {again.group(1) if again else ''}."
            return _use(last.name, last.args | {"at": again.group(1) if again else ""}, turn, said)
        verdicts = {"!deferred": "retry", "!moved": "replan"}
        return _verdict(verdicts.get(word, "failed"), last.result)
    answer = json.loads(last.result)
    if answer.get("next_page"):
        return _use(tool, args | {"page": answer["next_page"]}, turn, "Reading the next page.")
    if answer.get("state") == "pending":
        checks = sum(c.name == "glaze_test_status" for c in calls)
        if checks >= MAX_POLLS:
            return _verdict("gave_up", f"test {answer['test']} pending after {checks} checks")
        return _use("glaze_test_status", {"test": answer["test"]}, turn, "Checking the test.")
    if "bodies" in answer:
        return _verdict("done", answer["bodies"][0]["id"])
    return _verdict("done", str(answer["id"]))


def respond(body: dict[str, Any]) -> Blocks:
    """The scripted model's content blocks for one Messages API request.

    >>> brief = f"Order: {json.dumps(ORDER)}"
    >>> (use,) = respond({"system": PLANNER, "messages": [{"role": "user", "content": brief}]})
    >>> use["name"], use["input"]["steps"][0]["args"]
    ('submit_plan', {'cone': 6})
    >>> respond({"system": "?", "messages": []})[0]["text"]
    'Not a studio matter.'
    """
    system = _text(body.get("system"))
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    if PLANNER in system:
        return _use("submit_plan", _plan(_text(messages[0]["content"])), len(messages))
    if EXECUTOR in system:
        return _execute(messages)
    return [{"type": "text", "text": "Not a studio matter."}]


# --- the world ----------------------------------------------------------------------------
class StudioError(RuntimeError):
    """A service's error line (``!cooling``, ``!deferred``, ``!moved`` or ``!refused``)."""


class CommissionFailed(RuntimeError):
    """The tiles could not be made (or failed after they were)."""


@dataclass
class Studio:
    """The merchant, the kilns, the glaze lab, the ledger and the mail of one commission."""

    label: Label
    errors: list[str] = field(default_factory=list)
    clays: dict[str, int] = field(default_factory=dict)
    firings: dict[str, dict[str, Any]] = field(default_factory=dict)
    tests: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, tool: str, **carried: Any) -> None:
        """Raise the scenario's next error when ``tool`` is the one it targets (an ``{old}`` in
        it is the account the call carried)."""
        if self.errors and tool == self.params.get("service"):
            raise StudioError(self.errors.pop(0).format(old=carried.get("account", "")))

    def search_clay_bodies(self, cone: int, page: int = 1) -> dict[str, Any]:
        self.fault("search_clay_bodies")
        if page < int(self.params.get("pages", 1)):
            sold = [{"id": f"CB-{page}{n}", "cone": cone + n, "stock": 0} for n in (1, 2)]
            return {"bodies": [], "out_of_stock": sold, "next_page": page + 1}
        clay = f"CB-{cone}-{self.label.seed}"
        self.clays[clay] = cone
        return {"bodies": [{"id": clay, "cone": cone, "body": "buff stoneware"}]}

    def reserve_kiln(self, clay: str, kiln: str, day: str, at: str = "") -> dict[str, Any]:
        self.fault("reserve_kiln")
        other = self.params.get("kiln_to")
        if other and kiln == ORDER["kiln"]:
            raise StudioError(
                f"!moved: {kiln} is cold, a burner block cracked at the last firing "
                f"(use {other} instead of {kiln})"
            )
        firing = f"KF-{day.replace('-', '')}-{len(self.firings) + 1}"
        self.firings[firing] = {"clay": clay, "kiln": kiln, "day": day}
        return {"id": firing, "kiln": kiln, "day": day, "at": at or "06:00"}

    def submit_glaze_test(self, clay: str, cone: int, at: str = "") -> dict[str, Any]:
        self.fault("submit_glaze_test")
        fired = self.clays.get(clay, 0)
        if fired != ORDER["cone"]:
            raise StudioError(
                f"!refused: a cone-{fired} body cannot carry the trust's cone-{ORDER['cone']} "
                "celadon; the lab will not test it"
            )
        test = f"GT-{self.label.seed}-{len(self.tests) + 1}"
        self.tests[test] = 0
        if "poll" in self.label.scenario:
            return {"test": test, "state": "pending"}
        return {"id": test, "state": "passed"}

    def glaze_test_status(self, test: str) -> dict[str, Any]:
        self.tests[test] += 1
        stuck = self.label.scenario == "loop_poll_stuck"
        if stuck or self.tests[test] < int(self.params.get("polls", 0)):
            return {"test": test, "state": "pending"}
        return {"id": test, "state": "passed"}

    def charge_deposit(self, account: str, amount: float, commission: str) -> dict[str, Any]:
        self.fault("charge_deposit", account=account)
        if account != ORDER["account"]:
            raise StudioError(f"!refused: no client account {account} on the studio's ledger")
        return {"id": f"DP-{self.label.seed}", "amount": amount}

    def send_confirmation(self, email: str, firing: str, test: str, at: str = "") -> dict[str, Any]:
        self.fault("send_confirmation")
        return {"id": f"CF-{firing}", "to": email, "at": at or "now"}


# --- the app ------------------------------------------------------------------------------
def resolve(args: dict[str, Any], done: dict[str, str]) -> dict[str, Any]:
    """A step's arguments with every ``"<- slug"`` replaced by that step's result.

    >>> resolve({"clay": "<- source_clay", "cone": 6}, {"source_clay": "CB-6-1"})
    {'clay': 'CB-6-1', 'cone': 6}
    """
    return {
        k: done.get(v.removeprefix(REF), v) if isinstance(v, str) and v.startswith(REF) else v
        for k, v in args.items()
    }


class Commission:
    """One commission: plans, step attempts and tool runs under the app's root span, then the
    app's checks."""

    def __init__(self, label: Label, client: Anthropic, tracer: OITracer) -> None:
        self.label = label
        self.world = Studio(label)
        self.client = client
        self.tracer = tracer

    def brief(self) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("cone", "firing_day", "account")
            if k in self.label.params
        }
        lines = [
            f"Fire the tiles of commission {ORDER['commission']} (ticket K-{self.label.seed}).",
            f"Order: {json.dumps(ORDER)}",
        ]
        if notes:
            lines.append(f"Glazer's notes: {json.dumps(notes)}")
        return "\n".join(lines)

    def plan(self, done: dict[str, str], problems: list[str]) -> list[dict[str, Any]]:
        """Ask the planner (again, with what is done and every problem so far)."""
        brief = self.brief()
        if done or problems:
            brief += f"\nDone: {json.dumps(done)}"
            brief += "".join(f"\nProblem: {p}" for p in problems)
        response = self.client.messages.create(
            model=MODEL,
            max_tokens=2048,
            system=PLANNER,
            tools=[SUBMIT_PLAN],
            tool_choice={"type": "tool", "name": "submit_plan"},
            messages=[{"role": "user", "content": brief}],
        )
        (submitted,) = [b for b in response.content if isinstance(b, ToolUseBlock)]
        return cast(list[dict[str, Any]], submitted.input["steps"])

    def run_tool(self, block: ToolUseBlock) -> ToolResultBlockParam:
        """Run one ``tool_use`` under a TOOL span; its ``tool_result`` block."""
        (spec,) = [t for t in TOOLS if t["name"] == block.name]
        with self.tracer.start_as_current_span(
            block.name, openinference_span_kind="tool", record_exception=False
        ) as span:
            span.set_tool(
                name=block.name,
                description=spec["description"],
                parameters=dict(spec["input_schema"]),
            )
            span.set_input(json.dumps(block.input), mime_type="application/json")
            try:
                result = json.dumps(getattr(self.world, block.name)(**block.input))
            except StudioError as exc:
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, str(exc)))
                return {
                    "type": "tool_result",
                    "tool_use_id": block.id,
                    "content": str(exc),
                    "is_error": True,
                }
            span.set_output(result, mime_type="application/json")
            return {"type": "tool_result", "tool_use_id": block.id, "content": result}

    def attempt(self, step: dict[str, Any], attempt: int, done: dict[str, str]) -> tuple[str, str]:
        """One executor conversation for a step under a CHAIN span; its verdict and text."""
        args = resolve(step["args"], done)
        order = (
            f"Step {step['slug']} (attempt {attempt}): {step['goal']}\n"
            f"Tool: {step['tool']}\nArgs: {json.dumps(args)}"
        )
        with self.tracer.start_as_current_span(
            f"step {step['slug']}", openinference_span_kind="chain"
        ) as span:
            span.set_attribute("kiln.step", step["slug"])
            span.set_attribute("kiln.attempt", attempt)
            span.set_input(order)
            messages: list[MessageParam] = [{"role": "user", "content": order}]
            response: Message | None = None
            for _ in range(MAX_TURNS):
                response = self.client.messages.create(
                    model=MODEL,
                    max_tokens=1024,
                    system=EXECUTOR,
                    tools=TOOLS,
                    messages=messages,
                )
                if response.stop_reason != "tool_use":
                    break
                messages.append({"role": "assistant", "content": response.content})
                uses = [b for b in response.content if isinstance(b, ToolUseBlock)]
                messages.append({"role": "user", "content": [self.run_tool(b) for b in uses]})
            said = "".join(b.text for b in response.content if b.type == "text") if response else ""
            verdict, _, text = said.partition(": ")
            if verdict not in ("done", "retry", "replan", "failed", "gave_up"):
                verdict, text = "gave_up", f"no verdict after {MAX_TURNS} turns"
            span.set_output(said)
            if verdict != "done":
                span.set_status(Status(StatusCode.ERROR, said))
            return verdict, text

    def carry_out(self) -> None:
        """Plan, run each step (again after ``retry``), plan again after ``replan``."""
        done: dict[str, str] = {}
        problems: list[str] = []
        steps = self.plan(done, problems)
        while steps:
            step = steps[0]
            for attempt in range(1, MAX_STEP_ATTEMPTS + 1):
                verdict, text = self.attempt(step, attempt, done)
                if verdict != "retry":
                    break
            if verdict == "done":
                done[step["slug"]] = text
                steps = steps[1:]
            elif verdict == "replan" and len(problems) + 1 < MAX_PLANS:
                problems.append(f"{step['slug']}: {text}")
                steps = self.plan(done, problems)
            else:
                raise CommissionFailed(f"{step['slug']}: {text}")

    def verify(self) -> None:
        """The app's check: the firing is on the order's firing day."""
        with self.tracer.start_as_current_span(
            "verify firing day", openinference_span_kind="chain"
        ) as span:
            firing = list(self.world.firings.values())[-1]
            span.set_attribute("kiln.firing_day", firing["day"])
            span.set_attribute("order.firing_day", ORDER["firing_day"])
            span.set_input(json.dumps(firing), mime_type="application/json")
            if firing["day"] != ORDER["firing_day"]:
                raise CommissionFailed(
                    f"the kiln fires on {firing['day']}, the order's firing day is "
                    f"{ORDER['firing_day']}"
                )
            span.set_output("firing day matches the order")

    def watch(self) -> None:
        """The app's watch of the tiles once they are on the wall: an event a night."""
        with self.tracer.start_as_current_span(
            f"watch tiles {ORDER['client']}", openinference_span_kind="chain"
        ) as span:
            nights = int(self.label.params.get("polls", 1))
            for night in range(1, nights + 2):
                if self.label.scenario.startswith("external_") and night > nights:
                    span.add_event("tiles", {"night": night, "state": "spalled"})
                    raise CommissionFailed("a hard frost spalled the bath-house wall's render")
                span.add_event("tiles", {"night": night, "state": "sound"})
            span.set_output("tiles sound")

    def run(self) -> str:
        """Make the commission under the app's root span; the OTel trace id."""
        with self.tracer.start_as_current_span(
            f"fire commission {ORDER['commission']}",
            openinference_span_kind="agent",
            record_exception=False,
            set_status_on_exception=False,
        ) as root:
            root.set_attribute("kiln.commission", ORDER["commission"])
            root.set_input(self.brief())
            trace_id = format(root.get_span_context().trace_id, "032x")
            try:
                self.carry_out()
                self.verify()
                self.watch()
            except CommissionFailed as exc:
                root.record_exception(exc)
                root.set_status(Status(StatusCode.ERROR, str(exc)))
                root.set_attribute("kiln.outcome", "failed")
                root.set_output(str(exc))
            else:
                root.set_attribute("kiln.outcome", "fired")
                root.set_output("fired")
        return trace_id


def _overloaded(body: dict[str, Any]) -> bool:
    """The API is overloaded at the first plan of every third ticket (the SDK retries it)."""
    said = _text((body.get("messages") or [{}])[0].get("content"))
    ticket = re.search(r"ticket K-(\d+)", said)
    return ticket is not None and int(ticket.group(1)) % 3 == 0 and "Done:" not in said


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the kiln scenarios with the instrumentor's and the app's spans on ``provider``; run
    name -> trace id."""
    if not labels:
        return {}
    instrumentor = AnthropicInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tracer = OITracer(provider.get_tracer(TRACER), config=TraceConfig())
    try:
        with AnthropicServer(respond, overloaded=_overloaded) as server:
            client = Anthropic(base_url=server.base_url("corpus-kiln"), api_key="test")
            return {label.run: Commission(label, client, tracer).run() for label in labels}
    finally:
        instrumentor.uninstrument()

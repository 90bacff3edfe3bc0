"""A leather tannery's hide batch, written by hand on the official ``anthropic`` SDK with tool use
(no agent framework) and traced by the **Logfire SDK**: ``logfire.instrument_anthropic(client)``
for the model calls, the app's own ``logfire.span`` spans with message templates (the order, each
plan, each step attempt, each tool call, the check and the watch) and ``logfire.info`` / ``warn``
/ ``error`` logs. The model: a scripted model behind the corpus's fake Messages API
(:mod:`tests.corpus._fake_anthropic`), reached by the SDK over HTTP. No planscope code.

Sealed-68 split only (see README.md). The job: a buyer ordered a batch of crust leather dyed to
a shade. Find a raw hide lot of the order's grade and origin in the auction house's register
(read page by page), reserve a drum slot in the tanning room on the tanning day, have the lab
test the lot's dye fastness (a polled test), book the haulage of the crust to the finisher,
charge the buyer's account, send the buyer the dispatch notice. As a team moving off Semantic
Kernel's ``HandlebarsPlanner`` writes it:

* the planner is one ``messages.create`` call whose text answer is a **Semantic Kernel
  Handlebars plan**: per step a ``{{!-- Step n: what --}}`` comment and a ``{{set "var"
  (Plugin-function key=value ...)}}`` call, an argument ``var.field`` (or a ``(concat ...)`` of
  such) an earlier step's result, the plan ending ``{{json var}}``. After a failure that asks
  for it, the planner is asked again with the results so far and every problem: it answers a
  new plan of the steps still to do (their numbers kept), opening with a ``{{!-- Done: ... --}}``
  comment; the app keeps the earlier results for the references;
* the executor is an Anthropic conversation per step attempt (the classic loop: run the
  ``tool_use`` blocks, send ``tool_result`` blocks back, ``is_error`` on a failed tool) ending
  with a **status block** ``status: done|rework|resort|rejected|stalled`` then ``result:``
  (JSON) or ``note:``;
* the tannery's services answer errors as **batch-card words** in the tool result:
  ``HOLD: ... (again at 14:20)`` (the model calls again ``not_before`` that time, inside its
  conversation), ``REWORK: ...`` (the app runs the step again, up to 8 attempts), ``RESORT: ...
  (use key=value)`` (the app asks for a new plan, up to 5 plans), ``REJECT: ...`` (final);
* after the last step the app checks the drum slot's day against the order's tanning day
  (``check drum slot {slot}``) and watches the order until the finisher receives it (``watch
  order {order}``).

The planner trusts the tanner's notes over the order: a scenario's wrong value comes from a
note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import logfire
from anthropic import Anthropic
from anthropic.types import Message, MessageParam, ToolParam, ToolResultBlockParam, ToolUseBlock
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider

from ._fake_anthropic import MODEL, AnthropicServer, Blocks
from ._labels import Label
from ._relay import local_logfire

ORDER: dict[str, Any] = {
    "order": "TO-2231",
    "buyer": "Atelier Voss",
    "grade": "TR1",
    "origin": "Allgaeu",
    "hides": 420,
    "drum": "Drum 4",
    "tanning_day": "2027-04-12",
    "shade": "oxblood",
    "finisher": "Conceria Bergamo Finishing",
    "account": "AV-58214",
    "amount": 18450.0,
    "email": "buying@ateliervoss.example",
}
MAX_STEP_ATTEMPTS = 8
MAX_PLANS = 5
MAX_HOLDS = 8
"""``HOLD`` answers in one executor conversation before the model gives up (``stalled``)."""
MAX_POLLS = 12
MAX_TURNS = 40
"""Model calls in one executor conversation (the app's guard on the tool loop)."""
PLANNER = (
    "You are the tannery's planner. Answer only a Handlebars plan as Semantic Kernel's "
    "HandlebarsPlanner writes them: for each step a {{!-- Step n: ... --}} comment and a "
    '{{set "var" (Plugin-function key=value)}} call; refer to an earlier result as var.field '
    "or (concat ...); end with {{json var}}. Trust the tanner's notes over the order."
)
EXECUTOR = (
    "You are the tannery's batch clerk. Carry out the one call you are given with the tools, "
    "then end with a status block: 'status: done' and 'result: <json>', or 'status: "
    "rework|resort|rejected|stalled' and 'note: <why>'."
)
STATUSES = ("done", "rework", "resort", "rejected", "stalled")


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
        "Auction-search_lots",
        "Raw hide lots on the auction house's register by grade and origin, a page at a time.",
        grade="string",
        origin="string",
        hides="integer",
        page="integer?",
    ),
    _tool(
        "Tanroom-reserve_drum",
        "Reserve a drum slot in the tanning room for a lot on a day.",
        lot="string",
        drum="string",
        day="string",
        not_before="string?",
    ),
    _tool(
        "Lab-submit_fastness_test",
        "Send a lot's sample to the lab for a dye-fastness test in a shade.",
        lot="string",
        shade="string",
        not_before="string?",
    ),
    _tool("Lab-test_status", "Where a lab test stands.", test="string"),
    _tool(
        "Haulage-book_haul",
        "Book the haulage of a drum slot's crust leather to a finisher on a day.",
        slot="string",
        finisher="string",
        day="string",
        not_before="string?",
    ),
    _tool(
        "Ledger-charge_account",
        "Charge a buyer's account an amount with a reference.",
        account="string",
        amount="number",
        reference="string",
        not_before="string?",
    ),
    _tool(
        "Mail-send_notice",
        "Send the buyer the dispatch notice.",
        to="string",
        subject="string",
        haul="string",
        test="string",
        not_before="string?",
    ),
]


# --- the plan: a Semantic Kernel Handlebars template ------------------------------------------
@dataclass(frozen=True)
class Step:
    """One ``{{set}}`` of the plan: its number and comment, the variable it sets, the function
    it calls and the raw arguments (``"text"``, a number, ``var.field`` or ``(concat ...)``)."""

    number: int
    what: str
    var: str
    function: str
    args: dict[str, str]


_COMMENT = re.compile(r"\{\{!--\s*Step (\d+):\s*(.*?)\s*--\}\}")
_VALUE = r'"[^"]*"|\([^()]*\)|[\w.\-]+'
_SET = re.compile(rf'\{{\{{set\s+"(\w+)"\s+\((\w+-\w+)((?:\s+\w+=(?:{_VALUE}))*)\)\}}\}}')
_ARG = re.compile(rf"(\w+)=({_VALUE})")
_PART = re.compile(r'"[^"]*"|[\w.\-]+')


def parse_plan(text: str) -> list[Step]:
    """The steps of a Handlebars plan, in order; a ``{{set}}`` without a step comment before it
    takes the next number.

    >>> plan = ('{{!-- Step 1: Find a lot --}}\\n{{set "lot" (Auction-search_lots grade="TR1" '
    ...     'hides=420)}}\\n{{!-- Step 2: Charge --}}\\n{{set "charge" (Ledger-charge_account '
    ...     'reference=(concat "lot " lot.lot_id))}}\\n{{json charge}}')
    >>> [(s.number, s.var, s.function) for s in parse_plan(plan)]
    [(1, 'lot', 'Auction-search_lots'), (2, 'charge', 'Ledger-charge_account')]
    >>> parse_plan(plan)[1].args
    {'reference': '(concat "lot " lot.lot_id)'}
    """
    steps: list[Step] = []
    comment: tuple[int, str] | None = None
    for line in text.splitlines():
        if m := _COMMENT.search(line):
            comment = (int(m.group(1)), m.group(2))
        elif m := _SET.search(line):
            number, what = comment or ((steps[-1].number + 1 if steps else 1), "")
            args = {k: v for k, v in _ARG.findall(m.group(3))}
            steps.append(Step(number, what, m.group(1), m.group(2), args))
            comment = None
    return steps


def value(raw: str, results: dict[str, dict[str, Any]]) -> Any:
    """A plan argument's value: a quoted string, a number, ``var.field`` (``var`` alone: its
    ``id``) from an earlier result, or the ``(concat ...)`` of such.

    >>> results = {"lot": {"id": "HL-1", "lot_id": "HL-1", "hides": 420}}
    >>> value('(concat "lot " lot.lot_id "/" lot.hides)', results), value("12.5", results)
    ('lot HL-1/420', 12.5)
    """
    if raw.startswith('"'):
        return raw[1:-1]
    if raw.startswith("(concat"):
        return "".join(str(value(p, results)) for p in _PART.findall(raw[len("(concat") : -1]))
    if re.fullmatch(r"-?\d+", raw):
        return int(raw)
    if re.fullmatch(r"-?\d+\.\d+", raw):
        return float(raw)
    var, _, key = raw.partition(".")
    if var not in results:
        return raw  # an unknown name is a literal to Handlebars' helpers
    return results[var][key] if key else json.dumps(results[var])


_REF = re.compile(r"\(concat .*\)|[a-z_]+\.[a-z_]+")
"""A planner's argument that is a reference (or a ``concat`` of them), written unquoted."""


def _quote(v: Any) -> str:
    return str(v) if isinstance(v, int | float) or _REF.fullmatch(str(v)) else f'"{v}"'


def _template(revision: int, steps: list[tuple[int, str, str, str, dict[str, Any]]],
              done: dict[str, str]) -> str:  # fmt: skip
    lines = [f"{{{{!-- Hide batch plan, revision {revision} --}}}}"]
    if done:
        known = ", ".join(f"{var} = {ref}" for var, ref in done.items())
        lines.append(f"{{{{!-- Done: {known} --}}}}")
    for number, what, var, function, args in steps:
        call = " ".join(f"{k}={_quote(v)}" for k, v in args.items())
        lines += [
            f"{{{{!-- Step {number}: {what} --}}}}",
            f'{{{{set "{var}" ({function} {call})}}}}',
        ]
    lines.append(f"{{{{json {steps[-1][2]}}}}}" if steps else "{{json done}}")
    return "\n".join(lines)


# --- the scripted model -----------------------------------------------------------------------
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


def _planner(brief: str) -> Blocks:
    """The planner's Handlebars plan: the order, the tanner's notes trusted over it, every
    ``(use key=value)`` a problem names, the steps done left out (their numbers kept)."""
    lines = dict(re.findall(r"^(\w[\w' ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Order"]) | json.loads(lines.get("Tanner's notes", "{}"))
    done: dict[str, str] = json.loads(lines.get("Done", "{}"))
    revision = int(lines.get("Revision", "1"))
    for key, use in re.findall(r"\(use (\w+)=([^)]+)\)", brief):
        facts[key] = use
    steps = [
        (1, f"Find a lot of {facts['hides']} {facts['grade']} hides from {facts['origin']} on "
         "the auction register", "hide_lot", "Auction-search_lots",
         {"grade": facts["grade"], "origin": facts["origin"], "hides": facts["hides"]}),
        (2, f"Reserve a drum slot in the tanning room on {facts['tanning_day']}", "drum_slot",
         "Tanroom-reserve_drum",
         {"lot": "hide_lot.lot_id", "drum": facts["drum"], "day": facts["tanning_day"]}),
        (3, f"Have the lab test the lot's fastness in {facts['shade']}", "dye_test",
         "Lab-submit_fastness_test", {"lot": "hide_lot.lot_id", "shade": facts["shade"]}),
        (4, f"Book the crust's haulage to {facts['finisher']}", "haulage", "Haulage-book_haul",
         {"slot": "drum_slot.slot", "finisher": facts["finisher"], "day": "drum_slot.ready"}),
        (5, f"Charge {facts['buyer']}'s account", "buyer_charge", "Ledger-charge_account",
         {"account": facts["account"], "amount": facts["amount"],
          "reference": f'(concat "{facts["order"]} lot " hide_lot.lot_id)'}),
        (6, f"Send {facts['buyer']} the dispatch notice", "buyer_notice", "Mail-send_notice",
         {"to": facts["email"], "subject": '(concat "Your crust ships on " haulage.pickup)',
          "haul": "haulage.booking", "test": "dye_test.test"}),
    ]  # fmt: skip
    todo = [s for s in steps if s[2] not in done]
    return [{"type": "text", "text": _template(revision, todo, done)}]


def _status(status: str, body: str) -> Blocks:
    key = "result" if status == "done" else "note"
    return [{"type": "text", "text": f"status: {status}\n{key}: {body}"}]


def _execute(messages: list[dict[str, Any]]) -> Blocks:
    """The batch clerk's next turn: call the function, call again ``not_before`` the time a
    ``HOLD`` names, follow ``next_page``, poll a queued test, end with a status block."""
    task = _text(messages[0]["content"])
    fields = dict(re.findall(r"^(\w+): (.*)$", task, re.MULTILINE))
    function, args = fields["Call"], json.loads(fields["Arguments"])
    calls = _calls(messages)
    turn = len(messages)
    if not calls:
        return _use(function, args, turn, f"Calling {function}.")
    last = calls[-1]
    if last.is_error:
        word, _, text = last.result.partition(": ")
        if word == "HOLD":
            holds = sum(c.result.startswith("HOLD:") for c in calls)
            again = re.search(r"\(again at (\d\d:\d\d)\)", text)
            if holds >= MAX_HOLDS or not again:
                return _status("stalled", f"on hold after {holds} calls: {text}")
            said = f"On hold; calling again not before {again.group(1)}."
            return _use(last.name, last.args | {"not_before": again.group(1)}, turn, said)
        statuses = {"REWORK": "rework", "RESORT": "resort"}
        return _status(statuses.get(word, "rejected"), last.result)
    answer = json.loads(last.result)
    if answer.get("next_page"):
        return _use(function, args | {"page": answer["next_page"]}, turn, "Next register page.")
    if answer.get("state") in ("queued", "running"):
        checks = sum(c.name == "Lab-test_status" for c in calls)
        if checks >= MAX_POLLS:
            return _status("stalled", f"test {answer['test']} {answer['state']} after {checks}")
        return _use("Lab-test_status", {"test": answer["test"]}, turn, "Checking the test.")
    return _status("done", json.dumps(answer))


def respond(body: dict[str, Any]) -> Blocks:
    """The scripted model's content blocks for one Messages API request.

    >>> brief = f"Order: {json.dumps(ORDER)}"
    >>> (plan,) = respond({"system": PLANNER, "messages": [{"role": "user", "content": brief}]})
    >>> plan["text"].splitlines()[2]
    '{{set "hide_lot" (Auction-search_lots grade="TR1" origin="Allgaeu" hides=420)}}'
    >>> respond({"system": "?", "messages": []})[0]["text"]
    'Not a tannery matter.'
    """
    system = _text(body.get("system"))
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    if PLANNER in system:
        return _planner(_text(messages[0]["content"]))
    if EXECUTOR in system:
        return _execute(messages)
    return [{"type": "text", "text": "Not a tannery matter."}]


# --- the world --------------------------------------------------------------------------------
class TanneryFault(RuntimeError):
    """A service's batch-card answer (``HOLD``, ``REWORK``, ``RESORT`` or ``REJECT``)."""


class OrderFailed(RuntimeError):
    """The batch could not be tanned, tested, shipped, charged and told (or failed after)."""


@dataclass
class Tannery:
    """The auction register, the tanning room, the lab, the haulier, the ledger and the mail of
    one order."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    lots: dict[str, str] = field(default_factory=dict)
    """Lot -> its origin."""
    slots: dict[str, dict[str, Any]] = field(default_factory=dict)
    tests: dict[str, int] = field(default_factory=dict)
    hauls: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, function: str) -> None:
        """Raise the scenario's next fault when ``function`` is the one it targets."""
        if not self.faults or function != self.params.get("tool"):
            return
        f = self.faults.pop(0)
        text = {
            "hold": f"HOLD: {f['text']} (again at {f.get('hint', '')})",
            "rework": f"REWORK: {f['text']}",
            "resort": f"RESORT: {f['text']} (use {f.get('hint', '')})",
        }.get(f["kind"], f"REJECT: {f['text']}")
        raise TanneryFault(text)

    def search_lots(self, grade: str, origin: str, hides: int, page: int = 1) -> dict[str, Any]:
        self.fault("Auction-search_lots")
        pages = int(self.params.get("pages", 1))
        if page < pages:
            sold = [f"HL-{origin[:3].upper()}-{page}{n}" for n in range(3)]
            return {"lots": [], "sold_or_short": sold, "page": page, "next_page": page + 1}
        lot = f"HL-{origin[:3].upper()}-{self.label.seed % 10000}"
        self.lots[lot] = origin
        return {"lot_id": lot, "grade": grade, "origin": origin, "hides": hides, "page": page}

    def reserve_drum(self, lot: str, drum: str, day: str, not_before: str = "") -> dict[str, Any]:
        self.fault("Tanroom-reserve_drum")
        if lot not in self.lots:
            raise TanneryFault(f"REJECT: no lot {lot} has come in from the auction house")
        try:
            tanned = date.fromisoformat(day)
        except ValueError:
            raise TanneryFault(f"REJECT: the tanning room has no day {day}") from None
        slot = f"DS-{day.replace('-', '')[4:]}-{len(self.slots) + 1}"
        ready = str(tanned + timedelta(days=3))  # three days in the drum and on the horse
        self.slots[slot] = {"lot": lot, "drum": drum, "day": day, "ready": ready}
        return {"slot": slot, "drum": drum, "day": day, "ready": ready, "at": not_before or "06:00"}

    def submit_fastness_test(self, lot: str, shade: str, not_before: str = "") -> dict[str, Any]:
        self.fault("Lab-submit_fastness_test")
        origin = self.lots.get(lot, "?")
        if origin != ORDER["origin"]:
            raise TanneryFault(
                f"REJECT: lot {lot} is {origin} hide; {ORDER['buyer']}'s article is certified "
                f"for {ORDER['origin']} hides only, the lab will not test it for the order"
            )
        test = f"LT-{self.label.seed % 10000}-{len(self.tests) + 1}"
        self.tests[test] = 0
        return {"test": test, "state": "queued", "shade": shade}

    def test_status(self, test: str) -> dict[str, Any]:
        self.tests[test] += 1
        checks = self.tests[test]
        if self.label.scenario == "loop_poll_stuck" or checks < int(self.params.get("polls", 1)):
            return {"test": test, "state": "queued" if checks % 2 else "running"}
        return {"test": test, "state": "passed", "rub_fastness": "4-5"}

    def book_haul(self, slot: str, finisher: str, day: str, not_before: str = "") -> dict[str, Any]:
        self.fault("Haulage-book_haul")
        closed = self.params.get("finisher_to")
        if closed and finisher == ORDER["finisher"]:
            raise TanneryFault(
                f"RESORT: {finisher}'s goods-in dock is shut for a re-floor that week "
                f"(use finisher={closed})"
            )
        booking = f"HB-{self.label.seed % 10000}-{len(self.hauls) + 1}"
        self.hauls[booking] = {"slot": slot, "finisher": finisher, "day": day}
        return {"booking": booking, "finisher": finisher, "pickup": day}

    def charge_account(
        self, account: str, amount: float, reference: str, not_before: str = ""
    ) -> dict[str, Any]:
        self.fault("Ledger-charge_account")
        if account != ORDER["account"] and account not in self.params.get("accounts", ()):
            raise TanneryFault(f"REJECT: no account {account} on the ledger for {ORDER['buyer']}")
        return {"charge": f"CH-{self.label.seed % 10000}", "amount": amount, "ref": reference}

    def send_notice(
        self, to: str, subject: str, haul: str, test: str, not_before: str = ""
    ) -> dict[str, Any]:
        self.fault("Mail-send_notice")
        return {"notice": f"NT-{haul}", "to": to, "subject": subject}

    def functions(self) -> dict[str, Callable[..., dict[str, Any]]]:
        """The tool name each service method answers to."""
        return {
            "Auction-search_lots": self.search_lots,
            "Tanroom-reserve_drum": self.reserve_drum,
            "Lab-submit_fastness_test": self.submit_fastness_test,
            "Lab-test_status": self.test_status,
            "Haulage-book_haul": self.book_haul,
            "Ledger-charge_account": self.charge_account,
            "Mail-send_notice": self.send_notice,
        }


# --- the app ----------------------------------------------------------------------------------
class Batch:
    """One order: plans, step attempts and tool calls under the app's root span, then the app's
    check and watch."""

    def __init__(self, label: Label, client: Anthropic, lf: logfire.Logfire) -> None:
        self.label = label
        self.world = Tannery(label)
        self.services = self.world.functions()
        self.client = client
        self.lf = lf
        self.results: dict[str, dict[str, Any]] = {}

    def brief(self, revision: int, problems: list[str]) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("origin", "tanning_day", "account")
            if k in self.label.params
        }
        lines = [
            f"Plan the hide batch for order {ORDER['order']} (card B-{self.label.seed}).",
            f"Order: {json.dumps(ORDER)}",
        ]
        if notes:
            lines.append(f"Tanner's notes: {json.dumps(notes)}")
        if revision > 1:
            done = {var: json.dumps(r) for var, r in self.results.items()}
            lines += [f"Revision: {revision}", f"Done: {json.dumps(done)}"]
            lines += [f"Problem: {p}" for p in problems]
        return "\n".join(lines)

    def plan(self, revision: int, problems: list[str]) -> list[Step]:
        """Ask the planner for a Handlebars plan (again, with the results and problems)."""
        with self.lf.span(
            "plan order {order} revision {revision}",
            order=ORDER["order"],
            revision=revision,
            problems=problems,
        ) as span:
            response = self.client.messages.create(
                model=MODEL,
                max_tokens=2048,
                system=PLANNER,
                messages=[{"role": "user", "content": self.brief(revision, problems)}],
            )
            text = "".join(b.text for b in response.content if b.type == "text")
            span.set_attribute("plan", text)
            steps = parse_plan(text)
            span.set_attribute("steps", [s.var for s in steps])
        return steps

    def run_tool(self, block: ToolUseBlock) -> ToolResultBlockParam:
        """Run one ``tool_use`` under a Logfire span; its ``tool_result`` block (``is_error``
        with the fault's text when the service refused)."""
        args = dict(block.input)
        try:
            with self.lf.span("call {function}", function=block.name, arguments=args) as span:
                result = json.dumps(self.services[block.name](**args))
                span.set_attribute("result", result)
        except TanneryFault as exc:  # Logfire recorded it on the span; the model reads the text
            self.lf.warn("{function} answered {fault}", function=block.name, fault=str(exc))
            return {
                "type": "tool_result",
                "tool_use_id": block.id,
                "content": str(exc),
                "is_error": True,
            }
        return {"type": "tool_result", "tool_use_id": block.id, "content": result}

    def attempt(self, step: Step, attempt: int) -> tuple[str, str]:
        """One executor conversation for a step, its references filled in; its status and
        the text after it."""
        args = {k: value(v, self.results) for k, v in step.args.items()}
        task = (
            f"Step {step.number} ({step.var}), attempt {attempt}: {step.what}\n"
            f"Call: {step.function}\nArguments: {json.dumps(args)}"
        )
        with self.lf.span(
            "step {step} attempt {attempt}",
            step=step.var,
            number=step.number,
            attempt=attempt,
            function=step.function,
            arguments=args,
        ) as span:
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
            m = re.match(r"status: (\w+)\n(?:result|note): (.*)", said, re.DOTALL)
            status, text = (
                (m.group(1), m.group(2)) if m else ("stalled", f"no status after {MAX_TURNS} turns")
            )
            span.set_attribute("status", status)
            span.set_attribute("answer", said)
        return status, text

    def carry_out(self) -> None:
        """Plan, run each step (again after ``rework``), plan again after ``resort``."""
        problems: list[str] = []
        revision = 1
        steps = self.plan(revision, problems)
        while steps:
            step = steps[0]
            for attempt in range(1, MAX_STEP_ATTEMPTS + 1):
                status, text = self.attempt(step, attempt)
                if status != "rework" or attempt == MAX_STEP_ATTEMPTS:
                    break
                self.lf.warn(
                    "re-running {step} after attempt {attempt}: {note}",
                    step=step.var,
                    attempt=attempt,
                    note=text,
                )
            if status == "done":
                self.results[step.var] = json.loads(text)
                self.lf.info("{step} done", step=step.var, result=text)
                steps = steps[1:]
            elif status == "resort" and revision < MAX_PLANS:
                problems.append(f"{step.var}: {text}")
                self.lf.warn("re-planning after {step}: {note}", step=step.var, note=text)
                revision += 1
                steps = self.plan(revision, problems)
            else:
                self.lf.error(
                    "{step} {status} after {attempt} attempts: {note}",
                    step=step.var,
                    status=status,
                    attempt=attempt,
                    note=text,
                )
                raise OrderFailed(f"{step.var}: {status}: {text}")

    def check(self) -> None:
        """The app's check: the drum slot is on the order's tanning day."""
        slot = self.results["drum_slot"]
        with self.lf.span(
            "check drum slot {slot}", slot=slot["slot"], slot_day=slot["day"],
            tanning_day=ORDER["tanning_day"],
        ):  # fmt: skip
            if slot["day"] != ORDER["tanning_day"]:
                raise OrderFailed(
                    f"drum slot {slot['slot']} is on {slot['day']}; order {ORDER['order']} "
                    f"tans on {ORDER['tanning_day']}"
                )

    def watch(self) -> None:
        """The app's watch of the order until the finisher has the crust: a log a state."""
        booking = self.results["haulage"]["booking"]
        with self.lf.span("watch order {order}", order=ORDER["order"], haul=booking) as span:
            reads = int(self.label.params.get("reads", 1))
            states = ("IN_DRUM", "ON_THE_HORSE", "LOADED", "AT_FINISHER")
            for n, state in enumerate(states, 1):
                if self.label.scenario.startswith("external_") and n > reads:
                    self.lf.error("order {order} held: {reason}", order=ORDER["order"],
                                  reason="veterinary quarantine")  # fmt: skip
                    raise OrderFailed(
                        f"the district vet put the {ORDER['origin']} hide consignments under "
                        "quarantine after a foot-and-mouth case; haul stopped at the border"
                    )
                self.lf.info("order {order} is {state}", order=ORDER["order"], state=state)
            span.set_attribute("state", states[-1])

    def run(self) -> str:
        """Make the order under the app's root span; the OTel trace id."""
        try:
            with self.lf.span(
                "tan order {order}", order=ORDER["order"], card=f"B-{self.label.seed}", batch=ORDER
            ) as root:
                trace_id = format(otel_trace.get_current_span().get_span_context().trace_id, "032x")
                try:
                    self.carry_out()
                    self.check()
                    self.watch()
                except OrderFailed:
                    root.set_attribute("outcome", "failed")
                    raise
                root.set_attribute("outcome", "dispatched")
        except OrderFailed:
            pass  # recorded on the order's span by Logfire
        return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the tannery scenarios with Logfire's spans handed to ``provider``'s processors; run
    name -> trace id."""
    if not labels:
        return {}
    with local_logfire("tannery-works", provider) as lf, AnthropicServer(respond) as server:
        client = Anthropic(base_url=server.base_url("corpus-tannery"), api_key="test")
        try:
            with lf.instrument_anthropic(client):
                return {label.run: Batch(label, client, lf).run() for label in labels}
        finally:
            client.close()

"""A guitar maker's workshop taking a commission, written as a LangChain 1.x user writes a
planning agent today: ``langchain.agents.create_agent`` with ``TodoListMiddleware`` (the plan is
the todo list the lead writes through the middleware's ``write_todos`` tool), one bench hand
sub-agent per item attempt in the deep-agents style (a ``send_to_bench`` tool runs an executor
``create_agent`` on only that item's instructions), traced by OpenLLMetry's LangChain
instrumentor (``opentelemetry-instrumentation-langchain``), langchain-openai's ChatOpenAI on the
conformance suite's fake OpenAI server. No planscope code.

Sealed-37 split only (see README.md). The commission: a back-and-sides set of the ordered
rosewood is found in the tonewood ledger (read page by page), a CITES permit for it is filed
(decided later: polled), a bench is booked in a workshop room for the build day, the client's
deposit is charged, the player told. The agents:

* ``workshop_lead``: ``create_agent(model, [send_to_bench], middleware=[TodoListMiddleware(),
  ModelCallLimitMiddleware(run_limit=...)])``; its todos are ``<item>: <what, with the values
  it needs>`` (``pending`` -> ``in_progress`` -> ``completed``), built from the order and the
  workshop notes (trusted over the order: a scenario's wrong value comes from a note);
  rewritten whole after a bench hand's ``[replan]`` (the value it names changed in the items
  not done);
* ``bench_hand``: ``create_agent(model, services, middleware=[ToolErrorMiddleware(...),
  ToolRetryMiddleware(...), ModelCallLimitMiddleware(...)])``, invoked by ``send_to_bench`` per
  attempt; its last message is a report line ``[done] {...}``, ``[again] ...``, ``[replan]
  ...`` or ``[failed] ...`` (or the call-limit middleware's own message when it ran out).

Services answer in musical directions, raised as exceptions: ``Tacet`` (silent a moment:
``ToolRetryMiddleware`` calls again), ``Fermata`` (hold: ``resume at cue HH:MM``, the bench hand
calls again with that cue), ``Caesura`` (break: the lead sends the item again), ``DaCapo`` (from
the top: ``take X, not Y``, the lead rewrites its todos), ``Fine`` (the end: refused).
``ToolErrorMiddleware`` hands them to the model as ``<tool> stopped on <Direction>: <text>``.
After the lead, the app checks the bench day against the master's calendar and watches the
acclimatising set, all under one root span per commission (``build guitar <order>``). This
source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    ModelCallLimitMiddleware,
    TodoListMiddleware,
    ToolCallRequest,
    ToolErrorMiddleware,
    ToolRetryMiddleware,
)
from langchain_core.messages import HumanMessage
from langchain_core.tools import BaseTool, tool
from langchain_openai import ChatOpenAI
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .analyst import _say, _text

TRACER = "luthier"
ORDER = {
    "order": "LG-2027-118",
    "player": "Ines Calvo",
    "email": "ines.calvo@guitarra.example",
    "species": "Dalbergia latifolia",
    "grade": "AAA",
    "room": "Torres room",
    "day": "2027-04-19",
    "account": "CL-61408",
    "deposit": "1850.00",
}
ITEMS: tuple[tuple[str, str, str, dict[str, str]], ...] = (
    (
        "find_tonewood",
        "find a {species} back-and-sides set, grade {grade}, in the tonewood ledger",
        "search_tonewood",
        {"species": "{species}", "grade": "{grade}"},
    ),
    (
        "apply_permit",
        "file the CITES permit for the {species} set from find_tonewood and see it decided",
        "file_permit",
        {"set_id": "<find_tonewood>", "species": "{species}"},
    ),
    (
        "book_bench",
        "book a bench in the {room} on {day} for the set from find_tonewood",
        "book_bench",
        {"room": "{room}", "day": "{day}", "set_id": "<find_tonewood>"},
    ),
    (
        "charge_client",
        "charge the {deposit} deposit for order {order} to account {account}",
        "charge_deposit",
        {"account": "{account}", "amount": "{deposit}", "order": "{order}"},
    ),
    (
        "notify_player",
        "tell {player} at {email} the bench from book_bench is booked",
        "send_notice",
        {"email": "{email}", "booking": "<book_bench>"},
    ),
)
"""The lead's items: name, what (its todo's content), the bench hand's tool and its arguments
(``<item>`` for an earlier item's result)."""
LEAD = (
    "You are the workshop lead of a guitar maker. Plan the commission as todos, one per item, "
    "each `<item>: <what>` naming every value it needs. Hand each item to a bench hand with "
    "send_to_bench, with only that item's instructions."
)
BENCH = (
    "You are a bench hand in a guitar workshop. Carry out the one item you are sent with the "
    "workshop's services, then end with one report line: `[done] <result as JSON>`, `[again] "
    "<why>` when the item must be sent again later, `[replan] <what changed>` or `[failed] <why>`."
)
LEAD_CALLS = 48
"""The lead's model-call budget per commission (``ModelCallLimitMiddleware``)."""
BENCH_CALLS = 14
"""A bench hand's model-call budget per item attempt: a permit never decided ends there."""
_REPORT = re.compile(r"^\[(done|again|replan|failed)\] (.*)$", re.DOTALL)
_STOPPED = re.compile(r"^(\w+) stopped on (\w+): (.*)$", re.DOTALL)
_TAKE = re.compile(r"take (.+), not (.+)$")


# --- the scripted model ----------------------------------------------------------------------
def _call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(args)}
    call = {"id": f"call_{name}_{n}", "type": "function", "function": function}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _facts(brief: str, reports: list[str]) -> dict[str, str]:
    """The order with the workshop notes over it and every ``take X, not Y`` applied since."""
    fields = dict(re.findall(r"^([\w ]+): (\{.*\})$", brief, re.MULTILINE))
    facts = {**json.loads(fields["Order"]), **json.loads(fields.get("Workshop notes", "{}"))}
    for report in reports:
        if report.startswith("[replan]") and (take := _TAKE.search(report)):
            facts = {k: take[1] if v == take[2] else v for k, v in facts.items()}
    return facts


def _todos(facts: dict[str, str], done: int) -> list[dict[str, str]]:
    """The todo list with the first ``done`` items completed and the next one in progress."""
    statuses = ["completed"] * done + ["in_progress"] + ["pending"] * len(ITEMS)
    return [
        {"content": f"{name}: {what.format(**facts)}", "status": status}
        for (name, what, _, _), status in zip(ITEMS, statuses, strict=False)
    ]


def _instructions(facts: dict[str, str], results: dict[str, str], item: int, attempt: int) -> str:
    name, what, tool_name, args = ITEMS[item]
    filled = {
        k: results[v[1:-1]] if v.startswith("<") else v.format(**facts) for k, v in args.items()
    }
    return (
        f"Item {name} (attempt {attempt}): {what.format(**facts)}.\n"
        f"Call {tool_name} with {json.dumps(filled)}"
    )


def _lead(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The lead's next turn: read its todos and the bench reports from the conversation."""
    brief = next(_text(m.get("content")) for m in messages if m.get("role") == "user")
    calls = {c["id"]: c["function"] for m in messages for c in m.get("tool_calls") or []}
    reports = [
        (json.loads(calls[m["tool_call_id"]]["arguments"])["item"], _text(m.get("content")))
        for m in messages
        if m.get("role") == "tool" and calls[m["tool_call_id"]]["name"] == "send_to_bench"
    ]
    facts = _facts(brief, [r for _, r in reports])
    results = {}
    for item, report in reports:
        if (found := _REPORT.match(report)) and found[1] == "done":
            results[item] = next(iter(json.loads(found[2]).values()))
    done = len(results)
    last = messages[-1]
    turn = len(calls)
    if last.get("role") != "tool":
        return _call("write_todos", {"todos": _todos(facts, 0)}, turn)
    if calls[last["tool_call_id"]]["name"] == "write_todos":
        if done == len(ITEMS):
            return _say(f"Order {facts['order']} is on the bench: {json.dumps(results)}")
        name = ITEMS[done][0]
        attempt = 1 + sum(item == name for item, _ in reports)
        instructions = _instructions(facts, results, done, attempt)
        return _call("send_to_bench", {"item": name, "instructions": instructions}, turn)
    item, report = reports[-1]
    verdict = _REPORT.match(report)
    kind = verdict[1] if verdict else "failed"
    if kind in ("done", "replan"):
        return _call("write_todos", {"todos": _todos(facts, done)}, turn)
    if kind == "again":
        attempt = 1 + sum(i == item for i, _ in reports)
        instructions = _instructions(facts, results, done, attempt)
        return _call("send_to_bench", {"item": item, "instructions": instructions}, turn)
    return _say(f"Stopped at {item}: {report}")


def _bench(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The bench hand's next turn for its one item."""
    prompt = next(_text(m.get("content")) for m in messages if m.get("role") == "user")
    found = re.search(r"Call (\w+) with (\{.*\})", prompt)
    calls = [c for m in messages for c in m.get("tool_calls") or []]
    if not found:
        return _say(f"[failed] no service named in {prompt!r}")
    if not calls:
        return _call(found[1], json.loads(found[2]), 0)
    last = calls[-1]["function"]
    name, args = last["name"], json.loads(last["arguments"])
    said = _text(messages[-1].get("content"))
    if stopped := _STOPPED.match(said):
        direction, text = stopped[2], stopped[3]
        if cue := re.search(r"resume at cue (\d\d:\d\d)", text):
            return _call(name, args | {"cue": cue[1]}, len(calls))
        word = {"Caesura": "again", "Tacet": "again", "DaCapo": "replan"}.get(direction, "failed")
        return _say(f"[{word}] {name}: {text}")
    result = json.loads(said)
    if result.get("next_page"):
        return _call(name, args | {"page": result["next_page"]}, len(calls))
    if result.get("state") == "pending":
        return _call("permit_status", {"application": result["application"]}, len(calls))
    kept = {k: v for k, v in result.items() if k in ("set_id", "application", "booking", "receipt")}
    return _say(f"[done] {json.dumps(kept or result)}")


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> msg = respond({"messages": [{"role": "system", "content": LEAD},
    ...     {"role": "user", "content": "Order: " + json.dumps(ORDER)}]})
    >>> call = msg["choices"][0]["message"]["tool_calls"][0]["function"]
    >>> json.loads(call["arguments"])["todos"][0]["content"].split(": ")[0]
    'find_tonewood'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = _text(messages[0].get("content")) if messages else ""
    if system.startswith(LEAD[:20]):
        return completion(body, _lead(messages))
    return completion(body, _bench(messages))


# --- the world -------------------------------------------------------------------------------
class Direction(Exception):
    """A service's answer other than a result, named as a musical direction."""


class Tacet(Direction):
    """Silent a moment: calling again works (``ToolRetryMiddleware`` does)."""


class Fermata(Direction):
    """Hold: call again at the cue named."""


class Caesura(Direction):
    """A break: the item must be sent again."""


class DaCapo(Direction):
    """From the top: ``take X, not Y``, the plan must change."""


class Fine(Direction):
    """The end: refused for good."""


DIRECTIONS: dict[str, type[Direction]] = {
    c.__name__.lower(): c for c in (Tacet, Fermata, Caesura, DaCapo, Fine)
}


def stopped_on(error: Exception, request: ToolCallRequest) -> str | None:
    """``ToolErrorMiddleware``'s handler: a direction goes back to the model, anything else
    propagates."""
    if isinstance(error, Direction):
        return f"{request.tool_call['name']} stopped on {type(error).__name__}: {error}"
    return None


@dataclass
class World:
    """The tonewood ledger, permit desk, workshop rooms, till and post of one commission."""

    label: Label
    errors: list[str] = field(default_factory=list)
    polls: dict[str, int] = field(default_factory=dict)
    moved: dict[str, str] = field(default_factory=dict)
    booked: str = ""

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))

    def fault(self, name: str, old: str = "") -> None:
        """Raise the scenario's next direction when this call is one it targets."""
        if self.errors and self.label.params.get("service") == name:
            word, text = self.errors.pop(0).split("|", 1)
            text = text.format(old=old)
            if take := _TAKE.search(text):
                self.moved[name] = take[1]  # the service then takes what it named
            raise DIRECTIONS[word](text)

    def tools(self) -> list[BaseTool]:
        params = self.label.params
        seed = self.label.seed

        def search_tonewood(species: str, grade: str, page: int = 1) -> str:
            """Back-and-sides sets of a species and grade in the tonewood ledger, a page at a
            time."""
            self.fault("search_tonewood")
            if page < int(params.get("pages", 1)):
                return json.dumps({"sets": [], "page": page, "next_page": page + 1})
            return json.dumps({"set_id": f"TW-{seed % 9973}", "species": species, "grade": grade})

        def file_permit(set_id: str, species: str, cue: str = "") -> str:
            """File a CITES export permit for a tonewood set; decided later."""
            self.fault("file_permit")
            if species != ORDER["species"]:
                raise Fine(f"the buyer's import licence covers {ORDER['species']}, not {species}")
            application = f"CP-{seed % 881}"
            self.polls[application] = 0
            return json.dumps({"application": application, "set_id": set_id, "state": "pending"})

        def permit_status(application: str) -> str:
            """Whether a CITES permit application is decided yet."""
            self.polls[application] += 1
            stuck = self.label.scenario == "loop_poll_stuck"
            if stuck or self.polls[application] < int(params.get("polls", 1)):
                return json.dumps({"application": application, "state": "pending"})
            return json.dumps({"application": application, "state": "granted"})

        def book_bench(room: str, day: str, set_id: str, cue: str = "") -> str:
            """Book a bench in a workshop room for a build day."""
            self.fault("book_bench")
            moved = params.get("room_to")
            if moved and room != moved:
                raise DaCapo(f"the {room}'s dehumidifier has failed; take {moved}, not {room}")
            self.booked = day
            return json.dumps({"booking": f"BN-{day}", "room": room, "set_id": set_id})

        def charge_deposit(account: str, amount: str, order: str) -> str:
            """Charge a commission's deposit to the client's account."""
            self.fault("charge_deposit", account)
            if account not in (ORDER["account"], self.moved.get("charge_deposit")):
                raise Fine(f"account {account} is not the client's on order {order}")
            return json.dumps({"receipt": f"RC-{seed % 499}", "amount": amount})

        def send_notice(email: str, booking: str, cue: str = "") -> str:
            """Tell the player their build is booked."""
            self.fault("send_notice")
            return json.dumps({"sent": email, "booking": booking})

        funcs = (search_tonewood, file_permit, permit_status, book_bench, charge_deposit)
        return [tool(f) for f in (*funcs, send_notice)]

    def verify_bench_day(self) -> None:
        """The app's check: the bench stands on the master's calendar day for the build."""
        if self.booked != ORDER["day"]:
            raise Fine(
                f"the master's calendar has the build on {ORDER['day']}, the bench on {self.booked}"
            )

    def watch_set(self, set_id: str, check: int) -> None:
        """The app's watch of the acclimatising set, one check at a time."""
        burst = self.label.scenario == "legit_replan_then_burst"
        if burst and check > int(self.label.params["watch"]):
            raise Fine(f"a burst pipe in the drying loft soaked set {set_id} overnight")


# --- the agents ------------------------------------------------------------------------------
class Workshop:
    """One commission, from the order to the watched set."""

    def __init__(self, label: Label, llm: ChatOpenAI, provider: TracerProvider) -> None:
        self.label = label
        self.world = World(label)
        self.tracer = provider.get_tracer(TRACER)
        # typed as the middleware base: each middleware's own state schema is one of its kind
        bench_middleware: list[AgentMiddleware[Any, None]] = [
            ToolErrorMiddleware(stopped_on),
            # inner: a tacet is called again at once, anything else goes to the handler
            ToolRetryMiddleware(
                max_retries=2,
                retry_on=(Tacet,),
                on_failure="error",
                initial_delay=0.0,
                jitter=False,
            ),
            ModelCallLimitMiddleware(run_limit=BENCH_CALLS),
        ]
        bench = create_agent(
            llm,
            self.world.tools(),
            system_prompt=BENCH,
            middleware=bench_middleware,
            name="bench_hand",
        )

        @tool
        def send_to_bench(item: str, instructions: str) -> str:
            """Hand one todo item to a bench hand with only that item's instructions; their
            report line comes back."""
            state = bench.invoke(
                {"messages": [HumanMessage(instructions)]}, {"recursion_limit": 200}
            )
            return _text(state["messages"][-1].content)

        lead_middleware: list[AgentMiddleware[Any, None]] = [
            TodoListMiddleware(),
            ModelCallLimitMiddleware(run_limit=LEAD_CALLS),
        ]
        self.lead = create_agent(
            llm,
            [send_to_bench],
            system_prompt=LEAD,
            middleware=lead_middleware,
            name="workshop_lead",
        )

    def brief(self) -> str:
        notes = {k: self.label.params[k] for k in ORDER if k in self.label.params}
        lines = [f"Commission {ORDER['order']}: a classical guitar.", f"Order: {json.dumps(ORDER)}"]
        if notes:
            lines.append(f"Workshop notes: {json.dumps(notes)}")
        return "\n".join(lines)

    def run(self) -> str:
        with self.tracer.start_as_current_span(f"build guitar {ORDER['order']}") as root:
            root.set_attribute("luthier.order", ORDER["order"])
            final = self.lead.invoke(
                {"messages": [HumanMessage(self.brief())]}, {"recursion_limit": 400}
            )
            todos = final.get("todos") or []
            failure = ""
            if not todos or any(t["status"] != "completed" for t in todos):
                failure = _text(final["messages"][-1].content)
            else:
                failure = self.after(final)
            root.set_attribute("luthier.outcome", "failed" if failure else "booked")
            if failure:
                root.set_status(Status(StatusCode.ERROR, failure))
            return format(root.get_span_context().trace_id, "032x")

    def after(self, final: dict[str, Any]) -> str:
        """The app's check of the bench day, then its watch of the set; the failure, or ''."""
        answer = _text(final["messages"][-1].content)
        set_id = json.loads(answer.split(": ", 1)[1])["find_tonewood"]
        with self.tracer.start_as_current_span("verify bench day") as span:
            span.set_attribute("bench.day", self.world.booked)
            span.set_attribute("order.day", ORDER["day"])
            try:
                self.world.verify_bench_day()
            except Fine as error:
                span.set_status(Status(StatusCode.ERROR, str(error)))
                return str(error)
        with self.tracer.start_as_current_span(f"watch set {set_id}") as span:
            for check in range(1, 4):
                span.add_event("check", {"check": check})
                try:
                    self.world.watch_set(set_id, check)
                except Fine as error:
                    span.set_status(Status(StatusCode.ERROR, str(error)))
                    return str(error)
        return ""


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the commission scenarios against the scripted model; run name -> trace id."""
    out: dict[str, str] = {}
    if not labels:
        return out
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    instrumentor = LangchainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer(respond=respond) as server:
            llm = ChatOpenAI(
                model=MODEL, base_url=server.base_url("corpus-luthier"), api_key="test"
            )
            for label in labels:
                out[label.run] = Workshop(label, llm, provider).run()
    finally:
        instrumentor.uninstrument()
    return out

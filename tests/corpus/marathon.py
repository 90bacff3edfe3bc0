"""The marathon agent: a city marathon's operations desk readying race day, written as a new
planscope user writes it from the SDK's public docs, in **asyncio**.

Instrumented with the **planscope SDK's context managers** (``planscope.start_run``,
``start_plan``, ``start_step``, ``start_tool``, ``start_span``; the docs' twins of the
decorators "for code that is not a function"), the plan a ``planscope.Plan`` of ``PlanStep`` s
set on the plan span (``PlanHandle.set_plan``), each step's executor handed an explicit context
recorded with ``StepHandle.record_context`` (also when it is empty, as the docs ask). The LLM
calls are the ``openai`` client's (``AsyncOpenAI``, Chat Completions with function tools)
against the conformance suite's fake OpenAI server (``ModelServer(respond=...)``, this module's
scripted model), traced by **OpenLLMetry's OpenAI instrumentor**
(``opentelemetry-instrumentation-openai``) on the same provider; the SDK's own ``start_llm`` is
not used (the instrumentor already writes the LLM spans).

The race-day work: find a water-station supplier for the course's zone in a paged supplier list,
get the road-closure order from the city (a request, polled), book marshals from a volunteer
pool for race day, pay the supplier from the race account, send the runners the race-day notice.

* The planner's model answers a **Mermaid flowchart**: a node per step whose label is the step's
  goal and, after ``<br/>``, its call ``tool(key='value', n=60, ref=@key)``; the edges
  ``a -->|key| b`` say what flows: ``b`` depends on ``a`` and requires its result ``key``
  (``@key`` in ``b``'s call). A re-plan draws the done steps as ``:::done`` nodes with their
  results and the steps still open.
* Steps whose dependencies are done run **concurrently** (``asyncio.gather``), each attempt a
  ``race_clerk`` conversation (create, run the ``tool_calls``, send ``role: tool`` messages
  back, until the model answers an outcome line ``<finished|dnf|detour|dq|stalled> | value |
  note``). The app hands each clerk ``{key: board[key] for key in step.requires}``.
* Services raise race-result codes the clerk reads from the tool message: ``[HOLD] ...; retry
  at HH:MM`` (the clerk calls again ``at`` that time), ``[DNF]`` (the app runs the step again,
  up to six attempts), ``[DETOUR] ... (use key=value)`` (the app asks for a new plan with every
  setback so far, up to five plans), ``[DQ]`` (final).
* After the notice the app checks the closure order's day against the race card
  (``record_outcome_check``) and watches the course (a ``start_span``).

The planner trusts the race director's note over the race card: the scenario's wrong value
comes from the note.

>>> call_args("pay_supplier(supplier=@supplier, account='RA-1', amount=4200)")
('pay_supplier', {'supplier': '@supplier', 'account': 'RA-1', 'amount': 4200})
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any

import planscope
from openai import AsyncOpenAI
from openai.resources.chat.completions import AsyncCompletions, Completions
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam
from opentelemetry.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.instrumentation.utils import unwrap
from opentelemetry.sdk.trace import TracerProvider
from planscope import Plan, PlanStep

from tests.conformance.fake_openai import ModelServer, completion

from ._labels import Label

AGENT = "marathon-ops"
MODEL = "race-desk-1"
CARD: dict[str, Any] = {
    "race": "Riverside City Marathon 2027",
    "course": "RCM-42K",
    "zone": "Z4",
    "stations": 14,
    "day": "2027-04-18",
    "pool": "North volunteer pool",
    "marshals": 60,
    "account": "RA-55120",
    "budget": 4200,
    "runners": "runners-2027",
}
OBJECTIVE = f"Ready race day for the {CARD['race']}"
PLANNER = "You are the marathon's race-day planner. Answer a Mermaid flowchart."
CLERK = "You are a race-day clerk: make the step's call with your tools, then report."
MAX_ATTEMPTS = 6
MAX_PLANS = 5
MAX_TURNS = 24
MAX_HOLDS = 8
"""HOLDs in one clerk run before the clerk reports the step stalled."""
MAX_POLLS = 12


# --- the plan format --------------------------------------------------------------------------
def call_args(call: str) -> tuple[str, dict[str, Any]]:
    """A call's tool and arguments: quoted strings, integers, ``@key`` references."""
    tool, _, inner = call.partition("(")
    args: dict[str, Any] = {}
    for key, quoted, bare in re.findall(r"(\w+)=(?:'([^']*)'|([@\w.-]+))", inner):
        args[key] = int(bare) if bare.isdigit() else (bare or quoted)
    return tool.strip(), args


def _call_text(tool: str, args: dict[str, Any]) -> str:
    def value(v: Any) -> str:
        return str(v) if isinstance(v, int) or str(v).startswith("@") else f"'{v}'"

    return f"{tool}(" + ", ".join(f"{k}={value(v)}" for k, v in args.items()) + ")"


@dataclass
class Flowchart:
    """A plan read from the planner's Mermaid flowchart."""

    steps: list[PlanStep]
    calls: dict[str, str]
    done: dict[str, str]


def read_flowchart(text: str) -> Flowchart:
    """The open steps (goal, call, dependencies, required and produced keys) and the done ones.

    >>> chart = read_flowchart('''flowchart LR
    ...   a["done => X-1"]:::done
    ...   b["Do b<br/>tool_b(k=@x, n=3)"]
    ...   a -->|x| b''')
    >>> chart.steps[0].requires, chart.steps[0].depends_on, chart.done
    (('x',), (), {'a': 'X-1'})
    """
    labels: dict[str, tuple[str, str]] = {}
    edges: list[tuple[str, str, str]] = []
    for line in text.splitlines():
        node = re.match(r'\s*(\w+)\["(.*)"\](?::::(\w+))?\s*$', line)
        edge = re.match(r"\s*(\w+)\s*-->\|(\w+)\|\s*(\w+)\s*$", line)
        if node:
            labels[node[1]] = (node[2], node[3] or "")
        elif edge:
            edges.append((edge[1], edge[2], edge[3]))
    done = {n: body.split("=> ", 1)[1] for n, (body, cls) in labels.items() if cls == "done"}
    steps, calls = [], {}
    for name, (body, cls) in labels.items():
        if cls == "done":
            continue
        goal, _, call = body.partition("<br/>")
        calls[name] = call
        tool, _ = call_args(call)
        steps.append(
            PlanStep(
                name,
                goal,
                tool=tool,
                depends_on=[a for a, _, b in edges if b == name and a not in done],
                requires=[k for _, k, b in edges if b == name],
                produces=sorted({k for a, k, _ in edges if a == name}),
                irreversible=tool == "pay_supplier",
            )
        )
    return Flowchart(steps, calls, done)


# --- the scripted model -----------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _planner(brief: str) -> str:
    """The planner's flowchart: the race card, the director's note trusted over it, then every
    setback's ``(use key=value)``; done steps drawn with their results."""
    facts = dict(CARD)
    settled: dict[str, str] = {}
    revision = 1
    for line in brief.splitlines():
        head, _, rest = line.partition(": ")
        if head in ("Race card", "Director's note"):
            facts |= json.loads(rest)
        elif head == "Setback" and (use := re.search(r"\(use (\w+)=([^)]+)\)", rest)):
            facts[use[1]] = use[2]
        elif head == "Settled":
            settled = json.loads(rest)
        elif head == "Revision":
            revision = int(rest)
    nodes = [
        ("find_supplier", f"Find a water-station supplier for zone {facts['zone']}",
         _call_text("search_suppliers", {"zone": facts["zone"], "stations": facts["stations"]})),
        ("request_closure", f"Get the road-closure order for {facts['course']} on {facts['day']}",
         _call_text("request_road_closure", {"course": facts["course"], "day": facts["day"]})),
        ("book_marshals", f"Book {facts['marshals']} marshals from the {facts['pool']}",
         _call_text("book_marshals", {"pool": facts["pool"], "day": facts["day"],
                    "count": facts["marshals"], "closure": "@closure", "supplier": "@supplier"})),
        ("pay_supplier", f"Pay the supplier from race account {facts['account']}",
         _call_text("pay_supplier", {"supplier": "@supplier", "account": facts["account"],
                    "amount": facts["budget"]})),
        ("send_notice", "Send the runners the race-day notice",
         _call_text("send_runner_notice", {"list": facts["runners"], "closure": "@closure",
                    "marshals": "@marshals", "payment": "@payment"})),
    ]  # fmt: skip
    lines = ["flowchart LR", f"  %% {facts['race']}: race-day plan, revision {revision}"]
    for name, goal, call in nodes:
        if name in settled:
            lines.append(f'  {name}["done => {settled[name]}"]:::done')
        else:
            lines.append(f'  {name}["{goal}<br/>{call}"]')
    lines += [
        "  find_supplier -->|supplier| book_marshals",
        "  request_closure -->|closure| book_marshals",
        "  find_supplier -->|supplier| pay_supplier",
        "  request_closure -->|closure| send_notice",
        "  book_marshals -->|marshals| send_notice",
        "  pay_supplier -->|payment| send_notice",
    ]
    if settled:
        lines.append("  classDef done fill:#d4f7d4,stroke:#393")
    return "\n".join(lines)


def _tool_call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _clerk(messages: list[dict[str, Any]], order: str) -> dict[str, Any]:
    """The clerk's next turn: make the call (each ``@key`` from the context; a key the context
    lacks is taken for its own name), call again ``at`` a HOLD's time, follow ``next_page``,
    read a pending order, report an outcome line."""
    found = re.search(r"^Call: (.*)$", order, re.MULTILINE)
    given = re.search(r"^Context: (.*)$", order, re.MULTILINE)
    context: dict[str, Any] = json.loads(given[1]) if given else {}
    tool, args = call_args(found[1] if found else "")
    args = {
        k: context.get(v[1:], v[1:]) if isinstance(v, str) and v.startswith("@") else v
        for k, v in args.items()
    }
    turn = len(messages)
    calls: list[tuple[str, dict[str, Any], str]] = []
    pending: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            pending[c["id"]] = (fn["name"], json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool" and m.get("tool_call_id") in pending:
            calls.append((*pending.pop(m["tool_call_id"]), _text(m.get("content"))))

    def report(outcome: str, value: str = "", note: str = "") -> dict[str, Any]:
        return {"role": "assistant", "content": f"{outcome} | {value} | {note}"}

    if not calls:
        return _tool_call(tool, args, turn)
    name, called, came_back = calls[-1]
    code = re.match(r"\[(\w+)\] (.*)$", came_back)
    if code:
        if code[1] == "HOLD":
            holds = sum(c[2].startswith("[HOLD]") for c in calls)
            at = re.search(r"retry at (\d\d:\d\d)", code[2])
            if holds >= MAX_HOLDS or not at:
                return report("stalled", note=f"{name} held {holds} times: {code[2]}")
            return _tool_call(name, called | {"at": at[1]}, turn)
        use = re.search(r"\(use (\w+=[^)]+)\)", code[2])
        outcome = {"DNF": "dnf", "DETOUR": "detour", "DQ": "dq"}.get(code[1], "dq")
        return report(outcome, f"use {use[1]}" if use else "", code[2])
    answer = json.loads(came_back)
    if answer.get("next_page"):
        return _tool_call(name, called | {"page": answer["next_page"]}, turn)
    if answer.get("state") == "pending":
        reads = sum(c[0] == "closure_status" for c in calls)
        if reads >= MAX_POLLS:
            return report("stalled", note=f"order {answer['order']} pending after {reads} reads")
        return _tool_call("closure_status", {"order": answer["order"]}, turn)
    return report("finished", str(answer["ref"]), str(answer.get("note", "")))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> msg = {"role": "user", "content": "Race card: " + json.dumps(CARD)}
    >>> out = respond({"messages": [{"role": "system", "content": PLANNER}, msg]})
    >>> chart = read_flowchart(out["choices"][0]["message"]["content"])
    >>> chart.calls["pay_supplier"]
    "pay_supplier(supplier=@supplier, account='RA-55120', amount=4200)"
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if PLANNER in system:
        return completion(body, {"role": "assistant", "content": _planner(user)})
    return completion(body, _clerk(messages, user))


# --- the race's services ----------------------------------------------------------------------
class RaceFault(Exception):
    """A service's race-result code and text: ``[CODE] text``."""

    def __init__(self, code: str, text: str) -> None:
        super().__init__(f"[{code}] {text}")
        self.code = code


@dataclass
class Services:
    """The supplier list, the city permits office, the volunteer desk, the race bank and the
    runners' SMS gateway of one race."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    suppliers: dict[str, str] = field(default_factory=dict)
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)
    bookings: dict[str, str] = field(default_factory=dict)
    payments: dict[str, str] = field(default_factory=dict)

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
        if f["code"] == "HOLD":
            raise RaceFault("HOLD", f"{f['text']}; retry at {f['hint']}")
        if f["code"] == "DETOUR":
            raise RaceFault("DETOUR", f"{f['text']} (use {f['hint']})")
        raise RaceFault(f["code"], f["text"])

    def search_suppliers(self, zone: str, stations: int, page: int = 1) -> dict[str, Any]:
        self.fault("search_suppliers")
        if page < int(self.params.get("pages", 1)):
            full = [f"SUP-{zone}-{page * 10 + n}" for n in (1, 2, 3)]
            return {"suppliers": [], "fully_booked": full, "next_page": page + 1}
        supplier = f"SUP-{zone}-{self.label.seed % 1000}"
        self.suppliers[supplier] = zone
        return {"ref": supplier, "zone": zone, "stations": stations}

    def request_road_closure(self, course: str, day: str) -> dict[str, Any]:
        self.fault("request_road_closure")
        order = f"CO-{self.label.seed}-{len(self.orders) + 1}"
        self.orders[order] = {"course": course, "day": day, "reads": 0}
        return {"order": order, "state": "pending"}

    def closure_status(self, order: str) -> dict[str, Any]:
        found = self.orders.get(order)
        if found is None:
            raise RaceFault("DQ", f"the city has no closure order {order}")
        found["reads"] += 1
        if found["reads"] < int(self.params.get("polls", 1)):
            return {"order": order, "state": "pending"}
        return {"ref": order, "state": "issued", "day": found["day"]}

    def book_marshals(
        self, pool: str, day: str, count: int, closure: str, supplier: str, at: str = ""
    ) -> dict[str, Any]:
        self.fault("book_marshals")
        if closure not in self.orders:
            raise RaceFault("DQ", f"no road-closure order {closure!r} on file with the city")
        zone = self.suppliers.get(supplier)
        if zone is None:
            raise RaceFault("DQ", f"no water-station supplier {supplier!r} to post marshals at")
        if zone != CARD["zone"]:
            raise RaceFault(
                "DQ", f"{supplier}'s stations are in zone {zone}, off the course in {CARD['zone']}"
            )
        moved = self.params.get("pool_to")
        if moved and pool == CARD["pool"]:
            raise RaceFault(
                "DETOUR", f"the {pool} has {int(count) // 3} marshals free (use pool={moved})"
            )
        booking = f"MB-{self.label.seed % 1000}-{len(self.bookings) + 1}"
        self.bookings[booking] = day
        return {"ref": booking, "marshals": count, "day": day, "note": f"briefing {at or '06:00'}"}

    def pay_supplier(
        self, supplier: str, account: str, amount: int, at: str = ""
    ) -> dict[str, Any]:
        self.fault("pay_supplier")
        if supplier not in self.suppliers:
            raise RaceFault("DQ", f"the race's vendor list holds no supplier {supplier!r}")
        if account != CARD["account"] and account not in self.params.get("accounts", ()):
            raise RaceFault("DQ", f"the race bank holds no account {account}")
        payment = f"PAY-{self.label.seed}-{len(self.payments) + 1}"
        self.payments[payment] = supplier
        return {"ref": payment, "amount": amount}

    def send_runner_notice(
        self, list: str, closure: str, marshals: str, payment: str, at: str = ""
    ) -> dict[str, Any]:
        self.fault("send_runner_notice")
        unknown = [
            f"{what} {value!r}"
            for what, value, known in (
                ("closure order", closure, self.orders),
                ("marshal booking", marshals, self.bookings),
                ("supplier payment", payment, self.payments),
            )
            if value not in known
        ]
        if unknown:
            raise RaceFault("DQ", "notice held: unknown " + ", ".join(unknown))
        return {"ref": f"SMS-{closure[-6:]}-{len(list)}", "to": list}

    def closure_order(self, order: str) -> dict[str, Any]:
        return {"order": order, **{k: v for k, v in self.orders[order].items() if k != "reads"}}

    def course_status(self, read: int) -> dict[str, Any]:
        if self.label.scenario.startswith("external_") and read > int(self.params["reads"]):
            return {
                "state": "stopped",
                "why": f"the city's heat alert stopped the race at read {read}",
            }
        return {"state": "running", "read": read}


def _fn(name: str, doc: str, **props: str) -> ChatCompletionToolParam:
    required = [k for k, v in props.items() if not v.endswith("?")]
    schema = {k: {"type": v.rstrip("?")} for k, v in props.items()}
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": doc,
            "parameters": {"type": "object", "properties": schema, "required": required},
        },
    }


TOOLS: list[ChatCompletionToolParam] = [
    _fn("search_suppliers", "Water-station suppliers with free stations in a course zone, a "
        "page at a time.", zone="string", stations="integer", page="integer?"),
    _fn("request_road_closure", "Ask the city for a road-closure order for the course on a day.",
        course="string", day="string"),
    _fn("closure_status", "Whether the city has issued a closure order yet.", order="string"),
    _fn("book_marshals", "Book marshals from a volunteer pool for race day.", pool="string",
        day="string", count="integer", closure="string", supplier="string", at="string?"),
    _fn("pay_supplier", "Pay a supplier from a race account.", supplier="string",
        account="string", amount="integer", at="string?"),
    _fn("send_runner_notice", "Send the runners the race-day notice by SMS.", list="string",
        closure="string", marshals="string", payment="string", at="string?"),
]  # fmt: skip
EFFECTS = {"pay_supplier": "irreversible", "send_runner_notice": "irreversible"}


# --- the app ----------------------------------------------------------------------------------
class Setback(Exception):
    """A step's clerk reported ``dnf``, ``detour``, ``dq`` or ``stalled``."""

    def __init__(self, step: str, outcome: str, value: str, note: str) -> None:
        super().__init__(f"{step}: {outcome}: {note}" + (f" ({value})" if value else ""))
        self.outcome = outcome


@dataclass
class RaceDesk:
    """The operations desk's agent for one race."""

    label: Label
    services: Services
    model: AsyncOpenAI
    board: dict[str, str] = field(default_factory=dict)
    """The results of done steps by the key their step produces."""
    done: dict[str, str] = field(default_factory=dict)
    setbacks: list[str] = field(default_factory=list)
    calls: dict[str, str] = field(default_factory=dict)

    def brief(self, revision: int) -> str:
        lines = [OBJECTIVE, f"Race card: {json.dumps(CARD)}"]
        if note := self.label.params.get("note"):
            lines.append(f"Director's note: {json.dumps(note)}")
        if revision > 1:
            lines += [f"Revision: {revision}", f"Settled: {json.dumps(self.done)}"]
            lines += [f"Setback: {s}" for s in self.setbacks]
        return "\n".join(lines)

    async def plan(self, revision: int) -> Plan:
        """One planner call under the plan span; a re-plan continues the current plan's id."""
        brief = self.brief(revision)
        with planscope.start_plan(AGENT, inputs={"brief": brief}) as p:
            reply = await self.model.chat.completions.create(
                model=MODEL,
                messages=[
                    {"role": "system", "content": PLANNER},
                    {"role": "user", "content": brief},
                ],
            )
            chart = read_flowchart(reply.choices[0].message.content or "")
            self.calls.update(chart.calls)
            current = planscope.current_plan()
            plan = (
                Plan(chart.steps, objective=OBJECTIVE)
                if current is None
                else current.replan(chart.steps, reason=self.setbacks[-1])
            )
            p.set_plan(plan)
            p.set_output(reply.choices[0].message.content)
            return plan

    async def tool(self, name: str, args: dict[str, Any]) -> str:
        """One service call under a tool span; a fault is the tool message ``[CODE] text``."""
        try:
            with planscope.start_tool(
                name, resource=f"race:{name}", effect=EFFECTS.get(name, "read"), arguments=args
            ) as t:
                out = json.dumps(getattr(self.services, name)(**args))
                t.set_output(out)
                return out
        except RaceFault as e:
            return str(e)

    async def clerk(self, step: PlanStep, attempt: int, context: dict[str, str]) -> str:
        """One clerk conversation for one step attempt: its outcome line."""
        order = (
            f"Step {step.id} (attempt {attempt}): {step.description}\n"
            f"Call: {self.calls[step.id]}\nContext: {json.dumps(context)}"
        )
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": CLERK},
            {"role": "user", "content": order},
        ]
        for _ in range(MAX_TURNS):
            reply = await self.model.chat.completions.create(
                model=MODEL, messages=messages, tools=TOOLS
            )
            message = reply.choices[0].message
            if not message.tool_calls:
                return message.content or ""
            messages.append(message.model_dump(exclude_none=True))  # type: ignore[arg-type]
            for call in message.tool_calls:
                if call.type != "function":
                    continue
                result = await self.tool(call.function.name, json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        return f"stalled |  | no outcome after {MAX_TURNS} turns"

    def handed(self, step: PlanStep) -> dict[str, str]:
        """The context the app hands the step's clerk (the scenario may hand less)."""
        given = {k: self.board[k] for k in step.requires if k in self.board}
        starve = self.label.params.get("starve", {})
        if starve.get("step") == step.id:
            given = {k: v for k, v in given.items() if k in starve["given"]}
        return given

    async def run_step(self, step: PlanStep) -> str:
        """The step's attempts: run again after ``dnf``, up to ``MAX_ATTEMPTS``."""
        for number in range(1, MAX_ATTEMPTS + 1):
            context = self.handed(step)
            try:
                with planscope.start_step(
                    step,
                    executor="race_clerk",
                    inputs={"call": self.calls[step.id], "context": context},
                ) as s:
                    s.record_context(context)
                    line = await self.clerk(step, number, context)
                    outcome, value, note = (p.strip() for p in [*line.split("|"), "", ""][:3])
                    if outcome == "finished":
                        s.record_self_assessment("success")
                        s.set_output(value)
                        return value
                    s.record_self_assessment("failure")
                    if outcome == "detour":
                        planscope.record_replan_request(f"{note} ({value})", step_id=step.id)
                    # raised through the step's span: the attempt failed
                    raise Setback(step.id, outcome, value, note)
            except Setback as e:
                if e.outcome != "dnf" or number == MAX_ATTEMPTS:
                    raise
        raise AssertionError("unreachable")

    async def steps(self) -> str:
        """Plan, then run the ready steps concurrently, re-planning after a ``detour``; the
        failure reason, or ``""``."""
        plan = await self.plan(1)
        while True:
            ready = [
                s
                for s in plan.steps
                if s.id not in self.done and all(d in self.done for d in s.depends_on)
            ]
            if not ready:
                return ""
            results = await asyncio.gather(
                *(self.run_step(s) for s in ready), return_exceptions=True
            )
            detours: list[str] = []
            for step, result in zip(ready, results, strict=True):
                if isinstance(result, Setback) and result.outcome == "detour":
                    detours.append(str(result))
                elif isinstance(result, BaseException):
                    return str(result)
                else:
                    self.done[step.id] = result
                    self.board.update(dict.fromkeys(step.produces, result))
            if detours:
                if len(self.setbacks) + 1 >= MAX_PLANS:
                    return f"no plan holds after {MAX_PLANS}: {detours[-1]}"
                self.setbacks += detours
                plan = await self.plan(len(self.setbacks) + 1)

    async def race_day(self) -> str:
        """One race under the run span: steps, the check, the watch; the run's trace id."""
        inputs = {"card": CARD, "note": self.label.params.get("note", {})}
        with planscope.start_run(
            AGENT, run_id=self.label.run, objective=OBJECTIVE, variant="dag", inputs=inputs
        ) as run:
            trace_id = run.trace_id or ""
            failed = await self.steps()
            if failed:
                run.set_outcome("failure", reason=failed)
                return trace_id
            order = json.loads(await self.tool("closure_order", {"order": self.board["closure"]}))
            on_day = order["day"] == CARD["day"]
            planscope.record_outcome_check(
                on_day,
                name="closure_on_race_day",
                reason=None if on_day else f"closure for {order['day']}, race day {CARD['day']}",
            )
            if not on_day:
                run.set_outcome("failure", reason=f"closure order for {order['day']}")
                return trace_id
            with planscope.start_span("watch course", {"marathon.course": CARD["course"]}) as w:
                for read in range(1, 4):
                    status = json.loads(await self.tool("course_status", {"read": read}))
                    if status["state"] == "stopped":
                        w.record_event("race_stopped", reason=status["why"])
                        run.set_outcome("failure", reason=status["why"])
                        return trace_id
            run.set_outcome("success")
        return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the marathon scenarios with planscope's and OpenLLMetry's spans on ``provider``; run
    name -> trace id."""
    if not labels:
        return {}
    planscope.configure(tracer_provider=provider)
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer(respond=respond) as server:

            async def all_races() -> dict[str, str]:
                model = AsyncOpenAI(
                    base_url=server.base_url("corpus-marathon"), api_key="sk-corpus", max_retries=0
                )
                try:
                    return {
                        label.run: await RaceDesk(label, Services(label), model).race_day()
                        for label in labels
                    }
                finally:
                    await model.close()

            return asyncio.run(all_races())
    finally:
        instrumentor.uninstrument()
        # 0.62.4's uninstrument leaves its wrappers on the classes (harvest's play says why)
        unwrap(Completions, "create")
        unwrap(AsyncCompletions, "create")

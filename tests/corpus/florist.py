"""A wedding florist supplying an event, a hand-written planner-executor app calling a local model
through the **Ollama Python client** (``ollama.Client(host=...)``, ``client.chat(model=...,
messages=..., tools=[...])``, the tool calls in the answer's ``message.tool_calls``) traced by
**OpenLLMetry's Ollama instrumentor** (``OllamaInstrumentor().instrument(tracer_provider=...)``:
an ``ollama.chat`` span per call, content captured as its default), plus the app's own plain
OpenTelemetry spans where an Ollama user adds them (scope ``florist-app``: the wedding's root, a
plan span per revision, a span per step attempt, a span per tool function the app runs for the
model, a check and a watch), against a scripted model on the corpus's fake Ollama server
(:class:`tests.corpus._fake_ollama.OllamaServer`). No planscope code.

Sealed-60 split only (see README.md). The task: Briar & Bloom dress the Okafor-Lindqvist
wedding; find a grower with the wedding's flower in stock in the growing region (a growers'
listing read page by page), get the plant-health import permit for the grower's stems (an
application, polled), book the refrigerated van for the delivery day, pay the grower's deposit
from the event budget, tell the couple.

* the planner answers the plan as **a GraphViz DOT digraph**: one node a step, its ``tool``
  attribute the tool to call and every other attribute an argument (``"@node"`` stands for that
  earlier node's result), edges the order (``a -> b -> c``); the app parses the subset it uses
  with a small tokenizer and runs the nodes in topological order (ties in the order written).
  After a setback the planner answers the whole digraph again, its ``graph [revision=n]``
  counted on and the done nodes kept with ``status="done"`` and their ``result``;
* the executor is one Ollama conversation per step attempt, handed the node's line with the
  results filled in and its tools; the app runs the tool calls the model asks for itself and
  reads an **outcome line** ``outcome: <done|rerun|replan|refused|stalled>; result: ...; note:
  ...``;
* the florist's services raise desk errors the app hands the model as the tool's result,
  ``{"error": ..., "message": ...}``: ``ColdRoomHold`` (call again ``after`` the time named, in
  the same conversation), ``Requeue`` (the app runs the step again, up to 8 attempts),
  ``Substitute`` (``(use key=value)``: a new plan, up to 4 plans), ``Refused`` (final).

The planner trusts the wedding planner's notes over the event sheet: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import ollama
from opentelemetry.instrumentation.ollama import OllamaInstrumentor
from opentelemetry.instrumentation.utils import unwrap
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer

from ._fake_ollama import MODEL, OllamaServer
from ._labels import Label

EVENT: dict[str, Any] = {
    "florist": "Briar & Bloom",
    "wedding": "Okafor-Lindqvist",
    "flower": "peony",
    "stems": 300,
    "region": "aalsmeer",
    "day": "2027-06-19",
    "van": "chiller-5t",
    "venue": "Hever Castle",
    "account": "EV-4471-K",
    "amount": 850,
    "email": "ada.and.nils@example.org",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 4
MAX_TURNS = 24
MAX_READS = 12
"""Permit-status reads in one conversation before the executor reports the permit stalled."""
APP_TRACER = "florist-app"
PLANNER = (
    "You plan a florist's supply run for a wedding. Answer a GraphViz DOT digraph: one node per "
    "step, its tool attribute the tool to call and its other attributes the arguments "
    '("@node" for an earlier node\'s result), edges for the order.'
)
EXECUTOR = (
    "You run one node of the florist's plan with your tools, then answer one line: "
    "outcome: <done|rerun|replan|refused|stalled>; result: <value>; note: <text>."
)
OUTCOMES = ("done", "rerun", "replan", "refused", "stalled")


class DeskError(RuntimeError):
    """A florist service's refusal; its class name is the ``error`` the model is told."""

    after = ""


class ColdRoomHold(DeskError):
    """Busy for now: call again after ``after``."""

    def __init__(self, message: str, after: str) -> None:
        super().__init__(message)
        self.after = after


class Requeue(DeskError):
    """Not this time: the step should be run again."""


class Substitute(DeskError):
    """The plan has to change: the message ends ``(use key=value)``."""


class Refused(DeskError):
    """Refused for good."""


class WeddingFailed(RuntimeError):
    """The flowers could not be arranged, or went wrong after (the reason is the message)."""


# --- the plan's format --------------------------------------------------------------------
@dataclass(frozen=True)
class Node:
    """One step: a node of the plan digraph."""

    name: str
    tool: str
    args: dict[str, Any]
    """Literal values, or ``"@node"`` for an earlier node's result."""
    status: str = ""
    result: str = ""


@dataclass
class Plan:
    """The planner's digraph: its graph attributes, its nodes and edges in the order written."""

    attrs: dict[str, Any]
    nodes: list[Node]
    edges: list[tuple[str, str]]

    def order(self) -> list[Node]:
        """The nodes in topological order, ties broken by the order they were written.

        >>> parse_plan("digraph p { b [tool=t]; a [tool=t]; a -> b; }").order()[0].name
        'a'
        """
        names = [n.name for n in self.nodes]
        needs = {name: {a for a, b in self.edges if b == name} for name in names}
        out: list[Node] = []
        while len(out) < len(self.nodes):
            placed = {n.name for n in out}
            ready = [n for n in self.nodes if n.name not in placed and needs[n.name] <= placed]
            if not ready:
                raise ValueError("the plan digraph has a cycle")
            out.append(ready[0])
        return out


_TOKEN = re.compile(
    r'\s+|//[^\n]*|#[^\n]*|/\*.*?\*/|(?P<str>"(?:[^"\\]|\\.)*")|(?P<arrow>->)'
    r"|(?P<id>[A-Za-z_][\w.]*|-?\d+(?:\.\d+)?)|(?P<punct>[{}\[\];,=])",
    re.DOTALL,
)


def _tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) tokens of the DOT subset the planner writes (strings unquoted)."""
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"unexpected DOT text at {pos}: {text[pos : pos + 20]!r}")
        pos = m.end()
        kind = m.lastgroup
        if kind == "str":
            out.append(("id", json.loads(m.group(kind))))
        elif kind == "id":
            value = m.group(kind)
            out.append(("num" if re.fullmatch(r"-?\d+", value) else "id", value))
        elif kind is not None:
            out.append((kind, m.group(kind)))
    return out


def _attr_list(tokens: list[tuple[str, str]], i: int) -> tuple[dict[str, Any], int]:
    """The ``[k=v, ...]`` list at ``tokens[i]`` (a ``[``): its attributes and the index after."""
    attrs: dict[str, Any] = {}
    i += 1
    while tokens[i][1] != "]":
        if tokens[i][1] in (",", ";"):
            i += 1
            continue
        key, eq, (kind, value) = tokens[i][1], tokens[i + 1][1], tokens[i + 2]
        if eq != "=":
            raise ValueError(f"expected = after {key}")
        attrs[key] = int(value) if kind == "num" else value
        i += 3
    return attrs, i + 1


def parse_plan(text: str) -> Plan:
    """The plan digraph from the planner's answer (a fenced ``dot`` block or the bare graph).

    >>> plan = parse_plan('''```dot
    ... digraph plan {
    ...   find_grower [tool="search_growers", region="aalsmeer", stems=300];
    ...   book_van [tool="book_van", grower="@find_grower"];
    ...   find_grower -> book_van;
    ... }
    ... ```''')
    >>> [(n.name, n.tool, n.args) for n in plan.order()]
    [('find_grower', 'search_growers', {'region': 'aalsmeer', 'stems': 300}), ('book_van', 'book_van', {'grower': '@find_grower'})]
    """  # noqa: E501
    fenced = re.search(r"```(?:dot|graphviz)?\n(.*?)```", text, re.DOTALL)
    tokens = _tokens(fenced.group(1) if fenced else text)
    if [t[1] for t in tokens[:1]] != ["digraph"]:
        raise ValueError("the plan is not a digraph")
    i = 1 if tokens[1][1] == "{" else 2
    if tokens[i][1] != "{" or tokens[-1][1] != "}":
        raise ValueError("the digraph has no body")
    tokens = tokens[i + 1 : -1]
    plan = Plan({}, [], [])
    i = 0
    while i < len(tokens):
        if tokens[i][1] == ";":
            i += 1
            continue
        head = tokens[i][1]
        chain = [head]
        i += 1
        while i < len(tokens) and tokens[i][0] == "arrow":
            chain.append(tokens[i + 1][1])
            i += 2
        attrs: dict[str, Any] = {}
        if i < len(tokens) and tokens[i][1] == "[":
            attrs, i = _attr_list(tokens, i)
        if len(chain) > 1:
            plan.edges += list(pairwise(chain))
        elif head == "graph":
            plan.attrs |= attrs
        elif head not in ("node", "edge"):
            tool = str(attrs.pop("tool", ""))
            status, result = str(attrs.pop("status", "")), str(attrs.pop("result", ""))
            attrs.pop("style", None)  # how the done nodes are drawn, not an argument
            plan.nodes.append(Node(head, tool, attrs, status, result))
    return plan


def _quote(value: Any) -> str:
    return str(value) if isinstance(value, int) else json.dumps(str(value))


def render(node: Node, results: dict[str, str] | None = None) -> str:
    """A node as a DOT statement; with ``results``, the earlier nodes' results filled in.

    >>> n = Node("book_van", "book_van", {"grower": "@find_grower", "stems": 300})
    >>> render(n)
    'book_van [tool="book_van", grower="@find_grower", stems=300];'
    >>> render(n, {"find_grower": "G-AAL-7"})
    'book_van [tool="book_van", grower="G-AAL-7", stems=300];'
    """
    attrs: dict[str, Any] = {"tool": node.tool}
    for key, value in node.args.items():
        ref = value[1:] if isinstance(value, str) and value.startswith("@") else None
        attrs[key] = results[ref] if results is not None and ref in results else value
    if node.status:
        attrs |= {"status": node.status, "result": node.result, "style": "filled"}
    return f"{node.name} [{', '.join(f'{k}={_quote(v)}' for k, v in attrs.items())}];"


# --- the scripted model -------------------------------------------------------------------
def _plan_text(brief: str) -> str:
    """The planner's answer: the event sheet, the wedding planner's notes trusted over it; after
    a ``(use key=value)`` setback that value; the done nodes kept and marked."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Event sheet"]) | json.loads(
        lines.get("Wedding planner's notes", "{}")
    )
    done: dict[str, str] = json.loads(lines.get("Done", "{}"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)
    grower = "@find_grower"
    nodes = [
        Node("find_grower", "search_growers",
             {"flower": facts["flower"], "region": facts["region"], "stems": facts["stems"]}),
        Node("apply_permit", "apply_permit",
             {"grower": grower, "flower": facts["flower"], "stems": facts["stems"]}),
        Node("book_van", "book_van",
             {"grower": grower, "day": facts["day"], "van": facts["van"], "venue": facts["venue"]}),
        Node("pay_deposit", "pay_deposit",
             {"grower": grower, "account": facts["account"], "amount": facts["amount"]}),
        Node("notify_couple", "notify_couple",
             {"email": facts["email"], "grower": grower, "day": facts["day"],
              "van": "@book_van", "permit": "@apply_permit"}),
    ]  # fmt: skip
    body = [
        f"  graph [revision={int(lines.get('Revision', 1))}, "
        f"wedding={json.dumps(facts['wedding'])}];",
        *(
            "  "
            + render(Node(n.name, n.tool, n.args, "done", done[n.name]) if n.name in done else n)
            for n in nodes
        ),
        "  find_grower -> apply_permit -> book_van -> notify_couple;",
        "  find_grower -> pay_deposit -> notify_couple;",
    ]
    return "```dot\ndigraph plan {\n" + "\n".join(body) + "\n}\n```"


def _tool_call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"function": {"name": name, "arguments": args}}]}


def _executor(messages: list[dict[str, Any]], order: str) -> dict[str, Any]:
    """The executor's next turn: make the node's call, call again ``after`` a hold, follow
    ``next_page``, read a permit under inspection, answer the outcome line."""
    (line,) = re.findall(r"^Node: (.*)$", order, re.MULTILINE)
    (node,) = parse_plan("digraph step { " + line + " }").nodes
    asked: list[tuple[str, dict[str, Any]]] = []
    calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            asked.append((str(fn.get("name")), dict(fn.get("arguments") or {})))
        if m.get("role") == "tool" and asked:
            # Ollama's tool messages carry no call id: they answer the calls in order
            calls.append((*asked.pop(0), json.loads(str(m.get("content") or "{}"))))

    def outcome(word: str, result: str = "", note: str = "") -> dict[str, Any]:
        return {"content": f"outcome: {word}; result: {result}; note: {note}"}

    if not calls:
        return _tool_call(node.tool, node.args)
    name, called, answer = calls[-1]
    error = answer.get("error")
    if error:
        if error == "ColdRoomHold":
            return _tool_call(name, called | {"after": answer["after"]})
        word = {"Requeue": "rerun", "Substitute": "replan"}.get(error, "refused")
        return outcome(word, note=f"{error}: {answer['message']}")
    if answer.get("next_page"):
        return _tool_call(name, called | {"page": answer["next_page"]})
    if answer.get("state") == "inspection":
        reads = sum(c[0] == "permit_status" for c in calls)
        if reads >= MAX_READS:
            return outcome("stalled", note=f"permit {answer['application']} still in inspection")
        return _tool_call("permit_status", {"application": answer["application"]})
    return outcome("done", str(answer["ref"]), str(answer.get("note", "")))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's message for one ``/api/chat`` request body.

    >>> brief = "Event sheet: " + json.dumps(EVENT)
    >>> msg = respond({"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": brief}]})
    >>> [n.name for n in parse_plan(msg["content"]).order()][:3]
    ['find_grower', 'apply_permit', 'book_van']
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = " ".join(str(m.get("content")) for m in messages if m.get("role") == "system")
    user = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if PLANNER in system:
        return {"content": _plan_text(user)}
    return _executor(messages, user)


# --- the florist's services ---------------------------------------------------------------
@dataclass
class World:
    """The growers' listing, plant-health authority, van depot, event budget and mail of one
    wedding."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    growers: dict[str, str] = field(default_factory=dict)
    applications: dict[str, int] = field(default_factory=dict)
    vans: list[dict[str, str]] = field(default_factory=list)
    deposits: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, step: str) -> None:
        """Raise the scenario's next fault when ``step`` is the one it targets."""
        if not self.faults or step != self.params.get("tool"):
            return
        f = self.faults.pop(0)
        if f["kind"] == "hold":
            raise ColdRoomHold(f["text"], f["hint"])
        if f["kind"] == "requeue":
            raise Requeue(f["text"])
        if f["kind"] == "substitute":
            raise Substitute(f"{f['text']} (use {f['hint']})")
        raise Refused(f["text"])

    # the tools: keyword arguments as the model sends them; a dict back, or a DeskError
    def search_growers(
        self, flower: str, region: str, stems: int, page: int = 1, after: str = ""
    ) -> dict[str, Any]:
        """Growers in a region with a flower in stock, a page of the listing at a time."""
        self.fault("find_grower")
        code = region[:3].upper()
        if page < int(self.params.get("pages", 1)):
            sold_out = [f"G-{code}-{page * 10 + n} ({flower}: 0 stems)" for n in (1, 2, 3)]
            return {"growers": [], "sold_out": sold_out, "next_page": page + 1}
        grower = f"G-{code}-{self.label.seed}"
        self.growers[grower] = region
        return {"ref": grower, "region": region, "in_stock": stems + self.label.seed % 200}

    def apply_permit(self, grower: str, flower: str, stems: int, after: str = "") -> dict[str, Any]:
        """Apply to the plant-health authority for an import permit for a grower's stems."""
        self.fault("apply_permit")
        region = self.growers.get(grower, "")
        if region != EVENT["region"]:
            raise Refused(
                f"the phytosanitary zone of this import permit covers {EVENT['region']} growers "
                f"only; {grower} is in {region or 'an unknown'} zone"
            )
        application = f"PH-{self.label.seed}-{len(self.applications) + 1}"
        self.applications[application] = 0
        if "polls" in self.params or self.params.get("stuck"):
            return {"application": application, "state": "inspection"}
        return {"ref": application, "state": "issued"}

    def permit_status(self, application: str, after: str = "") -> dict[str, Any]:
        """Whether the plant-health authority has issued a permit yet."""
        self.applications[application] += 1
        if self.params.get("stuck") or self.applications[application] < int(
            self.params.get("polls", 0)
        ):
            return {"application": application, "state": "inspection"}
        return {"ref": application, "state": "issued"}

    def book_van(
        self, grower: str, day: str, van: str, venue: str, after: str = ""
    ) -> dict[str, Any]:
        """Book a refrigerated van of a size from a grower to the venue on the delivery day."""
        self.fault("book_van")
        free = self.params.get("van_to")
        if free and van != free:
            raise Substitute(f"no {van} is free at the depot on {day} (use van={free})")
        ref = f"VAN-{self.label.seed % 900 + 100}"
        self.vans.append({"van": ref, "grower": grower, "day": day, "size": van, "venue": venue})
        return {"ref": ref, "day": day, "pickup": after or "05:30"}

    def pay_deposit(
        self, grower: str, account: str, amount: int, after: str = ""
    ) -> dict[str, Any]:
        """Pay a grower's deposit from an event-budget account."""
        self.fault("pay_deposit")
        if account != EVENT["account"] and account not in self.params.get("accounts", ()):
            raise Refused(f"the event budget holds no account {account}")
        receipt = f"DEP-{self.label.seed}-{len(self.deposits) + 1}"
        self.deposits.append({"grower": grower, "account": account, "amount": amount})
        return {"ref": receipt, "amount": amount}

    def notify_couple(
        self, email: str, grower: str, day: str, van: str, permit: str, after: str = ""
    ) -> dict[str, Any]:
        """E-mail the couple the flowers' delivery."""
        self.fault("notify_couple")
        return {"ref": f"MAIL-{grower}-{day[-2:]}", "to": email}


_INTEGERS = {"stems", "amount", "page"}
_OPTIONAL = {"page", "after"}


def _schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """The tool's function schema from its signature (every argument a string but counts)."""
    names = fn.__code__.co_varnames[1 : fn.__code__.co_argcount]
    props = {n: {"type": "integer" if n in _INTEGERS else "string"} for n in names}
    return {
        "type": "function",
        "function": {
            "name": fn.__name__,
            "description": (fn.__doc__ or "").strip(),
            "parameters": {
                "type": "object",
                "properties": props,
                "required": [n for n in names if n not in _OPTIONAL],
            },
        },
    }


TOOLS = {
    "search_growers": ("search_growers",),
    "apply_permit": ("apply_permit", "permit_status"),
    "book_van": ("book_van",),
    "pay_deposit": ("pay_deposit",),
    "notify_couple": ("notify_couple",),
}
"""The tools an executor gets for a node's ``tool``."""


# --- the app ------------------------------------------------------------------------------
@dataclass
class Wedding:
    """One wedding's flowers to arrange."""

    label: Label
    client: ollama.Client
    tracer: Tracer
    world: World
    results: dict[str, str] = field(default_factory=dict)
    plans: int = 0

    def brief(self, setback: str) -> str:
        notes = {
            k: self.label.params[k] for k in ("region", "day", "account") if k in self.label.params
        }
        lines = [
            f"Objective: the flowers for the {EVENT['wedding']} wedding at {EVENT['venue']}.",
            f"Event sheet: {json.dumps(EVENT)}",
        ]
        if notes:
            lines.append(f"Wedding planner's notes: {json.dumps(notes)}")
        if self.plans:
            lines += [
                f"Revision: {self.plans + 1}",
                f"Done: {json.dumps(self.results)}",
                f"Setback: {setback}",
            ]
        return "\n".join(lines)

    def plan(self, setback: str) -> Plan:
        with self.tracer.start_as_current_span(f"plan revision {self.plans + 1}") as span:
            span.set_attributes(
                {"florist.plan.revision": self.plans + 1, "florist.plan.setback": setback}
            )
            response = self.client.chat(
                model=MODEL,
                messages=[
                    {"role": "system", "content": PLANNER},
                    {"role": "user", "content": self.brief(setback)},
                ],
            )
            self.plans += 1
            plan = parse_plan(response.message.content or "")
            span.set_attribute("florist.plan.nodes", [n.name for n in plan.order()])
            return plan

    def run_tool(self, name: str, arguments: dict[str, Any], allowed: tuple[str, ...]) -> str:
        """Run one tool call the model asked for under the app's own span; its JSON answer."""
        with self.tracer.start_as_current_span(f"tool {name}") as span:
            span.set_attributes(
                {"florist.tool": name, "florist.tool.arguments": json.dumps(arguments)}
            )
            try:
                if name not in allowed:
                    raise Refused(f"no tool {name} for this node")
                answer = getattr(self.world, name)(**arguments)
            except DeskError as e:
                # the model is told what went wrong; the span keeps the error
                span.record_exception(e)
                span.set_status(Status(StatusCode.ERROR, f"{type(e).__name__}: {e}"))
                answer = {"error": type(e).__name__, "message": str(e)}
                if e.after:
                    answer["after"] = e.after
            out = json.dumps(answer)
            span.set_attribute("florist.tool.result", out)
            return out

    def attempt(self, number: int, node: Node, attempt: int) -> tuple[str, str, str]:
        """One executor conversation for a node: (outcome, result, note)."""
        line = render(node, self.results)
        with self.tracer.start_as_current_span(f"step {node.name} attempt {attempt}") as span:
            span.set_attributes(
                {
                    "florist.step": node.name,
                    "florist.step.attempt": attempt,
                    "florist.step.node": line,
                }
            )
            allowed = TOOLS.get(node.tool, ())
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": EXECUTOR},
                {
                    "role": "user",
                    "content": f"Step {number}: {node.name} (attempt {attempt})\nNode: {line}",
                },
            ]
            tools = [_schema(getattr(World, n)) for n in allowed]
            content: str | None = None
            for _ in range(MAX_TURNS):
                message = self.client.chat(model=MODEL, messages=messages, tools=tools).message
                if not message.tool_calls:
                    content = message.content or ""
                    break
                calls = [
                    {"function": {"name": c.function.name, "arguments": dict(c.function.arguments)}}
                    for c in message.tool_calls
                ]
                messages.append(
                    {"role": "assistant", "content": message.content or "", "tool_calls": calls}
                )
                for c in message.tool_calls:
                    answer = self.run_tool(c.function.name, dict(c.function.arguments), allowed)
                    messages.append(
                        {"role": "tool", "content": answer, "tool_name": c.function.name}
                    )
            read = re.fullmatch(
                r"outcome:\s*(\w+);\s*result:\s*(.*?);\s*note:\s*(.*)",
                (content or "").strip(),
                re.DOTALL,
            )
            if content is None:
                word, result, note = "stalled", "", f"no outcome in {MAX_TURNS} turns"
            elif read is None or read.group(1) not in OUTCOMES:
                word, result, note = "refused", "", f"unreadable outcome: {content}"
            else:
                word, result, note = read.groups()
            span.set_attributes({"florist.step.outcome": word, "florist.step.result": result})
            if word != "done":
                span.set_status(Status(StatusCode.ERROR, f"{word}: {note}"))
            return word, result, note

    def arrange(self) -> None:
        """Plan, run each node (again, or after a new plan), check, watch; raises
        :class:`WeddingFailed`."""
        plan = self.plan("")
        while True:
            order = plan.order()
            for node in order:
                if node.status == "done" and node.name not in self.results:
                    self.results[node.name] = node.result
            open_nodes = [n for n in order if n.name not in self.results]
            if not open_nodes:
                break
            node = open_nodes[0]
            number = [n.name for n in order].index(node.name) + 1
            for attempt in range(1, MAX_ATTEMPTS + 1):
                word, result, note = self.attempt(number, node, attempt)
                if word != "rerun":
                    break
            if word == "done":
                self.results[node.name] = result
            elif word == "replan" and self.plans < MAX_PLANS:
                plan = self.plan(f"node {node.name}: {note}")
            else:
                raise WeddingFailed(f"{node.name}: {word}: {note}")
        self.check()
        self.watch()

    def check(self) -> None:
        """The app's own check: the van delivers on the wedding's day."""
        with self.tracer.start_as_current_span("check van booking") as span:
            booking = self.world.vans[-1]
            span.set_attributes({f"florist.van.{k}": v for k, v in booking.items()})
            if booking["day"] != EVENT["day"]:
                reason = (
                    f"{booking['van']} delivers on {booking['day']}, the wedding is {EVENT['day']}"
                )
                span.set_status(Status(StatusCode.ERROR, reason))
                raise WeddingFailed(reason)

    def watch(self) -> None:
        """The app watches the grower's crop until the pickup (a few reads of its stock)."""
        grower = self.results["find_grower"]
        with self.tracer.start_as_current_span(f"watch grower {grower}") as span:
            for read in range(1, 4):
                if self.label.scenario.startswith("external_") and read > int(
                    self.label.params["reads"]
                ):
                    reason = f"a frost in {grower}'s glasshouse spoiled its {EVENT['flower']} crop"
                    span.add_event("grower cancelled", {"read": read, "reason": reason})
                    span.set_status(Status(StatusCode.ERROR, reason))
                    raise WeddingFailed(reason)
                span.add_event("grower stock", {"read": read, "state": "ready"})

    def run(self) -> str:
        """The wedding under the app's root span; its trace id."""
        with self.tracer.start_as_current_span(
            f"wedding {EVENT['wedding']}", record_exception=False, set_status_on_exception=False
        ) as root:
            root.set_attributes({"florist.name": EVENT["florist"], "florist.run": self.label.run})
            try:
                self.arrange()
                root.set_attribute("florist.outcome", "arranged")
            except WeddingFailed as e:
                root.set_attribute("florist.outcome", "failed")
                root.record_exception(e)
                root.set_status(Status(StatusCode.ERROR, str(e)))
            return format(root.get_span_context().trace_id, "032x")


@contextmanager
def _instrumented(provider: TracerProvider) -> Iterator[None]:
    """OpenLLMetry's Ollama instrumentor on ``provider`` while the block runs. Its
    ``uninstrument`` (0.62.4) unwraps ``chat`` / ``generate`` / ``embeddings``, but it wrapped
    ``Client._request`` and ``AsyncClient._request``: those are put back here too, or a later
    play would trace every call twice (and this one's spans would keep going to ``provider``)."""
    instrumentor = OllamaInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield
    finally:
        instrumentor.uninstrument()
        unwrap(ollama.Client, "_request")
        unwrap(ollama.AsyncClient, "_request")


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the florist scenarios with OpenLLMetry's Ollama instrumentor and the app's spans on
    ``provider``; run name -> trace id."""
    if not labels:
        return {}
    out = {}
    with _instrumented(provider), OllamaServer(respond) as server:
        tracer = provider.get_tracer(APP_TRACER)
        client = ollama.Client(host=server.host)
        for label in labels:
            out[label.run] = Wedding(label, client, tracer, World(label)).run()
    return out

"""A community theatre's production desk staging a touring play's one-night booking with
**Semantic Kernel** ``ChatCompletionAgent``\\ s (``OpenAIChatCompletion`` on an ``AsyncOpenAI``
client against a scripted model on the conformance suite's fake OpenAI server,
``ModelServer(respond=...)``), traced into **MLflow**: Semantic Kernel's own OpenTelemetry
diagnostics bridged into MLflow's tracer provider, plus the app's own ``mlflow.start_span``
spans. No planscope code.

Sealed-79 split only (see README.md). The task: a touring company plays one night at the
theatre; pick the set piece from the prop store's inventory (read page by page), book a
rehearsal slot in a hall, have the fire officer inspect the set (an inspection, polled), book a
truck for the flats on the get-in day, invoice the touring company's account, mail the stage
manager. The theatre's tech crew draws its cue sheets with Graphviz, so the desk asks the model
for the plan as a DOT digraph:

* the app opens one MLflow ``AGENT`` span per booking (``booking {ref}``); a failed booking
  raises inside it, so MLflow records the exception and the ``ERROR`` status;
* the planner is a ``ChatCompletionAgent`` (``production_planner``, no plugins) run once per plan
  revision (under the app's ``plan revision {n}`` span); its answer holds a ```` ```dot ````
  block ``digraph plan { ... }``: one node per step with ``label="..."``, ``tool="<service>"``
  and the arguments as ``arg_<key>="<value>"`` (``"@<node>.<field>"`` an earlier step's
  output), edges ``a -> b;`` the order. The app reads it with a small hand-written reader. Asked
  again after a setback, the planner answers a new digraph whose settled nodes are
  ``style=filled`` with their ``output="..."``, the others the steps still to do;
* the executor is a ``ChatCompletionAgent`` (``stage_crew``) run per step attempt (under the
  app's ``step {node} attempt {n}`` span) with a plugin of ``@kernel_function`` services called
  through ``FunctionChoiceBehavior.Auto()``, its answer a **cue report** (``cue: GO|STOP``,
  ``fault:``, ``output: {json}`` or ``error: ...``);
* the services raise **stage-call faults** ``[<call>] text``, which Semantic Kernel hands the
  model as the function's result: ``[HOLD] ...; resume at HH:MM`` (the crew calls again
  ``after`` that time, in the same run), ``[RESET]`` (the app runs the step again, up to 8
  attempts), ``[REBLOCK] ... (use k=v)`` (a new digraph, up to 5), ``[STRIKE]`` (final); an
  inspection still pending after 12 reads is reported as ``[STALLED]``, final;
* after the last step the app checks the truck against the booking (``check truck against
  booking``, a ``GUARDRAIL`` span) and watches the get-in (``watch get-in {truck}``, its reads
  as span events).

MLflow's tracer provider is the museum agent's (one per process, OTLP to a loopback sink, a
relay to the play's provider). ``mlflow.semantic_kernel`` is not part of ``mlflow-tracing``
3.17.2 (only of the full ``mlflow`` package), so Semantic Kernel's own diagnostics
(``SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE``; its tracers go through
the process's global provider) are bridged in: the global relay hands the ``semantic_kernel``
spans to MLflow's provider for the play, MLflow's active span propagated into OpenTelemetry's
context so they nest under the app's spans. The planner trusts the stage manager's notes over
the booking sheet: the scenario's wrong value comes from a note. This source records no
context data (no starvation label).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Annotated, Any
from unittest import mock

import mlflow
from mlflow.entities import SpanEvent, SpanType
from opentelemetry.sdk.trace import TracerProvider

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from ._relay import global_provider
from .museum import _mlflow_provider, _Relay

# Semantic Kernel reads its diagnostics settings when imported
os.environ.setdefault("SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE", "true")
from openai import AsyncOpenAI
from semantic_kernel.agents import ChatCompletionAgent
from semantic_kernel.connectors.ai import FunctionChoiceBehavior
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
from semantic_kernel.functions import kernel_function

BOOKING: dict[str, Any] = {
    "ref": "TB-HL-2231",
    "company": "Harbour Lights Touring Company",
    "play": "The Lighthouse Keeper",
    "piece": "lantern gallery",
    "hall": "Studio B",
    "slot": "2027-06-10T14:00",
    "venue": "main house",
    "depot": "Riverside scene dock",
    "day": "2027-06-11",
    "account": "HL-30517",
    "amount": 2650.0,
    "contact": "sm@harbourlights.example",
}
PIECES = {
    "Seagull jetty": "The Seagull",
    "Arcadia garden wall": "Arcadia",
    "Godot tree": "Waiting for Godot",
}
"""Other shows' pieces in the prop store (the booking's piece is the touring play's)."""
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_READS = 12
"""Inspection reads in one crew run before the crew reports the inspection stalled."""
MAX_TOOL_CALLS = 30
PLANNER = "Booking sheet: "
"""How the planner's brief opens (a step's cue never does)."""
OUTPUTS = {
    "set": "piece_id",
    "rehearsal": "slot_id",
    "inspection": "certificate",
    "truck": "booking",
    "invoice": "invoice_id",
    "notice": "message_id",
}
"""Each step's output field, in the order the steps run."""


class StageFault(RuntimeError):
    """A service's failure, ``[<call>] text``."""

    def __init__(self, call: str, text: str):
        super().__init__(f"[{call}] {text}")


# --- the plan: a Graphviz DOT digraph ---------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """An argument taken from an earlier step's output: ``@set.piece_id``."""

    node: str
    field: str


@dataclass
class Node:
    """One node of the digraph: a step of the plan (or a settled one, ``style=filled``)."""

    name: str
    label: str
    tool: str
    args: dict[str, Any]
    filled: bool = False
    output: str = ""


_ATTR = re.compile(r'(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([\w.\-]+))')
_NODE = re.compile(r"^\s*(\w+)\s*\[(.*)\]\s*;?\s*$")
_EDGE = re.compile(r"^\s*(\w+(?:\s*->\s*\w+)+)\s*;?\s*$")


def _value(text: str) -> Any:
    ref = re.fullmatch(r"@(\w+)\.(\w+)", text)
    if ref:
        return Ref(ref[1], ref[2])
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"-?\d+\.\d+", text):
        return float(text)
    return text


def read_dot(text: str) -> list[Node]:
    """The plan's nodes, from the ```` ```dot ```` block of the planner's answer, in the edges'
    order (a topological order; ties in the order the nodes were written).

    >>> nodes = read_dot('''```dot
    ... digraph plan {
    ...   set [label="pick the set", tool="find_set_piece", style=filled, output="SP-1"];
    ...   rehearsal [label="book a slot", tool="book_rehearsal", arg_piece="@set.piece_id",
    ...              arg_hall="Studio B"];
    ...   set -> rehearsal;
    ... }
    ... ```''')
    >>> [(n.name, n.filled, n.output) for n in nodes], nodes[1].args
    ([('set', True, 'SP-1'), ('rehearsal', False, '')], \
{'piece': Ref(node='set', field='piece_id'), 'hall': 'Studio B'})
    """
    block = re.search(r"```dot\s*\n(.*?)```", text, re.DOTALL)
    body = block.group(1) if block else text
    graph = re.search(r"digraph\s+\w*\s*\{(.*)\}", body, re.DOTALL)
    if not graph:
        raise ValueError("no digraph in the plan")
    # join attribute lists written over several lines
    statements: list[str] = []
    for line in graph.group(1).splitlines():
        line = re.sub(r"//.*$", "", line).strip()
        if not line:
            continue
        if statements and statements[-1].count("[") > statements[-1].count("]"):
            statements[-1] += " " + line
        else:
            statements.append(line)
    nodes: dict[str, Node] = {}
    edges: list[tuple[str, str]] = []
    for st in statements:
        if m := _NODE.match(st):
            if m[1] in ("graph", "node", "edge"):
                continue
            attrs: dict[str, str] = {
                k: (q or b).replace('\\"', '"') for k, q, b in _ATTR.findall(m[2])
            }
            args = {k[4:]: _value(v) for k, v in attrs.items() if k.startswith("arg_")}
            nodes[m[1]] = Node(m[1], attrs.get("label", m[1]), attrs.get("tool", ""), args,
                               attrs.get("style") == "filled", attrs.get("output", ""))  # fmt: skip
        elif m := _EDGE.match(st):
            names = [n.strip() for n in m[1].split("->")]
            edges += list(pairwise(names))
    order = list(nodes)
    before = {n: {a for a, b in edges if b == n} for n in order}
    out: list[Node] = []
    while len(out) < len(order):
        ready = [n for n in order if nodes[n] not in out and before[n] <= {o.name for o in out}]
        if not ready:
            raise ValueError("the plan's edges make a cycle")
        out.append(nodes[ready[0]])
    return out


def _dot(value: Any) -> str:
    if isinstance(value, Ref):
        return f'"@{value.node}.{value.field}"'
    if isinstance(value, str):
        return '"' + value.replace('"', '\\"') + '"'
    return f'"{value}"'


def write_dot(ref: str, revision: int, nodes: list[Node]) -> str:
    """The planner's answer: a line of prose and the ```` ```dot ```` block."""
    lines = [
        f"Plan for booking {ref}, revision {revision}:",
        "",
        "```dot",
        "digraph plan {",
        "  rankdir=LR;",
        "  node [shape=box];",
    ]
    for n in nodes:
        attrs = [f"label={_dot(n.label)}", f"tool={_dot(n.tool)}"]
        if n.filled:
            attrs += ["style=filled", f"output={_dot(n.output)}"]
        else:
            attrs += [f"arg_{k}={_dot(v)}" for k, v in n.args.items()]
        lines.append(f"  {n.name} [{', '.join(attrs)}];")
    lines.append("  " + " -> ".join(n.name for n in nodes) + ";")
    return "\n".join([*lines, "}", "```"])


# --- the scripted model -------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _call(name: str, args: dict[str, Any], turn: int, tools: list[str]) -> dict[str, Any]:
    """A call of the offered function named ``name`` (Semantic Kernel offers ``Plugin-name``)."""
    offered = next((t for t in tools if t.rsplit("-", 1)[-1] == name), name)
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": offered, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _plan(brief: str) -> str:
    """The planner's digraph: the booking sheet's facts, the stage manager's notes trusted over
    them; after a setback with a ``use`` value that value; the settled steps filled."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Booking sheet"]) | json.loads(
        lines.get("Stage manager's notes", "{}")
    )
    settled: dict[str, str] = json.loads(lines.get("Settled", "{}"))
    revision = int(lines.get("Revision", "1"))
    for k, v in re.findall(r"\(use (\w+)=([^)]+)\)", lines.get("Setbacks", "")):
        facts[k] = v

    def out(node: str) -> Ref:
        return Ref(node, OUTPUTS[node])

    nodes = [
        Node("set", f"pick the {facts['piece']} for {facts['play']} from the prop store",
             "find_set_piece", {"play": facts["play"], "piece": facts["piece"]}),
        Node("rehearsal", f"book a rehearsal slot in {facts['hall']}", "book_rehearsal",
             {"piece": out("set"), "hall": facts["hall"], "slot": facts["slot"]}),
        Node("inspection", f"have the fire officer inspect the set in the {facts['venue']}",
             "fire_inspection", {"piece": out("set"), "rehearsal": out("rehearsal"),
                                 "venue": facts["venue"]}),
        Node("truck", f"book a truck for the flats on {facts['day']}", "book_truck",
             {"certificate": out("inspection"), "depot": facts["depot"], "day": facts["day"]}),
        Node("invoice", f"invoice {facts['company']}", "invoice_company",
             {"ref": facts["ref"], "account": facts["account"], "amount": facts["amount"],
              "truck": out("truck")}),
        Node("notice", "mail the stage manager", "mail_stage_manager",
             {"to": facts["contact"], "truck": out("truck"), "day": facts["day"]}),
    ]  # fmt: skip
    for n in nodes:
        if n.name in settled:
            n.filled, n.output = True, settled[n.name]
    return write_dot(facts["ref"], revision, nodes)


def _report(cue: str, **fields: Any) -> str:
    """The crew's cue report."""
    lines = [f"cue: {cue}"]
    lines += [f"{k}: {json.dumps(v) if k == 'output' else v}" for k, v in fields.items()]
    return "\n".join(lines)


def _crew(messages: list[dict[str, Any]], task: str, tools: list[str]) -> dict[str, Any]:
    """The crew's turn: make the call, call again ``after`` a hold, follow ``next_page``, read
    a pending inspection, answer the cue report."""
    found = re.search(r"^Call: (\w+) (.*)$", task, re.MULTILINE)
    assert found, task
    name, args = found.group(1), json.loads(found.group(2))
    turn = len(messages)
    calls: list[tuple[str, dict[str, Any], str]] = []
    pending: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            short = str(fn.get("name", "")).rsplit("-", 1)[-1]
            pending[c["id"]] = (short, json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool" and m.get("tool_call_id") in pending:
            calls.append((*pending.pop(m["tool_call_id"]), _text(m.get("content"))))
    if not calls:
        return _call(name, args, turn, tools)
    last, called, came_back = calls[-1]
    fault = re.search(r"\[(HOLD|RESET|REBLOCK|STRIKE)\] (.*)", came_back, re.DOTALL)
    if fault:
        kind, text = fault.group(1), fault.group(2).strip()
        resume = re.search(r"resume at (\d\d:\d\d)", text)
        if kind == "HOLD" and resume:
            return _call(last, called | {"after": resume.group(1)}, turn, tools)
        return _answer(_report("STOP", fault=kind, error=text))
    seen = json.loads(came_back)
    if seen.get("next_page"):
        return _call(last, called | {"page": seen["next_page"]}, turn, tools)
    if seen.get("state") == "PENDING":
        reads = sum(c[0] == "inspection_status" for c in calls)
        if reads >= MAX_READS:
            note = f"inspection {seen['inspection_id']} still PENDING after {reads} reads"
            return _answer(_report("STOP", fault="STALLED", error=note))
        return _call("inspection_status", {"inspection_id": seen["inspection_id"]}, turn, tools)
    return _answer(_report("GO", fault="none", output=seen))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the planner's digraph, or the
    crew's next turn.

    >>> brief = PLANNER + json.dumps(BOOKING)
    >>> msg = respond({"messages": [{"role": "user", "content": brief}]})
    >>> text = msg["choices"][0]["message"]["content"]
    >>> [line.split(", ")[-1] for line in text.splitlines() if line.strip().startswith("truck [")]
    ['arg_day="2027-06-11"];']
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if task.startswith(PLANNER):
        return completion(body, _answer(_plan(task)))
    tools = [str((t.get("function") or {}).get("name")) for t in body.get("tools") or ()]
    return completion(body, _crew(messages, task, tools))


# --- the theatre's services -------------------------------------------------------------------
@dataclass
class World:
    """The prop store, rehearsal halls, fire office, truck depot, box-office ledger and mail of
    one booking."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    pieces: dict[str, str] = field(default_factory=dict)
    """Set piece -> the play it belongs to."""
    inspections: dict[str, int] = field(default_factory=dict)
    trucks: list[dict[str, str]] = field(default_factory=list)
    invoices: list[str] = field(default_factory=list)

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
        if f["call"] == "HOLD":
            raise StageFault("HOLD", f"{f['text']}; resume at {f['hint']}")
        if f["call"] == "REBLOCK":
            raise StageFault("REBLOCK", f"{f['text']} (use {f['hint']})")
        raise StageFault(f["call"], f["text"])


class TheatrePlugin:
    """The theatre's services, bound to one booking's world."""

    def __init__(self, world: World):
        self.world = world

    @kernel_function(description="Find a set piece of a play in the prop store's inventory, a "
                     "page at a time.")  # fmt: skip
    def find_set_piece(
        self,
        play: Annotated[str, "the play the piece belongs to"],
        piece: Annotated[str, "the set piece"],
        page: Annotated[int, "the inventory page"] = 1,
    ) -> str:
        world = self.world
        world.fault("find_set_piece")
        code = "".join(w[0] for w in play.split()).upper()
        if page < int(world.params.get("pages", 1)):
            other = [{"piece_id": f"SP-{code}-{page}{n}", "state": "on loan"} for n in (1, 2)]
            return json.dumps({"pieces": other, "next_page": page + 1})
        show = play if piece == BOOKING["piece"] else PIECES.get(piece, "another show")
        found = f"SP-{code}-{world.label.seed}"
        world.pieces[found] = show
        return json.dumps({"piece_id": found, "play": show, "piece": piece, "bay": "B4"})

    @kernel_function(description="Book a rehearsal slot in a hall for a set piece.")
    def book_rehearsal(
        self,
        piece: Annotated[str, "the set piece"],
        hall: Annotated[str, "the rehearsal hall"],
        slot: Annotated[str, "the slot's start (ISO time)"],
        after: Annotated[str, "call again after this time (HH:MM), when told to hold"] = "",
    ) -> str:
        world = self.world
        world.fault("book_rehearsal")
        moved = world.params.get("hall_to")
        if moved and hall == BOOKING["hall"]:
            raise StageFault("REBLOCK", f"{hall} is being re-rigged this week (use hall={moved})")
        play = world.pieces.get(piece, "")
        if play != BOOKING["play"]:
            raise StageFault(
                "STRIKE",
                f"the {slot} slot in {hall} is held for {BOOKING['company']}'s "
                f"{BOOKING['play']}; piece {piece} belongs to {play or 'no known play'}",
            )
        slot_id = f"RH-{world.label.seed}-{hall[-1]}"
        return json.dumps(
            {"slot_id": slot_id, "hall": hall, "starts": slot, "call": after or "13:30"}
        )

    @kernel_function(description="Ask the fire officer to inspect a set piece for a venue.")
    def fire_inspection(
        self,
        piece: Annotated[str, "the set piece"],
        rehearsal: Annotated[str, "the rehearsal slot it stands in"],
        venue: Annotated[str, "the venue"],
    ) -> str:
        world = self.world
        world.fault("fire_inspection")
        inspection = f"FI-{world.label.seed}-{len(world.inspections) + 1}"
        world.inspections[inspection] = 0
        if world.params.get("stuck") or "polls" in world.params:
            return json.dumps({"inspection_id": inspection, "state": "PENDING", "venue": venue})
        return json.dumps(
            {"inspection_id": inspection, "state": "PASSED", "certificate": f"FC-{inspection[3:]}"}
        )

    @kernel_function(description="A fire inspection's state; its certificate once passed.")
    def inspection_status(self, inspection_id: Annotated[str, "the inspection"]) -> str:
        world = self.world
        world.inspections[inspection_id] += 1
        if world.params.get("stuck") or world.inspections[inspection_id] < int(
            world.params.get("polls", 0)
        ):
            return json.dumps({"inspection_id": inspection_id, "state": "PENDING"})
        return json.dumps(
            {
                "inspection_id": inspection_id,
                "state": "PASSED",
                "certificate": f"FC-{inspection_id[3:]}",
            }
        )

    @kernel_function(description="Book a truck from a depot to carry the flats on a day.")
    def book_truck(
        self,
        certificate: Annotated[str, "the set's fire certificate"],
        depot: Annotated[str, "the truck depot"],
        day: Annotated[str, "the get-in day (YYYY-MM-DD)"],
        after: Annotated[str, "call again after this time (HH:MM), when told to hold"] = "",
    ) -> str:
        world = self.world
        world.fault("book_truck")
        if depot != BOOKING["depot"] and depot not in world.params.get("depots", ()):
            raise StageFault("STRIKE", f"no truck for scenery leaves from {depot}")
        booking = f"TR-{world.label.seed}-{len(world.trucks) + 1}"
        world.trucks.append({"booking": booking, "day": day, "depot": depot})
        return json.dumps(
            {"booking": booking, "day": day, "depot": depot, "loads": after or "08:00"}
        )

    @kernel_function(description="Invoice the touring company's account for the booking.")
    def invoice_company(
        self,
        ref: Annotated[str, "the booking reference"],
        account: Annotated[str, "the touring company's account"],
        amount: Annotated[float, "the amount in GBP"],
        truck: Annotated[str, "the truck booking the invoice covers"],
        after: Annotated[str, "call again after this time (HH:MM), when told to hold"] = "",
    ) -> str:
        world = self.world
        world.fault("invoice_company")
        if account != BOOKING["account"]:
            raise StageFault("STRIKE", f"the box-office ledger holds no account {account}")
        world.invoices.append(truck)
        return json.dumps(
            {"invoice_id": f"INV-{world.label.seed}-{len(world.invoices)}", "ref": ref}
        )

    @kernel_function(description="Mail the touring company's stage manager the get-in.")
    def mail_stage_manager(
        self,
        to: Annotated[str, "the stage manager's address"],
        truck: Annotated[str, "the truck booking"],
        day: Annotated[str, "the get-in day"],
        after: Annotated[str, "call again after this time (HH:MM), when told to hold"] = "",
    ) -> str:
        self.world.fault("mail_stage_manager")
        return json.dumps({"message_id": f"MSG-{truck}-{day[-2:]}", "to": to})


# --- the app --------------------------------------------------------------------------------
class BookingFailed(Exception):
    """The touring play was not staged (the reason is the message)."""


class Rerun(Exception):
    """The crew's cue was reset: run the step again."""


class Replan(Exception):
    """The crew's cue needs re-blocking: ask for a new digraph."""


class ProductionDesk:
    """One touring booking, from the booking sheet to the watched get-in."""

    def __init__(self, label: Label, client: AsyncOpenAI):
        self.label = label
        self.world = World(label)
        service = OpenAIChatCompletion(ai_model_id=MODEL, async_client=client)
        self.planner = ChatCompletionAgent(
            service=service,
            name="production_planner",
            instructions="You plan a touring booking for the theatre. Answer the plan as a "
            "```dot block holding `digraph plan { ... }`: one node per step with label, tool and "
            'arg_<key> attributes ("@node.field" for an earlier step\'s output), edges for the '
            "order, settled steps style=filled with their output. Trust the stage manager's notes.",
        )
        behaviour = FunctionChoiceBehavior.Auto()
        behaviour.maximum_auto_invoke_attempts = MAX_TOOL_CALLS
        self.crew = ChatCompletionAgent(
            service=service,
            name="stage_crew",
            instructions="Carry out the one step you are given with the theatre's services, then "
            "answer its cue report: 'cue: GO|STOP', 'fault: ...', 'output: {json}' or "
            "'error: ...'.",
            plugins=[TheatrePlugin(self.world)],
            function_choice_behavior=behaviour,
        )
        self.outputs: dict[str, str] = {}
        """Settled step -> its output."""
        self.setbacks: list[str] = []

    def brief(self, revision: int) -> str:
        notes = {
            k: self.label.params[k] for k in ("piece", "day", "account") if k in self.label.params
        }
        lines = [f"{PLANNER}{json.dumps(BOOKING)}"]
        if notes:
            lines.append(f"Stage manager's notes: {json.dumps(notes)}")
        lines.append(f"Objective: stage {BOOKING['play']} for one night ({BOOKING['ref']}).")
        if revision > 1:
            lines += [
                f"Revision: {revision}",
                f"Settled: {json.dumps(self.outputs)}",
                f"Setbacks: {' | '.join(self.setbacks)}",
            ]
        return "\n".join(lines)

    async def plan(self, revision: int) -> list[Node]:
        with mlflow.start_span(name=f"plan revision {revision}", span_type=SpanType.CHAIN) as span:
            brief = self.brief(revision)
            span.set_inputs({"brief": brief})
            reply = await self.planner.get_response(messages=brief)
            answer = str(reply.message.content)
            span.set_outputs({"plan": answer})
            nodes = read_dot(answer)
            span.set_attribute("playhouse.plan.steps", [n.name for n in nodes if not n.filled])
        for n in nodes:
            if n.filled:
                self.outputs.setdefault(n.name, n.output)
        return nodes

    def value(self, arg: Any) -> Any:
        """An argument with its reference filled in."""
        return self.outputs[arg.node] if isinstance(arg, Ref) else arg

    async def attempt(self, node: Node, attempt: int) -> None:
        """One crew run of a step, its references filled in."""
        args = {k: self.value(v) for k, v in node.args.items()}
        task = (
            f"Step {node.name} (attempt {attempt}): {node.label}\n"
            f"Call: {node.tool} {json.dumps(args)}"
        )
        with mlflow.start_span(
            name=f"step {node.name} attempt {attempt}", span_type=SpanType.CHAIN
        ) as span:
            span.set_inputs({"cue": task})
            reply = await self.crew.get_response(messages=task)
            report = dict(re.findall(r"^(\w+): (.*)$", str(reply.message.content), re.MULTILINE))
            span.set_outputs(report)
            if report.get("cue") == "GO":
                self.outputs[node.name] = str(json.loads(report["output"])[OUTPUTS[node.name]])
                return
            span.set_status("ERROR")
            fault = report.get("fault", "STRIKE")
            span.set_attribute("playhouse.fault", fault)
        text = f"{node.name} ({node.tool}) [{fault}] {report.get('error', '')}"
        if fault == "RESET":
            raise Rerun(text)
        if fault == "REBLOCK":
            raise Replan(text)
        raise BookingFailed(text)

    async def work(self) -> None:
        for revision in range(1, MAX_PLANS + 1):
            nodes = await self.plan(revision)
            replan = False
            for node in nodes:
                if node.filled:
                    continue
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    try:
                        await self.attempt(node, attempt)
                        break
                    except Rerun as e:
                        if attempt == MAX_ATTEMPTS:
                            raise BookingFailed(str(e)) from e
                    except Replan as e:
                        self.setbacks.append(str(e))
                        replan = True
                        break
                if replan:
                    break
            if not replan:
                return
        raise BookingFailed(f"no plan holds after {MAX_PLANS}: {self.setbacks[-1]}")

    def check(self) -> None:
        """The app's own checks once the stage manager is mailed: the truck against the booking,
        then the get-in up to the curtain."""
        truck = self.world.trucks[-1]
        with mlflow.start_span(
            name="check truck against booking", span_type=SpanType.GUARDRAIL
        ) as span:
            span.set_inputs({"truck": truck["booking"], "booking_day": BOOKING["day"]})
            span.set_outputs({"truck_day": truck["day"]})
            if truck["day"] != BOOKING["day"]:
                raise BookingFailed(
                    f"truck {truck['booking']} carries the flats on {truck['day']}; booking "
                    f"{BOOKING['ref']} plays on {BOOKING['day']}"
                )
        with mlflow.start_span(name=f"watch get-in {truck['booking']}") as span:
            span.set_inputs({"truck": truck["booking"], "depot": truck["depot"]})
            for read, stage in enumerate(("loaded", "at the dock", "flats up", "half hour"), 1):
                if self.label.scenario == "external_blackout" and read > int(
                    self.label.params["reads"]
                ):
                    raise BookingFailed(
                        f"a power cut blacks out the theatre at '{stage}'; "
                        f"{BOOKING['company']} cancels the night"
                    )
                span.add_event(
                    # SpanEvent is a concrete dataclass; mypy reads its base's abstract from_proto
                    SpanEvent("get-in", attributes={"read": read, "stage": stage})  # type: ignore[abstract]
                )
            span.set_outputs({"state": "curtain up"})

    async def run(self) -> str:
        try:
            with mlflow.start_span(
                name=f"booking {BOOKING['ref']}", span_type=SpanType.AGENT
            ) as root:
                # MLflow's trace id is "tr-" and the OpenTelemetry trace id in hex
                trace_id = root.trace_id.removeprefix("tr-")
                root.set_inputs(BOOKING | {"run": self.label.run})
                await self.work()
                self.check()
                root.set_outputs({"outcome": "staged", "outputs": self.outputs})
        except BookingFailed:  # MLflow recorded the exception and the root's ERROR status
            pass
        return trace_id


async def _play(labels: list[Label], base_url: str) -> dict[str, str]:
    client = AsyncOpenAI(api_key="test", base_url=base_url, max_retries=0)
    try:
        return {label.run: await ProductionDesk(label, client).run() for label in labels}
    finally:
        await client.close()


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the playhouse scenarios, Semantic Kernel's diagnostics bridged into MLflow's tracer
    provider (museum's, relayed to ``provider``) and the app's MLflow spans.

    Sets the process's global tracer provider (once, for good) to the corpus's relay, which
    hands Semantic Kernel's spans to MLflow's provider while the play is under way.
    """
    if not labels:
        return {}
    mlflow_provider = _mlflow_provider()
    quiet = logging.getLogger("mlflow")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    # the kernel logs every failed function call; the spans carry them
    kernel_log = logging.getLogger("semantic_kernel")
    kernel_level = kernel_log.level
    kernel_log.setLevel(logging.CRITICAL)
    _Relay.target = provider
    try:
        # MLflow keeps its active span in a context of its own unless told to put it in
        # OpenTelemetry's too, where Semantic Kernel's tracer looks for its parent
        propagate = {"MLFLOW_TRACE_PROPAGATE_TO_OTEL_CONTEXT": "true"}
        with (
            mock.patch.dict(os.environ, propagate),
            global_provider(mlflow_provider),
            ModelServer(respond=respond) as server,
        ):
            return asyncio.run(_play(labels, server.base_url("corpus-playhouse")))
    finally:
        _Relay.target = None
        kernel_log.setLevel(kernel_level)
        quiet.setLevel(level)

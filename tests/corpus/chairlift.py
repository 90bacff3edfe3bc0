"""A ski resort's lift maintenance desk replacing a chairlift sheave, written by hand on the
**Google Gen AI SDK** (``google-genai``, no agent framework), traced by **MLflow's Gemini
autologging** (``mlflow.gemini.autolog()`` from the lightweight ``mlflow-tracing`` SDK, which
patches ``google.genai``'s ``Models.generate_content`` and ``Models._generate_content``) and the
app's own ``mlflow.start_span`` spans. The model: a scripted model behind the small fake Gemini
API of :mod:`tests.corpus._fake_gemini`, reached by the SDK over HTTP. No planscope code.

Sealed-81 split only (see README.md). The job: work order ``WO-SX-3318`` replaces a worn sheave
assembly on tower T7 of the Summit Express chairlift: fetch a sheave assembly of the tower's
series from the parts depot's stock list (read page by page), close the lift for a window on
the work day, take a wind reading at the summit station (polled until the wind is calm enough
to lift), book the crane crew, charge the lift operator's cost centre, mail the mountain
manager. The maintenance desk draws everything else in Mermaid, so it asks for the plan as a
**Mermaid flowchart**:

* the app opens one MLflow ``AGENT`` span per work order (``lift work order {wo}``); a failed
  work order raises inside it, so MLflow records the exception and the ``ERROR`` status;
* one planner ``generate_content`` call (no tools; under the app's ``plan revision {n}`` span)
  whose text answer holds a fenced ```` ```mermaid ```` block, ``flowchart TD``: one node per
  step, ``s1["fetch sheave<br/>tool: depot.stock<br/>series=PX-450<br/>count=2"]``, the purpose
  first, then the tool, then the arguments as ``key=value`` lines, an earlier step's output as
  ``key=@s1.part_id``; edges ``s1 --> s2`` give the order. The app reads the block with a small
  hand-written reader (no Mermaid library). Asked again after a setback, the planner answers a
  new flowchart whose settled nodes carry ``:::done`` and their output (``done:
  part_id=SA-...``), the node ids kept;
* per step attempt (under the app's ``step {node} attempt {n}`` span) an executor conversation
  with function calling, written by hand: the tools are ``types.Tool(function_declarations=...)``,
  automatic function calling disabled, the app runs each ``function_call`` part itself under a
  ``TOOL`` span named after the tool and answers a ``function_response`` part (``{"output":
  ...}``, or ``{"error": ..., "code": ...}`` with the service's hints when the call failed),
  until the model answers its **work log** (``outcome: done|rerun|replan|failed|stalled``,
  ``output: {json}`` or ``error: ...``);
* the services raise :class:`LiftDeskError` with a code: ``RETRY_LATER`` with ``retry_at``
  (the executor calls again ``at`` that time, in the same conversation), ``INTERRUPTED`` (the
  executor logs ``rerun``: the app runs the step again, up to 8 attempts), ``CONFLICT`` with
  ``(use key=value)`` (``replan``: a new flowchart, up to 5), ``REFUSED`` (final); a wind
  reading still gusting after 12 reads is logged ``stalled``, final;
* after the last step the app checks the closure against the work order (``check closure
  against work order``, a ``GUARDRAIL`` span) and watches the reopening (``watch reopening
  {closure}``, the reopening runs as span events).

MLflow's tracer provider is the museum agent's (one per process, OTLP to a loopback sink, a
relay to the play's provider); MLflow's Gemini autologging is turned off when the play returns.
The planner trusts the lift mechanic's notes over the work order: the scenario's wrong value
comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import itertools
import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

import mlflow
import mlflow.gemini
from google import genai
from google.genai import types
from mlflow.entities import SpanEvent, SpanType
from opentelemetry.sdk.trace import TracerProvider

from ._fake_gemini import MODEL, GeminiServer, Parts, function_calls, texts
from ._labels import Label
from .museum import _mlflow_provider, _Relay

ORDER: dict[str, Any] = {
    "wo": "WO-SX-3318",
    "resort": "Pinecrest Mountain",
    "lift": "Summit Express",
    "tower": "T7",
    "series": "PX-450",
    "liner": "urethane",
    "count": 2,
    "day": "2027-06-09",
    "hours": "06:00-14:00",
    "station": "Summit station",
    "max_gust": 40,
    "crew": "Alpine Crane crew 2",
    "cost_centre": "LO-77214",
    "amount": 12650.0,
    "manager": "mountain.manager@pinecrest.example",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_READS = 12
"""Wind readings in one executor conversation before the executor logs the reading stalled."""
MAX_TURNS = 24
PLANNER = "You are the lift maintenance desk's planner."
EXECUTOR = "You are the lift maintenance desk's executor."
OUTPUTS = {
    "s1": "part_id",
    "s2": "closure_id",
    "s3": "clearance",
    "s4": "booking",
    "s5": "charge_id",
    "s6": "message_id",
}
"""Each step's output field, in the order the steps run."""


def _declare(name: str, description: str, **props: str) -> types.FunctionDeclaration:
    """A function declaration; a property whose type ends in ``?`` is optional."""
    schema = {k: types.Schema(type=types.Type(v.rstrip("?"))) for k, v in props.items()}
    required = [k for k, v in props.items() if not v.endswith("?")]
    return types.FunctionDeclaration(
        name=name,
        description=description,
        parameters=types.Schema(type=types.Type.OBJECT, properties=schema, required=required),
    )


DECLARATIONS = [
    _declare(
        "depot.stock",
        "Sheave assemblies of a series and liner in the parts depot's stock list, a page at a "
        "time.",
        series="STRING",
        liner="STRING",
        count="INTEGER",
        page="INTEGER?",
    ),
    _declare(
        "lift.close",
        "Close a lift for a maintenance window on a day, for a part's fitting.",
        lift="STRING",
        day="STRING",
        hours="STRING",
        part="STRING",
        at="STRING?",
    ),
    _declare(
        "wind.reading",
        "Start a wind reading at a weather station for a closure; its clearance once calm.",
        station="STRING",
        closure="STRING",
        max_gust="INTEGER",
    ),
    _declare(
        "wind.status", "A wind reading's state; its clearance once calm.", reading_id="STRING"
    ),
    _declare(
        "crane.book",
        "Book a crane crew to lift a sheave assembly onto a tower on a day.",
        crew="STRING",
        tower="STRING",
        day="STRING",
        part="STRING",
        clearance="STRING",
        at="STRING?",
    ),
    _declare(
        "ledger.charge",
        "Charge a work order to the lift operator's cost centre.",
        cost_centre="STRING",
        amount="NUMBER",
        wo="STRING",
        booking="STRING",
        at="STRING?",
    ),
    _declare(
        "mail.send",
        "Mail the mountain manager the closure and the crane booking.",
        to="STRING",
        closure="STRING",
        booking="STRING",
        day="STRING",
        at="STRING?",
    ),
]
TOOLS = [types.Tool(function_declarations=DECLARATIONS)]
_DECLARED = {str(d.name): d for d in DECLARATIONS}


# --- the plan: a Mermaid flowchart ----------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """An argument taken from an earlier step's output: ``@s1.part_id``."""

    node: str
    field: str


@dataclass
class Node:
    """One node of the flowchart: a step of the plan."""

    id: str
    purpose: str
    tool: str = ""
    args: dict[str, str | Ref] = field(default_factory=dict)
    done: dict[str, str] = field(default_factory=dict)
    """A settled node's output (``done: field=value``)."""


_NODE = re.compile(r'^\s*(\w+)\["(.*)"\](?::::(\w+))?\s*;?\s*$')
_EDGE = re.compile(r"^\s*(\w+)\s*-->\s*(\w+)\s*;?\s*$")


def read_flowchart(text: str) -> list[Node]:
    """The plan's nodes in the order the edges give (the order they are declared where the
    edges say nothing), from the first ```` ```mermaid ```` block of the planner's answer.

    >>> nodes = read_flowchart('''Plan:
    ... ```mermaid
    ... flowchart TD
    ...     s1["fetch sheave<br/>done: part_id=SA-1"]:::done
    ...     s2["close the lift<br/>tool: lift.close<br/>day=2027-06-09<br/>part=@s1.part_id"]
    ...     s1 --> s2
    ... ```''')
    >>> [(n.id, n.tool, n.args, n.done) for n in nodes]
    [('s1', '', {}, {'part_id': 'SA-1'}), ('s2', 'lift.close', \
{'day': '2027-06-09', 'part': Ref(node='s1', field='part_id')}, {})]
    """
    block = re.search(r"```mermaid\s*\n(.*?)```", text, re.DOTALL)
    if not block:
        raise ValueError("no mermaid block in the plan")
    lines = block.group(1).splitlines()
    if not lines or not lines[0].strip().startswith(("flowchart", "graph")):
        raise ValueError("the mermaid block is not a flowchart")
    nodes: dict[str, Node] = {}
    edges: list[tuple[str, str]] = []
    for line in lines[1:]:
        if line.strip().startswith(("%%", "classDef")) or not line.strip():
            continue
        edge = _EDGE.match(line)
        if edge:
            edges.append((edge.group(1), edge.group(2)))
            continue
        m = _NODE.match(line)
        if not m:
            raise ValueError(f"cannot read the flowchart line {line.strip()!r}")
        purpose, *rest = re.split(r"<br\s*/?>", m.group(2))
        node = Node(m.group(1), purpose.strip())
        for item in rest:
            key, _, value = item.strip().partition("=")
            if key.startswith("tool:"):
                node.tool = key.removeprefix("tool:").strip()
            elif key.startswith("done:"):
                node.done[key.removeprefix("done:").strip()] = value
            elif value.startswith("@"):
                source, _, out = value[1:].partition(".")
                node.args[key] = Ref(source, out)
            else:
                node.args[key] = value
        if m.group(3) == "done" and not node.done:
            node.done["status"] = "done"
        nodes[node.id] = node
    order = list(nodes)
    for a, b in edges:  # each edge puts its target after its source
        if order.index(b) < order.index(a):
            order.remove(b)
            order.insert(order.index(a) + 1, b)
    return [nodes[n] for n in order]


def write_flowchart(wo: str, revision: int, nodes: list[Node]) -> str:
    """The planner's answer: a sentence, then the Mermaid flowchart."""
    lines = ["flowchart TD", f"    %% work order {wo}, revision {revision}"]
    for n in nodes:
        if n.done:
            body = [n.purpose, *(f"done: {k}={v}" for k, v in n.done.items())]
            lines.append(f'    {n.id}["{"<br/>".join(body)}"]:::done')
            continue
        args = [f"{k}=@{v.node}.{v.field}" if isinstance(v, Ref) else f"{k}={v}"
                for k, v in n.args.items()]  # fmt: skip
        lines.append(f'    {n.id}["{"<br/>".join([n.purpose, f"tool: {n.tool}", *args])}"]')
    lines += [f"    {a.id} --> {b.id}" for a, b in itertools.pairwise(nodes)]
    if any(n.done for n in nodes):
        lines.append("    classDef done fill:#d8f0d8,stroke:#3a3")
    head = f"Here is the plan for {wo} (revision {revision}), one node per step:"
    return head + "\n\n```mermaid\n" + "\n".join(lines) + "\n```"


# --- the scripted model -------------------------------------------------------------------
def _plan(brief: str) -> str:
    """The planner's flowchart: the work order's facts, the lift mechanic's notes trusted over
    them; after a setback with a ``use`` value that value; settled nodes marked done."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Work order"]) | json.loads(lines.get("Lift mechanic's notes", "{}"))
    settled: dict[str, str] = json.loads(lines.get("Settled", "{}"))
    revision = int(lines.get("Revision", "1"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)

    def out(node: str) -> Ref:
        return Ref(node, OUTPUTS[node])

    nodes = [
        Node("s1", "fetch sheave", "depot.stock",
             {"series": facts["series"], "liner": facts["liner"], "count": str(facts["count"])}),
        Node("s2", f"close {facts['lift']} on {facts['day']}", "lift.close",
             {"lift": facts["lift"], "day": facts["day"], "hours": facts["hours"],
              "part": out("s1")}),
        Node("s3", "read the wind at the summit", "wind.reading",
             {"station": facts["station"], "closure": out("s2"),
              "max_gust": str(facts["max_gust"])}),
        Node("s4", f"book the crane crew for tower {facts['tower']}", "crane.book",
             {"crew": facts["crew"], "tower": facts["tower"], "day": facts["day"],
              "part": out("s1"), "clearance": out("s3")}),
        Node("s5", "charge the lift operator's cost centre", "ledger.charge",
             {"cost_centre": facts["cost_centre"], "amount": str(facts["amount"]),
              "wo": facts["wo"], "booking": out("s4")}),
        Node("s6", "mail the mountain manager", "mail.send",
             {"to": facts["manager"], "closure": out("s2"), "booking": out("s4"),
              "day": facts["day"]}),
    ]  # fmt: skip
    for n in nodes:
        if n.id in settled:
            n.done = {OUTPUTS[n.id]: settled[n.id]}
    return write_flowchart(facts["wo"], revision, nodes)


def _log(outcome: str, **fields: Any) -> Parts:
    """The executor's work log."""
    lines = [f"outcome: {outcome}"]
    lines += [f"{k}: {json.dumps(v) if k == 'output' else v}" for k, v in fields.items()]
    return [{"text": "\n".join(lines)}]


def _call(name: str, args: dict[str, Any]) -> Parts:
    return [{"functionCall": {"name": name, "args": args}}]


def _execute(contents: list[dict[str, Any]]) -> Parts:
    """The executor's next turn: make the call, call again ``at`` a ``RETRY_LATER``, follow
    ``next_page``, read a gusting wind reading, log the outcome."""
    task = texts(contents[0]["parts"])
    found = re.search(r"^Call: (\S+) (.*)$", task, re.MULTILINE)
    assert found, task
    name, args = found.group(1), json.loads(found.group(2))
    calls = function_calls(contents)
    if not calls:
        return _call(name, args)
    last = calls[-1]
    said = last.response
    if "error" in said:
        code, text = str(said.get("code")), str(said["error"])
        if code == "RETRY_LATER":
            return _call(last.name, last.args | {"at": said["retry_at"]})
        outcome = {"INTERRUPTED": "rerun", "CONFLICT": "replan"}.get(code, "failed")
        return _log(outcome, error=f"{code}: {text}")
    seen = said["output"]
    if seen.get("next_page"):
        return _call(last.name, last.args | {"page": seen["next_page"]})
    if seen.get("state") == "GUSTING":
        reads = sum(c.name == "wind.status" for c in calls)
        if reads >= MAX_READS:
            note = f"wind reading {seen['reading_id']} still GUSTING after {reads} reads"
            return _log("stalled", error=note)
        return _call("wind.status", {"reading_id": seen["reading_id"]})
    return _log("done", output=seen)


def respond(body: dict[str, Any]) -> Parts:
    """The scripted model's parts for one ``generateContent`` request: the planner's flowchart
    or the executor's next turn.

    >>> brief = "Work order: " + json.dumps(ORDER)
    >>> asked = {"systemInstruction": {"parts": [{"text": PLANNER}]},
    ...          "contents": [{"role": "user", "parts": [{"text": brief}]}]}
    >>> [n.args for n in read_flowchart(respond(asked)[0]["text"]) if n.id == "s3"]
    [{'station': 'Summit station', 'closure': Ref(node='s2', field='closure_id'), 'max_gust': '40'}]
    """
    system = texts((body.get("systemInstruction") or {}).get("parts") or [])
    contents = body.get("contents") or []
    if PLANNER in system:
        return [{"text": _plan(texts(contents[0]["parts"]))}]
    if EXECUTOR in system:
        return _execute(contents)
    return [{"text": "Not a lift maintenance matter."}]


# --- the lift maintenance desk's services -----------------------------------------------------
class LiftDeskError(RuntimeError):
    """A service's failure: its code, text and hints."""

    def __init__(self, code: str, text: str, **hints: Any) -> None:
        super().__init__(f"{code}: {text}")
        self.code, self.text, self.hints = code, text, hints


@dataclass
class World:
    """The parts depot, lift desk, weather station, crane firm, ledger and mail of one work
    order."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    parts: dict[str, str] = field(default_factory=dict)
    """Sheave assembly -> its series."""
    readings: dict[str, int] = field(default_factory=dict)
    closures: list[dict[str, str]] = field(default_factory=list)
    bookings: list[str] = field(default_factory=list)
    charges: list[str] = field(default_factory=list)

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
        code = f["code"]
        if code == "RETRY_LATER":
            raise LiftDeskError(code, f"{f['text']}; retry at {f['hint']}", retry_at=f["hint"])
        if code == "CONFLICT":
            raise LiftDeskError(code, f"{f['text']} (use {f['hint']})")
        raise LiftDeskError(code, f["text"])

    def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Run the service ``name`` (``depot.stock`` -> :meth:`depot_stock`)."""
        self.fault(name)
        method = getattr(self, name.replace(".", "_"))
        result: dict[str, Any] = method(**args)
        return result

    def depot_stock(self, series: str, liner: str, count: int, page: int = 1) -> dict[str, Any]:
        seed = self.label.seed
        if page < int(self.params.get("pages", 1)):
            short = [{"part_id": f"SA-{series}-{page}{n}", "on_hand": n - 1} for n in (1, 2)]
            return {"assemblies": short, "next_page": page + 1}
        part = f"SA-{series.replace('-', '')}-{seed}"
        self.parts[part] = series
        return {"part_id": part, "series": series, "liner": liner, "on_hand": count + 1}

    def lift_close(
        self, lift: str, day: str, hours: str, part: str, at: str = ""
    ) -> dict[str, Any]:
        moved = self.params.get("hours_to")
        if moved and hours == ORDER["hours"]:
            raise LiftDeskError(
                "CONFLICT",
                f"{lift} is booked {hours} for the race team's training on {day} "
                f"(use hours={moved})",
            )
        closure = f"CL-{self.label.seed}-{len(self.closures) + 1}"
        self.closures.append({"closure_id": closure, "day": day, "hours": hours, "part": part})
        return {"closure_id": closure, "lift": lift, "day": day, "hours": hours}

    def wind_reading(self, station: str, closure: str, max_gust: int) -> dict[str, Any]:
        reading = f"WR-{self.label.seed}-{len(self.readings) + 1}"
        self.readings[reading] = 0
        if self.params.get("stuck") or "polls" in self.params:
            return {"reading_id": reading, "state": "GUSTING", "gust_kmh": max_gust + 17}
        return {"reading_id": reading, "state": "CALM", "clearance": f"WC-{reading[3:]}"}

    def wind_status(self, reading_id: str) -> dict[str, Any]:
        self.readings[reading_id] += 1
        reads = self.readings[reading_id]
        if self.params.get("stuck") or reads < int(self.params.get("polls", 0)):
            return {"reading_id": reading_id, "state": "GUSTING", "gust_kmh": 45 + reads % 7}
        return {"reading_id": reading_id, "state": "CALM", "clearance": f"WC-{reading_id[3:]}"}

    def crane_book(
        self, crew: str, tower: str, day: str, part: str, clearance: str, at: str = ""
    ) -> dict[str, Any]:
        if crew != ORDER["crew"] and crew not in self.params.get("crews", ()):
            raise LiftDeskError("REFUSED", f"no crane crew called {crew} on the firm's roster")
        series = self.parts.get(part, "")
        if series != ORDER["series"]:
            raise LiftDeskError(
                "REFUSED",
                f"the rigging plan for {ORDER['lift']} tower {tower} lifts a {ORDER['series']} "
                f"head; assembly {part} is {series or 'unknown'}",
            )
        booking = f"CR-{self.label.seed}-{len(self.bookings) + 1}"
        self.bookings.append(booking)
        return {"booking": booking, "crew": crew, "day": day, "on_site": at or "05:30"}

    def ledger_charge(
        self, cost_centre: str, amount: float, wo: str, booking: str, at: str = ""
    ) -> dict[str, Any]:
        if cost_centre != ORDER["cost_centre"]:
            raise LiftDeskError("REFUSED", f"the resort's ledger has no cost centre {cost_centre}")
        self.charges.append(booking)
        return {"charge_id": f"CH-{self.label.seed}-{len(self.charges)}", "wo": wo}

    def mail_send(
        self, to: str, closure: str, booking: str, day: str, at: str = ""
    ) -> dict[str, Any]:
        return {"message_id": f"MSG-{closure}-{day[-2:]}", "to": to}


# --- the app --------------------------------------------------------------------------------
class WorkOrderFailed(Exception):
    """The sheave was not replaced (the reason is the message)."""


class Rerun(Exception):
    """The executor logged ``rerun``: run the step again."""


class Replan(Exception):
    """The executor logged ``replan``: ask for a new flowchart."""


class SheaveJob:
    """One work order, from the brief to the watched reopening."""

    def __init__(self, label: Label, client: genai.Client):
        self.label = label
        self.world = World(label)
        self.client = client
        self.outputs: dict[str, str] = {}
        """Settled node -> its output."""

    def brief(self, revision: int, setback: str) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("series", "day", "cost_centre")
            if k in self.label.params
        }
        lines = [
            f"Replace the sheave assembly on {ORDER['lift']} tower {ORDER['tower']} "
            f"(work order {ORDER['wo']}).",
            f"Work order: {json.dumps(ORDER)}",
        ]
        if notes:
            lines.append(f"Lift mechanic's notes: {json.dumps(notes)}")
        if revision > 1:
            lines += [
                f"Revision: {revision}",
                f"Settled: {json.dumps(self.outputs)}",
                f"Setback: {setback}",
            ]
        return "\n".join(lines)

    def plan(self, revision: int, setback: str) -> list[Node]:
        with mlflow.start_span(name=f"plan revision {revision}", span_type=SpanType.CHAIN) as span:
            brief = self.brief(revision, setback)
            span.set_inputs({"brief": brief})
            response = self.client.models.generate_content(
                model=MODEL,
                contents=brief,
                config=types.GenerateContentConfig(system_instruction=PLANNER, temperature=0.0),
            )
            answer = response.text or ""
            span.set_outputs({"plan": answer})
            nodes = read_flowchart(answer)
            span.set_attribute("chairlift.plan.steps", [n.id for n in nodes if not n.done])
        for n in nodes:
            if n.done and n.id not in self.outputs:
                self.outputs[n.id] = next(iter(n.done.values()))
        return nodes

    def value(self, arg: str | Ref) -> str:
        if isinstance(arg, Ref):
            return self.outputs[arg.node]
        return arg

    def args(self, node: Node) -> dict[str, Any]:
        """The node's arguments, references filled in, typed as the tool declares them."""
        declared = _DECLARED[node.tool].parameters
        props = (declared.properties if declared else None) or {}
        cast = {types.Type.INTEGER: int, types.Type.NUMBER: float}
        out: dict[str, Any] = {}
        for k, v in node.args.items():
            kind = props[k].type if k in props else None
            out[k] = cast.get(kind, str)(self.value(v)) if kind else self.value(v)
        return out

    def run_function(self, call: types.FunctionCall) -> types.Part:
        """Run one ``function_call`` under a TOOL span; its ``function_response`` part."""
        name, args = str(call.name), dict(call.args or {})
        with mlflow.start_span(name=name, span_type=SpanType.TOOL) as span:
            span.set_inputs(args)
            span.set_attribute("chairlift.tool", name)
            try:
                output = self.world.call(name, args)
            except LiftDeskError as exc:
                span.record_exception(exc)  # an ``exception`` event and the ERROR status
                said: dict[str, Any] = {"error": exc.text, "code": exc.code, **exc.hints}
                span.set_outputs(said)
            else:
                said = {"output": output}
                span.set_outputs(output)
        return types.Part.from_function_response(name=name, response=said)

    def attempt(self, node: Node, attempt: int) -> None:
        """One executor conversation for a node, its references filled in."""
        task = (
            f"Step {node.id} (attempt {attempt}): {node.purpose}\n"
            f"Call: {node.tool} {json.dumps(self.args(node))}"
        )
        config = types.GenerateContentConfig(
            system_instruction=EXECUTOR,
            tools=TOOLS,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            temperature=0.0,
        )
        with mlflow.start_span(
            name=f"step {node.id} attempt {attempt}", span_type=SpanType.CHAIN
        ) as span:
            span.set_inputs({"task": task})
            span.set_attribute("chairlift.step", node.id)
            contents = [types.Content(role="user", parts=[types.Part.from_text(text=task)])]
            said = ""
            for _ in range(MAX_TURNS):
                response = self.client.models.generate_content(
                    model=MODEL, contents=contents, config=config
                )
                turn = response.candidates[0].content if response.candidates else None
                parts = (turn.parts if turn else None) or []
                said = "".join(p.text for p in parts if p.text)
                calls = [p.function_call for p in parts if p.function_call]
                if not turn or not calls:
                    break
                contents.append(turn)
                contents.append(
                    types.Content(role="user", parts=[self.run_function(c) for c in calls])
                )
            log = dict(re.findall(r"^(\w+): (.*)$", said, re.MULTILINE))
            outcome = log.get("outcome", "stalled")
            span.set_outputs(log)
            if outcome == "done":
                self.outputs[node.id] = str(json.loads(log["output"])[OUTPUTS[node.id]])
                return
            span.set_status("ERROR")
            span.set_attribute("chairlift.outcome", outcome)
        text = f"{node.id} ({node.tool}) {outcome}: {log.get('error', '')}"
        if outcome == "rerun":
            raise Rerun(text)
        if outcome == "replan":
            raise Replan(text)
        raise WorkOrderFailed(text)

    def work(self) -> None:
        setback = ""
        for revision in range(1, MAX_PLANS + 1):
            nodes = self.plan(revision, setback)
            setback = ""
            for node in nodes:
                if node.done:
                    continue
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    try:
                        self.attempt(node, attempt)
                        break
                    except Rerun as e:
                        if attempt == MAX_ATTEMPTS:
                            raise WorkOrderFailed(str(e)) from e
                    except Replan as e:
                        setback = str(e)
                        break
                if setback:
                    break
            if not setback:
                return
        raise WorkOrderFailed(f"no flowchart holds after {MAX_PLANS}: {setback}")

    def check(self) -> None:
        """The app's own checks once the manager is mailed: the closure against the work order,
        then the reopening after the fitting."""
        closure = self.world.closures[-1]
        with mlflow.start_span(
            name="check closure against work order", span_type=SpanType.GUARDRAIL
        ) as span:
            span.set_inputs({"closure": closure["closure_id"], "order_day": ORDER["day"]})
            span.set_outputs({"closure_day": closure["day"]})
            if closure["day"] != ORDER["day"]:
                raise WorkOrderFailed(
                    f"closure {closure['closure_id']} shuts {ORDER['lift']} on {closure['day']}; "
                    f"work order {ORDER['wo']} fits the sheave on {ORDER['day']}"
                )
        with mlflow.start_span(name=f"watch reopening {closure['closure_id']}") as span:
            span.set_inputs({"closure": closure["closure_id"], "lift": ORDER["lift"]})
            runs = ("empty-chair run", "weighted run", "evacuation drill", "public reopening")
            for read, stage in enumerate(runs, 1):
                if self.label.scenario.startswith("external_") and read > int(
                    self.label.params["reads"]
                ):
                    raise WorkOrderFailed(
                        f"lightning over the ridge shuts the upper mountain at the {stage}; "
                        f"{ORDER['resort']} postpones reopening {ORDER['lift']}"
                    )
                span.add_event(
                    SpanEvent("reopening", attributes={"read": read, "stage": stage})  # type: ignore[abstract]
                )
            span.set_outputs({"state": "reopened"})

    def run(self) -> str:
        try:
            with mlflow.start_span(
                name=f"lift work order {ORDER['wo']}", span_type=SpanType.AGENT
            ) as root:
                # MLflow's trace id is "tr-" and the OpenTelemetry trace id in hex
                trace_id = root.trace_id.removeprefix("tr-")
                root.set_inputs(ORDER | {"run": self.label.run})
                self.work()
                self.check()
                root.set_outputs({"outcome": "replaced", "outputs": self.outputs})
        except WorkOrderFailed:  # MLflow recorded the exception and the root's ERROR status
            pass
        return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the chairlift scenarios under MLflow's Gemini autologging, its spans relayed to
    ``provider``; autologging is turned off when the play returns."""
    if not labels:
        return {}
    _mlflow_provider()
    quiet = logging.getLogger("mlflow")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    _Relay.target = provider
    mlflow.gemini.autolog(silent=True)
    try:
        with GeminiServer(respond) as server:
            client = genai.Client(
                api_key="test", http_options=types.HttpOptions(base_url=server.base_url)
            )
            return {label.run: SheaveJob(label, client).run() for label in labels}
    finally:
        mlflow.gemini.autolog(disable=True, silent=True)
        _Relay.target = None
        quiet.setLevel(level)

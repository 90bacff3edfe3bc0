"""A city cable-car operator replacing a cabin's haul rope during a maintenance window, written
by hand on the official **Anthropic SDK** (``AsyncAnthropic``, Messages API tool use, no agent
framework) with its **tools on an MCP server**: the operator's back-office services are tools of
a ``FastMCP`` server (:mod:`tests.corpus._ropeway_mcp`) run as **a separate process over stdio**
(``stdio_client(StdioServerParameters(...))``, a ``ClientSession``; one server process per job);
the app lists the server's tools, hands them to Claude as Anthropic tools (``input_schema`` the
MCP tool's) and runs each ``tool_use`` through ``session.call_tool(...)``. The model: a scripted
model behind the corpus's fake Messages API (:mod:`tests.corpus._fake_anthropic`).

Traced by **OpenLLMetry's** instrumentors, as a Traceloop user wires them without the SDK:
``AnthropicInstrumentor`` (``opentelemetry-instrumentation-anthropic``: an ``anthropic.chat``
span per ``messages.create``) and ``McpInstrumentor`` (``opentelemetry-instrumentation-mcp``:
a ``{tool}.tool`` span per ``tools/call`` request and a ``{method}.mcp`` span per other request
the client session sends), each ``.instrument(tracer_provider=provider)``; plus the app's own
plain OpenTelemetry spans (scope ``ropeway-app``): a root per job, a span around each planner
call and each step attempt, the check and the watch. No planscope code.

Sealed-56 split only (see README.md). The job: find a certified rope splicer for the line in the
operator's contractor list (read page by page), get the safety regulator's approval of the
splice (an application, polled), book the mobile crane at the station for the window, charge the
parts to the maintenance budget, post the closure notice to the commuters. As the team writes it:

* the planner answers an **Org-mode outline**: ``#+TITLE`` / ``#+REVISION`` (and after a
  setback ``#+BECAUSE``) lines, then a ``* TODO <slug>: <goal>`` heading per step with a
  property drawer (``:TOOL:`` and one ``:ARG_<key>:`` per argument; an Org link
  ``[[result:<slug>]]`` stands for that earlier step's result); a re-plan lists the steps done
  as ``* DONE <slug>`` headings with a ``:RESULT:`` property;
* an executor conversation per step attempt (call the model, run its ``tool_use`` blocks
  through MCP, send ``tool_result`` blocks back with ``is_error`` from the MCP result, until
  ``end_turn``), ending with one verdict line ``<done|again|divert|derope|stalled> :: <result>
  :: <note>``;
* the services raise **ropeway signals** (``SLACK: ... -- resume HH:MM`` the model calls again
  at that time in its conversation; ``SWAY`` the app runs the step again; ``DIVERT: ... -- use
  key=value`` a new plan; ``DEROPE`` final);
* after the last step the app checks the crane booking's day against the work order and watches
  the line (both through ``session.call_tool`` directly).

The planner trusts the duty manager's notes over the work order: a scenario's wrong value comes
from a note. This agent has no scenario of an executor starved of context (no starvation label).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any

import mcp.client.stdio
from anthropic import AsyncAnthropic
from anthropic.types import MessageParam, ToolParam, ToolResultBlockParam
from mcp import ClientSession, StdioServerParameters
from mcp.types import TextContent, Tool
from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor
from opentelemetry.instrumentation.mcp import McpInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer

from . import _ropeway_mcp
from ._fake_anthropic import MODEL, AnthropicServer, Blocks
from ._labels import Label
from ._ropeway_mcp import WORK_ORDER

TRACER = "ropeway-app"
MAX_STEP_ATTEMPTS = 8
MAX_PLANS = 5
MAX_SLACKS = 8
"""``SLACK`` signals in one executor conversation before the model gives up."""
MAX_POLLS = 12
MAX_TURNS = 40
"""Model calls in one executor conversation (the app's guard on the tool loop)."""
PLANNER = (
    "You plan a cable-car haul rope replacement. Answer an Org-mode outline: #+TITLE and "
    "#+REVISION lines, then one '* TODO <slug>: <goal>' heading per step with a property drawer "
    "(:TOOL: and :ARG_<key>: per argument); [[result:<slug>]] is an earlier step's result."
)
EXECUTOR = (
    "You are the ropeway's maintenance clerk. Carry out the one step you are given with the "
    "tools, then answer one line: <done|again|divert|derope|stalled> :: <result> :: <note>."
)
VERDICTS = ("done", "again", "divert", "derope", "stalled")
VERDICT = re.compile(r"^(\w+) :: (.*?) :: (.*)$", re.DOTALL)
SIGNAL = re.compile(r"^Error executing tool \w+: (SLACK|SWAY|DIVERT|DEROPE): (.*?)(?: -- (.*))?$")
LINK = re.compile(r"\[\[result:(\w+)\]\]")


# --- the scripted model -------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(b.get("text", "")) for b in content if b.get("type") == "text")
    return str(content or "")


@dataclass
class Call:
    """A ``tool_use`` of the conversation, with its ``tool_result``."""

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
                call.result = _text(b.get("content"))
                call.is_error = bool(b.get("is_error"))
    return list(out.values())


def _use(name: str, args: dict[str, Any], turn: int) -> Blocks:
    key = hashlib.sha256(f"{name}/{turn}/{json.dumps(args)}".encode()).hexdigest()[:24]
    return [{"type": "tool_use", "id": f"toolu_{key}", "name": name, "input": args}]


def _say(verdict: str, result: str = "-", note: str = "") -> Blocks:
    return [{"type": "text", "text": f"{verdict} :: {result} :: {note}"}]


def _typed(body: dict[str, Any], name: str, args: dict[str, str]) -> dict[str, Any]:
    """The plan's string arguments as the types the tool's input schema says."""
    (tool,) = [t for t in body["tools"] if t["name"] == name]
    cast = {"integer": int, "number": float}
    props = tool["input_schema"]["properties"]
    return {k: cast.get(props.get(k, {}).get("type", ""), str)(v) for k, v in args.items()}


def _execute(body: dict[str, Any]) -> Blocks:
    """The clerk's next turn: call the step's tool, call again at the time a ``SLACK`` names,
    follow ``next_page``, read an application under review, end with the verdict line."""
    messages = body["messages"]
    order = dict(re.findall(r"^(\w+): (.*)$", _text(messages[0]["content"]), re.MULTILINE))
    name = order["Call"]
    args = _typed(body, name, json.loads(order["Args"]))
    calls = _calls(messages)
    turn = len(messages)
    if not calls:
        return _use(name, args, turn)
    last = calls[-1]
    signal = SIGNAL.match(last.result) if last.is_error else None
    if signal:
        word, text, hint = signal.group(1), signal.group(2), signal.group(3) or ""
        if word == "SLACK":
            slacks = sum(c.is_error for c in calls)
            if slacks >= MAX_SLACKS:
                return _say("stalled", note=f"{slacks} slack signals in a row: {text}")
            return _use(last.name, last.args | {"resume": hint.split()[-1]}, turn)
        if word == "SWAY":
            return _say("again", note=text)
        if word == "DIVERT":
            return _say("divert", note=f"{text} -- {hint}")
        return _say("derope", note=text)
    if last.is_error:
        return _say("derope", note=last.result)
    said = json.loads(last.result)
    if said.get("next_page"):
        return _use(name, args | {"page": said["next_page"]}, turn)
    if said.get("state") == "under_review":
        polls = sum(c.name == "approval_status" for c in calls)
        if polls >= MAX_POLLS:
            note = f"application {said['application']} under review after {polls} reads"
            return _say("stalled", note=note)
        return _use("approval_status", {"application": said["application"]}, turn)
    if "available" in said:
        return _say("done", said["available"][0]["contractor"], "certified splicer found")
    return _say("done", said["id"], f"{name} answered")


def uses(setbacks: list[str]) -> list[tuple[str, str]]:
    """The ``(key, value)`` pairs the setbacks say to use, in order.

    >>> uses(["book_crane: out for a load test -- use crane=Grove GMK-4 (Parkhill Plant)"])
    [('crane', 'Grove GMK-4 (Parkhill Plant)')]
    """
    return [(m[1], m[2].strip()) for s in setbacks if (m := re.search(r"-- use (\w+)=(.*)$", s))]


def _plan(brief: str) -> str:
    """The planner's outline: the work order's facts, the duty manager's notes trusted over
    them; every value a setback says to use is used; steps done listed as DONE."""
    lines = dict(re.findall(r"^(\w[\w' ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Work order"]) | json.loads(lines.get("Duty manager's notes", "{}"))
    done: dict[str, str] = json.loads(lines.get("Done", "{}"))
    setbacks = re.findall(r"^Setback: (.*)$", brief, re.MULTILINE)
    facts |= dict(uses(setbacks))
    steps = [
        ("find_splicer", f"Find a certified rope splicer for the {facts['line']}.",
         "list_contractors", {"line": facts["line"], "trade": "rope splicing"}),
        ("get_approval", "Get the regulator's approval of the splice.", "apply_for_approval",
         {"splicer": "[[result:find_splicer]]", "cabin": facts["cabin"]}),
        ("book_crane", f"Book the crane at {facts['station']} for {facts['window']}.",
         "book_crane", {"crane": facts["crane"], "station": facts["station"],
                        "window": facts["window"]}),
        ("charge_parts", f"Charge the rope parts to {facts['budget']}.", "charge_budget",
         {"budget": facts["budget"], "amount": facts["parts"], "reference": facts["order"]}),
        ("notify_commuters", "Post the closure notice to the commuters.", "notify_commuters",
         {"channel": facts["commuters"], "window": facts["window"],
          "crane_booking": "[[result:book_crane]]", "approval": "[[result:get_approval]]"}),
    ]  # fmt: skip
    out = [
        f"#+TITLE: Haul rope replacement, cabin {facts['cabin']} ({facts['line']})",
        f"#+REVISION: {len(setbacks) + 1}",
    ]
    if setbacks:
        out.append(f"#+BECAUSE: {setbacks[-1]}")
    for slug, goal, tool, args in steps:
        if slug in done:
            out += [f"* DONE {slug}", "  :PROPERTIES:", f"  :RESULT: {done[slug]}", "  :END:"]
            continue
        out += [f"* TODO {slug}: {goal}", "  :PROPERTIES:", f"  :TOOL: {tool}"]
        out += [f"  :ARG_{k}: {v}" for k, v in args.items()]
        out.append("  :END:")
    return "\n".join(out) + "\n"


def respond(body: dict[str, Any]) -> Blocks:
    """The scripted model's content blocks for one ``POST /v1/messages``.

    >>> brief = f"Work order: {json.dumps(WORK_ORDER)}"
    >>> plan = respond({"system": PLANNER, "messages": [{"role": "user", "content": brief}]})
    >>> ":ARG_splicer: [[result:find_splicer]]" in plan[0]["text"]
    True
    """
    system = _text(body.get("system"))
    if system == PLANNER:
        return [{"type": "text", "text": _plan(_text(body["messages"][0]["content"]))}]
    if system == EXECUTOR:
        return _execute(body)
    return [{"type": "text", "text": "Not a ropeway matter."}]


# --- the app ------------------------------------------------------------------------------
@dataclass
class Step:
    """One ``* TODO`` heading of the outline."""

    slug: str
    goal: str
    tool: str
    args: dict[str, str] = field(default_factory=dict)


def parse_outline(text: str) -> list[Step]:
    """The outline's open steps in order (``DONE`` headings skipped).

    >>> parse_outline("#+REVISION: 1\\n* TODO a: do\\n  :PROPERTIES:\\n  :TOOL: t\\n"
    ...     "  :ARG_x: [[result:b]]\\n  :END:\\n* DONE b\\n")
    [Step(slug='a', goal='do', tool='t', args={'x': '[[result:b]]'})]
    """
    out: list[Step] = []
    current: Step | None = None
    for line in text.splitlines():
        heading = re.match(r"^\* (TODO|DONE) (\w+)(?::\s*(.*))?$", line)
        if heading:
            current = Step(heading[2], heading[3] or "", "") if heading[1] == "TODO" else None
            if current:
                out.append(current)
            continue
        prop = re.match(r"^\s+:(\w+): (.*)$", line)
        if current and prop:
            if prop[1] == "TOOL":
                current.tool = prop[2].strip()
            elif prop[1].startswith("ARG_"):
                current.args[prop[1][4:]] = prop[2].strip()
    return out


def resolve(step: Step, done: dict[str, str]) -> dict[str, str]:
    """A step's arguments, each ``[[result:<slug>]]`` link replaced by that step's result.

    >>> resolve(Step("b", "", "f", {"splicer": "[[result:a]]", "cabin": "C07"}), {"a": "S-1"})
    {'splicer': 'S-1', 'cabin': 'C07'}
    """
    return {k: LINK.sub(lambda m: done.get(m[1], m[0]), v) for k, v in step.args.items()}


class JobFailed(RuntimeError):
    """The rope could not be replaced (or the line failed after the job)."""


def anthropic_tool(tool: Tool) -> ToolParam:
    """An MCP tool as an Anthropic tool definition."""
    return {
        "name": tool.name,
        "description": tool.description or "",
        "input_schema": tool.inputSchema,
    }


class Job:
    """One rope job: a session with the back-office MCP server, plans and step attempts under
    the app's root span, then the app's check and watch."""

    def __init__(self, label: Label, client: AsyncAnthropic, tracer: Tracer) -> None:
        self.label = label
        self.client = client
        self.tracer = tracer
        self.plans = 0
        self.tools: list[Tool] = []

    def server(self) -> StdioServerParameters:
        """The back-office server: this interpreter running the server script, the job's
        scenario in its environment."""
        job = {"scenario": self.label.scenario, "seed": self.label.seed}
        return StdioServerParameters(
            command=sys.executable,
            args=[_ropeway_mcp.__file__],
            env=mcp.client.stdio.get_default_environment()
            | {"ROPEWAY_JOB": json.dumps(job | {"params": dict(self.label.params)})},
        )

    def brief(self) -> str:
        notes = {
            k: self.label.params[k] for k in ("line", "window", "budget") if k in self.label.params
        }
        lines = [
            f"Replace the haul rope of cabin {WORK_ORDER['cabin']} (job RW-{self.label.seed}).",
            f"Work order: {json.dumps(WORK_ORDER)}",
        ]
        if notes:
            lines.append(f"Duty manager's notes: {json.dumps(notes)}")
        return "\n".join(lines)

    async def plan(self, done: dict[str, str], setbacks: list[str]) -> list[Step]:
        """Ask the planner (again, with the steps done and every setback so far)."""
        self.plans += 1
        brief = self.brief()
        if done or setbacks:
            brief += f"\nDone: {json.dumps(done)}" + "".join(f"\nSetback: {s}" for s in setbacks)
        with self.tracer.start_as_current_span(f"plan rope job r{self.plans}") as span:
            span.set_attribute("ropeway.revision", self.plans)
            response = await self.client.messages.create(
                model=MODEL,
                max_tokens=2048,
                system=PLANNER,
                messages=[{"role": "user", "content": brief}],
            )
            text = "".join(b.text for b in response.content if b.type == "text")
            steps = parse_outline(text)
            span.set_attribute("ropeway.steps", [s.slug for s in steps])
            return steps

    async def call_tool(self, session: ClientSession, name: str, args: dict[str, Any]) -> Any:
        """Run one tool on the back-office server; the ``CallToolResult``."""
        return await session.call_tool(name, args)

    async def attempt(
        self, session: ClientSession, step: Step, attempt: int, done: dict[str, str]
    ) -> dict[str, str]:
        """One executor conversation for a step under a span of its own; its verdict, parsed."""
        args = resolve(step, done)
        order = f"Step {step.slug}, attempt {attempt}: {step.goal}\nCall: {step.tool}\n"
        order += f"Args: {json.dumps(args)}"
        tools = [anthropic_tool(t) for t in self.tools]
        with self.tracer.start_as_current_span(f"step {step.slug}") as span:
            span.set_attribute("ropeway.step", step.slug)
            span.set_attribute("ropeway.attempt", attempt)
            messages: list[MessageParam] = [{"role": "user", "content": order}]
            said = ""
            for _ in range(MAX_TURNS):
                response = await self.client.messages.create(
                    model=MODEL, max_tokens=1024, system=EXECUTOR, messages=messages, tools=tools
                )
                said = "".join(b.text for b in response.content if b.type == "text")
                uses_ = [b for b in response.content if b.type == "tool_use"]
                if response.stop_reason != "tool_use" or not uses_:
                    break
                messages.append({"role": "assistant", "content": response.content})
                results: list[ToolResultBlockParam] = []
                for block in uses_:
                    result = await session.call_tool(block.name, dict(block.input))
                    text = "\n".join(c.text for c in result.content if isinstance(c, TextContent))
                    results.append(
                        {
                            "type": "tool_result",
                            "tool_use_id": block.id,
                            "content": text,
                            "is_error": bool(result.isError),
                        }
                    )
                messages.append({"role": "user", "content": results})
            parsed = VERDICT.match(said.strip())
            verdict = (
                dict(zip(("verdict", "result", "note"), parsed.groups(), strict=True))
                if parsed
                else {}
            )
            if verdict.get("verdict") not in VERDICTS:
                verdict = {"verdict": "stalled", "result": "", "note": f"no verdict: {said[:200]}"}
            span.set_attribute("ropeway.verdict", verdict["verdict"])
            if verdict["verdict"] != "done":
                span.set_status(Status(StatusCode.ERROR, verdict["note"]))
            return verdict

    async def carry_out(self, session: ClientSession) -> dict[str, str]:
        """Plan, run each step (again after ``again``), plan again after ``divert``; the steps'
        results."""
        done: dict[str, str] = {}
        setbacks: list[str] = []
        steps = await self.plan(done, setbacks)
        while steps:
            step = steps[0]
            for attempt in range(1, MAX_STEP_ATTEMPTS + 1):
                verdict = await self.attempt(session, step, attempt, done)
                if verdict["verdict"] != "again":
                    break
            kind, note = verdict["verdict"], verdict["note"]
            if kind == "done":
                done[step.slug] = verdict["result"]
                steps = steps[1:]
            elif kind == "divert" and self.plans < MAX_PLANS:
                setbacks.append(f"{step.slug}: {note}")
                steps = await self.plan(done, setbacks)
            else:
                raise JobFailed(f"{step.slug}: {kind}: {note}")
        return done

    async def read(self, session: ClientSession, name: str, args: dict[str, Any]) -> Any:
        result = await session.call_tool(name, args)
        (content,) = [c for c in result.content if isinstance(c, TextContent)]
        return json.loads(content.text)

    async def check(self, session: ClientSession, booking: str) -> None:
        """The app's check: the crane is booked for the work order's window."""
        with self.tracer.start_as_current_span("check crane booking") as span:
            span.set_attribute("ropeway.booking", booking)
            booked = await self.read(session, "crane_booking", {"booking": booking})
            if booked["day"] != WORK_ORDER["window"]:
                message = (
                    f"{booking} books {booked['crane']} on {booked['day']}; the maintenance "
                    f"window is {WORK_ORDER['window']}"
                )
                span.set_status(Status(StatusCode.ERROR, message))
                raise JobFailed(message)
            span.set_attribute("ropeway.check", "passed")

    async def watch(self, session: ClientSession) -> None:
        """The app's watch of the line once the job is done: a few reads of its state."""
        line = WORK_ORDER["line"]
        with self.tracer.start_as_current_span(f"watch line {line}") as span:
            for read in range(1, 4):
                state = await self.read(session, "line_status", {"line": line})
                span.add_event("line state", {"read": read, "state": state["state"]})
                if state["state"] != "running":
                    span.set_status(Status(StatusCode.ERROR, state["state"]))
                    raise JobFailed(f"{line} {state['state']}")

    async def run(self) -> str:
        """Replace the rope under the app's root span; the OTel trace id."""
        with self.tracer.start_as_current_span(
            f"replace haul rope {WORK_ORDER['cabin']}",
            record_exception=False,
            set_status_on_exception=False,
        ) as root:
            root.set_attribute("ropeway.job", f"RW-{self.label.seed}")
            trace_id = format(root.get_span_context().trace_id, "032x")
            with open(os.devnull, "w") as quiet:  # the server's stderr
                async with (
                    mcp.client.stdio.stdio_client(self.server(), errlog=quiet) as streams,
                    ClientSession(*streams) as session,
                ):
                    await session.initialize()
                    self.tools = (await session.list_tools()).tools
                    try:
                        done = await self.carry_out(session)
                        await self.check(session, done["book_crane"])
                        await self.watch(session)
                    except JobFailed as exc:
                        root.record_exception(exc)
                        root.set_status(Status(StatusCode.ERROR, str(exc)))
                        root.set_attribute("ropeway.outcome", "failed")
                    else:
                        root.set_attribute("ropeway.outcome", "replaced")
        return trace_id


async def _job(label: Label, base_url: str, tracer: Tracer) -> str:
    """One job on a client of its own (its connections belong to the job's event loop)."""
    async with AsyncAnthropic(base_url=base_url, api_key="test") as client:
        return await Job(label, client, tracer).run()


PATCHED = (
    ("mcp.shared.session", "BaseSession", "send_request"),
    ("mcp.server.session", "ServerSession", "__init__"),
    ("mcp.client.stdio", "", "stdio_client"),
    ("mcp.server.stdio", "", "stdio_server"),
    ("mcp.client.sse", "", "sse_client"),
    ("mcp.server.sse", "SseServerTransport", "connect_sse"),
    ("mcp.client.streamable_http", "", "streamablehttp_client"),
    ("mcp.server.streamable_http", "StreamableHTTPServerTransport", "connect"),
)
"""What OpenLLMetry's MCP instrumentor wraps (module, class or ``""``, attribute)."""


def _patched() -> list[tuple[Any, str, Any]]:
    """The attributes OpenLLMetry's MCP instrumentor wraps, as they are now: 0.62.4's
    ``uninstrument`` unwraps only ``stdio_client`` and ``stdio_server`` and leaves the others
    (``BaseSession.send_request`` among them) wrapped with the play's tracer, so the play puts
    them back itself. Each module is imported first, so that the instrumentor's post-import
    hooks wrap it now (and it is put back) rather than on a later import."""
    out = []
    for module_name, owner_name, attr in PATCHED:
        module = importlib.import_module(module_name)
        owner = getattr(module, owner_name) if owner_name else module
        out.append((owner, attr, vars(owner)[attr]))
    return out


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the ropeway scenarios with OpenLLMetry's and the app's spans on ``provider``; run
    name -> trace id."""
    if not labels:
        return {}
    kept = _patched()
    anthropic_instrumentor = AnthropicInstrumentor()
    anthropic_instrumentor.instrument(tracer_provider=provider)
    mcp_instrumentor = McpInstrumentor()
    mcp_instrumentor.instrument(tracer_provider=provider)
    tracer = provider.get_tracer(TRACER)
    out = {}
    try:
        with AnthropicServer(respond) as server:
            for label in labels:
                out[label.run] = asyncio.run(_job(label, server.base_url("corpus-ropeway"), tracer))
    finally:
        mcp_instrumentor.uninstrument()
        anthropic_instrumentor.uninstrument()
        for owner, name, value in kept:
            setattr(owner, name, value)
    return out

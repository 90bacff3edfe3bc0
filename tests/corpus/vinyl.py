"""An independent record label getting a vinyl LP pressed, written by hand as an OpenAI user
writes a planner-executor agent whose **tools live on an MCP server** today: the pressing plant's
services are ``@mcp.tool()`` functions of a ``FastMCP`` server (:mod:`tests.corpus._vinyl_mcp`)
run as **a separate process over stdio** (``stdio_client(StdioServerParameters(...))`` and a
``ClientSession``, as the MCP docs show; one server process per job); the app lists the server's
tools (``session.list_tools()``), hands them to the model as OpenAI function tools and runs the
model's calls through ``session.call_tool(...)``. The model: the ``openai`` client's **Chat
Completions** (``AsyncOpenAI``; the MCP SDK is asyncio, and Chat Completions is the API the MCP
client examples and most MCP-to-OpenAI bridges use, with ``tool_calls`` / ``role: tool``
messages) against the conformance suite's fake OpenAI server (``ModelServer(respond=...)``).

A **planner call** answers an **INI plan** (a ``[plan]`` section, then a ``[step <slug>]``
section per step with its ``goal``, ``tool`` and one key per argument; ``*<slug>`` for an
earlier step's result), read with ``configparser``; then per step attempt an **executor loop**
(call the model, run its tool calls through MCP, send the results back, until it answers text:
one line ``STATUS <done|again|recut|scrap|stalled>; RESULT <value>; NOTE <text>``). The app
runs a step again after ``again``, asks the planner again after ``recut`` (with the steps done
and every issue: the new plan's ``[plan]`` section carries ``revision`` and ``because``) and
fails the job otherwise; after the job it checks the booked run's ship-by day against the order
form and watches the run (both through ``session.call_tool`` directly).

MCP tool errors as MCP surfaces them: a plant service **raises** a defect code
(``NON-FILL ... >> slot=HH:MM`` the model calls again at that slot, ``WARP`` the app runs the
step again, ``RE-CUT ... >> use key=value`` a new plan, ``SCRAP`` final); FastMCP returns it as
a ``CallToolResult`` with ``isError=True`` and ``Error executing tool {tool}: {text}`` as its
content, which the app hands to the model as the tool message unchanged.

Traced by **OpenInference's MCP instrumentor** (``MCPInstrumentor().instrument(...)``: it
records no span of its own, it carries the trace context in each request's ``params._meta``
from the client's stream writer to the server's handler, so the server's spans join the job's
trace), **OpenInference's OpenAI instrumentor** (an LLM span per chat completion) and the app's
own spans through **OpenInference's tracer** (``OITracer``: the user already reads their traces
in Phoenix through OpenInference's instrumentors, so their own spans carry its span kinds and
``input`` / ``output``): an AGENT root per job, a CHAIN span per plan and per step attempt, a
TOOL span per ``call_tool``, CHAIN check and watch spans. The server process has its own tracer
provider (plain OTel, SERVER spans ``tools/call {tool}``, ``press.*`` attributes) exporting
**OTLP JSON lines to a file** the play re-reads after each job and hands to the play's provider:
a file, not an OTLP receiver in the play, because the server's spans are all written before its
response is sent (a simple span processor) and the job reads them once the session is closed,
with no port, thread or retry between the two processes. No planscope code.

Sealed-39 split only (see README.md). The job: find a pressing plant whose lathe cuts the
record's speed in the plant directory (read page by page), order test pressings (a polled
order), book the pressing run, pay the deposit from the label's account, send the distributor
the numbers. The planner trusts the label manager's notes over the order form: a scenario's
wrong value comes from a note. This agent has no scenario of an executor starved of context
(no starvation label).
"""

from __future__ import annotations

import asyncio
import configparser
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp.client.stdio
from mcp import ClientSession, StdioServerParameters
from mcp.types import TextContent, Tool
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionFunctionToolParam
from openinference.instrumentation import OITracer, TraceConfig
from openinference.instrumentation.mcp import MCPInstrumentor
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from . import _vinyl_mcp
from ._labels import Label
from ._vinyl_mcp import ORDER, read_spans

TRACER = "vinyl"
MAX_STEP_ATTEMPTS = 8
MAX_PLANS = 5
MAX_NON_FILLS = 8
"""``NON-FILL`` results in one executor loop before the model gives up."""
MAX_POLLS = 12
MAX_TURNS = 40
"""Model calls in one executor loop (the app's guard on the tool-calling loop)."""
PLANNER = (
    "You are the pressing planner of an independent record label. Answer an INI plan: a [plan] "
    "section, then a [step <slug>] section per step with goal, tool and one key per argument; "
    "*<slug> takes an earlier step's result."
)
EXECUTOR = (
    "You are the label's production runner. Run the one step you are given with the plant's "
    "tools, then answer one line: STATUS <done|again|recut|scrap|stalled>; RESULT <value>; "
    "NOTE <text>."
)
STATUSES = ("done", "again", "recut", "scrap", "stalled")
ANSWER = re.compile(r"^STATUS (\w+); RESULT (.*?); NOTE (.*)$", re.DOTALL)


# --- the scripted model -------------------------------------------------------------------
@dataclass
class Call:
    """A tool call of the conversation, with the tool message sent back for it."""

    name: str
    args: dict[str, Any]
    output: str = ""


def _calls(messages: list[dict[str, Any]]) -> list[Call]:
    """The conversation's tool calls in order, each paired by id with its result."""
    calls = {
        c["id"]: Call(c["function"]["name"], json.loads(c["function"]["arguments"]))
        for m in messages
        for c in m.get("tool_calls") or []
    }
    for m in messages:
        if m.get("role") == "tool":
            calls[m["tool_call_id"]].output = str(m["content"])
    return list(calls.values())


def _typed(body: dict[str, Any], name: str, args: dict[str, str]) -> dict[str, Any]:
    """The plan's string arguments as the types the tool's input schema says."""
    (tool,) = [t["function"] for t in body["tools"] if t["function"]["name"] == name]
    cast = {"integer": int, "number": float}
    props = tool["parameters"]["properties"]
    return {k: cast.get(props.get(k, {}).get("type", ""), str)(v) for k, v in args.items()}


def _said(status: str, result: str = "-", note: str = "") -> dict[str, Any]:
    return {"role": "assistant", "content": f"STATUS {status}; RESULT {result}; NOTE {note}"}


def _call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
        ],
    }


DEFECT = re.compile(r"^Error executing tool \w+: (NON-FILL|WARP|RE-CUT|SCRAP) (.*?)(?: >> (.*))?$")


def _execute(body: dict[str, Any]) -> dict[str, Any]:
    """The runner's next message for its step: call the tool, call again at the slot a
    ``NON-FILL`` names, follow ``next_page``, poll a test pressing, end with the status line."""
    messages = body["messages"]
    order = dict(re.findall(r"^(\w+): (.*)$", messages[1]["content"], re.MULTILINE))
    name = order["Call"]
    args = _typed(body, name, json.loads(order["Args"]))
    calls = _calls(messages)
    if not calls:
        return _call(name, args, 1)
    last = calls[-1]
    defect = DEFECT.match(last.output)
    if defect:
        code, text, hint = defect.group(1), defect.group(2), defect.group(3) or ""
        if code == "NON-FILL":
            fills = sum(DEFECT.match(c.output) is not None for c in calls)
            if fills >= MAX_NON_FILLS:
                return _said("stalled", note=f"{fills} non-fills in a row: {text}")
            return _call(last.name, last.args | {"slot": hint.split("=", 1)[1]}, len(calls) + 1)
        if code == "WARP":
            return _said("again", note=text)
        if code == "RE-CUT":
            return _said("recut", note=f"{text} ({hint})")
        return _said("scrap", note=text)
    said = json.loads(last.output)
    if said.get("next_page"):
        return _call(name, args | {"page": said["next_page"]}, len(calls) + 1)
    if said.get("state") == "pressing":
        polls = sum(c.name == "test_pressing_status" for c in calls)
        if polls >= MAX_POLLS:
            return _said("stalled", note=f"test pressing {said['order']} after {polls} checks")
        return _call("test_pressing_status", {"order": said["order"]}, len(calls) + 1)
    if "plants" in said:
        return _said("done", said["plants"][0]["plant"], "plant found")
    return _said("done", said["id"], f"{name} answered")


def uses(issues: list[str]) -> list[tuple[str, str]]:
    """The ``(key, value)`` pairs the issues say to use, in order.

    >>> uses(["book_run: no oxblood compound (use colour=black)"])
    [('colour', 'black')]
    """
    return [(m.group(1), m.group(2)) for i in issues if (m := re.search(r"use (\w+)=([^)\s]+)", i))]


def _plan(brief: str) -> str:
    """The planner's INI plan: the order form's facts, the label manager's notes trusted over
    them; every value an issue says to use is used (the later over the earlier); steps done
    left out."""
    lines = dict(re.findall(r"^(\w[\w' ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Order form"]) | json.loads(lines.get("Label manager's notes", "{}"))
    done: dict[str, str] = json.loads(lines.get("Done", "{}"))
    issues = re.findall(r"^Issue: (.*)$", brief, re.MULTILINE)
    facts |= dict(uses(issues))
    steps = [
        ("find_plant", f"Find a plant with a free {facts['speed']} rpm lathe.", "search_plants",
         {"speed": facts["speed"], "weight": facts["weight"]}),
        ("test_press", f"Get test pressings of {facts['master']} approved.", "order_test_pressing",
         {"plant": "*find_plant", "master": facts["master"]}),
        ("book_run", f"Book {facts['copies']} copies in {facts['colour']}.", "book_pressing_run",
         {"plant": "*find_plant", "copies": facts["copies"], "colour": facts["colour"],
          "ship_by": facts["ship_by"]}),
        ("pay_deposit", f"Pay the {facts['deposit']} deposit.", "pay_deposit",
         {"account": facts["account"], "amount": facts["deposit"],
          "reference": facts["catalogue"]}),
        ("notify", "Send the distributor the run.", "notify_distributor",
         {"distributor": facts["distributor"], "run": "*book_run",
          "test_pressing": "*test_press"}),
    ]  # fmt: skip
    plan = configparser.ConfigParser(interpolation=None)
    plan["plan"] = {"record": facts["record"], "revision": str(len(issues) + 1)}
    if issues:
        plan["plan"]["because"] = issues[-1]
    for slug, goal, tool, args in steps:
        if slug not in done:
            plan[f"step {slug}"] = {"goal": goal, "tool": tool} | {
                k: str(v) for k, v in args.items()
            }
    out = []
    for section in plan.sections():
        out.append(f"[{section}]")
        out += [f"{k} = {v}" for k, v in plan[section].items()]
        out.append("")
    return "\n".join(out)


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one ``POST /v1/chat/completions``.

    >>> asked = {"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": f"Order form: {json.dumps(ORDER)}"}]}
    >>> plan = respond(asked)["choices"][0]["message"]["content"]
    >>> "plant = *find_plant" in plan
    True
    >>> respond({"messages": [{"role": "user", "content": "hi"}]})["choices"][0]["message"][
    ...     "content"]
    'Not a pressing matter.'
    """
    messages = body["messages"]
    system = str(messages[0].get("content") or "")
    if system == PLANNER:
        return completion(body, {"role": "assistant", "content": _plan(messages[1]["content"])})
    if system == EXECUTOR:
        return completion(body, _execute(body))
    return completion(body, {"role": "assistant", "content": "Not a pressing matter."})


# --- the app ------------------------------------------------------------------------------
@dataclass
class Step:
    """One ``[step <slug>]`` section of the plan."""

    slug: str
    goal: str
    tool: str
    args: dict[str, str] = field(default_factory=dict)


def parse_plan(text: str) -> list[Step]:
    """The plan's steps in order.

    >>> parse_plan("[plan]\\nrevision = 1\\n[step a]\\ngoal = g\\ntool = t\\nx = *b")
    [Step(slug='a', goal='g', tool='t', args={'x': '*b'})]
    """
    plan = configparser.ConfigParser(interpolation=None)
    plan.read_string(text)
    out = []
    for section in plan.sections():
        if section.startswith("step "):
            args = dict(plan[section])
            out.append(Step(section[5:], args.pop("goal"), args.pop("tool"), args))
    return out


def resolve(step: Step, done: dict[str, str]) -> dict[str, str]:
    """A step's arguments, each ``*<slug>`` replaced by that step's result.

    >>> resolve(Step("b", "", "f", {"plant": "*a", "copies": "500"}), {"a": "PL-KESTREL"})
    {'plant': 'PL-KESTREL', 'copies': '500'}
    """
    return {k: done.get(v[1:], "") if v.startswith("*") else v for k, v in step.args.items()}


class JobFailed(RuntimeError):
    """The record could not be pressed (or its run failed after it was booked)."""


def openai_tool(tool: Tool) -> ChatCompletionFunctionToolParam:
    """An MCP tool as an OpenAI function tool."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description or "",
            "parameters": tool.inputSchema,
        },
    }


class Job:
    """One pressing job: a session with the plant's MCP server, plans and step attempts under
    the app's root span, then the app's check and watch."""

    def __init__(self, label: Label, client: AsyncOpenAI, tracer: OITracer, spans: Path) -> None:
        self.label = label
        self.client = client
        self.tracer = tracer
        self.spans = spans
        self.plans = 0
        self.tools: list[Tool] = []

    def server(self) -> StdioServerParameters:
        """The plant's server: this interpreter running the server script, the job's
        scenario and the span file in its environment."""
        job = {"scenario": self.label.scenario, "seed": self.label.seed}
        return StdioServerParameters(
            command=sys.executable,
            args=[_vinyl_mcp.__file__],
            env=mcp.client.stdio.get_default_environment()
            | {
                "VINYL_JOB": json.dumps(job | {"params": dict(self.label.params)}),
                "VINYL_SPANS": str(self.spans),
            },
        )

    def brief(self) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("speed", "ship_by", "account")
            if k in self.label.params
        }
        lines = [
            f"Press {ORDER['record']} for {ORDER['label']} (job VP-{self.label.seed}).",
            f"Order form: {json.dumps(ORDER)}",
        ]
        if notes:
            lines.append(f"Label manager's notes: {json.dumps(notes)}")
        return "\n".join(lines)

    async def plan(self, done: dict[str, str], issues: list[str]) -> list[Step]:
        """Ask the planner (again, with the steps done and every issue so far)."""
        self.plans += 1
        brief = self.brief()
        if done or issues:
            brief += f"\nDone: {json.dumps(done)}" + "".join(f"\nIssue: {i}" for i in issues)
        with self.tracer.start_as_current_span(
            f"plan r{self.plans}", openinference_span_kind="chain"
        ) as span:
            span.set_input(brief)
            response = await self.client.chat.completions.create(
                model=MODEL,
                messages=[
                    {"role": "system", "content": PLANNER},
                    {"role": "user", "content": brief},
                ],
            )
            text = response.choices[0].message.content or ""
            span.set_output(text)
            return parse_plan(text)

    async def call_tool(self, session: ClientSession, name: str, args: dict[str, Any]) -> str:
        """Run one tool on the plant's server under a TOOL span; the text the server answered
        (the error text of an ``isError`` result)."""
        (tool,) = [t for t in self.tools if t.name == name]
        with self.tracer.start_as_current_span(name, openinference_span_kind="tool") as span:
            span.set_tool(name=name, description=tool.description, parameters=tool.inputSchema)
            span.set_input(json.dumps(args), mime_type="application/json")
            result = await session.call_tool(name, args)
            text = "\n".join(c.text for c in result.content if isinstance(c, TextContent))
            span.set_output(text)
            if result.isError:
                span.set_status(Status(StatusCode.ERROR, text))
            return text

    async def attempt(
        self, session: ClientSession, step: Step, attempt: int, done: dict[str, str]
    ) -> dict[str, str]:
        """One executor loop for a step under a span of its own; its status line, parsed."""
        args = resolve(step, done)
        order = f"Step {step.slug}, attempt {attempt}: {step.goal}\nCall: {step.tool}\n"
        order += f"Args: {json.dumps(args)}"
        tools = [openai_tool(t) for t in self.tools]
        with self.tracer.start_as_current_span(
            f"step {step.slug}", openinference_span_kind="chain"
        ) as span:
            span.set_input(order)
            span.set_attribute("metadata", json.dumps({"step": step.slug, "attempt": attempt}))
            messages: list[Any] = [
                {"role": "system", "content": EXECUTOR},
                {"role": "user", "content": order},
            ]
            said = ""
            for _ in range(MAX_TURNS):
                response = await self.client.chat.completions.create(
                    model=MODEL, messages=messages, tools=tools
                )
                message = response.choices[0].message
                said = message.content or ""
                if not message.tool_calls:
                    break
                messages.append(
                    {
                        "role": "assistant",
                        "content": message.content,
                        "tool_calls": [c.model_dump() for c in message.tool_calls],
                    }
                )
                for call in message.tool_calls:
                    if call.type != "function":
                        continue
                    text = await self.call_tool(
                        session, call.function.name, json.loads(call.function.arguments)
                    )
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
            parsed = ANSWER.match(said.strip())
            answer = (
                dict(zip(("status", "result", "note"), parsed.groups(), strict=True))
                if parsed
                else {}
            )
            if answer.get("status") not in STATUSES:
                answer = {"status": "stalled", "result": "", "note": f"no answer: {said[:200]}"}
            span.set_output(said)
            if answer["status"] != "done":
                span.set_status(Status(StatusCode.ERROR, answer["note"]))
            return answer

    async def carry_out(self, session: ClientSession) -> dict[str, str]:
        """Plan, run each step (again after ``again``), plan again after ``recut``; the
        steps' results."""
        done: dict[str, str] = {}
        issues: list[str] = []
        steps = await self.plan(done, issues)
        while steps:
            step = steps[0]
            for attempt in range(1, MAX_STEP_ATTEMPTS + 1):
                answer = await self.attempt(session, step, attempt, done)
                if answer["status"] != "again":
                    break
            status, note = answer["status"], answer["note"]
            if status == "done":
                done[step.slug] = answer["result"]
                steps = steps[1:]
            elif status == "recut" and self.plans < MAX_PLANS:
                issues.append(f"{step.slug}: {note}")
                steps = await self.plan(done, issues)
            else:
                raise JobFailed(f"{step.slug}: {status}: {note}")
        return done

    async def check(self, session: ClientSession, run: str) -> None:
        """The app's check: the booked run ships by the order form's day."""
        with self.tracer.start_as_current_span(
            "check ship date", openinference_span_kind="chain"
        ) as span:
            span.set_input(run)
            booked = json.loads(await self.call_tool(session, "run_status", {"run": run}))
            if booked["ship_by"] != ORDER["ship_by"]:
                message = (
                    f"{run} ships by {booked['ship_by']}; the order form says {ORDER['ship_by']}"
                )
                span.set_output(message)
                span.set_status(Status(StatusCode.ERROR, message))
                raise JobFailed(message)
            span.set_output("ships by the order form's day")

    async def watch(self, session: ClientSession, run: str) -> None:
        """The app's watch of the booked run: its state a day."""
        with self.tracer.start_as_current_span(
            f"watch run {run}", openinference_span_kind="chain"
        ) as span:
            span.set_input(run)
            for _ in range(int(self.label.params.get("polls", 1)) + 1):
                state = json.loads(await self.call_tool(session, "run_status", {"run": run}))
                if state["state"] != "booked":
                    span.set_output(state["state"])
                    span.set_status(Status(StatusCode.ERROR, state["state"]))
                    raise JobFailed(f"{run} {state['state']}")
            span.set_output("booked")

    async def run(self) -> str:
        """Press the record under the app's root span; the OTel trace id."""
        with self.tracer.start_as_current_span(
            f"press {ORDER['catalogue']}",
            openinference_span_kind="agent",
            record_exception=False,
            set_status_on_exception=False,
        ) as root:
            root.set_input(self.brief())
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
                        await self.check(session, done["book_run"])
                        await self.watch(session, done["book_run"])
                    except JobFailed as exc:
                        root.record_exception(exc)
                        root.set_status(Status(StatusCode.ERROR, str(exc)))
                        root.set_output(str(exc))
                    else:
                        root.set_output("pressed")
        return trace_id


async def _job(label: Label, base_url: str, tracer: OITracer, spans: Path) -> str:
    """One job on a client of its own (its connections belong to the job's event loop)."""
    async with AsyncOpenAI(base_url=base_url, api_key="test") as client:
        return await Job(label, client, tracer, spans).run()


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the vinyl scenarios with the instrumentors', the app's and the plant server's spans
    on ``provider``; run name -> trace id."""
    if not labels:
        return {}
    openai_instrumentor = OpenAIInstrumentor()
    openai_instrumentor.instrument(tracer_provider=provider)
    # the client side: it wraps mcp.client.stdio.stdio_client (the app calls it through its
    # module, so the wrapper is the one called) to write the trace context into each request
    mcp_instrumentor = MCPInstrumentor()
    mcp_instrumentor.instrument(tracer_provider=provider)
    tracer = OITracer(provider.get_tracer(TRACER), config=TraceConfig())
    out = {}
    try:
        with ModelServer(respond=respond) as server, tempfile.TemporaryDirectory() as tmp:
            for label in labels:
                spans = Path(tmp) / f"{label.run}.jsonl"
                out[label.run] = asyncio.run(
                    _job(label, server.base_url("corpus-vinyl"), tracer, spans)
                )
                # the server's spans, as the play's provider's processors would have had them
                # (the SDK provider has no public getter for its processors)
                for line in spans.read_text(encoding="utf-8").splitlines():
                    for span in read_spans(line):
                        provider._active_span_processor.on_end(span)
    finally:
        mcp_instrumentor.uninstrument()
        openai_instrumentor.uninstrument()
    return out

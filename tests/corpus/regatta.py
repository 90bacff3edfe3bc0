"""The regatta agent: a rowing club's secretary organising a head race on the river, written as
a new planscope user writes it from the SDK's public docs, its services on an **MCP server**.

A **synchronous** app (no ``async def`` of its own) instrumented with the **planscope SDK's
decorators** (``@planscope.run``, ``@planscope.planner``, ``@planscope.step``,
``@planscope.llm``; the docs' main surface, their 60-second example) and, for the one generic
MCP dispatcher whose tool name is only known at call time, the decorators' context-manager twin
``planscope.start_tool`` (the docs: "for code that is not a function"). Its services are tools
of a ``FastMCP`` server (``_regatta_mcp.py``) served over **streamable HTTP** in the same
process; the app calls them through the ``mcp`` SDK's ``ClientSession``, an async API, run from
synchronous code through an ``anyio`` blocking portal (``portal.call(session.call_tool, ...)``).
Traced by **OpenInference's MCP instrumentor** (it carries the trace context in each request's
``params._meta``, so the server's own spans join the run's trace) and **OpenInference's OpenAI
instrumentor** (the planner's model call, the ``openai`` client on the conformance suite's fake
OpenAI server, whose ``respond`` is this module's scripted model).

The app: the planner's model reads the entry form and the secretary's note (which it trusts
over the form) and answers a JSON object: the ``givens`` it read and the ``steps`` (a
``planscope.Plan``: each step's ``requires`` and ``produces``). Steps whose dependencies are
done run **in parallel in a thread pool** (``ThreadPoolExecutor``, each submitted with
``contextvars.copy_context().run``, as the SDK's docs say), each executor handed its step's
context explicitly (``{key: board[key] for key in step.requires}``) and recording it with
``planscope.record_context`` (also when it is empty). The services raise race-control flags:
``yellow`` (the executor calls again at the hinted time), ``red`` (the app runs the step
again), ``blue`` (the app asks the planner for a new plan with every issue so far), ``black``
(final). A ``RetryBudget(max_attempts_per_step=5, max_replans=3)`` is enforced by the SDK. After
the notice, the app checks the closure's day against the entry form
(``record_outcome_check``) and watches the river (a ``planscope.start_span``).

>>> _step_text("pay_fee", {"account": "ARA-1"})
'pay the course fee from the club account ARA-1'
"""

from __future__ import annotations

import contextvars
import json
import re
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import mcp.client.streamable_http
import planscope
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession
from mcp.types import CallToolResult, TextContent
from openai import OpenAI
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
from openinference.instrumentation.mcp import MCPInstrumentor
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from planscope import Plan, PlanStep, RetryBudget, RetryBudgetExceeded

from tests.conformance.fake_openai import ModelServer, completion

from ._labels import Label
from ._regatta_mcp import WORLD, RiverServer

AGENT = "regatta-secretary"
MODEL = "river-planner-1"
FORM = {
    "region": "tyne",
    "lanes": "6",
    "race_day": "2027-05-15",
    "account": "ARA-40317",
    "yard": "Hexham",
}
BRIEF = (
    "Tynemouth Spring Head: find a course, close it to boats, hire launches, pay, tell the clubs"
)
MAX_CALLS = 10
MAX_POLLS = 15

# The plan template the scripted model fills in: id, tool, depends_on, requires, produces.
_TEMPLATE = (
    ("find_course", "search_courses", (), ("region", "lanes"), ("course",)),
    (
        "request_closure",
        "apply_for_closure",
        ("find_course",),
        ("course", "race_day"),
        ("closure",),
    ),
    ("pay_fee", "pay_course_fee", ("find_course",), ("course", "account"), ("receipt",)),
    ("hire_launches", "hire_launches", ("request_closure",), ("closure", "yard"), ("launches",)),
    (
        "notify_clubs",
        "send_notice",
        ("request_closure", "pay_fee", "hire_launches"),
        ("closure", "launches", "receipt"),
        ("notice",),
    ),
)
_WORDING = {
    "find_course": "find a free course in the {region} register with {lanes} lanes",
    "request_closure": "close the course to boats on {race_day}",
    "pay_fee": "pay the course fee from the club account {account}",
    "hire_launches": "hire umpire launches from the {yard} boatyard",
    "notify_clubs": "send the competing clubs the regatta notice",
}


def _step_text(step_id: str, givens: dict[str, str]) -> str:
    return _WORDING[step_id].format(**{k: givens.get(k, "?") for k in FORM})


def _pairs(text: str) -> dict[str, str]:
    return dict(re.findall(r"(\w+)=([^;\s\])]+)", text))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted planner model: the entry form, overridden by the secretary's note, then by
    the issues' ``use key=value`` hints; the steps not done yet, as JSON.

    >>> msg = {"role": "user", "content": "Entry form: lanes=6\\nSecretary's note: lanes=4"}
    >>> out = respond({"model": MODEL, "messages": [msg]})
    >>> json.loads(out["choices"][0]["message"]["content"])["givens"]["lanes"]
    '4'
    """
    text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    givens: dict[str, str] = {}
    done: list[str] = []
    for line in text.splitlines():
        if line.startswith(("Entry form:", "Secretary's note:")):
            givens.update(_pairs(line))
        elif line.startswith("Issue:") and "(use " in line:
            givens.update(_pairs(line.rsplit("(use ", 1)[1]))
        elif line.startswith("Done:"):
            done = re.findall(r"(\w+)=", line)
    steps = [
        {
            "id": sid,
            "description": _step_text(sid, givens),
            "tool": tool,
            "depends_on": [d for d in deps if d not in done],
            "requires": list(requires),
            "produces": list(produces),
        }
        for sid, tool, deps, requires, produces in _TEMPLATE
        if sid not in done
    ]
    content = json.dumps({"givens": givens, "steps": steps})
    return completion(body, {"role": "assistant", "content": content})


class Flag(Exception):
    """A race-control flag a river service raised, as the MCP result's text carries it."""

    def __init__(self, tool: str, colour: str, text: str, hint: str) -> None:
        super().__init__(f"{tool}: FLAG {colour}: {text}" + (f" [{hint}]" if hint else ""))
        self.colour = colour
        self.text = text
        self.hint = hint

    @classmethod
    def parse(cls, tool: str, message: str) -> Flag:
        """The flag in FastMCP's ``Error executing tool {tool}: ...`` text."""
        found = re.search(r"FLAG (\w+): (.*?)(?: \[(.*)\])?$", message)
        if found is None:
            return cls(tool, "black", message, "")
        return cls(tool, found.group(1), found.group(2), found.group(3) or "")


class River:
    """A synchronous client of the river's MCP server: the async ``ClientSession`` driven
    through a blocking portal, callable from any thread."""

    def __init__(self, url: str) -> None:
        self._stack = ExitStack()
        self._portal: BlockingPortal = self._stack.enter_context(start_blocking_portal())
        # through the module: the MCP instrumentor wraps the module's function
        transport = mcp.client.streamable_http.streamable_http_client(url)
        read, write, *_ = self._stack.enter_context(
            self._portal.wrap_async_context_manager(transport)
        )
        self._session = self._stack.enter_context(
            self._portal.wrap_async_context_manager(ClientSession(read, write))
        )
        self._portal.call(self._session.initialize)

    def call(self, tool: str, arguments: dict[str, Any]) -> str:
        """One tool call, its span the planscope tool span; a flag raises :class:`Flag`."""
        with planscope.start_tool(tool, resource=f"mcp:river/{tool}", arguments=arguments) as t:
            result: CallToolResult = self._portal.call(self._session.call_tool, tool, arguments)
            text = " ".join(c.text for c in result.content if isinstance(c, TextContent))
            if result.isError:
                raise Flag.parse(tool, text)
            t.set_output(text)
            return text

    def call_until_clear(self, tool: str, arguments: dict[str, Any]) -> str:
        """Call ``tool``, calling again at the hinted time while it answers a yellow flag."""
        retimed: dict[str, str] = {}
        for _ in range(MAX_CALLS):
            try:
                return self.call(tool, {**arguments, **retimed})
            except Flag as flag:
                if flag.colour != "yellow":
                    raise
                retimed = _pairs(flag.hint)
        raise Flag(tool, "black", f"still flagged after {MAX_CALLS} calls", "")

    def close(self) -> None:
        """End the session, the transport and the portal's event loop."""
        self._stack.close()


@dataclass
class Secretary:
    """The club secretary's agent for one regatta entry."""

    river: River
    model: OpenAI
    starve: dict[str, Any] = field(default_factory=dict)
    board: dict[str, str] = field(default_factory=dict)
    results: dict[str, str] = field(default_factory=dict)
    trace_id: str = ""

    @planscope.llm(MODEL, provider="openai")
    def ask_model(self, messages: list[ChatCompletionMessageParam]) -> ChatCompletion:
        """The planner's model call."""
        return self.model.chat.completions.create(
            model=MODEL, messages=messages, response_format={"type": "json_object"}
        )

    @planscope.planner
    def draw_up(self, brief: str, issues: list[str]) -> Plan:
        """Ask the model for the plan (the steps not done yet); its givens go on the board."""
        done = "; ".join(f"{k}={v}" for k, v in self.results.items())
        lines = [brief, *(f"Issue: {i}" for i in issues), *([f"Done: {done}"] if done else [])]
        reply = self.ask_model(
            [
                {"role": "system", "content": "You plan regatta paperwork. Answer JSON."},
                {"role": "user", "content": "\n".join(lines)},
            ]
        )
        answer = json.loads(reply.choices[0].message.content or "{}")
        self.board.update(answer["givens"])
        steps = [PlanStep(**s) for s in answer["steps"]]
        current = planscope.current_plan()
        if current is None:
            return Plan(steps, objective=BRIEF)
        return current.replan(steps, reason=issues[-1])

    @planscope.step(executor="steward")
    def carry_out(self, step: PlanStep, context: dict[str, str]) -> str:
        """One attempt of one step by a steward, with the context the app handed over."""
        planscope.record_context(context)
        if any(k not in context for k in step.requires):
            # a steward short of its inputs takes the step's own wording for its answer
            planscope.record_self_assessment("success")
            return step.description
        try:
            result = self._work(step, context)
        except Flag as flag:
            if flag.colour == "blue":
                planscope.record_replan_request(str(flag), step_id=step.id)
            planscope.record_self_assessment("failure")
            raise
        planscope.record_self_assessment("success")
        return result

    def _work(self, step: PlanStep, context: dict[str, str]) -> str:
        tool = step.tool or ""
        if tool == "search_courses":
            page: int | None = 1
            while page is not None:
                args = {"region": context["region"], "lanes": int(context["lanes"]), "page": page}
                listing = json.loads(self.river.call_until_clear(tool, args))
                for course in listing["courses"]:
                    if course["free"] and course["lanes"] >= int(context["lanes"]):
                        return str(course["course"])
                page = listing["next_page"]
            raise Flag(tool, "black", "no free course in the register", "")
        if tool == "apply_for_closure":
            args = {"course": context["course"], "day": context["race_day"]}
            application = self.river.call_until_clear(tool, args)
            for _ in range(MAX_POLLS):
                status = self.river.call("closure_status", {"application": application})
                if status.startswith("granted: "):
                    return status.removeprefix("granted: ")
            raise Flag(tool, "black", f"{application} still pending after {MAX_POLLS} checks", "")
        # the other services take the step's context as their arguments
        return self.river.call_until_clear(tool, {k: context[k] for k in step.requires})

    def handed(self, step: PlanStep) -> dict[str, str]:
        """The context the app hands the step's executor (the scenario may hand less)."""
        given = {k: self.board[k] for k in step.requires if k in self.board}
        if self.starve.get("step") == step.id:
            given = {k: v for k, v in given.items() if k in self.starve["given"]}
        return given

    @planscope.run(
        AGENT,
        variant="plan-and-execute",
        budget=RetryBudget(max_attempts_per_step=5, max_replans=3),
    )
    def organise(self, objective: str, run_id: str) -> str:
        """Organise the regatta: plan, run the steps in waves, check, watch."""
        run = planscope.current_run()
        self.trace_id = (run.trace_id or "") if run else ""
        issues: list[str] = []
        try:
            plan = self.draw_up(objective, issues)
            with ThreadPoolExecutor(max_workers=3, thread_name_prefix="steward") as pool:
                while True:
                    wave = [
                        s
                        for s in plan.steps
                        if s.id not in self.results and all(d in self.results for d in s.depends_on)
                    ]
                    if not wave:
                        break
                    futures: list[tuple[PlanStep, Future[str]]] = [
                        (
                            s,
                            pool.submit(
                                contextvars.copy_context().run, self.carry_out, s, self.handed(s)
                            ),
                        )
                        for s in wave
                    ]
                    replan = ""
                    for s, future in futures:
                        try:
                            value = future.result()
                        except Flag as flag:
                            if flag.colour == "black":
                                raise
                            if flag.colour == "blue":
                                replan = f"{s.id}: {flag.text} (use {flag.hint})"
                            continue  # red: the step runs again in the next wave
                        self.results[s.id] = value
                        self.board.update(dict.fromkeys(s.produces, value))
                    if replan:
                        issues.append(replan)
                        plan = self.draw_up(objective, issues)
        except (Flag, RetryBudgetExceeded) as e:
            planscope.set_outcome("failure", reason=str(e))
            return f"failed: {e}"
        granted = json.loads(self.river.call("closure_details", {"closure": self.board["closure"]}))
        planscope.record_outcome_check(
            granted["day"] == FORM["race_day"],
            name="closure_on_race_day",
            reason=f"closure for {granted['day']}, entry form {FORM['race_day']}",
        )
        with planscope.start_span("watch river"):
            for _ in range(2):
                word = self.river.call("river_status", {"course": self.board["course"]})
                if word.startswith("abandoned"):
                    planscope.record_event("regatta_abandoned", reason=word)
                    return f"notice {self.board['notice']}, then {word}"
        return f"notice {self.board['notice']}"


def brief(label: Label) -> str:
    """The entry form and the secretary's note the planner reads."""
    form = "; ".join(f"{k}={v}" for k, v in FORM.items())
    note = label.params.get("note", {})
    lines = [BRIEF, f"Entry form: {form}"]
    if note:
        lines.append("Secretary's note: " + "; ".join(f"{k}={v}" for k, v in note.items()))
    return "\n".join(lines)


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the regatta scenarios with planscope's, the instrumentors' and the river server's
    spans on ``provider``; run name -> trace id."""
    if not labels:
        return {}
    planscope.configure(tracer_provider=provider)
    openai_instrumentor = OpenAIInstrumentor()
    openai_instrumentor.instrument(tracer_provider=provider)
    mcp_instrumentor = MCPInstrumentor()
    mcp_instrumentor.instrument(tracer_provider=provider)
    out: dict[str, str] = {}
    try:
        with ModelServer(respond=respond) as models, RiverServer(provider) as server:
            model = OpenAI(base_url=models.base_url("corpus-regatta"), api_key="sk-corpus")
            river = River(server.url)
            try:
                for label in labels:
                    WORLD.reset(dict(label.params))
                    secretary = Secretary(river, model, starve=label.params.get("starve", {}))
                    secretary.organise(brief(label), label.run)
                    out[label.run] = secretary.trace_id
            finally:
                river.close()
    finally:
        mcp_instrumentor.uninstrument()
        openai_instrumentor.uninstrument()
    return out

"""A rail signalling maintenance depot planning a night's track-side job on the real **OpenAI
Agents SDK**, traced by **OpenInference's openai-agents instrumentor**
(``OpenAIAgentsInstrumentor().instrument(tracer_provider=..., config=TraceConfig())``, content
captured), plus the app's own plain OpenTelemetry spans (a root per work order, a check and a
watch), against a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)``). No planscope code.

Sealed-63 split only (see README.md). The job: signal SB-114's failed LED head is replaced in a
night possession. Find an engineering possession of the line in the signal's track section (a
paged register), get the overhead-line isolation for it (a request to the electrical control
room, polled), book the signalling crew from the depot for the night, hire a road-rail vehicle
on the job's cost centre, notify the signaller at the controlling box. Written as a team writes
a planner-executor app on the SDK:

* a ``job_planner`` agent (one ``Runner.run`` per plan, ``output_type`` :class:`PlanSheet`)
  answers the plan as one markdown string, ``plan_markdown``: a ``### Step <n> — <slug>``
  section per step, a sentence of purpose, then a fenced ``json`` block ``{"tool": ...,
  "args": {...}}`` where an argument ``"@<slug>"`` is that earlier step's result; a re-plan
  leaves the settled steps out and numbers its steps on;
* a ``track_runner`` agent (one ``Runner.run`` per step attempt, ``output_type``
  :class:`StepOutcome`) is handed the step's section with the earlier results filled in, calls
  the depot's ``function_tool`` services and answers ``done`` / ``again`` / ``replan`` /
  ``refused`` / ``stalled``;
* the services raise :class:`Fault` (``«aspect» text``); the tools' ``failure_error_function``
  hands the model ``{"aspect", "detail", "retry_after"}``: ``caution`` (the runner calls again
  with ``after`` the time named, in the same run), ``danger`` (the runner reports ``again``, the
  app runs the step again, up to eight attempts), ``diverging`` (``(use key=value)``: the app
  asks for a new plan, up to five plans), ``stop`` (final);
* after the last step the app checks the crew booking against the work order's night (``check
  crew booking``) and watches the signal back in service (``watch signal SB-114``).

The SDK's own export to OpenAI's platform is never used: the instrumentor's exclusive mode
replaces the SDK's default processor with its own for the play (and puts it back afterwards),
and the play's model client points at the loopback server.

The planner trusts the possession planner's notes over the work order: the scenario's wrong
value comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    RunContextWrapper,
    Runner,
    Tool,
    function_tool,
    trace,
)
from agents.exceptions import MaxTurnsExceeded
from openai import AsyncOpenAI
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from pydantic import BaseModel

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label

TRACER = "signalbox-app"
ORDER: dict[str, Any] = {
    "work_order": "WO-63114",
    "signal": "SB-114",
    "route": "Northern Fells line",
    "section": "Carrbridge-Aviemore",
    "line": "Down Main",
    "depot": "Inverness signalling depot",
    "night": "2027-03-17",
    "cost_centre": "CC-41207",
    "box": "Carrbridge signal box",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_READS = 12
"""Isolation reads in one run before the runner reports the isolation stalled."""
MAX_WAITS = 8
PLANNER = "You are the depot's job planner: answer the plan as markdown step sections."
RUNNER = "You are a track runner: carry out the step's call with your tools, then report."


class Fault(RuntimeError):
    """A depot service's refusal, ``«aspect» text``."""

    def __init__(self, aspect: str, detail: str, retry_after: str = "") -> None:
        super().__init__(f"«{aspect}» {detail}")
        self.aspect, self.detail, self.retry_after = aspect, detail, retry_after


def fault_for_model(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """What the runner is told when a tool raises: the fault as JSON (the SDK's default text
    would hide the aspect)."""
    if isinstance(error, Fault):
        body = {"aspect": error.aspect, "detail": error.detail}
        if error.retry_after:
            body["retry_after"] = error.retry_after
        return json.dumps(body)
    return json.dumps({"aspect": "stop", "detail": f"{type(error).__name__}: {error}"})


class PlanSheet(BaseModel):
    revision: int
    plan_markdown: str
    """``### Step <n> — <slug>`` sections, each a purpose and a fenced ``json`` call."""


class StepOutcome(BaseModel):
    status: Literal["done", "again", "replan", "refused", "stalled"]
    value: str
    note: str


@dataclass
class Step:
    number: int
    slug: str
    purpose: str
    tool: str
    args: dict[str, Any]


_SECTION = re.compile(
    r"^### Step (\d+) — ([\w-]+)\n(.*?)\n```json\n(.*?)\n```", re.MULTILINE | re.DOTALL
)


def render_plan(title: str, steps: list[Step]) -> str:
    """The plan as markdown sections.

    >>> print(render_plan("WO-1", [Step(2, "isolate-line", "Isolate it.",
    ...     "request_isolation", {"possession": "@find-possession"})]))
    ## Work plan WO-1
    <BLANKLINE>
    ### Step 2 — isolate-line
    Isolate it.
    ```json
    {"tool": "request_isolation", "args": {"possession": "@find-possession"}}
    ```
    <BLANKLINE>
    """
    out = [f"## Work plan {title}", ""]
    for s in steps:
        call = json.dumps({"tool": s.tool, "args": s.args})
        out += [f"### Step {s.number} — {s.slug}", s.purpose, "```json", call, "```", ""]
    return "\n".join(out)


def parse_plan(markdown: str) -> list[Step]:
    """The plan's steps, in order.

    >>> [s.slug for s in parse_plan(render_plan("x", [Step(1, "a-b", "p", "t", {})]))]
    ['a-b']
    """
    steps = []
    for number, slug, purpose, block in _SECTION.findall(markdown):
        call = json.loads(block)
        steps.append(Step(int(number), slug, purpose.strip(), call["tool"], call["args"]))
    return steps


def fill(args: dict[str, Any], done: dict[str, str]) -> dict[str, Any]:
    """The step's arguments with each ``"@slug"`` replaced by that step's result.

    >>> fill({"crew": "@book-crew", "yard": "Perth"}, {"book-crew": "CR-7"})
    {'crew': 'CR-7', 'yard': 'Perth'}
    """
    return {
        k: done.get(v[1:], v) if isinstance(v, str) and v.startswith("@") else v
        for k, v in args.items()
    }


# --- the scripted model -------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": json.dumps(body, ensure_ascii=False)}


def _plan(brief: str) -> dict[str, Any]:
    """The planner's answer: the work order's facts, the possession planner's notes trusted
    over them; after a ``(use key=value)`` setback that value; settled steps left out."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Work order"]) | json.loads(
        lines.get("Possession planner's notes", "{}")
    )
    settled: dict[str, str] = json.loads(lines.get("Settled", "{}"))
    revision = int(lines.get("Revision", "1"))
    for key, value in re.findall(r"\(use (\w+)=([^)]+)\)", lines.get("Setbacks", "")):
        facts[key] = value
    steps = [
        ("find-possession",
         f"Find an engineering possession of the {facts['line']} in section {facts['section']}.",
         "search_possessions",
         {"route": facts["route"], "section": facts["section"], "line": facts["line"]}),
        ("isolate-line", "Get the overhead-line isolation for the possession.",
         "request_isolation", {"possession": "@find-possession"}),
        ("book-crew", f"Book a signalling crew from {facts['depot']} for the night of "
         f"{facts['night']}.", "book_crew",
         {"possession": "@find-possession", "depot": facts["depot"], "night": facts["night"]}),
        ("hire-rrv", f"Hire a road-rail vehicle on cost centre {facts['cost_centre']}.",
         "hire_plant",
         {"crew": "@book-crew", "yard": facts.get("yard", "Inverness yard"),
          "cost_centre": facts["cost_centre"]}),
        ("notify-signaller", f"Tell the signaller at {facts['box']} about the job.",
         "notify_signaller",
         {"box": facts["box"], "possession": "@find-possession", "isolation": "@isolate-line",
          "crew": "@book-crew", "plant": "@hire-rrv"}),
    ]  # fmt: skip
    out = [
        Step(number, slug, purpose, tool, args)
        for number, (slug, purpose, tool, args) in enumerate(steps, 1)
        if slug not in settled
    ]
    title = f"{facts['work_order']} (signal {facts['signal']}), revision {revision}"
    return {"revision": revision, "plan_markdown": render_plan(title, out)}


def _runner(messages: list[dict[str, Any]], order: str) -> dict[str, Any]:
    """The runner's next turn: make the step's call, call again ``after`` a caution, follow
    ``next_page``, read a pending isolation, report."""
    (step,) = parse_plan(order)
    turn = len(messages)
    calls: list[tuple[str, dict[str, Any], str]] = []
    pending: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            pending[c["id"]] = (fn["name"], json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool" and m.get("tool_call_id") in pending:
            calls.append((*pending.pop(m["tool_call_id"]), _text(m.get("content"))))

    def report(status: str, value: str = "", note: str = "") -> dict[str, Any]:
        return _answer({"status": status, "value": value, "note": note})

    if not calls:
        return _call(step.tool, step.args, turn)
    name, called, came_back = calls[-1]
    answer = json.loads(came_back)
    aspect = answer.get("aspect")
    if aspect == "caution":
        waits = sum("after" in c[1] for c in calls)
        if waits >= MAX_WAITS:
            return report("refused", note=f"still cautioned after {waits} waits")
        return _call(name, called | {"after": answer.get("retry_after", "later")}, turn)
    if aspect == "danger":
        return report("again", note=answer["detail"])
    if aspect == "diverging":
        return report("replan", note=answer["detail"])
    if aspect:
        return report("refused", note=answer["detail"])
    if answer.get("next_page"):
        return _call(name, called | {"page": answer["next_page"]}, turn)
    if answer.get("state") == "pending":
        reads = sum(c[0] == "isolation_status" for c in calls)
        if reads >= MAX_READS:
            return report("stalled", note=f"isolation {answer['isolation']} pending {reads} reads")
        return _call("isolation_status", {"isolation": answer["isolation"]}, turn)
    return report("done", str(answer["ref"]), str(answer.get("note", "")))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> brief = "Work order: " + json.dumps(ORDER)
    >>> msg = respond({"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": brief}]})
    >>> plan = json.loads(msg["choices"][0]["message"]["content"])
    >>> [(s.slug, s.args.get("possession")) for s in parse_plan(plan["plan_markdown"])][:2]
    [('find-possession', None), ('isolate-line', '@find-possession')]
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if PLANNER in system:
        return completion(body, _answer(_plan(user)))
    return completion(body, _runner(messages, user))


# --- the depot's services -----------------------------------------------------------------
@dataclass
class Depot:
    """The possession register, electrical control room, crew roster, plant yard and signal box
    of one work order."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    possessions: dict[str, str] = field(default_factory=dict)
    isolations: dict[str, int] = field(default_factory=dict)
    crews: list[dict[str, str]] = field(default_factory=list)
    hires: list[dict[str, str]] = field(default_factory=list)

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
        if f["aspect"] == "caution":
            raise Fault("caution", f"{f['text']}; try again after {f['hint']}", f["hint"])
        if f["aspect"] == "diverging":
            raise Fault("diverging", f"{f['text']} (use {f['hint']})")
        raise Fault(f["aspect"], f["text"])

    def tools(self) -> list[Tool]:
        """The services as the runner's function tools."""

        def search_possessions(route: str, section: str, line: str, page: int = 1) -> str:
            """Engineering possessions booked on a line in a track section, a page at a time."""
            self.fault("search_possessions")
            code = "".join(w[0] for w in re.split(r"[- ]", section) if w).upper()
            if page < int(self.params.get("pages", 1)):
                short = [f"P-{code}-{page * 10 + n}" for n in (1, 2)]
                return json.dumps({"possessions": [], "too_short": short, "next_page": page + 1})
            ref = f"P-{code}-{self.label.seed}"
            self.possessions[ref] = section
            return json.dumps(
                {"ref": ref, "section": section, "line": line, "hours": "00:40-05:10"}
            )

        def request_isolation(possession: str) -> str:
            """Ask the electrical control room to isolate the overhead line for a possession."""
            self.fault("request_isolation")
            section = self.possessions.get(possession, "")
            if section != ORDER["section"]:
                raise Fault(
                    "stop",
                    f"ECR will not isolate for {possession}: it lies in {section or 'no'} "
                    f"section, signal {ORDER['signal']} is in {ORDER['section']}",
                )
            ref = f"ISO-{self.label.seed}-{len(self.isolations) + 1}"
            self.isolations[ref] = 0
            return json.dumps({"isolation": ref, "state": "pending"})

        def isolation_status(isolation: str) -> str:
            """Whether the electrical control room has granted an isolation yet."""
            self.isolations[isolation] = self.isolations.get(isolation, 0) + 1
            stuck = bool(self.params.get("stuck"))
            if stuck or self.isolations[isolation] < int(self.params.get("polls", 1)):
                return json.dumps({"isolation": isolation, "state": "pending"})
            return json.dumps({"ref": isolation, "state": "granted"})

        def book_crew(possession: str, depot: str, night: str, after: str = "") -> str:
            """Book a signalling crew from a depot for a possession's night."""
            self.fault("book_crew")
            busy = self.params.get("depot_to")
            if busy and depot == ORDER["depot"]:
                raise Fault(
                    "diverging",
                    f"{depot}'s crews are all on the Highland main line blockade "
                    f"(use depot={busy})",
                )
            crew = f"CR-{self.label.seed % 90 + 10}"
            self.crews.append({"crew": crew, "night": night, "depot": depot})
            return json.dumps({"ref": crew, "night": night, "book_on": after or "22:30"})

        def hire_plant(crew: str, yard: str, cost_centre: str, after: str = "") -> str:
            """Hire a road-rail vehicle for a crew from a plant yard, on a cost centre."""
            self.fault("hire_plant")
            moved = self.params.get("cost_centres", ())
            if cost_centre != ORDER["cost_centre"] and cost_centre not in moved:
                raise Fault("stop", f"finance holds no open cost centre {cost_centre}")
            ref = f"RRV-{self.label.seed}-{len(self.hires) + 1}"
            self.hires.append({"crew": crew, "yard": yard, "cost_centre": cost_centre})
            return json.dumps({"ref": ref, "yard": yard})

        def notify_signaller(
            box: str, possession: str, isolation: str, crew: str, plant: str, after: str = ""
        ) -> str:
            """Send the signaller at the controlling box the job's particulars."""
            self.fault("notify_signaller")
            return json.dumps({"ref": f"MSG-{possession}-{crew}", "to": box})

        functions = (
            search_possessions,
            request_isolation,
            isolation_status,
            book_crew,
            hire_plant,
            notify_signaller,
        )
        return [function_tool(f, failure_error_function=fault_for_model) for f in functions]


# --- the app ------------------------------------------------------------------------------
class JobFailed(Exception):
    """The work order could not be carried out (the reason is the message)."""


class SignalJob:
    """One work order, from the first plan to the signal watched back in service."""

    def __init__(self, label: Label, model: OpenAIChatCompletionsModel, tracer: Any) -> None:
        self.label = label
        self.depot = Depot(label)
        self.tracer = tracer
        self.planner = Agent(
            name="job_planner", instructions=PLANNER, model=model, output_type=PlanSheet
        )
        self.runner = Agent(
            name="track_runner",
            instructions=RUNNER,
            model=model,
            tools=self.depot.tools(),
            output_type=StepOutcome,
        )
        self.done: dict[str, str] = {}
        self.setbacks: list[str] = []

    def brief(self, revision: int) -> str:
        notes = {
            k: self.label.params[k]
            for k in ("section", "night", "cost_centre")
            if k in self.label.params
        }
        lines = [
            f"Objective: replace the failed LED head of signal {ORDER['signal']} in a night "
            "possession.",
            f"Work order: {json.dumps(ORDER)}",
        ]
        if notes:
            lines.append(f"Possession planner's notes: {json.dumps(notes)}")
        if revision > 1:
            lines += [
                f"Revision: {revision}",
                f"Settled: {json.dumps(self.done)}",
                f"Setbacks: {' | '.join(self.setbacks)}",
            ]
        return "\n".join(lines)

    async def attempt(self, step: Step, attempt: int) -> StepOutcome:
        """One runner run of a step (its section with the earlier results filled in)."""
        section = render_plan(
            f"{ORDER['work_order']} step {step.number}, attempt {attempt}",
            [Step(step.number, step.slug, step.purpose, step.tool, fill(step.args, self.done))],
        )
        try:
            result = await Runner.run(self.runner, section, max_turns=MAX_READS + MAX_WAITS + 6)
        except MaxTurnsExceeded as e:
            return StepOutcome(status="stalled", value="", note=str(e))
        out = result.final_output
        assert isinstance(out, StepOutcome)
        return out

    async def carry_out(self) -> None:
        """Plan, run each step (again after ``again``), re-plan after ``replan``."""
        for revision in range(1, MAX_PLANS + 1):
            sheet = (await Runner.run(self.planner, self.brief(revision))).final_output
            assert isinstance(sheet, PlanSheet)
            replan = ""
            for step in parse_plan(sheet.plan_markdown):
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    outcome = await self.attempt(step, attempt)
                    if outcome.status != "again":
                        break
                if outcome.status == "done":
                    self.done[step.slug] = outcome.value
                    continue
                if outcome.status == "replan":
                    replan = f"step {step.number} {step.slug}: {outcome.note}"
                    break
                raise JobFailed(f"{step.slug} {outcome.status}: {outcome.note}")
            if not replan:
                return
            self.setbacks.append(replan)
        raise JobFailed(f"no plan held after {MAX_PLANS}: {self.setbacks[-1]}")

    def check(self) -> None:
        """The app's own check: the crew is booked for the work order's night."""
        with self.tracer.start_as_current_span("check crew booking") as span:
            crew = self.depot.crews[-1]
            span.set_attribute("crew.night", crew["night"])
            span.set_attribute("work_order.night", ORDER["night"])
            if crew["night"] != ORDER["night"]:
                reason = (
                    f"{crew['crew']} booked for {crew['night']}, the possession is {ORDER['night']}"
                )
                span.set_status(Status(StatusCode.ERROR, reason))
                raise JobFailed(reason)

    def watch(self) -> None:
        """The app watches the signal back in service for the first trains."""
        params = self.label.params
        with self.tracer.start_as_current_span(f"watch signal {ORDER['signal']}") as span:
            for read in range(1, 5):
                if self.label.scenario.startswith("external_") and read > int(params["reads"]):
                    reason = (
                        f"cable theft near {ORDER['signal']} put it back to danger at read {read}"
                    )
                    span.add_event("signal", {"read": read, "aspect": "red", "fault": reason})
                    span.set_status(Status(StatusCode.ERROR, reason))
                    raise JobFailed(reason)
                span.add_event("signal", {"read": read, "aspect": "proceed"})

    async def run(self) -> str:
        """The work order under the app's root span; its trace id."""
        with self.tracer.start_as_current_span(
            f"signal job {ORDER['work_order']}",
            attributes={"work_order": ORDER["work_order"], "signal": ORDER["signal"]},
        ) as root:
            try:
                with trace("signal job", group_id=self.label.run):
                    await self.carry_out()
                self.check()
                self.watch()
                root.set_attribute("outcome", "done")
            except JobFailed as e:
                root.set_attribute("outcome", "failed")
                root.record_exception(e)
                root.set_status(Status(StatusCode.ERROR, str(e)))
            return format(root.get_span_context().trace_id, "032x")


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the signalbox scenarios with OpenInference's spans and the app's on ``provider``; run
    name -> trace id."""
    if not labels:
        return {}
    from openinference.instrumentation import TraceConfig
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    # content captured (the team debugs from what the planner and the runner were sent); the
    # exclusive processor stands in for the SDK's default exporter while the play runs
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(
        tracer_provider=provider,
        config=TraceConfig(hide_inputs=False, hide_outputs=False),
        exclusive_processor=True,
    )
    tracer = provider.get_tracer(TRACER)
    out: dict[str, str] = {}
    try:
        with ModelServer(respond=respond) as server:
            client = AsyncOpenAI(base_url=server.base_url("corpus-signalbox"), api_key="test")
            model = OpenAIChatCompletionsModel(model=MODEL, openai_client=client)

            async def all_runs() -> None:
                for label in labels:
                    out[label.run] = await SignalJob(label, model, tracer).run()

            asyncio.run(all_runs())
    finally:
        instrumentor.uninstrument()
    return out

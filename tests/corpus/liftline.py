"""A ski resort readying a chairlift and its run for opening day, written as a Google Agent
Development Kit (``google-adk`` 1.10.0) user writes a planner-executor app today and traced by
**OpenInference's Google ADK instrumentor** (``openinference-instrumentation-google-adk``
0.1.28, ``GoogleADKInstrumentor().instrument(tracer_provider=...)`` on a plain OpenTelemetry SDK
``TracerProvider``, as its README shows; uninstrumented when the play returns). The model is ADK's
``LiteLlm`` wrapper (``openai/<model>``, ADK's documented route to OpenAI-compatible servers) at
the conformance suite's fake OpenAI server (``ModelServer(respond=...)``). No planscope code.

Sealed-49 split only (see README.md). Opening day for a lift: a certified lift inspector for the
lift's sector is found in the state tramway board's register (read page by page), the board
certifies the lift for the opening day (an application, polled), a snowcat from a grooming
depot is booked for the run the night before, the snowmaking hours are charged to the mountain
operations account, ski patrol signs the run off. As an ADK user writes it:

* one ``InMemorySessionService`` session per opening and **two ``Runner``s over it** (the
  usual way to drive two agent trees from app code over one conversation state): the planner's
  and the crew's;
* the planner is an ``LlmAgent`` (``opening_planner``, ``output_key="checklist"``) answering an
  **opening checklist** in markdown task-list form: a header line, then per job ``- [ ] <job>:
  <what> `tool(key="value", n=3, ref=<<job>>)``` (``<<job>>`` is that earlier job's result); a
  revision ticks the jobs done (``- [x] <job> => <result>``) and applies every ``use key=value``
  the crews were told. Plain text, not an ``output_schema``: the checklist is what the ops
  office reads and the app parses;
* the executor is ADK's documented **loop-with-checker** pattern: a ``LoopAgent``
  (``crew_loop``) over the crew ``LlmAgent`` (``lift_crew``, the services as plain-function
  tools, its work order from the session state in its instruction, ``output_key="crew_report"``)
  and a ``shift_boss`` (a ``BaseAgent``, app code, no model) that reads the report and escalates
  to end the loop, or does not and so has the crew run the job again (``RERUN``). The app sends
  one user message per job (``state_delta`` the work order) and reads the report after;
* the services answer failures two ways, as an ADK user meets them: **as ADK's tool guide
  recommends, a dict** ``{"status": "error", "board": <sign>, "detail", ...}`` the crew reads
  (``WIND HOLD`` with ``reopens``: call again ``not_before`` that time; ``STANDBY``: the crew
  reports ``RERUN`` and the shift boss loops; ``DETOUR`` with ``use``: the app asks for a new
  checklist; ``CLOSED``: final), and a lift-control outage **raised** (``LiftControlFault``): ADK
  1.10 does not catch a tool's exception, it ends the runner's run, and the app runs the job
  again in a new invocation;
* the crew ends with one report line ``<OPEN|RERUN|REROUTE|SHUT|STUCK> >> <value> >> <note>``;
* after the last job the app checks the certificate's opening day against the opening order
  (``check opening day``) and watches the lift until the first chair (``watch lift {lift}``),
  plain OTel spans under its root span ``open lift {lift}``.

ADK 1.10's own tracing (the ``gcp.vertex.agent`` tracer on the process's global provider) is
swapped out while the instrumentor is on (its ``invocation`` and ``agent_run`` spans made no-ops,
its ``call_llm`` and ``execute_tool`` spans written through the instrumentor's tracer): the
trace holds the instrumentor's spans and the app's only; OpenInference's docs set no global
provider, and neither does the play.

The planner trusts the ops office's note over the opening order: a scenario's wrong value
comes from the note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import warnings
import zlib
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label

# litellm reads its model price map from the network at import unless told to use its own copy
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# LiteLlm talks to the fake server only: no Google client, no Vertex AI
os.environ.setdefault("GOOGLE_GENAI_USE_VERTEXAI", "0")

with warnings.catch_warnings():
    # google-cloud's Python-version and deprecation notices, raised while ADK imports
    warnings.simplefilter("ignore")
    from google.adk.agents import BaseAgent, LlmAgent, LoopAgent
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.events import Event, EventActions
    from google.adk.models.lite_llm import LiteLlm
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types
    from openinference.instrumentation.google_adk import GoogleADKInstrumentor

TRACER = "liftline-app"
"""The app's tracer (its root span per opening, its check and watch)."""
APP = "liftline"
USER = "mountain-ops"
ORDER: dict[str, Any] = {
    "opening": "OD-2027-1204",
    "resort": "Glenbrae Mountain",
    "lift": "L4 Ptarmigan Express",
    "sector": "North Bowl",
    "run": "Ptarmigan",
    "opening_day": "2027-12-04",
    "night": "2027-12-03",
    "depot": "Base Depot",
    "account": "MO-55817",
    "hours": 36,
}
NOTED = ("sector", "opening_day", "account")
"""Opening-order values the ops office's note may restate (the planner trusts the note)."""
MAX_ATTEMPTS = 8
MAX_REVISIONS = 5
MAX_HOLDS = 8
MAX_READS = 12
WATCHES = 3
VERBS = ("OPEN", "RERUN", "REROUTE", "SHUT", "STUCK")

PLANNER = (
    "You are Glenbrae's opening-day planner. Write the opening checklist as a markdown task "
    "list: a header line, then one '- [ ] <job>: <what> `tool(key=value, ...)`' line per job; "
    "write <<job>> for a value an earlier job returns. In a revision tick the jobs done as "
    "'- [x] <job> => <result>' and apply every 'use key=value' the crews were told. The ops "
    "office's note corrects the opening order."
)
CREW = (
    "You are a lift crew at Glenbrae. Do the one job of the work order below with the mountain's "
    "services. On a WIND HOLD call again not_before the time it reopens. End with one line "
    "'<OPEN|RERUN|REROUTE|SHUT|STUCK> >> <value> >> <note>'.\n\n{work_order}"
)
JOB_LINE = re.compile(r"^- \[( |x)\] (\w+)(?::(.*?)`(\w+)\((.*)\)`| => (.*))$")
ARG = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|<<\w+>>|-?\d+)')
REPORT = re.compile(r"^(\w+) >> (.*?) >> (.*)$", re.DOTALL)


# --- the checklist ----------------------------------------------------------------------------
@dataclass
class Job:
    """One open job of the checklist: its tool and arguments (``<<job>>`` unresolved)."""

    name: str
    what: str
    tool: str
    args: dict[str, Any]


@dataclass
class Checklist:
    """The planner's checklist: the jobs done (ticked, with results) and the jobs open."""

    done: dict[str, str]
    jobs: list[Job]


def parse_checklist(text: str) -> Checklist:
    """The jobs of a checklist text.

    >>> c = parse_checklist('Checklist\\n- [x] a => INS-1\\n- [ ] b: Go. `f(x="y", n=3, i=<<a>>)`')
    >>> c.done, c.jobs[0].tool, c.jobs[0].args
    ({'a': 'INS-1'}, 'f', {'x': 'y', 'n': 3, 'i': '<<a>>'})
    """
    done: dict[str, str] = {}
    jobs: list[Job] = []
    for line in text.splitlines():
        m = JOB_LINE.match(line.strip())
        if not m:
            continue
        if m[1] == "x":
            done[m[2]] = (m[6] or "").strip()
            continue
        args: dict[str, Any] = {}
        for key, raw in ARG.findall(m[5]):
            args[key] = raw if raw.startswith("<<") else json.loads(raw)
        jobs.append(Job(m[2], m[3].strip(), m[4], args))
    return Checklist(done, jobs)


def resolved(job: Job, results: dict[str, str]) -> dict[str, Any]:
    """A job's arguments, each ``<<job>>`` replaced by that job's result.

    >>> resolved(Job("b", "", "f", {"i": "<<a>>", "n": 3}), {"a": "INS-1"})
    {'i': 'INS-1', 'n': 3}
    """
    out = {}
    for key, value in job.args.items():
        ref = re.fullmatch(r"<<(\w+)>>", value) if isinstance(value, str) else None
        out[key] = results.get(ref[1], "") if ref else value
    return out


# --- the scripted model -----------------------------------------------------------------------
def _arg(value: Any) -> str:
    return value if re.fullmatch(r"<<\w+>>|-?\d+", str(value)) else json.dumps(value)


def _checklist(brief: str) -> str:
    """The planner's checklist for a brief: the order, the note over it, every setback's ``use``
    over both; the jobs carried ticked with their results."""
    lines = dict(re.findall(r"^([\w' ]+): (.*)$", brief, re.MULTILINE))
    facts: dict[str, Any] = json.loads(lines["Opening order"])
    facts |= json.loads(lines.get("Ops office note", "{}"))
    carried: dict[str, str] = json.loads(lines.get("Carried", "{}"))
    setbacks = re.findall(r"^Setback: (.*)$", brief, re.MULTILINE)
    facts |= dict(m for s in setbacks for m in re.findall(r"use (\w+)=([^;)]+)", s))
    jobs = [
        ("find_inspector",
         f"Find a certified lift inspector for {facts['lift']} in {facts['sector']}.",
         "search_inspectors", {"sector": facts["sector"], "lift": facts["lift"]}),
        ("certify_lift",
         f"Get {facts['lift']} certified by the tramway board for {facts['opening_day']}.",
         "request_lift_certificate",
         {"lift": facts["lift"], "inspector": "<<find_inspector>>",
          "opening_day": facts["opening_day"]}),
        ("groom_run",
         f"Book a snowcat from {facts['depot']} to groom {facts['run']} on {facts['night']}.",
         "book_groomer", {"run": facts["run"], "night": facts["night"], "depot": facts["depot"]}),
        ("fund_snowmaking", f"Charge {facts['hours']} snowmaking hours to {facts['account']}.",
         "charge_snowmaking",
         {"account": facts["account"], "hours": int(facts["hours"]),
          "reference": facts["opening"]}),
        ("patrol_signoff", f"Have ski patrol sign {facts['run']} off for opening.",
         "request_patrol_signoff",
         {"run": facts["run"], "certificate": "<<certify_lift>>", "grooming": "<<groom_run>>"}),
    ]  # fmt: skip
    why = setbacks[-1] if setbacks else "first checklist"
    out = [f"Opening checklist {facts['opening']} rev {len(setbacks) + 1} ({why})"]
    out += [f"- [x] {name} => {value}" for name, value in carried.items()]
    for name, what, tool, args in jobs:
        if name not in carried:
            call = ", ".join(f"{k}={_arg(v)}" for k, v in args.items())
            out.append(f"- [ ] {name}: {what} `{tool}({call})`")
    return "\n".join(out)


def _calls(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """This turn's tool calls in order: name, arguments, the tool's answer."""
    out: dict[str, list[Any]] = {
        c["id"]: [c["function"]["name"], json.loads(c["function"]["arguments"]), {}]
        for m in messages
        for c in m.get("tool_calls") or []
    }
    for m in messages:
        if m.get("role") == "tool" and m.get("tool_call_id") in out:
            out[m["tool_call_id"]][2] = json.loads(str(m["content"]))
    return [(n, a, o) for n, a, o in out.values()]


def _call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(args)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": f"lift_{n}_{name}", "type": "function", "function": function}],
    }


def _report(verb: str, value: str = "-", note: str = "") -> dict[str, Any]:
    return {"role": "assistant", "content": f"{verb} >> {value} >> {note}"}


RESULT_KEYS = ("inspector", "certificate", "booking", "receipt", "signoff")


def _crew(system: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The crew's next message: call the job's service, call again after a hold, read the next
    page, read the application, end with the report line."""
    tool = re.search(r"^Service: (\w+)$", system, re.MULTILINE)
    given = re.search(r"^Arguments: (\{.*\})$", system, re.MULTILINE)
    if not tool or not given:
        return _report("SHUT", note="the work order names no service")
    calls = _calls(messages)
    if not calls:
        return _call(tool[1], json.loads(given[1]), 1)
    name, args, answer = calls[-1]
    if answer.get("status") == "error":
        board, detail = answer.get("board", ""), answer.get("detail", "")
        if board == "WIND HOLD":
            holds = sum(a.get("board") == "WIND HOLD" for _, _, a in calls)
            if holds >= MAX_HOLDS:
                return _report("STUCK", note=f"on wind hold {holds} times: {detail}")
            return _call(name, args | {"not_before": answer["reopens"]}, len(calls) + 1)
        if board == "STANDBY":
            return _report("RERUN", note=detail)
        if board == "DETOUR":
            return _report("REROUTE", note=f"{detail}; use {answer['use']}")
        return _report("SHUT", note=f"{board}: {detail}")
    if answer.get("next_page"):
        return _call(name, args | {"page": answer["next_page"]}, len(calls) + 1)
    if answer.get("state") == "awaiting inspection":
        reads = sum(n == "certificate_status" for n, _, _ in calls)
        if reads >= MAX_READS:
            return _report("STUCK", note=f"still awaiting inspection after {reads} reads")
        return _call("certificate_status", {"application": answer["application"]}, len(calls) + 1)
    value = next(str(answer[k]) for k in RESULT_KEYS if k in answer)
    return _report("OPEN", value, f"{name} answered")


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body (ADK sends the agent's
    instruction as the system message, the planner's brief as the user's).

    >>> brief = f"Opening order: {json.dumps(ORDER)}"
    >>> msg = respond({"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": brief}]})["choices"][0]["message"]["content"]
    >>> msg.splitlines()[2].split("`")[1]
    'request_lift_certificate(lift="L4 Ptarmigan Express", inspector=<<find_inspector>>, \
opening_day="2027-12-04")'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = next((_text(m.get("content")) for m in messages if m.get("role") == "system"), "")
    if PLANNER in system:
        brief = "\n".join(_text(m.get("content")) for m in messages if m.get("role") == "user")
        return completion(body, {"role": "assistant", "content": _checklist(brief)})
    if CREW.split("{")[0] in system:
        return completion(body, _crew(system, messages))
    return completion(body, {"role": "assistant", "content": "The ops office is closed."})


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


# --- the mountain -----------------------------------------------------------------------------
class LiftControlFault(RuntimeError):
    """A lift-control system outage a service raises (ADK 1.10 ends the run with it)."""


def board(sign: str, detail: str, **more: str) -> dict[str, Any]:
    """A service's failure as ADK's tool guide recommends: a dict with an error status.

    >>> board("WIND HOLD", "gusts of 80 km/h at the top station", reopens="10:40")["reopens"]
    '10:40'
    """
    return {"status": "error", "board": sign, "detail": detail, **more}


@dataclass
class Mountain:
    """The resort's systems for one opening: what the scenario makes each service do."""

    params: dict[str, Any]
    faults: list[dict[str, str]] = field(default_factory=list)
    applications: dict[str, dict[str, Any]] = field(default_factory=dict)
    reads: int = 0
    watched: int = 0

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.params.get("faults", [])]

    def _fault(self, tool: str) -> dict[str, Any] | None:
        """The scenario's next failure when this service is the one it targets (raised when
        it is a lift-control outage)."""
        if tool != self.params.get("tool") or not self.faults:
            return None
        spec = self.faults.pop(0)
        if spec["sign"] == "OUTAGE":
            raise LiftControlFault(spec["detail"])
        extra = {"reopens": spec["hint"]} if spec["sign"] == "WIND HOLD" else {}
        if spec["sign"] == "DETOUR":
            extra = {"use": spec["hint"]}
        return board(spec["sign"], spec["detail"], **extra)

    def tools(self) -> list[Callable[..., dict[str, Any]]]:
        """The services, plain functions ADK wraps as ``FunctionTool``s."""
        seed = int(self.params.get("seed", 0))

        def search_inspectors(sector: str, lift: str, page: int = 1) -> dict[str, Any]:
            """Search the tramway board's register of certified lift inspectors for a sector,
            a page at a time."""
            if failed := self._fault("search_inspectors"):
                return failed
            code = sector.split()[0][:3].upper()
            if page < int(self.params.get("pages", 1)):
                names = [f"INS-{code}-{page}{i}" for i in range(3)]
                return {"status": "success", "inspectors": names, "free": 0, "next_page": page + 1}
            return {"status": "success", "inspector": f"INS-{code}-{seed % 89 + 10}",
                    "sector": sector, "lift_types": ["detachable quad", "t-bar"]}  # fmt: skip

        def request_lift_certificate(
            lift: str, inspector: str, opening_day: str, not_before: str = ""
        ) -> dict[str, Any]:
            """Apply to the state tramway board to certify a lift for its opening day; the
            inspection is done later (certificate_status)."""
            if failed := self._fault("request_lift_certificate"):
                return failed
            home = ORDER["sector"].split()[0][:3].upper()
            if not inspector.startswith(f"INS-{home}-"):
                return board(
                    "CLOSED",
                    f"inspector {inspector} holds no certification for {ORDER['sector']}; the"
                    f" board cannot accept an inspection of {lift} by them",
                )
            application = f"TB-{zlib.crc32(f'{lift}{seed}'.encode()) % 9000 + 1000}"
            self.applications[application] = {"lift": lift, "opening_day": opening_day}
            return {"status": "success", "application": application,
                    "state": "awaiting inspection"}  # fmt: skip

        def certificate_status(application: str) -> dict[str, Any]:
            """Read a lift certificate application's state at the tramway board."""
            self.reads += 1
            stuck = self.params.get("stuck")
            if stuck or self.reads <= int(self.params.get("polls", 1)):
                return {"status": "success", "application": application,
                        "state": "awaiting inspection"}  # fmt: skip
            certificate = f"{application}-C"
            self.applications[application]["certificate"] = certificate
            return {"status": "success", "application": application, "state": "certified",
                    "certificate": certificate,
                    "opening_day": self.applications[application]["opening_day"]}  # fmt: skip

        def book_groomer(run: str, night: str, depot: str, not_before: str = "") -> dict[str, Any]:
            """Book a snowcat and driver from a grooming depot to groom a run on a night."""
            if failed := self._fault("book_groomer"):
                return failed
            moved = self.params.get("depot_to")
            if moved and depot != moved:
                return board(
                    "DETOUR",
                    f"{depot} has both snowcats in the workshop on {night}",
                    use=f"depot={moved}",
                )
            return {"status": "success", "booking": f"GR-{depot[:2].upper()}{seed % 97}",
                    "run": run, "night": night}  # fmt: skip

        def charge_snowmaking(
            account: str, hours: int, reference: str, not_before: str = ""
        ) -> dict[str, Any]:
            """Charge snowmaking hours (power and water) to a mountain operations account."""
            if failed := self._fault("charge_snowmaking"):
                return failed
            if account != ORDER["account"]:
                return board(
                    "CLOSED", f"account {account} has no snowmaking budget for {reference}"
                )
            return {"status": "success", "receipt": f"SM-{hours * 17 + seed % 50}"}

        def request_patrol_signoff(
            run: str, certificate: str, grooming: str, not_before: str = ""
        ) -> dict[str, Any]:
            """Ask ski patrol to sign a run off for opening once the lift and grooming are in."""
            if failed := self._fault("request_patrol_signoff"):
                return failed
            return {"status": "success", "signoff": f"SP-{run[:3].upper()}-{grooming[-2:]}"}

        return [
            search_inspectors,
            request_lift_certificate,
            certificate_status,
            book_groomer,
            charge_snowmaking,
            request_patrol_signoff,
        ]

    def certificate(self, certificate: str) -> dict[str, Any]:
        """The app's own read of a certificate at the tramway board (the check)."""
        return next(a for a in self.applications.values() if a.get("certificate") == certificate)

    def lift_state(self) -> str:
        """The app's own read of the lift's board (the watch)."""
        self.watched += 1
        if "closes_after" in self.params and self.watched > int(self.params["closes_after"]):
            return "closed: avalanche control on the Ptarmigan headwall, run shut for the day"
        return "open"


# --- the agents -------------------------------------------------------------------------------
class ShiftBoss(BaseAgent):
    """Reads the crew's report; escalates (ends the crew loop) unless the job is to run again."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        report = str(ctx.session.state.get("crew_report", "")).strip()
        attempt = int(ctx.session.state.get("attempt", 1))
        verb = report.split(" ", 1)[0]
        again = verb == "RERUN" and attempt < MAX_ATTEMPTS
        text = f"Run the job again (attempt {attempt + 1}): {report}" if again else report
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            branch=ctx.branch,
            content=types.Content(role="model", parts=[types.Part(text=text)]),
            actions=EventActions(
                escalate=not again, state_delta={"attempt": attempt + 1} if again else {}
            ),
        )


def agents(mountain: Mountain, model: LiteLlm) -> tuple[LlmAgent, LoopAgent]:
    """The planner and the crew loop of one opening."""
    planner = LlmAgent(
        name="opening_planner",
        model=model,
        description="Writes the opening-day checklist.",
        instruction=PLANNER,
        output_key="checklist",
        include_contents="none",
    )
    crew = LlmAgent(
        name="lift_crew",
        model=model,
        description="Does one job of the opening checklist with the mountain's services.",
        instruction=CREW,
        tools=list(mountain.tools()),
        output_key="crew_report",
        include_contents="none",
    )
    loop = LoopAgent(
        name="crew_loop",
        description="Runs the crew on a job until the shift boss calls it.",
        sub_agents=[crew, ShiftBoss(name="shift_boss", description="Calls the job.")],
        max_iterations=MAX_ATTEMPTS,
    )
    return planner, loop


class OpeningFailed(RuntimeError):
    """The lift could not be readied (or was shut after it was)."""


class Opening:
    """One lift's opening day, from the opening order to the first chair."""

    def __init__(self, label: Label, model: LiteLlm, provider: TracerProvider) -> None:
        self.label = label
        self.tracer = provider.get_tracer(TRACER)
        self.mountain = Mountain(dict(label.params))
        self.sessions = InMemorySessionService()
        planner, loop = agents(self.mountain, model)
        self.planner = Runner(app_name=APP, agent=planner, session_service=self.sessions)
        self.crew = Runner(app_name=APP, agent=loop, session_service=self.sessions)
        self.session = ""
        self.results: dict[str, str] = {}
        self.revisions = 0

    async def _run(self, runner: Runner, text: str, **state: Any) -> dict[str, Any]:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(
            user_id=USER, session_id=self.session, new_message=message, state_delta=state
        ):
            pass
        return await self._state()

    async def _state(self) -> dict[str, Any]:
        done = await self.sessions.get_session(app_name=APP, user_id=USER, session_id=self.session)
        return dict(done.state) if done else {}

    async def plan(self, setbacks: list[str]) -> list[Job]:
        """Ask the planner for the next revision of the checklist."""
        self.revisions += 1
        note = {k: self.label.params[k] for k in NOTED if k in self.label.params}
        lines = [f"Opening order: {json.dumps(ORDER)}"]
        if note:
            lines.append(f"Ops office note: {json.dumps(note)}")
        if setbacks:
            lines.append(f"Carried: {json.dumps(self.results)}")
            lines += [f"Setback: {s}" for s in setbacks]
        state = await self._run(self.planner, "\n".join(lines))
        checklist = parse_checklist(str(state.get("checklist", "")))
        self.results.update(checklist.done)
        return checklist.jobs

    async def attempt(self, job: Job, attempt: int) -> tuple[str, str, str, int]:
        """One crew invocation on a job (its loop may run the crew several times): the verb,
        value and note of the last report and the attempts used."""
        args = resolved(job, self.results)
        order = f"Job: {job.name}: {job.what}\nService: {job.tool}\nArguments: {json.dumps(args)}"
        try:
            state = await self._run(
                self.crew,
                f"Work order {job.name} (attempt {attempt})",
                work_order=order,
                attempt=attempt,
                crew_report="",
            )
        except LiftControlFault as fault:  # the run ended there; the loop's rounds before it count
            used = int((await self._state()).get("attempt", attempt))
            return "RERUN", "", f"lift control: {fault}", used
        said = REPORT.match(str(state.get("crew_report", "")).strip())
        used = int(state.get("attempt", attempt))
        if not said or said[1] not in VERBS:
            return "STUCK", "", f"no report: {state.get('crew_report')}", used
        return said[1], said[2], said[3], used

    async def work(self) -> None:
        """The checklist's jobs in order; a job run again after an outage (the crew loop runs it
        again after ``RERUN``), a new revision after ``REROUTE``."""
        setbacks: list[str] = []
        jobs = await self.plan(setbacks)
        while jobs:
            job, attempt = jobs[0], 1
            while True:
                verb, value, note, attempt = await self.attempt(job, attempt)
                if verb != "RERUN" or attempt >= MAX_ATTEMPTS:
                    break
                attempt += 1
            if verb == "OPEN":
                self.results[job.name] = value
                jobs = jobs[1:]
            elif verb == "REROUTE" and self.revisions < MAX_REVISIONS:
                setbacks.append(f"{job.name}: {note}")
                jobs = await self.plan(setbacks)
            else:
                raise OpeningFailed(f"{job.name} {verb.lower()}: {note}")

    def check(self) -> None:
        """The app's check: the lift's certificate is for the order's opening day."""
        certificate = self.results["certify_lift"]
        with self.tracer.start_as_current_span("check opening day") as span:
            day = self.mountain.certificate(certificate)["opening_day"]
            span.set_attribute("liftline.certificate", certificate)
            span.set_attribute("liftline.certified_day", day)
            if day != ORDER["opening_day"]:
                reason = (
                    f"certificate {certificate} is for {day}; {ORDER['lift']} opens on"
                    f" {ORDER['opening_day']}"
                )
                span.set_status(Status(StatusCode.ERROR, reason))
                raise OpeningFailed(reason)

    def watch(self) -> None:
        """The app's watch of the lift's board until the first chair."""
        with self.tracer.start_as_current_span(f"watch lift {ORDER['lift']}") as span:
            for look in range(1, WATCHES + 1):
                state = self.mountain.lift_state()
                span.add_event("lift board", {"look": look, "state": state})
                if state != "open":
                    span.set_status(Status(StatusCode.ERROR, state))
                    raise OpeningFailed(f"{ORDER['lift']}: {state}")

    async def run(self) -> str:
        """The opening under the app's root span; the trace id."""
        with self.tracer.start_as_current_span(f"open lift {ORDER['lift']}") as root:
            root.set_attribute("liftline.opening", f"{ORDER['opening']}/{self.label.seed}")
            root.set_attribute("liftline.run", ORDER["run"])
            session = await self.sessions.create_session(app_name=APP, user_id=USER)
            self.session = session.id
            try:
                await self.work()
                self.check()
                self.watch()
                root.set_attribute("liftline.outcome", "open")
            except OpeningFailed as failed:
                root.set_attribute("liftline.outcome", "not open")
                root.set_status(Status(StatusCode.ERROR, str(failed)))
            return format(root.get_span_context().trace_id, "032x")


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the opening-day scenarios under OpenInference's Google ADK instrumentor on
    ``provider`` (instrumented for the play, uninstrumented after); run name -> trace id."""
    if not labels:
        return {}
    # ADK warns per tool parameter with a default (page, not_before) that Google AI's function
    # declarations do not support them
    # and, with the instrumentor on: a tool that raises closes ADK's call_llm generator in
    # another context ("Failed to detach context", a traceback per outage), and a long crew turn's
    # call_llm span passes the SDK's 128 attributes ("Attributes dict is full")
    quiet = {
        name: logging.getLogger(name)
        for name in ("google_adk", "opentelemetry.context", "opentelemetry.attributes")
    }
    levels = {name: logger.level for name, logger in quiet.items()}
    for logger in quiet.values():
        logger.setLevel(logging.CRITICAL)
    instrumentor = GoogleADKInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer(respond=respond) as server:
            model = LiteLlm(
                model=f"openai/{MODEL}", api_base=server.base_url("corpus-liftline"), api_key="test"
            )
            return {
                label.run: asyncio.run(Opening(label, model, provider).run()) for label in labels
            }
    finally:
        instrumentor.uninstrument()
        for name, logger in quiet.items():
            logger.setLevel(levels[name])

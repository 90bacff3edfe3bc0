"""A borough arts office commissioning a street mural, written as an AG2 user writes
plan-then-execute today with **AG2 1.x** (``ag2``, the rewritten framework: ``ag2.Agent``,
``OpenAIConfig``, plain Python functions as tools). AG2 1.x offers delegation the model steers
(``Agent.as_tool`` / ``subagent_tool``, ``run_subtasks``) and a distributed network hub; an app
that must decide itself when a step runs again or the plan is redone calls its agents as
awaited functions, AG2 1.x's plainest composition: ``await planner.ask(brief)`` for the
plan, ``await reply.ask(...)`` to continue the planner's conversation for a re-plan, and a
fresh ``await executor.ask(...)`` per step attempt. Traced by **AG2's own OpenTelemetry
telemetry**, ``TelemetryMiddleware(tracer_provider=..., agent_name=..., provider_name=...,
model_name=...)`` given to each ``Agent``'s ``middleware`` (the ``tracing`` extra; no
instrumentor), plus the app's own spans through a tracer of the same provider (a root span per
commission, a check and a watch). The model: a scripted model on the conformance suite's fake
OpenAI server (``ModelServer(respond=...)``). No planscope code.

Sealed-44 split only (see README.md). The commission: find a blank wall tall enough in the
borough's wall register (read page by page), get the council's public-art consent (a polled
application), hire the access lift for the painting date, pay the artist's fee from the arts
fund, send the residents the painting-week letter.

* the planner's model answers a **work sheet written as Python assignments** it never runs, one
  step a line, ``<step> = <executor>.<tool>(key="value", key=<earlier step>)  # <goal>`` (a bare
  name is that earlier step's result), under a ``# mural plan v<n> for <job>`` comment; a
  re-plan (the same conversation continued) answers the next version with the finished steps as
  ``<step> = "<result>"  # done`` and every ``use X instead of Y`` applied; the app reads it
  with ``ast``;
* an executor's model answers one line ``[<step>] <painted|rained_off|repaint|whitewashed|
  drying>: <value or reason>``;
* the services raise **painters' exceptions** (:class:`WetPaint` ``dry at HH:MM: ...``,
  :class:`RainedOff`, :class:`Repaint` ``use X instead of Y: ...``, :class:`Whitewashed`); AG2
  hands the model the whole formatted traceback as the tool result (its last line
  ``tests.corpus.mural.<Class>: <text>``), and its telemetry ends the tool span in ERROR with the
  exception's text and an ``exception`` event, no ``gen_ai.tool.call.result``. ``WetPaint``: the
  model calls again with ``after`` that time; ``RainedOff``: the app runs the step again;
  ``Repaint``: a new plan; ``Whitewashed``: final.

The planner trusts the curator's note over the commission: a scenario's wrong value comes from
the note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
from ag2 import Agent
from ag2.config import OpenAIConfig
from ag2.middleware.builtin import TelemetryMiddleware
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode, Tracer

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label

COMMISSION: dict[str, Any] = {
    "job": "MUR-0311",
    "design": "Kingfishers over the Lea",
    "artist": "Ada Okonkwo",
    "borough": "Hackney",
    "height_m": 9,
    "date": "2027-05-03",
    "lift": "Hoxton Access 14m scissor",
    "fund": "ARTS-40718",
    "fee": 4200.0,
    "postcode": "E8 3PN",
}
TRACER = "mural-app"
PLANNER = "mural_planner"
EXECUTORS = ("site_scout", "studio_clerk")
MAX_ATTEMPTS = 8
"""Runs of one step under one plan before the app abandons the commission."""
MAX_PLANS = 5
MAX_WAITS = 8
"""``WetPaint`` answers in one executor run before the model stops calling."""
MAX_CHECKS = 12
HEADER = re.compile(r"^# mural plan v(\d+) for (\S+)$")
VERDICT = re.compile(r"^\[(\w+)\] (painted|rained_off|repaint|whitewashed|drying): (.*)$")
ASKED = re.compile(r"^Call (\w+) with (\{.*\})$", re.M)
RAISED = re.compile(r"^(?:[\w.]+\.)?(WetPaint|RainedOff|Repaint|Whitewashed): (.*)$")
DRY_AT = re.compile(r"^dry at (\d\d:\d\d): ")
INSTEAD = re.compile(r"use (.+?) instead of (.+?): ")
PLANNER_PROMPT = (
    "You are the mural planner of a borough arts office. Write the commission's work sheet as "
    "Python assignments, one step a line, and a new version when asked to re-plan."
)
EXECUTOR_PROMPT = (
    "You are the {name} of a borough arts office. Do the one step you are given with your "
    "tools and answer one verdict line."
)


class WetPaint(RuntimeError):
    """Not yet: ``dry at HH:MM: <text>`` (call again with ``after`` that time)."""


class RainedOff(RuntimeError):
    """Not today (the step is run again)."""


class Repaint(RuntimeError):
    """``use X instead of Y: <text>`` (the plan is redone with X)."""


class Whitewashed(RuntimeError):
    """Refused for good."""


# --- the plan: a work sheet of Python assignments -----------------------------------------
@dataclass(frozen=True)
class Step:
    """One work-sheet line; an argument ``("ref", name)`` is that earlier step's result."""

    id: str
    agent: str
    tool: str
    args: dict[str, tuple[str, Any]]
    goal: str


def read_plan(text: str) -> tuple[list[Step], dict[str, str]]:
    """The open steps of a work sheet and the results its done lines carry.

    >>> steps, done = read_plan('survey_wall = "WALL-1"  # done\\n'
    ...     'seek_consent = site_scout.art_consent(wall=survey_wall, design="K")  # get it')
    >>> done, steps[0].args
    ({'survey_wall': 'WALL-1'}, {'wall': ('ref', 'survey_wall'), 'design': ('value', 'K')})
    """
    steps, done = [], {}
    for line in text.splitlines():
        code, _, goal = line.partition("  # ")
        if not code.strip() or code.startswith("#"):
            continue
        node = ast.parse(code).body[0]
        if not isinstance(node, ast.Assign) or not isinstance(node.targets[0], ast.Name):
            continue
        name, value = node.targets[0].id, node.value
        if isinstance(value, ast.Constant):
            done[name] = str(value.value)
        elif (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and isinstance(value.func.value, ast.Name)
        ):
            args = {
                str(k.arg): ("ref", k.value.id)
                if isinstance(k.value, ast.Name)
                else ("value", ast.literal_eval(k.value))
                for k in value.keywords
            }
            steps.append(Step(name, value.func.value.id, value.func.attr, args, goal))
    return steps, done


# --- the scripted model ---------------------------------------------------------------------
def _given(brief: str) -> dict[str, Any]:
    """The commission and the curator's note trusted over it."""
    order = json.loads(re.search(r"Commission: (\{.*?\})", brief).group(1))  # type: ignore[union-attr]
    note = re.search(r"Curator's note: (\{.*?\})", brief)
    return order | (json.loads(note.group(1)) if note else {})


def _plan(brief: str, version: int, done: dict[str, str], swaps: list[tuple[str, str]]) -> str:
    """Work sheet ``version``: the done steps kept with their results, every swap applied."""
    c = _given(brief)
    q = json.dumps
    steps = [
        ("survey_wall", "site_scout", "wall_registry",
         f"borough={q(c['borough'])}, height_m={c['height_m']}",
         "find a blank wall tall enough for the design"),
        ("seek_consent", "site_scout", "art_consent",
         f"wall=survey_wall, design={q(c['design'])}",
         "get the council's public-art consent for the wall"),
        ("book_lift", "studio_clerk", "lift_hire",
         f"wall=survey_wall, consent=seek_consent, date={q(c['date'])}, lift={q(c['lift'])}",
         "hire the access lift for the painting date"),
        ("pay_artist", "studio_clerk", "pay_fee",
         f"fund={q(c['fund'])}, amount={c['fee']}, booking=book_lift",
         "pay the artist's fee from the arts fund"),
        ("notify_residents", "studio_clerk", "resident_letter",
         f"postcode={q(c['postcode'])}, booking=book_lift, payment=pay_artist",
         "send the residents the painting-week letter"),
    ]  # fmt: skip
    lines = [f"# mural plan v{version} for {c['job']}"]
    for name, agent, tool, args, goal in steps:
        if name in done:
            lines.append(f"{name} = {q(done[name])}  # done")
            continue
        for new, old in swaps:
            args = args.replace(q(old), q(new))
        lines.append(f"{name} = {agent}.{tool}({args})  # {goal}")
    return "\n".join(lines)


def _planner(messages: list[dict[str, Any]]) -> str:
    """The planner's turn: the first work sheet, or the next version after a re-plan request
    (``Done: {...}`` and ``Problem: [step] repaint: use X instead of Y: ...``)."""
    said = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    version = 1 + sum(m.get("role") == "assistant" for m in messages)
    done: dict[str, str] = {}
    swaps: list[tuple[str, str]] = []
    for text in said[1:]:
        if m := re.search(r"^Done: (\{.*\})$", text, re.M):
            done = json.loads(m.group(1))
        if s := INSTEAD.search(text):
            swaps.append((s.group(1), s.group(2)))
    return _plan(said[0], version, done, swaps)


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {"id": f"call_{name}_{n}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _executor(messages: list[dict[str, Any]]) -> str | dict[str, Any]:
    """An executor's turn: call the tool it is asked to, again after the time a ``WetPaint``
    names, follow ``next_page``, check a pending consent, then answer its verdict."""
    ask = next(str(m.get("content")) for m in messages if m.get("role") == "user")
    step = re.search(r"step (\w+),", ask).group(1)  # type: ignore[union-attr]
    asked = ASKED.search(ask)
    tool, args = asked.group(1), json.loads(asked.group(2))  # type: ignore[union-attr]
    results = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
    n = len(results)
    if not results:
        return _call(n, tool, args)
    last = results[-1].strip().splitlines()[-1]
    if raised := RAISED.match(last):
        kind, text = raised.groups()
        if kind == "WetPaint":
            waits = sum(RAISED.match(r.strip().splitlines()[-1]) is not None for r in results)
            if waits > MAX_WAITS:
                return f"[{step}] drying: still wet after {waits} calls: {text}"
            return _call(n, tool, args | {"after": DRY_AT.match(text).group(1)})  # type: ignore[union-attr]
        verdict = {"RainedOff": "rained_off", "Repaint": "repaint"}.get(kind, "whitewashed")
        return f"[{step}] {verdict}: {text}"
    seen = json.loads(results[-1])
    if "next_page" in seen:
        return _call(n, tool, args | {"page": seen["next_page"]})
    if seen.get("state") == "pending":
        checks = sum('"pending"' in r for r in results) - 1
        if checks >= MAX_CHECKS:
            return f"[{step}] drying: consent {seen['request']} still pending after {checks}"
        return _call(n, "consent_status", {"request": seen["request"]})
    return f"[{step}] painted: {seen['value']}"


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion: the planner's work sheet, an executor's next tool
    call or verdict.

    >>> msg = respond({"messages": [{"role": "system", "content": "You are the studio_clerk"},
    ...     {"role": "user", "content": 'Plan v1, step pay_artist, attempt 1.\\n'
    ...      'Call pay_fee with {"fund": "ARTS-1"}'}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"fund": "ARTS-1"}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = str(messages[0].get("content") or "") if messages else ""
    if system.startswith("You are the mural planner"):
        return completion(body, {"role": "assistant", "content": _planner(messages)})
    answer = _executor(messages)
    if isinstance(answer, str):
        return completion(body, {"role": "assistant", "content": answer})
    return completion(body, answer)


# --- the world ------------------------------------------------------------------------------
@dataclass
class Borough:
    """The borough's wall register, the council's consents, the lift company, the arts fund and
    the residents' mail of one commission."""

    label: Label
    errors: list[dict[str, str]] = field(default_factory=list)
    walls: dict[str, str] = field(default_factory=dict)
    """Wall -> its borough."""
    consents: dict[str, int] = field(default_factory=dict)
    """Consent application -> status checks so far."""
    lifts: dict[str, dict[str, Any]] = field(default_factory=dict)
    fees: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.errors = [dict(e) for e in self.label.params.get("errors", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, service: str, **carried: Any) -> None:
        """Raise the scenario's next error when ``service`` is the one it targets (an ``{old}``
        in a ``Repaint``'s hint is the fund the call carried)."""
        if not self.errors or service != self.params.get("service"):
            return
        e = self.errors.pop(0)
        if e["kind"] == "WETPAINT":
            raise WetPaint(f"dry at {e['hint']}: {e['text']}")
        if e["kind"] == "RAINEDOFF":
            raise RainedOff(e["text"])
        if e["kind"] == "REPAINT":
            raise Repaint(f"{e['hint'].format(old=carried.get('fund'))}: {e['text']}")
        raise Whitewashed(e["text"])


def services(world: Borough) -> dict[str, list[Callable[..., str]]]:
    """Each executor's tools, as plain Python functions."""

    def wall_registry(borough: str, height_m: int, page: int = 1) -> str:
        """Search the borough's register of blank walls offered for murals."""
        world.fault("wall_registry")
        pages = int(world.params.get("pages", 1))
        if page < pages:
            short = [f"WALL-{borough[:3].upper()}-{page}{n}" for n in range(3)]
            return json.dumps({"walls": [], "too_short": short, "next_page": page + 1})
        wall = f"WALL-{borough[:3].upper()}-{world.label.seed}"
        world.walls[wall] = borough
        return json.dumps({"value": wall, "borough": borough, "height_m": height_m + 3})

    def art_consent(wall: str, design: str, after: str = "") -> str:
        """Apply to the council for public-art consent for a design on a wall."""
        world.fault("art_consent")
        borough = world.walls.get(wall, "unknown")
        if borough != COMMISSION["borough"]:
            raise Whitewashed(
                f"wall {wall} stands in {borough}; {COMMISSION['borough']}'s public-art scheme "
                "consents only to walls inside the borough"
            )
        request = f"PAC-{world.label.seed}-{len(world.consents) + 1}"
        world.consents[request] = 0
        if "poll" in world.label.scenario:
            return json.dumps({"request": request, "state": "pending"})
        return json.dumps({"value": request, "state": "granted"})

    def consent_status(request: str) -> str:
        """Check a consent application."""
        world.consents[request] += 1
        stuck = world.label.scenario == "loop_poll_stuck"
        if stuck or world.consents[request] < int(world.params.get("polls", 0)):
            return json.dumps({"request": request, "state": "pending"})
        return json.dumps({"value": request, "state": "granted"})

    def lift_hire(wall: str, consent: str, date: str, lift: str, after: str = "") -> str:
        """Hire an access lift at the wall for the painting date."""
        world.fault("lift_hire")
        other = world.params.get("lift_to")
        if other and lift == COMMISSION["lift"]:
            raise Repaint(
                f"use {other} instead of {lift}: the {lift} failed its six-monthly "
                "thorough examination"
            )
        hire = f"LFT-{date.replace('-', '')}-{len(world.lifts) + 1}"
        world.lifts[hire] = {"wall": wall, "date": date, "lift": lift}
        return json.dumps({"value": hire, "lift": lift, "date": date, "on_site": after or "07:30"})

    def pay_fee(fund: str, amount: float, booking: str) -> str:
        """Pay the artist's fee from an arts fund."""
        world.fault("pay_fee", fund=fund)
        if fund != COMMISSION["fund"]:
            raise Whitewashed(f"no arts fund {fund} in the borough's ledger")
        world.fees[booking] = amount
        return json.dumps({"value": f"PAY-{world.label.seed}", "amount": amount})

    def resident_letter(postcode: str, booking: str, payment: str, after: str = "") -> str:
        """Send the residents around the wall the painting-week letter."""
        world.fault("resident_letter")
        return json.dumps({"value": f"LTR-{booking}", "postcode": postcode, "at": after or "now"})

    return {
        "site_scout": [wall_registry, art_consent, consent_status],
        "studio_clerk": [lift_hire, pay_fee, resident_letter],
    }


# --- the app --------------------------------------------------------------------------------
class Abandoned(RuntimeError):
    """The commission was not carried out as ordered, or came to grief after it was done."""


def _telemetry(provider: TracerProvider, name: str) -> TelemetryMiddleware:
    return TelemetryMiddleware(
        tracer_provider=provider, agent_name=name, provider_name="openai", model_name=MODEL
    )


async def commission(label: Label, base_url: str, provider: TracerProvider) -> str:
    """One commission under the app's root span; the trace id."""
    world = Borough(label)
    # one HTTP client for the commission, closed when it ends: each ``ask`` builds its own
    # OpenAI client, whose own HTTP client would be closed only when collected, after the loop
    http = httpx2.AsyncClient()
    config = OpenAIConfig(
        model=MODEL, base_url=base_url, api_key="test", max_retries=0, http_client=http
    )
    planner = Agent(
        PLANNER, PLANNER_PROMPT, config=config, middleware=[_telemetry(provider, PLANNER)]
    )
    executors = {
        name: Agent(
            name,
            EXECUTOR_PROMPT.format(name=name),
            config=config,
            tools=tools,
            middleware=[_telemetry(provider, name)],
        )
        for name, tools in services(world).items()
    }
    note = {k: label.params[k] for k in ("borough", "date", "fund") if k in label.params}
    brief = f"Plan mural commission {COMMISSION['job']} (ticket T-{label.seed}). Commission: "
    brief += json.dumps(COMMISSION)
    if note:
        brief += f" Curator's note: {json.dumps(note)}"
    tracer = provider.get_tracer(TRACER)
    with tracer.start_as_current_span(f"mural commission {COMMISSION['job']}") as root:
        root.set_attributes({"mural.job": COMMISSION["job"], "mural.brief": brief})
        try:
            await carry_out(planner, executors, brief)
            check(world, tracer)
            watch(label, tracer)
            root.set_attribute("mural.outcome", "painted")
        except Abandoned as e:
            root.record_exception(e)
            root.set_status(Status(StatusCode.ERROR, str(e)))
            root.set_attribute("mural.outcome", f"abandoned: {e}")
        finally:
            await http.aclose()
        return f"{root.get_span_context().trace_id:032x}"


async def carry_out(planner: Agent, executors: dict[str, Agent], brief: str) -> None:
    """Plan, then run each open step through its executor: again after ``rained_off``, a new
    plan after ``repaint`` (the planner's conversation continued), abandon otherwise."""
    reply = await planner.ask(brief)
    steps, done = read_plan(reply.body or "")
    plans, attempts = 1, 0
    while todo := [s for s in steps if s.id not in done]:
        step = todo[0]
        attempts += 1
        args = {k: done[v] if how == "ref" else v for k, (how, v) in step.args.items()}
        ask = (
            f"Plan v{plans}, step {step.id}, attempt {attempts}.\n"
            f"Call {step.tool} with {json.dumps(args)}\nGoal: {step.goal}\n"
            f"Answer one line: [{step.id}] painted|rained_off|repaint|whitewashed|drying: ..."
        )
        said = (await executors[step.agent].ask(ask)).body or ""
        verdict = VERDICT.match(said.strip())
        if verdict is None:
            raise Abandoned(f"{step.id}: no verdict in {said!r}")
        state, text = verdict.group(2), verdict.group(3)
        if state == "painted":
            done[step.id] = text
            attempts = 0
        elif state == "rained_off" and attempts < MAX_ATTEMPTS:
            continue
        elif state == "repaint" and plans < MAX_PLANS:
            reply = await reply.ask(f"Re-plan.\nDone: {json.dumps(done)}\nProblem: {said}")
            steps, done = read_plan(reply.body or "")
            plans, attempts = plans + 1, 0
        else:
            raise Abandoned(f"{step.id} {state} after {attempts} attempts: {text}")


def check(world: Borough, tracer: Tracer) -> None:
    """The app's check after the job: the lift is hired for the commission's painting date."""
    with tracer.start_as_current_span("check painting date") as span:
        hire = list(world.lifts.values())[-1]
        span.set_attribute("mural.lift_hire", json.dumps(hire))
        if hire["date"] != COMMISSION["date"]:
            span.set_status(Status(StatusCode.ERROR, "date mismatch"))
            raise Abandoned(
                f"the lift is hired for {hire['date']}, the mural is painted on "
                f"{COMMISSION['date']}"
            )
        span.set_attribute("mural.checked", "lift date matches the commission")


def watch(label: Label, tracer: Tracer) -> None:
    """The app's watch of the finished wall: a walk past on the days after painting."""
    with tracer.start_as_current_span("watch mural") as span:
        span.set_attribute("mural.job", COMMISSION["job"])
        days = int(label.params.get("polls", 1))
        for day in range(1, days + 2):
            if label.scenario.startswith("external_") and day > days:
                span.add_event("walk past", {"day": day, "state": "tagged"})
                span.set_status(Status(StatusCode.ERROR, "tagged"))
                raise Abandoned("the finished mural was tagged overnight; the council covers it")
            span.add_event("walk past", {"day": day, "state": "clean"})
        span.set_attribute("mural.watched", "clean")


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the mural scenarios under AG2's own telemetry on ``provider``; run name -> trace
    id."""
    if not labels:
        return {}
    with ModelServer(respond=respond) as server:
        base = server.base_url("corpus-mural")
        return {lab.run: asyncio.run(commission(lab, base, provider)) for lab in labels}

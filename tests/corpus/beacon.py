"""A lighthouse trust's lens-overhaul office on smolagents: a manager ``CodeAgent`` with
smolagents' own planning steps (``planning_interval``) delegating each plan step to a managed
``CodeAgent`` crew, traced by OpenInference's smolagents instrumentor
(``openinference-instrumentation-smolagents``) plus the app's own root span per job. The model:
smolagents' ``OpenAIServerModel`` against a scripted model on the conformance suite's fake
OpenAI server (``ModelServer(respond=...)``). No planscope code.

Sealed-32 split only (see README.md). The job: a light station's lens is due for its overhaul;
find a technician certified for the lens in the coast's registry (read page by page), book the
boat crossing to the rock for the outage day, file the outage notice to mariners (a polled
application), charge the trust's account, send the harbour master the notice. As a smolagents
user writes a planning agent:

* the app opens one OTel span per job (``overhaul light {station}``), runs the ``keeper``
  manager once and checks its answer, the crossing against the outage window (``verify outage
  window``) and the relit light (``watch light {station}``);
* the ``keeper`` (a ``CodeAgent``, ``planning_interval=3``) writes smolagents' initial plan (a
  facts survey, then ``## 2. Plan`` with one numbered line per step, ``**slug**`` first) and an
  updated one every three steps; each action step is a code blob calling the ``lens_crew``
  managed agent with the step's brief (``Step n of N — slug: goal`` and a ``Call:`` line);
* the ``lens_crew`` (a ``CodeAgent`` with the ``@tool`` services) runs the call in smolagents'
  local Python executor, reads the registry's pages in a ``while`` loop, polls the notice an
  action step at a time, and answers the managed-agent report with a ``VERDICT slug: ...`` line:
  ``DONE`` (the result), ``STANDBY`` (the keeper hands the step to the crew again), ``ALTER``
  (``X instead of Y``: the keeper takes X from then on, its next plan update too), ``NEGATIVE``
  or ``GAVE UP`` (the keeper aborts the job);
* the services raise ``Radio`` errors with a proword: ``WAIT ONE ...; next window HH:MM`` (the
  crew calls again at that window in its next action step), ``STAND BY``, ``ALTER COURSE`` and
  ``NEGATIVE``; smolagents hands them to the model as the next step's ``Error:``.

The keeper trusts the keeper's notes over the order: a scenario's wrong value comes from a note.
This source records no context data (no starvation label).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from smolagents import CodeAgent, LogLevel, OpenAIServerModel, Tool, tool

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label

TRACER = "beacon"
ORDER: dict[str, Any] = {
    "station": "LS-4471",
    "lens_order": 3,
    "coast": "west",
    "outage_day": "2027-05-14",
    "pier": "P2",
    "account": "TR-51736",
    "amount_eur": 1840,
    "harbour": "harbourmaster@portcorran.example",
}
NOTES: dict[str, Any] = {"landing": "north steps at half tide"}
PLANNING_INTERVAL = 3
MAX_HANDOVERS = 8
"""Times the keeper hands one step to the crew before it aborts the job."""
MAX_CHECKS = 12
"""Notice status checks before the crew gives up."""
CREW = "lens_crew"


class Radio(RuntimeError):
    """A service's answer that is not a result; its proword says what it is."""


# --- the scripted model (answers on the conformance suite's fake OpenAI server) -------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def _say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _code(thought: str, code: str) -> dict[str, Any]:
    return _say(f"Thought: {thought}\n<code>\n{code}\n</code>")


def _kwargs(args: dict[str, Any]) -> str:
    """Keyword arguments as Python source: ``k='v', n=3``."""
    return ", ".join(f"{k}={v!r}" for k, v in args.items())


@dataclass
class Progress:
    """What the keeper knows from its crew's reports so far."""

    done: dict[str, str] = field(default_factory=dict)
    handovers: dict[str, int] = field(default_factory=dict)
    swaps: dict[str, str] = field(default_factory=dict)
    """Old value -> the value an ``ALTER`` report named in its place."""
    stopped: str = ""


_REPORT = re.compile(r"^(DONE|STANDBY|ALTER|NEGATIVE|GAVE UP) (\w+): (.*)$", re.MULTILINE)


def _progress(history: str) -> Progress:
    seen = Progress()
    for verdict, step, said in _REPORT.findall(history):
        seen.handovers[step] = seen.handovers.get(step, 0) + 1
        if verdict == "DONE":
            seen.done[step] = said
        elif verdict == "ALTER":
            moved = re.search(r"(\S+) instead of (\S+)$", said)
            if moved:
                seen.swaps[moved.group(2)] = moved.group(1)
        elif verdict in ("NEGATIVE", "GAVE UP"):
            seen.stopped = f"{step}: {said}"
    return seen


def _facts(task: str) -> dict[str, Any]:
    """The order with the keeper's notes over it (the notes are the latest word)."""
    fields = dict(re.findall(r"^(\w[\w' ]*): (\{.*\})$", task, re.MULTILINE))
    return json.loads(fields["Order"]) | json.loads(fields.get("Keeper's notes", "{}"))


def _plan(facts: dict[str, Any], seen: Progress) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(slug, goal, service, arguments) of every step, the values swapped as reported."""

    def v(key: str) -> Any:
        return seen.swaps.get(str(facts[key]), facts[key])

    tech = seen.done.get("find_technician", "<find_technician>")
    notice = seen.done.get("file_notice", "<file_notice>")
    return [
        ("find_technician",
         f"find a technician certified for order-{v('lens_order')} lenses on the {v('coast')} "
         "coast in the registry",
         "search_technicians", {"lens_order": v("lens_order"), "coast": v("coast")}),
        ("book_crossing",
         f"book the boat crossing to the rock for the technician from pier {v('pier')} on "
         f"{v('outage_day')}",
         "book_boat", {"technician": tech, "day": v("outage_day"), "pier": v("pier")}),
        ("file_notice",
         f"file the notice to mariners for the light's outage on {v('outage_day')} and wait "
         "until it is published",
         "file_outage_notice",
         {"station": v("station"), "day": v("outage_day"), "technician": tech}),
        ("charge_trust", f"charge {v('amount_eur')} EUR to the trust's account {v('account')}",
         "charge_account", {"account": v("account"), "amount_eur": v("amount_eur")}),
        ("notify_harbour", f"send the published notice to the harbour master {v('harbour')}",
         "send_harbour_notice", {"harbour": v("harbour"), "notice": notice,
                                 "day": v("outage_day")}),
    ]  # fmt: skip


def _plan_text(facts: dict[str, Any], seen: Progress, first: bool) -> str:
    """smolagents' planning answer: a facts survey, then the numbered plan of the steps not
    done (an update keeps each step's number and name) and the final answer."""
    given = "\n".join(f"- {k}: {v}" for k, v in facts.items())
    if first:
        survey = (
            "## 1. Facts survey\n### 1.1. Facts given in the task\n"
            f"{given}\n- the keeper's notes are newer than the order and take precedence\n"
            "### 1.2. Facts to look up\n- a certified technician (the registry), the crossing, "
            "the notice number\n### 1.3. Facts to derive\n- nothing beyond the results above"
        )
    else:
        learned = [f"- {step} is done, its result {value}" for step, value in seen.done.items()]
        learned += [f"- use {new} where the plan had {old}" for old, new in seen.swaps.items()]
        survey = (
            "## 1. Updated facts survey\n### 1.1. Facts given in the task\n"
            f"{given}\n### 1.2. Facts that we have learned\n"
            f"{chr(10).join(learned) or '- nothing yet'}\n### 1.3. Facts still to look up\n"
            "- the results of the steps left\n### 1.4. Facts still to derive\n- none"
        )
    steps = _plan(facts, seen)
    lines = [
        f"{n}. **{slug}**: {goal} (`{service}`)."
        for n, (slug, goal, service, _) in enumerate(steps, 1)
        if slug not in seen.done
    ]
    lines.append(f"{len(steps) + 1}. Report the relit light to the trust with `final_answer`.")
    return f"{survey}\n\n## 2. Plan\n" + "\n".join(lines)


def _keeper(task: str, history: str) -> dict[str, Any]:
    """The keeper's next action: abort, hand the next step not done to the crew, or finish."""
    seen = _progress(history)
    if seen.stopped:
        return _code("The job cannot go on.", f"final_answer({f'ABORTED {seen.stopped}'!r})")
    plan = _plan(_facts(task), seen)
    for n, (slug, goal, service, args) in enumerate(plan, 1):
        if slug in seen.done:
            continue
        if seen.handovers.get(slug, 0) >= MAX_HANDOVERS:
            why = f"ABORTED {slug}: handed to the crew {MAX_HANDOVERS} times without a result"
            return _code("The crew keeps being told to stand by.", f"final_answer({why!r})")
        brief = f"Step {n} of {len(plan)} — {slug}: {goal}.\nCall: {service}({_kwargs(args)})"
        return _code(
            f"Next is step {n}, {slug}; I hand it to {CREW}.",
            f"report = {CREW}(task={brief!r})\nprint(report)",
        )
    summary = ", ".join(f"{k} {v}" for k, v in seen.done.items())
    return _code("Every step is done.", f"final_answer({f'RELIT: {summary}'!r})")


def _report(verdict: str, step: str, said: str, detail: str) -> dict[str, Any]:
    answer = (
        f"### 1. Task outcome (short version):\n{verdict} {step}: {said}\n"
        f"### 2. Task outcome (extremely detailed version):\n{detail}\n"
        "### 3. Additional context (if relevant):\nnone"
    )
    return _code("I report to the keeper.", f"final_answer({answer!r})")


def _crew(task: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The crew's next action: make the call the brief names, call again at the window a
    ``WAIT ONE`` names, poll a pending notice, report a verdict."""
    step = re.search(r"— (\w+): ", task)
    call = re.search(r"^Call: (.*)$", task, re.MULTILINE)
    assert step and call, task
    slug, parsed = step.group(1), ast.parse(call.group(1), mode="eval").body
    assert isinstance(parsed, ast.Call) and isinstance(parsed.func, ast.Name)
    service = parsed.func.id
    args = {k.arg: ast.literal_eval(k.value) for k in parsed.keywords if k.arg}
    last = _text(messages[-1].get("content"))
    error_at, seen_at = last.rfind("Error:\n"), last.rfind("Observation:\n")
    if error_at > seen_at:
        said = re.search(
            r"Radio: (WAIT ONE|STAND BY|ALTER COURSE|NEGATIVE) — (.*)", last[error_at:]
        )
        if said is None:
            return _report("NEGATIVE", slug, last[error_at:].splitlines()[1], "unknown error")
        word, text = said.group(1), said.group(2)
        if word == "WAIT ONE":
            window = re.search(r"next window (\S+)", text)
            assert window, text
            again = _kwargs(args | {"window": window.group(1)})
            return _code(
                f"The service asks to wait; I call again at {window.group(1)}.",
                f"result = {service}({again})\nprint(result)",
            )
        verdict = {"STAND BY": "STANDBY", "ALTER COURSE": "ALTER"}.get(word, "NEGATIVE")
        return _report(verdict, slug, text, f"{service} answered {word}: {text}")
    if seen_at >= 0:
        logs = last[seen_at:].split("Execution logs:\n", 1)[1]
        result = ast.literal_eval(logs.split("\nLast output from code snippet:", 1)[0].strip())
        if result.get("status") == "pending":
            checks = sum(
                "notice_status(" in _text(m.get("content"))
                for m in messages
                if m.get("role") == "assistant"
            )
            if checks >= MAX_CHECKS:
                return _report(
                    "GAVE UP",
                    slug,
                    f"notice {result['notice']} still pending after {checks} checks",
                    "the maritime authority has not decided",
                )
            return _code(
                "The notice is not published yet; I check again.",
                f"status = notice_status(notice={result['notice']!r})\nprint(status)",
            )
        return _report("DONE", slug, str(result["ref"]), json.dumps(result))
    kwargs = _kwargs(args)
    if service == "search_technicians":
        # the registry is paged: read it in one code blob until a technician turns up
        code = (
            "page = 1\nwhile True:\n"
            f"    listing = search_technicians({kwargs}, page=page)\n"
            '    if "technician" in listing:\n        break\n'
            '    page = listing["next_page"]\nprint(listing)'
        )
        return _code("I read the registry page by page.", code)
    return _code(f"I call {service}.", f"result = {service}({kwargs})\nprint(result)")


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the keeper's plan or plan
    update, the keeper's next code blob, or the crew's.

    >>> task = 'New task:\\nYou\\'re a helpful agent named \\'lens_crew\\'.\\n' + (
    ...     'Step 4 of 5 — charge_trust: charge.\\nCall: charge_account(account=\\'TR-1\\')')
    >>> said = respond({"messages": [{"role": "user", "content": task}]})
    >>> said["choices"][0]["message"]["content"].splitlines()[2]
    "result = charge_account(account='TR-1')"
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    texts = [_text(m.get("content")) for m in messages]
    everything = "\n".join(texts)
    if "First in part 1, write the facts survey" in everything:
        return completion(body, _say(_plan_text(_facts(everything), Progress(), first=True)))
    if "Now write your updated facts survey below" in texts[-1]:
        seen = _progress(everything)
        return completion(body, _say(_plan_text(_facts(everything), seen, first=False)))
    task = next((t for m, t in zip(messages, texts, strict=True) if m.get("role") == "user"), "")
    if f"You're a helpful agent named '{CREW}'" in task:
        return completion(body, _crew(task, messages))
    return completion(body, _keeper(task, everything))


# --- the world ------------------------------------------------------------------------------
@dataclass
class World:
    """The technicians' registry, the boatmen, the maritime authority, the trust's bank and the
    harbour office of one job."""

    label: Label
    errors: list[str] = field(default_factory=list)
    certified: dict[str, int] = field(default_factory=dict)
    """Technician -> the lens order of their certificate."""
    crossings: dict[str, str] = field(default_factory=dict)
    """Crossing -> its day."""
    notices: dict[str, int] = field(default_factory=dict)
    """Notice -> status checks so far."""
    sent: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, service: str, old: str = "") -> None:
        """Raise the scenario's next answer when ``service`` is the one it targets."""
        if self.errors and service == self.params.get("service"):
            raise Radio(self.errors.pop(0).replace("{old}", old))


def make_tools(world: World) -> list[Tool]:
    """The trust's services, bound to one job's world."""
    seed = world.label.seed

    @tool
    def search_technicians(lens_order: int, coast: str, page: int = 1) -> dict:
        """Technicians certified for a lens order on a coast, a page of the registry at a time.

        Args:
            lens_order: the Fresnel lens order (1-6)
            coast: the coast the station is on
            page: the registry page
        """
        pages = int(world.params.get("pages", 1))
        if page < pages:
            away = {"technician": f"T-{page}{seed % 89}", "coast": "east", "order": lens_order}
            return {"page": page, "away": [away], "next_page": page + 1}
        tech = f"T-{lens_order}{coast[0].upper()}{seed % 97}"
        world.certified[tech] = lens_order
        return {"page": page, "technician": tech, "order": lens_order, "ref": tech}

    @tool
    def book_boat(technician: str, day: str, pier: str, window: str | None = None) -> dict:
        """Book the boat crossing to the station's rock.

        Args:
            technician: who crosses
            day: the crossing day (YYYY-MM-DD)
            pier: the pier the boat sails from
            window: the sailing window (HH:MM), when the boatmen named one
        """
        world.fault("book_boat")
        closed_to = world.params.get("pier_to")
        if closed_to and pier != closed_to:
            raise Radio(
                f"ALTER COURSE — pier {pier} is closed for dredging this week; "
                f"sail from {closed_to} instead of {pier}"
            )
        crossing = f"BX-{seed}-{len(world.crossings)}"
        world.crossings[crossing] = day
        return {"crossing": crossing, "day": day, "pier": pier, "ref": crossing}

    @tool
    def file_outage_notice(
        station: str, day: str, technician: str, window: str | None = None
    ) -> dict:
        """File a notice to mariners for a light's outage; pending until the authority
        publishes it.

        Args:
            station: the light station
            day: the outage day (YYYY-MM-DD)
            technician: the technician doing the overhaul
            window: the filing window (HH:MM), when the authority named one
        """
        world.fault("file_outage_notice")
        holds = world.certified.get(technician, ORDER["lens_order"])
        if holds != ORDER["lens_order"]:
            raise Radio(
                f"NEGATIVE — technician {technician} holds an order-{holds} certificate; "
                f"{station} carries an order-{ORDER['lens_order']} lens"
            )
        notice = f"NM-{seed % 1000:03d}/{day[2:4]}"
        world.notices[notice] = 0
        return {"notice": notice, "day": day, "status": "pending"}

    @tool
    def notice_status(notice: str) -> dict:
        """The state of a notice to mariners.

        Args:
            notice: the notice number
        """
        world.notices[notice] += 1
        stuck = world.label.scenario == "loop_poll_stuck"
        if stuck or world.notices[notice] < int(world.params.get("polls", 1)):
            return {"notice": notice, "status": "pending"}
        return {"notice": notice, "status": "published", "ref": notice}

    @tool
    def charge_account(account: str, amount_eur: int) -> dict:
        """Charge the overhaul to the trust's account.

        Args:
            account: the trust's account
            amount_eur: the amount in euros
        """
        world.fault("charge_account", account)
        if account != ORDER["account"]:
            raise Radio(f"NEGATIVE — account {account} is not held by the lighthouse trust")
        return {"receipt": f"RC-{seed}", "amount_eur": amount_eur, "ref": f"RC-{seed}"}

    @tool
    def send_harbour_notice(harbour: str, notice: str, day: str, window: str | None = None) -> dict:
        """Send the harbour master the published notice.

        Args:
            harbour: the harbour master's address
            notice: the notice number
            day: the outage day (YYYY-MM-DD)
            window: the mail window (HH:MM), when the harbour office named one
        """
        world.fault("send_harbour_notice")
        world.sent.append(notice)
        return {"message": f"HM-{seed}", "ref": f"HM-{seed}"}

    return [
        search_technicians,
        book_boat,
        file_outage_notice,
        notice_status,
        charge_account,
        send_harbour_notice,
    ]


# --- the app --------------------------------------------------------------------------------
class Failed(Exception):
    """The light was not relit as ordered (the reason is the message)."""


class Overhaul:
    """One light station's overhaul, from the order to the watched light."""

    def __init__(self, label: Label, model: OpenAIServerModel):
        self.label = label
        self.world = World(label)
        quiet = LogLevel.OFF
        crew = CodeAgent(
            tools=make_tools(self.world),
            model=model,
            name=CREW,
            description="The lens crew: makes one service call of a plan step and reports.",
            max_steps=MAX_CHECKS + 4,
            verbosity_level=quiet,
        )
        self.keeper = CodeAgent(
            tools=[],
            model=model,
            managed_agents=[crew],
            name="keeper",
            planning_interval=PLANNING_INTERVAL,
            max_steps=24,
            verbosity_level=quiet,
        )

    def brief(self) -> str:
        notes = NOTES | {
            k: self.label.params[k]
            for k in ("lens_order", "outage_day", "account")
            if k in self.label.params
        }
        return "\n".join(
            [
                f"Overhaul the lens of light station {ORDER['station']} and relight it: find a "
                "certified technician, book the crossing, file the notice to mariners, charge "
                "the trust, tell the harbour master.",
                f"Order: {json.dumps(ORDER)}",
                f"Keeper's notes: {json.dumps(notes)}",
            ]
        )

    def check(self, tracer: otel_trace.Tracer) -> None:
        """The app's own checks after the run: the crossing's day, then the relit light."""
        with tracer.start_as_current_span("verify outage window") as span:
            days = sorted(set(self.world.crossings.values()))
            span.set_attribute("beacon.crossing.days", days)
            span.set_attribute("beacon.outage.day", ORDER["outage_day"])
            if days != [ORDER["outage_day"]]:
                reason = (
                    f"crossing booked for {', '.join(days)}; the outage window is "
                    f"{ORDER['outage_day']}"
                )
                span.set_status(Status(StatusCode.ERROR, reason))
                raise Failed(reason)
        with tracer.start_as_current_span(f"watch light {ORDER['station']}") as span:
            for hour in range(1, 5):
                if self.label.scenario == "external_lightning" and hour > int(
                    self.label.params["polls"]
                ):
                    reason = "lightning struck the lantern after the relight: light out again"
                    span.set_status(Status(StatusCode.ERROR, reason))
                    raise Failed(reason)
                span.add_event("light", {"hour": hour, "state": "flashing"})

    def run(self, tracer: otel_trace.Tracer) -> str:
        with tracer.start_as_current_span(f"overhaul light {ORDER['station']}") as root:
            root.set_attribute("beacon.station", ORDER["station"])
            try:
                said = str(self.keeper.run(self.brief()))
                if not said.startswith("RELIT"):
                    raise Failed(said.removeprefix("ABORTED "))
                self.check(tracer)
                root.set_attribute("beacon.outcome", "relit")
            except Failed as e:
                root.set_attribute("beacon.outcome", "failed")
                root.set_status(Status(StatusCode.ERROR, str(e)))
            return format(root.get_span_context().trace_id, "032x")


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the beacon scenarios with OpenInference's smolagents instrumentor on ``provider``;
    run name -> trace id."""
    out: dict[str, str] = {}
    if not labels:
        return out
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor

    instrumentor = SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ModelServer(respond=respond) as server:
            model = OpenAIServerModel(
                MODEL, api_base=server.base_url("corpus-beacon"), api_key="test"
            )
            tracer = provider.get_tracer(TRACER)
            for label in labels:
                out[label.run] = Overhaul(label, model).run(tracer)
    finally:
        instrumentor.uninstrument()
    return out

"""A craft brewery's brew-week scheduler on Haystack 3.x, traced by **Haystack's own
OpenTelemetry tracer** (``opentelemetry-haystack``'s ``OpenTelemetryTracer`` given to
``haystack.tracing.enable_tracing``, content tracing on): Haystack's ``OpenAIChatGenerator``
against a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)``). No planscope code, no instrumentor.

Sealed-48 split only (see README.md). The task: the head brewer's week comes in; reserve a malt
lot for the recipe's grist delivered to the brewery's site (the maltster's catalogue, read page
by page), book the brewhouse for the brew day, transfer the wort to a fermenter (a cellar job,
polled until racked), book the mobile canning line for the canning day, pay the beer duty from
the brewery's duty account. As a Haystack user would write it:

* the app opens one OTel span per week (``brew week {week}``) and records the outcome;
* the planner is a Haystack ``Pipeline``: a ``ChatPromptBuilder`` into an
  ``OpenAIChatGenerator`` into the app's own ``BrewSheetReader`` component, which reads the
  model's **s-expression brew sheet**: ``(brew-week "<week>" :revision n (step <name> "<purpose>"
  (<tool> :<key> <value> ...)) ...)``, an argument ``(result <name>)`` taking that earlier step's
  result. Asked again after trouble, the sheet opens with ``:because "<trouble>"`` and
  ``(settled <name> "<result>")`` forms for the steps done, then only the steps not done;
* the executor is a Haystack ``Agent`` whose ``user_prompt`` template is rendered per step
  attempt (``Step {name} (attempt n): purpose`` and the call with its results filled in), its
  tools ``@tool`` functions over the brewery's services, tool failures handed to the model
  (``raise_on_tool_invocation_failure=False``: Haystack's ``Failed to invoke Tool ...`` text);
  the model ends its run with a text **verdict form** ``(<done|again|rework|dumped|stalled>
  "<value or note>")``;
* the services raise **syslog-style cellar alarms** ``cellar[<unit>] <level>: <text>``:
  ``notice`` ending ``-- resume HH:MM`` (the model calls again with ``resume``), ``warning``
  (``again``: the app runs the step again, up to 8 attempts), ``err`` ending ``-- suggest
  key=value`` (``rework``: the app asks the planner for a new revision, up to 4), ``crit``
  (final);
* after the last step the app checks the brew day against the week (``check brew day``) and
  watches the batch (``watch batch {brew}``), both plain OTel spans.

The planner trusts the brewer's note over the week's job sheet: the scenario's wrong value comes
from the note. This source records the executor's prompt (no starvation scenario: no starvation
label).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any

from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label

# Haystack sends usage statistics when imported unless told not to
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
from haystack import Pipeline, component, tracing
from haystack.components.agents import Agent
from haystack.components.builders import ChatPromptBuilder
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.tools import Tool, tool
from haystack.utils import Secret
from haystack_integrations.tracing.opentelemetry import OpenTelemetryTracer

JOB: dict[str, Any] = {
    "brewery": "Coldharbour Brewing",
    "week": "2027-W16",
    "site": "Canal Street",
    "grist": "pale-ale",
    "kg": 480,
    "brew_day": "2027-04-20",
    "tank": "FV-4",
    "line": "Kegs & Cans Mobile 2",
    "can_day": "2027-05-04",
    "account": "DA-40417",
}
MAX_STEP_ATTEMPTS = 8
MAX_REVISIONS = 4
MAX_TRANSFER_READS = 12
MAX_AGENT_STEPS = 30
NOTICE, WARNING, ERR, CRIT = "notice", "warning", "err", "crit"
VERDICT = {NOTICE: "again", WARNING: "again", ERR: "rework", CRIT: "dumped"}


class CellarAlarm(RuntimeError):
    """A brewery service's alarm line: ``cellar[<unit>] <level>: <text>[ -- <hint>]``."""

    def __init__(self, unit: int, level: str, text: str, hint: str = ""):
        super().__init__(f"cellar[{unit}] {level}: {text}" + (f" -- {hint}" if hint else ""))


# --- the brew sheet: s-expressions ----------------------------------------------------------
def read_sexp(text: str) -> Any:
    """The first s-expression of a text as nested lists (strings unquoted, whole numbers as
    numbers, keywords and symbols as strings).

    >>> read_sexp('(step a "b c" (f :k 3 :r (result a)))')
    ['step', 'a', 'b c', ['f', ':k', 3, ':r', ['result', 'a']]]
    """
    tokens = iter(re.findall(r'"(?:[^"\\]|\\.)*"|[()]|[^\s()"]+', text))

    def form(token: str) -> Any:
        if token == "(":
            out: list[Any] = []
            for t in tokens:
                if t == ")":
                    return out
                out.append(form(t))
            raise ValueError("unbalanced brew sheet")
        if token.startswith('"'):
            return json.loads(token)
        return int(token) if token.lstrip("-").isdigit() else token

    return form(next(t for t in tokens if t == "("))


def _keywords(items: list[Any]) -> dict[str, Any]:
    """``:key value`` pairs of a form's tail as a dict."""
    return {str(k)[1:]: v for k, v in zip(items[::2], items[1::2], strict=False)}


def _quote(value: Any) -> str:
    if isinstance(value, list):  # a (result <step>) reference: symbols unquoted
        return "(" + " ".join(map(str, value)) + ")"
    if isinstance(value, int):
        return str(value)
    return json.dumps(value)


@dataclass(frozen=True)
class BrewStep:
    """One ``(step ...)`` form of the brew sheet."""

    name: str
    purpose: str
    tool: str
    args: dict[str, Any]


def parse_sheet(text: str) -> tuple[dict[str, Any], list[BrewStep]]:
    """The sheet's header keywords and its steps.

    >>> head, steps = parse_sheet('(brew-week "W1" :revision 2 (settled a "X") '
    ...                           '(step b "Do b" (f :lot (result a) :kg 3)))')
    >>> head["revision"], head["settled"], steps[0].args
    (2, {'a': 'X'}, {'lot': ['result', 'a'], 'kg': 3})
    """
    sheet = read_sexp(text)
    head: dict[str, Any] = {"week": sheet[1], "settled": {}}
    tail = sheet[2:]
    steps = []
    i = 0
    while i < len(tail):
        item = tail[i]
        if isinstance(item, str) and item.startswith(":"):
            head[item[1:]] = tail[i + 1]
            i += 2
            continue
        if item[0] == "settled":
            head["settled"][item[1]] = item[2]
        elif item[0] == "step":
            call = item[3]
            steps.append(BrewStep(item[1], item[2], call[0], _keywords(call[1:])))
        i += 1
    return head, steps


def call_form(tool_name: str, args: dict[str, Any]) -> str:
    """A service call as the brew sheet writes it.

    >>> call_form("brewhouse_slot", {"lot": ["result", "reserve_malt"], "day": "2027-04-20"})
    '(brewhouse_slot :lot (result reserve_malt) :day "2027-04-20")'
    """
    return "(" + " ".join([tool_name, *(f":{k} {_quote(v)}" for k, v in args.items())]) + ")"


def _sheet(
    week: str, revision: int, because: str, settled: dict[str, str], steps: list[Any]
) -> str:
    lines = [f"(brew-week {_quote(week)} :revision {revision}"]
    if because:
        lines.append(f"  :because {_quote(because)}")
    lines += [f"  (settled {name} {_quote(value)})" for name, value in settled.items()]
    for name, purpose, tool_name, args in steps:
        lines.append(f"  (step {name} {_quote(purpose)}\n    {call_form(tool_name, args)})")
    return "\n".join(lines) + ")"


@component
class BrewSheetReader:
    """Read the planner's reply as a brew sheet: its steps and its header."""

    @component.output_types(steps=list, header=dict)
    def run(self, replies: list[ChatMessage]) -> dict[str, Any]:
        head, steps = parse_sheet(replies[0].text or "")
        return {"steps": [vars(s) for s in steps], "header": head}


# --- the scripted model (answers on the conformance suite's fake OpenAI server) -------------
def _line(text: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", text, re.MULTILINE)
    return m.group(1) if m else ""


def _planner(brief: str) -> dict[str, Any]:
    """The brew sheet: the job sheet's facts with the brewer's note trusted over them, the
    suggestion of the trouble taken, only the steps not settled."""
    facts = json.loads(_line(brief, "Job")) | json.loads(_line(brief, "Brewer's note") or "{}")
    settled = json.loads(_line(brief, "Settled") or "{}")
    trouble = _line(brief, "Trouble")
    suggest = re.search(r"-- suggest (\w+)=(.+)$", trouble)
    if suggest:
        facts[suggest.group(1)] = suggest.group(2).strip()
    steps = [
        ("reserve_malt", f"Reserve {facts['kg']} kg of {facts['grist']} malt at {facts['site']}",
         "malt_catalogue", {"grist": facts["grist"], "site": facts["site"], "kg": facts["kg"]}),
        ("book_brew_day", f"Book the brewhouse for the mash on {facts['brew_day']}",
         "brewhouse_slot", {"lot": ["result", "reserve_malt"], "day": facts["brew_day"]}),
        ("transfer_tank", f"Transfer the wort to {facts['tank']} and wait until racked",
         "cellar_transfer", {"brew": ["result", "book_brew_day"], "tank": facts["tank"]}),
        ("book_canning", f"Book {facts['line']} for {facts['can_day']}",
         "canning_run", {"beer": ["result", "transfer_tank"], "line": facts["line"],
                         "day": facts["can_day"]}),
        ("pay_duty", "Pay the beer duty on the canned run",
         "duty_payment", {"run": ["result", "book_canning"], "account": facts["account"]}),
    ]  # fmt: skip
    todo = [s for s in steps if s[0] not in settled]
    revision = int(_line(brief, "Revision") or 1)
    return {"role": "assistant", "content": _sheet(facts["week"], revision, trouble, settled, todo)}


def _call(n: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"call_{n}_{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _verdict(word: str, value: str) -> dict[str, Any]:
    return {"role": "assistant", "content": f"({word} {json.dumps(value)})"}


def _executor(messages: list[dict[str, Any]], task: str) -> dict[str, Any]:
    """The executor's turn: make the call the step names, call again at the resume time a
    ``notice`` gives, turn the catalogue's pages, read the transfer until racked, answer a
    verdict."""
    form = read_sexp(_line(task, "Call"))
    name, args = form[0], _keywords(form[1:])
    results = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
    n = len(results)
    if not results:
        return _call(n, name, args)
    last = results[-1]
    alarm = re.search(r"Error: cellar\[\d+\] (\w+): (.*)$", last, re.DOTALL)
    if alarm:
        level, text = alarm.group(1), alarm.group(2)
        resume = re.search(r"-- resume (\d\d:\d\d)$", text)
        if level == NOTICE and resume:
            return _call(n, name, args | {"resume": resume.group(1)})
        return _verdict(VERDICT[level], f"{level}: {text}")
    seen = json.loads(last)
    if "next_page" in seen:
        return _call(n, name, args | {"page": seen["next_page"]})
    if seen.get("status") == "racking":
        reads = sum(r.startswith('{"job"') for r in results) - 1
        if reads >= MAX_TRANSFER_READS:
            return _verdict("stalled", f"{seen['job']} still racking after {reads} reads")
        return _call(n, "transfer_status", {"job": seen["job"]})
    return _verdict("done", str(seen["value"]))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the brew sheet for a week,
    the executor's next move otherwise.

    >>> msg = respond({"messages": [{"role": "user", "content": 'Call: (f :a 1 :b "x")'}]})
    >>> msg["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    '{"a": 1, "b": "x"}'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    task = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if task.startswith("Week: "):
        return completion(body, _planner(task))
    return completion(body, _executor(messages, task))


# --- the world ------------------------------------------------------------------------------
@dataclass
class World:
    """The brewery's services: the maltster, the brewhouse, the cellar, the canner, the duty
    office."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    lots: dict[str, str] = field(default_factory=dict)
    """Malt lot -> the site it is delivered to."""
    brews: dict[str, dict[str, str]] = field(default_factory=dict)
    transfers: dict[str, dict[str, Any]] = field(default_factory=dict)
    accounts: set[str] = field(default_factory=lambda: {JOB["account"]})
    paid: str = ""

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]

    def fault(self, tool_name: str) -> None:
        """Raise the scenario's next alarm when the call is the service it targets."""
        if not self.faults or tool_name != self.label.params.get("tool"):
            return
        f = self.faults.pop(0)
        if f["level"] == ERR and tool_name == "duty_payment":
            self.accounts.add(f["hint"].split("=", 1)[1])
        word = {NOTICE: "resume", ERR: "suggest"}.get(f["level"])
        hint = f"{word} {f['hint']}" if word else ""
        raise CellarAlarm(int(f["unit"]), f["level"], f["text"], hint)


def make_tools(world: World) -> list[Tool]:
    """The brewery's services as ``@tool`` functions bound to one week's world."""
    seed = world.label.seed
    params = world.label.params

    @tool
    def malt_catalogue(
        grist: Annotated[str, "the malt grist"],
        site: Annotated[str, "the brewery site the lot is delivered to"],
        kg: Annotated[int, "kilograms needed"],
        page: Annotated[int, "the catalogue page"] = 1,
    ) -> str:
        """Search the maltster's catalogue for a lot of the grist deliverable to a site."""
        world.fault("malt_catalogue")
        pages = int(params.get("pages", 1))
        code = "".join(w[0] for w in site.split()).upper()
        if page < pages:
            sold = [f"ML-{code}-{page}{n}" for n in range(4)]
            return json.dumps({"lots": sold, "all_allocated": True, "next_page": page + 1})
        lot = f"ML-{code}-{seed % 1000}"
        world.lots[lot] = site
        return json.dumps({"value": lot, "site": site, "kg": kg + 20})

    @tool
    def brewhouse_slot(
        lot: Annotated[str, "the malt lot"],
        day: Annotated[str, "the brew day (ISO date)"],
        resume: Annotated[str, "the time to resume at after a notice (HH:MM)"] = "",
    ) -> str:
        """Book the brewhouse's mash tun and kettle for a brew day."""
        world.fault("brewhouse_slot")
        if lot not in world.lots:
            raise CellarAlarm(3, CRIT, f"no malt lot {lot} on the goods-in board")
        brew = f"BR-{seed}"
        world.brews[brew] = {"lot": lot, "day": day}
        return json.dumps({"value": brew, "day": day})

    @tool
    def cellar_transfer(
        brew: Annotated[str, "the brew"], tank: Annotated[str, "the fermenter"]
    ) -> str:
        """Start transferring a brew's wort into a fermenter; the cellar reports when racked."""
        world.fault("cellar_transfer")
        lot = world.brews[brew]["lot"]
        if world.lots[lot] != JOB["site"]:
            raise CellarAlarm(
                7,
                CRIT,
                f"{brew} was mashed from {lot}, delivered to {world.lots[lot]}; {tank} stands at "
                f"{JOB['site']}: no wort main between the sites",
            )
        job = f"TX-{seed}-{len(world.transfers)}"
        world.transfers[job] = {"brew": brew, "tank": tank, "reads": 0}
        return json.dumps({"job": job, "status": "racking"})

    @tool
    def transfer_status(job: Annotated[str, "the transfer job"]) -> str:
        """Read a transfer job's state; the racked tank once it is done."""
        entry = world.transfers[job]
        entry["reads"] += 1
        if params.get("stuck") or entry["reads"] < int(params.get("reads", 1)):
            return json.dumps({"job": job, "status": "racking", "gravity": 1.048})
        return json.dumps({"job": job, "status": "racked", "value": f"{entry['tank']}/{job}"})

    @tool
    def canning_run(
        beer: Annotated[str, "the racked tank"],
        line: Annotated[str, "the mobile canning line"],
        day: Annotated[str, "the canning day (ISO date)"],
        resume: Annotated[str, "the time to resume at after a notice (HH:MM)"] = "",
    ) -> str:
        """Book a mobile canning line to can a racked tank on a day."""
        world.fault("canning_run")
        return json.dumps({"value": f"CAN-{seed}", "beer": beer, "line": line, "day": day})

    @tool
    def duty_payment(
        run: Annotated[str, "the canning run"],
        account: Annotated[str, "the brewery's duty account"],
        resume: Annotated[str, "the time to resume at after a notice (HH:MM)"] = "",
    ) -> str:
        """Pay the beer duty on a canning run from a duty account."""
        world.fault("duty_payment")
        if account not in world.accounts:
            raise CellarAlarm(9, CRIT, f"duty account {account} is not registered to the brewery")
        world.paid = f"DUTY-{seed}"
        return json.dumps({"value": world.paid, "run": run})

    return [malt_catalogue, brewhouse_slot, cellar_transfer, transfer_status, canning_run,
            duty_payment]  # fmt: skip


# --- the app --------------------------------------------------------------------------------
class Spoiled(Exception):
    """The week was not brewed, canned and paid for (the reason is the message)."""


PLANNER_PROMPT = [
    ChatMessage.from_system(
        'You schedule a craft brewery\'s week. Answer one s-expression: (brew-week "<week>" '
        ':revision n [:because "..."] [(settled <step> "<result>") ...] (step <name> '
        '"<purpose>" (<tool> :<key> <value> ...)) ...). Write (result <step>) for an earlier '
        "step's result. The brewer's note overrides the job sheet."
    ),
    ChatMessage.from_user(
        "Week: {{ week }}\nJob: {{ job }}\nBrewer's note: {{ note }}\nSettled: {{ settled }}\n"
        "Trouble: {{ trouble }}\nRevision: {{ revision }}"
    ),
]
EXECUTOR_PROMPT = """{% message role="user" %}
Step {{ step }} (attempt {{ attempt }}): {{ purpose }}
Call: {{ call }}
{% endmessage %}"""


class HeadBrewer:
    """One brew week, from the job sheet to the watched batch."""

    def __init__(self, label: Label, base_url: str):
        self.label = label
        self.world = World(label)
        self.planner = Pipeline()
        self.planner.add_component(
            "prompt",
            ChatPromptBuilder(
                template=PLANNER_PROMPT,
                required_variables=["week", "job", "note", "settled", "trouble", "revision"],
            ),
        )
        self.planner.add_component("llm", self._model(base_url))
        self.planner.add_component("sheet", BrewSheetReader())
        self.planner.connect("prompt.prompt", "llm.messages")
        self.planner.connect("llm.replies", "sheet.replies")
        self.cellarhand = Agent(
            chat_generator=self._model(base_url),
            tools=make_tools(self.world),
            system_prompt="You carry out one step of the brew week with the brewery's tools, "
            'then answer one verdict form: (done|again|rework|dumped|stalled "value or note").',
            user_prompt=EXECUTOR_PROMPT,
            required_variables=["step", "attempt", "purpose", "call"],
            max_agent_steps=MAX_AGENT_STEPS,
            raise_on_tool_invocation_failure=False,
        )
        self.results: dict[str, str] = {}

    @staticmethod
    def _model(base_url: str) -> OpenAIChatGenerator:
        return OpenAIChatGenerator(
            api_key=Secret.from_token("test"), model=MODEL, api_base_url=base_url, max_retries=0
        )

    def plan(self, trouble: str, revision: int) -> list[BrewStep]:
        note = {
            k: self.label.params[k]
            for k in ("site", "brew_day", "account")
            if k in self.label.params
        }
        out = self.planner.run(
            {
                "prompt": {
                    "week": JOB["week"],
                    "job": json.dumps(JOB),
                    "note": json.dumps(note),
                    "settled": json.dumps(self.results),
                    "trouble": trouble,
                    "revision": revision,
                }
            }
        )
        return [BrewStep(**s) for s in out["sheet"]["steps"]]

    def _filled(self, value: Any) -> Any:
        if isinstance(value, list) and value[:1] == ["result"]:
            return self.results[value[1]]
        return value

    def attempt(self, step: BrewStep, attempt: int) -> tuple[str, str]:
        """One executor run of a step, its ``(result ...)`` arguments filled in; its verdict."""
        args = {k: self._filled(v) for k, v in step.args.items()}
        out = self.cellarhand.run(
            messages=[],
            step=step.name,
            attempt=attempt,
            purpose=step.purpose,
            call=call_form(step.tool, args),
        )
        verdict = read_sexp(out["last_message"].text or "")
        return str(verdict[0]), str(verdict[1])

    def work(self) -> None:
        trouble = ""
        for revision in range(1, MAX_REVISIONS + 1):
            steps = self.plan(trouble, revision)
            trouble = ""
            for step in steps:
                for attempt in range(1, MAX_STEP_ATTEMPTS + 1):
                    word, value = self.attempt(step, attempt)
                    if word == "done":
                        self.results[step.name] = value
                        break
                    if word == "again" and attempt < MAX_STEP_ATTEMPTS:
                        continue
                    if word == "rework" and revision < MAX_REVISIONS:
                        trouble = f"{step.name}: {value}"
                        break
                    raise Spoiled(f"{step.name} {word}: {value}")
                if trouble:
                    break
            if not trouble:
                return
        raise Spoiled(trouble)

    def check(self, tracer: otel_trace.Tracer) -> None:
        """The app's own checks once the duty is paid: the booked brew day against the week's
        job sheet, then the batch watched through conditioning."""
        brew = self.results["book_brew_day"]
        with tracer.start_as_current_span("check brew day") as span:
            day = self.world.brews[brew]["day"]
            span.set_attribute("brewhouse.brew", brew)
            span.set_attribute("brewhouse.booked_day", day)
            span.set_attribute("brewhouse.job_day", JOB["brew_day"])
            if day != JOB["brew_day"]:
                reason = (
                    f"{brew} mashes on {day}; the week's job sheet brews on {JOB['brew_day']} "
                    f"(duty {self.world.paid} already paid)"
                )
                span.set_status(Status(StatusCode.ERROR, reason))
                raise Spoiled(reason)
        with tracer.start_as_current_span(f"watch batch {brew}") as span:
            states = ("fermenting", "conditioning", "canned", "palletised", "dispatched")
            for read, state in enumerate(states, 1):
                if self.label.scenario == "external_recall" and read > int(
                    self.label.params["watch_reads"]
                ):
                    reason = "the can supplier recalled the can lot: seam defect, batch on hold"
                    span.set_status(Status(StatusCode.ERROR, reason))
                    raise Spoiled(reason)
                span.add_event("batch state", {"read": read, "state": state})

    def run(self, tracer: otel_trace.Tracer) -> str:
        with tracer.start_as_current_span(f"brew week {JOB['week']}") as root:
            root.set_attribute("brewhouse.week", JOB["week"])
            root.set_attribute("brewhouse.brewery", JOB["brewery"])
            try:
                self.work()
                self.check(tracer)
                root.set_attribute("brewhouse.outcome", "packaged")
            except Spoiled as e:
                root.set_attribute("brewhouse.outcome", "spoiled")
                root.set_status(Status(StatusCode.ERROR, str(e)))
            return format(root.get_span_context().trace_id, "032x")


@dataclass
class _Tracing:
    """Haystack's tracer and content switch as the play found them."""

    actual: tracing.Tracer
    content: bool


@contextlib.contextmanager
def _haystack_tracing(provider: TracerProvider) -> Iterator[None]:
    """Haystack's OpenTelemetry tracer on ``provider`` with content tracing on, while the play
    runs; what was there before put back after."""
    before = _Tracing(tracing.tracer.actual_tracer, tracing.tracer.is_content_tracing_enabled)
    tracing.enable_tracing(OpenTelemetryTracer(provider.get_tracer("haystack")))
    tracing.tracer.is_content_tracing_enabled = True
    try:
        yield
    finally:
        tracing.enable_tracing(before.actual)
        tracing.tracer.is_content_tracing_enabled = before.content


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the brewhouse scenarios with Haystack's own OpenTelemetry tracer on ``provider``."""
    out: dict[str, str] = {}
    if not labels:
        return out
    # the agent logs an error for every failed tool call; the tool spans carry them
    tool_log = logging.getLogger("haystack.components.agents.tool_calling")
    level = tool_log.level
    tool_log.setLevel(logging.CRITICAL)
    try:
        with (
            _haystack_tracing(provider),
            ModelServer(respond=respond) as server,
        ):
            tracer = provider.get_tracer("brewhouse")
            for label in labels:
                out[label.run] = HeadBrewer(label, server.base_url("corpus-brewhouse")).run(tracer)
    finally:
        tool_log.setLevel(level)
    return out

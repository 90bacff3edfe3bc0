"""An equestrian centre preparing a horse for a three-day event, written as a LlamaIndex user
writes a planner-executor app and traced by **LlamaIndex's native OpenTelemetry integration**
(``llama-index-observability-otel``: ``LlamaIndexOpenTelemetry(...).start_registering()``, an
OpenTelemetry span per LlamaIndex instrumentation span, the instrumentation events as span
events), against a scripted model on the conformance suite's fake OpenAI server
(``ModelServer(respond=...)`` behind llama-index-llms-litellm's ``LiteLLM``). No planscope code.

Sealed-55 split only (see README.md). The task: find a farrier licensed for the horse's region
in the farriers' register (paged), get the event vet's fitness certificate (an exam, polled),
book horse transport for the travel day, pay the event entry from the club's account, notify
the riders. As a LlamaIndex user writes it:

* the app's own methods are LlamaIndex instrumentation spans (``@dispatcher.span`` on a
  dispatcher of the module; ``instrument_tags`` ``yard.run``, ``yard.step``, ``yard.attempt``,
  which the span handler writes as attributes), so the whole trace comes through the one
  integration: ``EventDesk.prepare`` per horse, ``EventDesk.plan`` per plan (one
  ``llm.achat`` call), ``EventDesk.run_step`` per step attempt (one ``FunctionAgent.run``
  with the yard's ``FunctionTool``\\ s), ``EventDesk.check_transport`` and
  ``EventDesk.watch_event`` after the last step (its reads ``Yard.event_status`` spans);
* the plan is an **Org-mode outline**: a ``* TODO <slug> <goal>`` heading per step, its
  ``:PROPERTIES:`` drawer the ``:TOOL:`` and one property per argument, ``[[slug]]`` (an Org
  link) an earlier step's result; a re-plan answers the whole outline again, the done steps
  ``* DONE`` with their ``:RESULT:``;
* the executor's last line is a report ``<DONE|AGAIN|REROUTE|SCRATCHED|STALLED> :: value ::
  note``; the yard's services raise :class:`YardFault` texts ``YARD-<KIND>: text`` that
  LlamaIndex hands the model as the tool's output: ``HOLD`` (``(again after HH:MM)``: the model
  calls again with ``after``), ``RESADDLE`` (the app runs the step again), ``REROUTE``
  (``(use key=value)``: a new plan), ``SCRATCH`` (final).

The planner takes its values from the stable manager's entry form: a scenario's wrong value is
on the form. LlamaIndex records no context data (no starvation label).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

# litellm reads its model price map from the network at import unless told to use its own copy
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import llama_index_instrumentation as instrument
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.llms import ChatMessage
from llama_index.core.tools import FunctionTool
from llama_index.llms.litellm import LiteLLM
from llama_index.observability.otel import LlamaIndexOpenTelemetry
from llama_index_instrumentation.dispatcher import instrument_tags
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from ._relay import global_provider
from .analyst import _call, _say, _text

dispatcher = instrument.get_dispatcher(__name__)

JOB: dict[str, str] = {
    "event": "Hartley Park three-day event",
    "venue": "Hartley Park",
    "horse": "Juniper Blue",
    "region": "Cleveland",
    "travel_day": "2027-05-12",
    "operator": "Moorland Horse Transport",
    "account": "CLUB-61257",
    "riders": "riders@kestrel-equestrian.example",
}
"""The event's true values; the entry form the planner reads may differ (the scenario's)."""
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_HOLDS = 8
MAX_READS = 12
"""Exam reads in one agent run before the executor reports the exam stalled."""
PLANNER = (
    "You are the yard manager's planner at Kestrel Equestrian Centre. Answer the preparation "
    "plan as an Org-mode outline: one '* TODO <slug> <goal>' heading per step with a "
    ":PROPERTIES: drawer naming the :TOOL: and one property per argument; [[slug]] is an "
    "earlier step's result. When re-planning, keep the done steps as '* DONE' with :RESULT:."
)
EXECUTOR = (
    "You are a groom at Kestrel Equestrian Centre. Make the call you are given with your tools. "
    "End with one line '<DONE|AGAIN|REROUTE|SCRATCHED|STALLED> :: <value> :: <note>'."
)
_STEPS = (
    ("farrier", "Find a farrier licensed for {region}", "find_licensed_farrier",
     {"region": "{region}"}),
    ("vet_exam", "Get the event vet's fitness certificate for {horse}", "request_fitness_exam",
     {"horse": "{horse}", "farrier": "[[farrier]]"}),
    ("transport", "Book {horse}'s transport to {venue} for {travel_day}", "book_transport",
     {"horse": "{horse}", "operator": "{operator}", "day": "{travel_day}", "venue": "{venue}",
      "certificate": "[[vet_exam]]"}),
    ("entry_fee", "Pay the {event} entry from account {account}", "pay_entry_fee",
     {"account": "{account}", "event": "{event}", "horse": "{horse}",
      "certificate": "[[vet_exam]]"}),
    ("riders", "Tell the riders the horse is ready", "notify_riders",
     {"riders": "{riders}", "horse": "{horse}", "farrier": "[[farrier]]",
      "transport": "[[transport]]", "entry": "[[entry_fee]]"}),
)  # fmt: skip


# --- the Org-mode plan --------------------------------------------------------------------
@dataclass
class Step:
    slug: str
    goal: str
    done: bool
    props: dict[str, str]

    @property
    def tool(self) -> str:
        return self.props.get("TOOL", "")

    @property
    def args(self) -> dict[str, str]:
        return {k: v for k, v in self.props.items() if k not in ("TOOL", "RESULT")}


_HEADING = re.compile(r"^\* (TODO|DONE) (\w+) (.*)$")
_PROP = re.compile(r"^\s+:([\w-]+):\s*(.*)$")


def parse_outline(text: str) -> list[Step]:
    """An Org-mode plan's steps.

    >>> steps = parse_outline("* DONE farrier Find one\\n  :PROPERTIES:\\n  :RESULT: F-1\\n"
    ...     "  :END:\\n* TODO vet_exam Exam\\n  :PROPERTIES:\\n  :TOOL: exam\\n"
    ...     "  :farrier: [[farrier]]\\n  :END:")
    >>> [(s.slug, s.done, s.tool, s.args) for s in steps]
    [('farrier', True, '', {}), ('vet_exam', False, 'exam', {'farrier': '[[farrier]]'})]
    """
    steps: list[Step] = []
    for line in text.splitlines():
        if heading := _HEADING.match(line):
            steps.append(Step(heading[2], heading[3], heading[1] == "DONE", {}))
        elif (prop := _PROP.match(line)) and steps and prop[1] not in ("PROPERTIES", "END"):
            steps[-1].props[prop[1]] = prop[2]
    return steps


def outline(form: dict[str, str], revision: int, done: dict[str, str]) -> str:
    """The planner's outline for an entry form, the done steps with their results."""
    lines = [f"#+TITLE: {form['event']} — {form['horse']}", f"#+REVISION: {revision}"]
    for slug, goal, tool, args in _STEPS:
        if slug in done:
            lines += [f"* DONE {slug} {goal.format(**form)}", "  :PROPERTIES:"]
            lines += [f"  :RESULT: {done[slug]}", "  :END:"]
            continue
        lines += [f"* TODO {slug} {goal.format(**form)}", "  :PROPERTIES:", f"  :TOOL: {tool}"]
        lines += [f"  :{k}: {v.format(**form)}" for k, v in args.items()]
        lines.append("  :END:")
    return "\n".join(lines)


# --- the scripted model -------------------------------------------------------------------
def _plan(brief: str) -> str:
    """The planner's answer: the entry form's values; after a ``(use key=value)`` setback that
    value; the done steps kept as DONE."""
    fields = dict(re.findall(r"^([\w ]+): (.*)$", brief, re.MULTILINE))
    form = json.loads(fields["Entry form"])
    done = json.loads(fields.get("Done", "{}"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", fields.get("Setback", ""))
    if use:
        form[use[1]] = use[2]
    return outline(form, int(fields.get("Revision", "1")), done)


def _report(status: str, value: str = "", note: str = "") -> dict[str, Any]:
    return _say(f"{status} :: {value} :: {note}")


def _groom(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The executor's next turn: make the call, call again ``after`` a hold, follow
    ``next_page``, read a queued exam, report."""
    order = next(_text(m.get("content")) for m in messages if m.get("role") == "user")
    found = re.search(r"^Call: (\w+) (\{.*\})$", order, re.MULTILINE)
    if not found:
        return _report("SCRATCHED", note="no call in the order")
    calls = [c["function"] for m in messages for c in m.get("tool_calls") or []]
    if not calls:
        return _call(found[1], json.loads(found[2]), 0)
    name, args = calls[-1]["name"], json.loads(calls[-1]["arguments"] or "{}")
    said = _text(messages[-1].get("content"))
    fault = re.match(r"YARD-(HOLD|RESADDLE|REROUTE|SCRATCH): ", said)
    if fault and fault[1] == "HOLD":
        after = re.search(r"again after (\d\d:\d\d)", said)
        if sum(c["name"] == name for c in calls) > MAX_HOLDS:
            return _report("STALLED", note=said)
        return _call(name, args | {"after": after[1] if after else "later"}, len(calls))
    if fault:
        status = {"RESADDLE": "AGAIN", "REROUTE": "REROUTE", "SCRATCH": "SCRATCHED"}[fault[1]]
        return _report(status, note=said)
    result = json.loads(said)
    if result.get("next_page"):
        return _call(name, args | {"page": result["next_page"]}, len(calls))
    if result.get("state") == "queued":
        reads = sum(c["name"] == "exam_status" for c in calls)
        if reads >= MAX_READS:
            return _report("STALLED", note=f"exam {result['exam']} queued after {reads} reads")
        return _call("exam_status", {"exam": result["exam"]}, len(calls))
    return _report("DONE", str(result["ref"]), str(result.get("note", "")))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> brief = "Entry form: " + json.dumps(JOB)
    >>> msg = respond({"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": brief}]})
    >>> [s.slug for s in parse_outline(msg["choices"][0]["message"]["content"])]
    ['farrier', 'vet_exam', 'transport', 'entry_fee', 'riders']
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    if PLANNER in system:
        user = next(_text(m.get("content")) for m in messages if m.get("role") == "user")
        return completion(body, _say(_plan(user)))
    return completion(body, _groom(messages))


# --- the yard's services ------------------------------------------------------------------
class YardFault(RuntimeError):
    """A service's refusal, ``YARD-<KIND>: text``."""


@dataclass
class Yard:
    """The farriers' register, the event vet, the horsebox operators, the federation's entry
    desk and the riders' messages of one horse's preparation."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    farriers: dict[str, str] = field(default_factory=dict)
    exams: dict[str, int] = field(default_factory=dict)
    bookings: list[dict[str, str]] = field(default_factory=list)
    reads: int = 0

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
        text = f"YARD-{f['kind']}: {f['text']}"
        if f["kind"] == "HOLD":
            raise YardFault(f"{text} (again after {f['hint']})")
        if f["kind"] == "REROUTE":
            raise YardFault(f"{text} (use {f['hint']})")
        raise YardFault(text)

    def find_licensed_farrier(self, region: str, page: int = 1) -> str:
        """Farriers licensed for a region in the farriers' register, a page at a time."""
        self.fault("find_licensed_farrier")
        if page < int(self.params.get("pages", 1)):
            lapsed = [f"FAR-{region[:3].upper()}-{page * 10 + n}" for n in (1, 2)]
            return json.dumps({"farriers": [], "lapsed": lapsed, "next_page": page + 1})
        farrier = f"FAR-{region[:3].upper()}-{self.label.seed % 900}"
        self.farriers[farrier] = region
        return json.dumps({"ref": farrier, "region": region, "note": "registered, insured"})

    def request_fitness_exam(self, horse: str, farrier: str) -> str:
        """Ask the event vet to examine a horse shod by a farrier; the certificate comes
        later."""
        self.fault("request_fitness_exam")
        region = self.farriers.get(farrier, "")
        if region != JOB["region"]:
            raise YardFault(
                f"YARD-SCRATCH: the event vet will not pass {horse}'s shoes: farrier {farrier} "
                f"is licensed for {region or 'no region'}, not {JOB['region']}"
            )
        exam = f"EX-{self.label.seed}-{len(self.exams) + 1}"
        self.exams[exam] = 0
        if "polls" in self.params or self.label.scenario == "loop_poll_stuck":
            return json.dumps({"exam": exam, "state": "queued"})
        return json.dumps({"ref": f"CERT-{exam}", "state": "passed"})

    def exam_status(self, exam: str) -> str:
        """Whether the event vet has passed a horse's fitness exam yet."""
        self.exams[exam] += 1
        stuck = self.label.scenario == "loop_poll_stuck"
        if stuck or self.exams[exam] < int(self.params.get("polls", 0)):
            return json.dumps({"exam": exam, "state": "queued"})
        return json.dumps({"ref": f"CERT-{exam}", "state": "passed"})

    def book_transport(
        self, horse: str, operator: str, day: str, venue: str, certificate: str, after: str = ""
    ) -> str:
        """Book a horsebox from an operator to take a horse to a venue on a day."""
        self.fault("book_transport")
        moved = self.params.get("operator_to")
        if moved and operator == JOB["operator"]:
            raise YardFault(
                f"YARD-REROUTE: {operator} is fully booked for {day} (use operator={moved})"
            )
        booking = f"HB-{self.label.seed % 700}-{len(self.bookings) + 1}"
        self.bookings.append({"ref": booking, "operator": operator, "day": day})
        return json.dumps({"ref": booking, "day": day, "note": f"pick-up {after or '05:30'}"})

    def pay_entry_fee(
        self, account: str, event: str, horse: str, certificate: str, after: str = ""
    ) -> str:
        """Pay a horse's event entry from a club account."""
        self.fault("pay_entry_fee")
        if account != JOB["account"]:
            raise YardFault(f"YARD-SCRATCH: the federation holds no club account {account}")
        return json.dumps({"ref": f"ENT-{self.label.seed % 977}", "event": event})

    def notify_riders(
        self, riders: str, horse: str, farrier: str, transport: str, entry: str, after: str = ""
    ) -> str:
        """Send the riders the horse's preparation."""
        self.fault("notify_riders")
        return json.dumps({"ref": f"MSG-{entry}", "to": riders})

    def tools(self) -> list[FunctionTool]:
        funcs = (
            self.find_licensed_farrier,
            self.request_fitness_exam,
            self.exam_status,
            self.book_transport,
            self.pay_entry_fee,
            self.notify_riders,
        )
        return [FunctionTool.from_defaults(f) for f in funcs]

    @dispatcher.span
    def event_status(self, read: int) -> str:
        """The organisers' status board, read once."""
        if self.label.scenario.startswith("external_") and read > int(self.params["reads"]):
            raise YardFault(
                f"YARD-SCRATCH: the organisers abandoned the cross-country day at {JOB['venue']}: "
                "the course is waterlogged"
            )
        return "running"


# --- the app ------------------------------------------------------------------------------
class PreparationFailed(Exception):
    """The horse could not be made ready (the reason is the message)."""


class EventDesk:
    """One horse's preparation: plan, run the steps, check, watch."""

    def __init__(self, label: Label, llm: LiteLLM) -> None:
        self.label = label
        self.yard = Yard(label)
        self.llm = llm
        self.groom = FunctionAgent(
            name="groom", tools=self.yard.tools(), llm=llm, system_prompt=EXECUTOR
        )
        self.form = JOB | {
            k: str(label.params[k]) for k in ("region", "account") if k in label.params
        }
        if "day" in label.params:
            self.form["travel_day"] = str(label.params["day"])
        self.done: dict[str, str] = {}
        self.trace_id = ""

    @dispatcher.span
    async def plan(self, revision: int, setback: str) -> list[Step]:
        """Ask the planner for the outline (again, after a setback)."""
        lines = [f"Entry form: {json.dumps(self.form)}"]
        if revision > 1:
            lines += [f"Revision: {revision}", f"Done: {json.dumps(self.done)}"]
            lines.append(f"Setback: {setback}")
        answer = await self.llm.achat(
            [
                ChatMessage(role="system", content=PLANNER),
                ChatMessage(role="user", content="\n".join(lines)),
            ]
        )
        return parse_outline(answer.message.content or "")

    @dispatcher.span
    async def run_step(self, step: Step, attempt: int) -> tuple[str, str, str]:
        """One groom run of a step; its report ``(status, value, note)``."""
        args = {
            k: re.sub(r"\[\[(\w+)\]\]", lambda m: self.done.get(m[1], m[0]), v)
            for k, v in step.args.items()
        }
        order = (
            f"Step {step.slug} (attempt {attempt}): {step.goal}\n"
            f"Call: {step.tool} {json.dumps(args)}"
        )
        answer = str(await self.groom.run(user_msg=order)).strip().splitlines()[-1]
        status, value, note = [*answer.split(" :: ", 2), "", ""][:3]
        return status, value, note

    @dispatcher.span
    def check_transport(self) -> str:
        """The app's check: the horsebox travels on the event's travel day."""
        booking = self.yard.bookings[-1]
        if booking["day"] != JOB["travel_day"]:
            raise PreparationFailed(
                f"horsebox {booking['ref']} travels on {booking['day']}; {JOB['horse']} must be at "
                f"{JOB['venue']} on {JOB['travel_day']}"
            )
        return booking["ref"]

    @dispatcher.span
    def watch_event(self) -> str:
        """The app watches the organisers' board until the horse travels."""
        for read in range(1, 5):
            try:
                self.yard.event_status(read)
            except YardFault as e:
                raise PreparationFailed(str(e)) from e
        return "running"

    @dispatcher.span
    async def prepare(self) -> str:
        """The horse's preparation from the entry form to the watch (its trace id kept)."""
        self.trace_id = format(trace.get_current_span().get_span_context().trace_id, "032x")
        setback = ""
        for revision in range(1, MAX_PLANS + 1):
            steps = await self.plan(revision, setback)
            setback = await self._run_steps([s for s in steps if not s.done])
            if not setback:
                break
        else:
            raise PreparationFailed(f"no plan holds after {MAX_PLANS}: {setback}")
        self.check_transport()
        return self.watch_event()

    async def _run_steps(self, steps: list[Step]) -> str:
        """Run the plan's open steps; a setback that asks for a new plan, or ``""``."""
        for step in steps:
            for attempt in range(1, MAX_ATTEMPTS + 1):
                tags = {"yard.step": step.slug, "yard.attempt": attempt, "yard.run": self.label.run}
                with instrument_tags(tags):
                    status, value, note = await self.run_step(step, attempt)
                if status == "DONE":
                    self.done[step.slug] = value
                    break
                if status == "REROUTE":
                    return f"{step.slug}: {note}"
                if status != "AGAIN":
                    raise PreparationFailed(f"{step.slug}: {status} {note}")
            else:
                raise PreparationFailed(f"{step.slug}: not done after {MAX_ATTEMPTS} attempts")
        return ""


async def _prepare(label: Label, llm: LiteLLM) -> str:
    """One horse's preparation, tagged with its run; its trace id."""
    desk = EventDesk(label, llm)
    # a failure is recorded on the root span (error status, exception) by the span handler
    with (
        instrument_tags({"yard.run": label.run, "yard.horse": JOB["horse"]}),
        contextlib.suppress(PreparationFailed),
    ):
        await desk.prepare()
    return desk.trace_id


class _Nowhere(SpanExporter):
    """The exporter the integration wants for its own provider; nothing reaches it (the
    integration's tracer is the process's global one, the relay to the play's provider)."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the ferrier scenarios with the integration's spans relayed to ``provider``; run name
    -> trace id. The integration's handlers are taken off LlamaIndex's root dispatcher after."""
    if not labels:
        return {}
    root = instrument.get_dispatcher()
    before = [*root.span_handlers, *root.event_handlers]
    with global_provider(provider):
        # start_registering sets its provider as the global one, which the relay already is
        # (OpenTelemetry keeps the first): its tracer is the relay's, passing spans to the play
        LlamaIndexOpenTelemetry(
            span_exporter=_Nowhere(),
            span_processor="simple",
            tracer_provider=TracerProvider(),
            service_name_or_resource="kestrel-yard",
        ).start_registering()
        try:
            with ModelServer(respond=respond) as server:
                llm = LiteLLM(
                    model=f"openai/{MODEL}",
                    api_base=server.base_url("corpus-ferrier"),
                    api_key="test",
                )
                return {label.run: asyncio.run(_prepare(label, llm)) for label in labels}
        finally:
            root.span_handlers = [h for h in root.span_handlers if any(h is b for b in before)]
            root.event_handlers = [h for h in root.event_handlers if any(h is b for b in before)]

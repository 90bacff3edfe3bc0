"""A film production company preparing a location shoot day, written with the **Traceloop SDK**
(``traceloop-sdk``: ``Traceloop.init(...)``, its ``@workflow`` / ``@task`` / ``@agent`` /
``@tool`` decorators on the app's functions, the OpenLLMetry OpenAI instrumentor it turns on
for the ``openai`` client), against a scripted model on the conformance suite's fake OpenAI
server (``ModelServer(respond=...)``). No planscope code.

Sealed-52 split only (see README.md). The task: the script needs a location of a kind for a
scene; find one in the city's film-office register (paged), get the filming permit for the day
(an application, polled), book a grip-and-lighting crew for the day, pay the location fee from
the production's account, send the cast the call sheet. As a team on Traceloop writes a
planner-executor app with the ``openai`` client:

* ``@workflow prepare_shoot_day`` per shoot day; ``@task plan_shoot`` (one model call answering
  the plan as **CSV with a header**: ``n,slug,tool,arguments,purpose``, the arguments a URL
  query string, ``ref:slug`` an earlier step's result); ``@agent unit_runner`` per step attempt
  (a tool loop on Chat Completions, answering a JSON report line); ``@tool`` service methods;
  ``@task check_call_sheet`` after the last step and ``@task watch_shoot_day`` after success;
* a re-plan (after a ``RETHINK``) is told the done steps' results and numbers its rows on;
* the services raise :class:`ShootFault` texts ``WORD: text``: ``STANDBY`` (``(try after
  HH:MM)``: the model calls again with ``after`` in the same run), ``GO-AGAIN`` (the step is run
  again, up to eight attempts), ``RETHINK`` (``(use key=value)``: a new plan, up to five),
  ``WRAP`` (final).

The planner trusts the location manager's notes over the call-sheet card: the scenario's wrong
value comes from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
from typing import Any
from unittest import mock
from urllib.parse import parse_qsl, urlencode

from openai import OpenAI
from openai.resources.chat.completions import AsyncCompletions, Completions
from opentelemetry.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.instrumentation.threading import ThreadingInstrumentor
from opentelemetry.instrumentation.utils import unwrap
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import get_current_span
from traceloop.sdk import Traceloop
from traceloop.sdk.decorators import agent, task, tool, workflow
from traceloop.sdk.images.image_uploader import ImageUploader
from traceloop.sdk.instruments import Instruments
from traceloop.sdk.tracing import tracing as traceloop_tracing

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from ._relay import global_provider

CARD: dict[str, Any] = {
    "production": "Harbour Lights",
    "scene": "SC 42 EXT. DOCKSIDE WAREHOUSE - NIGHT",
    "kind": "dockside warehouse",
    "city": "Glasgow",
    "day": "2027-03-18",
    "grip_house": "Clydeside Grip & Lighting",
    "account": "PRD-55190",
    "cast": "cast@harbourlights.example",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_READS = 12
"""Permit reads in one run before the unit runner reports the application stalled."""
MAX_TURNS = 24
PLANNER = "You are the production's location planner: answer the shoot day's steps as CSV."
RUNNER = "You are a unit runner: make the step's call with your tools, then report one JSON line."
HEADER = ["n", "slug", "tool", "arguments", "purpose"]


class ShootFault(RuntimeError):
    """A service's refusal, ``WORD: text``."""

    @property
    def word(self) -> str:
        return str(self).partition(":")[0]


class StepSetback(RuntimeError):
    """The unit runner's report of a step it could not do (``status: note``)."""

    def __init__(self, status: str, note: str) -> None:
        super().__init__(f"{status}: {note}")
        self.status = status
        self.note = note


class ShootFailed(RuntimeError):
    """The shoot day could not be prepared (the reason is the message)."""


# --- the plan's CSV -----------------------------------------------------------------------
def plan_csv(rows: list[dict[str, Any]]) -> str:
    """The plan as CSV with a header; ``arguments`` a query string.

    >>> print(plan_csv([{"n": 2, "slug": "get_permit", "tool": "apply_permit",
    ...     "arguments": {"location": "ref:find_location", "day": "2027-03-18"},
    ...     "purpose": "Get it, for the day."}]).strip())
    n,slug,tool,arguments,purpose
    2,get_permit,apply_permit,location=ref:find_location&day=2027-03-18,"Get it, for the day."
    """
    out = io.StringIO()
    writer = csv.DictWriter(out, HEADER, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(row | {"arguments": urlencode(row["arguments"], safe=":@")})
    return out.getvalue()


def parse_plan(text: str) -> list[dict[str, Any]]:
    """The plan's rows, arguments parsed.

    >>> parse_plan("n,slug,tool,arguments,purpose\\n1,a,find,kind=a+b&page=1,x\\n")[0]["arguments"]
    {'kind': 'a b', 'page': '1'}
    """
    rows = list(csv.DictReader(io.StringIO(text.strip())))
    return [r | {"n": int(r["n"]), "arguments": dict(parse_qsl(r["arguments"]))} for r in rows]


# --- the scripted model -------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _plan(brief: str) -> str:
    """The planner's answer: the card's facts, the location manager's notes trusted over them;
    after a ``(use key=value)`` setback that value; the done steps left out, numbered on."""
    lines = dict(re.findall(r"^([\w' -]+): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Call-sheet card"]) | json.loads(
        lines.get("Location manager's notes", "{}")
    )
    done: dict[str, str] = json.loads(lines.get("Done", "{}"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)
    steps = [
        ("find_location", "find_locations", {"kind": facts["kind"], "city": facts["city"]},
         f"Find a {facts['kind']} in {facts['city']} in the film office's register."),
        ("get_permit", "apply_permit", {"location": "ref:find_location", "day": facts["day"]},
         f"Get the filming permit for the location on {facts['day']}."),
        ("book_crew", "book_crew",
         {"grip_house": facts["grip_house"], "location": "ref:find_location", "day": facts["day"]},
         f"Book a grip-and-lighting crew from {facts['grip_house']} for the day."),
        ("pay_fee", "pay_location_fee",
         {"location": "ref:find_location", "account": facts["account"]},
         f"Pay the location fee from account {facts['account']}."),
        ("send_call_sheet", "send_call_sheet",
         {"to": facts["cast"], "location": "ref:find_location", "permit": "ref:get_permit",
          "crew": "ref:book_crew", "day": facts["day"]},
         "Send the cast the call sheet."),
    ]  # fmt: skip
    rows = [
        {"n": n, "slug": slug, "tool": name, "arguments": args, "purpose": purpose}
        for n, (slug, name, args, purpose) in enumerate(steps, 1)
        if slug not in done
    ]
    return plan_csv(rows)


def _runner(messages: list[dict[str, Any]], order: str) -> dict[str, Any]:
    """The unit runner's next turn: make the call, call again ``after`` a standby, follow
    ``next_page``, read a queued permit, report a JSON line."""
    name, _, query = re.findall(r"^Call: (.*)$", order, re.MULTILINE)[-1].partition("?")
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
        line = json.dumps({"status": status, "value": value, "note": note})
        return {"role": "assistant", "content": line}

    if not calls:
        return _call(name, dict(parse_qsl(query)), turn)
    last, called, came_back = calls[-1]
    answer = json.loads(came_back)
    if "error" in answer:
        error = str(answer["error"])
        word, _, note = error.partition(": ")
        if word == "STANDBY":
            after = re.search(r"try after (\d\d:\d\d)", error)
            return _call(last, called | {"after": after.group(1) if after else "later"}, turn)
        return report(word.lower(), note=note)
    if answer.get("next_page"):
        return _call(last, called | {"page": answer["next_page"]}, turn)
    if answer.get("state") == "queued":
        reads = sum(c[0] == "permit_status" for c in calls)
        if reads >= MAX_READS:
            return report("stalled", note=f"permit {answer['permit']} queued after {reads} reads")
        return _call("permit_status", {"permit": answer["permit"]}, turn)
    return report("done", str(answer["ref"]), str(answer.get("note", "")))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body.

    >>> brief = "Call-sheet card: " + json.dumps(CARD)
    >>> msg = respond({"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": brief}]})
    >>> parse_plan(msg["choices"][0]["message"]["content"])[1]["arguments"]
    {'location': 'ref:find_location', 'day': '2027-03-18'}
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if PLANNER in system:
        return completion(body, {"role": "assistant", "content": _plan(user)})
    return completion(body, _runner(messages, user))


# --- the production's services ------------------------------------------------------------
class Services:
    """The film office, permits desk, grip house, production accounts and cast mailer of one
    shoot day. Not a dataclass: Traceloop's JSON encoder writes a dataclass ``self`` whole into
    each tool's input (the scenario with it); it writes :meth:`to_json` instead."""

    def __init__(self, label: Label) -> None:
        self.label = label
        self.faults = [dict(f) for f in label.params.get("faults", ())]
        self.locations: dict[str, str] = {}
        self.permits: dict[str, dict[str, Any]] = {}
        self.crews: list[dict[str, str]] = []
        self.payments: list[dict[str, str]] = []

    def to_json(self) -> str:
        return "production-services"

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, name: str) -> None:
        """Raise the scenario's next fault when ``name`` is the tool it targets."""
        if not self.faults or name != self.params.get("tool"):
            return
        f = self.faults.pop(0)
        text = f"{f['word']}: {f['text']}"
        if f["word"] == "STANDBY":
            raise ShootFault(f"{text} (try after {f['hint']})")
        if f["word"] == "RETHINK":
            raise ShootFault(f"{text} (use {f['hint']})")
        raise ShootFault(text)

    @tool(name="find_locations")
    def find_locations(self, kind: str, city: str, page: int = 1) -> str:
        """Locations of a kind in a city's film-office register, a page at a time."""
        self.fault("find_locations")
        page = int(page)
        if page < int(self.params.get("pages", 1)):
            taken = [f"LOC-{city[:3].upper()}-{page * 10 + n}" for n in (1, 2)]
            return json.dumps({"locations": [], "booked_out": taken, "next_page": page + 1})
        ref = f"LOC-{city[:3].upper()}-{self.label.seed}"
        self.locations[ref] = city
        return json.dumps({"ref": ref, "kind": kind, "city": city, "note": "loading bay access"})

    @tool(name="apply_permit")
    def apply_permit(self, location: str, day: str) -> str:
        """Apply to the city's film office for a filming permit at a location on a day."""
        self.fault("apply_permit")
        city = self.locations.get(location, "")
        if city != CARD["city"]:
            raise ShootFault(
                f"WRAP: the {CARD['city']} film office cannot permit {location}: it lies in "
                f"{city or 'no'} council area, outside its jurisdiction"
            )
        permit = f"FP-{self.label.seed}-{len(self.permits) + 1}"
        self.permits[permit] = {"reads": 0, "day": day}
        if "polls" in self.params or self.params.get("stuck"):
            return json.dumps({"permit": permit, "state": "queued"})
        return json.dumps({"ref": permit, "state": "granted", "day": day})

    @tool(name="permit_status")
    def permit_status(self, permit: str) -> str:
        """Whether the film office has granted a permit yet."""
        held = self.permits[permit]
        held["reads"] += 1
        if self.params.get("stuck") or held["reads"] < int(self.params.get("polls", 0)):
            return json.dumps({"permit": permit, "state": "queued"})
        return json.dumps({"ref": permit, "state": "granted", "day": held["day"]})

    @tool(name="book_crew")
    def book_crew(self, grip_house: str, location: str, day: str, after: str = "") -> str:
        """Book a grip-and-lighting crew from a grip house for a day at a location."""
        self.fault("book_crew")
        full = self.params.get("house_to")
        if full and grip_house == CARD["grip_house"]:
            raise ShootFault(
                f"RETHINK: {grip_house} has every crew out on another feature that week "
                f"(use grip_house={full})"
            )
        crew = f"GRIP-{self.label.seed % 90 + 10}-{len(self.crews) + 1}"
        self.crews.append({"crew": crew, "house": grip_house, "day": day})
        return json.dumps({"ref": crew, "day": day, "call": after or "17:30"})

    @tool(name="pay_location_fee")
    def pay_location_fee(self, location: str, account: str, after: str = "") -> str:
        """Pay a location's fee from one of the production's accounts."""
        self.fault("pay_location_fee")
        moved = self.params.get("accounts", ())
        if account != CARD["account"] and account not in moved:
            raise ShootFault(f"WRAP: production accounts hold no account {account}")
        ref = f"PAY-{self.label.seed}-{len(self.payments) + 1}"
        self.payments.append({"location": location, "account": account})
        return json.dumps({"ref": ref, "amount_gbp": 4800})

    @tool(name="send_call_sheet")
    def send_call_sheet(
        self, to: str, location: str, permit: str, crew: str, day: str, after: str = ""
    ) -> str:
        """Send the cast the call sheet for the day."""
        self.fault("send_call_sheet")
        return json.dumps({"ref": f"CS-{crew}-{day[-2:]}", "to": to})

    def schema(self) -> list[dict[str, Any]]:
        """The tools offered to the unit runner (every argument a string)."""
        params = {
            "find_locations": ["kind", "city", "page"],
            "apply_permit": ["location", "day"],
            "permit_status": ["permit"],
            "book_crew": ["grip_house", "location", "day", "after"],
            "pay_location_fee": ["location", "account", "after"],
            "send_call_sheet": ["to", "location", "permit", "crew", "day", "after"],
        }
        optional = {"page", "after"}
        return [
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": str(getattr(self, name).__doc__),
                    "parameters": {
                        "type": "object",
                        "properties": {k: {"type": "string"} for k in keys},
                        "required": [k for k in keys if k not in optional],
                    },
                },
            }
            for name, keys in params.items()
        ]


# --- the app ------------------------------------------------------------------------------
class ShootDay:
    """One shoot day's brief, plans, results and setbacks (not a dataclass either, for the same
    reason as :class:`Services`)."""

    def __init__(self, label: Label, client: OpenAI, services: Services) -> None:
        self.label = label
        self.client = client
        self.services = services
        self.plans: list[list[dict[str, Any]]] = []
        self.done: dict[str, str] = {}
        self.setback = ""

    def to_json(self) -> str:
        return f"shoot day {CARD['production']}"

    def brief(self) -> str:
        notes = {
            k: self.label.params[k] for k in ("city", "day", "account") if k in self.label.params
        }
        lines = [
            f"Objective: prepare the location shoot day for {CARD['scene']}.",
            f"Call-sheet card: {json.dumps(CARD)}",
        ]
        if notes:
            lines.append(f"Location manager's notes: {json.dumps(notes)}")
        if self.plans:
            lines += [
                f"Revision: {len(self.plans) + 1}",
                f"Done: {json.dumps(self.done)}",
                f"Setback: {self.setback}",
            ]
        return "\n".join(lines)

    @task(name="plan_shoot")
    def plan(self) -> str:
        """One planner call; the plan's CSV."""
        reply = self.client.chat.completions.create(
            model=MODEL,
            messages=[
                {"role": "system", "content": PLANNER},
                {"role": "user", "content": self.brief()},
            ],
        )
        text = reply.choices[0].message.content or ""
        self.plans.append(parse_plan(text))
        return text

    @agent(name="unit_runner")
    def run_step(self, row: dict[str, Any], attempt: int) -> dict[str, Any]:
        """One unit-runner run of a step: the model's tool loop, then its report."""
        args = {
            k: self.done.get(v.removeprefix("ref:"), v) if v.startswith("ref:") else v
            for k, v in row["arguments"].items()
        }
        order = (
            f"Step {row['n']}: {row['slug']} (attempt {attempt})\nPurpose: {row['purpose']}\n"
            f"Call: {row['tool']}?{urlencode(args, safe=':@')}"
        )
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": RUNNER},
            {"role": "user", "content": order},
        ]
        tools = self.services.schema()
        for _ in range(MAX_TURNS):
            reply = self.client.chat.completions.create(
                model=MODEL,
                messages=messages,  # type: ignore[arg-type]
                tools=tools,  # type: ignore[arg-type]
            )
            message = reply.choices[0].message
            if not message.tool_calls:
                said = json.loads(message.content or "{}")
                if said.get("status") != "done":
                    raise StepSetback(str(said.get("status")), str(said.get("note")))
                return dict(said)
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                fn = call.function  # type: ignore[union-attr]
                try:
                    result = getattr(self.services, fn.name)(**json.loads(fn.arguments))
                except ShootFault as e:
                    result = json.dumps({"error": str(e)})
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        raise StepSetback("stalled", f"no report after {MAX_TURNS} turns")

    @task(name="check_call_sheet")
    def check(self) -> str:
        """The app's own check: the crew and the permit are for the scheduled shoot day."""
        crew = self.services.crews[-1]
        if crew["day"] != CARD["day"]:
            raise ShootFailed(
                f"call sheet check: {crew['crew']} is booked for {crew['day']}, the schedule "
                f"shoots {CARD['scene']} on {CARD['day']}"
            )
        return f"{crew['crew']} and {self.done['get_permit']} on {CARD['day']}"

    @task(name="watch_shoot_day")
    def watch(self, location: str) -> str:
        """The app watches the location until the unit is on set."""
        params = self.label.params
        for read in range(1, 5):
            if self.label.scenario.startswith("external_") and read > int(params["reads"]):
                raise ShootFailed(
                    f"the harbour authority closed the quay at {location} for a storm-surge "
                    f"warning (read {read})"
                )
        return f"unit on set at {location}"

    @workflow(name="prepare_shoot_day")
    def prepare(self, production: str, run: str) -> str:
        """Plan, run each step (again after a GO-AGAIN, re-plan after a RETHINK), check, watch."""
        trace_ids.append(format(get_current_span().get_span_context().trace_id, "032x"))
        self.plan()
        while True:
            left = [r for r in self.plans[-1] if r["slug"] not in self.done]
            if not left:
                break
            row, attempt = left[0], 1
            while True:
                try:
                    said = self.run_step(row, attempt)
                except StepSetback as e:
                    if e.status == "go-again" and attempt < MAX_ATTEMPTS:
                        attempt += 1
                        continue
                    if e.status == "rethink" and len(self.plans) < MAX_PLANS:
                        self.setback = f"step {row['n']} {row['slug']}: {e.note}"
                        self.plan()
                        break
                    raise ShootFailed(f"{row['slug']}: {e}") from e
                self.done[row["slug"]] = str(said["value"])
                break
        self.check()
        return self.watch(self.done["find_location"])


trace_ids: list[str] = []
"""The trace id of each shoot day, as its workflow starts."""


# --- Traceloop, contained -----------------------------------------------------------------
class _ToPlay(SpanExporter):
    """Traceloop's exporter: hands each span to the play's provider's processors while a play
    is under way; to nothing outside one."""

    def __init__(self) -> None:
        self.target: SpanProcessor | None = None

    def export(self, spans: Any) -> SpanExportResult:
        for span in spans:
            if self.target and isinstance(span, ReadableSpan):
                self.target.on_end(span)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.target = None


_EXPORTER = _ToPlay()
_UPLOADER = ImageUploader("http://127.0.0.1:9", "")
"""Base64 images only; the app sends none (an unroutable loopback port all the same)."""
_OWN: list[TracerProvider] = []


def _init() -> TracerProvider:
    """Traceloop.init once per process (its tracer wrapper is a singleton); its tracer provider.

    Traceloop sets its provider as the process's global one when none is set, and fails when the
    global one is not an SDK provider (the corpus relay): its provider is made a private SDK
    provider instead, so the relay stays global. Its OpenAI instrumentor takes its tracer from
    the global provider: the relay passes the instrumentor's spans to Traceloop's provider while
    this plays. Traceloop's threading instrumentation (for context in threads; this app starts
    none) is undone when it was not on before."""
    if _OWN:
        return _OWN[0]

    def private(resource: Resource, sampler: Any = None) -> TracerProvider:
        _OWN.append(TracerProvider(resource=resource))
        return _OWN[0]

    threading_on = ThreadingInstrumentor().is_instrumented_by_opentelemetry
    with mock.patch.object(traceloop_tracing, "init_tracer_provider", private):
        Traceloop.init(
            app_name="location-shoot",
            api_endpoint="http://127.0.0.1:9",
            exporter=_EXPORTER,
            disable_batch=True,
            telemetry_enabled=False,
            instruments={Instruments.OPENAI},
            image_uploader=_UPLOADER,
            resource_attributes={"deployment.environment": "corpus"},
        )
    if not threading_on:
        ThreadingInstrumentor().uninstrument()
    return _OWN[0]


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the shoot scenarios under Traceloop with its spans handed to ``provider``'s
    processors; run name -> trace id."""
    if not labels:
        return {}
    out: dict[str, str] = {}
    with global_provider(provider):
        own = _init()
    _EXPORTER.target = provider._active_span_processor
    try:
        with global_provider(own), ModelServer(respond=respond) as server:
            if not OpenAIInstrumentor().is_instrumented_by_opentelemetry:
                # what Traceloop.init turned on, again (the last play, or harvest's, took it off)
                # (Traceloop.init passes this same coroutine function; its annotation says str)
                upload: Any = _UPLOADER.aupload_base64_image
                traceloop_tracing.init_instrumentations(
                    True, upload, {Instruments.OPENAI}, set(), True
                )
            client = OpenAI(base_url=server.base_url("corpus-shoot"), api_key="test", max_retries=0)
            for label in labels:
                day = ShootDay(label, client, Services(label))
                with contextlib.suppress(ShootFailed):  # recorded on the workflow's span
                    day.prepare(CARD["production"], label.run)
                out[label.run] = trace_ids[-1]
    finally:
        _EXPORTER.target = None
        OpenAIInstrumentor().uninstrument()
        # as harvest: 0.62.4's uninstrument leaves the wrappers on the completions classes
        unwrap(Completions, "create")
        unwrap(AsyncCompletions, "create")
    return out
